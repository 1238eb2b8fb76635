//! One account of a decision over the real review API and MCP (docs/DESIGN.md §4): a line the
//! reviewer leaves out is told as left out, and the diff the agent, the review API and
//! `patchgate log` show is what was written; an undo from the API or from `patchgate undo` in
//! another process reaches the agent (its next tool result, and `await_review` of the run)
//! and the review's row.

use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{Value, json};

use crate::mcp::{Gate, Project, Recorder, call, cli, http};

/// Thirty numbered lines, `line 01` to `line 30`.
fn numbered() -> String {
    (1..=30).map(|i| format!("line {i:02}\n")).collect()
}

/// The index among hunk `hunk`'s displayed lines of `line` (`-TEXT` / `+TEXT` / ` TEXT`) in
/// the unified `diff`.
fn line_index(diff: &str, hunk: usize, line: &str) -> usize {
    let body: Vec<&str> = diff
        .split("\n@@ ")
        .nth(hunk + 1)
        .expect("the hunk")
        .lines()
        .skip(1)
        .collect();
    body.iter()
        .position(|l| *l == line)
        .unwrap_or_else(|| panic!("{line:?} not in hunk {hunk}: {diff}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_line_left_out_over_the_api_is_told_the_agent_the_api_and_log_as_written() {
    let p = Project::new();
    let old = numbered();
    p.write("a.txt", &old);
    let gate = Gate::start(&p, &["--policy", "gate"]);
    let agent = http(&gate, Recorder::default()).await;
    let edit = json!({"target_file": "a.txt", "replacements": [
        {"search_content": "line 03", "replace_content": "line three"},
        {"search_content": "line 04\nline 05\n", "replace_content": "line 04\n"},
        {"search_content": "line 25", "replace_content": "line twenty-five"},
    ]});
    // The agent waits on its call while the reviewer leaves out the deletion of `line 05`.
    let reviewer = async {
        let run = gate.wait_pending(1).await.remove(0);
        let review = gate
            .api(Method::GET, &format!("/api/reviews/{run}"), None)
            .await;
        let skip = line_index(review["diff"].as_str().unwrap(), 0, "-line 05");
        let decided = gate
            .api(
                Method::POST,
                &format!("/api/reviews/{run}/decision"),
                Some(json!({"decision": "accept", "skip_lines": [[0, skip]]})),
            )
            .await;
        assert_eq!(decided["status"], "ok", "{decided}");
        run
    };
    let (r, run) = tokio::join!(call(&agent, "patch_file", edit), reviewer);

    let written = old
        .replace("line 03\n", "line three\n")
        .replace("line 25\n", "line twenty-five\n");
    assert_eq!(p.read("a.txt"), written, "the left-out line stays");
    // The agent: the diff written (no `-line 05`), the line left out, and to re-read.
    assert_eq!(r["status"], "ok", "{r}");
    let diff = r["diff"].as_str().unwrap();
    assert!(
        diff.contains("-line 03\n+line three\n line 04\n line 05\n"),
        "{r}"
    );
    assert!(diff.contains("-line 25\n+line twenty-five\n"), "{r}");
    assert!(!diff.contains("-line 05"), "{r}");
    let left_out = json!([{"path": "a.txt", "hunk": 0, "whole": false, "lines": ["-line 05"]}]);
    assert_eq!(r["left_out"], left_out, "{r}");
    let message = r["message"].as_str().unwrap();
    assert!(
        message.starts_with("Applied to a.txt (+2 -2, 2 hunks)."),
        "{message}"
    );
    assert!(message.contains("`-line 05`"), "{message}");
    assert!(
        message.contains("Re-read the file before the next edit."),
        "{message}"
    );
    assert_eq!(r["review"]["edited_by_reviewer"], false, "{r}");
    // The await_review of the run, the review API and the journal say the same.
    let again = call(&agent, "await_review", json!({"run_id": run})).await;
    assert_eq!(again["diff"], r["diff"], "{again}");
    assert_eq!(again["left_out"], left_out, "{again}");
    let review = gate
        .api(Method::GET, &format!("/api/reviews/{run}"), None)
        .await;
    assert_eq!(
        (review["added"].as_u64(), review["removed"].as_u64()),
        (Some(2), Some(2))
    );
    assert_eq!(review["diff"], r["diff"], "{review}");
    assert_eq!(review["left_out"], left_out, "{review}");
    let log = cli(&p, &["log"]);
    let log = String::from_utf8_lossy(&log.stdout);
    assert!(log.contains(" a.txt +2 -2"), "{log}");
    assert!(
        log.contains("\n      left out: part of hunk 1 of a.txt\n        -line 05"),
        "{log}"
    );
    let json_log = cli(&p, &["log", "--json"]);
    let entry: Value = serde_json::from_slice(&json_log.stdout).unwrap();
    assert_eq!(entry["diff"], r["diff"], "{entry}");
    assert_eq!(entry["left_out"], left_out, "{entry}");
    // One run asked for by its id: its line, what was left out, and the diff written.
    let run_id = r["run_id"].as_str().unwrap();
    let one = cli(&p, &["log", run_id]);
    let one = String::from_utf8_lossy(&one.stdout);
    let diff = r["diff"].as_str().unwrap().trim_end();
    assert!(one.contains("left out: part of hunk 1 of a.txt"), "{one}");
    assert!(one.trim_end().ends_with(diff), "{one}");
    assert!(!one.contains("-line 05\n+"), "{one}");
    let none = cli(&p, &["log", "nosuchrun"]);
    assert!(
        String::from_utf8_lossy(&none.stdout).contains("no decision recorded for run nosuchrun")
    );
}

/// A dry-run of `b.txt` by `agent`: a call that answers at once, to read its notices.
async fn next_result(agent: &crate::mcp::Client, n: u32) -> Value {
    let r = call(
        agent,
        "patch_file",
        json!({"target_file": "b.txt", "search_content": "b", "replace_content": format!("b{n}"), "dry_run": true}),
    )
    .await;
    assert_eq!(r["status"], "ok", "{r}");
    r
}

/// An accepted edit of `a.txt` (`from` → `to`) by `agent`: its run id.
async fn accepted(gate: &Gate, agent: &crate::mcp::Client, from: &str, to: &str) -> String {
    let edit = json!({"target_file": "a.txt", "search_content": from, "replace_content": to});
    let reviewer = async {
        let run = gate.wait_pending(1).await.remove(0);
        gate.api(
            Method::POST,
            &format!("/api/reviews/{run}/decision"),
            Some(json!({"decision": "accept"})),
        )
        .await;
        run
    };
    let (r, run) = tokio::join!(call(agent, "patch_file", edit), reviewer);
    assert_eq!(r["status"], "ok", "{r}");
    run
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_undo_from_the_api_or_another_process_reaches_the_agent_and_the_row() {
    let p = Project::new();
    p.write("a.txt", "one\n");
    p.write("b.txt", "b\n");
    let gate = Gate::start(&p, &["--policy", "gate"]);
    let agent = http(&gate, Recorder::default()).await;

    // Undone over the review API: the agent's next result says so, once.
    let run = accepted(&gate, &agent, "one", "two").await;
    let undone = gate
        .api(Method::POST, "/api/undo", Some(json!({"run_id": run})))
        .await;
    assert_eq!(undone["run_id"], run.as_str());
    assert_eq!(p.read("a.txt"), "one\n");
    let told = format!("run {run} was undone by the reviewer: re-read a.txt");
    let r = next_result(&agent, 1).await;
    let notices = r["notices"].as_array().expect("notices");
    assert!(
        notices
            .iter()
            .any(|n| n.as_str().unwrap().starts_with(&told)),
        "{r}"
    );
    assert!(r["message"].as_str().unwrap().contains(&told), "{r}");
    let r = next_result(&agent, 2).await;
    assert!(r.get("notices").is_none(), "told once: {r}");
    // The run's await_review says so whenever it is asked, and so does its review.
    let r = call(&agent, "await_review", json!({"run_id": run})).await;
    assert!(r["message"].as_str().unwrap().contains(&told), "{r}");
    let review = gate
        .api(Method::GET, &format!("/api/reviews/{run}"), None)
        .await;
    assert_eq!(review["undone"], true, "{review}");

    // Undone by `patchgate undo RUN` in another process: the gate notices the journal's
    // entry by itself.
    let run = accepted(&gate, &agent, "one", "three").await;
    let out = cli(&p, &["undo", &run]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(p.read("a.txt"), "one\n");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let review = gate
            .api(Method::GET, &format!("/api/reviews/{run}"), None)
            .await;
        if review["undone"] == true {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the row never followed: {review}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let told = format!("run {run} was undone by the reviewer: re-read a.txt");
    let r = next_result(&agent, 3).await;
    assert!(r["message"].as_str().unwrap().contains(&told), "{r}");
    let r = call(&agent, "await_review", json!({"run_id": run})).await;
    assert!(r["message"].as_str().unwrap().contains(&told), "{r}");
}
