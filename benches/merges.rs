//! Three-way merges at scale (docs/DESIGN.md §7, bounded merges): a rebase-on-accept and an
//! undo under a later change, each merging 125,000 small edits (250,000 regions) of a 500 KB
//! file of 250,000 two-byte lines (a change of every fourth line, and a later change of the
//! line two below each), through the gate's own API.
//! Prints how long each took and what came of it; exits non-zero when either takes longer
//! than its bound or leaves the file other than whole (the merged text, or untouched when
//! refused). Run with `cargo bench --bench merges`.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use patchgate::review::edit::{EditOp, ProposedEdit};
use patchgate::review::journal::Journal;
use patchgate::review::policy::Policy;
use patchgate::review::proposal::Decision;
use patchgate::review::queue::{Gate, Outcome, Request};
use patchgate::workspace::Workspace;
use patchgate::workspace::config::{Config, PolicyName};

/// Lines of the file: two bytes each, 500 KB in all.
const LINES: usize = 250_000;
/// What the file's lines hold (a changed line holds something else).
const CHARS: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
/// The bound on each merge (the acceptance).
const BOUND: Duration = Duration::from_secs(5);

/// The file with every line `k` where `k % 4 == at` changed by `mark`.
fn changed(lines: &[String], at: usize, mark: &str) -> Vec<String> {
    let mut out = lines.to_vec();
    for (k, l) in out.iter_mut().enumerate() {
        if k % 4 == at {
            *l = format!("{mark}\n");
        }
    }
    out
}

fn main() -> ExitCode {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir_all(dir.path().join("work")).expect("work dir");
    let ws = Workspace::new(&dir.path().join("work"), Config::default()).expect("workspace");
    let path = ws.root.path().join("data.txt");
    let journal = Journal::at(dir.path().join("journal.jsonl"), &ws.root);
    let gate = Gate::new(ws, Policy::simple(PolicyName::Gate), journal, None);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");

    let base: Vec<String> = (0..LINES)
        .map(|i| format!("{}\n", char::from(CHARS[i % CHARS.len()])))
        .collect();
    let proposed = changed(&base, 0, "!");
    let later = changed(&base, 2, "~");
    let both = changed(&proposed, 2, "~");
    std::fs::write(&path, base.concat()).expect("write");
    let req = Request {
        tool: "bench".into(),
        client: None,
        edits: vec![ProposedEdit {
            path: "data.txt".into(),
            op: EditOp::Write(proposed.concat()),
        }],
        dry_run: false,
        keep_failure: false,
    };
    let Ok(Outcome::Pending(summary)) = rt.block_on(gate.submit(req)) else {
        eprintln!("the proposal was not pending");
        return ExitCode::FAILURE;
    };
    let id = summary.run_id;
    let mut ok = true;

    // Rebase-on-accept: the file changed under the review.
    std::fs::write(&path, later.concat()).expect("write");
    let t = Instant::now();
    let rebase = gate.decide(&id, Decision::Accept);
    let took = t.elapsed();
    let file = std::fs::read_to_string(&path).expect("read");
    let whole = file == later.concat();
    println!(
        "rebase-on-accept of {} edits: {took:.2?} ({}), file whole: {whole}",
        LINES / 2,
        match &rebase {
            Err(e) => e.message.lines().next().unwrap_or_default().to_string(),
            Ok(_) => "written without a rebase".to_string(),
        }
    );
    ok &= took <= BOUND && whole;

    // Undo under a later change: accept the rebased proposal, then change the file again.
    if gate.decide(&id, Decision::Accept).is_err() {
        eprintln!("the rebased proposal could not be accepted");
        return ExitCode::FAILURE;
    }
    let now = changed(&both, 2, "#");
    std::fs::write(&path, now.concat()).expect("write");
    let t = Instant::now();
    let undo = gate.undo(Some(&id));
    let took = t.elapsed();
    let file = std::fs::read_to_string(&path).expect("read");
    let expected = changed(&base, 2, "#").concat();
    let whole = match &undo {
        Ok(_) => file == expected,
        Err(_) => file == now.concat(),
    };
    println!(
        "undo under a later change of {} edits: {took:.2?} ({}), file whole: {whole}",
        LINES / 2,
        match &undo {
            Ok(_) => "done".to_string(),
            Err(e) => format!("refused: {}", e.message.lines().next().unwrap_or_default()),
        }
    );
    ok &= took <= BOUND && whole;
    if ok {
        ExitCode::SUCCESS
    } else {
        eprintln!("a merge took longer than {BOUND:?} or left the file other than whole");
        ExitCode::FAILURE
    }
}
