//! Every sync patchgate makes (`fsync`, `fdatasync`) goes through [`sync`], which can keep a
//! record of them for a test (docs/DESIGN.md §7): which file or directory was synced (its
//! identity and the path its descriptor had), its length then, in order, with the
//! directories made meanwhile ([`made`]). A durability test reads the record to check that
//! what an answer calls durable was synced, in an order that makes it so (a file's data
//! before the sync of the directory it was renamed into, a directory's parent after it was
//! made there), so that it fails when a sync is removed — a crash test cannot tell (a killed
//! process loses nothing the kernel holds). Off unless a test turns it on ([`record`]):
//! then one atomic load per sync or directory made.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
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
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Synced {
    /// The device of the file or directory synced.
    pub dev: u64,
    /// Its inode.
    pub ino: u64,
    /// Its length when the sync ended.
    pub len: u64,
    /// The path its descriptor had then (canonical; a file synced before its rename has its
    /// temporary name), `None` where it cannot be told.
    pub path: Option<PathBuf>,
}

/// What a recording saw, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A file or directory was synced.
    Synced(Synced),
    /// This process made the directory at this path (canonical).
    Made(PathBuf),
}

/// Whether syncs are recorded now.
static ON: AtomicBool = AtomicBool::new(false);

/// The most events one recording keeps: past it, the record says it overflowed
/// ([`Recording::events`]) rather than grow without bound (a recording left alive, or
/// other tests' syncs in the same process).
const KEPT: usize = 1 << 16;

/// The events recorded, in the order they happened.
struct Log {
    events: Vec<Event>,
    /// More happened than [`KEPT`]: those past it were not kept.
    overflowed: bool,
}

fn log() -> MutexGuard<'static, Log> {
    static LOG: Mutex<Log> = Mutex::new(Log {
        events: Vec::new(),
        overflowed: false,
    });
    LOG.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Log {
    fn push(&mut self, event: Event) {
        if self.events.len() < KEPT {
            self.events.push(event);
        } else {
            self.overflowed = true;
        }
    }

    fn clear(&mut self) {
        self.events = Vec::new();
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

/// Note that this process made the directory `dir` (recorded when a test asked).
pub(crate) fn made(dir: &Path) {
    if ON.load(Ordering::Relaxed)
        && let Ok(path) = std::fs::canonicalize(dir)
    {
        log().push(Event::Made(path));
    }
}

/// Note that this process made the directory `name` in the one open as `parent` (recorded
/// when a test asked).
#[cfg(unix)]
pub(crate) fn made_in(parent: impl std::os::fd::AsFd, name: &std::ffi::OsStr) {
    if ON.load(Ordering::Relaxed)
        && let Some(path) = path_of(parent)
    {
        log().push(Event::Made(path.join(name)));
    }
}

/// The path the descriptor `fd` has now (Linux: its `/proc/self/fd` link).
#[cfg(unix)]
fn path_of(fd: impl std::os::fd::AsFd) -> Option<PathBuf> {
    use std::os::fd::AsRawFd;
    std::fs::read_link(format!("/proc/self/fd/{}", fd.as_fd().as_raw_fd())).ok()
}

#[cfg(unix)]
fn note(file: &File) {
    use std::os::unix::fs::MetadataExt;
    if let Ok(m) = file.metadata() {
        let path = path_of(file);
        log().push(Event::Synced(Synced {
            dev: m.dev(),
            ino: m.ino(),
            len: m.len(),
            path,
        }));
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

/// Record every sync, and every directory made, from now until the [`Recording`] returned is
/// dropped (waiting for another recording in this process to end first).
#[doc(hidden)]
pub fn record() -> Recording {
    static ONE: Mutex<()> = Mutex::new(());
    let alone = ONE.lock().unwrap_or_else(PoisonError::into_inner);
    log().clear();
    ON.store(true, Ordering::SeqCst);
    Recording { _alone: alone }
}

impl Recording {
    /// What happened since recording began, in order: the syncs (in the order they ended)
    /// and the directories made.
    ///
    /// # Panics
    ///
    /// When more happened than the record keeps (it would not hold them all).
    pub fn events(&self) -> Vec<Event> {
        let log = log();
        assert!(
            !log.overflowed,
            "more than {KEPT} events were recorded: the record is incomplete"
        );
        log.events.clone()
    }

    /// The syncs made since recording began, in the order they ended ([`Recording::events`]
    /// less the directories made).
    pub fn syncs(&self) -> Vec<Synced> {
        (self.events().into_iter())
            .filter_map(|e| match e {
                Event::Synced(s) => Some(s),
                Event::Made(_) => None,
            })
            .collect()
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
        // Other tests of this process may sync meanwhile: theirs are recorded too.
        let one = Event::Synced(recording.syncs()[0].clone());
        for _ in 0..KEPT {
            log().push(one.clone());
        }
        assert_eq!(log().events.len(), KEPT, "the record grew past its cap");
        let told = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| recording.syncs()));
        assert!(told.is_err(), "an overflowed record was handed out");
        drop(recording);
        let again = record();
        assert!(again.events().len() < KEPT, "a new recording starts anew");
    }

    /// A sync's record names the path its descriptor had, and a directory made is recorded
    /// where it falls among the syncs.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_sync_is_recorded_with_its_path_and_a_directory_made_in_its_place() {
        let recording = record();
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let sub = dir.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        made(&sub);
        sync(&File::open(dir.path()).unwrap(), Flush::All).unwrap();
        let events = recording.events();
        let mine: Vec<_> = (events.iter())
            .filter(|e| match e {
                Event::Made(p) => p.starts_with(&base),
                Event::Synced(s) => s.path.as_ref().is_some_and(|p| p.starts_with(&base)),
            })
            .collect();
        assert!(
            matches!(&mine[..], [Event::Made(m), Event::Synced(s)]
            if *m == base.join("sub") && s.path.as_deref() == Some(base.as_path())),
            "{mine:?}"
        );
    }
}
