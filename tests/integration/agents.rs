//! Truth at the gate about its agents (issue 34): a dry-run explorer is never locked out at
//! its cap (the oldest uncommitted dry-run makes room).

use serde_json::json;

use crate::mcp::{Gate, Project, Recorder, call, http};

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
