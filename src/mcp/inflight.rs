//! The bytes of HTTP requests being handled at once, across every connection. A request with
//! a body takes its declared length (the body cap when it declares none) before a byte of the
//! body is read, and gives it back when its answer starts — an MCP tool call as soon as its
//! proposal is made, not while it waits for the reviewer. Bodies under 64 KiB take nothing. A burst of large requests costs its
//! bodies, their parsed copies and the edits computed from them; this bounds that, as the
//! open-proposal cap bounds what the proposals keep after (docs/DESIGN.md §7).

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The bytes of request bodies handled at once: 32 one-MiB edits together, a request larger
/// than this takes all of it.
pub const IN_FLIGHT_BYTES: usize = 32 << 20;

/// A body declared shorter than this takes nothing from the budget (so a decision, a wait or
/// a small edit never queues behind large ones), nor does an MCP message read and found so.
pub const SMALL_BODY_BYTES: usize = 64 << 10;

/// How long a request waits for its bytes before it is refused as busy (added to the time its
/// connection has to send the body, none of which is read meanwhile).
pub const IN_FLIGHT_WAIT: Duration = Duration::from_secs(20);

/// The budget of bytes in flight; clones share it.
#[derive(Clone)]
pub(crate) struct InFlight {
    bytes: Arc<Semaphore>,
    total: usize,
    wait: Duration,
}

impl InFlight {
    /// A budget of `total` bytes, each request waiting at most `wait` for its share.
    pub(crate) fn new(total: usize, wait: Duration) -> InFlight {
        let total = total.clamp(1, u32::MAX as usize);
        InFlight {
            bytes: Arc::new(Semaphore::new(total)),
            total,
            wait,
        }
    }

    /// Take `bytes` (at most the whole budget, at least one), waiting for them; `None` when
    /// other requests held them past the wait.
    pub(crate) async fn take(&self, bytes: usize) -> Option<Share> {
        let n = u32::try_from(bytes.clamp(1, self.total)).unwrap_or(u32::MAX);
        let permit = tokio::time::timeout(self.wait, self.bytes.clone().acquire_many_owned(n))
            .await
            .ok()?
            .ok()?;
        Some(Share(Arc::new(Mutex::new(Some(permit)))))
    }
}

/// One request's share of the budget: given back when its last clone is dropped, or at
/// [`Share::release`], whichever comes first.
#[derive(Clone, Debug)]
pub struct Share(Arc<Mutex<Option<OwnedSemaphorePermit>>>);

impl Share {
    /// Give the share back now (what the request made is counted elsewhere from here on).
    pub fn release(&self) {
        drop(self.0.lock().unwrap_or_else(PoisonError::into_inner).take());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_request_waits_for_bytes_others_hold_and_gets_them_when_released() {
        let budget = InFlight::new(10, Duration::from_millis(200));
        let first = budget.take(8).await.expect("free budget");
        // 8 + 4 > 10: the second waits past its wait and is refused.
        assert!(budget.take(4).await.is_none());
        let copy = first.clone();
        first.release();
        // Released by one clone: given back though another clone lives.
        let second = budget.take(4).await.expect("given back at release");
        drop(copy);
        drop(second);
        // A request larger than the whole budget takes all of it, and no more.
        let all = budget.take(1 << 30).await.expect("clamped to the budget");
        assert!(budget.take(1).await.is_none());
        drop(all);
        assert!(budget.take(10).await.is_some());
    }
}
