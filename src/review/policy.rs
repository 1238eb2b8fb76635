//! Policy (docs/DESIGN.md §2, §4, §7): what happens to an edit of a path — a person decides (`gate`),
//! it is applied at once (`auto`), it waits for a commit by run_id (`dry-run`), or a path rule
//! refuses it (`DENIED_BY_RULE`). The command line and the user's own configuration are
//! trusted; a repository's `.patchgate.toml` can only tighten what they say. Edits of
//! `.patchgate.toml` and `.env*` files always wait for a person. `.git/` never gets this far
//! (paths). A reviewer may add trusted rules while the gate runs (for this session, or
//! remembered in the user's config: [`Policy::add`]); every clone of a policy sees them.

use std::sync::{Arc, RwLock};

use globset::{Glob, GlobMatcher};
use serde::{Deserialize, Serialize};

use crate::error::{Error, ErrorCode, Result};
use crate::workspace::config::{Config, PolicyName, RuleAction, RuleConfig};
use crate::workspace::userconfig::UserConfig;

/// What to do with an edit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Wait for a person.
    Gate,
    /// Write at once.
    Auto,
    /// Compute, keep for a commit by run_id, write nothing.
    DryRun,
}

/// Where a rule comes from (`GET /api/rules` names it; refusals say it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RuleSource {
    /// patchgate's own: `.git/` is off limits, the gate's config and `.env*` files wait for
    /// a person.
    BuiltIn,
    /// The user's own config file.
    User,
    /// The repository's `.patchgate.toml` (it only tightens).
    Repository,
    /// Added by a reviewer for as long as this gate runs.
    Session,
}

impl RuleSource {
    /// The name the review API gives it.
    pub fn as_str(self) -> &'static str {
        match self {
            RuleSource::BuiltIn => "built-in",
            RuleSource::User => "user",
            RuleSource::Repository => "repository",
            RuleSource::Session => "session",
        }
    }

    /// Where the rule is written, for messages.
    fn place(self) -> &'static str {
        match self {
            RuleSource::BuiltIn => "patchgate's built-in rules",
            RuleSource::User => "your patchgate config",
            RuleSource::Repository => ".patchgate.toml",
            RuleSource::Session => "this session's rules",
        }
    }
}

/// Where a rule a reviewer adds is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RuleScope {
    /// For as long as this gate runs.
    Session,
    /// In the user's config file: every gate from now on.
    User,
}

impl RuleScope {
    /// The source a rule of this scope is listed under.
    pub fn source(self) -> RuleSource {
        match self {
            RuleScope::Session => RuleSource::Session,
            RuleScope::User => RuleSource::User,
        }
    }
}

/// One rule as `GET /api/rules` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleInfo {
    /// The glob over root-relative paths.
    pub glob: String,
    /// What it does.
    pub action: RuleAction,
    /// Where it comes from.
    pub source: RuleSource,
    /// Why it does not count, when it does not (a repository's `auto`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignored: Option<String>,
}

/// The longest glob a reviewer may add, in bytes.
pub const MAX_GLOB_BYTES: usize = 1024;

/// The most rules reviewers may add to one running gate.
pub const MAX_ADDED_RULES: usize = 256;

/// The built-in rules as `GET /api/rules` lists them (enforced by the paths layer and
/// [`is_protected`], not matched as globs).
const BUILT_IN: [(&str, RuleAction); 3] = [
    ("**/.git/**", RuleAction::Deny),
    ("**/.patchgate.toml", RuleAction::Gate),
    ("**/.env*", RuleAction::Gate),
];

/// A compiled path rule.
#[derive(Debug, Clone)]
struct Rule {
    glob: String,
    matcher: GlobMatcher,
    action: RuleAction,
    /// Where it was written, for messages.
    source: RuleSource,
}

impl Rule {
    fn info(&self, ignored: Option<&str>) -> RuleInfo {
        RuleInfo {
            glob: self.glob.clone(),
            action: self.action,
            source: self.source,
            ignored: ignored.map(str::to_string),
        }
    }
}

/// The policy and the path rules.
#[derive(Debug, Clone)]
pub struct Policy {
    /// The default for paths no rule names.
    pub default: PolicyName,
    /// Rules that may loosen (the user's own), first match wins.
    trusted: Vec<Rule>,
    /// Trusted rules a reviewer added while the gate runs, newest first: they come before
    /// `trusted`. Shared by every clone.
    added: Arc<RwLock<Vec<Rule>>>,
    /// Rules that may only tighten (the repository's), first match wins.
    repo: Vec<Rule>,
    /// The repository's rules that would loosen, ignored (listed as such).
    repo_ignored: Vec<RuleConfig>,
}

/// How strict a policy is: a repository may move it up, never down. A dry-run is looser than
/// a gate, since the agent itself may commit it.
fn strictness(p: PolicyName) -> u8 {
    match p {
        PolicyName::Auto => 0,
        PolicyName::DryRun => 1,
        PolicyName::Gate => 2,
    }
}

fn compile(rules: &[RuleConfig], source: RuleSource) -> Result<Vec<Rule>> {
    rules.iter().map(|rule| compile_one(rule, source)).collect()
}

fn compile_one(rule: &RuleConfig, source: RuleSource) -> Result<Rule> {
    let glob = Glob::new(&rule.glob).map_err(|e| {
        Error::invalid_input(format!(
            "rule glob `{}` in {} is invalid: {e}",
            rule.glob,
            source.place()
        ))
    })?;
    Ok(Rule {
        glob: rule.glob.clone(),
        matcher: glob.compile_matcher(),
        action: rule.action,
        source,
    })
}

/// Check a glob a reviewer sends (`POST /api/rules`): at most [`MAX_GLOB_BYTES`], no control
/// character, relative to the root (no leading `/`, no `..`), and a glob globset reads.
pub fn check_glob(glob: &str) -> Result<()> {
    let bad = |why: &str| Err(Error::invalid_input(format!("`glob` {why}")));
    if glob.trim().is_empty() {
        return bad("is empty");
    }
    if glob.len() > MAX_GLOB_BYTES {
        return bad(&format!(
            "is {} bytes long, more than {MAX_GLOB_BYTES}",
            glob.len()
        ));
    }
    if glob.chars().any(char::is_control) {
        return bad("holds a control character");
    }
    if glob.starts_with('/') || glob.split('/').any(|part| part == "..") {
        return bad(&format!(
            "`{glob}` must be relative to the root (no leading `/`, no `..`)"
        ));
    }
    if let Err(e) = Glob::new(glob) {
        return bad(&format!("`{glob}` is not a valid glob: {e}"));
    }
    Ok(())
}

/// Whether an edit of `rel` always waits for a person: the gate's own configuration and
/// environment files, which an agent could use to loosen the gate or leak secrets.
pub(crate) fn is_protected(rel: &str) -> bool {
    crate::workspace::secrets::is_gate_or_env_file(rel)
}

impl Policy {
    /// The policy from one trusted configuration, with `override_name` (the command line)
    /// winning.
    pub fn from_config(
        config: &Config,
        override_name: Option<PolicyName>,
        fallback: PolicyName,
    ) -> Result<Policy> {
        Ok(Policy {
            default: override_name.or(config.policy).unwrap_or(fallback),
            trusted: compile(&config.rules, RuleSource::Repository)?,
            added: Arc::default(),
            repo: Vec::new(),
            repo_ignored: Vec::new(),
        })
    }

    /// The policy a gate runs: the command line's (`cli`), else the user's, else the
    /// command's default; the user's rules may loosen it; the repository's policy and rules
    /// (`repo`) only count where they are stricter (an `auto` there is ignored, logged).
    pub fn layered(
        user: &UserConfig,
        repo: &Config,
        cli: Option<PolicyName>,
        command_default: PolicyName,
    ) -> Result<Policy> {
        let base = cli.or(user.policy).unwrap_or(command_default);
        let default = match repo.policy {
            Some(p) if strictness(p) > strictness(base) => p,
            Some(p) if p != base => {
                tracing::warn!(
                    ".patchgate.toml asks for policy {} but cannot loosen {}: ignored",
                    p.as_str(),
                    base.as_str()
                );
                base
            }
            _ => base,
        };
        let (repo_rules, repo_ignored): (Vec<RuleConfig>, Vec<RuleConfig>) =
            repo.rules.iter().cloned().partition(|r| {
                let loosens = r.action == RuleAction::Auto;
                if loosens {
                    tracing::warn!(
                        ".patchgate.toml rule `{}` = auto cannot loosen the gate: ignored (put it \
                         in your own config to use it)",
                        r.glob
                    );
                }
                !loosens
            });
        Ok(Policy {
            default,
            trusted: compile(&user.rules, RuleSource::User)?,
            added: Arc::default(),
            repo: compile(&repo_rules, RuleSource::Repository)?,
            repo_ignored,
        })
    }

    /// A policy without rules.
    pub fn simple(default: PolicyName) -> Policy {
        Policy {
            default,
            trusted: Vec::new(),
            added: Arc::default(),
            repo: Vec::new(),
            repo_ignored: Vec::new(),
        }
    }

    /// Add a trusted rule for this gate, before every other trusted rule (an older added
    /// one of the same glob goes): `source` says whether it is this session's or was also
    /// written to the user's config. Refused past [`MAX_ADDED_RULES`].
    pub fn add(&self, rule: &RuleConfig, source: RuleSource) -> Result<()> {
        check_glob(&rule.glob)?;
        let compiled = compile_one(rule, source)?;
        let mut added = self
            .added
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        added.retain(|r| r.glob != rule.glob);
        if added.len() >= MAX_ADDED_RULES {
            return Err(Self::no_room());
        }
        added.insert(0, compiled);
        Ok(())
    }

    /// Whether [`Policy::add`] would take a rule for `glob` now: one for a glob already added
    /// replaces it; a new one needs room under [`MAX_ADDED_RULES`].
    pub fn has_room(&self, glob: &str) -> bool {
        let added = self
            .added
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        added.len() < MAX_ADDED_RULES || added.iter().any(|r| r.glob == glob)
    }

    /// The globs of the added `deny` rules, newest first (what a forwarding stdio server's
    /// search obeys beside the configs it reads itself).
    pub fn added_deny_globs(&self) -> Vec<String> {
        self.added
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .filter(|r| r.action == RuleAction::Deny)
            .map(|r| r.glob.clone())
            .collect()
    }

    /// The refusal of a rule past [`MAX_ADDED_RULES`].
    pub fn no_room() -> Error {
        Error::invalid_input(format!(
            "this gate holds {MAX_ADDED_RULES} added rules already; restart it to begin again \
             (rules added to your config stay)"
        ))
    }

    /// What names the root-relative paths `glob` covers (nothing, for an invalid one).
    pub fn matcher(glob: &str) -> impl Fn(&str) -> bool + use<> {
        let m = Glob::new(glob).ok().map(|g| g.compile_matcher());
        move |rel: &str| m.as_ref().is_some_and(|m| m.is_match(rel))
    }

    /// Every rule, with where it comes from, in the order they are consulted: the built-in
    /// ones (always), the trusted ones (added ones newest first, then the user's config;
    /// first match wins), then the repository's (they only tighten; an `auto` there is
    /// listed as ignored).
    pub fn rules(&self) -> Vec<RuleInfo> {
        let mut out: Vec<RuleInfo> = BUILT_IN
            .iter()
            .map(|&(glob, action)| RuleInfo {
                glob: glob.to_string(),
                action,
                source: RuleSource::BuiltIn,
                ignored: None,
            })
            .collect();
        let added = self
            .added
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        out.extend(added.iter().map(|r| r.info(None)));
        out.extend(self.trusted.iter().map(|r| {
            let shadowed = added.iter().any(|a| a.glob == r.glob);
            r.info(shadowed.then_some("a rule of the same glob added since comes first"))
        }));
        out.extend(self.repo.iter().map(|r| r.info(None)));
        out.extend(self.repo_ignored.iter().map(|r| RuleInfo {
            glob: r.glob.clone(),
            action: r.action,
            source: RuleSource::Repository,
            ignored: Some("a repository's rule cannot loosen the gate".into()),
        }));
        out
    }

    /// The first trusted rule that names `rel`: an added one, else the config's.
    fn trusted_for(&self, rel: &str) -> Option<Rule> {
        let added = self
            .added
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        added
            .iter()
            .chain(&self.trusted)
            .find(|r| r.matcher.is_match(rel))
            .cloned()
    }

    /// The action for a root-relative path: the trusted rules' (or the default), tightened
    /// by the repository's rules; a `deny` anywhere refuses. A `dry-run` policy keeps every
    /// edit a dry-run whatever the rules say; protected files always wait for a person.
    pub fn action(&self, rel: &str) -> Result<Action> {
        let trusted = self.trusted_for(rel);
        let trusted = trusted.as_ref();
        let repo = self.repo.iter().find(|r| r.matcher.is_match(rel));
        for r in [trusted, repo].into_iter().flatten() {
            if r.action == RuleAction::Deny {
                return Err(Error::new(
                    ErrorCode::DeniedByRule,
                    format!(
                        "`{rel}` may not be edited: the rule `{}` in {} denies it",
                        r.glob,
                        r.source.place()
                    ),
                ));
            }
        }
        if is_protected(rel) {
            return Ok(Action::Gate);
        }
        if self.default == PolicyName::DryRun {
            return Ok(Action::DryRun);
        }
        let mut action = match trusted.map(|r| r.action) {
            Some(RuleAction::Auto) => Action::Auto,
            Some(RuleAction::Gate) => Action::Gate,
            _ => match self.default {
                PolicyName::Gate => Action::Gate,
                PolicyName::Auto => Action::Auto,
                PolicyName::DryRun => Action::DryRun,
            },
        };
        if repo.is_some_and(|r| r.action == RuleAction::Gate) {
            action = Action::Gate;
        }
        Ok(action)
    }

    /// Whether an edit of `rel` waits for a person whatever the trusted side says (the user's
    /// rules, the policy hook): a protected file, or one a repository's `gate` rule names.
    pub fn held_for_a_person(&self, rel: &str) -> bool {
        is_protected(rel)
            || self
                .repo
                .iter()
                .find(|r| r.matcher.is_match(rel))
                .is_some_and(|r| r.action == RuleAction::Gate)
    }

    /// Whether a read-only tool (the code search) may show a root-relative path: every path
    /// no `deny` rule names.
    pub fn may_read(&self, rel: &str) -> bool {
        self.action(rel).is_ok()
    }

    /// Whether a patch may copy or rename `rel` into another file: its bytes would show in
    /// the answer's diff (a dry run included) before anyone decides, so a file a `deny` rule
    /// names, or a protected one (the gate's configuration, environment files), is refused.
    pub fn may_copy(&self, rel: &str) -> Result<()> {
        self.action(rel)?;
        if is_protected(rel) {
            return Err(Error::new(
                ErrorCode::DeniedByRule,
                format!(
                    "`{rel}` may not be copied or renamed by a patch: it is the gate's \
                     configuration or an environment file, whose contents would show in the answer"
                ),
            ));
        }
        Ok(())
    }

    /// The action for several paths: any deny refuses, any gate gates, all auto is auto.
    pub fn action_for_all<'a>(&self, rels: impl IntoIterator<Item = &'a str>) -> Result<Action> {
        let mut result = Action::Auto;
        for rel in rels {
            match self.action(rel)? {
                Action::DryRun => return Ok(Action::DryRun),
                Action::Gate => result = Action::Gate,
                Action::Auto => {}
            }
        }
        Ok(result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(default: PolicyName) -> Policy {
        let config = Config::parse(
            "[[rules]]\nglob = \"docs/**\"\naction = \"auto\"\n[[rules]]\nglob = \"**/.env*\"\naction = \"deny\"\n[[rules]]\nglob = \"src/secret.rs\"\naction = \"gate\"\n",
        )
        .unwrap();
        Policy::from_config(&config, None, default).unwrap()
    }

    #[test]
    fn rules_pick_the_action_by_glob() {
        let p = policy(PolicyName::Gate);
        assert_eq!(p.action("docs/a/b.md").unwrap(), Action::Auto);
        assert_eq!(p.action("src/main.rs").unwrap(), Action::Gate);
        assert_eq!(
            p.action("app/.env.local").unwrap_err().code,
            ErrorCode::DeniedByRule
        );
        let auto = policy(PolicyName::Auto);
        assert_eq!(auto.action("src/secret.rs").unwrap(), Action::Gate);
        assert_eq!(auto.action("src/main.rs").unwrap(), Action::Auto);
    }

    #[test]
    fn dry_run_policy_keeps_everything_a_dry_run_but_deny_still_refuses() {
        let p = policy(PolicyName::DryRun);
        assert_eq!(p.action("docs/x.md").unwrap(), Action::DryRun);
        let denied = p.action(".env").unwrap_err();
        assert_eq!(denied.code, ErrorCode::DeniedByRule, "{denied:?}");
        assert!(denied.message.contains("`**/.env*`"), "{denied:?}");
    }

    #[test]
    fn several_paths_take_the_strictest_action() {
        let p = policy(PolicyName::Auto);
        assert_eq!(
            p.action_for_all(["docs/a.md", "src/x.rs"]).unwrap(),
            Action::Auto
        );
        assert_eq!(
            p.action_for_all(["docs/a.md", "src/secret.rs"]).unwrap(),
            Action::Gate
        );
        let denied = p.action_for_all(["docs/a.md", ".env"]).unwrap_err();
        assert_eq!(denied.code, ErrorCode::DeniedByRule, "{denied:?}");
        assert!(denied.message.contains("`.env`"), "{denied:?}");
    }

    #[test]
    fn a_bad_glob_is_invalid_input() {
        let config = Config::parse("[[rules]]\nglob = \"a[\"\naction = \"auto\"\n").unwrap();
        let bad = Policy::from_config(&config, None, PolicyName::Gate).unwrap_err();
        assert_eq!(bad.code, ErrorCode::InvalidInput, "{bad:?}");
        assert!(bad.message.contains("`a[`"), "{bad:?}");
    }

    #[test]
    fn a_repository_only_tightens_and_protected_files_wait_for_a_person() {
        let repo = Config::parse(
            "policy = \"auto\"\n[[rules]]\nglob = \"**\"\naction = \"auto\"\n[[rules]]\nglob = \"src/secret.rs\"\naction = \"gate\"\n",
        )
        .unwrap();
        let user = UserConfig::default();
        // `--policy gate`: neither the repository's policy nor its auto rule loosens it.
        let p = Policy::layered(&user, &repo, Some(PolicyName::Gate), PolicyName::Gate).unwrap();
        assert_eq!(p.default, PolicyName::Gate);
        assert_eq!(p.action("src/main.rs").unwrap(), Action::Gate);
        // Nor the command's own default, nor a dry-run one.
        let p = Policy::layered(&user, &repo, None, PolicyName::DryRun).unwrap();
        assert_eq!(p.action("src/main.rs").unwrap(), Action::DryRun);
        // It does tighten: under `--policy auto` its gate rule holds.
        let p = Policy::layered(&user, &repo, Some(PolicyName::Auto), PolicyName::Gate).unwrap();
        assert_eq!(p.action("src/main.rs").unwrap(), Action::Auto);
        assert_eq!(p.action("src/secret.rs").unwrap(), Action::Gate);
        // A stricter policy of the repository's own holds over a looser command line.
        let strict = Config::parse("policy = \"gate\"\n").unwrap();
        let p = Policy::layered(&user, &strict, Some(PolicyName::Auto), PolicyName::Auto).unwrap();
        assert_eq!(p.default, PolicyName::Gate);
        assert_eq!(p.action("src/main.rs").unwrap(), Action::Gate);
        let strict = Config::parse("policy = \"dry-run\"\n").unwrap();
        let p = Policy::layered(&user, &strict, Some(PolicyName::Auto), PolicyName::Auto).unwrap();
        assert_eq!(p.action("src/main.rs").unwrap(), Action::DryRun);
        // The user's own rules may loosen.
        let user = UserConfig::parse("[[rules]]\nglob = \"docs/**\"\naction = \"auto\"\n").unwrap();
        let p = Policy::layered(&user, &Config::default(), None, PolicyName::Gate).unwrap();
        assert_eq!(p.action("docs/a.md").unwrap(), Action::Auto);
        // Whatever any rule says, the gate's config and env files wait for a person.
        let user = UserConfig::parse("[[rules]]\nglob = \"**\"\naction = \"auto\"\n").unwrap();
        for policy in [PolicyName::Auto, PolicyName::DryRun] {
            let p = Policy::layered(&user, &Config::default(), Some(policy), policy).unwrap();
            for rel in [
                ".patchgate.toml",
                "sub/.patchgate.toml",
                ".env",
                "app/.env.local",
            ] {
                assert_eq!(p.action(rel).unwrap(), Action::Gate, "{rel}");
            }
        }
    }

    #[test]
    fn an_added_rule_comes_first_but_a_repository_still_only_tightens() {
        let user = UserConfig::parse("[[rules]]\nglob = \"src/**\"\naction = \"gate\"\n").unwrap();
        let repo = Config::parse(
            "[[rules]]\nglob = \"src/money/**\"\naction = \"gate\"\n[[rules]]\nglob = \"**\"\naction = \"auto\"\n",
        )
        .unwrap();
        let p = Policy::layered(&user, &repo, None, PolicyName::Gate).unwrap();
        let seen_by_a_clone = p.clone();
        assert_eq!(p.action("src/a.rs").unwrap(), Action::Gate);
        let auto = RuleConfig {
            glob: "src/**".into(),
            action: RuleAction::Auto,
        };
        p.add(&auto, RuleSource::Session).unwrap();
        // Before the user's own `gate` of the same paths, in every clone.
        assert_eq!(seen_by_a_clone.action("src/a.rs").unwrap(), Action::Auto);
        // Not past the repository's `gate`, nor the built-in holds.
        assert_eq!(p.action("src/money/a.rs").unwrap(), Action::Gate);
        assert_eq!(p.action("src/.env").unwrap(), Action::Gate);
        // A newer rule of the same glob replaces it.
        let deny = RuleConfig {
            glob: "src/**".into(),
            action: RuleAction::Deny,
        };
        p.add(&deny, RuleSource::User).unwrap();
        let e = p.action("src/a.rs").unwrap_err();
        assert!(
            e.message.contains("`src/**` in your patchgate config"),
            "{e:?}"
        );
        let listed: Vec<(String, RuleSource, bool)> = p
            .rules()
            .into_iter()
            .map(|r| (r.glob, r.source, r.ignored.is_some()))
            .collect();
        assert_eq!(
            listed[3..],
            [
                ("src/**".to_string(), RuleSource::User, false),
                ("src/**".to_string(), RuleSource::User, true),
                ("src/money/**".to_string(), RuleSource::Repository, false),
                ("**".to_string(), RuleSource::Repository, true),
            ]
        );
        assert!(listed[..3].iter().all(|r| r.1 == RuleSource::BuiltIn));
    }

    #[test]
    fn a_glob_a_reviewer_sends_is_checked() {
        for bad in ["", " ", "/etc/**", "../x", "a/../b", "a[", "a\u{7}b"] {
            let e = check_glob(bad).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidInput, "{bad:?}");
        }
        assert!(check_glob(&"a".repeat(MAX_GLOB_BYTES + 1)).is_err());
        for good in ["docs/**", "**/*.rs", "a.txt", "src/[ab].rs"] {
            check_glob(good).unwrap();
        }
    }
}
