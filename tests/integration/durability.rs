//! What the gate tells about a decision holds on disk (docs/DESIGN.md §4, §7): an edit whose
//! journal line cannot be written is put back and fails, a rejection the journal cannot hold
//! is not made, and the temp files a crash left beside the journal are swept at a gate's
//! start; concurrent edits over HTTP, their syncs shared, each end whole in the journal; an
//! applied edit is answered only after the syncs that make it durable (recorded, in order:
//! a test that fails when a sync is removed). Through the library's gate on real files, as
//! the crash tests drive it, and the real binary.

use std::path::Path;

use patchgate::error::ErrorCode;
use patchgate::review::edit::{EditOp, ProposedEdit};
use patchgate::review::journal::Journal;
use patchgate::review::policy::Policy;
use patchgate::review::proposal::Decision;
use patchgate::review::queue::{Gate, Outcome, Request};
use patchgate::workspace::Workspace;
use patchgate::workspace::config::{Config, PolicyName};
#[cfg(unix)]
use patchgate::workspace::synced::Event;

/// A gate over `dir/work` with `policy`, journaling to `dir/journal.jsonl`.
fn gate(dir: &Path, policy: PolicyName) -> Gate {
    let work = dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let ws = Workspace::new(&work, Config::default()).unwrap();
    let journal = Journal::at(dir.join("journal.jsonl"), &ws.root);
    Gate::new(ws, Policy::simple(policy), journal, None)
}

fn request(edits: &[(&str, &str)]) -> Request {
    Request {
        tool: "test".into(),
        client: None,
        edits: edits
            .iter()
            .map(|(path, content)| ProposedEdit {
                path: (*path).into(),
                op: EditOp::Write((*content).into()),
            })
            .collect(),
        dry_run: false,
        keep_failure: false,
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// The journal can no longer be appended to: a directory stands where its file was.
fn break_the_journal(dir: &Path) {
    let journal = dir.join("journal.jsonl");
    if journal.exists() {
        std::fs::remove_file(&journal).unwrap();
    }
    std::fs::create_dir(&journal).unwrap();
}

/// An edit applied at once whose journal line cannot be written (here the append fails; a
/// failed sync of it fails it the same way) is not reported applied: its files, a batch's
/// every file, are put back and the agent hears why. Regression: the journal's error was
/// only logged, and the agent was told the edit was applied though no line held it (no undo,
/// nothing after a crash).
#[test]
fn an_edit_the_journal_cannot_hold_is_put_back_and_fails() {
    let dir = tempfile::tempdir().unwrap();
    let gate = gate(dir.path(), PolicyName::Auto);
    let work = dir.path().join("work");
    std::fs::write(work.join("a.txt"), "a\n").unwrap();
    std::fs::write(work.join("b.txt"), "b\n").unwrap();
    let rt = runtime();
    // Lines added only: no deletion holds them for a person.
    let first = rt.block_on(gate.submit(request(&[("a.txt", "a\n1\n")])));
    assert!(matches!(first, Ok(Outcome::Applied(_))), "{first:?}");
    break_the_journal(dir.path());
    for edits in [
        &[("a.txt", "a\n1\n2\n")][..],
        &[
            ("a.txt", "a\n1\n2\n"),
            ("b.txt", "b\n2\n"),
            ("c.txt", "new\n"),
        ][..],
    ] {
        let e = match rt.block_on(gate.submit(request(edits))) {
            Err(e) => e,
            Ok(Outcome::Failed(_, e)) => e,
            Ok(other) => panic!("an edit no journal line holds was reported: {other:?}"),
        };
        assert_eq!(e.code, ErrorCode::FsError, "{}", e.message);
        assert!(e.message.contains("journal"), "{}", e.message);
        assert!(e.message.contains("put back"), "{}", e.message);
        let now = |f: &str| std::fs::read_to_string(work.join(f)).ok();
        assert_eq!(now("a.txt").as_deref(), Some("a\n1\n"));
        assert_eq!(now("b.txt").as_deref(), Some("b\n"));
        assert_eq!(now("c.txt"), None, "a file the edit made stays");
    }
    // Every batch intent went with its put-back files.
    let intents = dir.path().join("journal.intents");
    let left = std::fs::read_dir(&intents).map_or(0, Iterator::count);
    assert_eq!(left, 0, "an intent was left in {}", intents.display());
}

/// A rejection the journal cannot hold is not made: the person hears why and the review
/// still waits. Regression: the journal's error was dropped and the review closed as
/// rejected, which a restarted gate would not know.
#[test]
fn a_rejection_the_journal_cannot_hold_is_not_made() {
    let dir = tempfile::tempdir().unwrap();
    let gate = gate(dir.path(), PolicyName::Gate);
    std::fs::write(dir.path().join("work/a.txt"), "a\n").unwrap();
    let rt = runtime();
    let run = match rt.block_on(gate.submit(request(&[("a.txt", "a\n1\n")]))) {
        Ok(Outcome::Pending(s)) => s.run_id,
        other => panic!("{other:?}"),
    };
    break_the_journal(dir.path());
    let refused = gate.decide(&run, Decision::Reject("no".into()));
    assert!(
        matches!(&refused, Err(e) if e.code == ErrorCode::FsError),
        "{refused:?}"
    );
    assert!(
        matches!(gate.status(&run), Outcome::Pending(_)),
        "{:?}",
        gate.status(&run)
    );
}

/// Temp files of patchgate's a crash left are swept when a gate starts: under the root and
/// in the journal's pre-image store, stale ones only (a young one may be another process's
/// write under way), never a user's file. Regression: the pre-image store was never swept,
/// and under the root every temp went whatever its age (another process's write failed).
#[test]
fn a_gate_starting_sweeps_the_stale_temp_files_a_crash_left() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    let store = dir.path().join("journal.preimages");
    std::fs::create_dir_all(work.join("src")).unwrap();
    std::fs::create_dir_all(&store).unwrap();
    let hash = "0f".repeat(32);
    let stale = [
        work.join("src/.main.rs.patchgate-a1b2c3.tmp"),
        store.join(format!(".{hash}.patchgate-Q1w2E3.tmp")),
        store.join(format!("{hash}.Q1w2E3.tmp")),
    ];
    let kept = [
        work.join("src/.lib.rs.patchgate-d4e5f6.tmp"),
        store.join(format!(".{hash}.patchgate-R4t5Y6.tmp")),
        work.join("src/draft.tmp"),
    ];
    for p in stale.iter().chain(&kept) {
        std::fs::write(p, "half").unwrap();
    }
    let long_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    for p in stale.iter().chain([&kept[2]]) {
        let f = std::fs::File::options().append(true).open(p).unwrap();
        f.set_modified(long_ago).unwrap();
    }
    let _gate = gate(dir.path(), PolicyName::Auto);
    for p in &stale {
        assert!(!p.exists(), "{} was left", p.display());
    }
    for p in &kept {
        assert!(p.exists(), "{} was removed", p.display());
    }
}

/// Where the last sync of `path`'s file or directory falls in `events` (its index) and the
/// length it had then; `None` when it was not synced. A directory is matched by its path
/// (the recorder keeps the path each synced descriptor had), a file by its identity among
/// the syncs of files under `base` (the test's own directory: a file synced before its
/// rename has its temporary name), so a file of another test running beside this one that
/// had the same inode number before is never taken for it.
fn last_sync(events: &[Event], path: &Path, base: &Path) -> Option<(usize, u64)> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).unwrap();
    let canonical = path.canonicalize().unwrap();
    events.iter().enumerate().rev().find_map(|(i, e)| match e {
        Event::Synced(s) => {
            let at = s.path.as_deref()?;
            let same = if m.is_dir() {
                at == canonical
            } else {
                s.dev == m.dev() && s.ino == m.ino() && at.starts_with(base)
            };
            same.then_some((i, s.len))
        }
        Event::Made(_) => None,
    })
}

/// The file at `path` was synced whole (its data at its length now), and after that the
/// directory it was renamed into: what the answer called written survives a crash.
fn synced_then_its_directory(events: &[Event], base: &Path, path: &Path, what: &str) {
    let len = std::fs::metadata(path).unwrap().len();
    let (at, synced_len) = last_sync(events, path, base)
        .unwrap_or_else(|| panic!("{what}: its data was never synced"));
    assert_eq!(synced_len, len, "{what}: synced at another length");
    let dir = path.parent().unwrap();
    let (dir_at, _) = last_sync(events, dir, base)
        .unwrap_or_else(|| panic!("{what}: its directory was never synced"));
    assert!(
        dir_at > at,
        "{what}: its directory was not synced after its data (its rename)"
    );
}

/// The directory `made` was made by the gate (recorded as made), and the directory holding
/// it was synced after that: its entry there survives a crash.
fn made_then_its_parent_synced(events: &[Event], made: &Path, what: &str) {
    let made = made.canonicalize().unwrap();
    let parent = made.parent().unwrap();
    let at = events
        .iter()
        .position(|e| *e == Event::Made(made.clone()))
        .unwrap_or_else(|| panic!("{what}: {} was never made", made.display()));
    assert!(
        events[at + 1..]
            .iter()
            .any(|e| matches!(e, Event::Synced(s) if s.path.as_deref() == Some(parent))),
        "{what}: {} was not synced after {} was made in it",
        parent.display(),
        made.display()
    );
}

/// What an applied edit's answer says is on disk was synced before the answer, in an order
/// a crash cannot undo (each sync is recorded through the one place every sync goes,
/// `workspace::synced`): the file's data, then the directory it was renamed into; the
/// pre-images its journal line names, then their store's directory; the journal's line
/// (its file synced at its length with the line); and the directories the gate made for its
/// state, each in its parent. Unlike a crash test (a killed process loses nothing the
/// kernel holds), this fails when a sync is removed: the other tests here passed with every
/// sync a no-op.
#[cfg(unix)]
#[test]
fn an_applied_edits_answer_comes_after_the_syncs_that_make_it_durable() {
    let recording = patchgate::workspace::synced::record();
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let ws = Workspace::new(&work, Config::default()).unwrap();
    // The state's directories do not exist yet: the gate makes them.
    let state = dir.path().join("state");
    let journal_path = state.join("journal/j.jsonl");
    let journal = Journal::at(journal_path.clone(), &ws.root);
    let gate = Gate::new(ws, Policy::simple(PolicyName::Auto), journal.clone(), None);
    std::fs::write(work.join("a.txt"), "a\n").unwrap();
    let rt = runtime();
    let mut content = String::from("a\n");
    for k in 0..3 {
        content.push_str(&format!("line {k}\n"));
        let done = rt.block_on(gate.submit(request(&[("a.txt", content.as_str())])));
        assert!(matches!(done, Ok(Outcome::Applied(_))), "{done:?}");
        let events = recording.events();
        let a = work.join("a.txt");
        synced_then_its_directory(&events, &base, &a, &format!("edit {k}: a.txt"));
        let entry = journal.entries().unwrap().pop().unwrap();
        let store = state.join("journal/j.preimages");
        let file = &entry.files[0];
        for hash in [&file.before_blob, &file.after_hash] {
            let hash = hash.as_deref().expect("a stored copy");
            let what = format!("edit {k}: {hash}");
            synced_then_its_directory(&events, &base, &store.join(hash), &what);
        }
        let len = std::fs::metadata(&journal_path).unwrap().len();
        let (_, synced) = last_sync(&events, &journal_path, &base)
            .unwrap_or_else(|| panic!("edit {k}: the journal was never synced"));
        assert_eq!(
            synced, len,
            "edit {k}: the journal's last line was not synced"
        );
        // Each directory made for the state, synced in its parent after it was made there.
        for d in [&store, &state.join("journal"), &state] {
            made_then_its_parent_synced(&events, d, &format!("edit {k}"));
        }
    }
}

/// Concurrent edits through the HTTP API under `auto`, their journal appends and directory
/// syncs shared by group commit (docs/DESIGN.md §7): every edit answered applied has its own
/// whole `applied` line in the journal once the gate is killed (SIGKILL) right after the last
/// answer, and the pre-images each line names (what the file held, what it holds) are
/// stored; every file holds its last edit. Sixteen clients write at once into one directory,
/// so appends and renames land while other writers' syncs run.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_edits_over_http_each_end_in_the_journal() {
    use crate::mcp::{Gate as Served, Project, cli, http_client};
    use serde_json::{Value, json};
    const CLIENTS: usize = 16;
    const EDITS: usize = 10;
    let p = Project::new();
    for c in 0..CLIENTS {
        p.write(&format!("f{c}.txt"), &format!("head {c}\nvalue v0\ntail\n"));
    }
    let gate = Served::start(&p, &["--policy", "auto"]);
    let url = format!("{}/api/tools/patch_file", gate.url);
    let clients: Vec<_> = (0..CLIENTS)
        .map(|c| {
            let (url, token) = (url.clone(), gate.token.clone());
            tokio::spawn(async move {
                let http = http_client();
                let mut runs = Vec::new();
                for k in 0..EDITS {
                    let body = json!({"arguments": {
                        "target_file": format!("f{c}.txt"),
                        "search_content": format!("value v{k}"),
                        "replace_content": format!("value v{}", k + 1),
                    }, "client": format!("c{c}")});
                    let resp = http.post(&url).bearer_auth(&token).json(&body).send();
                    let v: Value = resp.await.unwrap().json().await.unwrap();
                    assert_eq!(v["status"], "ok", "client {c} edit {k}: {v}");
                    runs.push(v["run_id"].as_str().expect("run_id").to_string());
                }
                runs
            })
        })
        .collect();
    let mut answered = Vec::new();
    for c in clients {
        answered.extend(c.await.unwrap());
    }
    drop(gate);
    let out = cli(&p, &["log", "--json"]);
    assert!(out.status.success(), "{out:?}");
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("a torn line {l:?}: {e}")))
        .collect();
    let journal_dir = p.state.join("journal");
    let store = std::fs::read_dir(&journal_dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|d| d.extension().is_some_and(|x| x == "preimages"))
        .expect("the pre-image store");
    assert_eq!(lines.len(), CLIENTS * EDITS, "one line per edit");
    for run in &answered {
        let mine: Vec<&Value> = lines.iter().filter(|l| l["run_id"] == **run).collect();
        assert_eq!(mine.len(), 1, "run {run}: {mine:?}");
        assert_eq!(mine[0]["action"], "applied", "{}", mine[0]);
        let file = &mine[0]["files"][0];
        for hash in [&file["before_blob"], &file["after_hash"]] {
            let hash = hash.as_str().unwrap_or_else(|| panic!("run {run}: {file}"));
            assert!(store.join(hash).is_file(), "run {run}: {hash} not stored");
        }
    }
    for c in 0..CLIENTS {
        let want = format!("head {c}\nvalue v{EDITS}\ntail\n");
        assert_eq!(p.read(&format!("f{c}.txt")), want);
    }
}
