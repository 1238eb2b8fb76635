//! `patchgate eval --rules` lists the lazy merge's rules; `eval DIR --without NAME` scores the
//! merge with a rule switched off, and an unknown name is a usage error naming the rules.

use std::path::Path;

use crate::support::run;

/// `patchgate ARGS` with an empty stdin: exit code, stdout, stderr.
fn output(args: &[&str]) -> (i32, String, String) {
    let out = run(args, "");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A one-case corpus under `root`: `file` and the lazy `snippet`, whose commit gives `after`.
fn one_case(root: &Path, file: &str, snippet: &str, after: &str) {
    let case = root.join("case-1");
    std::fs::create_dir_all(&case).unwrap();
    std::fs::write(case.join("before.go"), file).unwrap();
    std::fs::write(case.join("lazy.txt"), snippet).unwrap();
    std::fs::write(case.join("after.go"), after).unwrap();
}

/// The `key=value` of `eval`'s last summary line.
fn field(stdout: &str, key: &str) -> String {
    let last = stdout.lines().last().expect("a summary line");
    last.split_whitespace()
        .find_map(|kv| kv.strip_prefix(&format!("{key}=")))
        .unwrap_or_else(|| panic!("no {key} in {last}"))
        .to_string()
}

#[test]
fn eval_rules_lists_each_rule_on_a_line_with_its_stage_and_summary() {
    let (code, out, err) = output(&["eval", "--rules"]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    let mut names = Vec::new();
    for line in &lines {
        let mut words = line.split_whitespace();
        let (name, stage) = (words.next().unwrap(), words.next().unwrap());
        assert!(
            ["read", "place", "align", "check"].contains(&stage),
            "{line}"
        );
        assert!(words.count() >= 3, "no summary: {line}");
        names.push(name);
    }
    // The names `--without` refuses an unknown name with: the same rules, each listed once.
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().to_str().unwrap();
    let (code, _, err) = output(&["eval", corpus, "--without", "no-such-rule"]);
    assert_eq!(code, 2, "{err}");
    let known = err.split("the rules: ").nth(1).expect("the rules named");
    let known = known.lines().next().unwrap_or_default();
    let known: Vec<&str> = known.split(", ").map(str::trim).collect();
    assert_eq!(names, known, "{out}");
    assert_eq!(
        names.len(),
        patchgate::edit::lazy::rules::ALL.len(),
        "{out}"
    );
    let mut unique = names.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), names.len(), "a name listed twice: {out}");
}

#[test]
fn eval_rules_with_a_corpus_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().to_str().unwrap();
    let (code, out, err) = output(&["eval", "--rules", corpus]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("--rules"), "{err}");
    assert!(out.is_empty(), "the rules listed anyway: {out}");
}

#[test]
fn eval_without_a_rule_of_another_engine_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().to_str().unwrap();
    let args = ["eval", corpus, "--format", "blocks", "--without", "slide"];
    let (code, out, err) = output(&args);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("--without") && err.contains("lazy"), "{err}");
}

#[test]
fn eval_without_a_rule_scores_the_merge_with_that_rule_off() {
    // Two fields move into a new struct further down: `moved-lines` deletes their old copies.
    let dir = tempfile::tempdir().unwrap();
    let file = "package p\n\ntype Project struct {\n\tName    string\n\tOwner   string\n\tCmdName string\n\tCmdArgs string\n\n\tpath string\n}\n\nfunc (p *Project) Create() error {\n\treturn nil\n}\n";
    let snippet = "// ... existing code ...\ntype Project struct {\n\tName    string\n\tOwner   string\n\n\t// ... existing code ...\n}\n\ntype Command struct {\n\tCmdName string\n\tCmdArgs string\n}\n\n// ... existing code ...\n";
    let after = "package p\n\ntype Project struct {\n\tName    string\n\tOwner   string\n\n\tpath string\n}\n\ntype Command struct {\n\tCmdName string\n\tCmdArgs string\n}\n\nfunc (p *Project) Create() error {\n\treturn nil\n}\n";
    one_case(dir.path(), file, snippet, after);
    let corpus = dir.path().to_str().unwrap();
    let (code, on, err) = output(&["eval", corpus, "--repeat", "1"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(field(&on, "correct"), "100.0%", "{on}");
    let (code, off, err) = output(&["eval", corpus, "--repeat", "1", "--without", "moved-lines"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(field(&off, "correct"), "0.0%", "{off}");
    // Repeatable: a second rule off as well.
    let args = [
        "eval",
        corpus,
        "--repeat",
        "1",
        "--without",
        "moved-lines",
        "--without",
        "slide",
    ];
    let (code, _, err) = output(&args);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn eval_without_an_unknown_rule_is_a_usage_error_naming_the_rules() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().to_str().unwrap();
    let (code, out, err) = output(&["eval", corpus, "--without", "no-such-rule"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("no-such-rule"), "{err}");
    assert!(
        err.contains("moved-lines") && err.contains("balance"),
        "{err}"
    );
}
