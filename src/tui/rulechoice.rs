//! The rule chooser (`R` on a review, docs/DESIGN.md §6): rules made from the review's paths
//! — each file, its folder (`dir/**`), its extension (`**/*.ext`) —, the action and where to
//! keep the rule; `↑`/`↓` pick the line, `←`/`→` the choice on it, `Enter` adds the rule
//! (the same operation as `POST /api/rules`), `Esc` cancels. Pure: keys in, a step out.

use crossterm::event::KeyCode;

use crate::review::policy::RuleScope;
use crate::review::rules::NewRule;
use crate::workspace::config::RuleAction;

/// The most globs offered (a batch's paths give three each at most).
const MAX_GLOBS: usize = 12;

/// The actions, in the order offered (the first is chosen at first).
pub(crate) const ACTIONS: [RuleAction; 3] = [RuleAction::Auto, RuleAction::Gate, RuleAction::Deny];

/// The scopes, in the order offered.
pub(crate) const SCOPES: [RuleScope; 2] = [RuleScope::Session, RuleScope::User];

/// The chooser's lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Line {
    /// Which glob.
    Glob,
    /// Which action.
    Action,
    /// Where the rule is kept.
    Scope,
}

/// The chooser's state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleChoice {
    /// The review the rule is made from.
    pub run_id: String,
    /// The globs offered.
    pub globs: Vec<String>,
    /// The chosen glob.
    pub glob: usize,
    /// The chosen action ([`ACTIONS`]).
    pub action: usize,
    /// The chosen scope ([`SCOPES`]).
    pub scope: usize,
    /// The line the arrows change.
    pub line: Line,
}

/// What a key did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// The chooser stays open.
    Stay,
    /// Closed, nothing added.
    Cancel,
    /// Closed: add this rule.
    Add(NewRule),
}

/// The globs made from root-relative `paths`: every file, then every folder (`dir/**`), then
/// every extension (`**/*.ext`), each once, glob characters in names escaped ([`escape`]).
pub(crate) fn globs_of(paths: &[String]) -> Vec<String> {
    let mut files = Vec::new();
    let mut dirs = Vec::new();
    let mut exts = Vec::new();
    for path in paths {
        files.push(escape(path));
        let (dir, name) = match path.rsplit_once('/') {
            Some((dir, name)) => (Some(dir), name),
            None => (None, path.as_str()),
        };
        if let Some(dir) = dir.filter(|d| !d.is_empty()) {
            dirs.push(format!("{}/**", escape(dir)));
        }
        if let Some((stem, ext)) = name.rsplit_once('.')
            && !stem.is_empty()
            && !ext.is_empty()
        {
            exts.push(format!("**/*.{}", escape(ext)));
        }
    }
    let mut out: Vec<String> = Vec::new();
    for g in files.into_iter().chain(dirs).chain(exts) {
        if !out.contains(&g) && out.len() < MAX_GLOBS {
            out.push(g);
        }
    }
    out
}

/// `text` as a glob that matches it alone: `globset::escape` for its wildcards, and `\` (an escape
/// character to globset on Unix, which `globset::escape` leaves alone) doubled first.
fn escape(text: &str) -> String {
    globset::escape(&text.replace('\\', "\\\\"))
}

impl RuleChoice {
    /// The chooser for review `run_id` of `paths` (`None` when it names no path): the
    /// first file, `auto`, this session.
    pub fn new(run_id: &str, paths: &[String]) -> Option<RuleChoice> {
        let globs = globs_of(paths);
        (!globs.is_empty()).then(|| RuleChoice {
            run_id: run_id.to_string(),
            globs,
            glob: 0,
            action: 0,
            scope: 0,
            line: Line::Glob,
        })
    }

    /// The rule as chosen.
    pub fn rule(&self) -> NewRule {
        NewRule {
            glob: self.globs[self.glob].clone(),
            action: ACTIONS[self.action],
            scope: SCOPES[self.scope],
        }
    }

    /// One key.
    pub fn key(&mut self, code: KeyCode) -> Step {
        match code {
            KeyCode::Esc => return Step::Cancel,
            KeyCode::Enter => return Step::Add(self.rule()),
            KeyCode::Up | KeyCode::Char('k') | KeyCode::BackTab => self.line = self.line.prev(),
            KeyCode::Down | KeyCode::Char('j') | KeyCode::Tab => self.line = self.line.next(),
            KeyCode::Right | KeyCode::Char('l') | KeyCode::Char(' ') => self.turn(true),
            KeyCode::Left | KeyCode::Char('h') => self.turn(false),
            _ => {}
        }
        Step::Stay
    }

    /// The choice on the current line, one on (or back), round.
    fn turn(&mut self, forward: bool) {
        let (at, n) = match self.line {
            Line::Glob => (&mut self.glob, self.globs.len()),
            Line::Action => (&mut self.action, ACTIONS.len()),
            Line::Scope => (&mut self.scope, SCOPES.len()),
        };
        *at = if forward {
            (*at + 1) % n
        } else {
            (*at + n - 1) % n
        };
    }
}

impl Line {
    fn next(self) -> Line {
        match self {
            Line::Glob => Line::Action,
            Line::Action => Line::Scope,
            Line::Scope => Line::Glob,
        }
    }

    fn prev(self) -> Line {
        match self {
            Line::Glob => Line::Scope,
            Line::Action => Line::Glob,
            Line::Scope => Line::Action,
        }
    }
}

/// How the chooser names a scope.
pub(crate) fn scope_name(s: RuleScope) -> &'static str {
    match s {
        RuleScope::Session => "this session",
        RuleScope::User => "your config (every project)",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reviews_paths_give_the_file_its_folder_and_its_extension() {
        let paths = vec![
            "src/tui/view.rs".to_string(),
            "README.md".into(),
            "src/tui/a[1].rs".into(),
        ];
        assert_eq!(
            globs_of(&paths),
            vec![
                "src/tui/view.rs",
                "README.md",
                "src/tui/a[[]1[]].rs",
                "src/tui/**",
                "**/*.rs",
                "**/*.md"
            ]
        );
        assert_eq!(
            globs_of(&["Makefile".to_string(), ".env".into()]),
            vec!["Makefile", ".env"]
        );
        assert!(RuleChoice::new("r", &[]).is_none());
    }

    /// Regression: a `\` in a path was left as globset's escape character, so the "this
    /// file" glob of `a\*b` was `a\[*]b`, matching `a*b` and not the file itself.
    #[test]
    fn a_backslash_in_a_path_makes_a_glob_for_that_file_alone() {
        let globs = globs_of(&[r"d\x/a\*b".to_string()]);
        let file = crate::review::policy::Policy::matcher(&globs[0]);
        assert!(file(r"d\x/a\*b"), "{globs:?}");
        for other in [r"d\x/a\xb", "d\\x/a*b", r"dx/a\*b", r"d\x/a\\*b"] {
            assert!(!file(other), "{} covers {other}", globs[0]);
        }
        let dir = crate::review::policy::Policy::matcher(&globs[1]);
        assert!(dir(r"d\x/other"), "{globs:?}");
        assert!(!dir("dx/other"), "{globs:?}");
    }

    #[test]
    fn arrows_choose_and_enter_adds_the_rule_esc_cancels() {
        let mut c = RuleChoice::new("r1", &["src/a.rs".to_string()]).unwrap();
        assert_eq!(
            c.rule(),
            NewRule {
                glob: "src/a.rs".into(),
                action: RuleAction::Auto,
                scope: RuleScope::Session
            }
        );
        assert_eq!(c.key(KeyCode::Right), Step::Stay);
        assert_eq!(c.key(KeyCode::Down), Step::Stay);
        c.key(KeyCode::Left);
        c.key(KeyCode::Char('j'));
        c.key(KeyCode::Char('l'));
        assert_eq!(
            c.key(KeyCode::Enter),
            Step::Add(NewRule {
                glob: "src/**".into(),
                action: RuleAction::Deny,
                scope: RuleScope::User
            })
        );
        assert_eq!(c.key(KeyCode::Esc), Step::Cancel);
    }
}
