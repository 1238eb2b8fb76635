//! The heaviest chain of runs in snippet and file order (`chain`), in near-linear time: each
//! run asks only the earlier runs that may beat what it has, not every earlier run.
//!
//! A run `b` follows a run `a` either clear of it (`a` ends at or before `b` starts, in the
//! snippet and in the file: no line trimmed) or overlapping it (`a` holds `b`'s first snippet
//! or file line: `b` loses its first lines). The overlapping ones are few — the runs through
//! one line — and are all asked. The clear ones sit in a tree over their file ends that keeps,
//! for each stretch of it, the heaviest chain ending there, the lowest run index and the
//! runs' diagonals: a stretch is skipped when even its heaviest chain, with the least
//! displacement its diagonals allow, cannot beat (or tie with a lower index) the best link
//! found so far. The scores are the same `f32` sums as a pairwise search computes (a rounded
//! sum never falls when a term grows), so the chain and its ties are the pairwise search's:
//! the first run of the highest score, the run alone before any link that only ties it.

use super::runs::Run;
use crate::edit::lazy::costs::WEIGHTS;

/// A run in a chain: the run, less the first `trim` lines that an earlier run of the chain
/// already covers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Link {
    pub(crate) run: usize,
    pub(crate) trim: usize,
}

/// How many first lines of `b` overlap `a` (in the snippet or the file) when `b` follows
/// `a`; `None` when `b` cannot follow `a` at all.
fn overlap(a: &Run, b: &Run) -> Option<usize> {
    if b.i_end() <= a.i_end() || b.j_end() <= a.j_end() || b.i < a.i || b.j < a.j {
        return None;
    }
    let trim = a
        .i_end()
        .saturating_sub(b.i)
        .max(a.j_end().saturating_sub(b.j));
    (trim < b.len).then_some(trim)
}

/// Of two chains of equal weight, the one whose runs keep the snippet's distances in the
/// file is the reading: a link costs a little for each line the distances differ by.
fn displacement(a: &Run, b: &Run) -> f32 {
    let di = b.i.saturating_sub(a.i_end());
    let dj = b.j.saturating_sub(a.j_end());
    displacement_of(di.abs_diff(dj))
}

/// What a link pays when the snippet's and the file's distances differ by `lines`.
fn displacement_of(lines: usize) -> f32 {
    WEIGHTS.displacement_cost * lines.min(WEIGHTS.displacement_cap) as f32
}

/// A run's diagonal: where its file lines sit against its snippet lines. Between a run and
/// one clear before it, the distances differ by the difference of their diagonals.
fn diagonal(r: &Run) -> i64 {
    r.i as i64 - r.j as i64
}

/// The heaviest chain of runs in snippet and file order (no two sharing a line; a run that
/// overlaps its predecessor loses its first lines), by dynamic programming over the runs.
/// `weight(run, trim)` is what a run trimmed by `trim` lines is worth; `link(a, b)` says
/// whether `b` may follow `a`; only an earlier run in `runs` may come before a run. Returns
/// the chain and its weight.
pub(crate) fn chain(
    runs: &[Run],
    weight: impl Fn(&Run, usize) -> f32,
    link: impl Fn(&Run, &Run) -> bool,
) -> (Vec<Link>, f32) {
    if runs.is_empty() {
        return (Vec::new(), 0.0);
    }
    let mut best: Vec<f32> = vec![0.0; runs.len()];
    let mut prev: Vec<Option<(usize, usize)>> = vec![None; runs.len()];
    let mut earlier = Earlier::new(runs);
    for b in reaching_order(runs) {
        earlier.admit_clear(runs, runs[b].i, &best);
        let rb = &runs[b];
        let alone = weight(rb, 0);
        let mut pick = Pick {
            score: alone,
            from: None,
        };
        if rb.len > 0 {
            let mut consider = |a: usize, pick: &mut Pick| {
                let ra = &runs[a];
                if a >= b {
                    return;
                }
                let Some(trim) = overlap(ra, rb) else {
                    return;
                };
                if link(ra, rb) {
                    pick.offer(best[a] + weight(rb, trim) - displacement(ra, rb), a, trim);
                }
            };
            for a in earlier.overlapping(runs, rb) {
                consider(a, &mut pick);
            }
            earlier.clear_before(rb, alone, &mut pick, &mut consider);
        }
        best[b] = pick.score;
        prev[b] = pick.from;
        earlier.done(runs, b, best[b]);
    }
    trace_back(&best, &prev)
}

/// The heaviest chain's links, first to last, and its score: from the run with the best
/// score (the first of equals), back along `prev` (the run each one follows and the lines it
/// is trimmed by).
fn trace_back(best: &[f32], prev: &[Option<(usize, usize)>]) -> (Vec<Link>, f32) {
    let (mut at, score) =
        best.iter().enumerate().fold(
            (0, f32::MIN),
            |acc, (k, &s)| if s > acc.1 { (k, s) } else { acc },
        );
    let mut out = Vec::new();
    loop {
        match prev[at] {
            Some((a, trim)) => {
                out.push(Link { run: at, trim });
                at = a;
            }
            None => {
                out.push(Link { run: at, trim: 0 });
                break;
            }
        }
    }
    out.reverse();
    (out, score)
}

/// The best way found so far to reach a run: its score, and the run before it with the
/// lines trimmed (`None`: the run alone).
struct Pick {
    score: f32,
    from: Option<(usize, usize)>,
}

impl Pick {
    /// Take the link from run `a` scoring `s` if it beats the pick: a higher score, or the
    /// same score from a lower run (the pairwise search keeps the first of equal scores, and
    /// the run alone before them all).
    fn offer(&mut self, s: f32, a: usize, trim: usize) {
        if s > self.score || (s == self.score && self.from.is_some_and(|(f, _)| a < f)) {
            self.score = s;
            self.from = Some((a, trim));
        }
    }

    /// Whether no link scoring at most `bound` from runs numbered `first` or above can
    /// replace the pick.
    fn holds_against(&self, bound: f32, first: usize) -> bool {
        bound < self.score || (bound == self.score && self.from.is_none_or(|(f, _)| first >= f))
    }
}

/// The runs in snippet then file order (ties in their given order): the order they are
/// reached in, so that every run that may precede a run is reached before it.
fn reaching_order(runs: &[Run]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..runs.len()).collect();
    order.sort_by_key(|&k| (runs[k].i, runs[k].j));
    order
}

/// The runs already reached, as the next run asks them.
struct Earlier {
    /// The reached runs holding the snippet line of the run being reached (their snippet
    /// lines end after its first).
    open: Vec<usize>,
    /// The reached runs by their first file line, to find those holding a file line.
    by_start: Reach,
    /// The runs by the end of their snippet lines, and how many of them are in `clear`.
    by_i_end: Vec<usize>,
    admitted: usize,
    /// The runs ending before the run being reached in the snippet, by their file ends.
    clear: Lead,
}

impl Earlier {
    fn new(runs: &[Run]) -> Earlier {
        let mut by_i_end: Vec<usize> = (0..runs.len()).filter(|&k| runs[k].len > 0).collect();
        by_i_end.sort_by_key(|&k| runs[k].i_end());
        Earlier {
            open: Vec::new(),
            by_start: Reach::new(runs),
            by_i_end,
            admitted: 0,
            clear: Lead::new(runs),
        }
    }

    /// Put into `clear` every run whose snippet lines end at or before line `i` (each was
    /// reached before: it starts before `i`).
    fn admit_clear(&mut self, runs: &[Run], i: usize, best: &[f32]) {
        while let Some(&a) = self.by_i_end.get(self.admitted) {
            if runs[a].i_end() > i {
                break;
            }
            self.clear.admit(a, best[a]);
            self.admitted += 1;
        }
    }

    /// The reached runs holding `b`'s first snippet line or its first file line (some may
    /// be asked twice; `overlap` still decides which may precede `b`).
    fn overlapping(&mut self, runs: &[Run], b: &Run) -> Vec<usize> {
        self.open.retain(|&a| runs[a].i_end() > b.i);
        let mut out = self.open.clone();
        self.by_start.holding(runs, b.j, &mut out);
        out
    }

    /// Offer `pick` every reached run clear before `b` that may beat it, through `consider`;
    /// `alone` is what `b` weighs untrimmed.
    fn clear_before(
        &self,
        b: &Run,
        alone: f32,
        pick: &mut Pick,
        consider: &mut impl FnMut(usize, &mut Pick),
    ) {
        let limit = self.clear.ends.partition_point(|&e| e <= b.j);
        let d = diagonal(b);
        let lead = &self.clear;
        // The most any run under `node` can score following `b`: its heaviest chain plus `b`
        // alone, less the least displacement its diagonals allow.
        let bound = |node: usize| -> f32 {
            let (lo, hi) = lead.diagonals[node];
            let apart = if d < lo {
                lo.saturating_sub(d)
            } else {
                d.saturating_sub(hi).max(0)
            };
            lead.top[node] + alone - displacement_of(usize::try_from(apart).unwrap_or(usize::MAX))
        };
        let mut stack = vec![(1usize, 0usize, lead.size)];
        while let Some((node, lo, hi)) = stack.pop() {
            if lo >= limit
                || lead.top[node] == f32::NEG_INFINITY
                || pick.holds_against(bound(node), lead.first[node])
            {
                continue;
            }
            if node >= lead.size {
                consider(lead.runs[lo], pick);
                continue;
            }
            let mid = (lo + hi) / 2;
            let (l, r) = ((2 * node, lo, mid), (2 * node + 1, mid, hi));
            // The more promising side last, so it is asked first: the higher bound, or of
            // equal bounds the lower runs (a tie goes to the lowest run).
            let (bl, br) = (bound(l.0), bound(r.0));
            if bl > br || (bl == br && lead.first[l.0] < lead.first[r.0]) {
                stack.extend([r, l]);
            } else {
                stack.extend([l, r]);
            }
        }
    }

    /// Run `b` is reached with the chain score `score`.
    fn done(&mut self, runs: &[Run], b: usize, score: f32) {
        if runs[b].len == 0 {
            // It ends where it starts: clear before every run still to come.
            self.clear.admit(b, score);
            return;
        }
        self.open.push(b);
        self.by_start.reached(runs, b);
    }
}

/// A tree over the runs in the order of their first file lines, keeping the furthest file
/// end of the reached runs below each node.
struct Reach {
    size: usize,
    /// The runs in their leaves' order, and their first file lines.
    runs: Vec<usize>,
    starts: Vec<usize>,
    /// Each run's leaf.
    leaf: Vec<usize>,
    /// The furthest file end under each node (0: none reached).
    end: Vec<usize>,
}

impl Reach {
    fn new(runs: &[Run]) -> Reach {
        let mut by: Vec<usize> = (0..runs.len()).collect();
        by.sort_by_key(|&k| (runs[k].j, k));
        let size = runs.len().next_power_of_two();
        let mut leaf = vec![0; runs.len()];
        for (p, &k) in by.iter().enumerate() {
            leaf[k] = p;
        }
        Reach {
            size,
            starts: by.iter().map(|&k| runs[k].j).collect(),
            runs: by,
            leaf,
            end: vec![0; 2 * size],
        }
    }

    fn reached(&mut self, runs: &[Run], k: usize) {
        let mut node = self.size + self.leaf[k];
        let end = runs[k].j_end();
        while node >= 1 && self.end[node] < end {
            self.end[node] = end;
            node /= 2;
        }
    }

    /// Add to `out` the reached runs whose file lines hold line `j`.
    fn holding(&self, runs: &[Run], j: usize, out: &mut Vec<usize>) {
        let limit = self.starts.partition_point(|&s| s <= j);
        let mut stack = vec![(1usize, 0usize, self.size)];
        while let Some((node, lo, hi)) = stack.pop() {
            if lo >= limit || self.end[node] <= j {
                continue;
            }
            if node >= self.size {
                debug_assert!(runs[self.runs[lo]].j <= j);
                out.push(self.runs[lo]);
                continue;
            }
            let mid = (lo + hi) / 2;
            stack.extend([(2 * node, lo, mid), (2 * node + 1, mid, hi)]);
        }
    }
}

/// A tree over the runs in the order of their file ends, keeping for the admitted runs below
/// each node the heaviest chain ending at one and the lowest run index, and for all its runs
/// the range of their diagonals.
struct Lead {
    size: usize,
    /// The runs in their leaves' order, and their file ends.
    runs: Vec<usize>,
    ends: Vec<usize>,
    leaf: Vec<usize>,
    top: Vec<f32>,
    first: Vec<usize>,
    diagonals: Vec<(i64, i64)>,
}

impl Lead {
    fn new(runs: &[Run]) -> Lead {
        let mut by: Vec<usize> = (0..runs.len()).collect();
        by.sort_by_key(|&k| (runs[k].j_end(), k));
        let size = runs.len().next_power_of_two();
        let mut leaf = vec![0; runs.len()];
        let mut diagonals = vec![(i64::MAX, i64::MIN); 2 * size];
        for (p, &k) in by.iter().enumerate() {
            leaf[k] = p;
            let d = diagonal(&runs[k]);
            diagonals[size + p] = (d, d);
        }
        for node in (1..size).rev() {
            let (l, r) = (diagonals[2 * node], diagonals[2 * node + 1]);
            diagonals[node] = (l.0.min(r.0), l.1.max(r.1));
        }
        Lead {
            size,
            ends: by.iter().map(|&k| runs[k].j_end()).collect(),
            runs: by,
            leaf,
            top: vec![f32::NEG_INFINITY; 2 * size],
            first: vec![usize::MAX; 2 * size],
            diagonals,
        }
    }

    fn admit(&mut self, k: usize, score: f32) {
        let mut node = self.size + self.leaf[k];
        self.top[node] = score;
        self.first[node] = k;
        while node > 1 {
            node /= 2;
            let (l, r) = (2 * node, 2 * node + 1);
            self.top[node] = self.top[l].max(self.top[r]);
            self.first[node] = self.first[l].min(self.first[r]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pairwise search `chain` replaced (every run weighed against every earlier one),
    /// kept as it was: the reference the tree's answers must equal, ties included.
    fn pairwise(
        runs: &[Run],
        weight: impl Fn(&Run, usize) -> f32,
        link: impl Fn(&Run, &Run) -> bool,
    ) -> (Vec<Link>, f32) {
        fn overlap(a: &Run, b: &Run) -> Option<usize> {
            if b.i_end() <= a.i_end() || b.j_end() <= a.j_end() || b.i < a.i || b.j < a.j {
                return None;
            }
            let trim = a
                .i_end()
                .saturating_sub(b.i)
                .max(a.j_end().saturating_sub(b.j));
            (trim < b.len).then_some(trim)
        }
        fn displacement(a: &Run, b: &Run) -> f32 {
            let di = b.i.saturating_sub(a.i_end());
            let dj = b.j.saturating_sub(a.j_end());
            WEIGHTS.displacement_cost * di.abs_diff(dj).min(WEIGHTS.displacement_cap) as f32
        }
        if runs.is_empty() {
            return (Vec::new(), 0.0);
        }
        let mut best: Vec<f32> = runs.iter().map(|r| weight(r, 0)).collect();
        let mut prev: Vec<Option<(usize, usize)>> = vec![None; runs.len()];
        for b in 0..runs.len() {
            for a in 0..b {
                let (ra, rb) = (&runs[a], &runs[b]);
                let Some(trim) = overlap(ra, rb) else {
                    continue;
                };
                if !link(ra, rb) {
                    continue;
                }
                let s = best[a] + weight(rb, trim) - displacement(ra, rb);
                if s > best[b] {
                    best[b] = s;
                    prev[b] = Some((a, trim));
                }
            }
        }
        super::trace_back(&best, &prev)
    }

    /// SplitMix64: a seeded stream of numbers, so a failing seed can be run again.
    struct Stream(u64);

    impl Stream {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n.max(1) as u64) as usize
        }
    }

    fn run(i: usize, j: usize, len: usize, weight: f32, changed: bool) -> Run {
        Run {
            i,
            j,
            len,
            weight,
            unique: true,
            changed,
        }
    }

    /// A random set of runs: few lines and few weights, so that runs overlap, cross and tie
    /// often; in snippet order or not (cut runs come out of order); now and then a run
    /// twice, or one of no lines.
    fn random_runs(s: &mut Stream) -> Vec<Run> {
        let n = match s.below(8) {
            0 => s.below(400),
            _ => s.below(70),
        };
        let span = 4 + s.below(60);
        let mut runs = Vec::with_capacity(n);
        for _ in 0..n {
            if !runs.is_empty() && s.below(12) == 0 {
                runs.push(runs[s.below(runs.len())]);
                continue;
            }
            let len = if s.below(40) == 0 { 0 } else { 1 + s.below(5) };
            let weight = [0.3, 0.6, 1.0][s.below(3)];
            runs.push(run(
                s.below(span),
                s.below(span),
                len,
                weight,
                s.below(4) == 0,
            ));
        }
        if s.below(2) == 0 {
            runs.sort_by_key(|r| (r.i, r.j));
            for _ in 0..s.below(4) {
                let (a, b) = (s.below(n), s.below(n));
                if n > 0 {
                    runs.swap(a, b);
                }
            }
        } else if s.below(2) == 0 {
            runs.sort_by_key(|r| (r.i, r.j));
        }
        runs
    }

    #[test]
    fn the_tree_finds_the_pairwise_chain_ties_included() {
        let seeds: u64 = std::env::var("CHAIN_SEEDS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(3000);
        for seed in 0..seeds {
            let mut s = Stream(seed);
            let runs = random_runs(&mut s);
            // Line weights as placement's: a few lengths of line, trivial and blank lines.
            let lines: Vec<f32> = (0..200)
                .map(|_| [1.012, 1.012, 1.03, 1.06, 0.1, 0.02][s.below(6)])
                .collect();
            let by_lines = |r: &Run, trim: usize| -> f32 {
                let w: f32 = lines[r.i + trim..r.i_end()].iter().sum();
                // Some runs are lone lines among new ones, discounted.
                if (r.i * 7 + r.j * 13 + r.len).is_multiple_of(5) {
                    w * 0.01
                } else {
                    w
                }
            };
            let changed_or_lines = |r: &Run, trim: usize| -> f32 {
                if r.changed {
                    r.weight
                } else {
                    by_lines(r, trim)
                }
            };
            let near = |a: &Run, b: &Run| {
                b.j.saturating_sub(a.j_end()) <= b.i.saturating_sub(a.i_end()) + 1
            };
            let salt = s.below(3);
            let some = |a: &Run, b: &Run| !(a.i * 31 + b.j * 17 + salt).is_multiple_of(3);
            let any = |_: &Run, _: &Run| true;
            let cases = [
                (chain(&runs, by_lines, any), pairwise(&runs, by_lines, any)),
                (
                    chain(&runs, changed_or_lines, near),
                    pairwise(&runs, changed_or_lines, near),
                ),
                (
                    chain(&runs, by_lines, some),
                    pairwise(&runs, by_lines, some),
                ),
            ];
            for (k, (got, want)) in cases.into_iter().enumerate() {
                assert_eq!(got.0, want.0, "seed {seed}, case {k}: {runs:?}");
                assert_eq!(got.1.to_bits(), want.1.to_bits(), "seed {seed}, case {k}");
            }
        }
    }

    #[test]
    fn of_equal_links_the_first_run_wins_and_the_run_alone_before_all() {
        let w = |r: &Run, _: usize| r.weight;
        let any = |_: &Run, _: &Run| true;
        let ids = |runs: &[Run]| -> Vec<(usize, usize)> {
            chain(runs, w, any)
                .0
                .iter()
                .map(|l| (runs[l.run].i, runs[l.run].j))
                .collect()
        };
        // Two crossing runs, each three diagonals off the last one's: equal links to it.
        let (a, b, last) = (
            run(0, 3, 1, 1.0, false),
            run(3, 0, 1, 1.0, false),
            run(10, 10, 1, 1.0, false),
        );
        assert_eq!(ids(&[a, b, last]), [(0, 3), (10, 10)]);
        assert_eq!(ids(&[b, a, last]), [(3, 0), (10, 10)]);
        // A link from a run weighing nothing only ties the run alone: the run stays alone.
        let nothing = run(0, 0, 1, 0.0, false);
        let (links, score) = chain(&[nothing, last], w, any);
        assert_eq!(links, [Link { run: 1, trim: 0 }]);
        assert_eq!(score, 1.0);
    }
}
