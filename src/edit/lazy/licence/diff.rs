//! The licence check's line diff: the file against the merged result, whitespace-insensitive,
//! the lines both hold byte for byte at their ends skipped; where each file line stands in the
//! result, and so which it lost.

use std::time::{Duration, Instant};

use similar::{Algorithm, DiffOp, capture_diff_slices_deadline};

use super::super::index::FileIndex;
use super::super::lines;

/// How long the line diff may search for the smallest difference; past it the diff is
/// coarser, which only finds more lost lines (and so refuses more), never fewer.
const DIFF_DEADLINE: Duration = Duration::from_millis(200);

/// The file against the result, line by line (whitespace-insensitive).
pub(super) struct Diff {
    /// Where each file line stands in the result, when it is kept.
    pub(super) kept: Vec<Option<usize>>,
    /// The keys of the file's and the result's lines between their common ends.
    pub(super) old: Vec<u64>,
    pub(super) new: Vec<u64>,
    /// Whether each line of the result is blank.
    pub(super) out_blank: Vec<bool>,
}

impl Diff {
    pub(super) fn of<S: AsRef<str>>(file: &FileIndex<'_>, out: &[S]) -> Diff {
        let (n, m) = (file.len(), out.len());
        // The lines the result holds byte for byte at both ends need no key.
        let head = (0..n.min(m))
            .take_while(|&k| file.lines[k] == out[k].as_ref())
            .count();
        let tail = (0..n.min(m) - head)
            .take_while(|&d| file.lines[n - 1 - d] == out[m - 1 - d].as_ref())
            .count();
        let old: Vec<u64> = (head..n - tail).map(|j| file.key(j)).collect();
        let facts: Vec<(u64, u32, bool, bool)> = out[head..m - tail]
            .iter()
            .map(|l| lines::facts(l.as_ref()))
            .collect();
        let new: Vec<u64> = facts.iter().map(|f| f.0).collect();
        let deadline = Instant::now() + DIFF_DEADLINE;
        let ops = capture_diff_slices_deadline(Algorithm::Myers, &old, &new, Some(deadline));
        let mut kept: Vec<Option<usize>> = (0..n)
            .map(|j| {
                if j < head {
                    Some(j)
                } else if j >= n - tail {
                    Some(j + m - n)
                } else {
                    None
                }
            })
            .collect();
        for op in &ops {
            if let DiffOp::Equal {
                old_index,
                new_index,
                len,
            } = *op
            {
                for d in 0..len {
                    kept[head + old_index + d] = Some(head + new_index + d);
                }
            }
        }
        let out_blank: Vec<bool> = (0..m)
            .map(|k| match k.checked_sub(head) {
                Some(d) if d < facts.len() => facts[d].2,
                _ => lines::is_blank(out[k].as_ref()),
            })
            .collect();
        Diff {
            kept,
            old,
            new,
            out_blank,
        }
    }
}
