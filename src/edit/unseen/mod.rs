//! Lines an edit deletes that it does not show (docs/DESIGN.md §4): one measure for every
//! engine, from the file before, the result, and what the edit's text shows ([`Shown`]).
//! Pure: it knows no engine's placement, only the texts.
//!
//! A deleted non-blank line is *seen* when
//! - the edit quotes it: a `-` line, a SEARCH block, an exact search, a diff ([`Shown`]'s
//!   quoted lines);
//! - the edit pins down its place and replaces it there: it lies between two lines the edit
//!   shows that anchor in the file by themselves (unique as a block in the file and in the
//!   result, and reaching outward a placeholder, the edge of the edit's stretch or more of the
//!   file's lines, not new code), with exactly the edit's lines between them in the result
//!   ([`pins`]); an opener's closer (the first line after it at its depth or shallower) is
//!   pinned by the opener when the result holds exactly the stretch's lines from one to the
//!   other;
//! - it is a changed line paired with its new version in the same change (at its depth and
//!   much alike, in order): rewritten in place, not dropped;
//! - the result still holds its text as often as the file did (moved, or only told apart by
//!   the diff: no copy of it is lost);
//!
//! unless it belongs to a definition the file had and the result lacks (by the grammar's tags)
//! whose name the edit never writes: code replaced by other code under a name the edit never
//! mentions is unseen however it was placed. A definition the edit removes by name
//! (`remove NAME`) is seen. Every other deleted line is unseen.

mod pins;

use std::collections::HashSet;
use std::hash::BuildHasherDefault;

use crate::diff::FileDiff;
use crate::edit::matching::{KeyHasher, line_key};
use crate::syntax::{self, Lang};

/// How alike a deleted line and an inserted line of the same change must be to count as one
/// line rewritten in place (the mean of their character-bigram and word Dice coefficients).
const PAIRED: f32 = 0.6;

/// The longest word kept as a name the edit writes.
const MAX_NAME: usize = 128;

/// A deleted line is paired only with the inserted lines this close after the last pair, and
/// only when both are at most [`MAX_PAIRED_LEN`] bytes long: the pairing stays linear.
const PAIR_WINDOW: usize = 32;
const MAX_PAIRED_LEN: usize = 1000;

/// In all, at most this many pairs of lines are compared for [`paired`].
const PAIR_BUDGET: usize = 200_000;

/// At most this many line ranges are named in a warning; the rest are counted.
const MAX_RANGES: usize = 6;

/// What an edit's text shows of a file: the lines it quotes (as file lines it changes), the
/// stretches of lines it writes contiguously (as the result should hold them), the words it
/// writes, and the definitions it removes by name. Lines are kept as hashes (whitespace and
/// look-alikes folded), so a large edit costs 8 bytes a line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Shown {
    quoted: HashSet<u64>,
    stretches: Vec<Vec<u64>>,
    words: HashSet<String>,
    removals: HashSet<String>,
}

impl Shown {
    /// An edit that quotes every line of `texts` (SEARCH/REPLACE blocks, an exact search and
    /// its replacement, a diff): a line that begins with `-` or `+` counts without that sign
    /// too.
    pub fn quoting<'a>(texts: impl IntoIterator<Item = &'a str>) -> Shown {
        let mut s = Shown::default();
        for text in texts {
            for line in text.lines() {
                s.quote(line);
                if let Some(rest) = line.strip_prefix(['-', '+']) {
                    s.quote(rest);
                }
            }
            s.add_words(text);
        }
        s
    }

    /// An edit that writes `content` whole: one stretch, quoting nothing.
    pub fn whole(content: &str) -> Shown {
        let mut s = Shown::default();
        s.stretch(content.lines());
        s.add_words(content);
        s
    }

    /// Quote one line.
    pub fn quote(&mut self, line: &str) {
        if !line.trim().is_empty() {
            self.quoted.insert(line_key(line));
        }
    }

    /// Add a stretch: lines the edit writes one after the other (blank lines skipped).
    pub fn stretch<'a>(&mut self, lines: impl IntoIterator<Item = &'a str>) {
        let keys: Vec<u64> = lines
            .into_iter()
            .filter(|l| !l.trim().is_empty())
            .map(line_key)
            .collect();
        if !keys.is_empty() {
            self.stretches.push(keys);
        }
    }

    /// Note the words (identifiers) `text` writes.
    pub fn add_words(&mut self, text: &str) {
        self.words.extend(words(text).map(String::from));
    }

    /// A definition the edit removes by name.
    pub fn remove(&mut self, name: &str) {
        self.removals.insert(name.to_string());
        self.words.insert(name.to_string());
    }

    /// Whether the edit quotes `line` (as a line it changes or deletes).
    pub fn quotes(&self, line: &str) -> bool {
        self.quoted.contains(&line_key(line))
    }

    /// Whether the edit writes `a` and then `b` one after the other in one stretch (blank
    /// lines aside): the result's lines between them are the ones it shows there.
    pub fn adjacent(&self, a: &str, b: &str) -> bool {
        let (a, b) = (line_key(a), line_key(b));
        self.stretches
            .iter()
            .any(|s| s.windows(2).any(|w| w[0] == a && w[1] == b))
    }

    /// About how many bytes it holds.
    pub fn held_bytes(&self) -> usize {
        let words: usize = self.words.iter().map(|w| w.len() + 24).sum();
        let stretches: usize = self.stretches.iter().map(|s| s.len() * 8 + 24).sum();
        self.quoted.capacity() * 8 + words + stretches
    }
}

/// The identifiers of `text` (none longer than a name would be).
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty() && w.len() <= MAX_NAME)
}

/// The lines of `old` (0-based, ascending) that `diff` (from `old` to `new`) deletes and
/// `shown` does not show. `path` names the language, for definitions.
pub fn lines(
    path: Option<&str>,
    old: &str,
    new: &str,
    diff: &FileDiff,
    shown: &Shown,
) -> Vec<usize> {
    let old_lines: Vec<&str> = old.lines().collect();
    let new_lines: Vec<&str> = new.lines().collect();
    let changes: Vec<&crate::diff::Change> = diff.hunks.iter().flat_map(|h| &h.changes).collect();
    // Deleted non-blank lines the edit does not quote.
    let mut open: Vec<usize> = changes
        .iter()
        .flat_map(|c| c.old.clone())
        .filter(|&i| old_lines.get(i).is_some_and(|l| !l.trim().is_empty()))
        .filter(|&i| !shown.quoted.contains(&line_key(old_lines[i])))
        .collect();
    if open.is_empty() {
        return open;
    }
    // Every line's key, once for both measures that compare lines by key.
    let okeys: Vec<u64> = old_lines.iter().map(|l| line_key(l)).collect();
    let nkeys: Vec<u64> = new_lines.iter().map(|l| line_key(l)).collect();
    let pinned = pins::pinned(
        &pins::Keyed {
            lines: &old_lines,
            keys: &okeys,
        },
        &pins::Keyed {
            lines: &new_lines,
            keys: &nkeys,
        },
        &changes,
        &shown.stretches,
    );
    let paired = paired(&old_lines, &new_lines, &changes);
    let moved = moved(&okeys, &nkeys, &open);
    let placed: HashSet<usize> = open
        .iter()
        .copied()
        .filter(|i| pinned.contains(i) || paired.contains(i) || moved.contains(i))
        .collect();
    let lang = path.and_then(|p| Lang::of_text(p, old));
    let deleted: HashSet<usize> = changes.iter().flat_map(|c| c.old.clone()).collect();
    // The definitions are read (two tags queries) only when they can change the answer: a
    // removal by name, or a placed line holding a name the result and the edit never write.
    let by_name = lang
        .filter(|_| !shown.removals.is_empty() || names_gone(&old_lines, &placed, new, shown))
        .map(|lang| Definitions::of(lang, (old, new), &deleted, shown))
        .unwrap_or_default();
    open.retain(|i| {
        if by_name.removed.contains(i) {
            return false;
        }
        !placed.contains(i) || by_name.dropped.contains(i)
    });
    open
}

/// Whether a line of `placed` writes a name (a word of two characters or more, not a number)
/// that neither the result nor the edit holds: only then can a definition have gone under a
/// name the edit never writes.
fn names_gone(old: &[&str], placed: &HashSet<usize>, new: &str, shown: &Shown) -> bool {
    let mut tried = HashSet::new();
    placed.iter().any(|&i| {
        words(old[i])
            .filter(|w| w.len() > 1 && !w.starts_with(|c: char| c.is_ascii_digit()))
            .filter(|w| !shown.words.contains(*w) && tried.insert(*w))
            .any(|w| !has_word(new, w))
    })
}

/// Whether `text` holds `word` as a whole word (not inside a longer identifier).
fn has_word(text: &str, word: &str) -> bool {
    let ident = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    text.match_indices(word).any(|(at, _)| {
        !ident(text[..at].chars().next_back()) && !ident(text[at + word.len()..].chars().next())
    })
}

/// Deleted lines that pair, in order, with an inserted line of the same change at the same
/// depth that is much alike: a line rewritten in place (looked for within [`PAIR_WINDOW`]
/// lines of the last pair, at most [`PAIR_BUDGET`] comparisons in all). Every deleted line
/// takes its turn, quoted or not, so the pairs follow the change's own order.
fn paired(old: &[&str], new: &[&str], changes: &[&crate::diff::Change]) -> HashSet<usize> {
    let mut out = HashSet::new();
    let mut budget = PAIR_BUDGET;
    for c in changes {
        let mut next = c.new.start;
        for i in c.old.clone() {
            let Some(line) = old
                .get(i)
                .filter(|l| !l.trim().is_empty() && l.len() <= MAX_PAIRED_LEN)
            else {
                continue;
            };
            let window = next..c.new.end.min(next + PAIR_WINDOW);
            let found = window.into_iter().find(|&j| {
                new.get(j).is_some_and(|n| {
                    if budget == 0 || n.len() > MAX_PAIRED_LEN || indent(line) != indent(n) {
                        return false;
                    }
                    budget -= 1;
                    alike(line, n) >= PAIRED
                })
            });
            if let Some(j) = found {
                out.insert(i);
                next = j + 1;
            }
        }
    }
    out
}

/// Deleted lines whose text the result still holds as often as the file did: moved, written
/// again at another place, or only told apart by the diff (no copy of the text is lost).
/// `old` and `new` are the texts' line keys.
fn moved(old: &[u64], new: &[u64], open: &[usize]) -> HashSet<usize> {
    type Keys<V> = std::collections::HashMap<u64, V, BuildHasherDefault<KeyHasher>>;
    let wanted: HashSet<u64, BuildHasherDefault<KeyHasher>> =
        open.iter().map(|&i| old[i]).collect();
    if wanted.is_empty() {
        return HashSet::new();
    }
    let count = |keys: &[u64]| {
        let mut n: Keys<usize> = Keys::default();
        for &k in keys.iter().filter(|k| wanted.contains(*k)) {
            *n.entry(k).or_default() += 1;
        }
        n
    };
    let (before, after) = (count(old), count(new));
    open.iter()
        .copied()
        .filter(|&i| {
            let k = old[i];
            wanted.contains(&k) && after.get(&k) >= before.get(&k)
        })
        .collect()
}

/// The indentation of a line, in bytes.
fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// How alike two lines are (0..1), as the engines judge it.
fn alike(a: &str, b: &str) -> f32 {
    crate::edit::likeness::similarity(a, b)
}

/// What the definitions say of the deleted lines.
#[derive(Default)]
struct Definitions {
    /// Lines of definitions the result lacks and the edit never names.
    dropped: HashSet<usize>,
    /// Lines of definitions the edit removes by name.
    removed: HashSet<usize>,
}

impl Definitions {
    /// Read the definitions of `old` and `new`; `deleted` are the old lines the diff deletes.
    fn of(lang: Lang, texts: (&str, &str), deleted: &HashSet<usize>, shown: &Shown) -> Definitions {
        let mut out = Definitions::default();
        let (old, new) = texts;
        let Some(before) = syntax::defs(lang, old) else {
            return out;
        };
        // A result that could not be read (too large, too slow) says nothing of what it lacks.
        let Some(after) = syntax::defs(lang, new) else {
            return out;
        };
        let names: HashSet<&str> = after.iter().map(|d| d.name.as_str()).collect();
        let had: HashSet<&str> = before.iter().map(|d| d.name.as_str()).collect();
        let (old_lines, new_lines): (Vec<&str>, Vec<&str>) =
            (old.lines().collect(), new.lines().collect());
        // New definitions under names the file did not have: what a rename may have made,
        // each as its text with its name taken out.
        let fresh: HashSet<Vec<u64>> = after
            .iter()
            .filter(|d| !had.contains(d.name.as_str()))
            .map(|e| body_key(&new_lines, e))
            .collect();
        for d in before.iter().filter(|d| is_code(d)) {
            let lines = d.extent.0..d.extent.1;
            if shown.removals.contains(&d.name) {
                out.removed.extend(lines);
                continue;
            }
            if names.contains(d.name.as_str()) || shown.words.contains(&d.name) {
                continue;
            }
            let solid: Vec<usize> = lines
                .clone()
                .filter(|&i| old_lines.get(i).is_some_and(|l| !l.trim().is_empty()))
                .collect();
            let gone = solid.iter().filter(|i| deleted.contains(i)).count();
            // Most of it is gone, and no new definition is the same text under another name.
            let renamed = || fresh.contains(&body_key(&old_lines, d));
            if gone * 2 >= solid.len().max(1) && !renamed() {
                out.dropped.extend(solid);
            }
        }
        out
    }
}

/// A code definition: a data file's keys and a style sheet's rules are lines like any other,
/// placed by the lines around them.
fn is_code(d: &syntax::Def) -> bool {
    d.body && !matches!(d.kind, "key" | "rule" | "property")
}

/// The keys of a definition's non-blank lines with its name taken out: two definitions
/// alike but for their names have the same.
fn body_key(lines: &[&str], d: &syntax::Def) -> Vec<u64> {
    lines
        .get(d.extent.0..d.extent.1.min(lines.len()))
        .unwrap_or(&[])
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| line_key(&l.replace(d.name.as_str(), "")))
        .collect()
}

/// Per hunk of `diff`, how many of its deleted lines are among `unseen` (old line indices).
pub fn per_hunk(diff: &FileDiff, unseen: &[usize]) -> Vec<usize> {
    diff.hunks
        .iter()
        .map(|h| {
            h.lines
                .iter()
                .filter(|l| l.tag == crate::diff::Tag::Delete)
                .filter(|l| {
                    l.old_index
                        .is_some_and(|i| unseen.binary_search(&i).is_ok())
                })
                .count()
        })
        .collect()
}

/// `unseen: 29 lines deleted that the edit does not show (465–493)`, for `unseen` lines of
/// `old` (0-based, ascending); a range runs over the blank lines between them. `None` when
/// there are none.
pub fn warning(old: &str, unseen: &[usize]) -> Option<String> {
    let n = unseen.len();
    if n == 0 {
        return None;
    }
    let old_lines: Vec<&str> = old.lines().collect();
    let blank = |i: usize| old_lines.get(i).is_some_and(|l| l.trim().is_empty());
    let mut ranges: Vec<(usize, usize)> = Vec::new();
    for &i in unseen {
        match ranges.last_mut() {
            Some((_, end)) if (*end + 1..i).all(blank) => *end = i,
            _ => ranges.push((i, i)),
        }
    }
    let mut named: Vec<String> = ranges
        .iter()
        .take(MAX_RANGES)
        .map(|&(a, b)| {
            if a == b {
                format!("{}", a + 1)
            } else {
                format!("{}–{}", a + 1, b + 1)
            }
        })
        .collect();
    if ranges.len() > MAX_RANGES {
        named.push(format!("and {} more places", ranges.len() - MAX_RANGES));
    }
    let s = if n == 1 { "" } else { "s" };
    Some(format!(
        "unseen: {n} line{s} deleted that the edit does not show ({})",
        named.join(", ")
    ))
}

#[cfg(test)]
mod tests;
