//! The bracket depth of the snippet's lines, linked so that the line closing a unit is found
//! in a few jumps instead of a scan.
//!
//! Each line knows what it opens and closes (`units::depth_change`), the depth of all the
//! snippet's lines through it, and the next line whose depth is lower. Between a line and
//! that one every line stands deeper, so no line between closes a unit the line is inside:
//! the closer of a unit is found in as many jumps as the unit's depth falls, not one step a
//! line (a snippet of thousands of nested openers made each header's unit end a scan to the
//! segment's end, quadratic in all).

use super::units::depth_change;
use crate::edit::lazy::prepare::SLine;

/// A line's brackets and its link to the next shallower line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Depth {
    /// Brackets opened less brackets closed on the line.
    pub(crate) change: i64,
    /// The line opens a brace that it does not close.
    pub(crate) brace: bool,
    /// The depth after the line, counted from the snippet's start.
    after: i64,
    /// The next line whose `after` is lower; [`UNLINKED`] before [`link`] ran, [`NONE`]
    /// when no later line is lower.
    lower: usize,
    /// The next line that opens a brace it does not close; [`NONE`] when none does.
    next_brace: usize,
}

/// Not linked yet: the lines are stepped one by one (a valid link is always a later line,
/// never line 0).
const UNLINKED: usize = 0;
/// No later line is shallower.
const NONE: usize = usize::MAX;

impl Depth {
    /// The brackets of one line, not linked.
    pub(crate) fn of(text: &str) -> Depth {
        let (change, brace) = depth_change(text);
        Depth {
            change,
            brace,
            after: 0,
            lower: UNLINKED,
            next_brace: NONE,
        }
    }
}

/// Link the snippet's lines in order: each line's depth from the start and its next lower
/// line (one pass with a stack of the lines still waiting for a lower one).
pub(crate) fn link(lines: &mut [SLine]) {
    let mut after = 0i64;
    let mut waiting: Vec<usize> = Vec::new();
    for k in 0..lines.len() {
        after += lines[k].brackets.change;
        lines[k].brackets.after = after;
        lines[k].brackets.lower = NONE;
        while let Some(&w) = waiting.last() {
            if lines[w].brackets.after <= after {
                break;
            }
            lines[w].brackets.lower = k;
            waiting.pop();
        }
        waiting.push(k);
    }
    let mut next_brace = NONE;
    for (k, l) in lines.iter_mut().enumerate().rev() {
        l.brackets.next_brace = next_brace;
        if l.brackets.brace {
            next_brace = k;
        }
    }
}

/// The first line after `k` that opens a brace it does not close ([`NONE`] when none does;
/// before [`link`] ran, the next line, so that lines are stepped one by one).
pub(crate) fn next_brace(lines: &[SLine], k: usize) -> usize {
    match lines[k].brackets.lower {
        UNLINKED => k + 1,
        _ => lines[k].brackets.next_brace,
    }
}

/// The first line after `k`, before `end`, at which the depth counted from some line above
/// falls to zero or below, given that it is `depth` (above zero) after line `k`.
pub(crate) fn closer_after(lines: &[SLine], k: usize, depth: i64, end: usize) -> Option<usize> {
    debug_assert!(depth > 0);
    let (mut at, mut depth) = (k, depth);
    loop {
        let next = match lines[at].brackets.lower {
            UNLINKED => at + 1,
            lower => lower,
        };
        if next >= end {
            return None;
        }
        depth += if lines[at].brackets.lower == UNLINKED {
            lines[next].brackets.change
        } else {
            lines[next].brackets.after - lines[at].brackets.after
        };
        if depth <= 0 {
            return Some(next);
        }
        at = next;
    }
}

/// The depth after line `to`, counted from zero after line `from` (zero when `to` is not
/// below `from`).
pub(crate) fn between(lines: &[SLine], from: usize, to: usize) -> i64 {
    let linked = lines[from].brackets.lower != UNLINKED && lines[to].brackets.lower != UNLINKED;
    if to <= from {
        0
    } else if linked {
        lines[to].brackets.after - lines[from].brackets.after
    } else {
        lines[from + 1..=to].iter().map(|l| l.brackets.change).sum()
    }
}
