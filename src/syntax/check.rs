//! The syntax check of an edit: the parse errors the result has that the file did not have.
//! A file that was already broken is not blamed for its old errors: an edit is flagged only
//! when its result has more errors than the original, and then the errors whose place (the
//! text of their line and what they are) the original does not show are named. The result is
//! parsed first, and the original only when the result has errors. Parses are kept by the
//! text's hash: a result is parsed from its original's tree when that was parsed before
//! (tree-sitter's incremental parse, only where it changed), and an accepted result is the
//! next edit's original.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, OnceLock};

use sha2::{Digest, Sha256};

use super::Lang;
use tree_sitter::Tree;

use super::parse::{Parse, Skipped, SyntaxError, errors, parse};

/// How many texts' parses are remembered (the least recently used goes first).
const CACHE_ENTRIES: usize = 16;

/// The remembered parses take at most this many bytes together, by their estimated size: a
/// text's bytes, and its tree's nodes at [`NODE_BYTES`] each.
const CACHE_BYTES: usize = 64 << 20;

/// A text larger than this keeps only its errors, not its tree.
const TREE_TEXT_BYTES: usize = 256 << 10;

/// The memory a tree takes per node, as estimated (measured: 168 bytes a node for a JSON
/// array of numbers, whose tree takes 168 bytes a byte of text): [`Cache`] counts a tree as
/// its node count times this, so a text of many small nodes keeps fewer parses than plain
/// code does.
const NODE_BYTES: usize = 192;

type Key = (Lang, [u8; 32]);

/// A text's tree (none when it is too large to keep) and errors, or why it was not parsed.
type Parsed = Result<(Option<Tree>, Vec<SyntaxError>), Skipped>;

/// The estimated bytes a remembered parse of a text of `len` bytes takes.
fn size_of(parsed: &Parsed, len: usize) -> usize {
    let nodes = match parsed {
        Ok((Some(tree), _)) => tree.root_node().descendant_count(),
        _ => 0,
    };
    len.saturating_add(nodes.saturating_mul(NODE_BYTES))
}

/// Parses by text, the most recently used last, with the estimated size of each.
#[derive(Default)]
struct Cache {
    map: HashMap<Key, (Parsed, usize)>,
    order: VecDeque<Key>,
    bytes: usize,
}

impl Cache {
    fn get(&mut self, key: &Key) -> Option<Parsed> {
        let (found, _) = self.map.get(key).cloned()?;
        if let Some(at) = self.order.iter().position(|k| k == key) {
            self.order.remove(at);
        }
        self.order.push_back(*key);
        Some(found)
    }

    /// Remember the parse of a text of `len` bytes (a large text's errors only; one too large
    /// for the whole cache not at all). A parse given up for the budget is not remembered: it
    /// may well finish the next time.
    fn put(&mut self, key: Key, parsed: Parsed, len: usize) {
        if matches!(parsed, Err(Skipped::Busy)) {
            return;
        }
        let parsed = parsed.map(|(tree, e)| (tree.filter(|_| len <= TREE_TEXT_BYTES), e));
        let size = size_of(&parsed, len);
        if size > CACHE_BYTES {
            return;
        }
        match self.map.insert(key, (parsed, size)) {
            Some((_, old)) => self.bytes -= old,
            None => self.order.push_back(key),
        }
        self.bytes += size;
        while self.order.len() > CACHE_ENTRIES || self.bytes > CACHE_BYTES {
            let Some(old) = self.order.pop_front() else {
                break;
            };
            if let Some((_, n)) = self.map.remove(&old) {
                self.bytes -= n;
            }
        }
    }
}

fn cache() -> &'static Mutex<Cache> {
    static CACHE: OnceLock<Mutex<Cache>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(Cache::default()))
}

fn key(lang: Lang, text: &str) -> Key {
    (lang, Sha256::digest(text.as_bytes()).into())
}

/// The parse of `text` as `lang` (from the parse of `from`, an earlier text, when given),
/// kept by the text's hash so the same text is parsed once. The tree is the remembered one,
/// or the new one (holding its share of the parse budget until dropped); none when only the
/// errors of a large text were remembered.
fn parsed(
    lang: Lang,
    text: &str,
    from: Option<(&Tree, &str)>,
) -> Result<(Option<Parse>, Vec<SyntaxError>), Skipped> {
    let key = key(lang, text);
    if let Some(found) = cache().lock().ok().and_then(|mut c| c.get(&key)) {
        return found.map(|(tree, e)| (tree.map(Parse::kept), e));
    }
    let found = parse(lang, text, from).map(|tree| {
        let e = errors(&tree, text);
        (tree, e)
    });
    if let Ok(mut c) = cache().lock() {
        let kept = found
            .as_ref()
            .map(|(tree, e)| (Some((**tree).clone()), e.clone()));
        c.put(key, kept.map_err(|e| *e), text.len());
    }
    found.map(|(tree, e)| (Some(tree), e))
}

/// The parse of `text` as `lang` if it was parsed before (the outer `None`: it was not).
fn remembered(lang: Lang, text: &str) -> Option<Parsed> {
    cache()
        .lock()
        .ok()
        .and_then(|mut c| c.get(&key(lang, text)))
}

/// The tree of `text` as `lang`: the remembered one, else a new parse (remembered when the
/// text is small enough to keep its tree); `None` when it was not parsed.
pub(crate) fn tree(lang: Lang, text: &str) -> Option<Parse> {
    match parsed(lang, text, None).ok()? {
        (Some(tree), _) => Some(tree),
        (None, _) => parse(lang, text, None).ok(),
    }
}

/// Forget every remembered parse (for timing a check from scratch).
pub fn forget_parses() {
    if let Ok(mut c) = cache().lock() {
        *c = Cache::default();
    }
}

/// The errors of `text` as `lang`, or `None` when it was not parsed (too large or too slow).
pub fn errors_of(lang: Lang, text: &str) -> Option<Vec<SyntaxError>> {
    parsed(lang, text, None).ok().map(|(_, e)| e)
}

/// The parse errors of `text` as `lang`, parsed on its own and not remembered (a snippet, say);
/// `None` when it was not parsed.
pub fn errors_once(lang: Lang, text: &str) -> Option<Vec<SyntaxError>> {
    parse(lang, text, None).ok().map(|tree| errors(&tree, text))
}

/// The parse errors that `new` has and `old` (none: a new file) did not have, for the file at
/// `path`; empty when the language is unknown, either text was not parsed, or nothing new is
/// broken.
pub fn new_errors(path: &str, old: Option<&str>, new: &str) -> Vec<SyntaxError> {
    check(path, old, new).unwrap_or_default()
}

/// [`new_errors`], saying when the check could not finish: the result was not parsed (too
/// large, too slow, the parse budget held by others), or it has errors and the original was
/// not parsed. A language without a grammar is checked and clean.
pub fn check(path: &str, old: Option<&str>, new: &str) -> Result<Vec<SyntaxError>, Skipped> {
    let Some(lang) = Lang::of_text(path, new) else {
        return Ok(Vec::new());
    };
    let unknown = |e: Skipped| match e {
        Skipped::NoGrammar => Ok(Vec::new()),
        e => Err(e),
    };
    // The result first, from the original's tree when the original was parsed before (the
    // result of an accepted edit is the next edit's original): most results parse clean, and
    // then the original need not be parsed at all.
    let known = old.and_then(|o| remembered(lang, o).map(|p| (o, p)));
    let from = known
        .as_ref()
        .and_then(|(o, p)| p.as_ref().ok()?.0.as_ref().map(|tree| (tree, *o)));
    let after = match parsed(lang, new, from) {
        Ok((_, after)) => after,
        Err(e) => return unknown(e),
    };
    if after.is_empty() {
        return Ok(after);
    }
    let before = match (old, known) {
        (None, _) => Vec::new(),
        (Some(_), Some((_, Ok((_, e))))) => e,
        (Some(_), Some((_, Err(e)))) => return unknown(e),
        (Some(old), None) => match parsed(lang, old, None) {
            Ok((_, e)) => e,
            Err(e) => return unknown(e),
        },
    };
    if after.len() <= before.len() {
        return Ok(Vec::new());
    }
    let place = |e: &SyntaxError, text: &str| (e.line_in(text).to_string(), e.what.clone());
    let mut known: HashMap<(String, String), usize> = HashMap::new();
    for e in &before {
        *known.entry(place(e, old.unwrap_or(""))).or_default() += 1;
    }
    let mut fresh = Vec::new();
    for e in &after {
        match known.get_mut(&place(e, new)) {
            Some(n) if *n > 0 => *n -= 1,
            _ => fresh.push(e.clone()),
        }
    }
    if fresh.is_empty() {
        // More errors than before, all in places that had one: name the first.
        fresh.push(after[0].clone());
    }
    Ok(fresh)
}

/// The warning an edit carries for its new errors: `syntax: LINE:COL: what` (with a count of
/// the others when there are several).
pub fn warning(errors: &[SyntaxError]) -> Option<String> {
    let first = errors.first()?;
    let more = match errors.len() {
        1 => String::new(),
        2 => " (and 1 more)".to_string(),
        n => format!(" (and {} more)", n - 1),
    };
    Some(format!("syntax: {first}{more}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dropped_brace_is_new_and_an_old_error_is_not_blamed() {
        let old = "fn a() {\n    1\n}\n\nfn b() {\n    2\n}\n";
        let new = "fn a() {\n    1\n\nfn b() {\n    2\n}\n";
        let e = new_errors("src/x.rs", Some(old), new);
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(warning(&e).unwrap().starts_with("syntax: "), "{e:?}");
        // A file already broken in one place, edited elsewhere: nothing new.
        let broken = "fn a() {\n    1 +\n}\n\nfn b() {\n    2\n}\n";
        let edited = "fn a() {\n    1 +\n}\n\nfn b() {\n    3\n}\n";
        assert!(new_errors("src/x.rs", Some(broken), edited).is_empty());
        // Unknown languages are not checked.
        assert!(new_errors("notes.txt", Some("a"), "(((").is_empty());
    }

    /// A clean file of each built-in language (checked with its first closing bracket, or
    /// for HTML its first `>`, removed).
    const SAMPLES: &[(&str, &str)] = &[
        (
            "a.rs",
            "fn main() {\n    let v = vec![1, 2];\n    println!(\"{v:?}\");\n}\n",
        ),
        (
            "a.py",
            "def f(x):\n    return [x, (x + 1)]\n\nprint(f(1))\n",
        ),
        (
            "a.js",
            "function f(x) {\n  return [x, x + 1];\n}\nconsole.log(f(1));\n",
        ),
        (
            "a.ts",
            "function f(x: number): number[] {\n  return [x, x + 1];\n}\n",
        ),
        (
            "a.tsx",
            "const A = (p: { n: number }) => <div>{p.n}</div>;\nexport default A;\n",
        ),
        (
            "a.go",
            "package main\n\nfunc f(x int) []int {\n\treturn []int{x, x + 1}\n}\n",
        ),
        (
            "A.java",
            "class A {\n  int f(int x) {\n    return (x + 1);\n  }\n}\n",
        ),
        ("a.c", "int f(int x) {\n  return (x + 1);\n}\n"),
        (
            "a.php",
            "<?php\nfunction f($x) {\n  return [$x, ($x + 1)];\n}\n",
        ),
        (
            "a.lua",
            "local function f(x)\n  return { x, (x + 1) }\nend\nprint(f(1))\n",
        ),
        ("a.sh", "f() {\n  echo \"$(( $1 + 1 ))\"\n}\nf 1\n"),
        ("a.json", "{\"a\": [1, 2], \"b\": {\"c\": true}}\n"),
        ("a.yaml", "a: [1, 2]\nb: {c: true}\n"),
        ("a.toml", "a = [1, 2]\nb = { c = true }\n"),
        ("a.html", "<div><p>hi</p></div>\n"),
        ("a.css", "a { color: red; }\nb { margin: 0 }\n"),
    ];

    #[test]
    fn every_built_in_language_parses_clean_code_and_flags_a_dropped_bracket() {
        for (path, clean) in SAMPLES {
            let lang = Lang::of(path, "").unwrap_or_else(|| panic!("{path}: no language"));
            let e = errors_of(lang, clean).unwrap();
            assert!(e.is_empty(), "{path}: {e:?}");
            let closer = clean
                .find(['}', ')', ']'])
                .or_else(|| clean.find('>'))
                .unwrap_or_else(|| panic!("{path}: no closer"));
            let broken = format!("{}{}", &clean[..closer], &clean[closer + 1..]);
            let found = new_errors(path, Some(clean), &broken);
            assert!(
                !found.is_empty(),
                "{path}: dropping a closer is not flagged:\n{broken}"
            );
        }
    }

    #[test]
    fn the_cache_keeps_the_most_recently_used_parses() {
        let mut c = Cache::default();
        let k = |n: u8| (Lang::Json, [n; 32]);
        let slow = || Err(Skipped::TooSlow);
        for n in 0..CACHE_ENTRIES as u8 {
            c.put(k(n), slow(), 10);
        }
        // Using the first keeps it when the next one comes.
        assert!(c.get(&k(0)).is_some());
        c.put(k(200), slow(), 10);
        assert!(c.get(&k(0)).is_some());
        assert!(c.get(&k(1)).is_none());
        assert_eq!(c.map.len(), CACHE_ENTRIES);
        // Bytes are bounded too: a large text pushes the least recently used out.
        c.put(k(201), slow(), CACHE_BYTES - 50);
        assert!(c.bytes <= CACHE_BYTES, "{}", c.bytes);
        assert!(c.get(&k(201)).is_some());
        // A text over the budget is not kept at all, nor a parse given up for the budget.
        c.put(k(202), slow(), CACHE_BYTES + 1);
        assert!(c.get(&k(202)).is_none());
        c.put(k(203), Err(Skipped::Busy), 10);
        assert!(c.get(&k(203)).is_none());
    }

    /// A tree counts by its nodes: a text of many small nodes takes far more than its bytes,
    /// and the cache holds fewer of them.
    #[test]
    fn the_cache_counts_a_tree_by_its_nodes() {
        let text = "[1,2,3,4,5,6,7,8,9,0],".repeat(2_000);
        let text = format!("[{}0]", text);
        let tree = parse(Lang::Json, &text, None).unwrap();
        let nodes = tree.root_node().descendant_count();
        assert!(nodes > text.len() / 2, "{nodes} nodes");
        let mut c = Cache::default();
        c.put(
            (Lang::Json, [1; 32]),
            Ok((Some((*tree).clone()), Vec::new())),
            text.len(),
        );
        assert_eq!(c.bytes, text.len() + nodes * NODE_BYTES);
        assert!(c.bytes > 50 * text.len(), "{}", c.bytes);
    }

    #[test]
    fn a_check_that_cannot_finish_says_why() {
        let huge = format!(
            "fn f() {{}}\n{}",
            "//\n".repeat(super::super::parse::MAX_PARSE_BYTES)
        );
        assert_eq!(check("a.rs", None, &huge), Err(Skipped::TooLarge));
        assert_eq!(check("a.txt", None, &huge), Ok(Vec::new()));
    }

    #[test]
    fn a_new_file_is_checked_on_its_own() {
        assert!(new_errors("a.json", None, "{\"a\": 1}\n").is_empty());
        let e = new_errors("a.json", None, "{\"a\": 1,\n");
        assert!(!e.is_empty());
    }
}
