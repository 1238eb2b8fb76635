//! `patchgate eval`: score an engine on a corpus of real edits (layout in
//! `../shared/corpus/README.md`): one folder per case with `before.EXT`, `after.EXT` and the
//! edit (`lazy.txt` or `blocks.txt`). A merge is correct when its output is byte-identical to
//! `after.EXT`, wrong when it succeeds with other output, refused when the engine declines.
//!
//! A case whose `meta.json` says `"expect": "decline"` is one no careful reader could place:
//! refusing it is right, merging it to `after.EXT` is acceptable, any other merge is wrong. Such
//! cases are counted apart from the merge cases. `meta.json`'s `instruction` is passed to the
//! engine as the agent would pass it.
//!
//! Timing covers the whole pure pipeline (decode, merge, encode) and excludes reading files.
//! Each merge runs `repeat` times and a case's time is the median of its runs.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::edit::lazy::RuleSet;
use crate::edit::{self, Format, text::Text};
use crate::error::ErrorCode;

mod curve;
mod harm;

pub use self::curve::Point;

pub use self::harm::loose;

/// Cases listed by time in a verbose report.
const SLOWEST_SHOWN: usize = 5;

/// The outcome of one case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Byte-identical to the expected result.
    Correct,
    /// Succeeded with other output.
    Wrong,
    /// Declined with this code and message.
    Refused(ErrorCode, String),
}

/// One scored case.
#[derive(Debug, Clone)]
pub struct CaseResult {
    /// The case folder's name (relative to the corpus root).
    pub name: String,
    /// What happened.
    pub outcome: Outcome,
    /// Whether the case expects a refusal (`"expect": "decline"` in its `meta.json`).
    pub expect_decline: bool,
    /// Median time of one merge without its syntax stage (for the lazy merge, with the parse
    /// of the original its definitions come from), in nanoseconds.
    pub nanos: u128,
    /// Median time of the syntax work on the merged result, from no remembered parse: the
    /// merge's syntax stage (the lazy merge's, which parses) and the review's check (every
    /// proposal gets it), which share their parses; in nanoseconds, `None` when nothing was
    /// merged.
    pub check_nanos: Option<u128>,
    /// Whether the syntax check flagged the merged result (a parse error the file did not
    /// have).
    pub flagged: bool,
    /// A wrong merge that loses lines: a line of the expected result is missing from it.
    pub lost: bool,
    /// A wrong merge that loses the file's own code: a line the file had and the expected
    /// result keeps is missing from it (not only a new line of the commit).
    pub lost_code: bool,
    /// Whether the merge deletes lines the edit does not show (docs/DESIGN.md §4): it carries
    /// an `unseen:` warning.
    pub unseen: bool,
    /// A wrong merge whose only fault is keeping lines the commit deleted where the snippet
    /// does not show them ([`loose`]): counted right, not harmful.
    pub loose: bool,
    /// What the merge was before the margin's decision, for `eval --curve`.
    pub undecided: Undecided,
}

/// A case's merge before the margin's decision: its outcome then, how it was scored, and its
/// margin (lazy merges that reached their syntax stage).
#[derive(Debug, Clone)]
pub struct Undecided {
    /// The outcome without the decision.
    pub outcome: Outcome,
    /// Wrong only by keeping deleted lines unshown.
    pub loose: bool,
    /// Wrong and losing the file's own code.
    pub lost_code: bool,
    /// The margin.
    pub margin: Option<f32>,
}

/// A scored corpus.
#[derive(Debug, Clone)]
pub struct Report {
    /// The engine scored.
    pub format: Format,
    /// One entry per case, in name order.
    pub cases: Vec<CaseResult>,
}

/// A case that could not be read.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {message}")]
pub struct CorpusError {
    /// The offending path.
    pub path: PathBuf,
    /// What is wrong.
    pub message: String,
}

struct Case {
    name: String,
    file_name: String,
    before: Vec<u8>,
    after: Vec<u8>,
    edit: String,
    instruction: Option<String>,
    expect_decline: bool,
}

/// What a case's `meta.json` says about the edit: the agent's instruction and whether the
/// snippet is one to decline. A missing `meta.json` says nothing; a malformed one is an error.
fn read_meta(dir: &Path) -> Result<(Option<String>, bool), CorpusError> {
    let path = dir.join("meta.json");
    let Ok(bytes) = std::fs::read(&path) else {
        return Ok((None, false));
    };
    let meta: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| CorpusError {
        path: path.clone(),
        message: e.to_string(),
    })?;
    let instruction = meta
        .get("instruction")
        .and_then(|v| v.as_str())
        .filter(|s| !s.trim().is_empty())
        .map(str::to_string);
    let decline = meta.get("expect").and_then(|v| v.as_str()) == Some("decline");
    Ok((instruction, decline))
}

/// Every case folder under `root` (folders holding a `before.*` file), sorted by path.
pub(crate) fn case_dirs(root: &Path) -> Result<Vec<PathBuf>, CorpusError> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries = std::fs::read_dir(&dir).map_err(|e| CorpusError {
            path: dir.clone(),
            message: e.to_string(),
        })?;
        let mut is_case = false;
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("before."))
            {
                is_case = true;
            }
        }
        if is_case {
            out.push(dir);
        }
    }
    out.sort();
    Ok(out)
}

fn find_with_stem(dir: &Path, stem: &str) -> Option<PathBuf> {
    std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.strip_prefix(stem).is_some_and(|r| r.starts_with('.')))
        })
}

fn load(root: &Path, dir: &Path, format: Format) -> Result<Case, CorpusError> {
    let err = |path: &Path, message: String| CorpusError {
        path: path.to_path_buf(),
        message,
    };
    let read = |p: &Path| std::fs::read(p).map_err(|e| err(p, e.to_string()));
    let before =
        find_with_stem(dir, "before").ok_or_else(|| err(dir, "no before.* file".into()))?;
    let after = find_with_stem(dir, "after").ok_or_else(|| err(dir, "no after.* file".into()))?;
    let edit_name = match format {
        Format::Lazy => "lazy.txt",
        Format::Blocks => "blocks.txt",
        Format::Replace => "replace.json",
        Format::Udiff => "udiff.txt",
    };
    let edit_path = dir.join(edit_name);
    let edit = String::from_utf8(read(&edit_path)?)
        .map_err(|_| err(&edit_path, "the edit is not UTF-8".into()))?;
    let name = dir
        .strip_prefix(root)
        .unwrap_or(dir)
        .to_string_lossy()
        .into_owned();
    let file_name = before
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (instruction, expect_decline) = read_meta(dir)?;
    Ok(Case {
        instruction,
        expect_decline,
        file_name,
        name: if name.is_empty() {
            dir.to_string_lossy().into_owned()
        } else {
            name
        },
        before: read(&before)?,
        after: read(&after)?,
        edit,
    })
}

/// One run of a case: its outcome, the original and merged texts when it merged, and the
/// time of the merge and of its syntax stage ([`edit::verify`], the one that parses), in
/// nanoseconds. It starts with no remembered parse, as a gate's first edit of a file does.
struct Run {
    outcome: Outcome,
    texts: Option<(String, String)>,
    merge: u128,
    /// `None` when the merge failed before its syntax stage.
    verify: Option<u128>,
    /// The lazy merge's margin, when it was weighed.
    margin: Option<edit::lazy::Margin>,
}

fn run_once(case: &Case, format: Format, rules: RuleSet) -> Run {
    let hints = edit::Hints {
        path: Some(&case.file_name),
        instruction: case.instruction.as_deref(),
    };
    crate::syntax::forget_parses();
    edit::lazy::forget_indexes();
    let t = Instant::now();
    let merged = Text::decode(&case.before).and_then(|text| {
        let merged = edit::run_unverified_with(format, &text, &case.edit, &hints, rules)?;
        Ok((text, merged))
    });
    let merge = t.elapsed().as_nanos();
    let reached = merged.is_ok();
    let t = Instant::now();
    let mut margin = None;
    let result = merged.and_then(|(text, merged)| {
        let merged = edit::weigh(
            format,
            &text,
            &case.edit,
            &hints,
            merged,
            &edit::lazy::MARGIN,
        )?;
        margin = merged.margin.clone();
        let bytes = text.encode(&merged.content)?;
        Ok((bytes, text.content().to_string(), merged.content))
    });
    let verify = reached.then(|| t.elapsed().as_nanos());
    let (outcome, texts) = match result {
        Ok((bytes, old, new)) if bytes == case.after => (Outcome::Correct, Some((old, new))),
        Ok((_, old, new)) => (Outcome::Wrong, Some((old, new))),
        Err(e) => (Outcome::Refused(e.code, e.message), None),
    };
    Run {
        outcome,
        texts,
        merge,
        verify,
        margin,
    }
}

/// The decision of `margin` under the merge's weights, on an outcome reached without it.
fn decided(outcome: Outcome, margin: Option<&edit::lazy::Margin>) -> Outcome {
    let weights = edit::lazy::MARGIN;
    match margin.map(|m| (m, edit::lazy::evidence_refusal(m, &weights))) {
        Some((_, Some(e))) if !matches!(outcome, Outcome::Refused(..)) => {
            Outcome::Refused(e.code, e.message)
        }
        _ => outcome,
    }
}

/// The value at quantile `q` (0..=1) of `nanos`, in microseconds (0 for none).
fn quantile_us(mut nanos: Vec<u128>, q: f64) -> f64 {
    if nanos.is_empty() {
        return 0.0;
    }
    nanos.sort_unstable();
    let idx = ((nanos.len() - 1) as f64 * q).round() as usize;
    nanos[idx] as f64 / 1000.0
}

/// Non-blank lines, trailing white space aside, with how often each occurs.
fn line_counts(text: &str) -> HashMap<&str, usize> {
    let mut have: HashMap<&str, usize> = HashMap::new();
    for l in text.lines().map(str::trim_end).filter(|l| !l.is_empty()) {
        *have.entry(l).or_default() += 1;
    }
    have
}

/// Whether `output` lacks a line of `expected`, counted with repeats, blank lines and trailing
/// white space aside (the corpora's "lose lines": code the agent never meant to remove is gone).
pub fn loses_lines(expected: &str, output: &str) -> bool {
    let have = line_counts(output);
    line_counts(expected)
        .iter()
        .any(|(l, &n)| have.get(l).copied().unwrap_or(0) < n)
}

/// Whether `output` lacks a line that `before` had and `expected` keeps (as often as both
/// hold it): the file's own code is gone, not only a line the commit added.
pub fn loses_code(before: &str, expected: &str, output: &str) -> bool {
    let (had, have) = (line_counts(before), line_counts(output));
    line_counts(expected).iter().any(|(l, &n)| {
        let kept = n.min(had.get(l).copied().unwrap_or(0));
        have.get(l).copied().unwrap_or(0) < kept
    })
}

/// The review's syntax check of a merge, right after its syntax stage (whose parse of the
/// result it shares): its time, and whether it flags the result.
fn check_once(case: &Case, texts: Option<&(String, String)>) -> (u128, bool) {
    let Some((old, new)) = texts else {
        return (0, false);
    };
    let t = Instant::now();
    let flagged = !crate::syntax::new_errors(&case.file_name, Some(old), new).is_empty();
    (t.elapsed().as_nanos(), flagged)
}

/// Score `format` on every case under `root`, running each merge `repeat` times.
/// `progress` is called after each case with (done, total).
pub fn run(
    root: &Path,
    format: Format,
    repeat: usize,
    progress: impl FnMut(usize, usize),
) -> Result<Report, CorpusError> {
    run_with(root, format, repeat, RuleSet::ALL_ON, progress)
}

/// [`run`] with the lazy merge's rules that `rules` switches on (`eval --without NAME`).
pub fn run_with(
    root: &Path,
    format: Format,
    repeat: usize,
    rules: RuleSet,
    mut progress: impl FnMut(usize, usize),
) -> Result<Report, CorpusError> {
    let dirs = case_dirs(root)?;
    if dirs.is_empty() {
        return Err(CorpusError {
            path: root.to_path_buf(),
            message: "no case folders (folders with a before.* file) found".into(),
        });
    }
    let total = dirs.len();
    let mut cases = Vec::with_capacity(total);
    for (i, dir) in dirs.iter().enumerate() {
        let case = load(root, dir, format)?;
        cases.push(score(case, format, repeat, rules));
        progress(i + 1, total);
    }
    Ok(Report { format, cases })
}

/// Run `case` `repeat` times and score it: its outcome, times and how its merge is wrong.
fn score(case: Case, format: Format, repeat: usize, rules: RuleSet) -> CaseResult {
    let mut times = Vec::with_capacity(repeat.max(1));
    let mut syntax_times = Vec::with_capacity(repeat.max(1));
    let (mut outcome, mut flagged, mut lost, mut lost_code) = (Outcome::Wrong, false, false, false);
    let (mut unseen, mut is_loose) = (false, false);
    let mut undecided = None;
    for _ in 0..repeat.max(1) {
        let run = run_once(&case, format, rules);
        let (check, f) = check_once(&case, run.texts.as_ref());
        times.push(run.merge);
        syntax_times.extend(run.verify.map(|v| v + check));
        let after = String::from_utf8_lossy(&case.after);
        let wrong_output = run
            .texts
            .as_ref()
            .filter(|_| run.outcome == Outcome::Wrong)
            .map(|(_, new)| new);
        lost = wrong_output.is_some_and(|new| loses_lines(&after, new));
        lost_code = wrong_output
            .is_some_and(|new| loses_code(&String::from_utf8_lossy(&case.before), &after, new));
        let hints = edit::Hints {
            path: Some(&case.file_name),
            instruction: case.instruction.as_deref(),
        };
        unseen = run.texts.as_ref().is_some_and(|(old, new)| {
            let (lines, _) = edit::unseen_deletions(format, old, new, &case.edit, &hints);
            !lines.is_empty()
        });
        is_loose = format == Format::Lazy
            && run.texts.as_ref().is_some_and(|(old, new)| {
                run.outcome == Outcome::Wrong
                    && loose(
                        old,
                        &after,
                        new,
                        &edit::shown(format, old, &case.edit, &hints),
                    )
            });
        undecided = Some(Undecided {
            outcome: run.outcome.clone(),
            loose: is_loose,
            lost_code,
            margin: run.margin.as_ref().map(|m| m.value),
        });
        (outcome, flagged) = (decided(run.outcome, run.margin.as_ref()), f);
        if matches!(outcome, Outcome::Refused(..)) {
            (lost, lost_code, is_loose, unseen) = (false, false, false, false);
        }
    }
    times.sort_unstable();
    syntax_times.sort_unstable();
    CaseResult {
        name: case.name,
        outcome,
        expect_decline: case.expect_decline,
        nanos: times[times.len() / 2],
        check_nanos: syntax_times.get(syntax_times.len() / 2).copied(),
        flagged,
        lost,
        lost_code,
        unseen,
        loose: is_loose,
        undecided: undecided.expect("at least one run"),
    }
}

impl Report {
    /// Number of merge cases (not expected to decline) with this outcome kind.
    fn count(&self, f: impl Fn(&Outcome) -> bool) -> usize {
        self.cases
            .iter()
            .filter(|c| !c.expect_decline && f(&c.outcome))
            .count()
    }

    /// Merge cases (those not expected to decline).
    pub(crate) fn merge_cases(&self) -> usize {
        self.cases.iter().filter(|c| !c.expect_decline).count()
    }

    /// Correct merge cases.
    pub fn correct(&self) -> usize {
        self.count(|o| *o == Outcome::Correct)
    }

    /// Wrong merge cases.
    pub fn wrong(&self) -> usize {
        self.count(|o| *o == Outcome::Wrong)
    }

    /// Wrong merge cases whose only fault is keeping lines the commit deleted unshown.
    pub fn loose(&self) -> usize {
        self.cases
            .iter()
            .filter(|c| !c.expect_decline && c.outcome == Outcome::Wrong && c.loose)
            .count()
    }

    /// Right merge cases: correct or loose.
    pub fn right(&self) -> usize {
        self.correct() + self.loose()
    }

    /// Harmful wrong merge cases: every wrong merge that is not loose.
    pub fn harmful(&self) -> usize {
        self.wrong() - self.loose()
    }

    /// Wrong merge cases that lose lines the file had and the commit kept.
    pub fn lost_code(&self) -> usize {
        self.cases
            .iter()
            .filter(|c| !c.expect_decline && c.lost_code)
            .count()
    }

    /// Wrong merge cases that lose lines.
    pub fn lost(&self) -> usize {
        self.cases
            .iter()
            .filter(|c| !c.expect_decline && c.lost)
            .count()
    }

    /// Refused merge cases.
    pub fn refused(&self) -> usize {
        self.count(|o| matches!(o, Outcome::Refused(..)))
    }

    /// Decline cases: (total, refused as they should be, merged to the plausible reading,
    /// merged to anything else).
    pub fn declines(&self) -> (usize, usize, usize, usize) {
        let d: Vec<&Outcome> = self
            .cases
            .iter()
            .filter(|c| c.expect_decline)
            .map(|c| &c.outcome)
            .collect();
        let refused = d
            .iter()
            .filter(|o| matches!(o, Outcome::Refused(..)))
            .count();
        let merged = d.iter().filter(|o| ***o == Outcome::Correct).count();
        (d.len(), refused, merged, d.len() - refused - merged)
    }

    /// Per-merge time at quantile `q` (0..=1), in microseconds.
    pub(crate) fn quantile_us(&self, q: f64) -> f64 {
        quantile_us(self.cases.iter().map(|c| c.nanos).collect(), q)
    }

    /// Syntax-check time at quantile `q` (0..=1) over the merged cases, in microseconds.
    pub(crate) fn check_quantile_us(&self, q: f64) -> f64 {
        quantile_us(self.cases.iter().filter_map(|c| c.check_nanos).collect(), q)
    }

    /// Merge cases the syntax check flagged, as (flagged wrong, wrong, flagged correct,
    /// correct).
    pub fn flagged(&self) -> (usize, usize, usize, usize) {
        let merged = |o: &Outcome| {
            self.cases
                .iter()
                .filter(|c| !c.expect_decline && c.outcome == *o)
                .fold((0, 0), |(f, n), c| (f + usize::from(c.flagged), n + 1))
        };
        let (fw, w) = merged(&Outcome::Wrong);
        let (fc, c) = merged(&Outcome::Correct);
        (fw, w, fc, c)
    }

    /// Merge cases that carry an `unseen:` warning (docs/DESIGN.md §4), as (flagged correct,
    /// correct, flagged wrong, wrong, flagged of those that lose the file's own code, those).
    pub fn unseen_flags(&self) -> [usize; 6] {
        let mut out = [0; 6];
        for c in self.cases.iter().filter(|c| !c.expect_decline) {
            let k = match c.outcome {
                Outcome::Correct => 0,
                Outcome::Wrong => 2,
                Outcome::Refused(..) => continue,
            };
            out[k] += usize::from(c.unseen);
            out[k + 1] += 1;
            if c.lost_code {
                out[4] += usize::from(c.unseen);
                out[5] += 1;
            }
        }
        out
    }

    /// The one-line summary, e.g.
    /// `lazy n=260 correct=97.3% wrong=0.0% lost=0.0% lost_code=0.0% refused=2.7% median_us=41 p99_us=380
    /// check_median_us=90 check_p99_us=900 syntax_flagged_wrong=0 syntax_flagged_correct=1
    /// unseen_flagged_correct=30 unseen_flagged_correct_pct=13.1 unseen_flagged_wrong=2
    /// unseen_flagged_lost_code=1 lost_code_merges=1` (merges that carry an `unseen:`
    /// warning, docs/DESIGN.md §4).
    /// Decline cases, when there are any, add
    /// `declines=9 declined=9 decline_merged=0 decline_wrong=0` before the times.
    pub fn summary(&self) -> String {
        let n = self.merge_cases();
        let pct = |k: usize| 100.0 * k as f64 / n.max(1) as f64;
        let (d, declined, merged, wrong) = self.declines();
        let declines = if d == 0 {
            String::new()
        } else {
            format!(
                " declines={d} declined={declined} decline_merged={merged} decline_wrong={wrong}"
            )
        };
        let (fw, _, fc, _) = self.flagged();
        let u = self.unseen_flags();
        format!(
            "{} n={n} right={:.1}% harmful={:.1}% correct={:.1}% wrong={:.1}% lost={:.1}% lost_code={:.1}% refused={:.1}%{declines} median_us={:.0} \
             p99_us={:.0} check_median_us={:.0} check_p99_us={:.0} syntax_flagged_wrong={fw} \
             syntax_flagged_correct={fc} unseen_flagged_correct={} unseen_flagged_correct_pct={:.1} \
             unseen_flagged_wrong={} unseen_flagged_lost_code={} lost_code_merges={}",
            self.format.name(),
            pct(self.right()),
            pct(self.harmful()),
            pct(self.correct()),
            pct(self.wrong()),
            pct(self.lost()),
            pct(self.lost_code()),
            pct(self.refused()),
            self.quantile_us(0.5),
            self.quantile_us(0.99),
            self.check_quantile_us(0.5),
            self.check_quantile_us(0.99),
            u[0],
            100.0 * u[0] as f64 / u[1].max(1) as f64,
            u[2],
            u[4],
            u[5],
        )
    }

    /// The cases of several reports as one (names prefixed with each corpus's label).
    pub fn combine(format: Format, parts: Vec<(String, Report)>) -> Report {
        let cases = parts
            .into_iter()
            .flat_map(|(label, r)| {
                r.cases.into_iter().map(move |mut c| {
                    c.name = format!("{label}/{}", c.name);
                    c
                })
            })
            .collect();
        Report { format, cases }
    }

    /// The merges that carry an `unseen:` warning, by name, for `--verbose`.
    fn render_unseen(&self, out: &mut String) {
        let flagged: Vec<&CaseResult> = self.cases.iter().filter(|c| c.unseen).collect();
        let _ = writeln!(out, "unseen deletions flagged ({}):", flagged.len());
        for c in flagged {
            let what = match c.outcome {
                Outcome::Correct => "correct",
                _ if c.lost_code => "wrong, loses code",
                _ => "wrong",
            };
            let _ = writeln!(out, "  {} ({what})", c.name);
        }
    }

    /// The refused cases by code and the wrong ones (with their margins when `verbose`).
    fn render_cases(&self, out: &mut String, verbose: bool) {
        let mut by_code: BTreeMap<&str, Vec<&CaseResult>> = BTreeMap::new();
        for c in self.cases.iter().filter(|c| !c.expect_decline) {
            if let Outcome::Refused(code, _) = &c.outcome {
                by_code.entry(code.as_str()).or_default().push(c);
            }
        }
        for (code, cases) in &by_code {
            let _ = writeln!(out, "refused {code} ({}):", cases.len());
            for c in cases {
                if verbose {
                    if let Outcome::Refused(_, msg) = &c.outcome {
                        let first = msg.lines().next().unwrap_or("");
                        let _ = writeln!(out, "  {}: {first}", c.name);
                    }
                } else {
                    let _ = writeln!(out, "  {}", c.name);
                }
            }
        }
        let wrong: Vec<&CaseResult> = self
            .cases
            .iter()
            .filter(|c| c.outcome == Outcome::Wrong)
            .collect();
        if !wrong.is_empty() {
            let _ = writeln!(out, "wrong ({}):", wrong.len());
            for c in wrong {
                let tag = if c.expect_decline {
                    " (should decline)"
                } else if c.loose {
                    " (loose: keeps deleted lines unshown)"
                } else {
                    ""
                };
                match c.undecided.margin.filter(|_| verbose) {
                    Some(m) => {
                        let _ = writeln!(out, "  {}{tag} (margin {m:.2})", c.name);
                    }
                    None => {
                        let _ = writeln!(out, "  {}{tag}", c.name);
                    }
                }
            }
        }
    }

    /// The full report: counts, refused cases by code, wrong cases, then the summary line.
    pub fn render(&self, verbose: bool) -> String {
        let n = self.cases.len();
        let mut out = String::new();
        let _ = writeln!(out, "engine:   {}", self.format.name());
        let _ = writeln!(out, "cases:    {n}");
        let _ = writeln!(out, "correct:  {}", self.correct());
        let _ = writeln!(
            out,
            "right:    {} (correct, or wrong only by keeping deleted lines the snippet does not \
             show: {})",
            self.right(),
            self.loose()
        );
        let _ = writeln!(
            out,
            "wrong:    {}, harmful {} (of which lose lines: {}, of the file's own code: {})",
            self.wrong(),
            self.harmful(),
            self.lost(),
            self.lost_code()
        );
        let _ = writeln!(out, "refused:  {}", self.refused());
        let (d, declined, merged, wrong) = self.declines();
        if d > 0 {
            let _ = writeln!(
                out,
                "declines: {d} (refused {declined}, merged to the plausible reading {merged}, \
                 wrong {wrong})"
            );
        }
        let _ = writeln!(
            out,
            "time per merge: median {:.1} µs, p90 {:.1} µs, p99 {:.1} µs, max {:.1} µs",
            self.quantile_us(0.5),
            self.quantile_us(0.9),
            self.quantile_us(0.99),
            self.quantile_us(1.0)
        );
        let (fw, w, fc, c) = self.flagged();
        let _ = writeln!(
            out,
            "syntax stage and check (apart from the merge): median {:.1} µs, p99 {:.1} µs, max {:.1} µs; \
             it flags {fw} of {w} wrong merges and {fc} of {c} correct ones",
            self.check_quantile_us(0.5),
            self.check_quantile_us(0.99),
            self.check_quantile_us(1.0)
        );
        let u = self.unseen_flags();
        let _ = writeln!(
            out,
            "unseen deletions: flagged on {} of {} correct merges, {} of {} wrong ones, {} of {} \
             that lose the file's own code",
            u[0], u[1], u[2], u[3], u[4], u[5]
        );
        self.render_cases(&mut out, verbose);
        if verbose {
            self.render_unseen(&mut out);
            let mut slow: Vec<&CaseResult> = self.cases.iter().collect();
            slow.sort_by_key(|c| std::cmp::Reverse(c.nanos));
            let _ = writeln!(out, "slowest:");
            for c in slow.iter().take(SLOWEST_SHOWN) {
                let _ = writeln!(out, "  {:>9.1} µs  {}", c.nanos as f64 / 1000.0, c.name);
            }
        }
        out.push_str(&self.summary());
        out.push('\n');
        out
    }
}

#[cfg(test)]
mod tests {
    use super::{loses_code, loses_lines};

    #[test]
    fn a_line_missing_from_the_output_is_lost_counted_with_repeats() {
        let expected = "fn a() {\n    x();\n    x();\n}\n\n";
        // A line kept that should have gone, or white space: nothing lost.
        assert!(!loses_lines(
            expected,
            "fn a() {\n    x();\n    x();  \n    y();\n}\n"
        ));
        // One of two equal lines gone: lost.
        assert!(loses_lines(expected, "fn a() {\n    x();\n}\n"));
        // Blank lines are not counted.
        assert!(!loses_lines("a\n\n\nb\n", "a\nb\n"));
    }

    #[test]
    fn code_is_lost_only_when_a_line_the_file_had_and_the_commit_kept_is_missing() {
        let before = "fn a() {\n    x();\n}\n";
        let expected = "fn a() {\n    x();\n    y();\n}\n";
        // The commit's new line missing: lines lost, but not the file's code.
        let output = "fn a() {\n    x();\n}\n";
        assert!(loses_lines(expected, output));
        assert!(!loses_code(before, expected, output));
        // The file's own line missing: its code is lost.
        let output = "fn a() {\n    y();\n}\n";
        assert!(loses_code(before, expected, output));
        // A line the commit deleted is no loss whoever drops it.
        assert!(!loses_code(before, "fn a() {\n}\n", "fn a() {\n}\n"));
    }
}
