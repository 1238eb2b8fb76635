//! The commands behind the command line, one file per group; what they share (the runtime,
//! addresses, the terminal check, colours) lives here. `anyhow` errors stop at this layer.

use std::io::IsTerminal;

use anyhow::{Context, Result, bail};

pub(crate) mod apply;
pub(crate) mod demo;
pub(crate) mod demo_agent;
pub(crate) mod engines;
pub(crate) mod gate;
pub(crate) mod journal;
pub(crate) mod man;
pub(crate) mod out;
pub(crate) mod search;
pub(crate) mod setup;

pub(crate) use self::apply::*;
pub(crate) use self::demo::*;
pub(crate) use self::engines::*;
pub(crate) use self::gate::*;
pub(crate) use self::journal::*;
pub(crate) use self::man::*;
pub(crate) use self::search::*;
pub(crate) use self::setup::*;

/// A listen address: `HOST:PORT`, or a bare port on loopback.
pub(crate) fn listen_addr(s: &str) -> Result<std::net::SocketAddr> {
    use std::net::ToSocketAddrs;
    let spec = if s.chars().all(|c| c.is_ascii_digit()) {
        format!("127.0.0.1:{s}")
    } else {
        s.to_string()
    };
    spec.to_socket_addrs()
        .with_context(|| format!("cannot use `{s}` as a listen address (HOST:PORT)"))?
        .next()
        .with_context(|| format!("`{s}` resolves to no address"))
}

/// Threads for blocking work (merges, diffs, parses, writes, searches): past this many at once
/// a task waits for one. Each thread keeps a parser per language and its allocator arena, so
/// a burst of 200 edits on tokio's default (512) left 374 threads and 94 MB resident.
const BLOCKING_THREADS: usize = 32;

pub(crate) fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .max_blocking_threads(BLOCKING_THREADS)
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

pub(crate) fn need_terminal() -> Result<()> {
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        bail!(
            "the review TUI needs a terminal; MCP clients should spawn `patchgate serve --stdio` (see `patchgate config`)"
        );
    }
    Ok(())
}

/// `--color` for the TUI.
pub(crate) fn set_color(c: patchgate::cli::ColorArg) {
    use patchgate::cli::ColorArg;
    patchgate::tui::set_color(match c {
        ColorArg::Auto => None,
        ColorArg::Always => Some(true),
        ColorArg::Never => Some(false),
    });
}

/// The TUI's view of the gate in this process, its client count from `dispatcher`.
pub(crate) fn local_backend(
    dispatcher: &patchgate::mcp::service::Dispatcher,
    address: Option<String>,
) -> patchgate::tui::backend::Backend {
    let d = dispatcher.clone();
    patchgate::tui::backend::Backend::local(
        dispatcher.gate().clone(),
        std::sync::Arc::new(move || d.active_clients()),
        address,
    )
}
