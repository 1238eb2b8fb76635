//! Stage 4, license: a placed segment's lines against the file lines around its pins, as
//! operations. Placeholders claim maximally: a file line the snippet does not show is kept
//! unless the snippet licenses its deletion.
//!
//! - Between two sure pins (adjacent in the segment, no placeholder between), the snippet
//!   shows the file completely: lines it does not show are deleted (`Drop`). Diff-style
//!   snippets delete only their `-` lines.
//! - Between pins that are not both sure, and at the segment's edges (before its first pin,
//!   after its last), nothing unshown is deleted — but a line the snippet moved (rule
//!   `moved-lines`, here and in `lazy/mod.rs` at its open edges): edge lines match the file
//!   lines right next to the pin, one after another, or are new; a changed line may replace
//!   the old line at its place when the two are clearly versions of each other.
//! - At an edge, weak context lines that open a paragraph in the file (a doc comment's first
//!   line, an attribute) and are followed only by new code belong to the new code; weak lines
//!   that close a paragraph before new code at the head likewise. A blank line between an
//!   anchor and the placeholder is a separator, not new code.

pub(crate) mod depth;
mod readings;
pub(crate) mod render;
pub(crate) mod slide;

use std::collections::HashSet;
use std::ops::Range;

use similar::{Algorithm, DiffOp, capture_diff_slices};

use super::costs::WEIGHTS;
use super::index::FileIndex;
use super::lines;
use super::place::Pin;
use super::placeholder;
use super::prepare::{Kind, SLine};
use super::retyped;
use super::rules::{Rule, RuleSet};
use super::runs::same;
use crate::edit::text::Indent;
use crate::error::{Error, ErrorCode, Result};

/// How freely a snippet line may replace a file line as its new version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Strictness {
    /// Only clearly similar lines, and no header given another name.
    Strict,
    /// Also less similar non-trivial lines, at a token score (accepted between matches only).
    Loose,
}

/// Whether the pin next to an edge is a changed line (it replaces its file line).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PinLine {
    Unchanged,
    Changed,
}

/// Which edge of a segment: before its first pin (outward is up the file) or after its last
/// (outward is down the file).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    Head,
    Tail,
}

/// What becomes of file lines the snippet does not show between two pins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unshown {
    Kept,
    Deleted,
}

/// How a tie between matching a line here and making it new is settled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tie {
    /// The line is new (an earlier copy of it matches instead).
    Early,
    /// The match is kept (read back from the end, the line matches as late as it can).
    Late,
}

/// One step of a segment's edit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    /// Snippet line `i` is file line `j` (kept, with the file's bytes).
    Same { i: usize, j: usize },
    /// Snippet line `i` replaces file line `j`.
    Change { i: usize, j: usize },
    /// Snippet line `i` is new.
    Add(usize),
    /// File line `j` is deleted.
    Drop(usize),
    /// File line `j` is kept although the snippet does not show it.
    Keep(usize),
    /// A blank line the merge adds to separate inserted code from its neighbours.
    Sep,
}

/// A segment's edit: operations covering file lines `span`.
#[derive(Debug, Clone)]
pub(crate) struct Edit {
    pub(crate) span: Range<usize>,
    pub(crate) ops: Vec<Op>,
    /// Columns the segment's lines sit deeper in the file than in the snippet.
    pub(crate) shift: i64,
    /// The indentation the file uses where the segment goes, when its lines tell.
    pub(crate) style: Option<Indent>,
}

/// What aligning a segment needs.
pub(crate) struct Aligner<'a> {
    pub(crate) lines: &'a [SLine],
    pub(crate) file: &'a FileIndex<'a>,
    pub(crate) diff_style: bool,
    pub(crate) shift: i64,
    /// Keys of the segment's non-trivial lines that the file also holds: a file line with one
    /// of these keys that an edge passes over was moved by the snippet, and may go.
    pub(crate) moved: &'a HashSet<u64>,
    /// Snippet lines of new definitions: new code, never a file line or its new version.
    pub(crate) fresh: Vec<Range<usize>>,
    /// Whether the segment was cut from its neighbour before (after) it, with no
    /// placeholder between (see [`super::segments::Segment::cut_before`]).
    pub(crate) cut: (bool, bool),
    /// Whether the segment starts the snippet with no placeholder before it.
    pub(crate) open_start: bool,
    /// The rules the merge runs with.
    pub(crate) rules: RuleSet,
}

const NEG: f32 = -1.0e30;

impl Aligner<'_> {
    fn is_fresh(&self, i: usize) -> bool {
        self.fresh.iter().any(|r| r.contains(&i))
    }

    /// Whether snippet line `i` shows file line `j` without its trailing comment, the comment
    /// not moved onto the snippet's next lines ([`lines::shown_without_comment`]).
    fn comment_kept(&self, i: usize, j: usize) -> bool {
        lines::shown_without_comment(self.lines, i, self.file.lines[j])
    }

    fn match_score(&self, i: usize, j: usize) -> Option<f32> {
        let s = &self.lines[i];
        if self.is_fresh(i) {
            return None;
        }
        if !same(s, self.file, j, self.shift) {
            let f = self.file.lines[j];
            let rule = self.rules.on(Rule::RetypedContext);
            let rendering = if rule {
                retyped::Rendering::Full
            } else {
                retyped::Rendering::CodeMarks
            };
            let retyped = || {
                retyped::markup_dropped(&s.text, f, rendering)
                    && !retyped::in_comment_fence(self.file.lines, j)
                    || rule && retyped::lifetime_elided(&s.text, f)
                    || rule
                        && retyped::quotes_retyped(&s.text, f)
                        && retyped::quotes_alike(self.file.named_language())
            };
            let shortened = s.is_old() && !s.trivial && (self.comment_kept(i, j) || retyped());
            return shortened.then_some(WEIGHTS.match_line);
        }
        let base = if s.blank {
            WEIGHTS.match_blank
        } else if s.trivial {
            WEIGHTS.match_trivial
        } else {
            WEIGHTS.match_line
        };
        // Of equal readings, the one pairing byte-identical lines (blank lines' whitespace).
        let exact = if s.text == self.file.lines[j] {
            WEIGHTS.exact_bonus
        } else {
            0.0
        };
        Some(base + exact)
    }

    /// The score of snippet line `i` replacing file line `j` as its new version. `Loose`
    /// also admits less similar non-trivial lines, at a token score: the caller accepts them
    /// only between matches.
    fn change_score(&self, i: usize, j: usize, strictness: Strictness) -> Option<f32> {
        let loose = strictness == Strictness::Loose;
        let s = &self.lines[i];
        if s.kind != Kind::Plain || s.blank || self.file.is_blank(j) || self.is_fresh(i) {
            return None;
        }
        // A line the file holds elsewhere is a copy of that line, not a new version of this
        // one — unless both set the same key (`required: false` → `required: true`).
        if s.count > 0 && !lines::same_setting(&s.text, self.file.lines[j]) {
            return None;
        }
        let sim = lines::similarity(&s.text, self.file.lines[j]);
        // A header with another name is a new definition unless what follows confirms a
        // rename (the loose pass, checked by the caller).
        let renamed = || {
            matches!(
                (super::units::header_name(&s.text), super::units::header_name(self.file.lines[j])),
                (Some(a), Some(b)) if a != b
            )
        };
        if sim >= WEIGHTS.edge_change_similarity && (loose || !renamed()) {
            Some(WEIGHTS.change_base + WEIGHTS.change_similarity_share * sim)
        } else if loose
            && sim >= WEIGHTS.loose_change_similarity
            && !s.trivial
            && !self.file.is_trivial(j)
        {
            Some(WEIGHTS.loose_change)
        } else {
            None
        }
    }

    /// Whether every loosely changed line in an edge — and every header given another name —
    /// is followed by matches that confirm its place: a match right after it (one line for
    /// one between matches), or, after more new lines, two matches or a non-trivial one. (A
    /// new definition shaped like the one beside it is not its rename.)
    fn loose_changes_confirmed(&self, ops: &[Op], pin: PinLine) -> bool {
        let pin_changed = pin == PinLine::Changed;
        ops.iter().enumerate().all(|(k, op)| {
            let Op::Change { i, j } = *op else {
                return true;
            };
            let (new, old) = (&self.lines[i].text, self.file.lines[j]);
            let renamed = matches!(
                (super::units::header_name(new), super::units::header_name(old)),
                (Some(a), Some(b)) if a != b
            );
            if !renamed && lines::similarity(new, old) >= WEIGHTS.edge_change_similarity {
                return true;
            }
            // Blank lines confirm nothing.
            let rest: Vec<&Op> = ops[k + 1..]
                .iter()
                .filter(|op| !matches!(op, Op::Same { i, .. } | Op::Add(i) if self.lines[*i].blank))
                .collect();
            // The next file line the edge takes is context, or a clearly changed line.
            let clear_change = |op: &Op| {
                matches!(*op, Op::Change { i, j }
                    if lines::similarity(&self.lines[i].text, self.file.lines[j]) >= WEIGHTS.edge_change_similarity)
            };
            // Only a blank line beyond it, the one next to the placeholder, and a changed
            // line before it: the snippet rewrites the lines between the file's blank line
            // it shows and the changed one.
            if rest.is_empty()
                && matches!(ops[k + 1..], [Op::Same { i, .. }] if self.lines[i].blank)
                && (if k == 0 { pin_changed } else { matches!(ops[k - 1], Op::Change { .. }) })
            {
                return true;
            }
            let next_consumed = rest.iter().find(|op| !matches!(op, Op::Add(_)));
            if !next_consumed.is_some_and(|op| matches!(op, Op::Same { .. }) || clear_change(op)) {
                return false;
            }
            // Right between matches (one line for one), or followed by enough of them.
            let sames: Vec<usize> = rest
                .iter()
                .filter_map(|op| match op {
                    Op::Same { i, .. } => Some(*i),
                    _ => None,
                })
                .collect();
            // A closer shallower than the changed line closes the block both versions are in.
            let closes_block = |j: usize| {
                lines::is_closer(&self.lines[j].text) && self.lines[j].indent < self.lines[i].indent
            };
            matches!(rest.first(), Some(Op::Same { .. }))
                || sames.len() >= 2
                || sames.iter().any(|&j| !self.lines[j].trivial || closes_block(j))
        })
    }

    fn pin_op(&self, p: &Pin) -> Op {
        if self.lines[p.i].kind == Kind::Removed {
            Op::Drop(p.j)
        } else if p.replace {
            Op::Change { i: p.i, j: p.j }
        } else {
            Op::Same { i: p.i, j: p.j }
        }
    }

    /// The edit of segment lines `seg` pinned by `pins` (ascending, non-empty); its edges
    /// may reach file lines `bounds` only (the neighbouring segments own the rest).
    pub(crate) fn align(
        &self,
        seg: Range<usize>,
        pins: &[Pin],
        bounds: Range<usize>,
    ) -> Result<Edit> {
        let first = pins[0];
        let last = pins[pins.len() - 1];
        let (mut ops, head_start) = self.head(
            seg.start..first.i,
            bounds.start.min(first.j)..first.j,
            pin_line(&first),
        )?;
        for w in pins.windows(2) {
            ops.push(self.pin_op(&w[0]));
            let unshown = if w[0].sure && w[1].sure && !self.diff_style {
                Unshown::Deleted
            } else {
                Unshown::Kept
            };
            ops.extend(self.interior(w[0].i + 1..w[1].i, w[0].j + 1..w[1].j, unshown)?);
        }
        ops.push(self.pin_op(&last));
        let (tail, tail_end) = self.tail(
            last.i + 1..seg.end,
            last.j + 1..bounds.end.max(last.j + 1),
            pin_line(&last),
        )?;
        ops.extend(tail);
        self.check_reconnect(&ops, tail_end..bounds.end.max(tail_end), End::Tail)?;
        self.check_reconnect(&ops, bounds.start.min(head_start)..head_start, End::Head)?;
        self.check_header(&ops, head_start)?;
        let style = local_style(self.file, &ops);
        Ok(Edit {
            span: head_start..tail_end,
            ops,
            shift: self.shift,
            style,
        })
    }

    /// The segment's outermost line next to a placeholder (its last at the tail, first at
    /// the head), new by the alignment although the file has that very line further on in
    /// `room`: the snippet reconnects to the file there, deleting the lines between, or
    /// copies the line. Two readings: `NEEDS_MORE_CONTEXT`.
    fn check_reconnect(&self, ops: &[Op], room: Range<usize>, end: End) -> Result<()> {
        let tail = end == End::Tail;
        let solid = |op: &&Op| !matches!(op, Op::Add(i) if self.lines[*i].blank);
        let outer = if tail {
            ops.iter().rev().find(solid)
        } else {
            ops.iter().find(solid)
        };
        let Some(&Op::Add(i)) = outer else {
            return Ok(());
        };
        let l = &self.lines[i];
        if l.trivial || !l.is_old() || l.count == 0 || self.is_fresh(i) {
            return Ok(());
        }
        let found = self
            .file
            .positions(l.key)
            .iter()
            .map(|&p| p as usize)
            .filter(|p| room.contains(p))
            .min_by_key(|&p| if tail { p - room.start } else { room.end - p });
        let Some(p) = found else {
            return Ok(());
        };
        Err(Error::new(
            ErrorCode::NeedsMoreContext,
            format!(
                "snippet line {} `{}` is new where it stands, but the file has it at line {}: \
                 are the file lines between deleted, or is the line a copy? Show the lines \
                 between, or a placeholder for them",
                l.at,
                l.text.trim(),
                p + 1
            ),
        ))
    }

    /// A snippet that opens, with no placeholder, on a new comment block above lines it
    /// anchors near the file's top, where the file's own lines above are only its header
    /// comment: the new block replaces that header, or goes below it. Two readings.
    fn check_header(&self, ops: &[Op], head_start: usize) -> Result<()> {
        if !self.open_start || head_start == 0 {
            return Ok(());
        }
        let added: Vec<usize> = ops
            .iter()
            .take_while(|op| matches!(op, Op::Add(_)))
            .filter_map(|op| match op {
                Op::Add(i) if !self.lines[*i].blank => Some(*i),
                _ => None,
            })
            .collect();
        let comment = |t: &str| placeholder::comment_body(t).1;
        let header = (0..head_start).all(|j| self.file.is_blank(j) || comment(self.file.lines[j]));
        let Some(header_end) = (0..head_start).rev().find(|&j| !self.file.is_blank(j)) else {
            return Ok(());
        };
        if added.is_empty() || !header || !added.iter().all(|&i| comment(&self.lines[i].text)) {
            return Ok(());
        }
        Err(Error::new(
            ErrorCode::NeedsMoreContext,
            format!(
                "the snippet opens with a new comment block (lines {}-{}) above file line {}, \
                 and the file's header comment (lines 1-{}) is not shown: does the new block \
                 replace it or go below it? Show the old header, or start the snippet with a \
                 placeholder to keep it",
                self.lines[added[0]].at,
                self.lines[added[added.len() - 1]].at,
                head_start + 1,
                header_end + 1
            ),
        ))
    }

    /// Lines after the last pin: matched against the file lines `room` from its start, in
    /// a row.
    fn tail(
        &self,
        snip: Range<usize>,
        room: Range<usize>,
        pin: PinLine,
    ) -> Result<(Vec<Op>, usize)> {
        let from = room.start;
        let avail: Vec<usize> = room
            .take(WEIGHTS.edge_room_per_line * snip.len() + WEIGHTS.edge_room_slack)
            .collect();
        let ops = self.edge(&snip.clone().collect::<Vec<_>>(), &avail, End::Tail, pin)?;
        let end = ops
            .iter()
            .filter_map(|op| match op {
                Op::Same { j, .. } | Op::Change { j, .. } | Op::Drop(j) | Op::Keep(j) => {
                    Some(*j + 1)
                }
                Op::Add(_) | Op::Sep => None,
            })
            .max()
            .unwrap_or(from);
        Ok((ops, end))
    }

    /// Lines before the first pin: matched against the file lines `room` from its end, in a
    /// row (the tail's alignment, mirrored).
    fn head(
        &self,
        snip: Range<usize>,
        room: Range<usize>,
        pin: PinLine,
    ) -> Result<(Vec<Op>, usize)> {
        let to = room.end;
        let rev: Vec<usize> = snip.clone().rev().collect();
        let avail: Vec<usize> = room
            .rev()
            .take(WEIGHTS.edge_room_per_line * snip.len() + WEIGHTS.edge_room_slack)
            .collect();
        let mut ops = self.edge(&rev, &avail, End::Head, pin)?;
        ops.reverse();
        let start = ops
            .iter()
            .filter_map(|op| match op {
                Op::Same { j, .. } | Op::Change { j, .. } | Op::Drop(j) | Op::Keep(j) => Some(*j),
                Op::Add(_) | Op::Sep => None,
            })
            .min()
            .unwrap_or(to);
        Ok((ops, start))
    }

    /// An edge, in outward order (away from the pin): `snip` against `avail` taken in a row,
    /// then settled. Outward is down the file at a tail, up at a head.
    fn edge(&self, snip: &[usize], avail: &[usize], end: End, pin: PinLine) -> Result<Vec<Op>> {
        let forward = end == End::Tail;
        // Of two equally good readings, closing lines go with the unit above (the earlier
        // copy in the file matches), blank lines with the context next to the pin, other
        // lines with the unit below.
        let ties: Vec<Tie> = snip
            .iter()
            .map(|&i| {
                let l = &self.lines[i];
                let closer = lines::is_closer(&l.text);
                let late = if forward { !closer && !l.blank } else { closer };
                if late { Tie::Late } else { Tie::Early }
            })
            .collect();
        let mut ops = self.edge_align(snip, avail, &ties, Strictness::Loose)?;
        if !self.loose_changes_confirmed(&ops, pin) {
            ops = self.edge_align(snip, avail, &ties, Strictness::Strict)?;
        }
        settle(&mut ops, avail, self, end);
        self.check_outer(&ops, avail, end)?;
        self.check_outer_blank(snip, &ops, avail)?;
        if self.rules.on(Rule::EdgeLookalike)
            && let Some(mut near) = self.nearer_reading(snip, &ops, avail)
        {
            settle(&mut near, avail, self, end);
            self.check_outer(&near, avail, end)?;
            self.check_outer_blank(snip, &near, avail)?;
            ops = near;
        }
        Ok(ops)
    }

    /// A blank line next to the placeholder after a changed line reads as a separator —
    /// unless the file has a blank line just beyond a few unshown lines of code: then the
    /// snippet may mean those lines replaced too (the blank its context) or kept.
    fn check_outer_blank(&self, snip: &[usize], ops: &[Op], avail: &[usize]) -> Result<()> {
        let Some(&outer) = snip.last() else {
            return Ok(());
        };
        let last = ops
            .iter()
            .rev()
            .find(|op| !matches!(op, Op::Add(i) if self.lines[*i].blank));
        // (Only after a changed line: more old lines before the file's blank line may be
        // replaced too.)
        let context_ends = matches!(last, Some(Op::Change { .. }));
        // The snippet's blank lines next to the placeholder, none of them matched.
        let blanks: Vec<usize> = snip
            .iter()
            .rev()
            .copied()
            .take_while(|&i| self.lines[i].blank)
            .collect();
        let outer_unmatched = !ops
            .iter()
            .any(|op| matches!(op, Op::Same { i, .. } if blanks.contains(i)));
        if !self.lines[outer].blank || !context_ends || !outer_unmatched {
            return Ok(());
        }
        let consumed = ops
            .iter()
            .filter(|op| matches!(op, Op::Same { .. } | Op::Change { .. } | Op::Drop(_)))
            .count();
        let beyond = &avail[consumed.min(avail.len())..];
        let Some(k) = beyond
            .iter()
            .take(WEIGHTS.outer_blank_lookahead)
            .position(|&j| self.file.is_blank(j))
        else {
            return Ok(());
        };
        if k == 0 || beyond[..k].iter().any(|&j| self.file.is_trivial(j)) {
            return Ok(());
        }
        let (a, b) = (beyond[0].min(beyond[k - 1]), beyond[0].max(beyond[k - 1]));
        Err(Error::new(
            ErrorCode::NeedsMoreContext,
            format!(
                "snippet line {} is blank where the file has lines {}-{} before its next blank \
                 line: are they deleted or kept? Show them, or put a placeholder where they are \
                 kept",
                self.lines[outer].at,
                a + 1,
                b + 1
            ),
        ))
    }

    /// The line next to the placeholder is the snippet's context, as a rule: when it is new
    /// by the alignment but stands in the file a little further out, the lines in between
    /// are either deleted or kept, and the snippet does not say which.
    fn check_outer(&self, ops: &[Op], avail: &[usize], end: End) -> Result<()> {
        let forward = end == End::Tail;
        let Some(&Op::Add(i)) = ops
            .iter()
            .rev()
            .find(|op| !matches!(op, Op::Add(i) if self.lines[*i].blank))
        else {
            return Ok(());
        };
        let l = &self.lines[i];
        // A line of a new definition is new code, whatever file line it repeats.
        if l.count == 0 || l.blank || self.is_fresh(i) {
            return Ok(());
        }
        let consumed = ops
            .iter()
            .filter(|op| matches!(op, Op::Same { .. } | Op::Change { .. } | Op::Drop(_)))
            .count();
        let Some(k) = avail[consumed.min(avail.len())..]
            .iter()
            .position(|&j| self.file.key(j) == l.key)
        else {
            return Ok(());
        };
        let j = avail[consumed + k];
        // A trivial line says little, but one that starts the next unit there (`/**` after a
        // blank line) is that unit's first line.
        let starts_unit = if forward {
            self.file.starts_paragraph(j)
        } else {
            self.file.ends_paragraph(j)
        };
        if l.trivial && (!starts_unit || lines::is_closer(&l.text)) {
            return Ok(());
        }
        let between = &avail[consumed..consumed + k];
        let (a, b) = (
            between.iter().min().copied().unwrap_or(j),
            between.iter().max().copied().unwrap_or(j),
        );
        Err(Error::new(
            ErrorCode::NeedsMoreContext,
            format!(
                "snippet line {} `{}` is file line {}, but the snippet does not show file lines \
                 {}-{} between it and the lines placed next to it: are they deleted or kept? \
                 Show them, or put a placeholder where they are kept",
                l.at,
                l.text.trim(),
                j + 1,
                a + 1,
                b + 1
            ),
        ))
    }

    /// Align snippet lines `snip` against file lines `avail` taken in a row from the first:
    /// each snippet line matches the next file line, replaces it, or is new; the file lines
    /// consumed are a prefix of `avail`. Ties follow `ties`, per snippet line.
    fn edge_align(
        &self,
        snip: &[usize],
        avail: &[usize],
        ties: &[Tie],
        strictness: Strictness,
    ) -> Result<Vec<Op>> {
        let n = snip.len();
        if n == 0 {
            return Ok(Vec::new());
        }
        if n > WEIGHTS.edge_align_max {
            return self.edge_greedy(snip, avail);
        }
        let m = avail.len().min(n + WEIGHTS.moved_skips);
        let w = m + 1;
        let mut score = vec![NEG; (n + 1) * w];
        let mut from = vec![0u8; (n + 1) * w];
        score[0] = 0.0;
        let moved = |k: usize| {
            let j = avail[k];
            !self.file.is_trivial(j) && self.moved.contains(&self.file.key(j))
        };
        // A blank line that set a moved line apart goes with it.
        let movable =
            |k: usize| moved(k) || (self.file.is_blank(avail[k]) && k + 1 < m && moved(k + 1));
        for a in 0..=n {
            // A file line the snippet moved elsewhere may be passed over (and goes).
            for k in 0..m {
                let here = score[a * w + k];
                if here > NEG / 2.0 && movable(k) && here > score[a * w + k + 1] {
                    score[a * w + k + 1] = here;
                    from[a * w + k + 1] = SKIP;
                }
            }
            if a == n {
                break;
            }
            let i = snip[a];
            let removed = self.lines[i].kind == Kind::Removed;
            let pref = ties[a];
            for k in 0..=m {
                let here = score[a * w + k];
                if here <= NEG / 2.0 {
                    continue;
                }
                if !removed {
                    relax_pref(&mut score, &mut from, (a + 1) * w + k, here, ADD, pref);
                }
                if k < m {
                    let j = avail[k];
                    let at = (a + 1) * w + k + 1;
                    if let Some(s) = self.match_score(i, j) {
                        relax_pref(&mut score, &mut from, at, here + s, SAME, pref);
                    } else if !removed && let Some(s) = self.change_score(i, j, strictness) {
                        relax_pref(&mut score, &mut from, at, here + s, CHANGE_OP, pref);
                    }
                }
            }
        }
        let (best_k, best) = (0..=m)
            .map(|k| (k, score[n * w + k]))
            .fold((0, NEG), |acc, (k, s)| if s > acc.1 { (k, s) } else { acc });
        if best <= NEG / 2.0 {
            let i = snip
                .iter()
                .copied()
                .find(|&i| self.lines[i].kind == Kind::Removed);
            return Err(removed_not_found(self.lines, i.unwrap_or(snip[0])));
        }
        Ok(self.edge_trace(snip, avail, &from, w, best_k))
    }

    /// The operations of an edge alignment, traced back from its best end (`best_k` file
    /// lines taken) through the `from` table of width `w`.
    fn edge_trace(
        &self,
        snip: &[usize],
        avail: &[usize],
        from: &[u8],
        w: usize,
        best_k: usize,
    ) -> Vec<Op> {
        let n = snip.len();
        let mut ops = Vec::with_capacity(n);
        let (mut a, mut k) = (n, best_k);
        while a > 0 || k > 0 {
            if from[a * w + k] == SKIP {
                k -= 1;
                ops.push(Op::Drop(avail[k]));
                continue;
            }
            if a == 0 {
                break;
            }
            let i = snip[a - 1];
            match from[a * w + k] {
                SAME => {
                    k -= 1;
                    let j = avail[k];
                    ops.push(if self.lines[i].kind == Kind::Removed {
                        Op::Drop(j)
                    } else {
                        Op::Same { i, j }
                    });
                }
                CHANGE_OP => {
                    k -= 1;
                    ops.push(Op::Change { i, j: avail[k] });
                }
                _ => ops.push(Op::Add(i)),
            }
            a -= 1;
        }
        ops.reverse();
        ops
    }

    /// A long edge: lines match the next file line while they can; the rest is new.
    fn edge_greedy(&self, snip: &[usize], avail: &[usize]) -> Result<Vec<Op>> {
        let mut ops = Vec::with_capacity(snip.len());
        let mut k = 0;
        for &i in snip {
            if k < avail.len() && self.match_score(i, avail[k]).is_some() {
                ops.push(Op::Same { i, j: avail[k] });
                k += 1;
            } else if self.lines[i].kind == Kind::Removed {
                return Err(removed_not_found(self.lines, i));
            } else {
                ops.push(Op::Add(i));
            }
        }
        Ok(ops)
    }

    /// Snippet lines `snip` between two pins, against the file lines `file` between them.
    /// File lines the snippet does not show are dropped or kept, as `unshown` says.
    fn interior(
        &self,
        snip: Range<usize>,
        file: Range<usize>,
        unshown: Unshown,
    ) -> Result<Vec<Op>> {
        let delete = unshown == Unshown::Deleted;
        if snip.is_empty() && file.is_empty() {
            return Ok(Vec::new());
        }
        let skip = |j: usize| if delete { Op::Drop(j) } else { Op::Keep(j) };
        if snip.is_empty() {
            return Ok(file.map(skip).collect());
        }
        if file.is_empty() {
            return snip
                .map(|i| {
                    if self.lines[i].kind == Kind::Removed {
                        Err(removed_not_found(self.lines, i))
                    } else {
                        Ok(Op::Add(i))
                    }
                })
                .collect();
        }
        if snip.len() * file.len() <= WEIGHTS.interior_dp_max_cells {
            self.interior_dp(snip, file, unshown)
        } else {
            self.interior_myers(snip, file, unshown)
        }
    }

    /// The interior by weighted alignment: matches earn their weight, changed lines a little
    /// (only without deletions, where they decide what is replaced), new and skipped lines
    /// nothing.
    fn interior_dp(
        &self,
        snip: Range<usize>,
        file: Range<usize>,
        unshown: Unshown,
    ) -> Result<Vec<Op>> {
        let delete = unshown == Unshown::Deleted;
        let (n, m) = (snip.len(), file.len());
        let w = m + 1;
        let mut score = vec![NEG; (n + 1) * w];
        let mut from = vec![0u8; (n + 1) * w];
        score[0] = 0.0;
        for a in 0..=n {
            for b in 0..=m {
                let here = score[a * w + b];
                if here <= NEG / 2.0 {
                    continue;
                }
                if b < m {
                    relax(&mut score, &mut from, a * w + b + 1, here, SKIP);
                }
                if a == n {
                    continue;
                }
                let i = snip.start + a;
                let removed = self.lines[i].kind == Kind::Removed;
                if !removed {
                    relax(&mut score, &mut from, (a + 1) * w + b, here, ADD);
                }
                if b < m {
                    let j = file.start + b;
                    if let Some(s) = self.match_score(i, j) {
                        relax(&mut score, &mut from, (a + 1) * w + b + 1, here + s, SAME);
                    } else if !delete
                        && !removed
                        && let Some(s) = self.change_score(i, j, Strictness::Strict)
                    {
                        relax(
                            &mut score,
                            &mut from,
                            (a + 1) * w + b + 1,
                            here + s,
                            CHANGE_OP,
                        );
                    }
                }
            }
        }
        if score[n * w + m] <= NEG / 2.0 {
            let i = snip.clone().find(|&i| self.lines[i].kind == Kind::Removed);
            return Err(removed_not_found(self.lines, i.unwrap_or(snip.start)));
        }
        let mut ops = Vec::with_capacity(n + m);
        let (mut a, mut b) = (n, m);
        while a > 0 || b > 0 {
            match from[a * w + b] {
                SKIP => {
                    b -= 1;
                    ops.push(if delete {
                        Op::Drop(file.start + b)
                    } else {
                        Op::Keep(file.start + b)
                    });
                }
                ADD => {
                    a -= 1;
                    ops.push(Op::Add(snip.start + a));
                }
                step => {
                    a -= 1;
                    b -= 1;
                    let (i, j) = (snip.start + a, file.start + b);
                    ops.push(match (step, self.lines[i].kind) {
                        (_, Kind::Removed) => Op::Drop(j),
                        (CHANGE_OP, _) => Op::Change { i, j },
                        _ => Op::Same { i, j },
                    });
                }
            }
        }
        ops.reverse();
        Ok(ops)
    }

    /// A large interior by Myers' diff on line keys (linear memory).
    fn interior_myers(
        &self,
        snip: Range<usize>,
        file: Range<usize>,
        unshown: Unshown,
    ) -> Result<Vec<Op>> {
        let delete = unshown == Unshown::Deleted;
        let key_s: Vec<(u64, i64)> = snip
            .clone()
            .map(|i| {
                let l = &self.lines[i];
                (
                    l.key,
                    if l.trivial && !l.blank {
                        i64::from(l.indent) + self.shift
                    } else {
                        0
                    },
                )
            })
            .collect();
        let key_f: Vec<(u64, i64)> = file
            .clone()
            .map(|j| {
                let t = self.file.is_trivial(j) && !self.file.is_blank(j);
                (
                    self.file.key(j),
                    if t { i64::from(self.file.indent(j)) } else { 0 },
                )
            })
            .collect();
        let mut ops = Vec::with_capacity(key_s.len() + key_f.len());
        for d in capture_diff_slices(Algorithm::Myers, &key_f, &key_s) {
            match d {
                DiffOp::Equal {
                    old_index,
                    new_index,
                    len,
                } => {
                    for k in 0..len {
                        let (i, j) = (snip.start + new_index + k, file.start + old_index + k);
                        ops.push(if self.lines[i].kind == Kind::Removed {
                            Op::Drop(j)
                        } else {
                            Op::Same { i, j }
                        });
                    }
                }
                DiffOp::Delete {
                    old_index, old_len, ..
                } => {
                    let js = file.start + old_index..file.start + old_index + old_len;
                    ops.extend(js.map(|j| if delete { Op::Drop(j) } else { Op::Keep(j) }));
                }
                DiffOp::Insert {
                    new_index, new_len, ..
                } => {
                    for i in snip.start + new_index..snip.start + new_index + new_len {
                        if self.lines[i].kind == Kind::Removed {
                            return Err(removed_not_found(self.lines, i));
                        }
                        ops.push(Op::Add(i));
                    }
                }
                DiffOp::Replace {
                    old_index,
                    old_len,
                    new_index,
                    new_len,
                } => {
                    let js = file.start + old_index..file.start + old_index + old_len;
                    ops.extend(js.map(|j| if delete { Op::Drop(j) } else { Op::Keep(j) }));
                    for i in snip.start + new_index..snip.start + new_index + new_len {
                        if self.lines[i].kind == Kind::Removed {
                            return Err(removed_not_found(self.lines, i));
                        }
                        ops.push(Op::Add(i));
                    }
                }
            }
        }
        Ok(ops)
    }
}

/// The indentation style of the indented file lines an edit keeps or replaces: tabs or
/// spaces when they agree, else `None` (the file's own style decides). A block comment's
/// ` *` lines say nothing of it.
fn local_style(file: &FileIndex<'_>, ops: &[Op]) -> Option<Indent> {
    let (mut tabs, mut spaces) = (0usize, 0usize);
    for op in ops {
        if let Op::Same { j, .. } | Op::Change { j, .. } | Op::Drop(j) | Op::Keep(j) = *op {
            if file.lines[j].trim_start().starts_with('*') {
                continue;
            }
            match file.lines[j].as_bytes().first() {
                Some(b'\t') => tabs += 1,
                Some(b' ') => spaces += 1,
                _ => {}
            }
        }
    }
    match (tabs, spaces) {
        (t, 0) if t > 0 => Some(Indent::Tabs),
        (0, s) if s > 0 => Some(Indent::Spaces(4)),
        _ => None,
    }
}

/// Whether `pin`'s snippet line replaces its file line.
fn pin_line(pin: &Pin) -> PinLine {
    if pin.replace {
        PinLine::Changed
    } else {
        PinLine::Unchanged
    }
}

const ADD: u8 = 1;
const SAME: u8 = 2;
const CHANGE_OP: u8 = 3;
const SKIP: u8 = 4;

/// [`relax`] where a tie between matching this line here and making it new is settled by
/// `tie` (see [`Tie`]).
fn relax_pref(score: &mut [f32], from: &mut [u8], at: usize, value: f32, step: u8, tie: Tie) {
    if value > score[at] || (value == score[at] && (step == ADD) != (tie == Tie::Late)) {
        score[at] = value;
        from[at] = step;
    }
}

fn relax(score: &mut [f32], from: &mut [u8], at: usize, value: f32, step: u8) {
    // On a tie a match wins: read back from the end, the outer lines match and the new lines
    // come first (a new block goes before the context it shares closing lines with).
    if value > score[at] || (value == score[at] && step != ADD) {
        score[at] = value;
        from[at] = step;
    }
}

fn removed_not_found(lines: &[SLine], i: usize) -> Error {
    Error::new(
        ErrorCode::NeedsMoreContext,
        format!(
            "the removed line `{}` is not in the file next to the lines shown with it; copy the \
             `-` lines exactly from the current file",
            lines[i].text.trim()
        ),
    )
}

/// Whether a matched snippet line says little about its place (blank, trivial or repeated).
fn weak(lines: &[SLine], i: usize) -> bool {
    let l = &lines[i];
    l.blank || l.trivial || l.count > 1
}

/// An edge's last touches, in outward order (a tail; a head mirrored):
/// 1. weak context that opens a paragraph in the file (closes one, for a head) and is followed
///    only by new code is the new code's own first line; the edge's outer lines may then
///    match the file lines it freed;
/// 2. when new code ends the edge, it goes into the junction between two units: the file's
///    blank lines there stay beyond it (the placeholder keeps them), the snippet's blank
///    lines between its context and the new code are the new code's own, and its blank
///    lines after the new code are separators;
/// 3. when context ends the edge, blank lines after it are separators.
fn settle(ops: &mut Vec<Op>, avail: &[usize], al: &Aligner<'_>, end: End) {
    let forward = end == End::Tail;
    let (lines, file) = (al.lines, al.file);
    let is_new_code = |op: &Op| matches!(op, Op::Add(i) if !lines[*i].blank);
    let opens = |j: usize| {
        if forward {
            file.starts_paragraph(j)
        } else {
            file.ends_paragraph(j)
        }
    };
    if let Some(first_new) = ops.iter().position(is_new_code)
        && !ops[first_new..]
            .iter()
            .any(|op| matches!(op, Op::Same { .. } | Op::Change { .. }))
    {
        let mut start = first_new;
        while start > 0 && matches!(ops[start - 1], Op::Same { i, .. } if weak(lines, i)) {
            start -= 1;
        }
        let opener = (start..first_new)
            .rev()
            .find(|&k| matches!(ops[k], Op::Same { i, j } if !lines[i].blank && opens(j)));
        if let Some(k) = opener {
            for op in &mut ops[k..first_new] {
                if let Op::Same { i, .. } = *op {
                    *op = Op::Add(i);
                }
            }
            rematch_outer(ops, avail, al);
        }
    }
    // 2. and 3. Blank lines around the new code at the far end of the edge.
    let solid = |op: &Op| match op {
        Op::Same { i, .. } | Op::Change { i, .. } => !lines[*i].blank,
        _ => false,
    };
    let from = ops.iter().rposition(solid).map_or(0, |q| q + 1);
    if ops[from..].iter().any(is_new_code) {
        // The edge ends with new code: it goes in the junction between units, whose blank
        // lines the placeholder keeps (beyond the new code); the blank lines the snippet
        // shows between its context and the new code are the new code's own.
        for op in &mut ops[from..] {
            if let Op::Same { i, .. } = *op {
                *op = Op::Add(i);
            }
        }
        // Its blank lines beyond it separate it from the file's next code, when the file
        // has no blank line there.
        let consumed = ops
            .iter()
            .filter(|op| matches!(op, Op::Same { .. } | Op::Change { .. } | Op::Drop(_)))
            .count();
        let next_is_code = avail.get(consumed).is_some_and(|&j| !file.is_blank(j));
        if !(if forward { al.cut.1 } else { al.cut.0 }) && !next_is_code {
            let code_end = ops.iter().rposition(is_new_code).map_or(0, |k| k + 1);
            ops.truncate(code_end);
        }
    } else if !(if forward { al.cut.1 } else { al.cut.0 }) {
        // Context at the far end: blank lines after it are separators (unless no
        // placeholder follows, the segment cut from the next at its blank line).
        let trailing = ops[from..]
            .iter()
            .rev()
            .take_while(|op| matches!(op, Op::Add(i) if lines[*i].blank))
            .count();
        ops.truncate(ops.len() - trailing);
    }
}

/// After context was handed to new code, the edge's outermost new lines may be the file
/// lines it freed: the longest run of them equal to the first unconsumed file lines.
fn rematch_outer(ops: &mut [Op], avail: &[usize], al: &Aligner<'_>) {
    let consumed = ops
        .iter()
        .filter(|op| matches!(op, Op::Same { .. } | Op::Change { .. } | Op::Drop(_)))
        .count();
    let adds = ops
        .iter()
        .rev()
        .take_while(|op| matches!(op, Op::Add(_)))
        .count();
    for r in (1..=adds).rev() {
        let tail = &ops[ops.len() - r..];
        let fits = tail.iter().enumerate().all(|(k, op)| {
            let Op::Add(i) = *op else { return false };
            avail
                .get(consumed + k)
                .is_some_and(|&j| al.match_score(i, j).is_some())
        });
        if fits {
            let at = ops.len() - r;
            for (k, op) in ops[at..].iter_mut().enumerate() {
                if let Op::Add(i) = *op {
                    *op = Op::Same {
                        i,
                        j: avail[consumed + k],
                    };
                }
            }
            return;
        }
    }
}
