//! Directories private to this user: created mode 0700, and an existing one trusted only when
//! it is a real directory (not a link), owned by this user, and writable by nobody else. The
//! state directory, the runtime note directory, the batch intents and the stored reviews live
//! in such places; anything another user could have planted there is never believed, and a
//! file there is read only when it is this user's own that nobody else can write.

use std::io;
use std::path::Path;

/// This process's user id (0 where there are none).
#[cfg(unix)]
pub(crate) fn uid() -> u32 {
    rustix::process::getuid().as_raw()
}

#[cfg(not(unix))]
pub(crate) fn uid() -> u32 {
    0
}

/// Create `dir` (mode 0700; its parents as usual), synced in its parent as each parent made
/// is in its own (`dirs::make_durable`: a crash must not lose what is stored there), or
/// check that the existing one is private ([`check`]) and not one whose parent's sync
/// failed in this process (`dirs::trust_existing`).
pub(crate) fn ensure(dir: &Path) -> io::Result<()> {
    let parent = dir.parent().filter(|p| !p.as_os_str().is_empty());
    if let Some(parent) = parent {
        super::dirs::make_durable(parent, 0o777)?;
    }
    let mut b = std::fs::DirBuilder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        b.mode(0o700);
    }
    match b.create(dir) {
        Ok(()) => {
            super::synced::made(dir);
            super::dirs::sync_now(parent.unwrap_or(Path::new(".")))
        }
        // Perhaps made by an earlier call whose sync in its parent failed: not trusted then.
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            tighten(dir)?;
            super::dirs::trust_existing(dir)
        }
        Err(e) => Err(e),
    }
}

/// An existing directory of this user's that only its group may write too (made under a
/// `umask` of 002, as on systems with a group per user) is made 0700; one anybody may write,
/// or another user's, is refused ([`check`]).
fn tighten(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let m = std::fs::symlink_metadata(dir)?;
        if m.is_dir() && m.uid() == uid() && m.mode() & 0o022 == 0o020 {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
            tracing::info!("{} was writable by its group: made 0700", dir.display());
        }
    }
    check(dir)
}

/// Check that `dir` (inside a private directory) is a real directory of this user's that
/// not everybody can write: its group may (directories made under a `umask` of 002), since
/// the private directory around it keeps everybody else out.
pub(crate) fn check_inside(dir: &Path) -> io::Result<()> {
    let m = real_dir(dir)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if m.uid() != uid() || m.mode() & 0o002 != 0 {
            return Err(io::Error::other(format!(
                "{} is not this user's own (owner {}, mode {:o})",
                dir.display(),
                m.uid(),
                m.mode() & 0o777
            )));
        }
    }
    #[cfg(not(unix))]
    let _ = m;
    Ok(())
}

/// Check that state may be believed from `dir` (a store inside the private state directory,
/// such as the batch intents): it and the directory holding it are real directories of this
/// user's that not everybody can write ([`check_inside`]); a missing one holds nothing yet.
pub(crate) fn check_store(dir: &Path) -> io::Result<()> {
    for d in [Some(dir), dir.parent()].into_iter().flatten() {
        match check_inside(d) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// The metadata of `dir` when it is a real directory (not a link to one, nor a file).
fn real_dir(dir: &Path) -> io::Result<std::fs::Metadata> {
    let m = std::fs::symlink_metadata(dir)?;
    if !m.is_dir() {
        return Err(io::Error::other(format!(
            "{} is not a directory (a link or a file)",
            dir.display()
        )));
    }
    Ok(m)
}

/// Check that `dir` is a real directory of this user's that nobody else can write; the error
/// says what is wrong.
pub(crate) fn check(dir: &Path) -> io::Result<()> {
    let m = real_dir(dir)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if m.uid() != uid() {
            return Err(io::Error::other(format!(
                "{} belongs to user {}, not to this user ({})",
                dir.display(),
                m.uid(),
                uid()
            )));
        }
        if m.mode() & 0o022 != 0 {
            return Err(io::Error::other(format!(
                "{} can be written by other users (mode {:o})",
                dir.display(),
                m.mode() & 0o777
            )));
        }
    }
    Ok(())
}

/// Whether `path` is a regular file of this user's (not a link, a FIFO or a device), checked
/// before it is opened: opening a FIFO would wait for a writer forever.
pub(crate) fn is_own_file(path: &Path) -> bool {
    let Ok(m) = std::fs::symlink_metadata(path) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        m.is_file() && m.uid() == uid()
    }
    #[cfg(not(unix))]
    {
        m.is_file()
    }
}

/// The bytes of `path` when it is a regular file of this user's that nobody else can write,
/// of at most `max` bytes: opened without following a link (nor waiting on a FIFO) and
/// checked on the file opened, so nothing can be swapped in between. The error says what is
/// wrong (a link, another user's file, one others can write, one too large).
pub(crate) fn read_own_file(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    use std::io::Read;
    #[cfg(unix)]
    let file = {
        use rustix::fs::{Mode, OFlags};
        use std::os::unix::fs::MetadataExt;
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK;
        let fd = rustix::fs::open(path, flags, Mode::empty()).map_err(|e| {
            if e == rustix::io::Errno::LOOP {
                io::Error::other(format!("{} is a symbolic link", path.display()))
            } else {
                io::Error::from(e)
            }
        })?;
        let file = std::fs::File::from(fd);
        let m = file.metadata()?;
        let wrong = if !m.is_file() {
            Some("is not a regular file".to_string())
        } else if m.uid() != uid() {
            Some(format!(
                "belongs to user {}, not to this user ({})",
                m.uid(),
                uid()
            ))
        } else if m.mode() & 0o022 != 0 {
            Some(format!(
                "can be written by other users (mode {:o})",
                m.mode() & 0o777
            ))
        } else {
            None
        };
        if let Some(why) = wrong {
            return Err(io::Error::other(format!("{} {why}", path.display())));
        }
        file
    };
    #[cfg(not(unix))]
    let file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    if len > max {
        return Err(io::Error::other(format!(
            "{} is {len} bytes, over the {max}-byte limit",
            path.display()
        )));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    // Never more than the cap, even if the file grows meanwhile.
    file.take(max.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(io::Error::other(format!(
            "{} grew over the {max}-byte limit while read",
            path.display()
        )));
    }
    Ok(bytes)
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn a_new_directory_is_private_and_a_shared_or_linked_one_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("a/b/state");
        ensure(&dir).unwrap();
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        ensure(&dir).unwrap();
        // Made under a umask of 002: its group only may write, so it is made 0700.
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o770)).unwrap();
        ensure(&dir).unwrap();
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = ensure(&dir).unwrap_err().to_string();
        assert!(e.contains("can be written by other users"), "{e}");
        // Inside a private directory, a group-writable one is fine, an open one is not.
        let inner = dir.join("journal");
        std::fs::create_dir(&inner).unwrap();
        std::fs::set_permissions(&inner, std::fs::Permissions::from_mode(0o775)).unwrap();
        check_inside(&inner).unwrap();
        std::fs::set_permissions(&inner, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(check_inside(&inner).is_err());
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(tmp.path().join("a"), &link).unwrap();
        let e = check(&link).unwrap_err().to_string();
        assert!(e.contains("not a directory"), "{e}");
    }

    /// A private directory whose sync in its parent failed is not trusted when it is
    /// ensured again: the parent is synced again, and that fails while an earlier sync of it
    /// failed. Regression: the second call found it there, checked its mode and returned `Ok`.
    #[test]
    fn a_private_directory_whose_parent_sync_failed_is_not_trusted_next_time() {
        use super::super::group_sync::{fail_a_sync_of, syncs_of};
        let tmp = tempfile::tempdir().unwrap();
        let failed = fail_a_sync_of(tmp.path());
        let dir = tmp.path().join("state");
        assert!(ensure(&dir).is_err());
        let before = syncs_of(tmp.path());
        let again = ensure(&dir);
        assert!(
            syncs_of(tmp.path()) > before,
            "its parent was not synced again"
        );
        assert!(
            again.is_err(),
            "state/ was trusted though its parent's sync failed"
        );
        drop(failed);
        ensure(&dir).unwrap();
    }

    #[test]
    fn only_a_regular_file_counts_as_ones_own() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("f");
        std::fs::write(&file, b"x").unwrap();
        assert!(is_own_file(&file));
        let fifo = tmp.path().join("p");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|s| s.success()) {
            assert!(!is_own_file(&fifo));
        }
        assert!(!is_own_file(tmp.path()));
    }
}
