//! The agents connected to a gate (docs/DESIGN.md §1, §4): every connection an agent's edits
//! arrive over (an MCP session over HTTP, a stdio server's own session, a forwarding stdio
//! server's link to the gate) is an [`AgentLink`] for as long as it lasts. A proposal keeps
//! an [`AgentRef`] to the link it came over, so its review shows whether that agent is still
//! there; when the link ends, the gate withdraws the agent's pending reviews at once (an edit
//! nobody waits for is never written), and the status bar counts the links that are open.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Why a review was withdrawn when its agent's connection ended (its row says so).
pub const GONE: &str = "agent gone";

/// Why a review was withdrawn when its agent cancelled the call.
pub const CANCELLED: &str = "agent cancelled";

/// What a review shows of its agent: whether it is still connected (absent when it came over
/// no agent's connection, e.g. a script's call to the review API) and why the review was
/// withdrawn without a decision.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AgentMark {
    /// Whether the agent that sent it is still connected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connected: Option<bool>,
    /// Why it was withdrawn ([`GONE`], [`CANCELLED`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub withdrawn: Option<String>,
}

impl AgentMark {
    /// The mark of a review that came over `agent` and was withdrawn for `withdrawn`
    /// (none when there is nothing to say).
    pub(crate) fn of(agent: Option<&AgentRef>, withdrawn: Option<&str>) -> Option<AgentMark> {
        let connected = agent.map(AgentRef::connected);
        (connected.is_some() || withdrawn.is_some()).then(|| AgentMark {
            connected,
            withdrawn: withdrawn.map(str::to_string),
        })
    }
}

/// A connected agent's number, unique within a gate's life.
pub type AgentId = u64;

/// What a proposal keeps of the link it came over: the link's number and whether it is
/// still open.
#[derive(Clone)]
pub struct AgentRef {
    id: AgentId,
    open: Arc<AtomicBool>,
}

impl AgentRef {
    /// The link's number.
    pub fn id(&self) -> AgentId {
        self.id
    }

    /// Whether the agent is still connected.
    pub fn connected(&self) -> bool {
        self.open.load(Ordering::SeqCst)
    }
}

impl std::fmt::Debug for AgentRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "agent {} ({})", self.id, self.connected())
    }
}

impl PartialEq for AgentRef {
    fn eq(&self, other: &AgentRef) -> bool {
        self.id == other.id
    }
}

impl Eq for AgentRef {}

/// The open links of a gate, by number.
#[derive(Default)]
pub(crate) struct Agents {
    next: AtomicU64,
    open: Mutex<HashMap<AgentId, AgentRef>>,
}

impl Agents {
    fn open(&self) -> std::sync::MutexGuard<'_, HashMap<AgentId, AgentRef>> {
        self.open
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A new open link's reference.
    pub(crate) fn connect(&self) -> AgentRef {
        let id = self.next.fetch_add(1, Ordering::SeqCst) + 1;
        let agent = AgentRef {
            id,
            open: Arc::new(AtomicBool::new(true)),
        };
        self.open().insert(id, agent.clone());
        agent
    }

    /// Link `id` ended: it is closed and forgotten.
    pub(crate) fn disconnect(&self, id: AgentId) {
        if let Some(agent) = self.open().remove(&id) {
            agent.open.store(false, Ordering::SeqCst);
        }
    }

    /// The open link numbered `id`, if it is open.
    pub(crate) fn get(&self, id: AgentId) -> Option<AgentRef> {
        self.open().get(&id).cloned()
    }

    /// How many links are open.
    pub(crate) fn count(&self) -> usize {
        self.open().len()
    }
}

/// An open connection of an agent, held by whatever lives as long as the connection (an MCP
/// session's server, a link's event stream); dropping the last clone ends it.
#[derive(Clone)]
pub struct AgentLink {
    inner: Arc<LinkInner>,
}

/// What a link's end is told to (the gate withdraws the agent's pending reviews).
type OnGone = Box<dyn Fn(AgentId) + Send + Sync>;

struct LinkInner {
    agent: AgentRef,
    on_gone: OnGone,
}

impl Drop for LinkInner {
    fn drop(&mut self) {
        (self.on_gone)(self.agent.id);
    }
}

impl AgentLink {
    /// A link for `agent`, telling `on_gone` once, when it ends.
    pub(crate) fn new(
        agent: AgentRef,
        on_gone: impl Fn(AgentId) + Send + Sync + 'static,
    ) -> AgentLink {
        AgentLink {
            inner: Arc::new(LinkInner {
                agent,
                on_gone: Box::new(on_gone),
            }),
        }
    }

    /// The link's reference, for the proposals that come over it.
    pub fn agent(&self) -> &AgentRef {
        &self.inner.agent
    }

    /// The link's number.
    pub fn id(&self) -> AgentId {
        self.inner.agent.id
    }
}

impl std::fmt::Debug for AgentLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.inner.agent.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_ends_with_its_last_holder_and_is_counted_while_open() {
        let agents = Agents::default();
        let record = Arc::new(Mutex::new(Vec::new()));
        let on_gone = |r: &Arc<Mutex<Vec<AgentId>>>| {
            let r = Arc::clone(r);
            move |id| r.lock().unwrap().push(id)
        };
        let a = AgentLink::new(agents.connect(), on_gone(&record));
        let b = AgentLink::new(agents.connect(), on_gone(&record));
        assert_ne!(a.id(), b.id());
        assert_eq!(agents.count(), 2);
        let kept = a.agent().clone();
        let clone = a.clone();
        drop(a);
        assert!(record.lock().unwrap().is_empty(), "a clone still holds it");
        drop(clone);
        assert_eq!(*record.lock().unwrap(), [kept.id()]);
        agents.disconnect(kept.id());
        assert!(!kept.connected());
        assert!(agents.get(kept.id()).is_none() && agents.get(b.id()).is_some());
        assert_eq!(agents.count(), 1);
    }
}
