//! Stage 5a, the licence check (docs/DESIGN.md §5.1 6a): from the file, the snippet and the
//! merged result alone — it shares no code with placement or alignment — every file line the
//! result lost is found again by a line diff, and each must hold a licence the snippet gives:
//! - a `-` line of a diff-style snippet with its text;
//! - a `remove NAME` directive or an instruction's removal of the definition holding it;
//! - a definition of the same name that the snippet shows whole (a same-named replacement);
//! - its text still in the result as often as in the file, with the snippet showing it (moved);
//! - or, for the run of lost lines as a whole, its place in the snippet: the snippet shows
//!   the result's lines across the run as one stretch of a segment — the file line kept above
//!   it, the new lines, the file line kept below it — and the anchor blocks around the run
//!   (the snippet's lines matching the file's contiguously) each occur once in the file, are
//!   not all trivial, and one of them is grounded: on its far side it reaches the segment's
//!   edge or more of the file's lines, never new code. At a segment's edge, where there is no
//!   anchor on one side, lost lines are licensed only as changed lines: no more of them than
//!   new lines there, each alike to the new line that takes its place.
//!
//! A snippet that is the whole file (no placeholder, its first and last lines the file's)
//! licenses everything. Blank lines need no licence.

use std::collections::HashMap;
use std::ops::Range;
use std::time::{Duration, Instant};

use similar::{Algorithm, DiffOp, capture_diff_slices_deadline};

use super::index::FileIndex;
use super::lines;
use super::prepare::{Kind, SLine};
use super::segments::Snippet;
use super::units::{self, FileDefs};
use crate::edit::{Error, ErrorCode, Result};

/// How long the line diff may search for the smallest difference; past it the diff is
/// coarser, which only finds more lost lines (and so refuses more), never fewer.
const DIFF_DEADLINE: Duration = Duration::from_millis(200);

/// The longest anchor block read on each side of a lost run.
const BLOCK_LINES: usize = 32;

/// A block whose rarest non-trivial line occurs more often than this is not unique.
const RAREST_MAX: usize = 64;

/// How alike a lost line and the new line that takes its place at a segment's edge must be.
const CHANGED_SIMILARITY: f32 = 0.5;

/// The places of one line in the snippet that are tried as a lost run's anchor, at most: a
/// line shown more often places nothing.
const SPOTS_TRIED: usize = 64;

/// The file lines a refusal lists at most.
const LISTED_LINES: usize = 6;

/// The inputs of the check, read once.
struct Licences<'a, 'f> {
    file: &'a FileIndex<'f>,
    lines: &'a [SLine],
    /// Each segment's non-blank lines that stand in the result (not `-` lines).
    segs: Vec<Vec<usize>>,
    /// Where each key stands among the segments' lines: (segment, position).
    at: HashMap<u64, Vec<(usize, usize)>>,
    /// Each file line's position among the file's non-blank lines.
    rank: Vec<usize>,
    /// The file's non-blank lines.
    solid: Vec<usize>,
    /// Whether each file line is lost in the result.
    lost: Vec<bool>,
    /// Where each file line stands in the result, when kept.
    kept_at: Vec<Option<usize>>,
    /// The file line each line of the result is, when it is one.
    origin: Vec<Option<usize>>,
    /// Whether each line of the result is blank.
    out_blank: Vec<bool>,
}

/// Refuse the merge `out` of `snippet` into `file` when it loses a file line the snippet
/// does not license. `removes` are the definitions a directive or the instruction deletes.
pub(crate) fn check<S: AsRef<str>>(
    file: &FileIndex<'_>,
    snippet: &Snippet,
    defs: &FileDefs<'_>,
    removes: &[&str],
    out: &[S],
) -> Result<()> {
    let diff = Diff::of(file, out);
    let (kept, old, new) = (&diff.kept, &diff.old, &diff.new);
    let lost: Vec<usize> = (0..file.len())
        .filter(|&j| kept[j].is_none() && !file.is_blank(j))
        .collect();
    if lost.is_empty() || whole_file(file, snippet) {
        return Ok(());
    }
    let licences = Licences::new(file, snippet, kept, diff.out_blank);
    let mut per_line = PerLine::new(snippet, old, new);
    // The definitions' lines are read (a parse, where the grammar is built in) only for
    // lines no other licence covers.
    let mut ranges: Option<Vec<Range<usize>>> = None;
    let mut unlicensed: Vec<usize> = Vec::new();
    let mut reason: Option<Why> = None;
    for run in runs(&lost, kept, file) {
        let rest: Vec<usize> = run
            .iter()
            .copied()
            .filter(|&j| !per_line.licensed(file.key(j)))
            .collect();
        if rest.is_empty() {
            continue;
        }
        let Err(why) = licences.by_place(&rest, kept, out) else {
            continue;
        };
        let ranges = ranges.get_or_insert_with(|| {
            let mut r = removed_ranges(file, defs, removes);
            r.extend(replaced_ranges(file, snippet, defs));
            r
        });
        let left: Vec<usize> = rest
            .iter()
            .copied()
            .filter(|j| !ranges.iter().any(|r| r.contains(j)))
            .collect();
        if left.is_empty()
            || (left.len() < rest.len() && licences.by_place(&left, kept, out).is_ok())
        {
            continue;
        }
        reason.get_or_insert(why);
        unlicensed.extend(left);
    }
    match reason {
        None => Ok(()),
        Some(why) => Err(refusal(file, &unlicensed, why)),
    }
}

/// The file against the result, line by line (whitespace-insensitive).
struct Diff {
    /// Where each file line stands in the result, when it is kept.
    kept: Vec<Option<usize>>,
    /// The keys of the file's and the result's lines between their common ends.
    old: Vec<u64>,
    new: Vec<u64>,
    /// Whether each line of the result is blank.
    out_blank: Vec<bool>,
}

impl Diff {
    fn of<S: AsRef<str>>(file: &FileIndex<'_>, out: &[S]) -> Diff {
        let (n, m) = (file.len(), out.len());
        // The lines the result holds byte for byte at both ends need no key.
        let head = (0..n.min(m))
            .take_while(|&k| file.lines[k] == out[k].as_ref())
            .count();
        let tail = (0..n.min(m) - head)
            .take_while(|&d| file.lines[n - 1 - d] == out[m - 1 - d].as_ref())
            .count();
        let old: Vec<u64> = (head..n - tail).map(|j| file.key(j)).collect();
        let facts: Vec<(u64, u32, bool, bool)> = out[head..m - tail]
            .iter()
            .map(|l| lines::facts(l.as_ref()))
            .collect();
        let new: Vec<u64> = facts.iter().map(|f| f.0).collect();
        let deadline = Instant::now() + DIFF_DEADLINE;
        let ops = capture_diff_slices_deadline(Algorithm::Myers, &old, &new, Some(deadline));
        let mut kept: Vec<Option<usize>> = (0..n)
            .map(|j| {
                if j < head {
                    Some(j)
                } else if j >= n - tail {
                    Some(j + m - n)
                } else {
                    None
                }
            })
            .collect();
        for op in &ops {
            if let DiffOp::Equal {
                old_index,
                new_index,
                len,
            } = *op
            {
                for d in 0..len {
                    kept[head + old_index + d] = Some(head + new_index + d);
                }
            }
        }
        let out_blank: Vec<bool> = (0..m)
            .map(|k| match k.checked_sub(head) {
                Some(d) if d < facts.len() => facts[d].2,
                _ => lines::is_blank(out[k].as_ref()),
            })
            .collect();
        Diff {
            kept,
            old,
            new,
            out_blank,
        }
    }
}

/// Whether the snippet is the whole file: one segment, no placeholder or directive, its
/// first and last non-blank lines the file's.
fn whole_file(file: &FileIndex<'_>, snippet: &Snippet) -> bool {
    let [seg] = snippet.segments.as_slice() else {
        return false;
    };
    if seg.gap_before.is_some() || seg.gap_after.is_some() || !snippet.removals.is_empty() {
        return false;
    }
    let lines = &snippet.lines;
    let shown = |mut it: Box<dyn Iterator<Item = usize> + '_>| it.find(|&i| !lines[i].blank);
    let solid = |mut it: Box<dyn Iterator<Item = usize>>| it.find(|&j| !file.is_blank(j));
    match (
        shown(Box::new(seg.lines.clone())),
        shown(Box::new(seg.lines.clone().rev())),
        solid(Box::new(0..file.len())),
        solid(Box::new((0..file.len()).rev())),
    ) {
        (Some(a), Some(b), Some(x), Some(y)) => {
            lines[a].key == file.key(x) && lines[b].key == file.key(y)
        }
        _ => false,
    }
}

/// The lost lines cut into runs: lines with no kept non-blank line between them.
fn runs(lost: &[usize], kept: &[Option<usize>], file: &FileIndex<'_>) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = Vec::new();
    let mut last: Option<usize> = None;
    for &j in lost {
        let joined =
            last.is_some_and(|p| (p + 1..j).all(|m| kept[m].is_none() || file.is_blank(m)));
        match out.last_mut() {
            Some(run) if joined => run.push(j),
            _ => out.push(vec![j]),
        }
        last = Some(j);
    }
    out
}

/// The licences that hold for a lost line by itself, but a definition's: a `-` line, or the
/// line moved.
struct PerLine {
    /// How many `-` lines of each text are left to license a lost line.
    minus: HashMap<u64, usize>,
    /// Keys the snippet shows (not as `-` lines).
    shown: HashMap<u64, ()>,
    /// How many lines of each key the result holds, less those of the file kept.
    spare: HashMap<u64, isize>,
}

impl PerLine {
    /// `old` and `new`: the keys of the file's and the result's lines where they differ.
    fn new(snippet: &Snippet, old: &[u64], new: &[u64]) -> PerLine {
        let mut minus: HashMap<u64, usize> = HashMap::new();
        let mut shown: HashMap<u64, ()> = HashMap::new();
        for l in snippet.lines.iter().filter(|l| !l.blank) {
            match l.kind {
                Kind::Removed => *minus.entry(l.key).or_default() += 1,
                _ => {
                    shown.insert(l.key, ());
                }
            }
        }
        let mut spare: HashMap<u64, isize> = HashMap::new();
        for k in new.iter().filter(|k| shown.contains_key(k)) {
            *spare.entry(*k).or_default() += 1;
        }
        for k in old {
            if let Some(c) = spare.get_mut(k) {
                *c -= 1;
            }
        }
        PerLine {
            minus,
            shown,
            spare,
        }
    }

    fn licensed(&mut self, key: u64) -> bool {
        if let Some(c) = self.minus.get_mut(&key).filter(|c| **c > 0) {
            *c -= 1;
            return true;
        }
        // Moved: the result holds the line's text as often as the file does.
        self.shown.contains_key(&key) && self.spare.get(&key).is_some_and(|&c| c >= 0)
    }
}

/// The lines of the definitions `removes` names, each defined once, with the blank lines
/// right under them.
fn removed_ranges(
    file: &FileIndex<'_>,
    defs: &FileDefs<'_>,
    removes: &[&str],
) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    for name in removes {
        let headers = defs.headers(name);
        let [h] = *headers else { continue };
        let (a, mut b) = units::file_extent_attached(file, h, name);
        while b < file.len() && file.is_blank(b) {
            b += 1;
        }
        out.push(a..b);
    }
    out
}

/// The lines of the file's definitions that the snippet replaces with a same-named one it
/// shows whole: the file's only definition of that name, or one whose header the snippet
/// shows unchanged.
fn replaced_ranges(
    file: &FileIndex<'_>,
    snippet: &Snippet,
    defs: &FileDefs<'_>,
) -> Vec<Range<usize>> {
    let lines = &snippet.lines;
    let mut out = Vec::new();
    for seg in &snippet.segments {
        let end = seg.lines.end;
        for i in seg.lines.clone() {
            if lines[i].blank || lines[i].kind == Kind::Removed {
                continue;
            }
            // One name on the line, or a selector list over several (`.a,` / `.b {`).
            let (names, opener) = match units::header_group(lines, i, end) {
                Some(group) => group,
                None => match units::header_name(&lines[i].text) {
                    Some(name) => (vec![name], i),
                    None => continue,
                },
            };
            if units::snippet_unit_end(lines, opener, end, seg.gap_after, seg.placeholder_after)
                .is_none()
            {
                continue;
            }
            for name in names {
                let headers = defs.headers(name);
                for &h in headers.iter() {
                    if headers.len() == 1 || file.key(h) == lines[i].key {
                        let (a, b) = units::file_extent_attached(file, h, name);
                        out.push(a..b);
                    }
                }
            }
        }
    }
    out
}

impl<'a, 'f> Licences<'a, 'f> {
    fn new(
        file: &'a FileIndex<'f>,
        snippet: &'a Snippet,
        kept: &[Option<usize>],
        out_blank: Vec<bool>,
    ) -> Licences<'a, 'f> {
        let lines = &snippet.lines;
        let segs: Vec<Vec<usize>> = snippet
            .segments
            .iter()
            .map(|s| {
                s.lines
                    .clone()
                    .filter(|&i| !lines[i].blank && lines[i].kind != Kind::Removed)
                    .collect()
            })
            .collect();
        let mut at: HashMap<u64, Vec<(usize, usize)>> = HashMap::new();
        for (s, seg) in segs.iter().enumerate() {
            for (p, &i) in seg.iter().enumerate() {
                at.entry(lines[i].key).or_default().push((s, p));
            }
        }
        let solid: Vec<usize> = (0..file.len()).filter(|&j| !file.is_blank(j)).collect();
        let mut rank = vec![usize::MAX; file.len()];
        for (r, &j) in solid.iter().enumerate() {
            rank[j] = r;
        }
        Licences {
            file,
            lines,
            segs,
            at,
            rank,
            solid,
            lost: kept.iter().map(Option::is_none).collect(),
            kept_at: kept.to_vec(),
            origin: {
                let mut origin = vec![None; out_blank.len()];
                for (j, k) in kept.iter().enumerate() {
                    if let Some(k) = k {
                        origin[*k] = Some(j);
                    }
                }
                origin
            },
            out_blank,
        }
    }

    /// Whether the snippet licenses the lost lines `run` (ascending, none kept between) by
    /// where it shows the result's lines around them.
    fn by_place<S: AsRef<str>>(
        &self,
        run: &[usize],
        kept: &[Option<usize>],
        out: &[S],
    ) -> std::result::Result<(), Why> {
        let (first, last) = (run[0], run[run.len() - 1]);
        let solid_kept = |j: usize| kept[j].is_some() && !self.file.is_blank(j);
        let above = (0..first).rev().find(|&j| solid_kept(j));
        let below = (last + 1..self.file.len()).find(|&j| solid_kept(j));
        let lo = above.and_then(|j| kept[j]).map_or(0, |k| k + 1);
        let hi = below.and_then(|j| kept[j]).unwrap_or(out.len());
        let new_at: Vec<usize> = (lo..hi)
            .filter(|&k| !lines::is_blank(out[k].as_ref()))
            .collect();
        let between: Vec<u64> = new_at
            .iter()
            .map(|&k| lines::facts(out[k].as_ref()).0)
            .collect();
        let stretch = Stretch {
            above,
            below,
            between: &between,
        };
        let mut why = Why::Kept;
        for (s, sp, sn) in self.placements(&stretch) {
            let up = sp.map_or(Side::Edge, |sp| self.side(s, sp, above.unwrap_or(0), false));
            let down = sn.map_or(Side::Edge, |sn| self.side(s, sn, below.unwrap_or(0), true));
            match self.licensed(up, down, run, &new_at, out) {
                Ok(()) => return Ok(()),
                Err(w) => why = w,
            }
        }
        Err(why)
    }

    /// Where a segment shows the stretch of the result around lost lines: (segment, the
    /// position of the kept line above, of the kept line below), a side `None` where the
    /// stretch runs to the segment's edge over new lines instead.
    fn placements(&self, st: &Stretch<'_>) -> Vec<(usize, Option<usize>, Option<usize>)> {
        let mut out = Vec::new();
        let nb = st.between.len();
        let shows = |seg: &[usize], from: usize| {
            from + nb <= seg.len()
                && (0..nb).all(|d| self.lines[seg[from + d]].key == st.between[d])
        };
        let key = |j: Option<usize>| j.map(|j| self.file.key(j));
        // Both kept lines shown, or the one above with new lines to the segment's end.
        if let Some(spots) = key(st.above).and_then(|k| self.at.get(&k)) {
            for &(s, sp) in spots.iter().take(SPOTS_TRIED) {
                let seg = &self.segs[s];
                if !shows(seg, sp + 1) {
                    continue;
                }
                let sn = sp + 1 + nb;
                if sn < seg.len() && Some(self.lines[seg[sn]].key) == key(st.below) {
                    out.push((s, Some(sp), Some(sn)));
                } else if sn == seg.len() && nb > 0 {
                    out.push((s, Some(sp), None));
                }
            }
        }
        // A segment of new lines only, between placeholders.
        if nb > 0 {
            for (s, seg) in self.segs.iter().enumerate() {
                if seg.len() == nb && shows(seg, 0) {
                    out.push((s, None, None));
                }
            }
        }
        // New lines from a segment's start to the kept line below.
        if nb > 0
            && let Some(spots) = key(st.below).and_then(|k| self.at.get(&k))
        {
            for &(s, sn) in spots.iter().take(SPOTS_TRIED) {
                if sn == nb && shows(&self.segs[s], 0) {
                    out.push((s, None, Some(sn)));
                }
            }
        }
        out
    }

    /// What the snippet's lines from segment `s`'s position `sp` (file line `j`) away from
    /// the lost run (`down`: below it) say about it.
    fn side(&self, s: usize, sp: usize, j: usize, down: bool) -> Side {
        let b = self.block(s, sp, j, down);
        let lines: Vec<usize> = b.files.clone();
        if lines.iter().all(|&j| bare_marker(self.file.lines[j])) {
            Side::Quiet
        } else if lines.iter().all(|&j| self.file.is_trivial(j)) {
            Side::Trivial
        } else if b.grounded {
            Side::Grounded
        } else if self.unique(&b) {
            Side::Unique
        } else {
            Side::Ambiguous
        }
    }

    /// Whether the sides of a lost run license it: an anchor once in the file but among new
    /// lines only with a grounded one across; at an edge (or beside bare comment marks) every
    /// lost line must be a changed line of its own.
    fn licensed<S: AsRef<str>>(
        &self,
        up: Side,
        down: Side,
        run: &[usize],
        new_at: &[usize],
        out: &[S],
    ) -> std::result::Result<(), Why> {
        for (this, other) in [(up, down), (down, up)] {
            match this {
                Side::Ambiguous => return Err(Why::Elsewhere),
                Side::Unique if other != Side::Grounded => return Err(Why::AmongNew),
                _ => {}
            }
        }
        let edge = [up, down].contains(&Side::Edge);
        if (edge || [up, down].contains(&Side::Quiet)) && !self.all_changed(run, new_at, out) {
            return Err(if edge {
                Why::ReplacedOrBeside
            } else {
                Why::Marks
            });
        }
        Ok(())
    }

    /// Whether each lost line pairs, in order, with a new line that is its changed version
    /// for certain: at its depth, and much alike or opening (closing) the same brackets. A
    /// block rewritten line for line (as many new lines as lost ones, each at its old line's
    /// depth, most of them certain) pairs its other lines by position.
    fn all_changed<S: AsRef<str>>(&self, run: &[usize], new_at: &[usize], out: &[S]) -> bool {
        let certain = |j: usize, k: usize| {
            let (old, new) = (self.file.lines[j], out[k].as_ref());
            let net = units::depth_change(old).0;
            lines::indent_of(new) == self.file.indent(j)
                && (lines::similarity(old, new) >= CHANGED_SIMILARITY
                    || (net != 0 && units::depth_change(new).0 == net))
        };
        let mut next = 0;
        let in_order = run.iter().all(|&j| {
            match new_at[next.min(new_at.len())..]
                .iter()
                .position(|&k| certain(j, k))
            {
                Some(d) => {
                    next += d + 1;
                    true
                }
                None => false,
            }
        });
        in_order
            || (run.len() == new_at.len()
                && run
                    .iter()
                    .zip(new_at)
                    .all(|(&j, &k)| lines::indent_of(out[k].as_ref()) == self.file.indent(j))
                && 2 * run
                    .iter()
                    .zip(new_at)
                    .filter(|&(&j, &k)| certain(j, k))
                    .count()
                    >= run.len())
    }

    /// The anchor block at segment `s`'s position `sp`, standing for file line `j`: the
    /// snippet's lines from there away from the lost run (`down`: below it) that match the
    /// file's non-blank lines contiguously. It is grounded when past it, away from the run,
    /// the segment ends, or a file line stands right there, or new lines are followed by the
    /// line that continues the file.
    fn block(&self, s: usize, sp: usize, j: usize, down: bool) -> Block {
        let seg = &self.segs[s];
        let mut files = vec![j];
        let mut keys = vec![self.file.key(j)];
        let mut at = (sp, self.rank[j]);
        loop {
            let next = if down {
                (at.0 + 1 < seg.len() && at.1 + 1 < self.solid.len()).then(|| (at.0 + 1, at.1 + 1))
            } else {
                (at.0 > 0 && at.1 > 0).then(|| (at.0 - 1, at.1 - 1))
            };
            let Some((q, r)) = next else { break };
            if keys.len() >= BLOCK_LINES || self.lines[seg[q]].key != self.file.key(self.solid[r]) {
                break;
            }
            keys.push(self.lines[seg[q]].key);
            files.push(self.solid[r]);
            at = (q, r);
        }
        let continuing = if down {
            self.solid.get(at.1 + 1).copied()
        } else {
            at.1.checked_sub(1).map(|r| self.solid[r])
        };
        // Right past the block the file's line is lost too: that deletion is judged on its own.
        let next_lost = continuing.is_some_and(|j| self.lost[j]);
        let far = self.solid[at.1];
        let grounded = next_lost || self.grounded_past(seg, at.0, far, continuing, down);
        if !down {
            keys.reverse();
            files.reverse();
        }
        Block {
            keys,
            files,
            grounded,
        }
    }

    /// Whether the snippet, read on past a block's far end (segment position `q`, file line
    /// `far`) beside the result, reaches the segment's edge or a file line before any new
    /// line, or, past new lines only, the file line `continuing` that comes right after the
    /// block in the file (the new lines were put in between).
    fn grounded_past(
        &self,
        seg: &[usize],
        q: usize,
        far: usize,
        continuing: Option<usize>,
        down: bool,
    ) -> bool {
        let Some(mut o) = self.kept_at[far] else {
            return false;
        };
        let mut q = q;
        let mut passed_new = false;
        loop {
            let next_q = if down {
                (q + 1 < seg.len()).then_some(q + 1)
            } else {
                q.checked_sub(1)
            };
            let next_o = if down {
                (o + 1..self.origin.len()).find(|&k| !self.out_blank[k])
            } else {
                (0..o).rev().find(|&k| !self.out_blank[k])
            };
            let (Some(nq), Some(no)) = (next_q, next_o) else {
                return next_q.is_none() && !passed_new;
            };
            if let Some(j) = self.origin[no] {
                // A file line: right past the block, or where the file goes on after it.
                return !passed_new || Some(j) == continuing;
            }
            passed_new = true;
            (q, o) = (nq, no);
        }
    }

    /// Whether a block's lines, in order, occur once among the file's non-blank lines, and
    /// not all of them trivially.
    fn unique(&self, b: &Block) -> bool {
        let rarest = b
            .keys
            .iter()
            .enumerate()
            .filter(|&(_, &k)| {
                let at = self.file.positions(k);
                at.first()
                    .is_some_and(|&j| !self.file.is_trivial(j as usize))
            })
            .min_by_key(|&(_, &k)| self.file.count(k));
        let Some((d, &k)) = rarest else {
            return false;
        };
        let at = self.file.positions(k);
        if at.len() > RAREST_MAX {
            return false;
        }
        let hits = at
            .iter()
            .filter(|&&j| {
                let r = self.rank[j as usize];
                r >= d
                    && r - d + b.keys.len() <= self.solid.len()
                    && b.keys
                        .iter()
                        .enumerate()
                        .all(|(e, &key)| self.file.key(self.solid[r - d + e]) == key)
            })
            .count();
        hits == 1
    }
}

/// An anchor block: its keys and file lines in file order, and whether it is grounded on
/// its far side.
struct Block {
    keys: Vec<u64>,
    files: Vec<usize>,
    grounded: bool,
}

/// The result's lines around lost lines: the nearest non-blank file lines kept above and
/// below, and the keys of the non-blank new lines between them.
struct Stretch<'b> {
    above: Option<usize>,
    below: Option<usize>,
    between: &'b [u64],
}

/// What the snippet shows on one side of lost lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    /// New lines run to the segment's edge: nothing says where the file's lines end.
    Edge,
    /// Only trivial lines (closers): they license nothing and veto nothing.
    Trivial,
    /// Only bare comment marks, which any comment line would match.
    Quiet,
    /// The file's own lines where the snippet shows them.
    Grounded,
    /// Among new lines, but once in the file as a block.
    Unique,
    /// Among new lines, and elsewhere in the file too.
    Ambiguous,
}

/// Why the snippet does not license a run of lost lines, as a refusal says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Why {
    /// The snippet does not show the lines around them as one stretch of a segment.
    Kept,
    /// An anchor next to them sits among new lines and occurs elsewhere in the file.
    Elsewhere,
    /// An anchor next to them sits among new lines, with no grounded one across.
    AmongNew,
    /// New lines run to a placeholder beside them, and they are not those lines' old versions.
    ReplacedOrBeside,
    /// Only bare comment marks beside them, and they are not the new lines' old versions.
    Marks,
}

impl Why {
    fn says(self) -> &'static str {
        match self {
            Why::Kept => {
                "the snippet does not show the lines around them next to each other, so a \
                 placeholder keeps them"
            }
            Why::Elsewhere => {
                "the snippet's lines next to them stand among new lines and occur elsewhere in \
                 the file too, so they may be new code repeating the file's"
            }
            Why::AmongNew => {
                "the snippet's lines next to them stand among new lines, with none of the \
                 file's own lines across them"
            }
            Why::ReplacedOrBeside => {
                "new lines run from them to a placeholder and are not their changed versions: \
                 are they replaced, or do the new lines go beside them?"
            }
            Why::Marks => {
                "only bare comment marks stand beside them, and the new lines are not their \
                 changed versions"
            }
        }
    }
}

/// A line of comment marks alone (`//!`, `///`, ` *`, `#`).
fn bare_marker(line: &str) -> bool {
    !lines::is_blank(line)
        && line
            .chars()
            .all(|c| !(c.is_alphanumeric() || "{}()[]".contains(c)))
}

fn refusal(file: &FileIndex<'_>, lost: &[usize], why: Why) -> Error {
    let listed: Vec<String> = lost
        .iter()
        .take(LISTED_LINES)
        .map(|&j| format!("  {}: {}", j + 1, lines::quoted(file.lines[j])))
        .collect();
    let more = if lost.len() > LISTED_LINES {
        format!("\n  … and {} more", lost.len() - LISTED_LINES)
    } else {
        String::new()
    };
    Error::new(
        ErrorCode::NeedsMoreContext,
        format!(
            "the merge would delete {} file line(s) the snippet does not license:\n{}{more}\n\
             ({}). To delete them, show the unchanged lines right above and below them with \
             nothing but the new lines between, send them as `-` lines, or add a `remove \
             NAME` line for a definition; to keep them, put a placeholder where they are",
            lost.len(),
            listed.join("\n"),
            why.says()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::super::prepare;
    use super::*;

    /// The check's verdict on `result` as the merge of `snippet` into `file`, whatever
    /// placement would have made of it.
    fn judge(file: &str, snippet: &str, result: &str, removes: &[&str]) -> Result<()> {
        let lines: Vec<&str> = file.lines().collect();
        let index = FileIndex::new(&lines);
        let snip = Snippet::cut(prepare::read(snippet, &index));
        let defs = FileDefs::new(&index);
        let out: Vec<&str> = result.lines().collect();
        check(&index, &snip, &defs, removes, &out)
    }

    fn refused(r: Result<()>) -> String {
        let e = r.expect_err("an unlicensed deletion is refused");
        assert_eq!(e.code, ErrorCode::NeedsMoreContext);
        e.message
    }

    const FILE: &str = "fn alpha() {\n    let a = 1;\n    let b = 2;\n    let c = 3;\n    a + b + c\n}\n\nfn beta() {\n    let x = 10;\n    x * 2\n}\n\nfn gamma() {\n    beta() + alpha()\n}\n";

    #[test]
    fn lines_between_two_anchors_the_snippet_shows_adjacent_may_go() {
        let snippet = "// ...\n    let a = 1;\n    let c = 3;\n// ...\n";
        let result = FILE.replace("    let b = 2;\n", "");
        judge(FILE, snippet, &result, &[]).unwrap();
    }

    #[test]
    fn a_line_a_placeholder_keeps_may_not_go_whatever_placement_did() {
        // The snippet changes `x * 2`; the result also lost `let b = 2;`, which lies under
        // the first placeholder.
        let snippet = "// ...\nfn beta() {\n    let x = 10;\n    x * 3\n}\n// ...\n";
        let result = FILE
            .replace("    x * 2\n", "    x * 3\n")
            .replace("    let b = 2;\n", "");
        let message = refused(judge(FILE, snippet, &result, &[]));
        assert!(message.contains("3: let b = 2;"), "{message}");
        assert!(message.contains("a placeholder keeps them"), "{message}");
        assert!(message.contains("`remove NAME`"), "{message}");
        // Without that loss the same merge stands.
        let result = FILE.replace("    x * 2\n", "    x * 3\n");
        judge(FILE, snippet, &result, &[]).unwrap();
    }

    #[test]
    fn an_anchor_among_new_lines_that_occurs_elsewhere_licenses_nothing() {
        // Two jobs with the same steps: the snippet adds a job whose steps repeat the old
        // job's; read against the old job, its lines would delete what lies between them.
        let file = "jobs:\n  test:\n    steps:\n      - uses: checkout\n      - run: make deps\n      - run: make test\n  lint:\n    steps:\n      - uses: checkout\n      - run: make deps\n      - run: make lint\n";
        let snippet =
            "# ...\n  docs:\n    steps:\n      - uses: checkout\n      - run: make docs\n# ...\n";
        // Placement read `uses: checkout` as the test job's and replaced its steps.
        let result = file.replace(
            "  test:\n    steps:\n      - uses: checkout\n      - run: make deps\n      - run: make test\n",
            "  test:\n  docs:\n    steps:\n      - uses: checkout\n      - run: make docs\n",
        );
        let message = refused(judge(file, snippet, &result, &[]));
        assert!(message.contains("make deps"), "{message}");
        assert!(message.contains("occur elsewhere in the file"), "{message}");
    }

    #[test]
    fn an_anchor_once_in_the_file_but_among_new_lines_needs_a_grounded_one_across() {
        let file = "use std::fmt;\nuse std::io;\n\nfn main() {\n    run();\n    stop();\n}\n";
        // A new example repeating the file's import, its own lines on both sides.
        let snippet =
            "// ...\nfn example() {\n    use std::io;\n    println!(\"new\");\n}\n// ...\n";
        let result = "use std::fmt;\nfn example() {\n    use std::io;\n    println!(\"new\");\n}\n";
        let message = refused(judge(file, snippet, result, &[]));
        assert!(message.contains("run();"), "{message}");
        assert!(
            message.contains("none of the file's own lines"),
            "{message}"
        );
    }

    #[test]
    fn at_a_segments_edge_only_changed_lines_go() {
        // The segment starts with a new line right above an anchor: the file line there goes
        // as its changed version.
        let snippet = "// ...\n    let x = 11;\n    x * 2\n}\n// ...\n";
        let changed = FILE.replace("    let x = 10;\n", "    let x = 11;\n");
        judge(FILE, snippet, &changed, &[]).unwrap();
        // The same new line, but the file's line dropped beside it is not its old version.
        let snippet = "// ...\n    log(\"here\");\n    x * 2\n}\n// ...\n";
        let replaced = FILE.replace("    let x = 10;\n", "    log(\"here\");\n");
        let message = refused(judge(FILE, snippet, &replaced, &[]));
        assert!(message.contains("let x = 10;"), "{message}");
        assert!(
            message.contains("do the new lines go beside them?"),
            "{message}"
        );
    }

    #[test]
    fn minus_lines_remove_directives_and_whole_replacements_license_their_lines() {
        let snippet = "// ...\n    let a = 1;\n-    let b = 2;\n    let c = 3;\n// ...\n";
        let result = FILE.replace("    let b = 2;\n", "");
        judge(FILE, snippet, &result, &[]).unwrap();
        let without_beta = FILE.replace("fn beta() {\n    let x = 10;\n    x * 2\n}\n\n", "");
        judge(
            FILE,
            "// ...\n// remove beta\n// ...\n",
            &without_beta,
            &["beta"],
        )
        .unwrap();
        refused(judge(
            FILE,
            "// ...\n// remove beta\n// ...\n",
            &without_beta,
            &[],
        ));
        // `beta` shown whole with another body: its old body goes.
        let snippet = "// ...\nfn beta() {\n    20\n}\n// ...\n";
        let result = FILE.replace("    let x = 10;\n    x * 2\n", "    20\n");
        judge(FILE, snippet, &result, &[]).unwrap();
    }

    #[test]
    fn a_moved_line_is_not_lost_and_a_whole_file_snippet_licenses_everything() {
        // `let c = 3;` moved above `let a = 1;`: its text is still there.
        let snippet = "fn alpha() {\n    let c = 3;\n    let a = 1;\n    let b = 2;\n    a + b + c\n}\n// ...\n";
        let result = FILE.replace(
            "    let a = 1;\n    let b = 2;\n    let c = 3;\n",
            "    let c = 3;\n    let a = 1;\n    let b = 2;\n",
        );
        judge(FILE, snippet, &result, &[]).unwrap();
        let whole = "fn alpha() {\n    1\n}\n\nfn gamma() {\n    beta() + alpha()\n}\n";
        judge(FILE, whole, whole, &[]).unwrap();
    }

    /// Every successful merge of the four edit corpora, checked again from its file, snippet
    /// and result alone: no line goes without a licence.
    #[test]
    fn no_merge_of_the_corpora_deletes_a_line_without_a_licence() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
        let mut merged = 0;
        for corpus in [
            "git-history",
            "git-history-wide",
            "git-history-systems",
            "model-snippets",
        ] {
            let mut cases: Vec<_> = std::fs::read_dir(root.join(corpus))
                .expect("the shared corpora beside the checkout")
                .map(|e| e.unwrap().path())
                .filter(|p| p.join("lazy.txt").exists())
                .collect();
            cases.sort();
            for case in cases {
                merged += usize::from(relicensed(&case));
            }
        }
        assert!(merged > 600, "only {merged} merges were checked");
    }

    /// Merge one corpus case; when it merges, check its result again. Whether it merged.
    fn relicensed(case: &std::path::Path) -> bool {
        let before = std::fs::read_dir(case)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.file_stem().is_some_and(|s| s == "before"))
            .unwrap();
        let raw = std::fs::read_to_string(&before).unwrap();
        let content = crate::edit::text::normalize_newlines(&raw);
        let snippet = std::fs::read_to_string(case.join("lazy.txt")).unwrap();
        let meta: serde_json::Value = std::fs::read(case.join("meta.json"))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        let path = before.file_name().unwrap().to_str().unwrap().to_string();
        let instruction = meta["instruction"].as_str();
        let hints = crate::edit::Hints {
            path: Some(&path),
            instruction,
        };
        let Ok(m) = super::super::merge(&content, &snippet, &hints) else {
            return false;
        };
        let (lines, _) = crate::edit::text::split_lines(&content);
        let index = FileIndex::new(&lines).with_source(Some(&path), &content);
        let body = super::super::body(&snippet, &hints);
        let snip = Snippet::cut(prepare::read(&body, &index));
        let defs = FileDefs::new(&index);
        let said = instruction
            .map(|i| super::super::hints::read(i, &index, &defs))
            .unwrap_or_default();
        let removes: Vec<&str> = snip
            .removals
            .iter()
            .chain(&said.removes)
            .map(String::as_str)
            .collect();
        let (out, _) = crate::edit::text::split_lines(&m.content);
        if let Err(e) = check(&index, &snip, &defs, &removes, &out) {
            panic!("{}: {}", case.display(), e.message);
        }
        true
    }
}
