//! Directories private to this user: created mode 0700, and an existing one trusted only when
//! it is a real directory (not a link), owned by this user, and writable by nobody else. The
//! state directory, the runtime note directory and the batch intents live in such places;
//! anything another user could have planted there is never believed.

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

/// Create `dir` (mode 0700; its parents as usual) or check that the existing one is private
/// ([`check`]).
pub(crate) fn ensure(dir: &Path) -> io::Result<()> {
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    let mut b = std::fs::DirBuilder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        b.mode(0o700);
    }
    match b.create(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => check(dir),
        Err(e) => Err(e),
    }
}

/// Check that `dir` is a real directory of this user's that nobody else can write; the error
/// says what is wrong.
pub(crate) fn check(dir: &Path) -> io::Result<()> {
    let m = std::fs::symlink_metadata(dir)?;
    if !m.is_dir() {
        return Err(io::Error::other(format!(
            "{} is not a directory (a link or a file)",
            dir.display()
        )));
    }
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
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = ensure(&dir).unwrap_err().to_string();
        assert!(e.contains("can be written by other users"), "{e}");
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(tmp.path().join("a"), &link).unwrap();
        let e = check(&link).unwrap_err().to_string();
        assert!(e.contains("not a directory"), "{e}");
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
