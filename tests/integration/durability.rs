//! What the gate tells about a decision holds on disk (docs/DESIGN.md §4, §7): an edit whose
//! journal line cannot be written is put back and fails, a rejection the journal cannot hold
//! is not made, and the temp files a crash left beside the journal are swept at a gate's
//! start. Through the library's gate on real files, as the crash tests drive it.

use std::path::Path;

use patchgate::error::ErrorCode;
use patchgate::review::edit::{EditOp, ProposedEdit};
use patchgate::review::journal::Journal;
use patchgate::review::policy::Policy;
use patchgate::review::proposal::Decision;
use patchgate::review::queue::{Gate, Outcome, Request};
use patchgate::workspace::Workspace;
use patchgate::workspace::config::{Config, PolicyName};

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
