//! The licence check's line diff: the file against the merged result, whitespace-insensitive,
//! the lines both hold byte for byte at their ends skipped; where each file line stands in the
//! result, and so which it lost.

use std::cell::Cell;
use std::hash::{Hash, Hasher};

use similar::{Algorithm, DiffOp, capture_diff_slices};

use crate::edit::lazy::costs::WEIGHTS;
use crate::edit::lazy::index::FileIndex;
use crate::edit::lazy::lines;

/// How many line comparisons the diff may still make (see `Weights::diff_comparisons`).
struct Budget {
    left: Cell<u64>,
}

impl Budget {
    /// Spends one comparison; false once none is left.
    fn spend(&self) -> bool {
        let left = self.left.get();
        self.left.set(left.saturating_sub(1));
        left > 0
    }
}

/// A line's key as the diff compares it: each comparison spends one of the diff's budget, and
/// once that is spent no two lines are equal any more.
#[derive(Clone, Copy)]
struct Probe<'b> {
    key: u64,
    budget: &'b Budget,
}

impl PartialEq for Probe<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.budget.spend() && self.key == other.key
    }
}

impl Eq for Probe<'_> {}

impl Hash for Probe<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.key.hash(state);
    }
}

/// The line diff of `old` against `new` within `comparisons` line comparisons, and whether
/// it ran out of them. Past the cap no two lines are equal: the diff is coarser (more lines
/// count as lost and new, each still needing its licence), never wrong, and the same on
/// every machine.
fn line_ops(old: &[u64], new: &[u64], comparisons: u64) -> (Vec<DiffOp>, bool) {
    let budget = Budget {
        left: Cell::new(comparisons),
    };
    let probes = |keys: &[u64]| -> Vec<Probe<'_>> {
        keys.iter()
            .map(|&key| Probe {
                key,
                budget: &budget,
            })
            .collect()
    };
    let ops = capture_diff_slices(Algorithm::Myers, &probes(old), &probes(new));
    (ops, budget.left.get() == 0)
}

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
    pub(super) out_fill: Vec<Fill>,
}

/// Whether a line of the result is blank or holds text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Fill {
    Blank,
    Solid,
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
        let (ops, _) = line_ops(&old, &new, WEIGHTS.diff_comparisons);
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
        // The lines of the common ends are the file's own: the index knows their blankness.
        let out_fill: Vec<Fill> = (0..m)
            .map(|k| {
                let blank = match k.checked_sub(head) {
                    None => file.is_blank(k),
                    Some(d) if d < facts.len() => facts[d].2,
                    Some(_) => file.is_blank(k + n - m),
                };
                if blank { Fill::Blank } else { Fill::Solid }
            })
            .collect();
        Diff {
            kept: Kept::new(kept, m),
            old,
            new,
            out_fill,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keys over a small alphabet from a fixed seed: every key repeats all over both sides,
    /// so no line anchors the diff and its search is as long as it gets.
    fn adversarial(len: usize, seed: u64) -> Vec<u64> {
        let mut x = seed;
        (0..len)
            .map(|_| {
                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                (x >> 33) % 4
            })
            .collect()
    }

    /// Whether `ops` is a diff of `old` against `new`: in order, covering both, equal lines
    /// equal. Returns the lines it keeps.
    fn kept_lines(ops: &[DiffOp], old: &[u64], new: &[u64]) -> usize {
        let (mut o, mut n, mut kept) = (0, 0, 0);
        for op in ops {
            let (_, old_range, new_range) = op.as_tag_tuple();
            assert_eq!((old_range.start, new_range.start), (o, n));
            if let DiffOp::Equal { len, .. } = *op {
                assert_eq!(old[old_range.clone()], new[new_range.clone()]);
                kept += len;
            }
            (o, n) = (old_range.end, new_range.end);
        }
        assert_eq!((o, n), (old.len(), new.len()));
        kept
    }

    #[test]
    fn the_diff_stops_matching_at_its_comparison_cap_the_same_way_every_time() {
        let (old, new) = (adversarial(80_000, 1), adversarial(80_000, 2));
        let (ops, hit) = line_ops(&old, &new, WEIGHTS.diff_comparisons);
        assert!(hit, "the cap is reached");
        let kept = kept_lines(&ops, &old, &new);
        // Past the cap the rest is lost and new: fewer lines kept than a diff with room.
        let (roomy, roomy_hit) = line_ops(&old, &new, u64::MAX);
        assert!(!roomy_hit);
        assert!(kept < kept_lines(&roomy, &old, &new));
        // The same input gives the same diff: the cap counts work, not time.
        assert_eq!(line_ops(&old, &new, WEIGHTS.diff_comparisons).0, ops);
        // A small diff is nowhere near it.
        let (small, small_hit) = line_ops(&old[..2000], &new[..2000], WEIGHTS.diff_comparisons);
        assert!(!small_hit);
        kept_lines(&small, &old[..2000], &new[..2000]);
    }
}
