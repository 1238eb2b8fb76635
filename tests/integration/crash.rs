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
    for kill in 0..KILLS {
        let mut child = Command::new(&exe)
            .args([
                "--exact",
                "crash::crash_child",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("CRASH_CHILD_DIR", dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Wait until the child writes, then let it write for a pseudo-random 0-40 ms.
        let ready = dir.path().join("child.ready");
        let started = std::time::Instant::now();
        while !ready.exists() {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "the child never started"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        std::thread::sleep(Duration::from_micros(seed % 40_000));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        std::fs::remove_file(&ready).unwrap();
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
        patchgate::workspace::fs::clean_stray_temps(dir.path());
    }
    // The kills really landed while the child was writing.
    assert!(changes > KILLS / 4, "only {changes} changes seen");
    assert!(
        interrupted > KILLS / 4,
        "only {interrupted} kills landed mid-write"
    );
    eprintln!("{KILLS} kills: {changes} completed rewrites seen, {interrupted} writes interrupted");
    // Temp files of killed writers are left behind; the start-up sweep removes them.
    patchgate::workspace::fs::clean_stray_temps(dir.path());
    let leftovers = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .filter(|e| is_temp_name(&e.file_name().to_string_lossy()))
        .count();
    assert_eq!(leftovers, 0);
}
