//! The official MCP Python SDK (`mcp` from PyPI, in the venv `.ci/pyenv` creates) against the
//! real binary, over stdio and over HTTP: it lists the tools, checks their schemas carry the
//! reference argument names, and runs fast_apply, patch_file with dry_run then
//! apply_last_dry_run, and FileWriteOrEdit (tests/python/sdk_client.py).

use std::path::PathBuf;
use std::process::Command;

use crate::mcp::{Gate, Project};

/// The venv's python: `$PATCHGATE_TEST_PYTHON`, else the one `.ci/pyenv` creates (once).
pub(crate) fn python() -> PathBuf {
    if let Some(p) = std::env::var_os("PATCHGATE_TEST_PYTHON") {
        return PathBuf::from(p);
    }
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let venv_python = manifest.join(".venv/bin/python");
    if venv_python.exists() {
        return venv_python;
    }
    let out = Command::new(manifest.join(".ci/pyenv"))
        .output()
        .expect("run .ci/pyenv");
    assert!(
        out.status.success(),
        "cannot create the Python venv with the MCP SDK (.ci/pyenv needs python3 and PyPI): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
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
