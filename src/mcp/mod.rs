//! The MCP side (docs/DESIGN.md §1, §3): the reference tools and their envelope, the rmcp server over
//! stdio and Streamable HTTP, the review API, the discovery file, forwarding from a stdio
//! server into a live gate, and the client configuration snippets.

pub mod args;
pub mod client_files;
pub mod clients;
pub(crate) mod deadline_body;
pub mod discovery;
pub mod doctor;
pub mod envelope;
pub(crate) mod events;
pub mod forward;
pub(crate) mod guarded_body;
pub(crate) mod hangup;
pub mod http;
pub mod inflight;
pub mod progress;
pub mod search;
pub mod serve;
pub mod server;
pub mod service;
pub mod tools;
