//! The syntax check of an edit: the parse errors the result has that the file did not have.
//! A file that was already broken is not blamed for its old errors: an edit is flagged only
//! when its result has more errors than the original, and then the errors whose place (the
//! text of their line and what they are) the original does not show are named. The original
//! is parsed once and its tree remembered (`memory`); the result is parsed from it
//! (tree-sitter's incremental parse, only where it changed) and remembered in turn, so an
//! accepted result is the next edit's original with its tree, and the reading check, the
//! review's warning and the definitions share one parse of each text.

use std::collections::HashMap;

use super::Lang;
use tree_sitter::Tree;

use super::memory::{Parsed, memory};
use super::parse::{Parse, Skipped, SyntaxError, errors_as, parse};

/// The parse of `text` as `lang` (from the parse of `from`, an earlier text, when given),
/// remembered so the same text is parsed once. The tree is the remembered one, or the new one
/// (holding its share of the parse budget until dropped) when the memory could not keep it.
fn parsed(
    lang: Lang,
    text: &str,
    from: Option<(&Tree, &str)>,
) -> Result<(Parse, Vec<SyntaxError>), Skipped> {
    if let Some(found) = remembered(lang, text) {
        return found.map(|(tree, e)| (Parse::kept(tree), e));
    }
    let found = parse(lang, text, from).map(|tree| {
        let e = errors_as(lang, &tree, text);
        (tree, e)
    });
    let copy = match &found {
        Ok((tree, e)) => Ok(((**tree).clone(), e.clone())),
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
    parsed(lang, text, None).ok().map(|(_, e)| e)
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
    // The original first, once: its tree is kept, the result is parsed from it (only where
    // it changed), and the result's tree is kept in turn for the next edit, whose original
    // it is. A tree the memory could not keep is let go before the result is parsed: both
    // would hold their share of the parse budget at once.
    let known =
        old.map(|o| parsed(lang, o, None).map(|(tree, e)| (tree.is_kept().then_some(tree), e)));
    let from = match (&known, old) {
        (Some(Ok((Some(tree), _))), Some(o)) => Some((&**tree, o)),
        _ => None,
    };
    let after = match parsed(lang, new, from) {
        Ok((_, after)) => after,
        Err(e) => return unknown(e),
    };
    if after.is_empty() {
        return Ok(after);
    }
    let before = match known {
        None => Vec::new(),
        Some(Ok((_, e))) => e,
        Some(Err(e)) => return unknown(e),
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
