//! Three-way merges at scale (docs/DESIGN.md §7, bounded merges): a rebase-on-accept and an
//! undo under a later change, each merging 125,000 small edits (250,000 regions) of a 500 KB
//! file of 250,000 two-byte lines (a change of every fourth line, and a later change of the
//! line two below each), through the gate's own API.
//! Prints how long each took and what came of it; exits non-zero when either takes longer
//! than its bound or leaves the file other than whole (the merged text, or untouched when
//! refused). Run with `cargo bench --bench merges`; `-- --quick` (CI, a debug build) runs
//! 5,000 and 20,000 lines and bounds how both merges grow between them, never their time
//! (each size run `QUICK_RUNS` times and its fastest run taken, so that one load spike on a
//! shared machine does not read as growth).

mod common;

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

/// Quick mode's two sizes (lines) and the growth exponent of either merge between them past
/// which it no longer scales with its regions (TextMerge's scan per region gave 2).
const QUICK: (usize, usize) = (5_000, 20_000);
const MAX_EXPONENT: f64 = 1.3;
/// Runs of each size in quick mode; the fastest of each merge is the one compared.
const QUICK_RUNS: usize = 3;

/// What one size measured: the rebase's and the undo's time, and whether the file was left
/// whole after each.
struct Measured {
    rebase: Duration,
    undo: Duration,
    whole: bool,
}

fn main() -> ExitCode {
    let ok = if common::quick() {
        quick()
    } else {
        match scale(LINES) {
            Some(m) => m.whole && m.rebase <= BOUND && m.undo <= BOUND,
            None => false,
        }
    };
    if ok {
        ExitCode::SUCCESS
    } else {
        eprintln!("a merge broke its bound or left the file other than whole");
        ExitCode::FAILURE
    }
}

/// Both merges at two sizes, 4× apart: each must grow no faster than its regions.
fn quick() -> bool {
    let (Some(small), Some(large)) = (fastest(QUICK.0), fastest(QUICK.1)) else {
        return false;
    };
    let k = |a: Duration, b: Duration| {
        (b.as_secs_f64() / a.as_secs_f64().max(1e-9)).ln() / (QUICK.1 as f64 / QUICK.0 as f64).ln()
    };
    let (rebase, undo) = (k(small.rebase, large.rebase), k(small.undo, large.undo));
    println!(
        "growth exponent against regions: rebase {rebase:.2}, undo {undo:.2} (bound {MAX_EXPONENT})"
    );
    small.whole && large.whole && rebase <= MAX_EXPONENT && undo <= MAX_EXPONENT
}

/// `QUICK_RUNS` runs at one size: each merge's fastest time, and whether every run left the
/// file whole; `None` when a step of any run did not work.
fn fastest(lines: usize) -> Option<Measured> {
    let mut best: Option<Measured> = None;
    for _ in 0..QUICK_RUNS {
        let m = scale(lines)?;
        best = Some(match best {
            None => m,
            Some(b) => Measured {
                rebase: b.rebase.min(m.rebase),
                undo: b.undo.min(m.undo),
                whole: b.whole && m.whole,
            },
        });
    }
    best
}

/// A rebase-on-accept and an undo under a later change over a file of `lines` lines; `None`
/// when a step that must work did not.
fn scale(lines: usize) -> Option<Measured> {
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

    let base: Vec<String> = (0..lines)
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
        return None;
    };
    let id = summary.run_id;

    // Rebase-on-accept: the file changed under the review.
    std::fs::write(&path, later.concat()).expect("write");
    let t = Instant::now();
    let rebase = gate.decide(&id, Decision::Accept);
    let rebase_took = t.elapsed();
    let file = std::fs::read_to_string(&path).expect("read");
    let mut whole = file == later.concat();
    println!(
        "rebase-on-accept of {} edits: {rebase_took:.2?} ({}), file whole: {whole}",
        lines / 2,
        match &rebase {
            Err(e) => e.message.lines().next().unwrap_or_default().to_string(),
            Ok(_) => "written without a rebase".to_string(),
        }
    );

    // Undo under a later change: accept the rebased proposal, then change the file again.
    if gate.decide(&id, Decision::Accept).is_err() {
        eprintln!("the rebased proposal could not be accepted");
        return None;
    }
    let now = changed(&both, 2, "#");
    std::fs::write(&path, now.concat()).expect("write");
    let t = Instant::now();
    let undo = gate.undo(Some(&id));
    let undo_took = t.elapsed();
    let file = std::fs::read_to_string(&path).expect("read");
    let expected = changed(&base, 2, "#").concat();
    let undone_whole = match &undo {
        Ok(_) => file == expected,
        Err(_) => file == now.concat(),
    };
    println!(
        "undo under a later change of {} edits: {undo_took:.2?} ({}), file whole: {undone_whole}",
        lines / 2,
        match &undo {
            Ok(_) => "done".to_string(),
            Err(e) => format!("refused: {}", e.message.lines().next().unwrap_or_default()),
        }
    );
    whole &= undone_whole;
    Some(Measured {
        rebase: rebase_took,
        undo: undo_took,
        whole,
    })
}
