//! Where patchgate keeps its own state: the decision journal and the discovery file of a
//! running gate. The directory this process chose with [`use_state_dir`] (the demo's
//! temporary one), else `$PATCHGATE_STATE_DIR`, else the platform's state directory +
//! `patchgate/` (in the temp directory when there is no home). It is created private to
//! this user, and one that is not private is refused ([`ensure_state_dir`]).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The state directory this process chose for itself, if any.
static CHOSEN: OnceLock<PathBuf> = OnceLock::new();

/// Keep this process's state (journal, pre-images, locks, log, search index, discovery) in
/// `dir` instead of the user's state directory: `patchgate demo` keeps everything in its
/// temporary directory. Once per process, before anything reads the state directory;
/// `false` when a directory was chosen already (the first choice stays).
pub fn use_state_dir(dir: PathBuf) -> bool {
    CHOSEN.set(dir).is_ok()
}

/// The state directory (not created).
pub(crate) fn state_dir() -> PathBuf {
    if let Some(dir) = CHOSEN.get() {
        return dir.clone();
    }
    if let Some(dir) = std::env::var_os("PATCHGATE_STATE_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    #[cfg(windows)]
    if let Some(local) = std::env::var_os("LOCALAPPDATA") {
        return PathBuf::from(local).join("patchgate");
    }
    if let Some(xdg) = std::env::var_os("XDG_STATE_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(xdg).join("patchgate");
    }
    match std::env::var_os("HOME") {
        Some(home) => PathBuf::from(home).join(".local/state/patchgate"),
        // One per user: another user's cannot stand in the way (or in for it).
        None => std::env::temp_dir().join(format!("patchgate-state-{}", super::private::uid())),
    }
}

/// The state directory, created private to this user (mode 0700) when missing; an existing
/// one is used only when it is a real directory of this user's that nobody else can write.
/// Another user could otherwise pre-create it (the fallback in the shared temp directory,
/// when `HOME` is unset) and plant tokens and batch intents for a gate to adopt.
pub fn ensure_state_dir() -> std::io::Result<PathBuf> {
    let dir = state_dir();
    super::private::ensure(&dir).map_err(|e| {
        std::io::Error::other(format!(
            "refusing the state directory {}: {e}; if it is yours and nobody else could have \
             written to it, `chmod 700` it; else set PATCHGATE_STATE_DIR to a directory of your \
             own",
            dir.display()
        ))
    })?;
    Ok(dir)
}

/// A short stable name for a root, for per-root files in the state directory.
pub fn root_key(root: &Path) -> String {
    let full = super::digest::hash(root.to_string_lossy().as_bytes());
    let name: String = root
        .file_name()
        .map(|n| {
            n.to_string_lossy()
                .chars()
                .filter(|c| c.is_alphanumeric() || *c == '-' || *c == '_')
                .take(32)
                .collect()
        })
        .unwrap_or_default();
    format!("{name}-{}", &full[..12])
}

/// Whether process `pid` is alive.
pub(crate) fn pid_alive(pid: u32) -> bool {
    #[cfg(unix)]
    {
        let Some(pid) = i32::try_from(pid)
            .ok()
            .and_then(rustix::process::Pid::from_raw)
        else {
            return false;
        };
        // Signal 0 only asks whether the process exists (EPERM: it does, not ours).
        match rustix::process::test_kill_process(pid) {
            Ok(()) => true,
            Err(e) => e == rustix::io::Errno::PERM,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        true
    }
}
