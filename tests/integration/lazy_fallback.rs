//! The model fallback for lazy snippets, against a local stand-in for an OpenAI-compatible
//! `chat/completions` endpoint. No real model endpoint is reachable from the test machines, so
//! a small HTTP server in the test answers with a canned completion (the one mock in these
//! tests); everything else — the binary, the config file, the HTTP client — is real.

use std::sync::{Arc, Mutex};

use crate::support::{bin, fake_chat};

/// Serve `answer` as the completion to every request; returns the base URL and the request
/// bodies received.
fn fake_endpoint(answer: &'static str) -> (String, Arc<Mutex<Vec<serde_json::Value>>>) {
    fake_chat(move |_, _| serde_json::json!({"role": "assistant", "content": answer}))
}

const FILE: &str = "def a():\n    x = 1\n    return x\n\n\ndef b():\n    x = 1\n    return x\n";
/// Fits both functions equally well: the deterministic merge declines.
const SNIPPET: &str = "    x = 1\n    y = 2\n    return x\n";

fn project(config: Option<&str>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ab.py"), FILE).unwrap();
    std::fs::write(dir.path().join("edit.txt"), SNIPPET).unwrap();
    // The fallback is the user's own config, never the repository's.
    if let Some(c) = config {
        std::fs::write(dir.path().join("user.toml"), c).unwrap();
    }
    dir
}

fn merge_in(dir: &tempfile::TempDir) -> std::process::Output {
    bin()
        .args(["merge", "lazy", "ab.py", "edit.txt"])
        .current_dir(dir.path())
        .env("PATCHGATE_CONFIG", dir.path().join("user.toml"))
        .output()
        .unwrap()
}

#[test]
fn without_a_fallback_the_ambiguous_snippet_is_declined() {
    let dir = project(None);
    let out = merge_in(&dir);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr
            .lines()
            .last()
            .unwrap()
            .contains("NEEDS_MORE_CONTEXT"),
        "{stderr}"
    );
}

#[test]
fn a_declined_snippet_goes_to_the_fallback_and_its_answer_is_applied() {
    const ANSWER: &str =
        "def a():\n    x = 1\n    return x\n\n\ndef b():\n    x = 1\n    y = 2\n    return x\n";
    let (url, seen) = fake_endpoint(ANSWER);
    let dir = project(Some(&format!(
        "[fallback]\nendpoint = \"{url}\"\nmodel = \"stand-in-coder\"\n"
    )));
    let out = merge_in(&dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8(out.stdout).unwrap(), ANSWER);
    let requests = seen.lock().unwrap();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0]["model"], "stand-in-coder");
    let user = requests[0]["messages"][1]["content"].as_str().unwrap();
    assert!(user.contains(SNIPPET) && user.contains(FILE), "{user}");
    // The file itself is never written by `merge`.
    assert_eq!(
        std::fs::read_to_string(dir.path().join("ab.py")).unwrap(),
        FILE
    );
}

#[test]
fn a_leaked_placeholder_in_the_fallback_answer_is_marker_leakage() {
    const LEAKY: &str =
        "def a():\n    # ... existing code ...\n\n\ndef b():\n    x = 1\n    y = 2\n    return x\n";
    let (url, _) = fake_endpoint(LEAKY);
    let dir = project(Some(&format!(
        "[fallback]\nendpoint = \"{url}\"\nmodel = \"m\"\n"
    )));
    let out = merge_in(&dir);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    let json: serde_json::Value = serde_json::from_str(stderr.lines().last().unwrap()).unwrap();
    assert_eq!(json["code"], "MARKER_LEAKAGE", "{stderr}");
}

#[test]
fn an_unreachable_fallback_keeps_the_deterministic_refusal() {
    // A port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = project(Some(&format!(
        "[fallback]\nendpoint = \"http://127.0.0.1:{port}/v1\"\nmodel = \"m\"\ntimeout_s = 5\n"
    )));
    let out = merge_in(&dir);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    let last = stderr.lines().last().unwrap();
    assert!(
        last.contains("NEEDS_MORE_CONTEXT") && last.contains("fallback model failed"),
        "{last}"
    );
}

#[test]
fn a_snippet_that_changes_nothing_is_apply_noop_without_asking_the_model() {
    let (url, seen) = fake_endpoint(FILE);
    let dir = project(Some(&format!(
        "[fallback]\nendpoint = \"{url}\"\nmodel = \"m\"\n"
    )));
    std::fs::write(
        dir.path().join("edit.txt"),
        "# ... existing code ...\ndef b():\n    x = 1\n    return x\n",
    )
    .unwrap();
    let out = merge_in(&dir);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    let json: serde_json::Value = serde_json::from_str(stderr.lines().last().unwrap()).unwrap();
    assert_eq!(json["code"], "APPLY_NOOP", "{stderr}");
    assert!(seen.lock().unwrap().is_empty(), "the model was asked");
}

#[test]
fn a_repositorys_fallback_is_never_called() {
    // A hostile repository points the fallback at its own host and asks for a secret.
    const ANSWER: &str = "def a():\n    pass\n";
    let (url, seen) = fake_endpoint(ANSWER);
    let dir = project(None);
    std::fs::write(
        dir.path().join(".patchgate.toml"),
        format!("[fallback]\nendpoint = \"{url}\"\nmodel = \"m\"\napi_key_env = \"HOME\"\n"),
    )
    .unwrap();
    let out = merge_in(&dir);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("NEEDS_MORE_CONTEXT"), "{stderr}");
    assert!(stderr.contains("[fallback] is ignored"), "{stderr}");
    assert!(
        seen.lock().unwrap().is_empty(),
        "the repository's endpoint was called"
    );
}
