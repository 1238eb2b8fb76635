//! Taking back one run's change from a file that has moved on since (docs/DESIGN.md §4, undo):
//! as `git revert` does, the change the run made (what it found → what it wrote) is undone on
//! the file as it is now by a three-way line merge whose base is what the run wrote. Later
//! changes elsewhere in the file stay; a region that both the run and a later change touched
//! is a conflict, and nothing is written. The merge is bounded in time ([`super::merge3`]).

use std::ops::Range;

use super::merge3::Merge;
use crate::edit::text::Text;

/// At most this many lines of each side of a conflict are shown.
const SHOWN_LINES: usize = 40;

/// Where taking the run's change back meets a later change of the same lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Conflict {
    /// The lines (1-based, inclusive; empty when none) of the file now.
    pub now_lines: (usize, usize),
    /// What the run wrote there, what it had found there, and what is there now.
    pub written: Vec<String>,
    pub found: Vec<String>,
    pub now: Vec<String>,
}

impl std::fmt::Display for Conflict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (a, b) = self.now_lines;
        if a <= b {
            writeln!(f, "The lines both changed (lines {a}-{b} of the file now):")?;
        } else {
            writeln!(f, "The lines both changed (at line {a} of the file now):")?;
        }
        let block = |f: &mut std::fmt::Formatter<'_>, mark: char, lines: &[String]| {
            lines.iter().try_for_each(|l| writeln!(f, "{mark} {l}"))
        };
        writeln!(f, "the run had found:")?;
        block(f, '-', &self.found)?;
        writeln!(f, "the run wrote:")?;
        block(f, '+', &self.written)?;
        writeln!(f, "the file has now:")?;
        block(f, ' ', &self.now)
    }
}

/// Why a run's change cannot be taken back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// A version is not text the editor can read back byte for byte.
    NotText,
    /// The run and a later change touched the same lines.
    Conflict(Box<Conflict>),
}

/// `now` with the run's change (`found` → `written`) taken back, encoded as `now` is (its line
/// endings, byte-order mark and encoding).
pub(crate) fn revert_onto(found: &[u8], written: &[u8], now: &[u8]) -> Result<Vec<u8>, Refusal> {
    let decode = |b: &[u8]| Text::decode(b).map_err(|_| Refusal::NotText);
    let (found, written, now_text) = (decode(found)?, decode(written)?, decode(now)?);
    let merge = Merge::lines(written.content(), now_text.content(), found.content());
    if let Some(region) = merge.first_conflict() {
        // A few lines of each side are enough to show where they meet.
        let lines = |get: &dyn Fn(usize) -> Option<String>, r: Range<usize>| -> Vec<String> {
            let n = r.len();
            let mut shown: Vec<String> = r.take(SHOWN_LINES).filter_map(get).collect();
            if n > SHOWN_LINES {
                shown.push(format!("… and {} more lines", n - SHOWN_LINES));
            }
            shown
        };
        let trim = |l: &str| l.trim_end_matches(['\n', '\r']).to_string();
        let ours = region.ours.clone();
        return Err(Refusal::Conflict(Box::new(Conflict {
            now_lines: (ours.start + 1, ours.end),
            written: lines(&|i| merge.base_line(i).map(trim), region.base.clone()),
            found: lines(&|i| merge.theirs_line(i).map(trim), region.theirs.clone()),
            now: lines(&|i| merge.ours_line(i).map(trim), ours),
        })));
    }
    let merged = merge.merged().ok_or(Refusal::NotText)?;
    now_text.encode(&merged).map_err(|_| Refusal::NotText)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbered(n: usize) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    #[test]
    fn a_run_is_taken_back_under_a_later_change_elsewhere() {
        let found = numbered(40);
        let written = found.replace("line 5\n", "line five\n");
        let now = written.replace("line 30\n", "line thirty\n");
        let back = revert_onto(found.as_bytes(), written.as_bytes(), now.as_bytes()).unwrap();
        assert_eq!(
            String::from_utf8(back).unwrap(),
            found.replace("line 30\n", "line thirty\n")
        );
    }

    #[test]
    fn the_files_line_endings_now_are_kept() {
        let found = numbered(10);
        let written = found.replace("line 2\n", "line two\n");
        let now = written
            .replace("line 9\n", "line nine\n")
            .replace('\n', "\r\n");
        let back = revert_onto(found.as_bytes(), written.as_bytes(), now.as_bytes()).unwrap();
        assert_eq!(
            String::from_utf8(back).unwrap(),
            found
                .replace("line 9\n", "line nine\n")
                .replace('\n', "\r\n")
        );
    }

    #[test]
    fn a_conflict_over_many_lines_shows_a_few() {
        let found = numbered(500);
        let written = found.replace("line ", "row ");
        let now = written.replace("row ", "entry ");
        let Err(Refusal::Conflict(c)) =
            revert_onto(found.as_bytes(), written.as_bytes(), now.as_bytes())
        else {
            panic!("no conflict");
        };
        assert_eq!(c.now.len(), SHOWN_LINES + 1);
        assert_eq!(c.now[SHOWN_LINES], "… and 460 more lines");
    }

    #[test]
    fn a_later_change_of_the_same_lines_is_a_conflict_that_shows_them() {
        let found = numbered(10);
        let written = found.replace("line 5\n", "line five\n");
        let now = written.replace("line five\n", "line FIVE\n");
        let Err(Refusal::Conflict(c)) =
            revert_onto(found.as_bytes(), written.as_bytes(), now.as_bytes())
        else {
            panic!("no conflict");
        };
        assert_eq!(c.now_lines, (5, 5));
        assert_eq!(c.found, ["line 5"]);
        assert_eq!(c.written, ["line five"]);
        assert_eq!(c.now, ["line FIVE"]);
        let text = c.to_string();
        assert!(
            text.contains("lines 5-5") && text.contains("- line 5"),
            "{text}"
        );
    }
}
