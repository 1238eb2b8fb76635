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
use std::ops::Range;

use crate::edit::matching::{KEY_SEED, KeyHasher, key_step};

use super::scratch::Buf;
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
/// Lines shorter than this (without whitespace) are not matched by their shared ends alone.
const SHARED_ENDS_MIN_CHARS: usize = 30;
/// Extra score of a substitution that keeps the name a line declares.
const SAME_NAME_BONUS: f32 = 0.6;
const NEG: f32 = -1.0e30;

/// Lines whose content says little about where they are (`}`, `end`, `return;`, blank …).
pub fn is_trivial(line: &str) -> bool {
    let nonblank = line.chars().filter(|c| !c.is_whitespace()).count();
    trivial_with(line, nonblank)
}

/// [`is_trivial`] for a line with `nonblank` non-whitespace characters: a line without
/// letters or digits, or a bare keyword line (no longer than [`TRIVIAL_KEY_MAX`]). Short ASCII
/// lines are checked without allocating; long lines are trivial only without letters and
/// digits, which their first few characters usually rule out.
fn trivial_with(line: &str, nonblank: usize) -> bool {
    if nonblank > TRIVIAL_KEY_MAX {
        return !line.chars().any(char::is_alphanumeric);
    }
    if !line.is_ascii() {
        let key: String = line.chars().filter(|c| !c.is_whitespace()).collect();
        return !key.chars().any(char::is_alphanumeric) || is_trivial_key(&key);
    }
    let mut buf = [0u8; TRIVIAL_KEY_MAX];
    let (mut n, mut alnum) = (0, false);
    for &b in line.as_bytes() {
        let class = ASCII_CLASS[b as usize];
        if class & SPACE == 0 {
            if n == TRIVIAL_KEY_MAX {
                return false;
            }
            buf[n] = b;
            n += 1;
            alnum |= class & ALNUM != 0;
        }
    }
    !alnum || std::str::from_utf8(&buf[..n]).is_ok_and(is_trivial_key)
}

/// The longest key [`is_trivial_key`] accepts.
const TRIVIAL_KEY_MAX: usize = 12;

/// Whether a line without its whitespace is a bare keyword line (`else`, `return;` …).
fn is_trivial_key(key: &str) -> bool {
    matches!(
        key,
        "else"
            | "else{"
            | "}else{"
            | "end"
            | "end;"
            | "end)"
            | "pass"
            | "break"
            | "break;"
            | "continue"
            | "continue;"
            | "return"
            | "return;"
            | "returnthis;"
            | "returntrue;"
            | "returnfalse;"
            | "returnnull;"
            | "returnnil"
            | "returnerr"
            | "returnTrue"
            | "returnFalse"
            | "returnNone"
            | "default:"
            | "try:"
            | "try{"
            | "}finally{"
            | "finally:"
            | "finally{"
            | "done"
            | "esac"
            | "else:"
            | "endif"
            | "#endif"
            | "#else"
            | "fi"
            | "do"
            | "then"
            | "begin"
            | "}catch{"
            | "@Override"
    )
}

/// Whether a snippet line may be an unchanged copy of a file line with the same key: at the
/// file's own indentation, or at the snippet's usual offset (a snippet dedented as a whole);
/// always for blank lines or without a known offset. Lines the edit re-indented can sway
/// the usual offset, so the file's own indentation always counts.
fn indent_consistent(delta: Option<i32>, item: &LineFacts, file: &LineFacts) -> bool {
    item.blank || item.indent == file.indent || delta.is_none_or(|d| item.indent - file.indent == d)
}

/// Weight of a segment edge in the chain of pinned lines: more than any run of interior lines.
const EDGE_PIN_WEIGHT: u32 = 1 << 20;

/// Snippet items pinned to file lines, and the inverse.
#[derive(Debug, Clone)]
pub struct Pins {
    /// The file line each item is pinned to.
    pub of_item: Vec<Option<usize>>,
    /// Whether a file line is pinned.
    pub file: Vec<bool>,
}

impl Pins {
    /// The heaviest chain of `(item, file line, weight)` candidates (sorted by item) that is
    /// in order in both: a weighted longest increasing subsequence.
    fn chain(candidates: &[(usize, usize, u32)], n: usize, m: usize) -> Pins {
        let mut best: Vec<(u32, Option<usize>)> = Vec::with_capacity(candidates.len());
        for k in 0..candidates.len() {
            let mut entry = (candidates[k].2, None);
            for p in 0..k {
                if candidates[p].1 < candidates[k].1
                    && candidates[p].0 < candidates[k].0
                    && best[p].0 + candidates[k].2 > entry.0
                {
                    entry = (best[p].0 + candidates[k].2, Some(p));
                }
            }
            best.push(entry);
        }
        let mut pins = Pins {
            of_item: vec![None; n],
            file: vec![false; m],
        };
        let mut at = (0..best.len()).max_by_key(|&k| (best[k].0, std::cmp::Reverse(k)));
        while let Some(k) = at {
            let (i, j, _) = candidates[k];
            pins.of_item[i] = Some(j);
            pins.file[j] = true;
            at = best[k].1;
        }
        pins
    }
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

    /// Number of bigrams.
    nbigrams: u32,

    /// Indentation width in columns (tabs count 4).
    pub indent: i32,
    /// Length in bytes without trailing whitespace.
    len: u32,
}

/// Hashes of the character bigrams of the whitespace-free line.
fn bigrams(line: &str) -> impl Iterator<Item = u32> + '_ {
    let mut prev: Option<char> = None;
    line.chars()
        .filter(|c| !c.is_whitespace())
        .filter_map(move |c| {
            let out = prev.map(|p| {
                u32::from(p).wrapping_mul(0x9E37_79B1) ^ u32::from(c).wrapping_mul(0x85EB_CA6B)
            });
            prev = Some(c);
            out
        })
}

/// A 256-bit set of the line's bigrams (and how many bits are set), for fast filtering.
fn signature(line: &str) -> ([u64; 4], u32) {
    let mut sig = [0u64; 4];
    let mut set = |t: u32| sig[(t >> 6) as usize & 3] |= 1u64 << (t & 63);
    if line.is_ascii() {
        let mut chars = line
            .bytes()
            .filter(|&b| ASCII_CLASS[b as usize] & SPACE == 0)
            .map(u32::from);
        if let Some(mut p) = chars.next() {
            for b in chars {
                set((p << 8 | b).wrapping_mul(0x9E37_79B1) >> 24);
                p = b;
            }
        }
    } else {
        bigrams(line).for_each(&mut set);
    }
    let ones = sig.iter().map(|w| w.count_ones()).sum();
    (sig, ones)
}

const SPACE: u8 = 1;
const ALNUM: u8 = 2;

/// Classes of ASCII bytes: whitespace as `char::is_whitespace` has it, letters and digits.
static ASCII_CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 128 {
        let c = b as u8;
        if matches!(c, b' ' | b'\t' | b'\n' | b'\x0B' | b'\x0C' | b'\r') {
            t[b] = SPACE;
        } else if c.is_ascii_alphanumeric() {
            t[b] = ALNUM;
        }
        b += 1;
    }
    t
};

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

/// Dice similarity of two sorted token lists (repeats count).
pub fn dice<T: Ord>(a: &[T], b: &[T]) -> f32 {
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

/// Key ids shared by file and snippet lines.
pub type KeyIds = HashMap<u64, u32, BuildHasherDefault<KeyHasher>>;

/// The key and facts of one line (`id` left 0).
fn line_fact(line: &str) -> (u64, LineFacts) {
    // One pass over the bytes: the key and the non-blank characters.
    let (k, nonblank) = if line.is_ascii() {
        let mut h = KEY_SEED;
        let mut nonblank = 0u32;
        for &b in line.as_bytes() {
            if ASCII_CLASS[b as usize] & SPACE != 0 {
                continue;
            }
            h = key_step(h, u32::from(b));
            nonblank += 1;
        }
        (h, nonblank)
    } else {
        let nonblank = line.chars().filter(|c| !c.is_whitespace()).count() as u32;
        (key(line), nonblank)
    };
    let blank = nonblank == 0;
    let indent = line
        .bytes()
        .take_while(|b| *b == b' ' || *b == b'\t')
        .fold(0i32, |col, b| {
            if b == b'\t' {
                (col / 4 + 1) * 4
            } else {
                col + 1
            }
        });
    (
        k,
        LineFacts {
            id: 0,
            blank,
            trivial: trivial_with(line, nonblank as usize),
            nbigrams: nonblank.saturating_sub(1).max(1),
            indent,
            len: line.trim_end().len() as u32,
        },
    )
}

/// The file's line facts and key ids, computed once per merge: the snippet's reading asks
/// which lines the file holds, the alignment needs the rest.
pub struct FileIndex {
    facts: Vec<LineFacts>,
    ids: KeyIds,
    /// How often each key id occurs.
    counts: Vec<u32>,
}

impl FileIndex {
    /// Index the lines of a file.
    pub fn new(file: &[&str]) -> FileIndex {
        let mut ids = KeyIds::default();
        ids.reserve(file.len());
        let mut counts: Vec<u32> = Vec::new();
        let facts = file
            .iter()
            .map(|l| {
                let (k, partial) = line_fact(l);
                let next = ids.len() as u32;
                let id = *ids.entry(k).or_insert(next);
                if id as usize >= counts.len() {
                    counts.push(0);
                }
                counts[id as usize] += 1;
                LineFacts { id, ..partial }
            })
            .collect();
        FileIndex { facts, ids, counts }
    }

    /// Whether the file has a line with this key ([`key`]).
    pub fn contains(&self, k: &u64) -> bool {
        self.ids.contains_key(k)
    }

    /// How many lines of the file have this key.
    pub fn count(&self, k: u64) -> u32 {
        self.ids.get(&k).map_or(0, |&id| self.counts[id as usize])
    }

    /// The id of this key ([`key`]) when the file has a line with it.
    pub fn id_of(&self, k: u64) -> Option<u32> {
        self.ids.get(&k).copied()
    }

    /// The key id of file line `j`.
    pub fn line_id(&self, j: usize) -> u32 {
        self.facts[j].id
    }
}

/// Facts about the file and snippet lines, with shared key ids.
pub struct Facts<'a> {
    /// One per file line.
    pub file: &'a [LineFacts],
    /// One per snippet item (placeholders get a dummy entry).
    pub items: Vec<LineFacts>,
    /// How often each key id occurs in the file.
    pub counts: Vec<u32>,
    /// Snippet items pinned to file lines: non-trivial lines unique in both the file and the
    /// snippet whose order agrees with every other such line (patience diff's anchors).
    pub pin_of_item: Vec<Option<usize>>,
    /// The inverse of `pin_of_item`.
    pub pinned_file: Vec<bool>,
    /// The pins under strict edges: segment edges unique in both join the chain first.
    strict_pins: Pins,
    /// No pins at all.
    unpinned: Pins,
    /// For each snippet item, how many non-blank code lines separate it from the nearest
    /// end of its segment.
    edge_distance: Vec<usize>,
    /// For each snippet item, how many file lines it could be an unchanged copy of (same
    /// key, consistent indentation).
    copies: Vec<u32>,
    /// Blank snippet lines that end a segment right before a placeholder: often a visual
    /// separator, so they match a blank file line when there is one and are otherwise
    /// dropped, never inserted.
    pub soft: Vec<bool>,
    /// Segment edge lines that must be matched (see [`align`]'s `strict_edges`).
    pub hard: Vec<bool>,
    /// The usual indentation offset of snippet lines against their file lines.
    indent_delta: Option<i32>,
    /// For closing-bracket lines, the key id of the line that opened the bracket (computed on
    /// first use).
    file_opener: OnceCell<Vec<Option<u32>>>,
    /// For closing-bracket snippet lines, the snippet item that opened the bracket.
    item_open: Vec<Option<usize>>,
    file_text: &'a [&'a str],
    key_ids: HashMap<u64, u32, BuildHasherDefault<KeyHasher>>,
    item_text: Vec<&'a str>,
    file_tokens: Vec<OnceCell<Vec<u32>>>,
    item_tokens: Vec<OnceCell<Vec<u32>>>,
    file_sigs: Vec<OnceCell<([u64; 4], u32)>>,
    item_sigs: Vec<OnceCell<([u64; 4], u32)>>,
    /// File lines grouped by key id (see `lines_with`).
    line_index: Vec<u32>,
    line_index_start: Vec<u32>,
    item_substs: Vec<OnceCell<Vec<(u32, f32)>>>,
}

impl<'a> Facts<'a> {
    /// Compute facts for `file` and `items`.
    pub fn new(file: &'a [&'a str], index: &'a FileIndex, items: &'a [Item]) -> Facts<'a> {
        debug_assert_eq!(file.len(), index.facts.len());
        let mut ids = index.ids.clone();
        let mut counts = index.counts.clone();
        let mut fact = |line: &str| {
            let (k, partial) = line_fact(line);
            let next = ids.len() as u32;
            let id = *ids.entry(k).or_insert(next);
            if id as usize >= counts.len() {
                counts.push(0);
            }
            LineFacts { id, ..partial }
        };
        let file_facts: &'a [LineFacts] = &index.facts;
        let file_facts_ids: Vec<u32> = file_facts.iter().map(|f| f.id).collect();
        let item_text: Vec<&str> = items.iter().map(Item::text).collect();
        let item_facts: Vec<LineFacts> = item_text.iter().map(|l| fact(l)).collect();
        let mut snippet_counts = vec![0u32; counts.len()];
        for (f, it) in item_facts.iter().zip(items) {
            if matches!(it, Item::Code(_)) {
                snippet_counts[f.id as usize] += 1;
            }
        }
        let mut where_in_file: Vec<Option<usize>> = vec![None; counts.len()];
        for (j, f) in file_facts.iter().enumerate() {
            if counts[f.id as usize] == 1 {
                where_in_file[f.id as usize] = Some(j);
            }
        }
        let candidates: Vec<(usize, usize)> = item_facts
            .iter()
            .enumerate()
            .filter(|(i, f)| {
                matches!(items[*i], Item::Code(_))
                    && !f.trivial
                    && snippet_counts[f.id as usize] == 1
            })
            .filter_map(|(i, f)| where_in_file[f.id as usize].map(|j| (i, j)))
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
        // Segment edges unique in both at the file's own indentation: context by convention,
        // so under strict edges they are pinned whatever interior lines say (new code often
        // repeats lines of the code next to it).
        let unique = candidates.clone();
        let edge_pins: Vec<(usize, usize)> = candidates
            .iter()
            .copied()
            .filter(|&(i, j)| {
                let code = |k: usize| matches!(items.get(k), Some(Item::Code(_)));
                let first = i == 0 || !code(i - 1);
                let last = !code(i + 1);
                (first || last) && item_facts[i].indent == file_facts[j].indent
            })
            .collect();
        let candidates: Vec<(usize, usize)> = candidates
            .into_iter()
            .filter(|&(i, j)| [-3isize, -2, -1, 1, 2, 3].iter().any(|&d| strong(i, j, d)))
            .collect();
        let weighted: Vec<(usize, usize, u32)> = candidates
            .iter()
            .map(|&(i, j)| {
                let w = 2 + [-3isize, -2, -1, 1, 2, 3]
                    .iter()
                    .filter(|&&d| agrees(i, j, d))
                    .count() as u32;
                (i, j, w)
            })
            .collect();
        let loose = Pins::chain(&weighted, items.len(), file.len());
        let mut with_edges = weighted;
        for &(i, j) in &edge_pins {
            match with_edges.iter_mut().find(|c| c.0 == i) {
                Some(c) => c.2 = EDGE_PIN_WEIGHT,
                None => with_edges.push((i, j, EDGE_PIN_WEIGHT)),
            }
        }
        with_edges.sort_unstable();
        let strict = if edge_pins.is_empty() {
            loose.clone()
        } else {
            Pins::chain(&with_edges, items.len(), file.len())
        };
        let Pins {
            of_item: pin_of_item,
            file: pinned_file,
        } = loose.clone();
        // How the snippet's indentation relates to the file's, learnt from the pinned lines
        // (or, without pins, from lines unique in the file): matches that disagree are weaker.
        let mut deltas: HashMap<i32, usize> = HashMap::new();
        for (i, pin) in pin_of_item.iter().enumerate() {
            if let Some(j) = pin {
                *deltas
                    .entry(item_facts[i].indent - file_facts[*j].indent)
                    .or_default() += 1;
            }
        }
        if deltas.is_empty() {
            for &(i, j) in &unique {
                *deltas
                    .entry(item_facts[i].indent - file_facts[j].indent)
                    .or_default() += 1;
            }
        }
        // Lines at the file's own indentation mean the snippet is not shifted as a whole;
        // the other offsets are then lines the edit itself re-indented (code moved into or
        // out of a block).
        let total: usize = deltas.values().sum();
        let unshifted = deltas.get(&0).copied().unwrap_or(0);
        let indent_delta = if unshifted >= 3 || (unshifted > 0 && unshifted * 4 >= total) {
            Some(0)
        } else {
            deltas
                .into_iter()
                .max_by_key(|&(d, c)| (c, -d.abs()))
                .map(|(d, _)| d)
        };
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
        // File lines grouped by key id (a counting sort).
        let mut line_index_start = vec![0u32; counts.len() + 1];
        for f in &file_facts_ids {
            line_index_start[*f as usize + 1] += 1;
        }
        for k in 1..line_index_start.len() {
            line_index_start[k] += line_index_start[k - 1];
        }
        let mut fill = line_index_start.clone();
        let mut line_index = vec![0u32; file_facts_ids.len()];
        for (j, f) in file_facts_ids.iter().enumerate() {
            let slot = &mut fill[*f as usize];
            line_index[*slot as usize] = j as u32;
            *slot += 1;
        }
        let copies: Vec<u32> = item_facts
            .iter()
            .map(|it| {
                let id = it.id as usize;
                let lines =
                    &line_index[line_index_start[id] as usize..line_index_start[id + 1] as usize];
                lines
                    .iter()
                    .filter(|&&j| indent_consistent(indent_delta, it, &file_facts[j as usize]))
                    .count() as u32
            })
            .collect();
        let breaks: Vec<bool> = items.iter().map(Item::elides).collect();
        let item_open = super::outline::openers(&item_text, &breaks);
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
                // A closing line of a block the snippet opens with a new line is new code.
                let closes_new = item_facts[i].trivial
                    && item_open[i].is_some_and(|o| counts[item_facts[o].id as usize] == 0);
                hard[i] = !closes_new && copies[i] > 0;
            }
        }
        Facts {
            file: file_facts,
            items: item_facts,
            counts,
            pin_of_item,
            pinned_file,
            strict_pins: strict,
            unpinned: Pins {
                of_item: vec![None; items.len()],
                file: vec![false; file.len()],
            },
            edge_distance,
            copies,
            soft,
            hard,
            indent_delta,
            file_opener: OnceCell::new(),
            item_open,
            file_text: file,
            key_ids: ids,
            item_tokens: (0..items.len()).map(|_| OnceCell::new()).collect(),
            item_sigs: (0..items.len()).map(|_| OnceCell::new()).collect(),
            file_sigs: (0..file.len()).map(|_| OnceCell::new()).collect(),
            item_substs: (0..items.len()).map(|_| OnceCell::new()).collect(),
            line_index_start,
            line_index,
            item_text,
            file_tokens: (0..file.len()).map(|_| OnceCell::new()).collect(),
        }
    }

    /// The indentation of snippet item `i` less that of file line `j`, in columns.
    pub fn indent_offset(&self, i: usize, j: usize) -> i32 {
        self.items[i].indent - self.file[j].indent
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

    fn file_openers(&self) -> &[Option<u32>] {
        self.file_opener.get_or_init(|| {
            super::outline::openers(self.file_text, &[])
                .into_iter()
                .map(|o| o.map(|k| self.file[k].id))
                .collect()
        })
    }

    /// The key id of the snippet line that opened the bracket item `i` closes.
    fn item_opener(&self, i: usize) -> Option<u32> {
        self.item_open[i].map(|k| self.items[k].id)
    }

    /// The snippet item that opened the bracket item `i` closes (`None` for other lines and
    /// for closers whose opener the snippet does not show).
    pub fn opener_item(&self, i: usize) -> Option<usize> {
        self.item_open[i]
    }

    /// The file lines (ascending) whose key has this id.
    pub fn lines_with(&self, id: u32) -> &[u32] {
        let id = id as usize;
        if id + 1 >= self.line_index_start.len() {
            return &[];
        }
        &self.line_index[self.line_index_start[id] as usize..self.line_index_start[id + 1] as usize]
    }

    /// Whether `line` (by key) occurs in the file.
    pub fn is_file_line(&self, line: &str) -> bool {
        self.key_ids
            .get(&key(line))
            .is_some_and(|&id| self.counts[id as usize] > 0)
    }

    /// 1 when the pair's indentation offset is the snippet's usual one, less otherwise: a
    /// line that also moved in or out is less likely the same line.
    fn indent_factor(&self, i: usize, j: usize) -> f32 {
        // A closing bracket is the same line when it closes the same opening line.
        if self.items[i].trivial
            && let (Some(a), Some(b)) = (self.item_opener(i), self.file_openers()[j])
        {
            return if a == b {
                SAME_OPENER_FACTOR
            } else {
                OFF_INDENT_FACTOR
            };
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
            return if self.edge_distance[i] == LEADING_BLANK {
                LEADING_BLANK_NEW
            } else {
                BLANK_NEW
            };
        }
        let k = self.counts[f.id as usize];
        if k > 0 && !f.trivial {
            // Lines next to a placeholder are context by convention: inserting a copy of a
            // file line there is much less likely than matching it.
            let edge = EDGE_PREMIUM[self.edge_distance[i].min(EDGE_PREMIUM.len() - 1)];
            NEW_LINE + ANCHOR_PREMIUM / k as f32 + edge / (k as f32).sqrt()
        } else if self.copies[i] > 0 && self.edge_distance[i] == 0 {
            // A closing `}` or `)` that ends a segment is context too, usually, when the file
            // has it at that indentation.
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
            return self.shared_ends(i, j);
        }
        let (sa, oa) = self.item_sigs[i].get_or_init(|| signature(self.item_text[i]));
        let (sb, ob) = self.file_sigs[j].get_or_init(|| signature(self.file_text[j]));
        let both: u32 = (0..4).map(|k| (sa[k] & sb[k]).count_ones()).sum();
        if ((2 * both) as f32) < SUBST_MIN_SIM * (oa + ob) as f32 {
            return self.shared_ends(i, j);
        }
        let ta = self.item_tokens[i].get_or_init(|| tokens(self.item_text[i]));
        let tb = self.file_tokens[j].get_or_init(|| tokens(self.file_text[j]));
        let sim = dice(ta, tb);
        if sim >= SUBST_MIN_SIM {
            Some(sim)
        } else {
            self.shared_ends(i, j)
        }
    }

    /// A line whose start and end (without whitespace) make up most of a long line of the
    /// file is that line with its middle or tail rewritten (`f(a, OLD EXPR)` → `f(a, b)`),
    /// however different the rewritten part.
    fn shared_ends(&self, i: usize, j: usize) -> Option<f32> {
        let (a, b) = (&self.items[i], &self.file[j]);
        let shorter = a.nbigrams.min(b.nbigrams) as usize + 1;
        if shorter < SHARED_ENDS_MIN_CHARS {
            return None;
        }
        let squash = |s: &'a str| s.chars().filter(|c| !c.is_whitespace());
        let (ta, tb) = (self.item_text[i], self.file_text[j]);
        if ta.trim_start().as_bytes().first() != tb.trim_start().as_bytes().first() {
            return None;
        }
        let prefix = squash(ta)
            .zip(squash(tb))
            .take_while(|(x, y)| x == y)
            .count();
        if prefix * 2 < shorter {
            return None;
        }
        let suffix = squash(ta)
            .rev()
            .zip(squash(tb).rev())
            .take_while(|(x, y)| x == y)
            .count();
        let shared = (prefix + suffix).min(shorter);
        let sim = shared as f32 / shorter as f32;
        (sim >= SUBST_MIN_SIM).then_some(sim)
    }

    fn subst_score(&self, i: usize, j: usize) -> Option<f32> {
        // A line that stands verbatim elsewhere in the file is as unlikely to be the new
        // version of another line as to be new code: it pays what inserting it would.
        // A changed declaration of the same name is that declaration's new version, nearly
        // as surely as an unchanged line is itself.
        self.similar(i, j).map(|sim| {
            let renewed = super::outline::declared_name(self.item_text[i])
                .is_some_and(|name| super::outline::declared_name(self.file_text[j]) == Some(name));
            let base = -self.insert_cost(i) + 0.02 + 0.01 * sim;
            if renewed {
                base + SAME_NAME_BONUS
            } else {
                base
            }
        })
    }

    /// About how many characters (without whitespace) snippet item `i` shares with file line
    /// `j` when it is similar enough to replace it (0 otherwise).
    pub fn shared_chars(&self, i: usize, j: usize) -> f32 {
        let shorter = self.items[i].nbigrams.min(self.file[j].nbigrams) + 1;
        self.similar(i, j).map_or(0.0, |sim| sim * shorter as f32)
    }

    /// How many file lines snippet item `i` is similar enough to replace.
    pub fn old_versions(&self, i: usize) -> usize {
        self.substitutions(i).len()
    }

    /// The file lines snippet item `i` may replace, with the substitution score, by line.
    fn substitutions(&self, i: usize) -> &[(u32, f32)] {
        self.item_substs[i].get_or_init(|| {
            let mut out = Vec::new();
            self.find_substitutions(i, 0..self.file.len(), &mut out);
            out
        })
    }

    /// Appends to `out` the file lines in `lines` that snippet item `i` may replace, with the
    /// substitution score, by line. Reuses the whole file's list when it is known.
    fn substitutions_in(&self, i: usize, lines: Range<usize>, out: &mut Vec<(u32, f32)>) {
        if lines.len() == self.file.len() {
            out.extend_from_slice(self.substitutions(i));
        } else if let Some(all) = self.item_substs[i].get() {
            let from = all.partition_point(|&(j, _)| (j as usize) < lines.start);
            let to = all.partition_point(|&(j, _)| (j as usize) < lines.end);
            out.extend_from_slice(&all[from..to]);
        } else {
            self.find_substitutions(i, lines, out);
        }
    }

    fn find_substitutions(&self, i: usize, lines: Range<usize>, out: &mut Vec<(u32, f32)>) {
        let a = &self.items[i];
        // A line the file holds verbatim is that line (or a copy of it), not a new version
        // of another.
        if a.blank || self.counts[a.id as usize] > 0 {
            return;
        }
        // Dice over bigrams is at most 2·min/(la+lb): only lines of a similar length can
        // reach the threshold.
        let la = a.nbigrams as f32;
        let lo = (la * SUBST_MIN_SIM / (2.0 - SUBST_MIN_SIM)).floor() as u32;
        let hi = (la * (2.0 - SUBST_MIN_SIM) / SUBST_MIN_SIM).ceil() as u32;
        for j in lines {
            let len = self.file[j].nbigrams;
            if (lo..=hi).contains(&len)
                && let Some(score) = self.subst_score(i, j)
            {
                out.push((j as u32, score));
            }
        }
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
    /// The implicit start placeholder may keep file lines `..edge_keep.0`, the implicit end
    /// placeholder lines `edge_keep.1..`: `(m, 0)` reads both as regions, `(0, m)` strictly
    /// (the snippet reaches the file's start and end).
    pub edge_keep: (usize, usize),
    /// Whether lines unique in both are pinned to each other.
    pub pinning: Pinning,
    /// File lines a placeholder may not keep: `(item, lines)`.
    pub keep_bans: Vec<(usize, (usize, usize))>,
    /// Snippet items (a range) that may only be inserted, never matched or substituted.
    pub insert_only: Option<(usize, usize)>,
}

/// Whether an alignment pins lines unique in both the snippet and the file to each other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pinning {
    /// Pinned (fast, and robust against look-alike lines).
    Pinned,
    /// Nothing pinned: for a snippet whose new code repeats unique lines of the file far
    /// from where it goes, which pins would drag the edit to.
    Unpinned,
}

/// A solved alignment: the steps, and the forward score of every state (for asking later
/// how well alternatives score).
pub struct Solution {
    /// The steps in order.
    pub ops: Vec<Op>,
    forward: Buf<f32>,
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
    edge_keep: (usize, usize),
) -> Option<Vec<Op>> {
    let problem = Problem {
        items,
        file,
        facts,
        forced,
        strict_edges,
        edge_keep,
        pinning: Pinning::Pinned,
        keep_bans: Vec::new(),
        insert_only: None,
    };
    solve(&problem).map(|s| s.ops)
}

impl Problem<'_> {
    /// Whether snippet item `i` may only be inserted.
    fn inserts_only(&self, i: usize) -> bool {
        self.insert_only.is_some_and(|(a, b)| (a..b).contains(&i))
    }

    /// The pinned lines this problem honours: `(pin of each item, pinned file lines)`.
    fn pins(&self) -> (&[Option<usize>], &[bool]) {
        let f = self.facts;
        match self.pinning {
            Pinning::Unpinned => (&f.unpinned.of_item, &f.unpinned.file),
            Pinning::Pinned if self.strict_edges => (&f.strict_pins.of_item, &f.strict_pins.file),
            Pinning::Pinned => (&f.pin_of_item, &f.pinned_file),
        }
    }

    /// Whether snippet item `i` may match file line `j` as far as edges go: a segment's edge
    /// line is context copied from the file, so under strict edges it matches only a line at
    /// the indentation it predicts.
    fn edge_allows(&self, i: usize, j: usize) -> bool {
        let facts = self.facts;
        let (item, line) = (&facts.items[i], &facts.file[j]);
        if indent_consistent(facts.indent_delta, item, line) {
            return true;
        }
        // A brace or keyword line at another indentation is another line, unless it closes
        // the same opening line (a block the edit re-indented).
        if item.trivial {
            return matches!(
                (facts.item_opener(i), facts.file_openers()[j]),
                (Some(a), Some(b)) if a == b
            );
        }
        !(self.strict_edges && facts.hard[i])
    }
}

/// Solve `problem`; `None` when no alignment satisfies its constraints.
pub fn solve(problem: &Problem<'_>) -> Option<Solution> {
    let mut back = Backpointers::new(problem.items.len(), problem.file.len());
    let mut forward = Buf::take();
    let best = pass::<false, true>(problem, &mut back, &mut forward);
    (best > NEG / 2.0).then(|| Solution {
        ops: back.walk(problem),
        forward,
    })
}

/// For each snippet item in `items`, the score of the best whole alignment that matches it to
/// each file line it equals (`None` where it cannot match): the solution's forward scores up
/// to the item plus a pass over the reversed problem down to it.
pub fn match_profile(
    problem: &Problem<'_>,
    solution: &Solution,
    items: &[usize],
) -> (f32, HashMap<usize, Vec<Option<f32>>>) {
    let (n, m) = (problem.items.len(), problem.file.len());
    let w = m + 1;
    let mut backward = Buf::take();
    pass::<true, false>(problem, &mut Backpointers::new(0, 0), &mut backward);
    let best = solution.forward[n * w + m];
    let facts = problem.facts;
    let profiles = items
        .iter()
        .map(|&i| {
            let f = &solution.forward[i * w..(i + 1) * w];
            let rb = n - (i + 1);
            let b = &backward[rb * w..(rb + 1) * w];
            let profile = (0..m)
                .map(|j| {
                    let (pin_of_item, pinned_file) = problem.pins();
                    let pinned_elsewhere = match pin_of_item[i] {
                        Some(p) => p != j,
                        None => pinned_file[j],
                    };
                    (facts.file[j].id == facts.items[i].id
                        && !problem.inserts_only(i)
                        && !pinned_elsewhere
                        && !problem.forced[j]
                        && problem.edge_allows(i, j))
                    .then(|| {
                        f[j] + facts.match_score(i) * facts.indent_factor(i, j) + b[m - (j + 1)]
                    })
                })
                .collect();
            (i, profile)
        })
        .collect();
    (best, profiles)
}

struct Backpointers {
    w: usize,
    back: Buf<u8>,
    back_del: Buf<u8>,
}

impl Backpointers {
    fn new(n: usize, m: usize) -> Backpointers {
        Backpointers {
            w: m + 1,
            back: Buf::filled((n + 1) * (m + 1), FROM_KEEP),
            back_del: Buf::filled((n + 1) * (m + 1), DEL_OPEN),
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
                    ops.push(if p.forced[j - 1] {
                        Op::Delete(j - 1)
                    } else {
                        Op::Keep(j - 1)
                    });
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

const PINNED: u8 = 1;
const FORCED: u8 = 2;

/// One dynamic-programming pass, forward or over the reversed problem (`REV`). Fills `scores`
/// with the score of every state (row-major, in the pass's own order) and returns the final
/// score.
fn pass<const REV: bool, const BACK: bool>(
    p: &Problem<'_>,
    back: &mut Backpointers,
    scores: &mut Vec<f32>,
) -> f32 {
    let (items, facts) = (p.items, p.facts);
    let n = items.len();
    let m = p.file.len();
    let w = m + 1;
    // Sequence positions to original indices.
    let it = |k: usize| if REV { n - 1 - k } else { k };
    let fl = |l: usize| if REV { m - 1 - l } else { l };
    // File facts in pass order, side by side for a tight inner loop.
    let (pin_of_item, pinned_file) = p.pins();
    let fdel: Vec<f32> = (0..m).map(|l| facts.delete_cost(fl(l))).collect();
    let fflags: Vec<u8> = (0..m)
        .map(|l| {
            let f = fl(l);
            (u8::from(pinned_file[f]) * PINNED) | (u8::from(p.forced[f]) * FORCED)
        })
        .collect();
    scores.clear();
    scores.resize((n + 1) * w, NEG);
    let mut del = vec![NEG; w];
    let mut diag: Vec<(usize, f32, u8)> = Vec::new();
    let mut substs: Vec<(u32, f32)> = Vec::new();
    // Every path passes through each pinned pair, so a row's states lie between the columns
    // of the pins around it: `band[i]` is the range of columns row `i` can reach.
    let mut band: Vec<(usize, usize)> = vec![(0, m); n + 1];
    {
        let pinned: Vec<(usize, usize)> = (0..n)
            .filter_map(|k| pin_of_item[it(k)].map(|f| (k, if REV { m - 1 - f } else { f })))
            .collect();
        let mut lo = 0;
        let mut next = 0;
        for (i, b) in band.iter_mut().enumerate() {
            while next < pinned.len() && pinned[next].0 < i {
                lo = lo.max(pinned[next].1 + 1);
                next += 1;
            }
            b.0 = lo;
        }
        let mut hi = m;
        let mut next = pinned.len();
        for (i, b) in band.iter_mut().enumerate().rev() {
            while next > 0 && pinned[next - 1].0 >= i {
                hi = hi.min(pinned[next - 1].1);
                next -= 1;
            }
            b.1 = hi.max(b.0);
        }
    }
    for i in 0..=n {
        // The item consumed by moves into this row, and the item current in this row.
        let entering = (i > 0).then(|| it(i - 1));
        let current = (i < n).then(|| it(i));
        // Keeping a line while the current item is a placeholder: free (a tiny price under an
        // implicit one), and an implicit edge placeholder keeps only the lines its reading
        // allows. Otherwise lines are deleted (while a code item is current, after the last
        // item, and outside an edge placeholder's range).
        let keep: Option<f32> = current.and_then(|c| match &items[c] {
            Item::Placeholder { implicit: true, .. } => Some(IMPLICIT_KEEP),
            Item::Placeholder {
                implicit: false, ..
            }
            | Item::Remove(_) => Some(0.0),
            Item::Code(_) => None,
        });
        let (klo, khi) = match current {
            Some(c) if matches!(items[c], Item::Placeholder { implicit: true, .. }) => {
                let (lo, hi) = if c == 0 {
                    (0, p.edge_keep.0.min(m))
                } else if c + 1 == n {
                    (p.edge_keep.1.min(m), m)
                } else {
                    (0, m)
                };
                // In pass order.
                if REV { (m - hi, m - lo) } else { (lo, hi) }
            }
            _ => (0, m),
        };
        // Lines this placeholder may not keep, in pass order.
        let (blo, bhi) = current
            .and_then(|c| p.keep_bans.iter().find(|b| b.0 == c))
            .map_or(
                (0, 0),
                |&(_, (lo, hi))| if REV { (m - hi, m - lo) } else { (lo, hi) },
            );
        // Vertical moves: leaving a placeholder (free) or inserting a code line.
        let code = entering.filter(|&e| matches!(items[e], Item::Code(_)));
        let only_inserted = code.is_some_and(|e| p.inserts_only(e));
        let v_cost: Option<f32> = match entering {
            None => None,
            Some(e) => match code {
                None => Some(0.0),
                Some(_) if only_inserted => Some(facts.insert_cost(e)),
                Some(_) if pin_of_item[e].is_some() || (p.strict_edges && facts.hard[e]) => None,
                Some(_) if facts.soft[e] => Some(SOFT_DROP),
                Some(_) => Some(facts.insert_cost(e)),
            },
        };
        // Diagonal moves of a code line, in pass order: matches and substitutions.
        diag.clear();
        if let Some(e) = code.filter(|_| !only_inserted) {
            let m_score = facts.match_score(e);
            let usable = |f: usize| {
                !p.forced[f]
                    && match pin_of_item[e] {
                        Some(pp) => pp == f,
                        None => !pinned_file[f],
                    }
            };
            for &f in facts.lines_with(facts.items[e].id) {
                let f = f as usize;
                if usable(f) && p.edge_allows(e, f) {
                    // Same key, indentation and length: the same bytes, as good as certain.
                    let (a, b) = (&facts.items[e], &facts.file[f]);
                    let exact = if a.indent == b.indent && a.len == b.len {
                        EXACT_BONUS
                    } else {
                        0.0
                    };
                    diag.push((
                        fl(f),
                        m_score * facts.indent_factor(e, f) + exact,
                        FROM_MATCH,
                    ));
                }
            }
            if v_cost.is_some() {
                // Only the file lines this row's band reaches (see the loop below).
                let (lo, hi) = band[i];
                let lines = if REV {
                    m - hi..m + 1 - lo.max(1)
                } else {
                    lo.saturating_sub(1)..hi
                };
                substs.clear();
                facts.substitutions_in(e, lines, &mut substs);
                for &(f, sc) in &substs {
                    if usable(f as usize) {
                        diag.push((fl(f as usize), sc, FROM_SUBST));
                    }
                }
            }
            diag.sort_unstable_by_key(|d| d.0);
        }
        let (prev_rows, cur_rows) = scores.split_at_mut(i * w);
        let prev: &[f32] = if i > 0 {
            &prev_rows[(i - 1) * w..i * w]
        } else {
            &[]
        };
        let cur = &mut cur_rows[..w];
        let vc = v_cost.unwrap_or(f32::INFINITY);
        let (lo, hi) = band[i];
        if lo == 0 {
            // Column 0: only vertical moves (or the start).
            cur[0] = if i == 0 { 0.0 } else { prev[0] - vc };
            if BACK {
                back.back[i * w] = if i == 0 { FROM_KEEP } else { FROM_V };
            }
        }
        // Columns from `lo` on; the one before stays unreachable.
        let start = lo.saturating_sub(1);
        del[start] = NEG;
        let mut next = diag.partition_point(|d| d.0 < start);
        let (mut next_diag, mut diag_score, mut diag_kind) = match diag.get(next) {
            Some(&(l, sc, k)) => (l, sc, k),
            None => (usize::MAX, 0.0, 0),
        };
        for l in start..hi {
            let j = l + 1;
            // Vertical: `prev[j] - vc` is NEG-ish when inserting is not allowed.
            let mut best = if i > 0 { prev[j] - vc } else { NEG };
            let mut from = FROM_V;
            if l == next_diag {
                let s = prev[l] + diag_score;
                if s > best || (s == best && diag_kind == FROM_MATCH) {
                    best = s;
                    from = diag_kind;
                }
                next += 1;
                (next_diag, diag_score, diag_kind) = match diag.get(next) {
                    Some(&(l, sc, k)) => (l, sc, k),
                    None => (usize::MAX, 0.0, 0),
                };
            }
            let flags = fflags[l];
            let keeps = keep.is_some() && l >= klo && l < khi && !(l >= blo && l < bhi);
            if flags != 0 || keeps {
                if flags & PINNED != 0 {
                    // A pinned line is only ever matched by its snippet line.
                    del[j] = NEG;
                } else if flags & FORCED != 0 || keeps {
                    // Keeping (or dropping a line a directive removes, which is free); a
                    // forced line where nothing keeps is dropped all the same.
                    let k = if flags & FORCED != 0 {
                        0.0
                    } else {
                        keep.unwrap_or(f32::INFINITY)
                    };
                    let h = cur[l] - k;
                    if h > best {
                        best = h;
                        from = FROM_KEEP;
                    }
                    del[j] = NEG;
                } else {
                    del[j] = NEG;
                }
            } else {
                let c = fdel[l];
                let extend = del[l] - c;
                let open = cur[l] - DEL_OPEN_COST - c;
                let (d, how) = if extend >= open {
                    (extend, DEL_EXTEND)
                } else {
                    (open, DEL_OPEN)
                };
                del[j] = d;
                if BACK {
                    back.back_del[i * w + j] = how;
                }
                if d > best {
                    best = d;
                    from = FROM_DEL;
                }
            }
            cur[j] = best;
            if BACK {
                back.back[i * w + j] = from;
            }
        }
    }
    scores[n * w + m]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trivial_lines_are_bare_keywords_and_lines_without_letters_or_digits() {
        let cases = [
            ("}", true),
            ("  else {", true),
            ("\t} else {", true),
            ("return false;", true),
            ("  return  false ;", true),
            ("returnfalse;x", false),
            ("return falsey;", false),
            ("end", true),
            ("#endif", true),
            ("  @Override", true),
            ("é", false),
            ("  fi", true),
            ("x = 1", false),
            ("", true),
            ("   ", true),
            ("return nil", true),
            ("continue;;", false),
            ("} catch {", true),
            ("pass  # done", false),
            ("});", true),
            ("// ==================", true),
            ("/* ---------------- */", true),
            ("// ====== x ======", false),
            ("  »»»", true),
            ("  «x»", false),
            ("  // ——— éé ———", false),
            ("  // ——————————————", true),
        ];
        for (line, trivial) in cases {
            assert_eq!(is_trivial(line), trivial, "{line:?}");
            assert_eq!(line_fact(line).1.trivial, trivial, "{line:?}");
        }
    }

    #[test]
    fn substitutions_in_a_range_are_the_whole_files_list_cut_to_it() {
        let file: Vec<&str> = vec![
            "fn alpha(a: u32) -> u32 {",
            "    let total = a * 2 + 1;",
            "    total",
            "}",
            "fn beta(b: u32) -> u32 {",
            "    let total = b * 2 + 1;",
            "    total",
            "}",
        ];
        let items = vec![Item::Code("    let total = x * 2 + 1;".to_string())];
        let index = FileIndex::new(&file);
        let fresh = Facts::new(&file, &index, &items);
        let mut part = Vec::new();
        fresh.substitutions_in(0, 4..8, &mut part);
        let whole = fresh.substitutions(0).to_vec();
        assert_eq!(whole.iter().map(|s| s.0).collect::<Vec<_>>(), vec![1, 5]);
        assert_eq!(part, vec![whole[1]]);
        // Once the whole list is known, a range is cut from it.
        let mut cut = Vec::new();
        fresh.substitutions_in(0, 0..5, &mut cut);
        assert_eq!(cut, vec![whole[0]]);
    }
}
