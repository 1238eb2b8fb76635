//! The file's side of a merge, computed once: each line's key, indentation and triviality,
//! where each key occurs, and (on first asking) the definitions its grammar finds. Memory is
//! linear in the file: the positions of all keys live in one array, grouped by key.

use std::cell::OnceCell;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use crate::edit::matching::KeyHasher;
use crate::syntax::{self, Def, Lang};

use super::lines;

/// Facts about one file line.
#[derive(Debug, Clone, Copy)]
struct Facts {
    indent: u32,
    blank: bool,
    trivial: bool,
}

/// The indexed file.
pub(crate) struct FileIndex<'a> {
    /// The file's lines (LF-normalised, without line breaks).
    pub(crate) lines: &'a [&'a str],
    keys: Vec<u64>,
    facts: Vec<Facts>,
    /// For each key, the range of `order` that holds its positions.
    groups: HashMap<u64, (u32, u32), BuildHasherDefault<KeyHasher>>,
    /// Every line number, grouped by key, ascending within a group.
    order: Vec<u32>,
    /// The whole text and its language, when a grammar for it is built in.
    source: Option<(Lang, &'a str)>,
    /// The file's language by its path or shebang, its grammar built in or not.
    named: Option<Lang>,
    /// The definitions the grammar's tags find, computed on first asking.
    tags: OnceCell<Option<Outline>>,
}

/// A file's definitions by its grammar (those with a body: a prototype or a signature
/// defines nothing here), with the definitions on each line, found once.
pub(crate) struct Outline {
    /// The definitions, in header order.
    pub(crate) defs: Vec<Def>,
    /// For each line that holds names, the indexes of the definitions named there.
    pub(crate) by_line: HashMap<usize, Vec<usize>>,
}

impl Outline {
    fn new(defs: Vec<Def>) -> Outline {
        let defs: Vec<Def> = defs.into_iter().filter(|d| d.body).collect();
        let mut by_line: HashMap<usize, Vec<usize>> = HashMap::new();
        for (k, d) in defs.iter().enumerate() {
            by_line.entry(d.name_line).or_default().push(k);
        }
        Outline { defs, by_line }
    }

    /// The definitions named on line `j`.
    pub(crate) fn on_line(&self, j: usize) -> impl Iterator<Item = &Def> {
        self.by_line
            .get(&j)
            .into_iter()
            .flatten()
            .map(|&k| &self.defs[k])
    }
}

impl<'a> FileIndex<'a> {
    /// Index the lines of a file.
    pub(crate) fn new(file: &'a [&'a str]) -> FileIndex<'a> {
        let mut keys: Vec<u64> = Vec::with_capacity(file.len());
        let mut facts: Vec<Facts> = Vec::with_capacity(file.len());
        for l in file {
            let (key, indent, blank, trivial) = lines::facts(l);
            keys.push(key);
            facts.push(Facts {
                indent,
                blank,
                trivial,
            });
        }
        let mut counts: HashMap<u64, (u32, u32), BuildHasherDefault<KeyHasher>> =
            HashMap::with_capacity_and_hasher(file.len(), Default::default());
        for k in &keys {
            counts.entry(*k).or_insert((0, 0)).1 += 1;
        }
        let mut next = 0u32;
        for group in counts.values_mut() {
            group.0 = next;
            next += group.1;
            group.1 = 0;
        }
        let mut order = vec![0u32; file.len()];
        for (j, k) in keys.iter().enumerate() {
            let group = counts.get_mut(k).expect("every key was counted");
            order[(group.0 + group.1) as usize] = j as u32;
            group.1 += 1;
        }
        FileIndex {
            lines: file,
            keys,
            facts,
            groups: counts,
            order,
            source: None,
            named: None,
            tags: OnceCell::new(),
        }
    }

    /// The same index, told the file's path and whole text (whose lines it indexes), so that
    /// its definitions can come from its grammar.
    pub(crate) fn with_source(mut self, path: Option<&str>, text: &'a str) -> FileIndex<'a> {
        self.source = path
            .and_then(|p| Lang::of_text(p, text))
            .map(|lang| (lang, text));
        self.named = path.and_then(|p| Lang::named_of_text(p, text));
        self
    }

    /// The file's language by its path (or shebang), its grammar built in or not.
    pub(crate) fn named_language(&self) -> Option<Lang> {
        self.named
    }

    /// The file's definitions by its grammar, when its language has tags and the file parses
    /// without errors (a broken file's tree misplaces what follows the error); `None`
    /// otherwise, and the hand heuristics read the lines instead.
    pub(crate) fn tags(&self) -> Option<&Outline> {
        self.tags
            .get_or_init(|| {
                let (lang, text) = self.source?;
                syntax::defs::defs_if_clean(lang, text).map(Outline::new)
            })
            .as_ref()
    }

    /// Whether the file's definitions were asked for (and so its tags query run, if any).
    #[cfg(test)]
    pub(crate) fn tags_asked(&self) -> bool {
        self.tags.get().is_some()
    }

    /// Number of lines.
    pub(crate) fn len(&self) -> usize {
        self.lines.len()
    }

    /// The key of line `j`.
    pub(crate) fn key(&self, j: usize) -> u64 {
        self.keys[j]
    }

    /// The lines holding this key, ascending.
    pub(crate) fn positions(&self, key: u64) -> &[u32] {
        self.groups.get(&key).map_or(&[], |&(start, len)| {
            &self.order[start as usize..(start + len) as usize]
        })
    }

    /// How many lines hold this key.
    pub(crate) fn count(&self, key: u64) -> usize {
        self.groups.get(&key).map_or(0, |&(_, len)| len as usize)
    }

    /// Whether some line holds this key.
    pub(crate) fn contains(&self, key: u64) -> bool {
        self.groups.contains_key(&key)
    }

    /// Indentation of line `j` in columns.
    pub(crate) fn indent(&self, j: usize) -> u32 {
        self.facts[j].indent
    }

    /// Whether line `j` is blank.
    pub(crate) fn is_blank(&self, j: usize) -> bool {
        self.facts[j].blank
    }

    /// Whether line `j` is trivial (blank included).
    pub(crate) fn is_trivial(&self, j: usize) -> bool {
        self.facts[j].trivial
    }

    /// Whether line `j` is the first of a paragraph (a run of non-blank lines).
    pub(crate) fn starts_paragraph(&self, j: usize) -> bool {
        !self.is_blank(j) && (j == 0 || self.is_blank(j - 1))
    }

    /// Whether line `j` is the last of a paragraph.
    pub(crate) fn ends_paragraph(&self, j: usize) -> bool {
        !self.is_blank(j) && (j + 1 == self.len() || self.is_blank(j + 1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_grouped_by_key_in_file_order() {
        let file = ["a", "}", "b", "  }", "a"];
        let index = FileIndex::new(&file);
        assert_eq!(index.positions(lines::key("a")), &[0, 4]);
        assert_eq!(index.positions(lines::key("}")), &[1, 3]);
        assert_eq!(index.count(lines::key("b")), 1);
        assert!(!index.contains(lines::key("c")));
        assert!(index.is_trivial(1) && !index.is_trivial(2));
        assert_eq!(index.indent(3), 2);
    }
}
