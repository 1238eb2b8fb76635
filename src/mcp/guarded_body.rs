//! A response body that holds a guard until it ends: told when the body was read to its end,
//! dropped either way. One wrapper for what a connection keeps while an answer streams (the
//! request counted in flight, `serve.rs`) and for noticing an answer dropped unfinished (an
//! agent that hung up, `hangup.rs`).

use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::Body as AxumBody;
use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};

/// What a [`GuardedBody`] holds: [`EndGuard::ended`] is called when the body was read to its
/// end, then the guard is dropped; a body dropped before its end only drops it.
pub(crate) trait EndGuard {
    /// The body was read to its end.
    fn ended(&mut self) {}
}

/// `inner`, holding `guard` until it ends or is dropped.
pub(crate) struct GuardedBody<G> {
    inner: AxumBody,
    guard: Option<G>,
}

impl<G: EndGuard> GuardedBody<G> {
    pub(crate) fn new(inner: AxumBody, guard: G) -> GuardedBody<G> {
        GuardedBody {
            inner,
            guard: Some(guard),
        }
    }
}

impl<G: EndGuard + Unpin> Body for GuardedBody<G> {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let frame = Pin::new(&mut self.inner).poll_frame(cx);
        if matches!(frame, Poll::Ready(None))
            && let Some(mut guard) = self.guard.take()
        {
            guard.ended();
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
