//! Paths under the root (docs/DESIGN.md §7): every path an agent or a patch names is resolved once,
//! here, into a [`SafePath`] inside the root — or refused with `INVALID_PATH`.
//!
//! Refused: `..` that escapes, absolute paths outside the root, symlinks (to files or
//! directories) that lead out, `.git/`, devices, pipes, sockets and `/proc`-like trees, NUL
//! bytes, the root itself and directories. Honest names such as `a..b.py` or `...` are fine.
//! The caller never hands the raw path to the operating system: `..` is resolved lexically,
//! then the deepest existing ancestor is canonicalised (following symlinks) and checked.

use std::path::{Component, Path, PathBuf};

use super::io_error::io_error;
use crate::error::{Error, ErrorCode, Result};

/// A canonical root directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    canonical: PathBuf,
}

/// A path proved to be inside the root.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SafePath {
    /// The absolute path to operate on (symlinks inside the root resolved).
    pub abs: PathBuf,
    /// The path relative to the root with `/` separators, for messages and rules.
    pub rel: String,
}

fn invalid(path: &str, why: impl std::fmt::Display) -> Error {
    let shown: String = path
        .chars()
        .take(200)
        .map(|c| if c == '\0' { '␀' } else { c })
        .collect();
    Error::new(ErrorCode::InvalidPath, format!("`{shown}`: {why}"))
}

/// Refuses what is not a file to edit at `abs`: a directory, a device, pipe or socket, or a
/// file with several hard links (another of its names may be outside the root).
fn check_kind(abs: &Path, user: &str) -> Result<()> {
    if let Ok(meta) = std::fs::metadata(abs) {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            // Another name of the same file may live outside the root.
            if meta.is_file() && meta.nlink() > 1 {
                return Err(invalid(
                    user,
                    "it has several hard links, and another of them may be outside the root",
                ));
            }
        }
        if meta.is_dir() {
            return Err(invalid(user, "it is a directory"));
        }
        if !meta.is_file() {
            return Err(invalid(
                user,
                "it is not a regular file (a device, pipe or socket)",
            ));
        }
    }
    Ok(())
}

/// Refuses a path whose `..` follows a symlinked directory: read lexically (`link/..` is
/// the directory holding `link`) and physically (the parent of the link's target) it names
/// two places.
fn physical_agrees(joined: &Path, user: &str) -> Result<()> {
    let mut prefix = PathBuf::new();
    for component in joined.components() {
        if component == Component::ParentDir {
            let resolved = std::fs::canonicalize(&prefix).ok();
            if resolved.is_some_and(|r| r != prefix) {
                return Err(invalid(
                    user,
                    "`..` after a symlinked directory means one place read as written and another \
                     on disk; write the path without it",
                ));
            }
            prefix.pop();
        } else if component != Component::CurDir {
            prefix.push(component.as_os_str());
        }
    }
    Ok(())
}

impl Root {
    /// The root at `dir`, which must be an existing directory.
    pub fn new(dir: &Path) -> Result<Root> {
        let canonical = std::fs::canonicalize(dir).map_err(|e| {
            Error::new(
                ErrorCode::InvalidPath,
                format!("the root {} cannot be used: {e}", dir.display()),
            )
        })?;
        if !canonical.is_dir() {
            return Err(Error::new(
                ErrorCode::InvalidPath,
                format!("the root {} is not a directory", dir.display()),
            ));
        }
        Ok(Root { canonical })
    }

    /// The canonical root directory.
    pub fn path(&self) -> &Path {
        &self.canonical
    }

    /// Resolve a path as an agent or a patch wrote it (relative to the root, or absolute).
    pub fn resolve(&self, user: &str) -> Result<SafePath> {
        if user.trim().is_empty() {
            return Err(invalid(user, "the path is empty"));
        }
        if user.contains('\0') {
            return Err(invalid(user, "the path holds a NUL byte"));
        }
        // Windows separators are separators: `..\..\x` must not pass as a file name.
        let normalized = user.replace('\\', "/");
        let expanded = match normalized.strip_prefix("~/") {
            Some(rest) => match std::env::var_os("HOME") {
                Some(home) => PathBuf::from(home).join(rest),
                None => return Err(invalid(user, "`~` cannot be expanded (HOME is not set)")),
            },
            None => PathBuf::from(&normalized),
        };
        let joined = if expanded.is_absolute() {
            expanded
        } else {
            self.canonical.join(expanded)
        };
        let lexical = lexical(&joined, user)?;
        physical_agrees(&joined, user)?;
        let abs = follow_existing(&lexical, user, &normalized)?;
        let Ok(relative) = abs.strip_prefix(&self.canonical) else {
            let why = if lexical.starts_with(&self.canonical) {
                "it leads outside the root through a symlink"
            } else {
                "it is outside the root"
            };
            return Err(invalid(
                user,
                format!("{why} ({})", self.canonical.display()),
            ));
        };
        let parts: Vec<String> = relative
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        check_place(&parts, &abs, user)?;
        check_kind(&abs, user)?;
        check_outside_state(&abs, user)?;
        Ok(SafePath {
            abs,
            rel: parts.join("/"),
        })
    }
}

impl Root {
    /// `user` as a person reads it beside the gate's other paths: relative to the root when
    /// it lies under it as written (read lexically, nothing on disk looked at: for showing a
    /// path that may not resolve, such as a failed call's), else as written.
    pub fn shown(&self, user: &str) -> String {
        let normalized = user.replace('\\', "/");
        let joined = self.canonical.join(&normalized);
        let rel = lexical(&joined, user)
            .ok()
            .and_then(|l| l.strip_prefix(&self.canonical).ok().map(Path::to_path_buf));
        match rel {
            Some(r) if !r.as_os_str().is_empty() => r
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/"),
            _ => user.to_string(),
        }
    }
}

impl Root {
    /// `user`'s place with its directory resolved as [`Root::resolve`] resolves a path (links
    /// inside the root followed, out of it refused) and its own name kept, not followed: a
    /// symlink there is named itself, not its target (to remove it before a file is written
    /// in its place, as `git apply --reject` does for a `.rej` file). What is there is not
    /// checked; [`Root::resolve`] checks it once a link is gone.
    pub fn resolve_name(&self, user: &str) -> Result<SafePath> {
        let normalized = user.replace('\\', "/");
        let (dir, name) = match normalized.rsplit_once('/') {
            Some((dir, name)) => (Some(dir), name),
            None => (None, normalized.as_str()),
        };
        if matches!(name, "" | "." | "..") {
            return Err(invalid(user, "it does not end in a file name"));
        }
        let dir_abs = match dir.filter(|d| !d.is_empty()) {
            Some(dir) => {
                let joined = self.canonical.join(dir);
                let lexical = lexical(&joined, user)?;
                physical_agrees(&joined, user)?;
                follow_existing(&lexical, user, &normalized)?
            }
            None => self.canonical.clone(),
        };
        let abs = dir_abs.join(name);
        let Ok(relative) = abs.strip_prefix(&self.canonical) else {
            return Err(invalid(user, "it is outside the root"));
        };
        let parts: Vec<String> = relative
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        check_place(&parts, &abs, user)?;
        check_outside_state(&abs, user)?;
        Ok(SafePath {
            abs,
            rel: parts.join("/"),
        })
    }
}

/// Refuses a path inside patchgate's own state directory (the reviewer's token, the journal,
/// the pre-images): with the root above it (`--root ~`, or `PATCHGATE_STATE_DIR` inside the
/// project) an agent could otherwise read the token through an edit's diff, or forge state.
fn check_outside_state(abs: &Path, user: &str) -> Result<()> {
    if abs.starts_with(canonical_state_dir()) {
        return Err(invalid(
            user,
            "it is inside patchgate's state directory (its tokens, journal and pre-images)",
        ));
    }
    Ok(())
}

/// The state directory with its symlinks resolved, remembered for the path it was resolved
/// from (every resolve asks; the directory is chosen once a process, so one walk serves).
fn canonical_state_dir() -> PathBuf {
    static KNOWN: std::sync::Mutex<Option<(PathBuf, PathBuf)>> = std::sync::Mutex::new(None);
    let state = super::state::state_dir();
    let mut known = KNOWN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((from, canonical)) = known.as_ref()
        && *from == state
    {
        return canonical.clone();
    }
    match std::fs::canonicalize(&state) {
        Ok(canonical) => {
            *known = Some((state, canonical.clone()));
            canonical
        }
        // Not made yet: compared as named, and resolved again next time.
        Err(_) => state,
    }
}

/// `path` with `.` and `..` resolved by name; a `..` above the filesystem root is refused.
fn lexical(path: &Path, user: &str) -> Result<PathBuf> {
    let mut lexical = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Prefix(p) => lexical.push(p.as_os_str()),
            Component::RootDir => lexical.push(Component::RootDir.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                if !lexical.pop() || lexical.as_os_str().is_empty() {
                    return Err(invalid(user, "`..` leads above the filesystem root"));
                }
            }
            Component::Normal(n) => lexical.push(n),
        }
    }
    Ok(lexical)
}

/// `lexical` with the symlinks of its existing part followed; the names that do not exist
/// yet are appended as they are.
fn follow_existing(lexical: &Path, user: &str, normalized: &str) -> Result<PathBuf> {
    let mut existing = lexical.to_path_buf();
    let mut rest: Vec<std::ffi::OsString> = Vec::new();
    let mut abs = loop {
        match std::fs::canonicalize(&existing) {
            Ok(c) => break c,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                // A dangling symlink is not a path to create through.
                if std::fs::symlink_metadata(&existing).is_ok() {
                    return Err(invalid(user, "it is a symlink to nothing"));
                }
                match (
                    existing.file_name().map(std::ffi::OsStr::to_os_string),
                    existing.parent(),
                ) {
                    (Some(name), Some(parent)) => {
                        rest.push(name);
                        existing = parent.to_path_buf();
                    }
                    _ => return Err(invalid(user, "no part of the path exists")),
                }
            }
            // A symlink loop is a trap; other failures are the filesystem's (a file used
            // as a directory, a name too long, no permission).
            Err(e) if e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) => {
                return Err(invalid(user, format!("it cannot be resolved: {e}")));
            }
            Err(e) => {
                return Err(io_error(normalized, "resolve the path", &e));
            }
        }
    };
    for name in rest.into_iter().rev() {
        abs.push(name);
    }
    Ok(abs)
}

/// Places no edit may touch: the root itself, `.git/`, `/proc`, `/sys`, `/dev`.
fn check_place(parts: &[String], abs: &Path, user: &str) -> Result<()> {
    if parts.is_empty() {
        return Err(invalid(user, "it names the root directory itself"));
    }
    if parts.iter().any(|p| p.eq_ignore_ascii_case(".git")) {
        return Err(invalid(user, "`.git/` is off limits"));
    }
    for special in ["/proc", "/sys", "/dev"] {
        if abs.starts_with(special) {
            return Err(invalid(
                user,
                format!("`{special}` is not a place for files to edit"),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_shown_relative_to_the_root_when_it_lies_under_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path()).unwrap();
        let abs = root.path().join("src/a.rs").display().to_string();
        assert_eq!(root.shown(&abs), "src/a.rs");
        assert_eq!(root.shown("./src/../src/a.rs"), "src/a.rs");
        assert_eq!(root.shown("/elsewhere/a.rs"), "/elsewhere/a.rs");
        assert_eq!(root.shown("../a.rs"), "../a.rs");
    }

    #[test]
    fn relative_paths_resolve_under_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path()).unwrap();
        let p = root.resolve("src/new/file.rs").unwrap();
        assert_eq!(p.rel, "src/new/file.rs");
        assert!(p.abs.starts_with(root.path()));
    }

    #[test]
    #[cfg(unix)]
    fn a_hard_linked_file_and_dotdot_after_a_symlink_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root_dir = dir.path().join("root");
        let outside = dir.path().join("outside/deep");
        std::fs::create_dir_all(&root_dir).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        let root = Root::new(&root_dir).unwrap();
        // A hard link whose other name is outside the root.
        std::fs::write(dir.path().join("outside/secret"), "s").unwrap();
        std::fs::hard_link(dir.path().join("outside/secret"), root_dir.join("h.txt")).unwrap();
        let e = root.resolve("h.txt").unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidPath);
        assert!(e.message.contains("hard links"), "{}", e.message);
        // `linked/..` is the root read as written, `outside/` on disk.
        std::os::unix::fs::symlink(&outside, root_dir.join("linked")).unwrap();
        let e = root.resolve("linked/../x.txt").unwrap_err();
        assert!(e.message.contains("symlinked directory"), "{}", e.message);
        // Without `..` the symlink is followed and leads out, as before.
        assert!(root.resolve("linked/x.txt").is_err());
        // A `..` after a real directory is fine.
        std::fs::create_dir_all(root_dir.join("real")).unwrap();
        assert_eq!(root.resolve("real/../x.txt").unwrap().rel, "x.txt");
    }

    #[test]
    fn parent_components_inside_the_root_are_fine() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path()).unwrap();
        assert_eq!(root.resolve("a/b/../c.txt").unwrap().rel, "a/c.txt");
        assert_eq!(root.resolve("./x//y.txt").unwrap().rel, "x/y.txt");
    }

    /// A root with every kind of trap in it, and a secret outside.
    #[cfg(unix)]
    fn booby_trapped_root() -> (tempfile::TempDir, Root) {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside");
        let root = dir.path().join("root");
        std::fs::create_dir_all(outside.join("deep")).unwrap();
        std::fs::write(outside.join("secret.txt"), "secret").unwrap();
        std::fs::create_dir_all(root.join("sub/inner")).unwrap();
        std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
        std::fs::create_dir_all(root.join("real_dir")).unwrap();
        std::fs::write(root.join("sub/inner/ok.txt"), "ok").unwrap();
        symlink(&outside, root.join("link_out")).unwrap();
        symlink(outside.join("secret.txt"), root.join("file_link_out")).unwrap();
        symlink("../../outside", root.join("sub/link_up")).unwrap();
        symlink(root.join("sub/inner"), root.join("link_in")).unwrap();
        symlink(root.join("sub/inner/ok.txt"), root.join("file_link_in")).unwrap();
        symlink(root.join("loop_a"), root.join("loop_b")).unwrap();
        symlink(root.join("loop_b"), root.join("loop_a")).unwrap();
        symlink(root.join("nothing_here"), root.join("dangling")).unwrap();
        symlink("/dev/null", root.join("devnull_link")).unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            root.join("fifo"),
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o644),
            0,
        )
        .unwrap();
        let root = Root::new(&root).unwrap();
        (dir, root)
    }

    #[cfg(unix)]
    #[test]
    fn hostile_paths_are_refused() {
        let (_dir, root) = booby_trapped_root();
        let home_outside = "~/.ssh/id_rsa".to_string();
        let abs_outside = root
            .path()
            .parent()
            .unwrap()
            .join("outside/secret.txt")
            .to_string_lossy()
            .into_owned();
        let abs_root_escape = format!("{}/../outside/secret.txt", root.path().display());
        let hostile: Vec<String> = vec![
            "../outside/secret.txt".into(),
            "../../etc/passwd".into(),
            "sub/../../outside/secret.txt".into(),
            "sub/inner/../../../x".into(),
            "a/./../../x".into(),
            "..".into(),
            "../".into(),
            ".".into(),
            "./".into(),
            "".into(),
            "   ".into(),
            "a\0b".into(),
            "/etc/passwd".into(),
            "/".into(),
            "//etc//passwd".into(),
            abs_outside,
            abs_root_escape,
            "..\\..\\etc\\passwd".into(),
            "sub\\..\\..\\x".into(),
            home_outside,
            ".git/config".into(),
            ".git".into(),
            ".git/hooks/pre-commit".into(),
            ".GIT/config".into(),
            "sub/../.git/HEAD".into(),
            "link_out/secret.txt".into(),
            "link_out/new_file.txt".into(),
            "link_out/deep/new/file.txt".into(),
            "file_link_out".into(),
            "sub/link_up/secret.txt".into(),
            "loop_a".into(),
            "loop_a/x".into(),
            "dangling".into(),
            "devnull_link".into(),
            "fifo".into(),
            "real_dir".into(),
            "sub".into(),
            "/proc/self/environ".into(),
            "/dev/null".into(),
            "/sys/kernel/notes".into(),
        ];
        assert!(hostile.len() >= 25);
        for p in &hostile {
            match root.resolve(p) {
                Err(e) => assert_eq!(e.code, ErrorCode::InvalidPath, "{p:?}: {}", e.message),
                Ok(ok) => panic!("{p:?} was accepted as {ok:?}"),
            }
        }
    }

    #[cfg(unix)]
    #[test]
    fn odd_but_legal_names_are_accepted() {
        let (_dir, root) = booby_trapped_root();
        let legal = [
            ("a..b.py", "a..b.py"),
            ("..hidden", "..hidden"),
            ("...", "..."),
            ("foo..", "foo.."),
            ("-rf", "-rf"),
            ("%2e%2e/x", "%2e%2e/x"),
            ("~not_home", "~not_home"),
            (
                "dir with spaces/file name.txt",
                "dir with spaces/file name.txt",
            ),
            ("ünïcödé/文件.txt", "ünïcödé/文件.txt"),
            (".gitignore", ".gitignore"),
            (".github/workflows/ci.yml", ".github/workflows/ci.yml"),
            ("sub/.gitkeep", "sub/.gitkeep"),
            ("a/b/c/d/e/new.txt", "a/b/c/d/e/new.txt"),
            ("./sub/inner/ok.txt", "sub/inner/ok.txt"),
            ("sub//inner///ok.txt", "sub/inner/ok.txt"),
            ("link_in/ok.txt", "sub/inner/ok.txt"),
            ("file_link_in", "sub/inner/ok.txt"),
            ("link_in/new.txt", "sub/inner/new.txt"),
        ];
        for (p, rel) in legal {
            let resolved = root
                .resolve(p)
                .unwrap_or_else(|e| panic!("{p:?}: {}", e.message));
            assert_eq!(resolved.rel, rel, "{p:?}");
        }
        let abs = root.path().join("sub/inner/ok.txt");
        assert_eq!(
            root.resolve(&abs.to_string_lossy()).unwrap().rel,
            "sub/inner/ok.txt"
        );
    }

    #[test]
    fn escaping_paths_are_invalid() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path()).unwrap();
        for p in [
            "../x",
            "/etc/passwd",
            "a/../../x",
            "..\\..\\x",
            ".git/config",
            "",
        ] {
            assert_eq!(
                root.resolve(p).unwrap_err().code,
                ErrorCode::InvalidPath,
                "{p}"
            );
        }
    }
}
