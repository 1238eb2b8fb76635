//! Every command that writes to standard output exits quietly with status 0 when its reader
//! has gone away (`patchgate search … | head -1`, `patchgate man | true`): no panic, no error
//! message, as `git log | head` behaves.

use std::path::Path;

use crate::support::bin;

/// Run `patchgate ARGS` with standard output a pipe whose reading end is already closed, and
/// check it exits 0 with nothing on standard error.
fn exits_quietly(args: &[&str], home: &Path, state: &Path) {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = bin()
        .args(args)
        .env("HOME", home)
        .env("PATCHGATE_STATE_DIR", state)
        .env("PATCHGATE_LOG", state.join("patchgate.log"))
        .stdin(std::process::Stdio::null())
        .stdout(writer)
        .stderr(std::process::Stdio::piped())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(0),
        "`patchgate {}` into a closed pipe: {stderr}",
        args.join(" ")
    );
    assert!(
        !stderr.contains("panicked") && !stderr.contains("Broken pipe"),
        "`patchgate {}` into a closed pipe: {stderr}",
        args.join(" ")
    );
}

#[test]
fn every_command_into_a_closed_pipe_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let (home, state, root) = (
        dir.path().join("home"),
        dir.path().join("state"),
        dir.path().join("root"),
    );
    for d in [&home, &state, &root] {
        std::fs::create_dir_all(d).unwrap();
    }
    let root_s = root.to_str().unwrap();
    std::fs::write(
        root.join("parse.py"),
        "def parse_config(text):\n    return dict(line.split('=') for line in text.splitlines())\n",
    )
    .unwrap();
    let edit = dir.path().join("edit.txt");
    std::fs::write(
        &edit,
        "def parse_config(text):\n    return dict(line.split('=', 1) for line in text.splitlines())\n",
    )
    .unwrap();
    // A one-case corpus for `eval`.
    let case = dir.path().join("corpus/one");
    std::fs::create_dir_all(&case).unwrap();
    std::fs::copy(root.join("parse.py"), case.join("before.py")).unwrap();
    std::fs::copy(&edit, case.join("after.py")).unwrap();
    std::fs::copy(&edit, case.join("lazy.txt")).unwrap();
    let corpus = dir.path().join("corpus");
    let file = root.join("parse.py");
    let (file, edit, corpus) = (
        file.to_str().unwrap(),
        edit.to_str().unwrap(),
        corpus.to_str().unwrap(),
    );
    let commands: Vec<Vec<&str>> = vec![
        vec!["search", "parse config", "--root", root_s],
        vec!["search", "parse config", "--root", root_s, "--json"],
        vec!["config", "claude", "--root", root_s],
        vec!["config", "codex", "--root", root_s],
        vec!["config", "cursor", "--root", root_s],
        vec!["config", "vscode", "--root", root_s],
        vec!["doctor", "--root", root_s],
        vec!["completions", "bash"],
        vec!["completions", "zsh"],
        vec!["completions", "fish"],
        vec!["man"],
        vec!["merge", "lazy", file, edit],
        vec!["merge", "lazy", file, edit, "--json"],
        vec!["eval", corpus],
        vec!["log", "--root", root_s],
        vec!["--help"],
        vec!["search", "--help"],
        vec!["--version"],
    ];
    for args in &commands {
        exits_quietly(args, &home, &state);
    }
}
