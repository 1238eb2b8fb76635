//! Group commit: writes that land at once share one sync. A writer writes through
//! [`GroupSync::write`] and returns once a sync begun after its write has ended: the first
//! writer waiting starts one for every write made so far, the others wait for it (or the
//! next) instead of each making its own. `fdatasync`/`fsync` flush the file (or the
//! directory), not the descriptor, so one sync covers every write to it finished before it
//! began. The journal's appends share one per journal file; the renames into one directory
//! share its `fsync` ([`for_dir`]).
//!
//! Every sync of a group goes through ONE descriptor the group keeps open: Linux reports a
//! writeback error once to each open file description that existed when it happened, so a
//! descriptor opened afresh for a sync could miss an error another writer's data met and
//! call that data durable. A sync that fails fails every write finished before it ended
//! (its writers, and those that wrote while it ran): none is ever called durable on the
//! strength of a later sync, which the same descriptor would no longer tell the error.
//!
//! A directory whose sync failed is remembered as such for the rest of the process
//! ([`GroupSync::settle`]): an entry renamed into it before the failure may be lost on disk
//! though the directory still shows it, and no later sync can say otherwise. A writer that
//! relies on an entry it did not rename itself (a pre-image already stored, a journal file
//! made earlier) is refused there; one that renames its own entry is served by its own sync.

use std::collections::{HashMap, HashSet, VecDeque};
use std::fs::File;
use std::io;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, PoisonError, Weak};

/// Past this many directories named in the map, those no writer holds any more are dropped
/// from it (their groups, and descriptors, went when their last writer let go).
const DIRS_KEPT: usize = 1024;

/// The most directories remembered as having failed a sync; past it, every directory is
/// taken for one (a disk failing that widely has no entry worth trusting).
const FAILED_DIRS_KEPT: usize = 4096;

/// The identity of a file or directory: (device, inode). The group's open descriptor keeps
/// the inode alive, so no other file takes its number while the group is known.
pub(crate) type Key = (u64, u64);

pub(crate) use super::synced::Flush;

/// The writes whose sync failed: tickets in `(after, upto]`, `waiting` of them not yet told.
#[derive(Debug)]
struct Failed {
    after: u64,
    upto: u64,
    waiting: u64,
    kind: io::ErrorKind,
    message: String,
}

/// Writes and syncs counted so far.
#[derive(Debug, Default)]
struct State {
    /// Tickets given: writes finished.
    written: u64,
    /// The last ticket a finished sync (succeeded or failed) settles.
    settled: u64,
    /// Whether a sync runs now.
    syncing: bool,
    /// Failed syncs some of whose writers have not yet been told.
    failed: VecDeque<Failed>,
}

impl State {
    /// The outcome for `ticket`, settled: the error of the sync that failed it, else `Ok`.
    fn outcome(&mut self, ticket: u64) -> io::Result<()> {
        let Some(i) = (self.failed.iter()).position(|f| f.after < ticket && ticket <= f.upto)
        else {
            return Ok(());
        };
        let f = &mut self.failed[i];
        let e = io::Error::new(f.kind, f.message.clone());
        f.waiting -= 1;
        if f.waiting == 0 {
            self.failed.remove(i);
        }
        Err(e)
    }
}

/// The syncs of one file or directory (shared by every writer to it), through one
/// descriptor kept open.
#[derive(Debug)]
pub(crate) struct GroupSync {
    file: File,
    key: Key,
    flush: Flush,
    state: Mutex<State>,
    done: Condvar,
}

impl GroupSync {
    /// The group syncing through `file` (kept open for every sync), flushing as `flush`.
    pub(crate) fn new(file: File, flush: Flush) -> io::Result<GroupSync> {
        let key = key_of(&file)?;
        Ok(GroupSync {
            file,
            key,
            flush,
            state: Mutex::default(),
            done: Condvar::new(),
        })
    }

    /// The identity of the file this group syncs.
    pub(crate) fn key(&self) -> Key {
        self.key
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Run `write` (one write to the file, or a rename into the directory), then return
    /// when a sync begun after it has succeeded (this writer's own, or one another writer
    /// started); an error when `write` failed, or a sync that ended after it failed.
    pub(crate) fn write<T>(&self, write: impl FnOnce() -> io::Result<T>) -> io::Result<T> {
        let flush = self.flush;
        self.write_then(write, |f| super::synced::sync(f, flush))
    }

    /// Return once a sync begun now has ended, for a writer relying on entries of this
    /// directory it did not rename itself (another writer may have renamed one a moment ago
    /// and not synced it yet): an error when that sync failed, or when any earlier sync of
    /// this directory in this process failed (what was renamed in before it may be lost on
    /// disk, though the directory shows it, and a later sync's success does not say it
    /// is there).
    pub(crate) fn settle(&self) -> io::Result<()> {
        self.write(|| Ok(()))?;
        if failed_dirs().has(self.key) {
            return Err(io::Error::other(
                "an earlier sync of this directory failed: what was renamed into it before may \
                 not be on disk",
            ));
        }
        Ok(())
    }

    /// [`GroupSync::write`] with the sync as `sync` (of the group's descriptor).
    fn write_then<T>(
        &self,
        write: impl FnOnce() -> io::Result<T>,
        sync: impl FnOnce(&File) -> io::Result<()>,
    ) -> io::Result<T> {
        // The write is made under the state's lock, so a sync's start splits the writes
        // exactly: those with a ticket up to `written` then finished before it.
        let mut s = self.lock();
        let value = write()?;
        s.written += 1;
        let ticket = s.written;
        loop {
            if s.settled >= ticket {
                return s.outcome(ticket).map(|()| value);
            }
            if s.syncing {
                s = self.done.wait(s).unwrap_or_else(PoisonError::into_inner);
                continue;
            }
            s.syncing = true;
            let after = s.settled;
            let upto = s.written;
            drop(s);
            // Cleared however the sync ends (an unwinding one too), so no writer waits on
            // a sync that is gone.
            let running = Running(self);
            #[cfg(test)]
            {
                *syncs_made().entry(self.key).or_default() += 1;
            }
            let r = sync(&self.file);
            let mut s = self.lock();
            match &r {
                Ok(()) => s.settled = upto,
                Err(e) => {
                    if matches!(self.flush, Flush::All) {
                        failed_dirs().mark(self.key);
                    }
                    // Every write finished before the error was told: it may have been in
                    // the writeback that failed, and this descriptor will not say so again.
                    // This writer is told here; the others in `(after, upto]` wait.
                    let upto = s.written;
                    if upto - after > 1 {
                        s.failed.push_back(Failed {
                            after,
                            upto,
                            waiting: upto - after - 1,
                            kind: e.kind(),
                            message: e.to_string(),
                        });
                    }
                    s.settled = upto;
                }
            }
            drop(s);
            drop(running);
            return r.map(|()| value);
        }
    }
}

/// The identity (device, inode) of an open file or directory.
pub(crate) fn key_of(file: &File) -> io::Result<Key> {
    Ok(key_in(&file.metadata()?))
}

/// The identity (device, inode) of the file `m` describes (its descriptor's metadata).
pub(crate) fn key_in(m: &std::fs::Metadata) -> Key {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        (m.dev(), m.ino())
    }
    #[cfg(not(unix))]
    {
        let _ = m;
        (0, 0)
    }
}

/// Each directory's syncs while a writer holds them, by its identity (device, inode).
type DirSyncs = HashMap<Key, Weak<GroupSync>>;

/// The syncs of the directory open as `dir`: every writer that renames a file into it and
/// must make that durable shares them. A group lives while a writer holds it, keeping a copy
/// of `dir`'s descriptor for its syncs: a gate writing into many directories holds one
/// descriptor per directory written at once, not one per directory ever written. (A group
/// no writer holds has settled every write made through it, synced or failed, so the next
/// writer's new group, with a new descriptor, misses no error of theirs.)
#[cfg(unix)]
pub(crate) fn for_dir(dir: impl std::os::fd::AsFd) -> io::Result<Arc<GroupSync>> {
    static DIRS: OnceLock<Mutex<DirSyncs>> = OnceLock::new();
    let copy = File::from(dir.as_fd().try_clone_to_owned()?);
    let key = key_of(&copy)?;
    let mut dirs = DIRS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    if let Some(g) = dirs.get(&key).and_then(Weak::upgrade) {
        return Ok(g);
    }
    if dirs.len() > DIRS_KEPT {
        dirs.retain(|_, g| g.strong_count() > 0);
    }
    let g = Arc::new(GroupSync::new(copy, Flush::All)?);
    dirs.insert(key, Arc::downgrade(&g));
    Ok(g)
}

/// The directories a sync of which failed in this process.
#[derive(Default)]
struct FailedDirs {
    keys: HashSet<Key>,
    /// More failed than are remembered: every directory counts as failed.
    overflowed: bool,
}

/// The one record of failed directories, behind its lock.
fn failed_dirs() -> MutexGuard<'static, FailedDirs> {
    static FAILED: OnceLock<Mutex<FailedDirs>> = OnceLock::new();
    FAILED
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
}

impl FailedDirs {
    fn mark(&mut self, key: Key) {
        if self.keys.len() >= FAILED_DIRS_KEPT {
            self.overflowed = true;
        } else {
            self.keys.insert(key);
        }
    }

    fn has(&self, key: Key) -> bool {
        self.overflowed || self.keys.contains(&key)
    }
}

/// Whether a sync of the directory `key` names failed in this process (what was renamed
/// into it before may not be on disk, whatever a later sync says).
pub(crate) fn failed(key: Key) -> bool {
    failed_dirs().has(key)
}

/// Whether a sync of any directory failed in this process: when none did, no entry needs
/// its directory's mark looked up (the common case costs one lock, no `stat`).
pub(crate) fn any_failed() -> bool {
    let f = failed_dirs();
    f.overflowed || !f.keys.is_empty()
}

/// Syncs made of each file or directory, by its identity: a test's count of the syncs it
/// caused.
#[cfg(test)]
fn syncs_made() -> MutexGuard<'static, HashMap<Key, u64>> {
    static MADE: OnceLock<Mutex<HashMap<Key, u64>>> = OnceLock::new();
    MADE.get_or_init(Default::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
}

/// Test hook: how many syncs of the file or directory at `path` this process began.
#[cfg(test)]
pub(crate) fn syncs_of(path: &std::path::Path) -> u64 {
    let key = key_of(&File::open(path).unwrap()).unwrap();
    syncs_made().get(&key).copied().unwrap_or(0)
}

/// Test hook: a sync of the directory `dir` fails, as a disk error would, through its group
/// (the path a real failure takes); the failure is forgotten when the guard goes, before the
/// test lets its directory go (a directory made later on its inode is not taken for it).
#[cfg(all(test, unix))]
pub(crate) fn fail_a_sync_of(dir: &std::path::Path) -> FailedSync {
    let g = for_dir(File::open(dir).unwrap()).unwrap();
    let failed = g.write_then(|| Ok(()), |_| Err(io::Error::other("injected: disk gone")));
    assert!(failed.is_err());
    FailedSync(g.key)
}

/// A directory's injected sync failure ([`fail_a_sync_of`]), forgotten on drop.
#[cfg(all(test, unix))]
pub(crate) struct FailedSync(Key);

#[cfg(all(test, unix))]
impl Drop for FailedSync {
    fn drop(&mut self) {
        failed_dirs().keys.remove(&self.0);
    }
}

/// A sync under way: when it ends, the next waiting writer may start one.
struct Running<'a>(&'a GroupSync);

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.0.lock().syncing = false;
        self.0.done.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::{Receiver, Sender, channel};
    use std::time::Duration;

    const WAIT: Duration = Duration::from_secs(30);

    fn group() -> (tempfile::TempDir, Arc<GroupSync>) {
        let dir = tempfile::tempdir().unwrap();
        let file = File::create(dir.path().join("f")).unwrap();
        (dir, Arc::new(GroupSync::new(file, Flush::Data).unwrap()))
    }

    /// What the writers and syncs of a test did, in order.
    type Log = Arc<Mutex<Vec<String>>>;

    fn note(log: &Log, what: String) {
        log.lock().unwrap().push(what);
    }

    /// A writer `name` on its own thread: its write is logged, and its sync, if it makes
    /// one, logs its start, waits for `go` and ends as `outcome`; its result goes to `out`.
    fn writer(
        g: &Arc<GroupSync>,
        log: &Log,
        name: &'static str,
        go: Receiver<io::Result<()>>,
        out: &Sender<(&'static str, bool)>,
    ) {
        let (g, log, out) = (g.clone(), log.clone(), out.clone());
        std::thread::spawn(move || {
            let r = g.write_then(
                || {
                    note(&log, format!("{name} wrote"));
                    Ok(())
                },
                |_| {
                    note(&log, format!("{name} syncs"));
                    go.recv_timeout(WAIT).unwrap()
                },
            );
            let _ = out.send((name, r.is_ok()));
        });
    }

    /// Wait until the log holds `what`.
    fn until_logged(log: &Log, what: &str) {
        until_one_logged(log, &[what]);
    }

    /// Wait until one of `whats` is logged; which one.
    fn until_one_logged<'w>(log: &Log, whats: &[&'w str]) -> &'w str {
        let t = std::time::Instant::now();
        loop {
            if let Some(w) = whats
                .iter()
                .find(|w| log.lock().unwrap().iter().any(|l| l == **w))
            {
                return w;
            }
            assert!(t.elapsed() < WAIT, "never logged: {whats:?}");
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// A writer whose write lands while a sync runs is not served by that sync (it began
    /// before the write) but by the next, and writers that land during one sync share the
    /// next one. Regression: the test before only asked that some sync had *begun* after
    /// a write, with writes all landing before the first sync, so a writer let go by a sync
    /// begun before its write would mostly have passed.
    #[test]
    fn writers_at_once_share_a_sync_begun_after_their_writes() {
        let (_dir, g) = group();
        let log: Log = Arc::default();
        let (out, results) = channel();
        let gos: Vec<_> = (0..3).map(|_| channel()).collect();
        let mut gos = gos.into_iter();
        let (go_a, rx_a) = gos.next().unwrap();
        writer(&g, &log, "a", rx_a, &out);
        until_logged(&log, "a syncs");
        // b writes while a's sync runs; then c and d while b's runs.
        let (go_b, rx_b) = gos.next().unwrap();
        writer(&g, &log, "b", rx_b, &out);
        until_logged(&log, "b wrote");
        go_a.send(Ok(())).unwrap();
        assert_eq!(results.recv_timeout(WAIT), Ok(("a", true)));
        until_logged(&log, "b syncs");
        let (go_cd, rx_cd) = gos.next().unwrap();
        let (go_unused, rx_unused) = channel();
        writer(&g, &log, "c", rx_cd, &out);
        until_logged(&log, "c wrote");
        writer(&g, &log, "d", rx_unused, &out);
        until_logged(&log, "d wrote");
        assert!(results.try_recv().is_err(), "a writer left before its sync");
        go_b.send(Ok(())).unwrap();
        assert_eq!(results.recv_timeout(WAIT), Ok(("b", true)));
        // One of c and d syncs for both (whichever asks first): its sync is told to end.
        let syncer = match until_one_logged(&log, &["c syncs", "d syncs"]) {
            "d syncs" => go_unused,
            _ => go_cd,
        };
        syncer.send(Ok(())).unwrap();
        let mut last = [0, 1].map(|_| results.recv_timeout(WAIT).unwrap());
        last.sort();
        assert_eq!(last, [("c", true), ("d", true)]);
        let syncs = log
            .lock()
            .unwrap()
            .iter()
            .filter(|l| l.ends_with("syncs"))
            .count();
        assert_eq!(syncs, 3, "{:?}", log.lock().unwrap());
    }

    /// A failed sync fails its own writer and every writer that wrote before it ended (the
    /// descriptor tells an error once: a later sync would call their data durable), and
    /// the next writer syncs again rather than taking the failed one for done.
    #[test]
    fn a_failed_sync_fails_every_write_it_may_have_lost() {
        let (_dir, g) = group();
        let log: Log = Arc::default();
        let (out, results) = channel();
        let (go_a, rx_a) = channel();
        writer(&g, &log, "a", rx_a, &out);
        until_logged(&log, "a syncs");
        let (go_b, rx_b) = channel();
        writer(&g, &log, "b", rx_b, &out);
        until_logged(&log, "b wrote");
        go_a.send(Err(io::Error::other("disk gone"))).unwrap();
        // b's own sync would succeed: it must not be asked. (Told of a's failure, b may have
        // finished and dropped its end already: the send may find no one.)
        let _ = go_b.send(Ok(()));
        let mut two = [0, 1].map(|_| results.recv_timeout(WAIT).unwrap());
        two.sort();
        assert_eq!(two, [("a", false), ("b", false)], "{log:?}");
        assert!(!log.lock().unwrap().iter().any(|l| l == "b syncs"));
        assert!(next_writer_syncs(&g), "the next writer syncs");
        assert!(g.lock().failed.is_empty(), "every failed writer was told");
    }

    /// Whether a writer coming now makes a sync of its own (none is running, none is owed).
    fn next_writer_syncs(g: &GroupSync) -> bool {
        let mut ran = false;
        g.write_then(
            || Ok(()),
            |_| {
                ran = true;
                Ok(())
            },
        )
        .unwrap();
        ran
    }

    /// A panicking sync leaves none marked running: the next writer syncs.
    #[test]
    fn a_panicked_sync_leaves_none_running() {
        let (_dir, g) = group();
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            g.write_then(|| Ok(()), |_| panic!("sync panicked"))
        }));
        assert!(panicked.is_err());
        assert!(
            next_writer_syncs(&g),
            "a writer after a panicked sync syncs"
        );
    }

    /// One directory, one group (and so one descriptor for its syncs), whichever
    /// descriptor a writer opened it by.
    #[cfg(unix)]
    #[test]
    fn a_directory_keeps_one_group() {
        let dir = tempfile::tempdir().unwrap();
        let a = for_dir(File::open(dir.path()).unwrap()).unwrap();
        let b = for_dir(File::open(dir.path()).unwrap()).unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        a.write(|| Ok(())).unwrap();
    }

    /// A directory whose sync failed is not called synced by a later sync that succeeds,
    /// for a writer relying on what was renamed into it before: the failed sync may have lost
    /// those entries on disk. A writer's own rename is served by its own sync. Regression:
    /// the failed sync's group went with its last writer, and the next one's new group synced
    /// and called every entry durable.
    #[cfg(unix)]
    #[test]
    fn a_failed_directory_sync_is_not_forgotten_by_a_later_one() {
        let dir = tempfile::tempdir().unwrap();
        let failed = fail_a_sync_of(dir.path());
        assert!(
            crate::workspace::fs::sync_dir_now(dir.path()).is_err(),
            "a later sync called the directory durable"
        );
        let own = for_dir(File::open(dir.path()).unwrap()).unwrap();
        assert!(own.write(|| Ok(())).is_ok(), "a writer's own rename");
        drop(own);
        drop(failed);
        assert!(crate::workspace::fs::sync_dir_now(dir.path()).is_ok());
    }

    /// A directory's group, and the descriptor it keeps, go when its last writer lets go:
    /// writing into thousands of directories one after another holds no descriptor for each.
    #[test]
    fn a_directory_group_no_writer_holds_is_let_go() {
        let dir = tempfile::tempdir().unwrap();
        let g = for_dir(File::open(dir.path()).unwrap()).unwrap();
        g.write(|| Ok(())).unwrap();
        let gone = Arc::downgrade(&g);
        drop(g);
        assert!(gone.upgrade().is_none(), "the map still holds the group");
        let again = for_dir(File::open(dir.path()).unwrap()).unwrap();
        again.write(|| Ok(())).unwrap();
    }
}
