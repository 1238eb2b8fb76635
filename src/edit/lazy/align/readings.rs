//! Stage 4c, edge readings (rule `edge-lookalike`): an edge whose outermost context lines —
//! the ones next to the placeholder — also stand in the file nearer the pin has two readings
//! when the alignment took the farther copy and changed file lines to get there. Read the
//! far way, the snippet's new lines replace the file lines between as changed versions of
//! lookalikes (a new doctest example whose traceback lines repeat the old one's); read the
//! near way, they are inserted and nothing goes. The alignment scores the far reading higher
//! only because it pairs more lines, which says nothing of what the snippet meant; the near
//! reading deletes nothing (the lines it keeps stay in the diff, unshown by the snippet), so
//! it is taken.

use super::{Aligner, Op};
use crate::edit::lazy::costs::WEIGHTS;
use crate::edit::lazy::prepare::Kind;

/// The run of context lines at an edge's outer end: snippet lines matched to file lines that
/// follow one another outward, with blank snippet lines among them left as new.
struct OuterRun {
    /// Index in the edge's operations where the run starts.
    at: usize,
    /// Its matched snippet lines, outward.
    lines: Vec<usize>,
    /// Where in the edge's room its first matched line stands.
    from: usize,
}

impl Aligner<'_> {
    /// The near reading of an edge (its operations `ops` in outward order over the room
    /// `avail`), when its outermost context could stand nearer the pin with nothing changed or
    /// deleted and the alignment changed file lines to reach the copy it took.
    pub(super) fn nearer_reading(
        &self,
        snip: &[usize],
        ops: &[Op],
        avail: &[usize],
    ) -> Option<Vec<Op>> {
        if self.diff_style || snip.iter().any(|&i| self.lines[i].kind == Kind::Removed) {
            return None;
        }
        let run = self.outer_run(ops, avail)?;
        let inner_ops = &ops[..run.at];
        if !inner_ops.iter().any(|op| matches!(op, Op::Change { .. })) {
            return None;
        }
        let inner: Vec<usize> = inner_ops
            .iter()
            .filter_map(|op| match *op {
                Op::Same { i, .. } | Op::Change { i, .. } | Op::Add(i) => Some(i),
                _ => None,
            })
            .collect();
        let (near, mut near_ops) = self.nearest_insertion(&run, &inner, avail)?;
        let mut next = avail[near..].iter();
        for op in &ops[run.at..] {
            near_ops.push(match *op {
                Op::Same { i, .. } => Op::Same {
                    i,
                    j: *next.next()?,
                },
                other => other,
            });
        }
        Some(near_ops)
    }

    /// The outer run of `ops`: at least one non-trivial matched line, its matches in a row.
    fn outer_run(&self, ops: &[Op], avail: &[usize]) -> Option<OuterRun> {
        let context = |op: &Op| match *op {
            Op::Same { .. } => true,
            Op::Add(i) => self.lines[i].blank,
            _ => false,
        };
        let at = ops.len() - ops.iter().rev().take_while(|op| context(op)).count();
        let matched: Vec<(usize, usize)> = ops[at..]
            .iter()
            .filter_map(|op| match *op {
                Op::Same { i, j } => Some((i, j)),
                _ => None,
            })
            .collect();
        if !matched.iter().any(|&(i, _)| !self.lines[i].trivial) {
            return None;
        }
        let from = avail.iter().position(|&j| j == matched[0].1)?;
        let in_a_row = matched
            .iter()
            .enumerate()
            .all(|(x, &(_, j))| avail.get(from + x) == Some(&j));
        in_a_row.then(|| OuterRun {
            at,
            lines: matched.iter().map(|&(i, _)| i).collect(),
            from,
        })
    }

    /// The nearest place `near` before the run's own where its lines match the room in a row,
    /// the `inner` snippet lines taking the room's first `near` lines unchanged (the first
    /// that can, in order) and the rest inserted; with the inner lines' operations. Linear in
    /// the edge's lines, and bounded in the work the run's matching takes.
    fn nearest_insertion(
        &self,
        run: &OuterRun,
        inner: &[usize],
        avail: &[usize],
    ) -> Option<(usize, Vec<Op>)> {
        // Which inner line takes each of the room's first lines, taken in order, the first
        // that can (so the room's first `p` lines are taken, for any `p` up to `took.len()`).
        let mut took: Vec<usize> = Vec::new();
        for (x, &i) in inner.iter().enumerate() {
            if took.len() < run.from && self.match_score(i, avail[took.len()]).is_some() {
                took.push(x);
            }
        }
        let mut work = 0usize;
        let near = (0..=took.len().min(run.from.saturating_sub(1))).find(|&p| {
            run.lines.iter().enumerate().all(|(x, &i)| {
                work += 1;
                work <= WEIGHTS.edge_reading_work && self.match_score(i, avail[p + x]).is_some()
            })
        })?;
        if work > WEIGHTS.edge_reading_work || near >= run.from {
            return None;
        }
        let mut room_line = vec![None; inner.len()];
        for (q, &x) in took[..near].iter().enumerate() {
            room_line[x] = Some(avail[q]);
        }
        let ops = inner
            .iter()
            .zip(room_line)
            .map(|(&i, j)| match j {
                Some(j) => Op::Same { i, j },
                None => Op::Add(i),
            })
            .collect();
        Some((near, ops))
    }
}

#[cfg(test)]
mod tests {
    use crate::edit::lazy::{Hints, merge};

    fn merged(path: &str, file: &str, snippet: &str) -> String {
        let hints = Hints {
            path: Some(path),
            instruction: None,
        };
        merge(file, snippet, &hints).unwrap().content
    }

    /// A new doctest example after an old one whose traceback lines it repeats goes in
    /// beside it; the old example stays (read the far way, it became the new one).
    #[test]
    fn a_new_example_after_its_lookalike_keeps_the_lookalike() {
        let file = "\"\"\"\nBad input:\n\n    >>> parse(\"a\")\n    Traceback (most recent call last):\n      ...\n    ValueError: cannot parse 'a' at position 0\n\n    >>> parse(\"b\")\n    Traceback (most recent call last):\n      ...\n    ValueError: cannot parse 'a' at position 0\n\nGood input:\n\n    >>> parse(\"1\")\n    1\n\"\"\"\n";
        let snippet = "# ...\n      ...\n    ValueError: cannot parse 'a' at position 0\n\nEmpty input:\n\n    >>> parse(\"\")\n    Traceback (most recent call last):\n      ...\n    ValueError: cannot parse '' at position 0\n\nGood input:\n# ...\n";
        let out = merged("t.py", file, snippet);
        let (kept, added) = out.split_at(out.find("Empty input:").unwrap());
        assert!(kept.ends_with("    >>> parse(\"b\")\n    Traceback (most recent call last):\n      ...\n    ValueError: cannot parse 'a' at position 0\n\n"), "{out}");
        assert!(
            added.starts_with("Empty input:\n\n    >>> parse(\"\")\n"),
            "{out}"
        );
        assert_eq!(out.matches(">>> parse(").count(), 4, "{out}");
    }
}
