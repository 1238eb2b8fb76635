//! The `apply` command: a patch file reviewed in the TUI, then written.

use std::io::IsTerminal;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};

use patchgate::cli::ApplyArgs;
use patchgate::edit::patchfile::{self, PatchSet};
use patchgate::inert::{inert, inert_line};
use patchgate::review::apply::{self as patch_apply, Checked};
use patchgate::review::policy::Action;
use patchgate::review::proposal::{Decision, SYNTAX_WARNING, State};
use patchgate::review::queue::{Gate, Outcome};
use patchgate::tui::backend::Backend;
use patchgate::tui::update::Msg;
use patchgate::workspace::config::PolicyName;

use super::out::outln;
use super::*;

/// Read a patch: the file, or stdin for `-` / nothing.
pub(crate) fn read_patch(path: Option<&std::path::Path>) -> Result<(String, String)> {
    use std::io::Read;
    let (name, bytes) = match path.filter(|p| p.as_os_str() != "-") {
        Some(p) => (
            p.display().to_string(),
            std::fs::read(p).with_context(|| format!("cannot read {}", p.display()))?,
        ),
        None => {
            if std::io::stdin().is_terminal() {
                bail!("give a patch file, or pipe one in: `git diff | patchgate apply`");
            }
            let mut b = Vec::new();
            std::io::stdin()
                .read_to_end(&mut b)
                .context("cannot read the patch from stdin")?;
            ("stdin".to_string(), b)
        }
    };
    let text = String::from_utf8(bytes)
        .map_err(|_| anyhow::anyhow!("{name} is not UTF-8 text; patchgate applies text patches"))?;
    Ok((name, text))
}

/// Each submitted file: its run id, or why the gate refused it.
type Submitted = Vec<(String, std::result::Result<String, String>)>;

/// What every step of `apply` needs.
struct Job {
    /// The patch's name, inert (paths in it may carry control characters).
    name: String,
    set: PatchSet,
    checked: Vec<Checked>,
    gate: Gate,
    rt: tokio::runtime::Runtime,
}

impl Job {
    fn files(&self) -> usize {
        self.set.files.len()
    }

    fn failed(&self) -> Vec<&Checked> {
        self.checked.iter().filter(|c| c.result.is_err()).collect()
    }

    fn print_failures(&self) {
        for c in self.failed() {
            if let Err(e) = &c.result {
                eprintln!(
                    "  does not apply  {}: {}",
                    inert_line(&c.path),
                    inert(&e.to_string())
                );
            }
        }
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn exit(ok: bool) -> ExitCode {
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

pub(crate) fn apply(args: ApplyArgs) -> Result<ExitCode> {
    set_color(args.color);
    let (name, text) = read_patch(args.patch.as_deref())?;
    let name = inert_line(&name).into_owned();
    let set = match &args.file {
        Some(path) => patchfile::lazy(path, &text, args.instruction.as_deref()),
        None => match patchfile::parse(&text, args.strip, args.reverse) {
            Ok(set) => set,
            Err(e) => {
                eprintln!("patchgate: {name}: {}: {}", e.code.as_str(), e.message);
                return Ok(ExitCode::from(1));
            }
        },
    };
    let root = std::fs::canonicalize(&args.root)
        .with_context(|| format!("cannot use {} as the root", args.root.display()))?;
    let policy = if args.yes {
        PolicyName::Auto
    } else {
        PolicyName::Gate
    };
    let (gate, _review_timeout) =
        patchgate::review::open_gate(&root, Some(policy), PolicyName::Gate, None)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
    let rt = runtime()?;
    let checked = {
        let _guard = rt.enter();
        rt.block_on(patch_apply::check(&gate, &set))
    };
    let job = Job {
        name,
        set,
        checked,
        gate,
        rt,
    };
    if args.check {
        return Ok(check_only(&job));
    }
    if args.yes {
        return Ok(apply_now(&job));
    }
    // The TUI: one review per file that applies.
    if job.failed().len() == job.files() {
        job.print_failures();
        eprintln!(
            "patchgate: nothing in {} applies; nothing was written",
            job.name
        );
        return Ok(ExitCode::from(1));
    }
    let submitted = review_in_tui(&job)?;
    Ok(report(&job, &submitted))
}

/// `--check`: which files apply; nothing is written.
fn check_only(job: &Job) -> ExitCode {
    for c in &job.checked {
        if let Ok(ok) = &c.result {
            outln!(
                "  applies  {}  +{} -{}",
                inert_line(&c.path),
                ok.added,
                ok.removed
            );
            for w in &ok.warnings {
                outln!("           {}", inert_line(w));
            }
        }
    }
    job.print_failures();
    let (files, failed) = (job.files(), job.failed().len());
    outln!(
        "{} ({}): {} of {files} file{} apply",
        job.name,
        job.set.format.name(),
        files - failed,
        plural(files)
    );
    exit(failed == 0)
}

/// `--yes`: everything at once, or nothing when a file does not apply.
fn apply_now(job: &Job) -> ExitCode {
    let (files, name) = (job.files(), &job.name);
    if !job.failed().is_empty() {
        job.print_failures();
        eprintln!(
            "patchgate: {} of {files} file{} in {name} do not apply; nothing was written",
            job.failed().len(),
            plural(files)
        );
        return ExitCode::from(1);
    }
    let _guard = job.rt.enter();
    let mut outcome = job.rt.block_on(patch_apply::apply_all(&job.gate, &job.set));
    // A result with a new syntax error waits for a person even under `auto`; `--yes` is that
    // person's word, given before seeing it: say what is broken, then apply. Only that hold:
    // a path the rules keep for a person (`.env*`, `.patchgate.toml`, a `gate` rule) stays.
    if let Ok(Outcome::Pending(s)) = &outcome {
        let policy = job.gate.policy();
        let held_for_syntax = matches!(
            policy.action_for_all(s.paths.iter().map(String::as_str)),
            Ok(Action::Auto)
        );
        if held_for_syntax {
            for w in s.warnings.iter().filter(|w| w.contains(SYNTAX_WARNING)) {
                eprintln!("patchgate: warning: {}", inert_line(w));
            }
            outcome = job.gate.decide(&s.run_id, Decision::Accept);
        }
    }
    match outcome {
        Ok(Outcome::Applied(s)) => {
            for c in &job.checked {
                if let Ok(ok) = &c.result {
                    outln!(
                        "  applied  {}  +{} -{}",
                        inert_line(&c.path),
                        ok.added,
                        ok.removed
                    );
                }
            }
            outln!(
                "applied {name} ({}): {files} file{}, run {} (`patchgate undo {}` reverts it)",
                job.set.format.name(),
                plural(files),
                s.run_id,
                s.run_id
            );
            ExitCode::SUCCESS
        }
        Ok(Outcome::Failed(_, e)) | Err(e) => {
            eprintln!(
                "patchgate: {}: {}; nothing was written",
                e.code.as_str(),
                e.message
            );
            ExitCode::from(1)
        }
        Ok(_) => {
            eprintln!("patchgate: the patch was not applied; nothing was written");
            ExitCode::from(1)
        }
    }
}

/// The TUI over one review per file that applies; what was submitted for each.
fn review_in_tui(job: &Job) -> Result<Submitted> {
    if !std::io::stdout().is_terminal() || std::fs::File::open("/dev/tty").is_err() {
        bail!(
            "reviewing a patch needs a terminal; use --yes to apply it all or --check to test it"
        );
    }
    patchgate::log::init();
    let _guard = job.rt.enter();
    let gate = job.gate.clone();
    let requests = patch_apply::requests(&job.set);
    let run_ids = std::sync::Arc::new(std::sync::Mutex::new(Submitted::new()));
    let submitted = run_ids.clone();
    let bad_paths: Vec<String> = job.failed().iter().map(|c| c.path.clone()).collect();
    let ended = job.rt.block_on(patchgate::tui::run(
        Backend::local(
            gate.clone(),
            std::sync::Arc::new(|| 0),
            Some(format!("apply {}", job.name)),
        ),
        Some(Box::new(move |tx| {
            tokio::spawn(async move {
                for (path, req) in requests {
                    if bad_paths.contains(&path) {
                        continue;
                    }
                    let sent = match gate.submit(req).await {
                        Ok(o) => outcome_run_id(&o).ok_or_else(|| "refused".to_string()),
                        Err(e) => {
                            let _ = tx.send(Msg::Done(Err(format!("{path}: {}", e.message))));
                            Err(e.message)
                        }
                    };
                    submitted
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .push((path, sent));
                }
                if let Some(first) = failed_summary(&bad_paths) {
                    let _ = tx.send(Msg::Done(Err(first)));
                }
            });
        })),
    ));
    job.rt.block_on(async {
        if !job.gate.pending().is_empty() {
            job.gate.reviewer_gone();
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    });
    ended?;
    let out = run_ids
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone();
    Ok(out)
}

/// After the TUI: every file of the patch, in its order — applied, rejected, or why not;
/// exit 1 unless every file was applied.
fn report(job: &Job, submitted: &Submitted) -> ExitCode {
    outln!("{} ({}):", job.name, job.set.format.name());
    let mut applied = 0;
    for c in &job.checked {
        let path = &c.path;
        let line = match (&c.result, submitted.iter().find(|(p, _)| p == path)) {
            (Err(e), _) => format!("not applied (does not apply: {})", first_line(e)),
            (Ok(_), Some((_, Err(why)))) => format!("not applied ({})", first_line(why)),
            (Ok(_), None) => "not applied (never sent for review)".to_string(),
            (Ok(_), Some((_, Ok(id)))) => {
                let (done, line) = decided(&job.gate, id);
                applied += usize::from(done);
                line
            }
        };
        outln!("  {}: {line}", inert_line(path));
    }
    job.print_failures();
    let files = job.files();
    outln!(
        "{applied} of {files} file{} applied{}",
        plural(files),
        if applied > 0 {
            " (`patchgate log` lists them, `patchgate undo` reverts)"
        } else {
            ""
        }
    );
    exit(applied == files)
}

fn first_line(text: &str) -> String {
    inert_line(text.lines().next().unwrap_or("")).into_owned()
}

/// What became of run `id`: whether it was applied, and how to say it.
fn decided(gate: &Gate, id: &str) -> (bool, String) {
    let Some(p) = gate.get(id) else {
        return (false, "not applied".to_string());
    };
    let r = p.review.as_ref();
    match p.state {
        State::Applied => (
            true,
            match r {
                Some(r) if r.edited_by_reviewer => "applied as edited".to_string(),
                Some(r) if r.hunks_accepted < r.hunks_total => {
                    format!("applied {} of {} hunks", r.hunks_accepted, r.hunks_total)
                }
                _ => "applied".to_string(),
            },
        ),
        State::Rejected => (false, "rejected".to_string()),
        s => (false, format!("not applied ({})", s.name())),
    }
}

pub(crate) fn outcome_run_id(o: &patchgate::review::queue::Outcome) -> Option<String> {
    use patchgate::review::queue::Outcome;
    match o {
        Outcome::Applied(s) | Outcome::DryRun(s) | Outcome::Pending(s) | Outcome::Rejected(s) => {
            Some(s.run_id.clone())
        }
        Outcome::Failed(s, _) => s.as_ref().map(|s| s.run_id.clone()),
    }
}

pub(crate) fn failed_summary(bad: &[String]) -> Option<String> {
    match bad {
        [] => None,
        [one] => Some(format!(
            "{one} does not apply (the summary on exit says why)"
        )),
        many => Some(format!(
            "{} files do not apply: {} (the summary on exit says why)",
            many.len(),
            many.join(", ")
        )),
    }
}
