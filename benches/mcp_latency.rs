//! Per-call latency of `fast_apply` through the real binary over stdio (`serve --stdio
//! --policy auto`), with rmcp's client, on a 40 KB file: each call rewrites the body of one
//! function, so every call merges, writes atomically and journals. Prints p50/p90/p99/max
//! over the calls, beside the in-process merge time of the same snippets for reference.
//!
//! `cargo bench --bench mcp_latency` (`-- --calls N` to change the count).

use std::process::Stdio;
use std::time::{Duration, Instant};

use patchgate::edit::{self, Format, Hints, text::Text};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use serde_json::json;

/// A Rust file of about 40 KB: `n` small functions.
fn file(n: usize) -> String {
    (0..n)
        .map(|i| {
            format!(
                "/// Computes the value of item {i} from its inputs.\n\
                 pub fn item_{i}(input: &[u32], scale: u32) -> u32 {{\n    \
                 let total: u32 = input.iter().map(|v| v * scale).sum();\n    \
                 total + {i}\n\
                 }}\n\n"
            )
        })
        .collect()
}

fn snippet(func: usize, round: usize) -> String {
    format!(
        "pub fn item_{func}(input: &[u32], scale: u32) -> u32 {{\n    \
         let total: u32 = input.iter().map(|v| v * scale).sum();\n    \
         total + {func} + {round}\n\
         }}\n"
    )
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx.min(sorted.len() - 1)]
}

fn report(label: &str, mut times: Vec<Duration>) {
    times.sort_unstable();
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    println!(
        "{label:<34} n={:<5} p50={:>8.0}µs p90={:>8.0}µs p99={:>8.0}µs max={:>8.0}µs",
        times.len(),
        us(percentile(&times, 0.50)),
        us(percentile(&times, 0.90)),
        us(percentile(&times, 0.99)),
        us(*times.last().unwrap()),
    );
}

fn main() {
    let mut calls = 500usize;
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--calls") {
        calls = args[i + 1].parse().expect("--calls N");
    }
    // `cargo bench` passes `--bench`; `cargo test --benches` runs this with no flag: keep that
    // run short.
    if !args.iter().any(|a| a == "--bench") {
        calls = calls.min(20);
    }
    let funcs = 222;
    let content = file(funcs);
    assert!(
        (38_000..42_000).contains(&content.len()),
        "{}",
        content.len()
    );

    // In-process merges of the same snippets, for reference.
    let mut inproc = Vec::with_capacity(calls);
    let mut current = content.clone();
    for round in 0..calls {
        let s = snippet((round * 37) % funcs, round);
        let text = Text::decode(current.as_bytes()).unwrap();
        let t = Instant::now();
        let merged = edit::run(
            Format::Lazy,
            &text,
            &s,
            &Hints {
                path: Some("lib.rs"),
                instruction: None,
            },
        )
        .expect("merge");
        inproc.push(t.elapsed());
        current = merged.content;
    }

    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("work");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("lib.rs"), &content).unwrap();
    let state = dir.path().join("state");

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let times = rt.block_on(async {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_patchgate"));
        cmd.args(["serve", "--stdio", "--policy", "auto", "--root"])
            .arg(&root)
            .env("PATCHGATE_STATE_DIR", &state)
            .env("PATCHGATE_LOG", state.join("patchgate.log"))
            .env("PATCHGATE_LOG_LEVEL", "warn");
        let (transport, _) = TokioChildProcess::builder(cmd)
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn patchgate");
        let client = ().serve(transport).await.expect("initialize");
        let mut times = Vec::with_capacity(calls);
        for round in 0..calls {
            let args =
                json!({"path": "lib.rs", "edit_snippet": snippet((round * 37) % funcs, round)});
            let t = Instant::now();
            let r = client
                .call_tool(
                    CallToolRequestParams::new("fast_apply")
                        .with_arguments(args.as_object().unwrap().clone()),
                )
                .await
                .expect("tools/call");
            times.push(t.elapsed());
            let v = r.structured_content.expect("envelope");
            assert_eq!(v["status"], "ok", "{v}");
        }
        client.cancel().await.unwrap();
        times
    });
    let written = std::fs::read_to_string(root.join("lib.rs")).unwrap();
    assert_eq!(written, current, "the server wrote what the engine merged");
    println!(
        "fast_apply on a {} KB file, policy auto",
        content.len() / 1000
    );
    report("merge in process (engine only)", inproc);
    report("fast_apply over stdio (per call)", times);
}
