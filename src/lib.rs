//! patchgate: a human approval gate for the file edits of AI coding agents, and the
//! deterministic merge engines behind it.
//!
//! Layers point one way (docs/DESIGN.md §8): [`error`] and [`edit`] (pure engines) ← [`diff`] (pure
//! diffing) ← the rest. [`eval`] scores the engines on a corpus.

// No unsafe code: system calls go through rustix and std. The one exception is glibc's
// `malloc_trim` after a large parse (`syntax::parse::give_back_memory`), which no safe crate
// wraps; it is allowed there alone.
#![deny(unsafe_code)]
// No function over 100 lines (clippy.toml), tests aside.
#![cfg_attr(not(test), warn(clippy::too_many_lines))]

pub mod api;
pub mod chat;
pub mod cli;
pub mod diff;
pub mod edit;
pub mod error;
pub mod eval;
pub mod inert;
pub mod log;
pub mod mcp;
pub mod review;
pub mod search;
pub mod syntax;
pub mod tui;
pub mod workspace;
