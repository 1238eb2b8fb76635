//! `patchgate apply --yes --reject` against `git apply --reject`: each case takes `git diff`
//! of a change, moves the target trees on (so some hunks conflict), applies the patch to one
//! copy with git and to another with patchgate, and compares every file — the `.rej` files
//! included — byte for byte with its executable bit, and the exit status (git's and ours are
//! both 1 when a hunk or a file was left out, 0 otherwise).

use std::path::Path;
use std::process::Command;

use crate::apply_git::{
    base, base_repo, chmod, copy_tree, git, lines, ok, same_trees, tree, write,
};

struct Case {
    name: &'static str,
    setup: fn(&Path),
    change: fn(&Path),
    /// Done to both copies before applying: what makes hunks conflict.
    drift: fn(&Path),
    /// The exit status both give.
    status: i32,
    /// The `.rej` files both leave.
    rejects: &'static [&'static str],
}

fn run_case(c: &Case) {
    let dir = tempfile::tempdir().unwrap();
    let repo = base_repo(dir.path(), c.setup);
    (c.change)(&repo);
    ok(git(&repo, &["add", "-A"]), "git add");
    let patch = ok(git(&repo, &["diff", "--cached", "-M", "HEAD"]), "diff").stdout;
    let patch_file = dir.path().join("change.patch");
    std::fs::write(&patch_file, &patch).unwrap();
    ok(git(&repo, &["reset", "-q", "--hard", "HEAD"]), "reset");
    let (with_git, with_pg) = (dir.path().join("git"), dir.path().join("pg"));
    for copy in [&with_git, &with_pg] {
        copy_tree(&repo, copy);
        (c.drift)(copy);
    }
    let g = Command::new("git")
        .current_dir(&with_git)
        .args(["apply", "--reject"])
        .arg(&patch_file)
        .output()
        .unwrap();
    let state = dir.path().join("state");
    let p = crate::support::bin()
        .current_dir(&with_pg)
        .args(["apply", "--yes", "--reject", "--root", "."])
        .arg(&patch_file)
        .env("PATCHGATE_STATE_DIR", &state)
        .env("PATCHGATE_LOG", state.join("log"))
        .output()
        .unwrap();
    let says = |o: &std::process::Output| {
        format!(
            "{}{}\n{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr),
            String::from_utf8_lossy(&patch)
        )
    };
    assert_eq!(
        g.status.code(),
        Some(c.status),
        "{}: git: {}",
        c.name,
        says(&g)
    );
    assert_eq!(
        p.status.code(),
        Some(c.status),
        "{}: patchgate: {}",
        c.name,
        says(&p)
    );
    let (tg, tp) = (tree(&with_git), tree(&with_pg));
    let rejects: Vec<&String> = tg.keys().filter(|k| k.ends_with(".rej")).collect();
    assert_eq!(rejects, c.rejects, "{}: git's .rej files", c.name);
    same_trees(c.name, &tg, &tp, &says(&p));
}

/// `src/lib.rs` with line `n` replaced by `text`.
fn lib_with(r: &Path, n: usize, text: &str) {
    let s = lines(60, "lib").replace(&format!("lib line {n}\n"), &format!("{text}\n"));
    write(r, "src/lib.rs", s.as_bytes());
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "one hunk of three conflicts, and the one at line 1 no longer starts the file",
            setup: base,
            change: |r| {
                let s = lines(60, "lib")
                    .replace("lib line 3\n", "lib line three\n")
                    .replace("lib line 30\n", "lib line thirty\nan added line\n")
                    .replace("lib line 57\n", "");
                write(r, "src/lib.rs", s.as_bytes());
                write(r, "README.md", b"# New title\n\nSome text.\nMore text.\n");
            },
            drift: |r| {
                let s = lines(60, "lib").replace("lib line 30\n", "lib line 30, edited\n");
                write(r, "src/lib.rs", format!("// a header\n{s}").as_bytes());
            },
            status: 1,
            rejects: &["src/lib.rs.rej"],
        },
        Case {
            name: "files failing whole beside a file that applies",
            setup: |r| {
                base(r);
                write(r, "gone.txt", lines(5, "gone").as_bytes());
                write(r, "old.txt", lines(4, "old").as_bytes());
            },
            change: |r| {
                write(
                    r,
                    "README.md",
                    b"# Title\n\nSome text, changed.\nMore text.\n",
                );
                write(
                    r,
                    "notes.txt",
                    lines(12, "note")
                        .replace("note line 6\n", "six\n")
                        .as_bytes(),
                );
                write(
                    r,
                    "gone.txt",
                    lines(5, "gone")
                        .replace("gone line 2\n", "two\n")
                        .as_bytes(),
                );
                std::fs::remove_file(r.join("old.txt")).unwrap();
                write(r, "fresh.txt", b"fresh\n");
            },
            drift: |r| {
                // Every hunk of notes.txt conflicts; gone.txt is gone; old.txt (deleted by
                // the patch) holds other lines; fresh.txt (added) exists already.
                write(
                    r,
                    "notes.txt",
                    lines(12, "note")
                        .replace("note line 6\n", "SIX\n")
                        .as_bytes(),
                );
                std::fs::remove_file(r.join("gone.txt")).unwrap();
                write(
                    r,
                    "old.txt",
                    lines(4, "old").replace("old line 3\n", "III\n").as_bytes(),
                );
                write(r, "fresh.txt", b"here first\n");
            },
            status: 1,
            rejects: &["notes.txt.rej"],
        },
        Case {
            name: "a rename and a mode change whose hunks conflict",
            setup: |r| {
                base(r);
                write(r, "run.sh", b"#!/bin/sh\necho hi\n");
            },
            change: |r| {
                std::fs::create_dir_all(r.join("core")).unwrap();
                std::fs::remove_file(r.join("src/lib.rs")).unwrap();
                let s = lines(60, "lib")
                    .replace("lib line 5\n", "lib line five\n")
                    .replace("lib line 50\n", "lib line fifty\n");
                write(r, "core/lib.rs", s.as_bytes());
                write(r, "run.sh", b"#!/bin/sh\necho hello\n");
                chmod(r, "run.sh", 0o755);
            },
            drift: |r| {
                lib_with(r, 50, "lib line 50, edited");
                write(r, "run.sh", b"#!/bin/sh\necho bonjour\n");
            },
            status: 1,
            rejects: &["core/lib.rs.rej", "run.sh.rej"],
        },
        Case {
            name: "a clean patch",
            setup: base,
            change: |r| lib_with(r, 20, "lib line twenty"),
            drift: |_| {},
            status: 0,
            rejects: &[],
        },
    ]
}

#[test]
fn apply_yes_reject_leaves_what_git_apply_reject_leaves() {
    for c in &cases() {
        run_case(c);
    }
}

#[test]
fn reject_needs_yes_and_refuses_check() {
    let out = crate::support::run(&["apply", "--reject", "-"], "");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let out = crate::support::run(&["apply", "--yes", "--reject", "--check", "-"], "");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}

/// `patchgate ARGS` in `dir` with its own state directory.
fn patchgate_in(dir: &Path, state: &Path, args: &[&str]) -> std::process::Output {
    crate::support::bin()
        .current_dir(dir)
        .args(args)
        .env("PATCHGATE_STATE_DIR", state)
        .env("PATCHGATE_LOG", state.join("log"))
        .output()
        .unwrap()
}

#[test]
fn a_symlink_planted_at_the_rej_path_is_replaced_not_followed_and_undo_takes_the_rej_back() {
    let dir = tempfile::tempdir().unwrap();
    let (work, state) = (dir.path().join("work"), dir.path().join("state"));
    std::fs::create_dir_all(&work).unwrap();
    let file: String = (1..=20).map(|i| format!("a{i}\n")).collect();
    // The second hunk no longer applies: line 15 changed since.
    std::fs::write(work.join("a.txt"), file.replace("a15\n", "a15 drifted\n")).unwrap();
    std::fs::write(work.join("b.txt"), "precious\n").unwrap();
    std::os::unix::fs::symlink("b.txt", work.join("a.txt.rej")).unwrap();
    let patch = "--- a/a.txt\n+++ b/a.txt\n@@ -1,5 +1,5 @@\n a1\n-a2\n+A2\n a3\n a4\n a5\n\
                 @@ -12,7 +12,7 @@\n a12\n a13\n a14\n-a15\n+patch-controlled\n a16\n a17\n a18\n";
    std::fs::write(dir.path().join("fix.patch"), patch).unwrap();
    let patch_arg = dir.path().join("fix.patch");
    let out = patchgate_in(
        &work,
        &state,
        &[
            "apply",
            "--yes",
            "--reject",
            "--root",
            ".",
            patch_arg.to_str().unwrap(),
        ],
    );
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(work.join("b.txt")).unwrap(),
        "precious\n"
    );
    let rej = work.join("a.txt.rej");
    assert!(
        std::fs::symlink_metadata(&rej).unwrap().is_file(),
        "a regular file"
    );
    let text = std::fs::read_to_string(&rej).unwrap();
    assert!(
        text.starts_with("diff a/a.txt b/a.txt\t(rejected hunks)\n"),
        "{text}"
    );
    assert!(text.contains("+patch-controlled\n"), "{text}");

    // The `.rej` files are a run of their own: undo takes them back.
    let run = said
        .lines()
        .find_map(|l| l.trim().strip_prefix(".rej files: run "))
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_else(|| panic!("no run for the .rej files: {said}"));
    let out = patchgate_in(&work, &state, &["undo", run, "--root", "."]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(std::fs::symlink_metadata(&rej).is_err(), "the .rej is gone");
    assert_eq!(
        std::fs::read_to_string(work.join("b.txt")).unwrap(),
        "precious\n"
    );
    assert!(
        std::fs::read_to_string(work.join("a.txt"))
            .unwrap()
            .contains("A2\n")
    );
}
