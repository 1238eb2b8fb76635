//! Reading and writing files safely (docs/DESIGN.md §7): a size cap on reads; writes through a temp
//! file in the same directory that is fsynced and renamed over the target, keeping the
//! target's mode, one writer per file at a time; parent directories created for new files;
//! stray temp files from a crash cleaned up at start.

use std::collections::HashMap;
#[cfg(not(unix))]
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use super::digest::hash;
use super::io_error::io_error;
use super::paths::SafePath;
use super::synced::Flush;
use crate::error::{Error, ErrorCode, Result};

/// The default cap on the size of a file patchgate reads or writes.
pub(crate) const DEFAULT_MAX_FILE_BYTES: u64 = 10 * 1024 * 1024;

/// The marker in temp file names (`.NAME.patchgate-XXXXXXXX.tmp`).
const TEMP_MARKER: &str = ".patchgate-";

/// The random characters of a private temp file's name ([`write_private`]).
const TEMP_RANDOM_CHARS: usize = 6;

/// A temp file of patchgate's untouched this long was left by a writer that died (a write
/// lives for one temp file's write, sync and rename): only such a one is swept, never one
/// another process is writing now.
pub const STALE_TEMP_AGE: std::time::Duration = std::time::Duration::from_secs(10 * 60);

/// Read a file; `None` when it does not exist. Refuses files over `max_bytes`
/// (`FILE_TOO_LARGE`).
pub fn read(path: &SafePath, max_bytes: u64) -> Result<Option<Vec<u8>>> {
    use std::io::Read;
    // On Unix the file is opened beneath the root, following no symlink: a directory
    // swapped after the check cannot show a file outside the root.
    #[cfg(unix)]
    let opened = super::beneath::open_read(path);
    #[cfg(not(unix))]
    let opened = match std::fs::File::open(&path.abs) {
        Ok(f) => f.metadata().map(|m| Some((f, m))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    };
    let Some((file, meta)) = opened.map_err(|e| io_error(&path.rel, "read", &e))? else {
        return Ok(None);
    };
    let len = meta.len();
    if len > max_bytes {
        return Err(Error::new(
            ErrorCode::FileTooLarge,
            format!(
                "`{}` is {len} bytes, over the {max_bytes}-byte limit (max_file_bytes in .patchgate.toml)",
                path.rel
            ),
        ));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    // Never more than the cap, even if the file grows meanwhile.
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| io_error(&path.rel, "read", &e))?;
    if bytes.len() as u64 > max_bytes {
        return Err(Error::new(
            ErrorCode::FileTooLarge,
            format!(
                "`{}` grew over the {max_bytes}-byte limit while read",
                path.rel
            ),
        ));
    }
    Ok(Some(bytes))
}

/// The unix permission bits of an existing file.
pub fn mode(path: &Path) -> Option<u32> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path)
            .ok()
            .map(|m| m.permissions().mode() & 0o7777)
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

/// Write a small private file (mode 0600 from its creation): a temp file beside it with a
/// name of its own (`.STEM.patchgate-XXXXXX.tmp`, one of [`is_temp_name`]'s: writers of one
/// file at once, threads of one process too, never share one), synced, renamed over `path`,
/// and the directory synced (renames that land at once into it share one: `group_sync`).
/// For patchgate's own state (journal pre-images, discovery and lock notes), not for files
/// under a root.
pub(crate) fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_private_as(path, bytes).map(drop)
}

/// [`write_private`], returning the metadata of the file it renamed in (taken from its own
/// descriptor before the rename: its identity, whatever another writer renames over it
/// after).
pub(crate) fn write_private_as(path: &Path, bytes: &[u8]) -> std::io::Result<std::fs::Metadata> {
    use std::io::Write;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let stem = path.file_stem().unwrap_or_default().to_string_lossy();
    // 0600 from its creation (tempfile's default on unix); removed if it is not renamed.
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{stem}{TEMP_MARKER}"))
        .rand_bytes(TEMP_RANDOM_CHARS)
        .suffix(".tmp")
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    super::synced::sync(tmp.as_file(), Flush::All)?;
    let made = tmp.as_file().metadata()?;
    persist_synced(tmp, path, dir).map(|()| made)
}

/// Return once a sync of `dir` begun now has ended: what another writer renamed into it a
/// moment ago (and may not have synced yet) is then durable too. An error when that sync
/// failed, or an earlier one of `dir` did (`group_sync`: an entry renamed in before it may
/// be lost on disk, whatever a later sync says).
pub(crate) fn sync_dir_now(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        let dir = std::fs::File::open(dir)?;
        super::group_sync::for_dir(&dir)?.settle()
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}

/// Past this many entries known durable, the record starts again (each is synced once more).
const DURABLE_ENTRIES_KEPT: usize = 1024;

/// Make the entry `path` names in its directory durable (its parent synced, [`sync_dir_now`])
/// once per process: later calls trust the first sync that succeeded, unless `fresh` (the
/// entry was just made: the file or directory may have been replaced since). One whose
/// sync failed is synced again next time, and refused while an earlier sync of its
/// directory failed, so an entry whose making was never made durable is not trusted later.
pub(crate) fn entry_durable(path: &Path, fresh: bool) -> std::io::Result<()> {
    static KNOWN: OnceLock<Mutex<std::collections::HashSet<PathBuf>>> = OnceLock::new();
    let known = || {
        KNOWN
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    };
    if !fresh && known().contains(path) {
        return Ok(());
    }
    let parent = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    sync_dir_now(parent)?;
    let mut known = known();
    if known.len() >= DURABLE_ENTRIES_KEPT {
        known.clear();
    }
    known.insert(path.to_path_buf());
    Ok(())
}

/// Rename `tmp` over `path` in `dir`, and make that durable (the directory synced).
#[cfg(unix)]
fn persist_synced(tmp: tempfile::NamedTempFile, path: &Path, dir: &Path) -> std::io::Result<()> {
    let dir = std::fs::File::open(dir)?;
    super::group_sync::for_dir(&dir)?.write(|| tmp.persist(path).map(drop).map_err(|e| e.error))
}

/// Rename `tmp` over `path` (no directory to sync here).
#[cfg(not(unix))]
fn persist_synced(tmp: tempfile::NamedTempFile, path: &Path, _dir: &Path) -> std::io::Result<()> {
    tmp.persist(path).map(drop).map_err(|e| e.error)
}

/// Write `bytes` to one of the user's own files outside every root (a client's
/// configuration, patchgate's user config) through a temporary file in its directory:
/// written, fsynced, renamed over it, and the directory fsynced, so a crash leaves the old
/// file or the new one. An existing file's mode is kept; a new one is readable by the user
/// only (it may hold a token). Missing directories are made.
pub(crate) fn write_user_file(file: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let dir = file.parent().unwrap_or(Path::new("."));
    super::dirs::make_durable(dir, 0o777)?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(bytes)?;
    match std::fs::metadata(file) {
        Ok(m) => tmp.as_file().set_permissions(m.permissions())?,
        #[cfg(unix)]
        Err(_) => {
            use std::os::unix::fs::PermissionsExt;
            tmp.as_file()
                .set_permissions(std::fs::Permissions::from_mode(0o600))?;
        }
        #[cfg(not(unix))]
        Err(_) => {}
    }
    super::synced::sync(tmp.as_file(), Flush::All)?;
    tmp.persist(file).map_err(|e| e.error)?;
    // The rename itself is durable once the directory is.
    #[cfg(unix)]
    sync_dir(dir);
    Ok(())
}

/// Make the entries of `dir` durable (a file just renamed into it or removed from it): a
/// crash after this leaves them as they are now. Best effort: a failure is not reported.
pub(crate) fn sync_dir(dir: &Path) {
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = super::synced::sync(&d, Flush::All);
    }
}

/// A per-file lock: one writer per file at a time within this process.
pub(crate) fn lock_for(path: &Path) -> Arc<Mutex<()>> {
    static LOCKS: OnceLock<Mutex<HashMap<PathBuf, Arc<Mutex<()>>>>> = OnceLock::new();
    let mut locks = LOCKS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    locks.entry(path.to_path_buf()).or_default().clone()
}

/// Run `f` holding the lock of every file in `paths`, in this process and across processes
/// ([`ProcessLock`]), taken in one fixed order (their absolute paths sorted) so that two
/// callers over several files cannot deadlock; released when `f` returns.
pub(crate) fn with_locks<T>(paths: &[SafePath], f: impl FnOnce() -> T) -> T {
    let mut order: Vec<&Path> = paths.iter().map(|p| p.abs.as_path()).collect();
    order.sort();
    order.dedup();
    let locks: Vec<_> = order.iter().map(|p| lock_for(p)).collect();
    let _guards: Vec<_> = locks
        .iter()
        .map(|l| l.lock().unwrap_or_else(std::sync::PoisonError::into_inner))
        .collect();
    let _process_locks: Vec<_> = order
        .iter()
        .filter_map(|p| ProcessLock::acquire(p))
        .collect();
    f()
}

/// A lock on one file shared by every patchgate process: an exclusive `flock` on a lock file
/// named after the file's path in the state directory, released on drop.
#[derive(Debug)]
pub(crate) struct ProcessLock {
    _file: std::fs::File,
}

impl ProcessLock {
    /// Wait for the lock of `path`. `None` (logged) when the lock file cannot be made, e.g.
    /// an unwritable state directory: the in-process lock still holds.
    pub(crate) fn acquire(path: &Path) -> Option<ProcessLock> {
        ProcessLock::acquire_in(&super::state::state_dir().join("locks"), path)
    }

    /// [`ProcessLock::acquire`] with the lock files in `dir`.
    pub(crate) fn acquire_in(dir: &Path, path: &Path) -> Option<ProcessLock> {
        let name = hash(path.as_os_str().as_encoded_bytes());
        let lock_file = dir.join(format!("{}.lock", &name[..32]));
        let open = || {
            std::fs::OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(&lock_file)
        };
        // The directory is made only when missing (not looked at first on every lock).
        let file = match open() {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                std::fs::create_dir_all(dir).and_then(|()| open())
            }
            opened => opened,
        }
        .map_err(|e| tracing::warn!("no cross-process lock for {}: {e}", path.display()))
        .ok()?;
        loop {
            match file.lock() {
                Ok(()) => break,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    tracing::warn!("cannot lock for {}: {e}", path.display());
                    return None;
                }
            }
        }
        Some(ProcessLock { _file: file })
    }
}

/// Write `bytes` to `path` atomically: a temp file in the same directory, fsynced, given
/// `mode` (or the existing file's mode), renamed over the target, and the directory fsynced.
/// Parent directories are created. A crash at any moment leaves the old or the new file.
pub fn write_atomic(path: &SafePath, bytes: &[u8], mode_hint: Option<u32>) -> Result<()> {
    let lock = lock_for(&path.abs);
    let _guard = lock
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    write_atomic_locked(path, bytes, mode_hint)
}

/// [`write_atomic`] for a caller that already holds the file's lock. On Unix the write
/// happens beneath the root's directory handle, following no symlink ([`super::beneath`]);
/// the temp file is private (0600) until it gets its final mode.
pub(crate) fn write_atomic_locked(
    path: &SafePath,
    bytes: &[u8],
    mode_hint: Option<u32>,
) -> Result<()> {
    let name = path
        .abs
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // A name no one can guess beforehand; no random source, no write.
    let suffix =
        super::random::hex::<6>().map_err(|e| io_error(&path.rel, "name a temp file for", &e))?;
    let temp_name = format!(".{name}{TEMP_MARKER}{suffix}.tmp");
    #[cfg(unix)]
    {
        super::beneath::write(path, &temp_name, bytes, mode_hint)
            .map_err(|e| io_error(&path.rel, "write", &e))
    }
    #[cfg(not(unix))]
    {
        write_portable(path, &temp_name, bytes, mode_hint)
    }
}

/// The write where no directory handles are at hand: a temp file beside the target, renamed.
#[cfg(not(unix))]
fn write_portable(
    path: &SafePath,
    temp_name: &str,
    bytes: &[u8],
    mode_hint: Option<u32>,
) -> Result<()> {
    let _ = mode_hint;
    let dir = path.abs.parent().ok_or_else(|| {
        Error::new(
            ErrorCode::InvalidPath,
            format!("`{}` has no directory", path.rel),
        )
    })?;
    std::fs::create_dir_all(dir).map_err(|e| io_error(&path.rel, "create the directory of", &e))?;
    let temp = dir.join(temp_name);
    let result = (|| -> std::io::Result<()> {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)?;
        file.write_all(bytes)?;
        super::synced::sync(&file, Flush::All)?;
        drop(file);
        std::fs::rename(&temp, &path.abs)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&temp);
        return Err(io_error(&path.rel, "write", &e));
    }
    Ok(())
}

/// Delete a file (a patch that removes it), under the file's lock.
pub fn remove(path: &SafePath) -> Result<()> {
    let lock = lock_for(&path.abs);
    let _guard = lock
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    remove_locked(path)
}

/// [`remove`] for a caller that already holds the file's lock.
pub(crate) fn remove_locked(path: &SafePath) -> Result<()> {
    #[cfg(unix)]
    let removed = super::beneath::remove(path);
    #[cfg(not(unix))]
    let removed = match std::fs::remove_file(&path.abs) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        other => other,
    };
    removed.map_err(|e| io_error(&path.rel, "delete", &e))
}

/// Remove a symlink standing at `path` itself (its last component is not followed: `path.abs`
/// names the link, not its target), never the file it points to, as `git apply --reject`
/// does before it writes a `.rej` file there. `true` when a link was removed.
pub fn remove_link(path: &SafePath) -> Result<bool> {
    match std::fs::symlink_metadata(&path.abs) {
        Ok(m) if m.file_type().is_symlink() => remove(path).map(|()| true),
        _ => Ok(false),
    }
}

/// Give a file the permission bits `mode` (a patch's mode change), never a symlink's target.
pub(crate) fn set_mode(path: &SafePath, mode: u32) -> Result<()> {
    #[cfg(unix)]
    {
        super::beneath::chmod(path, mode).map_err(|e| io_error(&path.rel, "change the mode of", &e))
    }
    #[cfg(not(unix))]
    {
        let _ = (path, mode);
        Ok(())
    }
}

/// Whether a file name is one of patchgate's temp files.
pub fn is_temp_name(name: &str) -> bool {
    name.starts_with('.') && name.contains(TEMP_MARKER) && name.ends_with(".tmp")
}

/// Whether the file `entry` is a temp file a crash left: named as `is_temp` says, a regular
/// file, untouched for [`STALE_TEMP_AGE`] (a younger one may be another process's write under
/// way).
pub(crate) fn is_stale_temp(entry: &std::fs::DirEntry, is_temp: impl Fn(&str) -> bool) -> bool {
    let name = entry.file_name();
    let Some(name) = name.to_str() else {
        return false;
    };
    // `DirEntry::metadata` does not follow a link: a link named as a temp is not one.
    is_temp(name)
        && entry.metadata().is_ok_and(|m| {
            m.is_file()
                && m.modified()
                    .ok()
                    .and_then(|t| t.elapsed().ok())
                    .is_some_and(|age| age >= STALE_TEMP_AGE)
        })
}

/// Remove the temp files a crash left in `dir` (not below it): those `is_temp` names that
/// are stale ([`is_stale_temp`]). For patchgate's own state directories (the pre-images).
/// Returns how many were removed.
pub(crate) fn sweep_temps_in(dir: &Path, is_temp: impl Fn(&str) -> bool) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .filter(|e| is_stale_temp(e, &is_temp) && std::fs::remove_file(e.path()).is_ok())
        .count()
}

/// Remove temp files a crash left behind under `root` (skipping `.git`, dependency and build
/// directories): only patchgate's own ([`is_temp_name`]) and only stale ones
/// ([`STALE_TEMP_AGE`]: a younger one may be another patchgate process's write under way).
/// Returns how many were removed.
pub fn clean_stray_temps(root: &Path) -> usize {
    const SKIP: &[&str] = &[
        ".git",
        "node_modules",
        "target",
        ".venv",
        "venv",
        "__pycache__",
        ".tox",
    ];
    const MOST_VISITED: usize = 200_000;
    let mut removed = 0;
    let mut stack = vec![root.to_path_buf()];
    let mut visited = 0usize;
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            visited += 1;
            if visited > MOST_VISITED {
                return removed;
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                let name = entry.file_name();
                if !SKIP.iter().any(|s| name == **s) {
                    stack.push(entry.path());
                }
            } else if is_stale_temp(&entry, is_temp_name)
                && std::fs::remove_file(entry.path()).is_ok()
            {
                removed += 1;
            }
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::paths::Root;

    #[test]
    fn the_process_lock_excludes_a_second_holder_until_dropped() {
        // flock locks belong to open files, so a second open in this process waits like
        // another process would.
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("file.txt");
        let locks = dir.path().join("locks");
        let first = ProcessLock::acquire_in(&locks, &target).expect("lock");
        let (tx, rx) = std::sync::mpsc::channel();
        let (t, l) = (target.clone(), locks.clone());
        let waiter = std::thread::spawn(move || {
            let _second = ProcessLock::acquire_in(&l, &t).expect("lock");
            tx.send(()).unwrap();
        });
        assert!(
            rx.recv_timeout(std::time::Duration::from_millis(200))
                .is_err(),
            "the second holder got in while the first held the lock"
        );
        drop(first);
        rx.recv_timeout(std::time::Duration::from_secs(5))
            .expect("the second holder gets the lock once it is free");
        waiter.join().unwrap();
        // Another file's lock is independent.
        let _a = ProcessLock::acquire_in(&locks, &target).unwrap();
        let _b = ProcessLock::acquire_in(&locks, &dir.path().join("other.txt")).unwrap();
    }

    #[test]
    fn atomic_write_creates_parents_and_keeps_the_mode() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path()).unwrap();
        let p = root.resolve("a/b/c.sh").unwrap();
        write_atomic(&p, b"#!/bin/sh\n", Some(0o755)).unwrap();
        assert_eq!(std::fs::read(&p.abs).unwrap(), b"#!/bin/sh\n");
        write_atomic(&p, b"#!/bin/sh\necho\n", None).unwrap();
        assert_eq!(mode(&p.abs), Some(0o755));
        let leftovers: Vec<_> = std::fs::read_dir(p.abs.parent().unwrap())
            .unwrap()
            .flatten()
            .filter(|e| is_temp_name(&e.file_name().to_string_lossy()))
            .collect();
        assert!(leftovers.is_empty());
    }

    #[test]
    fn reads_over_the_cap_are_file_too_large() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path()).unwrap();
        let p = root.resolve("big.txt").unwrap();
        std::fs::write(&p.abs, vec![b'x'; 2048]).unwrap();
        assert_eq!(read(&p, 1024).unwrap_err().code, ErrorCode::FileTooLarge);
        assert_eq!(read(&p, 4096).unwrap().unwrap().len(), 2048);
        assert_eq!(read(&root.resolve("none.txt").unwrap(), 10).unwrap(), None);
    }

    /// Make `path` look untouched for `age`.
    fn aged(path: &Path, age: std::time::Duration) {
        let f = std::fs::File::options().append(true).open(path).unwrap();
        f.set_modified(std::time::SystemTime::now() - age).unwrap();
    }

    /// Stale temps of patchgate's are swept; a fresh one (another process's write under
    /// way) and a user's file, however old or named, are kept. Regression: every temp was
    /// removed whatever its age, so a gate starting removed the temp file of a write another
    /// process was making, and that write failed.
    #[test]
    fn stray_temp_files_are_cleaned() {
        let dir = tempfile::tempdir().unwrap();
        let old = STALE_TEMP_AGE + std::time::Duration::from_secs(60);
        std::fs::create_dir_all(dir.path().join("sub")).unwrap();
        let stale = dir.path().join("sub/.x.rs.patchgate-0011aa.tmp");
        let fresh = dir.path().join("sub/.y.rs.patchgate-0022bb.tmp");
        let users = dir.path().join("sub/x.rs.tmp");
        for (p, bytes) in [(&stale, "half"), (&fresh, "half"), (&users, "mine")] {
            std::fs::write(p, bytes).unwrap();
        }
        std::fs::write(dir.path().join("sub/x.rs"), b"whole").unwrap();
        aged(&stale, old);
        aged(&users, old);
        assert_eq!(clean_stray_temps(dir.path()), 1);
        assert!(!stale.exists());
        assert!(fresh.exists(), "a write under way lost its temp file");
        assert!(users.exists() && dir.path().join("sub/x.rs").exists());
    }
}
