//! The code search on the command line, over the real search corpora: for each project of
//! `../shared/corpus/search` and `search-fresh` (beside the worktree, or `PATCHGATE_CORPUS`),
//! the snapshot is unpacked, `patchgate search` builds its index once (timed: the index
//! build as a user first meets it, process start to exit), then answers every query of the
//! project from the warm index, each a process of its own. Prints per project the build
//! time, the kept index's size, the median and 90th-percentile query time, and the median
//! CPU time a query process took (user and system, from the waited children's usage: on a
//! shared machine the wall time is mostly waiting for a core, the CPU time the work), and the
//! median wall time of `patchgate --version` run after each query (the floor: process start
//! and exit under the same load); exits non-zero when the largest project's median wall time
//! passes [`TARGET_MS`] (issue 40's target), or when the corpus is missing. `cargo bench
//! --bench search_cli` (`-- --queries N` to cap the queries per project).

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use patchgate::search::eval;

/// The median command-line query on a warm index of the largest project, at most.
const TARGET_MS: f64 = 5.0;

/// The corpus sets measured.
const SETS: &[&str] = &["search", "search-fresh"];

fn corpus() -> PathBuf {
    std::env::var_os("PATCHGATE_CORPUS").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus"),
        PathBuf::from,
    )
}

fn max_queries() -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == "--queries")
        .and_then(|i| args.get(i + 1)?.parse().ok())
        .unwrap_or(usize::MAX)
}

/// The user and system time of this process's waited children so far.
fn children_cpu() -> Duration {
    // SAFETY: `getrusage` only writes the `rusage` it is given, which lives through the call.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above; RUSAGE_CHILDREN is a valid `who`.
    if unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) } != 0 {
        return Duration::ZERO;
    }
    let time = |t: libc::timeval| {
        Duration::from_secs(u64::try_from(t.tv_sec).unwrap_or(0))
            + Duration::from_micros(u64::try_from(t.tv_usec).unwrap_or(0))
    };
    time(usage.ru_utime) + time(usage.ru_stime)
}

/// One `patchgate search` over `root` with its state in `state`: the wall time it took and
/// the CPU time its process used.
fn search(root: &Path, state: &Path, query: &str) -> (Duration, Duration) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_patchgate"));
    command
        .args(["search", "--root"])
        .arg(root)
        .arg("--")
        .arg(query);
    timed(command, state)
}

/// One `patchgate --version`: the floor a query cannot go below (the process's start and
/// exit, and the wait for a core on a loaded machine), timed as [`search`] is.
fn floor(state: &Path) -> (Duration, Duration) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_patchgate"));
    command.arg("--version");
    timed(command, state)
}

/// `command` run to its end with its state in `state`: its wall and CPU time.
fn timed(mut command: Command, state: &Path) -> (Duration, Duration) {
    let cpu = children_cpu();
    let started = Instant::now();
    let status = command
        .env("XDG_STATE_HOME", state)
        .env("XDG_CONFIG_HOME", state.join("config"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("patchgate runs");
    let wall = started.elapsed();
    assert!(status.code().is_some_and(|c| c <= 1), "patchgate failed");
    (wall, children_cpu().saturating_sub(cpu))
}

/// The size of the index files under `state`.
fn index_bytes(state: &Path) -> u64 {
    let dir = state.join("patchgate").join("search");
    std::fs::read_dir(dir).map_or(0, |entries| {
        entries
            .flatten()
            .filter_map(|e| e.metadata().ok())
            .map(|m| m.len())
            .sum()
    })
}

/// The median of `values` (sorted in place).
fn median_of(values: &mut [Duration]) -> Duration {
    values.sort();
    values[values.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// One project: (the index's bytes, median query ms, median floor ms).
fn project(dir: &Path) -> (u64, f64, f64) {
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let root = eval::unpack(dir, &tmp.path().join("root")).expect("the snapshot unpacks");
    let state = tmp.path().join("state");
    let queries = eval::queries(dir).expect("the queries read");
    let (build, _) = search(&root, &state, &queries[0].query);
    let size = index_bytes(&state);
    // Each query followed by the floor, so both meet the same load.
    let (mut times, mut cpu, mut floors) = (Vec::new(), Vec::new(), Vec::new());
    for q in queries.iter().take(max_queries()) {
        let (wall, used) = search(&root, &state, &q.query);
        times.push(wall);
        cpu.push(used);
        floors.push(floor(&state).0);
    }
    let median = ms(median_of(&mut times));
    let floor_median = ms(median_of(&mut floors));
    let p90 = ms(times[times.len() * 9 / 10]);
    println!(
        "{:<16} build {:>7.1} ms  index {:>6} KiB  query median {median:>6.2} ms  p90 {p90:>6.2} ms  cpu median {:>5.2} ms  floor median {:>5.2} ms  ({} queries)",
        dir.file_name().unwrap_or_default().to_string_lossy(),
        ms(build),
        size / 1024,
        ms(median_of(&mut cpu)),
        floor_median,
        times.len()
    );
    (size, median, floor_median)
}

fn main() -> ExitCode {
    let corpus = corpus();
    let mut largest: Option<(u64, f64, f64)> = None;
    for set in SETS {
        let Ok(projects) = eval::projects(&corpus.join(set)) else {
            eprintln!("no corpus at {}", corpus.join(set).display());
            return ExitCode::FAILURE;
        };
        for p in projects {
            let (size, median, floor) = project(&p);
            if largest.is_none_or(|(s, _, _)| size > s) {
                largest = Some((size, median, floor));
            }
        }
    }
    let Some((size, median, floor)) = largest else {
        return ExitCode::FAILURE;
    };
    let met = median <= TARGET_MS;
    println!(
        "largest index {} KiB: median {median:.2} ms (floor {floor:.2} ms), target <= {TARGET_MS} ms {}",
        size / 1024,
        if met { "met" } else { "NOT met" }
    );
    if met {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
