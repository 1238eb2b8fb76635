//! A stdio server under a wider gate stays inside its own root and the gate's rules
//! (docs/DESIGN.md §7): its search obeys the gate's deny rules (the index's answer and the
//! model's reading alike), and it commits or awaits by run_id only runs of its own root.

use std::path::Path;
use std::process::Stdio;

use rmcp::ServiceExt;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

use crate::mcp::{Client, Gate, Project, Recorder, call, http, stdio};
use crate::support::fake_chat;

/// The word only the denied file holds.
const SECRET_WORD: &str = "zanzibarquokka";
/// The word only the searchable file holds.
const OPEN_WORD: &str = "marmaladexylophone";

/// `p` seen from its directory `rel`: the same state directory, so the stdio server
/// finds the gate on `p`.
fn under(p: &Project, rel: &str) -> Project {
    let mut sub = Project::new();
    sub.root = p.root.join(rel);
    sub.state = p.state.clone();
    std::fs::create_dir_all(&sub.root).unwrap();
    sub
}

/// A gate's root whose `.patchgate.toml` denies `sub/secrets/**`, with a secret and an open
/// file under `sub/`.
fn gated_project() -> Project {
    let p = Project::new();
    p.write(
        ".patchgate.toml",
        "[[rules]]\nglob = \"sub/secrets/**\"\naction = \"deny\"\n",
    );
    p.write(
        "sub/secrets/key.txt",
        &format!("the vault key is {SECRET_WORD}\n"),
    );
    p.write(
        "sub/src/normal.rs",
        &format!("/// The vault.\nfn {OPEN_WORD}() {{}}\n"),
    );
    p
}

/// The files an answer names.
fn named(answer: &Value) -> Vec<String> {
    answer["files"]
        .as_object()
        .unwrap_or_else(|| panic!("no files: {answer}"))
        .keys()
        .cloned()
        .collect()
}

/// A client of `serve --stdio --root ROOT` with the user config `config`.
async fn stdio_with_config(p: &Project, config: &Path) -> Client {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_patchgate"));
    cmd.args(["serve", "--stdio", "--root"])
        .arg(&p.root)
        .env("PATCHGATE_STATE_DIR", &p.state)
        .env("PATCHGATE_LOG", p.state.join("patchgate.log"))
        .env("PATCHGATE_CONFIG", config);
    let (transport, _) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn serve --stdio");
    Recorder::default()
        .serve(transport)
        .await
        .expect("initialize over stdio")
}

/// Regression (issue item 4): a stdio server rooted at `A/sub` under a gate on `A` that
/// denies `sub/secrets/**` answered searches under its own rules only, and named the
/// denied file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_under_a_gate_obeys_the_gates_deny_rules() {
    let p = gated_project();
    let sub = under(&p, "sub");
    let _gate = Gate::start(&p, &["--policy", "gate"]);
    let c = stdio(&sub, &[], Recorder::default()).await;
    let secret = sub.root.join("secrets/key.txt").display().to_string();
    let open = sub.root.join("src/normal.rs").display().to_string();
    for tool in ["agentic_search", "fast_search", "agentic_retrieval"] {
        let v = call(&c, tool, json!({"query": SECRET_WORD})).await;
        assert!(
            !named(&v).contains(&secret),
            "{tool} names the denied file: {v}"
        );
        assert!(!v.to_string().contains("secrets/"), "{tool}: {v}");
    }
    let v = call(&c, "agentic_search", json!({"query": OPEN_WORD})).await;
    assert!(named(&v).contains(&open), "search still works: {v}");

    // Rules that no longer read stop the search; it never runs without them.
    p.write(".patchgate.toml", "[[rules]\nglob = \"sub/secrets/**\"\n");
    let v = call(&c, "agentic_search", json!({"query": SECRET_WORD})).await;
    assert_eq!(v["status"], "error", "{v}");
    assert!(v["message"].as_str().unwrap().contains("rules"), "{v}");
    assert!(v.get("files").is_none(), "{v}");
    c.cancel().await.unwrap();
}

/// Regression (review of issue 39 item 1): a `deny` rule a reviewer added for the session
/// lived only in the gate's memory, and a forwarding stdio server's search (which had made
/// its searcher from the configs alone, and kept it) still named the file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_deny_the_reviewer_adds_reaches_a_forwarding_servers_search_at_once() {
    let p = gated_project();
    let sub = under(&p, "sub");
    let gate = Gate::start(&p, &["--policy", "gate"]);
    let c = stdio(&sub, &[], Recorder::default()).await;
    let open = sub.root.join("src/normal.rs").display().to_string();
    let v = call(&c, "agentic_search", json!({"query": OPEN_WORD})).await;
    assert!(named(&v).contains(&open), "found before the rule: {v}");

    let (status, added) = gate
        .api_status(
            reqwest::Method::POST,
            "/api/rules",
            Some(json!({"glob": "sub/src/**", "action": "deny", "scope": "session"})),
        )
        .await;
    assert_eq!(status, reqwest::StatusCode::OK, "{added}");
    for tool in ["agentic_search", "fast_search", "agentic_retrieval"] {
        let v = call(&c, tool, json!({"query": OPEN_WORD})).await;
        assert!(
            !v.to_string().contains("normal.rs"),
            "{tool} after the rule: {v}"
        );
    }
    c.cancel().await.unwrap();
}

/// Regression (issue item 4, with a model): the search model of a stdio server under a gate
/// is never shown a file the gate denies, whether it asks for it by name or greps for it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_search_model_under_a_gate_never_reads_the_gates_denied_files() {
    let p = gated_project();
    let sub = under(&p, "sub");
    let tool_call = |id: &str, name: &str, args: Value| json!({"id": id, "type": "function", "function": {"name": name, "arguments": args.to_string()}});
    let (url, seen) = fake_chat(move |n, _| match n {
        0 => json!({"role": "assistant", "content": null, "tool_calls": [
            tool_call("a", "view_file", json!({"path": "secrets/key.txt"})),
            tool_call("b", "grep", json!({"pattern": "vault"})),
            tool_call("c", "glob", json!({"pattern": "**/*.txt"})),
        ]}),
        _ => json!({"role": "assistant", "content": null, "tool_calls": [
            tool_call("d", "report_back", json!({
                "explanation": "the vault",
                "files": {"secrets/key.txt": [[1, 1]], "src/normal.rs": [[1, 2]]}
            })),
        ]}),
    });
    let config = p.state.join("user.toml");
    std::fs::write(
        &config,
        format!("[fallback]\nendpoint = \"{url}\"\nmodel = \"stand-in\"\n[search]\nmax_turns = 4\ntimeout_s = 30\n"),
    )
    .unwrap();
    let _gate = Gate::start(&p, &["--policy", "gate"]);
    let c = stdio_with_config(&sub, &config).await;
    let v = call(
        &c,
        "agentic_search",
        json!({"query": "where is the vault key"}),
    )
    .await;
    let secret = sub.root.join("secrets/key.txt").display().to_string();
    let open = sub.root.join("src/normal.rs").display().to_string();
    assert_eq!(named(&v), [open], "{v}");
    assert!(!named(&v).contains(&secret), "{v}");
    let bodies = seen.lock().unwrap().clone();
    assert_eq!(bodies.len(), 2, "two model turns");
    for body in bodies.iter() {
        let text = body.to_string();
        assert!(
            !text.contains(SECRET_WORD),
            "the denied file's text reached the model: {text}"
        );
    }
    let seed = bodies[0]["messages"][1]["content"].as_str().unwrap();
    assert!(
        !seed.contains("key.txt"),
        "seeded with the denied file: {seed}"
    );
    let replies: Vec<&str> = bodies[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert_eq!(replies.len(), 3, "{replies:?}");
    assert!(
        replies[0].starts_with("error:") && replies[0].contains("denies"),
        "{replies:?}"
    );
    assert!(
        !replies[1].contains("key.txt") && !replies[2].contains("key.txt"),
        "grep and glob show the denied file: {replies:?}"
    );
    c.cancel().await.unwrap();
}

/// A dry-run of `file` (replacing `from` by `to`) through `c`; its run id.
async fn dry_run(c: &Client, file: &str, from: &str, to: &str) -> String {
    let v = call(
        c,
        "patch_file",
        json!({"target_file": file, "search_content": from, "replace_content": to, "dry_run": true}),
    )
    .await;
    assert_eq!(
        (v["status"].clone(), v["dry_run"].clone()),
        (json!("ok"), json!(true)),
        "{v}"
    );
    v["run_id"].as_str().unwrap().to_string()
}

/// `apply_last_dry_run` and `await_review` of `run` through `c` are refused as for a run
/// that does not exist.
async fn refused_as_unknown(c: &Client, run: &str) {
    let unknown = call(c, "apply_last_dry_run", json!({"run_id": "nosuchrun1"})).await;
    for tool in ["apply_last_dry_run", "await_review"] {
        let v = call(c, tool, json!({"run_id": run})).await;
        assert_eq!(v["status"], "error", "{tool}: {v}");
        assert_eq!(v["code"], "RUN_NOT_FOUND", "{tool}: {v}");
        assert_eq!(
            v["message"].as_str().unwrap(),
            unknown["message"]
                .as_str()
                .unwrap()
                .replace("nosuchrun1", run),
            "{tool}: told as an unknown run"
        );
        assert!(v.get("path").is_none() && v.get("paths").is_none(), "{v}");
    }
}

/// Regression (issue item 9b): a stdio server rooted at `A/sub` committed, by its run_id, a
/// dry-run of `A/other` (or of the gate's own root) that it never made.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commit_and_await_by_run_id_stay_inside_the_stdio_servers_root() {
    let p = Project::new();
    p.write("other/o.txt", "one\n");
    p.write("top.txt", "top\n");
    let sub = under(&p, "sub");
    let other = under(&p, "other");
    let gate = Gate::start(&p, &["--policy", "auto"]);
    let c_sub = stdio(&sub, &[], Recorder::default()).await;
    let c_other = stdio(&other, &[], Recorder::default()).await;
    let c_gate = http(&gate, Recorder::default()).await;

    let run_other = dry_run(&c_other, "o.txt", "one", "two").await;
    let run_top = dry_run(&c_gate, "top.txt", "top", "TOP").await;
    for run in [&run_other, &run_top] {
        refused_as_unknown(&c_sub, run).await;
    }
    assert_eq!(p.read("other/o.txt"), "one\n");
    assert_eq!(p.read("top.txt"), "top\n");
    // The gate's root is no stdio server's own either.
    refused_as_unknown(&c_other, &run_top).await;
    assert_eq!(p.read("top.txt"), "top\n");

    // The server that made the run commits it; the gate commits its own.
    let v = call(&c_other, "apply_last_dry_run", json!({"run_id": run_other})).await;
    assert_eq!(v["status"], "ok", "{v}");
    assert_eq!(v["path"], "o.txt", "the agent's own path: {v}");
    assert_eq!(p.read("other/o.txt"), "two\n");
    let v = call(&c_other, "await_review", json!({"run_id": run_other})).await;
    assert_eq!(v["status"], "ok", "its own run's state: {v}");
    let v = call(&c_gate, "apply_last_dry_run", json!({"run_id": run_top})).await;
    assert_eq!(v["status"], "ok", "{v}");
    assert_eq!(p.read("top.txt"), "TOP\n");
    for c in [c_sub, c_other, c_gate] {
        c.cancel().await.unwrap();
    }
}

/// Regression (review of issue 38's write path): a patch that copies or renames a file read
/// its source with no deny rule or protected-file check — a dry run's diff showed `.env`, and
/// a rename wrote a denied file's bytes into an allowed one. Now the source is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_patch_may_not_copy_or_rename_a_denied_or_protected_file() {
    let p = gated_project();
    p.write(".env", &format!("API_KEY={SECRET_WORD}\n"));
    p.write("notes.txt", "one\ntwo\n");
    let c = stdio(&p, &["--policy", "auto"], Recorder::default()).await;
    let key = format!("the vault key is {SECRET_WORD}");
    let env = format!("API_KEY={SECRET_WORD}");
    let moves = [
        ("copy", ".env", "ok/e.txt", &env),
        ("copy", "sub/secrets/key.txt", "ok/k.txt", &key),
        ("rename", "sub/secrets/key.txt", "ok/r.txt", &key),
    ];
    for (how, from, to, first) in moves {
        for dry_run in [true, false] {
            let patch = format!(
                "diff --git a/{from} b/{to}\n{how} from {from}\n{how} to {to}\n--- {from}\n+++ {to}\n@@ -1 +1,2 @@\n {first}\n+NEW\n"
            );
            let v = call(
                &c,
                "patch_file",
                json!({"target_file": to, "patch_content": patch, "dry_run": dry_run}),
            )
            .await;
            assert_eq!(v["code"], "DENIED_BY_RULE", "{how} {from}: {v}");
            assert!(!v.to_string().contains(SECRET_WORD), "{how} {from}: {v}");
            assert!(!p.root.join(to).exists(), "{how} {from} wrote {to}");
        }
    }
    // A file no rule names still moves.
    let patch = "diff --git a/notes.txt b/ok/notes.txt\nrename from notes.txt\nrename to ok/notes.txt\n--- notes.txt\n+++ ok/notes.txt\n@@ -1,2 +1,3 @@\n one\n two\n+three\n";
    let v = call(
        &c,
        "patch_file",
        json!({"target_file": "ok/notes.txt", "patch_content": patch}),
    )
    .await;
    assert_eq!(v["status"], "ok", "{v}");
    assert_eq!(p.read("ok/notes.txt"), "one\ntwo\nthree\n");
    c.cancel().await.unwrap();
}

/// Regression (a reader's finding): with the state directory inside the root, an agent's
/// edit could name the gate's own state — the reviewer's token among it — and read it back
/// through the diff. A path inside the state directory is refused like one outside the root.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_state_directory_inside_the_root_is_out_of_an_agents_reach() {
    let p = Project::new();
    let state = p.root.join(".st");
    std::fs::create_dir_all(&state).unwrap();
    std::fs::write(
        state.join("reviewer.json"),
        format!("{{\"token\": \"{SECRET_WORD}\"}}\n"),
    )
    .unwrap();
    let c =
        crate::mcp::stdio_with_state(&p, &state, &["--policy", "auto"], Recorder::default()).await;
    for args in [
        json!({"target_file": ".st/reviewer.json", "search_content": "token", "replace_content": "t", "dry_run": true}),
        json!({"target_file": ".st/planted.json", "insert_line": 1, "insert_content": "{}\n"}),
    ] {
        let v = call(&c, "patch_file", args.clone()).await;
        assert_eq!(v["code"], "INVALID_PATH", "{args}: {v}");
        assert!(!v.to_string().contains(SECRET_WORD), "{v}");
    }
    assert!(!state.join("planted.json").exists());
    c.cancel().await.unwrap();
}
