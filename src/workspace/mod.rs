//! Everything between the pure engines and the disk: paths and containment under the root,
//! reading and atomic writing, content hashes, `.patchgate.toml`, the state directory, which
//! paths hold secrets, and unguessable random values from the OS.
//! No MCP or terminal types here.

#[cfg(unix)]
pub(crate) mod beneath;
pub mod config;
pub(crate) mod digest;
pub(crate) mod dirs;
pub mod fs;
pub(crate) mod group_sync;
pub(crate) mod io_error;
pub mod paths;
pub(crate) mod private;
pub mod random;
pub mod rootlock;
pub mod secrets;
pub mod state;
#[doc(hidden)]
pub mod synced;
pub mod userconfig;
pub mod userrules;

use std::path::Path;

use crate::error::{Error, ErrorCode, Result};

/// A root directory and its configuration.
#[derive(Debug, Clone)]
pub struct Workspace {
    /// The root every path resolves under.
    pub root: paths::Root,
    /// `.patchgate.toml` (defaults when absent).
    pub config: config::Config,
}

impl Workspace {
    /// A workspace at `dir` with `config`.
    pub fn new(dir: &Path, config: config::Config) -> Result<Workspace> {
        Ok(Workspace {
            root: paths::Root::new(dir)?,
            config,
        })
    }

    /// A workspace at `dir` with its `.patchgate.toml`.
    pub fn load(dir: &Path) -> Result<Workspace> {
        let root = paths::Root::new(dir)?;
        let config = config::Config::load(root.path())
            .map_err(|e| Error::new(ErrorCode::InvalidInput, e.to_string()))?;
        Ok(Workspace { root, config })
    }
}
