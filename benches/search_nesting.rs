//! How the code search index grows with nesting (docs/DESIGN.md §7, bounded work): one source
//! file of definitions each nested in the one before, 500 to 8,000 deep, in Rust (the
//! grammar's definitions) and in a language with no grammar (the hand reading of lines).
//! Prints the index build time and the peak heap memory of each, and the growth exponents
//! against the file's size; exits non-zero when either grows faster than linearly
//! (exponent over 1.3). Run with `cargo bench --bench search_nesting`; `-- --quick` (CI, a
//! debug build) stops at 4,000 deep and indexes every depth in `QUICK_ROUNDS` rounds, each
//! depth's fastest build taken (so that load on a shared machine does not read as growth).

mod common;
mod counting;

use std::process::ExitCode;
use std::time::{Duration, Instant};

use patchgate::search::store::Store;
use patchgate::workspace::paths::Root;

#[global_allocator]
static ALLOC: counting::Counting = counting::Counting;

/// `depth` definitions, each nested in the one before, every name distinct.
fn nested(depth: usize, keyword: &str) -> String {
    let mut text = String::new();
    for i in 0..depth {
        let pad = " ".repeat(i % 32);
        text.push_str(&format!("{pad}{keyword} handler_{i}(request_{i}) {{\n"));
        text.push_str(&format!("{pad}  let session_{i} = request_{i}.cookie();\n"));
    }
    for i in (0..depth).rev() {
        text.push_str(&format!("{}}}\n", " ".repeat(i % 32)));
    }
    text
}

/// Index a root holding only `name` with `text`: the time and the peak heap above the start.
fn index_one(name: &str, text: &str) -> (Duration, usize) {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join(name), text).expect("write");
    let root = Root::new(dir.path()).expect("root");
    let base = counting::start_peak();
    let mut store = Store::in_memory(&root);
    let start = Instant::now();
    let refresh = store.refresh(&|_| true, &mut |_, _| {});
    let took = start.elapsed();
    assert_eq!(refresh.files, 1, "{name} was not indexed");
    let peak = counting::peak_since(base);
    drop(store);
    (took, peak)
}

/// Rounds over every depth in quick mode; each depth's fastest build is the one fitted (its
/// peak the largest of them). Rounds, not runs in a row: a spell of load on a shared machine
/// then falls on every depth alike rather than on one.
const QUICK_ROUNDS: usize = 3;

/// Index each of `texts` once a round for `rounds` rounds: each one's fastest build and
/// largest peak.
fn index_fastest(name: &str, texts: &[String], rounds: usize) -> Vec<(Duration, usize)> {
    let mut best = vec![(Duration::MAX, 0); texts.len()];
    for _ in 0..rounds.max(1) {
        for (text, (t, p)) in texts.iter().zip(best.iter_mut()) {
            let (took, peak) = index_one(name, text);
            (*t, *p) = ((*t).min(took), (*p).max(peak));
        }
    }
    best
}

/// The least-squares slope of ln(y) against ln(x).
fn exponent(points: &[(f64, f64)]) -> f64 {
    let n = points.len() as f64;
    let (xs, ys): (Vec<f64>, Vec<f64>) = points.iter().map(|&(x, y)| (x.ln(), y.ln())).unzip();
    let (mx, my) = (xs.iter().sum::<f64>() / n, ys.iter().sum::<f64>() / n);
    let cov: f64 = xs.iter().zip(&ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    let var: f64 = xs.iter().map(|x| (x - mx).powi(2)).sum();
    cov / var
}

fn main() -> ExitCode {
    let mut ok = true;
    let rounds = if common::quick() { QUICK_ROUNDS } else { 1 };
    for (name, keyword) in [("deep.rs", "fn"), ("deep.zz", "function")] {
        let (mut times, mut peaks) = (Vec::new(), Vec::new());
        let depths: &[usize] = if common::quick() {
            &[500, 1000, 2000, 4000]
        } else {
            &[500, 1000, 2000, 4000, 8000]
        };
        let texts: Vec<String> = depths.iter().map(|&d| nested(d, keyword)).collect();
        let built = index_fastest(name, &texts, rounds);
        for ((depth, text), (took, peak)) in depths.iter().zip(&texts).zip(built) {
            println!(
                "{name} depth {depth:>5} ({:>7} bytes)   build {:>9.1} ms   peak {:>8.1} MiB",
                text.len(),
                took.as_secs_f64() * 1e3,
                peak as f64 / (1024.0 * 1024.0)
            );
            times.push((text.len() as f64, took.as_secs_f64()));
            peaks.push((text.len() as f64, peak as f64));
        }
        let (t, m) = (exponent(&times), exponent(&peaks));
        println!("{name}: growth exponent against size: time {t:.2}, memory {m:.2}");
        ok &= t <= 1.3 && m <= 1.3;
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        println!("FAIL: the index grows faster than the file");
        ExitCode::FAILURE
    }
}
