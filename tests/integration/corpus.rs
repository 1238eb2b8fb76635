//! `patchgate eval` on the shared corpus of real edits: the accuracy of each engine.

use std::collections::HashMap;

use std::path::Path;

use crate::support::{corpus, corpus_dir, run};

/// Parse `blocks n=260 correct=99.6% wrong=0.0% refused=0.4% median_us=41 p99_us=380`.
fn summary(stdout: &str) -> HashMap<String, f64> {
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

/// Every merge that loses the file's own code carries an `unseen:` warning (or was refused,
/// and is not a merge), and at most `pct` percent of the right merges do (docs/DESIGN.md §4).
fn unseen_flags_hold(stdout: &str, s: &HashMap<String, f64>, pct: f64) {
    assert_eq!(
        s["unseen_flagged_lost_code"], s["lost_code_merges"],
        "a merge that loses code carries no unseen warning: {stdout}"
    );
    assert!(s["unseen_flagged_correct_pct"] <= pct, "{stdout}");
}

fn eval(format: &str) -> (String, HashMap<String, f64>) {
    let (stdout, s) = eval_dir(&corpus_dir(), format);
    assert_eq!(s["n"], 260.0, "{stdout}");
    (stdout, s)
}

fn eval_dir(dir: &Path, format: &str) -> (String, HashMap<String, f64>) {
    let args = [
        "eval",
        dir.to_str().unwrap(),
        "--format",
        format,
        "--repeat",
        "1",
    ];
    let out = run(&args, "");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let s = summary(&stdout);
    (stdout, s)
}

/// The refused cases of an `eval` report, by code: its `refused CODE (k):` lists.
fn refusals(stdout: &str) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    let mut lines = stdout.lines().peekable();
    while let Some(line) = lines.next() {
        let Some(code) = line
            .strip_prefix("refused ")
            .and_then(|l| l.split(' ').next())
        else {
            continue;
        };
        if !line.ends_with("):") {
            continue;
        }
        let mut names = Vec::new();
        while let Some(name) = lines.next_if(|l| l.starts_with("  ")) {
            names.push(name.trim().to_string());
        }
        out.push((code.to_string(), names));
    }
    out
}

/// The SEARCH/REPLACE engine is never wrong on the corpus. Its two refusals are blocks whose
/// SEARCH text occurs several times with nothing to tell the places apart (every place is
/// equally consistent with the block): exactly those two, each refused as `AMBIGUOUS_MATCH`
/// (the bar is 99.5% correct).
#[test]
fn eval_blocks_on_the_corpus_is_never_wrong_and_refuses_only_true_ambiguity() {
    let (stdout, s) = eval("blocks");
    // Measured 2026-11-27: correct 99.2%, wrong 0.0%, the two refusals below; a change that
    // moves them updates them in the same commit, with the reason.
    assert_eq!(s["wrong"], 0.0, "{stdout}");
    assert!(s["correct"] >= 99.2, "{stdout}");
    let ambiguous = [
        // `}` twice, at three places alike.
        "gin-gonic_gin-6a3a8ae61b-3181",
        // `throw new IllegalStateException();` and its neighbours, at ten places alike.
        "google_gson-0d8150fe52-0471",
    ];
    assert_eq!(
        refusals(&stdout),
        [(
            "AMBIGUOUS_MATCH".to_string(),
            ambiguous.map(String::from).to_vec()
        )],
        "{stdout}"
    );
}

/// The lazy-snippet merge on the generator's snippets of flask, gin, ky and gson. Issue 14's
/// bar is 97% correct and 0.5% wrong; these floors hold what the engine reaches today (no
/// lower), so that no change makes it worse while the work goes on. (The grounding rule of
/// issue 26 refuses one more right merge here, for two fewer wrong ones on the systems
/// corpus; the rule that a closer at a snippet's open end may not delete unshown lines
/// before the file's last line refuses one more, a deletion by omission at the file's end;
/// and a closer that may be a later one no longer deletes the method between, which keeps
/// one method that commit removed: lines lost come first, then wrong merges, then refusals.
/// The independent licence check refuses one more: a changed constructor line at a snippet's
/// edge whose merge dropped two comment lines the snippet never showed.)
#[test]
fn eval_lazy_on_git_history_holds_its_floor() {
    let (stdout, s) = eval("lazy");
    // Measured 2026-11-27: n 260, correct 88.1%, wrong 1.9%, lost 0.0%, lost_code 0.0%,
    // unseen on 13.1% of the right merges; a change that moves them updates them in the
    // same commit, with the reason.
    // (wrong 1.9 -> 2.3%, right 89.6 -> 90.0%: the `gap-depth` rule went, and a merge it
    // refused is loose: it keeps lines the commit deleted where the snippet does not show them.)
    assert!(s["correct"] >= 88.1, "{stdout}");
    assert!(s["wrong"] <= 2.3, "{stdout}");
    // Issue 37's floors: right (correct or loose) >= 86%, harmful <= 1%. Measured 2026-11-27
    // with the margin's decision: right 89.6%, harmful 0.4%.
    assert!(s["right"] >= 90.0, "{stdout}");
    assert!(s["harmful"] <= 0.4, "{stdout}");
    assert_eq!(s["lost"], 0.0, "{stdout}");
    assert_eq!(s["lost_code"], 0.0, "{stdout}");
    // Issue 34's bar: at most 15% of the right merges carry `unseen:`.
    unseen_flags_hold(&stdout, &s, 13.1);
}

/// The same on eight more projects in eight languages (issue 14's bar: 95% and 0.5%; the
/// open-end closer rule refuses one deletion by omission at a file's end here too).
#[test]
fn eval_lazy_on_git_history_wide_holds_its_floor() {
    let (stdout, s) = eval_dir(&corpus("git-history-wide"), "lazy");
    // Measured 2026-11-27: n 240, correct 83.3%, wrong 1.7%, lost 0.4%, lost_code 0.0%,
    // unseen on 12.0% of the right merges; a change that moves them updates them in the
    // same commit, with the reason.
    assert_eq!(s["n"], 240.0, "{stdout}");
    assert!(s["correct"] >= 83.3, "{stdout}");
    assert!(s["wrong"] <= 1.2, "{stdout}");
    // Issue 37: right >= 81%, harmful <= 1%; measured 84.2% and 0.8%; then 83.8% and 0.8% (a deletion licensed only among new lines refused).
    assert!(s["right"] >= 83.8, "{stdout}");
    assert!(s["harmful"] <= 0.8, "{stdout}");
    assert!(s["lost"] <= 0.4, "{stdout}");
    assert_eq!(s["lost_code"], 0.0, "{stdout}");
    unseen_flags_hold(&stdout, &s, 12.0);
}

/// Rust, C and C++ (bat, clap, libuv, spdlog): the held-out set of the lazy merge's work,
/// judged by its numbers alone. Ceilings on what it gets wrong and on merges that lose
/// lines hold what the engine reaches today (issue 26's bars: 1% and none). The licence
/// check turned one wrong merge and one right one into refusals.
#[test]
fn eval_lazy_on_git_history_systems_holds_its_ceilings() {
    let (stdout, s) = eval_dir(&corpus("git-history-systems"), "lazy");
    // Measured 2026-11-27: n 280, correct 76.8%, wrong 6.4%, lost 2.5%, lost_code 0.4%,
    // unseen on 11.6% of the right merges; a change that moves them updates them in the
    // same commit, with the reason.
    assert_eq!(s["n"], 280.0, "{stdout}");
    assert!(s["correct"] >= 77.9, "{stdout}");
    assert!(s["wrong"] <= 4.3, "{stdout}");
    // Issue 37's bars are right >= 77% and harmful <= 1%: measured 78.6% and 4.6%, then 79.6% and 3.2% (a snippet mixing tabs and spaces keeps its tabs),
    // then 2.5% (measured 2026-11-28), then 80.4% and 1.8% (2026-11-29: the eval judges a
    // kept run at every place it can slide to, `eval/harm.rs`); the
    // harmful ceiling holds what the engine reaches, not the bar.
    assert!(s["right"] >= 80.4, "{stdout}");
    assert!(s["harmful"] <= 1.8, "{stdout}");
    assert!(s["lost"] <= 0.7, "{stdout}");
    // Of those, the merges that lose the file's own code (the rest drop lines the commit
    // added).
    assert!(s["lost_code"] <= 0.4, "{stdout}");
    unseen_flags_hold(&stdout, &s, 11.6);
}

/// zod, retrofit, guzzle, httpx and rack: the other held-out set, judged by its numbers
/// alone. Every merge that loses the file's own code carries `unseen:`.
#[test]
fn eval_lazy_on_git_history_fresh_flags_every_merge_that_loses_code() {
    let (stdout, s) = eval_dir(&corpus("git-history-fresh"), "lazy");
    // Measured 2026-11-27: n 250, correct 75.6%, wrong 6.0%, lost 1.6%, lost_code 1.2%,
    // unseen on 8.5% of the right merges; a change that moves them updates them in the
    // same commit, with the reason.
    assert_eq!(s["n"], 250.0, "{stdout}");
    assert!(s["correct"] >= 75.2, "{stdout}");
    assert!(s["wrong"] <= 4.8, "{stdout}");
    // Issue 37's bars are right >= 74% and harmful <= 1%: measured 78.0% and 3.2%, then 77.6% and 2.4% (file lines kept between two lines written together, and deletions licensed only among new lines, refused: one right merge for two harmful) (one
    // harmful merge refused by the margin, no right one); then 1.6% (`jump-lookalike` asks
    // where sure anchors jump over a table's changed line; a Python body left empty is a
    // syntax error the reading check refuses); then 1.2% (2026-11-28); the ceiling holds
    // what it reaches.
    assert!(s["right"] >= 77.6, "{stdout}");
    assert!(s["harmful"] <= 1.2, "{stdout}");
    assert!(s["wrong"] <= 3.6, "{stdout}");
    assert!(s["lost"] <= 0.4, "{stdout}");
    assert!(s["lost_code"] <= 0.4, "{stdout}");
    unseen_flags_hold(&stdout, &s, 8.5);
}

/// Snippets written the way models write them beat issue 14's bars (at least 90% of the
/// merge cases correct, at most 2% wrong), and every case no careful reader could place is
/// refused.
#[test]
fn eval_lazy_on_model_snippets_meets_the_bars() {
    let (stdout, s) = eval_dir(&corpus("model-snippets"), "lazy");
    // Measured 2026-11-27: n 99 (and 9 declines), correct 93.9%, wrong 1.0%, lost 1.0%,
    // lost_code 0.0%, unseen on 10.8% of the right merges; a change that moves them updates
    // them in the same commit, with the reason.
    assert_eq!(s["n"], 99.0, "{stdout}");
    assert!(s["correct"] >= 92.9, "{stdout}");
    assert!(s["wrong"] <= 1.0, "{stdout}");
    // Issue 37: right >= 92%, harmful <= 1%; measured 93.9% and 1.0%, then 92.9% (a deletion licensed only among new lines refused) (one case of 99, whose
    // expected result holds the snippet's own `// ... existing code ...` line).
    assert!(s["right"] >= 92.9, "{stdout}");
    assert!(s["harmful"] <= 1.0, "{stdout}");
    assert!(s["lost"] <= 1.0, "{stdout}");
    assert_eq!(s["lost_code"], 0.0, "{stdout}");
    assert_eq!(s["declines"], 9.0, "{stdout}");
    assert_eq!(s["declined"], s["declines"], "{stdout}");
    // 10.8 -> 10.9: one right merge fewer (refused), the same 10 flagged.
    unseen_flags_hold(&stdout, &s, 10.9);
}

#[test]
fn eval_on_a_missing_directory_exits_2() {
    let out = run(&["eval", "/nonexistent/corpus", "--format", "blocks"], "");
    assert_eq!(out.status.code(), Some(2));
}

/// `--verbose` names the slowest cases with their times, slowest first, each a case folder.
#[test]
fn eval_verbose_lists_the_slowest_cases() {
    let dir = corpus_dir();
    let args = [
        "eval",
        dir.to_str().unwrap(),
        "--format",
        "blocks",
        "--repeat",
        "1",
        "-v",
    ];
    let out = run(&args, "");
    assert!(out.status.success());
    let stdout = String::from_utf8(out.stdout).unwrap();
    let listed: Vec<(f64, &str)> = stdout
        .lines()
        .skip_while(|l| *l != "slowest:")
        .skip(1)
        .map_while(|l| {
            let (t, name) = l.trim().split_once(" µs  ")?;
            Some((t.trim().parse::<f64>().ok()?, name))
        })
        .collect();
    assert_eq!(listed.len(), 5, "{stdout}");
    assert!(listed.windows(2).all(|w| w[0].0 >= w[1].0), "{stdout}");
    for (_, name) in &listed {
        assert!(dir.join(name).is_dir(), "{name} is not a case folder");
    }
}

/// The code search on a search corpus: every summary figure at least its floor, the index
/// build time reported.
fn search_eval_floors(set: &str, n: f64, recall: f64, hit: f64, mrr: f64) {
    let out = run(&["search-eval", corpus(set).to_str().unwrap()], "");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let s = summary(&stdout);
    assert_eq!(s["n"], n, "{stdout}");
    assert!(s["recall@5"] >= recall, "{set}: {stdout}");
    assert!(s["hit@1"] >= hit, "{set}: {stdout}");
    assert!(s["mrr"] >= mrr, "{set}: {stdout}");
    assert!(
        s.contains_key("median_ms") && s.contains_key("index_ms"),
        "{stdout}"
    );
    assert!(stdout.contains("index built in"), "{stdout}");
    for group in ["language ", "kind "] {
        assert!(
            stdout.lines().any(|l| l.starts_with(group)),
            "no {group}line: {stdout}"
        );
    }
}

/// The code search on the search corpus (flask, gin), held at what it measures. Issue 40
/// asks for recall@5 ≥ 90%; measured 2026-11-28: n 200, recall@5 86.3%, hit@1 69.5%, MRR
/// 0.782 (2026-11-27, before the second stage favoured a file the query names: 85.3%,
/// 67.5%, 0.769; before its second stage and priors: 84.9%, 66.0%, 0.761). A change that
/// moves them updates them in the same commit, with the reason.
#[test]
fn search_eval_meets_the_bars() {
    search_eval_floors("search", 200.0, 86.3, 69.5, 0.782);
}

/// The code search on the fresh search corpus (zod, httpx, guzzle, rack, retrofit), held at
/// what it measures. Issue 40 asks for recall@5 ≥ 90%; measured 2026-11-28: n 300, recall@5
/// 84.9%, hit@1 66.7%, MRR 0.764 (2026-11-27, before the second stage favoured a file the
/// query names: 84.4%, 65.0%, 0.753; before its second stage and priors: 84.3%, 64.0%,
/// 0.746).
#[test]
fn search_eval_on_the_fresh_set_meets_the_bars() {
    search_eval_floors("search-fresh", 300.0, 84.9, 66.7, 0.764);
}

/// `search-eval --verbose`: a query that missed a file names each missed file with its rank
/// (`N`, `-` past the depth) and why (`unreachable`, `outranked`, `companion`), and lists
/// its ten leading files with their scores, best first, answers marked `*`; the summary
/// counts the missed files by why.
#[test]
fn search_eval_verbose_shows_why_a_query_missed() {
    let project = corpus("search").join("gin-gonic+gin");
    let out = run(&["search-eval", project.to_str().unwrap(), "--verbose"], "");
    assert!(out.status.success());
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    let mut misses = 0;
    let mut classes = [0usize; 3];
    for (at, line) in lines.iter().enumerate() {
        let Some((_, missed)) = line.split_once("  missed: ") else {
            continue;
        };
        misses += 1;
        for file in missed.split("), ") {
            let (rank, why) = file
                .rsplit_once(" (")
                .and_then(|(_, r)| r.trim_end_matches(')').split_once(", "))
                .unwrap_or_else(|| panic!("{line}"));
            assert!(rank == "-" || rank.parse::<usize>().is_ok(), "{line}");
            assert!(
                ["unreachable", "outranked", "companion"].contains(&why),
                "{line}"
            );
            classes[["unreachable", "outranked", "companion"]
                .iter()
                .position(|c| *c == why)
                .unwrap_or_default()] += 1;
        }
        let scores: Vec<f64> = lines[at + 1..]
            .iter()
            .map_while(|l| {
                let mut words = l.split_whitespace().filter(|w| *w != "*");
                words.next()?.parse::<usize>().ok()?;
                words.next()?.parse::<f64>().ok()
            })
            .collect();
        assert_eq!(scores.len(), 10, "{line}");
        assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{line}");
    }
    assert!(misses > 0, "{stdout}");
    // The summary's lines of missed files by class count what the queries' lines name.
    for (class, n) in ["unreachable", "outranked", "companion"]
        .iter()
        .zip(classes)
    {
        let line = format!("missed {class}: files={n} lost=");
        assert!(
            stdout.lines().any(|l| l.starts_with(&line)),
            "{line}: {stdout}"
        );
    }
}

/// `search-eval --fit` on gin: the hand-set stages' recall@5 on its lines is the summary's,
/// the fit's is no lower, and `--weights` with the printed list ranks as the fit measured
/// (its summary's recall@5 and hit@1 are the `fit:` line's); a list of the wrong length is
/// refused as a usage error.
#[test]
fn search_eval_fits_weights_that_weights_replays() {
    let project = corpus("search").join("gin-gonic+gin");
    let dir = project.to_str().unwrap();
    let out = run(&["search-eval", dir, "--fit"], "");
    assert!(out.status.success());
    let stdout = String::from_utf8(out.stdout).unwrap();
    let measured = |name: &str| -> (f64, f64) {
        let line = stdout
            .lines()
            .find(|l| l.starts_with(&format!("{name}: recall@5=")))
            .unwrap_or_else(|| panic!("no {name} line: {stdout}"));
        let s: HashMap<String, f64> = line
            .split_whitespace()
            .filter_map(|kv| kv.split_once('='))
            .map(|(k, v)| (k.to_string(), v.trim_end_matches('%').parse().unwrap()))
            .collect();
        (s["recall@5"], s["hit@1"])
    };
    let summary_of = |text: &str| {
        let s = summary(text);
        (s["recall@5"], s["hit@1"])
    };
    let total = stdout
        .lines()
        .rfind(|l| l.starts_with("search n="))
        .unwrap();
    assert_eq!(measured("hand-set"), summary_of(total), "{stdout}");
    assert!(measured("fit").0 >= measured("hand-set").0, "{stdout}");
    let list = stdout
        .lines()
        .find_map(|l| l.strip_prefix("weights "))
        .expect("the fit's weights");
    assert_eq!(list.split(',').count(), 14, "{stdout}");
    let out = run(&["search-eval", dir, "--weights", list], "");
    assert!(out.status.success());
    let replayed = String::from_utf8(out.stdout).unwrap();
    assert_eq!(summary_of(&replayed), measured("fit"), "{replayed}");
    let out = run(&["search-eval", dir, "--weights", "1,2"], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("14 comma-separated numbers"));
}
