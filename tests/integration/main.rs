//! Integration tests: the real `patchgate` binary on real files in temporary directories.
//! One test binary (one link) with a module per area.

mod account;
mod agents;
mod apply_git;
mod apply_reject;
mod cli_merge;
mod clients;
mod closed_pipe;
mod config_write;
mod corpus;
mod crash;
mod docs;
mod gate_scope;
mod help;
mod hook;
mod journal_cli;
mod layers;
mod lazy_fallback;
mod limits;
mod mcp;
mod mcp_python;
mod names;
mod queue_view;
mod readme;
mod restart;
mod revisions;
mod rewind;
mod search;
mod state_modes;
mod support;
mod syntax;
mod tmux;
mod tui;
mod unseen;
