//! Deletions an edit pins down (docs/DESIGN.md §4): file lines between two lines of one of the
//! edit's stretches that anchor in the file by themselves, with exactly the stretch's lines
//! between them in the result.
//!
//! Blank lines are skipped on every side (models drop and add them). An anchor is a line of a
//! block: stretch lines that match kept file lines one after the other, in the file and in the
//! result alike. A block anchors when it occurs once in the file and once in the result (new
//! code that repeats it would make it occur again), and it does not sit among new code: on one
//! side at least it reaches the edge of the stretch or another of the file's kept lines. A closer line (`}`,
//! `end`) the edit shows after an anchored opener is pinned when it is the first file line
//! after the opener at the opener's depth or shallower, and is the same line.

use std::collections::{HashMap, HashSet};
use std::hash::BuildHasherDefault;

use crate::diff::Change;
use crate::edit::matching::KeyHasher;

/// Maps and sets of line keys (already hashes: not hashed again).
type KeyMap<V> = HashMap<u64, V, BuildHasherDefault<KeyHasher>>;
type KeySet = HashSet<u64, BuildHasherDefault<KeyHasher>>;

/// A stretch line with more places in the result than this anchors only through a rarer
/// neighbour of its block.
const MAX_PLACES: usize = 256;

/// The line comparisons one measure may spend on finding blocks, over all the edit's
/// stretches (extending them and counting where they occur): past it, nothing more anchors
/// (the deletions left count as unseen), so repetitive text costs bounded work.
const BLOCK_BUDGET: usize = 4_000_000;

/// Where a stretch line anchors: its non-blank file line and result line, and whether its
/// block reaches upward (downward) the stretch's edge or the file's own lines.
#[derive(Debug, Clone, Copy)]
struct Anchor {
    x: usize,
    y: usize,
    up: bool,
    down: bool,
}

/// The texts without blank lines, with how kept lines map between them. Where lines are
/// looked up by key (`opos`, `npos`, `kept_keys`), only the keys of the edit's stretches are
/// kept: no other key is ever looked up, so the maps stay as small as the edit.
struct Sides<'a> {
    old: Vec<&'a str>,
    /// The index in `old_lines` of each non-blank old line.
    old_at: Vec<usize>,
    okeys: Vec<u64>,
    nkeys: Vec<u64>,
    /// For each non-blank result line, the non-blank old line it keeps.
    kept_from: Vec<Option<usize>>,
    /// For each non-blank old line, the non-blank result line that keeps it.
    kept_to: Vec<Option<usize>>,
    /// For each non-blank old line, the first later one at its depth or shallower.
    next_shallow: Vec<Option<usize>>,
    opos: KeyMap<Vec<usize>>,
    npos: KeyMap<Vec<usize>>,
    kept_keys: KeySet,
}

/// Lines and their keys ([`crate::edit::matching::line_key`]), one a line.
pub(super) struct Keyed<'a, 'b> {
    pub(super) lines: &'b [&'a str],
    pub(super) keys: &'b [u64],
}

impl<'a> Sides<'a> {
    fn new(
        old: &Keyed<'a, '_>,
        new: &Keyed<'_, '_>,
        changes: &[&Change],
        wanted: &KeySet,
    ) -> Sides<'a> {
        let (old_lines, new_lines) = (old.lines, new.lines);
        let old_new = kept_map(old_lines.len(), new_lines.len(), changes);
        let mut sides = Sides {
            old: Vec::new(),
            old_at: Vec::new(),
            okeys: Vec::new(),
            nkeys: Vec::new(),
            kept_from: Vec::new(),
            kept_to: Vec::new(),
            next_shallow: Vec::new(),
            opos: KeyMap::default(),
            npos: KeyMap::default(),
            kept_keys: KeySet::default(),
        };
        let mut new_np: Vec<Option<usize>> = vec![None; new_lines.len()];
        for (j, l) in new_lines.iter().enumerate() {
            if !l.trim().is_empty() {
                let key = new.keys[j];
                new_np[j] = Some(sides.nkeys.len());
                if wanted.contains(&key) {
                    sides.npos.entry(key).or_default().push(sides.nkeys.len());
                }
                sides.nkeys.push(key);
            }
        }
        sides.kept_from = vec![None; sides.nkeys.len()];
        for (i, l) in old_lines.iter().enumerate() {
            if l.trim().is_empty() {
                continue;
            }
            let x = sides.okeys.len();
            let key = old.keys[i];
            if wanted.contains(&key) {
                sides.opos.entry(key).or_default().push(x);
            }
            sides.okeys.push(key);
            sides.old.push(l);
            sides.old_at.push(i);
            let kept = old_new[i].and_then(|j| new_np[j]);
            sides.kept_to.push(kept);
            if let Some(y) = kept {
                sides.kept_from[y] = Some(x);
                if wanted.contains(&key) {
                    sides.kept_keys.insert(key);
                }
            }
        }
        sides.next_shallow = next_shallow(&sides.old);
        sides
    }
}

/// For each old line, the new line that keeps it (`None`: changed).
fn kept_map(old_len: usize, new_len: usize, changes: &[&Change]) -> Vec<Option<usize>> {
    let mut out = vec![None; old_len];
    let (mut i, mut j) = (0usize, 0usize);
    let keep = |out: &mut Vec<Option<usize>>, i: &mut usize, j: &mut usize, to: usize| {
        while *i < to.min(old_len) && *j < new_len {
            out[*i] = Some(*j);
            *i += 1;
            *j += 1;
        }
    };
    for c in changes {
        keep(&mut out, &mut i, &mut j, c.old.start);
        i = c.old.end;
        j = c.new.end;
    }
    keep(&mut out, &mut i, &mut j, old_len);
    out
}

/// How often `seq` occurs, as a run, in `keys` (whose places by key are `pos`): 0, 1 or 2
/// (two or more, or not known within `budget`).
fn occurrences(keys: &[u64], pos: &KeyMap<Vec<usize>>, seq: &[u64], budget: &mut usize) -> usize {
    let Some((r, places)) = seq
        .iter()
        .enumerate()
        .map(|(r, k)| (r, pos.get(k).map_or(&[][..], Vec::as_slice)))
        .min_by_key(|(_, p)| p.len())
    else {
        return 0;
    };
    let mut n = 0;
    for &p in places {
        // Past the budget, nothing is known to be unique.
        if *budget == 0 {
            return 2;
        }
        let Some(start) = p.checked_sub(r) else {
            continue;
        };
        *budget = budget.saturating_sub(seq.len());
        if keys.get(start..start + seq.len()) == Some(seq) {
            n += 1;
            if n > 1 {
                break;
            }
        }
    }
    n
}

/// The old lines (indices into the whole old text) that lie between two pinned anchors of one
/// of `stretches` (blank lines' keys skipped), replaced there by exactly the stretch's lines.
pub(super) fn pinned(
    old: &Keyed<'_, '_>,
    new: &Keyed<'_, '_>,
    changes: &[&Change],
    stretches: &[Vec<u64>],
) -> HashSet<usize> {
    let wanted: KeySet = stretches.iter().flatten().copied().collect();
    let sides = Sides::new(old, new, changes, &wanted);
    let mut out = HashSet::new();
    let mut budget = BLOCK_BUDGET;
    for s in stretches {
        let anchors = blocks(&sides, s, &mut budget);
        let openers = closers(&sides, s, &anchors);
        spans(&sides, s, &anchors, &openers, &mut out);
    }
    out
}

/// The block of stretch line `t` kept at result line `y`: its first and last stretch lines.
fn block_at(
    sides: &Sides<'_>,
    s: &[u64],
    t: usize,
    y: usize,
    budget: &mut usize,
) -> Option<(usize, usize)> {
    let x = sides.kept_from[y]?;
    let (mut p, mut q) = (t, t);
    while p > 0 {
        let back = t - p + 1;
        let (Some(yy), Some(xx)) = (y.checked_sub(back), x.checked_sub(back)) else {
            break;
        };
        if sides.nkeys[yy] != s[p - 1] || sides.kept_from[yy] != Some(xx) {
            break;
        }
        p -= 1;
    }
    while q + 1 < s.len() {
        let fwd = q + 1 - t;
        let (yy, xx) = (y + fwd, x + fwd);
        if yy >= sides.nkeys.len() || sides.nkeys[yy] != s[q + 1] || sides.kept_from[yy] != Some(xx)
        {
            break;
        }
        q += 1;
    }
    *budget = budget.saturating_sub(q - p + 1);
    Some((p, q))
}

/// Each stretch line's anchor through a block that occurs once in the file and the result.
fn blocks(sides: &Sides<'_>, s: &[u64], budget: &mut usize) -> Vec<Option<Anchor>> {
    let mut anchors: Vec<Option<Anchor>> = vec![None; s.len()];
    for t in 0..s.len() {
        if *budget == 0 {
            break;
        }
        if anchors[t].is_some() {
            continue;
        }
        let places = sides.npos.get(&s[t]).map_or(&[][..], Vec::as_slice);
        if places.len() > MAX_PLACES {
            continue;
        }
        let mut found: Option<(usize, usize, usize)> = None;
        let mut many = false;
        for &y in places {
            if *budget == 0 {
                break;
            }
            let Some((p, q)) = block_at(sides, s, t, y, budget) else {
                continue;
            };
            let seq = &s[p..=q];
            if occurrences(&sides.okeys, &sides.opos, seq, budget) == 1
                && occurrences(&sides.nkeys, &sides.npos, seq, budget) == 1
            {
                many |= found.is_some();
                found = Some((p, q, y - (t - p)));
            }
        }
        let Some((p, q, y0)) = found.filter(|_| !many) else {
            continue;
        };
        let x0 = sides.kept_from[y0].unwrap_or(0);
        let ours = |k: u64| sides.kept_keys.contains(&k);
        let up = p == 0 || ours(s[p - 1]);
        let down = q + 1 == s.len() || ours(s[q + 1]);
        for (k, slot) in anchors[p..=q].iter_mut().enumerate() {
            *slot = Some(Anchor {
                x: x0 + k,
                y: y0 + k,
                up,
                down,
            });
        }
    }
    anchors
}

/// Openers the stretch shows whose closer the result keeps right where the stretch's lines
/// after the opener end: (opener, closer) as non-blank file lines. Only the last line of each block
/// is tried (the lines inside a block are pinned by it already).
fn closers(sides: &Sides<'_>, s: &[u64], anchors: &[Option<Anchor>]) -> Vec<(usize, usize)> {
    let mut pairs = Vec::new();
    for k in 0..s.len() {
        let Some(a) = anchors[k] else { continue };
        if anchors
            .get(k + 1)
            .copied()
            .flatten()
            .is_some_and(|n| n.x == a.x + 1)
        {
            continue;
        }
        let Some(b) = closer_of(sides, a.x) else {
            continue;
        };
        let Some(y) = sides.kept_to[b].filter(|&y| y > a.y) else {
            continue;
        };
        let t = k + (y - a.y);
        if t >= s.len() || sides.nkeys[a.y..=y] != s[k..=t] {
            continue;
        }
        pairs.push((a.x, b));
    }
    pairs
}

/// The closer of the block old line `x` (non-blank index) opens: the first later line at its
/// depth or shallower, when it is a closer at its depth.
fn closer_of(sides: &Sides<'_>, x: usize) -> Option<usize> {
    let b = sides.next_shallow[x]?;
    (indent(sides.old[b]) == indent(sides.old[x]) && is_closer(sides.old[b])).then_some(b)
}

/// For each line, the first later one at its depth or shallower (one pass, a stack).
fn next_shallow(old: &[&str]) -> Vec<Option<usize>> {
    let mut out = vec![None; old.len()];
    let mut open: Vec<usize> = Vec::new();
    for (b, line) in old.iter().enumerate() {
        let depth = indent(line);
        while let Some(&x) = open.last() {
            if indent(old[x]) < depth {
                break;
            }
            out[x] = Some(b);
            open.pop();
        }
        open.push(b);
    }
    out
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// A line that closes a block and opens nothing: `}`, `});`, `end`, `]`.
fn is_closer(line: &str) -> bool {
    let t = line.trim();
    let starts = t.starts_with(['}', ')', ']']) || t == "end" || t.starts_with("end ");
    starts && !t.ends_with(['{', '(', '['])
}

/// Mark the old lines between two anchors of the stretch that pin them: consecutive anchors
/// whose blocks do not sit among new code (each reaches the stretch's edge or more of the
/// file's lines on one side at least), with exactly the stretch's lines between them in the
/// result; and those between an opener and its closer (`openers`, checked already).
fn spans(
    sides: &Sides<'_>,
    s: &[u64],
    anchors: &[Option<Anchor>],
    openers: &[(usize, usize)],
    out: &mut HashSet<usize>,
) {
    let anchored: Vec<usize> = (0..s.len()).filter(|&t| anchors[t].is_some()).collect();
    let pairs = anchored.windows(2).map(|w| (w[0], w[1])).filter(|&(a, b)| {
        [a, b]
            .iter()
            .all(|&t| anchors[t].is_some_and(|x| x.up || x.down))
    });
    for &(a, b) in openers {
        out.extend(sides.old_at[a] + 1..sides.old_at[b]);
    }
    for (t1, t2) in pairs {
        let (Some(a), Some(b)) = (anchors[t1], anchors[t2]) else {
            continue;
        };
        if a.x >= b.x || a.y >= b.y || b.y - a.y != t2 - t1 {
            continue;
        }
        if sides.nkeys[a.y..=b.y] != s[t1..=t2] {
            continue;
        }
        out.extend(sides.old_at[a.x] + 1..sides.old_at[b.x]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::FileDiff;
    use crate::edit::matching::line_key;

    #[test]
    fn only_the_stretches_keys_are_kept_by_place_and_the_pins_are_the_same() {
        // A long file, one line replaced between two lines the edit shows.
        let old: String = (0..2000).map(|i| format!("let v{i} = {i};\n")).collect();
        let new = old.replace("let v1000 = 1000;\n", "let v1000 = 7;\n");
        let diff = FileDiff::compute(&old, &new, 0);
        let changes: Vec<&Change> = diff.hunks.iter().flat_map(|h| &h.changes).collect();
        let (o, n): (Vec<&str>, Vec<&str>) = (old.lines().collect(), new.lines().collect());
        let (okeys, nkeys): (Vec<u64>, Vec<u64>) = (
            o.iter().map(|l| line_key(l)).collect(),
            n.iter().map(|l| line_key(l)).collect(),
        );
        let stretch: Vec<u64> = ["let v999 = 999;", "let v1000 = 7;", "let v1001 = 1001;"]
            .iter()
            .map(|l| line_key(l))
            .collect();
        let (old_side, new_side) = (
            Keyed {
                lines: &o,
                keys: &okeys,
            },
            Keyed {
                lines: &n,
                keys: &nkeys,
            },
        );
        let wanted: KeySet = stretch.iter().copied().collect();
        let sides = Sides::new(&old_side, &new_side, &changes, &wanted);
        // By place: the stretch's keys only, not the file's 2,000.
        assert!(sides.opos.len() <= 3 && sides.npos.len() <= 3);
        assert!(sides.kept_keys.len() <= 3);
        assert_eq!(sides.okeys.len(), 2000);
        let pinned = pinned(&old_side, &new_side, &changes, &[stretch]);
        assert_eq!(pinned, HashSet::from([1000]));
    }
}
