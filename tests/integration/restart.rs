//! Open reviews survive a restart (docs/DESIGN.md §4, §7): a gate SIGKILLed with reviews
//! pending (or dry-runs within their TTL) comes back with them from the state directory; a
//! reviewer decides them on the new gate and another agent's `await_review` with the run id
//! hears the decision. Stored reviews are hostile input: links, other users' files, files
//! others can write, oversized ones and paths out of the root are ignored; a file changed
//! while no gate ran is rebased (or fails) at the decision, never written blindly.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use crate::mcp::{Client, Gate, Project, Recorder, call, http, stdio};

/// An edit of `file` replacing `from` by `to`, sent by a fresh agent that stays connected
/// (its connection is what the gate's death takes away): the agent and its review's run id.
async fn edit(gate: &Gate, file: &str, from: &str, to: &str) -> (Client, String) {
    let c = http(gate, Recorder::default()).await;
    let v = call(
        &c,
        "patch_file",
        json!({"target_file": file, "search_content": from, "replace_content": to}),
    )
    .await;
    assert_eq!(v["status"], "pending", "{v}");
    let run = v["run_id"].as_str().expect("a run id").to_string();
    (c, run)
}

/// The one directory of stored reviews in the state directory.
fn store_dir(p: &Project) -> PathBuf {
    let dirs: Vec<PathBuf> = std::fs::read_dir(p.state.join("journal"))
        .expect("the journal directory")
        .map(|e| e.unwrap().path())
        .filter(|d| d.extension().is_some_and(|e| e == "pending"))
        .collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    dirs.into_iter().next().unwrap()
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

/// The acceptance of issue 39 item 3: killed with two reviews pending, the next gate lists
/// them pending (their agent not connected); the reviewer accepts one before an agent asks
/// for it and rejects the other while an agent waits on it, and each agent hears its
/// decision; decided, they are gone from the store (a third gate has none).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_review_pending_when_the_gate_is_killed_is_decided_on_the_next_one() {
    let p = Project::new();
    p.write("src/x.rs", "fn x() -> u32 {\n    1\n}\n");
    p.write("src/y.rs", "fn y() -> u32 {\n    1\n}\n");
    let gate = Gate::start(&p, &["--policy", "gate", "--review-timeout", "1"]);
    let (_first, run_x) = edit(&gate, "src/x.rs", "    1", "    2").await;
    let (_second, run_y) = edit(&gate, "src/y.rs", "    1", "    3").await;
    drop(gate); // SIGKILL

    let gate = Gate::start(&p, &["--policy", "gate"]);
    assert_eq!(
        sorted(gate.pending().await),
        sorted(vec![run_x.clone(), run_y.clone()])
    );
    let review = gate
        .api(reqwest::Method::GET, &format!("/api/reviews/{run_x}"), None)
        .await;
    assert_eq!(review["paths"], json!(["src/x.rs"]));
    assert_eq!(review["client"], "patchgate-it 1.0");
    assert_eq!(review["agent"]["connected"], false, "{review}");
    assert!(
        review["diff"].as_str().unwrap().contains("+    2"),
        "{review}"
    );

    // Accepted first, then asked for by another agent.
    let decided = gate.decide(&run_x, json!({"decision": "accept"})).await;
    assert_eq!(decided["status"], "ok", "{decided}");
    assert_eq!(p.read("src/x.rs"), "fn x() -> u32 {\n    2\n}\n");
    let agent = http(&gate, Recorder::default()).await;
    let v = call(&agent, "await_review", json!({"run_id": run_x})).await;
    assert_eq!(v["status"], "ok", "{v}");
    assert_eq!(v["review"]["decision"], "accept", "{v}");

    // Waited on by another agent, then rejected.
    let wait = call(
        &agent,
        "await_review",
        json!({"run_id": run_y, "timeout_s": 60}),
    );
    let reject = async {
        tokio::time::sleep(Duration::from_millis(500)).await;
        gate.decide(&run_y, json!({"decision": "reject", "note": "keep y at 1"}))
            .await
    };
    let (v, _) = tokio::join!(wait, reject);
    assert_eq!(v["status"], "rejected", "{v}");
    assert_eq!(v["review"]["note"], "keep y at 1", "{v}");
    assert_eq!(p.read("src/y.rs"), "fn y() -> u32 {\n    1\n}\n");
    agent.cancel().await.unwrap();
    drop(gate);

    let gate = Gate::start(&p, &["--policy", "gate"]);
    assert!(gate.pending().await.is_empty());
    assert_eq!(std::fs::read_dir(store_dir(&p)).unwrap().count(), 0);
}

/// An agent over stdio whose gate is killed while it waits (after its first progress report,
/// ~10 s): its call ends saying the review
/// is kept and how to hear of it (not "send the edit again"); its stdio server finds the
/// restarted gate, and its `await_review` with the run id gets the reviewer's decision.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_over_stdio_hears_the_decision_from_the_restarted_gate() {
    let p = Project::new();
    p.write("src/x.rs", "fn x() -> u32 {\n    1\n}\n");
    let gate = Gate::start(&p, &["--policy", "gate"]);
    let rec = Recorder::default();
    let agent = stdio(&p, &[], rec.clone()).await;
    let waiting = call(
        &agent,
        "patch_file",
        json!({"target_file": "src/x.rs", "search_content": "    1", "replace_content": "    2"}),
    );
    let kill = async move {
        // Its first progress report: the gate answered `pending`, the agent waits on it.
        while rec.progress.lock().unwrap().is_empty() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        drop(gate); // SIGKILL
    };
    let (lost, ()) = tokio::join!(waiting, kill);
    assert_eq!(lost["code"], "REVIEWER_GONE", "{lost}");
    let run = lost["run_id"]
        .as_str()
        .unwrap_or_else(|| panic!("{lost}"))
        .to_string();
    let message = lost["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("call await_review with run_id \"{run}\"")),
        "{message}"
    );
    assert!(!message.contains("— send the edit again"), "{message}");

    let gate = Gate::start(&p, &["--policy", "gate"]);
    assert_eq!(gate.pending().await, vec![run.clone()]);
    let wait = call(
        &agent,
        "await_review",
        json!({"run_id": run, "timeout_s": 60}),
    );
    let accept = async {
        tokio::time::sleep(Duration::from_millis(500)).await;
        gate.decide(
            &run,
            json!({"decision": "accept", "note": "after the restart"}),
        )
        .await
    };
    let (v, decided) = tokio::join!(wait, accept);
    assert_eq!(decided["status"], "ok", "{decided}");
    assert_eq!(v["status"], "ok", "{v}");
    assert_eq!(v["review"]["note"], "after the restart", "{v}");
    assert_eq!(p.read("src/x.rs"), "fn x() -> u32 {\n    2\n}\n");
    agent.cancel().await.unwrap();
}

/// A gate stopped on purpose (Ctrl-C) answers its waiting agents `REVIEWER_GONE`: those
/// reviews are closed, and the next gate does not bring them back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_review_its_agent_was_told_is_gone_does_not_come_back() {
    let p = Project::new();
    p.write("x.txt", "one\n");
    let mut gate = Gate::start(&p, &["--policy", "gate", "--review-timeout", "1"]);
    let (_agent, run) = edit(&gate, "x.txt", "one", "two").await;
    assert_eq!(std::fs::read_dir(store_dir(&p)).unwrap().count(), 1);
    gate.interrupt();
    drop(gate);
    assert_eq!(
        std::fs::read_dir(store_dir(&p)).unwrap().count(),
        0,
        "run {run}"
    );
    let gate = Gate::start(&p, &["--policy", "gate"]);
    assert!(gate.pending().await.is_empty());
}

/// A dry-run kept within its TTL is committed by its run id on the next gate; one whose TTL
/// ran out while no gate ran is not found there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dry_run_survives_a_restart_within_its_ttl() {
    let p = Project::new();
    p.write("a.txt", "alpha\n");
    p.write("b.txt", "beta\n");
    let gate = Gate::start(&p, &["--policy", "auto"]);
    let c = http(&gate, Recorder::default()).await;
    let dry = |file: &str, from: &str, to: &str| {
        call(
            &c,
            "patch_file",
            json!({"target_file": file, "search_content": from, "replace_content": to, "dry_run": true}),
        )
    };
    let a = dry("a.txt", "alpha", "ALPHA").await;
    assert_eq!(a["dry_run"], true, "{a}");
    let b = dry("b.txt", "beta", "BETA").await;
    // A dry-run's agent does not wait for the disk: wait here until both are kept.
    let kept = |v: &Value| {
        let run = v["run_id"].as_str().unwrap().to_string();
        move |p: &Project| {
            std::fs::read_dir(p.state.join("journal"))
                .into_iter()
                .flatten()
                .flatten()
                .any(|d| d.path().join(format!("{run}.json")).exists())
        }
    };
    let (a_kept, b_kept) = (kept(&a), kept(&b));
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !(a_kept(&p) && b_kept(&p)) {
        assert!(
            std::time::Instant::now() < deadline,
            "the dry-runs were not stored"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    drop(gate);
    // b's TTL ran out while the gate was down.
    let b_file = store_dir(&p).join(format!("{}.json", b["run_id"].as_str().unwrap()));
    let mut stored: Value = serde_json::from_slice(&std::fs::read(&b_file).unwrap()).unwrap();
    stored["expires_at"] = json!(1);
    std::fs::write(&b_file, serde_json::to_vec(&stored).unwrap()).unwrap();

    let gate = Gate::start(&p, &["--policy", "auto"]);
    let agent = http(&gate, Recorder::default()).await;
    let v = call(&agent, "apply_last_dry_run", json!({"run_id": a["run_id"]})).await;
    assert_eq!(v["status"], "ok", "{v}");
    assert_eq!(p.read("a.txt"), "ALPHA\n");
    let v = call(&agent, "apply_last_dry_run", json!({"run_id": b["run_id"]})).await;
    assert_eq!(v["code"], "RUN_NOT_FOUND", "{v}");
    assert_eq!(p.read("b.txt"), "beta\n");
    agent.cancel().await.unwrap();
}

/// A copy of the stored review `genuine` as run `run_id` in `dir`, changed by `change`.
fn plant(dir: &Path, genuine: &Value, run_id: &str, change: impl FnOnce(&mut Value)) -> PathBuf {
    let mut v = genuine.clone();
    v["run_id"] = json!(run_id);
    change(&mut v);
    let path = dir.join(format!("{run_id}.json"));
    std::fs::write(&path, serde_json::to_vec(&v).unwrap()).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    path
}

/// Stored reviews are believed only as the journal's state is: a link, a file others can
/// write, another user's, one past the size bound, a path out of the root (as `..` or
/// absolute), content past the file cap: each ignored with a warning in the log, and
/// nothing outside the root is written; the genuine review alone comes back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_stored_reviews_are_ignored() {
    let p = Project::new();
    p.write(".patchgate.toml", "max_file_bytes = 4096\n");
    p.write("x.txt", "one\n");
    let gate = Gate::start(&p, &["--policy", "gate", "--review-timeout", "1"]);
    let (_agent, run) = edit(&gate, "x.txt", "one", "two").await;
    drop(gate);
    let dir = store_dir(&p);
    let genuine: Value =
        serde_json::from_slice(&std::fs::read(dir.join(format!("{run}.json"))).unwrap()).unwrap();

    // A link to a review elsewhere.
    let elsewhere = plant(&p.state, &genuine, "aaaaaaaaaaaa", |_| {});
    std::os::unix::fs::symlink(&elsewhere, dir.join("aaaaaaaaaaaa.json")).unwrap();
    // Writable by everyone, by its group.
    for (id, mode) in [("bbbbbbbbbbbb", 0o666), ("cccccccccccc", 0o620)] {
        let f = plant(&dir, &genuine, id, |_| {});
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    // Another user's (the tests may run as root: then it can be given away).
    let as_root = rustix::process::geteuid().is_root();
    if as_root {
        let f = plant(&dir, &genuine, "dddddddddddd", |_| {});
        std::os::unix::fs::chown(&f, Some(4242), Some(4242)).unwrap();
    }
    // Past the store's size bound (sparse: nothing is written).
    let big = plant(&dir, &genuine, "eeeeeeeeeeee", |_| {});
    std::fs::File::options()
        .write(true)
        .open(&big)
        .unwrap()
        .set_len((256 << 20) + 1)
        .unwrap();
    // Paths out of the root, and content past the file cap.
    let outside = p.root.parent().unwrap().join("outside.txt");
    plant(&dir, &genuine, "ffffffffffff", |v| {
        v["files"][0]["path"] = json!("../outside.txt");
        v["files"][0]["before"] = Value::Null;
    });
    plant(&dir, &genuine, "gggggggggggg", |v| {
        v["files"][0]["path"] = json!(outside.display().to_string());
        v["files"][0]["before"] = Value::Null;
    });
    plant(&dir, &genuine, "hhhhhhhhhhhh", |v| {
        v["files"][0]["new"] = json!("x".repeat(5000));
    });
    // Garbage.
    std::fs::write(
        dir.join("iiiiiiiiiiii.json"),
        b"{\"format\": 1, \"run_id\": [",
    )
    .unwrap();

    let gate = Gate::start(&p, &["--policy", "gate"]);
    assert_eq!(gate.pending().await, vec![run.clone()]);
    let list = gate.api(reqwest::Method::GET, "/api/reviews", None).await;
    assert_eq!(list.as_array().unwrap().len(), 1, "{list}");
    let decided = gate.decide(&run, json!({"decision": "accept"})).await;
    assert_eq!(decided["status"], "ok", "{decided}");
    assert_eq!(p.read("x.txt"), "two\n");
    assert!(!outside.exists());
    assert!(elsewhere.exists(), "a link's target is left alone");

    let log = std::fs::read_to_string(p.state.join("patchgate.log")).unwrap();
    let warned = |what: &str| {
        assert!(
            log.lines().any(|l| l.contains("WARN") && l.contains(what)),
            "no warning with `{what}` in the log:\n{log}"
        );
    };
    warned("aaaaaaaaaaaa.json is a symbolic link");
    warned("bbbbbbbbbbbb.json can be written by other users (mode 666)");
    warned("cccccccccccc.json can be written by other users (mode 620)");
    if as_root {
        warned("dddddddddddd.json belongs to user 4242");
    }
    warned("eeeeeeeeeeee.json is 268435457 bytes");
    warned("run ffffffffffff not restored: `../outside.txt`");
    warned("run gggggggggggg not restored");
    warned("run hhhhhhhhhhhh not restored: `x.txt` is over the 4096-byte file cap");
    warned("run iiiiiiiiiiii not restored: not a stored review");
}

/// A review whose file changed while no gate ran says so, and is never written blindly: the
/// first acceptance is refused `FILE_CHANGED` and the review rebased on the file as it is
/// (the hand edit kept, pending again), the next one writes both; one whose lines the hand
/// edit touched fails, and the file keeps the hand edit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_review_whose_file_changed_while_the_gate_was_down_is_rebased_not_written_blindly() {
    let p = Project::new();
    let lines: String = (1..=30).map(|i| format!("line {i}\n")).collect();
    p.write("f.txt", &lines);
    p.write("g.txt", &lines);
    let gate = Gate::start(&p, &["--policy", "gate", "--review-timeout", "1"]);
    let (_first, run_f) = edit(&gate, "f.txt", "line 5\n", "line five\n").await;
    let (_second, run_g) = edit(&gate, "g.txt", "line 5\n", "line five\n").await;
    drop(gate);
    let hand_f = lines.replace("line 25\n", "line 25 by hand\n");
    let hand_g = lines.replace("line 5\n", "line 5 by hand\n");
    p.write("f.txt", &hand_f);
    p.write("g.txt", &hand_g);

    let gate = Gate::start(&p, &["--policy", "gate"]);
    assert_eq!(
        sorted(gate.pending().await),
        sorted(vec![run_f.clone(), run_g.clone()])
    );
    let review = gate
        .api(reqwest::Method::GET, &format!("/api/reviews/{run_f}"), None)
        .await;
    assert!(
        review["warnings"]
            .to_string()
            .contains("changed on disk while the gate was down"),
        "{review}"
    );
    let accept = json!({"decision": "accept"});
    let path = format!("/api/reviews/{run_f}/decision");
    let (status, v) = gate
        .api_status(reqwest::Method::POST, &path, Some(accept.clone()))
        .await;
    assert_eq!(status, reqwest::StatusCode::CONFLICT, "{v}");
    assert_eq!(v["code"], "FILE_CHANGED", "{v}");
    assert_eq!(p.read("f.txt"), hand_f, "nothing written blindly");
    assert!(
        gate.pending().await.contains(&run_f),
        "pending again, rebased"
    );
    let v = gate.decide(&run_f, accept.clone()).await;
    assert_eq!(v["status"], "ok", "{v}");
    assert_eq!(p.read("f.txt"), hand_f.replace("line 5\n", "line five\n"));

    let path = format!("/api/reviews/{run_g}/decision");
    let (status, v) = gate
        .api_status(reqwest::Method::POST, &path, Some(accept))
        .await;
    assert_eq!(status, reqwest::StatusCode::CONFLICT, "{v}");
    assert_eq!(v["code"], "FILE_CHANGED", "{v}");
    assert_eq!(p.read("g.txt"), hand_g);
    let review = gate
        .api(reqwest::Method::GET, &format!("/api/reviews/{run_g}"), None)
        .await;
    assert_eq!(review["state"], "failed", "{review}");
}

/// The gate's TUI over `p` in a terminal of its own under `dir`, listening.
fn tui_gate(p: &Project, dir: &Path) -> crate::tmux::Tmux {
    std::fs::create_dir_all(dir).unwrap();
    let state = p.state.display().to_string();
    let log = p.state.join("patchgate.log").display().to_string();
    let root = p.root.display().to_string();
    crate::tmux::Tmux::start(
        dir,
        140,
        40,
        &[
            ("PATCHGATE_STATE_DIR", &state),
            ("PATCHGATE_LOG", &log),
            ("PATCHGATE_CONFIG", "/nonexistent/patchgate.toml"),
        ],
        Path::new(env!("CARGO_BIN_EXE_patchgate")),
        &["--listen", "127.0.0.1:0", "--root", &root],
    )
}

/// The discovery entry of the gate with process id other than `not`, once written.
fn discovery(p: &Project, not: Option<u64>) -> Value {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(bytes) = std::fs::read(p.state.join("reviewer.json"))
            && let Ok(v) = serde_json::from_slice::<Value>(&bytes)
            && v["pid"].as_u64() != not
        {
            return v;
        }
        assert!(std::time::Instant::now() < deadline, "no discovery entry");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The same in the TUI: the gate with its TUI is killed with a review pending; started
/// again, its queue shows the review (its agent gone: `⊘`) and `a` writes it.
#[test]
fn a_review_pending_when_the_tui_gate_is_killed_is_accepted_in_the_next_ones_tui() {
    let p = Project::new();
    p.write("src/x.rs", "fn x() -> u32 {\n    1\n}\n");
    let tmux = tui_gate(&p, &p.state.join("t1"));
    let first = discovery(&p, None);
    let v = crate::tui::call_tool(
        first["mcp_url"].as_str().unwrap(),
        first["token"].as_str().unwrap(),
        "patch_file",
        json!({"target_file": "src/x.rs", "search_content": "    1", "replace_content": "    2"}),
    );
    assert_eq!(v["status"], "pending", "{v}");
    tmux.wait_for("the review", 30, |s| {
        s.contains("patch_file") && s.contains("src/x.rs +1 -1")
    });
    let pid = first["pid"].as_u64().unwrap();
    let pid = rustix::process::Pid::from_raw(i32::try_from(pid).unwrap()).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::KILL).unwrap();
    tmux.wait_for("the gate to die", 10, |_| tmux.exited());
    drop(tmux);

    let tmux = tui_gate(&p, &p.state.join("t2"));
    discovery(&p, first["pid"].as_u64());
    let screen = tmux.wait_for("the restored review", 30, |s| {
        s.contains("patch_file") && s.contains("src/x.rs +1 -1")
    });
    assert!(screen.contains("⊘ script"), "{screen}");
    assert_eq!(p.read("src/x.rs"), "fn x() -> u32 {\n    1\n}\n");
    tmux.keys(&["a"]);
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while p.read("src/x.rs") != "fn x() -> u32 {\n    2\n}\n" {
        assert!(
            std::time::Instant::now() < deadline,
            "not written; the screen:\n{}",
            tmux.screen()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
