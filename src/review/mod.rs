//! Reviews of proposed edits, and the adapters around the engines: the optional model
//! fallback for lazy snippets.

pub mod fallback;
