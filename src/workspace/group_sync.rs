//! Group commit: writes that land at once share one sync. A writer writes, takes a ticket
//! and returns once a sync begun after its write has ended: the first writer waiting starts
//! one for every write made so far, the others wait for it (or the next) instead of each
//! making its own. `fdatasync`/`fsync` flush the file (or the directory), not the
//! descriptor, so one sync covers every write to it finished before it began. The journal's
//! appends share one per journal; the renames into one directory share its `fsync`
//! ([`for_dir`]).

use std::collections::HashMap;
use std::io;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, PoisonError};

/// Past this many directories known, those no writer holds are forgotten.
const DIRS_KEPT: usize = 1024;

/// Writes and syncs counted so far.
#[derive(Debug, Default)]
struct State {
    /// Tickets given: writes finished.
    written: u64,
    /// The last ticket a finished sync covers.
    synced: u64,
    /// Whether a sync runs now.
    syncing: bool,
}

/// The syncs of one file or directory (shared by every writer to it).
#[derive(Debug, Default)]
pub(crate) struct GroupSync {
    state: Mutex<State>,
    done: Condvar,
}

impl GroupSync {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Called once a write has finished: returns when a `sync` begun after it has succeeded
    /// (this writer's own, or one another writer started), or with the error of this
    /// writer's own sync.
    pub(crate) fn after_write(&self, sync: impl FnOnce() -> io::Result<()>) -> io::Result<()> {
        let mut s = self.lock();
        s.written += 1;
        let ticket = s.written;
        loop {
            if s.synced >= ticket {
                return Ok(());
            }
            if s.syncing {
                s = self.done.wait(s).unwrap_or_else(PoisonError::into_inner);
                continue;
            }
            s.syncing = true;
            let upto = s.written;
            drop(s);
            // Cleared however the sync ends (an unwinding one too), so no writer waits on
            // a sync that is gone.
            let running = Running(self);
            let r = sync();
            let mut s = self.lock();
            if r.is_ok() {
                s.synced = s.synced.max(upto);
            }
            drop(s);
            drop(running);
            return r;
        }
    }
}

/// Each directory's syncs, by its identity (device, inode).
type DirSyncs = HashMap<(u64, u64), Arc<GroupSync>>;

/// The syncs of the directory whose identity (device, inode) is `key`: every writer that
/// renamed a file into it and must make that durable shares them.
pub(crate) fn for_dir(key: (u64, u64)) -> Arc<GroupSync> {
    static DIRS: OnceLock<Mutex<DirSyncs>> = OnceLock::new();
    let mut dirs = DIRS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    if dirs.len() > DIRS_KEPT {
        dirs.retain(|_, g| Arc::strong_count(g) > 1);
    }
    dirs.entry(key).or_default().clone()
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
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::{Arc, Barrier};
    use std::time::Duration;

    /// Writers at once share syncs, and each returns only after a sync that began after its
    /// write.
    #[test]
    fn writers_at_once_share_a_sync_begun_after_their_writes() {
        const WRITERS: usize = 16;
        let group = Arc::new(GroupSync::default());
        let writes = Arc::new(AtomicU64::new(0));
        // For each sync, how many writes had finished when it began.
        let syncs = Arc::new(Mutex::new(Vec::new()));
        let start = Arc::new(Barrier::new(WRITERS));
        let threads: Vec<_> = (0..WRITERS)
            .map(|_| {
                let (group, writes, syncs, start) =
                    (group.clone(), writes.clone(), syncs.clone(), start.clone());
                std::thread::spawn(move || {
                    start.wait();
                    let mine = writes.fetch_add(1, Ordering::SeqCst) + 1;
                    group
                        .after_write(|| {
                            let seen = writes.load(Ordering::SeqCst);
                            syncs.lock().unwrap().push(seen);
                            std::thread::sleep(Duration::from_millis(20));
                            Ok(())
                        })
                        .unwrap();
                    let covered = syncs.lock().unwrap().iter().any(|&seen| seen >= mine);
                    assert!(covered, "write {mine} returned before a sync covered it");
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let n = syncs.lock().unwrap().len();
        assert!((1..WRITERS).contains(&n), "{n} syncs for {WRITERS} writers");
    }

    /// A failed sync fails its writer, and the next writer syncs again rather than taking
    /// the failed one for done.
    #[test]
    fn a_failed_sync_is_not_taken_for_done() {
        let group = GroupSync::default();
        let failed = group.after_write(|| Err(io::Error::other("disk gone")));
        assert!(failed.is_err());
        let mut ran = false;
        group
            .after_write(|| {
                ran = true;
                Ok(())
            })
            .unwrap();
        assert!(ran);
        // A panicking sync leaves none marked running.
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            group.after_write(|| panic!("sync panicked"))
        }));
        assert!(panicked.is_err());
        let mut ran = false;
        group
            .after_write(|| {
                ran = true;
                Ok(())
            })
            .unwrap();
        assert!(ran, "a writer after a panicked sync syncs");
    }
}
