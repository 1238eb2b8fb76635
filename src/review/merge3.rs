//! A three-way line merge bounded in time (docs/DESIGN.md §7, bounded merges), for undo and
//! rebase-on-accept: `similar`'s `TextMerge` regions, computed from the same two diffs
//! (base → ours, base → theirs, Myers, lines as `similar` splits them) walked together, but
//! each line position looked up by binary search instead of a scan of every edit, so the
//! merge costs the two diffs plus O(regions · log edits) — `TextMerge` scanned the edits for
//! every region, quadratic in the regions. Each diff searches under a deadline; past it the
//! diff is coarser (larger edits), which can only turn a clean merge into a conflict, never
//! merge what the exact diff would not.

use std::ops::Range;
use std::time::{Duration, Instant};

use similar::{Algorithm, DiffOp, DiffableStr, capture_diff_deadline};

/// How long each of the two diffs may search for the smallest difference.
const DIFF_DEADLINE: Duration = Duration::from_millis(500);

/// How one region was resolved (as `similar::MergeResolution`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Resolution {
    Unchanged,
    Ours,
    Theirs,
    Both,
    Conflict,
}

/// One region of the merge: its lines in each of the three versions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Region {
    resolution: Resolution,
    pub base: Range<usize>,
    pub ours: Range<usize>,
    pub theirs: Range<usize>,
}

/// A three-way merge of `base` with the changes to `ours` and to `theirs`.
pub(crate) struct Merge<'a> {
    base: Vec<&'a str>,
    ours: Vec<&'a str>,
    theirs: Vec<&'a str>,
    regions: Vec<Region>,
}

/// A run of changed lines of one side: its lines of base and of the side.
#[derive(Debug, Clone)]
struct Edit {
    base: Range<usize>,
    side: Range<usize>,
}

impl<'a> Merge<'a> {
    /// Merges the change base → ours with the change base → theirs, line by line.
    pub(crate) fn lines(base: &'a str, ours: &'a str, theirs: &'a str) -> Self {
        Merge::lines_within(base, ours, theirs, DIFF_DEADLINE)
    }

    /// [`Merge::lines`] with each diff searching for at most `limit`.
    fn lines_within(base: &'a str, ours: &'a str, theirs: &'a str, limit: Duration) -> Self {
        let (base, ours, theirs) = (
            base.tokenize_lines(),
            ours.tokenize_lines(),
            theirs.tokenize_lines(),
        );
        let diff = |side: &[&str]| {
            let deadline = Instant::now() + limit;
            let ops = capture_diff_deadline(
                Algorithm::Myers,
                &base[..],
                0..base.len(),
                side,
                0..side.len(),
                Some(deadline),
            );
            edits(&ops)
        };
        let (ours_edits, theirs_edits) = (diff(&ours), diff(&theirs));
        let mut merge = Merge {
            base,
            ours,
            theirs,
            regions: Vec::new(),
        };
        merge.regions = merge.build(&ours_edits, &theirs_edits);
        merge
    }

    /// The first region both sides changed differently.
    pub(crate) fn first_conflict(&self) -> Option<&Region> {
        self.regions
            .iter()
            .find(|r| r.resolution == Resolution::Conflict)
    }

    /// A line of each version (with its line ending).
    pub(crate) fn base_line(&self, i: usize) -> Option<&'a str> {
        self.base.get(i).copied()
    }
    pub(crate) fn ours_line(&self, i: usize) -> Option<&'a str> {
        self.ours.get(i).copied()
    }
    pub(crate) fn theirs_line(&self, i: usize) -> Option<&'a str> {
        self.theirs.get(i).copied()
    }

    /// The merged text, when no region conflicts.
    pub(crate) fn merged(&self) -> Option<String> {
        let mut out = String::new();
        for r in &self.regions {
            let lines = match r.resolution {
                Resolution::Conflict => return None,
                Resolution::Theirs => &self.theirs[r.theirs.clone()],
                _ => &self.ours[r.ours.clone()],
            };
            lines.iter().for_each(|l| out.push_str(l));
        }
        Some(out)
    }

    /// The regions, in order (similar's `build_regions`, with lookups by binary search).
    fn build(&self, ours: &[Edit], theirs: &[Edit]) -> Vec<Region> {
        let mut regions = Vec::new();
        let (mut o, mut t, mut cursor) = (0, 0, 0);
        loop {
            let (resolution, edit) = match (ours.get(o), theirs.get(t)) {
                (Some(a), Some(b)) if touch(&a.base, &b.base) => {
                    let start = a.base.start.min(b.base.start);
                    self.unchanged(&mut regions, cursor, start, ours, theirs);
                    let (region, next) = self.cluster(ours, theirs, o, t);
                    cursor = cursor.max(region.base.end);
                    (o, t) = next;
                    regions.push(region);
                    continue;
                }
                (Some(a), Some(b)) if is_before(a, b) => (Resolution::Ours, a),
                (Some(_), Some(b)) => (Resolution::Theirs, b),
                (Some(a), None) => (Resolution::Ours, a),
                (None, Some(b)) => (Resolution::Theirs, b),
                (None, None) => break,
            };
            self.unchanged(&mut regions, cursor, edit.base.start, ours, theirs);
            let base = edit.base.clone();
            let (ours_range, theirs_range) = if resolution == Resolution::Ours {
                o += 1;
                (edit.side.clone(), project(theirs, base.clone()))
            } else {
                t += 1;
                (project(ours, base.clone()), edit.side.clone())
            };
            cursor = cursor.max(base.end);
            regions.push(Region {
                resolution,
                base,
                ours: ours_range,
                theirs: theirs_range,
            });
        }
        self.unchanged(&mut regions, cursor, self.base.len(), ours, theirs);
        regions
    }

    /// The region of the edits of both sides that overlap, starting at `ours[o]` and
    /// `theirs[t]`, and the indices of the first edits after it.
    fn cluster(
        &self,
        ours: &[Edit],
        theirs: &[Edit],
        o: usize,
        t: usize,
    ) -> (Region, (usize, usize)) {
        let (mut start, mut end) = (
            ours[o].base.start.min(theirs[t].base.start),
            ours[o].base.end.max(theirs[t].base.end),
        );
        let (mut oi, mut ti) = (o + 1, t + 1);
        loop {
            let mut changed = false;
            for (edits, i) in [(ours, &mut oi), (theirs, &mut ti)] {
                if let Some(e) = edits.get(*i).filter(|e| touch(&e.base, &(start..end))) {
                    start = start.min(e.base.start);
                    end = end.max(e.base.end);
                    *i += 1;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        let base = start..end;
        let ours_range = cluster_side(ours, o..oi, base.clone());
        let theirs_range = cluster_side(theirs, t..ti, base.clone());
        let same = self.ours[ours_range.clone()] == self.theirs[theirs_range.clone()];
        let resolution = if same {
            Resolution::Both
        } else {
            Resolution::Conflict
        };
        let region = Region {
            resolution,
            base,
            ours: ours_range,
            theirs: theirs_range,
        };
        (region, (oi, ti))
    }

    /// Pushes the unchanged lines `start..end` of base, if any.
    fn unchanged(
        &self,
        regions: &mut Vec<Region>,
        start: usize,
        end: usize,
        ours: &[Edit],
        theirs: &[Edit],
    ) {
        if start < end {
            regions.push(Region {
                resolution: Resolution::Unchanged,
                base: start..end,
                ours: project(ours, start..end),
                theirs: project(theirs, start..end),
            });
        }
    }
}

/// The runs of changed lines of a diff, adjacent runs joined.
fn edits(ops: &[DiffOp]) -> Vec<Edit> {
    let mut edits: Vec<Edit> = Vec::new();
    for op in ops {
        if matches!(op, DiffOp::Equal { .. }) {
            continue;
        }
        let (base, side) = (op.old_range(), op.new_range());
        match edits.last_mut() {
            Some(last) if last.base.end == base.start && last.side.end == side.start => {
                last.base.end = base.end;
                last.side.end = side.end;
            }
            _ => edits.push(Edit { base, side }),
        }
    }
    edits
}

/// Changes that merely touch at a base boundary belong to one region (as in xdiff).
fn touch(a: &Range<usize>, b: &Range<usize>) -> bool {
    a.start <= b.end && b.start <= a.end
}

/// At one boundary an insertion comes before an edit that consumes base lines.
fn is_before(a: &Edit, b: &Edit) -> bool {
    if a.base.start != b.base.start {
        a.base.start < b.base.start
    } else {
        a.base.is_empty() && !b.base.is_empty()
    }
}

/// Where base line boundary `position` falls in the side, before any insertion there. The
/// edits are in order and apart (an unchanged line between any two), so the first edit that
/// ends after `position` or starts at it is found by binary search.
fn boundary_before(edits: &[Edit], position: usize) -> usize {
    let i = edits.partition_point(|e| !(position <= e.base.start || position < e.base.end));
    let (base_cursor, side_cursor) = match i.checked_sub(1).map(|p| &edits[p]) {
        Some(prev) => (prev.base.end, prev.side.end),
        None => (0, 0),
    };
    match edits.get(i) {
        Some(e) if position > e.base.start => e.side.start,
        _ => side_cursor + position - base_cursor,
    }
}

/// Where `position` falls in the side, after an insertion there.
fn boundary_after_insertions(edits: &[Edit], position: usize) -> usize {
    let mapped = boundary_before(edits, position);
    let i = edits.partition_point(|e| e.base.start < position);
    match edits.get(i) {
        Some(e) if e.base.start == position && e.base.is_empty() => mapped.max(e.side.end),
        _ => mapped,
    }
}

/// The side's lines for base lines `range` that it left unchanged.
fn project(edits: &[Edit], range: Range<usize>) -> Range<usize> {
    if range.is_empty() {
        let position = boundary_before(edits, range.start);
        position..position
    } else {
        boundary_after_insertions(edits, range.start)..boundary_before(edits, range.end)
    }
}

/// The side's lines of a region both changed: with the insertions at its edges.
fn cluster_side(edits: &[Edit], selected: Range<usize>, base: Range<usize>) -> Range<usize> {
    if !base.is_empty() {
        return boundary_before(edits, base.start)..boundary_after_insertions(edits, base.end);
    }
    let selected = &edits[selected];
    match (selected.first(), selected.last()) {
        (Some(first), Some(last)) => first.side.start..last.side.end,
        _ => {
            let position = boundary_before(edits, base.start);
            position..position
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What `similar::TextMerge` makes of the three: its merged text or its first conflict.
    fn similar_merge(base: &str, ours: &str, theirs: &str) -> Result<String, Region> {
        let m = similar::TextMerge::from_lines(base, ours, theirs);
        match m.conflicts().next() {
            Some(c) => Err(Region {
                resolution: Resolution::Conflict,
                base: c.base_range(),
                ours: c.ours_range(),
                theirs: c.theirs_range(),
            }),
            None => Ok(m.to_string()),
        }
    }

    fn this_merge(base: &str, ours: &str, theirs: &str) -> Result<String, Region> {
        let m = Merge::lines(base, ours, theirs);
        match m.first_conflict() {
            Some(c) => Err(c.clone()),
            None => Ok(m.merged().unwrap()),
        }
    }

    fn text() -> impl Strategy<Value = String> {
        prop::collection::vec(
            prop::sample::select(vec!["a\n", "b\n", "c\n", "d\n", "e", "\r\n"]),
            0..14,
        )
        .prop_map(|v| v.concat())
    }

    proptest! {
        #[test]
        fn merges_as_similar_does(base in text(), ours in text(), theirs in text()) {
            prop_assert_eq!(this_merge(&base, &ours, &theirs), similar_merge(&base, &ours, &theirs));
        }

        #[test]
        fn merges_near_edits_as_similar_does(base in text(), ours in text(), theirs in text()) {
            // Descendants near the base, where most regions are clean.
            let ours = format!("{base}{ours}");
            let theirs = format!("{theirs}{base}");
            prop_assert_eq!(this_merge(&base, &ours, &theirs), similar_merge(&base, &ours, &theirs));
        }
    }

    /// Many small edits of each side merge cleanly (the time it takes is the bench's:
    /// `cargo bench --bench merges`; here the diffs get all the time a loaded machine needs,
    /// so a slow run never reads as a conflict).
    #[test]
    fn many_small_edits_merge_in_one_pass() {
        let base: String = (0..100_000).map(|i| format!("line {i}\n")).collect();
        let ours = base.replace("0\n", "0 ours\n");
        let theirs = base.replace("5\n", "5 theirs\n");
        let merged = Merge::lines_within(&base, &ours, &theirs, Duration::from_secs(600))
            .merged()
            .unwrap();
        assert_eq!(merged, ours.replace("5\n", "5 theirs\n"));
    }
}
