//! The discovery file `reviewer.json` = `{url, mcp_url, token, review_token, pid, root}`
//! (DESIGN §1, §7: the agents' and the reviewers' tokens): every
//! gate that listens writes it (mode 0600) to the state directory once it accepts
//! connections and removes it on exit; `serve --stdio` reads it to find a live gate. A file
//! whose pid is dead is stale and ignored.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::workspace::fs::write_private;
use crate::workspace::state::state_dir;

/// The discovery file's name in the state directory.
pub const FILE_NAME: &str = "reviewer.json";

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

/// Where the discovery file lives.
pub fn path() -> PathBuf {
    state_dir().join(FILE_NAME)
}

pub use crate::workspace::state::pid_alive;

impl Discovery {
    /// Write the file (mode 0600), replacing any other gate's.
    pub fn write(&self) -> std::io::Result<PathBuf> {
        let p = path();
        if let Some(dir) = p.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let json = serde_json::to_vec_pretty(self).map_err(std::io::Error::other)?;
        write_private(&p, &json)?;
        Ok(p)
    }

    /// Remove the file if it is still this process's.
    pub fn remove_own() {
        let p = path();
        if let Some(d) = read_file(&p)
            && d.pid == std::process::id()
        {
            let _ = std::fs::remove_file(&p);
        }
    }

    /// The live gate, if the file names one whose process runs.
    pub fn live() -> Option<Discovery> {
        read_file(&path()).filter(|d| d.pid != std::process::id() && pid_alive(d.pid))
    }

    /// Whether `dir` is this gate's root or lies under it.
    pub fn covers(&self, dir: &Path) -> bool {
        let root = std::fs::canonicalize(&self.root).unwrap_or_else(|_| self.root.clone());
        let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        dir.starts_with(&root)
    }
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
