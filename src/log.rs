//! Logging to a file (never to the streams the TUI or the stdio transport own): the state
//! directory's `patchgate.log`, or `$PATCHGATE_LOG` (a file path). The level comes from
//! `$PATCHGATE_LOG_LEVEL` (`error`, `warn`, `info`, `debug`, `trace`; default `info`).

use std::path::PathBuf;
use std::sync::Mutex;

use tracing::Level;

/// Start logging to the log file; a no-op when it cannot be opened.
pub fn init() {
    let path = std::env::var_os("PATCHGATE_LOG")
        .map(PathBuf::from)
        .unwrap_or_else(|| crate::workspace::state::state_dir().join("patchgate.log"));
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let Ok(file) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
    else {
        return;
    };
    let level = match std::env::var("PATCHGATE_LOG_LEVEL").ok().as_deref() {
        Some("error") => Level::ERROR,
        Some("warn") => Level::WARN,
        Some("debug") => Level::DEBUG,
        Some("trace") => Level::TRACE,
        _ => Level::INFO,
    };
    let _ = tracing_subscriber::fmt()
        .with_writer(Mutex::new(file))
        .with_ansi(false)
        .with_max_level(level)
        .try_init();
}
