//! Reviews of proposed edits: proposals and decisions, policy and path rules, the queue
//! service shared by the MCP server, the TUI and the review API, the journal and undo, and
//! the adapters around the engines (the model fallback).

pub mod edit;
pub mod fallback;
pub mod journal;
pub mod policy;
pub mod proposal;
pub mod queue;
