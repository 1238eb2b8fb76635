//! Noticing that an agent hung up (docs/DESIGN.md §4): every MCP request over HTTP carries a
//! [`Hangup`] token, cancelled when its answer's body is dropped before it ended — the
//! connection closed under it (the agent was killed, or dropped the call). A tool call that
//! waits for a person follows it like an MCP cancellation, so its review is withdrawn at once.

use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::Body as AxumBody;
use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};
use tokio_util::sync::CancellationToken;

/// Cancelled when the answer to the request that carries it is dropped unfinished.
#[derive(Debug, Clone, Default)]
pub(crate) struct Hangup(pub CancellationToken);

/// A response body that cancels its request's [`Hangup`] when dropped before its end.
pub(crate) struct HangupBody {
    inner: AxumBody,
    /// Disarmed (taken) once the body ended.
    armed: Option<CancellationToken>,
}

impl HangupBody {
    /// `inner`, cancelling `hangup` if dropped unfinished.
    pub(crate) fn new(inner: AxumBody, hangup: &Hangup) -> HangupBody {
        HangupBody {
            inner,
            armed: Some(hangup.0.clone()),
        }
    }
}

impl Drop for HangupBody {
    fn drop(&mut self) {
        if let Some(token) = self.armed.take() {
            token.cancel();
        }
    }
}

impl Body for HangupBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let frame = Pin::new(&mut self.inner).poll_frame(cx);
        if matches!(frame, Poll::Ready(None)) {
            self.armed = None;
        }
        frame
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_body_dropped_unfinished_cancels_and_one_read_to_its_end_does_not() {
        let read = Hangup::default();
        let body = HangupBody::new(AxumBody::from("answer"), &read);
        let bytes = axum::body::to_bytes(AxumBody::new(body), usize::MAX)
            .await
            .unwrap();
        assert_eq!(&bytes[..], b"answer");
        assert!(!read.0.is_cancelled());
        let dropped = Hangup::default();
        drop(HangupBody::new(AxumBody::from("answer"), &dropped));
        assert!(dropped.0.is_cancelled());
    }
}
