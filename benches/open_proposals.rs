//! What open proposals cost the gate (docs/DESIGN.md §7, bounded work): 300 dry-runs of a
//! small SEARCH/REPLACE edit against one 2 MB file, as an agent that never commits would
//! send them. Prints the heap the gate holds after every 50, the bytes per open proposal,
//! and how many were refused at the cap; exits non-zero when the gate holds more than its
//! cap allows or an open proposal costs more than its own new content plus a tenth of the
//! file (the original is kept once). Run with `cargo bench --bench open_proposals`; `-- --quick`
//! (CI, a debug build) sends 120 against a 256 KiB file under a 16 MiB cap, with the same bounds.

mod common;
mod counting;

use std::process::ExitCode;
use std::time::Duration;

use patchgate::review::edit::{EditOp, ProposedEdit};
use patchgate::review::journal::Journal;
use patchgate::review::policy::Policy;
use patchgate::review::queue::{Gate, Request};
use patchgate::workspace::Workspace;
use patchgate::workspace::config::{Config, PolicyName};

#[global_allocator]
static ALLOC: counting::Counting = counting::Counting;

/// The file, the dry-runs sent and the cap on open proposals' bytes: in full, and quick.
const FULL: (usize, usize, usize) = (2 << 20, 300, patchgate::review::queue::MAX_OPEN_BYTES);
const QUICK: (usize, usize, usize) = (256 << 10, 120, 16 << 20);

fn main() -> ExitCode {
    let (file_bytes, proposals, cap) = if common::quick() { QUICK } else { FULL };
    let dir = tempfile::tempdir().expect("temp dir");
    let mut text = String::with_capacity(file_bytes + 64);
    let mut i = 0;
    while text.len() < file_bytes {
        text.push_str(&format!("value_{i} = compute({i})  # entry {i}\n"));
        i += 1;
    }
    std::fs::write(dir.path().join("data.txt"), &text).expect("write");
    let ws = Workspace::new(dir.path(), Config::default()).expect("workspace");
    let journal = Journal::at(dir.path().join("journal.jsonl"), &ws.root);
    let gate =
        Gate::new(ws, Policy::simple(PolicyName::Gate), journal, None).with_open_bytes_cap(cap);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let base = counting::live();
    let (mut open, mut refused) = (0usize, 0usize);
    for k in 0..proposals {
        let edit = format!(
            "<<<<<<< SEARCH\nvalue_{k} = compute({k})  # entry {k}\n=======\nvalue_{k} = compute({k}) * 2  # entry {k}, doubled by proposal {k}: {}\n>>>>>>> REPLACE\n",
            "x".repeat(120)
        );
        let req = Request {
            tool: "FileWriteOrEdit".into(),
            client: Some(format!("agent-{}", k % 8)),
            edits: vec![ProposedEdit {
                path: "data.txt".into(),
                op: EditOp::Blocks(edit),
            }],
            dry_run: true,
            keep_failure: true,
        };
        match rt.block_on(gate.submit(req)) {
            Ok(_) => open += 1,
            Err(_) => refused += 1,
        }
        if (k + 1) % 50 == 0 {
            let held = counting::live().saturating_sub(base);
            println!(
                "{:>3} sent: {open:>3} open, {refused:>3} refused   gate holds {:>7.1} MiB   {:>5.2} MiB per open proposal",
                k + 1,
                held as f64 / (1 << 20) as f64,
                held as f64 / (1 << 20) as f64 / open.max(1) as f64
            );
        }
    }
    rt.shutdown_timeout(Duration::from_secs(1));
    let held = counting::live().saturating_sub(base);
    let per = held / open.max(1);
    // Each open proposal holds its own result, as large as the file; the original is kept once.
    let bound = file_bytes + file_bytes / 10;
    let capped = held <= cap + 2 * file_bytes;
    println!(
        "{open} open, {refused} refused; {:.2} MiB per open proposal (bound {:.2}); {}",
        per as f64 / (1 << 20) as f64,
        bound as f64 / (1 << 20) as f64,
        if capped {
            "within the cap"
        } else {
            "OVER THE CAP"
        }
    );
    // The cap must have been reached, or the bench bounds nothing.
    let reached = refused > 0;
    if !reached {
        println!("the cap was never reached");
    }
    if per <= bound && capped && reached {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
