//! The user's policy hook (issue 39 item 4) through the real gate: its three answers (auto
//! writes at once, gate waits for a person, deny tells the agent why) and its three failures
//! (a hang past its time, a crash, garbage), each leaving the edit pending within the time
//! with a warning naming the failure; a repository's `[hook]` is never run.

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::mcp::{Gate, Project};
use crate::tui::call_tool;

/// The hook's time in these tests.
const TIMEOUT_MS: u64 = 700;

/// An executable shell script `name` in the state directory (outside the root).
fn script(p: &Project, name: &str, body: &str) -> PathBuf {
    let path = p.state.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// The user's config (the file the tests' gates read as theirs) running `hook`.
fn user_hook(p: &Project, hook: &std::path::Path) {
    std::fs::write(
        p.state.join("no-user-config.toml"),
        format!(
            "[hook]\ncommand = [{:?}]\ntimeout_ms = {TIMEOUT_MS}\n",
            hook.display().to_string()
        ),
    )
    .unwrap();
}

/// `patch_file` replacing `alpha` by `beta` in `a.txt`: the envelope and how long it took.
fn edit(gate: &Gate) -> (Value, Duration) {
    let started = Instant::now();
    let answer = call_tool(
        &gate.mcp_url,
        &gate.token,
        "patch_file",
        json!({"target_file": "a.txt", "search_content": "alpha", "replace_content": "beta"}),
    );
    (answer, started.elapsed())
}

/// A gate over a project holding `a.txt`, with `hook` (a script body) in the user's config.
fn gate_with_hook(body: &str, policy: &str) -> (Project, Gate) {
    let p = Project::new();
    p.write("a.txt", "alpha\n");
    let hook = script(&p, "hook.sh", body);
    user_hook(&p, &hook);
    let gate = Gate::start(&p, &["--policy", policy]);
    (p, gate)
}

#[test]
fn a_hook_that_answers_auto_has_the_edit_written_at_once_and_hears_the_edit() {
    let p = Project::new();
    p.write("a.txt", "alpha\n");
    let payload = p.state.join("payload.json");
    let hook = script(
        &p,
        "hook.sh",
        &format!(
            "cat > {:?}\necho '{{\"action\": \"auto\", \"reason\": \"small\"}}'",
            payload.display().to_string()
        ),
    );
    user_hook(&p, &hook);
    let gate = Gate::start(&p, &["--policy", "gate"]);
    let (answer, _) = edit(&gate);
    assert_eq!(answer["status"], "ok", "{answer}");
    assert_eq!(p.read("a.txt"), "beta\n");
    let payload: Value = serde_json::from_slice(&std::fs::read(payload).unwrap()).unwrap();
    assert_eq!(payload["tool"], "patch_file", "{payload}");
    assert_eq!(payload["client"], "script", "{payload}");
    assert_eq!(payload["paths"], json!(["a.txt"]), "{payload}");
    assert!(
        payload["diff"].as_str().unwrap().contains("+beta"),
        "{payload}"
    );
    assert_eq!(payload["diff_cut"], false, "{payload}");
    assert!(payload["warnings"].is_array(), "{payload}");
    assert_eq!(payload["run_id"], answer["run_id"], "{payload}");
}

#[test]
fn a_hook_that_answers_gate_has_the_edit_wait_under_policy_auto() {
    let (p, gate) = gate_with_hook(
        "cat >/dev/null\necho '{\"action\": \"gate\", \"reason\": \"touches money\"}'",
        "auto",
    );
    let (answer, _) = edit(&gate);
    assert_eq!(answer["status"], "pending", "{answer}");
    assert!(
        answer.to_string().contains("hook: touches money"),
        "{answer}"
    );
    assert_eq!(p.read("a.txt"), "alpha\n");
}

#[test]
fn a_hook_that_answers_deny_refuses_the_edit_and_the_agent_hears_why() {
    let (p, gate) = gate_with_hook(
        "cat >/dev/null\necho '{\"action\": \"deny\", \"reason\": \"no edits on Fridays\"}'",
        "auto",
    );
    let (answer, _) = edit(&gate);
    assert_eq!(answer["status"], "error", "{answer}");
    assert_eq!(answer["code"], "DENIED_BY_RULE", "{answer}");
    assert!(
        answer["message"]
            .as_str()
            .unwrap()
            .contains("no edits on Fridays"),
        "{answer}"
    );
    assert_eq!(p.read("a.txt"), "alpha\n");
}

/// Each failure under `--policy auto`: the edit is pending (not written) within the hook's
/// time and a little more, with a warning that names the failure.
fn fails_closed(body: &str, failure: &str) {
    let (p, gate) = gate_with_hook(body, "auto");
    let (answer, took) = edit(&gate);
    assert_eq!(answer["status"], "pending", "{answer}");
    let warnings = answer["warnings"].to_string();
    assert!(
        warnings.contains("the policy hook failed") && warnings.contains(failure),
        "{answer}"
    );
    assert!(
        took < Duration::from_millis(TIMEOUT_MS) + Duration::from_secs(3),
        "took {took:?}"
    );
    assert_eq!(p.read("a.txt"), "alpha\n");
}

#[test]
fn a_hook_that_hangs_is_killed_with_its_children_and_the_edit_waits() {
    let pid_file =
        std::env::temp_dir().join(format!("patchgate-hook-child-{}", std::process::id()));
    fails_closed(
        &format!(
            "sleep 30 &\necho $! > {:?}\nwait",
            pid_file.display().to_string()
        ),
        &format!("did not answer within {TIMEOUT_MS} ms"),
    );
    let pid: u32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let _ = std::fs::remove_file(&pid_file);
    // Its child went with it (its own process group was killed).
    let deadline = Instant::now() + Duration::from_secs(5);
    while std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z ")) {
        assert!(Instant::now() < deadline, "the hook's child {pid} lives on");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_hook_that_crashes_leaves_the_edit_waiting() {
    fails_closed("cat >/dev/null\nexit 3", "exited with");
}

#[test]
fn a_hook_that_answers_garbage_leaves_the_edit_waiting() {
    fails_closed("cat >/dev/null\necho 'sure, go ahead'", "its answer is not");
}

#[test]
fn a_hook_that_answers_too_much_leaves_the_edit_waiting() {
    fails_closed(
        "cat >/dev/null\nhead -c 200000 /dev/zero | tr '\\0' x",
        "more than 64 KiB",
    );
}

/// A repository's `.patchgate.toml` cannot make the gate run a program: its `[hook]` is
/// ignored (the gate starts, says so in its log, and the edit is gated as without it).
#[test]
fn a_repositorys_hook_is_never_run() {
    let p = Project::new();
    p.write("a.txt", "alpha\n");
    let marker = p.state.join("ran");
    let hook = script(
        &p,
        "repo-hook.sh",
        &format!(
            "touch {:?}\necho '{{\"action\": \"auto\"}}'",
            marker.display().to_string()
        ),
    );
    p.write(
        ".patchgate.toml",
        &format!("[hook]\ncommand = [{:?}]\n", hook.display().to_string()),
    );
    let gate = Gate::start(&p, &["--policy", "gate"]);
    let (answer, _) = edit(&gate);
    assert_eq!(answer["status"], "pending", "{answer}");
    assert!(!marker.exists(), "the repository's hook ran");
    assert_eq!(p.read("a.txt"), "alpha\n");
    let log = std::fs::read_to_string(p.state.join("patchgate.log")).unwrap_or_default();
    assert!(log.contains("[hook] is ignored"), "{log}");
}

/// A patch file a person applies (`patchgate apply --yes`, their word) is not an agent's
/// edit: the hook is not asked, and a hook that would deny it does not stop it.
#[test]
fn a_patch_a_person_applies_is_not_put_to_the_hook() {
    let p = Project::new();
    p.write("a.txt", "alpha\n");
    let marker = p.state.join("asked");
    let hook = script(
        &p,
        "hook.sh",
        &format!(
            "touch {:?}\necho '{{\"action\": \"deny\", \"reason\": \"no\"}}'",
            marker.display().to_string()
        ),
    );
    user_hook(&p, &hook);
    let mut cmd = crate::support::bin();
    cmd.args(["apply", "--yes", "-", "--root"])
        .arg(&p.root)
        .env("PATCHGATE_STATE_DIR", &p.state)
        .env("PATCHGATE_CONFIG", p.state.join("no-user-config.toml"));
    let out = crate::support::run_cmd(
        cmd,
        "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-alpha\n+beta\n",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(p.read("a.txt"), "beta\n");
    assert!(
        !marker.exists(),
        "the hook was asked about a person's patch"
    );
}

/// A hook an agent could rewrite is refused before the gate starts: its program beneath the
/// root (where every edit lands), or given as a relative path. A gate that ran it would let
/// the agent replace its own judge (and the old judge could approve that very edit).
#[test]
fn a_hook_beneath_the_root_or_by_a_relative_path_stops_the_gate_from_starting() {
    let p = Project::new();
    p.write("a.txt", "alpha\n");
    p.write("judge.sh", "#!/bin/sh\necho '{\"action\": \"auto\"}'\n");
    let inside = p.root.join("judge.sh");
    std::fs::set_permissions(&inside, std::fs::Permissions::from_mode(0o755)).unwrap();
    for (command, says) in [
        (inside.display().to_string(), "beneath the project root"),
        ("./judge.sh".to_string(), "relative path"),
    ] {
        user_hook(&p, std::path::Path::new(&command));
        let mut cmd = crate::support::bin();
        cmd.args(["serve", "--listen", "127.0.0.1:0", "--root"])
            .arg(&p.root)
            .env("PATCHGATE_STATE_DIR", &p.state)
            .env("PATCHGATE_CONFIG", p.state.join("no-user-config.toml"));
        let mut child = cmd
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let started = Instant::now();
        while child.try_wait().unwrap().is_none() {
            if started.elapsed() > Duration::from_secs(10) {
                let _ = child.kill();
                panic!("{command}: the gate started with a hook an agent can rewrite");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{command}: {err}");
        assert!(err.contains(says), "{command}: {err}");
    }
}
