//! The session at a glance, and rewinding it (docs/DESIGN.md §4): `patchgate log --diff
//! [--since RUN]` is one unified diff of what the applied runs changed, per file, in order —
//! each run's own change laid onto the runs before it, so hand edits made between runs are
//! not theirs and do not appear; `patchgate rewind RUN` takes back RUN and every later run,
//! newest first, by undo's three-way rule, all or nothing: if a later change touched any
//! run's own lines the rewind is refused, naming them, and nothing is written.

use std::collections::{HashMap, HashSet};

use super::journal::{Action, Entry, FileRecord, Journal, now_secs};
use super::revert;
use crate::diff::FileDiff;
use crate::error::{Error, ErrorCode, Result};
use crate::workspace::digest;
use crate::workspace::fs;

/// Lines of context in the session's diff.
const CONTEXT: usize = 3;

/// The applied runs not undone, in the journal's order, from `since` (that run included) on;
/// `RUN_NOT_FOUND` when `since` names no such run.
fn applied_runs<'a>(entries: &'a [Entry], since: Option<&str>) -> Result<Vec<&'a Entry>> {
    let undone: HashSet<&str> = entries
        .iter()
        .filter(|e| e.action == Action::Undone)
        .map(|e| e.run_id.as_str())
        .collect();
    let runs: Vec<&Entry> = entries
        .iter()
        .filter(|e| e.action == Action::Applied && !undone.contains(e.run_id.as_str()))
        .collect();
    let Some(since) = since else {
        return Ok(runs);
    };
    match runs.iter().position(|e| e.run_id == since) {
        Some(at) => Ok(runs[at..].to_vec()),
        None => Err(Error::new(
            ErrorCode::RunNotFound,
            if undone.contains(since) {
                format!("run {since} was undone")
            } else {
                format!("no applied edit with run id {since} in the journal")
            },
        )),
    }
}

/// What `rec`'s run wrote; an error when the store no longer keeps it.
fn written(journal: &Journal, run_id: &str, rec: &FileRecord) -> Result<Option<Vec<u8>>> {
    if rec.after_hash.is_none() {
        return Ok(None);
    }
    journal.written_of(rec).map(Some).ok_or_else(|| {
        Error::new(
            ErrorCode::FsError,
            format!(
                "what run {run_id} wrote to `{}` is no longer stored (the journal's pre-images \
                 are capped)",
                rec.path
            ),
        )
    })
}

/// One file of the session: how the first run found it, and how the runs' own changes,
/// laid one onto the other, leave it.
struct Track {
    path: String,
    start: Option<Vec<u8>>,
    state: Option<Vec<u8>>,
}

/// The run's change (`before` → `after`) laid onto `state`, the file as the runs before it
/// left it: its result where the state is what it found, else a three-way merge; where that
/// meets the hand edits, the run's result (`false`: they come along).
fn lay_onto(
    before: Option<Vec<u8>>,
    after: Option<Vec<u8>>,
    state: Option<Vec<u8>>,
) -> (Option<Vec<u8>>, bool) {
    if state == before {
        return (after, true);
    }
    match (&before, &after, &state) {
        (Some(b), Some(a), Some(s)) => match revert::revert_onto(a, b, s) {
            Ok(merged) => (Some(merged), true),
            Err(_) => (after, false),
        },
        _ => (after, false),
    }
}

/// The session's diff from `since` on (every applied run when `None`), and a note for each
/// place where a run's change met a hand edit (its result is shown there, hand edit and all).
pub fn session_diff(journal: &Journal, since: Option<&str>) -> Result<(String, Vec<String>)> {
    let entries = journal.entries()?;
    let runs = applied_runs(&entries, since)?;
    let mut tracks: Vec<Track> = Vec::new();
    let mut notes = Vec::new();
    for run in runs {
        for rec in &run.files {
            let before = journal.before_of(&run.run_id, rec)?;
            let after = written(journal, &run.run_id, rec)?;
            match tracks.iter_mut().find(|t| t.path == rec.path) {
                None => tracks.push(Track {
                    path: rec.path.clone(),
                    start: before,
                    state: after,
                }),
                Some(t) => {
                    let (state, clean) = lay_onto(before, after, t.state.take());
                    t.state = state;
                    if !clean {
                        notes.push(format!(
                            "run {} changed lines of `{}` a hand edit had changed: its result \
                             is shown there, with the hand edit",
                            run.run_id, rec.path
                        ));
                    }
                }
            }
        }
    }
    let text = |b: &Option<Vec<u8>>| {
        String::from_utf8_lossy(b.as_deref().unwrap_or_default()).into_owned()
    };
    let diff = tracks
        .iter()
        .map(|t| {
            FileDiff::compute(&text(&t.start), &text(&t.state), CONTEXT)
                .unified(&format!("a/{}", t.path), &format!("b/{}", t.path))
        })
        .collect();
    Ok((diff, notes))
}

/// Each file's content once every run from the newest back to the first of `runs` is taken
/// back from `states` (the files now), or every refusal met on the way.
fn taken_back(
    journal: &Journal,
    runs: &[&Entry],
    states: &mut HashMap<String, Option<Vec<u8>>>,
    modes: &mut HashMap<String, Option<u32>>,
) -> std::result::Result<(), Vec<String>> {
    let mut refusals = Vec::new();
    let mut blocked: HashSet<String> = HashSet::new();
    for run in runs.iter().rev() {
        for rec in &run.files {
            if blocked.contains(&rec.path) {
                continue;
            }
            let now = states.get(&rec.path).cloned().flatten();
            let back = journal.before_of(&run.run_id, rec).and_then(|before| {
                if now.as_deref().map(digest::hash) == rec.after_hash {
                    Ok(before)
                } else {
                    journal
                        .revert_later(&run.run_id, rec, before, now)
                        .map(Some)
                }
            });
            match back {
                Ok(b) => {
                    states.insert(rec.path.clone(), b);
                    modes.insert(rec.path.clone(), rec.mode);
                }
                Err(e) => {
                    refusals.push(format!("run {}: {}", run.run_id, e.message));
                    blocked.insert(rec.path.clone());
                }
            }
        }
    }
    if refusals.is_empty() {
        Ok(())
    } else {
        Err(refusals)
    }
}

/// Take back `run_id` and every later applied run, newest first (docs/DESIGN.md §4): all of
/// their files or none. The journal gets an `undone` entry per run, newest first.
pub fn rewind(journal: &Journal, run_id: &str, max_bytes: u64) -> Result<Vec<Entry>> {
    let entries = journal.entries()?;
    let runs = applied_runs(&entries, Some(run_id))?;
    let mut paths = Vec::new();
    for rel in runs.iter().flat_map(|r| r.files.iter().map(|f| &f.path)) {
        let p = journal.root().resolve(rel)?;
        if !paths
            .iter()
            .any(|q: &crate::workspace::paths::SafePath| q.abs == p.abs)
        {
            paths.push(p);
        }
    }
    // Every file's lock, in a fixed order, from the reads to the writes (as undo).
    paths.sort_by(|a, b| a.abs.cmp(&b.abs));
    let locks: Vec<_> = paths.iter().map(|p| fs::lock_for(&p.abs)).collect();
    let _guards: Vec<_> = locks
        .iter()
        .map(|l| l.lock().unwrap_or_else(std::sync::PoisonError::into_inner))
        .collect();
    let _process_locks: Vec<_> = paths
        .iter()
        .filter_map(|p| fs::ProcessLock::acquire(&p.abs))
        .collect();
    let mut now = HashMap::new();
    for p in &paths {
        now.insert(p.rel.clone(), fs::read(p, max_bytes)?);
    }
    let mut states = now.clone();
    let mut modes = HashMap::new();
    if let Err(refusals) = taken_back(journal, &runs, &mut states, &mut modes) {
        return Err(Error::new(
            ErrorCode::FileChanged,
            format!(
                "cannot rewind to before run {run_id}: a later change touched lines a run \
                 changed, so nothing was written.\n{}",
                refusals.join("\n")
            ),
        ));
    }
    for p in &paths {
        let state = states.get(&p.rel).cloned().flatten();
        if now.get(&p.rel).cloned().flatten() == state {
            continue;
        }
        match state {
            Some(bytes) => {
                fs::write_atomic_locked(p, &bytes, modes.get(&p.rel).copied().flatten())?;
            }
            None => fs::remove_locked(p)?,
        }
    }
    let mut done = Vec::with_capacity(runs.len());
    for run in runs.iter().rev() {
        let entry = Entry {
            ts: now_secs(),
            run_id: run.run_id.clone(),
            action: Action::Undone,
            tool: run.tool.clone(),
            client: run.client.clone(),
            note: format!("rewound with run {run_id}"),
            hunks: None,
            edited: false,
            files: run.files.clone(),
            counts: None,
            diff: String::new(),
            left_out: Vec::new(),
        };
        journal.append(&entry)?;
        done.push(entry);
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(s: &str) -> Option<Vec<u8>> {
        Some(s.as_bytes().to_vec())
    }

    #[test]
    fn a_runs_change_is_laid_onto_the_runs_before_it_without_the_hand_edits() {
        let lines = |edits: &[(usize, &str)]| -> String {
            (1..=12)
                .map(|i| {
                    edits
                        .iter()
                        .find(|(n, _)| *n == i)
                        .map_or(format!("{i}\n"), |(_, t)| format!("{t}\n"))
                })
                .collect()
        };
        // The runs left line 1 changed; by hand line 12 changed; the run changes line 6.
        let state = b(&lines(&[(1, "run one")]));
        let before = b(&lines(&[(1, "run one"), (12, "hand")]));
        let after = b(&lines(&[(1, "run one"), (6, "run two"), (12, "hand")]));
        let (laid, clean) = lay_onto(before.clone(), after.clone(), state);
        assert!(clean);
        assert_eq!(laid, b(&lines(&[(1, "run one"), (6, "run two")])));
        // Nothing by hand in between: the run's result.
        assert_eq!(
            lay_onto(before.clone(), after.clone(), before),
            (after, true)
        );
        // A run that created the file.
        assert_eq!(lay_onto(None, b("new\n"), None), (b("new\n"), true));
    }
}
