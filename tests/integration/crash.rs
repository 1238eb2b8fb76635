//! Atomic writes under SIGKILL: a child process writes multi-megabyte files through the real
//! writer in a loop and is killed at random moments, hundreds of times; every target must
//! hold exactly the old or the new content, never a mix or a truncation.
//!
//! The child is this test binary itself, re-run with `CRASH_CHILD_DIR` set, so the code under
//! test is the library's own `write_atomic`.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use patchgate::workspace::fs::{is_temp_name, write_atomic};
use patchgate::workspace::paths::Root;

const FILES: usize = 3;
const SIZE: usize = 3 * 1024 * 1024;
const KILLS: usize = 200;

fn content(version: u8, file: usize) -> Vec<u8> {
    let line = format!("file {file} version {version} \n");
    let mut v = line.repeat(SIZE / line.len() + 1).into_bytes();
    v.truncate(SIZE);
    v
}

/// The child: rewrite every target with alternating versions until killed.
#[test]
fn crash_child() {
    let Some(dir) = std::env::var_os("CRASH_CHILD_DIR") else {
        return; // only runs as the crash test's child
    };
    let root = Root::new(Path::new(&dir)).unwrap();
    let versions = [
        (0..FILES).map(|f| content(1, f)).collect::<Vec<_>>(),
        (0..FILES).map(|f| content(2, f)).collect::<Vec<_>>(),
    ];
    // Tell the parent the writing starts now.
    std::fs::write(Path::new(&dir).join("child.ready"), b"").unwrap();
    let mut round = 0usize;
    loop {
        for (f, bytes) in versions[round % 2].iter().enumerate() {
            let path = root.resolve(&format!("target-{f}.txt")).unwrap();
            write_atomic(&path, bytes, None).unwrap();
        }
        round += 1;
    }
}

#[test]
fn sigkill_during_writes_leaves_old_or_new_content() {
    let dir = tempfile::tempdir().unwrap();
    let root = Root::new(dir.path()).unwrap();
    for f in 0..FILES {
        write_atomic(
            &root.resolve(&format!("target-{f}.txt")).unwrap(),
            &content(1, f),
            None,
        )
        .unwrap();
    }
    let valid: Vec<[Vec<u8>; 2]> = (0..FILES).map(|f| [content(1, f), content(2, f)]).collect();
    let exe = std::env::current_exe().unwrap();
    let mut seed: u64 = 0x2545_F491_4F6C_DD1D;
    let mut changes = 0usize;
    let mut interrupted = 0usize;
    let mut last: Vec<Vec<u8>> = (0..FILES).map(|f| content(1, f)).collect();
    let window = kill_window(&root);
    // At least KILLS kills, more (up to four times as many) while too few of them have landed
    // mid-write: on a loaded machine the window measured at the start drifts.
    let mut kill = 0;
    while kill < KILLS || (kill < 4 * KILLS && (changes <= KILLS / 4 || interrupted <= KILLS / 4)) {
        kill += 1;
        // Once the child writes, let it write for a pseudo-random part of the window.
        let mut child = start_child(&exe, "crash::crash_child", "CRASH_CHILD_DIR", dir.path());
        std::thread::sleep(Duration::from_micros(next(&mut seed) % window));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        for (f, versions) in valid.iter().enumerate() {
            let now = std::fs::read(dir.path().join(format!("target-{f}.txt"))).unwrap();
            assert!(
                now == versions[0] || now == versions[1],
                "kill {kill}: target-{f}.txt holds {} bytes that are neither version",
                now.len()
            );
            if now != last[f] {
                changes += 1;
                last[f] = now;
            }
        }
        // A temp file left behind means the kill landed in the middle of a write.
        interrupted += usize::from(
            std::fs::read_dir(dir.path())
                .unwrap()
                .flatten()
                .any(|e| is_temp_name(&e.file_name().to_string_lossy())),
        );
        sweep_as_a_gate_starting_later(dir.path());
    }
    // The kills really landed while the child was writing.
    assert!(changes > KILLS / 4, "only {changes} changes seen");
    assert!(
        interrupted > KILLS / 4,
        "only {interrupted} kills landed mid-write"
    );
    eprintln!("{kill} kills: {changes} completed rewrites seen, {interrupted} writes interrupted");
    // Temp files of killed writers are left behind; the start-up sweep removes them.
    sweep_as_a_gate_starting_later(dir.path());
    let leftovers = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .filter(|e| is_temp_name(&e.file_name().to_string_lossy()))
        .count();
    assert_eq!(leftovers, 0);
}

/// The start-up sweep of a gate starting once the killed writers' temp files are stale (it
/// leaves younger ones: another process's writes under way).
fn sweep_as_a_gate_starting_later(dir: &Path) {
    use patchgate::workspace::fs::{STALE_TEMP_AGE, clean_stray_temps};
    let long_ago = std::time::SystemTime::now() - STALE_TEMP_AGE * 2;
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        if is_temp_name(&e.file_name().to_string_lossy()) {
            let f = std::fs::File::options().append(true).open(e.path());
            f.and_then(|f| f.set_modified(long_ago)).unwrap();
        }
    }
    clean_stray_temps(dir);
}

/// Files in a batch, their size, and the rounds of the batch crash test.
const BATCH_FILES: usize = 3;
const BATCH_SIZE: usize = 64 * 1024;
const BATCH_KILLS: usize = 40;

fn batch_content(version: u8, file: usize) -> String {
    let line = format!("batch file {file} version {version}\n");
    let mut s = line.repeat(BATCH_SIZE / line.len() + 1);
    s.truncate(BATCH_SIZE - 1);
    s.push('\n');
    s
}

/// The batch child: through the gate (auto policy), rewrite all files of the batch to the
/// other version, again and again, until killed.
#[test]
fn batch_child() {
    use patchgate::review::edit::{EditOp, ProposedEdit};
    use patchgate::review::journal::Journal;
    use patchgate::review::policy::Policy;
    use patchgate::review::queue::{Gate, Request};
    use patchgate::workspace::Workspace;
    use patchgate::workspace::config::{Config, PolicyName};
    let Some(dir) = std::env::var_os("BATCH_CHILD_DIR") else {
        return; // only runs as the batch crash test's child
    };
    let work = Path::new(&dir).join("work");
    let ws = Workspace::new(&work, Config::default()).unwrap();
    let journal = Journal::at(Path::new(&dir).join("journal.jsonl"), &ws.root);
    let gate = Gate::new(ws, Policy::simple(PolicyName::Auto), journal, None);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    std::fs::write(Path::new(&dir).join("child.ready"), b"").unwrap();
    loop {
        let now = std::fs::read_to_string(work.join("batch-0.txt")).unwrap();
        let next = if now == batch_content(1, 0) { 2 } else { 1 };
        let edits = (0..BATCH_FILES)
            .map(|f| ProposedEdit {
                path: format!("batch-{f}.txt"),
                op: EditOp::Write(batch_content(next, f)),
            })
            .collect();
        let req = Request {
            tool: "batch_patch_files".into(),
            client: None,
            edits,
            dry_run: false,
            keep_failure: false,
        };
        rt.block_on(gate.submit(req)).unwrap();
    }
}

#[test]
fn sigkill_during_batches_leaves_every_batch_all_or_nothing() {
    use patchgate::review::intent;
    use patchgate::review::journal::Journal;
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    for f in 0..BATCH_FILES {
        std::fs::write(work.join(format!("batch-{f}.txt")), batch_content(1, f)).unwrap();
    }
    let root = Root::new(&work).unwrap();
    let journal = Journal::at(dir.path().join("journal.jsonl"), &root);
    let exe = std::env::current_exe().unwrap();
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let (mut mixed_before_recovery, mut rolled_back, mut flips) = (0usize, 0usize, 0usize);
    let mut last = 1u8;
    // At least BATCH_KILLS kills, more (up to four times as many) while none has landed
    // mid-batch or none after a completed one: how fast a batch runs against the pace measured
    // varies with the machine's load.
    let mut kill = 0;
    while kill < BATCH_KILLS || (kill < 4 * BATCH_KILLS && (flips == 0 || rolled_back == 0)) {
        kill += 1;
        let mut child = start_child(&exe, "crash::batch_child", "BATCH_CHILD_DIR", dir.path());
        // Let one batch complete (the machine's pace), then kill within the next one or two.
        let before = journaled(dir.path());
        let first = std::time::Instant::now();
        while journaled(dir.path()) == before {
            assert!(
                first.elapsed() < Duration::from_secs(60),
                "no batch completes"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        let pace = u64::try_from(first.elapsed().as_micros())
            .unwrap_or(u64::MAX)
            .max(1000);
        std::thread::sleep(Duration::from_micros(next(&mut seed) % (2 * pace)));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let version = |f: usize| {
            let now = std::fs::read_to_string(work.join(format!("batch-{f}.txt"))).unwrap();
            (1..=2u8)
                .find(|&v| now == batch_content(v, f))
                .unwrap_or_else(|| panic!("kill {kill}: batch-{f}.txt is neither version"))
        };
        let seen: Vec<u8> = (0..BATCH_FILES).map(version).collect();
        mixed_before_recovery += usize::from(seen.iter().any(|&v| v != seen[0]));
        // What a gate does when it starts on the root.
        rolled_back += intent::recover(&root, &journal, 1 << 30).len();
        sweep_as_a_gate_starting_later(&work);
        let after: Vec<u8> = (0..BATCH_FILES).map(version).collect();
        assert!(
            after.iter().all(|&v| v == after[0]),
            "kill {kill}: the batch is half written: {after:?}"
        );
        flips += usize::from(after[0] != last);
        last = after[0];
    }
    eprintln!(
        "{kill} kills: {mixed_before_recovery} left a half-written batch, \
         {rolled_back} batches rolled back, {flips} completed batches seen"
    );
    assert!(
        flips > 0 && rolled_back > 0,
        "the kills never landed mid-batch"
    );
}

/// The size of the journal in `dir`: it grows by one entry per completed batch.
fn journaled(dir: &Path) -> u64 {
    std::fs::metadata(dir.join("journal.jsonl")).map_or(0, |m| m.len())
}

/// Start this test binary's child test `test` with `env` set to `dir`, and wait until it
/// says it has started writing (`child.ready`, removed again for the next round).
/// How long (µs) a kill may wait after the child starts writing: 40 ms, or on a machine so
/// loaded that a round of writes takes longer, two rounds as measured here, so that the
/// kills land while the child writes whatever the machine's speed.
fn kill_window(root: &Root) -> u64 {
    let started = std::time::Instant::now();
    for f in 0..FILES {
        let path = root.resolve(&format!("target-{f}.txt")).unwrap();
        write_atomic(&path, &content(1, f), None).unwrap();
    }
    let round = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
    round.saturating_mul(2).max(40_000)
}

fn start_child(exe: &Path, test: &str, env: &str, dir: &Path) -> std::process::Child {
    let child = Command::new(exe)
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(env, dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let ready = dir.join("child.ready");
    let started = std::time::Instant::now();
    while !ready.exists() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the child never started"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    std::fs::remove_file(&ready).unwrap();
    child
}

/// The next number of a xorshift sequence.
fn next(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}
