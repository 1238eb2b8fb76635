//! Stage 4b, slides: where new code next to a placeholder leaves a block open (or closes one
//! it never opened), the placeholder resumes inside the file's matching block.
//!
//! New code inserted next to context can often be read two ways when its last lines repeat
//! the context's (a new test whose last asserts equal the previous test's, a branch added
//! after a like one). A snippet cut off by a placeholder right after the new code shows
//! only part of it: the placeholder then stands for the rest, which the file holds in the
//! copy the snippet's context matched. Read the first way, the new code stays open and the
//! merged file loses a closing line; read the second way, the context lines that close the
//! block are the new code's own and the file's copies follow the placeholder. The second
//! reading is taken when it, and only it, balances the new code.

use crate::edit::lazy::align::{Edit, Op};
use crate::edit::lazy::costs::WEIGHTS;
use crate::edit::lazy::prepare::SLine;
use crate::edit::lazy::units::depth_change;

/// Net brackets a line opens.
fn depth(lines: &[SLine], i: usize) -> i64 {
    depth_change(&lines[i].text).0
}

/// Which edge of an edit meets the placeholder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Edge {
    Head,
    Tail,
}

/// Slides the new code at the edit's tail (`Edge::Tail`: a placeholder follows the segment)
/// or head (a placeholder precedes it) until it is balanced, if a few context lines next to
/// it balance it.
pub(crate) fn balance_at_gap(edit: &mut Edit, lines: &[SLine], edge: Edge) {
    let tail = edge == Edge::Tail;
    let ops = &mut edit.ops;
    // Outward order: from the placeholder inwards.
    let order: Vec<usize> = if tail {
        (0..ops.len()).rev().collect()
    } else {
        (0..ops.len()).collect()
    };
    let adds = order
        .iter()
        .take_while(|&&k| matches!(ops[k], Op::Add(_)))
        .count();
    let added: i64 = order[..adds]
        .iter()
        .map(|&k| match ops[k] {
            Op::Add(i) => depth(lines, i),
            _ => 0,
        })
        .sum();
    // At the tail new code must not stay open; at the head it must not close what it did
    // not open.
    let open = if tail { added } else { -added };
    if adds == 0 || open <= 0 {
        return;
    }
    let mut net = added;
    let mut prev: Option<(usize, usize)> = None;
    // The slide whose new code ends as the context before it ends (the signature of a
    // diff's slide), and balances it.
    let mut take = None;
    let mut best_echo = 0;
    for (n, &k) in order[adds..].iter().enumerate().take(WEIGHTS.max_slide) {
        let Op::Same { i, j } = ops[k] else { break };
        // Contiguous context only: a slide moves a run of lines, nothing between them.
        if let Some((pi, pj)) = prev
            && (pi.abs_diff(i) != 1 || pj.abs_diff(j) != 1)
        {
            break;
        }
        prev = Some((i, j));
        net += depth(lines, i);
        if net == 0 {
            let echo = echo(ops, &order, adds, adds + n + 1, lines);
            if echo > best_echo {
                best_echo = echo;
                take = Some(n + 1);
            }
        }
    }
    let Some(take) = take else { return };
    let mut edge_j = None;
    for &k in &order[adds..adds + take] {
        if let Op::Same { i, j } = ops[k] {
            ops[k] = Op::Add(i);
            edge_j = Some(j);
        }
    }
    let Some(j) = edge_j else { return };
    // The file's copies of the slid lines now follow (precede) the placeholder.
    if tail {
        edit.span.end = edit.span.end.min(j);
    } else {
        edit.span.start = edit.span.start.max(j + 1);
    }
}

/// How many of the new code's outer lines (`order[..adds]`) repeat, in order, the context
/// lines before the slid ones (`order[from..]`).
fn echo(ops: &[Op], order: &[usize], adds: usize, from: usize, lines: &[SLine]) -> usize {
    let text = |k: usize| match ops[k] {
        Op::Add(i) | Op::Same { i, .. } | Op::Change { i, .. } => Some(lines[i].text.trim()),
        _ => None,
    };
    order[..adds]
        .iter()
        .zip(&order[from..])
        .take_while(|&(&a, &c)| {
            matches!(ops[c], Op::Same { .. }) && text(a).is_some() && text(a) == text(c)
        })
        .filter(|&(&a, _)| text(a).is_some_and(|t| !t.is_empty()))
        .count()
}
