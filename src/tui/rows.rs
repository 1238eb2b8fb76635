//! The diff of a review as display rows: file headers, hunk headers and lines (unified), or
//! line pairs (side by side), with whitespace-only changes folded on request. Rows are cheap
//! references into the hunks, built once per review and mode, so drawing only formats the
//! rows on screen; word-level emphasis of a changed line against its partner is computed for
//! visible rows only.

use std::ops::Range;

use crate::diff::{CONTEXT, DiffHunk, FileDiff, Tag};
use crate::review::proposal::FileContent;

/// How the diff is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffMode {
    /// One column, `-` and `+` lines.
    Unified,
    /// Old on the left, new on the right.
    SideBySide,
}

/// One file of a review with its hunks.
#[derive(Debug, Clone)]
pub struct FileView {
    /// Both versions.
    pub content: FileContent,
    /// The hunks (the gate's own hunking, so indices match its decisions).
    pub diff: FileDiff,
    /// The global index of this file's first hunk.
    pub first_hunk: usize,
}

impl FileView {
    /// The views of a review's files, hunk indices running on across files.
    pub fn build(contents: Vec<FileContent>) -> Vec<FileView> {
        let mut first = 0;
        contents
            .into_iter()
            .map(|content| {
                let diff = FileDiff::compute(&content.old, &content.new, CONTEXT);
                let v = FileView {
                    first_hunk: first,
                    content,
                    diff,
                };
                first += v.diff.hunks.len();
                v
            })
            .collect()
    }
}

/// A display row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Row {
    /// A file's header.
    File {
        /// The file.
        file: usize,
    },
    /// What a hunk risks, on the line above its header (docs/DESIGN.md §6).
    Risk {
        /// The file.
        file: usize,
        /// The hunk within the file.
        hunk: usize,
    },
    /// A hunk's header (`@@ … @@`, included or not, cursor).
    Hunk {
        /// The file.
        file: usize,
        /// The hunk within the file.
        hunk: usize,
    },
    /// A unified line: `line` indexes the hunk's lines; `partner` is the line it replaces or
    /// is replaced by (for word emphasis).
    Line {
        /// The file.
        file: usize,
        /// The hunk within the file.
        hunk: usize,
        /// The line within the hunk.
        line: usize,
        /// The paired changed line, if any.
        partner: Option<usize>,
    },
    /// A changed line equal to its partner but for whitespace (whitespace ignored): shown
    /// once, as context.
    Same {
        /// The file.
        file: usize,
        /// The hunk within the file.
        hunk: usize,
        /// The new line within the hunk.
        line: usize,
    },
    /// Side by side: an old line and a new line (either may be absent).
    Pair {
        /// The file.
        file: usize,
        /// The hunk within the file.
        hunk: usize,
        /// The old line within the hunk.
        old: Option<usize>,
        /// The new line within the hunk.
        new: Option<usize>,
    },
    /// A hunk whose changes are whitespace only (whitespace ignored).
    Folded {
        /// The file.
        file: usize,
        /// The hunk within the file.
        hunk: usize,
    },
}

impl Row {
    /// The (file, hunk) the row belongs to.
    pub fn hunk(&self) -> Option<(usize, usize)> {
        match *self {
            Row::File { .. } => None,
            Row::Risk { file, hunk }
            | Row::Hunk { file, hunk }
            | Row::Line { file, hunk, .. }
            | Row::Same { file, hunk, .. }
            | Row::Pair { file, hunk, .. }
            | Row::Folded { file, hunk } => Some((file, hunk)),
        }
    }
}

/// Text compared ignoring whitespace.
pub(crate) fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The runs of a hunk's lines: context lines one by one, and each change as its deleted
/// and inserted line indices.
enum Run {
    Context(usize),
    Change(Vec<usize>, Vec<usize>),
}

fn runs(h: &DiffHunk) -> Vec<Run> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < h.lines.len() {
        if h.lines[i].tag == Tag::Equal {
            out.push(Run::Context(i));
            i += 1;
            continue;
        }
        let mut del = Vec::new();
        let mut ins = Vec::new();
        while i < h.lines.len() && h.lines[i].tag == Tag::Delete {
            del.push(i);
            i += 1;
        }
        while i < h.lines.len() && h.lines[i].tag == Tag::Insert {
            ins.push(i);
            i += 1;
        }
        out.push(Run::Change(del, ins));
    }
    out
}

/// Whether every change of the hunk is whitespace only.
pub(crate) fn whitespace_only(h: &DiffHunk) -> bool {
    runs(h).iter().all(|r| match r {
        Run::Context(_) => true,
        Run::Change(d, i) => {
            d.len() == i.len()
                && d.iter()
                    .zip(i)
                    .all(|(&a, &b)| squash(&h.lines[a].text) == squash(&h.lines[b].text))
        }
    })
}

/// Build the rows of `files`; a hunk whose global index is `true` in `risky` has a risk line
/// above its header.
pub fn build(files: &[FileView], mode: DiffMode, ignore_ws: bool, risky: &[bool]) -> Vec<Row> {
    let mut rows = Vec::new();
    for (fi, f) in files.iter().enumerate() {
        rows.push(Row::File { file: fi });
        for (hi, h) in f.diff.hunks.iter().enumerate() {
            if risky.get(f.first_hunk + hi).copied().unwrap_or(false) {
                rows.push(Row::Risk { file: fi, hunk: hi });
            }
            rows.push(Row::Hunk { file: fi, hunk: hi });
            if ignore_ws && whitespace_only(h) {
                rows.push(Row::Folded { file: fi, hunk: hi });
                continue;
            }
            for run in runs(h) {
                match run {
                    Run::Context(i) => rows.push(match mode {
                        DiffMode::Unified => Row::Line {
                            file: fi,
                            hunk: hi,
                            line: i,
                            partner: None,
                        },
                        DiffMode::SideBySide => Row::Pair {
                            file: fi,
                            hunk: hi,
                            old: Some(i),
                            new: Some(i),
                        },
                    }),
                    Run::Change(del, ins) => {
                        let pairs = del.len().min(ins.len());
                        let same = |k: usize| {
                            ignore_ws
                                && squash(&h.lines[del[k]].text) == squash(&h.lines[ins[k]].text)
                        };
                        match mode {
                            DiffMode::Unified => {
                                // Deleted lines first, then inserted, as a unified diff shows
                                // them; whitespace-equal pairs become one context-like row.
                                for (k, &d) in del.iter().enumerate() {
                                    if k < pairs && same(k) {
                                        continue;
                                    }
                                    rows.push(Row::Line {
                                        file: fi,
                                        hunk: hi,
                                        line: d,
                                        partner: (k < pairs).then(|| ins[k]),
                                    });
                                }
                                for (k, &n) in ins.iter().enumerate() {
                                    if k < pairs && same(k) {
                                        rows.push(Row::Same {
                                            file: fi,
                                            hunk: hi,
                                            line: n,
                                        });
                                        continue;
                                    }
                                    rows.push(Row::Line {
                                        file: fi,
                                        hunk: hi,
                                        line: n,
                                        partner: (k < pairs).then(|| del[k]),
                                    });
                                }
                            }
                            DiffMode::SideBySide => {
                                for k in 0..del.len().max(ins.len()) {
                                    if k < pairs && same(k) {
                                        rows.push(Row::Same {
                                            file: fi,
                                            hunk: hi,
                                            line: ins[k],
                                        });
                                        continue;
                                    }
                                    rows.push(Row::Pair {
                                        file: fi,
                                        hunk: hi,
                                        old: del.get(k).copied(),
                                        new: ins.get(k).copied(),
                                    });
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    rows
}

/// The row of each global hunk's header.
pub(crate) fn hunk_rows(rows: &[Row], files: &[FileView]) -> Vec<usize> {
    let mut out = Vec::new();
    for (r, row) in rows.iter().enumerate() {
        if let Row::Hunk { file, hunk } = row {
            let g = files[*file].first_hunk + hunk;
            if out.len() <= g {
                out.resize(g + 1, 0);
            }
            out[g] = r;
        }
    }
    out
}

/// Split a line into words (letters, digits, `_`), runs of whitespace, and single other
/// characters, as byte ranges.
fn tokens(s: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut kind = 0u8;
    for (i, c) in s.char_indices() {
        let k = if c.is_alphanumeric() || c == '_' {
            1
        } else if c.is_whitespace() {
            2
        } else {
            3
        };
        if i > start && (k != kind || k == 3) {
            out.push(start..i);
            start = i;
        }
        kind = k;
    }
    if start < s.len() {
        out.push(start..s.len());
    }
    out
}

/// The byte ranges of `line` that differ from `partner`, word by word. Long lines and lines
/// with nothing in common get no emphasis (the whole line is the change).
pub(crate) fn emphasis(line: &str, partner: &str, line_is_new: bool) -> Vec<Range<usize>> {
    if line.len() > 1000 || partner.len() > 1000 {
        return Vec::new();
    }
    let (old, new) = if line_is_new {
        (partner, line)
    } else {
        (line, partner)
    };
    let (ot, nt) = (tokens(old), tokens(new));
    let ow: Vec<&str> = ot.iter().map(|r| &old[r.clone()]).collect();
    let nw: Vec<&str> = nt.iter().map(|r| &new[r.clone()]).collect();
    let ops = similar::capture_diff_slices(similar::Algorithm::Myers, &ow, &nw);
    let mine = if line_is_new { &nt } else { &ot };
    let mut out: Vec<Range<usize>> = Vec::new();
    let mut common = 0;
    for op in ops {
        let (tag, o, n) = op.as_tag_tuple();
        if tag == similar::DiffTag::Equal {
            common += o.clone().map(|k| ow[k].trim().len()).sum::<usize>();
            continue;
        }
        let range = if line_is_new { n } else { o };
        if range.is_empty() {
            continue;
        }
        let bytes = mine[range.start].start..mine[range.end - 1].end;
        match out.last_mut() {
            Some(last) if last.end == bytes.start => last.end = bytes.end,
            _ => out.push(bytes),
        }
    }
    if common == 0 {
        return Vec::new();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(old: &str, new: &str) -> Vec<FileView> {
        FileView::build(vec![FileContent {
            path: "x.rs".into(),
            old: old.into(),
            new: new.into(),
            created: false,
            deleted: false,
            mode_change: None,
        }])
    }

    #[test]
    fn unified_rows_pair_changed_lines() {
        let f = files("a\nb\nc\n", "a\nB\nc\n");
        let rows = build(&f, DiffMode::Unified, false, &[]);
        assert_eq!(rows[0], Row::File { file: 0 });
        assert_eq!(rows[1], Row::Hunk { file: 0, hunk: 0 });
        let lines: Vec<_> = rows
            .iter()
            .filter_map(|r| match r {
                Row::Line { line, partner, .. } => Some((*line, *partner)),
                _ => None,
            })
            .collect();
        // a, -b (partner +B), +B (partner -b), c
        assert_eq!(
            lines,
            vec![(0, None), (1, Some(2)), (2, Some(1)), (3, None)]
        );
    }

    #[test]
    fn side_by_side_rows_put_old_beside_new() {
        let f = files("a\nb\nc\n", "a\nB\nB2\nc\n");
        let rows = build(&f, DiffMode::SideBySide, false, &[]);
        let pairs: Vec<_> = rows
            .iter()
            .filter_map(|r| match r {
                Row::Pair { old, new, .. } => Some((*old, *new)),
                _ => None,
            })
            .collect();
        assert_eq!(
            pairs,
            vec![
                (Some(0), Some(0)),
                (Some(1), Some(2)),
                (None, Some(3)),
                (Some(4), Some(4))
            ]
        );
    }

    #[test]
    fn whitespace_only_hunks_fold_when_ignored() {
        let old: String = (0..20).map(|i| format!("line {i}\n")).collect();
        let new = old
            .replace("line 2\n", "line  2 \n")
            .replace("line 15\n", "LINE 15\n");
        let f = files(&old, &new);
        assert_eq!(f[0].diff.hunks.len(), 2);
        let rows = build(&f, DiffMode::Unified, true, &[]);
        assert!(rows.contains(&Row::Folded { file: 0, hunk: 0 }));
        assert!(!rows.contains(&Row::Folded { file: 0, hunk: 1 }));
        let shown = build(&f, DiffMode::Unified, false, &[]);
        assert!(!shown.iter().any(|r| matches!(r, Row::Folded { .. })));
        assert_eq!(hunk_rows(&rows, &f).len(), 2);
    }

    #[test]
    fn a_risky_hunk_has_its_risk_line_right_above_its_header() {
        let old: String = (0..20).map(|i| format!("line {i}\n")).collect();
        let new = old.replace("line 2\n", "").replace("line 15\n", "");
        let f = files(&old, &new);
        let rows = build(&f, DiffMode::SideBySide, false, &[false, true]);
        let at = hunk_rows(&rows, &f);
        assert_ne!(rows[at[0] - 1], Row::Risk { file: 0, hunk: 0 });
        assert_eq!(rows[at[1] - 1], Row::Risk { file: 0, hunk: 1 });
        assert_eq!(
            rows.iter()
                .filter(|r| matches!(r, Row::Risk { .. }))
                .count(),
            1
        );
    }

    #[test]
    fn emphasis_marks_the_changed_words_only() {
        let old = "let total = price * count;";
        let new = "let total = price * quantity;";
        let e = emphasis(new, old, true);
        assert_eq!(e.len(), 1);
        assert_eq!(&new[e[0].clone()], "quantity");
        let e = emphasis(old, new, false);
        assert_eq!(&old[e[0].clone()], "count");
        assert!(emphasis("abc", "xyz", true).is_empty());
        assert_eq!(
            tokens("a_b(c, 1)"),
            vec![0..3, 3..4, 4..5, 5..6, 6..7, 7..8, 8..9]
        );
    }
}
