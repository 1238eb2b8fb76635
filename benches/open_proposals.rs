//! What open proposals cost the gate (docs/DESIGN.md §7, bounded work): 300 dry-runs of a
//! small SEARCH/REPLACE edit against one 2 MB file, as an agent that never commits would
//! send them. Prints the heap the gate holds after every 50, the bytes per open proposal,
//! and how many were refused at the cap; exits non-zero when the gate holds more than its
//! cap allows or an open proposal costs more than its own new content plus a tenth of the
//! file (the original is kept once). Run with `cargo bench --bench open_proposals`.

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

const FILE_BYTES: usize = 2 << 20;
const PROPOSALS: usize = 300;

fn main() -> ExitCode {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut text = String::with_capacity(FILE_BYTES + 64);
    let mut i = 0;
    while text.len() < FILE_BYTES {
        text.push_str(&format!("value_{i} = compute({i})  # entry {i}\n"));
        i += 1;
    }
    std::fs::write(dir.path().join("data.txt"), &text).expect("write");
    let ws = Workspace::new(dir.path(), Config::default()).expect("workspace");
    let journal = Journal::at(dir.path().join("journal.jsonl"), &ws.root);
    let gate = Gate::new(ws, Policy::simple(PolicyName::Gate), journal, None);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let base = counting::live();
    let (mut open, mut refused) = (0usize, 0usize);
    for k in 0..PROPOSALS {
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
    // Each open proposal holds its own 2 MB result; the original is kept once.
    let bound = FILE_BYTES + FILE_BYTES / 10;
    let capped = held <= patchgate::review::queue::MAX_OPEN_BYTES + 2 * FILE_BYTES;
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
    if per <= bound && capped {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
