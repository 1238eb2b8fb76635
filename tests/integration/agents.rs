//! Truth at the gate about its agents (issue 34): an agent that dies while its edit waits has
//! its review withdrawn at once (an accept writes nothing), the gate counts the agents
//! connected now, and a dry-run explorer is never locked out at its cap (the oldest
//! uncommitted dry-run makes room).

use std::process::Stdio;
use std::time::{Duration, Instant};

use reqwest::Method;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

use crate::mcp::{Client, Gate, Project, Recorder, call, http};

/// How soon a dead agent's review must be withdrawn.
const WITHDRAWN_WITHIN: Duration = Duration::from_secs(2);

/// A real MCP client of a `serve --stdio` child forwarding to the live gate of `p`, and the
/// child's pid.
async fn stdio_agent(p: &Project) -> (Client, u32) {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_patchgate"));
    cmd.args(["serve", "--stdio", "--root"])
        .arg(&p.root)
        .env("PATCHGATE_STATE_DIR", &p.state)
        .env("PATCHGATE_LOG", p.state.join("patchgate.log"))
        .env("PATCHGATE_CONFIG", p.state.join("no-user-config.toml"));
    let (transport, _) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn serve --stdio");
    let pid = transport.id().expect("the child's pid");
    let c = Recorder::default()
        .serve(transport)
        .await
        .expect("initialize over stdio");
    (c, pid)
}

/// The gate's count of connected agents (`/api/info`, what the status bar shows).
async fn clients(gate: &Gate) -> u64 {
    gate.api(Method::GET, "/api/info", None).await["clients"]
        .as_u64()
        .expect("clients")
}

/// Wait up to `within` until the gate counts `n` agents.
async fn expect_clients(gate: &Gate, n: u64, within: Duration) {
    let deadline = Instant::now() + within;
    loop {
        let now = clients(gate).await;
        if now == n {
            return;
        }
        assert!(Instant::now() < deadline, "{now} clients, want {n}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn review(gate: &Gate, run: &str) -> Value {
    gate.api(Method::GET, &format!("/api/reviews/{run}"), None)
        .await
}

/// A stdio agent killed with SIGKILL while its edit waits for a person: the review is
/// withdrawn within two seconds, its row says so, an accept writes nothing, and the gate
/// counts the agent while it lives and not after.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_stdio_agents_review_is_withdrawn_and_an_accept_writes_nothing() {
    let p = Project::new();
    p.write("a.txt", "one\n");
    let gate = Gate::start(&p, &["--policy", "gate"]);
    assert_eq!(clients(&gate).await, 0);
    let (c, pid) = stdio_agent(&p).await;
    // Counted from its start, before any call.
    expect_clients(&gate, 1, Duration::from_secs(10)).await;
    // The call waits for a person; it ends with its agent (its transport closes).
    let waiting = tokio::spawn(async move {
        let args =
            json!({"target_file": "a.txt", "search_content": "one", "replace_content": "two"});
        let _ = c
            .call_tool(
                CallToolRequestParams::new("patch_file")
                    .with_arguments(args.as_object().cloned().unwrap_or_default()),
            )
            .await;
    });
    let run = gate.wait_pending(1).await.remove(0);
    let r = review(&gate, &run).await;
    assert_eq!(r["agent"]["connected"], true, "{r}");
    assert_eq!(clients(&gate).await, 1);

    let child = rustix::process::Pid::from_raw(pid as i32).expect("a pid");
    rustix::process::kill_process(child, rustix::process::Signal::KILL).expect("SIGKILL");
    let killed = Instant::now();
    let r = loop {
        let r = review(&gate, &run).await;
        if r["state"] != "pending" {
            break r;
        }
        assert!(
            killed.elapsed() < WITHDRAWN_WITHIN,
            "still pending {:?} after the kill",
            killed.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(r["state"], "expired", "{r}");
    assert_eq!(r["agent"]["withdrawn"], "agent gone", "{r}");
    assert_eq!(r["agent"]["connected"], false, "{r}");
    let (status, body) = gate
        .api_status(
            Method::POST,
            &format!("/api/reviews/{run}/decision"),
            Some(json!({"decision": "accept"})),
        )
        .await;
    assert_eq!(status, reqwest::StatusCode::CONFLICT, "{body}");
    assert_eq!(p.read("a.txt"), "one\n", "nothing written");
    expect_clients(&gate, 0, WITHDRAWN_WITHIN).await;
    waiting.abort();
}

/// The count follows the agents connected now: an HTTP session counts while it is open, a
/// stdio agent while it lives, and none after every agent has gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_count_is_the_agents_connected_now() {
    let p = Project::new();
    p.write("a.txt", "one\n");
    let gate = Gate::start(&p, &["--policy", "dry-run"]);
    let h = http(&gate, Recorder::default()).await;
    expect_clients(&gate, 1, Duration::from_secs(10)).await;
    let (s, _) = stdio_agent(&p).await;
    expect_clients(&gate, 2, Duration::from_secs(10)).await;
    let v = call(
        &s,
        "patch_file",
        json!({"target_file": "a.txt", "search_content": "one", "replace_content": "two", "dry_run": true}),
    )
    .await;
    assert_eq!(v["status"], "ok", "{v}");
    assert_eq!(clients(&gate).await, 2);
    // The stdio agent's client goes away (its stdin closes): the forwarder exits.
    s.cancel().await.unwrap();
    expect_clients(&gate, 1, Duration::from_secs(10)).await;
    h.cancel().await.unwrap();
    expect_clients(&gate, 0, Duration::from_secs(10)).await;
}

/// Dry-runs one client sends in a row: three times the per-client cap of open proposals.
const DRY_RUNS: usize = 200;

/// An agent that explores with dry-runs is never refused: at the cap its oldest uncommitted
/// dry-run makes room, and committing that one later answers that it expired.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_dry_runs_of_one_client_are_all_answered() {
    let p = Project::new();
    p.write("a.txt", "one\n");
    let gate = Gate::start(&p, &["--policy", "dry-run"]);
    let c = http(&gate, Recorder::default()).await;
    let mut runs = Vec::new();
    for i in 0..DRY_RUNS {
        let v = call(
            &c,
            "patch_file",
            json!({"target_file": "a.txt", "search_content": "one",
                   "replace_content": format!("v{i}"), "dry_run": true}),
        )
        .await;
        assert_eq!(v["status"], "ok", "dry-run {i}: {v}");
        runs.push(v["run_id"].as_str().unwrap().to_string());
    }
    let first = call(&c, "apply_last_dry_run", json!({"run_id": runs[0]})).await;
    assert_eq!(first["code"], "RUN_EXPIRED", "{first}");
    let last = call(
        &c,
        "apply_last_dry_run",
        json!({"run_id": runs[DRY_RUNS - 1]}),
    )
    .await;
    assert_eq!(last["status"], "ok", "{last}");
    assert_eq!(p.read("a.txt"), format!("v{}\n", DRY_RUNS - 1));
    c.cancel().await.unwrap();
}

/// In the TUI: the status bar counts the stdio agent while it lives; killed while its edit
/// waits, its row says the review was withdrawn and that the agent is gone, the count goes
/// back to 0, and `a` on the row writes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tui_shows_a_dead_agents_review_withdrawn_and_counts_the_agents_connected() {
    let p = Project::new();
    p.write("a.txt", "one\n");
    let (tmux, _, _) = crate::tui::gate_in_tmux(&p);
    tmux.wait_for("no agent yet", 10, |s| s.contains(" 0 clients "));
    let (c, pid) = stdio_agent(&p).await;
    tmux.wait_for("the stdio agent counted", 10, |s| s.contains(" 1 client "));
    let waiting = tokio::spawn(async move {
        let args =
            json!({"target_file": "a.txt", "search_content": "one", "replace_content": "two"});
        let _ = c
            .call_tool(
                CallToolRequestParams::new("patch_file")
                    .with_arguments(args.as_object().cloned().unwrap_or_default()),
            )
            .await;
    });
    tmux.wait_for("the pending review", 10, |s| {
        s.contains("patch_file") && s.contains("1 pending")
    });
    let child = rustix::process::Pid::from_raw(pid as i32).expect("a pid");
    rustix::process::kill_process(child, rustix::process::Signal::KILL).expect("SIGKILL");
    let screen = tmux.wait_for("the review withdrawn", 5, |s| {
        s.contains("withdrawn: agent gone") && s.contains("0 pending")
    });
    assert!(screen.contains("⊘ patchgate-i"), "{screen}");
    // The status bar's count follows within its refresh (every 3 s).
    tmux.wait_for("no agent any more", 5, |s| s.contains(" 0 clients "));
    tmux.keys(&["a"]);
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(p.read("a.txt"), "one\n", "nothing written");
    waiting.abort();
}

/// The stdio agent's own client goes away (the agent process ends: the server's stdin
/// closes) while its edit waits: the review is withdrawn at once, nothing written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stdio_agent_whose_client_goes_away_withdraws_its_review() {
    let p = Project::new();
    p.write("a.txt", "one\n");
    let gate = Gate::start(&p, &["--policy", "gate"]);
    let (c, _) = stdio_agent(&p).await;
    let peer = c.peer().clone();
    let waiting = tokio::spawn(async move {
        let args =
            json!({"target_file": "a.txt", "search_content": "one", "replace_content": "two"});
        let _ = peer
            .call_tool(
                CallToolRequestParams::new("patch_file")
                    .with_arguments(args.as_object().cloned().unwrap_or_default()),
            )
            .await;
    });
    let run = gate.wait_pending(1).await.remove(0);
    c.cancel().await.unwrap();
    let gone = Instant::now();
    while review(&gate, &run).await["state"] == "pending" {
        assert!(gone.elapsed() < WITHDRAWN_WITHIN, "still pending");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let r = review(&gate, &run).await;
    assert_eq!(r["state"], "expired", "{r}");
    assert!(r["agent"]["withdrawn"].is_string(), "{r}");
    expect_clients(&gate, 0, WITHDRAWN_WITHIN).await;
    assert_eq!(p.read("a.txt"), "one\n");
    waiting.abort();
}

/// A raw MCP-over-HTTP agent: its session and the headers every request needs.
async fn mcp_post(gate: &Gate, session: Option<&str>, body: Value) -> reqwest::Response {
    let mut req = crate::mcp::http_client()
        .post(&gate.mcp_url)
        .bearer_auth(&gate.token)
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2025-03-26")
        .json(&body);
    if let Some(s) = session {
        req = req.header("mcp-session-id", s);
    }
    req.send().await.expect("POST /mcp")
}

/// An HTTP agent whose connection closes while its call waits for a person (it was killed,
/// or dropped the call without an MCP cancellation): the review is withdrawn at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_agent_that_hangs_up_on_its_call_withdraws_its_review() {
    let p = Project::new();
    p.write("a.txt", "one\n");
    let gate = Gate::start(&p, &["--policy", "gate"]);
    let init = mcp_post(
        &gate,
        None,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-03-26", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}}),
    )
    .await;
    assert_eq!(init.status(), 200);
    let session = init.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_string();
    let _ = init.bytes().await;
    let ready = mcp_post(
        &gate,
        Some(&session),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    assert!(ready.status().is_success(), "{}", ready.status());
    let call = mcp_post(
        &gate,
        Some(&session),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "patch_file",
            "arguments": {"target_file": "a.txt", "search_content": "one", "replace_content": "two"}}}),
    )
    .await;
    assert_eq!(call.status(), 200);
    let run = gate.wait_pending(1).await.remove(0);
    drop(call);
    let gone = Instant::now();
    while review(&gate, &run).await["state"] == "pending" {
        assert!(gone.elapsed() < WITHDRAWN_WITHIN, "still pending");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let r = review(&gate, &run).await;
    assert_eq!(r["state"], "expired", "{r}");
    assert!(r["agent"]["withdrawn"].is_string(), "{r}");
    assert_eq!(p.read("a.txt"), "one\n");
}
