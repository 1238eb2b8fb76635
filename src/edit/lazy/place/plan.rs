//! Placing every segment of a snippet: each on its own first ([`place`]), then the open ones
//! settled by what else is known — a unit the segment shows whole whose name the file defines
//! once, the instruction ("after X", "in X", "at the end"), or, when the snippet's placed
//! segments are in file order, the one candidate between its neighbours. What stays open is
//! refused with every candidate named. Unique runs that disagree in order split their
//! segment at a narration or blank line between them, else the segment is refused as a move.

use crate::edit::lazy::costs::{PLACES_LISTED, PLACES_NAMED, QUOTED_START_CHARS, REPEATS_NAMED};
use crate::edit::lazy::hints::{Instruction, Place};
use crate::edit::lazy::place::{self, Candidate, Context, Floor, Open, Pin, Placed};
use crate::edit::lazy::rules::Rule;
use crate::edit::lazy::runs::Run;
use crate::edit::lazy::segments::Segment;
use crate::error::{Error, ErrorCode, Result};
use std::collections::HashSet;

/// Where a segment goes.
#[derive(Debug, Clone)]
pub(crate) enum Where {
    Pins(Vec<Pin>),
    /// New code inserted before file line `at`; `gap_above`/`gap_below` say whether to
    /// separate it from its neighbours with blank lines.
    Insert {
        at: usize,
        gap_above: bool,
        gap_below: bool,
        /// The indentation (columns) the code's first line gets, when the place says.
        depth: Option<u32>,
    },
}

/// A segment and its place.
#[derive(Debug, Clone)]
pub(crate) struct Planned {
    pub(crate) seg: Segment,
    pub(crate) at: Where,
}

/// Place every segment.
pub(crate) fn plan(ctx: &Context<'_>, instruction: &Instruction) -> Result<Vec<Planned>> {
    let mut segs: Vec<Segment> = ctx.snippet.segments.clone();
    let mut placed: Vec<Placed> = Vec::with_capacity(segs.len());
    let mut k = 0;
    while k < segs.len() {
        // A segment that closes the block the one before it opened starts at that block's
        // closing line.
        let floor = closer_pin(ctx, &segs[..k], &placed, &segs[k])
            .filter(|_| ctx.rules.on(Rule::CloserFloor));
        match place::place(ctx, &segs[k], floor, None) {
            Placed::Conflict(a, b) => {
                match split(ctx, &segs[k], &a, &b).filter(|_| ctx.rules.on(Rule::SplitConflicts)) {
                    Some((left, right)) => {
                        segs[k] = left;
                        segs.insert(k + 1, right);
                    }
                    None => return Err(conflict(ctx, &a, &b)),
                }
            }
            Placed::Pins(mut pins) => {
                place::unit_pins(ctx, &segs[k], &mut pins, &instruction.renames);
                if ctx.rules.on(Rule::FileEdges) {
                    place::file_edge_pins(ctx, &segs[k], &mut pins);
                }
                placed.push(Placed::Pins(pins));
                k += 1;
            }
            p => {
                placed.push(p);
                k += 1;
            }
        }
    }
    repair_overlaps(ctx, &segs, &mut placed, instruction);
    let mut out: Vec<Option<Where>> = Vec::with_capacity(segs.len());
    for (seg, p) in segs.iter().zip(placed.iter_mut()) {
        out.push(match p {
            Placed::Pins(pins) => Some(Where::Pins(pins.clone())),
            Placed::Open(Open::NoAnchor) => {
                let mut pins = Vec::new();
                place::unit_pins(ctx, seg, &mut pins, &instruction.renames);
                if ctx.rules.on(Rule::FileEdges) {
                    place::file_edge_pins(ctx, seg, &mut pins);
                }
                (!pins.is_empty()).then_some(Where::Pins(pins))
            }
            _ => None,
        });
    }
    settle_open(ctx, &segs, &placed, &mut out, instruction)?;
    Ok(segs
        .into_iter()
        .zip(out)
        .map(|(seg, at)| Planned {
            seg,
            at: at.expect("every open segment was settled or refused"),
        })
        .collect())
}

/// The file lines a placed segment's pins span.
fn pin_span(p: &Placed) -> Option<std::ops::Range<usize>> {
    match p {
        Placed::Pins(pins) if !pins.is_empty() => Some(pins[0].j..pins[pins.len() - 1].j + 1),
        _ => None,
    }
}

/// Two segments whose anchors overlap in the file cannot both be right. When the segments
/// before and after one in the snippet leave it a window between them, it is placed again
/// within that window (the snippet being in file order around it).
fn repair_overlaps(
    ctx: &Context<'_>,
    segs: &[Segment],
    placed: &mut [Placed],
    instruction: &Instruction,
) {
    for k in 0..segs.len() {
        let Some(span) = pin_span(&placed[k]) else {
            continue;
        };
        let overlaps = (0..segs.len()).any(|o| {
            o != k && pin_span(&placed[o]).is_some_and(|s| s.start < span.end && span.start < s.end)
        });
        if !overlaps {
            continue;
        }
        let lo = (0..k)
            .rev()
            .find_map(|o| pin_span(&placed[o]))
            .map_or(0, |s| s.end);
        let hi = (k + 1..segs.len())
            .find_map(|o| pin_span(&placed[o]))
            .map_or(ctx.file.len(), |s| s.start);
        if lo >= hi || (span.start >= lo && span.end <= hi) {
            continue;
        }
        if let Placed::Pins(mut pins) = place::place(ctx, &segs[k], None, Some(lo..hi)) {
            place::unit_pins(ctx, &segs[k], &mut pins, &instruction.renames);
            if pins.first().is_some_and(|p| p.j >= lo) && pins.last().is_some_and(|p| p.j < hi) {
                placed[k] = Placed::Pins(pins);
            }
        }
    }
}

/// The blocks the snippet's lines before a segment leave open, innermost last, each with
/// the file line of its opening (the opening line's pin, or for a lone `{` the pin of the
/// header above it). Placeholders keep the rest of a block's body; they close nothing but
/// the blocks that code after them stands outside of.
fn open_blocks(
    ctx: &Context<'_>,
    segs: &[Segment],
    placed: &[Placed],
) -> Vec<(usize, Option<usize>)> {
    let lines = ctx.lines();
    let mut open: Vec<(usize, Option<usize>)> = Vec::new();
    for (seg, p) in segs.iter().zip(placed) {
        let pins: &[Pin] = match p {
            Placed::Pins(pins) => pins,
            _ => &[],
        };
        let pin_of = |i: usize| pins.iter().find(|p| p.i == i).map(|p| p.j);
        let mut header: Option<usize> = None;
        for i in seg.lines.clone() {
            let (d, _) = crate::edit::lazy::units::depth_change(&lines[i].text);
            // Code as far out as a block's opening line is past the block: a placeholder
            // closed it.
            if !lines[i].blank && !crate::edit::lazy::lines::is_closer(&lines[i].text) {
                while open
                    .last()
                    .is_some_and(|&(o, _)| lines[o].indent >= lines[i].indent)
                {
                    open.pop();
                }
            }
            if d > 0 {
                let lone_brace = lines[i].text.trim() == "{";
                let j = pin_of(i).or(if lone_brace { header } else { None });
                open.push((i, j));
            } else if d < 0 {
                // A closer deeper than a block's opening line closes a block the snippet did
                // not show open (its opening is under a placeholder), not that one.
                for _ in 0..(-d) {
                    if open
                        .last()
                        .is_some_and(|&(o, _)| lines[o].indent >= lines[i].indent)
                    {
                        open.pop();
                    } else {
                        break;
                    }
                }
            }
            if !lines[i].blank {
                header = pin_of(i);
            }
        }
        // A placeholder written as far out as a block's opening line may hold its end.
        if let Some(g) = seg.gap_after {
            while open.last().is_some_and(|&(o, _)| lines[o].indent >= g) {
                open.pop();
            }
        }
    }
    open
}

/// A segment that closes a block it did not open: when an earlier segment opened that
/// block (at the closer's depth) on a placed line and a placeholder kept the rest of its
/// body, the closer is the file block's closing line, and the segment's lines before it lie
/// inside that block.
fn closer_pin(
    ctx: &Context<'_>,
    before: &[Segment],
    placed: &[Placed],
    seg: &Segment,
) -> Option<Floor> {
    let lines = ctx.lines();
    if before.is_empty() {
        return None;
    }
    // The first line that closes more than the segment opened so far.
    let mut depth = 0i64;
    let c = seg.lines.clone().find(|&i| {
        depth += crate::edit::lazy::units::depth_change(&lines[i].text).0;
        depth < 0
    })?;
    if !crate::edit::lazy::lines::is_closer(&lines[c].text) {
        return None;
    }
    let open = open_blocks(ctx, before, placed);
    let (_, jo) = *open
        .iter()
        .rev()
        .find(|(o, _)| lines[*o].indent == lines[c].indent)?;
    let jo = jo?;
    let (_, end) = crate::edit::lazy::outline::block_extent(ctx.file.lines, jo);
    let close = end.checked_sub(1).filter(|&j| j > jo)?;
    // The file's closing line of that block, the same as the snippet's.
    let fits = lines[c].key == ctx.file.key(close) && ctx.file.indent(close) == ctx.file.indent(jo);
    // (Whether the closer licenses a deletion, [`place::place`] decides.)
    fits.then_some(Floor {
        pin: Pin {
            i: c,
            j: close,
            replace: false,
            sure: false,
        },
        opened: jo,
    })
}

/// Split a segment whose unique runs `a` and `b` disagree in order at a narration line
/// between them, else at a blank line between them.
fn split(ctx: &Context<'_>, seg: &Segment, a: &Run, b: &Run) -> Option<(Segment, Segment)> {
    let lines = ctx.lines();
    let (x, y) = if a.i < b.i { (a, b) } else { (b, a) };
    if x.i_end() > y.i {
        return None;
    }
    let between = x.i_end()..y.i;
    let at = between
        .clone()
        .find(|&k| lines[k].narration != crate::edit::lazy::placeholder::Narration::No)
        .or_else(|| between.clone().rev().find(|&k| lines[k].blank))?;
    // A narration line goes; a blank line stays with the part above it.
    let keep = usize::from(lines[at].blank);
    let left = Segment {
        lines: seg.lines.start..at + keep,
        gap_before: seg.gap_before,
        gap_after: Some(lines[at].indent),
        cut_before: seg.cut_before,
        cut_after: keep == 1,
        placeholder_after: false,
    };
    let right = Segment {
        lines: at + 1..seg.lines.end,
        gap_before: Some(lines[at].indent),
        gap_after: seg.gap_after,
        cut_before: keep == 1,
        cut_after: seg.cut_after,
        placeholder_after: seg.placeholder_after,
    };
    Some((left, right))
}

fn conflict(ctx: &Context<'_>, a: &Run, b: &Run) -> Error {
    let lines = ctx.lines();
    let show = |r: &Run| {
        format!(
            "snippet line {} `{}` stands at file line {}",
            lines[r.i].at,
            lines[r.i].text.trim(),
            r.j + 1
        )
    };
    // The definition the earlier file lines are in: where moved code would come from.
    let from = if a.j < b.j { a } else { b };
    let source = enclosing_definition(ctx, from.j).map_or(String::new(), |(name, s, e)| {
        format!(
            "; file line {} is in `{name}` (lines {}-{}): if the code moved out of it, add \
             `remove {name}` (or show `{name}` with a placeholder to keep it)",
            from.j + 1,
            s + 1,
            e
        )
    });
    Error::new(
        ErrorCode::NeedsMoreContext,
        format!(
            "the snippet's lines are out of the file's order ({}, {}): is the code moved or \
             copied? Put a placeholder between the parts that belong to different places, show \
             the old place too (to move), or `remove NAME`{source}",
            show(a),
            show(b)
        ),
    )
}

/// The outermost named definition holding file line `j`: its name and lines.
fn enclosing_definition<'f>(ctx: &Context<'f>, j: usize) -> Option<(&'f str, usize, usize)> {
    let file = ctx.file;
    (0..=j)
        .rev()
        .filter(|&h| file.indent(h) == 0)
        .find_map(|h| {
            let name = crate::edit::lazy::units::header_name(file.lines[h])?;
            let (s, e) = crate::edit::lazy::units::file_extent(file, h);
            (s <= j && j < e && e > s + 1).then_some((name, s, e))
        })
}

/// Settle the segments left open: ambiguous ones by the instruction or their neighbours,
/// closing lines by the block an earlier segment opened, new code by the instruction; what
/// is still open is refused.
fn settle_open(
    ctx: &Context<'_>,
    segs: &[Segment],
    placed: &[Placed],
    out: &mut [Option<Where>],
    instruction: &Instruction,
) -> Result<()> {
    let spans: Vec<Option<(usize, usize)>> = out.iter().map(span_of).collect();
    let known: Vec<(usize, (usize, usize))> = spans
        .iter()
        .enumerate()
        .filter_map(|(k, s)| s.map(|s| (k, s)))
        .collect();
    let in_order = known.windows(2).all(|w| w[0].1.1 <= w[1].1.0);
    for k in 0..segs.len() {
        let (None, Placed::Open(Open::Ambiguous(cands))) = (&out[k], &placed[k]) else {
            continue;
        };
        let bounds = in_order.then(|| {
            let lo = known
                .iter()
                .rev()
                .find(|(s, _)| *s < k)
                .map_or(0, |(_, sp)| sp.1);
            let hi = known
                .iter()
                .find(|(s, _)| *s > k)
                .map_or(ctx.file.len(), |(_, sp)| sp.0);
            (lo, hi)
        });
        out[k] = choose(cands, instruction, bounds).map(|c| Where::Pins(c.pins.clone()));
    }
    for k in 1..segs.len() {
        if out[k].is_some() {
            continue;
        }
        let resolved: Vec<Placed> = out[..k]
            .iter()
            .map(|w| match w {
                Some(Where::Pins(p)) => Placed::Pins(p.clone()),
                _ => Placed::Open(Open::NoAnchor),
            })
            .collect();
        if let Some(floor) = closer_pin(ctx, &segs[..k], &resolved, &segs[k])
            .filter(|_| ctx.rules.on(Rule::CloserFloor))
        {
            out[k] = Some(Where::Pins(vec![floor.pin]));
        }
    }
    for k in 0..segs.len() {
        if out[k].is_some() {
            continue;
        }
        out[k] = Some(match &placed[k] {
            Placed::Open(Open::Ambiguous(cands)) => return Err(ambiguous(ctx, &segs[k], cands)),
            _ => match insert_by_instruction(ctx, &segs[k], instruction) {
                Some(w) => w,
                None => {
                    let w = insert_at_open_edge(ctx, segs, k)
                        .ok_or_else(|| no_anchor(ctx, &segs[k]))?;
                    if matches!(w, Where::Insert { at, .. } if at == ctx.file.len()) {
                        crate::edit::lazy::depth::check_body_at_file_end(
                            ctx.file,
                            ctx.lines(),
                            segs,
                            k,
                        )?;
                        if ctx.rules.on(Rule::EntryGuard) {
                            super::entry_guard::check_at_file_end(ctx.file)?;
                        }
                    }
                    w
                }
            },
        });
    }
    Ok(())
}

fn span_of(w: &Option<Where>) -> Option<(usize, usize)> {
    match w {
        Some(Where::Pins(p)) if !p.is_empty() => Some((p[0].j, p[p.len() - 1].j + 1)),
        Some(Where::Insert { at, .. }) => Some((*at, *at)),
        _ => None,
    }
}

/// The candidate the instruction or the neighbours single out.
fn choose<'c>(
    cands: &'c [Candidate],
    instruction: &Instruction,
    bounds: Option<(usize, usize)>,
) -> Option<&'c Candidate> {
    let only = |pred: &dyn Fn(&Candidate) -> bool| {
        let mut it = cands.iter().filter(|c| pred(c));
        match (it.next(), it.next()) {
            (Some(c), None) => Some(c),
            _ => None,
        }
    };
    if let Some(Place::Within(ranges)) = &instruction.place
        && let Some(c) = only(&|c: &Candidate| {
            let s = c.span();
            ranges.iter().any(|&(a, b)| s.start >= a && s.end <= b)
        })
    {
        return Some(c);
    }
    let (lo, hi) = bounds?;
    only(&|c: &Candidate| c.span().start >= lo && c.span().end <= hi)
}

/// New code placed where the instruction says.
fn insert_by_instruction(
    ctx: &Context<'_>,
    _seg: &Segment,
    instruction: &Instruction,
) -> Option<Where> {
    let file = ctx.file;
    let next_code = |from: usize| (from..file.len()).find(|&j| !file.is_blank(j));
    let at = |at: usize| {
        let gap_above = at > 0 && file.is_blank(at - 1);
        Where::Insert {
            at,
            gap_above: false,
            gap_below: gap_above,
            depth: None,
        }
    };
    match instruction.place.clone()? {
        Place::After(b) => Some(match next_code(b) {
            Some(j) => at(j),
            None => Where::Insert {
                at: file.len(),
                gap_above: file.len() > 0 && !file.is_blank(file.len() - 1),
                gap_below: false,
                depth: None,
            },
        }),
        Place::Before(a) => Some(at(a)),
        Place::Top => Some(Where::Insert {
            at: 0,
            gap_above: false,
            gap_below: false,
            depth: None,
        }),
        Place::EndOf(a, b) => end_of(ctx, a, b),
        Place::End => Some(Where::Insert {
            at: file.len(),
            gap_above: file.len() > 0 && !file.is_blank(file.len() - 1),
            gap_below: false,
            depth: None,
        }),
        Place::Within(..) => None,
    }
}

/// New code that a placeholder separates from the rest of the file and that reaches the
/// snippet's own end (start) goes at the file's end (start): the placeholder keeps all the
/// file, and nothing follows (precedes) the new code.
fn insert_at_open_edge(ctx: &Context<'_>, segs: &[Segment], k: usize) -> Option<Where> {
    let (file, lines) = (ctx.file, ctx.lines());
    let seg = &segs[k];
    let solid = |i: &usize| !lines[*i].blank;
    let file_solid = |j: &usize| !file.is_blank(*j);
    // The new code's line next to the placeholder may be the file's own edge line.
    let same = |i: usize, j: usize| {
        Where::Pins(vec![Pin {
            i,
            j,
            replace: false,
            sure: true,
        }])
    };
    if ctx.rules.on(Rule::EdgeCopied) && copied_from_within(ctx, seg) {
        return None;
    }
    if k + 1 == segs.len() && seg.gap_after.is_none() && seg.gap_before.is_some() {
        let first = seg.lines.clone().find(solid)?;
        if let Some(j) = (0..file.len()).rev().find(file_solid)
            && lines[first].is_old()
            && lines[first].key == file.key(j)
        {
            return Some(same(first, j));
        }
        let end = file.len();
        return Some(Where::Insert {
            at: end,
            gap_above: end > 0 && !file.is_blank(end - 1),
            gap_below: false,
            depth: None,
        });
    }
    if k == 0 && seg.gap_before.is_none() && seg.gap_after.is_some() {
        let last = seg.lines.clone().rev().find(solid)?;
        if let Some(j) = (0..file.len()).find(file_solid)
            && lines[last].is_old()
            && lines[last].key == file.key(j)
        {
            return Some(same(last, j));
        }
        return Some(Where::Insert {
            at: 0,
            gap_above: false,
            gap_below: file.len() > 0 && !file.is_blank(0),
            depth: None,
        });
    }
    None
}

/// Whether a segment that placed nowhere was copied from within the file rather than
/// written as new code for its edge: every line it shows is one the file has (context that
/// found no place, such as a lone `#endif`), or the snippet opens with a blank line where the
/// file's first line is not blank, so the file goes on before it.
fn copied_from_within(ctx: &Context<'_>, seg: &Segment) -> bool {
    let lines = ctx.lines();
    let mut solid = seg.lines.clone().filter(|&i| !lines[i].blank).peekable();
    (solid.peek().is_some() && solid.all(|i| lines[i].count > 0)) || blank_edge(ctx, seg).is_some()
}

/// Whether the snippet opens, right before `seg`, with a blank line the file's start lacks.
fn blank_edge(ctx: &Context<'_>, seg: &Segment) -> Option<&'static str> {
    let (file, edges) = (ctx.file, ctx.snippet.blank_edges);
    // (Not at the end: a writer's snippet often ends with a blank line before its fence.)
    (seg.gap_before.is_none() && edges.start && !file.is_blank(0))
        .then_some("the snippet opens with a blank line, so the file goes on before it")
}

/// New code at the end of a definition's body: before its closing line, one level deeper
/// than the definition, after a blank line when its members are separated by them.
fn end_of(ctx: &Context<'_>, a: usize, b: usize) -> Option<Where> {
    let file = ctx.file;
    let close = b
        .checked_sub(1)
        .filter(|&c| c > a && crate::edit::lazy::lines::is_closer(file.lines[c]))?;
    let member = (a + 1..close)
        .find(|&j| !file.is_blank(j) && file.lines[j].trim() != "{")
        .map_or(file.indent(a) + 4, |j| file.indent(j));
    Some(Where::Insert {
        at: close,
        gap_above: close > 0 && !file.is_blank(close - 1),
        gap_below: false,
        depth: Some(member),
    })
}

fn first_code_line(ctx: &Context<'_>, seg: &Segment) -> String {
    let lines = ctx.lines();
    seg.lines
        .clone()
        .find(|&i| !lines[i].blank)
        .map(|i| {
            lines[i]
                .text
                .trim()
                .chars()
                .take(QUOTED_START_CHARS)
                .collect()
        })
        .unwrap_or_default()
}

/// How many lines a refusal speaks of (its verbs and pronouns agree).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Number {
    One,
    Several,
}

/// How a refusal names a segment: `snippet line 3 (`x`)` or `snippet lines 3-5 (starting
/// `x`)`, and whether that is one line (its verbs and pronouns are singular then).
fn seg_named(ctx: &Context<'_>, seg: &Segment) -> (String, Number) {
    let lines = ctx.lines();
    let a = lines[seg.lines.start].at;
    let b = lines[seg.lines.end - 1].at;
    let first = first_code_line(ctx, seg);
    if a == b {
        (format!("snippet line {a} (`{first}`)"), Number::One)
    } else {
        (
            format!("snippet lines {a}-{b} (starting `{first}`)"),
            Number::Several,
        )
    }
}

fn no_anchor(ctx: &Context<'_>, seg: &Segment) -> Error {
    let (named, number) = seg_named(ctx, seg);
    let held = held_lines(ctx, seg, number);
    let (what, they) = match (number, held.is_empty()) {
        (Number::One, true) => ("is not a line of the file".to_string(), "it goes"),
        (Number::One, false) => (
            format!("cannot place itself: {}", held.join("; ")),
            "it goes",
        ),
        (Number::Several, true) => ("hold no line from the file".to_string(), "they go"),
        (Number::Several, false) => (
            format!("hold no line that places them: {}", held.join("; ")),
            "they go",
        ),
    };
    let edge = blank_edge(ctx, seg)
        .filter(|_| ctx.rules.on(Rule::EdgeCopied))
        .map(|e| format!(" ({e})"))
        .unwrap_or_default();
    Error::new(
        ErrorCode::NeedsMoreContext,
        format!(
            "{named} {what}, so nothing says where {they}{edge}; add 1-3 unchanged lines that \
             occur only around the intended place, or say where in the instruction (\"after \
             NAME\", \"in NAME\", \"at the end of the file\")"
        ),
    )
}

/// The segment's lines the file has, and why none places them: `` `}` occurs 41 times (lines
/// 12, 30, 55, 61, …) `` or `` `);` (line 6) is too plain to place them alone `` (`it` for a
/// segment of one line).
fn held_lines(ctx: &Context<'_>, seg: &Segment, number: Number) -> Vec<String> {
    let them = match number {
        Number::One => "it",
        Number::Several => "them",
    };
    let lines = ctx.lines();
    let mut seen = HashSet::new();
    seg.lines
        .clone()
        .map(|i| &lines[i])
        .filter(|l| !l.blank && l.count > 0 && seen.insert(l.key))
        .take(REPEATS_NAMED)
        .map(|l| {
            let at = ctx.file.positions(l.key);
            let mut places: Vec<String> = at
                .iter()
                .take(PLACES_NAMED)
                .map(|&j| (j + 1).to_string())
                .collect();
            if at.len() > PLACES_NAMED {
                places.push("…".into());
            }
            let text: String = l.text.trim().chars().take(QUOTED_START_CHARS).collect();
            if at.len() > 1 {
                format!(
                    "`{text}` occurs {} times (lines {})",
                    at.len(),
                    places.join(", ")
                )
            } else {
                format!(
                    "`{text}` (line {}) is too plain to place {them} alone",
                    places.join("")
                )
            }
        })
        .collect()
}

/// One reading of a segment: its file lines, the lines it deletes between two lines written
/// one after the other, and the lines it changes.
fn reading(ctx: &Context<'_>, c: &Candidate) -> String {
    let s = c.span();
    let deleted: usize = c
        .pins
        .windows(2)
        .filter(|w| (w[0].i + 1..w[1].i).all(|i| ctx.lines()[i].blank))
        .map(|w| {
            (w[0].j + 1..w[1].j)
                .filter(|&j| !ctx.file.is_blank(j))
                .count()
        })
        .sum();
    let changed: Vec<String> = c
        .pins
        .iter()
        .filter(|p| p.replace)
        .map(|p| (p.j + 1).to_string())
        .collect();
    let mut what = format!("over file lines {}-{}", s.start + 1, s.end);
    if deleted > 0 {
        what.push_str(&format!(
            ", deleting {deleted} line(s) between lines it writes together"
        ));
    }
    if !changed.is_empty() {
        what.push_str(&format!(", changing line(s) {}", changed.join(", ")));
    }
    what
}

/// Several places fit: each listed with the instruction that names it, where one does (as
/// the instruction reader takes it). Two readings one inside the other are told by what each
/// does there.
fn ambiguous(ctx: &Context<'_>, seg: &Segment, cands: &[Candidate]) -> Error {
    let spans: Vec<_> = cands.iter().map(Candidate::span).collect();
    if let [a, b] = &spans[..]
        && (a.start <= b.start && b.end <= a.end || b.start <= a.start && a.end <= b.end)
    {
        let (named, number) = seg_named(ctx, seg);
        let verb = match number {
            Number::One => "reads",
            Number::Several => "read",
        };
        let readings: Vec<String> = cands.iter().map(|c| reading(ctx, c)).collect();
        return Error::new(
            ErrorCode::NeedsMoreContext,
            format!(
                "{named} {verb} two ways: {}, or {}; show the lines between as they are to be \
                 (or mark the ones that go with `-` lines), or add 1-3 unchanged lines that \
                 occur only around the intended place",
                readings[0], readings[1]
            ),
        );
    }
    let mut named = false;
    let places: Vec<String> = (0..spans.len().min(PLACES_LISTED))
        .map(|k| {
            let s = &spans[k];
            match crate::edit::lazy::hints::name_for(ctx.file, ctx.defs(), &spans, k) {
                Some(name) => {
                    named = true;
                    format!("lines {}-{} (instruction `in {name}`)", s.start + 1, s.end)
                }
                None => format!("lines {}-{}", s.start + 1, s.end),
            }
        })
        .collect();
    let or_name = if named {
        ", or name it in the instruction as listed"
    } else {
        ""
    };
    let (named, number) = seg_named(ctx, seg);
    Error::new(
        ErrorCode::NeedsMoreContext,
        format!(
            "{named} {} {} places equally well: {}; add 1-3 unchanged lines that occur only \
             around the intended place{or_name}",
            match number {
                Number::One => "fits",
                Number::Several => "fit",
            },
            cands.len(),
            places.join(", ")
        ),
    )
}
