//! The unseen-deletion measure on edits of every kind, each a category of edit (not a corpus
//! case).

use super::*;

fn unseen_of(path: &str, old: &str, new: &str, shown: &Shown) -> Vec<usize> {
    let diff = FileDiff::compute(old, new, 0);
    lines(Some(path), old, new, &diff, shown)
}

fn lazy(old: &str, snippet: &str, new: &str) -> Vec<usize> {
    let hints = crate::edit::Hints {
        path: Some("x.rs"),
        instruction: None,
    };
    let shown = crate::edit::lazy::shown(old, snippet, &hints);
    unseen_of("x.rs", old, new, &shown)
}

const FILE: &str = "use std::fmt;\n\nstruct Cart {\n    items: Vec<u64>,\n}\n\nimpl Cart {\n    fn total_value(&self) -> u64 {\n        let mut total = 0;\n        for i in &self.items {\n            total += i;\n        }\n        total\n    }\n\n    fn count(&self) -> usize {\n        self.items.len()\n    }\n}\n";

#[test]
fn a_body_rewritten_between_its_shown_header_and_closer_is_seen() {
    let snippet = "// ... existing code ...\n    fn total_value(&self) -> u64 {\n        self.items.iter().sum()\n    }\n// ... existing code ...\n";
    let new = FILE.replace(
        "        let mut total = 0;\n        for i in &self.items {\n            total += i;\n        }\n        total\n",
        "        self.items.iter().sum()\n",
    );
    assert_eq!(lazy(FILE, snippet, &new), Vec::<usize>::new());
}

#[test]
fn lines_dropped_under_a_placeholder_are_unseen() {
    // The snippet shows `count` only; a merge that also dropped `total_value` lost it.
    let snippet = "// ... existing code ...\n    fn count(&self) -> usize {\n        self.items.len() as usize\n    }\n// ... existing code ...\n";
    let new = "use std::fmt;\n\nstruct Cart {\n    items: Vec<u64>,\n}\n\nimpl Cart {\n    fn count(&self) -> usize {\n        self.items.len() as usize\n    }\n}\n";
    let got = lazy(FILE, snippet, new);
    // `fn total_value` through its closer: lines 7-13 (0-based), the blank line aside.
    assert_eq!(got, vec![7, 8, 9, 10, 11, 12, 13]);
    let w = warning(FILE, &got).unwrap();
    assert_eq!(
        w,
        "unseen: 7 lines deleted that the edit does not show (8–14)"
    );
}

#[test]
fn a_comment_rewrapped_in_place_is_seen() {
    let old = "fn a() {}\n\n/// Adds the two numbers given and returns their\n/// sum, wrapping on overflow.\nfn add(a: u8, b: u8) -> u8 {\n    a.wrapping_add(b)\n}\n";
    let new = "fn a() {}\n\n/// Adds the two numbers given and returns their sum,\n/// wrapping on overflow.\nfn add(a: u8, b: u8) -> u8 {\n    a.wrapping_add(b)\n}\n";
    let snippet = "/// Adds the two numbers given and returns their sum,\n/// wrapping on overflow.\nfn add(a: u8, b: u8) -> u8 {\n// ... existing code ...\n";
    assert_eq!(lazy(old, snippet, new), Vec::<usize>::new());
}

#[test]
fn adjacent_lines_anchor_only_where_each_is_unique() {
    // The first line shown occurs twice: the five lines between are not pinned down.
    let old = "[dependencies]\nlazy_static = \"0.2\"\n\n[dev-dependencies]\nlazy_static = \"0.2\"\nserde = \"1\"\ntoml = \"0.4\"\nrand = \"0.3\"\nitoa = \"0.3\"\nlog = \"0.3\"\nregex = \"0.2.1\"\n";
    let new = "[dependencies]\nlazy_static = \"0.2\"\n\n[dev-dependencies]\nlazy_static = \"0.2\"\nregex = \"0.2.1\"\n";
    let shown = Shown::quoting([]);
    let mut s = shown.clone();
    s.stretch(["lazy_static = \"0.2\"", "regex = \"0.2.1\""]);
    assert_eq!(unseen_of("Cargo.toml", old, new, &s).len(), 5);
    // Where both are unique, the lines between are shown deleted by adjacency.
    let old2 = old.replacen("lazy_static = \"0.2\"\n\n[dev-dependencies]\n", "", 1);
    let old2 = old2.replacen("lazy_static = \"0.2\"", "lazy_static = \"0.3\"", 1);
    let new2 = "[dependencies]\nlazy_static = \"0.3\"\nregex = \"0.2.1\"\n";
    let mut s2 = Shown::default();
    s2.stretch(["lazy_static = \"0.3\"", "regex = \"0.2.1\""]);
    assert_eq!(
        unseen_of("Cargo.toml", &old2, new2, &s2),
        Vec::<usize>::new()
    );
}

#[test]
fn a_block_that_new_code_repeats_pins_nothing() {
    // The new example repeats the old one's `use` lines: they sit among new code, and the old
    // example's other lines are gone unseen.
    let old = "//! Intro.\n//!\n//! ```\n//! use a::b;\n//! use a::c;\n//! let v = Vec::new();\n//! v.push(3);\n//! ```\n\npub fn f() {}\n";
    let new = "//! Intro.\n//!\n//! ```\n//! use a::b;\n//! use a::c;\n//! run(Config::default());\n//! ```\n\npub fn f() {}\n";
    let snippet = "//! ```\n//! use a::b;\n//! use a::c;\n//! run(Config::default());\n//! ```\n// ... existing code ...\n";
    let got = lazy(old, snippet, new);
    assert_eq!(got, vec![5, 6]);
}

#[test]
fn a_definition_replaced_under_a_name_the_edit_never_writes_is_unseen() {
    let old = "fn head() {}\n\nfn print(x: u8) {\n    let s = format!(\"{x}\");\n    out(&s);\n}\n\nfn tail() {}\n";
    let new = "fn head() {}\n\nfn println(x: u8) {\n    let s = format!(\"{x}\\n\");\n    out(&s);\n}\n\nfn tail() {}\n";
    let snippet = "fn head() {}\n\nfn println(x: u8) {\n    let s = format!(\"{x}\\n\");\n    out(&s);\n}\n\nfn tail() {}\n";
    let got = lazy(old, snippet, new);
    assert_eq!(got, vec![2, 3]);
    // Told to rename it, the edit names it: seen.
    let hints = crate::edit::Hints {
        path: Some("x.rs"),
        instruction: Some("rename print to println"),
    };
    let shown = crate::edit::lazy::shown(old, snippet, &hints);
    assert!(unseen_of("x.rs", old, new, &shown).is_empty());
}

#[test]
fn quoted_lines_are_seen_whatever_their_spacing() {
    let old = "a\n  b  c\nd\n";
    let new = "a\nd\n";
    assert!(unseen_of("x.txt", old, new, &Shown::quoting(["-b c\n"])).is_empty());
    assert_eq!(
        unseen_of("x.txt", old, new, &Shown::quoting(["a\n"])),
        vec![1]
    );
}

#[test]
fn a_whole_file_write_shows_what_it_drops_between_kept_lines_but_not_its_tail() {
    let old = "one\ntwo\nthree\nfour\nfive\n";
    let dropped_middle = "one\nthree\nfour\nfive\n";
    assert!(unseen_of("x.txt", old, dropped_middle, &Shown::whole(dropped_middle)).is_empty());
    let truncated = "one\ntwo\n";
    assert_eq!(
        unseen_of("x.txt", old, truncated, &Shown::whole(truncated)),
        vec![2, 3, 4]
    );
}

#[test]
fn per_hunk_counts_the_unseen_lines_of_each_hunk() {
    let old: String = (0..30).map(|i| format!("line {i}\n")).collect();
    let new = old.replace("line 2\nline 3\n", "").replace("line 25\n", "");
    let diff = FileDiff::compute(&old, &new, 3);
    assert_eq!(per_hunk(&diff, &[2, 3, 25]), vec![2, 1]);
    assert_eq!(per_hunk(&diff, &[25]), vec![0, 1]);
}

#[test]
fn a_line_moved_elsewhere_is_seen_a_lost_copy_is_not() {
    // `use b;` moved below `use c;`: the result still holds it; nothing is lost.
    let old = "use a;\nuse b;\nuse c;\n\nfn f() {}\n";
    let new = "use a;\nuse c;\nuse b;\n\nfn f() {}\n";
    assert!(unseen_of("x.rs", old, new, &Shown::default()).is_empty());
    // One of two equal lines gone: a copy is lost, and the edit never showed it.
    let old = "x();\nstep();\nx();\nend();\n";
    let new = "x();\nstep();\nend();\n";
    assert_eq!(unseen_of("x.txt", old, new, &Shown::default()), vec![2]);
}

#[test]
fn a_setting_given_a_new_value_is_changed_in_place() {
    let old = "repos:\n  - repo: a\n    rev: v1.5.0\n    hooks: []\n";
    let new = "repos:\n  - repo: a\n    rev: v2.1.0\n    hooks: []\n";
    assert!(unseen_of("x.yaml", old, new, &Shown::default()).is_empty());
    let old = "x = 1\ncurrent = make(lambda: top.app)\ny = 2\n";
    let new = "x = 1\ncurrent = make(partial(lookup, 'app'))\ny = 2\n";
    assert!(unseen_of("x.py", old, new, &Shown::default()).is_empty());
    // Another key is another line.
    let new = "x = 1\nlatest = make(partial(lookup, 'app'))\ny = 2\n";
    assert_eq!(unseen_of("x.py", old, new, &Shown::default()), vec![1]);
}
