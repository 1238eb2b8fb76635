//! Helpers shared by the integration tests: running the binary and locating the corpus.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// The `patchgate` binary built for these tests.
pub(crate) fn bin() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_patchgate"));
    // The machine's own user config (policy, rules, a model) stays out of the tests.
    cmd.env(
        "PATCHGATE_CONFIG",
        "/nonexistent/patchgate-test-config.toml",
    );
    cmd
}

/// Run `patchgate ARGS` with `stdin` and wait for it.
pub(crate) fn run(args: &[&str], stdin: &str) -> Output {
    let mut child = bin()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn patchgate");
    // A run that fails early (a missing file) may exit before reading its input.
    if let Err(e) = child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
    {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "write stdin: {e}");
    }
    child.wait_with_output().expect("wait for patchgate")
}

/// The shared corpus of real edits (`../shared/corpus/git-history` beside the checkout).
pub(crate) fn corpus_dir() -> PathBuf {
    corpus("git-history")
}

/// One of the shared corpora by name (`git-history`, `git-history-wide`, `model-snippets`).
pub(crate) fn corpus(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/corpus")
        .join(name);
    assert!(
        dir.is_dir(),
        "the corpus is missing at {}: CI checks out ../shared beside the repository",
        dir.display()
    );
    dir
}
