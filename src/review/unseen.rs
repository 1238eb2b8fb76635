//! Lines an edit deletes that the agent never showed (docs/DESIGN.md §4): what the text an
//! agent sent shows of a file's lines, and per hunk how many deleted lines it does not show.
//! One measure for every edit: an edit that names each line it deletes (SEARCH/REPLACE
//! blocks, an exact search, a diff's `-` lines) counts none by construction; a lazy snippet
//! whose placeholders or directives delete lines it never quoted, or a whole-file write that
//! drops lines, counts them.

use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};

use crate::diff::{FileDiff, Tag};

/// The lines an agent's text shows, compared with their whitespace squashed (indentation and
/// spacing do not hide a line); kept as hashes, so a large edit costs 8 bytes a line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Shown {
    lines: HashSet<u64>,
}

/// The line with its runs of whitespace squashed to one space and its ends trimmed.
fn key(line: &str) -> u64 {
    let mut h = DefaultHasher::new();
    for word in line.split_whitespace() {
        word.hash(&mut h);
    }
    h.finish()
}

impl Shown {
    /// The lines of `texts`. A line that begins with `-` or `+` counts without that sign too:
    /// a diff's lines, or a snippet's diff-style body, show the file's line.
    pub fn of<'a>(texts: impl IntoIterator<Item = &'a str>) -> Shown {
        let mut lines = HashSet::new();
        for text in texts {
            for line in text.lines() {
                lines.insert(key(line));
                if let Some(rest) = line.strip_prefix(['-', '+']) {
                    lines.insert(key(rest));
                }
            }
        }
        Shown { lines }
    }

    /// Whether the text shows `line`.
    fn holds(&self, line: &str) -> bool {
        self.lines.contains(&key(line))
    }

    /// About how many bytes it holds.
    pub(crate) fn held_bytes(&self) -> usize {
        self.lines.capacity() * std::mem::size_of::<u64>()
    }
}

/// Per hunk of `diff`, the lines it deletes that `shown` does not show. Blank lines are not
/// counted: deleting one hides nothing.
pub fn per_hunk(diff: &FileDiff, shown: &Shown) -> Vec<usize> {
    diff.hunks
        .iter()
        .map(|h| {
            h.lines
                .iter()
                .filter(|l| l.tag == Tag::Delete && !l.text.trim().is_empty())
                .filter(|l| !shown.holds(&l.text))
                .count()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::CONTEXT;

    fn unseen(old: &str, new: &str, sent: &str) -> Vec<usize> {
        per_hunk(&FileDiff::compute(old, new, CONTEXT), &Shown::of([sent]))
    }

    #[test]
    fn lines_the_text_quotes_are_shown_whatever_their_spacing_or_diff_sign() {
        let s = Shown::of(["    let  x = 1;\n-fn gone() {}\n+fn new() {}\n"]);
        assert!(s.holds("let x = 1;"));
        assert!(s.holds("\tlet x   = 1;  "));
        assert!(s.holds("fn gone() {}"));
        assert!(s.holds("-fn gone() {}"));
        assert!(!s.holds("let x = 2;"));
    }

    #[test]
    fn deleted_lines_the_text_never_quotes_count_per_hunk_blank_ones_not() {
        let old: String = (0..30).map(|i| format!("line {i}\n")).collect();
        // Hunk 1 deletes lines 2-4 and a blank-free replacement; hunk 2 deletes line 25.
        let new = old
            .replace("line 2\nline 3\nline 4\n", "\n")
            .replace("line 25\n", "");
        assert_eq!(unseen(&old, &new, "line 1\nline 5\n"), vec![3, 1]);
        assert_eq!(
            unseen(&old, &new, "line 1\nline 3\nline 5\n-line 25\n"),
            vec![2, 0]
        );
        // A deleted blank line hides nothing.
        assert_eq!(unseen("a\n\nb\n", "a\nb\n", ""), vec![0]);
    }
}
