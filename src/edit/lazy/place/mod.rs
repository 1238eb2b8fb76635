//! Stage 3, place: where each segment goes, found on its own (file order is not assumed).
//!
//! - Lines of *unique* runs (consecutive lines that occur together only once, holding a
//!   non-trivial line) are sure anchors. The sure anchors that agree in order form the
//!   segment's chain. Sure anchors that disagree mean a move or a copy: the segment is split
//!   at a narration or blank line between them when that settles it, else refused. Sure
//!   anchors may still leave two readings, and the segment open: repeated lines that fit a
//!   second place a few lines apart (`loose-elsewhere`), or a jump over file lines whose one
//!   side also fits beside the other with a line changed (`jump-lookalike`, [`jumps`]).
//! - A segment without sure anchors is placed by its other runs (repeated lines) and by
//!   changed lines whose old version is unmistakable; when two places explain the snippet
//!   equally well, it is left open with both as candidates, for the instruction, the
//!   neighbouring segments or a refusal to decide.
//! - A unit the segment shows whole is pinned to the file's definition of that name: its
//!   header to the definition's header, its last line to the definition's last line.

mod chain;
pub(crate) mod depths;
pub(crate) mod docs;
pub(crate) mod entry_guard;
mod inside_new;
pub(crate) mod jumps;
pub mod outline;
pub(crate) mod plan;
pub(crate) mod runs;
pub(crate) mod units;

use std::cell::OnceCell;
use std::ops::Range;

use self::runs::Run;
use self::units::FileDefs;
use super::costs::{PLACES_LISTED, WEIGHTS};
use super::index::FileIndex;
use super::lines;
use super::prepare::{Kind, SLine};
use super::rules::{Rule, RuleSet};
use super::segments::{Segment, Snippet};

/// A segment line tied to a file line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Pin {
    /// The snippet line.
    pub(crate) i: usize,
    /// The file line.
    pub(crate) j: usize,
    /// The snippet line replaces the file line (a changed line) instead of being it.
    pub(crate) replace: bool,
    /// The place is certain: file lines between two sure pins that the snippet does not show
    /// are deleted.
    pub(crate) sure: bool,
}

/// A possible place of a segment.
#[derive(Debug, Clone)]
pub(crate) struct Candidate {
    pub(crate) pins: Vec<Pin>,
    pub(crate) score: f32,
}

impl Candidate {
    /// The file lines from the first pin to the last.
    pub(crate) fn span(&self) -> Range<usize> {
        let a = self.pins.first().map_or(0, |p| p.j);
        let b = self.pins.last().map_or(0, |p| p.j + 1);
        a..b
    }
}

/// Why a segment has no place of its own.
#[derive(Debug, Clone)]
pub(crate) enum Open {
    /// No line of the segment is in the file (new code).
    NoAnchor,
    /// Several places fit equally well.
    Ambiguous(Vec<Candidate>),
}

/// The outcome of placing one segment.
#[derive(Debug, Clone)]
pub(crate) enum Placed {
    /// Pinned, ascending in both snippet and file lines.
    Pins(Vec<Pin>),
    Open(Open),
    /// Unique runs disagree in order: moved or copied code. (first run, conflicting run).
    Conflict(Run, Run),
}

/// What placement needs besides the segment: the file, the snippet and lazily computed
/// facts about the file.
pub(crate) struct Context<'a> {
    pub(crate) file: &'a FileIndex<'a>,
    pub(crate) snippet: &'a Snippet,
    defs: OnceCell<FileDefs<'a>>,
    sigs: OnceCell<Vec<Signature>>,
    /// `rename A to B` pairs from the instruction.
    renames: OnceCell<Vec<(String, String)>>,
    /// For each segment placed (by its line range), the new definitions it shows.
    fresh: std::cell::RefCell<FreshBySegment>,
    /// The file lines of the definitions `remove NAME` directives delete.
    removed: OnceCell<Vec<Range<usize>>>,
    /// On how many file lines each word stands.
    word_lines: OnceCell<std::collections::HashMap<&'a str, u32>>,
    /// The rules the merge runs with.
    pub(crate) rules: RuleSet,
}

/// New definitions' snippet lines, by the line range of the segment that shows them.
type FreshBySegment = std::collections::HashMap<(usize, usize), Vec<Range<usize>>>;

impl<'a> Context<'a> {
    pub(crate) fn new(file: &'a FileIndex<'a>, snippet: &'a Snippet) -> Context<'a> {
        Context {
            file,
            snippet,
            defs: OnceCell::new(),
            sigs: OnceCell::new(),
            renames: OnceCell::new(),
            fresh: Default::default(),
            removed: OnceCell::new(),
            word_lines: OnceCell::new(),
            rules: RuleSet::ALL_ON,
        }
    }

    /// This context with the rules `rules` switches on.
    pub(crate) fn with_rules(self, rules: RuleSet) -> Context<'a> {
        Context { rules, ..self }
    }

    /// On how many of the file's lines `word` stands (computed once, on first use).
    pub(crate) fn word_lines(&self, word: &str) -> u32 {
        let counts = self.word_lines.get_or_init(|| {
            let mut counts = std::collections::HashMap::new();
            let mut seen = std::collections::HashSet::new();
            for line in self.file.lines.iter() {
                seen.clear();
                for w in units::identifiers(line) {
                    if seen.insert(w) {
                        *counts.entry(w).or_insert(0u32) += 1;
                    }
                }
            }
            counts
        });
        counts.get(word).copied().unwrap_or(0)
    }

    /// The file lines of the definitions the snippet's `remove NAME` directives delete (each
    /// defined once): lines the snippet repeats there are moved code, not anchors.
    pub(crate) fn removed(&self) -> &[Range<usize>] {
        self.removed.get_or_init(|| {
            self.snippet
                .removals
                .iter()
                .filter_map(|name| match *self.defs().headers(name) {
                    [h] => {
                        let (s, e) = units::file_extent(self.file, h);
                        Some(s..e)
                    }
                    _ => None,
                })
                .collect()
        })
    }

    /// The snippet lines of the new definitions the segment `seg` shows (as its last
    /// placement found them): new code that matches or replaces no file line.
    pub(crate) fn fresh_lines(&self, seg: &Segment) -> Vec<Range<usize>> {
        self.fresh
            .borrow()
            .get(&(seg.lines.start, seg.lines.end))
            .cloned()
            .unwrap_or_default()
    }

    /// Record the renames the instruction names (once).
    pub(crate) fn set_renames(&self, renames: Vec<(String, String)>) {
        let _ = self.renames.set(renames);
    }

    /// The renames the instruction names.
    pub(crate) fn renames(&self) -> &[(String, String)] {
        self.renames.get().map_or(&[], Vec::as_slice)
    }

    /// The file's definitions by name.
    pub(crate) fn defs(&self) -> &FileDefs<'a> {
        self.defs.get_or_init(|| FileDefs::new(self.file))
    }

    fn sigs(&self) -> &[Signature] {
        self.sigs
            .get_or_init(|| self.file.lines.iter().map(|l| Signature::of(l)).collect())
    }

    pub(crate) fn lines(&self) -> &[SLine] {
        &self.snippet.lines
    }
}

/// A 256-bit set of a line's character bigrams and its length without whitespace: a cheap
/// bound on how similar two lines can be.
#[derive(Debug, Clone, Copy)]
struct Signature {
    bits: [u64; 4],
    len: u32,
}

impl Signature {
    fn of(line: &str) -> Signature {
        let mut bits = [0u64; 4];
        for b in lines::bigrams(line) {
            let h = b.wrapping_mul(0x9E37_79B1) >> 24;
            bits[(h >> 6) as usize & 3] |= 1u64 << (h & 63);
        }
        let len = line.chars().filter(|c| !c.is_whitespace()).count() as u32;
        Signature { bits, len }
    }

    /// An upper bound on the bigram Dice of two lines, loose enough never to miss.
    fn may_reach(&self, other: &Signature, threshold: f32) -> bool {
        let (a, b) = (self.len as f32, other.len as f32);
        if 2.0 * a.min(b) < threshold * 0.6 * (a + b) {
            return false;
        }
        let both: u32 = (0..4)
            .map(|k| (self.bits[k] & other.bits[k]).count_ones())
            .sum();
        let ones: u32 = (0..4)
            .map(|k| self.bits[k].count_ones() + other.bits[k].count_ones())
            .sum();
        ones == 0 || 2.0 * both as f32 >= threshold * 0.5 * ones as f32
    }
}

/// A segment's line that closes a block an earlier segment opened, pinned to the file
/// block's closing line: the segment's lines before it lie inside the block (after the
/// file line `opened`), its lines after it after the block.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Floor {
    pub(crate) pin: Pin,
    pub(crate) opened: usize,
}

impl Floor {
    /// Whether snippet lines `i..i_end` may stand at file lines `j..j_end`.
    fn admits(&self, i: usize, i_end: usize, j: usize, j_end: usize) -> bool {
        let f = self.pin;
        let through = (i..i_end).contains(&f.i) && j + (f.i - i) == f.j;
        // Lines after the closer may belong elsewhere (the segment then splits).
        i > f.i || (j > self.opened && (through || (i_end <= f.i && j_end <= f.j)))
    }
}

/// Place one segment; `floor`, when known, pins a line closing a block an earlier segment
/// opened; `window`, when given, the file lines its anchors must lie in.
pub(crate) fn place(
    ctx: &Context<'_>,
    seg: &Segment,
    floor: Option<Floor>,
    window: Option<Range<usize>>,
) -> Placed {
    let Some(f) = floor else {
        return place_free(ctx, seg, None, window);
    };
    // A line before the closer that the file has once, after that block's end, says the
    // placeholder held more than the rest of the block: the closer is a later one.
    let lines = ctx.lines();
    let single = |i: usize| lines[i].count == 1 && !lines[i].trivial;
    let past = (seg.lines.start..f.pin.i).any(|i| {
        single(i) && lines[i].is_old() && ctx.file.positions(lines[i].key)[0] as usize > f.pin.j
    });
    if past {
        return place_free(ctx, seg, None, window);
    }
    match place_free(ctx, seg, floor, window) {
        Placed::Pins(mut pins) => {
            // Lines before the closer stand inside its block.
            pins.retain(|p| p.i > f.pin.i || (p.i < f.pin.i && p.j > f.opened && p.j < f.pin.j));
            let at = pins.partition_point(|p| p.i < f.pin.i);
            pins.insert(at, f.pin);
            license_floor(ctx.file, ctx.lines(), seg, &mut pins, at);
            match pins[at + 1..].iter().find(|p| p.j <= f.pin.j) {
                // Lines after the closer that stand before it: another place.
                Some(p) => Placed::Conflict(Run::at(f.pin.i, f.pin.j), Run::at(p.i, p.j)),
                None => Placed::Pins(pins),
            }
        }
        Placed::Open(_) => Placed::Pins(vec![f.pin]),
        conflict @ Placed::Conflict(..) => conflict,
    }
}

/// The closer pin at `at` places its segment for certain, but a lone closer licenses no
/// deletion (rule 2) — unless the next line the snippet shows after it, past blank lines
/// only, is a sure pin: the block's end and that line are then neighbours for certain, and
/// what the file has between them goes. Not when the file has the same closer, at the same
/// depth and after the same lines the segment shows before it, between them: the snippet's
/// closer may be that one, and then nothing goes.
fn license_floor(
    file: &FileIndex<'_>,
    lines: &[SLine],
    seg: &Segment,
    pins: &mut [Pin],
    at: usize,
) {
    let f = pins[at];
    let next_shown = (f.i + 1..lines.len()).find(|&i| !lines[i].blank);
    let Some(n) = pins
        .get(at + 1)
        .filter(|n| n.sure && Some(n.i) == next_shown)
    else {
        pins[at].sure = false;
        return;
    };
    let (key, depth) = (file.key(f.j), file.indent(f.j));
    let tail: Vec<u64> = (seg.lines.start..f.i)
        .rev()
        .filter(|&i| !lines[i].blank)
        .take(WEIGHTS.tail_compared)
        .map(|i| lines[i].key)
        .collect();
    let after_tail = |j: usize| {
        let mut above = (0..j).rev().filter(|&k| !file.is_blank(k));
        tail.iter()
            .all(|&t| above.next().is_some_and(|k| file.key(k) == t))
    };
    let another =
        (f.j + 1..n.j).any(|j| file.key(j) == key && file.indent(j) == depth && after_tail(j));
    pins[at].sure = !another;
}

/// [`place`] without the floor pin itself.
fn place_free(
    ctx: &Context<'_>,
    seg: &Segment,
    floor: Option<Floor>,
    window: Option<Range<usize>>,
) -> Placed {
    let lines = ctx.lines();
    let mut all = runs::find(lines, seg.lines.clone(), ctx.file);
    let removed = ctx.removed();
    if !removed.is_empty() {
        all.retain(|r| !removed.iter().any(|d| d.start < r.j_end() && r.j < d.end));
    }
    if let Some(f) = floor {
        // Lines inside the block sit at the closer's offset.
        let offset =
            |i: usize, j: usize| i64::from(ctx.file.indent(j)) - i64::from(lines[i].indent);
        let at_offset = |r: &Run| r.i > f.pin.i || offset(r.i, r.j) == offset(f.pin.i, f.pin.j);
        // A run across the closer at another place than the closer's keeps its part after
        // the closer (those lines may belong elsewhere).
        let after = f.pin.i + 1;
        all = all
            .iter()
            .filter_map(|r| {
                if f.admits(r.i, r.i_end(), r.j, r.j_end()) {
                    Some(*r).filter(at_offset)
                } else if r.i < after && r.i_end() > after {
                    runs::shrink(lines, r, after..r.i_end(), ctx.file)
                } else {
                    None
                }
            })
            .collect();
    }
    if let Some(w) = &window {
        all.retain(|r| r.j >= w.start && r.j_end() <= w.end);
    }
    // New definitions are new code, whatever lines they repeat — unless nothing else in
    // the segment places it and the definition reads as a rename of the one it repeats.
    let mut fresh = if ctx.rules.on(Rule::NewDefinitions) {
        new_units(ctx, seg, &all, Renames::Named)
    } else {
        Vec::new()
    };
    let cut = |fresh: &[Range<usize>]| -> Vec<Run> {
        all.iter()
            .flat_map(|r| outside(r, fresh).into_iter().map(move |part| (r, part)))
            .filter_map(|(r, part)| runs::shrink(lines, r, part, ctx.file))
            .collect()
    };
    let mut kept = cut(&fresh);
    if !fresh.is_empty() && !kept.iter().any(|r| r.unique) && ctx.rules.on(Rule::RenameLookalike) {
        fresh = new_units(ctx, seg, &all, Renames::AlsoLookalike);
        kept = cut(&fresh);
    }
    ctx.fresh
        .borrow_mut()
        .insert((seg.lines.start, seg.lines.end), fresh.clone());
    let all = kept;
    let unique: Vec<Run> = all.iter().filter(|r| r.unique).copied().collect();
    if !unique.is_empty() {
        let chain = anchor_chain(ctx, seg, &unique);
        if let Some(out) = left_out(lines, &unique, &chain) {
            let anchor = unique[chain[0].run];
            return Placed::Conflict(anchor, *out);
        }
        let mut pins: Vec<Pin> = chain
            .iter()
            .flat_map(|l| run_pins(&unique[l.run], l.trim, Certainty::Sure))
            .collect();
        if ctx.rules.on(Rule::DocComments) {
            docs::drop_stray_doc_pins(lines, ctx.file, &mut pins);
        }
        if !pins.is_empty() {
            return sure(ctx, seg, &fresh, pins);
        }
    }
    weak(ctx, seg, all, floor, &fresh, window)
}

/// A unique run of two lines that say something, left out of `chain`, whose file lines the
/// chain does not also match (one that does repeats them: the snippet shows that code twice,
/// once as context and once as a new copy) — the first such, if any. The chain's runs follow
/// each other in the file (their starts and their ends grow), so the one a run could share
/// file lines with is found by halving, not by asking each.
fn left_out<'r>(lines: &[SLine], unique: &'r [Run], chain: &[runs::Link]) -> Option<&'r Run> {
    let in_chain = membership(unique.len(), chain);
    let taken = |r: &Run| {
        let at = chain.partition_point(|l| unique[l.run].j_end() <= r.j);
        chain.get(at).is_some_and(|l| unique[l.run].j < r.j_end())
    };
    unique
        .iter()
        .enumerate()
        .filter(|&(k, _)| !in_chain[k])
        .map(|(_, r)| r)
        .find(|r| nontrivial_lines(lines, r) >= 2 && !taken(r))
}

/// Which of `count` runs `chain` holds.
fn membership(count: usize, chain: &[runs::Link]) -> Vec<bool> {
    let mut member = vec![false; count];
    for l in chain {
        member[l.run] = true;
    }
    member
}

/// How a chain weighs a lone line among new lines (see [`anchor_chain`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LoneLines {
    Full,
    Discounted,
}

/// The unique runs that place a segment: the heaviest chain of runs that agree in order.
/// One line that says something, among new lines, may be new code repeating a line of the
/// file: when such a lone line is in the chain and an anchor of the segment (a run at its
/// edge, or one of several lines) is left out, the lone lines give way.
fn anchor_chain(ctx: &Context<'_>, seg: &Segment, unique: &[Run]) -> Vec<runs::Link> {
    let lines = ctx.lines();
    let lone_at: std::collections::HashSet<(usize, usize)> = unique
        .iter()
        .filter(|r| nontrivial_lines(lines, r) < 2 && !at_edge(ctx.file, lines, seg, r))
        .map(|r| (r.i, r.j))
        .collect();
    let lone = |r: &Run| lone_at.contains(&(r.i, r.j));
    let weigh = |lone_lines: LoneLines| {
        move |r: &Run, trim: usize| -> f32 {
            let w: f32 = lines[r.i + trim..r.i_end()]
                .iter()
                .map(runs::line_weight)
                .sum();
            if lone_lines == LoneLines::Discounted && lone(r) {
                w * WEIGHTS.lone_line_weight
            } else {
                w
            }
        }
    };
    let (chain, _) = runs::chain(unique, weigh(LoneLines::Full), |_, _| true);
    let in_chain = membership(unique.len(), &chain);
    let lone_in = chain.iter().any(|l| lone(&unique[l.run]));
    let anchor_out = (0..unique.len()).any(|k| !in_chain[k] && !lone(&unique[k]));
    if lone_in && anchor_out {
        runs::chain(unique, weigh(LoneLines::Discounted), |_, _| true).0
    } else {
        chain
    }
}

/// Whether run `r` reaches its segment's start or end: the lines between are blank, or the
/// file's own lines right beside the run's place there.
fn at_edge(file: &FileIndex<'_>, lines: &[SLine], seg: &Segment, r: &Run) -> bool {
    let before = (seg.lines.start..r.i).rev();
    let after = r.i_end()..seg.lines.end;
    continues(file, lines, before, r.j.checked_sub(1), Direction::Up)
        || continues(file, lines, after, Some(r.j_end()), Direction::Down)
}

/// Which way along the file a walk goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Direction {
    Up,
    Down,
}

/// Whether snippet lines `snips` (walking away from a run) are blank or the file's lines
/// from `j` on in the same `direction`, blank lines on either side skipped.
fn continues(
    file: &FileIndex<'_>,
    lines: &[SLine],
    snips: impl Iterator<Item = usize>,
    mut j: Option<usize>,
    direction: Direction,
) -> bool {
    let forward = direction == Direction::Down;
    let step = |j: usize| {
        if forward {
            Some(j + 1)
        } else {
            j.checked_sub(1)
        }
    };
    for i in snips {
        if lines[i].blank {
            continue;
        }
        loop {
            match j {
                Some(at) if at < file.len() && file.is_blank(at) => j = step(at),
                Some(at) if at < file.len() && file.key(at) == lines[i].key => {
                    j = step(at);
                    break;
                }
                _ => return false,
            }
        }
    }
    true
}

/// The placement by sure `pins`: a second place holding the same repeated lines makes it
/// ambiguous; else the outermost lines are pinned nearby where they can be.
fn sure(ctx: &Context<'_>, seg: &Segment, fresh: &[Range<usize>], mut pins: Vec<Pin>) -> Placed {
    let elsewhere = loose_elsewhere(ctx, &pins).filter(|_| ctx.rules.on(Rule::LooseElsewhere));
    let jump = || jumps::second_reading(ctx, &pins).filter(|_| ctx.rules.on(Rule::JumpLookalike));
    if let Some(other) = elsewhere.or_else(jump) {
        let here = Candidate { pins, score: 1.0 };
        return Placed::Open(Open::Ambiguous(vec![here, other]));
    }
    extend_locally(ctx.lines(), seg, ctx.file, fresh, &mut pins);
    Placed::Pins(pins)
}

/// When every line that anchors a segment is repeated in the file (only their adjacency is
/// unique), another place that holds the same lines in the same order, a few lines apart,
/// is a second reading: the snippet may have left out the lines between them there.
fn loose_elsewhere(ctx: &Context<'_>, pins: &[Pin]) -> Option<Candidate> {
    let lines = ctx.lines();
    let solid: Vec<&Pin> = pins.iter().filter(|p| !lines[p.i].trivial).collect();
    if solid.len() < 2 || solid.iter().any(|p| lines[p.i].count < 2) {
        return None;
    }
    let span = pins[0].j..pins[pins.len() - 1].j + 1;
    let reach = 2 * span.len() + WEIGHTS.reach_slack;
    let first = solid[0];
    ctx.file
        .positions(lines[first.i].key)
        .iter()
        .find_map(|&p| {
            let mut at = p as usize;
            if span.contains(&at) {
                return None;
            }
            let mut found = vec![Pin { j: at, ..*first }];
            for q in &solid[1..] {
                let next = ctx
                    .file
                    .positions(lines[q.i].key)
                    .iter()
                    .map(|&x| x as usize)
                    .find(|&x| x > at && x <= p as usize + reach)?;
                if span.contains(&next) {
                    return None;
                }
                found.push(Pin { j: next, ..**q });
                at = next;
            }
            Some(Candidate {
                pins: found,
                score: 1.0,
            })
        })
}

/// A sure pin for each of the segment's outermost lines (its first and last non-blank
/// line, the context next to a placeholder) that is repeated in the file but occurs only
/// once within reach of the nearest sure pin: near its anchors such a line has one place.
/// (Lines further in are not pinned this way: new code often repeats the lines of the
/// unit beside it; nor are lines of new definitions, `fresh`, for the same reason.)
fn extend_locally(
    lines: &[SLine],
    seg: &Segment,
    file: &FileIndex<'_>,
    fresh: &[Range<usize>],
    pins: &mut Vec<Pin>,
) {
    let solid = |i: &usize| !lines[*i].blank;
    let new = |i: usize| fresh.iter().any(|u| u.contains(&i));
    let (Some(outer_first), Some(outer_last)) = (
        seg.lines.clone().find(solid),
        seg.lines.clone().rev().find(solid),
    ) else {
        return;
    };
    if let Some(&first) = pins.first()
        && outer_first < first.i
        && !new(outer_first)
        && let Some(j) = one_within(
            lines,
            file,
            outer_first,
            first.j.saturating_sub(reach(first.i - outer_first))..first.j,
        )
        && j < first.j
        && !passes_its_version(lines, file, (first, outer_first), j)
    {
        pins.insert(
            0,
            Pin {
                i: outer_first,
                j,
                replace: false,
                sure: true,
            },
        );
    }
    if let Some(&last) = pins.last()
        && outer_last > last.i
        && !new(outer_last)
        && let Some(j) = one_within(
            lines,
            file,
            outer_last,
            last.j + 1..last.j + 1 + reach(outer_last - last.i),
        )
        && j > last.j
        && !passes_its_version(lines, file, (last, outer_last), j)
    {
        pins.push(Pin {
            i: outer_last,
            j,
            replace: false,
            sure: true,
        });
    }
}

/// Whether snippet line `i`, written right next to the sure pin `pin` (blank lines aside),
/// would be pinned at its copy `j` past a file line of code that is its likeness: the first
/// such line beside the pin on that side. The snippet then more likely changes that line
/// (`Result = Value;` made `Result = std::move(Value);`, as the copy a few lines on already
/// reads) than deletes the lines up to the copy.
fn passes_its_version(
    lines: &[SLine],
    file: &FileIndex<'_>,
    (pin, i): (Pin, usize),
    j: usize,
) -> bool {
    let (snip_between, mut file_between) = if i > pin.i {
        (
            pin.i + 1..i,
            Box::new(pin.j + 1..j) as Box<dyn Iterator<Item = usize>>,
        )
    } else {
        (
            i + 1..pin.i,
            Box::new((j + 1..pin.j).rev()) as Box<dyn Iterator<Item = usize>>,
        )
    };
    if !snip_between.clone().all(|k| lines[k].blank) {
        return false;
    }
    let Some(next) = file_between.find(|&k| !file.is_blank(k)) else {
        return false;
    };
    !lines[i].trivial
        && !file.is_trivial(next)
        && crate::edit::lazy::lines::similarity(&lines[i].text, file.lines[next])
            >= WEIGHTS.edge_change_similarity
}

/// How far from a sure pin a line `d` snippet lines away may be found.
fn reach(d: usize) -> usize {
    WEIGHTS.reach_per_line * d + WEIGHTS.reach_slack
}

/// The one file line in `window` equal to non-trivial snippet line `i`, if exactly one is.
fn one_within(
    lines: &[SLine],
    file: &FileIndex<'_>,
    i: usize,
    window: Range<usize>,
) -> Option<usize> {
    let l = &lines[i];
    if !l.is_old() || l.trivial {
        return None;
    }
    let mut hits = file
        .positions(l.key)
        .iter()
        .map(|&p| p as usize)
        .filter(|p| window.contains(p));
    match (hits.next(), hits.next()) {
        (Some(p), None) => Some(p),
        _ => None,
    }
}

/// Which units' headers read as renames: those the instruction names only, or also those
/// much like the header of the definition their body comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Renames {
    Named,
    AlsoLookalike,
}

/// The line ranges of units the segment shows whole whose name the file does not define:
/// new code, whatever file lines it repeats (a new test repeats lines of the tests beside
/// it). A unit whose lines are nearly all unique file lines is kept out: it renames them; so
/// is one the instruction renames, or (with `Renames::AlsoLookalike`) one whose header is much like the
/// header of the definition its body repeats.
fn new_units(ctx: &Context<'_>, seg: &Segment, all: &[Run], renames: Renames) -> Vec<Range<usize>> {
    let lines = ctx.lines();
    let mut out = Vec::new();
    let mut i = seg.lines.start;
    while i < seg.lines.end {
        // Only a unit shown whole: a placeholder inside a unit keeps a body the file has,
        // so the lines shown around it are the file's. (Asked before the file's
        // definitions, which may cost a tags query: most headers a snippet shows are cut.)
        let Some((name, last)) = units::header_name(&lines[i].text)
            .filter(|_| lines[i].count == 0)
            .and_then(|n| {
                let last =
                    units::snippet_unit_end(lines, i, seg.lines.end, seg.gap_after, seg.follows())?;
                ctx.defs().headers(n).is_empty().then_some((n, last))
            })
        else {
            i += 1;
            continue;
        };
        let end = last + 1;
        // The comment and annotations right above a new definition are new too.
        let mut start = i;
        while start > seg.lines.start && {
            let t = lines[start - 1].text.trim_start();
            !lines[start - 1].blank
                && (t.starts_with('*')
                    || t.starts_with("/*")
                    || t.starts_with("//")
                    || t.starts_with('#')
                    || t.starts_with('@')
                    || t.starts_with('[')
                    || t.starts_with("--"))
        } {
            start -= 1;
        }
        let solid = (i..end).filter(|&k| !lines[k].blank).count().max(1);
        let covered: usize = all
            .iter()
            .filter(|r| r.unique && r.i >= i && r.i_end() <= end)
            .map(|r| (r.i..r.i_end()).filter(|&k| !lines[k].blank).count())
            .sum();
        // A rename: the instruction says so, or the header is much like the header of the
        // definition its body comes from.
        let named = ctx.renames().iter().any(|(_, b)| b == name)
            || (renames == Renames::AlsoLookalike
                && old_header_like(
                    ctx,
                    i,
                    all.iter().find(|r| r.unique && r.i > i && r.i_end() <= end),
                ));
        let cover = if named {
            WEIGHTS.rename_cover_named
        } else {
            WEIGHTS.rename_cover
        };
        if (covered as f32) < cover * solid as f32 {
            out.push(start..end);
        }
        i = end.max(i + 1);
    }
    out
}

/// Whether the definition around the file lines of `run` (a run inside the unit whose
/// header is snippet line `h`) has a header much like `h`'s: then the unit renames it.
fn old_header_like(ctx: &Context<'_>, h: usize, run: Option<&Run>) -> bool {
    let Some(run) = run else {
        return false;
    };
    let lines = ctx.lines();
    let depth = run.i - h;
    let from = run.j.saturating_sub(depth + WEIGHTS.reach_slack);
    (from..run.j).rev().any(|j| {
        units::header_name(ctx.file.lines[j]).is_some()
            && super::lines::similarity(&lines[h].text, ctx.file.lines[j])
                >= WEIGHTS.renamed_header_similarity
    })
}

/// The parts (snippet line ranges) of run `r` outside the `fresh` ranges.
fn outside(r: &Run, fresh: &[Range<usize>]) -> Vec<Range<usize>> {
    let mut parts = vec![(r.i, r.i_end())];
    for u in fresh {
        parts = parts
            .into_iter()
            .flat_map(|(a, b)| {
                let mut out = Vec::new();
                if a < u.start.min(b) {
                    out.push((a, u.start.min(b)));
                }
                if u.end.max(a) < b {
                    out.push((u.end.max(a), b));
                }
                out
            })
            .collect();
    }
    parts.into_iter().map(|(a, b)| a..b).collect()
}

/// Non-trivial lines of a run.
pub(crate) fn nontrivial_lines(lines: &[SLine], r: &Run) -> usize {
    lines[r.i..r.i_end()].iter().filter(|l| !l.trivial).count()
}

/// Whether a pin's place is certain (see [`Pin::sure`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Certainty {
    Sure,
    Unsure,
}

fn run_pins(r: &Run, trim: usize, certainty: Certainty) -> impl Iterator<Item = Pin> + '_ {
    (trim..r.len).map(move |k| Pin {
        i: r.i + k,
        j: r.j + k,
        replace: r.changed,
        sure: certainty == Certainty::Sure,
    })
}

/// A segment without unique runs: its best place by repeated lines and changed lines, or
/// open when none, or several, fit.
fn weak(
    ctx: &Context<'_>,
    seg: &Segment,
    all: Vec<Run>,
    floor: Option<Floor>,
    fresh: &[Range<usize>],
    window: Option<Range<usize>>,
) -> Placed {
    let lines = ctx.lines();
    let mut runs: Vec<Run> = all.into_iter().filter(|r| r.weight >= 1.0).collect();
    let changed = if ctx.rules.on(Rule::ChangedLines) {
        changed_anchors(ctx, seg)
    } else {
        Vec::new()
    };
    runs.extend(
        changed
            .into_iter()
            .filter(|r| floor.is_none_or(|f| f.admits(r.i, r.i_end(), r.j, r.j_end())))
            .filter(|r| !fresh.iter().any(|u| u.contains(&r.i)))
            .filter(|r| window.as_ref().is_none_or(|w| w.contains(&r.j))),
    );
    runs.sort_by_key(|r| (r.i, r.j));
    if runs.is_empty() {
        return Placed::Open(Open::NoAnchor);
    }
    // Without a sure anchor nothing unshown may be deleted, so runs of one place follow
    // each other with no more file lines between them than snippet lines (a blank line of
    // slack).
    let near = |a: &Run, b: &Run| {
        let gap_i = b.i.saturating_sub(a.i_end());
        let gap_j = b.j.saturating_sub(a.j_end());
        gap_j <= gap_i + 1
    };
    let weight = |r: &Run, trim: usize| -> f32 {
        if r.changed {
            r.weight
        } else {
            lines[r.i + trim..r.i_end()]
                .iter()
                .map(runs::line_weight)
                .sum()
        }
    };
    let mut candidates: Vec<Candidate> = Vec::new();
    let mut left = runs;
    while !left.is_empty() && candidates.len() < PLACES_LISTED {
        let (chain, score) = runs::chain(&left, weight, near);
        let pins: Vec<Pin> = chain
            .iter()
            .flat_map(|l| run_pins(&left[l.run], l.trim, Certainty::Unsure))
            .collect();
        let cand = Candidate { pins, score };
        let span = cand.span();
        candidates.push(cand);
        left.retain(|r| r.j_end() <= span.start || r.j >= span.end);
    }
    candidates.sort_by(|a, b| b.score.total_cmp(&a.score));
    let best = candidates[0].score;
    let rivals: Vec<Candidate> = candidates
        .into_iter()
        .filter(|c| c.score > best - WEIGHTS.tie)
        .collect();
    if rivals.len() == 1 {
        return Placed::Pins(
            rivals
                .into_iter()
                .next()
                .map(|c| c.pins)
                .unwrap_or_default(),
        );
    }
    Placed::Open(Open::Ambiguous(rivals))
}

/// Changed lines that place a segment: a new line whose closest file line is similar enough
/// and clearly closer than any other. Returned as one-line `changed` runs weighing their
/// similarity, so pins made from them replace the old line.
fn changed_anchors(ctx: &Context<'_>, seg: &Segment) -> Vec<Run> {
    let lines = ctx.lines();
    let mut out = Vec::new();
    let mut tried = 0;
    for i in seg.lines.clone() {
        let l = &lines[i];
        let chars = l.text.chars().filter(|c| !c.is_whitespace()).count();
        if l.kind != Kind::Plain || l.count > 0 || l.trivial {
            continue;
        }
        tried += 1;
        if tried > 16 {
            break;
        }
        // A short line is alike to others by chance, unless it sets a key the file sets once.
        let found = if chars < WEIGHTS.placing_change_min_chars {
            only_setting(ctx, &l.text)
        } else {
            closest_old_version(ctx, &l.text)
        };
        if let Some((j, sim)) = found {
            out.push(Run {
                i,
                j,
                len: 1,
                weight: sim,
                unique: false,
                changed: true,
            });
        }
    }
    out
}

/// The one file line that sets the key `text` sets, if exactly one does.
fn only_setting(ctx: &Context<'_>, text: &str) -> Option<(usize, f32)> {
    let key = lines::setting_key(text)?;
    let mut hits = ctx
        .file
        .lines
        .iter()
        .enumerate()
        .filter(|(_, l)| lines::setting_key(l) == Some(key))
        .map(|(j, _)| j);
    match (hits.next(), hits.next()) {
        (Some(j), None) => Some((j, WEIGHTS.placing_change_similarity)),
        _ => None,
    }
}

/// The file line a changed line is a version of: the most similar line, when it reaches
/// `WEIGHTS.placing_change_similarity` and beats every other by `WEIGHTS.placing_change_margin`.
pub(crate) fn closest_old_version(ctx: &Context<'_>, text: &str) -> Option<(usize, f32)> {
    let sig = Signature::of(text);
    let floor = WEIGHTS.placing_change_similarity - WEIGHTS.placing_change_margin;
    let mut best: Option<(usize, f32)> = None;
    let mut second = 0.0f32;
    for (j, s) in ctx.sigs().iter().enumerate() {
        if ctx.file.is_trivial(j) || !sig.may_reach(s, floor) {
            continue;
        }
        let sim = lines::similarity(text, ctx.file.lines[j]);
        match best {
            Some((_, b)) if sim <= b => second = second.max(sim),
            _ => {
                if let Some((_, b)) = best {
                    second = second.max(b);
                }
                best = Some((j, sim));
            }
        }
    }
    best.filter(|&(_, sim)| {
        sim >= WEIGHTS.placing_change_similarity && sim - second >= WEIGHTS.placing_change_margin
    })
}

/// Pins for the units the segment shows whole: a header whose name the file defines once
/// (or that a pin already ties to a header of that name) is pinned to that header, and the
/// unit's last line to the definition's last line. Pins inside a pinned unit become sure.
/// Renames from the instruction map a new name to the old one.
pub(crate) fn unit_pins(
    ctx: &Context<'_>,
    seg: &Segment,
    pins: &mut Vec<Pin>,
    renames: &[(String, String)],
) {
    let lines = ctx.lines();
    let mut inside_new = inside_new::NewUnits::new(seg);
    let mut i = seg.lines.start;
    while i < seg.lines.end {
        if inside_new.covers(ctx, seg, i) {
            i += 1;
            continue;
        }
        if let Some(next) = group_pins(ctx, seg, i, pins) {
            i = next;
            continue;
        }
        match unit_at(ctx, seg, i) {
            Some(units::UnitEnd::Whole(last)) => {
                if let Some((hj, end)) = file_unit_for(ctx, i, pins, renames) {
                    if let Some(versions) = stops_inside(ctx, seg, pins, last, end) {
                        pins.extend(versions);
                        pins.sort_by_key(|p| (p.i, p.j));
                    } else if add_unit(pins, i, last, hj, end, lines, ctx.file) {
                        i = last + 1;
                        continue;
                    }
                }
            }
            Some(units::UnitEnd::Open) => {
                // A placeholder keeps the rest of its body: only the header is placed, by
                // its name (its signature may have changed).
                if !pins.iter().any(|p| p.i == i)
                    && let Some((hj, end)) = file_unit_for(ctx, i, pins, renames)
                {
                    let pin = Pin {
                        i,
                        j: hj,
                        replace: changed(lines, i, ctx.file, hj),
                        sure: true,
                    };
                    let before = pins.iter().all(|p| (p.i < i) == (p.j < hj));
                    let inside_ok = pins.iter().all(|p| p.i <= i || p.j > hj && p.j < end);
                    if before && inside_ok {
                        pins.push(pin);
                        pins.sort_by_key(|p| (p.i, p.j));
                    }
                }
            }
            None => {}
        }
        i += 1;
    }
}

/// Whether a segment at the snippet's open end stops inside an indented body (one that no
/// closing line ends): the lines it shows after its last pin are the file lines right after
/// that pin, or their changed versions, and the file's body goes on past them to `end`. The
/// open edge is a placeholder there: shown whole, the unit would delete the rest of its body,
/// which the snippet never showed (a snippet that changes a docstring and stops at its
/// closing quotes). Then the pins that tie each changed version to its old line.
fn stops_inside(
    ctx: &Context<'_>,
    seg: &Segment,
    pins: &[Pin],
    last: usize,
    end: usize,
) -> Option<Vec<Pin>> {
    let (lines, file) = (ctx.lines(), ctx.file);
    if seg.gap_after.is_some()
        || lines[last + 1..seg.lines.end].iter().any(|l| !l.blank)
        || end == 0
        || super::lines::is_closer(file.lines[end - 1])
    {
        return None;
    }
    // The pins are in snippet order.
    let p = pins[..pins.partition_point(|p| p.i <= last)].last()?;
    let (mut j, mut versions) = (p.j, Vec::new());
    for (i, l) in lines.iter().enumerate().take(last + 1).skip(p.i + 1) {
        if l.blank {
            continue;
        }
        let next = (j + 1..end).find(|&k| !file.is_blank(k))?;
        if file.key(next) != l.key {
            if !a_version_of(l, file.lines[next]) {
                // A docstring or comment added under the header says nothing of where the
                // body ends: the body's start is still next.
                if prose_of(&l.text).is_some() {
                    continue;
                }
                return None;
            }
            versions.push(Pin {
                i,
                j: next,
                replace: true,
                sure: true,
            });
        }
        j = next;
    }
    (j < end && (j + 1..end).any(|k| !file.is_blank(k))).then_some(versions)
}

/// Whether snippet line `l` may be the changed version of file line `old` for
/// [`stops_inside`]: similar enough, or both the same kind of text that is not code (a
/// docstring or a comment reworded, however much).
fn a_version_of(l: &SLine, old: &str) -> bool {
    prose_of(&l.text).is_some_and(|m| prose_of(old) == Some(m))
        || !l.trivial
            && !lines::is_trivial(old)
            && lines::similarity(&l.text, old) >= WEIGHTS.placing_change_similarity
}

/// The mark a line of text that is not code opens with (a docstring's quotes, a comment's
/// mark), if it is one.
fn prose_of(line: &str) -> Option<&'static str> {
    const PROSE: [&str; 6] = ["\"\"\"", "'''", "#", "//", "--", "/*"];
    let t = line.trim_start();
    PROSE.into_iter().find(|m| t.starts_with(m))
}

/// Whether edge line `j` lies past more of the file's non-blank lines, from the segment's
/// anchor nearest to snippet line `i`, than the snippet shows between them.
fn skips_unshown(
    file: &FileIndex<'_>,
    lines: &[SLine],
    anchors: &[(usize, usize)],
    i: usize,
    j: usize,
) -> bool {
    let Some(&(ai, aj)) = anchors.iter().min_by_key(|(ai, _)| ai.abs_diff(i)) else {
        return false;
    };
    let file_lines = (aj.min(j) + 1..aj.max(j))
        .filter(|&k| !file.is_blank(k))
        .count();
    let shown = (ai.min(i) + 1..ai.max(i))
        .filter(|&k| !lines[k].blank)
        .count();
    file_lines > shown
}

/// Rule 3: an open edge of the snippet reaches the file's first or last line when the
/// snippet's own first or last line is that line — a sure anchor, however common the line
/// (a closing brace), since the file has one first and one last line.
pub(crate) fn file_edge_pins(ctx: &Context<'_>, seg: &Segment, pins: &mut Vec<Pin>) {
    let lines = ctx.lines();
    let file = ctx.file;
    let solid_file = |j: &usize| !file.is_blank(*j);
    let fresh = ctx.fresh_lines(seg);
    // The offsets the segment's other anchors sit at: the edge line must share one.
    let offsets: Vec<i64> = pins
        .iter()
        .map(|p| i64::from(file.indent(p.j)) - i64::from(lines[p.i].indent))
        .collect();
    let anchors: Vec<(usize, usize)> = pins.iter().map(|p| (p.i, p.j)).collect();
    // The edge line is the file's (`Some(false)`), or its new version (`Some(true)`): the
    // snippet's last line a changed version of the file's last line. A line of a new
    // definition is neither.
    let at_edge = |i: usize, j: usize| -> Option<bool> {
        let l = &lines[i];
        let d = i64::from(file.indent(j)) - i64::from(l.indent);
        if fresh.iter().any(|r| r.contains(&i)) || !(offsets.is_empty() || offsets.contains(&d)) {
            return None;
        }
        // With no other anchor to vouch for its depth, a line that says nothing (`}`) is the
        // file's edge line only at that line's own depth.
        if l.trivial && offsets.is_empty() && d != 0 {
            return None;
        }
        // Nor past more of the file's lines than the snippet shows: those would go,
        // licensed by a closer alone.
        if l.trivial && skips_unshown(file, lines, &anchors, i, j) {
            return None;
        }
        if l.is_old() && l.key == file.key(j) {
            return Some(false);
        }
        let changed = l.kind != Kind::Removed
            && !l.trivial
            && !file.is_trivial(j)
            && lines::similarity(&l.text, file.lines[j]) >= WEIGHTS.placing_change_similarity;
        changed.then_some(true)
    };
    if seg.gap_after.is_none()
        && let (Some(i), Some(j)) = (
            seg.lines.clone().rev().find(|&i| !lines[i].blank),
            (0..file.len()).rev().find(solid_file),
        )
        && pins.last().is_none_or(|p| p.i < i && p.j < j)
        && let Some(replace) = at_edge(i, j)
    {
        pins.push(Pin {
            i,
            j,
            replace,
            sure: true,
        });
    }
    if seg.gap_before.is_none()
        && let (Some(i), Some(j)) = (
            seg.lines.clone().find(|&i| !lines[i].blank),
            (0..file.len()).find(solid_file),
        )
        && pins.first().is_none_or(|p| p.i > i && p.j > j)
        && let Some(replace) = at_edge(i, j)
    {
        pins.insert(
            0,
            Pin {
                i,
                j,
                replace,
                sure: true,
            },
        );
    }
}

/// A header group (a selector list, `.a,` / `.b {`) shown whole whose names the file defines
/// once each, in adjacent rules: the group replaces all of them (one rule for several).
/// Returns the line after the group's unit when it pinned it.
fn group_pins(ctx: &Context<'_>, seg: &Segment, i: usize, pins: &mut Vec<Pin>) -> Option<usize> {
    let lines = ctx.lines();
    let (names, brace) = units::header_group(lines, i, seg.lines.end)?;
    let last = units::snippet_unit_end(lines, brace, seg.lines.end, seg.gap_after, seg.follows())?;
    let mut extents = Vec::new();
    for name in names {
        match &*ctx.defs().headers(name) {
            [h] => extents.push(units::file_extent(ctx.file, *h)),
            _ => return None,
        }
    }
    extents.sort_unstable();
    extents.dedup();
    // The rules are neighbours: only blank lines between them.
    let adjacent = extents
        .windows(2)
        .all(|w| w[0].1 <= w[1].0 && (w[0].1..w[1].0).all(|j| ctx.file.is_blank(j)));
    let (hj, end) = (extents.first()?.0, extents.last()?.1);
    (adjacent && add_unit(pins, i, last, hj, end, lines, ctx.file)).then_some(last + 1)
}

/// How far the unit whose header is snippet line `i` reaches in the segment.
fn unit_at(ctx: &Context<'_>, seg: &Segment, i: usize) -> Option<units::UnitEnd> {
    let lines = ctx.lines();
    if lines[i].kind == Kind::Removed {
        return None;
    }
    units::header_name(&lines[i].text)?;
    match units::snippet_unit(lines, i, seg.lines.end, seg.gap_after, seg.follows())? {
        units::UnitEnd::Whole(l) if l <= i => None,
        end => Some(end),
    }
}

/// The file definition a snippet header stands for: the header it is pinned to, or the one
/// definition of its name (or of the name it renames).
fn file_unit_for(
    ctx: &Context<'_>,
    i: usize,
    pins: &[Pin],
    renames: &[(String, String)],
) -> Option<(usize, usize)> {
    let lines = ctx.lines();
    let name = units::header_name(&lines[i].text)?;
    if let Some(p) = pins.iter().find(|p| p.i == i) {
        let file_name = units::header_name(ctx.file.lines[p.j])?;
        // A header placed only by likelihood, of a name the file defines several times, is
        // one of them by chance: it does not make the unit's place sure.
        let by_chance = !p.sure
            && ctx.defs().headers(name).len() > 1
            && closest_header(ctx, &lines[i].text, &ctx.defs().headers(name)) != Some(p.j);
        return (file_name == name && !by_chance).then(|| units::file_extent(ctx.file, p.j));
    }
    let old = renames
        .iter()
        .find(|(_, b)| b == name)
        .map_or(name, |(a, _)| a.as_str());
    match &*ctx.defs().headers(old) {
        [] => None,
        [h] => Some(units::file_extent(ctx.file, *h)),
        several => {
            closest_header(ctx, &lines[i].text, several).map(|h| units::file_extent(ctx.file, h))
        }
    }
}

/// Of several definitions of one name (overloads, a class and its constructor), the one whose
/// header is clearly the most like the snippet's.
fn closest_header(ctx: &Context<'_>, header: &str, candidates: &[usize]) -> Option<usize> {
    let mut scored: Vec<(f32, usize)> = candidates
        .iter()
        .map(|&h| (super::lines::similarity(header, ctx.file.lines[h]), h))
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    let (best, h) = scored[0];
    (best >= WEIGHTS.header_similarity && best - scored[1].0 >= WEIGHTS.placing_change_margin)
        .then_some(h)
}

/// Whether snippet header `i`, placed on file header `j` by its name, changed the line: not
/// when it is the file's line shown without its trailing comment (kept as the file has it).
fn changed(lines: &[SLine], i: usize, file: &FileIndex<'_>, j: usize) -> bool {
    lines[i].key != file.key(j) && !super::lines::shown_without_comment(lines, i, file.lines[j])
}

/// Add the pins of a unit (header `i`..=`last` for file lines `hj..end`) when they agree with
/// the pins already there; mark the pins inside it sure.
fn add_unit(
    pins: &mut Vec<Pin>,
    i: usize,
    last: usize,
    hj: usize,
    end: usize,
    lines: &[SLine],
    file: &FileIndex<'_>,
) -> bool {
    let fits = pins.iter().all(|p| {
        let inside_s = p.i >= i && p.i <= last;
        let inside_f = p.j >= hj && p.j < end;
        let ordered = (p.i >= i || p.j < hj) && (p.i <= last || p.j >= end);
        ordered
            && inside_s == inside_f
            && (p.i != i || p.j == hj)
            && (p.i != last || p.j == end - 1)
            && (p.j != hj || p.i == i)
            && (p.j != end - 1 || p.i == last)
    });
    if !fits || end - 1 < hj {
        return false;
    }
    // A definition that ends with a closing line (`}`, `end`) is shown whole only with a
    // closing line at the same depth.
    let closes = super::lines::is_closer(file.lines[end - 1]);
    let depth = |a: u32, b: u32| i64::from(a) - i64::from(b);
    if closes
        && (!super::lines::is_closer(&lines[last].text)
            || depth(lines[last].indent, lines[i].indent)
                != depth(file.indent(end - 1), file.indent(hj)))
    {
        return false;
    }
    for p in pins.iter_mut().filter(|p| p.i >= i && p.i <= last) {
        p.sure = true;
    }
    let pin = |si: usize, fj: usize| Pin {
        i: si,
        j: fj,
        replace: changed(lines, si, file, fj),
        sure: true,
    };
    if !pins.iter().any(|p| p.i == i) {
        pins.push(pin(i, hj));
    }
    if last != i && end - 1 > hj && !pins.iter().any(|p| p.i == last) {
        pins.push(pin(last, end - 1));
    }
    pins.sort_by_key(|p| (p.i, p.j));
    true
}

#[cfg(test)]
mod tests {
    use super::super::prepare;
    use super::*;

    fn placed(file: &[&str], snippet: &str) -> Placed {
        let index = FileIndex::new(file);
        let snip = Snippet::cut(prepare::read(snippet, &index));
        let ctx = Context::new(&index, &snip);
        place(&ctx, &snip.segments[0], None, None)
    }

    #[test]
    fn a_guessed_header_of_a_name_defined_several_times_makes_no_unit_sure() {
        // Two `fmt`s: a header placed by likelihood at the first is that one by chance, and
        // pinning the unit there would license replacing its body.
        let file = [
            "impl Debug for A {",
            "    fn fmt(&self) -> String {",
            "        a()",
            "    }",
            "}",
            "impl Debug for B {",
            "    fn fmt(&self) -> String {",
            "        b()",
            "    }",
            "}",
        ];
        let index = FileIndex::new(&file);
        let snippet = "    fn fmt(&self) -> String {\n        c()\n    }\n";
        let snip = Snippet::cut(prepare::read(snippet, &index));
        let ctx = Context::new(&index, &snip);
        let guessed = Pin {
            i: 0,
            j: 1,
            replace: false,
            sure: false,
        };
        assert_eq!(file_unit_for(&ctx, 0, &[guessed], &[]), None);
        let sure = Pin {
            sure: true,
            ..guessed
        };
        assert_eq!(file_unit_for(&ctx, 0, &[sure], &[]), Some((1, 4)));
    }

    /// The file's definitions (a tags query, about half a parse) are asked for only where a
    /// snippet shows a new unit whole: not for a changed statement that reads like a header
    /// (`let base = f(x);`) in a unit cut by placeholders.
    #[test]
    fn a_snippet_anchored_by_text_asks_for_no_definitions() {
        let text = (0..6)
            .map(|k| {
                format!(
                    "/// Value {k}.\npub fn compute_{k}(input: u64) -> u64 {{\n    let base = \
                     input.wrapping_mul({k});\n    match base {{\n        0 => {k},\n        \
                     v => v ^ {k},\n    }}\n}}\n\n"
                )
            })
            .collect::<String>();
        let lines: Vec<&str> = text.lines().collect();
        let asked = |snippet: &str| {
            let index = FileIndex::new(&lines).with_source(Some("src/lib.rs"), &text);
            let snip = Snippet::cut(prepare::read(snippet, &index));
            let ctx = Context::new(&index, &snip);
            let placed = place(&ctx, &snip.segments[0], None, None);
            (matches!(placed, Placed::Pins(_)), index.tags_asked())
        };
        let cut = "// ... existing code ...\npub fn compute_3(input: u64) -> u64 {\n    let base = \
                   input.wrapping_mul(3).rotate_left(1);\n    match base {\n// ... existing code ...\n";
        assert_eq!(
            asked(cut),
            (true, false),
            "a cut unit asked for the definitions"
        );
        // A new unit shown whole does ask (is its name new to the file?).
        let whole = "pub fn brand_new() -> u64 {\n    7\n}\n\npub fn compute_3(input: u64) -> \
                     u64 {\n// ... existing code ...\n";
        assert!(asked(whole).1, "a whole new unit did not ask");
    }

    #[test]
    fn a_unique_line_is_a_sure_anchor() {
        let file = ["call_alpha()", "call_beta()", "call_gamma()"];
        let Placed::Pins(p) = placed(&file, "call_beta()\nnew_call()\n") else {
            panic!("not placed")
        };
        assert_eq!(
            p,
            [Pin {
                i: 0,
                j: 1,
                replace: false,
                sure: true
            }]
        );
    }

    #[test]
    fn a_repeated_context_is_ambiguous() {
        let file = ["x = 1", "y()", "", "x = 1", "z()"];
        assert!(
            matches!(placed(&file, "x = 1\nnew()\n"), Placed::Open(Open::Ambiguous(c)) if c.len() == 2)
        );
    }

    #[test]
    fn a_changed_line_with_one_old_version_places_its_segment() {
        let file = ["}", "    total = compute_total(items, tax)", "}"];
        let Placed::Pins(p) = placed(
            &file,
            "    total = compute_total(items, tax, discount)\n}\n",
        ) else {
            panic!("not placed")
        };
        assert_eq!(
            p[0],
            Pin {
                i: 0,
                j: 1,
                replace: true,
                sure: false
            }
        );
    }
}
