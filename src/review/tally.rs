//! What the proposals hold, kept as they change, for the gate's caps (docs/DESIGN.md §7):
//! each proposal's bytes are counted once, when it is built, and the gate keeps the running
//! totals under its queue's lock (the open proposals' with each client's count; the closed
//! ones' it remembers), so a new proposal is weighed against the caps, and the closed ones
//! against what is remembered of them, without walking the others.

use std::collections::HashMap;
#[cfg(test)]
use std::collections::HashSet;

use super::proposal::Proposal;

/// The content one proposal holds, counted once.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Held {
    /// Its own bytes ([`Proposal::own_bytes`]).
    own: usize,
    /// Its originals, each once: the address and the bytes ([`Proposal::originals`]).
    originals: Vec<(usize, usize)>,
}

impl Held {
    /// What `p` holds (walks its content: done outside the queue's lock).
    pub(crate) fn of(p: &Proposal) -> Held {
        let mut originals: Vec<(usize, usize)> = Vec::new();
        for (at, bytes) in p.originals() {
            if !originals.iter().any(|(a, _)| *a == at) {
                originals.push((at, bytes));
            }
        }
        Held {
            own: p.own_bytes(),
            originals,
        }
    }

    /// Its bytes, each original counted unless `seen` holds it already (it does after): a
    /// recount, for the tests (the queue keeps running counts, [`Pool`]).
    #[cfg(test)]
    pub(crate) fn bytes(&self, seen: &mut HashSet<usize>) -> usize {
        let originals: usize = self
            .originals
            .iter()
            .filter(|(at, _)| seen.insert(*at))
            .map(|(_, bytes)| bytes)
            .sum();
        self.own + originals
    }
}

/// The bytes a set of proposals holds together (an original counted once however many of
/// them hold it), and how many they are: kept as proposals join and leave the set, so the
/// total is known without walking them.
#[derive(Debug, Default)]
pub(crate) struct Pool {
    bytes: usize,
    /// The proposals counted.
    count: usize,
    /// The originals the proposals counted hold: address → (bytes, how many proposals hold
    /// it). An address stays one original's while it is here: the proposals counted keep it
    /// alive.
    originals: HashMap<usize, (usize, usize)>,
}

impl Pool {
    /// The bytes the proposals counted hold.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// How many proposals are counted.
    pub(crate) fn count(&self) -> usize {
        self.count
    }

    /// The bytes `held` would add: its originals that proposals counted hold already are free.
    pub(crate) fn cost(&self, held: &Held) -> usize {
        let originals: usize = held
            .originals
            .iter()
            .filter(|(at, _)| !self.originals.contains_key(at))
            .map(|(_, bytes)| bytes)
            .sum();
        held.own + originals
    }

    /// Count a proposal holding `held`.
    pub(crate) fn add(&mut self, held: &Held) {
        self.bytes += self.cost(held);
        self.count += 1;
        for &(at, bytes) in &held.originals {
            self.originals.entry(at).or_insert((bytes, 0)).1 += 1;
        }
    }

    /// Count a proposal holding `held` no more (what [`Pool::add`] counted for it).
    pub(crate) fn remove(&mut self, held: &Held) {
        let mut freed = held.own;
        for (at, _) in &held.originals {
            let Some((bytes, holders)) = self.originals.get_mut(at) else {
                debug_assert!(false, "an original removed that was never added");
                continue;
            };
            *holders -= 1;
            if *holders == 0 {
                freed += *bytes;
                self.originals.remove(at);
            }
        }
        debug_assert!(freed <= self.bytes, "more bytes removed than added");
        debug_assert!(self.count > 0, "more proposals removed than added");
        self.bytes = self.bytes.saturating_sub(freed);
        self.count = self.count.saturating_sub(1);
    }
}

/// The open proposals' bytes in all (an original counted once however many hold it), and
/// the open proposals of each client with the places taken by its requests on their way in.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    open: Pool,
    /// Open proposals and places taken, per client (no entry: none).
    clients: HashMap<Option<String>, usize>,
}

impl Tally {
    /// The bytes the open proposals hold.
    pub(crate) fn bytes(&self) -> usize {
        self.open.bytes()
    }

    /// The bytes `held` would add: its originals that open proposals hold already are free.
    pub(crate) fn cost(&self, held: &Held) -> usize {
        self.open.cost(held)
    }

    /// Count `held` as an open proposal's.
    pub(crate) fn add(&mut self, held: &Held) {
        self.open.add(held);
    }

    /// Count `held` no more (what [`Tally::add`] counted for it).
    pub(crate) fn remove(&mut self, held: &Held) {
        self.open.remove(held);
    }

    /// The open proposals of `client` and the places its requests hold.
    pub(crate) fn count(&self, client: Option<&str>) -> usize {
        self.clients
            .get(&client.map(String::from))
            .copied()
            .unwrap_or(0)
    }

    /// One more place of `client`'s taken (a request on its way in, then its open proposal).
    pub(crate) fn take_place(&mut self, client: Option<&str>) {
        *self.clients.entry(client.map(String::from)).or_insert(0) += 1;
    }

    /// A place of `client`'s given back (the request came to nothing, or the proposal closed).
    pub(crate) fn free_place(&mut self, client: Option<&str>) {
        let key = client.map(String::from);
        match self.clients.get_mut(&key) {
            Some(n) if *n > 1 => *n -= 1,
            Some(_) => {
                self.clients.remove(&key);
            }
            None => debug_assert!(false, "a place freed that was never taken"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held(own: usize, originals: &[(usize, usize)]) -> Held {
        Held {
            own,
            originals: originals.to_vec(),
        }
    }

    #[test]
    fn a_shared_original_is_counted_once_and_freed_with_its_last_holder() {
        let mut t = Tally::default();
        let (a, b) = (held(10, &[(1, 100)]), held(20, &[(1, 100), (2, 50)]));
        assert_eq!(t.cost(&a), 110);
        t.add(&a);
        assert_eq!(t.cost(&b), 70);
        t.add(&b);
        assert_eq!(t.bytes(), 180);
        t.remove(&a);
        assert_eq!(t.bytes(), 170);
        t.remove(&b);
        assert_eq!(
            (t.bytes(), t.open.count(), t.open.originals.len()),
            (0, 0, 0)
        );
        let mut seen = HashSet::new();
        assert_eq!((a.bytes(&mut seen), b.bytes(&mut seen)), (110, 70));
    }

    #[test]
    fn places_are_counted_per_client_and_forgotten_at_zero() {
        let mut t = Tally::default();
        t.take_place(Some("a"));
        t.take_place(Some("a"));
        t.take_place(None);
        assert_eq!(
            (t.count(Some("a")), t.count(None), t.count(Some("b"))),
            (2, 1, 0)
        );
        t.free_place(Some("a"));
        t.free_place(Some("a"));
        t.free_place(None);
        assert!(t.clients.is_empty());
    }
}
