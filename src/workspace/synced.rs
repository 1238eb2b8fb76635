//! Every sync patchgate makes (`fsync`, `fdatasync`) goes through [`sync`], which can keep a
//! record of them for a test (docs/DESIGN.md §7): which file or directory was synced, its
//! length then, in order. A durability test reads the record to check that what an answer
//! calls durable was synced, in an order that makes it so (a file's data before the sync of
//! the directory it was renamed into), so that it fails when a sync is removed — a crash
//! test cannot tell (a killed process loses nothing the kernel holds). Off unless a test
//! turns it on ([`record`]): then one atomic load per sync.

use std::fs::File;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// What a sync flushes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flush {
    /// The file's data (`fdatasync`): appends to a file.
    Data,
    /// The whole inode (`fsync`): a file's data and metadata, a directory's entries.
    All,
}

/// One sync made while recording.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Synced {
    /// The device of the file or directory synced.
    pub dev: u64,
    /// Its inode.
    pub ino: u64,
    /// Its length when the sync ended.
    pub len: u64,
}

/// Whether syncs are recorded now.
static ON: AtomicBool = AtomicBool::new(false);

/// The most syncs one recording keeps: past it, the record says it overflowed
/// ([`Recording::syncs`]) rather than grow without bound (a recording left alive, or
/// other tests' syncs in the same process).
const KEPT: usize = 1 << 16;

/// The syncs recorded, in the order they ended.
struct Log {
    syncs: Vec<Synced>,
    /// More syncs ended than [`KEPT`]: those past it were not kept.
    overflowed: bool,
}

fn log() -> MutexGuard<'static, Log> {
    static LOG: Mutex<Log> = Mutex::new(Log {
        syncs: Vec::new(),
        overflowed: false,
    });
    LOG.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Log {
    fn push(&mut self, synced: Synced) {
        if self.syncs.len() < KEPT {
            self.syncs.push(synced);
        } else {
            self.overflowed = true;
        }
    }

    fn clear(&mut self) {
        self.syncs = Vec::new();
        self.overflowed = false;
    }
}

/// Sync `file` as `flush` says; recorded when a test asked ([`record`]).
pub(crate) fn sync(file: &File, flush: Flush) -> io::Result<()> {
    match flush {
        Flush::Data => file.sync_data()?,
        Flush::All => file.sync_all()?,
    }
    if ON.load(Ordering::Relaxed) {
        note(file);
    }
    Ok(())
}

#[cfg(unix)]
fn note(file: &File) {
    use std::os::unix::fs::MetadataExt;
    if let Ok(m) = file.metadata() {
        log().push(Synced {
            dev: m.dev(),
            ino: m.ino(),
            len: m.len(),
        });
    }
}

#[cfg(not(unix))]
fn note(_file: &File) {}

/// Syncs are recorded while this lives, and the record is dropped with it. One at a time
/// in a process: it holds a lock that a second [`record`] waits for, so two recordings never
/// overlap (each would clear the other's record, and the first to end would stop the other's).
#[doc(hidden)]
#[derive(Debug)]
pub struct Recording {
    _alone: MutexGuard<'static, ()>,
}

/// Record every sync from now until the [`Recording`] returned is dropped (waiting for
/// another recording in this process to end first).
#[doc(hidden)]
pub fn record() -> Recording {
    static ONE: Mutex<()> = Mutex::new(());
    let alone = ONE.lock().unwrap_or_else(PoisonError::into_inner);
    log().clear();
    ON.store(true, Ordering::SeqCst);
    Recording { _alone: alone }
}

impl Recording {
    /// The syncs made since recording began, in the order they ended.
    ///
    /// # Panics
    ///
    /// When more were made than the record keeps (it would not hold them all).
    pub fn syncs(&self) -> Vec<Synced> {
        let log = log();
        assert!(
            !log.overflowed,
            "more than {KEPT} syncs were recorded: the record is incomplete"
        );
        log.syncs.clone()
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        ON.store(false, Ordering::SeqCst);
        log().clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::channel;
    use std::time::Duration;

    /// A second recording waits for the first to end: two never overlap (each would clear
    /// the other's record, and the first to end would turn recording off under the other).
    /// Regression: a second `record()` began at once, clearing the first's record.
    #[test]
    fn two_recordings_never_overlap() {
        let first = record();
        let (began, second_began) = channel();
        let second = std::thread::spawn(move || {
            let r = record();
            began.send(()).unwrap();
            drop(r);
        });
        assert!(
            second_began
                .recv_timeout(Duration::from_millis(500))
                .is_err(),
            "a second recording began while the first lived"
        );
        drop(first);
        second_began.recv_timeout(Duration::from_secs(60)).unwrap();
        second.join().unwrap();
    }

    /// The record keeps at most [`KEPT`] syncs, and says so when more were made rather than
    /// hand out an incomplete one.
    #[test]
    fn the_record_is_capped_and_says_it_overflowed() {
        let recording = record();
        let dir = tempfile::tempdir().unwrap();
        let file = File::create(dir.path().join("f")).unwrap();
        sync(&file, Flush::Data).unwrap();
        assert_eq!(recording.syncs().len(), 1);
        let one = recording.syncs()[0];
        for _ in 0..KEPT {
            log().push(one);
        }
        assert_eq!(log().syncs.len(), KEPT, "the record grew past its cap");
        let told = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| recording.syncs()));
        assert!(told.is_err(), "an overflowed record was handed out");
        drop(recording);
        let again = record();
        assert!(again.syncs().is_empty(), "a new recording starts empty");
    }
}
