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
//! At the first sight of an original (nothing remembered of it), its result is parsed whole
//! instead: clean, that is the whole check, and the original is kept unread beside the
//! result's tree, judged or parsed only when it is asked for (a later edit of it, its
//! definitions); broken, the original is parsed from the result's tree, as a result is from
//! its original's at a later sight (the tree a full parse gives), so every error is the same.

use std::collections::HashMap;
use std::sync::Arc;

use super::Lang;
use tree_sitter::Tree;

use super::local::{self, Tops};
use super::memory::{Made, Parsed, Sketch, Unread, memory};
use super::parse::{Parse, Skipped, SyntaxError, errors_as, parse};

/// The parse of `text` as `lang` (from the parse of `from`, an earlier text, when given),
/// remembered so the same text is parsed once. The tree is the remembered one, or the new one
/// (holding its share of the parse budget until dropped) when the memory could not keep it.
fn parsed(
    lang: Lang,
    text: &str,
    from: Option<(&Tree, &str)>,
) -> Result<(Parse, Vec<SyntaxError>), Skipped> {
    let found = memory().get(lang, text);
    let (sketch, from) = match found {
        Some(Ok((Made::Tree(tree), e))) => return Ok((Parse::kept(tree), e)),
        Some(Err(e)) => return Err(e),
        Some(Ok((Made::Sketch(sketch), _))) => (Some(sketch), from),
        // An unread text is parsed whole, as at the first sight it skipped.
        Some(Ok((Made::Unread(_), _))) => (None, None),
        None => (None, from),
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

/// The parse of `text` as `lang` if it was parsed before (the outer `None`: it was not); a
/// text kept unread is read now ([`read_unread`]).
fn remembered(lang: Lang, text: &str) -> Option<Parsed> {
    // (The memory's lock is let go first: reading takes it again.)
    let found = memory().get(lang, text)?;
    match found {
        Ok((Made::Unread(unread), _)) => read_unread(lang, text, &unread),
        found => Some(found),
    }
}

/// The parse of `text`, kept unread beside the clean text it was edited into: judged from the
/// edit's window as any edit of a clean text (`local`), then remembered as a sketch; `None`
/// when the window cannot tell, for the caller to parse it whole (as at its first sight).
fn read_unread(lang: Lang, text: &str, unread: &Unread) -> Option<Parsed> {
    if !local::judged_locally(lang) {
        return None;
    }
    let base = Made::Tree(unread.tree.clone());
    let sketch = sketch_of(lang, &unread.base, text, &base)?;
    let found: Parsed = Ok((Made::Sketch(Arc::new(sketch)), Vec::new()));
    memory().put(lang, text, found.clone());
    Some(found)
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
/// looked at: remembered; else, at the first sight of `old`, `new` parsed whole and `old`
/// from it when needed ([`first_sight`]); else, when `old` is clean, judged from the edit's
/// window alone where that can tell (`local`), the result then remembered as a sketch; else
/// parsed from the original's tree. The original is parsed once: its tree is kept, the result
/// is parsed from it (only where it changed), and the result's tree is kept in turn for the
/// next edit, whose original it is. A tree the memory could not keep is let go before the
/// result is parsed: both would hold their share of the parse budget at once.
fn errors_after(lang: Lang, old: Option<&str>, new: &str) -> (Known, Option<Known>) {
    if let Some(found) = remembered(lang, new) {
        return (found.map(|(_, e)| e), None);
    }
    let Some(old) = old else {
        return (parsed(lang, new, None).map(|(_, e)| e), None);
    };
    let found = memory().get(lang, old);
    let known = match found {
        None => match first_sight(lang, old, new) {
            Some(told) => return told,
            None => None,
        },
        Some(Ok((Made::Unread(unread), _))) => read_unread(lang, old, &unread),
        found => found,
    };
    let (made, before) = match known {
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
        // A sketch's tree is made now (an unread text's, whole): the result is parsed from it.
        Some(Made::Sketch(_) | Made::Unread(_)) => parsed(lang, old, None)
            .ok()
            .and_then(|(tree, _)| tree.is_kept().then_some(tree)),
        None => None,
    };
    let from = from.as_ref().map(|tree| (&**tree, old));
    (parsed(lang, new, from).map(|(_, e)| e), Some(before))
}

/// At the first sight of `old` (nothing of it remembered), `new` parsed whole and kept with
/// its tree. Clean, that is the whole check (a clean result has no new error), and `old` is
/// kept unread beside it (read when asked for, [`read_unread`]). With errors, `old` is parsed
/// from the result's tree (tree-sitter's incremental parse, as a later edit's result is from
/// its original's: the tree a full parse gives) and kept, and the errors of both are told.
/// Or why `new` was not parsed (too large, or past its deadline or the budget's wait: the
/// result's own parse, whichever text is parsed first). `None` when the result's tree could
/// not be kept (or it has no grammar): it is let go, and the caller judges it as at a later
/// sight (the original parsed whole, then the result from its tree).
fn first_sight(lang: Lang, old: &str, new: &str) -> Option<(Known, Option<Known>)> {
    let tree = match parse(lang, new, None) {
        Ok(tree) => tree,
        Err(Skipped::NoGrammar) => return None,
        Err(e) => return Some((Err(e), None)),
    };
    let after = errors_as(lang, &tree, new);
    let clean = after.is_empty();
    let mut kept = memory();
    if clean {
        // The original first: when the two do not fit together, it is the one pushed out.
        let unread = Unread {
            base: Arc::from(new),
            tree: (*tree).clone(),
        };
        kept.put(lang, old, Ok((Made::Unread(Arc::new(unread)), Vec::new())));
    }
    if !kept.put(lang, new, Ok((Made::Tree((*tree).clone()), after.clone()))) {
        // Not kept: nor is a tree without its share of the budget kept by the original.
        kept.forget(lang, old);
        return clean.then_some((Ok(after), None));
    }
    drop(kept);
    // Kept: its share of the budget goes back, and no memory to the system.
    let tree = tree.into_kept();
    if clean {
        return Some((Ok(after), None));
    }
    let before = parsed(lang, old, Some((&tree, new))).map(|(_, e)| e);
    Some((Ok(after), Some(before)))
}

/// The sketch of `new`, an edit of `old` (remembered as `made`, clean), when the edit's
/// window alone tells it is clean.
fn sketch_of(lang: Lang, old: &str, new: &str, made: &Made) -> Option<Sketch> {
    let old_tops = match made {
        // Not read: not known to be clean.
        Made::Unread(_) => return None,
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
        Made::Unread(_) => return None,
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
        // The file's tree kept (at its first sight the result would be parsed whole).
        assert_eq!(errors_of(Lang::Rust, &file), Some(Vec::new()));
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

    /// What the memory holds of `text` as `lang`: a tree, a sketch or an unread text, and
    /// its error count.
    fn kept(lang: Lang, text: &str) -> Option<(&'static str, usize)> {
        match memory().get(lang, text) {
            Some(Ok((Made::Tree(_), e))) => Some(("tree", e.len())),
            Some(Ok((Made::Sketch(_), e))) => Some(("sketch", e.len())),
            Some(Ok((Made::Unread(_), _))) => Some(("unread", 0)),
            _ => None,
        }
    }

    /// How many texts a memory test tries: tests on other threads may push its texts out of
    /// the process's memory between two steps, so one try in a few that keeps them all is
    /// enough (no try may find another state).
    const TRIES: usize = 20;

    /// At the first sight of an original, a clean result is parsed whole (kept with its tree)
    /// and the original not at all: kept unread. At its next sight it is judged from the
    /// result's tree (a sketch, its window parsed) and its next result from its window; its
    /// tree made when asked is its whole parse's.
    #[test]
    fn at_first_sight_a_clean_result_is_parsed_whole_and_its_original_kept_unread() {
        let all_kept = (0..TRIES).any(|k| {
            let file: String = (0..40)
                .map(|i| {
                    format!("/// Unread {k} {i}.\nfn unread_{k}_{i}() -> u32 {{\n    {i}\n}}\n\n")
                })
                .collect();
            let first = file.replace("    10\n", "    10 + 1\n");
            assert_eq!(new_errors("src/u.rs", Some(&file), &first), Vec::new());
            let (result, original) = (kept(Lang::Rust, &first), kept(Lang::Rust, &file));
            assert!(
                matches!(original, None | Some(("unread", _))),
                "the original is not parsed: {original:?}"
            );
            assert!(
                matches!(result, None | Some(("tree", 0))),
                "the result is parsed whole: {result:?}"
            );
            if original.is_none() || result.is_none() {
                return false;
            }
            let second = file.replace("    20\n", "    20 + 1\n");
            assert_eq!(new_errors("src/u.rs", Some(&file), &second), Vec::new());
            let (original, result) = (kept(Lang::Rust, &file), kept(Lang::Rust, &second));
            assert_ne!(original, Some(("unread", 0)), "read at its next sight");
            if (original, result) != (Some(("sketch", 0)), Some(("sketch", 0))) {
                return false;
            }
            let made = tree(Lang::Rust, &file).unwrap();
            let whole = parse(Lang::Rust, &file, None).unwrap();
            assert_eq!(made.root_node().to_sexp(), whole.root_node().to_sexp());
            true
        });
        assert!(all_kept, "no try kept its texts");
    }

    /// Where an edit is not judged from its window (Python), an original kept unread is
    /// parsed whole at its next sight, and kept with its tree for the sights after.
    #[test]
    fn an_unread_original_not_judged_locally_is_parsed_whole_when_seen_again() {
        let all_kept = (0..TRIES).any(|k| {
            let file: String = (0..20)
                .map(|i| format!("def unread_{k}_{i}(x):\n    return x + {i}\n\n\n"))
                .collect();
            let first = file.replace("x + 3\n", "x + 33\n");
            assert_eq!(new_errors("u.py", Some(&file), &first), Vec::new());
            let original = kept(Lang::Python, &file);
            assert!(
                matches!(original, None | Some(("unread", _))),
                "{original:?}"
            );
            if original.is_none() {
                return false;
            }
            let second = file.replace("x + 7\n", "x + 77\n");
            assert_eq!(new_errors("u.py", Some(&file), &second), Vec::new());
            kept(Lang::Python, &file) == Some(("tree", 0))
        });
        assert!(all_kept, "no try kept its texts");
    }

    /// A broken result at the first sight of its original (parsed whole, the original then
    /// from its tree) gets the errors it gets at a later sight (the original parsed whole, the
    /// result from its tree), both texts are kept with their trees, and an original broken
    /// already is not blamed for its old error.
    #[test]
    fn a_broken_result_at_first_sight_is_judged_against_its_original() {
        let file = |tag: &str| -> String {
            (0..40)
                .map(|i| format!("/// {tag} {i}.\nfn {tag}_{i}() -> u32 {{\n    {i}\n}}\n\n"))
                .collect()
        };
        let broken = |text: &str| text.replace("    30\n}", "    30\n");
        let places = |e: Vec<SyntaxError>| -> Vec<(usize, usize, String)> {
            e.into_iter().map(|e| (e.line, e.column, e.what)).collect()
        };
        let first = file("first_sight");
        let at_first = new_errors("src/b.rs", Some(&first), &broken(&first));
        assert_eq!(at_first.len(), 1, "{at_first:?}");
        let later = file("later_sight");
        assert_eq!(errors_of(Lang::Rust, &later), Some(Vec::new()));
        let at_later = new_errors("src/b.rs", Some(&later), &broken(&later));
        assert_eq!(places(at_first), places(at_later));
        // (Both kept with their trees, unless tests on other threads pushed them out.)
        for text in [first.clone(), broken(&first)] {
            let found = kept(Lang::Rust, &text);
            assert!(matches!(found, None | Some(("tree", _))), "{found:?}");
        }
        let was = broken(&file("was_broken"));
        let edited = was.replace("    5\n", "    6\n");
        assert_eq!(new_errors("src/b.rs", Some(&was), &edited), Vec::new());
    }

    /// What a broken result's first sight relies on (its errors from its whole parse, the
    /// original's from the result's tree, where a later sight parses the original whole and
    /// the result from its tree): over random edits of Rust and Python texts, most of them
    /// breaking the text, each text's errors are the same parsed whole or from the other's
    /// tree.
    #[test]
    fn errors_are_the_same_parsed_whole_or_from_the_other_texts_tree() {
        let python: String = (0..30)
            .map(|i| {
                format!(
                    "def f{i}(x):\n    if x > {i}:\n        return [x, ({i})]\n    return x\n\n\n"
                )
            })
            .collect();
        let texts = [
            (Lang::Rust, include_str!("parse.rs").to_string()),
            (Lang::Rust, include_str!("memory.rs").to_string()),
            (Lang::Python, python),
        ];
        let mut seed = 38u64;
        let mut below = |n: usize| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 33) as usize) % n.max(1)
        };
        let errors_whole_and_from = |lang: Lang, text: &str, other: &str| {
            let whole = parse(lang, text, None).unwrap();
            let base = parse(lang, other, None).unwrap();
            let from = parse(lang, text, Some((&base, other))).unwrap();
            (errors_as(lang, &whole, text), errors_as(lang, &from, text))
        };
        let mut broken = 0;
        for (lang, old) in &texts {
            for _ in 0..60 {
                let mut lines: Vec<String> = old.lines().map(str::to_string).collect();
                let at = below(lines.len());
                match below(4) {
                    0 => {
                        lines.remove(at);
                    }
                    1 => lines.insert(at, ["}", "{", ")", "(", "\"", "]"][below(6)].to_string()),
                    2 => lines.insert(at, lines[at].clone()),
                    _ => {
                        let line = &mut lines[at];
                        if let Some((i, _)) = line.char_indices().nth(below(line.chars().count())) {
                            line.replace_range(i..=i, [":", ";", "{", " ", "("][below(5)]);
                        }
                    }
                }
                let new = lines.join("\n") + "\n";
                let (whole, from) = errors_whole_and_from(*lang, &new, old);
                assert_eq!(whole, from, "the result:\n{new}");
                let (whole, from) = errors_whole_and_from(*lang, old, &new);
                assert_eq!(whole, from, "the original, from:\n{new}");
                broken += usize::from(
                    !from.is_empty()
                        || !errors_as(*lang, &parse(*lang, &new, None).unwrap(), &new).is_empty(),
                );
            }
        }
        // (Most edits break the text, or this would prove little.)
        assert!(broken * 3 > 180, "{broken} of 180 broken");
    }

    #[test]
    fn a_new_file_is_checked_on_its_own() {
        assert!(new_errors("a.json", None, "{\"a\": 1}\n").is_empty());
        let e = new_errors("a.json", None, "{\"a\": 1,\n");
        assert!(!e.is_empty());
    }
}
