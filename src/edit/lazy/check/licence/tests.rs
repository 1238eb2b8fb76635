//! Tests of the licence check: each licence and each refusal on inputs of its own, and every
//! merge of the shared corpora checked again.

use super::*;
use crate::edit::lazy::prepare;

mod plain;

/// The check's verdict on `result` as the merge of `snippet` into `file`, whatever
/// placement would have made of it.
fn judge(file: &str, snippet: &str, result: &str, said: &[&str]) -> Result<()> {
    let lines: Vec<&str> = file.lines().collect();
    let index = FileIndex::new(&lines);
    let snip = Snippet::cut(prepare::read(snippet, &index));
    let defs = FileDefs::new(&index);
    let out: Vec<&str> = result.lines().collect();
    let said: Vec<String> = said.iter().map(ToString::to_string).collect();
    check(&index, &snip, &defs, &said, &out).map(|_| ())
}

fn refused(r: Result<()>) -> String {
    let e = r.expect_err("an unlicensed deletion is refused");
    assert_eq!(e.code, ErrorCode::NeedsMoreContext);
    e.message
}

const FILE: &str = "fn alpha() {\n    let a = 1;\n    let b = 2;\n    let c = 3;\n    a + b + c\n}\n\nfn beta() {\n    let x = 10;\n    x * 2\n}\n\nfn gamma() {\n    beta() + alpha()\n}\n";

#[test]
fn lines_between_two_anchors_the_snippet_shows_adjacent_may_go() {
    let snippet = "// ...\n    let a = 1;\n    let c = 3;\n// ...\n";
    let result = FILE.replace("    let b = 2;\n", "");
    judge(FILE, snippet, &result, &[]).unwrap();
}

#[test]
fn a_line_a_placeholder_keeps_may_not_go_whatever_placement_did() {
    // The snippet changes `x * 2`; the result also lost `let b = 2;`, which lies under
    // the first placeholder.
    let snippet = "// ...\nfn beta() {\n    let x = 10;\n    x * 3\n}\n// ...\n";
    let result = FILE
        .replace("    x * 2\n", "    x * 3\n")
        .replace("    let b = 2;\n", "");
    let message = refused(judge(FILE, snippet, &result, &[]));
    assert!(message.contains("3: let b = 2;"), "{message}");
    assert!(message.contains("a placeholder keeps them"), "{message}");
    assert!(message.contains("`remove NAME`"), "{message}");
    // Without that loss the same merge stands.
    let result = FILE.replace("    x * 2\n", "    x * 3\n");
    judge(FILE, snippet, &result, &[]).unwrap();
}

#[test]
fn an_anchor_among_new_lines_that_occurs_elsewhere_licenses_nothing() {
    // Two jobs with the same steps: the snippet adds a job whose steps repeat the old
    // job's; read against the old job, its lines would delete what lies between them.
    let file = "jobs:\n  test:\n    steps:\n      - uses: checkout\n      - run: make deps\n      - run: make test\n  lint:\n    steps:\n      - uses: checkout\n      - run: make deps\n      - run: make lint\n";
    let snippet =
        "# ...\n  docs:\n    steps:\n      - uses: checkout\n      - run: make docs\n# ...\n";
    // Placement read `uses: checkout` as the test job's and replaced its steps.
    let result = file.replace(
        "  test:\n    steps:\n      - uses: checkout\n      - run: make deps\n      - run: make test\n",
        "  test:\n  docs:\n    steps:\n      - uses: checkout\n      - run: make docs\n",
    );
    let message = refused(judge(file, snippet, &result, &[]));
    assert!(message.contains("make deps"), "{message}");
    assert!(message.contains("occur elsewhere in the file"), "{message}");
}

#[test]
fn an_anchor_once_in_the_file_but_among_new_lines_needs_a_grounded_one_across() {
    let file = "use std::fmt;\nuse std::io;\n\nfn main() {\n    run();\n    stop();\n}\n";
    // A new example repeating the file's import, its own lines on both sides.
    let snippet = "// ...\nfn example() {\n    use std::io;\n    println!(\"new\");\n}\n// ...\n";
    let result = "use std::fmt;\nfn example() {\n    use std::io;\n    println!(\"new\");\n}\n";
    let message = refused(judge(file, snippet, result, &[]));
    assert!(message.contains("run();"), "{message}");
    assert!(
        message.contains("none of the file's own lines"),
        "{message}"
    );
}

#[test]
fn at_a_segments_edge_only_changed_lines_go() {
    // The segment starts with a new line right above an anchor: the file line there goes
    // as its changed version.
    let snippet = "// ...\n    let x = 11;\n    x * 2\n}\n// ...\n";
    let changed = FILE.replace("    let x = 10;\n", "    let x = 11;\n");
    judge(FILE, snippet, &changed, &[]).unwrap();
    // The same new line, but the file's line dropped beside it is not its old version.
    let snippet = "// ...\n    log(\"here\");\n    x * 2\n}\n// ...\n";
    let replaced = FILE.replace("    let x = 10;\n", "    log(\"here\");\n");
    let message = refused(judge(FILE, snippet, &replaced, &[]));
    assert!(message.contains("let x = 10;"), "{message}");
    assert!(
        message.contains("do the new lines go beside them?"),
        "{message}"
    );
}

#[test]
fn a_line_repeated_by_new_code_has_not_moved() {
    let file =
        "fn a() {\n    let v = load();\n    v.check();\n    v.save();\n}\n\nfn c() {\n    1\n}\n";
    // A new function that calls `v.check()` too: the old call has not moved into it.
    let snippet = "// ...\nfn b() {\n    v.check();\n}\n";
    let result = file.replace("    v.check();\n", "") + "\nfn b() {\n    v.check();\n}\n";
    let message = refused(judge(file, snippet, &result, &[]));
    assert!(message.contains("3: v.check();"), "{message}");
}

#[test]
fn closers_alone_license_only_a_changed_line_in_its_place() {
    let file = "fn a() {\n    if x {\n        one();\n    }\n    keep_me();\n}\n\nfn b() {\n    if y {\n        two();\n    }\n    target();\n}\n";
    // Only closers around the new line: they could be any function's.
    let snippet = "// ...\n    }\n    three();\n}\n// ...\n";
    let replaced = file.replace("keep_me();", "three();");
    let message = refused(judge(file, snippet, &replaced, &[]));
    assert!(message.contains("keep_me();"), "{message}");
    // The old line's own new version, in its place: licensed.
    let snippet = "// ...\n    }\n    keep_me(2);\n}\n// ...\n";
    let changed = file.replace("keep_me();", "keep_me(2);");
    judge(file, snippet, &changed, &[]).unwrap();
}

#[test]
fn minus_lines_remove_directives_and_whole_replacements_license_their_lines() {
    let snippet = "// ...\n    let a = 1;\n-    let b = 2;\n    let c = 3;\n// ...\n";
    let result = FILE.replace("    let b = 2;\n", "");
    judge(FILE, snippet, &result, &[]).unwrap();
    let without_beta = FILE.replace("fn beta() {\n    let x = 10;\n    x * 2\n}\n\n", "");
    judge(FILE, "// ...\n// remove beta\n// ...\n", &without_beta, &[]).unwrap();
    // The instruction's removal of `beta` licenses it too; without it, nothing does.
    let elsewhere = "// ...\nfn gamma() {\n    beta() + alpha()\n}\n";
    judge(FILE, elsewhere, &without_beta, &["beta"]).unwrap();
    refused(judge(FILE, elsewhere, &without_beta, &[]));
    // `beta` shown whole with another body: its old body goes.
    let snippet = "// ...\nfn beta() {\n    20\n}\n// ...\n";
    let result = FILE.replace("    let x = 10;\n    x * 2\n", "    20\n");
    judge(FILE, snippet, &result, &[]).unwrap();
}

#[test]
fn a_moved_line_is_not_lost_and_a_whole_file_snippet_licenses_everything() {
    // `let c = 3;` moved above `let a = 1;`: its text is still there.
    let snippet =
        "fn alpha() {\n    let c = 3;\n    let a = 1;\n    let b = 2;\n    a + b + c\n}\n// ...\n";
    let result = FILE.replace(
        "    let a = 1;\n    let b = 2;\n    let c = 3;\n",
        "    let c = 3;\n    let a = 1;\n    let b = 2;\n",
    );
    judge(FILE, snippet, &result, &[]).unwrap();
    let whole = "fn alpha() {\n    1\n}\n\nfn gamma() {\n    beta() + alpha()\n}\n";
    judge(FILE, whole, whole, &[]).unwrap();
}

/// What the corpus test below found.
#[derive(Debug, Default, PartialEq, Eq)]
struct Tally {
    /// Cases that merged (with the check on).
    merged: usize,
    /// Cases whose merge by placement alone the plain judge refuses (the check refuses each
    /// too), as `corpus/case`.
    plain_refuses: Vec<String>,
    /// Cases whose merge by placement alone only the check refuses (its stricter rules:
    /// closers, anchors that occur elsewhere, a changed line's likeness).
    check_alone_refuses: Vec<String>,
}

/// Every case of the five edit corpora merged with the check switched off, then judged by the
/// check and, apart, by a plain judge of deletions ([`plain`]) that shares no code with it:
/// whatever the plain judge refuses the check refuses, and the merge with the check on
/// stands exactly when the check accepts what placement made.
#[test]
fn no_merge_of_the_corpora_deletes_a_line_without_a_licence() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    let mut tally = Tally::default();
    for corpus in [
        "git-history",
        "git-history-wide",
        "git-history-systems",
        "git-history-fresh",
        "model-snippets",
    ] {
        let mut cases: Vec<_> = std::fs::read_dir(root.join(corpus))
            .expect("the shared corpora beside the checkout")
            .map(|e| e.unwrap().path())
            .filter(|p| p.join("lazy.txt").exists())
            .collect();
        cases.sort();
        for case in cases {
            judged(&case, &mut tally);
        }
    }
    // Measured 2026-11-27; a change that moves these updates them in the same commit, with
    // the reason. (969 → 968: the margin's decision refuses a merge whose result has a new
    // parse error on a closer-like line and a segment held by at most one unique line.
    // 968 → 962: the decision refuses a segment keeping file lines between two lines it writes
    // together, and a deletion licensed only among new lines. 962 → 963: the `gap-depth` rule
    // went, which refused a placeholder indented inside a body before a shallower definition.
    // 963 → 962: `jump-lookalike` asks where sure anchors jump over lines that one side of the
    // jump also fits beside the other with a line changed. 962 → 961: a Python body left
    // empty is a syntax error the reading check refuses. 961 → 958: lines kept between two
    // lines the snippet writes with only blank lines between them are one reading of two; a
    // new syntax error excuses only the same error on the snippet's own line; and a line the
    // file has once, replaced while added anew as a segment's outermost line, is refused.
    // 958 → 957: a segment's first line under a placeholder, written as new code in front of
    // a copy of it that the segment keeps, is one reading of two (`head-as-new`). A segment's
    // outermost line is no longer pinned at a copy past its likeness beside the anchor: on
    // `lua-config-personal-defaults`, refused before as two parts claiming the same lines,
    // placement alone now drops a line the plain judge and the check both refuse.)
    let names = |n: &[&str]| n.iter().map(ToString::to_string).collect();
    assert_eq!(
        tally,
        Tally {
            merged: 957,
            // A changed constructor line at the snippet's edge, its merge dropping the two
            // comment lines under it the snippet never showed; three lines of a signature
            // folded into one at a segment's edge.
            plain_refuses: names(&[
                "git-history/google_gson-6c2e3db7d2-7834",
                "git-history-systems/clap-rs_clap-acdbd47152-2277",
                "model-snippets/lua-config-personal-defaults",
            ]),
            check_alone_refuses: names(&[
                "git-history-systems/libuv_libuv-01cd1c5b17-5721",
                "git-history-fresh/guzzle_guzzle-0e6a6c3d26-5498",
            ]),
        }
    );
}

/// Merge one corpus case with the check off and on; judge what placement made.
fn judged(case: &std::path::Path, tally: &mut Tally) {
    let before = std::fs::read_dir(case)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_stem().is_some_and(|s| s == "before"))
        .unwrap();
    let raw = std::fs::read_to_string(&before).unwrap();
    let content = crate::edit::text::normalize_newlines(&raw);
    let snippet = std::fs::read_to_string(case.join("lazy.txt")).unwrap();
    let meta: serde_json::Value = std::fs::read(case.join("meta.json"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    let path = before.file_name().unwrap().to_str().unwrap().to_string();
    let instruction = meta["instruction"].as_str();
    let hints = crate::edit::Hints {
        path: Some(&path),
        instruction,
    };
    let on = crate::edit::lazy::merge(&content, &snippet, &hints);
    SWITCHED_OFF.with(|s| s.set(true));
    let off = crate::edit::lazy::merge(&content, &snippet, &hints);
    SWITCHED_OFF.with(|s| s.set(false));
    let Ok(off) = off else {
        assert!(
            on.is_err(),
            "{}: merged only with the check on",
            case.display()
        );
        return;
    };
    let (lines, _) = crate::edit::text::split_lines(&content);
    let index = FileIndex::new(&lines).with_source(Some(&path), &content);
    let body = crate::edit::lazy::body(&snippet, &hints);
    let snip = Snippet::cut(prepare::read(&body, &index));
    let defs = FileDefs::new(&index);
    let said = instruction
        .map(|i| crate::edit::lazy::hints::read(i, &index, &defs))
        .unwrap_or_default();
    let (out, _) = crate::edit::text::split_lines(&off.content);
    let verdict = check(&index, &snip, &defs, &said.removes, &out);
    let removes: Vec<String> = snip.removals.iter().chain(&said.removes).cloned().collect();
    let plain = plain::unlicensed(&lines, &snip, &removes, &out);
    let shown = case.display();
    let name = case
        .iter()
        .rev()
        .take(2)
        .collect::<Vec<_>>()
        .iter()
        .rev()
        .map(|p| p.to_string_lossy())
        .collect::<Vec<_>>()
        .join("/");
    match &on {
        Ok(m) => assert!(verdict.is_ok() && m.content == off.content, "{shown}"),
        // Refused by the check, or by the decision the check's evidence feeds (a deletion
        // licensed only among new lines, `evidence.rs`), which the check alone passes.
        Err(e) => assert!(
            verdict.as_ref().is_err_and(|v| v.message == e.message)
                || (verdict.is_ok() && e.message.starts_with("not sure enough of this reading")),
            "{shown}"
        ),
    }
    if !plain.is_empty() {
        assert!(
            verdict.is_err(),
            "{shown}: the check let through lines the plain judge refuses: {plain:?}"
        );
        tally.plain_refuses.push(name);
    } else if verdict.is_err() {
        tally.check_alone_refuses.push(name);
    }
    tally.merged += usize::from(on.is_ok());
}

mod properties {
    //! For random files: a result that loses a line the snippet keeps under a placeholder is
    //! refused; a deletion between two lines the snippet shows adjacent is licensed, unless
    //! both are closers.

    use super::*;
    use proptest::prelude::*;

    /// What a line of a random file is.
    #[derive(Debug, Clone, Copy)]
    enum Stmt {
        /// A distinct statement.
        Let,
        /// A closing brace.
        Closer,
    }

    /// A line kind, a closer one time in five.
    fn stmt() -> impl Strategy<Value = Stmt> {
        prop_oneof![4 => Just(Stmt::Let), 1 => Just(Stmt::Closer)]
    }

    /// A file of distinct statements with closers among them.
    fn file_of(kinds: &[Stmt]) -> Vec<String> {
        kinds
            .iter()
            .enumerate()
            .map(|(n, kind)| match kind {
                Stmt::Closer => "}".to_string(),
                Stmt::Let => format!("    let v{n} = f({n});"),
            })
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        #[test]
        fn a_line_under_a_placeholder_never_goes(
            kinds in proptest::collection::vec(stmt(), 12..60),
            cut in 0.0f64..1.0,
            lost in 0.0f64..1.0,
        ) {
            let file = file_of(&kinds);
            let n = file.len();
            // Shown: lines a..a+3 and b..b+3, a placeholder between and around them.
            let a = 1 + ((n - 10) as f64 * cut / 2.0) as usize;
            let b = a + 5 + ((n - a - 9) as f64 * cut) as usize;
            let shown = |r: std::ops::Range<usize>| file[r].join("\n");
            let snippet = format!(
                "// ...\n{}\n// ...\n{}\n// ...\n",
                shown(a..a + 3),
                shown(b..b + 3)
            );
            let text = file.join("\n") + "\n";
            // A line kept by a placeholder (above, between or below the shown lines) is lost.
            let hidden: Vec<usize> = (0..n)
                .filter(|&j| !(a..a + 3).contains(&j) && !(b..b + 3).contains(&j))
                .filter(|&j| !file[j].trim().starts_with('}'))
                .collect();
            prop_assume!(!hidden.is_empty());
            let gone = hidden[((hidden.len() - 1) as f64 * lost) as usize];
            let result: Vec<&str> = (0..n)
                .filter(|&j| j != gone)
                .map(|j| file[j].as_str())
                .collect();
            let verdict = judge(&text, &snippet, &(result.join("\n") + "\n"), &[]);
            prop_assert!(verdict.is_err(), "line {} went unlicensed", gone + 1);
            // The plain judge of the corpus test refuses it too, but between two closers
            // (which it does not tell apart).
            let lines: Vec<&str> = file.iter().map(String::as_str).collect();
            let snip = Snippet::cut(prepare::read(&snippet, &FileIndex::new(&lines)));
            let plain = plain::unlicensed(&lines, &snip, &[], &result);
            let closer = |j: Option<usize>| j.and_then(|j| file.get(j)).is_some_and(|l| l == "}");
            if !(closer(gone.checked_sub(1)) && closer(Some(gone + 1))) {
                prop_assert_eq!(plain.len(), 1, "line {} went, by the plain judge", gone + 1);
            }
            // The middle of the first shown stretch dropped from the snippet: licensed.
            let snippet = format!(
                "// ...\n{}\n{}\n// ...\n{}\n// ...\n",
                file[a],
                file[a + 2],
                shown(b..b + 3)
            );
            let result: Vec<&str> = (0..n)
                .filter(|&j| j != a + 1)
                .map(|j| file[j].as_str())
                .collect();
            let verdict = judge(&text, &snippet, &(result.join("\n") + "\n"), &[]);
            // (Two closers alone place nothing, and license nothing.)
            let closers = file[a].trim() == "}" && file[a + 2].trim() == "}";
            prop_assert!(verdict.is_ok() || closers, "{:?}", verdict);
        }
    }
}
