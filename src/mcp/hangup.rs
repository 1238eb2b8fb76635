//! Noticing that an agent hung up (docs/DESIGN.md §4): every MCP request over HTTP carries a
//! [`Hangup`] token, cancelled when its answer's body is dropped before it ended — the
//! connection closed under it (the agent was killed, or dropped the call). A tool call that
//! waits for a person follows it like an MCP cancellation, so its review is withdrawn at once.

use axum::body::Body as AxumBody;
use tokio_util::sync::CancellationToken;

use super::guarded_body::{EndGuard, GuardedBody};

/// Cancelled when the answer to the request that carries it is dropped unfinished.
#[derive(Debug, Clone, Default)]
pub(crate) struct Hangup(pub CancellationToken);

/// Armed while an answer streams: dropped before the answer ended, it cancels its request's
/// [`Hangup`]; an answer read to its end disarms it.
pub(crate) struct Armed(Option<CancellationToken>);

impl Drop for Armed {
    fn drop(&mut self) {
        if let Some(token) = self.0.take() {
            token.cancel();
        }
    }
}

impl EndGuard for Armed {
    fn ended(&mut self) {
        self.0 = None;
    }
}

/// A response body that cancels `hangup` when dropped before its end.
pub(crate) fn hangup_body(inner: AxumBody, hangup: &Hangup) -> GuardedBody<Armed> {
    GuardedBody::new(inner, Armed(Some(hangup.0.clone())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_body_dropped_unfinished_cancels_and_one_read_to_its_end_does_not() {
        let read = Hangup::default();
        let body = hangup_body(AxumBody::from("answer"), &read);
        let bytes = axum::body::to_bytes(AxumBody::new(body), usize::MAX)
            .await
            .unwrap();
        assert_eq!(&bytes[..], b"answer");
        assert!(!read.0.is_cancelled());
        let dropped = Hangup::default();
        drop(hangup_body(AxumBody::from("answer"), &dropped));
        assert!(dropped.0.is_cancelled());
    }
}
