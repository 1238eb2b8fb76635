//! The decision journal (docs/DESIGN.md §4): one JSON line per decision, per root, in the state
//! directory, with the pre-image of every file written, so `patchgate log` can list decisions
//! and `patchgate undo` can restore a file byte for byte — when the file still holds what was
//! written; otherwise undo refuses and shows what changed since.

use std::collections::HashSet;
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::account::{self, LeftOut};
use super::all_or_none::{self, Plan};
use super::preimages::{DEFAULT_CAP, Preimages, Seen};
use super::proposal::{Proposal, Review, Written};
use super::revert;
use crate::diff::FileDiff;
use crate::error::{Error, ErrorCode, Result};
use crate::workspace::digest;
use crate::workspace::fs;
use crate::workspace::group_sync::{self, Flush, GroupSync};
use crate::workspace::paths::Root;
use crate::workspace::state;

/// The copies of one edit stored ahead of its journal line (`review::ahead`), each with
/// its hash: what the line's record names without hashing or checking them again.
#[derive(Debug, Default)]
pub(crate) struct Stored(Vec<(Arc<[u8]>, String, Seen)>);

impl Stored {
    /// The copies stored, with their hashes and the copies left on disk.
    pub(crate) fn new(copies: Vec<(Arc<[u8]>, String, Seen)>) -> Stored {
        Stored(copies)
    }

    /// The hash of `bytes` when they were stored ahead (a test's look).
    #[cfg(test)]
    pub(crate) fn hash_of(&self, bytes: &[u8]) -> Option<&str> {
        self.seen_of(bytes).map(|(h, _)| h)
    }

    /// The hash of `bytes` and the copy left on disk, when they were stored ahead.
    fn seen_of(&self, bytes: &[u8]) -> Option<(&str, &Seen)> {
        self.0
            .iter()
            .find(|(b, _, _)| b.len() == bytes.len() && b[..] == *bytes)
            .map(|(_, h, seen)| (h.as_str(), seen))
    }
}

/// The most [`Journal::undone_since`] reads at once.
pub const TAIL_READ: u64 = 1 << 20;

/// How often undo takes its files' locks again when the run to undo changed meanwhile (a
/// later run committed between its first read of the journal and the locks).
const UNDO_LOCK_TRIES: usize = 4;

/// One file in a journal entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileRecord {
    /// Root-relative path.
    pub path: String,
    /// The bytes before, base64, in journals written before the pre-image store (`None`:
    /// the file did not exist, or see `before_blob`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<String>,
    /// The hash of the bytes before in the pre-image store.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before_blob: Option<String>,
    /// The SHA-256 of the bytes written (`None`: the file was deleted).
    pub after_hash: Option<String>,
    /// The mode the file had before.
    #[serde(default)]
    pub mode: Option<u32>,
}

/// What a journal line records, on the wire as `applied` / `rejected` / `undone`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    /// A proposal was written.
    Applied,
    /// A person said no.
    Rejected,
    /// An applied proposal was reverted.
    Undone,
}

impl Action {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Applied => "applied",
            Action::Rejected => "rejected",
            Action::Undone => "undone",
        }
    }
}

/// An applied line the journal does not hold durably: why, whether it landed in the file
/// all the same, and its file records (with their pre-images, for the line that follows).
pub(crate) struct AppliedNotHeld {
    pub(crate) error: Error,
    pub(crate) landed: Landed,
    pub(crate) files: Vec<FileRecord>,
}

/// Whether the journal file `file`, `len` bytes long, ends inside a line (no newline last).
fn ends_cut_short(file: &std::fs::File, len: u64) -> bool {
    if len == 0 {
        return false;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileExt;
        let mut last = [0u8; 1];
        file.read_at(&mut last, len - 1).is_ok() && last[0] != b'\n'
    }
    #[cfg(not(unix))]
    {
        false
    }
}

/// Whether a failed append's lines are in the journal file all the same (written, only not
/// synced: readers see them until a crash takes them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Landed {
    No,
    Yes,
}

/// One journal line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// Seconds since the epoch.
    pub ts: u64,
    /// The proposal's run id (for an undo, the run undone).
    pub run_id: String,
    /// Applied, rejected or undone.
    pub action: Action,
    /// The tool that proposed it.
    pub tool: String,
    /// The client, if known.
    #[serde(default)]
    pub client: Option<String>,
    /// The reviewer's note, if any.
    #[serde(default)]
    pub note: String,
    /// Hunks accepted / proposed.
    #[serde(default)]
    pub hunks: Option<(usize, usize)>,
    /// The reviewer edited the content.
    #[serde(default)]
    pub edited: bool,
    /// The files (empty for a rejection).
    #[serde(default)]
    pub files: Vec<FileRecord>,
    /// Lines added and removed by what was written (an applied entry).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counts: Option<(usize, usize)>,
    /// The unified diff of what was written (cut at 64 KiB at a line; an applied entry).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub diff: String,
    /// What the reviewer left out of the proposal, hunks and lines with their text.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<LeftOut>,
}

/// The journal of one root.
#[derive(Debug, Clone)]
pub struct Journal {
    path: PathBuf,
    root: Root,
    preimages: Preimages,
    /// The appends' syncs, grouped across this journal's clones, through one descriptor
    /// of the journal file kept open (a new one when the file was replaced).
    syncs: Arc<Mutex<Option<Arc<GroupSync>>>>,
}

pub(super) fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

impl Journal {
    /// The journal of `root` in the state directory.
    pub fn for_root(root: &Root) -> Journal {
        Journal::at(
            state::state_dir()
                .join("journal")
                .join(format!("{}.jsonl", state::root_key(root.path()))),
            root,
        )
    }

    /// A journal at an explicit path.
    pub fn at(path: PathBuf, root: &Root) -> Journal {
        Journal {
            preimages: Preimages::beside(&path, DEFAULT_CAP),
            path,
            root: root.clone(),
            syncs: Arc::default(),
        }
    }

    /// The journal with its pre-images capped at `bytes` in all.
    pub(crate) fn with_cap(mut self, bytes: u64) -> Journal {
        self.preimages = Preimages::beside(&self.path, bytes);
        self
    }

    /// The record of one written file: its pre-image goes to the store (inline only if the
    /// store cannot take it, so the edit can still be undone). A copy `ahead` stored for
    /// this line is named by the hash it was stored under, not stored (and hashed) again.
    fn record(&self, w: &Written, ahead: &Stored) -> FileRecord {
        // A copy stored ahead is named as it was stored only while it is still there, this
        // process's own, touched now (a trim may have deleted it while the files were
        // written): else it is stored again, as one not stored ahead.
        let kept = |bytes: &[u8]| {
            let (hash, seen) = ahead.seen_of(bytes)?;
            self.preimages.keep_seen(hash, seen).then_some(hash)
        };
        // What the run wrote goes to the store too (first: the pre-image is kept before it),
        // so a refused undo can show the three states.
        let after_hash = w.after.as_deref().map(|after| match kept(after) {
            Some(hash) => hash.to_string(),
            None => self.preimages.put(after).unwrap_or_else(|e| {
                tracing::warn!("pre-image store: {e}; an undo refusal shows two states only");
                digest::hash(after)
            }),
        });
        let (before, before_blob) = match w.before.as_deref() {
            None => (None, None),
            Some(b) => match kept(b) {
                Some(hash) => (None, Some(hash.to_string())),
                None => match self.preimages.put(b) {
                    Ok(hash) => (None, Some(hash)),
                    Err(e) => {
                        tracing::warn!("pre-image store: {e}; kept in the journal line");
                        (Some(B64.encode(b)), None)
                    }
                },
            },
        };
        FileRecord {
            path: w.path.rel.clone(),
            before,
            before_blob,
            after_hash,
            mode: fs::mode(&w.path.abs),
        }
    }

    /// Store `copies` as pre-images ahead of the journal line that will name them (each
    /// file's result, then what it held: the order a line's record stores them in), so
    /// that their syncs need not wait for the files' writes; each one's hash (`None`: it
    /// failed, logged, and is left to that line's record, which stores it again).
    pub(crate) fn store_ahead(&self, copies: &[&[u8]]) -> Vec<Option<(String, Seen)>> {
        copies
            .iter()
            .map(|c| {
                self.preimages
                    .put_seen(c)
                    .inspect_err(|e| {
                        tracing::warn!("pre-image store ahead: {e}; left to the journal line");
                    })
                    .ok()
            })
            .collect()
    }

    /// The stored pre-image `hash` (a test's look).
    #[cfg(test)]
    pub(crate) fn preimage(&self, hash: &str) -> Option<Vec<u8>> {
        self.preimages.get(hash)
    }

    /// The copies put into the pre-image store so far, by this journal and its clones (a
    /// test's count).
    #[cfg(test)]
    pub(crate) fn preimage_puts(&self) -> usize {
        self.preimages
            .puts
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The bytes a file had before `rec`'s run (`None`: it did not exist).
    pub(super) fn before_of(&self, run_id: &str, rec: &FileRecord) -> Result<Option<Vec<u8>>> {
        if let Some(hash) = &rec.before_blob {
            return self.preimages.get(hash).map(Some).ok_or_else(|| {
                Error::new(
                    ErrorCode::FsError,
                    format!(
                        "cannot undo run {run_id}: the copy of `{}` from before it was dropped to \
                         keep the journal's pre-images under their size cap",
                        rec.path
                    ),
                )
            });
        }
        rec.before
            .as_deref()
            .map(|b| {
                B64.decode(b).map_err(|e| {
                    Error::new(
                        ErrorCode::FsError,
                        format!("the journal's copy of `{}` is damaged: {e}", rec.path),
                    )
                })
            })
            .transpose()
    }

    /// What `rec`'s run wrote, while the pre-image store keeps it (`None` too for a file the
    /// run deleted).
    pub(super) fn written_of(&self, rec: &FileRecord) -> Option<Vec<u8>> {
        rec.after_hash
            .as_deref()
            .and_then(|h| self.preimages.get(h))
    }

    /// The root whose journal this is.
    pub(super) fn root(&self) -> &Root {
        &self.root
    }

    /// Where the journal lives.
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// Remove the temp files stores of its pre-images left when a crash cut them short
    /// (stale ones only); how many were removed.
    pub fn sweep_temps(&self) -> usize {
        self.preimages.sweep_temps()
    }

    /// The journal's length in bytes now (0 when there is none yet).
    pub fn bytes(&self) -> u64 {
        std::fs::metadata(&self.path).map_or(0, |m| m.len())
    }

    /// The runs undone in the lines appended since byte `from` (any process may append:
    /// `patchgate undo` on the command line), reading at most [`TAIL_READ`] bytes, and where
    /// to read on from. A journal that got shorter is read again from its start; a line
    /// longer than [`TAIL_READ`] is passed over (an undo's line is short).
    pub fn undone_since(&self, from: u64) -> (Vec<String>, u64) {
        use std::io::{Read, Seek, SeekFrom};
        let Ok(mut file) = std::fs::File::open(&self.path) else {
            return (Vec::new(), from);
        };
        let len = file.metadata().map_or(0, |m| m.len());
        let from = if len < from { 0 } else { from };
        if len == from || file.seek(SeekFrom::Start(from)).is_err() {
            return (Vec::new(), from);
        }
        let mut buf = Vec::new();
        if file.take(TAIL_READ).read_to_end(&mut buf).is_err() {
            return (Vec::new(), from);
        }
        let end = match buf.iter().rposition(|&b| b == b'\n') {
            Some(i) => i + 1,
            // One line longer than a read: passed over.
            None if buf.len() as u64 == TAIL_READ => buf.len(),
            // A line still being written: read again next time.
            None => 0,
        };
        let undone = buf[..end]
            .split(|&b| b == b'\n')
            .filter_map(|line| serde_json::from_slice::<Entry>(line).ok())
            .filter(|e| e.action == Action::Undone)
            .map(|e| e.run_id)
            .collect();
        (undone, from + end as u64)
    }

    pub(super) fn append(&self, entry: &Entry) -> Result<()> {
        self.append_all(std::slice::from_ref(entry))
    }

    /// Append `entries` as one write of their lines (one writer at a time), synced: appends
    /// that land at once share one sync (`group_sync`).
    pub(super) fn append_all(&self, entries: &[Entry]) -> Result<()> {
        self.append_lines(entries).map_err(|(e, _)| e)
    }

    /// [`Journal::append_all`], saying on failure whether the lines were written (only their
    /// sync failed: they stay in the file, and readers see them).
    fn append_lines(&self, entries: &[Entry]) -> std::result::Result<(), (Error, Landed)> {
        let error = |e: std::io::Error| {
            Error::new(
                ErrorCode::FsError,
                format!("cannot write the journal {}: {e}", self.path.display()),
            )
        };
        let fail = |e: std::io::Error| (error(e), Landed::No);
        let mut line = String::new();
        for entry in entries {
            let json = serde_json::to_string(entry)
                .map_err(|e| (Error::invalid_input(e.to_string()), Landed::No))?;
            line.push_str(&json);
            line.push('\n');
        }
        // A journal made now is named in its directory only once that directory is synced:
        // until then a crash could lose the file, every line in it with it.
        let (mut file, created) = self.open_for_append().map_err(fail)?;
        // One writer at a time across processes: lines can be longer than an atomic append.
        file.lock().map_err(fail)?;
        let meta = file.metadata().map_err(fail)?;
        // A journal an older version left readable is made private.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            if meta.permissions().mode() & 0o077 != 0 {
                let private = std::fs::Permissions::from_mode(0o600);
                file.set_permissions(private).map_err(fail)?;
            }
        }
        // A line a failed write left cut short (a full disk) ends where this one starts:
        // it is closed first, so that this one is read whole.
        let start = meta.len();
        if ends_cut_short(&file, start) {
            line.insert(0, '\n');
        }
        let syncs = self
            .syncs_of(&file, group_sync::key_in(&meta))
            .map_err(fail)?;
        let mut landed = Landed::No;
        syncs
            .write(|| {
                let written = file.write_all(line.as_bytes());
                if written.is_ok() {
                    landed = Landed::Yes;
                } else {
                    // Nothing of a failed write stays: a line the reader could take whole
                    // (all but its newline written) would say what was not done.
                    let _ = file.set_len(start);
                }
                // The lock goes before the sync, so that other appends write meanwhile and
                // share the next one.
                written.and(file.unlock())
            })
            .map_err(|e| (error(e), landed))?;
        // The journal file's own entry: synced when this append made it, and once per
        // process for one made before (whose making may have failed to sync).
        fs::entry_durable(&self.path, created).map_err(|e| (error(e), Landed::Yes))
    }

    /// The journal file opened for an append, and whether this made it: an existing one as
    /// it is (no other look at the disk first), a missing one made with its directory,
    /// private (0600) from its creation (it holds the pre-images of what edits replaced, old
    /// `.env` contents too). One another writer makes meanwhile is opened as theirs.
    fn open_for_append(&self) -> std::io::Result<(std::fs::File, bool)> {
        let open = |create: bool| {
            let mut opts = std::fs::OpenOptions::new();
            opts.append(true).read(true).create_new(create);
            #[cfg(unix)]
            {
                use std::os::unix::fs::OpenOptionsExt;
                opts.mode(0o600);
            }
            opts.open(&self.path)
        };
        match open(false) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            other => return other.map(|f| (f, false)),
        }
        // The journal's directory made now is synced in its parent (`state/journal/` in
        // `state/`): else a crash could lose it, and the journal file with it.
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            crate::workspace::dirs::make_durable(dir, 0o777)?;
        }
        match open(true) {
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                open(false).map(|f| (f, false))
            }
            other => other.map(|f| (f, true)),
        }
    }

    /// The group syncing the journal file open as `file` (whose identity is `key`): the one
    /// kept, else (the first append, or the file was replaced since) a new one keeping a copy
    /// of `file`'s descriptor for every sync (`group_sync`: a writeback error is told to the
    /// descriptors open when it happened).
    fn syncs_of(
        &self,
        file: &std::fs::File,
        key: group_sync::Key,
    ) -> std::io::Result<Arc<GroupSync>> {
        let mut kept = self.syncs.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(g) = kept.as_ref().filter(|g| g.key() == key) {
            return Ok(g.clone());
        }
        let g = Arc::new(GroupSync::new(file.try_clone()?, Flush::Data)?);
        *kept = Some(g.clone());
        Ok(g)
    }

    /// Record an applied proposal with the pre-images of what it wrote: `proposal` as it was
    /// written (its diff, and what the reviewer left out of it).
    pub fn record_applied(
        &self,
        proposal: &Proposal,
        review: Option<&Review>,
        written: &[Written],
    ) -> Result<()> {
        self.record_applied_landed(proposal, review, written, &Stored::default())
            .map_err(|f| f.error)
    }

    /// [`Journal::record_applied`], saying on failure whether its line landed in the file
    /// (written, only its sync failed); `ahead`: the copies already stored for it.
    pub(crate) fn record_applied_landed(
        &self,
        proposal: &Proposal,
        review: Option<&Review>,
        written: &[Written],
        ahead: &Stored,
    ) -> std::result::Result<(), AppliedNotHeld> {
        let entry = Entry {
            ts: now_secs(),
            run_id: proposal.run_id.clone(),
            action: Action::Applied,
            tool: proposal.tool.clone(),
            client: proposal.client.clone(),
            note: review.map(|r| r.note.clone()).unwrap_or_default(),
            hunks: review.map(|r| (r.hunks_accepted, r.hunks_total)),
            edited: review.is_some_and(|r| r.edited_by_reviewer),
            files: written.iter().map(|w| self.record(w, ahead)).collect(),
            counts: Some(proposal.counts()),
            diff: account::cut_diff(proposal.unified()),
            left_out: proposal.left_out.clone(),
        };
        self.append_lines(std::slice::from_ref(&entry))
            .map_err(|(error, landed)| AppliedNotHeld {
                error,
                landed,
                files: entry.files,
            })
    }

    /// After an applied line whose append failed though it landed (its sync failed), and
    /// every file the proposal wrote was put back: the run recorded undone, so that the
    /// journal (`log`, `undo`, `rewind`, a batch's recovery) says what the files hold. A line
    /// that lands is recorded even when its own sync fails (it is in the file, as the
    /// applied one is); only one that does not land is an error.
    pub(crate) fn record_put_back(
        &self,
        proposal: &Proposal,
        files: Vec<FileRecord>,
    ) -> Result<()> {
        let entry = Entry {
            ts: now_secs(),
            run_id: proposal.run_id.clone(),
            action: Action::Undone,
            tool: proposal.tool.clone(),
            client: proposal.client.clone(),
            note: "put back: its journal line could not be made durable".to_string(),
            hunks: None,
            edited: false,
            files,
            counts: None,
            diff: String::new(),
            left_out: Vec::new(),
        };
        match self.append_lines(std::slice::from_ref(&entry)) {
            Err((e, Landed::No)) => Err(e),
            _ => Ok(()),
        }
    }

    /// Record a rejection.
    pub fn record_rejected(&self, proposal: &Proposal, review: &Review) -> Result<()> {
        self.append(&Entry {
            ts: now_secs(),
            run_id: proposal.run_id.clone(),
            action: Action::Rejected,
            tool: proposal.tool.clone(),
            client: proposal.client.clone(),
            note: review.note.clone(),
            hunks: Some((0, review.hunks_total)),
            edited: false,
            files: proposal
                .files
                .iter()
                .map(|f| FileRecord {
                    path: f.path.rel.clone(),
                    before: None,
                    before_blob: None,
                    after_hash: None,
                    mode: None,
                })
                .collect(),
            counts: None,
            diff: String::new(),
            left_out: Vec::new(),
        })
    }

    /// Every entry, oldest first (a missing journal is empty).
    pub fn entries(&self) -> Result<Vec<Entry>> {
        let mut out = Vec::new();
        self.each(|e| {
            out.push(e);
            Ok(())
        })?;
        Ok(out)
    }

    /// Call `f` on each entry, oldest first, reading one line at a time (a journal may be
    /// large; unreadable lines are skipped).
    pub fn each(&self, f: impl FnMut(Entry) -> Result<()>) -> Result<()> {
        self.each_line(f)
    }

    /// The runs the journal shows decided (applied or rejected), reading only each line's run
    /// id and action (not its files nor its diff). An error reading the journal at all is
    /// an error: an empty set would let decided reviews come back.
    pub fn decided_runs(&self) -> Result<HashSet<String>> {
        /// The part of a journal line read here (serde passes over the rest).
        #[derive(Deserialize)]
        struct Decision {
            run_id: String,
            action: Action,
        }
        let mut decided = HashSet::new();
        self.each_line(|d: Decision| {
            if matches!(d.action, Action::Applied | Action::Rejected) {
                decided.insert(d.run_id);
            }
            Ok(())
        })?;
        Ok(decided)
    }

    /// Call `f` on each line read as a `T`, oldest first, one line at a time; a line that is
    /// not one (torn by a crash, not UTF-8, not JSON) is skipped, not the rest of the journal.
    fn each_line<T: DeserializeOwned>(&self, mut f: impl FnMut(T) -> Result<()>) -> Result<()> {
        use std::io::BufRead;
        let fail = |e: std::io::Error| {
            Error::new(
                ErrorCode::FsError,
                format!("cannot read the journal {}: {e}", self.path.display()),
            )
        };
        let file = match std::fs::File::open(&self.path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(fail(e)),
        };
        let mut reader = std::io::BufReader::new(file);
        let mut line = Vec::new();
        loop {
            line.clear();
            if reader.read_until(b'\n', &mut line).map_err(fail)? == 0 {
                return Ok(());
            }
            if let Ok(item) = serde_json::from_slice(&line) {
                f(item)?;
            }
        }
    }

    /// The refusal to undo `rec`'s run because the file moved on since: the three states
    /// (before the run, what it wrote, now) as the run's change and the change since.
    fn moved_on(
        &self,
        run_id: &str,
        rec: &FileRecord,
        before: Option<Vec<u8>>,
        now: Option<Vec<u8>>,
    ) -> Error {
        let text = |b: &Option<Vec<u8>>| {
            String::from_utf8_lossy(b.as_deref().unwrap_or_default()).into_owned()
        };
        let diff = |a: &Option<Vec<u8>>, b: &Option<Vec<u8>>, from: &str, to: &str| {
            let d = FileDiff::compute(&text(a), &text(b), 3).unified(
                &format!("{from}/{}", rec.path),
                &format!("{to}/{}", rec.path),
            );
            if d.is_empty() {
                "(no difference)\n".to_string()
            } else {
                d
            }
        };
        let after = rec
            .after_hash
            .as_deref()
            .and_then(|h| self.preimages.get(h));
        let since = match (&after, &now) {
            (_, None) => "the file is gone now\n".to_string(),
            (Some(a), _) => diff(&Some(a.clone()), &now, "run", "now"),
            (None, _) => format!(
                "(what the run wrote is no longer stored) before the run versus now:\n{}",
                diff(&before, &now, "before", "now")
            ),
        };
        let run_change = match &after {
            Some(a) => diff(&before, &Some(a.clone()), "before", "run"),
            None => "(no longer stored)\n".to_string(),
        };
        Error::new(
            ErrorCode::FileChanged,
            format!(
                "cannot undo run {run_id}: `{}` changed after the run wrote it, and undoing would \
                 lose those changes.\nWhat the run changed:\n{run_change}What changed since:\n{since}",
                rec.path
            ),
        )
    }

    /// The bytes of `rec`'s file `now` (it changed after the run wrote it) with the run's own
    /// change taken back ([`revert::revert_onto`]); refused, showing the lines, where a later
    /// change touched the lines the run changed, and as before (the run's change and the
    /// change since) when the file is gone, was created or deleted by the run, or what the
    /// run wrote is no longer stored.
    pub(super) fn revert_later(
        &self,
        run_id: &str,
        rec: &FileRecord,
        before: Option<Vec<u8>>,
        now: Option<Vec<u8>>,
    ) -> Result<Vec<u8>> {
        let written = rec
            .after_hash
            .as_deref()
            .and_then(|h| self.preimages.get(h));
        let (Some(found), Some(written), Some(current)) = (&before, &written, &now) else {
            return Err(self.moved_on(run_id, rec, before, now));
        };
        match revert::revert_onto(found, written, current) {
            Ok(bytes) => Ok(bytes),
            Err(revert::Refusal::Conflict(c)) => Err(Error::new(
                ErrorCode::FileChanged,
                format!(
                    "cannot undo run {run_id}: `{}` was changed later where the run changed it, \
                     so taking the run's change back would undo that later change too; nothing \
                     was written.\n{c}",
                    rec.path
                ),
            )),
            Err(revert::Refusal::NotText) => Err(self.moved_on(run_id, rec, before, now)),
        }
    }

    /// The applied run `undo` takes back (the latest one not undone yet, or `run_id`).
    fn undo_target(&self, run_id: Option<&str>) -> Result<Entry> {
        let entries = self.entries()?;
        let undone: Vec<&str> = entries
            .iter()
            .filter(|e| e.action == Action::Undone)
            .map(|e| e.run_id.as_str())
            .collect();
        let target = entries
            .iter()
            .rev()
            .filter(|e| e.action == Action::Applied)
            .find(|e| run_id.is_none_or(|r| e.run_id == r) && !undone.contains(&e.run_id.as_str()));
        target.cloned().ok_or_else(|| {
            Error::new(
                ErrorCode::RunNotFound,
                match run_id {
                    Some(r) if undone.contains(&r) => format!("run {r} was already undone"),
                    Some(r) => format!("no applied edit with run id {r} in the journal"),
                    None => "no applied edit left to undo in the journal".to_string(),
                },
            )
        })
    }

    /// Undo an applied edit (the latest one not undone yet, or `run_id`): restore every file
    /// byte for byte when it still holds what was written; when a file changed since, take back
    /// only the run's own change (as `git revert`), refusing where a later change touched the
    /// same lines. Every file's lock is held from the check to the write (in this process and
    /// across processes), and the journal is read again under them, so no commit lands
    /// between; the files are written all or none.
    pub fn undo(&self, run_id: Option<&str>, max_bytes: u64) -> Result<Entry> {
        let mut target = self.undo_target(run_id)?;
        for _ in 0..UNDO_LOCK_TRIES {
            let paths = target
                .files
                .iter()
                .map(|rec| self.root.resolve(&rec.path))
                .collect::<Result<Vec<_>>>()?;
            let outcome = fs::with_locks(&paths, || -> Result<_> {
                let now = self.undo_target(run_id)?;
                if now.run_id != target.run_id || now.files != target.files {
                    return Ok(Err(now));
                }
                self.undo_locked(&target, max_bytes).map(Ok)
            })?;
            match outcome {
                Ok(entry) => return Ok(entry),
                Err(now) => target = now,
            }
        }
        Err(Error::new(
            ErrorCode::FileChanged,
            "cannot undo: runs kept landing while it waited for their files' locks; nothing \
             was written, try again",
        ))
    }

    /// [`Journal::undo`] of `target` with its files locked.
    fn undo_locked(&self, target: &Entry, max_bytes: u64) -> Result<Entry> {
        // Check every file first: undo is all or nothing.
        let paths = target
            .files
            .iter()
            .map(|rec| self.root.resolve(&rec.path))
            .collect::<Result<Vec<_>>>()?;
        let mut plans = Vec::with_capacity(target.files.len());
        let mut merged = Vec::new();
        for (rec, path) in target.files.iter().zip(&paths) {
            let now = fs::read(path, max_bytes)?;
            let now_hash = now.as_deref().map(digest::hash);
            let before = self.before_of(&target.run_id, rec)?;
            let to = if now_hash == rec.after_hash {
                before
            } else {
                // The file moved on: take back only the run's own change, as `git revert`.
                merged.push(rec.path.clone());
                Some(self.revert_later(&target.run_id, rec, before, now.clone())?)
            };
            plans.push(Plan {
                path,
                now,
                to,
                mode: rec.mode,
            });
        }
        let written = all_or_none::write_all(&plans).map_err(|e| {
            Error::new(
                e.code,
                format!("cannot undo run {}: {}", target.run_id, e.message),
            )
        })?;
        let note = if merged.is_empty() {
            String::new()
        } else {
            format!(
                "the run's change was taken back from later content of {}; the later changes \
                 stay",
                merged
                    .iter()
                    .map(|p| format!("`{p}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        let entry = Entry {
            ts: now_secs(),
            run_id: target.run_id.clone(),
            action: Action::Undone,
            tool: target.tool.clone(),
            client: target.client.clone(),
            note,
            hunks: None,
            edited: false,
            files: target.files.clone(),
            counts: None,
            diff: String::new(),
            left_out: Vec::new(),
        };
        if let Err(e) = self.append(&entry) {
            return Err(written.put_back(&Error::new(
                e.code,
                format!(
                    "cannot undo run {}: the journal could not record it ({})",
                    target.run_id, e.message
                ),
            )));
        }
        Ok(entry)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edit::text::Text;
    use crate::review::proposal::{Decision, FileChange};

    fn setup() -> (tempfile::TempDir, Root, Journal) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("work")).unwrap();
        let root = Root::new(&dir.path().join("work")).unwrap();
        let journal = Journal::at(dir.path().join("state/journal.jsonl"), &root);
        (dir, root, journal)
    }

    fn apply(root: &Root, journal: &Journal, rel: &str, before: &[u8], after: &str) -> Proposal {
        let p = root.resolve(rel).unwrap();
        std::fs::write(&p.abs, before).unwrap();
        let change = FileChange::new(
            p,
            Some(before.to_vec()),
            Text::decode(before).unwrap(),
            after.into(),
            vec![],
        );
        let proposal = Proposal::new("test", None, vec![change]).unwrap();
        let (contents, review) = proposal.decided_contents(&Decision::Accept).unwrap();
        let written = proposal.write(&contents, 1 << 20).unwrap();
        journal
            .record_applied(&proposal, Some(&review), &written)
            .unwrap();
        proposal
    }

    /// The appends sync through one descriptor kept open (a writeback error is told to the
    /// descriptors open when it happened, not to one opened after), and through one of the
    /// new file when the journal file was replaced.
    #[test]
    #[cfg(unix)]
    fn appends_sync_through_one_kept_descriptor_of_the_journal_file() {
        use std::os::unix::fs::MetadataExt;
        let (_d, root, journal) = setup();
        let kept = |j: &Journal| j.syncs.lock().unwrap().clone().expect("a group");
        let file_key = |j: &Journal| {
            let m = std::fs::metadata(j.path()).unwrap();
            (m.dev(), m.ino())
        };
        apply(&root, &journal, "a.txt", b"1\n", "2\n");
        let first = kept(&journal);
        assert_eq!(first.key(), file_key(&journal));
        apply(&root, &journal, "a.txt", b"2\n", "3\n");
        assert!(
            Arc::ptr_eq(&first, &kept(&journal.clone())),
            "a new descriptor"
        );
        // Replaced (moved away, a new one made): its appends sync the new file.
        std::fs::rename(journal.path(), journal.path().with_extension("old")).unwrap();
        apply(&root, &journal, "a.txt", b"3\n", "4\n");
        assert_eq!(kept(&journal).key(), file_key(&journal));
        assert_ne!(kept(&journal).key(), first.key());
        assert_eq!(journal.entries().unwrap().len(), 1);
    }

    /// The journal's directory an append makes (`state/journal/`), and the pre-image store's
    /// parent a record makes before it, are synced in the directory holding them before the
    /// append returns. Regression: they were made with `create_dir_all` and only the
    /// journal file's entry was synced, in a directory whose own entry a crash could lose.
    #[test]
    #[cfg(unix)]
    fn the_directory_an_append_makes_is_synced_in_its_parent() {
        use crate::workspace::group_sync::syncs_of;
        let (d, root, _) = setup();
        let state = d.path().join("state");
        std::fs::create_dir_all(&state).unwrap();
        let before = syncs_of(&state);
        let journal = Journal::at(state.join("journal/r.jsonl"), &root);
        apply(&root, &journal, "a.txt", b"1\n", "2\n");
        assert!(
            syncs_of(&state) > before,
            "`journal/` was not synced in `state/`"
        );
    }

    /// A journal file whose making could not be synced in its directory fails the appends
    /// after it too (its entry may be lost on disk, whatever a later sync says), until that
    /// is over. Regression: the next append found the file there and took it for durable.
    #[test]
    #[cfg(unix)]
    fn a_journal_file_whose_making_was_not_synced_is_not_trusted_later() {
        let (d, _root, journal) = setup();
        let state = d.path().join("state");
        std::fs::create_dir_all(&state).unwrap();
        let failed = group_sync::fail_a_sync_of(&state);
        let line = Entry {
            ts: 1,
            run_id: "r1".into(),
            action: Action::Rejected,
            tool: "test".into(),
            client: None,
            note: String::new(),
            hunks: None,
            edited: false,
            files: Vec::new(),
            counts: None,
            diff: String::new(),
            left_out: Vec::new(),
        };
        assert!(
            journal.append(&line).is_err(),
            "its making was called durable"
        );
        assert!(journal.append(&line).is_err(), "the next append trusted it");
        drop(failed);
        journal.append(&line).unwrap();
    }

    /// An applied line written but not made durable stays in the file, and says so; once the
    /// caller put the files back, the run is recorded undone after it (a line that lands
    /// counts, though its own sync fails too), so the journal does not say applied for files
    /// that hold their old content.
    #[test]
    #[cfg(unix)]
    fn an_applied_line_that_could_not_be_made_durable_is_followed_by_its_undoing() {
        let (d, root, journal) = setup();
        let state = d.path().join("state");
        std::fs::create_dir_all(&state).unwrap();
        let p = root.resolve("a.txt").unwrap();
        std::fs::write(&p.abs, b"old\n").unwrap();
        let change = FileChange::new(
            p,
            Some(b"old\n".to_vec()),
            Text::decode(b"old\n").unwrap(),
            "new\n".into(),
            vec![],
        );
        let proposal = Proposal::new("test", None, vec![change]).unwrap();
        let (contents, review) = proposal.decided_contents(&Decision::Accept).unwrap();
        let written = proposal.write(&contents, 1 << 20).unwrap();
        let failed = group_sync::fail_a_sync_of(&state);
        let Err(failed_append) =
            journal.record_applied_landed(&proposal, Some(&review), &written, &Stored::default())
        else {
            panic!("an append whose sync failed was called durable");
        };
        assert_eq!(failed_append.landed, Landed::Yes);
        // (The caller puts the files back, then records it.)
        journal
            .record_put_back(&proposal, failed_append.files)
            .unwrap();
        drop(failed);
        let actions: Vec<Action> = journal
            .entries()
            .unwrap()
            .into_iter()
            .filter(|e| e.run_id == proposal.run_id)
            .map(|e| e.action)
            .collect();
        assert_eq!(actions, vec![Action::Applied, Action::Undone]);
    }

    /// A copy stored ahead of its journal line that a trim deleted before the line was
    /// appended (another process storing into the same capped store while this one wrote
    /// its files) is stored again by the line's record: no line names a pre-image that is
    /// not stored, and the edit is undone. Regression: the line named the hash stored ahead
    /// as it was, and undo said its pre-image was dropped past the size cap.
    #[test]
    fn a_copy_stored_ahead_then_trimmed_before_its_line_is_stored_again() {
        use super::super::ahead::{Ahead, Store};
        let (d, root, _) = setup();
        let path = d.path().join("state/small.jsonl");
        let journal = Journal::at(path.clone(), &root).with_cap(1);
        let other = Journal::at(path, &root).with_cap(1);
        let p = root.resolve("a.txt").unwrap();
        std::fs::write(&p.abs, b"old\n").unwrap();
        let change = FileChange::new(
            p,
            Some(b"old\n".to_vec()),
            Text::decode(b"old\n").unwrap(),
            "new\n".into(),
            vec![],
        );
        let proposal = Proposal::new("test", None, vec![change]).unwrap();
        let (contents, review) = proposal.decided_contents(&Decision::Accept).unwrap();
        let copies: Vec<Arc<[u8]>> = vec![Arc::from(&b"new\n"[..]), Arc::from(&b"old\n"[..])];
        let ahead = Ahead::start(&journal, copies).finish(Store::Yes);
        assert!(ahead.hash_of(b"old\n").is_some(), "stored ahead");
        // Another writer's copy, past the cap: its trim deletes the copies stored ahead.
        other.store_ahead(&[b"another edit's copy\n"]);
        assert_eq!(journal.preimage(&digest::hash(b"old\n")), None);
        let written = proposal.write(&contents, 1 << 20).unwrap();
        journal
            .record_applied_landed(&proposal, Some(&review), &written, &ahead)
            .map_err(|f| f.error)
            .unwrap();
        journal.undo(None, 1 << 20).unwrap();
        assert_eq!(
            std::fs::read(root.resolve("a.txt").unwrap().abs).unwrap(),
            b"old\n"
        );
    }

    /// A line a failed write left cut short (a process killed mid-write) does not swallow the
    /// next one.
    #[test]
    #[cfg(unix)]
    fn a_line_cut_short_by_a_failed_write_does_not_take_the_next_with_it() {
        let (_d, root, journal) = setup();
        apply(&root, &journal, "a.txt", b"1\n", "2\n");
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(journal.path())
            .unwrap();
        f.write_all(br#"{"ts":1,"run_id":"cut"#).unwrap();
        drop(f);
        let next = apply(&root, &journal, "b.txt", b"1\n", "2\n");
        let runs: Vec<String> = journal
            .entries()
            .unwrap()
            .into_iter()
            .map(|e| e.run_id)
            .collect();
        assert_eq!(runs.len(), 2, "{runs:?}");
        assert_eq!(runs[1], next.run_id);
    }

    #[test]
    #[cfg(unix)]
    fn the_journal_is_private_and_an_old_readable_one_is_made_private() {
        use std::os::unix::fs::PermissionsExt;
        let (_d, root, journal) = setup();
        let mode = |j: &Journal| std::fs::metadata(j.path()).unwrap().permissions().mode() & 0o777;
        apply(&root, &journal, ".env", b"KEY=secret\n", "KEY=other\n");
        assert_eq!(mode(&journal), 0o600);
        std::fs::set_permissions(journal.path(), std::fs::Permissions::from_mode(0o644)).unwrap();
        apply(&root, &journal, "b.txt", b"x\n", "y\n");
        assert_eq!(mode(&journal), 0o600);
    }

    #[test]
    fn pre_images_are_stored_once_per_content_and_capped() {
        let (d, root, journal) = setup();
        let a = "a line of a big generated file\n".repeat(10_000);
        let b = format!("{a}and one line more\n");
        // Thirty edits that flip a 300 KB file between two versions.
        for k in 0..30 {
            let (from, to) = if k % 2 == 0 { (&a, &b) } else { (&b, &a) };
            apply(&root, &journal, "big.txt", from.as_bytes(), to);
        }
        let journal_len = std::fs::metadata(journal.path()).unwrap().len();
        assert!(journal_len < 30 * 1024, "journal {journal_len} bytes");
        let store = d.path().join("state/journal.preimages");
        assert_eq!(std::fs::read_dir(&store).unwrap().count(), 2);
        // Undo still restores byte for byte.
        journal.undo(None, 1 << 30).unwrap();
        assert_eq!(
            std::fs::read_to_string(root.path().join("big.txt")).unwrap(),
            b
        );
        // Past a tiny cap, an edit whose pre-image was dropped says it cannot be undone.
        let small = Journal::at(d.path().join("state/small.jsonl"), &root).with_cap(1);
        let x = apply(&root, &small, "x.txt", b"first\n", "second\n");
        apply(&root, &small, "y.txt", b"other\n", "else\n");
        let e = small.undo(Some(&x.run_id), 1 << 20).unwrap_err();
        assert!(e.message.contains("size cap"), "{}", e.message);
    }

    #[test]
    fn undo_restores_byte_for_byte() {
        let (_d, root, journal) = setup();
        let before = b"one\r\ntwo\r\n\xEF\xBB\xBF";
        let p = apply(&root, &journal, "f.txt", before, "one\nTWO\n");
        assert_ne!(
            std::fs::read(root.path().join("f.txt")).unwrap(),
            before.to_vec()
        );
        let undone = journal.undo(None, 1 << 20).unwrap();
        assert_eq!(undone.run_id, p.run_id);
        assert_eq!(
            std::fs::read(root.path().join("f.txt")).unwrap(),
            before.to_vec()
        );
        assert_eq!(
            journal.undo(Some(&p.run_id), 1 << 20).unwrap_err().code,
            ErrorCode::RunNotFound
        );
    }

    #[test]
    fn undo_refuses_where_a_later_change_touched_the_runs_lines() {
        let (_d, root, journal) = setup();
        apply(&root, &journal, "f.txt", b"a\nb\n", "a\nB\n");
        std::fs::write(root.path().join("f.txt"), "a\nBee\nc\n").unwrap();
        let e = journal.undo(None, 1 << 20).unwrap_err();
        assert_eq!(e.code, ErrorCode::FileChanged);
        // The lines both changed: what the run found and wrote, and what is there now.
        assert!(
            e.message.contains("changed later where the run changed it"),
            "{}",
            e.message
        );
        assert!(e.message.contains("- b\n"), "{}", e.message);
        assert!(e.message.contains("+ B\n"), "{}", e.message);
        assert!(e.message.contains("  Bee\n"), "{}", e.message);
        assert_eq!(
            std::fs::read_to_string(root.path().join("f.txt")).unwrap(),
            "a\nBee\nc\n"
        );
    }

    #[test]
    fn undo_takes_back_an_earlier_run_under_a_later_one_elsewhere() {
        let (_d, root, journal) = setup();
        let lines: String = (1..=40).map(|i| format!("line {i}\n")).collect();
        let first = lines.replace("line 5\n", "line five\n");
        let p1 = apply(&root, &journal, "u.py", lines.as_bytes(), &first);
        let second = first.replace("line 25\n", "line twenty-five\n");
        apply(&root, &journal, "u.py", first.as_bytes(), &second);
        let entry = journal.undo(Some(&p1.run_id), 1 << 20).unwrap();
        assert_eq!(
            std::fs::read_to_string(root.path().join("u.py")).unwrap(),
            lines.replace("line 25\n", "line twenty-five\n")
        );
        assert_eq!(entry.action, Action::Undone);
        assert!(entry.note.contains("later changes"), "{}", entry.note);
        // The later run can still be undone on its own.
        journal.undo(None, 1 << 20).unwrap();
        assert_eq!(
            std::fs::read_to_string(root.path().join("u.py")).unwrap(),
            lines
        );
    }

    #[test]
    fn undos_are_read_from_where_the_last_look_ended() {
        let (_d, root, journal) = setup();
        assert_eq!(journal.undone_since(0), (Vec::new(), 0));
        let p = apply(&root, &journal, "a.txt", b"1\n", "2\n");
        let start = journal.bytes();
        assert_eq!(journal.undone_since(0), (Vec::new(), start));
        journal.undo(None, 1 << 20).unwrap();
        let end = journal.bytes();
        assert_eq!(journal.undone_since(start), (vec![p.run_id.clone()], end));
        assert_eq!(journal.undone_since(end), (Vec::new(), end));
        // A line still being written is read once it ends.
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(journal.path())
            .unwrap();
        std::io::Write::write_all(&mut f, b"{\"ts\":1,").unwrap();
        assert_eq!(journal.undone_since(end), (Vec::new(), end));
        // A journal that got shorter is read from its start again.
        std::fs::write(journal.path(), "").unwrap();
        assert_eq!(journal.undone_since(end), (Vec::new(), 0));
    }

    #[test]
    fn log_lists_decisions_in_order() {
        let (_d, root, journal) = setup();
        let a = apply(&root, &journal, "a.txt", b"1\n", "2\n");
        let b = apply(&root, &journal, "b.txt", b"1\n", "3\n");
        let entries = journal.entries().unwrap();
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0].run_id, a.run_id);
        assert_eq!(entries[1].run_id, b.run_id);
        assert_eq!(entries[1].files[0].path, "b.txt");
    }
}
