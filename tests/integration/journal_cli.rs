//! `patchgate log` and `patchgate undo` on a journal the gate's own code wrote.

use std::path::Path;

use patchgate::edit::text::Text;
use patchgate::review::journal::Journal;
use patchgate::review::proposal::{Decision, FileChange, Proposal};
use patchgate::workspace::paths::Root;
use patchgate::workspace::state::root_key;

use crate::support::bin;

/// Apply `after` to `rel` through a proposal, journaling it where the binary will look.
fn applied(root: &Root, state: &Path, rel: &str, before: &[u8], after: &str) -> Proposal {
    let journal = Journal::at(
        state
            .join("journal")
            .join(format!("{}.jsonl", root_key(root.path()))),
        root,
    );
    let path = root.resolve(rel).unwrap();
    std::fs::write(&path.abs, before).unwrap();
    let change = FileChange::new(
        path,
        Some(before.to_vec()),
        Text::decode(before).unwrap(),
        after.into(),
        vec![],
    );
    let proposal = Proposal::new("fast_apply", Some("test-client".into()), vec![change]).unwrap();
    let (contents, review) = proposal.decided_contents(&Decision::Accept).unwrap();
    let written = proposal.write(&contents, 1 << 20).unwrap();
    journal
        .record_applied(&proposal, Some(&review), &written)
        .unwrap();
    proposal
}

fn run(state: &Path, args: &[&str]) -> std::process::Output {
    bin()
        .args(args)
        .env("PATCHGATE_STATE_DIR", state)
        .output()
        .unwrap()
}

#[test]
fn log_lists_and_undo_restores_byte_for_byte_then_refuses_after_a_later_change() {
    let work = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let root = Root::new(work.path()).unwrap();
    let root_arg = work.path().to_str().unwrap();
    let before = b"\xEF\xBB\xBFfirst\r\nsecond\r\n";
    let p1 = applied(&root, state.path(), "a.txt", before, "first\nSECOND\n");
    let p2 = applied(&root, state.path(), "b.txt", b"x\n", "y\n");

    let out = run(state.path(), &["log", "--root", root_arg]);
    assert!(out.status.success());
    let log = String::from_utf8(out.stdout).unwrap();
    assert!(
        log.contains(&p1.run_id) && log.contains(&p2.run_id) && log.contains("applied"),
        "{log}"
    );

    // Undo the latest (b.txt), then a.txt by run id.
    let out = run(state.path(), &["undo", "--root", root_arg]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read(work.path().join("b.txt")).unwrap(), b"x\n");
    let out = run(state.path(), &["undo", &p1.run_id, "--root", root_arg]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read(work.path().join("a.txt")).unwrap(),
        before.to_vec()
    );

    // A run whose file changed afterwards is refused, and nothing is touched.
    let p3 = applied(&root, state.path(), "c.txt", b"one\n", "two\n");
    std::fs::write(work.path().join("c.txt"), "two\nthree\n").unwrap();
    let out = run(state.path(), &["undo", &p3.run_id, "--root", root_arg]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.lines().last().unwrap().contains("FILE_CHANGED"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(work.path().join("c.txt")).unwrap(),
        "two\nthree\n"
    );

    let out = run(state.path(), &["log", "--root", root_arg, "--json"]);
    let actions: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["action"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(
        actions,
        ["applied", "applied", "undone", "undone", "applied"]
    );
}

#[test]
fn log_writes_out_control_characters_of_notes_paths_and_tools() {
    let work = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let root = Root::new(work.path()).unwrap();
    let journal = Journal::at(
        state
            .path()
            .join("journal")
            .join(format!("{}.jsonl", root_key(root.path()))),
        &root,
    );
    // A file name, a tool name and a reject note carrying terminal escape sequences.
    let rel = "evil\u{1b}[2Jname.txt";
    let path = root.resolve(rel).unwrap();
    std::fs::write(&path.abs, "old\n").unwrap();
    let change = FileChange::new(
        path,
        Some(b"old\n".to_vec()),
        Text::decode(b"old\n").unwrap(),
        "new\n".into(),
        vec![],
    );
    let proposal = Proposal::new("fast_apply\u{1b}]0;title\u{7}", None, vec![change]).unwrap();
    let decision = Decision::Reject("looks fine\u{1b}[31m\rREAD THIS\nsecond line".into());
    let (_, mut review) = proposal.decided_contents(&decision).unwrap();
    review.note = "looks fine\u{1b}[31m\rREAD THIS\nsecond line".into();
    journal.record_rejected(&proposal, &review).unwrap();

    let out = run(
        state.path(),
        &["log", "--root", work.path().to_str().unwrap()],
    );
    assert!(out.status.success());
    let log = String::from_utf8(out.stdout).unwrap();
    assert!(!log.chars().any(|c| c.is_control() && c != '\n'), "{log:?}");
    assert!(log.contains("evil\\u{1b}[2Jname.txt"), "{log}");
    assert!(
        log.contains("looks fine\\u{1b}[31m\\u{d}READ THIS"),
        "{log}"
    );
    // The note's second line stays a line of its own, indented under the entry.
    assert!(log.contains("\n      second line"), "{log}");
}

#[test]
fn log_json_carries_no_pre_images() {
    let work = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let root = Root::new(work.path()).unwrap();
    // An entry as older versions wrote it: the pre-image inline, in base64.
    let journal = state
        .path()
        .join("journal")
        .join(format!("{}.jsonl", root_key(root.path())));
    std::fs::create_dir_all(journal.parent().unwrap()).unwrap();
    std::fs::write(
        &journal,
        "{\"ts\":1,\"run_id\":\"r1\",\"action\":\"applied\",\"tool\":\"t\",\"files\":[{\"path\":\"a.txt\",\"before\":\"b2xkCg==\",\"after_hash\":null}]}\n",
    )
    .unwrap();
    let out = run(
        state.path(),
        &["log", "--json", "--root", work.path().to_str().unwrap()],
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let v: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
    assert_eq!(v["run_id"], "r1");
    assert_eq!(v["files"][0]["path"], "a.txt");
    assert!(v["files"][0].get("before").is_none(), "{text}");
}

/// `patchgate log | head`: a reader that went away ends the listing with exit 0.
#[test]
fn log_into_a_closed_pipe_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let (root_dir, state) = (dir.path().join("root"), dir.path().join("state"));
    std::fs::create_dir_all(&root_dir).unwrap();
    let root = Root::new(&root_dir).unwrap();
    applied(&root, &state, "a.txt", b"one\n", "two\n");
    for empty in [false, true] {
        let state = if empty {
            dir.path().join("empty")
        } else {
            state.clone()
        };
        // The reading end is closed before the child starts: its first write fails.
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = bin()
            .args(["log", "--root"])
            .arg(&root_dir)
            .env("PATCHGATE_STATE_DIR", &state)
            .stdout(writer)
            .stderr(std::process::Stdio::piped())
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Another user (or a careless environment) made the state directory writable by everyone,
/// as the shared temp directory's `patchgate-state` would be when `HOME` is unset: no command
/// that reads state uses it, and the gate never starts on it (nor replays what is in it).
#[cfg(unix)]
#[test]
fn a_state_directory_others_can_write_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(root.join("main.py"), "print('mine')\n").unwrap();
    let state = tmp.path().join("patchgate-state");
    std::fs::create_dir(&state).unwrap();
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o777)).unwrap();
    for args in [
        vec!["log", "--root"],
        vec!["serve", "--stdio", "--root"],
        vec!["search", "print", "--root"],
    ] {
        let mut args = args;
        let root_arg = root.to_str().unwrap();
        args.push(root_arg);
        let out = run(&state, &args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("refusing the state directory") && err.contains("other users"),
            "{args:?}: {err}"
        );
    }
    // Nothing was written into it.
    assert_eq!(std::fs::read_dir(&state).unwrap().count(), 0);
    // Made private, the same directory is used.
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o700)).unwrap();
    let out = run(&state, &["log", "--root", root.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// 250,000 lines of two bytes (500 KB), each line `k` with `k % 4 == at` marked `m` for
/// every `(at, m)` of `marks`.
fn marked(marks: &[(usize, char)]) -> String {
    const CHARS: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    (0..250_000)
        .map(|k| {
            let mark = marks
                .iter()
                .find(|(at, _)| k % 4 == *at)
                .map_or(char::from(CHARS[k % CHARS.len()]), |(_, m)| *m);
            format!("{mark}\n")
        })
        .collect()
}

#[test]
fn an_undo_of_125000_edits_finishes_and_leaves_the_file_whole() {
    // The run changed every fourth line of a 500 KB file; a later change every line two
    // below: taking the run back merges 125,000 edits in 250,000 regions (20 s in a release
    // build with a lookup per region that scans every edit, as `similar::TextMerge` did).
    let work = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let root = Root::new(work.path()).unwrap();
    let root_arg = work.path().to_str().unwrap();
    let found = marked(&[]);
    let written = marked(&[(0, '!')]);
    let p = applied(&root, state.path(), "a.txt", found.as_bytes(), &written);
    let now = marked(&[(0, '!'), (2, '~')]);
    std::fs::write(work.path().join("a.txt"), &now).unwrap();
    let out = run(state.path(), &["undo", &p.run_id, "--root", root_arg]);
    let file = std::fs::read_to_string(work.path().join("a.txt")).unwrap();
    if out.status.success() {
        assert_eq!(file, marked(&[(2, '~')]));
    } else {
        // Refused: the file is as it was.
        assert_eq!(file, now, "{}", String::from_utf8_lossy(&out.stderr));
    }
}

/// `undo` and `rewind` store no pre-image, so they cannot take the store past the cap the
/// gate keeps it under (`journal_max_bytes`): their `undone` entries name the run's own
/// stored copies, and the store is left as it was, even when the undo merges a later change
/// (a result no copy holds). A reader's finding said they ignored the cap; they never store.
#[test]
fn undo_and_rewind_store_nothing_past_the_pre_images_cap() {
    for command in ["undo", "rewind"] {
        let work = tempfile::tempdir().unwrap();
        let state = tempfile::tempdir().unwrap();
        let root = Root::new(work.path()).unwrap();
        let body: String = (0..200).map(|i| format!("line {i}\n")).collect();
        let p = applied(
            &root,
            state.path(),
            "a.txt",
            format!("first\n{body}").as_bytes(),
            &format!("FIRST\n{body}"),
        );
        let store = state
            .path()
            .join("journal")
            .join(format!("{}.preimages", root_key(root.path())));
        let listed = || {
            let mut files: Vec<(std::ffi::OsString, u64)> = std::fs::read_dir(&store)
                .unwrap()
                .flatten()
                .map(|e| (e.file_name(), e.metadata().unwrap().len()))
                .collect();
            files.sort();
            files
        };
        let before = listed();
        assert_eq!(before.len(), 2, "{command}: the run's two copies");
        // A hand edit far from the run's line: the undo merges, writing content no copy holds.
        std::fs::write(work.path().join("a.txt"), format!("FIRST\n{body}by hand\n")).unwrap();
        let out = run(
            state.path(),
            &[command, &p.run_id, "--root", work.path().to_str().unwrap()],
        );
        assert!(
            out.status.success(),
            "{command}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            std::fs::read_to_string(work.path().join("a.txt")).unwrap(),
            format!("first\n{body}by hand\n"),
            "{command}"
        );
        assert_eq!(
            listed(),
            before,
            "{command} stored into the pre-image store"
        );
    }
}
