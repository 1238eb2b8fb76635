//! The file's side of a merge, computed once: each line's key, indentation and triviality,
//! where each key occurs, and (on first asking) the definitions its grammar finds. Memory is
//! linear in the file: the positions of all keys live in one array, grouped by key. The line
//! facts of the last few texts merged into are remembered (found by the text itself, compared
//! whole), so a text merged into again (a retry, another snippet for the same file, the
//! unseen-deletion measure's reading of the snippet) is not read again; a text new here that
//! shares its head and tail with a remembered one (the written result of the last edit,
//! merged into next) takes those lines' facts from it and reads only the lines between.

use std::cell::OnceCell;
use std::collections::{HashMap, VecDeque};
use std::hash::BuildHasherDefault;
use std::sync::{Arc, Mutex, PoisonError};

use crate::edit::matching::KeyHasher;
use crate::syntax::{self, Def, Lang};

use super::lines;

/// Facts about one file line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Facts {
    indent: u32,
    blank: bool,
    trivial: bool,
}

/// The facts of a text's lines, shared by the indexes of that text.
struct Table {
    keys: Vec<u64>,
    facts: Vec<Facts>,
    /// For each key, the range of `order` that holds its positions.
    groups: HashMap<u64, (u32, u32), BuildHasherDefault<KeyHasher>>,
    /// Every line number, grouped by key, ascending within a group.
    order: Vec<u32>,
}

/// How many texts' line facts are remembered (the least recently used goes first).
const REMEMBERED_TEXTS: usize = 4;

/// The remembered line facts take at most this many bytes together, by their estimated size
/// (the text's bytes and [`LINE_BYTES`] a line); a text whose facts alone are larger keeps
/// none.
const REMEMBERED_BYTES: usize = 32 << 20;

/// The memory one line's facts take, as estimated: its key, its facts, its place in `order`
/// and its share of `groups`.
const LINE_BYTES: usize = 64;

/// One remembered text with its line facts and their estimated size.
struct Remembered {
    text: Arc<str>,
    table: Arc<Table>,
    size: usize,
}

/// The remembered line facts, the most recently used last. The lock is held only to look at
/// or change this list of at most [`REMEMBERED_TEXTS`] entries: texts are compared, copied
/// and freed outside it, so merges into different files never wait on one another's bytes.
static REMEMBERED: Mutex<VecDeque<Remembered>> = Mutex::new(VecDeque::new());

fn remembered() -> std::sync::MutexGuard<'static, VecDeque<Remembered>> {
    REMEMBERED.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Forget the remembered line facts (for timing a merge from scratch).
pub fn forget_indexes() {
    let gone = std::mem::take(&mut *remembered());
    drop(gone);
}

/// The line facts of `text`, whose lines are `file`: the remembered ones, else computed (the
/// lines it shares with a remembered text taken from it), and remembered when they fit.
fn table_of(file: &[&str], text: &str) -> Arc<Table> {
    if let Some(table) = recalled(file, text) {
        return table;
    }
    let table = Arc::new(derived(file, text).unwrap_or_else(|| Table::new(file)));
    let size = file
        .len()
        .saturating_mul(LINE_BYTES)
        .saturating_add(text.len());
    if size <= REMEMBERED_BYTES {
        let gone = remember(Remembered {
            text: text.into(),
            table: table.clone(),
            size,
        });
        drop(gone);
    }
    table
}

/// The remembered facts of `text`, if any (then the most recently used): the texts of its
/// length and line count are taken under the lock (a count of references each) and compared
/// after it is released.
fn recalled(file: &[&str], text: &str) -> Option<Arc<Table>> {
    let alike: Vec<(Arc<str>, Arc<Table>)> = remembered()
        .iter()
        .rev()
        .filter(|r| r.text.len() == text.len() && r.table.keys.len() == file.len())
        .map(|r| (r.text.clone(), r.table.clone()))
        .collect();
    let (_, table) = alike.into_iter().find(|(t, _)| **t == *text)?;
    touch(&table);
    Some(table)
}

/// Make `table` the most recently used of the remembered, if it still is remembered (pushed
/// out meanwhile, it is still the facts of its text, only not remembered any more).
fn touch(table: &Arc<Table>) {
    let mut kept = remembered();
    if let Some(at) = kept.iter().rposition(|r| Arc::ptr_eq(&r.table, table))
        && let Some(found) = kept.remove(at)
    {
        kept.push_back(found);
    }
}

/// The remembered facts of the text whose lines are `file`, if one is (then the most recently
/// used): as [`recalled`], each candidate's lines compared with `file` one by one.
fn recalled_lines(file: &[&str]) -> Option<Arc<Table>> {
    // The text of `file` (a line break after each line but perhaps the last).
    let bytes: usize = file.iter().map(|l| l.len() + 1).sum();
    let alike: Vec<(Arc<str>, Arc<Table>)> = remembered()
        .iter()
        .rev()
        .filter(|r| r.table.keys.len() == file.len())
        .filter(|r| r.text.len() == bytes || r.text.len() + 1 == bytes)
        .map(|r| (r.text.clone(), r.table.clone()))
        .collect();
    let (_, table) = alike.into_iter().find(|(t, _)| same_lines(t, file))?;
    touch(&table);
    Some(table)
}

/// Whether `file` is the lines of `text` (split at each LF, a final LF ending the last line).
fn same_lines(text: &str, file: &[&str]) -> bool {
    let mut rest = text;
    for (j, line) in file.iter().enumerate() {
        let (piece, after) = match memchr::memchr(b'\n', rest.as_bytes()) {
            Some(at) => (&rest[..at], &rest[at + 1..]),
            // Only the last line may end the text without a line break.
            None if j + 1 == file.len() && !rest.is_empty() => (rest, ""),
            None => return false,
        };
        if piece != *line {
            return false;
        }
        rest = after;
    }
    rest.is_empty()
}

/// The facts of `text` (whose lines are `file`) taken from the remembered text that shares
/// the most head and tail lines with it, only the lines between them read: `None` when no
/// remembered text shares a line with it.
fn derived(file: &[&str], text: &str) -> Option<Table> {
    let candidates: Vec<(Arc<str>, Arc<Table>)> = remembered()
        .iter()
        .rev()
        .map(|r| (r.text.clone(), r.table.clone()))
        .collect();
    let (base, shared) = candidates
        .iter()
        .map(|(t, table)| (table, shared_lines(t, text)))
        .filter(|(table, (head, tail))| head + tail <= table.keys.len().min(file.len()))
        .max_by_key(|(_, (head, tail))| head + tail)?;
    if shared.0 + shared.1 == 0 {
        return None;
    }
    debug_assert!(same_lines(text, file), "`file` is the lines of `text`");
    Some(derived_from(base, shared, file))
}

/// The facts of `file` whose first `head` and last `tail` lines are those of the text `base`
/// holds the facts of: theirs copied, the lines between read.
fn derived_from(base: &Table, (head, tail): (usize, usize), file: &[&str]) -> Table {
    let (mut keys, mut facts) = (
        Vec::with_capacity(file.len()),
        Vec::with_capacity(file.len()),
    );
    keys.extend_from_slice(&base.keys[..head]);
    facts.extend_from_slice(&base.facts[..head]);
    read_facts(&file[head..file.len() - tail], &mut keys, &mut facts);
    let from = base.keys.len() - tail;
    keys.extend_from_slice(&base.keys[from..]);
    facts.extend_from_slice(&base.facts[from..]);
    Table::of_facts(keys, facts)
}

/// How many first lines and last lines texts `a` and `b` share whole (split at each LF, a
/// final LF ending the last line), the two runs apart.
fn shared_lines(a: &str, b: &str) -> (usize, usize) {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let prefix = syntax::parse::common_prefix(a, b);
    let suffix = syntax::parse::common_suffix(&a[prefix..], &b[prefix..]);
    let lf = |bytes: &[u8]| memchr::memchr_iter(b'\n', bytes).count();
    let head = lf(&b[..prefix]);
    // A line begins after each LF of the common tail; a final LF begins none.
    let tail = lf(&b[b.len() - suffix..]) - usize::from(suffix > 0 && b.ends_with(b"\n"));
    (head, tail)
}

/// Read the facts of `lines` onto `keys` and `facts`.
fn read_facts(lines: &[&str], keys: &mut Vec<u64>, facts: &mut Vec<Facts>) {
    #[cfg(test)]
    tests::READ.with(|n| n.set(n.get() + lines.len()));
    for l in lines {
        let (key, indent, blank, trivial) = lines::facts(l);
        keys.push(key);
        facts.push(Facts {
            indent,
            blank,
            trivial,
        });
    }
}

/// Remember `new` (its text copied by the caller, outside the lock), pushing out the least
/// recently used past [`REMEMBERED_TEXTS`] or [`REMEMBERED_BYTES`]; returns those pushed out,
/// for the caller to free after the lock.
fn remember(new: Remembered) -> Vec<Remembered> {
    let mut kept = remembered();
    kept.push_back(new);
    let mut bytes: usize = kept.iter().map(|r| r.size).sum();
    let mut gone = Vec::new();
    while kept.len() > REMEMBERED_TEXTS || bytes > REMEMBERED_BYTES {
        let Some(old) = kept.pop_front() else {
            break;
        };
        bytes -= old.size;
        gone.push(old);
    }
    gone
}

/// The indexed file.
pub(crate) struct FileIndex<'a> {
    /// The file's lines (LF-normalised, without line breaks).
    pub(crate) lines: &'a [&'a str],
    table: Arc<Table>,
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

impl Table {
    /// The facts of the lines `file`.
    fn new(file: &[&str]) -> Table {
        let mut keys: Vec<u64> = Vec::with_capacity(file.len());
        let mut facts: Vec<Facts> = Vec::with_capacity(file.len());
        read_facts(file, &mut keys, &mut facts);
        Table::of_facts(keys, facts)
    }

    /// The table of lines whose keys and facts are these.
    fn of_facts(keys: Vec<u64>, facts: Vec<Facts>) -> Table {
        let mut counts: HashMap<u64, (u32, u32), BuildHasherDefault<KeyHasher>> =
            HashMap::with_capacity_and_hasher(keys.len(), Default::default());
        for k in &keys {
            counts.entry(*k).or_insert((0, 0)).1 += 1;
        }
        let mut next = 0u32;
        for group in counts.values_mut() {
            group.0 = next;
            next += group.1;
            group.1 = 0;
        }
        let mut order = vec![0u32; keys.len()];
        for (j, k) in keys.iter().enumerate() {
            let group = counts.get_mut(k).expect("every key was counted");
            order[(group.0 + group.1) as usize] = j as u32;
            group.1 += 1;
        }
        Table {
            keys,
            facts,
            groups: counts,
            order,
        }
    }
}

impl<'a> FileIndex<'a> {
    /// Index the lines of a file (with the line facts remembered for the text they are the
    /// lines of, when it was indexed lately: nothing is remembered here).
    pub(crate) fn new(file: &'a [&'a str]) -> FileIndex<'a> {
        let table = recalled_lines(file).unwrap_or_else(|| Arc::new(Table::new(file)));
        FileIndex::with_table(file, table)
    }

    /// Index `file`, the lines of `text`, with the line facts remembered for `text` when it
    /// was indexed lately (and remembering them when not).
    pub(crate) fn of_text(file: &'a [&'a str], text: &str) -> FileIndex<'a> {
        FileIndex::with_table(file, table_of(file, text))
    }

    fn with_table(file: &'a [&'a str], table: Arc<Table>) -> FileIndex<'a> {
        FileIndex {
            lines: file,
            table,
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
        self.table.keys[j]
    }

    /// The lines holding this key, ascending.
    pub(crate) fn positions(&self, key: u64) -> &[u32] {
        self.table.groups.get(&key).map_or(&[], |&(start, len)| {
            &self.table.order[start as usize..(start + len) as usize]
        })
    }

    /// How many lines hold this key.
    pub(crate) fn count(&self, key: u64) -> usize {
        self.table
            .groups
            .get(&key)
            .map_or(0, |&(_, len)| len as usize)
    }

    /// Whether some line holds this key.
    pub(crate) fn contains(&self, key: u64) -> bool {
        self.table.groups.contains_key(&key)
    }

    /// Indentation of line `j` in columns.
    pub(crate) fn indent(&self, j: usize) -> u32 {
        self.table.facts[j].indent
    }

    /// Whether line `j` is blank.
    pub(crate) fn is_blank(&self, j: usize) -> bool {
        self.table.facts[j].blank
    }

    /// Whether line `j` is trivial (blank included).
    pub(crate) fn is_trivial(&self, j: usize) -> bool {
        self.table.facts[j].trivial
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
    use crate::edit::text::split_lines;
    use std::cell::Cell;

    thread_local! {
        /// How many lines' facts this thread has read.
        pub(super) static READ: Cell<usize> = const { Cell::new(0) };
    }

    /// The lines this thread reads the facts of while running `f`.
    fn lines_read<T>(f: impl FnOnce() -> T) -> (T, usize) {
        let before = READ.with(Cell::get);
        let out = f();
        (out, READ.with(Cell::get) - before)
    }

    /// A Rust file of `n` functions, tagged `tag` so that no other test's text is it.
    fn functions(n: usize, tag: &str) -> String {
        (0..n)
            .map(|i| format!("/// {tag} {i}\npub fn f_{i}(x: u64) -> u64 {{\n    x + {i}\n}}\n\n"))
            .collect()
    }

    /// Whether two tables say the same of every line and key.
    fn assert_same(a: &Table, b: &Table, what: &str) {
        assert_eq!(a.keys, b.keys, "{what}: keys");
        assert_eq!(a.facts, b.facts, "{what}: facts");
        assert_eq!(a.groups.len(), b.groups.len(), "{what}: keys grouped");
        for (key, &(start, len)) in &b.groups {
            let &(at, n) = a.groups.get(key).expect("every key grouped");
            assert_eq!(
                a.order[at as usize..(at + n) as usize],
                b.order[start as usize..(start + len) as usize],
                "{what}: positions"
            );
        }
    }

    #[test]
    fn facts_taken_from_a_text_sharing_head_and_tail_lines_are_those_read_whole() {
        let base = "fn a() {\n    1\n}\n\nfn b() {\n    \"é\"\n}\n";
        let edited = [
            base.replace("    1", "    2"),
            base.replace("    1\n", "    1\n    1\n"),
            base.replace("    1\n", ""),
            format!("// top\n{base}"),
            format!("{base}fn c() {{}}\n"),
            base.trim_end().to_string(),
            format!("{base}\n"),
            base[..base.len() - 2].to_string(),
            base.replace("é", "ée"),
            base.replace('\n', "\r\n"),
            base.replace("fn b", "fn a() {\n    1\n}\n\nfn b"),
            String::new(),
            "\n".to_string(),
        ];
        let texts: Vec<&str> = std::iter::once(base)
            .chain(edited.iter().map(String::as_str))
            .collect();
        for a in &texts {
            for b in &texts {
                let (la, lb) = (split_lines(a).0, split_lines(b).0);
                let (head, tail) = shared_lines(a, b);
                assert!(head + tail <= la.len().min(lb.len()), "{a:?} -> {b:?}");
                let derived = derived_from(&Table::new(&la), (head, tail), &lb);
                assert_same(&derived, &Table::new(&lb), &format!("{a:?} -> {b:?}"));
            }
        }
        // One line changed: all the others are shared.
        assert_eq!(shared_lines(base, &edited[0]), (1, 5));
    }

    #[test]
    fn successive_edits_of_one_file_read_only_the_lines_they_change() {
        // 12 edits in a row, each indexing the result of the last: each reads the line it
        // changes (and its neighbours at most), not the file's 600. (Tests merging on other
        // threads may push the last text out between two steps: a step is tried again, with
        // a text no step made before, a few times.)
        let mut text = functions(120, "successive");
        let lines = split_lines(&text).0.len();
        for edit in 0..12 {
            let step = (0..SHARING_TRIES).find_map(|attempt| {
                let (file, _) = split_lines(&text);
                FileIndex::of_text(&file, &text);
                let next = text.replacen(
                    &format!("    x + {}\n", edit * 9),
                    &format!("    x * {edit} + {attempt}\n"),
                    1,
                );
                let (next_lines, _) = split_lines(&next);
                let (index, read) = lines_read(|| FileIndex::of_text(&next_lines, &next));
                let fresh = Table::new(&next_lines);
                assert_same(&index.table, &fresh, &format!("edit {edit}"));
                (read <= 3).then_some(next.clone())
            });
            text = step.unwrap_or_else(|| panic!("edit {edit} read its file's {lines} lines"));
        }
    }

    #[test]
    fn the_lines_of_a_remembered_text_are_not_read_again() {
        let found = (0..SHARING_TRIES).any(|attempt| {
            let text = functions(50, &format!("again {attempt}"));
            let (file, _) = split_lines(&text);
            let merged = FileIndex::of_text(&file, &text);
            let (index, read) = lines_read(|| FileIndex::new(&file));
            read == 0 && Arc::ptr_eq(&index.table, &merged.table)
        });
        assert!(
            found,
            "the lines of a text indexed just before were read again"
        );
        // Lines no remembered text has are read.
        let text = functions(5, "never remembered");
        let (file, _) = split_lines(&text);
        assert_eq!(lines_read(|| FileIndex::new(&file)).1, file.len());
    }

    #[test]
    fn lines_are_those_of_a_text_only_split_at_each_line_break() {
        assert!(same_lines("a\nb", &["a", "b"]));
        assert!(same_lines("a\nb\n", &["a", "b"]));
        assert!(same_lines("\n", &[""]));
        assert!(same_lines("", &[]));
        assert!(!same_lines("a\nb", &["a", "b", ""]));
        assert!(!same_lines("a\nb\n", &["a\nb"]));
        assert!(!same_lines("a\n\nb", &["a", "b"]));
        assert!(!same_lines("ab", &["a", "b"]));
        assert!(!same_lines("a", &[]));
    }

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

    /// How many pairs of successive calls the sharing test tries.
    const SHARING_TRIES: usize = 20;

    #[test]
    fn a_text_indexed_again_shares_its_remembered_facts() {
        let text = "fn remembered_a() {\n    1\n}\n\nfn remembered_b() {}\n";
        let (file, _) = crate::edit::text::split_lines(text);
        // (Tests merging on other threads may push it out between two calls: one pair of
        // successive calls in a few sharing is enough.)
        let pair = || {
            (
                FileIndex::of_text(&file, text),
                FileIndex::of_text(&file, text),
            )
        };
        let (first, again) = (0..SHARING_TRIES)
            .map(|_| pair())
            .find(|(a, b)| Arc::ptr_eq(&a.table, &b.table))
            .expect("a text indexed twice in a row shares its facts");
        let fresh = FileIndex::new(&file);
        for j in 0..file.len() {
            assert_eq!(again.key(j), fresh.key(j));
            assert_eq!(again.indent(j), fresh.indent(j));
            assert_eq!(again.is_trivial(j), fresh.is_trivial(j));
            assert_eq!(again.positions(fresh.key(j)), fresh.positions(fresh.key(j)));
        }
        // Another text (the same lines but one) has facts of its own.
        let other = text.replace("    1", "    2");
        let (other_lines, _) = crate::edit::text::split_lines(&other);
        let third = FileIndex::of_text(&other_lines, &other);
        assert!(!Arc::ptr_eq(&first.table, &third.table));
        assert_ne!(third.key(1), first.key(1));
    }
}
