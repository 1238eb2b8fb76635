//! Reviews of proposed edits: proposals and decisions, policy and path rules, the queue
//! service shared by the MCP server, the TUI and the review API, the journal and undo, and
//! the adapters around the engines (the model fallback).

pub mod account;
pub mod agents;
mod ahead;
pub mod all_or_none;
pub mod apply;
pub mod edit;
pub mod fallback;
pub mod hook;
mod hook_program;
pub mod intent;
pub mod journal;
mod merge3;
mod pending;
pub mod policy;
pub mod preimages;
pub mod proposal;
pub mod queue;
mod revert;
mod revision;
pub mod rewind;
pub mod rules;
mod shared;
mod tally;

use std::path::Path;
use std::time::Duration;

use crate::error::{Error, Result};
use crate::workspace::Workspace;
use crate::workspace::config::PolicyName;
use crate::workspace::userconfig::UserConfig;

/// A gate over the project at `root`: its `.patchgate.toml`, the policy (`policy` from the
/// command line, else the user's config, else `default`; the repository's file only
/// tightens it), the journal in the state directory and the model fallback of the user's own
/// config. Returns the gate and its review timeout (`review_timeout` wins over the file's).
pub fn open_gate(
    root: &Path,
    policy: Option<PolicyName>,
    default: PolicyName,
    review_timeout: Option<u64>,
) -> Result<(queue::Gate, Duration)> {
    let ws = Workspace::load(root)?;
    let user = UserConfig::load().map_err(|e| Error::invalid_input(e.to_string()))?;
    let policy = policy::Policy::layered(&user, &ws.config, policy, default)?;
    let journal = journal::Journal::for_root(&ws.root)
        .with_cap(user.journal_max_bytes.unwrap_or(preimages::DEFAULT_CAP));
    let rolled_back = intent::recover(&ws.root, &journal, ws.config.max_file_bytes);
    if !rolled_back.is_empty() {
        tracing::warn!(
            "rolled back interrupted batches: {}",
            rolled_back.join(", ")
        );
    }
    let fallback = user_fallback(&user, ws.config.fallback.is_some())?;
    let hook = user_hook(&user, ws.config.hook.is_some(), ws.root.path())?;
    let timeout = Duration::from_secs(review_timeout.unwrap_or(ws.config.review_timeout_s));
    let gate = queue::Gate::new(ws, policy, journal, fallback).with_hook(hook);
    Ok((gate, timeout))
}

/// The policy hook of the user's own config. A repository's `[hook]` is never run (it would
/// make the gate run any program a repository names): `repo_has_one` logs that.
pub fn user_hook(
    user: &UserConfig,
    repo_has_one: bool,
    root: &std::path::Path,
) -> Result<Option<hook::Hook>> {
    if repo_has_one {
        tracing::warn!(
            ".patchgate.toml's [hook] is ignored: a policy hook runs only from your own config \
             ({})",
            crate::workspace::userconfig::path()
                .map(|p| p.display().to_string())
                .unwrap_or_default()
        );
    }
    user.hook
        .as_ref()
        .map(|h| hook::Hook::from_config(h, root))
        .transpose()
}

/// The model fallback of the user's own config. A repository's `[fallback]` is never used
/// (it could send any environment variable to any host): `repo_has_one` logs that.
pub fn user_fallback(user: &UserConfig, repo_has_one: bool) -> Result<Option<fallback::Fallback>> {
    if repo_has_one {
        tracing::warn!(
            ".patchgate.toml's [fallback] is ignored: the model fallback comes only from your own \
             config ({})",
            crate::workspace::userconfig::path()
                .map(|p| p.display().to_string())
                .unwrap_or_default()
        );
    }
    match &user.fallback {
        Some(cfg) => fallback::Fallback::from_config(cfg),
        None => Ok(None),
    }
}
