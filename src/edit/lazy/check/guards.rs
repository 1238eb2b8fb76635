//! Stage 6, guards: last checks on a merged result, whoever computed it (the deterministic
//! merge or a fallback model). A result that changes nothing is `APPLY_NOOP`; one that holds
//! placeholder text the file did not have is `MARKER_LEAKAGE`; one that loses most of the
//! file is `TRUNCATION_DETECTED`; one that rewrites most of it is `BLAST_RADIUS_EXCEEDED`;
//! a deterministic merge that unbalances the file's brackets is `NEEDS_MORE_CONTEXT`.

use crate::edit::Merged;
use crate::edit::lazy::align::{Edit, Op};
use crate::edit::lazy::costs::WEIGHTS;
use crate::edit::lazy::index::FileIndex;
use crate::edit::lazy::lines;
use crate::edit::lazy::placeholder;
use crate::edit::lazy::prepare::SLine;
use crate::edit::matching::changed_old_lines;
use crate::edit::text::split_lines;
use crate::error::{Error, ErrorCode, Result};

/// How many lines [`split_lines`] would make of `text`.
fn line_count(text: &str) -> usize {
    if text.is_empty() {
        return 0;
    }
    text.bytes().filter(|&b| b == b'\n').count() + usize::from(!text.ends_with('\n'))
}

/// Check a merged result against the original. `removals` says whether the snippet asked to
/// delete definitions (`remove NAME`), which may shrink a file legitimately. `new_lines` are
/// the lines the result may hold that the file did not (the snippet's); `None` means any.
/// `changed` is how many file lines the merge deleted or replaced, when known (else a line
/// diff counts them).
/// Whether a snippet asked to delete definitions (`remove NAME`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Removals {
    None,
    Asked,
}

/// What a file holds: code (its brackets balance) or prose (not checked).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Text {
    Code,
    Prose,
}

pub(crate) fn check(
    original: &str,
    file: &FileIndex<'_>,
    merged: String,
    removals: Removals,
    new_lines: Option<&[&str]>,
    changed: Option<usize>,
) -> Result<Merged> {
    if merged == original {
        return Err(Error::new(
            ErrorCode::ApplyNoop,
            "the snippet changes nothing: every line it shows is already in the file at that \
             place; check that the new lines are in the snippet and the anchor lines are \
             copied from the current file",
        ));
    }
    let leaked = |l: &&str| placeholder::looks_like_marker(l) && !file.contains(lines::key(l));
    let leak = match new_lines {
        Some(candidates) => candidates
            .iter()
            .copied()
            .find(|l| leaked(l) && merged.contains(l.trim())),
        None => merged.lines().find(leaked),
    };
    if let Some(line) = leak {
        return Err(Error::new(
            ErrorCode::MarkerLeakage,
            format!(
                "the merged file would hold the placeholder `{}`, which the file does not have; \
                 write placeholders as comments such as `// ... existing code ...`",
                line.trim()
            ),
        ));
    }
    let n = file.len();
    if removals == Removals::None && n >= WEIGHTS.guard_min_lines {
        let chars_lost = 1.0 - merged.len() as f64 / original.len().max(1) as f64;
        let new_lines = || line_count(&merged);
        if chars_lost > WEIGHTS.truncation_chars
            && 1.0 - new_lines() as f64 / n as f64 > WEIGHTS.truncation_lines
        {
            return Err(Error::new(
                ErrorCode::TruncationDetected,
                format!(
                    "the merge would shrink the file from {n} to {} lines; elide unchanged code \
                     with `... existing code ...` placeholders, or delete explicitly with \
                     `remove NAME`",
                    new_lines()
                ),
            ));
        }
    }
    if n >= WEIGHTS.guard_min_lines {
        let changed =
            changed.unwrap_or_else(|| changed_old_lines(file.lines, &split_lines(&merged).0));
        if changed as f64 > WEIGHTS.blast_radius * n as f64 {
            return Err(Error::new(
                ErrorCode::BlastRadiusExceeded,
                format!(
                    "the edit would change {changed} of the file's {n} lines; split it into \
                     smaller edits, or write the whole file with a full-content tool"
                ),
            ));
        }
    }
    Ok(Merged {
        content: merged,
        warnings: Vec::new(),
        applied: 1,
        ..Default::default()
    })
}

/// Net brackets a code line opens, for the balance check: comment lines open none.
fn bracket_delta(line: &str) -> i64 {
    let t = line.trim_start();
    let comment = ["#", "//", "/*", "*", "--", "<!--", ";"]
        .iter()
        .any(|m| t.starts_with(m));
    if comment {
        return 0;
    }
    crate::edit::lazy::units::depth_change(line).0
}

/// A merge that leaves brackets unbalanced in a file that had them balanced read the
/// snippet wrongly (a closing line doubled, a block cut off): `NEEDS_MORE_CONTEXT`. The
/// check counts only the lines the edits add and delete, and the whole file only when
/// those do not balance. Prose files are not checked.
pub(crate) fn check_balance(
    file: &FileIndex<'_>,
    lines: &[SLine],
    edits: &[Edit],
    text: Text,
) -> Result<()> {
    if text == Text::Prose {
        return Ok(());
    }
    let mut delta = 0i64;
    for op in edits.iter().flat_map(|e| &e.ops) {
        delta += match *op {
            Op::Add(i) => bracket_delta(&lines[i].text),
            Op::Change { i, j } => bracket_delta(&lines[i].text) - bracket_delta(file.lines[j]),
            Op::Drop(j) => -bracket_delta(file.lines[j]),
            Op::Same { .. } | Op::Keep(_) | Op::Sep => 0,
        };
    }
    if delta == 0 {
        return Ok(());
    }
    let before: i64 = file.lines.iter().map(|l| bracket_delta(l)).sum();
    if before != 0 {
        return Ok(());
    }
    let (more, fewer) = if delta > 0 {
        ("opens", "closes")
    } else {
        ("closes", "opens")
    };
    Err(Error::new(
        ErrorCode::NeedsMoreContext,
        format!(
            "the merge would leave the file's brackets unbalanced: it {more} {} more than it \
             {fewer}, so a closing line was most likely read at the wrong place; show the \
             lines around the block's end, or its whole body",
            delta.abs()
        ),
    ))
}
