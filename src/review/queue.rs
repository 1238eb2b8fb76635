//! The gate: the queue of proposals as an async service that the MCP server, the TUI and the
//! review API share. Edits come in as requests; the policy decides whether they are written at
//! once, kept as dry-runs for a commit by run_id, or wait for a person; decisions come back
//! from whichever reviewer acts first; subscribers hear about every change.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use serde::Serialize;
use tokio::sync::{broadcast, watch};

use super::account::{self, LeftOut};
use super::agents::{self, AgentId, AgentLink, AgentMark, AgentRef, Agents};
use super::ahead;
use super::all_or_none;
use super::edit::ProposedEdit;
use super::fallback::Fallback;
use super::intent::Intent;
use super::journal::{Entry, Journal, Landed, Stored};
use super::pending::{Keeper, Look, PendingStore};
use super::policy::{Action, Policy};
use super::proposal::{Decision, FileChange, Proposal, Review, RunId, State};
use super::revision;
use super::tally::{Held, Pool, Tally};
use crate::error::{Error, ErrorCode, Result};
use crate::workspace::Workspace;
use crate::workspace::paths::SafePath;

/// A file's lock in the queue, held by an edit from its computation to its write.
type FileGuard = tokio::sync::OwnedMutexGuard<()>;

/// How many times a request takes its files' locks, its paths leading elsewhere each time
/// it holds them ([`Gate::lock_files`]).
const LOCK_TRIES: usize = 4;

/// The lock keys of paths resolved: each file's absolute path, sorted, once (a path that
/// did not resolve has none: its request fails before it reads anything).
fn lock_keys(resolved: &[Result<SafePath>]) -> Vec<std::path::PathBuf> {
    let mut keys: Vec<std::path::PathBuf> = resolved
        .iter()
        .filter_map(|r| r.as_ref().ok())
        .map(|p| p.abs.clone())
        .collect();
    keys.sort();
    keys.dedup();
    keys
}

/// `path` when it is one of the files locked (`keys`, sorted), else why it is refused.
fn unmoved(path: SafePath, keys: &[std::path::PathBuf]) -> Result<SafePath> {
    if keys.binary_search(&path.abs).is_ok() {
        return Ok(path);
    }
    Err(Error::new(
        ErrorCode::InvalidPath,
        format!(
            "`{}` led to another file each time its lock was taken (a symlinked directory on \
             its way keeps being switched); send the edit again",
            path.rel
        ),
    ))
}

/// How many closed proposals the gate remembers for the queue view.
const KEEP_CLOSED: usize = 500;

/// The content closed proposals hold together, at most: the oldest go first past it.
const KEEP_CLOSED_BYTES: usize = 128 << 20;

/// Open proposals (pending or dry-run) one client may hold at once.
pub const MAX_OPEN_PER_CLIENT: usize = 64;

/// The content all open proposals hold together, at most (a file's original counted once
/// however many proposals start from it). Each proposal's bytes are counted once, when it is
/// built, into a running total ([`Tally`]).
pub const MAX_OPEN_BYTES: usize = 256 << 20;

/// A change in the queue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "event", content = "run_id", rename_all = "lowercase")]
pub enum Event {
    /// A proposal arrived.
    New(RunId),
    /// A proposal changed (rebased, or a dry-run became a pending review).
    Updated(RunId),
    /// A proposal was decided, applied, expired or withdrawn.
    Decided(RunId),
}

/// What the queue view and the tool results show of a proposal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Summary {
    /// The run id.
    pub run_id: RunId,
    /// The tool that proposed it.
    pub tool: String,
    /// The MCP client, if known.
    pub client: Option<String>,
    /// Root-relative paths.
    pub paths: Vec<String>,
    /// Where it stands.
    pub state: State,
    /// Lines added.
    pub added: usize,
    /// Lines removed.
    pub removed: usize,
    /// Hunks.
    pub hunks: usize,
    /// Seconds since the epoch when proposed.
    pub created: u64,
    /// Seconds left for a dry-run.
    pub expires_in: Option<u64>,
    /// The unified diff.
    pub diff: String,
    /// What the engines tolerated.
    pub warnings: Vec<String>,
    /// The files whose result has a parse error the original did not (docs/DESIGN.md §5.5),
    /// for the TUI's marks: taken from the check itself, never read back from warning text.
    #[serde(default)]
    pub syntax: Vec<SyntaxMark>,
    /// Lines the edit deletes that it does not show (docs/DESIGN.md §4).
    #[serde(default)]
    pub unseen_deletions: usize,
    /// The same per hunk (indices over all files' hunks, as in a decision); empty when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unseen_hunks: Vec<usize>,
    /// The decision, once taken.
    pub review: Option<Review>,
    /// What the reviewer left out of the proposal when accepting, hunks and lines with their
    /// text (docs/DESIGN.md §4); `diff`, `added`, `removed` and `hunks` are then what was
    /// written.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<LeftOut>,
    /// It was applied, then undone (from the TUI, the review API or `patchgate undo`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub undone: bool,
    /// For a failed agent call: its error code and whole message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// For a revision (docs/DESIGN.md §4): the rejected review it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision_of: Option<RunId>,
    /// Its revision number: 2 answers a first proposal, 3 that answer, and so on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<u32>,
    /// The note the person rejected that review with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_note: Option<String>,
    /// A unified diff from the rejected proposal's result to this one's (at most 64 KiB;
    /// empty: the same result again).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interdiff: Option<String>,
    /// Whether its agent is still connected, and why it was withdrawn (docs/DESIGN.md §4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<AgentMark>,
}

/// A file's new parse errors in a review: the file, the 1-based line of the first in the
/// proposed content, and the warning (`syntax: LINE:COL: what`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct SyntaxMark {
    /// The root-relative path.
    pub path: String,
    /// The line of the first new error, from 1.
    pub line: usize,
    /// The file's `syntax:` warning.
    pub warning: String,
}

impl Summary {
    /// The summary of `p`.
    pub fn of(p: &Proposal) -> Summary {
        let (added, removed) = p.counts();
        let unseen: Vec<Vec<usize>> = p.files.iter().map(FileChange::unseen).collect();
        let unseen_deletions = unseen.iter().flatten().sum();
        Summary {
            run_id: p.run_id.clone(),
            tool: p.tool.clone(),
            client: p.client.clone(),
            paths: p.paths(),
            state: p.state,
            added,
            removed,
            hunks: p.hunk_count(),
            created: p
                .created
                .duration_since(SystemTime::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0),
            expires_in: p.expires_in(),
            diff: p.unified(),
            warnings: warnings(p),
            syntax: p
                .files
                .iter()
                .filter_map(|f| {
                    Some(SyntaxMark {
                        path: f.path.rel.clone(),
                        line: f.syntax.first()?.line,
                        warning: crate::syntax::warning(&f.syntax)?,
                    })
                })
                .collect(),
            unseen_deletions,
            unseen_hunks: if unseen_deletions == 0 {
                Vec::new()
            } else {
                unseen.concat()
            },
            review: p.review.clone(),
            left_out: p.left_out.clone(),
            undone: p.undone,
            failure: p.failure.as_ref().map(|f| f.message.clone()),
            revision_of: p.revision.as_ref().map(|r| r.of.clone()),
            revision: p.revision.as_ref().map(|r| r.number),
            previous_note: p.revision.as_ref().map(|r| r.note.clone()),
            interdiff: p.revision.as_ref().map(|r| r.interdiff.clone()),
            agent: AgentMark::of(p.agent.as_ref(), p.withdrawn.as_deref()).or_else(|| {
                // A review from before a restart: the agent that sent it is not connected.
                p.restored.then_some(AgentMark {
                    connected: Some(false),
                    withdrawn: None,
                })
            }),
        }
    }
}

/// Each file's warnings, and its `unseen:` warning (docs/DESIGN.md §4); a review of several
/// files names the file of each.
fn warnings(p: &Proposal) -> Vec<String> {
    p.files
        .iter()
        .flat_map(|f| {
            f.warnings
                .iter()
                .cloned()
                .chain(f.unseen_warning())
                .map(|w| {
                    if p.files.len() > 1 {
                        format!("{}: {w}", f.path.rel)
                    } else {
                        w
                    }
                })
        })
        .collect()
}

/// The result of an edit request as far as it went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Written.
    Applied(Summary),
    /// Computed and kept for a commit by run_id.
    DryRun(Summary),
    /// Waiting for a person.
    Pending(Summary),
    /// A person said no; nothing was written.
    Rejected(Summary),
    /// Nothing was written, for this reason.
    Failed(Option<Summary>, Error),
}

/// An edit request: the files of one tool call.
#[derive(Debug, Clone)]
pub struct Request {
    /// The tool (`fast_apply`, `patch_file`, …).
    pub tool: String,
    /// The MCP client's name.
    pub client: Option<String>,
    /// The edits, all or nothing.
    pub edits: Vec<ProposedEdit>,
    /// Only compute; keep for a commit by run_id.
    pub dry_run: bool,
    /// Keep a failure before anything was proposed as a failed review (an agent's call).
    pub keep_failure: bool,
}

/// Where a request comes from besides its client's name (docs/DESIGN.md §4).
#[derive(Debug, Clone, Default)]
pub struct Origin {
    /// The connection of the agent that sent it: when it ends, the review is withdrawn.
    pub agent: Option<AgentRef>,
    /// The rejected review the request declares it answers (the edit tools' `revision_of`).
    pub revision_of: Option<RunId>,
}

struct Slot {
    proposal: Proposal,
    /// What `proposal` holds, counted when it was built (in the [`Tally`] while it is open).
    held: Held,
    outcome: watch::Sender<Option<Outcome>>,
    /// A decision holds the proposal (it is being written): nothing else may close it, and
    /// a second decision is refused. The first decision wins.
    deciding: bool,
    /// Why it is to be withdrawn once the decision holding it gives it back (its agent
    /// cancelled or went away meanwhile).
    withdraw_wanted: Option<String>,
}

/// Who closes a proposal in [`Gate::settle`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum Closer {
    /// The decision that claimed it.
    Claimant,
    /// Anything else (expiry, withdrawal, the reviewer leaving): only while it is open and
    /// no decision holds it.
    Other,
    /// Making room at a client's cap: only while it is still an unclaimed dry-run (a commit
    /// may have made it a pending review meanwhile, which is never evicted).
    Eviction,
}

#[derive(Default)]
struct Slots {
    order: Vec<RunId>,
    map: HashMap<RunId, Slot>,
    /// What the open proposals hold, and each client's places.
    tally: Tally,
    /// What the closed proposals held here hold together, and how many they are: kept as
    /// they close, change and are forgotten, so a new proposal weighs them against
    /// [`KEEP_CLOSED`] and [`KEEP_CLOSED_BYTES`] without walking them.
    closed: Pool,
    /// No dry-run held here expires before this (`None`: none with a lifetime is held): a
    /// sweep before it has nothing to expire and looks at no proposal. Lowered by each
    /// dry-run added, set again by each sweep that looks.
    first_expiry: Option<SystemTime>,
    /// How many proposals held here a person rejected with a note: with none, no request
    /// can be the revision of one, and none is looked for among the proposals.
    answerable: usize,
}

/// A client's place among its open proposals, taken by a request on its way in: it becomes
/// the open proposal's when [`Gate::insert_open`] admits it, else it is given back when
/// dropped (the request failed, was refused or was cancelled).
struct Place {
    gate: Gate,
    client: Option<String>,
    /// Still this request's to give back.
    taken: bool,
}

impl Drop for Place {
    fn drop(&mut self) {
        if self.taken {
            self.gate.slots().tally.free_place(self.client.as_deref());
        }
    }
}

impl Slots {
    /// Add `proposal`, holding `held` (the caller counted it in the tally when open), and
    /// forget the oldest closed proposals beyond [`KEEP_CLOSED`] and [`KEEP_CLOSED_BYTES`].
    fn push(&mut self, proposal: Proposal, held: Held) {
        let (tx, _) = watch::channel(None);
        if proposal.state == State::DryRun
            && let Some(t) = proposal.expires_at
        {
            self.first_expiry = Some(self.first_expiry.map_or(t, |f| f.min(t)));
        }
        if !proposal.state.is_open() {
            self.closed.add(&held);
        }
        self.answerable += usize::from(revision::answerable(&proposal));
        self.order.push(proposal.run_id.clone());
        self.map.insert(
            proposal.run_id.clone(),
            Slot {
                proposal,
                held,
                outcome: tx,
                deciding: false,
                withdraw_wanted: None,
            },
        );
        self.forget_old_closed();
    }

    /// Forget the oldest closed proposals while more than [`KEEP_CLOSED`] are held or they
    /// hold more than [`KEEP_CLOSED_BYTES`] together: the newest closed ones stay, within the
    /// count and the bytes. Their running count ([`Slots::closed`]) tells when, so within
    /// both nothing is looked at; past them the oldest are looked up from the front of
    /// `order`, usually one, and removed by their place there.
    fn forget_old_closed(&mut self) {
        // Places in `order`, oldest first.
        let mut drop: Vec<usize> = Vec::new();
        let mut at = 0;
        while self.closed.count() > KEEP_CLOSED || self.closed.bytes() > KEEP_CLOSED_BYTES {
            let Some(id) = self.order.get(at) else {
                debug_assert!(false, "closed proposals counted that are not held");
                break;
            };
            if self
                .map
                .get(id)
                .is_some_and(|s| !s.proposal.state.is_open())
                && let Some(gone) = self.map.remove(id)
            {
                self.closed.remove(&gone.held);
                self.answerable -= usize::from(revision::answerable(&gone.proposal));
                drop.push(at);
            }
            at += 1;
        }
        if drop.is_empty() {
            return;
        }
        let mut at = 0;
        let mut next = drop.iter().copied().peekable();
        self.order.retain(|_| {
            let keep = next.peek() != Some(&at);
            if !keep {
                next.next();
            }
            at += 1;
            keep
        });
    }

    /// Change proposal `run_id` with `change`, after which it holds `held`: the tally keeps
    /// counting it right while it is open (a rebase, the files an acceptance wrote).
    fn change(&mut self, run_id: &str, held: Held, change: impl FnOnce(&mut Slot)) {
        let Slots {
            map, tally, closed, ..
        } = self;
        let Some(slot) = map.get_mut(run_id) else {
            return;
        };
        if slot.proposal.state.is_open() {
            tally.remove(&slot.held);
            tally.add(&held);
        } else {
            closed.remove(&slot.held);
            closed.add(&held);
        }
        slot.held = held;
        change(slot);
    }
}

struct Inner {
    ws: Workspace,
    policy: Policy,
    journal: Journal,
    fallback: Option<Fallback>,
    slots: Mutex<Slots>,
    locks: Mutex<HashMap<std::path::PathBuf, Arc<tokio::sync::Mutex<()>>>>,
    events: broadcast::Sender<Event>,
    /// [`MAX_OPEN_BYTES`] unless set otherwise.
    open_bytes_cap: usize,
    /// Undos the agents have not heard of yet, and how far the journal was read for them.
    undos: Mutex<Undos>,
    /// The journal is watched for undos from other processes ([`Gate::follow_journal`]).
    following: std::sync::atomic::AtomicBool,
    /// Proposals were made or closed since the memory they freed was last given back to
    /// the system (by the same watch, at most once a poll).
    churned: std::sync::atomic::AtomicBool,
    /// The agents connected now.
    agents: Agents,
    /// The user's policy hook, if any (docs/DESIGN.md §4).
    hook: Option<super::hook::Hook>,
    /// Where the open reviews are kept across a restart, once the gate holds its root
    /// ([`Gate::keep_open_reviews`]).
    store: std::sync::OnceLock<Keeper>,
}

/// How often the journal is looked at for undos other processes made (`patchgate undo`).
const JOURNAL_POLL: Duration = Duration::from_secs(1);

/// Undo notices kept for the agents at most (the oldest go first).
const MAX_NOTICES: usize = 256;

/// The longest a review is waited for, whatever the timeout asked (about 30 years): the
/// deadline's arithmetic stays within what the clock holds.
const LONGEST_WAIT: Duration = Duration::from_secs(30 * 365 * 24 * 3600);

/// An undo one agent still has to hear of: its client's name and link, the run, its paths.
struct Notice {
    client: Option<String>,
    agent: Option<AgentRef>,
    run: RunId,
    paths: Vec<String>,
}

impl Notice {
    /// Whether the caller named `client` over `agent` is the one to tell: the same link; or,
    /// where either came over none or the run's link has ended (the agent started again),
    /// the same name (an unnamed caller is told nothing it cannot be known to own).
    fn for_caller(&self, client: Option<&str>, agent: Option<&AgentRef>) -> bool {
        match (&self.agent, agent) {
            (Some(mine), Some(theirs)) if mine.id() == theirs.id() => true,
            (Some(mine), Some(_)) if mine.connected() => false,
            _ => client.is_some() && self.client.as_deref() == client,
        }
    }
}

/// Undos the agents still have to hear of.
#[derive(Default)]
struct Undos {
    /// The journal's bytes read for `undone` entries.
    read: u64,
    /// (client, run undone, its paths), oldest first.
    notices: std::collections::VecDeque<Notice>,
}

/// The gate. Cheap to clone; all clones share one queue.
#[derive(Clone)]
pub struct Gate {
    inner: Arc<Inner>,
}

impl Gate {
    /// A gate over `ws` with `policy`, journaling to `journal`. Temp files a crashed writer
    /// left (stale ones, named as patchgate names them) under the root and in the journal's
    /// pre-image store are removed first.
    pub fn new(
        ws: Workspace,
        policy: Policy,
        journal: Journal,
        fallback: Option<Fallback>,
    ) -> Gate {
        let stray = crate::workspace::fs::clean_stray_temps(ws.root.path());
        let stored = journal.sweep_temps();
        if stray + stored > 0 {
            tracing::info!(
                "removed {stray} stray temp files under {} and {stored} beside the journal",
                ws.root.path().display()
            );
        }
        let (events, _) = broadcast::channel(1024);
        // Undos from before the gate started concern no run of its own.
        let read = journal.bytes();
        Gate {
            inner: Arc::new(Inner {
                ws,
                policy,
                fallback,
                slots: Mutex::new(Slots::default()),
                locks: Mutex::new(HashMap::new()),
                undos: Mutex::new(Undos {
                    read,
                    notices: std::collections::VecDeque::new(),
                }),
                journal,
                events,
                open_bytes_cap: MAX_OPEN_BYTES,
                following: std::sync::atomic::AtomicBool::new(false),
                churned: std::sync::atomic::AtomicBool::new(false),
                agents: Agents::default(),
                hook: None,
                store: std::sync::OnceLock::new(),
            }),
        }
    }

    /// Watch the journal for undos made by other processes (`patchgate undo RUN`), every
    /// [`JOURNAL_POLL`], for as long as the gate lives (once per gate; needs a runtime, else
    /// nothing is watched). Each look reads only what was appended since the last one.
    pub fn follow_journal(&self) {
        use std::sync::atomic::Ordering;
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        if self.inner.following.swap(true, Ordering::SeqCst) {
            return;
        }
        let weak = Arc::downgrade(&self.inner);
        rt.spawn(async move {
            let mut tick = tokio::time::interval(JOURNAL_POLL);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                let Some(inner) = weak.upgrade() else { break };
                let gate = Gate { inner };
                let look = move || {
                    gate.notice_undos();
                    gate.give_back_after_churn();
                };
                if tokio::task::spawn_blocking(look).await.is_err() {
                    break;
                }
            }
        });
    }

    /// Proposals made or closed since the last call freed memory: give it back to the system
    /// (glibc keeps it in each thread's arena otherwise). Called by the journal's watch, so
    /// at most once a poll.
    fn give_back_after_churn(&self) {
        if self
            .inner
            .churned
            .swap(false, std::sync::atomic::Ordering::Relaxed)
        {
            crate::syntax::parse::give_back_memory();
        }
    }

    /// Note that proposals were made or closed (see [`Gate::give_back_after_churn`]).
    fn churn(&self) {
        self.inner
            .churned
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// Read the journal's new lines for undos (any process's) and mark the runs undone.
    pub fn notice_undos(&self) {
        let mut undos = self
            .inner
            .undos
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let (runs, read) = self.inner.journal.undone_since(undos.read);
        undos.read = read;
        drop(undos);
        for run in runs {
            self.mark_undone(&run);
        }
    }

    /// Mark applied run `run_id` undone: its row follows, its waiting agent's outcome says so
    /// (an `await_review` of the run), and its client hears of it with its next tool result.
    fn mark_undone(&self, run_id: &str) {
        let notice = {
            let mut slots = self.slots();
            let Some(slot) = slots.map.get_mut(run_id) else {
                return;
            };
            if slot.proposal.state != State::Applied || slot.proposal.undone {
                return;
            }
            slot.proposal.undone = true;
            slot.outcome
                .send_replace(Some(Outcome::Applied(Summary::of(&slot.proposal))));
            Notice {
                client: slot.proposal.client.clone(),
                agent: slot.proposal.agent.clone(),
                run: run_id.to_string(),
                paths: slot.proposal.paths(),
            }
        };
        {
            let mut undos = self
                .inner
                .undos
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if undos.notices.len() >= MAX_NOTICES {
                undos.notices.pop_front();
            }
            undos.notices.push_back(notice);
        }
        self.emit(Event::Updated(run_id.to_string()));
    }

    /// The undos the caller (`client` over `agent`) has not heard of yet, (run, paths)
    /// oldest first; each is told once ([`Notice::for_caller`]).
    pub(crate) fn take_notices(
        &self,
        client: Option<&str>,
        agent: Option<&AgentRef>,
    ) -> Vec<(RunId, Vec<String>)> {
        let mut undos = self
            .inner
            .undos
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut out = Vec::new();
        undos.notices.retain(|n| {
            let mine = n.for_caller(client, agent);
            if mine {
                out.push((n.run.clone(), n.paths.clone()));
            }
            !mine
        });
        out
    }

    /// The gate with its open proposals capped at `bytes` of content in all instead of
    /// [`MAX_OPEN_BYTES`] (set before the gate is shared: later, nothing changes).
    pub fn with_open_bytes_cap(mut self, bytes: usize) -> Gate {
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.open_bytes_cap = bytes;
        }
        self
    }

    /// The gate with the user's policy `hook` (set before the gate is shared: later,
    /// nothing changes).
    pub fn with_hook(mut self, hook: Option<super::hook::Hook>) -> Gate {
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.hook = hook;
        }
        self
    }

    /// Keep this gate's open reviews (pending, and dry-runs within their TTL) across a
    /// restart in the state directory, and take back those a gate on the root left there
    /// (docs/DESIGN.md §4): only a gate that holds its root (the lock is the proof) does, so
    /// no other process reads or writes them meanwhile. Once per gate; returns how many came
    /// back.
    pub fn keep_open_reviews(&self, _held: &crate::workspace::rootlock::RootLock) -> usize {
        let weak = Arc::downgrade(&self.inner);
        let look = move |run_id: &str| weak.upgrade().map(|inner| Gate { inner }.look(run_id));
        let keeper = match Keeper::start(PendingStore::beside(&self.inner.journal), look) {
            Ok(k) => k,
            Err(e) => {
                tracing::warn!("open reviews are not kept across a restart: {e}");
                return 0;
            }
        };
        if self.inner.store.set(keeper).is_err() {
            return 0;
        }
        let Some(store) = self.inner.store.get().map(Keeper::store) else {
            return 0;
        };
        let found = store.load(&self.inner.ws, &self.inner.policy, &self.inner.journal);
        let mut back = 0;
        for p in found {
            let run_id = p.run_id.clone();
            if self.take_back(p) {
                back += 1;
                self.emit(Event::New(run_id));
            } else {
                store.forget(&run_id);
            }
        }
        if back > 0 {
            tracing::info!("{back} open reviews restored from before the gate started");
        }
        back
    }

    /// Put restored review `p` in the queue within its caps (a client's count, the bytes);
    /// `false` (logged) when it does not fit.
    fn take_back(&self, p: Proposal) -> bool {
        let held = Held::of(&p);
        let mut slots = self.slots();
        let client = p.client.clone();
        let fits = slots.tally.count(client.as_deref()) < MAX_OPEN_PER_CLIENT
            && slots.tally.bytes() + slots.tally.cost(&held) <= self.inner.open_bytes_cap
            && !slots.map.contains_key(&p.run_id);
        if !fits {
            tracing::warn!(
                "run {}: not restored: past the open proposals' caps",
                p.run_id
            );
            return false;
        }
        slots.tally.take_place(client.as_deref());
        slots.tally.add(&held);
        slots.push(p, held);
        true
    }

    /// Review `run_id` as the pending store keeps it: a copy while it is open.
    fn look(&self, run_id: &str) -> Option<Proposal> {
        let slots = self.slots();
        let slot = slots.map.get(run_id)?;
        slot.proposal.state.is_open().then(|| slot.proposal.clone())
    }

    /// Store open review `run_id` anew (it changed), when the gate keeps its reviews across
    /// a restart: in the store's line, not waited for.
    fn store(&self, run_id: &str) {
        if let Some(keeper) = self.inner.store.get() {
            keeper.later(run_id);
        }
    }

    /// [`Gate::store`], waited for (before a review is announced).
    async fn store_waited(&self, run_id: &str) {
        if let Some(keeper) = self.inner.store.get() {
            keeper.now(run_id).await;
        }
    }

    /// Remove closed review `run_id` from the store at once.
    fn unstore(&self, run_id: &str) {
        if let Some(keeper) = self.inner.store.get() {
            keeper.closed(run_id, || -> Look { Some(self.look(run_id)) });
        }
    }

    /// The workspace.
    pub fn workspace(&self) -> &Workspace {
        &self.inner.ws
    }

    /// The policy.
    pub fn policy(&self) -> &Policy {
        &self.inner.policy
    }

    /// The journal.
    pub fn journal(&self) -> &Journal {
        &self.inner.journal
    }

    /// Hear about every change to the queue.
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.inner.events.subscribe()
    }

    fn emit(&self, e: Event) {
        let _ = self.inner.events.send(e);
    }

    fn slots(&self) -> std::sync::MutexGuard<'_, Slots> {
        self.inner
            .slots
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn max_bytes(&self) -> u64 {
        self.inner.ws.config.max_file_bytes
    }

    /// Take a place of `client`'s among its open proposals, refused when it holds
    /// [`MAX_OPEN_PER_CLIENT`] already (open ones and requests on their way in): asked before
    /// its edit is computed, and held until its proposal is admitted or the request ends.
    /// At the cap, the client's oldest uncommitted dry-run makes room (it expires: a later
    /// commit of it answers `RUN_EXPIRED`); pending reviews, which wait for a person, are never
    /// evicted, so a client whose open proposals are all pending is refused.
    fn take_place(&self, client: Option<&str>) -> Result<Place> {
        self.sweep();
        loop {
            let oldest = {
                let mut slots = self.slots();
                let mine = slots.tally.count(client);
                if mine < MAX_OPEN_PER_CLIENT {
                    slots.tally.take_place(client);
                    return Ok(Place {
                        gate: self.clone(),
                        client: client.map(String::from),
                        taken: true,
                    });
                }
                let oldest = slots.order.iter().find(|id| {
                    slots.map.get(*id).is_some_and(|s| {
                        s.proposal.state == State::DryRun
                            && !s.deciding
                            && s.proposal.client.as_deref() == client
                    })
                });
                match oldest {
                    Some(id) => id.clone(),
                    None => {
                        return Err(Error::invalid_input(format!(
                            "too many open proposals: this client has {mine} waiting for review \
                             (at most {MAX_OPEN_PER_CLIENT}); wait for the reviewer before \
                             proposing more"
                        )));
                    }
                }
            };
            // Closed by `settle` (only while still an open, unclaimed dry-run): its place is
            // free, and the loop takes it unless a concurrent request took it first.
            tracing::info!("run {oldest}: the oldest dry-run made room for a new proposal");
            self.settle_by(Closer::Eviction, &oldest, State::Expired, None, |s| {
                Outcome::Failed(Some(s), expired(&oldest))
            });
        }
    }

    /// Admit open `proposal` in the place its request took, unless all open ones together
    /// would then hold more than the bytes cap ([`MAX_OPEN_BYTES`]): checked and counted in
    /// one step, so requests admitted at once never pass the cap together.
    fn insert_open(&self, proposal: Proposal, mut place: Place) -> Result<()> {
        self.churn();
        let held = Held::of(&proposal);
        let cap = self.inner.open_bytes_cap;
        let mut slots = self.slots();
        // The place becomes the proposal's, or is given back here.
        place.taken = false;
        let (bytes, adding) = (slots.tally.bytes(), slots.tally.cost(&held));
        if bytes + adding > cap {
            slots.tally.free_place(place.client.as_deref());
            return Err(Error::invalid_input(format!(
                "too many open proposals: together they hold {} MiB, and this one {} MiB more \
                 (at most {} MiB); commit or let the dry-runs expire, or wait for the reviewer, \
                 before proposing more",
                bytes >> 20,
                adding.div_ceil(1 << 20),
                cap >> 20
            )));
        }
        slots.tally.add(&held);
        slots.push(proposal, held);
        Ok(())
    }

    /// The queue's lock of each file in `keys` (sorted, each once: so two requests never
    /// wait on each other).
    fn locks_of(&self, keys: &[std::path::PathBuf]) -> Vec<Arc<tokio::sync::Mutex<()>>> {
        let mut locks = self
            .inner
            .locks
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // Forget the locks nobody holds or waits on.
        locks.retain(|_, l| Arc::strong_count(l) > 1);
        keys.iter()
            .map(|p| locks.entry(p.clone()).or_default().clone())
            .collect()
    }

    /// Each edit's path resolved now (an error for one that does not resolve).
    fn resolve_all(&self, edits: &[ProposedEdit]) -> Vec<Result<SafePath>> {
        edits
            .iter()
            .map(|e| self.inner.ws.root.resolve(&e.path))
            .collect()
    }

    /// The locks of `edits`' files, keyed by the files the edits will write, and their
    /// paths resolved under them (what the edits are computed from and written to). The
    /// paths are resolved, those files' locks taken, and the paths resolved again under
    /// them: one that leads elsewhere now (a symlinked directory on its way was switched
    /// while the request waited) lets the locks go and takes the new files' locks, at most
    /// [`LOCK_TRIES`] times; past that, such a path is refused. So two edits of one file
    /// always hold the same lock, however their paths were written.
    async fn lock_files(&self, edits: &[ProposedEdit]) -> (Vec<FileGuard>, Vec<Result<SafePath>>) {
        let mut resolved = self.resolve_all(edits);
        let mut tries = 0;
        loop {
            let keys = lock_keys(&resolved);
            let mut guards = Vec::with_capacity(keys.len());
            for l in self.locks_of(&keys) {
                guards.push(l.lock_owned().await);
            }
            let now = self.resolve_all(edits);
            tries += 1;
            if lock_keys(&now) == keys {
                return (guards, now);
            }
            if tries == LOCK_TRIES {
                let moved = now
                    .into_iter()
                    .map(|r| r.and_then(|p| unmoved(p, &keys)))
                    .collect();
                return (guards, moved);
            }
            drop(guards);
            resolved = now;
        }
    }

    /// The queue's locks of `edits`' files as they resolve now (a test's handle on them).
    #[cfg(test)]
    fn file_locks(&self, edits: &[ProposedEdit]) -> Vec<Arc<tokio::sync::Mutex<()>>> {
        self.locks_of(&lock_keys(&self.resolve_all(edits)))
    }

    /// Everything before a request becomes a proposal: paths, deny rules, the edits computed,
    /// the syntax check (the caller holds the files' locks, and a place under the caps).
    async fn prepare(
        &self,
        req: &Request,
        resolved: Vec<Result<SafePath>>,
    ) -> Result<(Proposal, Action)> {
        if req.edits.is_empty() {
            return Err(Error::invalid_input("the request holds no edit"));
        }
        // Paths and deny rules first: a denied file is refused before it is even read. Each
        // path was resolved under the request's file locks, the locks keyed by that
        // resolution ([`Gate::lock_files`]), and is computed and written there.
        let resolved = resolved.into_iter().collect::<Result<Vec<SafePath>>>()?;
        self.inner
            .policy
            .action_for_all(resolved.iter().map(|p| p.rel.as_str()))?;
        let mut files = Vec::with_capacity(req.edits.len());
        let many = req.edits.len() > 1;
        for (i, (edit, path)) in req.edits.iter().zip(resolved).enumerate() {
            // Measured with the syntax check below, in one hop off the runtime.
            let change = edit
                .compute_unmeasured(path, &self.inner.ws, self.inner.fallback.as_ref())
                .await
                .map_err(|e| {
                    if many {
                        // Name the failing file of a batch; nothing is written.
                        Error::new(
                            e.code,
                            format!(
                                "edit {} of {} (`{}`) failed, so no file was written: {}",
                                i + 1,
                                req.edits.len(),
                                edit.path,
                                e.message
                            ),
                        )
                    } else {
                        e
                    }
                })?;
            if let Some(source) = &change.source {
                self.inner.policy.may_copy(source)?;
            }
            files.push(change);
        }
        let mut seen = std::collections::HashSet::new();
        if let Some(dup) = files.iter().find(|f| !seen.insert(f.path.abs.clone())) {
            return Err(Error::invalid_input(format!(
                "`{}` is edited twice in one request; combine the edits",
                dup.path.rel
            )));
        }
        if files
            .iter()
            .all(|f| f.before.is_some() && !f.delete && f.old() == f.new && f.mode.is_none())
        {
            let names: Vec<&str> = files.iter().map(|f| f.path.rel.as_str()).collect();
            return Err(Error::new(
                ErrorCode::ApplyNoop,
                format!(
                    "the edit changes nothing: {} already hold{} this content",
                    names.join(", "),
                    if names.len() == 1 { "s" } else { "" }
                ),
            ));
        }
        let action = self
            .inner
            .policy
            .action_for_all(files.iter().map(|f| f.path.rel.as_str()))?;
        // Parsed only for a request that got this far (refusals cost no parse).
        let ops = req.edits.iter().map(|e| e.op.clone()).collect();
        let files = measure_and_check(ops, files).await?;
        let mut proposal = Proposal::new(&req.tool, req.client.clone(), files)?;
        let mut action = self.hear_hook(&mut proposal, action).await?;
        // Nothing broken, and no line the edit does not show, is written unseen: such an edit
        // waits for a person, whatever the policy or the hook says, and says why (a dry run
        // waits for nobody; committing it is held the same way).
        if action == Action::Auto
            && !req.dry_run
            && let Some((i, why)) = held_for(&proposal.files)
        {
            action = Action::Gate;
            proposal.files[i].warnings.push(why);
        }
        Ok((proposal, action))
    }

    /// Ask the user's policy hook about `proposal` (when there is one) and return the action
    /// it leaves: a `deny` refuses with its reason; `gate`, or a hook that failed (with a
    /// warning naming the failure), waits for a person; `auto` writes at once unless the
    /// policy keeps it a dry run or holds the path for a person (docs/DESIGN.md §4). The
    /// answer is kept on the proposal for a dry run's commit.
    async fn hear_hook(&self, proposal: &mut Proposal, action: Action) -> Result<Action> {
        use super::hook::{Payload, Verdict};
        use super::proposal::HookSaid;
        let Some(hook) = &self.inner.hook else {
            return Ok(action);
        };
        let whole = proposal.unified();
        let (diff, diff_cut) = Payload::bounded_diff(&whole);
        let payload = Payload {
            tool: &proposal.tool,
            client: proposal.client.as_deref(),
            paths: proposal.paths(),
            diff,
            diff_cut,
            diff_bytes: whole.len(),
            warnings: proposal
                .files
                .iter()
                .flat_map(|f| f.warnings.clone())
                .collect(),
            run_id: &proposal.run_id,
        };
        let verdict = hook.judge(&payload).await;
        let said = match verdict {
            Verdict::Deny(reason) => {
                let why = if reason.is_empty() {
                    "it gave no reason".to_string()
                } else {
                    reason
                };
                return Err(Error::new(
                    ErrorCode::DeniedByRule,
                    format!("your policy hook denied this edit: {why}"),
                ));
            }
            Verdict::Auto(_) => HookSaid::Auto,
            Verdict::Gate(reason) => {
                // The person sees why the hook asked for them.
                if !reason.is_empty()
                    && let Some(f) = proposal.files.first_mut()
                {
                    f.warnings.push(format!("hook: {reason}"));
                }
                HookSaid::Gate
            }
            Verdict::Failed(why) => {
                let warning = format!("hook: the policy hook failed ({why}); a person decides");
                tracing::warn!("run {}: {warning}", proposal.run_id);
                if let Some(f) = proposal.files.first_mut() {
                    f.warnings.push(warning);
                }
                HookSaid::Gate
            }
        };
        proposal.hook = Some(said);
        Ok(self.with_hook_said(action, said, &proposal.paths()))
    }

    /// The action once the hook said `said` of an edit of `paths` the policy gave `action`.
    fn with_hook_said(
        &self,
        action: Action,
        said: super::proposal::HookSaid,
        paths: &[String],
    ) -> Action {
        use super::proposal::HookSaid;
        let policy = &self.inner.policy;
        match (action, said) {
            (Action::DryRun, _) => Action::DryRun,
            (_, HookSaid::Gate) => Action::Gate,
            (_, HookSaid::Auto) if paths.iter().any(|p| policy.held_for_a_person(p)) => {
                Action::Gate
            }
            (_, HookSaid::Auto) => Action::Auto,
        }
    }

    /// Compute an edit request and act on it as the policy says. Requests that touch the
    /// same file are computed one after the other, and under `auto` each is written before
    /// the next is computed, so concurrent agents never lose each other's edits.
    pub async fn submit(&self, req: Request) -> Result<Outcome> {
        self.submit_from(req, Origin::default()).await
    }

    /// [`Gate::submit`] for a request from `origin`: its review is withdrawn when the
    /// agent's connection ends, and it answers the rejected review it names.
    pub async fn submit_from(&self, mut req: Request, origin: Origin) -> Result<Outcome> {
        // A self-declared name is kept bounded, whichever door it came in by (docs/DESIGN.md §7).
        req.client = req.client.as_deref().and_then(crate::inert::client_name);
        let (guards, resolved) = self.lock_files(&req.edits).await;
        // A client at its cap is told before any work is done for it (and a flood of such
        // calls leaves no rows behind); the place it takes is held until it is admitted.
        let place = self.take_place(req.client.as_deref())?;
        let prepared = match self.prepare(&req, resolved).await {
            Ok((mut proposal, action)) => {
                // Who sent it is known before a revision is looked for: a revision answers
                // the same caller's rejection (docs/DESIGN.md §4).
                proposal.agent = origin.agent.clone();
                self.link_revision(proposal, origin.revision_of.as_deref())
                    .await
                    .map(|p| (p, action))
            }
            Err(e) => Err(e),
        };
        let (mut proposal, action) = match prepared {
            Ok(ready) => ready,
            Err(e) => {
                // Nothing was proposed: an agent's failed call stays in the person's sight.
                if req.keep_failure {
                    let paths = req.edits.iter().map(|e| e.path.clone()).collect();
                    self.record_failure(&req.tool, req.client.clone(), paths, &e);
                }
                return Err(e);
            }
        };
        proposal.agent = origin.agent.clone();
        let ttl = Duration::from_secs(self.inner.ws.config.dry_run_ttl_s);
        if req.dry_run || action == Action::DryRun {
            let proposal = proposal.into_dry_run(ttl);
            let summary = Summary::of(&proposal);
            self.insert_open(proposal, place)?;
            // Kept across a restart too, but its agent does not wait for the disk: a burst of
            // dry-runs is answered as fast as it is computed.
            self.store(&summary.run_id);
            self.emit(Event::New(summary.run_id.clone()));
            return Ok(Outcome::DryRun(summary));
        }
        let run_id = proposal.run_id.clone();
        self.insert_open(proposal, place)?;
        // A review is kept across a restart before anyone hears of it (one written at once
        // is stored only if it stays open: a rebase stores it then).
        if action != Action::Auto {
            self.store_waited(&run_id).await;
        }
        self.emit(Event::New(run_id.clone()));
        // An agent that went away while its edit was computed waits for nothing.
        if origin.agent.as_ref().is_some_and(|a| !a.connected()) {
            self.withdraw_because(&run_id, agents::GONE);
        }
        match action {
            Action::Auto => self.apply_auto(run_id, guards).await,
            _ => Ok(self.status(&run_id)),
        }
    }

    /// Write an edit the policy applies at once, off the async runtime (docs/DESIGN.md §4):
    /// the write and the journal wait for the disk (fsyncs), and on a runtime worker they
    /// would let only as many edits write at once as the runtime has workers. The caller
    /// hands over the edit's files' locks (`guards`), held until the write and its journal
    /// line are done even when the caller is dropped meanwhile, so one file's edits still
    /// write one after the other, in the order they came. They are shared by the work and
    /// this call: the write made here when the runtime, shutting down, never ran the work
    /// holds them too (a file is never written outside its lock). Only a caller still
    /// polling this after the runtime shut down (driving it from another runtime) reaches
    /// that write; in the binary the runtime's drop drops this call with the work it
    /// queued, and nothing is written (docs/DESIGN.md §7).
    async fn apply_auto(&self, run_id: String, guards: Vec<FileGuard>) -> Result<Outcome> {
        let guards = Arc::new(guards);
        let gate = self.clone();
        let id = run_id.clone();
        let held = guards.clone();
        let work = move || {
            let decided = gate.decide_inner(&id, Decision::Accept, None, false);
            drop(held);
            decided
        };
        let decided = match off_runtime("the write", work).await {
            Ok(decided) => decided,
            // The runtime shut down and never ran it, and this call is still polled (from
            // another runtime): decided here, as it was promised, under the same locks.
            Err(_) => self.decide_inner(&run_id, Decision::Accept, None, false),
        };
        drop(guards);
        decided
    }

    /// `proposal` as the next revision of the rejected review it answers, if the gate still
    /// keeps one (docs/DESIGN.md §4; the caller holds its files' locks, so the same file's
    /// requests link one after the other): the one it declares (`declared`, checked: else
    /// `INVALID_INPUT`), or the one whose lines it touches. The search for the lines it
    /// touches and the interdiff are computed off the async runtime, and off the queue's lock.
    async fn link_revision(&self, proposal: Proposal, declared: Option<&str>) -> Result<Proposal> {
        let (prev_id, mut proposal) = match declared {
            Some(id) => {
                let slots = self.slots();
                let known = slots.map.get(id).map(|s| &s.proposal);
                revision::check_declared(known, id, &proposal)?;
                (Some(id.to_string()), proposal)
            }
            None => {
                let candidates = {
                    let slots = self.slots();
                    if slots.answerable == 0 {
                        // No proposal here is one a revision answers.
                        return Ok(proposal);
                    }
                    let newest_first = slots
                        .order
                        .iter()
                        .rev()
                        .filter_map(|id| slots.map.get(id))
                        .map(|s| &s.proposal);
                    revision::candidates(newest_first, &proposal)
                };
                if candidates.is_empty() {
                    return Ok(proposal);
                }
                off_runtime("the revision search", move || {
                    let found = revision::answered(&candidates, &proposal).cloned();
                    (found, proposal)
                })
                .await?
            }
        };
        let Some(prev) = prev_id.and_then(|id| self.get(&id)) else {
            return Ok(proposal);
        };
        off_runtime("the interdiff", move || {
            proposal.revision = Some(revision::revise(&prev, &proposal));
            proposal
        })
        .await
    }

    /// Keep an agent's failed call as a failed review (closed, so the "open" filter hides it):
    /// the person sees what was tried and the whole answer. Remembered like closed reviews.
    pub fn record_failure(
        &self,
        tool: &str,
        client: Option<String>,
        paths: Vec<String>,
        e: &Error,
    ) {
        let client = client.as_deref().and_then(crate::inert::client_name);
        // Relative to the root as every other row's, however the agent wrote them.
        let root = &self.inner.ws.root;
        let paths = paths
            .iter()
            .take(crate::review::proposal::FAILURE_PATHS)
            .map(|p| root.shown(p))
            .collect();
        let Ok(proposal) = Proposal::failed(tool, client, paths, e) else {
            return;
        };
        let run_id = proposal.run_id.clone();
        let summary = Summary::of(&proposal);
        let held = Held::of(&proposal);
        self.slots().push(proposal, held);
        if let Some(slot) = self.slots().map.get(&run_id) {
            slot.outcome
                .send_replace(Some(Outcome::Failed(Some(summary), e.clone())));
        }
        self.emit(Event::New(run_id));
    }

    /// Decide pending review `run_id` again under the policy as it is now, after a reviewer
    /// added a rule that names one of its paths (docs/DESIGN.md §4): a `deny` rejects it with
    /// the refusal (which names the rule) as its note; an `auto` applies it as the policy
    /// would have, the same holds standing (the hook's answer, a protected path, a new syntax
    /// error or unseen deletions keep it waiting); anything else leaves it pending. `None`
    /// when it stays as it was (or is no longer pending, or `covers` names none of its
    /// paths).
    pub(crate) fn decide_by_rules(
        &self,
        run_id: &str,
        covers: impl Fn(&str) -> bool,
    ) -> Option<Result<Outcome>> {
        let (paths, hook, held) = {
            let slots = self.slots();
            let slot = slots.map.get(run_id)?;
            if slot.proposal.state != State::Pending || slot.deciding {
                return None;
            }
            let p = &slot.proposal;
            let paths = p.paths();
            if !paths.iter().any(|rel| covers(rel)) {
                return None;
            }
            (paths, p.hook, held_for(&p.files).is_some())
        };
        match self
            .inner
            .policy
            .action_for_all(paths.iter().map(String::as_str))
        {
            Err(refusal) => {
                Some(self.decide_inner(run_id, Decision::Reject(refusal.message), None, false))
            }
            Ok(Action::Auto) => {
                let action = match hook {
                    Some(said) => self.with_hook_said(Action::Auto, said, &paths),
                    None => Action::Auto,
                };
                (action == Action::Auto && !held)
                    .then(|| self.decide_inner(run_id, Decision::Accept, None, false))
            }
            Ok(_) => None,
        }
    }

    /// Where a run stands now, as the waiting agent would hear it.
    pub fn status(&self, run_id: &str) -> Outcome {
        let slots = self.slots();
        match slots.map.get(run_id) {
            None => Outcome::Failed(None, not_found(run_id)),
            Some(slot) => {
                slot.outcome
                    .borrow()
                    .clone()
                    .unwrap_or_else(|| match slot.proposal.state {
                        State::DryRun => Outcome::DryRun(Summary::of(&slot.proposal)),
                        _ => Outcome::Pending(Summary::of(&slot.proposal)),
                    })
            }
        }
    }

    /// Wait up to `timeout` for a pending proposal to be decided.
    pub async fn wait(&self, run_id: &str, timeout: Duration) -> Outcome {
        let mut rx = {
            let slots = self.slots();
            match slots.map.get(run_id) {
                None => return Outcome::Failed(None, not_found(run_id)),
                Some(slot) => slot.outcome.subscribe(),
            }
        };
        // Checked: a review timeout past what the clock holds waits as long as it can.
        let now = tokio::time::Instant::now();
        let deadline = now.checked_add(timeout.min(LONGEST_WAIT)).unwrap_or(now);
        loop {
            if let Some(outcome) = rx.borrow_and_update().clone() {
                return outcome;
            }
            match tokio::time::timeout_at(deadline, rx.changed()).await {
                Ok(Ok(())) => continue,
                Ok(Err(_)) | Err(_) => return self.status(run_id),
            }
        }
    }

    /// Close proposal `run_id` as `state` and tell its waiting agent; by `Closer::Other`,
    /// only when it is still open and unclaimed (else its current outcome, unchanged).
    fn settle(
        &self,
        run_id: &str,
        state: State,
        review: Option<Review>,
        outcome: impl FnOnce(Summary) -> Outcome,
    ) -> Outcome {
        self.settle_by(Closer::Other, run_id, state, review, outcome)
    }

    fn settle_by(
        &self,
        by: Closer,
        run_id: &str,
        state: State,
        review: Option<Review>,
        outcome: impl FnOnce(Summary) -> Outcome,
    ) -> Outcome {
        self.churn();
        let result = {
            let mut slots = self.slots();
            let Slots {
                map,
                tally,
                closed,
                answerable,
                ..
            } = &mut *slots;
            let Some(slot) = map.get_mut(run_id) else {
                return Outcome::Failed(None, not_found(run_id));
            };
            let allowed = match by {
                Closer::Claimant => slot.deciding,
                Closer::Other => !slot.deciding && slot.proposal.state.is_open(),
                Closer::Eviction => !slot.deciding && slot.proposal.state == State::DryRun,
            };
            if !allowed {
                let current = slot.outcome.borrow().clone();
                return current.unwrap_or_else(|| outcome(Summary::of(&slot.proposal)));
            }
            slot.deciding = false;
            if slot.proposal.state.is_open() && !state.is_open() {
                // Closed: its bytes and its client's place are free, and its bytes count
                // among the closed ones'.
                tally.remove(&slot.held);
                tally.free_place(slot.proposal.client.as_deref());
                closed.add(&slot.held);
            }
            debug_assert!(
                slot.proposal.state.is_open() || !state.is_open(),
                "a closed proposal opened again"
            );
            let was_answerable = revision::answerable(&slot.proposal);
            slot.proposal.state = state;
            if review.is_some() {
                slot.proposal.review = review;
            }
            *answerable = *answerable + usize::from(revision::answerable(&slot.proposal))
                - usize::from(was_answerable);
            let o = outcome(Summary::of(&slot.proposal));
            slot.outcome.send_replace(Some(o.clone()));
            o
        };
        self.unstore(run_id);
        self.emit(Event::Decided(run_id.to_string()));
        result
    }

    /// Take the decision of open proposal `run_id`: the first decision wins, a later (or
    /// concurrent) one is `RUN_ALREADY_USED`. The claim ends when the decision settles it
    /// (or [`Gate::release`] gives it back).
    fn claim(&self, run_id: &str) -> Result<Proposal> {
        let mut slots = self.slots();
        let slot = slots.map.get_mut(run_id).ok_or_else(|| not_found(run_id))?;
        if slot.deciding || !slot.proposal.state.is_open() {
            let what = if slot.deciding {
                "is being decided".to_string()
            } else {
                format!("was already decided ({})", slot.proposal.state.name())
            };
            return Err(Error::new(
                ErrorCode::RunAlreadyUsed,
                format!("run {run_id} {what}: the first decision stands"),
            ));
        }
        if slot.proposal.is_expired(SystemTime::now()) {
            drop(slots);
            self.settle(run_id, State::Expired, None, |s| {
                Outcome::Failed(Some(s), expired(run_id))
            });
            return Err(expired(run_id));
        }
        slot.deciding = true;
        Ok(slot.proposal.clone())
    }

    /// Give back a claim whose decision could not be taken (the proposal stays open).
    fn release(&self, run_id: &str) {
        if let Some(slot) = self.slots().map.get_mut(run_id) {
            slot.deciding = false;
        }
        self.claim_given_back(run_id);
    }

    /// A claim was given back and the review is open again: when its agent cancelled or went
    /// away while the decision held it, it is withdrawn now (nobody waits for it).
    fn claim_given_back(&self, run_id: &str) {
        let why = {
            let mut slots = self.slots();
            let Some(s) = slots.map.get_mut(run_id) else {
                return;
            };
            s.withdraw_wanted.take().or_else(|| {
                let gone = s.proposal.agent.as_ref().is_some_and(|a| !a.connected());
                gone.then(|| agents::GONE.to_string())
            })
        };
        if let Some(why) = why {
            self.withdraw_because(run_id, &why);
        }
    }

    /// Decide an open proposal (pending, or a dry-run a person commits). Returns the outcome
    /// the waiting agent receives. A file that changed since is `FILE_CHANGED`: when the
    /// proposal rebases cleanly on the new content it stays pending (decide again).
    pub fn decide(&self, run_id: &str, decision: Decision) -> Result<Outcome> {
        self.decide_with_note(run_id, decision, None)
    }

    /// [`Gate::decide`] with the reviewer's note for the agent (on an acceptance too: "kept
    /// the first hunk only, the second broke the build").
    pub(crate) fn decide_with_note(
        &self,
        run_id: &str,
        decision: Decision,
        note: Option<&str>,
    ) -> Result<Outcome> {
        self.decide_inner(run_id, decision, note, true)
    }

    /// Decide; `by_person` false when the policy applies it (no review record then).
    fn decide_inner(
        &self,
        run_id: &str,
        decision: Decision,
        note: Option<&str>,
        by_person: bool,
    ) -> Result<Outcome> {
        let proposal = self.claim(run_id)?;
        let (contents, mut review) = match proposal.decided_contents(&decision) {
            Ok(decided) => decided,
            Err(e) => {
                self.release(run_id);
                return Err(e);
            }
        };
        if let Some(note) = note.filter(|n| !n.trim().is_empty())
            && review.note.is_empty()
        {
            review.note = note.trim().to_string();
        }
        if let Decision::Reject(_) = decision {
            return self.reject_claimed(&proposal, review);
        }
        let left_out = proposal.left_out(&decision);
        // What is written when it is not the proposal: the agent, the queue, the review API
        // and the journal show it, not what was proposed (one account, docs/DESIGN.md §4),
        // its syntax checked again (outside the lock: it parses). A file whose every change
        // the person left out is not written: the agent hears "Applied to" only the files
        // that were.
        let shown = account::differs(review.edited_by_reviewer, &left_out).then(|| {
            let mut written = proposal.with_contents(&contents);
            written
                .files
                .retain(|f| f.delete || f.old() != f.new || f.mode_change().is_some());
            written.left_out = left_out;
            written
        });
        let account = shown.as_ref().unwrap_or(&proposal);
        let written = match self.write_journaled(&proposal, account, &contents, &review, by_person)
        {
            Ok(written) => written,
            Err(e) => {
                self.release(run_id);
                return Err(e);
            }
        };
        match written {
            Ok(_) => {
                if let Some(written) = shown {
                    let held = Held::of(&written);
                    self.slots().change(run_id, held, |slot| {
                        slot.proposal.files = written.files;
                        slot.proposal.left_out = written.left_out;
                    });
                }
                Ok(self.settle_by(
                    Closer::Claimant,
                    run_id,
                    State::Applied,
                    by_person.then_some(review),
                    Outcome::Applied,
                ))
            }
            Err(e) if e.code == ErrorCode::FileChanged => Err(self.rebase_or_fail(&proposal, e)),
            Err(e) => {
                self.settle_by(Closer::Claimant, run_id, State::Failed, None, |s| {
                    Outcome::Failed(Some(s), e.clone())
                });
                Err(e)
            }
        }
    }

    /// A claimed proposal rejected: journaled, then settled. A rejection the journal does not
    /// hold is not made: the review waits again (the claim is given back).
    fn reject_claimed(&self, proposal: &Proposal, review: Review) -> Result<Outcome> {
        let run_id = proposal.run_id.as_str();
        if let Err(e) = self.inner.journal.record_rejected(proposal, &review) {
            self.release(run_id);
            return Err(e);
        }
        Ok(self.settle_by(
            Closer::Claimant,
            run_id,
            State::Rejected,
            Some(review),
            Outcome::Rejected,
        ))
    }

    /// A decision that found the file changed: a proposal that rebases cleanly waits for a
    /// decision again (the claim is given back); else it failed. Returns the error to answer.
    fn rebase_or_fail(&self, proposal: &Proposal, e: Error) -> Error {
        let run_id = proposal.run_id.as_str();
        let Some(rebased) = proposal.rebased(self.max_bytes()) else {
            self.settle_by(Closer::Claimant, run_id, State::Failed, None, |s| {
                Outcome::Failed(Some(s), e.clone())
            });
            return e;
        };
        // Which files kept the bytes they were proposed on.
        let rebased_paths: Vec<bool> = proposal
            .files
            .iter()
            .zip(&rebased.files)
            .map(|(a, b)| a.before.as_deref() == b.before.as_deref())
            .collect();
        let held = Held::of(&rebased);
        self.slots().change(run_id, held, |slot| {
            let state = slot.proposal.state;
            slot.proposal = rebased;
            slot.proposal.state = state;
            slot.deciding = false;
        });
        self.store(run_id);
        self.emit(Event::Updated(run_id.to_string()));
        self.claim_given_back(run_id);
        // Told to the person deciding, not to the agent: what changed, and that the
        // decision is theirs again.
        let changed: Vec<String> = proposal
            .files
            .iter()
            .zip(&rebased_paths)
            .filter(|(f, same)| !**same && !f.path.rel.is_empty())
            .map(|(f, _)| format!("`{}`", f.path.rel))
            .collect();
        Error::new(
            ErrorCode::FileChanged,
            format!(
                "nothing was written: {} changed on disk since the edit was proposed, so the \
                 proposal was rebased on the current content; it waits for a decision again.",
                if changed.is_empty() {
                    "a file".to_string()
                } else {
                    changed.join(", ")
                }
            ),
        )
    }

    /// Write `proposal`'s files as `contents` while the pre-images its journal line will
    /// name (what each changed file holds and will hold: `bytes`, encoded) are stored beside
    /// the write ([`ahead`]): their syncs run beside the files' own, and the line's record
    /// names the copies stored so. One that could not be stored ahead is stored by that
    /// record.
    fn write_storing_ahead(
        &self,
        proposal: &Proposal,
        contents: &[Option<String>],
        bytes: Vec<Option<Vec<u8>>>,
    ) -> (Result<Vec<crate::review::proposal::Written>>, Stored) {
        let copies: Vec<Arc<[u8]>> = (proposal.files.iter().zip(bytes))
            .filter(|(f, b)| f.before.as_deref() != b.as_deref())
            .flat_map(|(f, b)| [b.map(Arc::from), f.before.clone()])
            .flatten()
            .collect();
        let mut copies = Some(copies);
        let mut started = ahead::Ahead::none();
        // Started once the write's checks pass: a refused write stores nothing.
        let written = proposal.write_checked(contents, self.max_bytes(), &mut || {
            if let Some(copies) = copies.take() {
                started = ahead::Ahead::start(&self.inner.journal, copies);
            }
        });
        let store = match written {
            Ok(_) => ahead::Store::Yes,
            Err(_) => ahead::Store::No,
        };
        let stored = started.finish(store);
        (written, stored)
    }

    /// Write a decided proposal and journal it (`account`: the proposal as written, with
    /// what the reviewer left out): a batch's intent is durable before the first byte and
    /// goes once the journal holds the edit. The outer error is one before anything was
    /// written (the claim goes back); the inner one, the write's own.
    fn write_journaled(
        &self,
        proposal: &Proposal,
        account: &Proposal,
        contents: &[Option<String>],
        review: &Review,
        by_person: bool,
    ) -> Result<Result<Vec<crate::review::proposal::Written>>> {
        let bytes = proposal.encode(contents)?;
        let intent = Intent::begin(&self.inner.journal, proposal, &bytes)?;
        let (written, ahead) = self.write_storing_ahead(proposal, contents, bytes);
        if let Ok(w) = &written {
            let journal_review = by_person.then_some(review);
            let journaled =
                self.inner
                    .journal
                    .record_applied_landed(account, journal_review, w, &ahead);
            // An edit the journal does not hold durably is not applied: nobody could undo
            // it, and a crash would lose its account. Its files are put back and it fails.
            if let Err(failed) = journaled {
                let (refusal, all_back) =
                    all_or_none::put_back_written(w, &failed.error, self.max_bytes());
                // Its line, written though not synced, is in the journal: once every file
                // is back, the run is recorded undone after it. (Else the journal says
                // applied, as the files not put back hold.)
                if all_back && failed.landed == Landed::Yes {
                    let journal = &self.inner.journal;
                    if let Err(e) = journal.record_put_back(account, failed.files) {
                        tracing::warn!(run_id = %account.run_id, error = %e.message,
                            "the journal says applied for an edit put back");
                    }
                }
                if all_back {
                    intent.finish();
                }
                // Else the batch's intent stays: a gate starting next rolls back what still
                // holds the edit — unless the journal holds the run's line by then (it landed,
                // and no crash took it): then the run stands applied, as those files hold.
                return Ok(Err(refusal));
            }
        }
        intent.finish();
        Ok(written)
    }

    /// Commit a dry-run by its run id (`apply_last_dry_run`). With `by_person` false and a
    /// gating policy for its paths, the dry-run becomes a pending review instead (wait on it).
    pub fn commit(&self, run_id: &str, by_person: bool) -> Result<Outcome> {
        let gated = {
            let slots = self.slots();
            let slot = slots.map.get(run_id).ok_or_else(|| not_found(run_id))?;
            match slot.proposal.state {
                State::DryRun => {}
                State::Expired => return Err(expired(run_id)),
                _ => {
                    return Err(Error::new(
                        ErrorCode::RunAlreadyUsed,
                        format!(
                            "run {run_id} was already used ({}); send the edit again for a new run",
                            slot.proposal.state.name()
                        ),
                    ));
                }
            }
            if slot.proposal.is_expired(SystemTime::now()) {
                drop(slots);
                self.settle(run_id, State::Expired, None, |s| {
                    Outcome::Failed(Some(s), expired(run_id))
                });
                return Err(expired(run_id));
            }
            // The hash guard first: a stale dry-run is refused whatever the policy.
            slot.proposal.verify_unchanged(self.max_bytes())?;
            let paths: Vec<String> = slot.proposal.paths();
            let mut action = self
                .inner
                .policy
                .action_for_all(paths.iter().map(String::as_str))?;
            // What the policy hook said when the dry run was made counts for its commit.
            if action != Action::DryRun
                && let Some(said) = slot.proposal.hook
            {
                action = self.with_hook_said(action, said, &paths);
            }
            // Under `auto` a flagged dry-run is not committed unseen either (docs/DESIGN.md §4).
            let held = (action == Action::Auto)
                .then(|| held_for(&slot.proposal.files))
                .flatten();
            (!by_person && (action == Action::Gate || held.is_some())).then_some(held)
        };
        if let Some(held) = gated {
            {
                let mut slots = self.slots();
                if let Some(slot) = slots.map.get_mut(run_id)
                    && slot.proposal.state == State::DryRun
                    && !slot.deciding
                {
                    slot.proposal.state = State::Pending;
                    slot.proposal.expires_at = None;
                    if let Some((i, why)) = held {
                        slot.proposal.files[i].warnings.push(why);
                    }
                }
            }
            self.store(run_id);
            self.emit(Event::Updated(run_id.to_string()));
            return Ok(self.status(run_id));
        }
        self.decide_inner(run_id, Decision::Accept, None, by_person)
    }

    /// The agent gave up waiting (a cancelled request): withdraw its pending review.
    pub(crate) fn withdraw(&self, run_id: &str) {
        self.withdraw_because(run_id, agents::CANCELLED);
    }

    /// Withdraw pending review `run_id` (no decision will write it), its row saying `why`.
    fn withdraw_because(&self, run_id: &str, why: &str) {
        let e = Error::new(
            ErrorCode::ReviewTimeout,
            format!("run {run_id} was withdrawn ({why}); nothing was written"),
        );
        let marked = {
            let mut slots = self.slots();
            match slots.map.get_mut(run_id) {
                Some(s) if s.proposal.state == State::Pending && !s.deciding => {
                    s.proposal.withdrawn = Some(why.to_string());
                    true
                }
                // A decision holds it: withdrawn if the decision gives it back.
                Some(s) if s.proposal.state == State::Pending => {
                    s.withdraw_wanted = Some(why.to_string());
                    false
                }
                _ => false,
            }
        };
        if marked && !self.close_pending(run_id, State::Expired, e) {
            // A decision claimed it in between: it was not withdrawn.
            if let Some(s) = self.slots().map.get_mut(run_id) {
                s.proposal.withdrawn = None;
            }
        }
    }

    /// An agent connected: its link lasts while the returned value (or a clone) is held, and
    /// when it ends the agent's pending reviews are withdrawn at once.
    pub fn connect_agent(&self) -> AgentLink {
        let gate = Arc::downgrade(&self.inner);
        AgentLink::new(self.inner.agents.connect(), move |id| {
            if let Some(inner) = gate.upgrade() {
                Gate { inner }.agent_gone(id);
            }
        })
    }

    /// The connected agent numbered `id`, if it is still connected.
    pub fn agent(&self, id: AgentId) -> Option<AgentRef> {
        self.inner.agents.get(id)
    }

    /// How many agents are connected now.
    pub fn connected_agents(&self) -> usize {
        self.inner.agents.count()
    }

    /// Agent `id` went away: its pending reviews are withdrawn, and its other open ones
    /// announced (their rows say it is gone).
    fn agent_gone(&self, id: AgentId) {
        self.inner.agents.disconnect(id);
        let (pending, open): (Vec<(RunId, State)>, _) = {
            let slots = self.slots();
            slots
                .order
                .iter()
                .filter_map(|run| slots.map.get(run).map(|s| (run, &s.proposal)))
                .filter(|(_, p)| {
                    p.state.is_open() && p.agent.as_ref().is_some_and(|a| a.id() == id)
                })
                .map(|(run, p)| (run.clone(), p.state))
                .partition(|(_, state)| *state == State::Pending)
        };
        tracing::info!(
            "agent {id} disconnected; {} pending reviews withdrawn",
            pending.len()
        );
        for (run, _) in pending {
            self.withdraw_because(&run, agents::GONE);
        }
        for (run, _) in open {
            self.emit(Event::Updated(run));
        }
    }

    /// Close a pending review without a decision: `state` and the error the agent gets.
    /// Returns whether it was pending.
    pub(crate) fn close_pending(&self, run_id: &str, state: State, e: Error) -> bool {
        let open = self
            .slots()
            .map
            .get(run_id)
            .is_some_and(|s| s.proposal.state == State::Pending && !s.deciding);
        if open {
            self.settle(run_id, state, None, |s| Outcome::Failed(Some(s), e));
        }
        open
    }

    /// The reviewer left: every pending review fails with `REVIEWER_GONE`.
    pub fn reviewer_gone(&self) {
        let pending: Vec<RunId> = {
            let slots = self.slots();
            slots
                .order
                .iter()
                .filter(|id| {
                    slots
                        .map
                        .get(*id)
                        .is_some_and(|s| s.proposal.state == State::Pending)
                })
                .cloned()
                .collect()
        };
        for id in pending {
            let e = Error::new(
                ErrorCode::ReviewerGone,
                "the reviewer closed patchgate before deciding; nothing was written — send the edit again later",
            );
            self.settle(&id, State::Failed, None, |s| Outcome::Failed(Some(s), e));
        }
    }

    /// Expire dry-runs whose time ran out.
    pub fn sweep(&self) {
        let now = SystemTime::now();
        let stale: Vec<RunId> = {
            let mut slots = self.slots();
            if slots.first_expiry.is_none_or(|t| now < t) {
                return;
            }
            // The dry-runs' first expiry again, the stale ones' included: one this sweep
            // cannot expire (a commit holds it) is looked at again by the next.
            let mut first = None;
            let mut stale = Vec::new();
            for id in &slots.order {
                let Some(s) = slots.map.get(id) else {
                    continue;
                };
                if s.proposal.state != State::DryRun {
                    continue;
                }
                if let Some(t) = s.proposal.expires_at {
                    first = Some(first.map_or(t, |f: SystemTime| f.min(t)));
                }
                if s.proposal.is_expired(now) {
                    stale.push(id.clone());
                }
            }
            slots.first_expiry = first;
            stale
        };
        for id in stale {
            self.settle(&id, State::Expired, None, |s| {
                Outcome::Failed(Some(s), expired(&id))
            });
        }
    }

    /// Every proposal the gate remembers, oldest first (undos another process made are
    /// noticed first).
    pub fn list(&self) -> Vec<Summary> {
        self.sweep();
        self.notice_undos();
        let slots = self.slots();
        slots
            .order
            .iter()
            .filter_map(|id| slots.map.get(id))
            .map(|s| Summary::of(&s.proposal))
            .collect()
    }

    /// Pending reviews, oldest first.
    pub fn pending(&self) -> Vec<RunId> {
        let slots = self.slots();
        slots
            .order
            .iter()
            .filter(|id| {
                slots
                    .map
                    .get(*id)
                    .is_some_and(|s| s.proposal.state == State::Pending)
            })
            .cloned()
            .collect()
    }

    /// A proposal.
    pub fn get(&self, run_id: &str) -> Option<Proposal> {
        self.slots().map.get(run_id).map(|s| s.proposal.clone())
    }

    /// Undo an applied edit through the journal (the latest, or `run_id`): journaled, its
    /// row marked, its agent told ([`Gate::take_notices`]).
    pub fn undo(&self, run_id: Option<&str>) -> Result<Entry> {
        let entry = self.inner.journal.undo(run_id, self.max_bytes())?;
        self.mark_undone(&entry.run_id);
        Ok(entry)
    }

    /// The session's diff from `since` on (every applied run when `None`) and its notes
    /// (docs/DESIGN.md §4, `patchgate log --diff`).
    pub fn session_diff(&self, since: Option<&str>) -> Result<(String, Vec<String>)> {
        super::rewind::session_diff(&self.inner.journal, since)
    }

    /// Take back `run_id` and every later applied run, newest first, all or nothing
    /// (docs/DESIGN.md §4): the journal's `undone` entries, newest first; each run's review
    /// shows it undone and its agent hears of it.
    pub fn rewind(&self, run_id: &str) -> Result<Vec<Entry>> {
        let entries = super::rewind::rewind(&self.inner.journal, run_id, self.max_bytes())?;
        for e in &entries {
            self.mark_undone(&e.run_id);
        }
        Ok(entries)
    }
}

/// Why an edit may not be applied unseen under `auto` (docs/DESIGN.md §4, §5.5): the file it
/// breaks (a new syntax error), whose check could not finish, or whose lines it deletes
/// without showing them, with the warning that says so.
fn held_for(files: &[FileChange]) -> Option<(usize, String)> {
    if let Some(i) = files.iter().position(|f| !f.syntax.is_empty()) {
        return Some((
            i,
            format!(
                "waits for a person: under `auto` an edit that leaves a new syntax error in `{}` is not applied unseen",
                files[i].path.rel
            ),
        ));
    }
    // A check that could not finish holds it too (fail closed), saying why.
    if let Some(i) = files.iter().position(|f| f.unchecked.is_some()) {
        let why = files[i]
            .unchecked
            .map_or("", crate::syntax::Skipped::reason);
        return Some((
            i,
            format!(
                "waits for a person: under `auto` the syntax check of `{}` could not finish ({why}), so the edit is not applied unseen",
                files[i].path.rel
            ),
        ));
    }
    let i = files.iter().position(|f| !f.unseen_lines.is_empty())?;
    Some((
        i,
        format!(
            "waits for a person: under `auto` an edit that deletes lines of `{}` it does not show is not applied unseen",
            files[i].path.rel
        ),
    ))
}

fn not_found(run_id: &str) -> Error {
    Error::new(
        ErrorCode::RunNotFound,
        format!(
            "no dry-run or review with run id `{run_id}` (a run id lasts while its gate runs, an open review's across a restart)"
        ),
    )
}

fn expired(run_id: &str) -> Error {
    Error::new(
        ErrorCode::RunExpired,
        format!("run {run_id} expired; send the edit again for a new dry-run"),
    )
}

/// What each file's edit (`ops`, in the files' order) shows and deletes unseen, and the
/// syntax check of every file (tree-sitter parses, bounded): one hop off the async runtime.
async fn measure_and_check(
    ops: Vec<super::edit::EditOp>,
    mut files: Vec<FileChange>,
) -> Result<Vec<FileChange>> {
    off_runtime("the syntax check", move || {
        for (op, f) in ops.iter().zip(&mut files) {
            super::edit::measure(op, f);
            f.check_syntax();
        }
        files
    })
    .await
}

/// `work` (`what`, for the error) on a blocking thread, off the async runtime.
async fn off_runtime<T: Send + 'static>(
    what: &str,
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T> {
    match tokio::task::spawn_blocking(work).await {
        Ok(done) => Ok(done),
        // A panic in the work is a bug: it surfaces as one, as it would have inline.
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        // The runtime is shutting down: nothing is proposed.
        Err(e) => Err(Error::new(
            ErrorCode::FsError,
            format!("{what} was cancelled: {e}"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::review::edit::EditOp;
    use crate::workspace::config::{Config, PolicyName};

    fn gate(dir: &tempfile::TempDir, policy: PolicyName, ttl: u64) -> Gate {
        std::fs::create_dir_all(dir.path().join("work")).unwrap();
        let config = Config {
            dry_run_ttl_s: ttl,
            ..Config::default()
        };
        let ws = Workspace::new(&dir.path().join("work"), config).unwrap();
        let journal = Journal::at(dir.path().join("journal.jsonl"), &ws.root);
        Gate::new(ws, Policy::simple(policy), journal, None)
    }

    fn write(g: &Gate, rel: &str, content: &str) {
        std::fs::write(g.workspace().root.path().join(rel), content).unwrap();
    }

    fn read(g: &Gate, rel: &str) -> String {
        std::fs::read_to_string(g.workspace().root.path().join(rel)).unwrap()
    }

    fn edit(rel: &str, content: &str) -> ProposedEdit {
        ProposedEdit {
            path: rel.into(),
            op: EditOp::Write(content.into()),
        }
    }

    fn req(edits: Vec<ProposedEdit>, dry_run: bool) -> Request {
        Request {
            tool: "test".into(),
            client: None,
            edits,
            dry_run,
            keep_failure: false,
        }
    }

    fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap()
    }

    /// An applied edit's copies (what its file held and now holds) are each put into the
    /// pre-image store once: the journal line names the copies stored beside the write
    /// rather than storing them again (hashing, inflating and comparing each), and undo
    /// still finds them. Regression: the line's record put every copy stored ahead a
    /// second time (four puts for a one-file edit).
    #[test]
    fn an_applied_edits_copies_are_stored_once() {
        let dir = tempfile::tempdir().unwrap();
        let g = gate(&dir, PolicyName::Auto, 300);
        write(&g, "a.txt", "one\n");
        let rt = rt();
        // A copy stored ahead is trusted by its identity, birth included: where the file
        // system tells no birth, the line's record stores it again (DESIGN §7).
        let births = std::fs::metadata(dir.path()).unwrap().created().is_ok();
        let puts = if births { 2 } else { 4 };
        for (k, content) in ["one\ntwo\n", "one\ntwo\nthree\n"].iter().enumerate() {
            let before = g.inner.journal.preimage_puts();
            let o = rt
                .block_on(g.submit(req(vec![edit("a.txt", content)], false)))
                .unwrap();
            assert!(matches!(o, Outcome::Applied(_)), "{o:?}");
            assert_eq!(g.inner.journal.preimage_puts() - before, puts, "edit {k}");
        }
        g.undo(None).unwrap();
        assert_eq!(read(&g, "a.txt"), "one\ntwo\n");
        g.undo(None).unwrap();
        assert_eq!(read(&g, "a.txt"), "one\n");
    }

    fn run_id(o: &Outcome) -> String {
        match o {
            Outcome::DryRun(s)
            | Outcome::Pending(s)
            | Outcome::Applied(s)
            | Outcome::Rejected(s) => s.run_id.clone(),
            Outcome::Failed(..) => panic!("{o:?}"),
        }
    }

    #[test]
    fn open_proposals_are_capped_per_client_and_in_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let g = gate(&dir, PolicyName::Gate, 300).with_open_bytes_cap(7 << 20);
        write(&g, "a.txt", "x\n");
        let as_client = |client: &str, body: String| Request {
            client: Some(client.into()),
            ..req(vec![edit("a.txt", &body)], true)
        };
        let rt = rt();
        // Pending reviews wait for a person: none makes room for another.
        for i in 0..MAX_OPEN_PER_CLIENT {
            let pending = Request {
                dry_run: false,
                ..as_client("a", format!("v{i}\n"))
            };
            rt.block_on(g.submit(pending)).unwrap();
        }
        let e = rt
            .block_on(g.submit(as_client("a", "one more\n".into())))
            .unwrap_err();
        assert!(e.message.contains("too many open proposals"), "{e:?}");
        // Another client is not held up by the first one's proposals.
        rt.block_on(g.submit(as_client("b", "b\n".into()))).unwrap();
        // In bytes: a proposal of 1 MiB of new text holds about 2 MiB (its text and its
        // hunk), so the fourth passes the 7 MiB cap.
        let big = "y".repeat(1 << 20);
        for k in 0..3 {
            rt.block_on(g.submit(as_client("c", format!("{k}{big}"))))
                .unwrap();
        }
        let e = rt
            .block_on(g.submit(as_client("c", format!("3{big}"))))
            .unwrap_err();
        assert!(e.message.contains("MiB"), "{e:?}");
    }

    /// A runtime with one worker, and the in-process lock of `rel`'s file (held: that
    /// file's writes wait for it).
    fn one_worker_and_lock(g: &Gate, rel: &str) -> (tokio::runtime::Runtime, Arc<Mutex<()>>) {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let abs = g.workspace().root.resolve(rel).unwrap().abs;
        (rt, crate::workspace::fs::lock_for(&abs))
    }

    /// Submit an `auto` edit writing `body` to `rel` as a task; its outcome goes to `tx`,
    /// named by its body.
    fn spawn_edit(
        rt: &tokio::runtime::Runtime,
        g: &Gate,
        tx: &std::sync::mpsc::Sender<(&'static str, bool)>,
        rel: &'static str,
        body: &'static str,
    ) -> tokio::task::JoinHandle<()> {
        let (g, tx) = (g.clone(), tx.clone());
        rt.spawn(async move {
            let r = g.submit(req(vec![edit(rel, body)], false)).await;
            let _ = tx.send((body, r.is_ok()));
        })
    }

    /// An `auto` edit (adding lines only: nothing holds it for a person) whose write waits
    /// (here for its file's lock) holds up no other file's edit: the write runs off the runtime's workers. Regression: it ran on one, so a gate
    /// wrote at most as many edits at once as its runtime had workers (two on two cores),
    /// and here, with one, none.
    #[test]
    fn an_auto_write_waiting_for_its_file_holds_up_no_other_files_edit() {
        let dir = tempfile::tempdir().unwrap();
        let g = gate(&dir, PolicyName::Auto, 300);
        write(&g, "a.txt", "a\n");
        write(&g, "b.txt", "b\n");
        let (rt, lock) = one_worker_and_lock(&g, "a.txt");
        let held = lock.lock().unwrap();
        let mut events = g.subscribe();
        let (tx, rx) = std::sync::mpsc::channel();
        spawn_edit(&rt, &g, &tx, "a.txt", "a\na2\n");
        // a's proposal is in: its write follows at once, and waits for the lock held here.
        assert!(matches!(events.blocking_recv(), Ok(Event::New(_))));
        spawn_edit(&rt, &g, &tx, "b.txt", "b\nb2\n");
        let first = rx.recv_timeout(Duration::from_secs(30));
        assert_eq!(
            first,
            Ok(("b\nb2\n", true)),
            "b's edit waited for a's write"
        );
        assert_eq!(read(&g, "a.txt"), "a\n");
        drop(held);
        let second = rx.recv_timeout(Duration::from_secs(30));
        assert_eq!(second, Ok(("a\na2\n", true)));
        assert_eq!(
            (read(&g, "a.txt"), read(&g, "b.txt")),
            ("a\na2\n".into(), "b\nb2\n".into())
        );
    }

    /// When the runtime, shutting down, never runs an `auto` write, the write made in its
    /// place holds the file's lock in the queue until it is done. Regression: the locks
    /// went with the work the runtime dropped, and the write was made without them.
    #[test]
    fn the_write_made_when_the_runtime_shuts_down_holds_the_files_lock() {
        let dir = tempfile::tempdir().unwrap();
        let g = gate(&dir, PolicyName::Gate, 300);
        write(&g, "a.txt", "a\n");
        let edits = vec![edit("a.txt", "a\nb\n")];
        let run = run_id(&rt().block_on(g.submit(req(edits.clone(), false))).unwrap());
        let lock = g.file_locks(&edits).remove(0);
        let guards = vec![lock.clone().try_lock_owned().unwrap()];
        // The write will wait for the file (held here), once it starts.
        let (shut, fs_lock) = one_worker_and_lock(&g, "a.txt");
        let held = fs_lock.lock().unwrap();
        let handle = shut.handle().clone();
        shut.shutdown_background();
        let (tx, rx) = std::sync::mpsc::channel();
        let g2 = g.clone();
        std::thread::spawn(move || {
            let _ = tx.send(handle.block_on(g2.apply_auto(run, guards)).is_ok());
        });
        // The work was dropped at once; the write in its place waits for the file.
        let t = std::time::Instant::now();
        while t.elapsed() < Duration::from_millis(500) {
            assert!(
                lock.try_lock().is_err(),
                "the file's lock was let go before its write"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        drop(held);
        assert_eq!(rx.recv_timeout(Duration::from_secs(30)), Ok(true));
        assert_eq!(read(&g, "a.txt"), "a\nb\n");
        assert!(lock.try_lock().is_ok());
    }

    /// Wait until `lock` (the queue's lock of one file, held by the test) is awaited by a
    /// request too, or `rx` hears a request end first (`Some`, its outcome).
    fn awaited_or_done(
        lock: &Arc<tokio::sync::Mutex<()>>,
        rx: &std::sync::mpsc::Receiver<(&'static str, bool)>,
    ) -> Option<(&'static str, bool)> {
        // Held by the queue's map, `lock` here and the guard held: a waiter is a fourth.
        let t = std::time::Instant::now();
        while Arc::strong_count(lock) < 4 {
            if let Ok(done) = rx.try_recv() {
                return Some(done);
            }
            assert!(t.elapsed() < Duration::from_secs(30), "nothing waited");
            std::thread::sleep(Duration::from_millis(2));
        }
        None
    }

    /// An edit whose path leads to another file once it holds its lock (a symlinked
    /// directory on its way switched while it waited) waits for that file's lock before it
    /// computes and writes it, so it never interleaves with another edit of that file.
    /// Regression: the lock was keyed by the path resolved before the wait, and the edit
    /// computed and wrote the file the path resolved to after it, under another file's lock.
    #[cfg(unix)]
    #[test]
    fn an_edit_holds_the_lock_of_the_file_its_path_leads_to_under_the_lock() {
        let dir = tempfile::tempdir().unwrap();
        let g = gate(&dir, PolicyName::Auto, 300);
        let root = g.workspace().root.path().to_path_buf();
        for d in ["x", "y"] {
            std::fs::create_dir(root.join(d)).unwrap();
            write(&g, &format!("{d}/a.txt"), "a\n");
        }
        std::os::unix::fs::symlink("x", root.join("link")).unwrap();
        let x = g.file_locks(&[edit("x/a.txt", "")]).remove(0);
        let y = g.file_locks(&[edit("y/a.txt", "")]).remove(0);
        let held_x = x.clone().try_lock_owned().unwrap();
        let held_y = y.clone().try_lock_owned().unwrap();
        let (rt, _) = one_worker_and_lock(&g, "x/a.txt");
        let (tx, rx) = std::sync::mpsc::channel();
        spawn_edit(&rt, &g, &tx, "link/a.txt", "a\nlinked\n");
        // It waits for x's lock, where its path leads now; then the link is switched to y.
        assert_eq!(awaited_or_done(&x, &rx), None);
        std::fs::remove_file(root.join("link")).unwrap();
        std::os::unix::fs::symlink("y", root.join("link")).unwrap();
        drop(held_x);
        // Under x's lock its path leads to y: it waits for y's lock (held here).
        let done = awaited_or_done(&y, &rx);
        assert_eq!(done, None, "the edit went on without y's lock");
        assert_eq!(read(&g, "y/a.txt"), "a\n");
        drop(held_y);
        assert_eq!(
            rx.recv_timeout(Duration::from_secs(30)),
            Ok(("a\nlinked\n", true))
        );
        assert_eq!(read(&g, "y/a.txt"), "a\nlinked\n");
        assert_eq!(read(&g, "x/a.txt"), "a\n");
    }

    /// Two edits of one file write in the order they came, never interleaved, even when the
    /// first one's caller goes away while its write waits: the write keeps the file's lock
    /// in the queue until it and its journal line are done.
    #[test]
    fn one_files_edits_stay_in_order_when_the_first_caller_leaves_during_its_write() {
        let dir = tempfile::tempdir().unwrap();
        let g = gate(&dir, PolicyName::Auto, 300);
        write(&g, "a.txt", "a\n");
        let (rt, lock) = one_worker_and_lock(&g, "a.txt");
        let held = lock.lock().unwrap();
        let mut events = g.subscribe();
        let (tx, rx) = std::sync::mpsc::channel();
        let first = spawn_edit(&rt, &g, &tx, "a.txt", "a\none\n");
        assert!(matches!(events.blocking_recv(), Ok(Event::New(_))));
        // Its caller goes away while the write waits for the file.
        first.abort();
        spawn_edit(&rt, &g, &tx, "a.txt", "a\none\ntwo\n");
        std::thread::sleep(Duration::from_millis(200));
        drop(held);
        // The first caller, gone, hears nothing: the next answer is the second's.
        let second = rx.recv_timeout(Duration::from_secs(30));
        assert_eq!(second, Ok(("a\none\ntwo\n", true)));
        assert_eq!(read(&g, "a.txt"), "a\none\ntwo\n");
        let diffs: Vec<String> = (g.inner.journal.entries().unwrap())
            .into_iter()
            .map(|e| e.diff)
            .collect();
        assert_eq!(diffs.len(), 2, "{diffs:?}");
        assert!(
            diffs[0].contains("+one") && diffs[1].contains(" one\n+two"),
            "{diffs:?}"
        );
    }

    /// Under `auto`, a dry-run that deletes lines its edit does not show is not committed by
    /// the agent unseen: it waits for a person, saying why; a clean one is written.
    #[test]
    fn under_auto_a_flagged_dry_run_is_held_at_its_commit() {
        let dir = tempfile::tempdir().unwrap();
        let g = gate(&dir, PolicyName::Auto, 300);
        write(&g, "a.txt", "keep\ngone one\ngone two\n");
        write(&g, "b.txt", "b\n");
        let rt = rt();
        let flagged = run_id(
            &rt.block_on(g.submit(req(vec![edit("a.txt", "keep\n")], true)))
                .unwrap(),
        );
        let clean = run_id(
            &rt.block_on(g.submit(req(vec![edit("b.txt", "b\nc\n")], true)))
                .unwrap(),
        );
        let o = g.commit(&flagged, false).unwrap();
        let Outcome::Pending(s) = o else {
            panic!("{o:?}")
        };
        assert!(
            s.warnings.iter().any(|w| w.contains("waits for a person")),
            "{:?}",
            s.warnings
        );
        assert_eq!(read(&g, "a.txt"), "keep\ngone one\ngone two\n");
        assert!(matches!(g.commit(&clean, false), Ok(Outcome::Applied(_))));
        assert_eq!(read(&g, "b.txt"), "b\nc\n");
    }

    /// An undo is told to the agent whose run it was, over its own link: another session
    /// under the same name does not take it; once that link has ended, the same name (the
    /// agent started again) hears it.
    #[test]
    fn an_undo_notice_goes_to_the_runs_own_agent() {
        let dir = tempfile::tempdir().unwrap();
        let g = gate(&dir, PolicyName::Auto, 300);
        write(&g, "a.txt", "one\n");
        let (first, second) = (g.connect_agent(), g.connect_agent());
        let named = |text: &str| {
            let mut r = req(vec![edit("a.txt", text)], false);
            r.client = Some("claude-code".into());
            r
        };
        let origin = |l: &AgentLink| Origin {
            agent: Some(l.agent().clone()),
            revision_of: None,
        };
        let o = rt()
            .block_on(g.submit_from(named("one\ntwo\n"), origin(&first)))
            .unwrap();
        let run = run_id(&o);
        g.undo(Some(&run)).unwrap();
        g.notice_undos();
        let name = Some("claude-code");
        assert!(g.take_notices(name, Some(second.agent())).is_empty());
        assert_eq!(g.take_notices(name, Some(first.agent())).len(), 1);
        assert!(
            g.take_notices(name, Some(first.agent())).is_empty(),
            "told once"
        );
        // Another undo of the first agent's, told after it left: the name hears it.
        let o = rt()
            .block_on(g.submit_from(named("one\nthree\n"), origin(&first)))
            .unwrap();
        g.undo(Some(&run_id(&o))).unwrap();
        g.notice_undos();
        drop(first);
        assert!(g.take_notices(None, Some(second.agent())).is_empty());
        assert_eq!(g.take_notices(name, Some(second.agent())).len(), 1);
    }

    /// An agent that goes away while a person's decision holds its review (the write found
    /// the file changed, and the review waits again) does not leave it open to a later accept:
    /// it is withdrawn when the decision gives it back.
    #[test]
    fn a_review_whose_agent_left_during_a_decision_is_withdrawn_when_given_back() {
        let dir = tempfile::tempdir().unwrap();
        let g = gate(&dir, PolicyName::Gate, 300);
        write(&g, "a.txt", "one\n");
        let link = g.connect_agent();
        let origin = Origin {
            agent: Some(link.agent().clone()),
            revision_of: None,
        };
        let o = rt()
            .block_on(g.submit_from(req(vec![edit("a.txt", "two\n")], false), origin))
            .unwrap();
        let run = run_id(&o);
        // A person's decision holds it; meanwhile the agent goes away.
        g.claim(&run).unwrap();
        drop(link);
        assert_eq!(g.get(&run).unwrap().state, State::Pending);
        // The decision could not be taken and gives the review back: withdrawn, not open.
        g.release(&run);
        let p = g.get(&run).unwrap();
        assert_eq!(p.state, State::Expired, "{:?}", p.withdrawn);
        assert!(g.decide(&run, Decision::Accept).is_err());
        assert_eq!(read(&g, "a.txt"), "one\n");
    }

    /// The review API gives the lines each hunk deletes that the edit does not show, their
    /// Dry-runs at the per-client cap: the oldest uncommitted one makes room (a commit of
    /// it answers `RUN_EXPIRED`), never a pending review.
    #[test]
    fn at_the_cap_the_clients_oldest_dry_run_makes_room() {
        let dir = tempfile::tempdir().unwrap();
        let g = gate(&dir, PolicyName::Gate, 300);
        write(&g, "a.txt", "x\n");
        let as_a = |body: String, dry_run: bool| Request {
            client: Some("a".into()),
            ..req(vec![edit("a.txt", &body)], dry_run)
        };
        let rt = rt();
        let pending = run_id(&rt.block_on(g.submit(as_a("p\n".into(), false))).unwrap());
        let runs: Vec<String> = (0..3 * MAX_OPEN_PER_CLIENT)
            .map(|i| {
                run_id(
                    &rt.block_on(g.submit(as_a(format!("v{i}\n"), true)))
                        .unwrap(),
                )
            })
            .collect();
        assert_eq!(g.get(&pending).unwrap().state, State::Pending);
        let e = g.commit(&runs[0], false).unwrap_err();
        assert_eq!(e.code, ErrorCode::RunExpired, "{e:?}");
        let open = runs
            .iter()
            .filter(|r| g.get(r).unwrap().state == State::DryRun);
        assert_eq!(open.count(), MAX_OPEN_PER_CLIENT - 1);
        // Another client's dry-runs are not touched.
        let b = Request {
            client: Some("b".into()),
            ..req(vec![edit("a.txt", "b\n")], true)
        };
        let theirs = run_id(&rt.block_on(g.submit(b)).unwrap());
        rt.block_on(g.submit(as_a("last\n".into(), true))).unwrap();
        assert_eq!(g.get(&theirs).unwrap().state, State::DryRun);
        let newest = runs.last().unwrap();
        assert!(matches!(g.commit(newest, true), Ok(Outcome::Applied(_))));
    }

    /// The review API gives the lines each hunk deletes that the agent never showed, their
    /// total, and a warning naming the file.
    #[test]
    fn a_summary_counts_the_deleted_lines_the_agent_never_showed() {
        let dir = tempfile::tempdir().unwrap();
        let g = gate(&dir, PolicyName::Gate, 300);
        // A whole content that ends early drops the file's tail without showing it.
        write(&g, "a.txt", "keep\ngone one\ngone two\n");
        write(&g, "b.txt", "b\n");
        let edits = vec![edit("a.txt", "keep\n"), edit("b.txt", "b\nmore\n")];
        let o = rt().block_on(g.submit(req(edits, true))).unwrap();
        let Outcome::DryRun(s) = o else {
            panic!("{o:?}")
        };
        assert_eq!(s.unseen_deletions, 2);
        assert_eq!(s.unseen_hunks, vec![2, 0]);
        assert!(
            s.warnings.contains(
                &"a.txt: unseen: 2 lines deleted that the edit does not show (2–3)".to_string()
            ),
            "{:?}",
            s.warnings
        );
        let wire = serde_json::to_value(&s).unwrap();
        assert_eq!(wire["unseen_deletions"], 2);
        assert_eq!(wire["unseen_hunks"], serde_json::json!([2, 0]));
    }

    #[test]
    fn a_failed_call_keeps_a_bounded_record() {
        let dir = tempfile::tempdir().unwrap();
        let g = gate(&dir, PolicyName::Gate, 300);
        let paths: Vec<String> = (0..100)
            .map(|i| format!("{i}{}", "é".repeat(2000)))
            .collect();
        let e = Error::new(ErrorCode::NoMatch, "x".repeat(100_000));
        g.record_failure("patch_file", None, paths, &e);
        let listed = g.list();
        let row = listed.last().unwrap();
        assert_eq!(row.state, State::Failed);
        assert_eq!(row.paths.len(), 32);
        assert!(row.paths.iter().all(|p| p.len() <= 512 + '…'.len_utf8()));
        let failure = row.failure.as_deref().unwrap();
        assert!(failure.starts_with("NO_MATCH: x") && failure.len() < 17 << 10);
        // The agent hears of the failure if it asks by the row's run id: failed, not pending.
        assert!(matches!(g.status(&row.run_id), Outcome::Failed(..)));
    }

    #[test]
    fn proposals_of_one_file_share_its_original() {
        let dir = tempfile::tempdir().unwrap();
        let g = gate(&dir, PolicyName::Gate, 300);
        let original = "line\n".repeat(200_000);
        write(&g, "big.txt", &original);
        let rt = rt();
        let ids: Vec<String> = (0..3)
            .map(|i| {
                let new = original.replacen("line", &format!("edit {i}"), 1);
                run_id(
                    &rt.block_on(g.submit(req(vec![edit("big.txt", &new)], true)))
                        .unwrap(),
                )
            })
            .collect();
        let slots = g.slots();
        let files: Vec<&FileChange> = ids
            .iter()
            .map(|id| &slots.map[id].proposal.files[0])
            .collect();
        let (a, b) = (
            files[0].before.as_ref().unwrap(),
            files[2].before.as_ref().unwrap(),
        );
        assert!(Arc::ptr_eq(a, b));
        assert!(Arc::ptr_eq(&files[0].text, &files[2].text));
        assert_eq!(files[1].old(), original);
    }

    #[test]
    fn dry_run_then_commit_writes_once() {
        let dir = tempfile::tempdir().unwrap();
        let g = gate(&dir, PolicyName::Auto, 300);
        write(&g, "a.txt", "old\n");
        // (It keeps the file's line: a whole content that drops it unseen would wait.)
        let o = rt()
            .block_on(g.submit(req(vec![edit("a.txt", "old\nnew\n")], true)))
            .unwrap();
        assert!(matches!(o, Outcome::DryRun(ref s) if s.expires_in.is_some_and(|e| e > 290)));
        assert_eq!(read(&g, "a.txt"), "old\n");
        let id = run_id(&o);
        assert!(matches!(g.commit(&id, false).unwrap(), Outcome::Applied(_)));
        assert_eq!(read(&g, "a.txt"), "old\nnew\n");
        assert_eq!(
            g.commit(&id, false).unwrap_err().code,
            ErrorCode::RunAlreadyUsed
        );
    }

    #[test]
    fn unknown_run_id_is_run_not_found() {
        let dir = tempfile::tempdir().unwrap();
        let g = gate(&dir, PolicyName::Auto, 300);
        assert_eq!(
            g.commit("nosuchrun", false).unwrap_err().code,
            ErrorCode::RunNotFound
        );
    }

    #[test]
    fn an_expired_dry_run_is_run_expired() {
        let dir = tempfile::tempdir().unwrap();
        let g = gate(&dir, PolicyName::Auto, 0);
        write(&g, "a.txt", "old\n");
        let o = rt()
            .block_on(g.submit(req(vec![edit("a.txt", "new\n")], true)))
            .unwrap();
        assert_eq!(
            g.commit(&run_id(&o), false).unwrap_err().code,
            ErrorCode::RunExpired
        );
        assert_eq!(read(&g, "a.txt"), "old\n");
    }

    #[test]
    fn a_changed_file_is_file_changed_including_line_endings_only() {
        let dir = tempfile::tempdir().unwrap();
        let g = gate(&dir, PolicyName::Auto, 300);
        write(&g, "a.txt", "x\ny\n");
        let o = rt()
            .block_on(g.submit(req(vec![edit("a.txt", "x\nY\n")], true)))
            .unwrap();
        write(&g, "a.txt", "x\r\ny\r\n");
        assert_eq!(
            g.commit(&run_id(&o), false).unwrap_err().code,
            ErrorCode::FileChanged
        );
        assert_eq!(read(&g, "a.txt"), "x\r\ny\r\n");
    }

    #[test]
    fn a_batch_where_one_file_changed_writes_none() {
        let dir = tempfile::tempdir().unwrap();
        let g = gate(&dir, PolicyName::Auto, 300);
        write(&g, "a.txt", "a\n");
        write(&g, "b.txt", "b\n");
        let o = rt()
            .block_on(g.submit(req(vec![edit("a.txt", "A\n"), edit("b.txt", "B\n")], true)))
            .unwrap();
        write(&g, "b.txt", "b changed\n");
        assert_eq!(
            g.commit(&run_id(&o), false).unwrap_err().code,
            ErrorCode::FileChanged
        );
        assert_eq!(read(&g, "a.txt"), "a\n");
        assert_eq!(read(&g, "b.txt"), "b changed\n");
    }

    #[test]
    fn a_gated_edit_waits_and_a_decision_releases_it() {
        let dir = tempfile::tempdir().unwrap();
        let g = gate(&dir, PolicyName::Gate, 300);
        write(&g, "a.txt", "old\n");
        let rt = rt();
        let o = rt
            .block_on(g.submit(req(vec![edit("a.txt", "new\n")], false)))
            .unwrap();
        let id = run_id(&o);
        assert!(matches!(o, Outcome::Pending(_)));
        assert_eq!(g.pending(), vec![id.clone()]);
        // Nobody decides: the wait times out as pending.
        assert!(matches!(
            rt.block_on(g.wait(&id, Duration::from_millis(20))),
            Outcome::Pending(_)
        ));
        let g2 = g.clone();
        let id2 = id.clone();
        let waiter = std::thread::spawn(move || {
            tokio::runtime::Builder::new_current_thread()
                .enable_time()
                .build()
                .unwrap()
                .block_on(g2.wait(&id2, Duration::from_secs(10)))
        });
        std::thread::sleep(Duration::from_millis(50));
        g.decide(&id, Decision::Reject("use the helper instead".into()))
            .unwrap();
        match waiter.join().unwrap() {
            Outcome::Rejected(s) => assert_eq!(s.review.unwrap().note, "use the helper instead"),
            other => panic!("{other:?}"),
        }
        assert_eq!(read(&g, "a.txt"), "old\n");
    }

    #[test]
    fn the_first_decision_wins_and_the_agent_is_told_what_is_on_disk() {
        let dir = tempfile::tempdir().unwrap();
        let g = gate(&dir, PolicyName::Gate, 300);
        let rt = rt();
        for round in 0..40 {
            let old = format!("old {round}\n");
            let new = format!("new {round}\n");
            write(&g, "a.txt", &old);
            let o = rt
                .block_on(g.submit(req(vec![edit("a.txt", &new)], false)))
                .unwrap();
            let id = run_id(&o);
            let barrier = Arc::new(std::sync::Barrier::new(2));
            let (g2, id2, b2) = (g.clone(), id.clone(), Arc::clone(&barrier));
            let rejecter = std::thread::spawn(move || {
                b2.wait();
                g2.decide(&id2, Decision::Reject("no".into()))
            });
            barrier.wait();
            let accepted = g.decide(&id, Decision::Accept);
            let rejected = rejecter.join().unwrap();
            // Exactly one decision is taken; the other is refused as already used.
            assert_ne!(accepted.is_ok(), rejected.is_ok(), "round {round}");
            let loser = accepted.as_ref().err().or(rejected.as_ref().err()).unwrap();
            assert_eq!(loser.code, ErrorCode::RunAlreadyUsed, "{}", loser.message);
            // What the agent is told matches the file.
            let told = rt.block_on(g.wait(&id, Duration::from_millis(10)));
            match told {
                Outcome::Applied(_) => assert_eq!(read(&g, "a.txt"), new, "round {round}"),
                Outcome::Rejected(_) => assert_eq!(read(&g, "a.txt"), old, "round {round}"),
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    #[cfg(unix)]
    fn a_directory_swapped_for_a_symlink_before_the_decision_gets_nothing_written() {
        let dir = tempfile::tempdir().unwrap();
        let g = gate(&dir, PolicyName::Gate, 300);
        std::fs::create_dir_all(g.workspace().root.path().join("sub")).unwrap();
        write(&g, "sub/a.txt", "old\n");
        let o = rt()
            .block_on(g.submit(req(vec![edit("sub/a.txt", "new\n")], false)))
            .unwrap();
        let id = run_id(&o);
        // While it waits, `sub` becomes a symlink to a directory outside the root holding a
        // file just like the one proposed against.
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("a.txt"), "old\n").unwrap();
        let sub = g.workspace().root.path().join("sub");
        std::fs::remove_dir_all(&sub).unwrap();
        std::os::unix::fs::symlink(&outside, &sub).unwrap();
        assert!(g.decide(&id, Decision::Accept).is_err());
        assert_eq!(
            std::fs::read_to_string(outside.join("a.txt")).unwrap(),
            "old\n"
        );
        assert_eq!(
            std::fs::read_dir(&outside).unwrap().count(),
            1,
            "no temp file outside"
        );
    }

    #[test]
    fn a_stale_review_is_rebased_and_must_be_decided_again() {
        let dir = tempfile::tempdir().unwrap();
        let g = gate(&dir, PolicyName::Gate, 300);
        let lines: String = (0..30).map(|i| format!("line {i}\n")).collect();
        write(&g, "a.txt", &lines);
        let proposed = lines.replace("line 25\n", "line twenty-five\n");
        let o = rt()
            .block_on(g.submit(req(vec![edit("a.txt", &proposed)], false)))
            .unwrap();
        let id = run_id(&o);
        // Someone else edits another part of the file meanwhile.
        let theirs = lines.replace("line 2\n", "line two\n");
        write(&g, "a.txt", &theirs);
        let mut rx = g.subscribe();
        let e = g.decide(&id, Decision::Accept).unwrap_err();
        assert_eq!(e.code, ErrorCode::FileChanged);
        // The pre-images an applied edit's journal line names are stored while its files are
        // written; a write its checks refuse stores none.
        let stored = std::fs::read_dir(dir.path().join("journal.preimages"))
            .map(|d| d.flatten().count())
            .unwrap_or(0);
        assert_eq!(stored, 0, "pre-images stored for a write that was refused");
        assert!(e.message.contains("rebased"), "{}", e.message);
        // Said to the person deciding: which file changed, and no advice meant for the agent.
        assert!(
            e.message.contains("`a.txt` changed on disk"),
            "{}",
            e.message
        );
        assert!(!e.message.contains("send a new edit"), "{}", e.message);
        assert!(e.message.ends_with('.'), "{}", e.message);
        assert_eq!(rx.try_recv().unwrap(), Event::Updated(id.clone()));
        assert_eq!(read(&g, "a.txt"), theirs);
        assert_eq!(g.get(&id).unwrap().state, State::Pending);
        g.decide(&id, Decision::Accept).unwrap();
        assert_eq!(
            read(&g, "a.txt"),
            theirs.replace("line 25\n", "line twenty-five\n")
        );
    }

    #[test]
    fn reviewer_gone_answers_every_waiting_edit() {
        let dir = tempfile::tempdir().unwrap();
        let g = gate(&dir, PolicyName::Gate, 300);
        write(&g, "a.txt", "old\n");
        let o = rt()
            .block_on(g.submit(req(vec![edit("a.txt", "new\n")], false)))
            .unwrap();
        g.reviewer_gone();
        match rt().block_on(g.wait(&run_id(&o), Duration::from_millis(10))) {
            Outcome::Failed(_, e) => assert_eq!(e.code, ErrorCode::ReviewerGone),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_rejected_review_is_answered_by_the_same_clients_next_edit_as_a_revision() {
        let dir = tempfile::tempdir().unwrap();
        let g = gate(&dir, PolicyName::Gate, 300);
        write(&g, "a.txt", "one\ntwo\n");
        let rt = rt();
        let send = |client: &str, body: &str| {
            let r = Request {
                client: Some(client.into()),
                ..req(vec![edit("a.txt", body)], false)
            };
            let id = run_id(&rt.block_on(g.submit(r)).unwrap());
            g.list().into_iter().find(|s| s.run_id == id).unwrap()
        };
        let v1 = send("x", "one\nTWO\n");
        assert_eq!(
            (v1.revision_of.as_ref(), v1.interdiff.as_ref()),
            (None, None)
        );
        g.decide(&v1.run_id, Decision::Reject("spell it 2".into()))
            .unwrap();
        // Another client's edit of the file answers nothing.
        let other = send("y", "one\nzwei\n");
        assert_eq!(other.revision_of, None);
        let v2 = send("x", "one\n2\n");
        assert_eq!(v2.revision_of.as_deref(), Some(v1.run_id.as_str()));
        assert_eq!(v2.revision, Some(2));
        assert_eq!(v2.previous_note.as_deref(), Some("spell it 2"));
        assert_eq!(
            v2.interdiff.as_deref(),
            Some("--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-TWO\n+2\n")
        );
        // The chain goes on from the latest; a rejection without a note ends it.
        g.decide(&v2.run_id, Decision::Reject("and a third line".into()))
            .unwrap();
        let v3 = send("x", "one\n2\n3\n");
        assert_eq!(v3.revision_of.as_deref(), Some(v2.run_id.as_str()));
        assert_eq!(v3.revision, Some(3));
        g.decide(&v3.run_id, Decision::Reject(String::new()))
            .unwrap();
        assert_eq!(send("x", "one\n2\nthree\n").revision_of, None);
    }

    #[test]
    fn events_announce_new_and_decided_proposals() {
        let dir = tempfile::tempdir().unwrap();
        let g = gate(&dir, PolicyName::Gate, 300);
        write(&g, "a.txt", "old\n");
        let mut rx = g.subscribe();
        let o = rt()
            .block_on(g.submit(req(vec![edit("a.txt", "new\n")], false)))
            .unwrap();
        let id = run_id(&o);
        g.decide(&id, Decision::Accept).unwrap();
        assert_eq!(rx.try_recv().unwrap(), Event::New(id.clone()));
        assert_eq!(rx.try_recv().unwrap(), Event::Decided(id));
    }

    #[test]
    fn a_partial_accept_checks_the_syntax_of_what_was_written() {
        let dir = tempfile::tempdir().unwrap();
        let g = gate(&dir, PolicyName::Gate, 300);
        let fns: Vec<String> = (0..6)
            .map(|k| format!("fn f{k}() -> u32 {{\n    {k}\n}}\n"))
            .collect();
        let old = fns.join("\n");
        write(&g, "lib.rs", &old);
        // Hunk 1 changes a value; hunk 2 drops the last function's closing brace.
        let new = old.replacen("    0\n", "    10\n", 1);
        let new = new.strip_suffix("}\n").unwrap().to_string();
        let o = rt()
            .block_on(g.submit(req(vec![edit("lib.rs", &new)], false)))
            .unwrap();
        let id = run_id(&o);
        let marks = |g: &Gate| {
            let s = g.list().into_iter().find(|s| s.run_id == id).unwrap();
            s.syntax.len()
        };
        assert_eq!(marks(&g), 1);
        g.decide(&id, Decision::AcceptHunks(vec![0])).unwrap();
        assert_eq!(read(&g, "lib.rs"), old.replacen("    0\n", "    10\n", 1));
        assert_eq!(marks(&g), 0, "the broken hunk was not written");
    }

    #[test]
    fn a_batch_with_one_file_left_out_reports_only_the_files_written() {
        let dir = tempfile::tempdir().unwrap();
        let g = gate(&dir, PolicyName::Gate, 300);
        write(&g, "a.txt", "a\n");
        write(&g, "b.txt", "b\n");
        let o = rt()
            .block_on(g.submit(req(vec![edit("a.txt", "A\n"), edit("b.txt", "B\n")], false)))
            .unwrap();
        let id = run_id(&o);
        let Outcome::Applied(s) = g.decide(&id, Decision::AcceptHunks(vec![0])).unwrap() else {
            panic!("not applied");
        };
        assert_eq!(s.paths, ["a.txt"]);
        assert_eq!(
            (read(&g, "a.txt"), read(&g, "b.txt")),
            ("A\n".into(), "b\n".into())
        );
    }

    /// The bytes all open proposals hold, walked (each original counted once).
    fn open_bytes(g: &Gate) -> usize {
        let slots = g.slots();
        let mut seen = std::collections::HashSet::new();
        slots
            .map
            .values()
            .filter(|s| s.proposal.state.is_open())
            .map(|s| Held::of(&s.proposal).bytes(&mut seen))
            .sum()
    }

    /// The running total, checked against a walk of the open proposals.
    fn tally(g: &Gate) -> usize {
        let walked = open_bytes(g);
        assert_eq!(g.slots().tally.bytes(), walked);
        walked
    }

    /// 2000 lines of about 130 bytes (260 KB), tagged.
    fn lines(tag: &str) -> String {
        (0..2000)
            .map(|k| format!("{tag} {k} {}\n", "z".repeat(120)))
            .collect()
    }

    /// For each of `files`, a review of it by `client` rejected with a note: `client`'s next
    /// edit of the file is its revision, whose interdiff is computed off the runtime.
    fn rejected_reviews(g: &Gate, client: impl Fn(usize) -> String, files: &[String]) {
        let rt = rt();
        for (i, f) in files.iter().enumerate() {
            write(g, f, "x\n");
            let r = Request {
                client: Some(client(i)),
                ..req(vec![edit(f, &lines("first"))], false)
            };
            let id = run_id(&rt.block_on(g.submit(r)).unwrap());
            g.decide(&id, Decision::Reject("again".into())).unwrap();
        }
    }

    /// `reqs` submitted at once, as tasks of one runtime; their results in order. Its one
    /// blocking thread, held until every request has sent its syntax check, runs the work
    /// sent off the runtime in the order sent: the requests reach the caps together, each
    /// then waiting on its interdiff before it is inserted (a gate whose check and insert
    /// are two steps lets them all through).
    fn submit_all(g: &Gate, reqs: Vec<Request>) -> Vec<Result<Outcome>> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .max_blocking_threads(1)
            .build()
            .unwrap();
        let (release, hold) = std::sync::mpsc::channel::<()>();
        rt.block_on(async {
            tokio::task::spawn_blocking(move || hold.recv());
            let tasks: Vec<_> = reqs
                .into_iter()
                .map(|r| {
                    let g = g.clone();
                    tokio::spawn(async move { g.submit(r).await })
                })
                .collect();
            // Runs after each request's first poll, which ends at its syntax check.
            tokio::spawn(async move { release.send(()) });
            let mut done = Vec::new();
            for t in tasks {
                done.push(t.await.unwrap());
            }
            done
        })
    }

    /// Each refusal is the cap's, and at least one request got in and one was refused.
    fn some_refused_at_the_cap(results: &[Result<Outcome>]) {
        let refused: Vec<&Error> = results.iter().filter_map(|r| r.as_ref().err()).collect();
        for e in &refused {
            assert_eq!(e.code, ErrorCode::InvalidInput, "{e:?}");
            assert!(e.message.contains("too many open proposals"), "{e:?}");
        }
        assert!(
            !refused.is_empty() && refused.len() < results.len(),
            "{results:?}"
        );
    }

    /// Found in review: concurrent submits to different files each passed the byte cap
    /// before any of them was inserted, and then all were inserted, past the cap.
    #[test]
    fn concurrent_submits_never_hold_more_than_the_byte_cap() {
        const CAP: usize = 5 << 19;
        let dir = tempfile::tempdir().unwrap();
        let g = gate(&dir, PolicyName::Gate, 300).with_open_bytes_cap(CAP);
        let files: Vec<String> = (0..8).map(|i| format!("f{i}.txt")).collect();
        let client = |i: usize| format!("agent-{i}");
        rejected_reviews(&g, client, &files);
        // Each holds about 750 KB (its text, its hunk and its interdiff): three fit, not eight.
        let reqs = files
            .iter()
            .enumerate()
            .map(|(i, f)| Request {
                client: Some(client(i)),
                ..req(vec![edit(f, &lines(&format!("second {i}")))], true)
            })
            .collect();
        let results = submit_all(&g, reqs);
        some_refused_at_the_cap(&results);
        let held = open_bytes(&g);
        assert!(held <= CAP, "open proposals hold {held} bytes, cap {CAP}");
    }

    /// The same for the count: a client two short of its cap sending four edits at once.
    #[test]
    fn concurrent_submits_never_pass_the_per_client_cap() {
        let dir = tempfile::tempdir().unwrap();
        let g = gate(&dir, PolicyName::Gate, 300);
        let files: Vec<String> = (0..4).map(|i| format!("f{i}.txt")).collect();
        rejected_reviews(&g, |_| "a".into(), &files);
        write(&g, "x.txt", "x\n");
        let rt = rt();
        // Pending reviews (which no request evicts) fill all but two places.
        for i in 0..MAX_OPEN_PER_CLIENT - 2 {
            let r = Request {
                client: Some("a".into()),
                ..req(vec![edit("x.txt", &format!("v{i}\n"))], false)
            };
            rt.block_on(g.submit(r)).unwrap();
        }
        let reqs = files
            .iter()
            .map(|f| Request {
                client: Some("a".into()),
                ..req(vec![edit(f, &lines("second"))], true)
            })
            .collect();
        let results = submit_all(&g, reqs);
        some_refused_at_the_cap(&results);
        let open = g.list().iter().filter(|s| s.state.is_open()).count();
        assert_eq!(open, MAX_OPEN_PER_CLIENT);
    }

    /// The running total is kept right as proposals close every way, and through a rebase
    /// and an acceptance of some hunks (which change what a proposal holds).
    #[test]
    fn the_open_bytes_total_follows_every_close_and_every_change() {
        let dir = tempfile::tempdir().unwrap();
        let g = gate(&dir, PolicyName::Gate, 300);
        let lines: String = (0..30).map(|i| format!("line {i}\n")).collect();
        write(&g, "a.txt", &lines);
        write(&g, "b.txt", &lines);
        write(&g, "d.txt", &lines);
        let rt = rt();
        let send = |rel: &str, n: usize, dry_run: bool| {
            let new = lines.replace(&format!("line {n}\n"), &format!("changed {n}\n"));
            let r = Request {
                client: Some("a".into()),
                ..req(vec![edit(rel, &new)], dry_run)
            };
            run_id(&rt.block_on(g.submit(r)).unwrap())
        };
        let accepted = send("a.txt", 1, false);
        let rejected = send("a.txt", 2, false);
        let expired = send("a.txt", 3, true);
        let withdrawn = send("a.txt", 4, false);
        let rebased = send("b.txt", 25, false);
        let some_hunks = Request {
            client: Some("a".into()),
            ..req(
                vec![edit(
                    "d.txt",
                    &lines
                        .replace("line 5\n", "five\n")
                        .replace("line 20\n", "twenty\n"),
                )],
                false,
            )
        };
        let some_hunks = run_id(&rt.block_on(g.submit(some_hunks)).unwrap());
        let all = tally(&g);
        // a.txt's original is held once by four proposals.
        let a_original = 2 * lines.len();
        assert!(all > a_original + 6 * lines.len(), "{all}");
        g.decide(&accepted, Decision::Accept).unwrap();
        g.decide(&rejected, Decision::Reject("no".into())).unwrap();
        {
            // As if its time had passed: the queue's first expiry passes with it.
            let mut slots = g.slots();
            let past = Some(SystemTime::UNIX_EPOCH);
            slots.map.get_mut(&expired).unwrap().proposal.expires_at = past;
            slots.first_expiry = past;
        }
        g.sweep();
        assert_eq!(g.get(&expired).unwrap().state, State::Expired);
        g.withdraw(&withdrawn);
        assert_eq!(g.get(&withdrawn).unwrap().state, State::Expired);
        let before = tally(&g);
        assert!(before < all);
        // b.txt changes elsewhere: the proposal is rebased on the new content, a new original.
        write(&g, "b.txt", &lines.replace("line 2\n", "line two\n"));
        let e = g.decide(&rebased, Decision::Accept).unwrap_err();
        assert_eq!(e.code, ErrorCode::FileChanged);
        let after = tally(&g);
        assert!(after > before, "{before} → {after}");
        g.decide(&rebased, Decision::Accept).unwrap();
        g.decide(&some_hunks, Decision::AcceptHunks(vec![0]))
            .unwrap();
        assert_eq!(tally(&g), 0);
        assert_eq!(g.slots().tally.count(Some("a")), 0);
        // A refused request gives its place back too.
        write(&g, "c.txt", "c\n");
        let e = rt.block_on(g.submit(req(vec![edit("c.txt", "c\n")], true)));
        assert_eq!(e.unwrap_err().code, ErrorCode::ApplyNoop);
        assert_eq!(g.slots().tally.count(None), 0);
    }

    /// The bounds on closed proposals as docs/DESIGN.md §7 states them (not the constants,
    /// which a change could move with the tests).
    const REMEMBERED: usize = 500;
    const REMEMBERED_BYTES: usize = 128 << 20;

    /// Submit an edit of `a.txt` to `body` and reject it: one more closed proposal; its id.
    fn closed_one(g: &Gate, rt: &tokio::runtime::Runtime, body: String) -> String {
        let id = run_id(
            &rt.block_on(g.submit(req(vec![edit("a.txt", &body)], false)))
                .unwrap(),
        );
        g.decide(&id, Decision::Reject("no".into())).unwrap();
        id
    }

    /// The bytes the closed proposals the gate remembers hold (each original once).
    fn closed_bytes(g: &Gate) -> usize {
        let slots = g.slots();
        let mut seen = std::collections::HashSet::new();
        slots
            .map
            .values()
            .filter(|s| !s.proposal.state.is_open())
            .map(|s| Held::of(&s.proposal).bytes(&mut seen))
            .sum()
    }

    /// The closed proposals' running count (bytes, proposals) and the same recounted from
    /// every closed proposal held, each original once.
    fn closed_counts(g: &Gate) -> ((usize, usize), (usize, usize)) {
        let slots = g.slots();
        let closed: Vec<&Slot> = slots
            .map
            .values()
            .filter(|s| !s.proposal.state.is_open())
            .collect();
        let mut seen = std::collections::HashSet::new();
        let bytes = closed
            .iter()
            .map(|s| Held::of(&s.proposal).bytes(&mut seen))
            .sum();
        (
            (slots.closed.bytes(), slots.closed.count()),
            (bytes, closed.len()),
        )
    }

    /// The running count of what the closed proposals hold equals a full recount after every
    /// step of many: proposals of two files (those of one file sharing its original) pending,
    /// rejected, accepted whole or in part (the file then changed under the others: rebased
    /// or failed), failed calls recorded, and the oldest forgotten past the 500 remembered.
    #[test]
    fn the_closed_proposals_running_count_is_a_full_recount() {
        let dir = tempfile::tempdir().unwrap();
        let g = gate(&dir, PolicyName::Gate, 300);
        write(&g, "a.txt", "a\nb\nc\n");
        write(&g, "b.txt", "x\ny\nz\n");
        let rt = rt();
        let mut pending = std::collections::VecDeque::new();
        let (mut shared, mut made) = (false, 0);
        for k in 0..REMEMBERED + 300 {
            let (file, body) = if k % 2 == 0 {
                ("a.txt", format!("a\nb{k}\nc\n"))
            } else {
                ("b.txt", format!("x{k}\ny\nz{k}\n"))
            };
            let id = rt
                .block_on(g.submit(req(vec![edit(file, &body)], false)))
                .unwrap();
            pending.push_back(run_id(&id));
            made += 1;
            // Eight wait: the oldest is decided (a rebased one waits again).
            if pending.len() > 8
                && let Some(oldest) = pending.pop_front()
            {
                let decision = match k % 4 {
                    0 | 3 => Decision::Reject(format!("no {k}")),
                    1 => Decision::Accept,
                    _ => Decision::AcceptHunks(vec![0]),
                };
                let _ = g.decide(&oldest, decision);
                if g.slots()
                    .map
                    .get(&oldest)
                    .is_some_and(|s| s.proposal.state.is_open())
                {
                    pending.push_back(oldest);
                }
            }
            if k % 5 == 2 {
                let e = Error::invalid_input(format!("failed call {k}"));
                g.record_failure("patch_file", None, vec![file.to_string()], &e);
                made += 1;
            }
            let (running, recount) = closed_counts(&g);
            assert_eq!(running, recount, "after step {k}");
            let slots = g.slots();
            let mut originals = std::collections::HashSet::new();
            shared |= slots
                .map
                .values()
                .filter(|s| !s.proposal.state.is_open())
                .flat_map(|s| s.proposal.originals())
                .any(|(at, _)| !originals.insert(at));
        }
        assert!(shared, "no original was shared by two closed proposals");
        assert!(g.slots().map.len() < made, "none forgotten");
    }

    /// The closed proposals remembered are the newest 500: 520 closed, then one more edit,
    /// leave the last 500 and that one; the first 20 are forgotten.
    #[test]
    fn only_the_newest_500_closed_proposals_are_remembered() {
        let dir = tempfile::tempdir().unwrap();
        let g = gate(&dir, PolicyName::Gate, 300);
        write(&g, "a.txt", "x\n");
        let rt = rt();
        let closed: Vec<String> = (0..REMEMBERED + 20)
            .map(|k| closed_one(&g, &rt, format!("v{k}\n")))
            .collect();
        let last = run_id(
            &rt.block_on(g.submit(req(vec![edit("a.txt", "last\n")], false)))
                .unwrap(),
        );
        let listed: Vec<String> = g.list().into_iter().map(|s| s.run_id).collect();
        assert_eq!(listed.len(), REMEMBERED + 1);
        assert_eq!(listed[..REMEMBERED], closed[20..]);
        assert_eq!(listed[REMEMBERED], last);
        assert!(
            !g.slots().map.contains_key(&closed[19]),
            "the oldest are forgotten"
        );
        // Each rejected with a note: those forgotten are no longer counted as answerable.
        assert_eq!(g.slots().answerable, REMEMBERED);
    }

    /// A sweep that finds no dry-run to expire looks at no proposal until one could expire;
    /// a dry-run added after it still expires at the next sweep past its time.
    #[test]
    fn a_dry_run_added_after_a_sweep_expires_at_the_next() {
        let dir = tempfile::tempdir().unwrap();
        let g = gate(&dir, PolicyName::Auto, 0);
        write(&g, "a.txt", "old\n");
        let rt = rt();
        let state = |id: &str| g.list().into_iter().find(|s| s.run_id == id).unwrap().state;
        assert_eq!(g.slots().first_expiry, None);
        let first = run_id(
            &rt.block_on(g.submit(req(vec![edit("a.txt", "new\n")], true)))
                .unwrap(),
        );
        assert_eq!(state(&first), State::Expired);
        g.sweep();
        assert_eq!(g.slots().first_expiry, None, "no dry-run is left");
        let second = run_id(
            &rt.block_on(g.submit(req(vec![edit("a.txt", "newer\n")], true)))
                .unwrap(),
        );
        assert!(g.slots().first_expiry.is_some());
        assert_eq!(state(&second), State::Expired);
    }

    /// Closed proposals of 1 MiB of new text each (about 2 MiB held: the text and its hunk):
    /// past 128 MiB in all the oldest are forgotten, the newest kept up to the bytes.
    #[test]
    fn closed_proposals_are_remembered_within_128_mib() {
        let dir = tempfile::tempdir().unwrap();
        let g = gate(&dir, PolicyName::Gate, 300);
        write(&g, "a.txt", "x\n");
        let rt = rt();
        let big = "y".repeat(1 << 20);
        let closed: Vec<String> = (0..80)
            .map(|k| closed_one(&g, &rt, format!("{k}{big}")))
            .collect();
        let one = {
            let slots = g.slots();
            Held::of(&slots.map[closed.last().unwrap()].proposal).bytes(&mut Default::default())
        };
        assert!(80 * one > REMEMBERED_BYTES + one, "{one} bytes each");
        rt.block_on(g.submit(req(vec![edit("a.txt", "last\n")], false)))
            .unwrap();
        let held = closed_bytes(&g);
        assert!(
            held <= REMEMBERED_BYTES,
            "closed proposals hold {held} bytes"
        );
        assert!(
            held > REMEMBERED_BYTES - one,
            "{held} bytes kept: more than the oldest went"
        );
        let kept: Vec<&String> = closed
            .iter()
            .filter(|id| g.slots().map.contains_key(*id))
            .collect();
        let first_kept = closed.len() - kept.len();
        assert_eq!(
            kept,
            closed[first_kept..].iter().collect::<Vec<_>>(),
            "the newest stay"
        );
        assert!(first_kept > 0, "none forgotten");
    }
}
