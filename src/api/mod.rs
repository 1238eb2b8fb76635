//! The review API's messages (docs/DESIGN.md §7): one set of serde types that the HTTP server, the
//! remote TUI, `serve --stdio`'s forwarding and the tests share, so no side rebuilds or
//! re-parses JSON by hand.

pub mod types;
