//! A request body with a deadline (docs/DESIGN.md §7): the whole body must have arrived by a
//! fixed instant, else reading it fails, so a client that trickles its body a byte at a time
//! cannot hold a connection. The deadline is total, not per frame; the gate postpones it by
//! the time it held the body unread (its wait for the in-flight budget, `http.rs`), since a
//! client can send no faster than the gate reads.

use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};
use tokio::time::{Instant, Sleep};

/// Why reading a request body failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum BodyError {
    /// The body was still arriving at its deadline.
    #[error("the request body did not arrive within {0:?}")]
    Deadline(Duration),
    /// Reading the body failed.
    #[error(transparent)]
    Read(Box<dyn std::error::Error + Send + Sync>),
}

/// When a body must have arrived, shared by the body and its request (as an extension), so
/// that the gate can give back the time it held the body unread.
#[derive(Clone, Debug)]
pub(crate) struct BodyClock(Arc<Mutex<Instant>>);

impl BodyClock {
    fn deadline(&self) -> Instant {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Give the body `by` more time to arrive.
    pub(crate) fn postpone(&self, by: Duration) {
        let mut deadline = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        *deadline += by;
    }
}

/// `inner`, failing with [`BodyError::Deadline`] once it is polled past its deadline with no
/// data ready. Data that has already arrived is still given after the deadline.
pub(crate) struct DeadlineBody<B> {
    inner: B,
    clock: BodyClock,
    /// How long the body was given (for the error).
    allowed: Duration,
    /// Made on the first wait, so a body read at once costs no timer.
    sleep: Option<Pin<Box<Sleep>>>,
}

impl<B> DeadlineBody<B> {
    /// `inner` with `allowed` from now to arrive.
    pub(crate) fn new(inner: B, allowed: Duration) -> DeadlineBody<B> {
        DeadlineBody {
            inner,
            clock: BodyClock(Arc::new(Mutex::new(Instant::now() + allowed))),
            allowed,
            sleep: None,
        }
    }

    /// Its deadline, to postpone.
    pub(crate) fn clock(&self) -> BodyClock {
        self.clock.clone()
    }
}

impl<B> Body for DeadlineBody<B>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Data = Bytes;
    type Error = BodyError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BodyError>>> {
        let this = self.get_mut();
        if let Poll::Ready(frame) = Pin::new(&mut this.inner).poll_frame(cx) {
            return Poll::Ready(frame.map(|f| f.map_err(|e| BodyError::Read(e.into()))));
        }
        let deadline = this.clock.deadline();
        let sleep = this
            .sleep
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        // Postponed since the timer was set: wait for the new deadline.
        if sleep.deadline() < deadline {
            sleep.as_mut().reset(deadline);
        }
        match sleep.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Some(Err(BodyError::Deadline(this.allowed)))),
            Poll::Pending => Poll::Pending,
        }
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
    use std::convert::Infallible;

    use futures_util::stream;

    use super::*;

    /// Every byte of `body`, or its first error.
    async fn read_all<B: Body<Data = Bytes> + Unpin>(mut body: B) -> Result<Vec<u8>, B::Error> {
        let mut out = Vec::new();
        while let Some(frame) = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await
        {
            if let Ok(data) = frame?.into_data() {
                out.extend_from_slice(&data);
            }
        }
        Ok(out)
    }

    #[tokio::test(start_paused = true)]
    async fn a_trickling_body_fails_at_the_total_deadline() {
        // A byte every 100 ms: no single wait is long, but 100 bytes take 10 s.
        let bytes = stream::unfold(0u8, |n| async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            (n < 100).then(|| (Ok::<_, Infallible>(Bytes::from_static(b"x")), n + 1))
        });
        let body = DeadlineBody::new(axum::body::Body::from_stream(bytes), Duration::from_secs(1));
        let start = Instant::now();
        let err = read_all(body).await.unwrap_err();
        assert!(matches!(err, BodyError::Deadline(_)), "{err}");
        assert_eq!(start.elapsed(), Duration::from_secs(1));
    }

    #[tokio::test(start_paused = true)]
    async fn a_postponed_deadline_gives_the_body_that_much_more_time() {
        // A byte every 100 ms for 1.5 s, allowed 1 s, postponed by 1 s while it arrives.
        let bytes = stream::unfold(0u8, |n| async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            (n < 15).then(|| (Ok::<_, Infallible>(Bytes::from_static(b"x")), n + 1))
        });
        let body = DeadlineBody::new(axum::body::Body::from_stream(bytes), Duration::from_secs(1));
        let clock = body.clock();
        let reading = tokio::spawn(read_all(body));
        tokio::time::sleep(Duration::from_millis(500)).await;
        clock.postpone(Duration::from_secs(1));
        assert_eq!(reading.await.unwrap().unwrap().len(), 15);
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_in_time_is_read_whole() {
        let bytes = stream::iter([Ok::<_, Infallible>(Bytes::from_static(b"ab"))]);
        let body = DeadlineBody::new(axum::body::Body::from_stream(bytes), Duration::from_secs(1));
        assert_eq!(read_all(body).await.unwrap(), b"ab");
    }
}
