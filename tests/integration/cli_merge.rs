//! `patchgate merge`: output, exit codes and the JSON error line.

use crate::support::run;

fn write(dir: &tempfile::TempDir, name: &str, bytes: &[u8]) -> String {
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    path.to_string_lossy().into_owned()
}

const BLOCK: &str = "<<<<<<< SEARCH\nb = 2\n=======\nb = 3\n>>>>>>> REPLACE\n";

#[test]
fn merge_blocks_prints_the_merged_file_and_never_writes() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(&dir, "x.py", b"a = 1\r\nb = 2\r\n");
    let out = run(&["merge", "blocks", &file, "-"], BLOCK);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.stdout, b"a = 1\r\nb = 3\r\n");
    assert_eq!(std::fs::read(&file).unwrap(), b"a = 1\r\nb = 2\r\n");
}

#[test]
fn merge_reads_the_edit_from_a_file_argument() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(&dir, "x.py", b"a = 1\nb = 2\n");
    let edit = write(&dir, "edit.txt", BLOCK.as_bytes());
    let out = run(&["merge", "blocks", &file, &edit], "");
    assert!(out.status.success());
    assert_eq!(out.stdout, b"a = 1\nb = 3\n");
}

#[test]
fn merge_blocks_on_a_refused_edit_exits_1_with_a_json_last_stderr_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(&dir, "x.py", b"a = 1\nb = 2\n");
    let edit = "<<<<<<< SEARCH\nzzz\n=======\nb = 3\n>>>>>>> REPLACE\n";
    let out = run(&["merge", "blocks", &file], edit);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8(out.stderr).unwrap();
    let last = stderr.lines().last().unwrap();
    let json: serde_json::Value = serde_json::from_str(last).unwrap();
    assert_eq!(json["code"], "NO_MATCH");
    assert!(json["message"].as_str().unwrap().contains("block 1 of 1"));
}

#[test]
fn merge_refuses_an_instruction_the_engine_would_ignore() {
    // Only the lazy engine reads --instruction; the others once dropped it without a word.
    let dir = tempfile::tempdir().unwrap();
    let file = write(&dir, "x.py", b"a = 1\nb = 2\n");
    let udiff = "@@ -2 +2 @@\n-b = 2\n+b = 3\n";
    let replace = r#"{"search_content": "b = 2", "replace_content": "b = 3"}"#;
    for (format, edit) in [("blocks", BLOCK), ("replace", replace), ("udiff", udiff)] {
        let out = run(
            &["merge", format, &file, "-", "--instruction", "after a"],
            edit,
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{format}: {err}");
        assert!(out.stdout.is_empty(), "{format}");
        assert!(
            err.contains("--instruction is read only by the lazy engine")
                && err.contains(&format!("the {format} engine")),
            "{format}: {err}"
        );
        // Without it, the same edit merges.
        let out = run(&["merge", format, &file, "-"], edit);
        assert_eq!(out.stdout, b"a = 1\nb = 3\n", "{format}");
    }
    // The lazy engine takes it.
    let out = run(
        &[
            "merge",
            "lazy",
            &file,
            "-",
            "--instruction",
            "at the end of the file",
        ],
        "c = 3\n",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let merged = String::from_utf8_lossy(&out.stdout);
    assert!(
        merged.starts_with("a = 1\nb = 2\n") && merged.ends_with("\nc = 3\n"),
        "{merged}"
    );
}

#[test]
fn merge_on_a_missing_file_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope.py");
    let out = run(&["merge", "blocks", missing.to_str().unwrap()], BLOCK);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nope.py"));
}

#[test]
fn merge_with_a_bad_format_is_a_usage_error() {
    let out = run(&["merge", "sideways", "x"], "");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn merge_binary_file_is_refused_with_binary_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(&dir, "x.bin", b"\x00\x01\x02");
    let out = run(&["merge", "blocks", &file], BLOCK);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    let json: serde_json::Value = serde_json::from_str(stderr.lines().last().unwrap()).unwrap();
    assert_eq!(json["code"], "BINARY_FILE");
}

#[test]
fn merge_json_reports_content_diff_and_warnings() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(&dir, "x.py", b"a = 1\nb = 2   \n");
    let edit = "<<<<<<< SEARCH\nb = 2\n=======\nb = 3\n>>>>>>> REPLACE\n";
    let out = run(&["merge", "blocks", &file, "--json"], edit);
    assert!(out.status.success());
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["status"], "ok");
    assert_eq!(json["content"], "a = 1\nb = 3\n");
    assert!(
        json["diff"]
            .as_str()
            .unwrap()
            .contains("-b = 2   \n+b = 3\n")
    );
    assert!(
        json["warnings"][0]
            .as_str()
            .unwrap()
            .contains("trailing whitespace")
    );
}

#[test]
fn merge_replace_takes_patch_file_json() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(&dir, "x.txt", b"one two two\n");
    let out = run(
        &["merge", "replace", &file],
        r#"{"search_content": "two", "replace_content": "2", "allow_multiple": true}"#,
    );
    assert!(out.status.success());
    assert_eq!(out.stdout, b"one 2 2\n");
    let out = run(
        &["merge", "replace", &file],
        r#"{"search_content": "two", "replace_content": "2"}"#,
    );
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.lines().last().unwrap().contains("AMBIGUOUS_MATCH"));
}

#[test]
fn merge_udiff_applies_a_git_diff() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(&dir, "x.txt", b"a\nb\nc\n");
    let diff =
        "diff --git a/x.txt b/x.txt\n--- a/x.txt\n+++ b/x.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n";
    let out = run(&["merge", "udiff", &file], diff);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.stdout, b"a\nB\nc\n");
}

#[test]
fn bash_completes_subcommands_and_the_man_page_renders() {
    let script = crate::support::bin()
        .args(["completions", "bash"])
        .output()
        .unwrap();
    assert!(script.status.success());
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("patchgate.bash");
    std::fs::write(&file, &script.stdout).unwrap();
    // Real bash, the generated function, a half-typed subcommand.
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source {}; COMP_WORDS=(patchgate ap); COMP_CWORD=1; _patchgate patchgate ap patchgate; echo \"${{COMPREPLY[@]}}\"",
            file.display()
        ))
        .output()
        .unwrap();
    let words = String::from_utf8_lossy(&out.stdout);
    assert!(
        words.split_whitespace().any(|w| w == "apply"),
        "{words:?} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let out = crate::support::bin()
            .args(["completions", shell])
            .output()
            .unwrap();
        assert!(out.status.success() && !out.stdout.is_empty(), "{shell}");
    }
    let man = crate::support::bin().arg("man").output().unwrap();
    let man = String::from_utf8(man.stdout).unwrap();
    assert!(
        man.contains(".TH patchgate 1") && man.contains("apply"),
        "{man}"
    );
}
