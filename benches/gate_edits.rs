//! Successive edits of one file through a gate: an in-process gate under `auto` (every edit
//! merged, checked, written atomically and journaled, fsyncs included), one client over the
//! review API (`POST /api/tools/patch_file` and `/api/tools/fast_apply`), 12 edits in a row
//! of one Rust file of 40 KB and of 400 KB, each changing another function. Prints the
//! first edit's time (the file seen for the first time: one full parse) and the median of
//! the 12 (the tree of each written result kept for the next edit).
//!
//! First it prints this disk's floor for a durable edit at each size: the least any writer
//! keeping docs/DESIGN.md §7 does (a temp file written and fsynced, renamed over the file, the
//! directory fsynced, one journal line appended and fdatasynced), median of 50, each step's
//! median beside it. The gate's time less the floor is the gate's own work.
//!
//! `cargo bench --bench gate_edits` (`-- --edits N` to change the count, `-- --only TOOL` and
//! `-- --kb 40` to run one tool at one size without the floor, for a profiler; the files, journal and
//! pre-images go in a temporary directory under `$PATCHGATE_BENCH_DIR`, else the system's; a
//! tmpfs there, where a sync costs nothing, measures the gate's own work — not `/dev/shm`, as
//! a gate refuses a root under `/dev`: docs/benchmarks.md says how to mount one of your own).
//! The floor leaves out the pre-images' durable stores, so the gate less the floor overstates
//! the gate's own work a little.

mod common;
use common::{arg, bench_tempdir};
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use patchgate::mcp::http::{HttpOptions, Running, start};
use patchgate::mcp::serve::Limits;
use patchgate::mcp::service::{Dispatcher, Reviewers};
use patchgate::review::journal::Journal;
use patchgate::review::policy::Policy;
use patchgate::review::queue::Gate;
use patchgate::workspace::Workspace;
use patchgate::workspace::config::{Config, PolicyName};
use serde_json::{Value, json};

const TOKEN: &str = "bench-token";

/// The edits of each run unless `--edits N`.
const EDITS: usize = 12;

/// Durable replaces timed for the floor (its median printed).
const FLOOR_RUNS: usize = 50;

/// A journal line's bytes in the floor (an applied edit's line: its run, files, hashes,
/// counts and a short diff).
const FLOOR_LINE_BYTES: usize = 600;

/// One function of the file, `tweak` appended to its first statement.
fn function(i: usize, tweak: &str) -> String {
    format!(
        "/// Computes value number {i}.\npub fn compute_{i}(input: u64, table: &HashMap<u64, u64>) -> u64 {{\n    let base = input.wrapping_mul({i}){tweak};\n    match table.get(&base) {{\n        Some(v) => v + {i},\n        None => base ^ 0x{i:x},\n    }}\n}}\n\n"
    )
}

/// A Rust source file of about `bytes` bytes, every function distinct; and its count.
fn source(bytes: usize) -> (String, usize) {
    let mut s = String::from("use std::collections::HashMap;\n\n");
    let mut n = 0;
    while s.len() < bytes {
        s.push_str(&function(n, ""));
        n += 1;
    }
    (s, n)
}

/// The arguments of edit `k` (changing function `f`) for `tool`.
fn arguments(tool: &str, f: usize, k: usize) -> Value {
    let line = format!("    let base = input.wrapping_mul({f});");
    let changed = format!("    let base = input.wrapping_mul({f}).rotate_left({k});");
    match tool {
        "patch_file" => json!({
            "target_file": "src/lib.rs",
            "search_content": line,
            "replace_content": changed,
        }),
        _ => json!({
            "path": "src/lib.rs",
            "edit_snippet": format!(
                "// ... existing code ...\npub fn compute_{f}(input: u64, table: &HashMap<u64, u64>) -> u64 {{\n{changed}\n    match table.get(&base) {{\n// ... existing code ...\n"
            ),
        }),
    }
}

async fn gate(dir: &std::path::Path) -> Running {
    let ws = Workspace::new(dir, Config::default()).unwrap();
    let journal = Journal::at(dir.join("../journal.jsonl"), &ws.root);
    let gate = Gate::new(ws, Policy::simple(PolicyName::Auto), journal, None);
    let d = Dispatcher::new(gate, Duration::from_secs(60), Reviewers::Attachable, None);
    start(
        d,
        HttpOptions {
            addr: "127.0.0.1:0".parse().unwrap(),
            token: Some(TOKEN.into()),
            review_token: "reviewer".into(),
            extra_hosts: Vec::new(),
            max_body: 8 << 20,
            session_keep_alive: Duration::from_secs(600),
            limits: Limits::default(),
        },
    )
    .await
    .unwrap()
}

/// `edits` edits of a fresh file of `bytes` bytes through `tool`: each edit's time.
async fn run(tool: &str, bytes: usize, edits: usize) -> Vec<Duration> {
    let tmp = bench_tempdir();
    let work = tmp.path().join("work");
    std::fs::create_dir_all(work.join("src")).unwrap();
    let (content, n) = source(bytes);
    std::fs::write(work.join("src/lib.rs"), &content).unwrap();
    let running = gate(&work).await;
    let http = reqwest::Client::new();
    let mut times = Vec::with_capacity(edits);
    for k in 0..edits {
        let f = (k * 7919 + n / 2) % n;
        let body = json!({"arguments": arguments(tool, f, k + 1), "client": "bench"});
        let start = Instant::now();
        let resp = http
            .post(format!("{}/api/tools/{tool}", running.url))
            .bearer_auth(TOKEN)
            .json(&body)
            .send()
            .await
            .expect("request");
        let v: Value = resp.json().await.expect("envelope");
        times.push(start.elapsed());
        assert_eq!(v["status"], "ok", "{tool} edit {k}: {v}");
    }
    // Every edit landed.
    let now = std::fs::read_to_string(work.join("src/lib.rs")).unwrap();
    assert_eq!(now.matches(".rotate_left(").count(), edits, "{tool}");
    running.shutdown().await;
    times
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The median of `times`.
fn median(times: &mut [Duration]) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// One durable replace of `dir`'s file `floor.rs` by `content`, then one journal line: the
/// time of each step (write + fsync of a temp file; rename + the directory's fsync; the
/// line's append + fdatasync).
fn durable_replace(
    dir: &Path,
    dir_handle: &std::fs::File,
    journal: &mut std::fs::File,
    content: &[u8],
    k: usize,
) -> std::io::Result<[Duration; 3]> {
    let start = Instant::now();
    let temp = dir.join(format!(".floor.rs.{k}.tmp"));
    let mut file = std::fs::File::create(&temp)?;
    file.write_all(content)?;
    file.sync_all()?;
    drop(file);
    let written = Instant::now();
    std::fs::rename(&temp, dir.join("floor.rs"))?;
    dir_handle.sync_all()?;
    let renamed = Instant::now();
    let mut line = vec![b'x'; FLOOR_LINE_BYTES - 1];
    line.push(b'\n');
    journal.write_all(&line)?;
    journal.sync_data()?;
    Ok([written - start, renamed - written, renamed.elapsed()])
}

/// This disk's floor for a durable edit of `bytes` bytes ([`durable_replace`]), in a fresh
/// directory where the gate's runs write: the median of [`FLOOR_RUNS`] in all and per step.
fn floor(bytes: usize) -> std::io::Result<(Duration, [Duration; 3])> {
    let tmp = bench_tempdir();
    let dir = tmp.path();
    let content = source(bytes).0.into_bytes();
    std::fs::write(dir.join("floor.rs"), &content)?;
    let mut journal = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("floor.jsonl"))?;
    let dir_handle = std::fs::File::open(dir)?;
    dir_handle.sync_all()?;
    let (mut totals, mut steps) = (Vec::new(), [(); 3].map(|()| Vec::new()));
    for k in 0..FLOOR_RUNS {
        let times = durable_replace(dir, &dir_handle, &mut journal, &content, k)?;
        totals.push(times.iter().sum());
        for (step, t) in steps.iter_mut().zip(times) {
            step.push(t);
        }
    }
    Ok((median(&mut totals), steps.map(|mut s| median(&mut s))))
}

/// The word after `name` on the command line, if any.
fn word(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    let at = args.iter().position(|a| a == name)?;
    args.get(at + 1).cloned()
}

fn main() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let edits = arg("--edits", EDITS);
    let only = word("--only");
    let kb = word("--kb").and_then(|k| k.parse::<usize>().ok());
    let sizes: Vec<(String, usize)> = match kb {
        Some(kb) => vec![(format!("{kb}KB"), kb << 10)],
        None => vec![("40KB".into(), 40 << 10), ("400KB".into(), 400 << 10)],
    };
    let tools: Vec<&str> = ["patch_file", "fast_apply"]
        .into_iter()
        .filter(|t| only.as_deref().is_none_or(|o| o == *t))
        .collect();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let place = std::env::var(common::BENCH_DIR_VAR)
        .unwrap_or_else(|_| std::env::temp_dir().display().to_string());
    let with_floor = only.is_none() && kb.is_none();
    for (label, bytes) in [("40KB", 40 << 10), ("400KB", 400 << 10)] {
        if !with_floor {
            break;
        }
        let (total, [file, dir, line]) = floor(bytes).expect("the floor's writes");
        println!(
            "{label:<6} floor: median {:>8.2} ms   (temp file write + fsync {:.2}, rename + \
             directory fsync {:.2}, journal line + fdatasync {:.2}; {FLOOR_RUNS} runs under {place})",
            ms(total),
            ms(file),
            ms(dir),
            ms(line),
        );
    }
    for (label, bytes) in &sizes {
        for &tool in &tools {
            let times = rt.block_on(run(tool, *bytes, edits));
            let first = times[0];
            let mut sorted = times.clone();
            sorted.sort();
            println!(
                "{label:<6} {tool:<11} {edits} edits: median {:>8.2} ms   first {:>8.2} ms   max {:>8.2} ms",
                ms(sorted[sorted.len() / 2]),
                ms(first),
                ms(sorted[sorted.len() - 1]),
            );
        }
    }
}
