//! Stage 4c, edge readings (rule `edge-lookalike`): an edge whose outermost context lines —
//! the ones next to the placeholder — also stand in the file nearer the pin has two readings
//! when the alignment took the farther copy and changed file lines to get there. Read the
//! far way, the snippet's new lines replace the file lines between as changed versions of
//! lookalikes (a new doctest example whose traceback lines repeat the old one's); read the
//! near way, they are inserted and nothing goes. The alignment scores the far reading higher
//! only because it pairs more lines, which says nothing of what the snippet meant; the near
//! reading deletes nothing (the lines it keeps stay in the diff, unshown by the snippet), so
//! it is taken.

use super::{Aligner, Op, Strictness, Tie};
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
        ties: &[Tie],
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
        let (near, mut near_ops) = (0..run.from).find_map(|p| {
            self.inserts_before(&run, &inner, avail, ties, p)
                .map(|ops| (p, ops))
        })?;
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

    /// Whether the run's lines match the room at `p` in a row, with the `inner` snippet lines
    /// taking the room's first `p` lines unchanged (or none) and the rest inserted.
    fn inserts_before(
        &self,
        run: &OuterRun,
        inner: &[usize],
        avail: &[usize],
        ties: &[Tie],
        p: usize,
    ) -> Option<Vec<Op>> {
        let fits = run
            .lines
            .iter()
            .enumerate()
            .all(|(x, &i)| self.match_score(i, avail[p + x]).is_some());
        if !fits {
            return None;
        }
        if p == 0 {
            return Some(inner.iter().map(|&i| Op::Add(i)).collect());
        }
        let ops = self
            .edge_align(inner, &avail[..p], &ties[..inner.len()], Strictness::Strict)
            .ok()?;
        let same = ops
            .iter()
            .filter(|op| matches!(op, Op::Same { .. }))
            .count();
        (same == p
            && !ops
                .iter()
                .any(|op| matches!(op, Op::Change { .. } | Op::Drop(_))))
        .then_some(ops)
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

    /// A new check written first in a test, the next lines repeating the old checks: read
    /// the far way it would change the old checks into one another and lose one; the near
    /// way inserts it and keeps them all.
    #[test]
    fn new_lines_before_context_that_repeats_nearer_are_inserted() {
        let file = "#[test]\nfn rejects() {\n    let err = parse(\"a\").unwrap_err();\n    assert_eq!(err.to_string(), \"cannot parse at 0\");\n    let err = parse(\"b\").unwrap_err();\n    assert_eq!(err.to_string(), \"cannot parse at 0\");\n}\n";
        let snippet = "fn rejects() {\n    let err = parse(\"\").unwrap_err();\n    assert_eq!(err.to_string(), \"cannot parse at 0\");\n    let err = parse(\"a\").unwrap_err();\n    assert_eq!(err.to_string(), \"cannot parse at 0\");\n    // ...\n";
        assert_eq!(
            merged("t.rs", file, snippet),
            "#[test]\nfn rejects() {\n    let err = parse(\"\").unwrap_err();\n    assert_eq!(err.to_string(), \"cannot parse at 0\");\n    let err = parse(\"a\").unwrap_err();\n    assert_eq!(err.to_string(), \"cannot parse at 0\");\n    let err = parse(\"b\").unwrap_err();\n    assert_eq!(err.to_string(), \"cannot parse at 0\");\n}\n"
        );
    }

    /// The head's mirror: a new doctest example after an old one whose traceback lines it
    /// repeats goes in beside it; the old example stays.
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

    /// With no nearer copy of the context, a changed line is a change: the rule reads
    /// nothing else into it.
    #[test]
    fn a_change_with_no_nearer_context_stays_a_change() {
        let file = "fn rejects() {\n    let err = parse(\"a\").unwrap_err();\n    assert_eq!(err.to_string(), \"cannot parse at 0\");\n}\n";
        let snippet = "fn rejects() {\n    let err = parse(\"\").unwrap_err();\n    assert_eq!(err.to_string(), \"cannot parse at 0\");\n    // ...\n";
        assert_eq!(
            merged("t.rs", file, snippet),
            "fn rejects() {\n    let err = parse(\"\").unwrap_err();\n    assert_eq!(err.to_string(), \"cannot parse at 0\");\n}\n"
        );
    }
}
