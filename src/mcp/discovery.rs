//! Discovery of running gates (docs/DESIGN.md §1, §7): every gate that listens writes
//! `gates/<root-hash>.json` = `{url, mcp_url, token, review_token, pid, root}` (mode 0600) to
//! the state directory once it accepts connections, and removes it on exit; the newest also
//! writes `reviewer.json`. `serve --stdio` forwards to the live gate whose root holds its own
//! (the deepest such root wins). An entry whose pid is dead is stale: ignored, and removed
//! when seen.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::workspace::fs::write_private;
use crate::workspace::state::state_dir;

/// The newest gate's discovery file, in the state directory.
pub(crate) const FILE_NAME: &str = "reviewer.json";

/// The directory of one entry per live gate, in the state directory.
pub(crate) const GATES_DIR: &str = "gates";

/// A running gate, as its discovery file describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Discovery {
    /// The base URL (`http://127.0.0.1:PORT`) of the review API.
    pub url: String,
    /// The MCP endpoint.
    pub mcp_url: String,
    /// The agents' bearer token (`/mcp`, tool calls); empty with `--no-token`.
    pub token: String,
    /// The reviewers' bearer token (the whole review API).
    #[serde(default)]
    pub review_token: String,
    /// The gate's process id.
    pub pid: u32,
    /// The gate's root directory.
    pub root: PathBuf,
}

/// Where the newest gate's discovery file lives.
pub fn path() -> PathBuf {
    state_dir().join(FILE_NAME)
}

/// Where the entry of the gate for `root` lives.
pub(crate) fn entry_path(root: &Path) -> PathBuf {
    let canon = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let key = crate::workspace::digest::hash(canon.as_os_str().as_encoded_bytes());
    state_dir()
        .join(GATES_DIR)
        .join(format!("{}.json", &key[..16]))
}

pub(crate) use crate::workspace::state::pid_alive;

impl Discovery {
    /// Write this gate's entry and `reviewer.json` (mode 0600).
    pub fn write(&self) -> std::io::Result<PathBuf> {
        let json = serde_json::to_vec_pretty(self).map_err(std::io::Error::other)?;
        let entry = entry_path(&self.root);
        for p in [&entry, &path()] {
            if let Some(dir) = p.parent() {
                std::fs::create_dir_all(dir)?;
            }
            write_private(p, &json)?;
        }
        Ok(entry)
    }

    /// Remove this process's entry, and `reviewer.json` if it is this process's.
    pub fn remove_own() {
        let me = std::process::id();
        let dir = state_dir().join(GATES_DIR);
        for (p, d) in entries(&dir).chain(read_file(&path()).map(|d| (path(), d))) {
            if d.pid == me {
                let _ = std::fs::remove_file(&p);
            }
        }
    }

    /// Every live gate but this process's own, newest entry first; stale entries are
    /// removed on the way.
    pub(crate) fn live_all() -> Vec<Discovery> {
        let me = std::process::id();
        let mut out: Vec<Discovery> = Vec::new();
        let newest = read_file(&path()).filter(|d| d.pid != me && pid_alive(d.pid));
        out.extend(newest);
        for (p, d) in entries(&state_dir().join(GATES_DIR)) {
            if !pid_alive(d.pid) {
                let _ = std::fs::remove_file(&p);
            } else if d.pid != me && !out.contains(&d) {
                out.push(d);
            }
        }
        out
    }

    /// The newest live gate, if any.
    pub fn live() -> Option<Discovery> {
        Self::live_all().into_iter().next()
    }

    /// The live gate that listens at `url` (its base URL or its MCP endpoint), of all the live
    /// gates, not only the newest.
    pub fn for_url(url: &str) -> Option<Discovery> {
        let want = url.trim_end_matches('/').trim_end_matches("/mcp");
        Self::live_all()
            .into_iter()
            .find(|d| d.url.trim_end_matches('/') == want)
    }

    /// The live gate for `dir`: of those whose root holds it, the deepest root.
    pub fn for_dir(dir: &Path) -> Option<Discovery> {
        Self::live_all()
            .into_iter()
            .filter(|d| d.covers(dir))
            .max_by_key(|d| d.root.components().count())
    }

    /// Whether `dir` is this gate's root or lies under it.
    pub fn covers(&self, dir: &Path) -> bool {
        let root = std::fs::canonicalize(&self.root).unwrap_or_else(|_| self.root.clone());
        let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        dir.starts_with(&root)
    }
}

/// The agents' token kept for the gate of `root` (mode 0600, `tokens/` in the state
/// directory): made once, then the same at every start, so an HTTP client configuration
/// survives restarts of a gate on a fixed address.
pub fn stable_token(root: &Path) -> std::io::Result<String> {
    use std::io::Write;
    let entry = entry_path(root);
    let name = entry.file_stem().unwrap_or_default().to_os_string();
    let p = state_dir().join("tokens").join(name);
    if let Some(dir) = p.parent() {
        crate::workspace::dirs::make_durable(dir, 0o700)?;
    }
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    match opts.open(&p) {
        Ok(mut f) => {
            // No random source, no token (and no empty file left for the next start).
            let t = match crate::workspace::random::token() {
                Ok(t) => t,
                Err(e) => {
                    drop(f);
                    let _ = std::fs::remove_file(&p);
                    return Err(e);
                }
            };
            f.write_all(t.as_bytes())?;
            crate::workspace::synced::sync(&f, crate::workspace::synced::Flush::All)?;
            // Its entry too: a client configured with the token must find it after a crash.
            if let Some(dir) = p.parent() {
                crate::workspace::fs::sync_dir_now(dir)?;
            }
            Ok(t)
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            // Another process may be writing it this instant.
            for _ in 0..50 {
                let t = std::fs::read_to_string(&p)?.trim().to_string();
                if !t.is_empty() {
                    return Ok(t);
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            Err(std::io::Error::other(format!("{} is empty", p.display())))
        }
        Err(e) => Err(e),
    }
}

/// The readable entries in `dir`.
fn entries(dir: &Path) -> impl Iterator<Item = (PathBuf, Discovery)> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .filter_map(|p| read_file(&p).map(|d| (p, d)))
}

fn read_file(p: &Path) -> Option<Discovery> {
    let bytes = std::fs::read(p).ok()?;
    serde_json::from_slice(&bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dead_pids_are_not_alive() {
        assert!(pid_alive(std::process::id()));
        // Beyond the kernel's pid range.
        assert!(!pid_alive(u32::MAX - 1));
        assert!(!pid_alive(0));
    }

    #[test]
    fn covers_the_root_and_below_only() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("a/b")).unwrap();
        let d = Discovery {
            url: String::new(),
            mcp_url: String::new(),
            token: String::new(),
            review_token: String::new(),
            pid: 1,
            root: dir.path().join("a"),
        };
        assert!(d.covers(&dir.path().join("a")));
        assert!(d.covers(&dir.path().join("a/b")));
        assert!(!d.covers(dir.path()));
    }
}
