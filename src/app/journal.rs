//! The `log`, `undo` and `rewind` commands: the journal of a root.

use std::borrow::Cow;
use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;

use patchgate::cli::{LogArgs, RewindArgs, UndoArgs};
use patchgate::inert::{inert, inert_line};
use patchgate::review::account;
use patchgate::review::journal::Journal;
use patchgate::review::rewind;
use patchgate::workspace::Workspace;

use super::out::outln;

/// `2026-11-21 12:00:03` (UTC) from seconds since the epoch.
pub(crate) fn utc(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

pub(crate) fn log(args: LogArgs) -> Result<ExitCode> {
    let ws = Workspace::load(&args.root).map_err(|e| anyhow::anyhow!("{e}"))?;
    let journal = Journal::for_root(&ws.root);
    if args.diff {
        return session_diff(&journal, args.since.as_deref());
    }
    let mut out = std::io::stdout().lock();
    let mut any = false;
    // A reader that went away (`patchgate log | head`) ends the listing, and that is fine.
    let mut closed = false;
    // One entry at a time: a journal may be large.
    let listed = journal.each(|e| {
        if args.run_id.as_deref().is_some_and(|r| r != e.run_id) {
            return Ok(());
        }
        any = true;
        let line = if args.json {
            // Pre-images stay in the journal (old entries hold them inline): not printed.
            let mut e = e;
            for f in &mut e.files {
                f.before = None;
            }
            serde_json::to_string(&e).unwrap_or_default()
        } else if args.run_id.is_some() && !e.diff.is_empty() {
            // One run asked for: what was written, as a diff.
            format!("{}\n{}", log_line(&e), inert(e.diff.trim_end()))
        } else {
            log_line(&e)
        };
        writeln!(out, "{line}").map_err(|e| {
            closed = e.kind() == std::io::ErrorKind::BrokenPipe;
            patchgate::error::Error::new(patchgate::error::ErrorCode::FsError, e.to_string())
        })
    });
    if closed {
        return Ok(ExitCode::SUCCESS);
    }
    listed.map_err(|e| anyhow::anyhow!("{e}"))?;
    if !any && !args.json {
        let said = match &args.run_id {
            Some(run) => writeln!(
                out,
                "no decision recorded for run {} (journal: {})",
                inert_line(run),
                journal.path().display()
            ),
            None => writeln!(
                out,
                "no decisions recorded for {} (journal: {})",
                ws.root.path().display(),
                journal.path().display()
            ),
        };
        match said {
            Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => return Err(e.into()),
            _ => {}
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// One journal entry as `patchgate log` prints it, its text made inert.
pub(crate) fn log_line(e: &patchgate::review::journal::Entry) -> String {
    let files: Vec<Cow<'_, str>> = e.files.iter().map(|f| inert_line(&f.path)).collect();
    let hunks = match e.hunks {
        Some((a, t)) if a != t => format!(" ({a}/{t} hunks)"),
        _ => String::new(),
    };
    let edited = if e.edited {
        " (edited by the reviewer)"
    } else {
        ""
    };
    // A note's further lines go below, indented.
    let note = if e.note.is_empty() {
        String::new()
    } else {
        format!(" — {}", inert(e.note.trim()).replace('\n', "\n      "))
    };
    // What was written, then what the reviewer left out of the proposal, line by line.
    let counts = match e.counts {
        Some((a, r)) => format!(" +{a} -{r}"),
        None => String::new(),
    };
    let left_out: String = account::log_lines(&e.left_out)
        .iter()
        .map(|l| format!("\n      {}", inert_line(l)))
        .collect();
    format!(
        "{}  {:<8} {}  {:<18} {}{counts}{hunks}{edited}{note}{left_out}",
        utc(e.ts),
        e.action.as_str(),
        inert_line(&e.run_id),
        inert_line(&e.tool),
        files.join(", ")
    )
}

pub(crate) fn undo(args: UndoArgs) -> Result<ExitCode> {
    let ws = Workspace::load(&args.root).map_err(|e| anyhow::anyhow!("{e}"))?;
    let journal = Journal::for_root(&ws.root);
    match journal.undo(args.run_id.as_deref(), ws.config.max_file_bytes) {
        Ok(entry) => {
            let files: Vec<Cow<'_, str>> =
                entry.files.iter().map(|f| inert_line(&f.path)).collect();
            outln!(
                "undid run {}: restored {}",
                inert_line(&entry.run_id),
                files.join(", ")
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("patchgate: undo refused ({}):\n{}", e.code, e.message);
            eprintln!("{}", e.to_json());
            Ok(ExitCode::from(1))
        }
    }
}

/// `log --diff [--since RUN]`: one unified diff of what the applied runs changed.
fn session_diff(journal: &Journal, since: Option<&str>) -> Result<ExitCode> {
    match rewind::session_diff(journal, since) {
        Ok((diff, notes)) => {
            for n in &notes {
                eprintln!("patchgate: {}", inert_line(n));
            }
            super::out::bytes(inert(&diff).as_bytes());
            Ok(ExitCode::SUCCESS)
        }
        Err(e) if e.code == patchgate::error::ErrorCode::RunNotFound => {
            eprintln!("patchgate: {}", e.message);
            eprintln!("{}", e.to_json());
            Ok(ExitCode::from(1))
        }
        Err(e) => Err(anyhow::anyhow!("{e}")),
    }
}

pub(crate) fn rewind(args: RewindArgs) -> Result<ExitCode> {
    let ws = Workspace::load(&args.root).map_err(|e| anyhow::anyhow!("{e}"))?;
    let journal = Journal::for_root(&ws.root);
    match rewind::rewind(&journal, &args.run_id, ws.config.max_file_bytes) {
        Ok(entries) => {
            for e in &entries {
                let files: Vec<Cow<'_, str>> =
                    e.files.iter().map(|f| inert_line(&f.path)).collect();
                outln!("undid run {}: {}", inert_line(&e.run_id), files.join(", "));
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!(
                "patchgate: rewind refused ({}):\n{}",
                e.code,
                inert(&e.message)
            );
            eprintln!("{}", e.to_json());
            Ok(ExitCode::from(1))
        }
    }
}
