//! How the lazy merge grows with its input: time and peak memory for one edited region at 4 KB,
//! 40 KB, 400 KB and 4 MB, a 2,000-line snippet on 4 MB, a snippet rewriting a run of 500 to
//! 4,000 lines, one of 500 to 4,000 nested openers, one keeping every other line of a run of
//! 2,000 to 16,000 lines (rewriting the others), and a 3 MB snippet on a 3 MB file (answered
//! within 10 s under 1 GiB, or with `FILE_TOO_LARGE`). Prints one line per case, the growth
//! exponent of time against file size, and those of time against the replaced run's length, the
//! openers' count and the half-kept run's length. A one-region case is timed twice: at first
//! sight (the parses and line facts forgotten: one full parse included, beside the time of that
//! bare parse) and steady (the file's tree kept, each run's snippet another, so each result is
//! new and parsed from the file's tree). Exits non-zero when a bound is broken: a merge
//! refused, the exponent over 1.5 (over 1.3 for the replaced run, the openers and the half-kept
//! run), a peak over 400 bytes a byte of input, the 3 MB case over its time or memory. Run with
//! `cargo bench --bench lazy_scale`; `-- --quick` (CI, a debug build) runs 4 KB to 400 KB (the
//! replaced run and the openers 500 to 2,000 lines, the half-kept run 1,000 to 4,000, the
//! whole-file case at 40 KB) and the same bounds but time, the exponents fitted to each size's
//! fastest run (at least three a size), so that one load spike on a shared machine does not
//! read as growth. For a profiler, `-- --loop-steady N` (`--loop-first N`) runs only the 4 KB
//! one-region case, N merges steady (at first sight), and prints their median;
//! `-- --first-ratio N` runs only the 4 KB first-sight line (N merges, each after its bare
//! parse) and prints its ratio. In full, and alone with `-- --append N`, a three-line snippet
//! appending a function to 13,000 and 16,000 one-line functions (485 and 602 KB) is timed at
//! first sight with the review's syntax check of its result, which must not be given up for
//! the parse budget.

mod common;
mod counting;

use std::hint::black_box;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use patchgate::edit::{Hints, lazy};
use patchgate::error::ErrorCode;
use patchgate::syntax::{self, Lang, parse::parse};

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

/// One changed function in the middle of an `n`-function file, between placeholders; `k`
/// tells one run's change from another's.
fn one_region(n: usize, k: usize) -> String {
    let b = n / 2;
    format!(
        "// ... existing code ...\npub fn compute_{b}(input: u64, table: &HashMap<u64, u64>) -> u64 {{\n    let base = input.wrapping_mul({b}).rotate_left({k});\n    match table.get(&base) {{\n// ... existing code ...\n"
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
    fastest: Duration,
    peak: usize,
    outcome: Result<(), ErrorCode>,
}

/// The median of `runs` merges of run `k`'s snippet into `file`, each after `before(k)`.
fn measure(
    file: &str,
    snippet: impl Fn(usize) -> String,
    runs: usize,
    mut before: impl FnMut(usize),
) -> Measured {
    let hints = Hints {
        path: Some("src/lib.rs"),
        instruction: None,
    };
    let mut times = Vec::with_capacity(runs);
    let mut outcome = Ok(());
    let base = counting::start_peak();
    for k in 0..runs {
        let snippet = snippet(k);
        before(k);
        let start = Instant::now();
        let r = lazy::merge(black_box(file), black_box(&snippet), &hints);
        times.push(start.elapsed());
        outcome = r.map(|_| ()).map_err(|e| e.code);
    }
    times.sort();
    Measured {
        median: times[times.len() / 2],
        fastest: times[0],
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

/// The growth exponent of time against file size (one region), past which the merge no
/// longer scales with its input: linear work with some slack (a quadratic step gives 2).
const MAX_EXPONENT: f64 = 1.5;

/// The most a merge may take at its peak per byte of file and snippet (a tree-sitter parse
/// is up to about 300 bytes a byte; several copies of the texts besides).
const MAX_PEAK_PER_BYTE: usize = 400;

/// Forget every parse and the line facts of every file: the next merge sees its file first.
fn forget_parses() {
    syntax::forget_parses();
    lazy::forget_indexes();
}

/// The 4 KB one-region case alone, `runs` times steady or at first sight (for a profiler:
/// `perf record` sees the merge, not the other sizes).
fn profile_loop(first: bool, runs: usize) {
    let file = source(4 << 10);
    let n = file.matches("pub fn compute_").count();
    let m = measure(
        &file,
        |k| one_region(n, k + 1),
        runs,
        |k| {
            if first || k == 0 {
                forget_parses();
            }
            if !first && k == 0 {
                let _ = syntax::check::errors_of(Lang::Rust, &file);
            }
        },
    );
    let how = if first { "first sight" } else { "steady" };
    report(&format!("{how}, 4KB, {runs} runs"), &m);
}

fn main() -> ExitCode {
    for (flag, first) in [("--loop-steady", false), ("--loop-first", true)] {
        let runs = common::arg(flag, 0);
        if runs > 0 {
            profile_loop(first, runs);
            return ExitCode::SUCCESS;
        }
    }
    let runs = common::arg("--append", 0);
    if runs > 0 {
        return if append_cases(runs) {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        };
    }
    let runs = common::arg("--first-ratio", 0);
    if runs > 0 {
        let file = source(4 << 10);
        let n = file.matches("pub fn compute_").count();
        first_sight("4KB", &file, n, runs);
        return ExitCode::SUCCESS;
    }
    let quick = common::quick();
    let mut ok = true;
    let mut points = Vec::new();
    let sizes: &[(&str, usize, usize)] = if quick {
        &[
            ("4KB", 4 << 10, 20),
            ("40KB", 40 << 10, 10),
            ("400KB", 400 << 10, 3),
        ]
    } else {
        &[
            ("4KB", 4 << 10, 200),
            ("40KB", 40 << 10, 100),
            ("400KB", 400 << 10, 20),
            ("4MB", 4 << 20, 5),
        ]
    };
    for &(label, bytes, runs) in sizes {
        let file = source(bytes);
        let n = file.matches("pub fn compute_").count();
        first_sight(label, &file, n, runs.clamp(1, FIRST_SIGHT_RUNS));
        // Steady: the file's tree kept (parsed before the first run), each result new.
        let m = measure(
            &file,
            |k| one_region(n, k + 1),
            runs,
            |k| {
                if k == 0 {
                    forget_parses();
                    let _ = syntax::check::errors_of(Lang::Rust, &file);
                }
            },
        );
        report(&format!("one region, {label}"), &m);
        ok &= m.outcome.is_ok();
        ok &= within_peak(&m, file.len());
        // Quick mode fits the fastest run of each size: load on a shared machine only adds
        // time, and a spike over two of the largest size's three runs would move its median.
        let time = if quick { m.fastest } else { m.median };
        points.push((file.len() as f64, time.as_secs_f64()));
    }
    // Growth exponent: the slope of log(time) against log(size), first to last.
    let (first, last) = (points[0], points[points.len() - 1]);
    let exponent = (last.1 / first.1).ln() / (last.0 / first.0).ln();
    println!(
        "growth exponent (time ~ size^k), {} to {}: k = {exponent:.2} (bound {MAX_EXPONENT})",
        sizes[0].0,
        sizes[sizes.len() - 1].0
    );
    ok &= exponent <= MAX_EXPONENT;

    let big = if quick { 400 << 10 } else { 4 << 20 };
    let file = source(big);
    let n = file.matches("pub fn compute_").count();
    let snippet = many_regions(n, if quick { 200 } else { 2000 });
    let m = measure(
        &file,
        |_| snippet.clone(),
        if quick { 1 } else { 3 },
        |_| (),
    );
    report(
        &format!(
            "{}-line snippet, {}",
            snippet.lines().count(),
            sizes[sizes.len() - 1].0
        ),
        &m,
    );
    ok &= m.outcome.is_ok();
    ok &= within_peak(&m, file.len() + snippet.len());

    let runs: (&[usize], &[usize]) = (&[500, 1000, 2000, 4000], &[500, 1000, 2000]);
    ok &= run_growth(quick, "replaced run", replaced_run_case, runs);
    ok &= run_growth(quick, "nested openers", nested_openers_case, runs);
    let halves: (&[usize], &[usize]) = (&[2000, 4000, 8000, 16000], &[1000, 2000, 4000]);
    ok &= run_growth(quick, "every other line kept", every_other_case, halves);

    if !quick {
        ok &= append_cases(3);
    }

    // A whole file as its own snippet: within 10 s (not in quick mode, which never bounds
    // time) under 1 GiB and the peak per byte, or refused as too large.
    let whole = if quick { 40 << 10 } else { 3 << 20 };
    let file = source(whole);
    let snippet = source(whole).replace("wrapping_mul(", "wrapping_add(");
    let m = measure(&file, |_| snippet.clone(), 1, |_| ());
    report(&format!("{}KB snippet, same file", whole >> 10), &m);
    let in_time = quick || m.median < Duration::from_secs(10);
    let bounded = in_time && m.peak < (1 << 30) && within_peak(&m, 2 * whole);
    ok &= bounded || m.outcome == Err(ErrorCode::FileTooLarge);
    if ok {
        ExitCode::SUCCESS
    } else {
        println!("a bound is broken");
        ExitCode::FAILURE
    }
}

/// The first-sight time of one region in `file` (the parses forgotten before each run: one
/// full parse included) beside one bare parse of the file, and their ratio. Each run's bare
/// parse comes right before its merge, after the forgetting: load on a shared machine weighs
/// on both alike, and each pays for the freeing of one tree of the file before it (the
/// allocator sorts the freed memory at the next large allocation).
fn first_sight(label: &str, file: &str, n: usize, runs: usize) {
    let mut bare = Vec::with_capacity(runs);
    let m = measure(
        file,
        |k| one_region(n, k),
        runs,
        |_| {
            forget_parses();
            bare.push(bare_parse(file));
        },
    );
    bare.sort();
    let bare = bare[bare.len() / 2];
    println!(
        "{:<28} median {:>10.1} µs   bare parse {:>10.1} µs   ratio {:.2}",
        format!("first sight, {label}"),
        m.median.as_secs_f64() * 1e6,
        bare.as_secs_f64() * 1e6,
        m.median.as_secs_f64() / bare.as_secs_f64().max(1e-9)
    );
}

/// The time of one parse of `file`, its tree dropped after.
fn bare_parse(file: &str) -> Duration {
    let start = Instant::now();
    let tree = parse(Lang::Rust, black_box(file), None);
    let took = start.elapsed();
    drop(tree);
    took
}

/// The growth exponent of time against the length of a replaced run, past which rewriting
/// many lines costs more than linear work and some slack (a pairwise step over the run and
/// its replacement gives 2).
const MAX_RUN_EXPONENT: f64 = 1.3;

/// A file of `n` one-line functions between a head and a tail, and a snippet keeping the head
/// and the tail and rewriting every function (another name, parameter and body): one run of
/// `n` lines replaced by `n` others. The merge may refuse it (it changes nearly every line);
/// its time must still grow about linearly with `n`.
fn replaced_run_case(n: usize) -> (String, String) {
    let mut file = String::from("fn head() {}\n");
    let mut snippet = String::from("// ... existing code ...\nfn head() {}\n");
    for i in 0..n {
        file.push_str(&format!("fn f{i}(x: u32) -> u32 {{ x + {i} }}\n"));
        snippet.push_str(&format!("fn g{i}(y: u64) -> u64 {{ y * {i} }}\n"));
    }
    file.push_str("fn tail() {}\n");
    snippet.push_str("fn tail() {}\n");
    (file, snippet)
}

/// The same file, and a snippet keeping its head and tail around `n` nested new openers
/// (`fn h0() {` … one inside the other) and their `n` closers: each opener's unit reaches to
/// the last closers, so finding every unit's end by scanning down to its closer is quadratic.
fn nested_openers_case(n: usize) -> (String, String) {
    let (file, _) = replaced_run_case(n);
    let mut snippet = String::from("// ... existing code ...\nfn head() {}\n");
    for i in 0..n {
        snippet.push_str(&format!("fn h{i}() {{\n"));
    }
    snippet.push_str(&"}\n".repeat(n));
    snippet.push_str("fn tail() {}\n");
    (file, snippet)
}

/// The same file, and a snippet keeping every other function and rewriting the others: the
/// file's one run cut into `n / 2` one-line runs, each of which may follow every earlier one
/// (a chain that weighs each run against every earlier one is quadratic in them).
fn every_other_case(n: usize) -> (String, String) {
    let (file, _) = replaced_run_case(n);
    let mut snippet = String::from("// ... existing code ...\nfn head() {}\n");
    for i in 0..n {
        if i % 2 == 0 {
            snippet.push_str(&format!("fn f{i}(x: u32) -> u32 {{ x + {i} }}\n"));
        } else {
            snippet.push_str(&format!("fn g{i}(y: u64) -> u64 {{ y * {i} }}\n"));
        }
    }
    snippet.push_str("fn tail() {}\n");
    (file, snippet)
}

/// A three-line snippet appending a function whose body has a syntax error of its own to a
/// file of `n` one-line functions (13,000: 485 KB; 16,000: 602 KB, over half the parse
/// limit): the file and its snippet.
fn append_case(n: usize) -> (String, String) {
    let (file, _) = replaced_run_case(n);
    let snippet = "// ... existing code ...\nfn tail() {}\nfn added(y: u64) -> u64 { y * ; }\n";
    (file, snippet.to_string())
}

/// The append at first sight (the parses and line facts forgotten), at 13,000 and 16,000 lines,
/// `runs` times each: the merge and the review's syntax check of its result timed together
/// (their median), and what the check found. Whether every check ran: in one thread no parse
/// may wait out the parse budget (`Skipped::Busy`), as only its own caller could hold the
/// bytes; one past its deadline (a loaded machine) is said, not counted.
fn append_cases(runs: usize) -> bool {
    let hints = Hints {
        path: Some("src/lib.rs"),
        instruction: None,
    };
    let mut ok = true;
    for n in [13_000, 16_000] {
        let (file, snippet) = append_case(n);
        let mut times = Vec::with_capacity(runs);
        let mut said = String::new();
        for _ in 0..runs {
            forget_parses();
            let start = Instant::now();
            let checked = lazy::merge(black_box(&file), &snippet, &hints)
                .map(|merged| syntax::check("src/lib.rs", Some(&file), &merged.content));
            times.push(start.elapsed());
            said = match checked {
                Ok(Ok(errors)) => format!("checked, {} new error(s)", errors.len()),
                Ok(Err(skipped)) => {
                    ok &= skipped != syntax::Skipped::Busy;
                    format!("check skipped: {}", skipped.reason())
                }
                Err(e) => {
                    ok = false;
                    format!("refused {}", e.code.as_str())
                }
            };
        }
        times.sort();
        println!(
            "{:<28} median {:>10.1} ms   {said}",
            format!("append, {n} lines ({} KB)", file.len() / 1000),
            times[times.len() / 2].as_secs_f64() * 1e3
        );
    }
    ok
}

/// The growth exponent of a snippet of `n` lines made by `case`, over `sizes` (in full, and
/// in quick mode), each size's fastest of three merges compared (load only adds time).
/// Whether it is within [`MAX_RUN_EXPONENT`].
fn run_growth(
    quick: bool,
    what: &str,
    case: fn(usize) -> (String, String),
    sizes: (&[usize], &[usize]),
) -> bool {
    let sizes = if quick { sizes.1 } else { sizes.0 };
    let mut points = Vec::new();
    for &n in sizes {
        let (file, snippet) = case(n);
        let m = measure(&file, |_| snippet.clone(), 3, |_| ());
        report(&format!("{what}, {n}"), &m);
        points.push((n as f64, m.fastest.as_secs_f64()));
    }
    let (first, last) = (points[0], points[points.len() - 1]);
    let exponent = (last.1 / first.1).ln() / (last.0 / first.0).ln();
    println!(
        "growth exponent (time ~ n^k), {what}, {} to {}: k = {exponent:.2} (bound {MAX_RUN_EXPONENT})",
        sizes[0],
        sizes[sizes.len() - 1]
    );
    exponent <= MAX_RUN_EXPONENT
}

/// At most this many first-sight runs per size (each parses the whole file).
const FIRST_SIGHT_RUNS: usize = 40;

/// Whether `m` peaked within [`MAX_PEAK_PER_BYTE`] of `bytes` of input (said when not).
fn within_peak(m: &Measured, bytes: usize) -> bool {
    let ok = m.peak <= bytes.saturating_mul(MAX_PEAK_PER_BYTE);
    if !ok {
        println!(
            "  peak {} bytes a byte of input (bound {MAX_PEAK_PER_BYTE})",
            m.peak / bytes.max(1)
        );
    }
    ok
}
