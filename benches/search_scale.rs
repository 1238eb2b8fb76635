//! How the code search grows with the project: for generated projects of 1,000, 4,000 and
//! 16,000 source files, the index build time, a refresh with nothing changed (the walk
//! alone), the median query time over 60 queries, and the process's peak resident memory.
//! Prints one line per size and the growth exponents of build and query time against the
//! file count; exits non-zero when a query grows faster than the project (exponent over 1.1)
//! or the largest project's median query passes 20 ms. Run with
//! `cargo bench --bench search_scale`; `-- --quick` (CI, a debug build) runs 250, 1,000 and
//! 4,000 files and bounds the exponent only, each size's 60 queries asked `QUICK_PASSES` times
//! and the fastest pass's median taken (so that one load spike on a shared machine does not
//! read as growth).

mod common;

use std::process::ExitCode;
use std::time::{Duration, Instant};

use patchgate::search::rank;
use patchgate::search::store::Store;
use patchgate::workspace::paths::Root;

const WORDS: &[&str] = &[
    "session",
    "cookie",
    "request",
    "response",
    "header",
    "router",
    "handler",
    "context",
    "render",
    "template",
    "parse",
    "token",
    "cache",
    "config",
    "logger",
    "error",
    "stream",
    "buffer",
    "client",
    "server",
    "query",
    "binding",
    "validate",
    "encode",
    "decode",
    "upload",
    "file",
    "path",
    "route",
    "middleware",
    "signal",
    "engine",
    "param",
    "value",
    "json",
    "form",
];

fn word(i: usize) -> &'static str {
    WORDS[i % WORDS.len()]
}

fn capital(w: &str) -> String {
    let mut c = w.chars();
    c.next()
        .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
        .unwrap_or_default()
}

/// One generated Go-like file: twenty functions with names made of the vocabulary.
fn file(n: usize) -> String {
    let mut s = format!("package pkg{}\n\n", n % 50);
    for k in 0..20 {
        let (a, b, c) = (word(n + k), word(n * 7 + k * 3), word(n * 13 + k * 5));
        s.push_str(&format!(
            "// {a}{b}{k} handles the {a} {c} of a {b}.\nfunc {}{}{n}_{k}(ctx *Context, {c} string) error {{\n\tif {c} == \"\" {{\n\t\treturn ctx.{}Error({c})\n\t}}\n\treturn nil\n}}\n\n",
            capital(a),
            capital(b),
            capital(c)
        ));
    }
    s
}

fn make(dir: &std::path::Path, files: usize) {
    for n in 0..files {
        let sub = dir.join(format!("{}/{}", word(n / 7), word(n / 3 + 1)));
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(sub.join(format!("{}_{n}.go", word(n))), file(n)).unwrap();
    }
}

/// The peak resident set of this process, in MiB (Linux; 0 elsewhere).
fn peak_mib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .map_or(0, |kib| kib / 1024)
}

struct Row {
    files: usize,
    build: Duration,
    walk: Duration,
    query: Duration,
}

/// Passes of the 60 queries over each size in quick mode; the least median is the one
/// compared.
const QUICK_PASSES: usize = 3;

/// The median time of the 60 queries over `store`.
fn median_query(store: &Store) -> Duration {
    let mut times = Vec::new();
    for q in 0..60 {
        let query = format!(
            "{} the {} {} when the {} is empty",
            word(q),
            word(q * 5 + 1),
            capital(word(q * 3 + 2)),
            word(q * 11 + 3)
        );
        let started = Instant::now();
        let hits = rank::rank(store.index(), &query, 10, &|_| true);
        times.push(started.elapsed());
        std::hint::black_box(hits);
    }
    times.sort();
    times[times.len() / 2]
}

/// A project of `files` files: its build, its unchanged refresh, and the least median query
/// time of `passes` passes.
fn measure(files: usize, passes: usize) -> Row {
    let dir = tempfile::tempdir().unwrap();
    make(dir.path(), files);
    let root = Root::new(dir.path()).unwrap();
    let mut store = Store::in_memory(&root);
    let build = store.refresh(&|_| true, &mut |_, _| {}).elapsed;
    let walk = store.refresh(&|_| true, &mut |_, _| {}).elapsed;
    let query = (0..passes.max(1))
        .map(|_| median_query(&store))
        .min()
        .unwrap_or_default();
    Row {
        files,
        build,
        walk,
        query,
    }
}

fn exponent(a: &Row, b: &Row, f: impl Fn(&Row) -> Duration) -> f64 {
    (f(b).as_secs_f64() / f(a).as_secs_f64().max(1e-9)).ln()
        / (b.files as f64 / a.files as f64).ln()
}

fn main() -> ExitCode {
    let quick = common::quick();
    let mut rows = Vec::new();
    let sizes: &[usize] = if quick {
        &[250, 1_000, 4_000]
    } else {
        &[1_000, 4_000, 16_000]
    };
    for &files in sizes {
        let r = measure(files, if quick { QUICK_PASSES } else { 1 });
        println!(
            "{:>6} files: build {:>7.0} ms ({:.2} ms/file), refresh unchanged {:>5.0} ms, median query {:>6.2} ms, peak RSS so far {} MiB",
            r.files,
            r.build.as_secs_f64() * 1000.0,
            r.build.as_secs_f64() * 1000.0 / r.files as f64,
            r.walk.as_secs_f64() * 1000.0,
            r.query.as_secs_f64() * 1000.0,
            peak_mib()
        );
        rows.push(r);
    }
    let (first, last) = (&rows[0], &rows[rows.len() - 1]);
    let build = exponent(first, last, |r| r.build);
    let query = exponent(first, last, |r| r.query);
    println!("growth exponents against files: build {build:.2}, query {query:.2}");
    // Quick mode (a debug build) bounds the growth only, never a time.
    let slow = !quick && last.query > Duration::from_millis(20);
    if query > 1.1 || slow {
        eprintln!("FAIL: the query grows faster than the project, or passes 20 ms");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
