//! An applied edit's pre-images stored beside its write (docs/DESIGN.md §7): one long-lived
//! helper thread (`pre-images`) takes each edit's copies as the edit starts writing, so their
//! syncs run beside the files' own; a writer done before the helper reached its copies
//! takes them back and stores them itself. No thread is started per edit, and no writer
//! waits for a queue: under load the writers store their own copies, each on its own thread.
//! Whoever stores them, the journal line is appended only after they are stored.

use std::sync::mpsc::{Sender, channel};
use std::sync::{Arc, Condvar, Mutex, OnceLock, PoisonError};

use super::journal::{Journal, Stored};

/// Where one edit's copies stand.
enum State {
    /// Waiting for the helper (or for their writer to take them back).
    Queued(Vec<Arc<[u8]>>),
    /// The helper is storing them.
    Running,
    /// The helper stored them.
    Done(Stored),
    /// Taken back by the writer (or handed to it): a job left in the helper's queue holds
    /// no copy.
    Taken,
}

/// One edit's copies, shared by its writer and the helper.
struct Job {
    journal: Journal,
    state: Mutex<State>,
    done: Condvar,
}

impl Job {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Store `copies` in `journal`'s store: those stored, with their hashes and the copies left
/// on disk (one that could not be is logged, and left to the journal line's record).
fn store(journal: &Journal, copies: Vec<Arc<[u8]>>) -> Stored {
    let refs: Vec<&[u8]> = copies.iter().map(|c| &c[..]).collect();
    let hashes = journal.store_ahead(&refs);
    Stored::new(
        copies
            .into_iter()
            .zip(hashes)
            .filter_map(|(c, h)| {
                let (hash, seen) = h?;
                Some((c, hash, seen))
            })
            .collect(),
    )
}

/// The helper's queue (the thread started at the first edit; `None` when it could not be).
fn helper() -> Option<&'static Mutex<Sender<Arc<Job>>>> {
    static HELPER: OnceLock<Option<Mutex<Sender<Arc<Job>>>>> = OnceLock::new();
    HELPER
        .get_or_init(|| {
            let (tx, rx) = channel::<Arc<Job>>();
            let started = std::thread::Builder::new()
                .name("pre-images".into())
                .spawn(move || {
                    for job in rx {
                        serve(&job);
                    }
                });
            match started {
                Ok(_) => Some(Mutex::new(tx)),
                Err(e) => {
                    tracing::warn!(
                        "no thread to store pre-images ahead ({e}): each writer stores its own"
                    );
                    None
                }
            }
        })
        .as_ref()
}

/// The helper's work on `job`: nothing when its writer took its copies back.
fn serve(job: &Job) {
    let copies = {
        let mut state = job.state();
        match std::mem::replace(&mut *state, State::Running) {
            State::Queued(copies) => copies,
            // Taken back by its writer (the only other state a queued job can be in).
            other => {
                *state = other;
                return;
            }
        }
    };
    let stored =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| store(&job.journal, copies)))
            .unwrap_or_else(|_| {
                tracing::warn!("storing pre-images ahead panicked; the journal line stores them");
                Stored::default()
            });
    *job.state() = State::Done(stored);
    job.done.notify_all();
}

/// One edit's copies on their way to the store.
pub(crate) struct Ahead(Option<Arc<Job>>);

impl Ahead {
    /// Nothing to store.
    pub(crate) fn none() -> Ahead {
        Ahead(None)
    }

    /// Hand `copies` to the helper (`journal`'s store).
    pub(crate) fn start(journal: &Journal, copies: Vec<Arc<[u8]>>) -> Ahead {
        if copies.is_empty() {
            return Ahead::none();
        }
        let job = Arc::new(Job {
            journal: journal.clone(),
            state: Mutex::new(State::Queued(copies)),
            done: Condvar::new(),
        });
        if let Some(tx) = helper() {
            // A helper gone leaves the copies queued: the writer takes them back.
            let _ = tx
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .send(job.clone());
        }
        Ahead(Some(job))
    }

    /// The copies stored, once the write is done (`Store::Yes`: the edit was written, so
    /// copies the helper has not begun are stored here; `Store::No`: they are not stored).
    /// Waits while the helper is storing them.
    pub(crate) fn finish(self, wanted: Store) -> Stored {
        let Some(job) = self.0 else {
            return Stored::default();
        };
        let mut state = job.state();
        while matches!(*state, State::Running) {
            state = job.done.wait(state).unwrap_or_else(PoisonError::into_inner);
        }
        match std::mem::replace(&mut *state, State::Taken) {
            State::Queued(copies) => {
                drop(state);
                match wanted {
                    Store::Yes => store(&job.journal, copies),
                    Store::No => Stored::default(),
                }
            }
            State::Done(stored) => stored,
            State::Running | State::Taken => Stored::default(),
        }
    }
}

/// Whether [`Ahead::finish`] stores copies the helper has not begun.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Store {
    /// The edit was written: its journal line will name them.
    Yes,
    /// The write failed: no line will.
    No,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::paths::Root;

    fn journal(dir: &tempfile::TempDir) -> Journal {
        std::fs::create_dir_all(dir.path().join("root")).unwrap();
        let root = Root::new(&dir.path().join("root")).unwrap();
        Journal::at(dir.path().join("state/j.jsonl"), &root)
    }

    /// Copies handed to the helper are stored whoever gets to them first, and their hashes
    /// come back; many edits at once from many threads each get their own.
    #[test]
    fn copies_stored_ahead_come_back_with_their_hashes() {
        let dir = tempfile::tempdir().unwrap();
        let j = journal(&dir);
        std::thread::scope(|s| {
            for t in 0..8u8 {
                let j = &j;
                s.spawn(move || {
                    for k in 0..20u8 {
                        let a: Arc<[u8]> = Arc::from([t, k, 1].repeat(100));
                        let b: Arc<[u8]> = Arc::from([t, k, 2].repeat(100));
                        let stored = Ahead::start(j, vec![a.clone(), b.clone()]).finish(Store::Yes);
                        for c in [&a, &b] {
                            let h = stored.hash_of(c).expect("stored");
                            assert_eq!(h, crate::workspace::digest::hash(c));
                            assert_eq!(j.preimage(h).as_deref(), Some(&c[..]));
                        }
                    }
                });
            }
        });
    }

    /// A failed write's copies the helper has not begun are not stored.
    #[test]
    fn a_failed_writes_copies_not_begun_are_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let j = journal(&dir);
        let stored = Ahead(Some(Arc::new(Job {
            journal: j.clone(),
            state: Mutex::new(State::Queued(vec![Arc::from(&b"never stored"[..])])),
            done: Condvar::new(),
        })))
        .finish(Store::No);
        assert!(stored.hash_of(b"never stored").is_none());
        let h = crate::workspace::digest::hash(b"never stored");
        assert_eq!(j.preimage(&h), None);
    }

    /// A writer done while the helper stores its copies waits for the helper and names the
    /// copies it stored: it neither stores them again nor leaves them to the journal line.
    #[test]
    fn a_writer_waits_for_copies_the_helper_is_storing() {
        let dir = tempfile::tempdir().unwrap();
        let j = journal(&dir);
        let copy: Arc<[u8]> = Arc::from(&b"being stored"[..]);
        let job = Arc::new(Job {
            journal: j.clone(),
            state: Mutex::new(State::Queued(vec![copy.clone()])),
            done: Condvar::new(),
        });
        // The helper has begun the copies (as `serve` does) and ends a moment later.
        let State::Queued(copies) = std::mem::replace(&mut *job.state(), State::Running) else {
            unreachable!("queued above")
        };
        let helper = {
            let job = job.clone();
            std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(50));
                *job.state() = State::Done(store(&job.journal, copies));
                job.done.notify_all();
            })
        };
        let puts = j.preimage_puts();
        let stored = Ahead(Some(job)).finish(Store::Yes);
        helper.join().unwrap();
        assert_eq!(
            stored.hash_of(&copy),
            Some(crate::workspace::digest::hash(&copy).as_str())
        );
        assert_eq!(j.preimage_puts() - puts, 1, "stored once, by the helper");
    }
}
