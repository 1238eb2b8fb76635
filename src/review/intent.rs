//! Crash-atomic batches (docs/DESIGN.md §7): before a proposal writes two or more files, its intent
//! — each file's pre-image and the hash of what will be written — is made durable beside the
//! journal; it is removed once the journal records the edit. A gate starting on the root
//! finds any intent left by a killed process: journaled, the batch completed (the intent
//! goes); not journaled, every file that holds what the batch wrote gets its pre-image back,
//! so each batch is all or nothing whatever moment the process died.

use std::path::{Path, PathBuf};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use serde::{Deserialize, Serialize};

use super::journal::Journal;
use super::proposal::Proposal;
use crate::error::{Error, ErrorCode, Result};
use crate::workspace::digest;
use crate::workspace::fs;
use crate::workspace::paths::Root;

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
        let files: Vec<IntentFile> = proposal
            .files
            .iter()
            .zip(bytes)
            .filter(|(f, b)| f.before.as_deref() != b.as_deref())
            .map(|(f, b)| IntentFile {
                rel: f.path.rel.clone(),
                before: f.before.as_deref().map(|b| B64.encode(b)),
                after: b.as_deref().map(digest::hash),
            })
            .collect();
        if files.len() < 2 {
            return Ok(Intent { path: None });
        }
        let dir = dir_of(journal);
        std::fs::create_dir_all(&dir).map_err(|e| io("store", &e))?;
        let record = Record {
            run_id: proposal.run_id.clone(),
            pid: std::process::id(),
            files,
        };
        let json = serde_json::to_vec(&record).map_err(|e| Error::invalid_input(e.to_string()))?;
        let path = dir.join(format!("{}.json", proposal.run_id));
        fs::write_private(&path, &json).map_err(|e| io("store", &e))?;
        sync_dir(&dir);
        Ok(Intent { path: Some(path) })
    }

    /// The batch is journaled (or was rolled back in process): the intent goes.
    pub(crate) fn finish(self) {
        if let Some(p) = &self.path {
            let _ = std::fs::remove_file(p);
            if let Some(d) = p.parent() {
                sync_dir(d);
            }
        }
    }
}

fn sync_dir(dir: &Path) {
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Finish or roll back every intent a dead process left for `journal`'s root (a live one's
/// batch is under way). Returns the run ids rolled back.
pub fn recover(root: &Root, journal: &Journal, max_bytes: u64) -> Vec<String> {
    let dir = dir_of(journal);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut rolled_back = Vec::new();
    // The journal is read only when an intent was left (a gate's start stays cheap).
    let mut journaled: Option<Vec<String>> = None;
    for entry in entries.flatten() {
        let path = entry.path();
        let Some(record) = std::fs::read(&path)
            .ok()
            .and_then(|b| serde_json::from_slice::<Record>(&b).ok())
        else {
            // A temp file of an unfinished store, or garbage: the batch never began.
            let _ = std::fs::remove_file(&path);
            continue;
        };
        if record.pid != std::process::id() && crate::workspace::state::pid_alive(record.pid) {
            continue;
        }
        let journaled = journaled.get_or_insert_with(|| {
            journal
                .entries()
                .unwrap_or_default()
                .into_iter()
                .filter(|e| e.action == super::journal::Action::Applied)
                .map(|e| e.run_id)
                .collect()
        });
        if !journaled.contains(&record.run_id) {
            for f in &record.files {
                roll_back(root, f, max_bytes);
            }
            tracing::warn!("rolled back the interrupted batch {}", record.run_id);
            rolled_back.push(record.run_id.clone());
        }
        let _ = std::fs::remove_file(&path);
    }
    sync_dir(&dir);
    rolled_back
}

/// Give one file its pre-image back when it holds what the batch wrote (or is missing
/// where the batch deleted it); a file changed otherwise since is left alone, and logged.
fn roll_back(root: &Root, f: &IntentFile, max_bytes: u64) {
    let Ok(path) = root.resolve(&f.rel) else {
        tracing::warn!("batch roll-back: cannot resolve {}", f.rel);
        return;
    };
    let now = fs::read(&path, max_bytes).ok().flatten();
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
