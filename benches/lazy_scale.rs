//! How the lazy merge grows with its input: time and peak memory for one edited region at
//! 4 KB, 40 KB, 400 KB and 4 MB, a 2,000-line snippet on 4 MB, and a 3 MB snippet on a 3 MB
//! file (answered within 10 s under 1 GiB, or with `FILE_TOO_LARGE`). Prints one line per
//! case and the growth exponent of time against file size; exits non-zero when a bound is
//! broken. Run with `cargo bench --bench lazy_scale`.

mod counting;

use std::hint::black_box;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use patchgate::edit::{Hints, lazy};
use patchgate::error::ErrorCode;

#[global_allocator]
static ALLOC: counting::Counting = counting::Counting;

/// A Rust-like source file of about `bytes` bytes, every function distinct.
fn source(bytes: usize) -> String {
    let mut s = String::from("use std::collections::HashMap;\n\n");
    let mut i = 0;
    while s.len() < bytes {
        s.push_str(&function(i, ""));
        i += 1;
    }
    s
}

fn function(i: usize, tweak: &str) -> String {
    format!(
        "/// Computes value number {i}.\npub fn compute_{i}(input: u64, table: &HashMap<u64, u64>) -> u64 {{\n    let base = input.wrapping_mul({i}){tweak};\n    match table.get(&base) {{\n        Some(v) => v + {i},\n        None => base ^ 0x{i:x},\n    }}\n}}\n\n"
    )
}

/// One changed function in the middle of an `n`-function file, between placeholders.
fn one_region(n: usize) -> String {
    let b = n / 2;
    format!(
        "// ... existing code ...\npub fn compute_{b}(input: u64, table: &HashMap<u64, u64>) -> u64 {{\n    let base = input.wrapping_mul({b}).rotate_left(1);\n    match table.get(&base) {{\n// ... existing code ...\n"
    )
}

/// About `lines` snippet lines: whole changed functions spread over the file, each after a
/// placeholder.
fn many_regions(n: usize, lines: usize) -> String {
    let per = function(0, "").lines().count() + 1;
    let count = lines / per;
    let step = (n / count.max(1)).max(1);
    let mut s = String::new();
    for k in 0..count {
        s.push_str("// ... existing code ...\n");
        s.push_str(&function(k * step, ".rotate_left(2)"));
    }
    s.push_str("// ... existing code ...\n");
    s
}

struct Measured {
    median: Duration,
    peak: usize,
    outcome: Result<(), ErrorCode>,
}

fn measure(file: &str, snippet: &str, runs: usize) -> Measured {
    let hints = Hints {
        path: Some("src/lib.rs"),
        instruction: None,
    };
    let mut times = Vec::with_capacity(runs);
    let mut outcome = Ok(());
    let base = counting::start_peak();
    for _ in 0..runs {
        let start = Instant::now();
        let r = lazy::merge(black_box(file), black_box(snippet), &hints);
        times.push(start.elapsed());
        outcome = r.map(|_| ()).map_err(|e| e.code);
    }
    times.sort();
    Measured {
        median: times[times.len() / 2],
        peak: counting::peak_since(base),
        outcome,
    }
}

fn report(label: &str, m: &Measured) {
    let outcome = match &m.outcome {
        Ok(()) => "merged".to_string(),
        Err(code) => code.as_str().to_string(),
    };
    println!(
        "{label:<28} median {:>10.1} µs   peak {:>8.1} MiB   {outcome}",
        m.median.as_secs_f64() * 1e6,
        m.peak as f64 / (1024.0 * 1024.0)
    );
}

fn main() -> ExitCode {
    let mut ok = true;
    let mut points = Vec::new();
    for (label, bytes, runs) in [
        ("4KB", 4 << 10, 200),
        ("40KB", 40 << 10, 100),
        ("400KB", 400 << 10, 20),
        ("4MB", 4 << 20, 5),
    ] {
        let file = source(bytes);
        let n = file.matches("pub fn compute_").count();
        let m = measure(&file, &one_region(n), runs);
        report(&format!("one region, {label}"), &m);
        ok &= m.outcome.is_ok();
        points.push((file.len() as f64, m.median.as_secs_f64()));
    }
    // Growth exponent: the slope of log(time) against log(size), first to last.
    let (first, last) = (points[0], points[points.len() - 1]);
    let exponent = (last.1 / first.1).ln() / (last.0 / first.0).ln();
    println!("growth exponent (time ~ size^k), 4KB to 4MB: k = {exponent:.2}");

    let file = source(4 << 20);
    let n = file.matches("pub fn compute_").count();
    let snippet = many_regions(n, 2000);
    let m = measure(&file, &snippet, 3);
    report(
        &format!("{}-line snippet, 4MB", snippet.lines().count()),
        &m,
    );
    ok &= m.outcome.is_ok();

    // 3 MB on 3 MB: within 10 s under 1 GiB, or refused as too large.
    let file = source(3 << 20);
    let snippet = source(3 << 20).replace("wrapping_mul(", "wrapping_add(");
    let m = measure(&file, &snippet, 1);
    report("3MB snippet, 3MB file", &m);
    let bounded = m.median < Duration::from_secs(10) && m.peak < (1 << 30);
    ok &= bounded || m.outcome == Err(ErrorCode::FileTooLarge);
    if ok {
        ExitCode::SUCCESS
    } else {
        println!("a bound is broken");
        ExitCode::FAILURE
    }
}
