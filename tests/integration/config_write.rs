//! `patchgate config CLIENT --write` on real files: it merges patchgate's server and its
//! pre-approval into each client's own files (project scope, and the user's with `--user`),
//! keeps every other server and permission, copies the old file aside, changes nothing on a
//! second run, refuses a file it cannot read without touching it, and `doctor` then calls the
//! client ready.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::bin;

/// A project, a home, and a PATH whose `patchgate` is the binary under test.
struct Setup {
    _dir: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    state: PathBuf,
    path: std::ffi::OsString,
    exe: PathBuf,
}

impl Setup {
    fn new() -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("proj");
        let home = dir.path().join("home");
        let state = dir.path().join("state");
        let bin_dir = dir.path().join("bin");
        for d in [&root, &home, &state, &bin_dir] {
            std::fs::create_dir_all(d).unwrap();
        }
        let root = std::fs::canonicalize(root).unwrap();
        let exe = bin_dir.join("patchgate");
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_patchgate"), &exe).unwrap();
        Setup {
            _dir: dir,
            root,
            home,
            state,
            path: std::env::join_paths([bin_dir, PathBuf::from("/usr/bin"), PathBuf::from("/bin")])
                .unwrap(),
            exe,
        }
    }

    /// `patchgate ARGS` in the project: its exit code, standard output and error.
    fn run(&self, args: &[&str]) -> (i32, String, String) {
        let out = bin()
            .args(args)
            .current_dir(&self.root)
            .env("HOME", &self.home)
            .env_remove("CODEX_HOME")
            .env_remove("XDG_CONFIG_HOME")
            .env("PATH", &self.path)
            .env("PATCHGATE_STATE_DIR", &self.state)
            .env("PATCHGATE_LOG", self.state.join("patchgate.log"))
            .output()
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    fn write(&self, rel: &str, content: &str) {
        let p = self.root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
    }

    fn json(&self, path: &Path) -> Value {
        serde_json::from_str(&std::fs::read_to_string(path).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    fn stdio_entry_args(&self) -> Value {
        json!(["serve", "--stdio", "--root", self.root])
    }
}

/// Run `config CLIENT --write` twice: the first run changes what it says, the second nothing.
fn write_twice(s: &Setup, client: &str, extra: &[&str]) -> String {
    let mut args = vec!["config", client, "--write"];
    args.extend_from_slice(extra);
    let (code, first, err) = s.run(&args);
    assert_eq!(code, 0, "{err}");
    assert!(!first.contains("unchanged"), "{first}");
    let (code, second, err) = s.run(&args);
    assert_eq!(code, 0, "{err}");
    assert!(
        second.lines().all(|l| l.starts_with("unchanged ")),
        "a second run changed something:\n{second}"
    );
    first
}

#[test]
fn claude_project_files_are_merged_with_a_backup_and_a_second_run_changes_nothing() {
    let s = Setup::new();
    let mcp = r#"{"mcpServers": {"db": {"command": "db-server", "args": ["--ro"]}}}"#;
    let settings =
        r#"{"permissions": {"allow": ["Bash(git status)"], "deny": ["Write"]}, "model": "opus"}"#;
    s.write(".mcp.json", mcp);
    s.write(".claude/settings.local.json", settings);
    let said = write_twice(&s, "claude", &[]);
    assert!(
        said.contains("updated .mcp.json: mcpServers.patchgate"),
        "{said}"
    );
    assert!(
        said.contains("updated .claude/settings.local.json"),
        "{said}"
    );
    let v = s.json(&s.root.join(".mcp.json"));
    assert_eq!(v["mcpServers"]["db"]["command"], "db-server");
    assert_eq!(v["mcpServers"]["patchgate"]["command"], json!(s.exe));
    assert_eq!(v["mcpServers"]["patchgate"]["args"], s.stdio_entry_args());
    let v = s.json(&s.root.join(".claude/settings.local.json"));
    assert_eq!(
        v["permissions"]["allow"],
        json!(["Bash(git status)", "mcp__patchgate__*"])
    );
    assert_eq!(
        v["permissions"]["deny"],
        json!(["Write", "Edit", "NotebookEdit"])
    );
    assert_eq!(v["enabledMcpjsonServers"], json!(["patchgate"]));
    assert_eq!(v["model"], "opus");
    // The old files, byte for byte, and only one backup each.
    let backup = |rel: &str| std::fs::read_to_string(s.root.join(rel)).unwrap();
    assert_eq!(backup(".mcp.json.patchgate-backup"), mcp);
    assert_eq!(
        backup(".claude/settings.local.json.patchgate-backup"),
        settings
    );
    assert!(!s.root.join(".mcp.json.patchgate-backup-2").exists());
    let (_, doctor, _) = s.run(&["doctor"]);
    assert!(doctor.contains("claude  ready"), "{doctor}");
}

#[test]
fn claude_user_files_are_merged_and_serve_the_working_directory() {
    let s = Setup::new();
    let claude_json = r#"{"numStartups": 3, "mcpServers": {"web": {"type": "http", "url": "https://example.invalid/mcp"}}, "projects": {"/x": {"allowedTools": []}}}"#;
    std::fs::write(s.home.join(".claude.json"), claude_json).unwrap();
    write_twice(&s, "claude", &["--user"]);
    let v = s.json(&s.home.join(".claude.json"));
    assert_eq!(v["numStartups"], 3);
    assert_eq!(v["projects"]["/x"]["allowedTools"], json!([]));
    assert_eq!(v["mcpServers"]["web"]["type"], "http");
    assert_eq!(
        v["mcpServers"]["patchgate"]["args"],
        json!(["serve", "--stdio"])
    );
    let v = s.json(&s.home.join(".claude/settings.json"));
    assert_eq!(v["permissions"]["allow"], json!(["mcp__patchgate__*"]));
    assert!(!s.root.join(".mcp.json").exists());
    let (_, doctor, _) = s.run(&["doctor"]);
    assert!(doctor.contains("claude  ready"), "{doctor}");
}

#[test]
fn codex_config_keeps_its_comments_and_other_servers() {
    let s = Setup::new();
    let user = "# my Codex\nmodel = \"o4\"  # fast\n\n[mcp_servers.docs]\ncommand = \"docs-mcp\"\n";
    std::fs::create_dir_all(s.home.join(".codex")).unwrap();
    std::fs::write(s.home.join(".codex/config.toml"), user).unwrap();
    write_twice(&s, "codex", &["--user"]);
    let text = std::fs::read_to_string(s.home.join(".codex/config.toml")).unwrap();
    assert!(
        text.starts_with("# my Codex\nmodel = \"o4\"  # fast\n"),
        "{text}"
    );
    let t: toml::Table = text.parse().unwrap();
    let pg = &t["mcp_servers"]["patchgate"];
    assert_eq!(
        t["mcp_servers"]["docs"]["command"].as_str(),
        Some("docs-mcp")
    );
    assert_eq!(pg["command"].as_str(), s.exe.to_str());
    assert_eq!(pg["default_tools_approval_mode"].as_str(), Some("approve"));
    assert_eq!(pg["tool_timeout_sec"].as_integer(), Some(660));
    // No --root: Codex starts the server in the project it runs in.
    assert_eq!(pg["args"].as_array().unwrap().len(), 2);
    assert_eq!(pg["env_vars"][0].as_str(), Some("PATCHGATE_STATE_DIR"));
    assert_eq!(
        std::fs::read_to_string(s.home.join(".codex/config.toml.patchgate-backup")).unwrap(),
        user
    );
    let (_, doctor, _) = s.run(&["doctor"]);
    assert!(doctor.contains("codex   ready"), "{doctor}");

    // The default scope writes the same user file (Codex reads a project's file only in a
    // project it trusts), so nothing changes, and it says where the server went.
    let (code, said, err) = s.run(&["config", "codex", "--write"]);
    assert_eq!(code, 0, "{err}");
    assert!(said.starts_with("unchanged "), "{said}");
    assert!(err.contains("only in a project it trusts"), "{err}");
    assert!(!s.root.join(".codex").exists());
}

#[test]
fn cursor_and_vscode_files_are_merged() {
    let s = Setup::new();
    s.write(
        ".cursor/mcp.json",
        r#"{"mcpServers": {"figma": {"url": "http://127.0.0.1:3845/mcp"}}}"#,
    );
    s.write(
        ".cursor/permissions.json",
        r#"{"mcpAllowlist": ["figma:*"], "terminalAllowlist": ["ls"]}"#,
    );
    s.write(
        ".vscode/mcp.json",
        r#"{"inputs": [], "servers": {"gh": {"type": "http", "url": "https://example.invalid"}}}"#,
    );
    write_twice(&s, "cursor", &[]);
    write_twice(&s, "vscode", &[]);
    let v = s.json(&s.root.join(".cursor/mcp.json"));
    assert_eq!(v["mcpServers"]["figma"]["url"], "http://127.0.0.1:3845/mcp");
    assert_eq!(v["mcpServers"]["patchgate"]["args"], s.stdio_entry_args());
    let v = s.json(&s.root.join(".cursor/permissions.json"));
    assert_eq!(v["mcpAllowlist"], json!(["figma:*", "patchgate:*"]));
    assert_eq!(v["terminalAllowlist"], json!(["ls"]));
    let v = s.json(&s.root.join(".vscode/mcp.json"));
    assert_eq!(v["inputs"], json!([]));
    assert_eq!(v["servers"]["gh"]["type"], "http");
    assert_eq!(v["servers"]["patchgate"]["type"], "stdio");
    let (_, doctor, _) = s.run(&["doctor"]);
    assert!(doctor.contains("cursor  ready"), "{doctor}");
    assert!(doctor.contains("vscode  ready"), "{doctor}");
    assert!(
        doctor.contains("claude  not ready: no patchgate server where it looks; run `patchgate config claude --write`"),
        "{doctor}"
    );
}

#[test]
fn a_file_it_cannot_read_is_left_alone_with_what_to_add() {
    let s = Setup::new();
    let broken = "{\n  // VS Code allows comments here\n  \"servers\": {}\n}\n";
    s.write(".vscode/mcp.json", broken);
    let (code, out, err) = s.run(&["config", "vscode", "--write"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("not plain JSON"), "{err}");
    assert!(
        err.contains("\"patchgate\""),
        "the refusal shows what to add: {err}"
    );
    assert_eq!(
        std::fs::read_to_string(s.root.join(".vscode/mcp.json")).unwrap(),
        broken
    );
    assert!(!s.root.join(".vscode/mcp.json.patchgate-backup").exists());
}

#[test]
fn config_names_the_patchgate_on_path() {
    let s = Setup::new();
    let (code, out, err) = s.run(&["config", "cursor"]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["mcpServers"]["patchgate"]["command"], json!(s.exe));
    assert!(!err.contains("build output"), "{err}");
}

/// An HTTP entry names one gate: it is not written where it would serve every project (the
/// user's files, and Codex's, which are always the user's).
#[test]
fn an_http_entry_is_not_written_into_the_users_files() {
    let s = Setup::new();
    for args in [
        &[
            "config",
            "codex",
            "--write",
            "--http",
            "--listen",
            "127.0.0.1:9",
        ][..],
        &[
            "config",
            "claude",
            "--write",
            "--user",
            "--http",
            "--listen",
            "127.0.0.1:9",
        ][..],
    ] {
        let (code, _, err) = s.run(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains("stdio form"), "{err}");
    }
    assert!(!s.home.join(".codex/config.toml").exists());
    assert!(!s.home.join(".claude.json").exists());
}

/// A client's directory in the project that links out of it (`.vscode -> ~/somewhere`) is not
/// the project's to write into: `--write --http` (the agents' token) is refused, and nothing
/// is written there or anywhere else.
#[test]
fn a_client_directory_that_links_out_of_the_project_is_refused() {
    for (client, dir) in [
        ("vscode", ".vscode"),
        ("claude", ".claude"),
        ("cursor", ".cursor"),
    ] {
        let s = Setup::new();
        let outside = s.home.join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, s.root.join(dir)).unwrap();
        let (code, out, err) = s.run(&[
            "config",
            client,
            "--write",
            "--http",
            "--listen",
            "127.0.0.1:9",
        ]);
        assert_eq!(code, 2, "{client}: {out}{err}");
        assert!(err.contains("outside the project"), "{client}: {err}");
        let written: Vec<_> = std::fs::read_dir(&outside).unwrap().collect();
        assert!(written.is_empty(), "{client}: {written:?}");
        // Nothing in the project either (Claude's `.mcp.json` is checked with the rest).
        assert!(!s.root.join(".mcp.json").exists(), "{client}");
    }
}

#[test]
fn the_advice_names_what_was_done_never_commands_that_were_not_printed() {
    let s = Setup::new();
    let (code, printed, err) = s.run(&["config", "claude"]);
    assert_eq!(code, 0, "{err}");
    assert!(printed.contains("claude mcp add"), "{printed}");
    assert!(err.contains("the commands above also deny"), "{err}");
    // Written, nothing printed but the files: no "commands above".
    let (code, said, err) = s.run(&["config", "claude", "--write"]);
    assert_eq!(code, 0, "{err}");
    assert!(!said.contains("claude mcp add"), "{said}");
    assert!(!err.contains("above"), "{err}");
    assert!(
        err.contains("the approval just written also denies"),
        "{err}"
    );
    let other = Setup::new();
    let (code, _, err) = other.run(&["config", "claude", "--write", "--only", "server"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        !err.contains("above") && err.contains("the approval was not written"),
        "{err}"
    );
    // The user's files are named as such.
    let (code, _, err) = s.run(&["config", "claude", "--write", "--user"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("the approval just written also denies")
            && err.contains("in ~/.claude/settings.json, for every project")
            && !err.contains("settings.local.json"),
        "{err}"
    );
    let (code, _, err) = s.run(&["config", "codex", "--write"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        !err.contains("above") && err.contains("the table just written"),
        "{err}"
    );
    let (code, _, err) = s.run(&["config", "codex"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("the table above pre-approves"), "{err}");
}
