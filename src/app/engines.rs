//! The `merge` and `eval` commands: the engines on files and corpora.

use std::io::{IsTerminal, Read};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};

use patchgate::cli::{EvalArgs, MergeArgs};
use patchgate::diff::unified_diff;
use patchgate::edit::{self, Format, text::Text};
use patchgate::review::fallback::merge_lazy;
use patchgate::workspace::config::Config;
use patchgate::workspace::userconfig::UserConfig;
use std::path::Path;

use super::out::{out, outln};

pub(crate) fn read_edit(arg: Option<&str>) -> Result<String> {
    let bytes = match arg {
        None | Some("-") => {
            let mut buf = Vec::new();
            std::io::stdin()
                .read_to_end(&mut buf)
                .context("cannot read the edit from standard input")?;
            buf
        }
        Some(path) => {
            std::fs::read(path).with_context(|| format!("cannot read the edit {path}"))?
        }
    };
    String::from_utf8(bytes).context("the edit is not valid UTF-8")
}

pub(crate) fn merge(args: MergeArgs) -> Result<ExitCode> {
    let format = Format::from(args.format);
    // Only the lazy engine reads an instruction: another would drop it without a word.
    if args.instruction.is_some() && format != Format::Lazy {
        bail!(
            "--instruction is read only by the lazy engine (`patchgate merge lazy`); the {} \
             engine places its edit where the edit itself says and would ignore it: leave \
             --instruction out",
            format.name()
        );
    }
    // A lazy snippet may create the file; every other format needs it.
    let (file, existed) = match std::fs::read(&args.file) {
        Ok(bytes) => (bytes, true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && format == Format::Lazy => {
            (Vec::new(), false)
        }
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", args.file.display())),
    };
    let edit_text = read_edit(args.edit.as_deref())?;
    let path = args.file.to_string_lossy();
    let hints = edit::Hints {
        path: Some(&path),
        instruction: args.instruction.as_deref(),
    };
    // The model fallback for lazy snippets, when the user's own config has one.
    let fallback = match format {
        Format::Lazy => {
            let user = UserConfig::load()?;
            let repo_has_one = Config::load(Path::new("."))?.fallback.is_some();
            if repo_has_one {
                eprintln!(
                    "patchgate: .patchgate.toml's [fallback] is ignored: the model fallback comes \
                     only from your own config (PATCHGATE_CONFIG or ~/.config/patchgate/config.toml)"
                );
            }
            patchgate::review::user_fallback(&user, repo_has_one)
                .map_err(|e| anyhow::anyhow!("{e}"))?
        }
        _ => None,
    };
    let outcome = Text::decode(&file).and_then(|text| {
        let merged = match &fallback {
            Some(fb) => tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| patchgate::error::Error::invalid_input(e.to_string()))?
                .block_on(merge_lazy(Some(fb), text.content(), &edit_text, &hints))?,
            None => edit::run(format, &text, &edit_text, &hints)?,
        };
        let bytes = text.encode(&merged.content)?;
        Ok((text, merged, bytes))
    });
    let (text, mut merged, bytes) = match outcome {
        Ok(ok) => ok,
        Err(e) => {
            if args.json {
                let obj =
                    serde_json::json!({"status": "error", "code": e.code, "message": e.message});
                outln!("{obj}");
            }
            eprintln!(
                "patchgate: the edit was refused ({}):\n{}",
                e.code, e.message
            );
            eprintln!("{}", e.to_json());
            return Ok(ExitCode::from(1));
        }
    };
    // The syntax check every proposal gets: a parse error the file did not have.
    let old = existed.then(|| text.content());
    let broken = patchgate::syntax::new_errors(&path, old, &merged.content);
    merged.warnings.extend(patchgate::syntax::warning(&broken));
    // Lines the merge deletes that the edit does not show (docs/DESIGN.md §4).
    if existed {
        let (_, unseen) =
            edit::unseen_deletions(format, text.content(), &merged.content, &edit_text, &hints);
        merged.warnings.extend(unseen);
    }
    if args.json {
        let name = args.file.to_string_lossy();
        let obj = serde_json::json!({
            "status": "ok",
            "applied": merged.applied,
            "warnings": merged.warnings,
            "diff": unified_diff(&name, text.content(), &merged.content),
            "content": String::from_utf8(bytes).unwrap_or(merged.content),
        });
        outln!("{obj}");
    } else {
        for w in &merged.warnings {
            eprintln!("patchgate: warning: {w}");
        }
        super::out::bytes(&bytes);
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn eval(args: EvalArgs) -> Result<ExitCode> {
    if args.rules {
        for r in patchgate::edit::lazy::rules::ALL {
            outln!("{:<20} {:<6} {}", r.name, r.stage.name(), r.summary);
        }
        return Ok(ExitCode::SUCCESS);
    }
    let format: patchgate::edit::Format = args.format.into();
    // Only the lazy merge has rules: another engine would score as if none were switched off.
    if !args.without.is_empty() && format != patchgate::edit::Format::Lazy {
        bail!(
            "--without switches off a rule of the lazy merge; the {} engine has none: leave \
             --without out or score --format lazy",
            format.name()
        );
    }
    let rules = args
        .without
        .iter()
        .fold(patchgate::edit::lazy::RuleSet::ALL_ON, |set, &r| {
            set.without(r)
        });
    if let Some(missing) = args.dirs.iter().find(|d| !d.is_dir()) {
        bail!("{} is not a directory", missing.display());
    }
    let show_progress = std::io::stderr().is_terminal();
    let mut parts = Vec::new();
    for dir in &args.dirs {
        let repeat = args.repeat as usize;
        let report = patchgate::eval::run_with(dir, format, repeat, rules, |done, total| {
            if show_progress {
                eprint!("\r{}: {done}/{total} cases", dir.display());
                if done == total {
                    eprint!("\r\x1b[K");
                }
            }
        })?;
        if args.dirs.len() > 1 {
            outln!("== {}", dir.display());
        }
        out!("{}", report.render(args.verbose));
        if args.curve {
            out!("{}", report.render_curve());
        }
        let label = dir.file_name().map_or_else(
            || dir.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        parts.push((label, report));
    }
    if parts.len() > 1 {
        let all = patchgate::eval::Report::combine(format, parts);
        outln!("== all");
        outln!("{}", all.summary());
        if args.curve {
            out!("{}", all.render_curve());
        }
    }
    Ok(ExitCode::SUCCESS)
}
