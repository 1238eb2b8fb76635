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

use std::cell::OnceCell;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use crate::edit::matching::KeyHasher;

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
/// Dropping a blank line that ends a segment before a placeholder (it is usually context, but
/// sometimes only a visual separator).
const SOFT_DROP: f32 = 0.35;
const TRIVIAL_EDGE_PREMIUM: f32 = 0.4;
/// `edge_distance` marker of blank lines that start a segment right after a placeholder.
const LEADING_BLANK: usize = usize::MAX - 1;
const ANCHOR_PREMIUM: f32 = 0.2;
/// Extra price of inserting a copy of a file line, by its distance (in non-blank lines) from
/// the nearest end of its segment.
const EDGE_PREMIUM: [f32; 4] = [3.0, 1.0, 0.4, 0.0];
const DEL_LINE: f32 = 0.08;
const DEL_TRIVIAL: f32 = 0.03;
const DEL_BLANK: f32 = 0.01;
const IMPLICIT_KEEP: f32 = 0.0005;
const DEL_OPEN_COST: f32 = 0.3;
const EXACT_BONUS: f32 = 0.001;
const OFF_INDENT_FACTOR: f32 = 0.3;
const SAME_OPENER_FACTOR: f32 = 2.5;
const SUBST_MIN_SIM: f32 = 0.75;
const NEG: f32 = -1.0e30;

/// Lines whose content says little about where they are (`}`, `end`, `return;`, blank …).
pub fn is_trivial(line: &str) -> bool {
    let alnum = line.chars().filter(|c| c.is_alphanumeric()).count();
    if alnum <= 3 {
        return true;
    }
    if alnum > 12 {
        return false;
    }
    let key: String = line.chars().filter(|c| !c.is_whitespace()).collect();
    matches!(
        key.as_str(),
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
    /// 256-bit bigram signature for fast similarity filtering.
    sig: [u64; 4],
    /// Number of bigrams.
    nbigrams: u32,
    /// Indentation width in columns (tabs count 4).
    indent: i32,
}

/// Hashes of the character bigrams of the whitespace-free line.
fn bigrams(line: &str) -> impl Iterator<Item = u32> + '_ {
    let mut prev: Option<char> = None;
    line.chars().filter(|c| !c.is_whitespace()).filter_map(move |c| {
        let out = prev.map(|p| u32::from(p).wrapping_mul(0x9E37_79B1) ^ u32::from(c).wrapping_mul(0x85EB_CA6B));
        prev = Some(c);
        out
    })
}

/// The sorted bigram hashes of a line (a single character counts as its own bigram).
fn tokens(line: &str) -> Vec<u32> {
    let mut out: Vec<u32> = bigrams(line).collect();
    if out.is_empty()
        && let Some(c) = line.chars().find(|c| !c.is_whitespace())
    {
        out.push(u32::from(c));
    }
    out.sort_unstable();
    out
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
pub struct Facts<'a> {
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
    /// Segment edge lines that must be matched (see [`align`]'s `strict_edges`).
    pub hard: Vec<bool>,
    /// The usual indentation offset of snippet lines against their file lines.
    indent_delta: Option<i32>,
    /// For closing-bracket lines, the key of the line that opened the bracket.
    file_opener: Vec<Option<u64>>,
    item_opener: Vec<Option<u64>>,
    file_text: &'a [&'a str],
    file_ids: HashMap<u64, u32, BuildHasherDefault<KeyHasher>>,
    item_text: Vec<&'a str>,
    file_tokens: Vec<OnceCell<Vec<u32>>>,
    item_tokens: Vec<OnceCell<Vec<u32>>>,
}

impl<'a> Facts<'a> {
    /// Compute facts for `file` and `items`.
    pub fn new(file: &'a [&'a str], items: &'a [Item]) -> Facts<'a> {
        let mut ids: HashMap<u64, u32, BuildHasherDefault<KeyHasher>> = HashMap::default();
        let mut counts: Vec<u32> = Vec::new();
        let mut fact = |line: &str, in_file: bool| {
            // One pass over the characters: signature, bigram count, letters and digits.
            let mut sig = [0u64; 4];
            let mut nbigrams = 0u32;
            let mut alnum = 0usize;
            let mut prev: Option<char> = None;
            for c in line.chars() {
                if c.is_whitespace() {
                    continue;
                }
                alnum += usize::from(c.is_alphanumeric());
                if let Some(p) = prev {
                    let t = u32::from(p).wrapping_mul(0x9E37_79B1) ^ u32::from(c).wrapping_mul(0x85EB_CA6B);
                    sig[(t >> 6) as usize & 3] |= 1u64 << (t & 63);
                    nbigrams += 1;
                }
                prev = Some(c);
            }
            let blank = prev.is_none();
            let next = ids.len() as u32;
            let id = *ids.entry(key(line)).or_insert(next);
            if id as usize >= counts.len() {
                counts.push(0);
            }
            if in_file {
                counts[id as usize] += 1;
            }
            let indent = line
                .chars()
                .take_while(|c| *c == ' ' || *c == '\t')
                .fold(0i32, |col, c| if c == '\t' { (col / 4 + 1) * 4 } else { col + 1 });
            LineFacts {
                id,
                blank,
                trivial: blank || alnum <= 3 || (alnum <= 12 && is_trivial(line)),
                sig,
                nbigrams: nbigrams.max(1),
                indent,
            }
        };
        let file_facts: Vec<LineFacts> = file.iter().map(|l| fact(l, true)).collect();
        let item_text: Vec<&str> = items
            .iter()
            .map(|it| match it {
                Item::Code(s) => s.as_str(),
                _ => "",
            })
            .collect();
        let item_facts: Vec<LineFacts> = item_text.iter().map(|l| fact(l, false)).collect();
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
        // How the snippet's indentation relates to the file's, learnt from the pinned lines
        // (or, without pins, from lines unique in the file): matches that disagree are weaker.
        let mut deltas: HashMap<i32, usize> = HashMap::new();
        for (i, pin) in pin_of_item.iter().enumerate() {
            if let Some(j) = pin {
                *deltas.entry(item_facts[i].indent - file_facts[*j].indent).or_default() += 1;
            }
        }
        if deltas.is_empty() {
            for &(i, j) in &candidates {
                *deltas.entry(item_facts[i].indent - file_facts[j].indent).or_default() += 1;
            }
        }
        let indent_delta = deltas.into_iter().max_by_key(|&(d, c)| (c, -d.abs())).map(|(d, _)| d);
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
        // The first and last line of each segment are context by convention: when the file
        // has them, they must be matched.
        let mut hard = vec![false; items.len()];
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
            let last = (start..k).rev().find(|&i| !soft[i]).unwrap_or(start);
            for i in [start, last] {
                hard[i] = counts[item_facts[i].id as usize] > 0;
            }
        }
        Facts {
            file: file_facts,
            items: item_facts,
            counts,
            pin_of_item,
            pinned_file,
            edge_distance,
            soft,
            hard,
            indent_delta,
            file_opener: super::outline::openers(file, &[])
                .into_iter()
                .map(|o| o.map(|k| key(file[k])))
                .collect(),
            item_opener: {
                let breaks: Vec<bool> = items.iter().map(Item::elides).collect();
                super::outline::openers(&item_text, &breaks)
                    .into_iter()
                    .map(|o| o.map(|k| key(item_text[k])))
                    .collect()
            },
            file_text: file,
            file_ids: file.iter().map(|l| key(l)).zip(0u32..).collect(),
            item_tokens: (0..items.len()).map(|_| OnceCell::new()).collect(),
            item_text,
            file_tokens: (0..file.len()).map(|_| OnceCell::new()).collect(),
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

    /// Whether `line` (by key) occurs in the file.
    pub fn is_file_line(&self, line: &str) -> bool {
        self.file_ids.contains_key(&key(line))
    }

    /// 1 when the pair's indentation offset is the snippet's usual one, less otherwise: a
    /// line that also moved in or out is less likely the same line.
    fn indent_factor(&self, i: usize, j: usize) -> f32 {
        // A closing bracket is the same line when it closes the same opening line.
        if let (Some(a), Some(b)) = (self.item_opener[i], self.file_opener[j]) {
            return if a == b { SAME_OPENER_FACTOR } else { OFF_INDENT_FACTOR };
        }
        match self.indent_delta {
            Some(d) if !self.items[i].blank && self.items[i].indent - self.file[j].indent != d => {
                OFF_INDENT_FACTOR
            }
            _ => 1.0,
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

    /// Whether snippet item `i` is similar enough to file line `j` to be its new version.
    pub fn similar(&self, i: usize, j: usize) -> Option<f32> {
        let (a, b) = (&self.items[i], &self.file[j]);
        if a.blank || b.blank || a.trivial != b.trivial {
            return None;
        }
        // Dice can be no higher than the length ratio allows, nor than the signatures share.
        let (la, lb) = (a.nbigrams as f32, b.nbigrams as f32);
        if 2.0 * la.min(lb) < SUBST_MIN_SIM * (la + lb) {
            return None;
        }
        let ones = |x: &[u64; 4]| x.iter().map(|w| w.count_ones()).sum::<u32>();
        let both: u32 = (0..4).map(|k| (a.sig[k] & b.sig[k]).count_ones()).sum();
        if ((2 * both) as f32) < SUBST_MIN_SIM * (ones(&a.sig) + ones(&b.sig)) as f32 {
            return None;
        }
        let ta = self.item_tokens[i].get_or_init(|| tokens(self.item_text[i]));
        let tb = self.file_tokens[j].get_or_init(|| tokens(self.file_text[j]));
        let sim = dice(ta, tb);
        (sim >= SUBST_MIN_SIM).then_some(sim)
    }

    fn subst_score(&self, i: usize, j: usize) -> Option<f32> {
        self.similar(i, j).map(|sim| -NEW_LINE + 0.02 + 0.01 * sim)
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

/// The alignment problem: a snippet against a file, with the flags that shape it.
pub struct Problem<'p> {
    /// Snippet items.
    pub items: &'p [Item],
    /// File lines.
    pub file: &'p [&'p str],
    /// Facts about both.
    pub facts: &'p Facts<'p>,
    /// File lines that `remove` directives delete.
    pub forced: &'p [bool],
    /// The first and last line of every segment must match when the file has such a line.
    pub strict_edges: bool,
    /// Read the implicit start (end) placeholder strictly: it keeps nothing.
    pub strict_ends: (bool, bool),
}

/// Align `items` against `file`. `forced[j]` marks file lines that must be deleted (the
/// block of a `remove` directive). Returns the steps in order.
///
/// Deletions cost an opening price per run plus a little per line (affine gaps): one
/// contiguous block of old code replaced is cheap, deletions scattered between weak matches
/// are not.
///
/// With `strict_edges`, the first and last line of every segment must match a file line
/// when the file has such a line; callers retry without when that admits no alignment.
pub fn align(
    items: &[Item],
    file: &[&str],
    facts: &Facts,
    forced: &[bool],
    strict_edges: bool,
    strict_ends: (bool, bool),
) -> Option<Vec<Op>> {
    let problem = Problem {
        items,
        file,
        facts,
        forced,
        strict_edges,
        strict_ends,
    };
    let mut back = Backpointers::new(items.len(), file.len());
    let (best, _) = pass::<false>(&problem, &[], Some(&mut back));
    (best > NEG / 2.0).then(|| back.walk(&problem))
}

/// For snippet item `i`, the score of the best whole alignment that matches it to each file
/// line it equals (`None` where it cannot match): a forward pass up to the item plus a pass
/// over the reversed problem down to it.
pub fn match_profile(problem: &Problem<'_>, items: &[usize]) -> (f32, HashMap<usize, Vec<Option<f32>>>) {
    let (n, m) = (problem.items.len(), problem.file.len());
    let (best, fwd) = pass::<false>(problem, items, None);
    let rev_states: Vec<usize> = items.iter().map(|&i| n - (i + 1)).collect();
    let (_, bwd) = pass::<true>(problem, &rev_states, None);
    let facts = problem.facts;
    let profiles = items
        .iter()
        .map(|&i| {
            let f = &fwd[&i];
            let b = &bwd[&(n - (i + 1))];
            let profile = (0..m)
                .map(|j| {
                    let pinned_elsewhere = match facts.pin_of_item[i] {
                        Some(p) => p != j,
                        None => facts.pinned_file[j],
                    };
                    (facts.file[j].id == facts.items[i].id && !pinned_elsewhere && !problem.forced[j])
                        .then(|| f[j] + facts.match_score(i) * facts.indent_factor(i, j) + b[m - (j + 1)])
                })
                .collect();
            (i, profile)
        })
        .collect();
    (best, profiles)
}

struct Backpointers {
    w: usize,
    back: Vec<u8>,
    back_del: Vec<u8>,
}

impl Backpointers {
    fn new(n: usize, m: usize) -> Backpointers {
        Backpointers {
            w: m + 1,
            back: vec![FROM_KEEP; (n + 1) * (m + 1)],
            back_del: vec![DEL_OPEN; (n + 1) * (m + 1)],
        }
    }

    fn walk(&self, p: &Problem<'_>) -> Vec<Op> {
        let (n, m) = (p.items.len(), p.file.len());
        let mut ops = Vec::with_capacity(n + m);
        let (mut i, mut j) = (n, m);
        let mut in_del = false;
        while i > 0 || j > 0 {
            let at = i * self.w + j;
            if in_del {
                ops.push(Op::Delete(j - 1));
                in_del = self.back_del[at] == DEL_EXTEND;
                j -= 1;
                continue;
            }
            match self.back[at] {
                FROM_KEEP => {
                    ops.push(if p.forced[j - 1] { Op::Delete(j - 1) } else { Op::Keep(j - 1) });
                    j -= 1;
                }
                FROM_DEL => in_del = true,
                FROM_V => {
                    ops.push(match p.items[i - 1] {
                        Item::Code(_) if !p.facts.soft[i - 1] => Op::Insert(i - 1),
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
}

/// One dynamic-programming pass, forward or over the reversed problem (`REV`). Returns the
/// final score and the score rows of the requested states (in the pass's own order).
fn pass<const REV: bool>(
    p: &Problem<'_>,
    keep_states: &[usize],
    mut back: Option<&mut Backpointers>,
) -> (f32, HashMap<usize, Vec<f32>>) {
    let (items, facts, forced) = (p.items, p.facts, p.forced);
    let n = items.len();
    let m = p.file.len();
    let w = m + 1;
    // Sequence positions to original indices.
    let it = |k: usize| if REV { n - 1 - k } else { k };
    let fl = |l: usize| if REV { m - 1 - l } else { l };
    let mut rows: HashMap<usize, Vec<f32>> = HashMap::new();
    let (mut prev, mut cur) = (vec![NEG; w], vec![NEG; w]);
    let mut del = vec![NEG; w];
    let raw_eq = |i: usize, j: usize| match &items[i] {
        Item::Code(s) => s.trim_end() == p.file[j].trim_end(),
        _ => false,
    };
    // An implicit edge placeholder read strictly keeps nothing: the snippet reaches the file's
    // start (end) and the lines before (after) its first (last) line are deleted.
    let strict_at = |i: usize| (i == 0 && p.strict_ends.0) || (i + 1 == n && p.strict_ends.1);
    // Keeping file line j while item i is current: free under a placeholder (a tiny price
    // under an implicit one), and free for lines a directive removes.
    let keep_cost = |i: Option<usize>, j: usize| -> Option<f32> {
        if forced[j] {
            return Some(0.0);
        }
        match i.map(|i| (i, &items[i])) {
            Some((i, Item::Placeholder { implicit: true })) if strict_at(i) => None,
            Some((_, Item::Placeholder { implicit: true })) => Some(IMPLICIT_KEEP),
            Some((_, Item::Placeholder { implicit: false })) | Some((_, Item::Remove(_))) => Some(0.0),
            _ => None,
        }
    };
    for i in 0..=n {
        // The item consumed by moves into this row, and the item current in this row.
        let entering = (i > 0).then(|| it(i - 1));
        let current = (i < n).then(|| it(i));
        let (is_code, v_cost, m_score, id) = match entering {
            Some(e) => {
                let code = matches!(items[e], Item::Code(_));
                (
                    code,
                    if !code {
                        0.0
                    } else if facts.soft[e] {
                        SOFT_DROP
                    } else {
                        facts.insert_cost(e)
                    },
                    if code { facts.match_score(e) } else { 0.0 },
                    facts.items[e].id,
                )
            }
            None => (false, 0.0, 0.0, u32::MAX),
        };
        // Deleting is allowed while a code item is current, after the last item, and under
        // an implicit placeholder read strictly.
        let may_delete = current.is_none_or(|c| {
            matches!(items[c], Item::Code(_)) || (strict_at(c) && matches!(items[c], Item::Placeholder { implicit: true }))
        });
        let pin = entering.and_then(|e| facts.pin_of_item[e]);
        let may_insert = entering.is_some_and(|e| pin.is_none() && !(p.strict_edges && facts.hard[e]));
        for j in 0..=m {
            let mut best = NEG;
            let mut from = FROM_KEEP;
            if i == 0 && j == 0 {
                best = 0.0;
            }
            if let Some(e) = entering {
                let v = prev[j] - v_cost;
                if v > best && (may_insert || !is_code) {
                    best = v;
                    from = FROM_V;
                }
                if j > 0 && is_code {
                    let f = fl(j - 1);
                    let pin_ok = match pin {
                        Some(pp) => pp == f,
                        None => !facts.pinned_file[f],
                    };
                    if pin_ok && !forced[f] {
                        if facts.file[f].id == id {
                            let s = prev[j - 1]
                                + m_score * facts.indent_factor(e, f)
                                + if raw_eq(e, f) { EXACT_BONUS } else { 0.0 };
                            if s >= best {
                                best = s;
                                from = FROM_MATCH;
                            }
                        } else if !may_insert && pin.is_none() {
                            // A hard edge line is matched, never replaced.
                        } else if let Some(sub) = facts.subst_score(e, f) {
                            let s = prev[j - 1] + sub;
                            if s > best {
                                best = s;
                                from = FROM_SUBST;
                            }
                        }
                    }
                }
            }
            if j > 0 {
                let f = fl(j - 1);
                if facts.pinned_file[f] {
                    // A pinned line is only ever matched by its snippet line.
                    del[j] = NEG;
                } else if let Some(k) = keep_cost(current, f) {
                    let h = cur[j - 1] - k;
                    if h > best {
                        best = h;
                        from = FROM_KEEP;
                    }
                    del[j] = NEG;
                } else if may_delete {
                    let c = facts.delete_cost(f);
                    let extend = del[j - 1] - c;
                    let open = cur[j - 1] - DEL_OPEN_COST - c;
                    let (d, how) = if extend >= open { (extend, DEL_EXTEND) } else { (open, DEL_OPEN) };
                    del[j] = d;
                    if let Some(b) = back.as_deref_mut() {
                        b.back_del[i * w + j] = how;
                    }
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
            if let Some(b) = back.as_deref_mut() {
                b.back[i * w + j] = from;
            }
        }
        if keep_states.contains(&i) {
            rows.insert(i, cur.clone());
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    (prev[m], rows)
}
