//! Reviews of proposed edits: proposals and decisions, policy and path rules, the queue
//! service shared by the MCP server, the TUI and the review API, the journal and undo, and
//! the adapters around the engines (the model fallback).

pub mod apply;
pub mod edit;
pub mod fallback;
pub mod journal;
pub mod policy;
pub mod proposal;
pub mod queue;

use std::path::Path;
use std::time::Duration;

use crate::error::Result;
use crate::workspace::Workspace;
use crate::workspace::config::PolicyName;

/// A gate over the project at `root`: its `.patchgate.toml`, the policy (`policy` from the
/// command line wins over the file, `default` applies when neither names one), the journal in
/// the state directory and the configured model fallback. Returns the gate and its review
/// timeout (`review_timeout` wins over the file's).
pub fn open_gate(
    root: &Path,
    policy: Option<PolicyName>,
    default: PolicyName,
    review_timeout: Option<u64>,
) -> Result<(queue::Gate, Duration)> {
    let ws = Workspace::load(root)?;
    let policy = policy::Policy::from_config(&ws.config, policy, default)?;
    let journal = journal::Journal::for_root(&ws.root);
    let fallback = match &ws.config.fallback {
        Some(cfg) => fallback::Fallback::from_config(cfg)?,
        None => None,
    };
    let timeout = Duration::from_secs(review_timeout.unwrap_or(ws.config.review_timeout_s));
    Ok((queue::Gate::new(ws, policy, journal, fallback), timeout))
}
