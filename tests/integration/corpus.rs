//! `patchgate eval` on the shared corpus of real edits: the accuracy bar of each engine.

use crate::support::{corpus_dir, run};

/// Parse `blocks n=260 correct=99.6% wrong=0.0% refused=0.4% median_us=41 p99_us=380`.
fn summary(stdout: &str) -> std::collections::HashMap<String, f64> {
    let last = stdout.lines().last().expect("a summary line");
    last.split_whitespace()
        .skip(1)
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| {
            (
                k.to_string(),
                v.trim_end_matches('%').parse::<f64>().unwrap(),
            )
        })
        .collect()
}

#[test]
fn eval_blocks_on_the_corpus_is_accurate_and_never_wrong() {
    let dir = corpus_dir();
    let out = run(
        &[
            "eval",
            dir.to_str().unwrap(),
            "--format",
            "blocks",
            "--repeat",
            "1",
        ],
        "",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let s = summary(&stdout);
    assert_eq!(s["n"], 260.0, "{stdout}");
    assert_eq!(s["wrong"], 0.0, "{stdout}");
    assert!(s["correct"] >= 99.5, "{stdout}");
}

#[test]
fn eval_on_a_missing_directory_exits_2() {
    let out = run(&["eval", "/nonexistent/corpus", "--format", "blocks"], "");
    assert_eq!(out.status.code(), Some(2));
}
