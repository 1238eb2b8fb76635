//! `patchgate apply --yes` against `git apply`, byte for byte: each case builds a git
//! repository, makes a change, takes `git diff` (or `git format-patch`), resets, then applies
//! the patch to two copies of the tree — one with git, one with patchgate — and compares every
//! file's bytes and executable bit. A patch git refuses must be refused too, touching nothing.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub(crate) fn git(dir: &Path, args: &[&str]) -> Output {
    Command::new("git")
        .current_dir(dir)
        .args(["-c", "core.autocrlf=false", "-c", "core.safecrlf=false"])
        .args(args)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .expect("run git")
}

pub(crate) fn ok(out: Output, what: &str) -> Output {
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

pub(crate) fn write(root: &Path, rel: &str, bytes: &[u8]) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, bytes).unwrap();
}

pub(crate) fn chmod(root: &Path, rel: &str, mode: u32) {
    std::fs::set_permissions(root.join(rel), std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Every file under `root` (but `.git`): its bytes and whether it is executable.
pub(crate) fn tree(root: &Path) -> BTreeMap<String, (Vec<u8>, bool)> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, (Vec<u8>, bool)>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let e = e.unwrap();
            let p = e.path();
            if e.file_name() == ".git" {
                continue;
            }
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let exec = e.metadata().unwrap().permissions().mode() & 0o111 != 0;
                let rel = p.strip_prefix(root).unwrap().display().to_string();
                out.insert(rel, (std::fs::read(&p).unwrap(), exec));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

pub(crate) fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_name() == ".git" {
            continue;
        }
        let dst = to.join(e.file_name());
        if e.path().is_dir() {
            copy_tree(&e.path(), &dst);
        } else {
            std::fs::copy(e.path(), &dst).unwrap(); // keeps the mode
        }
    }
}

/// How the patch is taken.
#[derive(Clone, Copy)]
enum Take {
    /// `git diff --cached -M HEAD` after `git add -A`.
    Diff,
    /// `git diff --cached --no-prefix` (applied with `-p0`).
    NoPrefix,
    /// The change committed, then `git format-patch -1 --stdout`.
    Mail,
}

struct Case {
    name: &'static str,
    setup: fn(&Path),
    change: fn(&Path),
    take: Take,
    /// Done to both copies before applying (the target moved, or conflicts).
    drift: Option<fn(&Path)>,
    /// Extra arguments for both (`-R`).
    reverse: bool,
    /// Both must refuse.
    refused: bool,
}

impl Case {
    fn new(name: &'static str, setup: fn(&Path), change: fn(&Path)) -> Case {
        Case {
            name,
            setup,
            change,
            take: Take::Diff,
            drift: None,
            reverse: false,
            refused: false,
        }
    }
}

/// A git repository at `dir/repo` holding what `setup` writes, committed as its base.
pub(crate) fn base_repo(dir: &Path, setup: fn(&Path)) -> std::path::PathBuf {
    let repo = dir.join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    ok(git(&repo, &["init", "-q"]), "git init");
    setup(&repo);
    ok(git(&repo, &["add", "-A"]), "git add");
    ok(
        git(&repo, &["commit", "-q", "--allow-empty", "-m", "base"]),
        "commit",
    );
    repo
}

fn run_case(c: &Case) {
    let dir = tempfile::tempdir().unwrap();
    let repo = base_repo(dir.path(), c.setup);
    (c.change)(&repo);
    ok(git(&repo, &["add", "-A"]), "git add");
    let patch = match c.take {
        Take::Diff => ok(git(&repo, &["diff", "--cached", "-M", "HEAD"]), "diff").stdout,
        Take::NoPrefix => {
            ok(
                git(&repo, &["diff", "--cached", "-M", "--no-prefix", "HEAD"]),
                "diff",
            )
            .stdout
        }
        Take::Mail => {
            ok(
                git(
                    &repo,
                    &["commit", "-q", "-m", "the change\n\nWhy it is made."],
                ),
                "commit",
            );
            let mail = ok(
                git(&repo, &["format-patch", "-1", "-M", "--stdout"]),
                "format-patch",
            )
            .stdout;
            ok(git(&repo, &["reset", "-q", "--hard", "HEAD~1"]), "reset");
            mail
        }
    };
    assert!(!patch.is_empty(), "{}: empty patch", c.name);
    let patch_file = dir.path().join("change.patch");
    std::fs::write(&patch_file, &patch).unwrap();
    // Back to the base tree: for -R, the changed tree is the starting point.
    if !c.reverse {
        ok(git(&repo, &["reset", "-q", "--hard", "HEAD"]), "reset");
        ok(git(&repo, &["clean", "-qfdx"]), "clean");
    }
    let (with_git, with_pg) = (dir.path().join("git"), dir.path().join("pg"));
    copy_tree(&repo, &with_git);
    copy_tree(&repo, &with_pg);
    if let Some(drift) = c.drift {
        drift(&with_git);
        drift(&with_pg);
    }
    let before = tree(&with_pg);

    let mut git_args = vec!["apply".to_string()];
    let mut pg_args = vec!["apply".to_string(), "--yes".to_string()];
    if matches!(c.take, Take::NoPrefix) {
        git_args.push("-p0".into());
        pg_args.extend(["-p".into(), "0".into()]);
    }
    if c.reverse {
        git_args.push("-R".into());
        pg_args.push("--reverse".into());
    }
    git_args.push(patch_file.display().to_string());
    let g = Command::new("git")
        .current_dir(&with_git)
        .args(&git_args)
        .output()
        .unwrap();
    let state = dir.path().join("state");
    let p = crate::support::bin()
        .current_dir(&with_pg)
        .args(&pg_args)
        .arg(&patch_file)
        .args(["--root", "."])
        .env("PATCHGATE_STATE_DIR", &state)
        .env("PATCHGATE_LOG", state.join("log"))
        .output()
        .unwrap();
    let text = |o: &Output| {
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    };
    let patch_text = String::from_utf8_lossy(&patch);
    if c.refused {
        assert!(!g.status.success(), "{}: git applied it", c.name);
        assert_eq!(
            p.status.code(),
            Some(1),
            "{}: patchgate did not refuse: {}",
            c.name,
            text(&p)
        );
        assert_eq!(tree(&with_pg), before, "{}: a refused patch wrote", c.name);
        return;
    }
    assert!(
        g.status.success(),
        "{}: git apply failed: {}\n{patch_text}",
        c.name,
        text(&g)
    );
    assert!(
        p.status.success(),
        "{}: patchgate apply failed: {}\n{patch_text}",
        c.name,
        text(&p)
    );
    same_trees(c.name, &tree(&with_git), &tree(&with_pg), "");
}

/// Every file git left is patchgate's too, byte for byte and with its executable bit, and
/// patchgate left no other (`name` names the case; `says` is added to a missing file's
/// message).
pub(crate) fn same_trees(
    name: &str,
    tg: &BTreeMap<String, (Vec<u8>, bool)>,
    tp: &BTreeMap<String, (Vec<u8>, bool)>,
    says: &str,
) {
    for (path, g) in tg {
        let Some(p) = tp.get(path) else {
            panic!("{name}: {path} is missing after patchgate: {says}");
        };
        assert!(
            p.0 == g.0,
            "{name}: {path} differs:\n git: {:?}\n pg:  {:?}",
            String::from_utf8_lossy(&g.0),
            String::from_utf8_lossy(&p.0)
        );
        assert_eq!(p.1, g.1, "{name}: {path}: executable bit differs");
    }
    let extra: Vec<&String> = tp.keys().filter(|k| !tg.contains_key(*k)).collect();
    assert!(extra.is_empty(), "{name}: patchgate left {extra:?}");
}

pub(crate) fn lines(n: usize, word: &str) -> String {
    (1..=n).map(|i| format!("{word} line {i}\n")).collect()
}

pub(crate) fn base(r: &Path) {
    write(r, "src/lib.rs", lines(60, "lib").as_bytes());
    write(r, "README.md", b"# Title\n\nSome text.\nMore text.\n");
    write(r, "notes.txt", lines(12, "note").as_bytes());
}

fn cases() -> Vec<Case> {
    let mut v = vec![
        Case::new("one changed line", base, |r| {
            write(r, "README.md", b"# Title\n\nSome other text.\nMore text.\n")
        }),
        Case::new("three hunks in one file", base, |r| {
            let s = lines(60, "lib")
                .replace("lib line 3\n", "lib line three\n")
                .replace("lib line 30\n", "lib line 30\nan added line\n")
                .replace("lib line 57\n", "");
            write(r, "src/lib.rs", s.as_bytes())
        }),
        Case::new("several files", base, |r| {
            write(r, "README.md", b"# New title\n\nSome text.\nMore text.\n");
            write(r, "notes.txt", lines(13, "note").as_bytes());
        }),
        Case::new("a new file in a new directory", base, |r| {
            write(r, "docs/guide/intro.md", b"# Intro\n\nHello.\n")
        }),
        Case::new("a new empty file", base, |r| write(r, "empty.txt", b"")),
        Case::new("a deleted file", base, |r| {
            std::fs::remove_file(r.join("notes.txt")).unwrap()
        }),
        Case::new(
            "a deleted file without a final newline",
            |r| {
                base(r);
                write(r, "tail.txt", b"one\ntwo");
            },
            |r| std::fs::remove_file(r.join("tail.txt")).unwrap(),
        ),
        Case::new("a pure rename", base, |r| {
            std::fs::rename(r.join("notes.txt"), r.join("docs/notes.txt")).unwrap_or_else(|_| {
                std::fs::create_dir_all(r.join("docs")).unwrap();
                std::fs::rename(r.join("notes.txt"), r.join("docs/notes.txt")).unwrap()
            })
        }),
        Case::new("a rename with edits", base, |r| {
            std::fs::remove_file(r.join("src/lib.rs")).unwrap();
            let s = lines(60, "lib").replace("lib line 20\n", "lib line twenty\n");
            write(r, "src/core.rs", s.as_bytes());
        }),
        Case::new(
            "a CRLF file",
            |r| write(r, "win.txt", b"alpha\r\nbeta\r\ngamma\r\ndelta\r\n"),
            |r| write(r, "win.txt", b"alpha\r\nBETA\r\ngamma\r\nnew\r\ndelta\r\n"),
        ),
        Case::new(
            "adding the final newline",
            |r| write(r, "f.txt", b"one\ntwo\nthree"),
            |r| write(r, "f.txt", b"one\ntwo\nthree\n"),
        ),
        Case::new(
            "removing the final newline",
            |r| write(r, "f.txt", b"one\ntwo\nthree\n"),
            |r| write(r, "f.txt", b"one\ntwo\nTHREE"),
        ),
        Case::new(
            "an executable bit",
            |r| write(r, "run.sh", b"#!/bin/sh\necho hi\n"),
            |r| chmod(r, "run.sh", 0o755),
        ),
        Case::new(
            "an executable bit and an edit",
            |r| write(r, "run.sh", b"#!/bin/sh\necho hi\n"),
            |r| {
                write(r, "run.sh", b"#!/bin/sh\necho hello\n");
                chmod(r, "run.sh", 0o755);
            },
        ),
        Case::new("a new executable file", base, |r| {
            write(r, "tool.sh", b"#!/bin/sh\nexit 0\n");
            chmod(r, "tool.sh", 0o755);
        }),
        Case::new(
            "Unicode",
            |r| {
                write(
                    r,
                    "i18n.txt",
                    "naïve café\n日本語のテキスト\nemoji 🎉\nend\n".as_bytes(),
                )
            },
            |r| {
                write(
                    r,
                    "i18n.txt",
                    "naïve café ☕\n日本語の文章\nemoji 🎉🎉\nend\n".as_bytes(),
                )
            },
        ),
        Case::new(
            "tabs and trailing spaces",
            |r| write(r, "Makefile", b"all:\n\tcc -o x x.c   \n\techo done\n"),
            |r| write(r, "Makefile", b"all:\n\tcc -O2 -o x x.c   \n\techo done \n"),
        ),
    ];
    let mut moved = Case::new("the target moved by a few lines", base, |r| {
        let s = lines(60, "lib").replace("lib line 40\n", "lib line forty\n");
        write(r, "src/lib.rs", s.as_bytes())
    });
    moved.drift = Some(|r| {
        let s = std::fs::read_to_string(r.join("src/lib.rs")).unwrap();
        write(
            r,
            "src/lib.rs",
            format!("// header\n// more\n// and more\n{s}").as_bytes(),
        );
    });
    v.push(moved);
    let mut conflict = Case::new("a conflicting patch", base, |r| {
        write(
            r,
            "README.md",
            b"# Title changed\n\nSome text.\nMore text.\n",
        );
        write(
            r,
            "notes.txt",
            lines(12, "note")
                .replace("note line 6\n", "six\n")
                .as_bytes(),
        );
    });
    conflict.drift = Some(|r| {
        let s = lines(12, "note").replace("note line 6\n", "SIX, edited meanwhile\n");
        write(r, "notes.txt", s.as_bytes());
    });
    conflict.refused = true;
    v.push(conflict);
    let mut mail = Case::new("git format-patch mail", base, |r| {
        write(
            r,
            "README.md",
            b"# Title\n\nSome text, mailed.\nMore text.\n",
        );
        write(r, "src/new.rs", b"pub fn new() {}\n");
        std::fs::remove_file(r.join("notes.txt")).unwrap();
    });
    mail.take = Take::Mail;
    v.push(mail);
    let mut no_prefix = Case::new("a diff without a/ b/ prefixes, -p0", base, |r| {
        write(
            r,
            "src/lib.rs",
            lines(60, "lib")
                .replace("lib line 1\n", "first\n")
                .as_bytes(),
        )
    });
    no_prefix.take = Take::NoPrefix;
    v.push(no_prefix);
    let mut reverse = Case::new("reversed", base, |r| {
        write(r, "README.md", b"# Title\n\nReversed text.\nMore text.\n");
        write(r, "added.txt", b"added\n");
    });
    reverse.reverse = true;
    v.push(reverse);
    v
}

#[test]
fn patchgate_apply_matches_git_apply_byte_for_byte() {
    let all = cases();
    assert!(all.len() >= 20, "{} cases", all.len());
    for c in &all {
        run_case(c);
    }
}

#[test]
fn check_reports_without_writing_and_fails_on_a_conflict() {
    let dir = tempfile::tempdir().unwrap();
    let root: PathBuf = dir.path().join("w");
    write(&root, "a.txt", b"one\ntwo\nthree\n");
    let patch = dir.path().join("p.diff");
    std::fs::write(
        &patch,
        "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n",
    )
    .unwrap();
    let state = dir.path().join("state");
    let run = || {
        crate::support::bin()
            .args(["apply", "--check", "--root"])
            .arg(&root)
            .arg(&patch)
            .env("PATCHGATE_STATE_DIR", &state)
            .output()
            .unwrap()
    };
    let out = run();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("applies  a.txt  +1 -1"));
    assert_eq!(
        std::fs::read(root.join("a.txt")).unwrap(),
        b"one\ntwo\nthree\n"
    );
    write(&root, "a.txt", b"one\nzwei\nthree\n");
    let out = run();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("does not apply  a.txt") && err.contains("NO_MATCH"),
        "{err}"
    );
}

#[test]
fn codex_patches_aider_blocks_and_lazy_snippets_apply_headless() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("w");
    let state = dir.path().join("state");
    write(
        &root,
        "app.py",
        b"def main():\n    print(\"hi\")\n\n\nmain()\n",
    );
    write(&root, "old.txt", b"gone\n");
    write(
        &root,
        "lib.rs",
        b"fn a() {\n    1\n}\n\nfn b() {\n    2\n}\n",
    );
    let apply = |input: &str, extra: &[&str]| {
        let mut cmd = crate::support::bin();
        cmd.args(["apply", "--yes", "--root"])
            .arg(&root)
            .args(extra)
            .arg("-")
            .env("PATCHGATE_STATE_DIR", &state);
        let out = crate::support::run_cmd(cmd, input);
        assert!(
            out.status.success(),
            "{input}\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let read = |rel: &str| std::fs::read_to_string(root.join(rel)).unwrap();

    apply(
        "*** Begin Patch\n*** Update File: app.py\n@@ def main():\n-    print(\"hi\")\n+    print(\"hello\")\n\
         *** Add File: notes/todo.md\n+- ship it\n*** Delete File: old.txt\n*** End Patch\n",
        &[],
    );
    assert_eq!(
        read("app.py"),
        "def main():\n    print(\"hello\")\n\n\nmain()\n"
    );
    assert_eq!(read("notes/todo.md"), "- ship it\n");
    assert!(!root.join("old.txt").exists());
    // Deleting it again fails, as `git apply` does, and nothing else of the patch is written.
    std::fs::write(
        dir.path().join("again.patch"),
        "*** Begin Patch\n*** Add File: new.txt\n+x\n*** Delete File: old.txt\n*** End Patch\n",
    )
    .unwrap();
    let out = crate::support::bin()
        .args(["apply", "--yes", "--root"])
        .arg(&root)
        .arg(dir.path().join("again.patch"))
        .env("PATCHGATE_STATE_DIR", &state)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("deletes `old.txt`, which does not exist"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!root.join("new.txt").exists());

    apply(
        "Here is the change.\n\napp.py\n```python\n<<<<<<< SEARCH\nmain()\n=======\nif __name__ == \"__main__\":\n    main()\n>>>>>>> REPLACE\n```\n\n\
         CHANGES.md\n```\n<<<<<<< SEARCH\n=======\n# Changes\n>>>>>>> REPLACE\n```\n",
        &[],
    );
    assert!(read("app.py").ends_with("if __name__ == \"__main__\":\n    main()\n"));
    assert_eq!(read("CHANGES.md"), "# Changes\n");

    apply(
        "// ... existing code ...\nfn b() {\n    2 + 2\n}\n",
        &["--file", "lib.rs"],
    );
    assert_eq!(
        read("lib.rs"),
        "fn a() {\n    1\n}\n\nfn b() {\n    2 + 2\n}\n"
    );
}

#[test]
fn only_git_modes_are_applied_and_a_mode_change_shows_in_the_diff() {
    let dir = tempfile::tempdir().unwrap();
    let root: PathBuf = dir.path().join("w");
    write(&root, "run.sh", b"echo hi\n");
    chmod(&root, "run.sh", 0o644);
    let state = dir.path().join("state");
    let apply = |patch: &str| {
        let file = dir.path().join("p.diff");
        std::fs::write(&file, patch).unwrap();
        crate::support::bin()
            .args(["apply", "--yes", "--root"])
            .arg(&root)
            .arg(&file)
            .env("PATCHGATE_STATE_DIR", &state)
            .output()
            .unwrap()
    };
    let mode = || {
        std::fs::metadata(root.join("run.sh"))
            .unwrap()
            .permissions()
            .mode()
            & 0o7777
    };
    // setuid, setgid, sticky, world-writable: refused, nothing touched.
    for bad in ["104755", "102755", "101755", "100777", "100600", "120000"] {
        let out = apply(&format!(
            "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode {bad}\n"
        ));
        assert_eq!(out.status.code(), Some(1), "{bad}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("only 100644 and 100755"), "{bad}: {err}");
        assert_eq!(mode(), 0o644, "{bad}");
    }
    // A new setuid file is refused the same way.
    let out = apply(
        "diff --git a/s.sh b/s.sh\nnew file mode 104755\n--- /dev/null\n+++ b/s.sh\n@@ -0,0 +1 @@\n+x\n",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(!root.join("s.sh").exists());
    // 100755 is applied.
    let out = apply("diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(mode(), 0o755);
}
