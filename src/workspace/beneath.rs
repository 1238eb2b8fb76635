//! Writing beneath the root at write time (docs/DESIGN.md §7): every directory from the root down to
//! the file is opened relative to the one above it without following symlinks, and the temp
//! file, the rename, a deletion or a mode change happen relative to the last directory's
//! handle. A directory swapped for a symlink after the path was checked fails the write
//! (`ELOOP`/`ENOTDIR`) instead of sending it elsewhere.

use std::ffi::OsString;
use std::io::{self, Write};
use std::os::fd::OwnedFd;
#[cfg(test)]
use std::path::Path;
use std::path::PathBuf;

use rustix::fs::{AtFlags, Mode, OFlags};

use super::paths::SafePath;

/// The root directory of `path` and the names from it down to the file.
fn split(path: &SafePath) -> io::Result<(PathBuf, Vec<OsString>)> {
    let names: Vec<OsString> = path.rel.split('/').map(OsString::from).collect();
    let root = path
        .abs
        .ancestors()
        .nth(names.len())
        .ok_or_else(|| io::Error::other("the path is not under its root"))?;
    Ok((root.to_path_buf(), names))
}

fn dir_flags() -> OFlags {
    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
}

/// The directory holding `path`'s file, opened from the root without following a symlink;
/// missing directories are created (mode 0777 less the umask) when `create`, each synced
/// in the directory holding it (a crash must not lose the directory of a file whose write
/// returned: the write syncs only the file's own directory), and existing ones are not
/// trusted while a sync of the directory holding them failed (`trust_entries_of`).
fn open_parent(path: &SafePath, create: bool) -> io::Result<(OwnedFd, OsString)> {
    let (root, mut names) = split(path)?;
    let name = names.pop().ok_or_else(|| io::Error::other("empty path"))?;
    let mut dir = rustix::fs::open(&root, dir_flags(), Mode::empty())?;
    for n in &names {
        let next = match rustix::fs::openat(&dir, n.as_os_str(), dir_flags(), Mode::empty()) {
            Err(rustix::io::Errno::NOENT) if create => {
                match rustix::fs::mkdirat(&dir, n.as_os_str(), Mode::from_bits_truncate(0o777)) {
                    Ok(()) => super::synced::made_in(&dir, n),
                    Err(rustix::io::Errno::EXIST) => {}
                    Err(e) => return Err(e.into()),
                }
                // Made here or by another writer a moment ago: durable either way.
                super::group_sync::for_dir(&dir)?.settle()?;
                rustix::fs::openat(&dir, n.as_os_str(), dir_flags(), Mode::empty())?
            }
            // Found, perhaps made by an earlier write whose sync of `dir` failed: not trusted
            // for a new file while that failure stands.
            Ok(next) if create => {
                trust_entries_of(&dir)?;
                next
            }
            other => other?,
        };
        dir = next;
    }
    Ok((dir, name))
}

/// Check that the entries of the directory open as `dir` may be trusted as durable: when a
/// sync of it failed in this process (`group_sync`: a directory made in it before may be lost
/// on disk though it shows), it is synced again, which fails while that failure stands.
/// Nothing is looked up while no sync failed in this process.
fn trust_entries_of(dir: &OwnedFd) -> io::Result<()> {
    if !super::group_sync::any_failed() {
        return Ok(());
    }
    let g = super::group_sync::for_dir(dir)?;
    if super::group_sync::failed(g.key()) {
        g.settle()?;
    }
    Ok(())
}

/// The permission bits a new file gets by default (0666 less the process umask).
fn default_mode() -> u32 {
    let umask = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Umask:"))
                .and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
        })
        .unwrap_or(0o022);
    0o666 & !umask
}

/// Write `bytes` as `path` atomically: a temp file `temp_name` created 0600 beside it (no
/// symlink followed, nothing overwritten), written, given `mode` (else the file's own mode,
/// else the default), synced, renamed over the file and the directory synced (renames that
/// land at once into one directory share its sync).
pub(crate) fn write(
    path: &SafePath,
    temp_name: &str,
    bytes: &[u8],
    mode: Option<u32>,
) -> io::Result<()> {
    let (dir, name) = open_parent(path, true)?;
    let existing = match rustix::fs::statat(&dir, name.as_os_str(), AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st)
            if rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::Symlink =>
        {
            return Err(io::Error::other("the file was replaced by a symlink"));
        }
        Ok(st) => Some(st.st_mode & 0o7777),
        Err(rustix::io::Errno::NOENT) => None,
        Err(e) => return Err(e.into()),
    };
    let fd = rustix::fs::openat(
        &dir,
        temp_name,
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_bits_truncate(0o600),
    )?;
    let result = (|| -> io::Result<()> {
        let mut file = std::fs::File::from(fd);
        file.write_all(bytes)?;
        let final_mode = mode.or(existing).unwrap_or_else(default_mode);
        rustix::fs::fchmod(&file, Mode::from_bits_truncate(final_mode))?;
        super::synced::sync(&file, super::synced::Flush::All)?;
        drop(file);
        // Renamed, then the directory synced: renames that land at once into it share one
        // `fsync` (`group_sync`).
        super::group_sync::for_dir(&dir)?.write(|| {
            Ok(rustix::fs::renameat(
                &dir,
                temp_name,
                &dir,
                name.as_os_str(),
            )?)
        })
    })();
    if result.is_err() {
        let _ = rustix::fs::unlinkat(&dir, temp_name, AtFlags::empty());
    }
    result
}

/// Open `path`'s file for reading, following no symlink on the way or at the end, with its
/// metadata (taken once, from the open file); `None` when it (or a directory above it) does
/// not exist.
pub(crate) fn open_read(path: &SafePath) -> io::Result<Option<(std::fs::File, std::fs::Metadata)>> {
    let (dir, name) = match open_parent(path, false) {
        Ok(found) => found,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    match rustix::fs::openat(
        &dir,
        name.as_os_str(),
        // Non-blocking: a pipe swapped in must not hang the read.
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
        Mode::empty(),
    ) {
        Ok(fd) => {
            let file = std::fs::File::from(fd);
            let meta = file.metadata()?;
            if !meta.is_file() {
                return Err(io::Error::other("not a regular file"));
            }
            // The path's check refused several hard links, but a link may be swapped in
            // since: the opened file itself is judged (another name may be outside the root).
            if std::os::unix::fs::MetadataExt::nlink(&meta) > 1 {
                return Err(io::Error::other(
                    "it has several hard links, and another of them may be outside the root",
                ));
            }
            Ok(Some((file, meta)))
        }
        Err(rustix::io::Errno::NOENT) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Delete `path`'s file (not following a symlink on the way); a missing file is fine.
pub(crate) fn remove(path: &SafePath) -> io::Result<()> {
    let (dir, name) = match open_parent(path, false) {
        Ok(found) => found,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    match rustix::fs::unlinkat(&dir, name.as_os_str(), AtFlags::empty()) {
        Ok(()) | Err(rustix::io::Errno::NOENT) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Give `path`'s file the permission bits `mode` (the file itself, never a symlink's target):
/// the file is opened, judged as [`open_read`] judges it (a regular file with one name: a
/// hard link swapped in since the path's check may have its other name outside the root),
/// and changed through that handle (`fchmod`), never again by its path.
pub(crate) fn chmod(path: &SafePath, mode: u32) -> io::Result<()> {
    let (dir, name) = open_parent(path, false)?;
    let fd = rustix::fs::openat(
        &dir,
        name.as_os_str(),
        // Non-blocking: a pipe swapped in must not hang the open.
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
        Mode::empty(),
    )?;
    let st = rustix::fs::fstat(&fd)?;
    if rustix::fs::FileType::from_raw_mode(st.st_mode) != rustix::fs::FileType::RegularFile {
        return Err(io::Error::other("not a regular file"));
    }
    if st.st_nlink > 1 {
        return Err(io::Error::other(
            "it has several hard links, and another of them may be outside the root",
        ));
    }
    rustix::fs::fchmod(&fd, Mode::from_bits_truncate(mode))?;
    Ok(())
}

/// Whether `p` is a directory reached without a symlink from `root` (for tests).
#[cfg(test)]
fn reaches(root: &Path, rel: &str) -> bool {
    let path = SafePath {
        abs: root.join(rel),
        rel: rel.to_string(),
    };
    open_parent(&path, false).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_swapped_for_a_symlink_stops_the_write() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        let path = SafePath {
            abs: root.join("sub/a.txt"),
            rel: "sub/a.txt".into(),
        };
        write(&path, ".a.tmp", b"one\n", None).unwrap();
        assert_eq!(std::fs::read(root.join("sub/a.txt")).unwrap(), b"one\n");
        assert!(reaches(&root, "sub/a.txt"));
        // The checked path's directory becomes a symlink out of the root.
        std::fs::remove_dir_all(root.join("sub")).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("sub")).unwrap();
        std::fs::write(outside.join("a.txt"), "outside\n").unwrap();
        assert!(
            open_read(&path).is_err(),
            "nothing is read through the swapped directory"
        );
        std::fs::remove_file(outside.join("a.txt")).unwrap();
        // Nor a file swapped for a hard link to one outside (a reader's finding: the count
        // was checked only on the path, before the open).
        std::fs::remove_file(root.join("sub")).unwrap();
        std::fs::create_dir(root.join("sub")).unwrap();
        std::fs::write(outside.join("linked.txt"), "outside\n").unwrap();
        std::fs::hard_link(outside.join("linked.txt"), root.join("sub/a.txt")).unwrap();
        assert!(
            open_read(&path).is_err(),
            "nothing is read through a hard link"
        );
        // Nor is its mode changed (a reader's finding: `chmod` counted no links, and a patch's
        // mode change made the file outside executable).
        let mode_of = |p: &Path| {
            use std::os::unix::fs::PermissionsExt;
            std::fs::metadata(p).unwrap().permissions().mode() & 0o7777
        };
        let before = mode_of(&outside.join("linked.txt"));
        assert!(
            chmod(&path, 0o777).is_err(),
            "a hard link's mode was changed"
        );
        assert_eq!(mode_of(&outside.join("linked.txt")), before);
        std::fs::remove_file(root.join("sub/a.txt")).unwrap();
        std::fs::remove_file(outside.join("linked.txt")).unwrap();
        std::fs::remove_dir(root.join("sub")).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("sub")).unwrap();
        assert!(write(&path, ".a.tmp", b"two\n", None).is_err());
        assert!(chmod(&path, 0o755).is_err());
        assert!(remove(&path).is_err());
        assert_eq!(
            std::fs::read_dir(&outside).unwrap().count(),
            0,
            "nothing lands outside"
        );
    }

    /// The directories a write makes for a new file are each synced in the directory holding
    /// them. Regression: only the file's own directory was synced (after the rename), so a
    /// crash could lose the new directories, and the file in them, after the write returned.
    #[test]
    fn directories_made_for_a_new_file_are_synced_in_their_parents() {
        use super::super::group_sync::syncs_of;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        std::fs::create_dir(&root).unwrap();
        let path = SafePath {
            abs: root.join("new/deeper/a.txt"),
            rel: "new/deeper/a.txt".into(),
        };
        let before = syncs_of(&root);
        write(&path, ".a.tmp", b"one\n", None).unwrap();
        assert!(
            syncs_of(&root) > before,
            "the root was not synced for `new`"
        );
        assert!(
            syncs_of(&root.join("new")) > 0,
            "`new` was not synced for `deeper`"
        );
        assert_eq!(std::fs::read(&path.abs).unwrap(), b"one\n");
    }

    /// A directory a write made whose sync in its parent failed is not trusted by the next
    /// write: the parent is synced again, and the write fails while an earlier sync of it
    /// failed. Regression: the next write opened the directory, found it there, and returned
    /// `Ok` (its file's directory synced, the directory's own entry never).
    #[test]
    fn a_directory_whose_parent_sync_failed_is_not_trusted_by_the_next_write() {
        use super::super::group_sync::{fail_a_sync_of, syncs_of};
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        std::fs::create_dir(&root).unwrap();
        let path = SafePath {
            abs: root.join("new/a.txt"),
            rel: "new/a.txt".into(),
        };
        let failed = fail_a_sync_of(&root);
        assert!(write(&path, ".a.tmp", b"one\n", None).is_err());
        let before = syncs_of(&root);
        let again = write(&path, ".a.tmp", b"one\n", None);
        assert!(syncs_of(&root) > before, "the root was not synced again");
        assert!(
            again.is_err(),
            "new/ was trusted though the root's sync failed"
        );
        drop(failed);
        write(&path, ".a.tmp", b"two\n", None).unwrap();
        assert_eq!(std::fs::read(&path.abs).unwrap(), b"two\n");
    }

    #[test]
    fn the_temp_file_is_private_and_the_mode_is_kept_or_set() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = SafePath {
            abs: dir.path().join("a.sh"),
            rel: "a.sh".into(),
        };
        std::fs::write(&path.abs, "x").unwrap();
        std::fs::set_permissions(&path.abs, std::fs::Permissions::from_mode(0o750)).unwrap();
        write(&path, ".a.tmp", b"y", None).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode(&path.abs), 0o750);
        write(&path, ".a.tmp", b"z", Some(0o644)).unwrap();
        assert_eq!(mode(&path.abs), 0o644);
        assert!(!dir.path().join(".a.tmp").exists());
    }
}
