//! The one-pass alignment of a whole snippet against a whole file (DESIGN §5.1, step 3): a
//! diff in which each placeholder is a wildcard that keeps any run of file lines.
//!
//! Scores (higher is better):
//! - a snippet line equal to a file line (ignoring whitespace and look-alikes) matches it and
//!   earns its rarity: `1/k` for a line that occurs `k` times, little for trivial lines;
//! - a snippet line that stands verbatim in the file costs more to insert as new code than the
//!   match earns, so file lines between two anchors that are adjacent in the snippet are
//!   deleted rather than the anchor duplicated;
//! - deleting a file line costs a little, keeping it under a placeholder nothing (a tiny amount
//!   under an implicit edge placeholder, so the strict reading wins when it needs no deletion);
//! - a changed line may pair with a similar file line (substitution), so an edit replaces its
//!   old version instead of being added beside it.

use std::collections::HashMap;

use super::snippet::{Item, key};

/// One step of an alignment. `i` indexes snippet items, `j` file lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// File line kept under a placeholder.
    Keep(usize),
    /// Snippet line matches file line.
    Match(usize, usize),
    /// Snippet line replaces a similar file line.
    Subst(usize, usize),
    /// Snippet line is new.
    Insert(usize),
    /// File line is removed.
    Delete(usize),
    /// A placeholder (or directive) ends.
    Leave(usize),
}

const BLANK_MATCH: f32 = 0.05;
const TRIVIAL_MATCH: f32 = 0.1;
const NEW_LINE: f32 = 0.1;
const BLANK_NEW: f32 = 0.05;
const LEADING_BLANK_NEW: f32 = 0.5;
const TRIVIAL_EDGE_PREMIUM: f32 = 0.4;
/// `edge_distance` marker of blank lines that start a segment right after a placeholder.
const LEADING_BLANK: usize = usize::MAX - 1;
const ANCHOR_PREMIUM: f32 = 0.2;
/// Extra price of inserting a copy of a file line, by its distance (in non-blank lines) from
/// the nearest end of its segment.
const EDGE_PREMIUM: [f32; 4] = [3.0, 1.0, 0.4, 0.0];
const DEL_LINE: f32 = 0.012;
const DEL_TRIVIAL: f32 = 0.006;
const DEL_BLANK: f32 = 0.003;
const IMPLICIT_KEEP: f32 = 0.0005;
const DEL_OPEN_COST: f32 = 0.3;
const EXACT_BONUS: f32 = 0.001;
const SUBST_MIN_SIM: f32 = 0.75;
const NEG: f32 = -1.0e30;

/// Lines whose content says little about where they are.
pub fn is_trivial(key: &str) -> bool {
    let alnum = key.chars().filter(|c| c.is_alphanumeric()).count();
    alnum <= 3
        || matches!(
            key,
            "else" | "else{" | "}else{" | "end" | "pass" | "break" | "break;" | "continue"
                | "continue;" | "return" | "return;" | "returnthis;" | "returntrue;"
                | "returnfalse;" | "returnnull;" | "returnnil" | "returnerr" | "returnTrue"
                | "returnFalse" | "returnNone" | "default:" | "try:" | "try{" | "}finally{"
                | "finally:" | "done" | "esac" | "else:" | "endif" | "})" | "});" | "fi"
        )
}

/// Per-line facts used by the alignment.
#[derive(Debug, Clone)]
pub struct LineFacts {
    /// Id of the whitespace-free key.
    pub id: u32,
    /// Blank line.
    pub blank: bool,
    /// Trivial line (`}`, `end`, `return;` …).
    pub trivial: bool,
    /// 64-bit token signature for fast similarity filtering.
    sig: u64,
    /// Token hashes, sorted.
    tokens: Vec<u32>,
}

fn tokens(line: &str) -> Vec<u32> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let flush = |cur: &mut String, out: &mut Vec<u32>| {
        if !cur.is_empty() {
            out.push(hash(cur.as_bytes()));
            cur.clear();
        }
    };
    for c in line.chars() {
        if c.is_alphanumeric() || c == '_' {
            cur.push(c);
        } else {
            flush(&mut cur, &mut out);
            if !c.is_whitespace() {
                let mut b = [0u8; 4];
                out.push(hash(c.encode_utf8(&mut b).as_bytes()));
            }
        }
    }
    flush(&mut cur, &mut out);
    out.sort_unstable();
    out
}

fn hash(bytes: &[u8]) -> u32 {
    // FNV-1a
    let mut h: u32 = 0x811c_9dc5;
    for &b in bytes {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

/// Dice similarity of two sorted token lists.
fn dice(a: &[u32], b: &[u32]) -> f32 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let (mut i, mut j, mut common) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
        }
    }
    2.0 * common as f32 / (a.len() + b.len()) as f32
}

/// Facts about the file and snippet lines, with shared key ids.
pub struct Facts {
    /// One per file line.
    pub file: Vec<LineFacts>,
    /// One per snippet item (placeholders get a dummy entry).
    pub items: Vec<LineFacts>,
    /// How often each key id occurs in the file.
    pub counts: Vec<u32>,
    /// Snippet items pinned to file lines: non-trivial lines unique in both the file and the
    /// snippet whose order agrees with every other such line (patience diff's anchors).
    pub pin_of_item: Vec<Option<usize>>,
    /// The inverse of `pin_of_item`.
    pub pinned_file: Vec<bool>,
    /// For each snippet item, how many non-blank code lines separate it from the nearest
    /// end of its segment.
    edge_distance: Vec<usize>,
    /// Blank snippet lines that end a segment right before a placeholder: often a visual
    /// separator, so they match a blank file line when there is one and are otherwise
    /// dropped, never inserted.
    pub soft: Vec<bool>,
}

impl Facts {
    /// Compute facts for `file` and `items`.
    pub fn new(file: &[&str], items: &[Item]) -> Facts {
        let mut ids: HashMap<String, u32> = HashMap::new();
        let mut counts: Vec<u32> = Vec::new();
        let mut fact = |line: &str, in_file: bool, ids: &mut HashMap<String, u32>| {
            let k = key(line);
            let next = ids.len() as u32;
            let id = *ids.entry(k.clone()).or_insert(next);
            if id as usize >= counts.len() {
                counts.push(0);
            }
            if in_file {
                counts[id as usize] += 1;
            }
            let toks = tokens(line);
            let sig = toks.iter().fold(0u64, |s, t| s | (1u64 << (t % 64)));
            LineFacts {
                id,
                blank: k.is_empty(),
                trivial: k.is_empty() || is_trivial(&k),
                sig,
                tokens: toks,
            }
        };
        let file_facts: Vec<LineFacts> = file.iter().map(|l| fact(l, true, &mut ids)).collect();
        let item_facts: Vec<LineFacts> = items
            .iter()
            .map(|it| match it {
                Item::Code(s) => fact(s, false, &mut ids),
                _ => fact("", false, &mut ids),
            })
            .collect();
        let mut snippet_counts: HashMap<u32, u32> = HashMap::new();
        for (f, it) in item_facts.iter().zip(items) {
            if matches!(it, Item::Code(_)) {
                *snippet_counts.entry(f.id).or_default() += 1;
            }
        }
        let mut where_in_file: HashMap<u32, usize> = HashMap::new();
        for (j, f) in file_facts.iter().enumerate() {
            if counts[f.id as usize] == 1 {
                where_in_file.insert(f.id, j);
            }
        }
        let candidates: Vec<(usize, usize)> = item_facts
            .iter()
            .enumerate()
            .filter(|(i, f)| {
                matches!(items[*i], Item::Code(_))
                    && !f.trivial
                    && snippet_counts.get(&f.id) == Some(&1)
            })
            .filter_map(|(i, f)| where_in_file.get(&f.id).map(|&j| (i, j)))
            .collect();
        // The heaviest chain of candidates in order in both (a weighted longest increasing
        // subsequence); a candidate weighs more when its neighbours agree too.
        let agrees = |i: usize, j: usize, d: isize| -> bool {
            let (si, fj) = (i as isize + d, j as isize + d);
            si >= 0
                && fj >= 0
                && (si as usize) < items.len()
                && (fj as usize) < file_facts.len()
                && matches!(items[si as usize], Item::Code(_))
                && item_facts[si as usize].id == file_facts[fj as usize].id
        };
        // A unique line whose neighbours disagree is weak evidence (a copied line in new
        // code): only lines with an agreeing neighbour are pinned.
        let strong = |i: usize, j: usize, d: isize| {
            agrees(i, j, d) && !item_facts[(i as isize + d) as usize].trivial
        };
        let candidates: Vec<(usize, usize)> = candidates
            .into_iter()
            .filter(|&(i, j)| [-3isize, -2, -1, 1, 2, 3].iter().any(|&d| strong(i, j, d)))
            .collect();
        let weight: Vec<u32> = candidates
            .iter()
            .map(|&(i, j)| 2 + [-3isize, -2, -1, 1, 2, 3].iter().filter(|&&d| agrees(i, j, d)).count() as u32)
            .collect();
        let mut best: Vec<(u32, Option<usize>)> = Vec::with_capacity(candidates.len());
        for k in 0..candidates.len() {
            let mut entry = (weight[k], None);
            for p in 0..k {
                if candidates[p].1 < candidates[k].1 && best[p].0 + weight[k] > entry.0 {
                    entry = (best[p].0 + weight[k], Some(p));
                }
            }
            best.push(entry);
        }
        let mut pin_of_item = vec![None; items.len()];
        let mut pinned_file = vec![false; file.len()];
        let mut at = (0..best.len()).max_by_key(|&k| (best[k].0, std::cmp::Reverse(k)));
        while let Some(k) = at {
            let (i, j) = candidates[k];
            pin_of_item[i] = Some(j);
            pinned_file[j] = true;
            at = best[k].1;
        }
        let mut edge_distance = vec![usize::MAX; items.len()];
        let mut k = 0;
        while k < items.len() {
            if !matches!(items[k], Item::Code(_)) {
                k += 1;
                continue;
            }
            let start = k;
            while k < items.len() && matches!(items[k], Item::Code(_)) {
                k += 1;
            }
            if start > 0 {
                for i in (start..k).take_while(|&i| item_facts[i].blank) {
                    edge_distance[i] = LEADING_BLANK;
                }
            }
            let nonblank: Vec<usize> = (start..k).filter(|&i| !item_facts[i].blank).collect();
            for (pos, &i) in nonblank.iter().enumerate() {
                edge_distance[i] = pos.min(nonblank.len() - 1 - pos);
            }
        }
        // Blank lines that end a segment right before a placeholder.
        let mut soft = vec![false; items.len()];
        for i in (0..items.len()).rev() {
            let blank = matches!(&items[i], Item::Code(c) if c.trim().is_empty());
            let before_placeholder = items.get(i + 1).is_some_and(|n| n.elides() || soft[i + 1]);
            soft[i] = blank && before_placeholder;
        }
        Facts {
            file: file_facts,
            items: item_facts,
            counts,
            pin_of_item,
            pinned_file,
            edge_distance,
            soft,
        }
    }

    /// How often the item's line occurs in the file.
    pub fn count_of_item(&self, i: usize) -> u32 {
        self.counts[self.items[i].id as usize]
    }

    fn match_score(&self, i: usize) -> f32 {
        let f = &self.items[i];
        if f.blank {
            BLANK_MATCH
        } else if f.trivial {
            TRIVIAL_MATCH
        } else {
            1.0 / self.counts[f.id as usize].max(1) as f32
        }
    }

    fn insert_cost(&self, i: usize) -> f32 {
        let f = &self.items[i];
        if f.blank {
            // A blank line right after a placeholder is context: the file has it there.
            return if self.edge_distance[i] == LEADING_BLANK { LEADING_BLANK_NEW } else { BLANK_NEW };
        }
        let k = self.counts[f.id as usize];
        if k > 0 && !f.trivial {
            // Lines next to a placeholder are context by convention: inserting a copy of a
            // file line there is much less likely than matching it.
            let edge = EDGE_PREMIUM[self.edge_distance[i].min(EDGE_PREMIUM.len() - 1)];
            NEW_LINE + ANCHOR_PREMIUM / k as f32 + edge / (k as f32).sqrt()
        } else if k > 0 && self.edge_distance[i] == 0 {
            // A closing `}` or `)` that ends a segment is context too, usually.
            NEW_LINE + TRIVIAL_EDGE_PREMIUM
        } else {
            NEW_LINE
        }
    }

    fn delete_cost(&self, j: usize) -> f32 {
        let f = &self.file[j];
        if f.blank {
            DEL_BLANK
        } else if f.trivial {
            DEL_TRIVIAL
        } else {
            DEL_LINE
        }
    }

    fn subst_score(&self, i: usize, j: usize) -> Option<f32> {
        let (a, b) = (&self.items[i], &self.file[j]);
        if a.blank || b.blank || a.trivial != b.trivial {
            return None;
        }
        let overlap = (a.sig & b.sig).count_ones() * 2;
        if (overlap as f32) < SUBST_MIN_SIM * (a.sig.count_ones() + b.sig.count_ones()) as f32 {
            return None;
        }
        let sim = dice(&a.tokens, &b.tokens);
        (sim >= SUBST_MIN_SIM).then_some(-NEW_LINE + 0.02 + 0.01 * sim)
    }
}

const FROM_KEEP: u8 = 0;
const FROM_V: u8 = 1;
const FROM_MATCH: u8 = 2;
const FROM_SUBST: u8 = 3;
const FROM_DEL: u8 = 4;
/// In the deletion matrix: the run continues / the run opens here.
const DEL_EXTEND: u8 = 0;
const DEL_OPEN: u8 = 1;

/// Align `items` against `file`. `forced[j]` marks file lines that must be deleted (the
/// block of a `remove` directive). Returns the steps in order.
///
/// Deletions cost an opening price per run plus a little per line (affine gaps): one
/// contiguous block of old code replaced is cheap, deletions scattered between weak matches
/// are not.
pub fn align(items: &[Item], file: &[&str], facts: &Facts, forced: &[bool]) -> Vec<Op> {
    let n = items.len();
    let m = file.len();
    let w = m + 1;
    let mut back = vec![FROM_KEEP; (n + 1) * w];
    let mut back_del = vec![DEL_OPEN; (n + 1) * w];
    let (mut prev, mut cur) = (vec![NEG; w], vec![NEG; w]);
    let mut del = vec![NEG; w];
    let raw_eq = |i: usize, j: usize| match &items[i] {
        Item::Code(s) => s.trim_end() == file[j].trim_end(),
        _ => false,
    };
    // Keeping file line j at state i (before item i): free under a placeholder (a tiny price
    // under an implicit one), and free for lines a directive removes.
    let keep_cost = |i: usize, j: usize| -> Option<f32> {
        if forced[j] {
            return Some(0.0);
        }
        match items.get(i) {
            Some(Item::Placeholder { implicit: true }) => Some(IMPLICIT_KEEP),
            Some(Item::Placeholder { implicit: false }) | Some(Item::Remove(_)) => Some(0.0),
            _ => None,
        }
    };
    for i in 0..=n {
        let row = i * w;
        let (is_code, v_cost, m_score, id) = if i > 0 {
            let code = matches!(items[i - 1], Item::Code(_));
            (
                code,
                if code && !facts.soft[i - 1] { facts.insert_cost(i - 1) } else { 0.0 },
                if code { facts.match_score(i - 1) } else { 0.0 },
                facts.items[i - 1].id,
            )
        } else {
            (false, 0.0, 0.0, u32::MAX)
        };
        // Deleting is allowed inside a segment (before a code item) and after the last item.
        let may_delete = items.get(i).is_none_or(|it| matches!(it, Item::Code(_)));
        for j in 0..=m {
            let mut best = NEG;
            let mut from = FROM_KEEP;
            if i == 0 && j == 0 {
                best = 0.0;
            }
            if i > 0 {
                let pin = facts.pin_of_item[i - 1];
                let v = prev[j] - v_cost;
                if v > best && pin.is_none() {
                    best = v;
                    from = FROM_V;
                }
                let pin_ok = j > 0
                    && match pin {
                        Some(p) => p == j - 1,
                        None => !facts.pinned_file[j - 1],
                    };
                if pin_ok && is_code && !forced[j - 1] {
                    if facts.file[j - 1].id == id {
                        let s = prev[j - 1] + m_score + if raw_eq(i - 1, j - 1) { EXACT_BONUS } else { 0.0 };
                        if s >= best {
                            best = s;
                            from = FROM_MATCH;
                        }
                    } else if let Some(sub) = facts.subst_score(i - 1, j - 1) {
                        let s = prev[j - 1] + sub;
                        if s > best {
                            best = s;
                            from = FROM_SUBST;
                        }
                    }
                }
            }
            if j > 0 && facts.pinned_file[j - 1] {
                // A pinned line is only ever matched by its snippet line.
                del[j] = NEG;
            } else if j > 0 {
                if let Some(k) = keep_cost(i, j - 1) {
                    let h = cur[j - 1] - k;
                    if h > best {
                        best = h;
                        from = FROM_KEEP;
                    }
                    del[j] = NEG;
                } else if may_delete {
                    let c = facts.delete_cost(j - 1);
                    let extend = del[j - 1] - c;
                    let open = cur[j - 1] - DEL_OPEN_COST - c;
                    let (d, how) = if extend >= open { (extend, DEL_EXTEND) } else { (open, DEL_OPEN) };
                    del[j] = d;
                    back_del[row + j] = how;
                    if d > best {
                        best = d;
                        from = FROM_DEL;
                    }
                } else {
                    del[j] = NEG;
                }
            } else {
                del[0] = NEG;
            }
            cur[j] = best;
            back[row + j] = from;
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    // Walk back from the end.
    let mut ops = Vec::with_capacity(n + m);
    let (mut i, mut j) = (n, m);
    let mut in_del = false;
    while i > 0 || j > 0 {
        let at = i * w + j;
        if in_del {
            ops.push(Op::Delete(j - 1));
            in_del = back_del[at] == DEL_EXTEND;
            j -= 1;
            continue;
        }
        match back[at] {
            FROM_KEEP => {
                ops.push(if forced[j - 1] { Op::Delete(j - 1) } else { Op::Keep(j - 1) });
                j -= 1;
            }
            FROM_DEL => in_del = true,
            FROM_V => {
                ops.push(match items[i - 1] {
                    Item::Code(_) if !facts.soft[i - 1] => Op::Insert(i - 1),
                    _ => Op::Leave(i - 1),
                });
                i -= 1;
            }
            FROM_MATCH => {
                ops.push(Op::Match(i - 1, j - 1));
                i -= 1;
                j -= 1;
            }
            _ => {
                ops.push(Op::Subst(i - 1, j - 1));
                i -= 1;
                j -= 1;
            }
        }
    }
    ops.reverse();
    ops
}
