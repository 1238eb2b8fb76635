//! Stage 4b, grounding: a deletion is licensed only by anchors that are the file's where
//! the snippet shows them. A run of matched lines next to a deletion (a file line dropped, or
//! replaced by a changed line) grounds it when, on its far side, it reaches the segment's
//! edge (a placeholder, kept lines) or, over new lines only, more lines that continue the
//! file right there. A run with only new lines beyond it sits inside new code: it is the
//! file's only by chance (a new job repeating an old job's steps, a new example repeating an
//! old one's imports), unless it places itself as a block — once in the file, with a line
//! that says something. Where one side has no anchor at all (new lines run to the segment's
//! edge) or only bare comment marks (`//!`), a changed line must be its old line's own new
//! version; where new lines run to the edge, a dropped line refuses the merge too.

use std::collections::HashSet;

use crate::edit::lazy::align::{Edit, Op};
use crate::edit::lazy::costs::WEIGHTS;
use crate::edit::lazy::index::FileIndex;
use crate::edit::lazy::lines;
use crate::edit::lazy::place::{Context, closest_old_version};
use crate::edit::lazy::prepare::SLine;
use crate::edit::lazy::units;
use crate::error::{Error, ErrorCode, Result};

/// Every deletion of `edit` is licensed by the anchors around it; else it is refused,
/// naming the lines that would go and the anchor that would license them.
pub(crate) fn check(ctx: &Context<'_>, edit: &Edit) -> Result<()> {
    let (file, lines) = (ctx.file, ctx.lines());
    let ops = &edit.ops;
    let mut a = 0;
    while a < ops.len() {
        if !in_gap(&ops[a]) {
            a += 1;
            continue;
        }
        let b = (a..ops.len())
            .find(|&k| !in_gap(&ops[k]))
            .unwrap_or(ops.len());
        let deletes = ops[a..b]
            .iter()
            .any(|op| matches!(op, Op::Drop(_) | Op::Change { .. }));
        if deletes {
            let before = judge(file, lines, ops, a..b, Side::Before(a));
            let after = judge(file, lines, ops, a..b, Side::After(b));
            if matches!(before, Anchor::Edge(false)) || matches!(after, Anchor::Edge(false)) {
                open_ended(ctx, edit, &ops[a..b])?;
            }
            if matches!(before, Anchor::Quiet) || matches!(after, Anchor::Quiet) {
                beside_markers(ctx, &ops[a..b])?;
            }
            for (this, other) in [(&before, &after), (&after, &before)] {
                let licensed = match this {
                    Anchor::Ambiguous(_) => false,
                    // Once in the file but among new lines: only with the file's own
                    // lines, grounded, across the gap.
                    Anchor::Unique(_) => matches!(other, Anchor::Grounded | Anchor::Edge(true)),
                    Anchor::Edge(_) | Anchor::Trivial | Anchor::Quiet | Anchor::Grounded => true,
                };
                if let (false, Anchor::Ambiguous(run) | Anchor::Unique(run)) = (licensed, this) {
                    let repeated = if matches!(this, Anchor::Ambiguous(_)) {
                        Repeated::Elsewhere
                    } else {
                        Repeated::Nowhere
                    };
                    return Err(ungrounded(file, lines, &ops[a..b], run, repeated));
                }
            }
        }
        a = b;
    }
    Ok(())
}

/// A deletion gap that runs over new lines to its segment's edge: nothing there says the
/// file's lines end where the new ones begin, so a file line goes only as a changed line
/// whose new version is certainly its own; a line dropped, or changed into one merely like
/// it, refuses the merge.
fn open_ended(ctx: &Context<'_>, edit: &Edit, gap: &[Op]) -> Result<()> {
    let (file, lines) = (ctx.file, ctx.lines());
    // Looking for the closest file line reads the whole file: only for the first few changed
    // lines of a gap.
    let mut searches = WEIGHTS.closest_searches;
    let unlicensed = gap.iter().find_map(|op| match *op {
        Op::Drop(j) if !file.is_blank(j) => Some((j, None)),
        Op::Change { i, j } => {
            let search = if searches > 0 {
                Search::Closest
            } else {
                Search::Skipped
            };
            searches = searches.saturating_sub(1);
            match changed_for_certain(ctx, edit, i, j, search) {
                Ok(()) => None,
                Err(why) => Some((j, Some((i, why)))),
            }
        }
        _ => None,
    });
    let Some((j, changed)) = unlicensed else {
        return Ok(());
    };
    let how = match changed {
        Some((i, why)) => format!(
            "would be replaced by snippet line {} `{}`, {why}",
            lines[i].at,
            lines::quoted(&lines[i].text)
        ),
        None => "would be deleted".to_string(),
    };
    Err(Error::new(
        ErrorCode::NeedsMoreContext,
        format!(
            "file line {} `{}` {how}, between the snippet's anchor and new lines that run to a \
             placeholder: is it replaced, or do the new lines go beside it? Show the file's \
             unchanged line on the new lines' side of it, send `-` lines for what goes, or put \
             the placeholder where the file's lines are kept",
            j + 1,
            lines::quoted(file.lines[j]),
        ),
    ))
}

/// Whether snippet line `i` is file line `j`'s new version for certain: at the old line's
/// depth (after the segment's shift), and nearly the same line, or opening (closing) the same
/// brackets so that keeping the old line beside it would leave them unbalanced, or sharing a
/// word no other file line has, or clearly closer to it than to any other file line (looked
/// for with `Search::Closest`). Else why not, as a refusal says it.
/// Whether a changed line's closest old version is looked for (it reads the whole file).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Search {
    Closest,
    Skipped,
}

/// Whether an ungrounded run's lines occur elsewhere in the file too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Repeated {
    Elsewhere,
    Nowhere,
}

fn changed_for_certain(
    ctx: &Context<'_>,
    edit: &Edit,
    i: usize,
    j: usize,
    search: Search,
) -> std::result::Result<(), &'static str> {
    let (new, old) = (&ctx.lines()[i].text, ctx.file.lines[j]);
    let depth = i64::from(ctx.lines()[i].indent) + edit.shift;
    if depth != i64::from(ctx.file.indent(j)) {
        return Err("which stands at another depth");
    }
    let net = |l: &str| units::depth_change(l).0;
    let certain = lines::similarity(new, old) >= WEIGHTS.nearly_the_same
        || (net(old) != 0 && net(old) == net(new))
        || has_its_own_word(ctx, new, old)
        || (search == Search::Closest
            && closest_old_version(ctx, new).is_some_and(|(o, _)| o == j));
    if certain {
        Ok(())
    } else {
        Err("which is only like it")
    }
}

/// Whether `new` has a word of three characters or more that, in the file, stands on line
/// `old` alone: the same statement, changed.
fn has_its_own_word(ctx: &Context<'_>, new: &str, old: &str) -> bool {
    let fresh: HashSet<&str> = units::identifiers(new).collect();
    units::identifiers(old)
        .filter(|w| w.chars().count() >= 3 && fresh.contains(w))
        .any(|w| ctx.word_lines(w) == 1)
}

/// Beside bare comment markers, a changed line must share a word with its old version: a
/// line that says something else (a heading turned into a new paragraph's first line) is
/// as likely new text inserted beside it.
fn beside_markers(ctx: &Context<'_>, gap: &[Op]) -> Result<()> {
    let (file, lines) = (ctx.file, ctx.lines());
    let words = |l: &str| -> HashSet<String> {
        units::identifiers(l)
            .filter(|w| w.chars().count() >= 3)
            .map(str::to_lowercase)
            .collect()
    };
    for op in gap {
        let Op::Change { i, j } = *op else { continue };
        let old = words(file.lines[j]);
        if words(&lines[i].text).is_disjoint(&old) {
            return Err(Error::new(
                ErrorCode::NeedsMoreContext,
                format!(
                    "file line {} `{}` would be replaced by snippet line {} `{}`, which shares \
                     no word with it, next to lines that are bare comment marks: is it replaced, \
                     or does the new line go beside it? Show an unchanged line with words in it \
                     next to the edit, or send `-` lines for what goes",
                    j + 1,
                    lines::quoted(file.lines[j]),
                    lines[i].at,
                    lines::quoted(&lines[i].text),
                ),
            ));
        }
    }
    Ok(())
}

/// What the run of matched lines on one side of a deletion says.
enum Anchor {
    /// No run: the gap reaches the segment's edge; directly (the line next to the edge is
    /// replaced or deleted), or over new lines.
    Edge(bool),
    /// Blank lines and closers only: they license nothing, and veto nothing.
    Trivial,
    /// Bare comment markers (`//!`, `///`, ` *`, `#`), blank lines among them: any such
    /// line of the file would do, so a line changed beside them must be the same line.
    Quiet,
    /// The run reaches the segment's edge, or continues the file beyond new lines.
    Grounded,
    /// Among new lines, but once in the file as a block.
    Unique(Run),
    /// Among new lines, and elsewhere in the file too.
    Ambiguous(Run),
}

fn judge(
    file: &FileIndex<'_>,
    lines: &[SLine],
    ops: &[Op],
    gap: std::ops::Range<usize>,
    side: Side,
) -> Anchor {
    let Some(run) = run_beside(ops, side) else {
        return Anchor::Edge(deletes_at_edge(lines, &ops[gap], side));
    };
    let mut marks = run.files.iter().filter(|&&j| !file.is_blank(j)).peekable();
    if marks.peek().is_some() && marks.all(|&j| lines::bare_marker(file.lines[j])) {
        Anchor::Quiet
    } else if run.files.iter().all(|&j| file.is_trivial(j)) {
        Anchor::Trivial
    } else if grounded(lines, ops, &run, side) {
        Anchor::Grounded
    } else if places_itself(file, &run.files) {
        Anchor::Unique(run)
    } else {
        Anchor::Ambiguous(run)
    }
}

/// Whether `gap`, which reaches the segment's edge on `side`, deletes (or replaces) the
/// file line next to the edge: no new line but blank ones between.
fn deletes_at_edge(lines: &[SLine], gap: &[Op], side: Side) -> bool {
    let new = |op: &&Op| matches!(op, Op::Add(i) if !lines[*i].blank);
    let deletes = |op: &Op| matches!(op, Op::Drop(_) | Op::Change { .. });
    let first = match side {
        Side::Before(_) => gap.iter().find(|op| new(op) || deletes(op)),
        Side::After(_) => gap.iter().rev().find(|op| new(op) || deletes(op)),
    };
    first.is_some_and(deletes)
}

/// Operations a deletion gap is made of: deletions and the new lines among them.
fn in_gap(op: &Op) -> bool {
    matches!(op, Op::Drop(_) | Op::Change { .. } | Op::Add(_))
}

#[derive(Clone, Copy)]
enum Side {
    /// The run ends right before op `k`.
    Before(usize),
    /// The run starts at op `k`.
    After(usize),
}

impl Side {
    fn is_before(self) -> bool {
        matches!(self, Side::Before(_))
    }
}

/// A run of matched lines: ops `ops` (a range), the snippet and file lines it pairs.
struct Run {
    ops: std::ops::Range<usize>,
    snips: Vec<usize>,
    files: Vec<usize>,
}

/// The run of matched lines (each the file line after the one before) next to a gap.
fn run_beside(ops: &[Op], side: Side) -> Option<Run> {
    let same = |k: usize| match ops.get(k) {
        Some(&Op::Same { i, j }) => Some((i, j)),
        _ => None,
    };
    let (start, end) = match side {
        Side::Before(a) => {
            let last = a.checked_sub(1)?;
            let (_, mut j) = same(last)?;
            let mut start = last;
            while let Some(k) = start.checked_sub(1)
                && let Some((_, jk)) = same(k)
                && jk + 1 == j
            {
                start = k;
                j = jk;
            }
            (start, last + 1)
        }
        Side::After(b) => {
            let (_, mut j) = same(b)?;
            let mut end = b + 1;
            while let Some((_, jk)) = same(end)
                && jk == j + 1
            {
                end += 1;
                j = jk;
            }
            (b, end)
        }
    };
    let (snips, files) = ops[start..end]
        .iter()
        .filter_map(|op| match *op {
            Op::Same { i, j } => Some((i, j)),
            _ => None,
        })
        .unzip();
    Some(Run {
        ops: start..end,
        snips,
        files,
    })
}

/// The file line an operation stands at, if any.
fn file_line(op: &Op) -> Option<usize> {
    match *op {
        Op::Same { j, .. } | Op::Change { j, .. } | Op::Drop(j) | Op::Keep(j) => Some(j),
        Op::Add(_) | Op::Sep => None,
    }
}

/// Whether the run's far side (away from the gap; the gap is after it when `side` is
/// `Before`) reaches the segment's edge, or continues the file over new lines only.
fn grounded(lines: &[SLine], ops: &[Op], run: &Run, side: Side) -> bool {
    let before = side.is_before();
    let beyond: Box<dyn Iterator<Item = &Op>> = if before {
        Box::new(ops[..run.ops.start].iter().rev())
    } else {
        Box::new(ops[run.ops.end..].iter())
    };
    let (first, last) = (run.files[0], run.files[run.files.len() - 1]);
    let mut passed_new = false;
    for op in beyond {
        match op {
            // A blank line separates; it is not new code.
            Op::Add(i) if lines[*i].blank => {}
            Op::Add(_) | Op::Sep => passed_new = true,
            Op::Keep(_) if !passed_new => return true,
            _ => {
                let Some(j) = file_line(op) else { continue };
                // Right next to the run: the file continues (or another deletion starts,
                // judged on its own).
                if !passed_new {
                    return true;
                }
                return if before {
                    j + 1 == first
                } else {
                    j == last + 1
                };
            }
        }
    }
    // The segment's edge: grounded unless only new lines lie between.
    !passed_new
}

/// Whether the run's lines occur in the file as a block once only, with a line that is not
/// trivial among them.
fn places_itself(file: &FileIndex<'_>, files: &[usize]) -> bool {
    let Some(&rarest) = files
        .iter()
        .filter(|&&j| !file.is_trivial(j))
        .min_by_key(|&&j| file.count(file.key(j)))
    else {
        return false;
    };
    let key = file.key(rarest);
    if file.count(key) > WEIGHTS.max_seed_occurrences {
        return false;
    }
    let offset = rarest - files[0];
    let keys: Vec<u64> = files.iter().map(|&j| file.key(j)).collect();
    let places = file
        .positions(key)
        .iter()
        .filter(|&&p| {
            let p = p as usize;
            p >= offset
                && p - offset + keys.len() <= file.len()
                && keys
                    .iter()
                    .enumerate()
                    .all(|(d, &k)| file.key(p - offset + d) == k)
        })
        .count();
    places == 1
}

fn ungrounded(
    file: &FileIndex<'_>,
    lines: &[SLine],
    gap: &[Op],
    run: &Run,
    repeated: Repeated,
) -> Error {
    let gone: Vec<usize> = gap
        .iter()
        .filter_map(|op| match *op {
            Op::Drop(j) | Op::Change { j, .. } => Some(j),
            _ => None,
        })
        .collect();
    let (lo, hi) = (
        gone.iter().min().copied().unwrap_or(0),
        gone.iter().max().copied().unwrap_or(0),
    );
    let (s0, s1) = (run.snips[0], run.snips[run.snips.len() - 1]);
    let (f0, f1) = (run.files[0], run.files[run.files.len() - 1]);
    let why = if repeated == Repeated::Elsewhere {
        "which sit among new lines and occur elsewhere in the file too"
    } else {
        "which sit among new lines with no unchanged line across the gap to confirm them"
    };
    Error::new(
        ErrorCode::NeedsMoreContext,
        format!(
            "file {} `{}` would be replaced or deleted, licensed only by snippet {} matching \
             file {}, {why}: are they the file's lines there, or part of the new code? Show \
             the unchanged lines on both sides of the edit, send `-` lines for what goes, or \
             put a placeholder where the file's lines are kept",
            span_words(lo, hi),
            file.lines[lo].trim(),
            span_words(lines[s0].at - 1, lines[s1].at - 1),
            span_words(f0, f1),
        ),
    )
}

fn span_words(lo: usize, hi: usize) -> String {
    if lo == hi {
        format!("line {}", lo + 1)
    } else {
        format!("lines {}-{}", lo + 1, hi + 1)
    }
}
