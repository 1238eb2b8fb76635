//! The syntax check of an edit: the parse errors the result has that the file did not have.
//! A file that was already broken is not blamed for its old errors: an edit is flagged only
//! when its result has more errors than the original, and then the errors whose place (the
//! text of their line and what they are) the original does not show are named. The original
//! is parsed once and its tree remembered (`memory`); the result is parsed from it
//! (tree-sitter's incremental parse, only where it changed) and remembered in turn, so an
//! accepted result is the next edit's original with its tree, and the reading check, the
//! review's warning and the definitions share one parse of each text. A result of a clean
//! original is first judged from the items its edit touched alone (`local`), where that is
//! the same judgement and cheaper: clean so, it is remembered without a tree (made when asked).

use std::collections::HashMap;
use std::sync::Arc;

use super::Lang;
use tree_sitter::Tree;

use super::local::{self, Tops};
use super::memory::{Made, Parsed, Sketch, memory};
use super::parse::{Parse, Skipped, SyntaxError, errors_as, parse};

/// The parse of `text` as `lang` (from the parse of `from`, an earlier text, when given),
/// remembered so the same text is parsed once. The tree is the remembered one, or the new one
/// (holding its share of the parse budget until dropped) when the memory could not keep it.
fn parsed(
    lang: Lang,
    text: &str,
    from: Option<(&Tree, &str)>,
) -> Result<(Parse, Vec<SyntaxError>), Skipped> {
    let sketch = match remembered(lang, text) {
        Some(Ok((Made::Tree(tree), e))) => return Ok((Parse::kept(tree), e)),
        Some(Err(e)) => return Err(e),
        Some(Ok((Made::Sketch(sketch), _))) => Some(sketch),
        None => None,
    };
    // A sketch's tree is made from the tree it keeps.
    let from = sketch.as_ref().map_or(from, |s| Some((&s.tree, &*s.base)));
    let found = parse(lang, text, from).map(|tree| {
        let e = errors_as(lang, &tree, text);
        (tree, e)
    });
    let copy = match &found {
        Ok((tree, e)) => Ok((Made::Tree((**tree).clone()), e.clone())),
        Err(e) => Err(*e),
    };
    let kept = memory().put(lang, text, copy);
    match found {
        Ok((tree, e)) if kept => Ok((tree.into_kept(), e)),
        found => found,
    }
}

/// The parse of `text` as `lang` if it was parsed before (the outer `None`: it was not).
fn remembered(lang: Lang, text: &str) -> Option<Parsed> {
    memory().get(lang, text)
}

/// The tree of `text` as `lang`: the remembered one, else a new parse (remembered when the
/// memory can hold it); `None` when it was not parsed.
pub(crate) fn tree(lang: Lang, text: &str) -> Option<Parse> {
    parsed(lang, text, None).ok().map(|(tree, _)| tree)
}

/// The errors of `text` as `lang`, or `None` when it was not parsed (too large or too slow).
pub fn errors_of(lang: Lang, text: &str) -> Option<Vec<SyntaxError>> {
    errors_known(lang, text).ok()
}

/// The errors of `text` as `lang` (remembered, else parsed), or why it was not parsed; a
/// sketch's errors (none) are told without making its tree.
fn errors_known(lang: Lang, text: &str) -> Known {
    if let Some(found) = remembered(lang, text) {
        return found.map(|(_, e)| e);
    }
    parsed(lang, text, None).map(|(_, e)| e)
}

/// The parse errors of `text` as `lang`, parsed on its own and not remembered (a snippet, say);
/// `None` when it was not parsed.
pub fn errors_once(lang: Lang, text: &str) -> Option<Vec<SyntaxError>> {
    parse(lang, text, None)
        .ok()
        .map(|tree| errors_as(lang, &tree, text))
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
    let (after, before) = errors_after(lang, old, new);
    let after = match after {
        Ok(after) => after,
        Err(e) => return unknown(e),
    };
    if after.is_empty() {
        return Ok(after);
    }
    let before = match (before, old) {
        (Some(known), _) => known,
        (None, Some(o)) => errors_known(lang, o),
        (None, None) => Ok(Vec::new()),
    };
    let before = match before {
        Ok(e) => e,
        Err(e) => return unknown(e),
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

/// What is known of a text's parse: its errors, or why it was not parsed.
type Known = Result<Vec<SyntaxError>, Skipped>;

/// The errors of `new`, an edit of `old` (none: a new file), and of `old` when they were
/// looked at: remembered; else, when `old` is clean, judged from the edit's window alone where
/// that can tell (`local`), the result then remembered as a sketch; else parsed from the
/// original's tree. The original is parsed first, once: its tree is kept, the result is parsed
/// from it (only where it changed), and the result's tree is kept in turn for the next edit,
/// whose original it is. A tree the memory could not keep is let go before the result is
/// parsed: both would hold their share of the parse budget at once.
fn errors_after(lang: Lang, old: Option<&str>, new: &str) -> (Known, Option<Known>) {
    if let Some(found) = remembered(lang, new) {
        return (found.map(|(_, e)| e), None);
    }
    let Some(old) = old else {
        return (parsed(lang, new, None).map(|(_, e)| e), None);
    };
    let (made, before) = match remembered(lang, old) {
        Some(Ok((made, e))) => (Some(made), Ok(e)),
        Some(Err(e)) => (None, Err(e)),
        None => match parsed(lang, old, None) {
            Ok((tree, e)) => (tree.is_kept().then(|| Made::Tree((*tree).clone())), Ok(e)),
            Err(e) => (None, Err(e)),
        },
    };
    let clean = before.as_ref().is_ok_and(Vec::is_empty);
    if let Some(made) = &made
        && clean
        && local::judged_locally(lang)
        && let Some(sketch) = sketch_of(lang, old, new, made)
    {
        memory().put(lang, new, Ok((Made::Sketch(Arc::new(sketch)), Vec::new())));
        return (Ok(Vec::new()), Some(before));
    }
    let from = match made {
        Some(Made::Tree(tree)) => Some(Parse::kept(tree)),
        // A sketch's tree is made now: the result is parsed from it.
        Some(Made::Sketch(_)) => parsed(lang, old, None)
            .ok()
            .and_then(|(tree, _)| tree.is_kept().then_some(tree)),
        None => None,
    };
    let from = from.as_ref().map(|tree| (&**tree, old));
    (parsed(lang, new, from).map(|(_, e)| e), Some(before))
}

/// The sketch of `new`, an edit of `old` (remembered as `made`, clean), when the edit's
/// window alone tells it is clean.
fn sketch_of(lang: Lang, old: &str, new: &str, made: &Made) -> Option<Sketch> {
    let old_tops = match made {
        Made::Sketch(s) => s.tops.clone(),
        Made::Tree(tree) => {
            let kept = memory().tops(lang, old);
            kept.unwrap_or_else(|| {
                let tops = Arc::new(local::tops(tree));
                memory().put_tops(lang, old, tops.clone());
                tops
            })
        }
    };
    let tops: Tops = local::clean_tops(lang, old, new, &old_tops)?;
    let (tree, base) = match made {
        Made::Sketch(s) => (s.tree.clone(), s.base.clone()),
        Made::Tree(tree) => (tree.clone(), Arc::from(old)),
    };
    Some(Sketch {
        tops: Arc::new(tops),
        base,
        tree,
    })
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
    fn a_check_that_cannot_finish_says_why() {
        let huge = format!(
            "fn f() {{}}\n{}",
            "//\n".repeat(super::super::parse::MAX_PARSE_BYTES)
        );
        assert_eq!(check("a.rs", None, &huge), Err(Skipped::TooLarge));
        assert_eq!(check("a.txt", None, &huge), Ok(Vec::new()));
    }

    /// A clean edit of a clean Rust file is judged from its window: the result is remembered
    /// without a tree (none made, not even incrementally), the next edit of that result is
    /// judged so too, a broken one still names its error, and the tree made when asked is the
    /// whole parse's.
    #[test]
    fn a_clean_edit_is_judged_from_its_window_and_its_tree_made_when_asked() {
        let file: String = (0..60)
            .map(|i| format!("/// Sketched {i}.\nfn sketched_{i}() -> u32 {{\n    {i}\n}}\n\n"))
            .collect();
        let sketched = |text: &str| {
            matches!(
                memory().get(Lang::Rust, text),
                Some(Ok((Made::Sketch(_), e))) if e.is_empty()
            )
        };
        let first = file.replace("    30\n", "    30 + 1\n");
        assert_eq!(new_errors("src/s.rs", Some(&file), &first), Vec::new());
        assert!(sketched(&first), "judged without a tree");
        let second = first.replace("    40\n", "    40 * 2\n");
        assert_eq!(new_errors("src/s.rs", Some(&first), &second), Vec::new());
        assert!(sketched(&second), "the next edit, from a sketch");
        let broken = second.replace("    50\n}", "    50\n");
        let e = new_errors("src/s.rs", Some(&second), &broken);
        assert_eq!(e.len(), 1, "{e:?}");
        let made = tree(Lang::Rust, &second).unwrap();
        let full = parse(Lang::Rust, &second, None).unwrap();
        assert_eq!(made.root_node().to_sexp(), full.root_node().to_sexp());
        assert!(!sketched(&second), "its tree kept once made");
    }

    #[test]
    fn a_new_file_is_checked_on_its_own() {
        assert!(new_errors("a.json", None, "{\"a\": 1}\n").is_empty());
        let e = new_errors("a.json", None, "{\"a\": 1,\n");
        assert!(!e.is_empty());
    }
}
