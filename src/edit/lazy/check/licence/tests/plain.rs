//! A second, much plainer judge of deletions than the licence check, for the corpus test.
//! It shares no code with the check (nor with placement): its own line diff, its own reading
//! of the snippet's stretches, rules a reader can check at a glance. It is more lenient than
//! the check (it knows nothing of closers, of anchors that occur elsewhere, or of grounding),
//! so a merge it refuses must be one the check refuses too.
//!
//! A lost non-blank file line is allowed when
//! - the snippet has a `-` line with its text (each `-` line allows one);
//! - its text is in the result at least as often as in the file (it moved);
//! - its run of lost lines holds the name a `remove NAME` (or the instruction) deletes;
//! - the snippet is one stretch with no placeholder at either end (the whole file);
//! - or, for its run as a whole, one segment shows the result across the run as one stretch:
//!   the kept line above, the new lines, the kept line below (a side with no kept line is the
//!   file's edge, and the stretch there the snippet's own edge, no placeholder beyond); or the segment starts (ends, or
//!   is made of) the new lines, at least as many as the lost ones (each lost line may be
//!   changed in place at the segment's edge).
//!
//! Of two equal lines side by side, which one a merge lost is the diff's choice: a lost line
//! is slid over a kept line of its own text when that joins it to the lost lines beyond.

use std::collections::HashMap;

use crate::edit::lazy::prepare::Kind;
use crate::edit::lazy::segments::Snippet;

/// The text of a line with its whitespace collapsed (the result is re-indented).
fn norm(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The file lines `out` lost that no rule above allows, as (file line, text), 0-based.
pub(super) fn unlicensed(
    file: &[&str],
    snippet: &Snippet,
    removes: &[String],
    out: &[&str],
) -> Vec<(usize, String)> {
    let f: Vec<String> = file.iter().map(|l| norm(l)).collect();
    let r: Vec<String> = out.iter().map(|l| norm(l)).collect();
    let mut kept = align(&f, &r);
    slide(&f, &mut kept);
    let lost: Vec<usize> = (0..f.len())
        .filter(|&j| kept[j].is_none() && !f[j].is_empty())
        .collect();
    if lost.is_empty() || whole(snippet) {
        return Vec::new();
    }
    let mut minus: HashMap<String, usize> = HashMap::new();
    for l in snippet.lines.iter().filter(|l| l.kind == Kind::Removed) {
        *minus.entry(norm(&l.text)).or_default() += 1;
    }
    let count = |lines: &[String], t: &str| lines.iter().filter(|l| *l == t).count();
    let mut bad = Vec::new();
    for run in runs(&lost, &kept, &f) {
        let named = removes
            .iter()
            .any(|n| run.iter().any(|&j| holds_word(&f[j], n)));
        if named {
            continue;
        }
        let rest: Vec<usize> = run
            .iter()
            .copied()
            .filter(|&j| {
                if let Some(c) = minus.get_mut(f[j].as_str()).filter(|c| **c > 0) {
                    *c -= 1;
                    return false;
                }
                count(&r, &f[j]) < count(&f, &f[j])
            })
            .collect();
        if rest.is_empty() || placed(snippet, &f, &r, &kept, &run, &rest) {
            continue;
        }
        bad.extend(rest.iter().map(|&j| (j, f[j].clone())));
    }
    bad
}

/// Whether the snippet is one stretch with a placeholder at neither end.
fn whole(snippet: &Snippet) -> bool {
    matches!(snippet.segments.as_slice(), [s] if s.gap_before.is_none() && s.gap_after.is_none())
        && snippet.removals.is_empty()
}

/// Whether `text` holds `name` as a whole word.
fn holds_word(text: &str, name: &str) -> bool {
    let word = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    text.split(|c: char| !word(c)).any(|w| w == name)
}

/// For each file line, the result line it is kept as: a longest common subsequence of the
/// non-blank lines (the common head and tail first, then a table over the rest).
fn align(f: &[String], r: &[String]) -> Vec<Option<usize>> {
    let fi: Vec<usize> = (0..f.len()).filter(|&j| !f[j].is_empty()).collect();
    let ri: Vec<usize> = (0..r.len()).filter(|&i| !r[i].is_empty()).collect();
    let mut kept = vec![None; f.len()];
    let (n, m) = (fi.len(), ri.len());
    let mut head = 0;
    while head < n.min(m) && f[fi[head]] == r[ri[head]] {
        kept[fi[head]] = Some(ri[head]);
        head += 1;
    }
    let mut tail = 0;
    while tail < (n - head).min(m - head) && f[fi[n - 1 - tail]] == r[ri[m - 1 - tail]] {
        kept[fi[n - 1 - tail]] = Some(ri[m - 1 - tail]);
        tail += 1;
    }
    let (a, b) = (&fi[head..n - tail], &ri[head..m - tail]);
    // best[x][y]: the longest common subsequence of a[x..] and b[y..].
    let w = b.len() + 1;
    let mut best = vec![0u32; (a.len() + 1) * w];
    for x in (0..a.len()).rev() {
        for y in (0..b.len()).rev() {
            best[x * w + y] = if f[a[x]] == r[b[y]] {
                best[(x + 1) * w + y + 1] + 1
            } else {
                best[(x + 1) * w + y].max(best[x * w + y + 1])
            };
        }
    }
    let (mut x, mut y) = (0, 0);
    while x < a.len() && y < b.len() {
        if f[a[x]] == r[b[y]] {
            kept[a[x]] = Some(b[y]);
            (x, y) = (x + 1, y + 1);
        } else if best[(x + 1) * w + y] >= best[x * w + y + 1] {
            x += 1;
        } else {
            y += 1;
        }
    }
    kept
}

/// Slide each lost line over a kept line of its own text above (below) it when the line
/// beyond that one is lost too: the two runs are one.
fn slide(f: &[String], kept: &mut [Option<usize>]) {
    let solid = |j: &usize| !f[*j].is_empty();
    for j in 0..f.len() {
        if kept[j].is_some() || !solid(&j) {
            continue;
        }
        let up: Vec<usize> = (0..j).rev().filter(solid).take(2).collect();
        let down: Vec<usize> = (j + 1..f.len()).filter(solid).take(2).collect();
        for near in [up, down] {
            if let [k, beyond] = near[..]
                && kept[k].is_some()
                && kept[beyond].is_none()
                && f[k] == f[j]
            {
                kept[j] = kept[k].take();
                break;
            }
        }
    }
}

/// The lost lines cut into runs: no kept non-blank line between two lines of a run.
fn runs(lost: &[usize], kept: &[Option<usize>], f: &[String]) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = Vec::new();
    for &j in lost {
        match out.last_mut() {
            Some(run)
                if (run[run.len() - 1] + 1..j).all(|m| kept[m].is_none() || f[m].is_empty()) =>
            {
                run.push(j)
            }
            _ => out.push(vec![j]),
        }
    }
    out
}

/// Whether one segment shows the result across the run (see the module's header).
fn placed(
    snippet: &Snippet,
    f: &[String],
    r: &[String],
    kept: &[Option<usize>],
    run: &[usize],
    rest: &[usize],
) -> bool {
    let above = (0..run[0]).rev().find_map(|j| kept[j]);
    let below = (run[run.len() - 1] + 1..f.len()).find_map(|j| kept[j]);
    let solid = |range: std::ops::Range<usize>| -> Vec<&str> {
        range
            .filter(|&i| !r[i].is_empty())
            .map(|i| r[i].as_str())
            .collect()
    };
    let new_from = above.map_or(0, |a| a + 1);
    let new_to = below.unwrap_or(r.len());
    let new = solid(new_from..new_to);
    let across = solid(above.unwrap_or(0)..below.map_or(r.len(), |b| b + 1));
    snippet.segments.iter().any(|seg| {
        let shown: Vec<&str> = snippet.lines[seg.lines.clone()]
            .iter()
            .filter(|l| l.kind != Kind::Removed && !l.text.trim().is_empty())
            .map(|l| l.text.trim())
            .collect();
        let shown: Vec<String> = shown.iter().map(|t| norm(t)).collect();
        let shown: Vec<&str> = shown.iter().map(String::as_str).collect();
        let at = |needle: &[&str]| find(&shown, needle);
        let both = match (above, below) {
            (Some(_), Some(_)) => at(&across).is_some(),
            (None, _) => seg.gap_before.is_none() && shown.starts_with(&across),
            (Some(_), None) => seg.gap_after.is_none() && shown.ends_with(&across),
        };
        if both {
            return true;
        }
        // Changed in place at the segment's edge: new lines then the kept line below, or
        // the kept line above then new lines.
        let top = below.is_some() && !new.is_empty() && {
            let mut head = new.clone();
            head.push(across[across.len() - 1]);
            shown.starts_with(&head)
        };
        let bottom = above.is_some() && !new.is_empty() && {
            let mut tail = vec![across[0]];
            tail.extend(&new);
            shown.ends_with(&tail)
        };
        let alone = !new.is_empty() && shown == new;
        // (Each lost line may be the changed version of a new line.)
        (top || bottom || alone) && rest.len() <= new.len()
    })
}

/// The first place `needle` stands in `hay` as a contiguous stretch.
fn find(hay: &[&str], needle: &[&str]) -> Option<usize> {
    if needle.is_empty() {
        return Some(0);
    }
    hay.windows(needle.len()).position(|w| w == needle)
}
