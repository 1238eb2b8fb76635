//! The risk marks of a review (docs/DESIGN.md §6), from its summary: a parse error the edit
//! adds (§5.5, `Summary::syntax`) and lines it deletes that the edit does not show (§4,
//! `Summary::unseen_hunks`). The queue row says so in a few characters; the line above each
//! hunk concerned says what.

use super::rows::FileView;
use crate::review::queue::Summary;

/// Which of `hunks` (each the 0-based new-line range it shows, inclusive) shows the mark's
/// line; else the nearest one.
pub fn hunk_of(line: usize, hunks: &[(usize, usize)]) -> Option<usize> {
    let at = line.saturating_sub(1);
    hunks
        .iter()
        .enumerate()
        .min_by_key(|(_, (lo, hi))| {
            if at < *lo {
                lo - at
            } else {
                at.saturating_sub(*hi)
            }
        })
        .map(|(k, _)| k)
}

/// What one hunk risks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HunkRisk {
    /// Lines it deletes that the edit does not show.
    pub unseen: usize,
    /// The `syntax:` warnings whose line it shows (or is the nearest hunk to).
    pub syntax: Vec<String>,
}

impl HunkRisk {
    /// Nothing to say.
    pub fn is_empty(&self) -> bool {
        self.unseen == 0 && self.syntax.is_empty()
    }

    /// The line above the hunk (not made inert: the caller does).
    pub fn text(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        if self.unseen > 0 {
            let s = if self.unseen == 1 { "" } else { "s" };
            parts.push(format!(
                "unseen: {} line{s} deleted that the edit does not show",
                self.unseen
            ));
        }
        parts.extend(self.syntax.iter().cloned());
        format!("⚠ {}", parts.join(" · "))
    }
}

/// Each hunk's risk, by global hunk index over `files` (the review's files as loaded).
pub fn hunk_risks(s: &Summary, files: &[FileView]) -> Vec<HunkRisk> {
    let mut out = Vec::new();
    for fv in files {
        let ranges: Vec<(usize, usize)> = fv
            .diff
            .hunks
            .iter()
            .map(|h| {
                let mut shown = h.lines.iter().filter_map(|l| l.new_index);
                let lo = shown.next().unwrap_or(0);
                (lo, shown.next_back().unwrap_or(lo))
            })
            .collect();
        for k in 0..ranges.len() {
            let g = fv.first_hunk + k;
            out.push(HunkRisk {
                unseen: s.unseen_hunks.get(g).copied().unwrap_or(0),
                syntax: s
                    .syntax
                    .iter()
                    .filter(|m| m.path == fv.content.path)
                    .filter(|m| hunk_of(m.line, &ranges) == Some(k))
                    .map(|m| m.warning.clone())
                    .collect(),
            });
        }
    }
    out
}

/// A queue row's risk mark, longest first (the row takes the longest that fits): e.g.
/// `⚠ syntax · 3 unseen`, `⚠ syntax 3`, `⚠3`; empty when the review risks nothing.
pub fn row_marks(s: &Summary) -> Vec<String> {
    let broken = !s.syntax.is_empty();
    let n = s.unseen_deletions;
    match (broken, n) {
        (false, 0) => vec![String::new()],
        (true, 0) => vec!["⚠ syntax".into(), "⚠".into()],
        (false, n) => vec![format!("⚠ {n} unseen"), format!("⚠{n}")],
        (true, n) => vec![
            format!("⚠ syntax · {n} unseen"),
            format!("⚠ syntax {n}"),
            format!("⚠{n}"),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::review::proposal::{FileContent, State};
    use crate::review::queue::SyntaxMark;

    #[test]
    fn the_hunk_that_shows_the_line_else_the_nearest() {
        let hunks = [(0, 5), (20, 30)];
        assert_eq!(hunk_of(3, &hunks), Some(0));
        assert_eq!(hunk_of(25, &hunks), Some(1));
        assert_eq!(hunk_of(40, &hunks), Some(1));
        assert_eq!(hunk_of(9, &[]), None);
    }

    #[test]
    fn each_hunk_gets_its_unseen_count_and_the_syntax_warning_of_its_line() {
        let old: String = (1..=40).map(|i| format!("line {i}\n")).collect();
        let new = old
            .replace("line 2\n", "")
            .replace("line 30\n", "line xxx\n");
        let files = FileView::build(vec![FileContent {
            path: "a.rs".into(),
            old,
            new,
            created: false,
            deleted: false,
            mode_change: None,
        }]);
        let mut s = crate::tui::update::tests::summary("r", State::Pending, &["a.rs"]);
        assert!(hunk_risks(&s, &files).iter().all(HunkRisk::is_empty));
        assert_eq!(row_marks(&s), vec![String::new()]);
        s.unseen_deletions = 1;
        s.unseen_hunks = vec![1, 0];
        s.syntax = vec![SyntaxMark {
            path: "a.rs".into(),
            line: 29,
            warning: "syntax: 29:1: unexpected \"xxx\"".into(),
        }];
        let risks = hunk_risks(&s, &files);
        assert_eq!(
            risks[0].text(),
            "⚠ unseen: 1 line deleted that the edit does not show"
        );
        assert_eq!(risks[1].text(), "⚠ syntax: 29:1: unexpected \"xxx\"");
        assert_eq!(row_marks(&s)[0], "⚠ syntax · 1 unseen");
    }
}
