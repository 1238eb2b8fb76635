//! One account of a decision (docs/DESIGN.md §4): what the reviewer left out of a proposal
//! (whole hunks and single changed lines, with their text), and how each reader says it — the
//! agent's tool result, the review API, the journal and `patchgate log` — so that none of them
//! reports the proposal as what was written when the person took less of it, or edited it.

use serde::{Deserialize, Serialize};

use crate::diff::{FileDiff, Tag};

/// Changed lines one account lists with their text, at most; the rest are counted (`more`).
pub const LEFT_OUT_LINES: usize = 200;

/// A listed line's text is cut at this many bytes (at a character's edge).
const LINE_BYTES: usize = 240;

/// Lines the agent's message quotes; the others are in `left_out`.
const MESSAGE_LINES: usize = 12;

/// What the journal keeps of the diff a decision wrote, at most (cut at a line).
pub const JOURNAL_DIFF_BYTES: usize = 64 << 10;

/// What the reviewer left out of one hunk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeftOut {
    /// The file, root-relative.
    pub path: String,
    /// The hunk's index over all files' hunks (as in a decision's `hunks`).
    pub hunk: usize,
    /// The whole hunk was left out (else only some of its changed lines).
    pub whole: bool,
    /// The changed lines left out, as a unified diff writes them: `+TEXT` a line that was
    /// not added, `-TEXT` a line that was not deleted (it is still in the file).
    pub lines: Vec<String>,
    /// Lines left out past [`LEFT_OUT_LINES`], counted and not listed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub more: usize,
    /// On the last entry: hunks left out (in part or whole) past [`LEFT_OUT_HUNKS`], counted
    /// and not listed (their lines are counted in its `more`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub more_hunks: usize,
}

/// At most this many hunks are listed in `left_out`; the rest are counted on the last.
pub const LEFT_OUT_HUNKS: usize = 256;

/// At most this many hunks are named in the agent's message and under a `log` entry.
const HUNKS_NAMED: usize = 8;

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// `s` cut to `bytes` bytes at a character's edge, marked `…` when cut.
fn cut(s: &str, bytes: usize) -> String {
    if s.len() <= bytes {
        return s.to_string();
    }
    let at = (0..=bytes)
        .rev()
        .find(|&i| s.is_char_boundary(i))
        .unwrap_or(0);
    format!("{}…", &s[..at])
}

/// One file of a proposal as an account reads it: its path, its hunks, and whether the
/// proposal deletes it.
pub(crate) struct Proposed<'a> {
    /// The root-relative path.
    pub path: &'a str,
    /// The hunks proposed.
    pub diff: &'a FileDiff,
    /// The proposal deletes the file.
    pub delete: bool,
}

/// What a proposal of `files` loses when only the changed lines `taken` are written
/// (`taken[file][hunk][line]` over each hunk's displayed lines; equal lines are ignored). A
/// file deletion is one decision: when not all of it is taken, nothing of it is written, so
/// all of it is left out.
pub(crate) fn left_out<'a>(
    files: impl IntoIterator<Item = Proposed<'a>>,
    taken: &[Vec<Vec<bool>>],
) -> Vec<LeftOut> {
    let mut out: Vec<LeftOut> = Vec::new();
    let mut listed = 0;
    let mut offset = 0;
    for (f, masks) in files.into_iter().zip(taken) {
        let all_of_deletion = f.delete
            && f.diff.hunks.iter().zip(masks).all(|(h, m)| {
                h.lines
                    .iter()
                    .zip(m)
                    .all(|(l, &t)| t || l.tag == Tag::Equal)
            });
        for (k, (h, m)) in f.diff.hunks.iter().zip(masks).enumerate() {
            let dropped = |i: usize, tag: Tag| {
                tag != Tag::Equal
                    && ((f.delete && !all_of_deletion) || !m.get(i).copied().unwrap_or(false))
            };
            let lost: Vec<&crate::diff::DiffLine> = h
                .lines
                .iter()
                .enumerate()
                .filter(|(i, l)| dropped(*i, l.tag))
                .map(|(_, l)| l)
                .collect();
            if lost.is_empty() {
                continue;
            }
            if out.len() == LEFT_OUT_HUNKS {
                if let Some(last) = out.last_mut() {
                    last.more_hunks += 1;
                    last.more += lost.len();
                }
                continue;
            }
            let changed = h.lines.iter().filter(|l| l.tag != Tag::Equal).count();
            let room = LEFT_OUT_LINES.saturating_sub(listed);
            let lines: Vec<String> = lost
                .iter()
                .take(room)
                .map(|l| {
                    let sign = if l.tag == Tag::Insert { '+' } else { '-' };
                    format!("{sign}{}", cut(&l.text, LINE_BYTES))
                })
                .collect();
            listed += lines.len();
            out.push(LeftOut {
                path: f.path.to_string(),
                hunk: offset + k,
                whole: lost.len() == changed,
                more: lost.len() - lines.len(),
                lines,
                more_hunks: 0,
            });
        }
        offset += f.diff.hunks.len();
    }
    out
}

/// Whether what was written differs from what was proposed.
pub fn differs(edited: bool, left_out: &[LeftOut]) -> bool {
    edited || !left_out.is_empty()
}

/// How one hunk's loss is named: `hunk 2 of src/x.rs` (hunks counted from 1, as people do).
fn hunk_name(l: &LeftOut) -> String {
    format!(
        "{} hunk {} of {}",
        if l.whole { "all of" } else { "part of" },
        l.hunk + 1,
        l.path
    )
}

/// What the agent reads when what was written is not the proposal: what the reviewer left
/// out (quoting its first lines) or that they edited it, and to re-read the file. `None`
/// when the proposal was written as it was.
pub fn message(edited: bool, left_out: &[LeftOut]) -> Option<String> {
    if !differs(edited, left_out) {
        return None;
    }
    let mut m = String::new();
    if edited {
        m.push_str(
            "The reviewer edited the content before accepting; the diff shows what was written. ",
        );
    }
    if !left_out.is_empty() {
        let n: usize = left_out.iter().map(|l| l.lines.len() + l.more).sum();
        m.push_str(&format!(
            "The reviewer left out {n} changed line{} of the proposal; the diff shows what was written, `left_out` what was not: ",
            if n == 1 { "" } else { "s" }
        ));
        let mut quoted = 0;
        let mut parts: Vec<String> = left_out
            .iter()
            .take(HUNKS_NAMED)
            .map(|l| {
                let lines: Vec<String> = l
                    .lines
                    .iter()
                    .take(MESSAGE_LINES.saturating_sub(quoted))
                    .map(|s| format!("`{s}`"))
                    .collect();
                quoted += lines.len();
                let rest = l.lines.len() + l.more - lines.len();
                let more = if rest > 0 {
                    format!(" and {rest} more")
                } else {
                    String::new()
                };
                format!("{} ({}{more})", hunk_name(l), lines.join(", "))
            })
            .collect();
        let unnamed = left_out.len().saturating_sub(HUNKS_NAMED) + more_hunks(left_out);
        if unnamed > 0 {
            parts.push(format!("and {unnamed} more hunks"));
        }
        m.push_str(&parts.join("; "));
        m.push_str(". A `-` line left out was not deleted: it is still in the file. ");
    }
    m.push_str("Re-read the file before the next edit.");
    Some(m)
}

/// The lines `patchgate log` prints under a decision that left something out: each hunk,
/// then its lines (raw text: the caller makes it inert).
pub fn log_lines(left_out: &[LeftOut]) -> Vec<String> {
    let mut out = Vec::new();
    for l in left_out.iter().take(HUNKS_NAMED) {
        out.push(format!("left out: {}", hunk_name(l)));
        out.extend(l.lines.iter().map(|s| format!("  {s}")));
        if l.more > 0 {
            out.push(format!("  … and {} more", l.more));
        }
    }
    let unnamed = left_out.len().saturating_sub(HUNKS_NAMED) + more_hunks(left_out);
    if unnamed > 0 {
        out.push(format!("left out: {unnamed} more hunks"));
    }
    out
}

/// The hunks left out past [`LEFT_OUT_HUNKS`].
fn more_hunks(left_out: &[LeftOut]) -> usize {
    left_out.last().map_or(0, |l| l.more_hunks)
}

/// `diff` cut at [`JOURNAL_DIFF_BYTES`] at a line's end, with a line saying so.
pub fn cut_diff(diff: String) -> String {
    if diff.len() <= JOURNAL_DIFF_BYTES {
        return diff;
    }
    let head = cut(&diff, JOURNAL_DIFF_BYTES);
    let at = head.rfind('\n').map_or(0, |i| i + 1);
    format!(
        "{}… diff cut at {} KiB\n",
        &head[..at],
        JOURNAL_DIFF_BYTES >> 10
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lost(lines: &[&str], whole: bool) -> LeftOut {
        LeftOut {
            path: "a.rs".into(),
            hunk: 1,
            whole,
            lines: lines.iter().map(|s| (*s).to_string()).collect(),
            more: 0,
            more_hunks: 0,
        }
    }

    /// A proposal of many hunks accepted with one taken: the account lists at most
    /// [`LEFT_OUT_HUNKS`] of them and counts the rest; the agent's message and the log name a
    /// few and count the rest.
    #[test]
    fn many_hunks_left_out_are_listed_within_bounds_and_counted() {
        let old: String = (0..4000).map(|i| format!("line {i}\n")).collect();
        let new: String = (0..4000)
            .map(|i| {
                if i % 10 == 0 {
                    format!("changed {i}\n")
                } else {
                    format!("line {i}\n")
                }
            })
            .collect();
        let diff = FileDiff::compute(&old, &new, 3);
        let hunks = diff.hunks.len();
        assert_eq!(hunks, 400);
        // Only the first hunk's lines are taken.
        let taken: Vec<Vec<bool>> = diff
            .hunks
            .iter()
            .enumerate()
            .map(|(k, h)| h.lines.iter().map(|_| k == 0).collect())
            .collect();
        let files = [Proposed {
            path: "a.txt",
            diff: &diff,
            delete: false,
        }];
        let out = left_out(files, &[taken]);
        assert_eq!(out.len(), LEFT_OUT_HUNKS);
        assert_eq!(out.last().unwrap().more_hunks, hunks - 1 - LEFT_OUT_HUNKS);
        let total: usize = out.iter().map(|l| l.lines.len() + l.more).sum();
        assert_eq!(total, 2 * (hunks - 1));
        let m = message(false, &out).unwrap();
        assert!(m.len() < 4 << 10, "{} bytes", m.len());
        assert!(
            m.contains(&format!("left out {total} changed lines")),
            "{m}"
        );
        assert!(
            m.contains(&format!("and {} more hunks", hunks - 1 - 8)),
            "{m}"
        );
        let log = log_lines(&out);
        assert!(log.len() < 40, "{} lines", log.len());
        assert_eq!(
            log.last().unwrap(),
            &format!("left out: {} more hunks", hunks - 1 - 8)
        );
    }

    #[test]
    fn the_message_quotes_what_was_left_out_and_asks_for_a_re_read() {
        assert_eq!(message(false, &[]), None);
        let m = message(false, &[lost(&["-    let x = 1;"], false)]).unwrap();
        assert!(m.contains("left out 1 changed line"), "{m}");
        assert!(
            m.contains("part of hunk 2 of a.rs (`-    let x = 1;`)"),
            "{m}"
        );
        assert!(m.ends_with("Re-read the file before the next edit."), "{m}");
        let m = message(true, &[]).unwrap();
        assert!(m.contains("edited the content"), "{m}");
        let log = log_lines(&[lost(&["+new", "-old"], true)]);
        assert_eq!(log, ["left out: all of hunk 2 of a.rs", "  +new", "  -old"]);
    }

    #[test]
    fn a_long_diff_is_cut_at_a_line() {
        let diff = "+a line of the diff\n".repeat(10_000);
        let cut = cut_diff(diff);
        assert!(cut.len() <= JOURNAL_DIFF_BYTES + 64);
        assert!(
            cut.ends_with("+a line of the diff\n… diff cut at 64 KiB\n"),
            "{}",
            &cut[cut.len() - 80..]
        );
    }
}
