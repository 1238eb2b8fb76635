//! The licence check's judgement of a run of lost lines by its place: where one segment of the
//! snippet shows the result's lines around it, what the snippet's lines on each side say (the
//! anchor blocks: grounded, once in the file, trivial, bare comment marks, or new lines to the
//! segment's edge), and whether the lost lines are changed lines of their own.

use std::collections::HashMap;

use super::diff::{Fill, Kept};
use crate::edit::lazy::costs::WEIGHTS;
use crate::edit::lazy::index::FileIndex;
use crate::edit::lazy::lines;
use crate::edit::lazy::prepare::{Kind, SLine};
use crate::edit::lazy::segments::Snippet;
use crate::edit::lazy::units;

/// Which way from a lost run the snippet's lines are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Toward {
    Above,
    Below,
}

/// The inputs of the check, read once.
pub(super) struct Licences<'a, 'f> {
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
    /// Which file lines the result keeps, and where.
    pub(super) kept: Kept,
    /// Whether each line of the result is blank.
    out_fill: Vec<Fill>,
}

impl<'a, 'f> Licences<'a, 'f> {
    pub(super) fn new(
        file: &'a FileIndex<'f>,
        snippet: &'a Snippet,
        kept: Kept,
        out_fill: Vec<Fill>,
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
            kept,
            out_fill,
        }
    }

    /// The nearest non-blank line of the result past line `o`, toward `toward`.
    fn next_solid(&self, o: usize, toward: Toward) -> Option<usize> {
        let solid = |&k: &usize| self.out_fill[k] == Fill::Solid;
        match toward {
            Toward::Below => (o + 1..self.out_fill.len()).find(solid),
            Toward::Above => (0..o).rev().find(solid),
        }
    }

    /// Whether the snippet licenses the lost lines `run` (ascending, none kept between) by
    /// where it shows the result's lines around them.
    pub(super) fn by_place<S: AsRef<str>>(
        &self,
        run: &[usize],
        out: &[S],
    ) -> std::result::Result<Ground, Why> {
        let (above, below) = self.kept.around(self.file, run);
        let lo = above.and_then(|j| self.kept.at(j)).map_or(0, |k| k + 1);
        let hi = below.and_then(|j| self.kept.at(j)).unwrap_or(out.len());
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
            let up = sp.map_or(Side::Edge, |sp| {
                self.side(s, sp, above.unwrap_or(0), Toward::Above)
            });
            let down = sn.map_or(Side::Edge, |sn| {
                self.side(s, sn, below.unwrap_or(0), Toward::Below)
            });
            let mute = |side: Side| matches!(side, Side::Trivial | Side::Quiet);
            if mute(up)
                && mute(down)
                && !self.all_changed(run, &new_at, out)
                && !self.pinned_here(s, sp, sn, above, below, out)
            {
                // Closers alone license nothing: only changed lines in place, or where the
                // rest of the segment shows the result right here, with a line the file has
                // once among it.
                why = Why::Kept;
                continue;
            }
            match self.licensed(up, down, run, &new_at, out) {
                Ok(g) => return Ok(g),
                Err(w) => why = w,
            }
        }
        Err(why)
    }

    /// Whether segment `s`, read outward from its positions `sp` and `sn` (standing for the
    /// kept file lines `above` and `below`), matches the result line for line to its ends,
    /// and holds a non-trivial line the file has once: then it stands right here, and so
    /// do the closers beside a lost run.
    fn pinned_here<S: AsRef<str>>(
        &self,
        s: usize,
        sp: Option<usize>,
        sn: Option<usize>,
        above: Option<usize>,
        below: Option<usize>,
        out: &[S],
    ) -> bool {
        let seg = &self.segs[s];
        let mut pinned = false;
        let sides = [(sp, above, Toward::Above), (sn, below, Toward::Below)];
        for (at, j, toward) in sides {
            let down = toward == Toward::Below;
            let (Some(mut q), Some(j)) = (at, j) else {
                continue;
            };
            let Some(mut o) = self.kept.at(j) else {
                return false;
            };
            for _ in 0..WEIGHTS.pin_walk {
                pinned |= self.kept.origin(o).is_some_and(|j| {
                    !self.file.is_trivial(j) && self.file.count(self.file.key(j)) == 1
                });
                let next_q = if down {
                    (q + 1 < seg.len()).then_some(q + 1)
                } else {
                    q.checked_sub(1)
                };
                let Some(nq) = next_q else { break };
                let next_o = self.next_solid(o, toward);
                match next_o {
                    Some(no) if lines::facts(out[no].as_ref()).0 == self.lines[seg[nq]].key => {
                        (q, o) = (nq, no);
                    }
                    _ => return false,
                }
            }
        }
        pinned
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
            for &(s, sp) in spots.iter().take(WEIGHTS.spots_tried) {
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
        if let Some(first) = st.between.first()
            && let Some(spots) = self.at.get(first)
        {
            for &(s, p) in spots.iter().take(WEIGHTS.spots_tried) {
                let seg = &self.segs[s];
                if p == 0 && seg.len() == nb && shows(seg, 0) {
                    out.push((s, None, None));
                }
            }
        }
        // New lines from a segment's start to the kept line below.
        if nb > 0
            && let Some(spots) = key(st.below).and_then(|k| self.at.get(&k))
        {
            for &(s, sn) in spots.iter().take(WEIGHTS.spots_tried) {
                if sn == nb && shows(&self.segs[s], 0) {
                    out.push((s, None, Some(sn)));
                }
            }
        }
        out
    }

    /// What the snippet's lines from segment `s`'s position `sp` (file line `j`) away from
    /// the lost run (`toward` it) say about it.
    fn side(&self, s: usize, sp: usize, j: usize, toward: Toward) -> Side {
        let b = self.block(s, sp, j, toward);
        if b.files
            .iter()
            .all(|&j| lines::bare_marker(self.file.lines[j]))
        {
            Side::Quiet
        } else if b.files.iter().all(|&j| self.file.is_trivial(j)) {
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
    ) -> std::result::Result<Ground, Why> {
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
        Ok(
            if [up, down].contains(&Side::Unique) && !self.all_changed(run, new_at, out) {
                Ground::AmongNew
            } else {
                Ground::Sure
            },
        )
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
                && (lines::similarity(lines::compared(old), lines::compared(new))
                    >= WEIGHTS.licence_changed_similarity
                    || (net != 0 && units::depth_change(new).0 == net))
        };
        let mut next = 0;
        let in_order = run.iter().all(|&j| {
            match new_at[next.min(new_at.len())..]
                .iter()
                .take(WEIGHTS.pair_window)
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
    /// snippet's lines from there away from the lost run (`toward` it) that match the
    /// file's non-blank lines contiguously. It is grounded when past it, away from the run,
    /// the segment ends, or a file line stands right there, or new lines are followed by the
    /// line that continues the file.
    fn block(&self, s: usize, sp: usize, j: usize, toward: Toward) -> Block {
        let down = toward == Toward::Below;
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
            if keys.len() >= WEIGHTS.block_lines
                || self.lines[seg[q]].key != self.file.key(self.solid[r])
            {
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
        let next_lost = continuing.is_some_and(|j| self.kept.at(j).is_none());
        let far = self.solid[at.1];
        let grounded = next_lost || self.grounded_past(seg, at.0, far, continuing, toward);
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
        toward: Toward,
    ) -> bool {
        let down = toward == Toward::Below;
        let Some(mut o) = self.kept.at(far) else {
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
            let next_o = self.next_solid(o, toward);
            let (Some(nq), Some(no)) = (next_q, next_o) else {
                return next_q.is_none() && !passed_new;
            };
            if let Some(j) = self.kept.origin(no) {
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
        if at.len() > WEIGHTS.rarest_max {
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

/// How a run of lost lines is licensed by its place (evidence for the merge's margin).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ground {
    /// Between lines the snippet shows grounded (or closers, or changed lines in place).
    Sure,
    /// Beside a block that stands among new lines, once in the file, with a grounded one
    /// across: the new code may merely repeat the file's lines there.
    AmongNew,
}

/// Why the snippet does not license a run of lost lines, as a refusal says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Why {
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
    pub(super) fn says(self) -> &'static str {
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
