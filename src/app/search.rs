//! `patchgate search` and `patchgate search-eval`: the code search on the command line, and
//! its score on a corpus.

use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result, bail};

use patchgate::cli::{SearchArgs, SearchEvalArgs};
use patchgate::review::policy::Policy;
use patchgate::search::eval::{self, ProjectScore, QueryKind, QueryResult};
use patchgate::search::explore::Keep;
use patchgate::search::features::{self, FEATURES, Feature, WEIGHTS, Weights};
use patchgate::search::fit;
use patchgate::search::{Answer, Mode, Searcher, agent};
use patchgate::workspace::Workspace;

use super::out::outln;
use patchgate::workspace::config::PolicyName;
use patchgate::workspace::userconfig::UserConfig;

/// What a search of `root` may see: every file no deny rule names.
pub(crate) fn read_filter(ws: &Workspace, user: &UserConfig) -> Result<Keep> {
    let policy = Policy::layered(user, &ws.config, None, PolicyName::Gate)?;
    Ok(Arc::new(move |rel: &str| policy.may_read(rel)))
}

/// Progress on standard error while a terminal shows it: `LABEL{done}/{total} files` (the
/// files the index holds, as the summary counts them), erased once done.
fn indexing_progress(label: String) -> impl FnMut(usize, usize) {
    let show = std::io::stderr().is_terminal();
    let mut shown = false;
    move |done, total| {
        if !show {
            return;
        }
        if done < total {
            eprint!("\r{label}{done}/{total} files");
            shown = true;
        } else if shown {
            eprint!("\r\x1b[K");
            shown = false;
        }
    }
}

fn print_answer(answer: &Answer) {
    for (i, (path, ranges)) in answer.files.iter().enumerate() {
        let r: Vec<String> = ranges
            .iter()
            .map(|[a, b]| {
                if a == b {
                    a.to_string()
                } else {
                    format!("{a}-{b}")
                }
            })
            .collect();
        outln!("{:>3}. {path}  {}", i + 1, r.join(", "));
    }
    if !answer.explanation.is_empty() {
        eprintln!("{}", answer.explanation);
    }
}

pub(crate) fn search(args: SearchArgs) -> Result<ExitCode> {
    let ws = Workspace::load(&args.root)?;
    let user = UserConfig::load()?;
    let searcher = Searcher::for_root(&ws.root, read_filter(&ws, &user)?, &user)?.answering_once();
    let query = args.query.join(" ");
    let mode = if args.retrieval {
        Mode::Retrieval
    } else {
        Mode::Search
    };
    let limit = args.limit as usize;
    let mut answer = searcher.local(
        mode,
        &query,
        limit,
        &mut indexing_progress("indexing ".into()),
    )?;
    if args.agentic {
        let model = searcher
            .model()
            .context("--agentic needs a model: set [fallback] in your patchgate config")?;
        let explorer = searcher.explorer();
        let show = std::io::stderr().is_terminal();
        let hints_used = answer.hints_used;
        let runtime = super::runtime()?;
        answer = runtime.block_on(agent::explore(
            model,
            &explorer,
            &query,
            &answer,
            &mut |turn, max| {
                if show {
                    eprint!("\rmodel turn {turn}/{max}\x1b[K");
                }
            },
        ));
        // A tool call the deadline stopped may still run on a blocking thread: the answer
        // does not wait for it (dropping the runtime would).
        runtime.shutdown_background();
        answer.hints_used = hints_used;
        if show {
            eprint!("\r\x1b[K");
        }
    }
    if args.json {
        outln!("{}", answer.to_value(ws.root.path()));
    } else {
        print_answer(&answer);
    }
    Ok(if answer.files.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn print_project(p: &ProjectScore, verbose: bool) {
    let results: Vec<&QueryResult> = p.results.iter().collect();
    let (recall, hit, mrr) = eval::summary(&results);
    let median = eval::median(p.results.iter().map(|r| r.elapsed).collect());
    outln!(
        "{}: {} queries over {} files, index built in {} ms: recall@5={:.1}% hit@1={:.1}% MRR={:.3} median_ms={:.2}",
        p.name,
        p.results.len(),
        p.files,
        p.build.as_millis(),
        recall * 100.0,
        hit * 100.0,
        mrr,
        median.as_secs_f64() * 1000.0
    );
    if verbose {
        for r in &p.results {
            let rank = r
                .ranked
                .iter()
                .position(|f| r.query.files.contains(f))
                .map_or_else(|| "-".to_string(), |i| (i + 1).to_string());
            let missed: Vec<String> = r
                .missed
                .iter()
                .map(|m| {
                    let at = m.rank.map_or_else(|| "-".to_string(), |i| i.to_string());
                    format!("{} ({at}, {})", m.path, m.why.name())
                })
                .collect();
            outln!(
                "  {rank:>2}  {}  top: {}{}",
                r.query.query,
                r.ranked
                    .iter()
                    .take(3)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", "),
                if missed.is_empty() {
                    String::new()
                } else {
                    format!("  missed: {}", missed.join(", "))
                }
            );
            if !missed.is_empty() {
                print_leaders(r);
            }
        }
    }
}

/// A missing query's leading files with their scores, answers marked `*`.
fn print_leaders(r: &QueryResult) {
    for (i, (path, score)) in r
        .ranked
        .iter()
        .zip(&r.scores)
        .take(VERBOSE_LEADERS)
        .enumerate()
    {
        let mark = if r.query.files.contains(path) {
            '*'
        } else {
            ' '
        };
        outln!("      {:>2} {mark} {score:>8.3}  {path}", i + 1);
    }
}

/// How many leading files `search-eval --verbose` lists for a query that missed a file.
const VERBOSE_LEADERS: usize = 10;

/// One group's line: `language py: n=100 recall@5=80.5% hit@1=62.0% mrr=0.725`.
fn print_group(what: &str, name: &str, group: &[&QueryResult]) {
    let (recall, hit, mrr) = eval::summary(group);
    outln!(
        "{what} {name}: n={} recall@5={:.1}% hit@1={:.1}% mrr={mrr:.3}",
        group.len(),
        recall * 100.0,
        hit * 100.0
    );
}

pub(crate) fn search_eval(args: SearchEvalArgs) -> Result<ExitCode> {
    if !args.dir.is_dir() {
        bail!("{} is not a directory", args.dir.display());
    }
    let weights = match &args.weights {
        Some(list) => Weights::parse(list).with_context(|| {
            format!("--weights wants {FEATURES} comma-separated numbers, got {list:?}")
        })?,
        None => WEIGHTS,
    };
    let mut all = Vec::new();
    for project in eval::projects(&args.dir)? {
        let name = project
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        let score = eval::score_project(
            &project,
            &weights,
            &mut indexing_progress(format!("{name}: indexing ")),
        )?;
        print_project(&score, args.verbose);
        all.push(score);
    }
    let results: Vec<&QueryResult> = all.iter().flat_map(|p| &p.results).collect();
    for (lang, group) in eval::grouped(&results, |r| eval::language(&r.query.files)) {
        print_group("language", &lang, &group);
    }
    for (kind, group) in eval::grouped(&results, |r| QueryKind::of(&r.query.query)) {
        print_group("kind", kind.name(), &group);
    }
    for (class, files, lost) in eval::misses(&results) {
        outln!("missed {}: files={files} lost={lost:.1}%", class.name());
    }
    for (band, files, lost) in eval::bands(&results) {
        outln!(
            "missed at ranks {}: files={files} lost={lost:.1}%",
            eval::band_name(band)
        );
    }
    let (recall, hit, mrr) = eval::summary(&results);
    let median = eval::median(results.iter().map(|r| r.elapsed).collect());
    let build: u128 = all.iter().map(|p| p.build.as_millis()).sum();
    outln!(
        "search n={} recall@5={:.1}% hit@1={:.1}% mrr={:.3} median_ms={:.2} index_ms={build}",
        results.len(),
        recall * 100.0,
        hit * 100.0,
        mrr,
        median.as_secs_f64() * 1000.0
    );
    if args.fit {
        let cases: Vec<fit::Case> = results.iter().map(|r| r.case.clone()).collect();
        print_fit(&cases);
    }
    Ok(ExitCode::SUCCESS)
}

/// `search-eval --fit`: the weights fit on `cases`, what they score there against the
/// hand-set stages alone, and the weights as `--weights` and the source take them.
fn print_fit(cases: &[fit::Case]) {
    let w = fit::fit(cases);
    let pw = fit::fit_pairwise(cases);
    outln!("pairwise {}", pw.list());
    for (name, weights) in [
        ("hand-set", features::IDENTITY),
        ("fit", w),
        ("pairwise", pw),
    ] {
        let (recall, hit) = fit::measure(&weights, cases);
        outln!(
            "{name}: recall@5={:.1}% hit@1={:.1}%",
            recall * 100.0,
            hit * 100.0
        );
    }
    outln!("weights {}", w.list());
    for (f, v) in Feature::ALL.iter().zip(w.0) {
        outln!("  {:<10} {v}", f.name());
    }
}
