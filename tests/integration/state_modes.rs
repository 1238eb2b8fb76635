//! The state that holds secrets is the user's alone (docs/DESIGN.md §1, §7): a gate's
//! discovery entries (`reviewer.json` and `gates/*.json`, which hold the reviewer's token) and
//! the per-root agents' token file (`tokens/`) are mode 0600 under an ordinary umask, also
//! when an older entry there was readable by others.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::mcp::Project;

/// A gate process, killed when dropped (a failed assertion included).
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `serve --listen` over `p` started under `umask 022` (what a file made without an explicit
/// mode would get: 0644), and its discovery entry once it is written.
fn gate_under_umask(p: &Project) -> (Killed, Value) {
    let child = Command::new("sh")
        .args(["-c", "umask 022 && exec \"$0\" \"$@\""])
        .arg(env!("CARGO_BIN_EXE_patchgate"))
        .args(["serve", "--listen", "127.0.0.1:0", "--root"])
        .arg(&p.root)
        .env("PATCHGATE_STATE_DIR", &p.state)
        .env("PATCHGATE_LOG", p.state.join("patchgate.log"))
        .env("PATCHGATE_CONFIG", p.state.join("no-user-config.toml"))
        .env_remove("PATCHGATE_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn serve --listen");
    let mut gate = Killed(child);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(bytes) = std::fs::read(p.state.join("reviewer.json"))
            && let Ok(v) = serde_json::from_slice::<Value>(&bytes)
            && v["pid"] == gate.0.id()
        {
            return (gate, v);
        }
        if let Ok(Some(status)) = gate.0.try_wait() {
            panic!("serve --listen exited early: {status}");
        }
        assert!(Instant::now() < deadline, "no discovery entry after 30 s");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o7777
}

/// The one file in `dir`.
fn only_file(dir: &Path) -> PathBuf {
    let files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    files.into_iter().next().unwrap()
}

#[test]
fn the_discovery_entries_and_the_agents_token_file_are_mode_0600() {
    let p = Project::new();
    // An older gate's entry, readable by everyone.
    let mirror = p.state.join("reviewer.json");
    std::fs::write(&mirror, "{\"pid\": 1}").unwrap();
    std::fs::set_permissions(&mirror, std::fs::Permissions::from_mode(0o644)).unwrap();
    let (_gate, entry) = gate_under_umask(&p);
    assert!(
        entry["review_token"]
            .as_str()
            .is_some_and(|t| !t.is_empty()),
        "{entry}"
    );
    assert_eq!(mode(&mirror), 0o600, "reviewer.json");
    let own = only_file(&p.state.join("gates"));
    assert_eq!(mode(&own), 0o600, "{}", own.display());
    let own_entry: Value = serde_json::from_slice(&std::fs::read(&own).unwrap()).unwrap();
    assert_eq!(own_entry["review_token"], entry["review_token"]);
    // The agents' token kept for this root is the one the gate asks for.
    let token = only_file(&p.state.join("tokens"));
    assert_eq!(mode(&token), 0o600, "{}", token.display());
    let kept = std::fs::read_to_string(&token).unwrap();
    assert_eq!(Some(kept.trim()), entry["token"].as_str());
}
