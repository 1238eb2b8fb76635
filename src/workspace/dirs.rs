//! Directories made durable (docs/DESIGN.md §7): each directory made is synced in the one
//! holding it before the making returns, so a crash cannot lose it, nor what is later made
//! durable inside it (the journal's directory, a store's, the state directory).

use std::path::Path;

/// Create `dir` and its missing parents (each with the permission bits `mode`, less the
/// umask), and make each one made durable: the directory holding it is synced (a sync of it
/// begun after the making, through its group: `group_sync`) before this returns, so a crash
/// cannot lose a directory whose making returned, nor with it what is later made durable
/// inside it. A missing part another writer makes meanwhile is synced in its parent too (its
/// maker may not have synced it yet).
pub(crate) fn make_durable(dir: &Path, mode: u32) -> std::io::Result<()> {
    let mut missing = Vec::new();
    let mut at = dir;
    loop {
        match std::fs::metadata(at) {
            // Found, perhaps made by an earlier call whose sync in its parent failed: not
            // trusted while a sync of a directory holding it failed.
            Ok(_) => {
                trust_existing(at)?;
                break;
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => missing.push(at),
            Err(e) => return Err(e),
        }
        match at.parent() {
            Some(p) if !p.as_os_str().is_empty() => at = p,
            _ => break,
        }
    }
    let mut b = std::fs::DirBuilder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        b.mode(mode);
    }
    #[cfg(not(unix))]
    let _ = mode;
    for made in missing.iter().rev() {
        match b.create(made) {
            Ok(()) => super::synced::made(made),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && made.is_dir() => {}
            Err(e) => return Err(e),
        }
        let parent = match made.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        sync_now(parent)?;
    }
    Ok(())
}

/// Check that the existing directory `dir` may be trusted as durable: when a sync of the
/// directory holding it, or of one above, failed in this process (`group_sync`: an entry
/// made in it before the failure may be lost on disk though it shows), that directory is
/// synced again, which fails while that mark stands. An earlier call that made `dir` and
/// failed at its parent's sync must not be taken for one that succeeded. Nothing is looked
/// up while no sync failed in this process.
pub(crate) fn trust_existing(dir: &Path) -> std::io::Result<()> {
    use super::group_sync;
    if !group_sync::any_failed() {
        return Ok(());
    }
    for parent in dir.ancestors().skip(1) {
        let parent = if parent.as_os_str().is_empty() {
            Path::new(".")
        } else {
            parent
        };
        let m = std::fs::metadata(parent)?;
        if group_sync::failed(group_sync::key_in(&m)) {
            sync_now(parent)?;
        }
    }
    Ok(())
}

/// Return once a sync of `dir` begun now has ended (through its group: `group_sync`): what
/// was made in it a moment ago is durable then. An error when that sync failed, or an
/// earlier one of `dir` did in this process.
#[cfg(unix)]
pub(crate) fn sync_now(dir: &Path) -> std::io::Result<()> {
    super::group_sync::for_dir(std::fs::File::open(dir)?)?.settle()
}

#[cfg(not(unix))]
pub(crate) fn sync_now(_dir: &Path) -> std::io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    /// Directories made for state are synced in their parents, each one made (and the
    /// deepest existing one), so a crash cannot lose them once made. Regression: the journal's
    /// directory, the pre-image store's parent and the intents' directory were made with
    /// `create_dir_all` and never synced in their parents.
    #[cfg(unix)]
    #[test]
    fn directories_made_durable_are_synced_in_their_parents() {
        use super::super::group_sync::syncs_of;
        use super::*;
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path().join("top");
        std::fs::create_dir(&top).unwrap();
        let before = syncs_of(&top);
        make_durable(&top.join("a/b/c"), 0o700).unwrap();
        assert!(syncs_of(&top) > before, "the top directory was not synced");
        for d in ["a", "a/b"] {
            assert!(syncs_of(&top.join(d)) > 0, "{d} was not synced");
        }
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(top.join("a/b/c"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700);
        // Existing: nothing to make, nothing synced.
        let synced = syncs_of(&top);
        make_durable(&top.join("a/b/c"), 0o700).unwrap();
        assert_eq!(syncs_of(&top), synced);
    }

    /// A directory whose making was not made durable (the sync of its parent failed) is not
    /// trusted when it is asked for again: its parent is synced again and, since an earlier
    /// sync of it failed, the making fails again. Regression: the second call found the
    /// directory there and returned `Ok` without syncing anything.
    #[cfg(unix)]
    #[test]
    fn a_directory_whose_parent_sync_failed_is_not_trusted_next_time() {
        use super::super::group_sync::{fail_a_sync_of, syncs_of};
        use super::*;
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path().join("top");
        std::fs::create_dir(&top).unwrap();
        let failed = fail_a_sync_of(&top);
        assert!(make_durable(&top.join("a"), 0o700).is_err());
        let before = syncs_of(&top);
        let again = make_durable(&top.join("a"), 0o700);
        assert!(syncs_of(&top) > before, "top was not synced again");
        assert!(again.is_err(), "a/ was trusted though top's sync failed");
        // Nor is a directory made inside it.
        assert!(make_durable(&top.join("a/b"), 0o700).is_err());
        drop(failed);
        make_durable(&top.join("a/b"), 0o700).unwrap();
    }
}
