//! What several benchmarks share: a generated Rust-like source file, the quick mode, and
//! numeric options (`--name N`).

// Each bench uses what it needs of these.
#![allow(dead_code)]

/// A Rust-like source file of about `bytes` bytes after `head`, every function distinct.
pub(crate) fn rust_source(bytes: usize, head: &str) -> String {
    let mut s = String::from(head);
    let mut i = 0;
    while s.len() < bytes {
        s.push_str(&format!(
            "/// Computes value number {i}.\npub fn compute_{i}(input: u64, table: &HashMap<u64, u64>) -> u64 {{\n    let base = input.wrapping_mul({i});\n    match table.get(&base) {{\n        Some(v) => v + {i},\n        None => base ^ 0x{i:x},\n    }}\n}}\n\n"
        ));
        i += 1;
    }
    s
}

/// Whether the bench runs its quick mode (`-- --quick`, or `PATCHGATE_BENCH_QUICK` set), as
/// CI does in a debug build on a shared machine: smaller inputs, and only the bounds that do
/// not depend on the machine's speed (growth exponents, memory), never absolute times.
pub(crate) fn quick() -> bool {
    std::env::args().any(|a| a == "--quick") || std::env::var_os("PATCHGATE_BENCH_QUICK").is_some()
}

/// The number after `name` on the command line, else `default`.
pub(crate) fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The variable naming the directory a bench's files, journal and pre-images go in (a
/// temporary directory is made under it): the disk measured. Unset, the system's temporary
/// directory (`$TMPDIR`, else `/tmp`).
pub(crate) const BENCH_DIR_VAR: &str = "PATCHGATE_BENCH_DIR";

/// A fresh temporary directory under `$PATCHGATE_BENCH_DIR`, else the system's. A gate
/// refuses a root under `/dev` (docs/DESIGN.md §7), so `/dev/shm` cannot be it: a tmpfs
/// mounted elsewhere can (on Linux, without touching the system's mounts: `unshare -m sh -c
/// 'mount -t tmpfs none DIR && PATCHGATE_BENCH_DIR=DIR cargo bench --bench B'`).
pub(crate) fn bench_tempdir() -> tempfile::TempDir {
    match std::env::var_os(BENCH_DIR_VAR) {
        Some(dir) => {
            let canonical = std::fs::canonicalize(&dir)
                .unwrap_or_else(|e| panic!("{BENCH_DIR_VAR}={}: {e}", dir.to_string_lossy()));
            assert!(
                !canonical.starts_with("/dev"),
                "{BENCH_DIR_VAR}={}: a gate refuses files under /dev; mount a tmpfs elsewhere \
                 (see benches/common/mod.rs)",
                dir.to_string_lossy()
            );
            tempfile::tempdir_in(&canonical)
                .unwrap_or_else(|e| panic!("{BENCH_DIR_VAR}={}: {e}", dir.to_string_lossy()))
        }
        None => tempfile::tempdir().expect("a temporary directory"),
    }
}
