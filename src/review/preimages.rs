//! The journal's pre-images (docs/DESIGN.md §7): the bytes an edit replaced, stored once per content
//! hash (so thirty edits of one 4 MB file keep one copy per distinct version), compressed,
//! private (0600), beside the journal. Their total is capped, for every process storing into
//! the store together (a ledger of the total beside it): past the cap the least recently
//! stored go first, and the edits that needed them can no longer be undone (undo says so).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use flate2::Compression;
use flate2::read::ZlibDecoder;
use flate2::write::ZlibEncoder;

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::workspace::digest;
use crate::workspace::fs;
use crate::workspace::group_sync;

/// The default cap on the pre-images' total size.
pub(crate) const DEFAULT_CAP: u64 = 256 << 20;

/// At most this many copies are written into a store (by all processes) between two listings
/// of it by its trims: copies the ledger did not count (a crash between a copy and its count)
/// count from the next listing.
const TRIM_LISTS_EVERY: u32 = 64;

/// What the store's ledger knows of its total since a trim last listed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Estimate {
    /// The total listed then, plus the copies written since.
    total: u64,
    /// Copies written since the listing.
    written: u32,
}

/// The store's ledger, shared by every process writing into it (`NAME.preimages.total`
/// beside the store): the estimate of its total, read and written under an exclusive `flock`
/// of the ledger file held as long as this is. A trim's listing and deletions, and a stored
/// copy's check and touch, hold it too, so no process's trim deletes a copy another just
/// reported stored. Not synced: a ledger a crash left behind is corrected by the next listing.
struct Ledger {
    file: std::fs::File,
}

impl Ledger {
    /// The ledger of the store at `dir`, locked (made, private, when missing).
    fn lock(dir: &Path) -> std::io::Result<Ledger> {
        let mut opts = std::fs::OpenOptions::new();
        opts.read(true).write(true).create(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            opts.mode(0o600);
        }
        let mut name = dir.as_os_str().to_os_string();
        name.push(".total");
        let file = opts.open(PathBuf::from(name))?;
        file.lock()?;
        Ok(Ledger { file })
    }

    /// The estimate kept; `None` when there is none (or it cannot be read: the store is
    /// listed then).
    fn read(&mut self) -> Option<Estimate> {
        use std::io::Seek;
        let mut text = String::new();
        self.file.rewind().ok()?;
        // A ledger is one short line: more is not one of ours.
        (&self.file).take(64).read_to_string(&mut text).ok()?;
        let (total, written) = text.trim_end().split_once(' ')?;
        Some(Estimate {
            total: total.parse().ok()?,
            written: written.parse().ok()?,
        })
    }

    /// Keep `estimate` (`None`: none, the next copy lists the store). A failure is logged:
    /// the next trim then lists the store, as it does without a ledger.
    fn write(&mut self, estimate: Option<Estimate>) {
        use std::io::Seek;
        let line = estimate.map_or(String::new(), |e| format!("{} {}\n", e.total, e.written));
        let written = self
            .file
            .set_len(0)
            .and_then(|()| self.file.rewind())
            .and_then(|()| self.file.write_all(line.as_bytes()));
        if let Err(e) = written {
            tracing::warn!("pre-image store: its ledger cannot be written: {e}");
        }
    }
}

/// The pre-image store of one journal.
#[derive(Debug, Clone)]
pub(crate) struct Preimages {
    dir: PathBuf,
    cap: u64,
    /// The listings its trims made (a test's count).
    #[cfg(test)]
    listings: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    /// The copies put into it, stored or found kept (a test's count).
    #[cfg(test)]
    pub(crate) puts: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl Preimages {
    /// The store beside the journal at `journal` (`NAME.preimages/`), capped at `cap` bytes.
    pub(crate) fn beside(journal: &Path, cap: u64) -> Preimages {
        Preimages {
            dir: journal.with_extension("preimages"),
            cap,
            #[cfg(test)]
            listings: std::sync::Arc::default(),
            #[cfg(test)]
            puts: std::sync::Arc::default(),
        }
    }

    fn path_of(&self, hash: &str) -> Option<PathBuf> {
        // A hash from the journal names a file here, nothing else.
        is_hash(hash).then(|| self.dir.join(hash))
    }

    /// Remove the temp files of stores a crash interrupted (stale ones only: a younger one
    /// may be another process's store under way); how many were removed.
    pub(crate) fn sweep_temps(&self) -> usize {
        fs::sweep_temps_in(&self.dir, is_store_temp)
    }

    /// Store `bytes`; returns their hash (the key to [`Preimages::get`] them back). A copy
    /// already stored is trusted only when it still holds `bytes` and its directory entry
    /// is durable; else (damaged on disk, a torn write, a directory whose sync failed) it
    /// is written again.
    pub(crate) fn put(&self, bytes: &[u8]) -> std::io::Result<String> {
        self.put_seen(bytes).map(|(hash, _)| hash)
    }

    /// [`Preimages::put`], with the durable copy it left (for [`Preimages::keep_seen`]).
    pub(crate) fn put_seen(&self, bytes: &[u8]) -> std::io::Result<(String, Seen)> {
        #[cfg(test)]
        self.puts.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let hash = digest::hash(bytes);
        let path = self
            .path_of(&hash)
            .ok_or_else(|| std::io::Error::other("unexpected hash"))?;
        let made = !self.dir.is_dir();
        if made {
            // The store's parents made now are synced in theirs (the journal's directory,
            // when the first pre-image comes before the first journal line).
            crate::workspace::dirs::make_durable(&self.dir, 0o777)?;
        }
        // The store's directory is named in its parent only once that is synced (once per
        // process for one made before).
        fs::entry_durable(&self.dir, made)?;
        let seen = match self.kept_whole(&path, bytes) {
            Some(seen) => seen,
            None => self.write_copy(&path, &hash, bytes)?,
        };
        Ok((hash, seen))
    }

    /// Write `bytes` as the copy at `path` (named `hash`), durably, then trim: the copy made.
    fn write_copy(&self, path: &Path, hash: &str, bytes: &[u8]) -> std::io::Result<Seen> {
        let mut z = ZlibEncoder::new(Vec::new(), Compression::fast());
        z.write_all(bytes)?;
        // The old copy's record goes first: until the new one is renamed in and synced,
        // nothing at `path` is this process's durable copy.
        own_copies().remove(path);
        let made = fs::write_private_as(path, &z.finish()?)?;
        remember_own(path, &made);
        self.trim(hash, made.len());
        Ok(Seen(identity(&made)))
    }

    /// Whether the copy stored as `hash` is still the very one [`Preimages::put_seen`] left
    /// durable there (`seen`: its device, inode and birth), and no sync of the directory
    /// failed in this process since: then it is touched, the most recent now, under the
    /// store's locks as [`Preimages::put`] touches a copy it finds kept, so a trim deletes
    /// it last. `false` (a trim — this process's or another's — deleted it since, another
    /// writer replaced it, its identity cannot be told, the ledger cannot be locked) calls
    /// for [`Preimages::put`]: a copy stored ahead of the journal line that names it may be
    /// trimmed before that line is appended.
    pub(crate) fn keep_seen(&self, hash: &str, seen: &Seen) -> bool {
        let Some(id) = seen.0 else {
            return false;
        };
        let Some(path) = self.path_of(hash) else {
            return false;
        };
        let seen = {
            let _store = store_lock();
            let Ok(_ledger) = Ledger::lock(&self.dir) else {
                return false;
            };
            std::fs::File::options()
                .read(true)
                .append(true)
                .open(&path)
                .and_then(|f| f.set_modified(std::time::SystemTime::now()).map(|()| f))
        };
        let now = seen.ok().and_then(|f| identity(&f.metadata().ok()?));
        now == Some(id) && !self.dir_failed()
    }

    /// Whether `path` already holds `bytes` durably: then it is the most recent now (touched
    /// under the store's lock, so that no trim lists it before the touch and deletes it
    /// after), and a sync of the directory begun after it was seen has ended (another writer
    /// may have renamed it in a moment ago and not synced it yet: a journal line naming it
    /// must not be durable before it is) — unless it is the very copy this process renamed
    /// in and saw the directory's sync of succeed, and no sync of the directory failed in
    /// this process (its entry is durable already). The total did not grow: no trim. Not
    /// kept when the store's ledger cannot be locked (nothing then keeps another process's
    /// trim from deleting it). The copy kept, `None` when it is not.
    fn kept_whole(&self, path: &Path, bytes: &[u8]) -> Option<Seen> {
        let seen = {
            let _store = store_lock();
            // Another process's trim waits too. A ledger that cannot be locked keeps no trim
            // out (a process that cannot lock it trims by a listing, unlocked): the copy is
            // not trusted then, and is stored again.
            let Ok(_ledger) = Ledger::lock(&self.dir)
                .inspect_err(|e| tracing::warn!("pre-image store: no ledger ({e}): stored again"))
            else {
                return None;
            };
            std::fs::File::options()
                .read(true)
                .append(true)
                .open(path)
                .and_then(|f| f.set_modified(std::time::SystemTime::now()).map(|()| f))
        };
        let file = seen.ok()?;
        let id = Seen(file.metadata().ok().as_ref().and_then(identity));
        let own = is_own(path, &file) && !self.dir_failed();
        (holds(file, bytes) && (own || fs::sync_dir_now(&self.dir).is_ok())).then_some(id)
    }

    /// Whether a sync of the store's directory failed in this process (or it cannot be told).
    fn dir_failed(&self) -> bool {
        std::fs::metadata(&self.dir).map_or(true, |m| match identity(&m) {
            Some((key, _)) => group_sync::failed(key),
            None => true,
        })
    }

    /// The bytes stored as `hash`; `None` when they were dropped (or never stored).
    pub(crate) fn get(&self, hash: &str) -> Option<Vec<u8>> {
        let compressed = std::fs::read(self.path_of(hash)?).ok()?;
        let mut out = Vec::new();
        ZlibDecoder::new(compressed.as_slice())
            .read_to_end(&mut out)
            .ok()?;
        (digest::hash(&out) == hash).then_some(out)
    }

    /// After a copy of `added` bytes was written as `keep`: drop the least recently stored
    /// pre-images (never `keep`) until the total fits the cap. The store is listed only when
    /// the total its ledger knows of (the last listing's, plus the copies every process wrote
    /// since) would pass the cap, or [`TRIM_LISTS_EVERY`] copies after the last listing, not
    /// for every copy: a listing stats every stored copy. The ledger is shared by every
    /// process writing into the store, so the cap holds for all of them together; a store
    /// whose ledger cannot be opened is listed for every copy.
    fn trim(&self, keep: &str, added: u64) {
        // This process's lock first, then the ledger's (as a stored copy's touch takes them).
        let _store = store_lock();
        let mut ledger = Ledger::lock(&self.dir)
            .inspect_err(|e| tracing::warn!("pre-image store: no ledger ({e}): listed"))
            .ok();
        if let Some(l) = ledger.as_mut()
            && let Some(e) = l.read()
            && e.written < TRIM_LISTS_EVERY
            && e.total.saturating_add(added) <= self.cap
        {
            l.write(Some(Estimate {
                total: e.total + added,
                written: e.written + 1,
            }));
            return;
        }
        let total = self.trim_listed(keep);
        if let Some(l) = ledger.as_mut() {
            l.write(total.map(|total| Estimate { total, written: 0 }));
        }
    }

    /// [`Preimages::trim`] by a listing of the store (the caller holds the store's locks):
    /// the total left, `None` when the store cannot be listed.
    fn trim_listed(&self, keep: &str) -> Option<u64> {
        #[cfg(test)]
        self.listings
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let entries = std::fs::read_dir(&self.dir).ok()?;
        // Pre-images only: a temp file is another store's under way (or a crash's, swept
        // at the gate's start), not to be deleted here.
        let mut files: Vec<(std::time::SystemTime, u64, PathBuf)> = entries
            .flatten()
            .filter(|e| e.file_name().to_str().is_some_and(is_hash))
            .filter_map(|e| {
                let m = e.metadata().ok()?;
                Some((m.modified().ok()?, m.len(), e.path()))
            })
            .collect();
        let mut total: u64 = files.iter().map(|f| f.1).sum();
        if total <= self.cap {
            return Some(total);
        }
        files.sort();
        for (_, len, path) in files {
            if total <= self.cap {
                break;
            }
            if path.file_name().is_some_and(|n| n == keep) {
                continue;
            }
            if std::fs::remove_file(&path).is_ok() {
                // A copy made again at this path (its inode reused) is not the one recorded.
                own_copies().remove(&path);
                total -= len;
            }
        }
        Some(total)
    }
}

/// A copy [`Preimages::put_seen`] left durable: its identity (`None`: it cannot be told, and
/// the copy is not trusted by [`Preimages::keep_seen`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Seen(Option<Identity>);

/// Past this many copies remembered as renamed in by this process, the record starts again
/// (each is then synced once more when it is stored again).
const OWN_COPIES_KEPT: usize = 1024;

/// A stored copy's identity: its device and inode, and its birth (an inode number that a
/// deleted copy's successor reuses comes with another birth).
type Identity = (group_sync::Key, std::time::SystemTime);

/// The identity of the file `m` describes; `None` where it cannot be told.
fn identity(m: &std::fs::Metadata) -> Option<Identity> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Some(((m.dev(), m.ino()), m.created().ok()?))
    }
    #[cfg(not(unix))]
    {
        let _ = m;
        None
    }
}

/// The copies this process renamed into a store and saw the directory's sync of succeed:
/// each path's latest.
fn own_copies() -> std::sync::MutexGuard<'static, HashMap<PathBuf, Identity>> {
    static OWN: OnceLock<std::sync::Mutex<HashMap<PathBuf, Identity>>> = OnceLock::new();
    OWN.get_or_init(Default::default)
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Remember the copy `made` (its metadata before the rename) as renamed in at `path` durably.
fn remember_own(path: &Path, made: &std::fs::Metadata) {
    let mut own = own_copies();
    match identity(made) {
        Some(id) => {
            if own.len() >= OWN_COPIES_KEPT {
                own.clear();
            }
            own.insert(path.to_path_buf(), id)
        }
        None => own.remove(path),
    };
}

/// Whether `file` (open at `path`) is the copy this process last renamed in there: not one
/// another writer renamed over it since, whose entry may not be synced yet.
fn is_own(path: &Path, file: &std::fs::File) -> bool {
    let Some(id) = file.metadata().ok().as_ref().and_then(identity) else {
        return false;
    };
    own_copies().get(path) == Some(&id)
}

/// Whether `name` is a content hash (a stored pre-image's name).
fn is_hash(name: &str) -> bool {
    name.len() == 64 && name.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Whether `name` is the temp file of a store: `.HASH.patchgate-XXXXXX.tmp`
/// (`fs::write_private`), or `HASH.XXXXXX.tmp` as versions before it named them.
fn is_store_temp(name: &str) -> bool {
    let legacy = name
        .strip_suffix(".tmp")
        .and_then(|n| n.split_once('.'))
        .is_some_and(|(hash, rest)| {
            is_hash(hash) && !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_alphanumeric())
        });
    legacy || fs::is_temp_name(name)
}

/// Whether the stored copy open as `file` inflates to exactly `bytes`: read as it inflates
/// and compared piece by piece, so a damaged copy is told at its first wrong byte (a torn one
/// that ends early, or one longer than `bytes`, too). A copy whose bytes do not inflate is
/// not whole either.
fn holds(file: std::fs::File, bytes: &[u8]) -> bool {
    const PIECE: usize = 64 << 10;
    let mut z = ZlibDecoder::new(std::io::BufReader::new(file));
    let mut piece = vec![0u8; PIECE];
    let mut at = 0;
    loop {
        match z.read(&mut piece) {
            Ok(0) => return at == bytes.len(),
            Ok(n) => {
                if bytes.get(at..at + n) != Some(&piece[..n]) {
                    return false;
                }
                at += n;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return false,
        }
    }
}

/// The lock of this process's pre-image stores: a trim's listing and deletions on one side, a
/// stored pre-image's check and touch on the other.
fn store_lock() -> std::sync::MutexGuard<'static, ()> {
    static STORE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    STORE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noise(seed: u64, len: usize) -> Vec<u8> {
        let mut x = seed | 1;
        (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect()
    }

    #[test]
    fn one_copy_per_content_compressed_and_private() {
        let dir = tempfile::tempdir().unwrap();
        let store = Preimages::beside(&dir.path().join("j.jsonl"), DEFAULT_CAP);
        let text = "a line of a large source file\n"
            .repeat(40_000)
            .into_bytes();
        let hashes: Vec<String> = (0..30).map(|_| store.put(&text).unwrap()).collect();
        assert!(hashes.iter().all(|h| *h == hashes[0]));
        let files: Vec<_> = std::fs::read_dir(dir.path().join("j.preimages"))
            .unwrap()
            .flatten()
            .collect();
        assert_eq!(files.len(), 1);
        let meta = files[0].metadata().unwrap();
        assert!(meta.len() < text.len() as u64 / 10, "{} bytes", meta.len());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        }
        assert_eq!(store.get(&hashes[0]).unwrap(), text);
        assert_eq!(store.get("../../etc/passwd"), None);
    }

    /// The store's compressed bytes on disk.
    fn stored_bytes(dir: &Path) -> u64 {
        std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| e.metadata().unwrap().len())
            .sum()
    }

    /// Copies stored well under the cap list the store once, not once each (a listing stats
    /// every stored copy: a gate storing two copies an edit listed thousands of files per
    /// edit); copies that pass the cap list it each time, and the cap holds. Regression: every
    /// copy written listed the whole store.
    #[test]
    fn the_store_is_listed_only_when_its_total_may_pass_the_cap() {
        const COPIES: u64 = 40;
        const COPY_BYTES: usize = 4096;
        let dir = tempfile::tempdir().unwrap();
        let store = Preimages::beside(&dir.path().join("j.jsonl"), DEFAULT_CAP);
        for i in 0..COPIES {
            store.put(&noise(2 * i + 1, COPY_BYTES)).unwrap();
        }
        assert_eq!(store.listings.load(std::sync::atomic::Ordering::Relaxed), 1);
        // Three copies' room: every copy past it lists the store and trims it.
        let cap = 3 * (COPY_BYTES as u64 + 64);
        let small = Preimages::beside(&dir.path().join("k.jsonl"), cap);
        for i in 0..COPIES {
            small.put(&noise(1001 + 2 * i, COPY_BYTES)).unwrap();
            assert!(
                stored_bytes(&dir.path().join("k.preimages")) <= cap,
                "copy {i}"
            );
        }
        assert!(small.listings.load(std::sync::atomic::Ordering::Relaxed) > 1);
    }

    /// Copies stored well under the cap list the store again every [`TRIM_LISTS_EVERY`]
    /// copies after a listing, so copies the ledger never counted (a process killed between
    /// a copy and its count) count then. Regression: nothing showed that this listing
    /// happens (removing it left every test green).
    #[test]
    fn the_store_is_listed_again_every_so_many_copies_under_the_cap() {
        let every = u64::from(TRIM_LISTS_EVERY);
        let dir = tempfile::tempdir().unwrap();
        let store = Preimages::beside(&dir.path().join("j.jsonl"), DEFAULT_CAP);
        let listings = || store.listings.load(std::sync::atomic::Ordering::Relaxed);
        // The first copy lists the store (no ledger yet); the next `every` are counted.
        for i in 0..=every {
            store.put(&noise(5001 + 2 * i, 64)).unwrap();
        }
        assert_eq!(listings(), 1);
        store.put(&noise(7001, 64)).unwrap();
        assert_eq!(
            listings(),
            2,
            "the store was not listed after {every} copies"
        );
        for i in 0..every {
            store.put(&noise(9001 + 2 * i, 64)).unwrap();
        }
        assert_eq!(listings(), 2);
        store.put(&noise(7003, 64)).unwrap();
        assert_eq!(listings(), 3);
    }

    /// Several processes storing into one store hold it under its cap together, not each
    /// under the cap: they share the ledger of its total (here four stores of the same
    /// journal, each with its own state, as four processes have). Regression: each process
    /// counted only its own copies since its last listing, so four on one state directory
    /// held up to four times the cap.
    #[test]
    fn processes_sharing_a_store_hold_it_under_its_cap_together() {
        const COPY_BYTES: usize = 4096;
        let dir = tempfile::tempdir().unwrap();
        let journal = dir.path().join("j.jsonl");
        let cap = 3 * (COPY_BYTES as u64 + 64);
        let stores: Vec<Preimages> = (0..4).map(|_| Preimages::beside(&journal, cap)).collect();
        // Each lists the store once, empty but for one small copy.
        for (k, s) in stores.iter().enumerate() {
            s.put(&noise(101 + 2 * k as u64, 16)).unwrap();
        }
        for round in 0..4u64 {
            for (k, s) in stores.iter().enumerate() {
                s.put(&noise(1001 + 20 * round + 2 * k as u64, COPY_BYTES))
                    .unwrap();
                let total = stored_bytes(&dir.path().join("j.preimages"));
                assert!(total <= cap, "round {round}, store {k}: {total} > {cap}");
            }
        }
    }

    /// Threads storing the same content at once each store it whole and get its hash.
    /// Regression: they shared one temp name (`HASH.PID.tmp`), so one removed or renamed
    /// another's half-written file: a store failed, or left a damaged pre-image.
    #[test]
    fn threads_storing_one_content_at_once_never_share_a_temp_file() {
        const THREADS: usize = 8;
        const ROUNDS: u64 = 12;
        let dir = tempfile::tempdir().unwrap();
        let store = Preimages::beside(&dir.path().join("j.jsonl"), DEFAULT_CAP);
        for round in 0..ROUNDS {
            let bytes = noise(round + 1, 512 << 10);
            let start = std::sync::Barrier::new(THREADS);
            let hashes: Vec<std::io::Result<String>> = std::thread::scope(|s| {
                let threads: Vec<_> = (0..THREADS)
                    .map(|_| {
                        s.spawn(|| {
                            start.wait();
                            store.put(&bytes)
                        })
                    })
                    .collect();
                threads.into_iter().map(|t| t.join().unwrap()).collect()
            });
            for h in &hashes {
                let h = h.as_ref().expect("a store failed");
                assert_eq!(
                    store.get(h).as_deref(),
                    Some(bytes.as_slice()),
                    "round {round}"
                );
            }
        }
        let left: Vec<_> = std::fs::read_dir(dir.path().join("j.preimages"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .filter(|n| n.len() != 64)
            .collect();
        assert!(left.is_empty(), "temp files left: {left:?}");
    }

    /// A stored copy damaged on disk (cut short by a torn write, or a byte changed in place)
    /// is written again when the same content is stored again, so an undo finds it whole.
    /// Regression: a file under the content's name was taken as the copy whatever it held.
    #[test]
    fn a_damaged_copy_is_written_again() {
        let dir = tempfile::tempdir().unwrap();
        let store = Preimages::beside(&dir.path().join("j.jsonl"), DEFAULT_CAP);
        let bytes = noise(7, 256 << 10);
        let hash = store.put(&bytes).unwrap();
        let path = dir.path().join("j.preimages").join(&hash);
        let whole = std::fs::read(&path).unwrap();
        let mut changed = whole.clone();
        changed[whole.len() / 2] ^= 0x40;
        for (damage, damaged) in [("torn", &whole[..whole.len() / 2]), ("changed", &changed)] {
            std::fs::write(&path, damaged).unwrap();
            assert_eq!(store.get(&hash), None, "{damage}: the damage shows");
            assert_eq!(store.put(&bytes).unwrap(), hash);
            assert_eq!(
                store.get(&hash).as_deref(),
                Some(bytes.as_slice()),
                "{damage}: the damaged copy was kept"
            );
        }
    }

    /// A copy renamed into the store before a sync of its directory failed is written again
    /// when it is stored again: that sync may have lost its entry on disk, and a later sync's
    /// success does not say it is there. Regression: storing it again synced the directory
    /// anew and took the copy for durable.
    #[cfg(unix)]
    #[test]
    fn a_copy_whose_directory_sync_failed_is_written_again() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let store = Preimages::beside(&dir.path().join("j.jsonl"), DEFAULT_CAP);
        let bytes = noise(9, 64 << 10);
        let hash = store.put(&bytes).unwrap();
        let path = dir.path().join("j.preimages").join(&hash);
        let first = std::fs::metadata(&path).unwrap().ino();
        let failed = crate::workspace::group_sync::fail_a_sync_of(&dir.path().join("j.preimages"));
        assert_eq!(store.put(&bytes).unwrap(), hash);
        assert_ne!(
            std::fs::metadata(&path).unwrap().ino(),
            first,
            "the copy from before the failed sync was trusted"
        );
        assert_eq!(store.get(&hash).as_deref(), Some(bytes.as_slice()));
        drop(failed);
    }

    /// A copy this process renamed into the store (its directory synced) is trusted when it
    /// is stored again without another sync of the directory: its entry is durable already.
    /// Regression: every store of a kept copy synced the directory again (one fsync more per
    /// edit, its pre-image being the previous edit's result).
    #[cfg(unix)]
    #[test]
    fn a_copy_stored_here_is_trusted_without_another_directory_sync() {
        use crate::workspace::group_sync::syncs_of;
        let dir = tempfile::tempdir().unwrap();
        let store = Preimages::beside(&dir.path().join("j.jsonl"), DEFAULT_CAP);
        let bytes = noise(11, 64 << 10);
        let hash = store.put(&bytes).unwrap();
        let synced = syncs_of(&dir.path().join("j.preimages"));
        assert!(synced > 0, "the first store synced its directory");
        for _ in 0..3 {
            assert_eq!(store.put(&bytes).unwrap(), hash);
        }
        assert_eq!(syncs_of(&dir.path().join("j.preimages")), synced);
        assert_eq!(store.get(&hash).as_deref(), Some(bytes.as_slice()));
    }

    /// A copy another writer renamed over this process's own (the same bytes, another file)
    /// is trusted only after a sync of the directory begun after it was seen: that writer may
    /// not have synced its rename yet.
    #[cfg(unix)]
    #[test]
    fn a_copy_another_writer_renamed_in_is_synced_before_it_is_trusted() {
        use crate::workspace::group_sync::syncs_of;
        let dir = tempfile::tempdir().unwrap();
        let store = Preimages::beside(&dir.path().join("j.jsonl"), DEFAULT_CAP);
        let bytes = noise(12, 64 << 10);
        let hash = store.put(&bytes).unwrap();
        let at = dir.path().join("j.preimages");
        let theirs = at.join("theirs.tmp");
        std::fs::copy(at.join(&hash), &theirs).unwrap();
        std::fs::rename(&theirs, at.join(&hash)).unwrap();
        let synced = syncs_of(&at);
        assert_eq!(store.put(&bytes).unwrap(), hash);
        assert_eq!(
            syncs_of(&at),
            synced + 1,
            "the other writer's copy was trusted unsynced"
        );
        assert_eq!(store.get(&hash).as_deref(), Some(bytes.as_slice()));
    }

    /// The temp files of stores a crash cut short are swept, stale ones only (a young one may
    /// be another process's store under way), and nothing else. Regression: they were never
    /// swept, and each crash left one for good.
    #[test]
    fn stale_temp_files_of_interrupted_stores_are_swept() {
        let dir = tempfile::tempdir().unwrap();
        let store = Preimages::beside(&dir.path().join("j.jsonl"), DEFAULT_CAP);
        let hash = store.put(b"kept").unwrap();
        let at = |name: &str| dir.path().join("j.preimages").join(name);
        let h = "ab".repeat(32);
        let stale = [
            format!(".{h}.patchgate-Xy12Zq.tmp"),
            format!("{h}.aB3dE9.tmp"),
        ];
        let kept = [
            format!(".{h}.patchgate-Fr3sh1.tmp"),
            "notes.tmp".to_string(),
        ];
        let old = std::time::SystemTime::now() - fs::STALE_TEMP_AGE * 2;
        for name in stale.iter().chain(&kept) {
            std::fs::write(at(name), b"half").unwrap();
        }
        for name in stale.iter().chain([&kept[1]]) {
            let f = std::fs::File::options()
                .append(true)
                .open(at(name))
                .unwrap();
            f.set_modified(old).unwrap();
        }
        assert_eq!(store.sweep_temps(), 2);
        assert!(
            stale.iter().all(|n| !at(n).exists()),
            "a stale temp was left"
        );
        assert!(
            kept.iter().all(|n| at(n).exists()),
            "a young temp or another file went"
        );
        assert_eq!(store.get(&hash).as_deref(), Some(&b"kept"[..]));
    }

    #[test]
    fn past_the_cap_the_oldest_go() {
        let dir = tempfile::tempdir().unwrap();
        let store = Preimages::beside(&dir.path().join("j.jsonl"), 1 << 20);
        let hashes: Vec<String> = (0..3)
            .map(|k| {
                let h = store.put(&noise(k + 1, 600 << 10)).unwrap();
                std::thread::sleep(std::time::Duration::from_millis(20));
                h
            })
            .collect();
        assert_eq!(store.get(&hashes[0]), None, "the oldest was dropped");
        assert!(store.get(&hashes[2]).is_some(), "the newest is kept");
        let total: u64 = std::fs::read_dir(dir.path().join("j.preimages"))
            .unwrap()
            .flatten()
            .map(|e| e.metadata().unwrap().len())
            .sum();
        assert!(total <= 1 << 20, "{total}");
        // A dropped copy is forgotten as this process's own: a copy made again at its path
        // (the inode perhaps reused) is synced before it is trusted.
        let dropped = store.path_of(&hashes[0]).unwrap();
        assert!(!own_copies().contains_key(&dropped));
        let newest = store.path_of(&hashes[2]).unwrap();
        if std::fs::metadata(&newest)
            .ok()
            .as_ref()
            .and_then(identity)
            .is_some()
        {
            assert!(own_copies().contains_key(&newest));
        }
    }

    /// The ledger's `flock` keeps a store's check-and-touch and its trims apart across
    /// processes (flocks on two descriptors exclude each other in one process too): while
    /// the ledger is held, a `put` of a copy already stored (its check and touch) and one of
    /// a new copy (its trim) wait, and go on once it is let go. Regression: with the ledger's
    /// `flock` removed, every pre-image test still passed.
    #[test]
    fn a_store_waits_for_the_ledger_held_elsewhere() {
        use std::sync::mpsc::channel;
        use std::time::Duration;
        let dir = tempfile::tempdir().unwrap();
        let store = Preimages::beside(&dir.path().join("j.jsonl"), DEFAULT_CAP);
        store.put(b"one").unwrap();
        let held = Ledger::lock(&store.dir).unwrap();
        let (done, finished) = channel();
        let puts: Vec<_> = [&b"one"[..], &b"two"[..]]
            .into_iter()
            .map(|bytes| {
                let (store, done) = (store.clone(), done.clone());
                std::thread::spawn(move || {
                    let r = store.put(bytes);
                    done.send(bytes).unwrap();
                    r
                })
            })
            .collect();
        assert!(
            finished.recv_timeout(Duration::from_millis(500)).is_err(),
            "a put went on while the ledger was held elsewhere"
        );
        drop(held);
        for _ in 0..2 {
            finished.recv_timeout(Duration::from_secs(60)).unwrap();
        }
        for p in puts {
            p.join().unwrap().unwrap();
        }
    }

    /// A copy already stored is not trusted when the ledger cannot be locked (another
    /// process's trim may be deleting it): it is stored again. Regression: the check and
    /// touch went on without the ledger's lock and the copy was trusted.
    #[cfg(unix)]
    #[test]
    fn a_copy_is_stored_again_when_the_ledger_cannot_be_locked() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let store = Preimages::beside(&dir.path().join("j.jsonl"), DEFAULT_CAP);
        let hash = store.put(b"one").unwrap();
        let copy = store.dir.join(&hash);
        let first = std::fs::metadata(&copy).unwrap().ino();
        // A directory where the ledger should be: it cannot be opened to lock.
        let ledger = dir.path().join("j.preimages.total");
        std::fs::remove_file(&ledger).unwrap();
        std::fs::create_dir(&ledger).unwrap();
        assert!(Ledger::lock(&store.dir).is_err());
        assert_eq!(store.put(b"one").unwrap(), hash);
        assert_ne!(
            std::fs::metadata(&copy).unwrap().ino(),
            first,
            "the copy was trusted without the ledger's lock"
        );
        assert_eq!(store.get(&hash).unwrap(), b"one");
    }

    /// A copy stored ahead of the journal line that names it is trusted then only while it
    /// is the very copy left durable when it was stored: not once another writer renamed a
    /// copy of the same bytes over it (whose entry may not be synced yet), nor once a trim
    /// deleted it, nor after a sync of the store's directory failed.
    #[test]
    #[cfg(unix)]
    fn a_copy_stored_ahead_is_kept_only_while_it_is_the_same_copy() {
        let dir = tempfile::tempdir().unwrap();
        let store = Preimages::beside(&dir.path().join("j.jsonl"), DEFAULT_CAP);
        let (hash, seen) = store.put_seen(b"copy").unwrap();
        let path = store.path_of(&hash).unwrap();
        // (A file system without birth times trusts no copy so: each is stored again.)
        if identity(&std::fs::metadata(&path).unwrap()).is_none() {
            assert!(!store.keep_seen(&hash, &seen));
            return;
        }
        assert!(store.keep_seen(&hash, &seen));
        let (again, seen_again) = store.put_seen(b"copy").unwrap();
        assert_eq!(
            (&again, &seen_again),
            (&hash, &seen),
            "found kept: the same copy"
        );
        let failed = group_sync::fail_a_sync_of(&store.dir);
        assert!(store.dir_failed(), "the failure is seen");
        assert!(!store.keep_seen(&hash, &seen));
        drop(failed);
        let other = dir.path().join("other");
        std::fs::copy(&path, &other).unwrap();
        std::fs::rename(&other, &path).unwrap();
        assert!(!store.keep_seen(&hash, &seen));
        std::fs::remove_file(&path).unwrap();
        assert!(!store.keep_seen(&hash, &seen));
    }
}
