//! The session at a glance, and rewinding it (docs/DESIGN.md §4): `patchgate log --diff
//! [--since RUN]` is one unified diff of what the applied runs changed, per file, in order —
//! each run's own change laid onto the runs before it, so hand edits made between runs are
//! not theirs and do not appear; `patchgate rewind RUN` takes back RUN and every later run,
//! newest first, by undo's three-way rule, all or nothing: if a later change touched any
//! run's own lines the rewind is refused, naming them, and nothing is written.

use std::collections::{HashMap, HashSet};

use super::all_or_none::{self, Plan};
use super::journal::{Action, Entry, FileRecord, Journal, now_secs};
use super::revert;
use crate::diff::FileDiff;
use crate::error::{Error, ErrorCode, Result};
use crate::workspace::digest;
use crate::workspace::fs;
use crate::workspace::paths::SafePath;

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
/// place where a run's change met a hand edit (its result is shown there, hand edit and all)
/// and for each run's file whose stored copy the store's cap dropped (that change is left out;
/// a later run's change to the file is then laid onto it as onto a hand edit).
pub fn session_diff(journal: &Journal, since: Option<&str>) -> Result<(String, Vec<String>)> {
    let entries = journal.entries()?;
    let runs = applied_runs(&entries, since)?;
    let mut tracks: Vec<Track> = Vec::new();
    let mut notes = Vec::new();
    for run in runs {
        for rec in &run.files {
            let (before, after) = match journal
                .before_of(&run.run_id, rec)
                .and_then(|b| Ok((b, written(journal, &run.run_id, rec)?)))
            {
                Ok(both) => both,
                // Dropped by the store's cap: this change is left out, and said so.
                Err(e) => {
                    notes.push(format!(
                        "run {} left out for `{}`: {}",
                        run.run_id, rec.path, e.message
                    ));
                    continue;
                }
            };
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

/// How often the files' locks are taken again when a run committed meanwhile touched a file
/// not locked yet.
const LOCK_TRIES: usize = 4;

/// Every file the runs from `run_id` on touched, each once.
fn paths_of(journal: &Journal, runs: &[&Entry]) -> Result<Vec<SafePath>> {
    let mut paths: Vec<SafePath> = Vec::new();
    for rel in runs.iter().flat_map(|r| r.files.iter().map(|f| &f.path)) {
        let p = journal.root().resolve(rel)?;
        if !paths.iter().any(|q| q.abs == p.abs) {
            paths.push(p);
        }
    }
    Ok(paths)
}

/// Take back `run_id` and every later applied run, newest first (docs/DESIGN.md §4): all of
/// their files or none. The journal gets an `undone` entry per run, newest first, in one
/// append. The journal is read again once every file's lock is held, so a run committed
/// between the first read and the locks is one of the runs, not a hand edit.
pub fn rewind(journal: &Journal, run_id: &str, max_bytes: u64) -> Result<Vec<Entry>> {
    let entries = journal.entries()?;
    let mut paths = paths_of(journal, &applied_runs(&entries, Some(run_id))?)?;
    for _ in 0..LOCK_TRIES {
        let outcome = fs::with_locks(&paths, || -> Result<_> {
            let entries = journal.entries()?;
            let runs = applied_runs(&entries, Some(run_id))?;
            let wanted = paths_of(journal, &runs)?;
            if wanted.iter().any(|w| !paths.iter().any(|p| p.abs == w.abs)) {
                return Ok(Err(wanted));
            }
            rewind_locked(journal, &runs, run_id, &wanted, max_bytes).map(Ok)
        })?;
        match outcome {
            Ok(done) => return Ok(done),
            Err(more) => paths.extend(more),
        }
    }
    Err(Error::new(
        ErrorCode::FileChanged,
        format!(
            "cannot rewind to before run {run_id}: runs kept landing on new files while it \
             waited for their locks; nothing was written, try again"
        ),
    ))
}

/// [`rewind`] with every file of `runs` locked: read them, take the runs back, write every
/// file or none, then journal the runs undone (putting the files back if that fails).
fn rewind_locked(
    journal: &Journal,
    runs: &[&Entry],
    run_id: &str,
    paths: &[SafePath],
    max_bytes: u64,
) -> Result<Vec<Entry>> {
    let mut now = HashMap::new();
    for p in paths {
        now.insert(p.rel.clone(), fs::read(p, max_bytes)?);
    }
    let mut states = now.clone();
    let mut modes = HashMap::new();
    if let Err(refusals) = taken_back(journal, runs, &mut states, &mut modes) {
        return Err(Error::new(
            ErrorCode::FileChanged,
            format!(
                "cannot rewind to before run {run_id}: a later change touched lines a run \
                 changed, so nothing was written.\n{}",
                refusals.join("\n")
            ),
        ));
    }
    let plans: Vec<Plan<'_>> = paths
        .iter()
        .map(|p| Plan {
            path: p,
            now: now.get(&p.rel).cloned().flatten(),
            to: states.get(&p.rel).cloned().flatten(),
            mode: modes.get(&p.rel).copied().flatten(),
        })
        .collect();
    let written = all_or_none::write_all(&plans).map_err(|e| {
        Error::new(
            e.code,
            format!("cannot rewind to before run {run_id}: {}", e.message),
        )
    })?;
    let done: Vec<Entry> = runs
        .iter()
        .rev()
        .map(|run| Entry {
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
        })
        .collect();
    if let Err(e) = journal.append_all(&done) {
        return Err(written.put_back(&Error::new(
            e.code,
            format!(
                "cannot rewind to before run {run_id}: the journal could not record it ({})",
                e.message
            ),
        )));
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
