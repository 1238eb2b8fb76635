//! The pending store (docs/DESIGN.md §4, §7): every open review of a listening gate (pending,
//! and dry-runs within their TTL) kept as one file in the state directory beside the journal
//! (`journal/NAME.pending/RUN_ID.json`), written crash-safe (a private temp file, fsynced,
//! renamed, the directory fsynced: `workspace::fs::write_private`), removed once it is
//! decided, expired or withdrawn, and bounded in count and bytes. A gate starting on the root
//! loads them back as they were, believing only what the journal's own checks let through
//! (private directories, regular files of this user's that nobody else can write) and
//! validating every field as hostile input: sizes, paths that must resolve under the root as
//! written, the policy's deny rules, a run the journal shows decided.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use serde::{Deserialize, Serialize};

use super::journal::Journal;
use super::policy::Policy;
use super::proposal::{self, FileChange, HookSaid, Proposal, Revision, RunId, State};
use crate::edit::text::{Text, normalize_newlines};
use crate::workspace::Workspace;
use crate::workspace::{fs, private};

/// The version of the stored form; another is not read.
const FORMAT: u32 = 1;

/// Reviews kept at most (pending ones; dry-runs only within half of it, so exploring agents
/// cannot crowd out the reviews a person has to decide).
const MAX_STORED: usize = 1024;

/// Bytes the stored reviews take together at most, as the journal's pre-images by default
/// (dry-runs only within half of it); one file larger than this is never read.
const MAX_STORED_BYTES: u64 = 256 << 20;

/// Files in one stored review at most.
const MAX_FILES: usize = 4096;

/// Warnings kept per file, and the bytes of each.
const MAX_WARNINGS: usize = 64;
const MAX_WARNING_BYTES: usize = 4 << 10;

/// A tool's name at most (`batch_patch_files` is 17).
const MAX_TOOL_BYTES: usize = 64;

/// A revision's note and interdiff at most (the interdiff is cut at 64 KiB when made).
const MAX_REVISION_TEXT: usize = 80 << 10;

/// The warning a restored review carries when its file changed while no gate ran.
pub(crate) const CHANGED_WHILE_DOWN: &str = "changed on disk while the gate was down: a decision \
     rebases the proposal on the current content (and asks again) or fails, never writes it \
     blindly";

/// One file of a stored review.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct StoredFile {
    /// Root-relative, as the gate writes paths.
    path: String,
    /// The bytes when proposed, base64 (`None`: the file did not exist).
    before: Option<String>,
    /// The LF-normalised proposed content.
    new: String,
    delete: bool,
    mode: Option<u32>,
    warnings: Vec<String>,
    /// Lines of the original deleted unseen (0-based, ascending).
    unseen_lines: Vec<usize>,
}

/// What a revision keeps of the review it answers.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct StoredRevision {
    of: String,
    number: u32,
    note: String,
    interdiff: String,
}

/// A stored review.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Stored {
    format: u32,
    run_id: String,
    tool: String,
    client: Option<String>,
    /// Seconds since the epoch.
    created: u64,
    state: State,
    /// A dry-run's end, seconds since the epoch.
    expires_at: Option<u64>,
    /// `auto` / `gate`: what the policy hook said (for a dry-run's commit).
    hook: Option<String>,
    files: Vec<StoredFile>,
    revision: Option<StoredRevision>,
}

/// What is stored now: each review's bytes, and their total.
#[derive(Debug, Default)]
struct Index {
    sizes: HashMap<RunId, u64>,
    total: u64,
}

/// A review to store, and who waits for it to be stored.
type Write = (RunId, Option<tokio::sync::oneshot::Sender<()>>);

/// What the queue holds of a review now: `None` when the gate is gone (nothing is changed),
/// `Some(None)` when the review is closed or forgotten, `Some(Some(p))` while it is open.
pub(crate) type Look = Option<Option<Proposal>>;

/// The store with the one thread that writes it: writes wait in line there, never on the
/// runtime's blocking threads (a burst of dry-runs would otherwise hold them all, waiting
/// for the disk, while edits wait for their syntax checks).
pub(crate) struct Keeper {
    store: Arc<PendingStore>,
    line: std::sync::mpsc::Sender<Write>,
}

impl Keeper {
    /// Start the writer of `store`; `look` tells it what the queue holds of a review when its
    /// turn comes (so the last write of a review is of its last state).
    pub(crate) fn start(
        store: PendingStore,
        look: impl Fn(&str) -> Look + Send + 'static,
    ) -> std::io::Result<Keeper> {
        let store = Arc::new(store);
        let (line, writes) = std::sync::mpsc::channel::<Write>();
        let writer = Arc::clone(&store);
        std::thread::Builder::new()
            .name("patchgate-pending-store".into())
            .spawn(move || {
                // Ends when the gate (holding the sender) is gone.
                while let Ok((run_id, done)) = writes.recv() {
                    writer.sync(&run_id, || look(&run_id));
                    if let Some(done) = done {
                        let _ = done.send(());
                    }
                }
            })?;
        Ok(Keeper { store, line })
    }

    /// The store.
    pub(crate) fn store(&self) -> &PendingStore {
        &self.store
    }

    /// Store `run_id` as the queue holds it when its turn comes; not waited for.
    pub(crate) fn later(&self, run_id: &str) {
        let _ = self.line.send((run_id.to_string(), None));
    }

    /// Store `run_id` as the queue holds it when its turn comes, and wait for that.
    pub(crate) async fn now(&self, run_id: &str) {
        let (done, stored) = tokio::sync::oneshot::channel();
        if self.line.send((run_id.to_string(), Some(done))).is_ok() {
            let _ = stored.await;
        }
    }

    /// Remove closed review `run_id` at once (here: a removal never waits for the writer's
    /// line, only for the write under way), as `look` finds it.
    pub(crate) fn closed(&self, run_id: &str, look: impl FnOnce() -> Look) {
        self.store.sync(run_id, look);
    }
}

/// The pending store of one root.
#[derive(Debug)]
pub(crate) struct PendingStore {
    dir: PathBuf,
    /// How many reviews, and how many bytes, it keeps at most ([`MAX_STORED`],
    /// [`MAX_STORED_BYTES`]).
    bounds: (usize, u64),
    /// Held while a review's file is brought in line with the queue, so the last look wins.
    index: Mutex<Index>,
}

fn secs(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

impl PendingStore {
    /// The store beside `journal` (`NAME.pending/`).
    pub(crate) fn beside(journal: &Journal) -> PendingStore {
        PendingStore {
            dir: journal.path().with_extension("pending"),
            bounds: (MAX_STORED, MAX_STORED_BYTES),
            index: Mutex::new(Index::default()),
        }
    }

    /// The store kept within `count` reviews and `bytes` instead (tests).
    #[cfg(test)]
    fn within(mut self, count: usize, bytes: u64) -> PendingStore {
        self.bounds = (count, bytes);
        self
    }

    /// Its bounds for a review in `state`: (count, bytes); a dry-run's are half a pending
    /// review's.
    fn caps(&self, state: State) -> (usize, u64) {
        let (count, bytes) = self.bounds;
        match state {
            State::Pending => (count, bytes),
            _ => (count / 2, bytes / 2),
        }
    }

    fn path_of(&self, run_id: &str) -> PathBuf {
        self.dir.join(format!("{run_id}.json"))
    }

    fn index(&self) -> std::sync::MutexGuard<'_, Index> {
        self.index
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Bring `run_id`'s file in line with the queue as `look` finds it (stored while open,
    /// else its file goes; nothing when the gate is gone). Under the store's lock, so
    /// whichever call comes last stores what the queue holds last.
    fn sync(&self, run_id: &str, look: impl FnOnce() -> Look) {
        let mut index = self.index();
        match look() {
            Some(Some(p)) => self.save(&mut index, &p),
            Some(None) => self.remove(&mut index, run_id),
            None => {}
        }
    }

    fn save(&self, index: &mut Index, p: &Proposal) {
        let bytes = match serde_json::to_vec(&stored(p)) {
            Ok(b) => b,
            Err(e) => {
                tracing::warn!("run {}: cannot store the review: {e}", p.run_id);
                return;
            }
        };
        let len = bytes.len() as u64;
        let (count_cap, bytes_cap) = self.caps(p.state);
        let had = index.sizes.get(&p.run_id).copied();
        let count = index.sizes.len() + usize::from(had.is_none());
        let total = index.total - had.unwrap_or(0) + len;
        if count > count_cap || total > bytes_cap {
            tracing::warn!(
                "run {}: not kept across a restart: the pending store would hold {count} reviews \
                 of {} MiB (at most {count_cap} of {} MiB)",
                p.run_id,
                total >> 20,
                bytes_cap >> 20
            );
            self.remove(index, &p.run_id);
            return;
        }
        let written = private_dir(&self.dir)
            .and_then(|()| fs::write_private(&self.path_of(&p.run_id), &bytes));
        match written {
            Ok(()) => {
                fs::sync_dir(&self.dir);
                index.sizes.insert(p.run_id.clone(), len);
                index.total = total;
            }
            Err(e) => {
                tracing::warn!("run {}: cannot store the review: {e}", p.run_id);
                self.remove(index, &p.run_id);
            }
        }
    }

    fn remove(&self, index: &mut Index, run_id: &str) {
        if let Some(len) = index.sizes.remove(run_id) {
            index.total -= len;
            self.drop_file(run_id);
        }
    }

    fn drop_file(&self, run_id: &str) {
        match std::fs::remove_file(self.path_of(run_id)) {
            Ok(()) => fs::sync_dir(&self.dir),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => tracing::warn!("run {run_id}: cannot remove the stored review: {e}"),
        }
    }

    /// Forget a review loaded but not taken back (the queue's caps): its file goes.
    pub(crate) fn forget(&self, run_id: &str) {
        let mut index = self.index();
        self.remove(&mut index, run_id);
    }

    /// The reviews a gate left (oldest first), validated as hostile input; what is not
    /// believed is ignored and logged (another user's file, a link, one others can write: left
    /// where it is; one of this user's that is damaged, expired or decided: removed).
    pub(crate) fn load(&self, ws: &Workspace, policy: &Policy, journal: &Journal) -> Vec<Proposal> {
        if let Err(e) = private::check_store(&self.dir) {
            tracing::warn!("pending reviews not restored: {e}");
            return Vec::new();
        }
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let now = SystemTime::now();
        let mut found: Vec<(Proposal, u64)> = Vec::new();
        // What is read is held within the bounds too, however many files lie there.
        let mut read: u64 = 0;
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(run_id) = name
                .strip_suffix(".json")
                .filter(|id| proposal::is_run_id(id))
            else {
                if name.ends_with(".tmp") && private::is_own_file(&path) {
                    // A store that never finished: the rename did not happen.
                    let _ = std::fs::remove_file(&path);
                } else {
                    tracing::warn!("pending store: {} ignored: not a review", path.display());
                }
                continue;
            };
            if found.len() >= self.bounds.0 {
                tracing::warn!("pending store: run {run_id} not restored: past the store's bounds");
                self.drop_file(run_id);
                continue;
            }
            let bytes = match private::read_own_file(&path, self.bounds.1 - read) {
                Ok(b) => b,
                Err(e) => {
                    tracing::warn!("pending store: review ignored: {e}");
                    continue;
                }
            };
            read += bytes.len() as u64;
            let restored = serde_json::from_slice::<Stored>(&bytes)
                .map_err(|e| format!("not a stored review ({e})"))
                .and_then(|s| restore(s, run_id, ws, policy, now));
            match restored {
                Ok(p) => found.push((p, bytes.len() as u64)),
                Err(why) => {
                    tracing::warn!("pending store: run {run_id} not restored: {why}");
                    self.drop_file(run_id);
                }
            }
        }
        self.keep_undecided(&mut found, journal);
        found.sort_by_key(|(p, _)| p.created);
        let mut index = self.index();
        let mut out = Vec::with_capacity(found.len());
        for (p, len) in found {
            let (count_cap, bytes_cap) = self.caps(p.state);
            if index.sizes.len() >= count_cap || index.total + len > bytes_cap {
                tracing::warn!(
                    "pending store: run {} not restored: past the store's bounds",
                    p.run_id
                );
                self.drop_file(&p.run_id);
                continue;
            }
            index.sizes.insert(p.run_id.clone(), len);
            index.total += len;
            out.push(p);
        }
        out
    }

    /// Drop the reviews the journal shows decided (a gate killed between writing the journal
    /// and removing the review's file); when the journal cannot be read at all, restore
    /// none (their files are kept for a start that can read it).
    fn keep_undecided(&self, found: &mut Vec<(Proposal, u64)>, journal: &Journal) {
        if found.is_empty() {
            return;
        }
        let decided = match journal.decided_runs() {
            Ok(d) => d,
            Err(e) => {
                tracing::warn!("pending reviews not restored: {e}");
                found.clear();
                return;
            }
        };
        found.retain(|(p, _)| {
            let keep = !decided.contains(&p.run_id);
            if !keep {
                tracing::info!("pending store: run {} was decided already", p.run_id);
                self.drop_file(&p.run_id);
            }
            keep
        });
    }
}

/// Create the store's directory private to this user (0700), synced in its parent (a
/// crash must not lose the reviews stored in it).
fn private_dir(dir: &Path) -> std::io::Result<()> {
    crate::workspace::dirs::make_durable(dir, 0o700)
}

/// The stored form of open review `p`.
fn stored(p: &Proposal) -> Stored {
    Stored {
        format: FORMAT,
        run_id: p.run_id.clone(),
        tool: p.tool.clone(),
        client: p.client.clone(),
        created: secs(p.created),
        state: p.state,
        expires_at: p.expires_at.map(secs),
        hook: p.hook.map(|h| match h {
            HookSaid::Auto => "auto".to_string(),
            HookSaid::Gate => "gate".to_string(),
        }),
        files: p
            .files
            .iter()
            .map(|f| StoredFile {
                path: f.path.rel.clone(),
                before: f.before.as_deref().map(|b| B64.encode(b)),
                new: f.new.clone(),
                delete: f.delete,
                mode: f.mode,
                warnings: f
                    .warnings
                    .iter()
                    .filter(|w| !w.starts_with(proposal::SYNTAX_WARNING))
                    .cloned()
                    .collect(),
                unseen_lines: f.unseen_lines.to_vec(),
            })
            .collect(),
        revision: p.revision.as_ref().map(|r| StoredRevision {
            of: r.of.clone(),
            number: r.number,
            note: r.note.clone(),
            interdiff: r.interdiff.clone(),
        }),
    }
}

/// The review `s` stored as `run_id`, checked field by field; why not, as the log says it.
fn restore(
    s: Stored,
    run_id: &str,
    ws: &Workspace,
    policy: &Policy,
    now: SystemTime,
) -> Result<Proposal, String> {
    if s.format != FORMAT {
        return Err(format!(
            "stored in format {} (this gate reads {FORMAT})",
            s.format
        ));
    }
    if s.run_id != run_id {
        return Err("its run id is not its file's".into());
    }
    let tool_ok = !s.tool.is_empty()
        && s.tool.len() <= MAX_TOOL_BYTES
        && s.tool
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if !tool_ok {
        return Err("its tool is no tool's name".into());
    }
    let expires_at = match (s.state, s.expires_at) {
        (State::Pending, None) => None,
        (State::DryRun, Some(t)) if t > secs(now) => {
            // Never longer than the root's dry-run TTL from now.
            let ttl = Duration::from_secs(ws.config.dry_run_ttl_s);
            let end = UNIX_EPOCH
                .checked_add(Duration::from_secs(t))
                .unwrap_or(now);
            Some(end.min(now.checked_add(ttl).unwrap_or(now)))
        }
        (State::DryRun, Some(_)) => return Err("the dry-run expired".into()),
        _ => {
            return Err(format!(
                "it is {} (only open reviews are kept)",
                s.state.name()
            ));
        }
    };
    if s.files.is_empty() || s.files.len() > MAX_FILES {
        return Err(format!("it has {} files (1 to {MAX_FILES})", s.files.len()));
    }
    let mut files = Vec::with_capacity(s.files.len());
    let mut seen = HashSet::new();
    for f in s.files {
        let change = restore_file(f, ws)?;
        if !seen.insert(change.path.rel.clone()) {
            return Err(format!("`{}` is in it twice", change.path.rel));
        }
        files.push(change);
    }
    policy
        .action_for_all(files.iter().map(|f| f.path.rel.as_str()))
        .map_err(|e| e.message)?;
    let mut p = Proposal::new(
        &s.tool,
        s.client.as_deref().and_then(crate::inert::client_name),
        files,
    )
    .map_err(|e| e.message)?;
    p.run_id = s.run_id;
    p.created = UNIX_EPOCH
        .checked_add(Duration::from_secs(s.created))
        .map_or(now, |t| t.min(now));
    p.state = s.state;
    p.expires_at = expires_at;
    p.hook = match s.hook.as_deref() {
        None => None,
        Some("auto") => Some(HookSaid::Auto),
        Some("gate") => Some(HookSaid::Gate),
        Some(_) => return Err("what its hook said is neither `auto` nor `gate`".into()),
    };
    p.revision = s.revision.map(restore_revision).transpose()?;
    p.restored = true;
    Ok(p)
}

/// A stored revision, checked.
fn restore_revision(r: StoredRevision) -> Result<Revision, String> {
    let ok = proposal::is_run_id(&r.of)
        && r.number >= 2
        && r.note.len() <= MAX_REVISION_TEXT
        && r.interdiff.len() <= MAX_REVISION_TEXT;
    if !ok {
        return Err("its revision is not one the gate makes".into());
    }
    Ok(Revision {
        of: r.of,
        number: r.number,
        note: r.note,
        interdiff: r.interdiff,
    })
}

/// One stored file, checked: its path resolves under the root as written, its contents fit
/// the file cap and decode as the file would, its unseen lines are lines of the original.
fn restore_file(f: StoredFile, ws: &Workspace) -> Result<FileChange, String> {
    let shown = crate::inert::inert_line(&f.path).into_owned();
    let path = ws
        .root
        .resolve(&f.path)
        .map_err(|e| format!("`{shown}`: {}", e.message))?;
    if path.rel != f.path {
        return Err(format!(
            "`{shown}` is not a path under the root as the gate writes it"
        ));
    }
    let max = ws.config.max_file_bytes;
    let before = f
        .before
        .as_deref()
        .map(|b| B64.decode(b).map_err(|e| format!("`{shown}`: {e}")))
        .transpose()?;
    let too_large = |n: usize| n as u64 > max;
    if before.as_ref().is_some_and(|b| too_large(b.len())) || too_large(f.new.len()) {
        return Err(format!("`{shown}` is over the {max}-byte file cap"));
    }
    if (f.delete && (before.is_none() || !f.new.is_empty()))
        || f.mode.is_some_and(|m| m != 0o644 && m != 0o755)
    {
        return Err(format!("`{shown}`: not a change the gate proposes"));
    }
    let new = normalize_newlines(&f.new).into_owned();
    let text = match &before {
        Some(b) => Text::decode(b).map_err(|e| format!("`{shown}`: {}", e.message))?,
        None => Text::from_content(&new),
    };
    let mut warnings: Vec<String> = f
        .warnings
        .into_iter()
        // Both are made again here, as things stand now.
        .filter(|w| !w.starts_with(proposal::SYNTAX_WARNING) && w != CHANGED_WHILE_DOWN)
        .take(MAX_WARNINGS)
        .map(|mut w| {
            proposal::cut_to(&mut w, MAX_WARNING_BYTES, " …");
            w
        })
        .collect();
    let on_disk = fs::read(&path, max).ok().flatten();
    if on_disk.as_deref() != before.as_deref() {
        warnings.push(CHANGED_WHILE_DOWN.to_string());
    }
    let mut change = FileChange::new(path, before, text, new, warnings);
    change.delete = f.delete;
    change.mode = f.mode;
    let lines = change.old().lines().count();
    let ascending = f.unseen_lines.windows(2).all(|w| w[0] < w[1]);
    if !ascending || f.unseen_lines.last().is_some_and(|&l| l >= lines) {
        return Err(format!(
            "`{shown}`: its unseen lines are not lines of the file"
        ));
    }
    change.unseen_lines = Arc::from(f.unseen_lines);
    change.check_syntax();
    Ok(change)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::workspace::config::{Config, PolicyName};

    /// A workspace with `x.txt`, its journal, and the store beside it within 2 reviews.
    fn setup() -> (tempfile::TempDir, Workspace, Policy, Journal, PendingStore) {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        std::fs::create_dir(&root).unwrap();
        std::fs::write(root.join("x.txt"), "one\n").unwrap();
        let ws = Workspace::new(&root, Config::default()).unwrap();
        let policy = Policy::simple(PolicyName::Gate);
        let journal = Journal::at(tmp.path().join("state/journal/r.jsonl"), &ws.root);
        let store = PendingStore::beside(&journal).within(2, 1 << 20);
        (tmp, ws, policy, journal, store)
    }

    fn review(ws: &Workspace, new: &str) -> Proposal {
        let path = ws.root.resolve("x.txt").unwrap();
        let text = Text::decode(b"one\n").unwrap();
        let change = FileChange::new(path, Some(b"one\n".to_vec()), text, new.into(), vec![]);
        Proposal::new("patch_file", Some("agent".into()), vec![change]).unwrap()
    }

    fn stored_runs(store: &PendingStore) -> Vec<String> {
        let mut runs: Vec<String> = std::fs::read_dir(&store.dir)
            .unwrap()
            .map(|e| {
                e.unwrap()
                    .file_name()
                    .to_string_lossy()
                    .replace(".json", "")
            })
            .collect();
        runs.sort();
        runs
    }

    #[test]
    fn the_store_keeps_open_reviews_within_its_bounds_and_loads_them_back() {
        let (_tmp, ws, policy, journal, store) = setup();
        let reviews: Vec<Proposal> = (0..3).map(|i| review(&ws, &format!("{i}\n"))).collect();
        for p in &reviews {
            store.sync(&p.run_id, || Some(Some(p.clone())));
        }
        // The third is past the count: not kept (the first two are).
        let mut kept = vec![reviews[0].run_id.clone(), reviews[1].run_id.clone()];
        kept.sort();
        assert_eq!(stored_runs(&store), kept);
        // A dry-run only within half the bounds: with one review stored, none more.
        store.sync(&reviews[1].run_id, || Some(None));
        let dry = review(&ws, "dry\n").into_dry_run(Duration::from_secs(60));
        store.sync(&dry.run_id, || Some(Some(dry.clone())));
        assert_eq!(stored_runs(&store), [reviews[0].run_id.clone()]);
        // Past the bytes: not kept either.
        let big = review(&ws, &"x".repeat(1 << 20));
        store.sync(&big.run_id, || Some(Some(big.clone())));
        assert_eq!(stored_runs(&store), [reviews[0].run_id.clone()]);

        let again = PendingStore::beside(&journal).within(2, 1 << 20);
        let back = again.load(&ws, &policy, &journal);
        assert_eq!(back.len(), 1);
        let p = &back[0];
        assert_eq!(p.run_id, reviews[0].run_id);
        assert!(p.restored && p.state == State::Pending);
        assert_eq!(p.files[0].new, "0\n");
        assert_eq!(p.files[0].old(), "one\n");
        assert_eq!(p.client.as_deref(), Some("agent"));
    }

    #[test]
    fn a_file_changed_while_no_gate_ran_is_said_once_however_often_it_restarts() {
        let (_tmp, ws, policy, journal, store) = setup();
        let p = review(&ws, "two\n");
        store.sync(&p.run_id, || Some(Some(p.clone())));
        std::fs::write(ws.root.path().join("x.txt"), "one by hand\n").unwrap();
        let mut back = p;
        for _ in 0..3 {
            let again = PendingStore::beside(&journal);
            let mut loaded = again.load(&ws, &policy, &journal);
            assert_eq!(loaded.len(), 1);
            back = loaded.remove(0);
            again.sync(&back.run_id, || Some(Some(back.clone())));
        }
        let said = back.files[0]
            .warnings
            .iter()
            .filter(|w| *w == CHANGED_WHILE_DOWN)
            .count();
        assert_eq!(said, 1, "{:?}", back.files[0].warnings);
        assert_eq!(
            back.files[0].old(),
            "one\n",
            "proposed on what the file held then"
        );
    }

    #[test]
    fn a_stored_review_with_lines_that_are_not_the_files_is_removed() {
        let (_tmp, ws, policy, journal, store) = setup();
        let p = review(&ws, "two\n");
        store.sync(&p.run_id, || Some(Some(p.clone())));
        let file = store.dir.join(format!("{}.json", p.run_id));
        let mut v: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
        v["files"][0]["unseen_lines"] = serde_json::json!([0, 7]);
        std::fs::write(&file, serde_json::to_vec(&v).unwrap()).unwrap();
        let again = PendingStore::beside(&journal);
        assert!(again.load(&ws, &policy, &journal).is_empty());
        assert!(!file.exists(), "a damaged review of this user's is removed");
    }

    /// A review the journal shows rejected does not come back when the journal ends in a
    /// line torn by a crash that is not even UTF-8: that line is skipped, not the journal.
    #[test]
    fn a_decided_review_stays_decided_past_a_torn_journal_line() {
        let (_tmp, ws, policy, journal, store) = setup();
        let p = review(&ws, "two\n");
        store.sync(&p.run_id, || Some(Some(p.clone())));
        let rejected = format!(
            "{{\"ts\":1,\"run_id\":\"{}\",\"action\":\"rejected\",\"tool\":\"patch_file\"}}\n",
            p.run_id
        );
        let mut bytes = rejected.into_bytes();
        bytes.extend_from_slice(b"{\"ts\":2,\"run_id\":\"\xff\xfe");
        std::fs::create_dir_all(journal.path().parent().unwrap()).unwrap();
        std::fs::write(journal.path(), bytes).unwrap();
        let again = PendingStore::beside(&journal);
        assert!(again.load(&ws, &policy, &journal).is_empty());
        assert!(stored_runs(&store).is_empty(), "its file is removed");
    }

    /// A journal that cannot be read at all restores nothing, and keeps the files.
    #[test]
    fn an_unreadable_journal_restores_no_review_and_keeps_them() {
        let (_tmp, ws, policy, journal, store) = setup();
        let p = review(&ws, "two\n");
        store.sync(&p.run_id, || Some(Some(p.clone())));
        // A directory where the journal should be: it opens, but cannot be read.
        std::fs::create_dir_all(journal.path()).unwrap();
        let again = PendingStore::beside(&journal);
        assert!(again.load(&ws, &policy, &journal).is_empty());
        assert_eq!(stored_runs(&store), std::slice::from_ref(&p.run_id));
    }
}
