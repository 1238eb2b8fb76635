//! Runs: stretches of consecutive segment lines equal to consecutive file lines. A run is
//! *unique* when its lines occur together nowhere else in the file and hold a non-trivial
//! line; the lines of unique runs are the sure anchors of a placement. Runs are seeded from
//! non-trivial lines that occur at most `WEIGHTS.max_seed_occurrences` times and extended through
//! any equal lines; a trivial line extends a run only at the run's own indentation offset (a
//! `}` four columns deeper closes another block).

use std::collections::HashMap;
use std::ops::Range;

use crate::edit::lazy::costs::WEIGHTS;
use crate::edit::lazy::index::FileIndex;
use crate::edit::lazy::prepare::SLine;

pub(crate) use super::chain::{Link, chain};

/// A run of matching lines: segment lines `i..i + len` equal file lines `j..j + len`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Run {
    pub(crate) i: usize,
    pub(crate) j: usize,
    pub(crate) len: usize,
    /// Non-trivial lines, plus a little for trivial ones: what the run says about the place.
    pub(crate) weight: f32,
    /// Whether the run's lines occur together only here and hold a non-trivial line.
    pub(crate) unique: bool,
    /// A one-line "run" of a changed line and its old version (`weight` is the similarity).
    pub(crate) changed: bool,
}

impl Run {
    /// A one-line run, the place of a single pinned line.
    pub(crate) fn at(i: usize, j: usize) -> Run {
        Run {
            i,
            j,
            len: 1,
            weight: 1.0,
            unique: true,
            changed: false,
        }
    }

    /// One past the run's last segment line.
    pub(crate) fn i_end(&self) -> usize {
        self.i + self.len
    }

    /// One past the run's last file line.
    pub(crate) fn j_end(&self) -> usize {
        self.j + self.len
    }
}

/// Whether snippet line `s` may be file line `j` when the run's lines sit `delta` columns
/// deeper in the file than in the snippet.
pub(crate) fn same(s: &SLine, file: &FileIndex<'_>, j: usize, delta: i64) -> bool {
    s.is_old()
        && s.key == file.key(j)
        && (s.blank || !s.trivial || i64::from(file.indent(j)) - i64::from(s.indent) == delta)
}

/// The weight of a line in a run.
pub(crate) fn line_weight(s: &SLine) -> f32 {
    if s.blank {
        WEIGHTS.blank_weight
    } else if s.trivial {
        WEIGHTS.trivial_weight
    } else {
        // A longer line says more: of two otherwise equal anchors, the longer wins.
        let len = s.text.bytes().filter(|b| !b.is_ascii_whitespace()).count();
        1.0 + WEIGHTS.length_weight * len.min(WEIGHTS.length_cap) as f32
    }
}

/// Every maximal run of the segment `seg` of `lines` against the file.
pub(crate) fn find(lines: &[SLine], seg: Range<usize>, file: &FileIndex<'_>) -> Vec<Run> {
    let mut runs = Vec::new();
    // The end of the last run found on each diagonal (j - i), so a run is walked once.
    let mut covered: HashMap<i64, usize> = HashMap::new();
    for i in seg.clone() {
        let l = &lines[i];
        if !l.is_old() || l.trivial || l.count == 0 || l.count > WEIGHTS.max_seed_occurrences {
            continue;
        }
        for &j in file.positions(l.key) {
            let j = j as usize;
            let diag = j as i64 - i as i64;
            if covered.get(&diag).is_some_and(|&end| i < end) {
                continue;
            }
            let delta = i64::from(file.indent(j)) - i64::from(l.indent);
            let (mut i0, mut j0) = (i, j);
            while i0 > seg.start && j0 > 0 && same(&lines[i0 - 1], file, j0 - 1, delta) {
                i0 -= 1;
                j0 -= 1;
            }
            let (mut i1, mut j1) = (i + 1, j + 1);
            while i1 < seg.end && j1 < file.len() && same(&lines[i1], file, j1, delta) {
                i1 += 1;
                j1 += 1;
            }
            covered.insert(diag, i1);
            // Trivial lines at a run's ends (blank lines, braces) belong to whichever side the
            // edge alignment gives them — new code's or the context's — not to the run.
            while i0 < i1 && lines[i0].trivial {
                i0 += 1;
                j0 += 1;
            }
            while i1 > i0 && lines[i1 - 1].trivial {
                i1 -= 1;
            }
            let weight = lines[i0..i1].iter().map(line_weight).sum();
            runs.push(Run {
                i: i0,
                j: j0,
                len: i1 - i0,
                weight,
                unique: false,
                changed: false,
            });
        }
    }
    for r in &mut runs {
        r.unique = is_unique(lines, r, file);
    }
    runs.sort_by_key(|r| (r.i, r.j));
    runs
}

/// The part of `run` on snippet lines `part`, without trivial lines at its ends, its weight
/// and uniqueness computed anew; `None` when nothing of substance is left.
pub(crate) fn shrink(
    lines: &[SLine],
    run: &Run,
    part: Range<usize>,
    file: &FileIndex<'_>,
) -> Option<Run> {
    let (mut a, mut b) = (part.start.max(run.i), part.end.min(run.i_end()));
    while a < b && lines[a].trivial {
        a += 1;
    }
    while b > a && lines[b - 1].trivial {
        b -= 1;
    }
    if a >= b {
        return None;
    }
    if (a, b) == (run.i, run.i_end()) {
        return Some(*run);
    }
    let mut r = Run {
        i: a,
        j: run.j + (a - run.i),
        len: b - a,
        weight: lines[a..b].iter().map(line_weight).sum(),
        unique: false,
        changed: run.changed,
    };
    r.unique = is_unique(lines, &r, file);
    Some(r)
}

/// Whether the run's lines occur together only at its place (and hold a non-trivial line).
fn is_unique(lines: &[SLine], run: &Run, file: &FileIndex<'_>) -> bool {
    // A short fragment (`.Should()`, `end)`) is once in the file by chance.
    let chars: usize = lines[run.i..run.i_end()]
        .iter()
        .filter(|l| !l.trivial)
        .map(|l| l.text.bytes().filter(|b| !b.is_ascii_whitespace()).count())
        .sum();
    if chars < WEIGHTS.unique_min_chars {
        return false;
    }
    let Some(rarest) = (run.i..run.i_end())
        .filter(|&i| !lines[i].trivial)
        .min_by_key(|&i| lines[i].count)
    else {
        return false;
    };
    let count = lines[rarest].count;
    if count == 1 {
        return true;
    }
    if count > WEIGHTS.max_seed_occurrences {
        return false;
    }
    let offset = rarest - run.i;
    file.positions(lines[rarest].key).iter().all(|&p| {
        let p = p as usize;
        if p == run.j + offset || p < offset || p - offset + run.len > file.len() {
            return true;
        }
        let start = p - offset;
        let delta = i64::from(file.indent(p)) - i64::from(lines[rarest].indent);
        !(0..run.len).all(|k| same(&lines[run.i + k], file, start + k, delta))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edit::lazy::prepare;

    fn seg_lines(snippet: &str, index: &FileIndex<'_>) -> Vec<SLine> {
        prepare::read(snippet, index)
            .pieces
            .into_iter()
            .filter_map(|p| match p {
                prepare::Piece::Line(l) => Some(l),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_run_is_unique_when_its_lines_occur_together_once() {
        let file = ["alpha = 1", "beta = 2", "}", "alpha = 1", "gamma = 3", "}"];
        let index = FileIndex::new(&file);
        let lines = seg_lines("alpha = 1\ngamma = 3\n}\n", &index);
        let runs = find(&lines, 0..lines.len(), &index);
        let unique: Vec<(usize, usize, usize)> = runs
            .iter()
            .filter(|r| r.unique)
            .map(|r| (r.i, r.j, r.len))
            .collect();
        // The run `alpha = 1`, `gamma = 3`, `}` loses its trivial last line: a closing brace says
        // nothing of the place.
        assert_eq!(unique, [(0, 3, 2)]);
        assert!(runs.iter().any(|r| !r.unique && r.j == 0 && r.len == 1));
        // A fragment this short is once in a file by chance: not unique.
        let short = ["a = 1", "b = 2", "c = 3"];
        let index = FileIndex::new(&short);
        let lines = seg_lines("b = 2\n", &index);
        assert!(
            find(&lines, 0..lines.len(), &index)
                .iter()
                .all(|r| !r.unique)
        );
    }

    #[test]
    fn a_closing_brace_at_another_depth_ends_a_run() {
        let file = ["if a {", "    x()", "    }", "}"];
        let index = FileIndex::new(&file);
        let lines = seg_lines("if a {\n    x()\n}\n", &index);
        let runs = find(&lines, 0..lines.len(), &index);
        assert_eq!(runs[0].len, 2);
    }
}
