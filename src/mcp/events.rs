//! The review API's event log: the gate's events numbered in order and the latest of them
//! kept in a ring, so a reviewer whose stream broke reconnects with `Last-Event-ID` and
//! replays what it missed (or is told to reload when that fell out of the ring).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use tokio::sync::broadcast;

use crate::review::queue::{Event, Gate};

/// How many recent events a reconnecting reviewer can replay.
const KEPT: usize = 1024;

/// A numbered event.
pub(crate) type Numbered = (u64, Event);

/// The numbered events of one gate.
#[derive(Clone)]
pub(crate) struct EventLog {
    ring: Arc<Mutex<VecDeque<Numbered>>>,
    live: broadcast::Sender<Numbered>,
}

impl EventLog {
    /// Start numbering `gate`'s events (on the current runtime, while the gate lives).
    pub(crate) fn start(gate: &Gate) -> EventLog {
        let (live, _) = broadcast::channel(KEPT);
        let log = EventLog {
            ring: Arc::new(Mutex::new(VecDeque::with_capacity(KEPT))),
            live,
        };
        let mut rx = gate.subscribe();
        let me = log.clone();
        tokio::spawn(async move {
            let mut next = 1u64;
            loop {
                match rx.recv().await {
                    Ok(e) => {
                        me.push((next, e));
                        next += 1;
                    }
                    Err(broadcast::error::RecvError::Lagged(n)) => next += n,
                    Err(broadcast::error::RecvError::Closed) => break,
                }
            }
        });
        log
    }

    fn push(&self, numbered: Numbered) {
        let mut ring = self
            .ring
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if ring.len() == KEPT {
            ring.pop_front();
        }
        ring.push_back(numbered.clone());
        // Sent under the ring's lock: a reader that took the ring then subscribed misses none.
        let _ = self.live.send(numbered);
    }

    /// The live stream, and the events after `last` to replay first: `None` when some of
    /// them are no longer kept (the reader must reload).
    pub(crate) fn follow(
        &self,
        last: Option<u64>,
    ) -> (broadcast::Receiver<Numbered>, Option<Vec<Numbered>>) {
        let ring = self
            .ring
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let rx = self.live.subscribe();
        let Some(last) = last else {
            return (rx, Some(Vec::new()));
        };
        let oldest = ring.front().map_or(u64::MAX, |(id, _)| *id);
        let newest = ring.back().map_or(0, |(id, _)| *id);
        if last < newest && last + 1 < oldest {
            return (rx, None);
        }
        let missed = ring.iter().filter(|(id, _)| *id > last).cloned().collect();
        (rx, Some(missed))
    }
}
