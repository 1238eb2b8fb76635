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

/// The syncs recorded, in the order they ended.
fn log() -> MutexGuard<'static, Vec<Synced>> {
    static LOG: Mutex<Vec<Synced>> = Mutex::new(Vec::new());
    LOG.lock().unwrap_or_else(PoisonError::into_inner)
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

/// Syncs are recorded while this lives (a test's; one at a time in a process), and the
/// record is dropped with it.
#[doc(hidden)]
#[derive(Debug)]
pub struct Recording(());

/// Record every sync from now until the [`Recording`] returned is dropped.
#[doc(hidden)]
pub fn record() -> Recording {
    log().clear();
    ON.store(true, Ordering::Relaxed);
    Recording(())
}

impl Recording {
    /// The syncs made since recording began, in the order they ended.
    pub fn syncs(&self) -> Vec<Synced> {
        log().clone()
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        ON.store(false, Ordering::Relaxed);
        log().clear();
    }
}
