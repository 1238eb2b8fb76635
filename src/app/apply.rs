//! The `apply` command: a patch file reviewed in the TUI, then written.

use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result, bail};

use patchgate::cli::ApplyArgs;
use patchgate::edit::patchfile::{self, PatchSet};
use patchgate::error::Error;
use patchgate::inert::{inert, inert_line};
use patchgate::review::apply::{self as patch_apply, Checked, Rejects};
use patchgate::review::policy::Action;
use patchgate::review::proposal::{Decision, SYNTAX_WARNING, State};
use patchgate::review::queue::{Gate, Outcome};
use patchgate::tui::backend::{Backend, PatchFile, RejectWriter};
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
    /// A file's hunks that do not apply are left out (the TUI, `--yes --reject`).
    reject: bool,
}

impl Job {
    fn files(&self) -> usize {
        self.set.files.len()
    }

    fn failed(&self) -> Vec<&Checked> {
        self.checked.iter().filter(|c| c.result.is_err()).collect()
    }

    /// The hunks left out, in all files.
    fn left_out(&self) -> usize {
        self.checked.iter().map(|c| c.rejected.len()).sum()
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

/// What went wrong with one file, to print under its line: each hunk left out, else why the
/// file does not apply (every error once).
fn problems(c: &Checked) -> Vec<String> {
    if !c.rejected.is_empty() {
        return c
            .rejected
            .iter()
            .map(|(_, why)| indented(&format!("left out: {why}")))
            .collect();
    }
    match &c.result {
        Err(e) => vec![indented(&e.to_string())],
        Ok(_) => Vec::new(),
    }
}

/// `text` made inert and indented under a file's line, its own later lines a little more.
fn indented(text: &str) -> String {
    let text = inert(text);
    let mut lines = text.lines();
    let mut out = format!("    {}", lines.next().unwrap_or_default());
    for l in lines {
        out.push_str("\n      ");
        out.push_str(l);
    }
    out
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// A verb's present tense for `n` things: `applies` for one, `apply` for none or several.
fn agree(n: usize, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 { one } else { many }
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
    // A patch file has a person reviewing it (or `--yes`, their word): the policy hook
    // judges agents' edits only (docs/DESIGN.md §4).
    let gate = gate.with_hook(None);
    let rt = runtime()?;
    // The TUI offers a file's hunks that apply and names the others; `--yes` applies all or
    // nothing unless `--reject`; `--check` says whether all would apply.
    let reject = args.reject || !(args.yes || args.check);
    let checked = {
        let _guard = rt.enter();
        rt.block_on(patch_apply::check(&gate, &set, reject))
    };
    let job = Job {
        name,
        set,
        checked,
        gate,
        rt,
        reject,
    };
    if args.check {
        return Ok(check_only(&job));
    }
    if args.reject {
        return Ok(apply_rejecting(&job));
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
    let (submitted, rejects) = review_in_tui(&job)?;
    Ok(report(&job, &submitted, rejects.as_ref()))
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
    let applying = files - failed;
    outln!(
        "{} ({}): {applying} of {files} file{} {}",
        job.name,
        job.set.format.name(),
        plural(files),
        agree(applying, "applies", "apply")
    );
    exit(failed == 0)
}

/// `--yes`: everything at once, or nothing when a file does not apply.
fn apply_now(job: &Job) -> ExitCode {
    let (files, name) = (job.files(), &job.name);
    if !job.failed().is_empty() {
        job.print_failures();
        let failed = job.failed().len();
        eprintln!(
            "patchgate: {failed} of {files} file{} in {name} {}; nothing was written",
            plural(files),
            agree(failed, "does not apply", "do not apply")
        );
        return ExitCode::from(1);
    }
    let Some(run_id) = submit(job) else {
        return ExitCode::from(1);
    };
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
        "applied {name} ({}): {files} file{}, run {run_id} (`patchgate undo {run_id}` reverts it)",
        job.set.format.name(),
        plural(files),
    );
    ExitCode::SUCCESS
}

/// `--yes --reject`, as `git apply --reject`: every file that applies is written without its
/// hunks that do not, which go to `FILE.rej`; exit 1 when anything was left out.
fn apply_rejecting(job: &Job) -> ExitCode {
    let (files, name) = (job.files(), &job.name);
    let applying = files - job.failed().len();
    let run_id = if applying > 0 {
        match submit(job) {
            Some(id) => Some(id),
            None => return ExitCode::from(1),
        }
    } else {
        None
    };
    for c in &job.checked {
        match &c.result {
            Ok(ok) => outln!(
                "  applied  {}  +{} -{}",
                inert_line(&c.path),
                ok.added,
                ok.removed
            ),
            Err(_) => eprintln!("  does not apply  {}", inert_line(&c.path)),
        }
        for p in problems(c) {
            eprintln!("{p}");
        }
    }
    let rejects = {
        let _guard = job.rt.enter();
        job.rt.block_on(patch_apply::write_rejects(
            &job.gate,
            &job.set,
            &job.checked,
        ))
    };
    let written = print_rejects(&rejects);
    let left_out = job.left_out();
    let run = run_id.map_or(String::new(), |id| {
        format!(", run {id} (`patchgate undo {id}` reverts it)")
    });
    outln!(
        "{name} ({}): {applying} of {files} file{} applied, {left_out} hunk{} left out{run}",
        job.set.format.name(),
        plural(files),
        plural(left_out),
    );
    exit(applying == files && left_out == 0 && written)
}

/// Say which `.rej` files were written (and the run that takes them back) and why any was
/// not; whether all were.
fn print_rejects(rejects: &Rejects) -> bool {
    let mut written = true;
    for r in &rejects.files {
        match r {
            Ok(path) => outln!("  wrote  {}", inert_line(path)),
            Err(e) => {
                written = false;
                eprintln!("patchgate: {}: {}", e.code.as_str(), inert(&e.message));
            }
        }
    }
    if let Some(id) = &rejects.run_id {
        outln!("  .rej files: run {id} (`patchgate undo {id}` removes them)");
    }
    written
}

/// Apply every file that applies at once (`--yes`); its run id, or `None` (said why) when
/// nothing was written. A result with a new syntax error waits for a person even under
/// `auto`; `--yes` is that person's word, given before seeing it: say what is broken, then
/// apply. Only that hold: a path the rules keep for a person (`.env*`, `.patchgate.toml`, a
/// `gate` rule) stays.
fn submit(job: &Job) -> Option<String> {
    let _guard = job.rt.enter();
    let mut outcome = job.rt.block_on(patch_apply::apply_all(
        &job.gate,
        &job.set,
        &job.checked,
        job.reject,
    ))?;
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
        Ok(Outcome::Applied(s)) => return Some(s.run_id),
        Ok(Outcome::Failed(_, e)) | Err(e) => eprintln!(
            "patchgate: {}: {}; nothing was written",
            e.code.as_str(),
            e.message
        ),
        Ok(_) => eprintln!("patchgate: the patch was not applied; nothing was written"),
    }
    None
}

/// The TUI over one review per file that applies, and a failed row per file that does not
/// (saying why); what was submitted for each, and the `.rej` files `W` wrote.
fn review_in_tui(job: &Job) -> Result<(Submitted, Option<Rejects>)> {
    if !std::io::stdout().is_terminal() || std::fs::File::open("/dev/tty").is_err() {
        bail!(
            "reviewing a patch needs a terminal; use --yes to apply it all or --check to test it"
        );
    }
    patchgate::log::init();
    let _guard = job.rt.enter();
    let gate = job.gate.clone();
    let requests = patch_apply::requests(&job.set, job.reject);
    let refused: Vec<Option<Error>> = job
        .checked
        .iter()
        .map(|c| c.result.as_ref().err().cloned())
        .collect();
    let run_ids = Arc::new(Mutex::new(Submitted::new()));
    let submitted = run_ids.clone();
    let said = opening_message(job);
    let rejects = Arc::new(tokio::sync::Mutex::new(None));
    let patch = PatchFile {
        name: job.name.clone(),
        write_rejects: reject_writer(job, rejects.clone()),
    };
    let ended = job.rt.block_on(patchgate::tui::run(
        Backend::patch(gate.clone(), patch),
        Some(Box::new(move |tx| {
            tokio::spawn(async move {
                for ((path, req), refused) in requests.into_iter().zip(refused) {
                    // A file that does not apply is a row that says why, not a review.
                    if let Some(e) = refused {
                        let paths = req.edits.iter().map(|e| e.path.clone()).collect();
                        gate.record_failure(patch_apply::TOOL, None, paths, &e);
                        continue;
                    }
                    let sent = match gate.submit(req).await {
                        Ok(o) => outcome_run_id(&o).ok_or_else(|| "refused".to_string()),
                        Err(e) => {
                            let _ = tx.send(Msg::Done(Err(format!("{path}: {}", e.message))));
                            Err(e.message)
                        }
                    };
                    lock(&submitted).push((path, sent));
                }
                if let Some(first) = said {
                    let _ = tx.send(Msg::Done(Err(first)));
                }
            });
        })),
    ));
    // No one waits for the reviews left pending: they end with this process, not decided.
    ended?;
    let out = lock(&run_ids).clone();
    let rejects = job.rt.block_on(rejects.lock()).take();
    Ok((out, rejects))
}

/// `m` locked, whether or not a holder panicked (the list stays good either way).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// `W` in the TUI: the patch's hunks that do not apply written to `.rej` files, as `apply
/// --yes --reject` writes them, once (`done` keeps what was written, for the summary).
fn reject_writer(job: &Job, done: Arc<tokio::sync::Mutex<Option<Rejects>>>) -> RejectWriter {
    let (gate, set, checked) = (
        job.gate.clone(),
        Arc::new(job.set.clone()),
        Arc::new(job.checked.clone()),
    );
    Arc::new(move || {
        let (gate, set, checked, done) = (gate.clone(), set.clone(), checked.clone(), done.clone());
        Box::pin(async move {
            let mut done = done.lock().await;
            if let Some(r) = done.as_ref().filter(|r| r.run_id.is_some()) {
                return Err(format!(
                    "the .rej files are written already: {}",
                    rej_names(r)
                ));
            }
            let r = patch_apply::write_rejects(&gate, &set, &checked).await;
            let said = match (&r.run_id, r.files.iter().find_map(|f| f.as_ref().err())) {
                (_, Some(e)) => Err(format!("{}: {}", e.code.as_str(), e.message)),
                (Some(id), None) => Ok(format!(
                    "wrote {} (run {id}; `patchgate undo {id}` removes them)",
                    rej_names(&r)
                )),
                (None, None) => {
                    Ok("every hunk of the patch applies: no .rej file to write".to_string())
                }
            };
            *done = Some(r);
            said
        })
    })
}

/// The `.rej` files written, by name.
fn rej_names(r: &Rejects) -> String {
    let names: Vec<&str> = r
        .files
        .iter()
        .filter_map(|f| f.as_ref().ok())
        .map(String::as_str)
        .collect();
    names.join(", ")
}

/// What the TUI says first: the files that do not apply, and how to keep the hunks that do
/// not (`None` when every hunk applies).
fn opening_message(job: &Job) -> Option<String> {
    let bad: Vec<String> = job.failed().iter().map(|c| c.path.clone()).collect();
    let rej = if job.left_out() > 0 {
        "; W writes the hunks that do not apply to .rej files"
    } else {
        ""
    };
    match failed_summary(&bad) {
        Some(s) => Some(format!("{s}{rej}")),
        None if job.left_out() > 0 => Some(format!(
            "{} hunk{} {} not apply{rej}",
            job.left_out(),
            plural(job.left_out()),
            agree(job.left_out(), "does", "do")
        )),
        None => None,
    }
}

/// After the TUI: every file of the patch, in its order — applied, rejected, or why not,
/// each error once —, then the `.rej` files written; exit 1 unless every file and hunk was
/// applied.
fn report(job: &Job, submitted: &Submitted, rejects: Option<&Rejects>) -> ExitCode {
    outln!("{} ({}):", job.name, job.set.format.name());
    let mut applied = 0;
    for c in &job.checked {
        let path = &c.path;
        let mut problems = problems(c);
        let line = match (&c.result, submitted.iter().find(|(p, _)| p == path)) {
            (Err(_), _) => "not applied (does not apply)".to_string(),
            (Ok(_), Some((_, Err(why)))) => {
                problems.push(indented(why));
                "not applied".to_string()
            }
            (Ok(_), None) => "not applied (never sent for review)".to_string(),
            (Ok(_), Some((_, Ok(id)))) => {
                let (done, line) = decided(&job.gate, id);
                applied += usize::from(done);
                line
            }
        };
        outln!("  {}: {line}", inert_line(path));
        for p in problems {
            outln!("{p}");
        }
    }
    if let Some(r) = rejects {
        print_rejects(r);
    }
    let (files, left_out) = (job.files(), job.left_out());
    outln!(
        "{applied} of {files} file{} applied{}{}",
        plural(files),
        if left_out > 0 {
            format!(", {left_out} hunk{} left out", plural(left_out))
        } else {
            String::new()
        },
        if applied > 0 {
            " (`patchgate log` lists them, `patchgate undo` reverts)"
        } else {
            ""
        }
    );
    exit(applied == files && left_out == 0)
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
                    format!(
                        "applied {} of {} hunk{}",
                        r.hunks_accepted,
                        r.hunks_total,
                        plural(r.hunks_total)
                    )
                }
                _ => "applied".to_string(),
            },
        ),
        State::Rejected => (false, "rejected".to_string()),
        State::Pending => (false, "not decided".to_string()),
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
        [one] => Some(format!("{one} does not apply (its row says why)")),
        many => Some(format!(
            "{} files do not apply: {} (their rows say why)",
            many.len(),
            many.join(", ")
        )),
    }
}
