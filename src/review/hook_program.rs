//! Where the policy hook's program may live (docs/DESIGN.md §7): never where an agent can
//! write. An agent edits files beneath the root, so a hook whose program — or a file its
//! arguments name — lies beneath the root could be rewritten by the very agent it judges
//! (and the old hook could even approve that edit). The program is an absolute path outside
//! the root, or a bare name found on `PATH` outside it; an absolute argument may not name a
//! path beneath the root; and the hook runs in its program's own folder, so that a relative
//! argument never resolves into the root either.

use std::path::{Component, Path, PathBuf};

use crate::error::{Error, Result};

/// The program `command[0]` names, as an absolute path, checked against `root`; and every
/// argument checked too.
pub(crate) fn checked(command: &[String], root: &Path) -> Result<PathBuf> {
    let first = command.first().map(String::as_str).unwrap_or("");
    let program = if first.contains('/') {
        let p = Path::new(first);
        if !p.is_absolute() {
            return Err(Error::invalid_input(format!(
                "[hook] command `{first}` is a relative path: give the hook's program as an \
                 absolute path outside the project (it must never be a file an agent can edit)"
            )));
        }
        p.to_path_buf()
    } else {
        on_path(first).ok_or_else(|| {
            Error::invalid_input(format!(
                "[hook] command `{first}` is not found on PATH: give its absolute path"
            ))
        })?
    };
    for named in std::iter::once(program.as_path()).chain(
        command[1..]
            .iter()
            .map(Path::new)
            .filter(|a| a.is_absolute()),
    ) {
        if beneath(named, root) {
            return Err(Error::invalid_input(format!(
                "[hook] command names {} beneath the project root {}: an agent could rewrite \
                 the hook that judges it; keep the hook and its files outside the root",
                named.display(),
                root.display()
            )));
        }
    }
    Ok(program)
}

/// The first `name` on `PATH` that is a file, made absolute.
fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .filter(|d| d.is_absolute())
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// Whether `p` lies beneath `root`: as written (`..` folded) or with links resolved (for the
/// longest part of it that exists), against the root as given and resolved.
fn beneath(p: &Path, root: &Path) -> bool {
    let roots = [root.to_path_buf(), resolved(root)];
    let paths = [folded(p), resolved(p)];
    paths.iter().any(|p| roots.iter().any(|r| p.starts_with(r)))
}

/// `p` with `.` and `..` folded, without touching the file system.
fn folded(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

/// `p` with links resolved for its longest existing ancestor, the rest appended.
fn resolved(p: &Path) -> PathBuf {
    let p = folded(p);
    let mut rest = Vec::new();
    let mut at = p.as_path();
    loop {
        if let Ok(real) = at.canonicalize() {
            let mut out = real;
            out.extend(rest.iter().rev());
            return out;
        }
        match (at.parent(), at.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                at = parent;
            }
            _ => return p,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd(parts: &[&str]) -> Vec<String> {
        parts.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn a_hook_beneath_the_root_or_relative_is_refused_and_one_outside_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("project");
        let outside = dir.path().join("hooks/judge.sh");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(outside.parent().unwrap()).unwrap();
        std::fs::write(&outside, "#!/bin/sh\n").unwrap();
        let inside = root.join("judge.sh");
        let out = outside.display().to_string();
        assert_eq!(checked(&cmd(&[&out]), &root).unwrap(), outside);
        // Relative paths, the root's own files (even ones not yet written, or reached by
        // `..`), and arguments naming them are refused.
        for bad in [
            cmd(&["./judge.sh"]),
            cmd(&["scripts/judge"]),
            cmd(&[&inside.display().to_string()]),
            cmd(&[&format!("{}/../project/x", root.join("sub").display())]),
            cmd(&["sh", &inside.display().to_string()]),
            cmd(&[&out, &root.join("rules.json").display().to_string()]),
        ] {
            let e = checked(&bad, &root).unwrap_err();
            assert!(
                e.message.contains("absolute path") || e.message.contains("beneath"),
                "{bad:?}: {}",
                e.message
            );
        }
        // A bare name is looked up on PATH.
        assert!(
            checked(&cmd(&["sh", "-c", "true"]), &root)
                .unwrap()
                .is_absolute()
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_link_outside_the_root_that_points_into_it_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("project");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(root.join("judge.sh"), "#!/bin/sh\n").unwrap();
        let link = dir.path().join("judge-link");
        std::os::unix::fs::symlink(root.join("judge.sh"), &link).unwrap();
        let e = checked(&cmd(&[&link.display().to_string()]), &root).unwrap_err();
        assert!(e.message.contains("beneath"), "{}", e.message);
    }
}
