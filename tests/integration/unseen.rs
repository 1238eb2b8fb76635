//! Lines an edit deletes that it does not show (docs/DESIGN.md §4), one measure for every
//! engine: a lazy snippet that writes a new definition over one whose name it never writes
//! carries `unseen: N lines deleted that the edit does not show (RANGES)` in its tool result
//! and in `patchgate merge --json`, and under `--policy auto` waits for a person; a body
//! rewritten between its shown header and closer carries nothing.

use serde_json::{Value, json};

use crate::mcp::{Gate, Project, Recorder, call, http};
use crate::support::run;

const LIB: &str = "\
fn head() -> u8 {
    1
}

fn print(x: u8) {
    let s = format!(\"{x}\");
    out(&s);
}

fn tail() -> u8 {
    2
}
";

/// `println` written over `print`, whose name the snippet never writes.
const OVER: &str = "\
fn head() -> u8 {
    1
}

fn println(x: u8) {
    let s = format!(\"{x}\\n\");
    out_line(&s);
}

fn tail() -> u8 {
// ... existing code ...
";

/// `tail`'s body rewritten between its shown header and closer.
const BODY: &str = "\
// ... existing code ...
fn tail() -> u8 {
    3
}
";

/// Whether any warning speaks of deleted lines (today's `unseen:` or the old measure's words).
fn speaks_of_deletions(v: &Value) -> bool {
    let w = v["warnings"].to_string();
    w.contains("unseen") || w.contains("never showed")
}

fn unseen(v: &Value) -> Option<String> {
    v["warnings"]
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .find(|w| w.starts_with("unseen: "))
        .map(String::from)
}

#[test]
fn merge_json_names_the_lines_a_snippet_deletes_unseen_and_none_for_a_rewritten_body() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("lib.rs");
    std::fs::write(&file, LIB).unwrap();
    let file = file.to_string_lossy().into_owned();
    let out = run(&["merge", "lazy", &file, "-", "--json"], OVER);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        unseen(&v).as_deref(),
        Some("unseen: 3 lines deleted that the edit does not show (5–7)"),
        "{v}"
    );
    let out = run(&["merge", "lazy", &file, "-", "--json"], BODY);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["status"], "ok", "{v}");
    assert_eq!(unseen(&v), None, "{v}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_auto_an_edit_that_deletes_lines_unseen_waits_for_a_person() {
    let p = Project::new();
    p.write("src/lib.rs", LIB);
    let gate = Gate::start(&p, &["--policy", "auto", "--review-timeout", "1"]);
    let c = http(&gate, Recorder::default()).await;
    let v = call(
        &c,
        "fast_apply",
        json!({"path": "src/lib.rs", "edit_snippet": OVER}),
    )
    .await;
    assert_eq!(v["status"], "pending", "{v}");
    let w = unseen(&v).unwrap_or_else(|| panic!("no unseen warning: {v}"));
    assert!(w.contains("3 lines"), "{w}");
    assert!(
        v["warnings"].to_string().contains("waits for a person"),
        "{v}"
    );
    assert_eq!(p.read("src/lib.rs"), LIB, "written unseen");
    let run_id = v["run_id"].as_str().unwrap();
    let list = gate.api(reqwest::Method::GET, "/api/reviews", None).await;
    let row = list
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["run_id"] == run_id)
        .unwrap()
        .clone();
    assert_eq!(row["unseen_deletions"], 3, "{row}");
    gate.decide(run_id, json!({"decision": "reject", "note": "no"}))
        .await;
    // A body rewritten between its header and closer is applied at once, with no warning.
    let v = call(
        &c,
        "fast_apply",
        json!({"path": "src/lib.rs", "edit_snippet": BODY}),
    )
    .await;
    assert_eq!(v["status"], "ok", "{v}");
    assert!(!speaks_of_deletions(&v), "{v}");
    assert!(p.read("src/lib.rs").contains("    3\n"));
}

/// A doc comment rewrapped in place and a function body rewritten between its header and
/// closer delete no line unseen: no warning, 0 in the review API, applied under `auto`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rewrap_and_a_rewritten_body_count_no_unseen_line() {
    let p = Project::new();
    let lib = "\
/// Adds the two numbers given and returns
/// their sum, wrapping on overflow.
pub fn add(a: u8, b: u8) -> u8 {
    a.wrapping_add(b)
}

pub fn total(items: &[u8]) -> u8 {
    let mut sum = 0;
    for i in items {
        sum = add(sum, *i);
    }
    sum
}
";
    p.write("src/lib.rs", lib);
    let gate = Gate::start(&p, &["--policy", "auto", "--review-timeout", "1"]);
    let c = http(&gate, Recorder::default()).await;
    let snippet = "\
/// Adds the two numbers given and returns their sum,
/// wrapping on overflow.
pub fn add(a: u8, b: u8) -> u8 {
// ... existing code ...
pub fn total(items: &[u8]) -> u8 {
    items.iter().fold(0, |sum, i| add(sum, *i))
}
";
    let v = call(
        &c,
        "fast_apply",
        json!({"path": "src/lib.rs", "edit_snippet": snippet}),
    )
    .await;
    assert_eq!(v["status"], "ok", "{v}");
    assert!(!speaks_of_deletions(&v), "{v}");
    let list = gate.api(reqwest::Method::GET, "/api/reviews", None).await;
    let row = list.as_array().unwrap().last().unwrap().clone();
    assert_eq!(row["unseen_deletions"], 0, "{row}");
    assert!(p.read("src/lib.rs").contains("returns their sum,\n"));
}

/// A patch that renames a file deletes its source by name: `apply --check` shows no unseen
/// line for it (every line of the source is the rename's).
#[test]
fn a_renamed_file_is_no_unseen_deletion() {
    let root = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("notes.txt"), "one\ntwo\nthree\n").unwrap();
    std::fs::create_dir(root.path().join("docs")).unwrap();
    let patch = "diff --git a/notes.txt b/docs/notes.txt\nsimilarity index 100%\nrename from notes.txt\nrename to docs/notes.txt\n";
    let mut cmd = crate::support::bin();
    cmd.args(["apply", "--check", "--root"])
        .arg(root.path())
        .arg("-")
        .env("PATCHGATE_STATE_DIR", state.path());
    let out = crate::support::run_cmd(cmd, patch);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("applies"), "{stdout}");
    assert!(!stdout.contains("unseen"), "{stdout}");
}

/// A stdio server under `auto` with no reviewer: an edit that deletes lines it does not show
/// is not written, and the agent hears why, not to change the policy it already has.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_no_reviewer_an_unseen_deletion_is_refused_saying_so() {
    let p = Project::new();
    p.write("src/lib.rs", LIB);
    let c = crate::mcp::stdio(&p, &["--policy", "auto"], Recorder::default()).await;
    let v = call(
        &c,
        "fast_apply",
        json!({"path": "src/lib.rs", "edit_snippet": OVER}),
    )
    .await;
    assert_eq!(v["code"], "REVIEWER_GONE", "{v}");
    let m = v["message"].as_str().unwrap();
    assert!(
        m.contains("deletes lines it does not show (unseen: 3 lines"),
        "{m}"
    );
    assert!(!m.contains("--policy auto"), "{m}");
    assert_eq!(p.read("src/lib.rs"), LIB);
}
