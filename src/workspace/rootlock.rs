//! One gate per root: a gate holds an exclusive lock on its canonical root directory itself
//! (not on a file in its state directory, which two gates may not share) for as long as it
//! runs, and leaves a note of who it is in a per-user runtime directory so that a second gate
//! can name the first when it refuses to start.

use std::fs::File;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::digest::hash;
use super::private;
use crate::error::{Error, ErrorCode, Result};

/// Who holds a root, as the holder describes itself.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Holder {
    /// Its process id.
    pub pid: u32,
    /// The canonical root.
    pub root: PathBuf,
    /// Where it can be reached (`http://127.0.0.1:8787`), once it listens.
    pub url: Option<String>,
    /// Its state directory.
    pub state_dir: PathBuf,
}

/// The lock on a root, held until dropped (or the process ends, however it ends).
#[derive(Debug)]
pub struct RootLock {
    _dir: File,
    note: Option<PathBuf>,
    holder: Holder,
}

impl RootLock {
    /// Take the lock of canonical root `root`, or refuse (`INVALID_INPUT`) naming the gate
    /// that holds it.
    pub fn acquire(root: &Path) -> Result<RootLock> {
        let dir = File::open(root).map_err(|e| {
            Error::new(
                ErrorCode::InvalidInput,
                format!("cannot open the root {}: {e}", root.display()),
            )
        })?;
        match dir.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => return Err(held(root)),
            Err(std::fs::TryLockError::Error(e)) => {
                // A file system without locks: say so in the log, run unguarded.
                tracing::warn!("cannot lock the root {}: {e}", root.display());
            }
        }
        let lock = RootLock {
            _dir: dir,
            note: note_path(root),
            holder: Holder {
                pid: std::process::id(),
                root: root.to_path_buf(),
                url: None,
                state_dir: super::state::state_dir(),
            },
        };
        lock.write_note();
        Ok(lock)
    }

    /// Record where the gate listens, for the message a second gate gives.
    pub fn set_url(&mut self, url: &str) {
        self.holder.url = Some(url.to_string());
        self.write_note();
    }

    fn write_note(&self) {
        let Some(path) = &self.note else {
            return;
        };
        let Ok(bytes) = serde_json::to_vec(&self.holder) else {
            return;
        };
        if let Err(e) = super::fs::write_private(path, &bytes) {
            tracing::warn!("cannot write {}: {e}", path.display());
        }
    }
}

impl Drop for RootLock {
    fn drop(&mut self) {
        if let Some(p) = &self.note {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// The refusal when `root` is held: it names the holder when its note says who.
fn held(root: &Path) -> Error {
    let holder = note_path(root)
        .and_then(|p| std::fs::read(p).ok())
        .and_then(|b| serde_json::from_slice::<Holder>(&b).ok())
        .filter(|h| h.root == root && super::state::pid_alive(h.pid));
    let who = match holder {
        Some(h) => {
            let at = h
                .url
                .as_deref()
                .map(|u| format!(" at {u}"))
                .unwrap_or_default();
            let attach = h
                .url
                .as_deref()
                .map(|u| format!("attach to it with `patchgate --connect {u}`, or "))
                .unwrap_or_default();
            format!(
                "a gate (pid {}{at}, state directory {}) already serves {}: {attach}stop it first",
                h.pid,
                h.state_dir.display(),
                root.display()
            )
        }
        None => format!(
            "another patchgate gate already serves {}: stop it first",
            root.display()
        ),
    };
    Error::new(
        ErrorCode::InvalidInput,
        format!("{who} (one gate per root, so that no acknowledged edit is lost)"),
    )
}

/// The holder's note for `root`: in `$XDG_RUNTIME_DIR/patchgate`, else a private
/// `patchgate-UID` directory in the temp directory. `None` when that directory is not
/// private to this user (then no note is written or believed).
fn note_path(root: &Path) -> Option<PathBuf> {
    let dir = match std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        Some(d) => PathBuf::from(d).join("patchgate"),
        None => std::env::temp_dir().join(format!("patchgate-{}", private::uid())),
    };
    private::ensure(&dir).ok()?;
    let key = hash(root.as_os_str().as_encoded_bytes());
    Some(dir.join(format!("root-{}.json", &key[..32])))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_on_the_same_root_is_refused_and_names_the_first() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let mut first = RootLock::acquire(&root).unwrap();
        first.set_url("http://127.0.0.1:9");
        let e = RootLock::acquire(&root).unwrap_err();
        assert!(e.message.contains("one gate per root"), "{}", e.message);
        assert!(
            e.message.contains(&format!("pid {}", std::process::id()))
                && e.message.contains("http://127.0.0.1:9"),
            "{}",
            e.message
        );
        // Another root is free; the first is free again once released.
        let other = tempfile::tempdir().unwrap();
        RootLock::acquire(&std::fs::canonicalize(other.path()).unwrap()).unwrap();
        drop(first);
        RootLock::acquire(&root).unwrap();
    }
}
