//! The official MCP Python SDK (`mcp` from PyPI, in the venv `.ci/pyenv` creates) against the
//! real binary, over stdio and over HTTP: it lists the tools, checks their schemas carry the
//! reference argument names, and runs fast_apply, patch_file with dry_run then
//! apply_last_dry_run, and FileWriteOrEdit (tests/python/sdk_client.py).

use std::path::PathBuf;
use std::process::Command;

use crate::mcp::{Gate, Project};

/// The venv's python: `$PATCHGATE_TEST_PYTHON`, else the one `.ci/pyenv` prints. The script
/// is asked every time (once per test process): it returns at once when the venv is ready,
/// and otherwise builds it under a lock, so a test never sees a venv that is half installed.
pub(crate) fn python() -> PathBuf {
    static PYTHON: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    if let Some(p) = std::env::var_os("PATCHGATE_TEST_PYTHON") {
        return PathBuf::from(p);
    }
    PYTHON.get_or_init(|| pyenv(None)).clone()
}

/// Run `.ci/pyenv` (with `PATCHGATE_VENV` = `venv` when given) and return the python it prints.
fn pyenv(venv: Option<&std::path::Path>) -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut cmd = Command::new("python3");
    cmd.arg(manifest.join(".ci/pyenv"));
    if let Some(v) = venv {
        cmd.env("PATCHGATE_VENV", v);
    }
    let out = cmd.output().expect("run .ci/pyenv with python3");
    assert!(
        out.status.success(),
        "cannot create the Python venv with the MCP SDK (.ci/pyenv needs python3 and PyPI): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

/// Two test processes starting on a fresh checkout at once: both get a venv where `import
/// mcp` works, and at no moment does the venv's python exist without the SDK (the old script
/// created the venv in place, and a second process took it while pip was still installing).
#[test]
fn two_processes_share_a_fresh_venv() {
    let dir = tempfile::tempdir().unwrap();
    let venv = dir.path().join("venv");
    let python = venv.join("bin/python");
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watcher = {
        let (python, done) = (python.clone(), done.clone());
        std::thread::spawn(move || {
            let mut checked = 0;
            while !done.load(std::sync::atomic::Ordering::SeqCst) {
                if python.exists() {
                    let ok = Command::new(&python)
                        .args(["-c", "import mcp"])
                        .status()
                        .is_ok_and(|s| s.success());
                    assert!(ok, "{} exists but cannot import mcp yet", python.display());
                    checked += 1;
                }
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            checked
        })
    };
    let runs: Vec<_> = (0..2)
        .map(|_| {
            let venv = venv.clone();
            std::thread::spawn(move || pyenv(Some(&venv)))
        })
        .collect();
    for run in runs {
        let got = run.join().expect("a pyenv run failed");
        assert_eq!(got, python);
        let ok = Command::new(&got).args(["-c", "import mcp"]).status();
        assert!(
            ok.is_ok_and(|s| s.success()),
            "{} cannot import mcp",
            got.display()
        );
    }
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    watcher.join().expect("the venv was seen half built");
    // Only the venv and its lock are left beside it: no temporary directory.
    let mut left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["venv", "venv.lock"]);
}

pub(crate) fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/python/sdk_client.py")
}

fn check(out: std::process::Output, what: &str) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains(&format!("OK {what}")),
        "python SDK over {what} failed:\n{stdout}\n{stderr}"
    );
    assert!(
        !stderr.contains("WARNING") && !stderr.contains("Traceback"),
        "{stderr}"
    );
}

#[test]
fn official_python_sdk_over_stdio() {
    let py = python();
    let p = Project::new();
    let out = Command::new(&py)
        .arg(script())
        .args(["stdio", env!("CARGO_BIN_EXE_patchgate")])
        .arg(&p.root)
        .env("PATCHGATE_STATE_DIR", &p.state)
        .env("PATCHGATE_LOG", p.state.join("patchgate.log"))
        .output()
        .expect("run python");
    check(out, "stdio");
}

#[test]
fn official_python_sdk_over_http() {
    let py = python();
    let p = Project::new();
    let gate = Gate::start(&p, &["--policy", "auto"]);
    let out = Command::new(&py)
        .arg(script())
        .args(["http", &gate.mcp_url, &gate.token])
        .arg(&p.root)
        .output()
        .expect("run python");
    check(out, "http");
}
