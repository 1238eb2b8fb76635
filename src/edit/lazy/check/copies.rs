//! Rule `deleted-copy` (check): a segment's context — two or more lines the snippet writes in
//! a row, one at least saying something — that the file has twice, kept at one copy while the
//! merge deletes the other copy nearby: the snippet's context could as well be that other
//! copy, and read there the snippet deletes what lies between less (a new declaration written
//! after the end of one of two functions that end alike, the other one deleted on the way to
//! the next anchor). Two readings, one destructive: the merge asks.

use std::collections::HashSet;

use crate::edit::lazy::align::{Edit, Op};
use crate::edit::lazy::costs::QUOTED_START_CHARS;
use crate::edit::lazy::index::FileIndex;
use crate::edit::lazy::prepare::SLine;
use crate::error::{Error, ErrorCode, Result};

/// Refuse edit `e` when a run of context it keeps has a copy among the lines it deletes.
pub(crate) fn check(file: &FileIndex<'_>, lines: &[SLine], e: &Edit) -> Result<()> {
    let dropped: HashSet<usize> = e
        .ops
        .iter()
        .filter_map(|op| match *op {
            Op::Drop(j) if !file.is_blank(j) => Some(j),
            _ => None,
        })
        .collect();
    if dropped.len() < 2 {
        return Ok(());
    }
    let runs = kept_runs(file, e);
    // Only context at the segment's edge, a placeholder beyond it, can be read at its copy
    // further in: context written under other kept lines is held where it is.
    let edge_runs = [runs.first(), runs.last()];
    for (side, run) in [Side::First, Side::Last].into_iter().zip(edge_runs) {
        let Some(run) = run else { continue };
        if run.len() < 2
            || run.iter().all(|&(_, j)| file.is_trivial(j))
            || !at_edge(file, e, run, side)
        {
            continue;
        }
        if let Some(copy) = copy_among(file, run, &dropped)
            && match side {
                Side::First => copy.0 > run[run.len() - 1].1,
                Side::Last => copy.1 < run[0].1,
            }
        {
            let (first, last) = (run[0], run[run.len() - 1]);
            return Err(Error::new(
                ErrorCode::NeedsMoreContext,
                format!(
                    "snippet lines {}-{} (`{}`…) are file lines {}-{} and again lines {}-{}, \
                     which this reading deletes: read at lines {}-{}, the snippet deletes less. \
                     Show a line beside them that occurs only at the intended place",
                    lines[first.0].at,
                    lines[last.0].at,
                    lines[first.0]
                        .text
                        .trim()
                        .chars()
                        .take(QUOTED_START_CHARS)
                        .collect::<String>(),
                    first.1 + 1,
                    last.1 + 1,
                    copy.0 + 1,
                    copy.1 + 1,
                    copy.0 + 1,
                    copy.1 + 1,
                ),
            ));
        }
    }
    Ok(())
}

/// Which end of a segment a run of context stands at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    First,
    Last,
}

/// Whether `run` is the edit's first (last) op on a line of code: nothing but blank lines and
/// separators before (after) it.
fn at_edge(file: &FileIndex<'_>, e: &Edit, run: &[(usize, usize)], side: Side) -> bool {
    let quiet = |op: &Op| match *op {
        Op::Same { j, .. } | Op::Keep(j) | Op::Drop(j) => file.is_blank(j),
        Op::Sep => true,
        Op::Add(_) | Op::Change { .. } => false,
    };
    let is = |op: &Op, (i, j): (usize, usize)| matches!(*op, Op::Same { i: a, j: b } if a == i && b == j);
    match side {
        Side::First => e.ops.iter().take_while(|op| !is(op, run[0])).all(quiet),
        Side::Last => {
            let last = run[run.len() - 1];
            e.ops.iter().rev().take_while(|op| !is(op, last)).all(quiet)
        }
    }
}

/// The edit's runs of kept context: snippet lines written one after another (blank lines
/// aside) kept as file lines one after another (blank lines aside), as (snippet, file) pairs
/// of their non-blank lines.
fn kept_runs(file: &FileIndex<'_>, e: &Edit) -> Vec<Vec<(usize, usize)>> {
    let mut runs: Vec<Vec<(usize, usize)>> = Vec::new();
    let mut current: Vec<(usize, usize)> = Vec::new();
    for op in &e.ops {
        match *op {
            Op::Same { j, .. } if file.is_blank(j) => {}
            Op::Same { i, j } => {
                let follows = current
                    .last()
                    .is_some_and(|&(_, pj)| (pj + 1..j).all(|k| file.is_blank(k)));
                if !follows && !current.is_empty() {
                    runs.push(std::mem::take(&mut current));
                }
                current.push((i, j));
            }
            _ => {
                if !current.is_empty() {
                    runs.push(std::mem::take(&mut current));
                }
            }
        }
    }
    if !current.is_empty() {
        runs.push(current);
    }
    runs
}

/// The first and last file line of a copy of `run`'s lines (the same lines in a row, blank
/// lines aside) made wholly of lines in `dropped`.
fn copy_among(
    file: &FileIndex<'_>,
    run: &[(usize, usize)],
    dropped: &HashSet<usize>,
) -> Option<(usize, usize)> {
    let keys: Vec<u64> = run.iter().map(|&(_, j)| file.key(j)).collect();
    file.positions(keys[0]).iter().find_map(|&p| {
        let mut at = p as usize;
        if !dropped.contains(&at) {
            return None;
        }
        let start = at;
        for &key in &keys[1..] {
            at = (at + 1..file.len()).find(|&k| !file.is_blank(k))?;
            if file.key(at) != key || !dropped.contains(&at) {
                return None;
            }
        }
        Some((start, at))
    })
}
