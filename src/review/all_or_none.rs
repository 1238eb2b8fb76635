//! Writing several files all or none (docs/DESIGN.md §4, undo and rewind): each file is
//! written in turn; when one write fails, every file already written is put back to the bytes
//! and mode it had, and the refusal says whether that worked. The caller holds the files'
//! locks ([`crate::workspace::fs::with_locks`]).

use super::proposal::Written as Committed;
use crate::error::{Error, Result};
use crate::workspace::fs;
use crate::workspace::paths::SafePath;

/// What a refusal says when some files written could not be put back (they hold the new
/// content): the TUI's status line tells it apart from a refusal that changed nothing.
pub const NOT_PUT_BACK: &str = "these files could not be put back and hold the new content";

/// One file to write: what it holds now (`None`: missing) and what it is to hold (`None`:
/// deleted), with the mode to give it.
pub(crate) struct Plan<'a> {
    pub path: &'a SafePath,
    pub now: Option<Vec<u8>>,
    pub to: Option<Vec<u8>>,
    pub mode: Option<u32>,
}

/// A file written, and how to put it back.
struct Done<'a> {
    path: &'a SafePath,
    was: Option<Vec<u8>>,
    mode: Option<u32>,
}

fn put(path: &SafePath, bytes: Option<&[u8]>, mode: Option<u32>) -> Result<()> {
    match bytes {
        Some(b) => fs::write_atomic_locked(path, b, mode),
        None => fs::remove_locked(path),
    }
}

/// What the files written so far are put back by: the paths that could not be.
fn put_back(done: &[Done<'_>]) -> Vec<String> {
    let mut failed = Vec::new();
    for d in done.iter().rev() {
        if let Err(e) = put(d.path, d.was.as_deref(), d.mode) {
            failed.push(format!("`{}` ({})", d.path.rel, e.message));
        }
    }
    failed
}

/// The handle on files written by [`write_all`]: [`Written::put_back`] undoes them when a
/// step after the writes (the journal's append) fails.
pub(crate) struct Written<'a> {
    done: Vec<Done<'a>>,
}

impl Written<'_> {
    /// Put every file back as it was; the refusal for `why`, saying what could not be.
    pub(crate) fn put_back(self, why: &Error) -> Error {
        refusal(why, &put_back(&self.done))
    }
}

/// The error for a step that failed after some files were written, once they were put back
/// (`failed`: those that could not be).
fn refusal(why: &Error, failed: &[String]) -> Error {
    let tail = if failed.is_empty() {
        "every file written before it was put back as it was, so nothing changed".to_string()
    } else {
        format!("{NOT_PUT_BACK}: {}", failed.join(", "))
    };
    Error::new(why.code, format!("{}; {tail}", why.message))
}

/// Put back the files a commit wrote (`written`) when the step after its writes, the
/// journal's append, failed (`why`): each file that still holds what the commit wrote gets
/// its bytes from before again (or is removed, if the commit made it), newest first, under
/// every file's lock (the commit let them go; a file changed since is left as it is and
/// named). The refusal for `why`, saying what could not be put back, and whether every file
/// was.
pub(crate) fn put_back_written(
    written: &[Committed],
    why: &Error,
    max_bytes: u64,
) -> (Error, bool) {
    let paths: Vec<SafePath> = written.iter().map(|w| w.path.clone()).collect();
    let failed = fs::with_locks(&paths, || {
        let mut failed = Vec::new();
        for w in written.iter().rev() {
            // (A file that cannot be read now is not known to hold what the commit wrote:
            // left as it is, like one changed since.)
            let now = match fs::read(&w.path, max_bytes) {
                Ok(now) => now,
                Err(e) => {
                    failed.push(format!("`{}` (cannot be read: {})", w.path.rel, e.message));
                    continue;
                }
            };
            if now != w.after {
                failed.push(format!("`{}` (changed since it was written)", w.path.rel));
                continue;
            }
            if let Err(e) = put(&w.path, w.before.as_deref(), None) {
                failed.push(format!("`{}` ({})", w.path.rel, e.message));
            }
        }
        failed
    });
    (refusal(why, &failed), failed.is_empty())
}

/// Write every plan whose content changes, or none: on a failed write the files written
/// before it are put back (bytes and mode) and the error says so.
pub(crate) fn write_all<'a>(plans: &[Plan<'a>]) -> Result<Written<'a>> {
    let mut done = Vec::new();
    for p in plans.iter().filter(|p| p.now != p.to) {
        let mode_now = fs::mode(&p.path.abs);
        if let Err(e) = put(p.path, p.to.as_deref(), p.mode) {
            let failed = put_back(&done);
            return Err(refusal(&e, &failed));
        }
        done.push(Done {
            path: p.path,
            was: p.now.clone(),
            mode: mode_now,
        });
    }
    Ok(Written { done })
}
