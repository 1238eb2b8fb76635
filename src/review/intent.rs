//! Crash-atomic batches (docs/DESIGN.md §7): before a proposal writes two or more files, its intent
//! — each file's pre-image and the hash of what will be written — is made durable beside the
//! journal; it is removed once the journal records the edit. A gate starting on the root
//! finds any intent left by a killed process: journaled, the batch completed (the intent
//! goes); not journaled, every file that holds what the batch wrote gets its pre-image back,
//! so each batch is all or nothing whatever moment the process died.

use std::path::PathBuf;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use serde::{Deserialize, Serialize};

use super::journal::Journal;
use super::proposal::Proposal;
use crate::error::{Error, ErrorCode, Result};
use crate::workspace::digest;
use crate::workspace::fs;
use crate::workspace::paths::Root;
use crate::workspace::private;

/// An intent file larger than this is not read (it holds pre-images, base64: a batch of
/// files at the size cap fits).
const MAX_INTENT_BYTES: u64 = 1 << 30;

/// One file of an intent.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct IntentFile {
    /// Root-relative path.
    rel: String,
    /// The bytes before, base64 (`None`: the file did not exist).
    before: Option<String>,
    /// The hash of the bytes the batch writes (`None`: it deletes the file).
    after: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Record {
    run_id: String,
    /// The writing process: while it lives, its batch is its own business.
    pid: u32,
    files: Vec<IntentFile>,
}

/// A durable intent, removed by [`Intent::finish`].
#[derive(Debug)]
pub(crate) struct Intent {
    path: Option<PathBuf>,
}

/// Where a journal's intents live.
fn dir_of(journal: &Journal) -> PathBuf {
    journal.path().with_extension("intents")
}

fn io(what: &str, e: &std::io::Error) -> Error {
    Error::new(
        ErrorCode::FsError,
        format!("cannot {what} the batch intent: {e}"),
    )
}

impl Intent {
    /// Record the intent of writing `contents` (encoded `bytes` per file, `None`: delete)
    /// for `proposal`, durably, when it changes two or more files; else a no-op intent.
    pub(crate) fn begin(
        journal: &Journal,
        proposal: &Proposal,
        bytes: &[Option<Vec<u8>>],
    ) -> Result<Intent> {
        let changed = || {
            (proposal.files.iter().zip(bytes)).filter(|(f, b)| f.before.as_deref() != b.as_deref())
        };
        // Counted first: one file's edit needs no intent, nor its pre-image encoded and its
        // result hashed.
        if changed().count() < 2 {
            return Ok(Intent { path: None });
        }
        let files: Vec<IntentFile> = changed()
            .map(|(f, b)| IntentFile {
                rel: f.path.rel.clone(),
                before: f.before.as_deref().map(|b| B64.encode(b)),
                after: b.as_deref().map(digest::hash),
            })
            .collect();
        let dir = dir_of(journal);
        // Made durable: an intent in a directory a crash lost would roll nothing back.
        crate::workspace::dirs::make_durable(&dir, 0o777).map_err(|e| io("store", &e))?;
        let record = Record {
            run_id: proposal.run_id.clone(),
            pid: std::process::id(),
            files,
        };
        let json = serde_json::to_vec(&record).map_err(|e| Error::invalid_input(e.to_string()))?;
        let path = dir.join(format!("{}.json", proposal.run_id));
        fs::write_private(&path, &json).map_err(|e| io("store", &e))?;
        fs::sync_dir(&dir);
        Ok(Intent { path: Some(path) })
    }

    /// The batch is journaled (or was rolled back in process): the intent goes.
    pub(crate) fn finish(self) {
        if let Some(p) = &self.path {
            let _ = std::fs::remove_file(p);
            if let Some(d) = p.parent() {
                fs::sync_dir(d);
            }
        }
    }
}

/// Finish or roll back every intent a dead process left for `journal`'s root (a live one's
/// batch is under way). Returns the run ids rolled back.
pub fn recover(root: &Root, journal: &Journal, max_bytes: u64) -> Vec<String> {
    let dir = dir_of(journal);
    // Intents are believed only from a directory nobody but this user could have written
    // to, and only from regular files of this user's (a FIFO would hang the start).
    let trusted = private::check_store(&dir)
        .map_err(|e| tracing::warn!("batch intents not replayed: {e}"))
        .is_ok();
    let Ok(entries) = std::fs::read_dir(&dir)
        .map_err(|_| ())
        .and_then(|e| if trusted { Ok(e) } else { Err(()) })
    else {
        return Vec::new();
    };
    let mut rolled_back = Vec::new();
    // The journal is read only when an intent was left (a gate's start stays cheap).
    let mut journaled: Option<Vec<String>> = None;
    for entry in entries.flatten() {
        let path = entry.path();
        if !private::is_own_file(&path) {
            tracing::warn!(
                "batch intents: {} is not a file of this user's",
                path.display()
            );
            continue;
        }
        let small = std::fs::metadata(&path).is_ok_and(|m| m.len() <= MAX_INTENT_BYTES);
        let Some(record) = small
            .then(|| std::fs::read(&path).ok())
            .flatten()
            .and_then(|b| serde_json::from_slice::<Record>(&b).ok())
        else {
            // A temp file of an unfinished store, or garbage: the batch never began. (A
            // young temp file may be another process's store under way: left.)
            let temp = fs::is_temp_name(&entry.file_name().to_string_lossy());
            if !temp || fs::is_stale_temp(&entry, fs::is_temp_name) {
                let _ = std::fs::remove_file(&path);
            }
            continue;
        };
        if record.pid != std::process::id() && crate::workspace::state::pid_alive(record.pid) {
            continue;
        }
        if journaled.is_none() {
            // A journal that cannot be read says nothing of which batches it holds: rolling
            // them all back would revert journaled edits. The intents wait for a start that
            // can read it.
            match journal.entries() {
                Ok(entries) => {
                    journaled = Some(
                        entries
                            .into_iter()
                            .filter(|e| e.action == super::journal::Action::Applied)
                            .map(|e| e.run_id)
                            .collect(),
                    );
                }
                Err(e) => {
                    tracing::warn!("batch intents left as they are: {}", e.message);
                    return rolled_back;
                }
            }
        }
        let journaled = journaled.as_ref().map_or(&[][..], Vec::as_slice);
        if !journaled.contains(&record.run_id) {
            for f in &record.files {
                roll_back(root, f, max_bytes);
            }
            tracing::warn!("rolled back the interrupted batch {}", record.run_id);
            rolled_back.push(record.run_id.clone());
        }
        let _ = std::fs::remove_file(&path);
    }
    fs::sync_dir(&dir);
    rolled_back
}

/// Give one file its pre-image back when it holds what the batch wrote (or is missing
/// where the batch deleted it); a file changed otherwise since is left alone, and logged.
fn roll_back(root: &Root, f: &IntentFile, max_bytes: u64) {
    let Ok(path) = root.resolve(&f.rel) else {
        tracing::warn!("batch roll-back: cannot resolve {}", f.rel);
        return;
    };
    // (A file that cannot be read now is not known to hold what the batch wrote: left.)
    let now = match fs::read(&path, max_bytes) {
        Ok(now) => now,
        Err(e) => {
            tracing::warn!(
                "batch roll-back: {} cannot be read ({}); left as it is",
                f.rel,
                e.message
            );
            return;
        }
    };
    let before = f.before.as_deref().and_then(|b| B64.decode(b).ok());
    if now == before {
        return;
    }
    let written = now.as_deref().map(digest::hash) == f.after;
    if !written {
        tracing::warn!("batch roll-back: {} changed since; left as it is", f.rel);
        return;
    }
    let restored = match &before {
        Some(b) => fs::write_atomic(&path, b, None),
        None => fs::remove(&path),
    };
    if let Err(e) = restored {
        tracing::warn!("batch roll-back of {}: {}", f.rel, e.message);
    }
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt;
    use std::time::Duration;

    use super::*;

    /// A root with `main.py`, its journal, and an intent left by a dead process that would
    /// give `main.py` the pre-image `planted`.
    fn planted() -> (tempfile::TempDir, Root, Journal, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let root_dir = tmp.path().join("root");
        std::fs::create_dir(&root_dir).unwrap();
        std::fs::write(root_dir.join("main.py"), "print('mine')\n").unwrap();
        let root = Root::new(&root_dir).unwrap();
        let journal = Journal::at(tmp.path().join("state/journal/r.jsonl"), &root);
        let dir = dir_of(&journal);
        std::fs::create_dir_all(&dir).unwrap();
        let record = Record {
            run_id: "planted".into(),
            pid: 0x7fff_fff0,
            files: vec![IntentFile {
                rel: "main.py".into(),
                before: Some(B64.encode("import os; os.system('planted.sh')\n")),
                after: Some(digest::hash(b"print('mine')\n")),
            }],
        };
        std::fs::write(dir.join("x.json"), serde_json::to_vec(&record).unwrap()).unwrap();
        (tmp, root, journal, dir)
    }

    fn main_py(root: &Root) -> String {
        std::fs::read_to_string(root.path().join("main.py")).unwrap()
    }

    #[test]
    fn an_intent_in_a_private_directory_is_rolled_back() {
        let (_tmp, root, journal, dir) = planted();
        // Made under a umask of 002 (its group may write), inside the private state directory.
        for d in [dir.as_path(), dir.parent().unwrap()] {
            std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o775)).unwrap();
        }
        assert_eq!(recover(&root, &journal, 1 << 20), ["planted"]);
        assert!(main_py(&root).contains("planted.sh"));
    }

    #[test]
    fn an_intent_others_could_have_written_is_never_replayed() {
        let (_tmp, root, journal, dir) = planted();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(recover(&root, &journal, 1 << 20).is_empty());
        assert_eq!(main_py(&root), "print('mine')\n");
        // The directory holding the intents' directory counts too.
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        let parent = dir.parent().unwrap();
        std::fs::set_permissions(parent, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(recover(&root, &journal, 1 << 20).is_empty());
        assert_eq!(main_py(&root), "print('mine')\n");
    }

    #[test]
    fn a_fifo_among_the_intents_does_not_hang_the_start() {
        let (_tmp, root, journal, dir) = planted();
        std::fs::remove_file(dir.join("x.json")).unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(dir.join("y.json"))
            .status()
            .unwrap();
        assert!(made.success());
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(recover(&root, &journal, 1 << 20));
        });
        let done = rx.recv_timeout(Duration::from_secs(5));
        assert_eq!(done.ok(), Some(Vec::new()), "recovery hung on a FIFO");
    }
}
