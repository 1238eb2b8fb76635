//! The licence check's line diff: the file against the merged result, whitespace-insensitive,
//! the lines both hold byte for byte at their ends skipped; where each file line stands in the
//! result, and so which it lost.

use std::time::{Duration, Instant};

use similar::{Algorithm, DiffOp, capture_diff_slices_deadline};

use super::super::index::FileIndex;
use super::super::lines;

/// How long the line diff may search for the smallest difference; past it the diff is
/// coarser: it counts more lines as lost and new, and each of them still needs its licence.
const DIFF_DEADLINE: Duration = Duration::from_millis(200);

/// Which file lines the result keeps, and where: both ways.
pub(super) struct Kept {
    /// Where each file line stands in the result, when it is kept.
    at: Vec<Option<usize>>,
    /// The file line each line of the result is, when it is one.
    origin: Vec<Option<usize>>,
}

impl Kept {
    fn new(at: Vec<Option<usize>>, result_lines: usize) -> Kept {
        let mut origin = vec![None; result_lines];
        for (j, k) in at.iter().enumerate() {
            if let Some(k) = k {
                origin[*k] = Some(j);
            }
        }
        Kept { at, origin }
    }

    /// Where file line `j` stands in the result; `None` when it is lost.
    pub(super) fn at(&self, j: usize) -> Option<usize> {
        self.at[j]
    }

    /// The file line that line `k` of the result is, if it is one.
    pub(super) fn origin(&self, k: usize) -> Option<usize> {
        self.origin[k]
    }

    /// The nearest non-blank file lines kept above and below a run of lost lines.
    pub(super) fn around(
        &self,
        file: &FileIndex<'_>,
        run: &[usize],
    ) -> (Option<usize>, Option<usize>) {
        let solid_kept = |j: &usize| self.at[*j].is_some() && !file.is_blank(*j);
        let above = (0..run[0]).rev().find(solid_kept);
        let below = (run[run.len() - 1] + 1..file.len()).find(solid_kept);
        (above, below)
    }

    /// Read the result's line that file line `from` stands for as file line `to` instead
    /// (`from` lost, `to` kept): another diff of the same texts, when both lines are alike.
    /// The same call with the lines swapped undoes it.
    pub(super) fn hand_over(&mut self, from: usize, to: usize) {
        let k = self.at[from].take();
        self.at[to] = k;
        if let Some(k) = k {
            self.origin[k] = Some(to);
        }
    }
}

/// The file against the result, line by line (whitespace-insensitive).
pub(super) struct Diff {
    /// Which file lines the result keeps, and where.
    pub(super) kept: Kept,
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
            kept: Kept::new(kept, m),
            old,
            new,
            out_blank,
        }
    }
}
