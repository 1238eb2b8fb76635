//! Stage 5a, the licence check (docs/DESIGN.md §5.1 6a): from the file, the snippet and the
//! merged result alone — it shares no code with placement or alignment — every file line the
//! result lost is found again by a line diff, and each must hold a licence the snippet gives:
//! - a `-` line of a diff-style snippet with its text;
//! - a `remove NAME` directive or an instruction's removal of the definition holding it;
//! - a definition of the same name that the snippet shows whole (a same-named replacement);
//! - its text still in the result as often as in the file, with the snippet showing it and a
//!   line kept beside the run (moved: a segment's edge passes over it);
//! - or, for the run of lost lines as a whole, its place in the snippet: one segment shows
//!   the result's lines across the run as one stretch — the file line kept above it, the new
//!   lines, the file line kept below it — and the anchor blocks on each side (the snippet's
//!   lines matching the file's contiguously) allow it: a grounded block (on its far side it
//!   reaches the segment's edge or more of the file's lines, never new code) or a block of
//!   closers does; a block among new lines does only when it occurs once in the file and the
//!   block across is grounded; one that occurs elsewhere never does. Where new lines run to
//!   the segment's edge on one side (or only bare comment marks stand there), each lost line
//!   must also pair, in order, with a new line that is its changed version.
//!
//! These are the rules the placement's grounding stage states (DESIGN §5.1), computed again
//! from the result alone: whatever placement did, nothing they do not allow gets out.
//! A snippet that is the whole file (no placeholder, its first and last lines the file's)
//! licenses everything. Blank lines need no licence.
//!
//! The parts: [`diff`] finds the lost lines; [`place`] judges a run of them by where the
//! snippet shows the result's lines around it; the licences of single lines and the refusal
//! are here.

#[cfg(test)]
use std::cell::Cell;
use std::collections::{HashMap, HashSet};
use std::ops::Range;

use crate::edit::lazy::costs::{LISTED_LINES, WEIGHTS};
use crate::edit::lazy::index::FileIndex;
use crate::edit::lazy::lines;
use crate::edit::lazy::prepare::Kind;
use crate::edit::lazy::segments::Snippet;
use crate::edit::lazy::units::{self, FileDefs};
use crate::edit::{Error, ErrorCode, Result};

mod diff;
mod place;

use self::diff::{Diff, Kept};
use self::place::{Ground, Licences, Why};

#[cfg(test)]
thread_local! {
    /// Tests only: the merges of this thread skip the check (to judge it apart, on what
    /// placement alone makes).
    static SWITCHED_OFF: Cell<bool> = const { Cell::new(false) };
}

/// Refuse the merge `out` of `snippet` into `file` when it loses a file line the snippet
/// does not license; else the lost lines (0-based) that only a block among new lines licenses. `said` are the definitions the instruction deletes (the snippet's own
/// `remove NAME` directives are read from it).
pub(crate) fn check<S: AsRef<str>>(
    file: &FileIndex<'_>,
    snippet: &Snippet,
    defs: &FileDefs<'_>,
    said: &[String],
    out: &[S],
) -> Result<Vec<usize>> {
    #[cfg(test)]
    if SWITCHED_OFF.with(Cell::get) {
        return Ok(Vec::new());
    }
    let diff = Diff::of(file, out);
    let lost: Vec<usize> = (0..file.len())
        .filter(|&j| diff.kept.at(j).is_none() && !file.is_blank(j))
        .collect();
    if lost.is_empty() || whole_file(file, snippet) {
        return Ok(Vec::new());
    }
    // Lines licensed only beside a block among new lines (evidence for the margin).
    let mut among_new = Vec::new();
    let mut per_line = PerLine::new(snippet, &diff.old, &diff.new);
    let mut licences = Licences::new(file, snippet, diff.kept, diff.out_fill);
    // The definitions' lines are read (a parse, where the grammar is built in) only for
    // lines no other licence covers.
    let mut covered: Option<Vec<bool>> = None;
    let mut unlicensed: Vec<(Vec<usize>, Why)> = Vec::new();
    let mut slides = WEIGHTS.slid_runs;
    for run in runs(&lost, &licences.kept, file) {
        // A moved line goes only from where a segment's edge passes over it: new code that
        // merely repeats a line elsewhere moves nothing.
        let beside = beside_shown(file, &run, &licences.kept, &per_line);
        let rest: Vec<usize> = run
            .iter()
            .copied()
            .filter(|&j| {
                let licensed =
                    per_line.minus(file.key(j)) || (beside && per_line.moved(file.key(j)));
                !licensed
            })
            .collect();
        if rest.is_empty() {
            continue;
        }
        let why = match licences.by_place(&rest, out) {
            Ok(ground) => {
                if ground == Ground::AmongNew {
                    among_new.extend_from_slice(&rest);
                }
                continue;
            }
            Err(why) => why,
        };
        if slides > 0 && rest == run && slid(&mut licences, file, &run, out) {
            continue;
        }
        slides = slides.saturating_sub(1);
        let covered = covered.get_or_insert_with(|| {
            let removes: Vec<&str> = snippet
                .removals
                .iter()
                .chain(said)
                .map(String::as_str)
                .collect();
            let mut r = removed_ranges(file, defs, &removes);
            r.extend(replaced_ranges(file, snippet, defs));
            coverage(file.len(), r)
        });
        let left: Vec<usize> = rest.iter().copied().filter(|&j| !covered[j]).collect();
        if left.is_empty() {
            continue;
        }
        let why = if left.len() < rest.len() {
            match licences.by_place(&left, out) {
                Ok(ground) => {
                    if ground == Ground::AmongNew {
                        among_new.extend_from_slice(&left);
                    }
                    continue;
                }
                Err(w) => w,
            }
        } else {
            why
        };
        unlicensed.push((left, why));
    }
    if unlicensed.is_empty() {
        return Ok(among_new);
    }
    Err(refusal(file, &unlicensed))
}

/// Whether a run of lost lines is licensed where the diff could as well have put it: the same
/// lines, moved up or down over lines of the same text (of two equal closers, which one went
/// is the diff's choice, not the merge's).
fn slid<S: AsRef<str>>(
    licences: &mut Licences<'_, '_>,
    file: &FileIndex<'_>,
    run: &[usize],
    out: &[S],
) -> bool {
    let (first, last) = (run[0], run[run.len() - 1]);
    if last + 1 - first != run.len() {
        return false;
    }
    for up in [true, false] {
        // Each step reads one kept line as its twin across the run; undone before the next
        // direction (and before returning).
        let mut handed: Vec<(usize, usize)> = Vec::new();
        let (mut f, mut l) = (first, last);
        let mut licensed = false;
        for _ in 0..WEIGHTS.slide_steps {
            // Up: the line above the run and its last line hold the same text.
            let (gone, back) = if up {
                if f == 0 || file.is_blank(f - 1) || file.key(f - 1) != file.key(l) {
                    break;
                }
                (f - 1, l)
            } else {
                if l + 1 >= file.len() || file.is_blank(l + 1) || file.key(l + 1) != file.key(f) {
                    break;
                }
                (l + 1, f)
            };
            licences.kept.hand_over(gone, back);
            handed.push((gone, back));
            (f, l) = if up { (f - 1, l - 1) } else { (f + 1, l + 1) };
            let shifted: Vec<usize> = (f..=l).collect();
            if licences.by_place(&shifted, out).is_ok() {
                licensed = true;
                break;
            }
        }
        for &(gone, back) in handed.iter().rev() {
            licences.kept.hand_over(back, gone);
        }
        if licensed {
            return true;
        }
    }
    false
}

/// Which file lines the ranges cover, marked once each (sorted and merged first, so that
/// overlapping ranges cost no more than the file's length).
fn coverage(n: usize, mut ranges: Vec<Range<usize>>) -> Vec<bool> {
    ranges.sort_unstable_by_key(|r| (r.start, r.end));
    let mut covered = vec![false; n];
    let mut done = 0;
    for r in ranges {
        for c in covered
            .iter_mut()
            .take(r.end.min(n))
            .skip(r.start.max(done))
        {
            *c = true;
        }
        done = done.max(r.end);
    }
    covered
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
fn runs(lost: &[usize], kept: &Kept, file: &FileIndex<'_>) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = Vec::new();
    let mut last: Option<usize> = None;
    for &j in lost {
        let joined =
            last.is_some_and(|p| (p + 1..j).all(|m| kept.at(m).is_none() || file.is_blank(m)));
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
    shown: HashSet<u64>,
    /// How many lines of each key the result holds, less those of the file kept.
    spare: HashMap<u64, isize>,
}

impl PerLine {
    /// `old` and `new`: the keys of the file's and the result's lines where they differ.
    fn new(snippet: &Snippet, old: &[u64], new: &[u64]) -> PerLine {
        let lines = &snippet.lines;
        let mut minus: HashMap<u64, usize> = HashMap::new();
        for l in lines.iter().filter(|l| !l.blank && l.kind == Kind::Removed) {
            *minus.entry(l.key).or_default() += 1;
        }
        let shown: HashSet<u64> = lines
            .iter()
            .filter(|l| !l.blank && l.kind != Kind::Removed)
            .map(|l| l.key)
            .collect();
        let mut spare: HashMap<u64, isize> = HashMap::new();
        for k in new.iter().filter(|k| shown.contains(k)) {
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

    /// A `-` line with this text, not used yet for another lost line.
    fn minus(&mut self, key: u64) -> bool {
        match self.minus.get_mut(&key).filter(|c| **c > 0) {
            Some(c) => {
                *c -= 1;
                true
            }
            None => false,
        }
    }

    /// Whether a line with this text moved: the snippet shows it, and the result holds it
    /// as often as the file does.
    fn moved(&self, key: u64) -> bool {
        self.shown.contains(&key) && self.spare.get(&key).is_some_and(|&c| c >= 0)
    }

    /// Whether the snippet shows this text (not as a `-` line).
    fn shows(&self, key: u64) -> bool {
        self.shown.contains(&key)
    }
}

/// Whether the snippet shows a file line kept right beside a run of lost lines (the nearest
/// non-blank one above or below): a segment's edge passes over the run there.
fn beside_shown(file: &FileIndex<'_>, run: &[usize], kept: &Kept, per_line: &PerLine) -> bool {
    let (above, below) = kept.around(file, run);
    [above, below]
        .into_iter()
        .flatten()
        .any(|j| per_line.shows(file.key(j)))
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
            if units::snippet_unit_end(lines, opener, end, seg.gap_after, seg.follows()).is_none() {
                continue;
            }
            for name in names {
                let headers = defs.headers(name);
                for &h in headers.iter() {
                    if headers.len() == 1 {
                        let (a, b) = units::file_extent_attached(file, h, name);
                        out.push(a..b);
                    }
                }
            }
        }
    }
    out
}

fn refusal(file: &FileIndex<'_>, runs: &[(Vec<usize>, Why)]) -> Error {
    let total: usize = runs.iter().map(|(r, _)| r.len()).sum();
    let mut listed: Vec<String> = Vec::new();
    let mut room = LISTED_LINES;
    for (run, why) in runs {
        if room == 0 {
            break;
        }
        let shown: Vec<String> = run
            .iter()
            .take(room)
            .map(|&j| format!("  {}: {}", j + 1, lines::quoted(file.lines[j])))
            .collect();
        room -= shown.len();
        listed.push(format!("{}\n  ({})", shown.join("\n"), why.says()));
    }
    let listed_lines = LISTED_LINES - room;
    let more = if total > listed_lines {
        format!("\n  … and {} more", total - listed_lines)
    } else {
        String::new()
    };
    Error::new(
        ErrorCode::NeedsMoreContext,
        format!(
            "the merge would delete {total} file line(s) the snippet does not license:\n{}{more}\n\
             To delete them, show the unchanged lines right above and below them with nothing \
             but the new lines between, send them as `-` lines, or add a `remove NAME` line for \
             a definition; to keep them, put a placeholder where they are",
            listed.join("\n"),
        ),
    )
}

#[cfg(test)]
mod tests;
