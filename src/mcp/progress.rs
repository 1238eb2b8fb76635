//! Progress reports of a running tool call: where they go ([`ProgressSink`]: an MCP progress
//! notification, or nowhere), and forwarding the reports a blocking task sends on a channel to
//! a sink while the task runs.

use std::future::Future;
use std::pin::Pin;

use tokio::sync::mpsc;

/// Where progress messages go (an MCP progress notification, or nowhere).
pub trait ProgressSink: Send + Sync {
    /// Report `done` of `total` (seconds waited, files indexed, turns taken), with a message.
    fn progress<'a>(
        &'a self,
        done: f64,
        total: f64,
        message: String,
    ) -> Pin<Box<dyn Future<Output = ()> + Send + 'a>>;
}

/// A sink that drops everything.
pub struct NoProgress;

impl ProgressSink for NoProgress {
    fn progress<'a>(
        &'a self,
        _: f64,
        _: f64,
        _: String,
    ) -> Pin<Box<dyn Future<Output = ()> + Send + 'a>> {
        Box::pin(async {})
    }
}

/// A progress report: done, total, message.
pub(crate) type Report = (f64, f64, String);

/// Run `work` while forwarding its reports to `sink`.
pub(crate) async fn reporting<T>(
    work: impl Future<Output = T>,
    mut reports: mpsc::UnboundedReceiver<Report>,
    sink: &dyn ProgressSink,
) -> T {
    tokio::pin!(work);
    loop {
        tokio::select! {
            out = &mut work => return out,
            Some((done, total, message)) = reports.recv() => {
                sink.progress(done, total, message).await;
            }
        }
    }
}
