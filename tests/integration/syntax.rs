//! The syntax check on every proposal (docs/DESIGN.md §5.5), whatever the engine: an edit that
//! drops a brace or a parenthesis carries `syntax: LINE:COL: what` in its warnings; under
//! `--policy auto` it is not applied but waits for a person, and the file stays as it was; a
//! correct edit is applied as before; `merge` and `apply` say it on standard error.

use serde_json::{Value, json};

use crate::mcp::{Gate, Project, Recorder, call, http};
use crate::support::run;

const LIB: &str = "\
fn parse(input: &str) -> Option<u32> {
    input.trim().parse().ok()
}

fn render(value: u32) -> String {
    format!(\"value = {value}\")
}
";

/// `render` broken as each tool would send it: a dropped brace or parenthesis (the lazy
/// engine refuses unbalanced brackets itself, so its snippet has a statement missing its name).
fn broken_edits() -> Vec<(&'static str, Value)> {
    vec![
        (
            "fast_apply",
            json!({"path": "src/lib.rs", "edit_snippet":
                "// ... existing code ...\nfn render(value: u32) -> String {\n    let = value;\n    format!(\"value: {value}\")\n}\n"}),
        ),
        (
            "FileWriteOrEdit",
            json!({"file_path": "src/lib.rs", "percentage_to_change": 10,
                "text_or_search_replace_blocks":
                "<<<<<<< SEARCH\n    format!(\"value = {value}\")\n}\n=======\n    format!(\"value: {value}\")\n>>>>>>> REPLACE\n"}),
        ),
        (
            "patch_file",
            json!({"target_file": "src/lib.rs",
                "search_content": "    input.trim().parse().ok()\n",
                "replace_content": "    input.trim().parse().ok(\n"}),
        ),
        (
            "patch_file",
            json!({"target_file": "src/lib.rs", "patch_content":
                "@@ -5,3 +5,2 @@\n fn render(value: u32) -> String {\n     format!(\"value = {value}\")\n-}\n"}),
        ),
    ]
}

/// `patchgate apply FLAG --root ROOT -` with `patch` on standard input.
fn apply(
    flag: &str,
    root: &std::path::Path,
    state: &std::path::Path,
    patch: &str,
) -> std::process::Output {
    let mut cmd = crate::support::bin();
    cmd.args(["apply", flag, "--root"])
        .arg(root)
        .arg("-")
        .env("PATCHGATE_STATE_DIR", state);
    crate::support::run_cmd(cmd, patch)
}

fn syntax_warning(v: &Value) -> Option<String> {
    let from = |w: &Value| {
        w.as_array()?
            .iter()
            .filter_map(Value::as_str)
            .find(|w| w.starts_with("syntax: "))
            .map(String::from)
    };
    from(&v["warnings"]).or_else(|| from(&v["review"]["warnings"]))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_auto_a_broken_edit_waits_for_a_person_whatever_the_engine() {
    let p = Project::new();
    p.write("src/lib.rs", LIB);
    let gate = Gate::start(&p, &["--policy", "auto", "--review-timeout", "1"]);
    let c = http(&gate, Recorder::default()).await;
    for (tool, args) in broken_edits() {
        let v = call(&c, tool, args.clone()).await;
        assert_eq!(v["status"], "pending", "{tool} {args}: {v}");
        let w = syntax_warning(&v).unwrap_or_else(|| panic!("{tool}: no syntax warning: {v}"));
        assert!(
            w.split(' ').nth(1).is_some_and(|at| at.contains(':')),
            "{tool}: `syntax: LINE:COL: what`: {w}"
        );
        let why = v["warnings"].to_string();
        assert!(why.contains("waits for a person"), "{tool}: {v}");
        assert_eq!(
            p.read("src/lib.rs"),
            LIB,
            "{tool} wrote a broken file unseen"
        );
        // Withdrawn, so the next edit of the file is not a revision of this one.
        let run = v["run_id"].as_str().unwrap();
        gate.decide(run, json!({"decision": "reject", "note": "broken"}))
            .await;
    }
    // A correct edit is applied at once, with no syntax warning.
    let v = call(
        &c,
        "patch_file",
        json!({"target_file": "src/lib.rs", "search_content": "value = {value}", "replace_content": "value: {value}"}),
    )
    .await;
    assert_eq!(v["status"], "ok", "{v}");
    assert_eq!(syntax_warning(&v), None, "{v}");
    assert!(p.read("src/lib.rs").contains("value: {value}"));
}

#[test]
fn merge_and_apply_say_it_on_standard_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("lib.rs");
    std::fs::write(&file, LIB).unwrap();
    let out = run(
        &["merge", "blocks", file.to_str().unwrap(), "-"],
        "<<<<<<< SEARCH\nfn render(value: u32) -> String {\n=======\nfn render(value: u32) -> String\n>>>>>>> REPLACE\n",
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("warning: syntax: "), "{err}");
    // A correct merge says nothing of syntax.
    let out = run(
        &["merge", "blocks", file.to_str().unwrap(), "-"],
        "<<<<<<< SEARCH\nvalue = {value}\n=======\nvalue: {value}\n>>>>>>> REPLACE\n",
    );
    assert!(!String::from_utf8_lossy(&out.stderr).contains("syntax"));

    // `apply --check` lists it; `apply --yes` says it, and applies (the person said yes).
    let root = dir.path().join("root");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("lib.rs"), LIB).unwrap();
    let patch = "--- a/lib.rs\n+++ b/lib.rs\n@@ -5,3 +5,2 @@\n fn render(value: u32) -> String {\n     format!(\"value = {value}\")\n-}\n";
    let state = dir.path().join("state");
    for (flag, applied) in [("--check", false), ("--yes", true)] {
        let out = apply(flag, &root, &state, patch);
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "apply {flag}: {all}");
        assert!(all.contains("syntax: "), "apply {flag}: {all}");
        let now = std::fs::read_to_string(root.join("lib.rs")).unwrap();
        assert_eq!(now != LIB, applied, "apply {flag}: {now}");
    }
}

/// `apply --yes` takes the syntax hold off (the person said yes), and only that: a path the
/// rules keep for a person (`.env*`) is still not written. In a patch of several files the
/// broken one is named.
#[test]
fn apply_yes_lifts_only_the_syntax_hold() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("lib.rs"), LIB).unwrap();
    std::fs::write(root.join("notes.rs"), "fn n() {}\n").unwrap();
    std::fs::write(root.join(".env"), "A=1\n").unwrap();
    let state = dir.path().join("state");
    let yes = |patch: &str| {
        let out = apply("--yes", &root, &state, patch);
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, err) = yes("--- a/.env\n+++ b/.env\n@@ -1 +1 @@\n-A=1\n+A=2\n");
    assert_eq!(code, Some(1), "{err}");
    assert_eq!(std::fs::read_to_string(root.join(".env")).unwrap(), "A=1\n");
    let two = "--- a/notes.rs\n+++ b/notes.rs\n@@ -1 +1 @@\n-fn n() {}\n+fn n() { 1 }\n\
               --- a/lib.rs\n+++ b/lib.rs\n@@ -5,3 +5,2 @@\n fn render(value: u32) -> String {\n     format!(\"value = {value}\")\n-}\n";
    let (code, err) = yes(two);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("lib.rs: syntax: "), "{err}");
    assert_ne!(std::fs::read_to_string(root.join("lib.rs")).unwrap(), LIB);
}

/// A stdio server under `auto` with no reviewer: a broken edit is not written, and the agent
/// hears why (the syntax error), not to change the policy it already has.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_no_reviewer_a_broken_edit_is_refused_naming_the_syntax_error() {
    let p = Project::new();
    p.write("src/lib.rs", LIB);
    let c = crate::mcp::stdio(&p, &["--policy", "auto"], Recorder::default()).await;
    let (tool, args) = broken_edits().remove(2);
    let v = call(&c, tool, args).await;
    assert_eq!(v["code"], "REVIEWER_GONE", "{v}");
    let m = v["message"].as_str().unwrap();
    assert!(m.contains("syntax: "), "{m}");
    assert!(!m.contains("--policy auto"), "{m}");
    assert_eq!(p.read("src/lib.rs"), LIB);
}
