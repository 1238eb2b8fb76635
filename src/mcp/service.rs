//! Running a tool call to its answer, whatever the transport: parse the arguments, send the
//! edit to the gate (this process's, or a live gate found through the discovery file), and
//! while a person decides, wait in steps of [`PROGRESS_EVERY`] with a progress message each
//! step; after the review timeout answer `pending`; on cancellation withdraw the review.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::args::{self, ToolCall, ToolName};
use super::discovery::Discovery;
use super::envelope::{Envelope, Status, undone_notice};
use super::forward::{Forwarder, GateScope};
// Where the progress of a call goes (kept here too: `service::NoProgress` is the old path).
pub use super::progress::{NoProgress, ProgressSink};
use crate::error::{Error, ErrorCode};
use crate::review::agents::AgentRef;
use crate::review::proposal::{SYNTAX_WARNING, State};
use crate::review::queue::{Gate, Origin, Outcome, Request};

/// How often a waiting call reports progress.
pub(crate) const PROGRESS_EVERY: Duration = Duration::from_secs(10);

/// The longest `await_review` waits in one call.
pub(crate) const MAX_AWAIT: Duration = Duration::from_secs(3600);

/// Who makes a call: the MCP client's name and the agent connection it came over.
#[derive(Debug, Clone, Default)]
pub struct Caller {
    /// The MCP client's name.
    pub client: Option<String>,
    /// The connection it came over (its reviews are withdrawn when it ends).
    pub agent: Option<AgentRef>,
    /// Its request's share of the bytes in flight, given back once the edit is proposed.
    pub in_flight: Option<super::inflight::Share>,
}

/// Whether a person can decide reviews of this process's gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reviewers {
    /// The gate listens: a TUI or a script may decide (now or once attached).
    Attachable,
    /// A stdio server on its own: nobody can decide, so a review fails at once.
    None,
}

struct Inner {
    gate: Gate,
    review_timeout: Duration,
    reviewers: Reviewers,
    /// For `serve --stdio`: the directory whose live gate to forward to.
    forward_from: Option<PathBuf>,
    forwarder: tokio::sync::Mutex<Option<(Discovery, Forwarder)>>,
    /// The code search of the gate's root.
    searches: super::search::Searches,
}

/// Runs tool calls. Cheap to clone.
#[derive(Clone)]
pub struct Dispatcher {
    inner: Arc<Inner>,
}

enum Target {
    Local,
    Remote(Forwarder),
}

fn elapsed_text(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

/// The path arguments of raw arguments, for the envelope of a call that did not parse.
fn raw_paths(arguments: &Map<String, Value>) -> Vec<String> {
    let mut out: Vec<String> = ["path", "target_file", "file_path"]
        .iter()
        .filter_map(|k| arguments.get(*k).and_then(Value::as_str))
        .map(str::to_string)
        .collect();
    if let Some(Value::Array(items)) = arguments.get("patches") {
        out.extend(
            items
                .iter()
                .filter_map(|i| i.get("target_file").and_then(Value::as_str))
                .map(str::to_string),
        );
    }
    out
}

impl Dispatcher {
    /// A dispatcher over `gate`. With `forward_from`, edits go to a live gate whose root
    /// covers that directory whenever one runs (checked on every call).
    pub fn new(
        gate: Gate,
        review_timeout: Duration,
        reviewers: Reviewers,
        forward_from: Option<PathBuf>,
    ) -> Dispatcher {
        // Undos from another process (`patchgate undo RUN`) reach the rows and the agents.
        gate.follow_journal();
        Dispatcher {
            inner: Arc::new(Inner {
                gate,
                review_timeout,
                reviewers,
                forward_from,
                forwarder: tokio::sync::Mutex::new(None),
                searches: super::search::Searches::default(),
            }),
        }
    }

    /// The gate.
    pub fn gate(&self) -> &Gate {
        &self.inner.gate
    }

    /// The agents connected to this process's gate now (docs/DESIGN.md §1): its MCP
    /// sessions and the links of the stdio servers that forward to it.
    pub fn active_clients(&self) -> usize {
        self.inner.gate.connected_agents()
    }

    /// Run a search tool (read-only: no review, never forwarded) to its JSON answer, with
    /// `true` when it is an error envelope. Under a live gate it obeys the gate's rules too.
    pub async fn search(
        &self,
        tool: ToolName,
        arguments: &Map<String, Value>,
        _client: Option<String>,
        cancel: CancellationToken,
        sink: &dyn ProgressSink,
    ) -> (Value, bool) {
        let scope = match self.gate_scope().await {
            Ok(s) => s,
            Err(e) => return (Envelope::error(&e, &[], false).to_value(), true),
        };
        let deny = match self.gate_deny(scope.as_ref()).await {
            Ok(d) => d,
            Err(e) => return (Envelope::error(&e, &[], false).to_value(), true),
        };
        let under = scope.map(|s| super::search::Under { scope: s, deny });
        super::search::run(
            &self.inner.searches,
            &self.inner.gate,
            under.as_ref(),
            tool,
            arguments,
            cancel,
            sink,
        )
        .await
    }

    /// For a stdio server under a live gate, where it stands under that gate, whose rules
    /// what it serves locally obeys too (docs/DESIGN.md §7). A live gate that does not answer
    /// still counts: its discovery entry names its root.
    async fn gate_scope(&self) -> Result<Option<GateScope>, Error> {
        let Some(dir) = self.inner.forward_from.as_ref() else {
            return Ok(None);
        };
        if let Some(f) = self.remote().await {
            return Ok(Some(f.scope().clone()));
        }
        let Some(live) = Discovery::for_dir(dir) else {
            return Ok(None);
        };
        GateScope::new(&live.root, dir).map(Some).map_err(|e| {
            Error::new(
                ErrorCode::FsError,
                format!(
                    "the rules of the gate at {} cannot be applied: {e}",
                    live.url
                ),
            )
        })
    }

    /// Under a live gate (`scope`), the `deny` globs its reviewer added, read from it anew for
    /// each search; when the gate is connected but does not answer the read, an error: the
    /// search fails closed (docs/DESIGN.md §7). A gate that never answered has none to give.
    async fn gate_deny(&self, scope: Option<&GateScope>) -> Result<Vec<String>, Error> {
        if scope.is_none() {
            return Ok(Vec::new());
        }
        let Some(f) = self.remote().await else {
            return Ok(Vec::new());
        };
        f.added_deny().await.map_err(|e| {
            Error::new(
                ErrorCode::FsError,
                format!(
                    "the rules the gate's reviewer added cannot be read ({e}); nothing was \
                     searched — search again once the gate answers"
                ),
            )
        })
    }

    /// The review timeout of this process's gate.
    pub fn review_timeout(&self) -> Duration {
        self.inner.review_timeout
    }

    /// For `serve --stdio`: connect to the live gate now, in the background, so the gate
    /// counts this agent from its start (docs/DESIGN.md §1), not from its first call.
    pub fn connect_early(&self) {
        if self.inner.forward_from.is_none() {
            return;
        }
        let d = self.clone();
        tokio::spawn(async move {
            d.remote().await;
        });
    }

    /// The live gate to forward to, if any (connecting when the discovery file changed).
    async fn remote(&self) -> Option<Forwarder> {
        let dir = self.inner.forward_from.as_ref()?;
        let live = Discovery::for_dir(dir);
        let mut cached = self.inner.forwarder.lock().await;
        let Some(live) = live else {
            *cached = None;
            return None;
        };
        // The same gate, and its link still open (else connect again, for a new link).
        if let Some((d, f)) = cached.as_ref()
            && *d == live
            && !f.link_lost()
        {
            return Some(f.clone());
        }
        match Forwarder::connect(&live, dir).await {
            Ok(f) => {
                tracing::info!("forwarding edits to the gate at {}", live.url);
                *cached = Some((live, f.clone()));
                Some(f)
            }
            Err(e) => {
                tracing::warn!(
                    "the gate at {} cannot take our edits ({e}); using our own",
                    live.url
                );
                *cached = None;
                None
            }
        }
    }

    async fn target_for(&self, call: &ToolCall) -> Target {
        if self.inner.forward_from.is_none() {
            return Target::Local;
        }
        // A run this process made stays here.
        if let ToolCall::Commit { run_id } | ToolCall::Await { run_id, .. } = call
            && self.inner.gate.get(run_id).is_some()
        {
            return Target::Local;
        }
        match self.remote().await {
            Some(f) => Target::Remote(f),
            None => Target::Local,
        }
    }

    /// A stdio server that found no gate for its root says so with every edit: no person
    /// reviews it (never silent).
    fn unreviewed_note(&self, call: &ToolCall) -> Option<String> {
        let dir = self.inner.forward_from.as_ref()?;
        if !matches!(call, ToolCall::Edit { .. }) {
            return None;
        }
        Some(format!(
            "no patchgate gate is running for {}: this edit is not reviewed by a person; this \
             server handles it alone under policy `{}` (start `patchgate` in the project so a \
             person reviews edits)",
            dir.display(),
            self.inner.gate.policy().default.as_str()
        ))
    }

    /// A pending review nobody can decide fails at once with `REVIEWER_GONE`.
    fn settle_unreviewable(&self, outcome: Outcome) -> Outcome {
        if self.inner.reviewers == Reviewers::None
            && let Outcome::Pending(s) = &outcome
        {
            let syntax: Vec<&String> = s
                .warnings
                .iter()
                .filter(|w| w.contains(SYNTAX_WARNING))
                .collect();
            let unseen: Vec<&String> = s
                .warnings
                .iter()
                .filter(|w| w.starts_with("unseen: ") || w.contains(": unseen: "))
                .collect();
            let joined = |ws: &[&String]| -> String {
                ws.iter().map(|w| w.as_str()).collect::<Vec<_>>().join("; ")
            };
            let held_unseen = s.warnings.iter().any(|w| {
                w.contains("waits for a person: under `auto`") && w.contains("does not show")
            });
            let message = if syntax.is_empty() && held_unseen {
                // Held for a person only because it deletes lines it does not show.
                format!(
                    "the edit of {} deletes lines it does not show ({}), so it waits for a person, and no reviewer is running; nothing was written. Show those lines (or `-` lines, or `remove NAME`) and send the edit again, or start `patchgate` in the project so a person can decide",
                    s.paths.join(", "),
                    joined(&unseen)
                )
            } else if syntax.is_empty() {
                format!(
                    "the policy asks a person to review {}, but no reviewer is running; nothing was written. Start `patchgate` in the project so a person can decide (then send the edit again), or run the server with --policy auto or --policy dry-run",
                    s.paths.join(", ")
                )
            } else {
                // Held for a person only because the result does not parse.
                format!(
                    "the edit of {} leaves a syntax error the file did not have ({}), so it waits for a person, and no reviewer is running; nothing was written. Fix the edit and send it again, or start `patchgate` in the project so a person can decide",
                    s.paths.join(", "),
                    joined(&syntax)
                )
            };
            let e = Error::new(ErrorCode::ReviewerGone, message);
            self.inner
                .gate
                .close_pending(&s.run_id, State::Failed, e.clone());
            return Outcome::Failed(Some(s.clone()), e);
        }
        outcome
    }

    /// Start a parsed call on this process's gate and answer at once (`pending` when a
    /// person must decide).
    pub(crate) async fn start_local(&self, call: &ToolCall, caller: Caller) -> Envelope {
        let (client, agent) = (caller.client.clone(), caller.agent.clone());
        let env = self.start_local_call(call, caller).await;
        self.with_notices(env, client.as_deref(), agent.as_ref())
    }

    /// `env` with the undos `client` has not heard of yet (docs/DESIGN.md §3): `run X was
    /// undone by the reviewer: re-read FILE`; a result that already says so of its own run
    /// (an `await_review` of it) counts as told.
    fn with_notices(
        &self,
        mut env: Envelope,
        client: Option<&str>,
        agent: Option<&crate::review::agents::AgentRef>,
    ) -> Envelope {
        let notices: Vec<String> = self
            .inner
            .gate
            .take_notices(client, agent)
            .into_iter()
            .map(|(run, paths)| undone_notice(&run, &paths))
            .collect();
        env.add_notices(notices);
        env
    }

    async fn start_local_call(&self, call: &ToolCall, caller: Caller) -> Envelope {
        let Caller { client, agent, .. } = caller;
        let paths = call.paths();
        let dry_run = call.dry_run();
        let gate = &self.inner.gate;
        let result = match call {
            ToolCall::Edit {
                tool,
                edits,
                revision_of,
                ..
            } => {
                // A call that fails before anything is proposed stays in the person's sight.
                let req = Request {
                    tool: tool.as_str().to_string(),
                    client,
                    edits: edits.clone(),
                    dry_run,
                    keep_failure: true,
                };
                let origin = Origin {
                    agent,
                    revision_of: revision_of.clone(),
                };
                gate.submit_from(req, origin).await
            }
            ToolCall::Commit { run_id } => gate.commit(run_id, false),
            ToolCall::Await { run_id, .. } => {
                gate.sweep();
                gate.notice_undos();
                Ok(gate.status(run_id))
            }
            ToolCall::Search { tool, .. } => Err(Error::invalid_input(format!(
                "`{}` is served over MCP (/mcp or `patchgate serve --stdio`) and by `patchgate search`, not here",
                tool.as_str()
            ))),
        };
        match result {
            Ok(o) => Envelope::from_outcome(&self.settle_unreviewable(o), &paths, dry_run),
            Err(e) => {
                let mut env = Envelope::error(&e, &paths, dry_run);
                if let ToolCall::Commit { run_id } = call {
                    env.run_id = Some(run_id.clone());
                    if let Some(p) = gate.get(run_id) {
                        let (path, many) = match p.paths().as_slice() {
                            [one] => (Some(one.clone()), None),
                            all => (None, Some(all.to_vec())),
                        };
                        env.path = path;
                        env.paths = many;
                    }
                }
                env
            }
        }
    }

    /// Wait up to `timeout` on this process's gate.
    pub(crate) async fn wait_local(&self, run_id: &str, timeout: Duration) -> Envelope {
        let o = self.inner.gate.wait(run_id, timeout).await;
        Envelope::from_outcome(&o, &[], false)
    }

    /// Parse and start a raw call on this process's gate (the review API's tool endpoint).
    pub(crate) async fn start_raw_local(
        &self,
        tool: ToolName,
        arguments: &Map<String, Value>,
        caller: Caller,
    ) -> Envelope {
        match args::parse(tool, Some(arguments)) {
            Ok(call) => self.start_local(&call, caller).await,
            Err(e) => Envelope::error(&e, &raw_paths(arguments), false),
        }
    }

    /// Run a tool call to its answer: start it, and while it waits for a person, report
    /// progress every [`PROGRESS_EVERY`] until the decision, the review timeout (then
    /// `pending`), or `cancel` (then the review is withdrawn).
    pub async fn run(
        &self,
        tool: ToolName,
        arguments: Map<String, Value>,
        client: Option<String>,
        cancel: CancellationToken,
        sink: &dyn ProgressSink,
    ) -> Envelope {
        let caller = Caller {
            client,
            ..Caller::default()
        };
        self.run_for(tool, arguments, caller, cancel, sink).await
    }

    /// [`Dispatcher::run`] for `caller`: an edit of this process's gate is tied to the
    /// caller's connection (withdrawn when it ends); a forwarded one to the forwarding
    /// server's link to the live gate.
    pub async fn run_for(
        &self,
        tool: ToolName,
        arguments: Map<String, Value>,
        caller: Caller,
        cancel: CancellationToken,
        sink: &dyn ProgressSink,
    ) -> Envelope {
        let call = match args::parse(tool, Some(&arguments)) {
            Ok(c) => c,
            Err(e) => return Envelope::error(&e, &raw_paths(&arguments), false),
        };
        let target = self.target_for(&call).await;
        let in_flight = caller.in_flight.clone();
        let (first, review_timeout) = match &target {
            Target::Local => {
                drop(arguments);
                let mut env = self.start_local(&call, caller).await;
                if let Some(note) = self.unreviewed_note(&call) {
                    env.warnings.insert(0, note);
                }
                (env, self.inner.review_timeout)
            }
            Target::Remote(f) => (
                Self::start_remote(f, tool, &call, arguments, caller.client).await,
                f.review_timeout,
            ),
        };
        let timeout = match &call {
            ToolCall::Await {
                timeout: Some(t), ..
            } => (*t).min(MAX_AWAIT),
            _ => review_timeout,
        };
        // Proposed (or refused): the edit's text is the open proposal's now, counted with
        // them, and the call holds no copy of it while it waits for the reviewer.
        drop(call);
        if let Some(share) = in_flight {
            share.release();
        }
        self.follow(first, &target, timeout, cancel, sink).await
    }

    /// Start a parsed call at the live gate. A commit or wait by run_id goes only to a run
    /// whose files all lie under this server's root; another root's is `RUN_NOT_FOUND`.
    async fn start_remote(
        f: &Forwarder,
        tool: ToolName,
        call: &ToolCall,
        arguments: Map<String, Value>,
        client: Option<String>,
    ) -> Envelope {
        if let ToolCall::Commit { run_id } | ToolCall::Await { run_id, .. } = call
            && let Err(e) = f.confirm_own_run(run_id).await
        {
            let mut env = Envelope::error(&e, &[], false);
            // As the gate answers: a commit names its run, an unknown run's wait does not.
            if matches!(call, ToolCall::Commit { .. }) || e.code != ErrorCode::RunNotFound {
                env.run_id = Some(run_id.clone());
            }
            return env;
        }
        f.start(tool, arguments, client, &call.paths(), call.dry_run())
            .await
    }

    async fn follow(
        &self,
        first: Envelope,
        target: &Target,
        timeout: Duration,
        cancel: CancellationToken,
        sink: &dyn ProgressSink,
    ) -> Envelope {
        let started = Instant::now();
        // What the first answer told of earlier runs is told with the last one too.
        let notices = first.notices.clone();
        let mut env = first;
        while env.status == Status::Pending {
            let Some(run_id) = env.run_id.clone() else {
                break;
            };
            let elapsed = started.elapsed();
            if elapsed >= timeout {
                break;
            }
            let step = PROGRESS_EVERY.min(timeout - elapsed);
            let waited = tokio::select! {
                e = async {
                    match target {
                        Target::Local => self.wait_local(&run_id, step).await,
                        Target::Remote(f) => f.wait(&run_id, step).await,
                    }
                } => e,
                _ = cancel.cancelled() => {
                    match target {
                        Target::Local => self.inner.gate.withdraw(&run_id),
                        Target::Remote(f) => f.withdraw(&run_id).await,
                    }
                    tracing::info!("run {run_id}: the client cancelled; review withdrawn");
                    let mut e = env.clone();
                    e.status = Status::Error;
                    e.code = Some(ErrorCode::ReviewTimeout);
                    e.message = format!("run {run_id} was withdrawn: the client cancelled the call");
                    return e;
                }
            };
            // A failed wait keeps what the agent needs to find the run again.
            env = if waited.run_id.is_none() && waited.status == Status::Error {
                let mut w = waited;
                w.run_id = Some(run_id);
                w
            } else {
                waited
            };
            if env.status == Status::Pending && started.elapsed() < timeout {
                let what = env
                    .path
                    .clone()
                    .or_else(|| env.paths.as_ref().map(|p| p.join(", ")))
                    .unwrap_or_else(|| "the edit".into());
                sink.progress(
                    started.elapsed().as_secs_f64().floor(),
                    timeout.as_secs_f64().floor(),
                    format!(
                        "awaiting review of {what}, {}",
                        elapsed_text(started.elapsed())
                    ),
                )
                .await;
            }
        }
        if env.status == Status::Pending
            && let Some(run_id) = &env.run_id
        {
            env.message = format!(
                "No decision yet after {}: the edit of {} still waits for a person and nothing is written. Call await_review with run_id \"{run_id}\" to keep waiting; do not send the edit again.",
                elapsed_text(started.elapsed()),
                env.path
                    .clone()
                    .or_else(|| env.paths.as_ref().map(|p| p.join(", ")))
                    .unwrap_or_else(|| "the files".into()),
            );
        }
        env.add_notices(notices);
        env
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::review::journal::Journal;
    use crate::review::policy::Policy;
    use crate::review::proposal::Decision;
    use crate::workspace::Workspace;
    use crate::workspace::config::{Config, PolicyName};
    use serde_json::json;
    use std::future::Future;
    use std::pin::Pin;
    use std::sync::Mutex;

    struct Collect(Mutex<Vec<String>>);

    impl ProgressSink for Collect {
        fn progress<'a>(
            &'a self,
            _: f64,
            _: f64,
            message: String,
        ) -> Pin<Box<dyn Future<Output = ()> + Send + 'a>> {
            self.0.lock().unwrap().push(message);
            Box::pin(async {})
        }
    }

    fn dispatcher(dir: &tempfile::TempDir, policy: PolicyName, reviewers: Reviewers) -> Dispatcher {
        std::fs::create_dir_all(dir.path().join("work")).unwrap();
        let ws = Workspace::new(&dir.path().join("work"), Config::default()).unwrap();
        let journal = Journal::at(dir.path().join("journal.jsonl"), &ws.root);
        let gate = Gate::new(ws, Policy::simple(policy), journal, None);
        Dispatcher::new(gate, Duration::from_secs(600), reviewers, None)
    }

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[tokio::test]
    async fn a_review_nobody_can_decide_fails_with_reviewer_gone() {
        let dir = tempfile::tempdir().unwrap();
        let d = dispatcher(&dir, PolicyName::Gate, Reviewers::None);
        std::fs::write(dir.path().join("work/a.txt"), "one\n").unwrap();
        let env = d
            .run(
                ToolName::PatchFile,
                args(json!({"target_file": "a.txt", "search_content": "one", "replace_content": "two"})),
                None,
                CancellationToken::new(),
                &NoProgress,
            )
            .await;
        assert_eq!(env.code, Some(ErrorCode::ReviewerGone), "{env:?}");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("work/a.txt")).unwrap(),
            "one\n"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn waiting_reports_progress_and_ends_pending_after_the_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let d = dispatcher(&dir, PolicyName::Gate, Reviewers::Attachable);
        std::fs::write(dir.path().join("work/a.txt"), "one\n").unwrap();
        let sink = Collect(Mutex::new(Vec::new()));
        let env = d
            .run(
                ToolName::AwaitReview,
                args(json!({"run_id": "nosuchrun"})),
                None,
                CancellationToken::new(),
                &sink,
            )
            .await;
        assert_eq!(env.code, Some(ErrorCode::RunNotFound));
        let first = d
            .start_raw_local(
                ToolName::PatchFile,
                &args(json!({"target_file": "a.txt", "search_content": "one", "replace_content": "two"})),
                Caller::default(),
            )
            .await;
        assert_eq!(first.status, Status::Pending);
        let run_id = first.run_id.clone().unwrap();
        let env = d
            .run(
                ToolName::AwaitReview,
                args(json!({"run_id": run_id, "timeout_s": 35})),
                None,
                CancellationToken::new(),
                &sink,
            )
            .await;
        assert_eq!(env.status, Status::Pending);
        assert!(env.message.contains("await_review"), "{}", env.message);
        let messages = sink.0.lock().unwrap().clone();
        assert_eq!(messages.len(), 3, "{messages:?}");
        assert!(
            messages[0].starts_with("awaiting review of a.txt, 10s"),
            "{messages:?}"
        );
        // A decision ends the next wait.
        d.gate().decide(&run_id, Decision::Accept).unwrap();
        let env = d
            .run(
                ToolName::AwaitReview,
                args(json!({"run_id": run_id})),
                None,
                CancellationToken::new(),
                &sink,
            )
            .await;
        assert_eq!(env.status, Status::Ok);
        assert_eq!(env.review.unwrap().decision, "accept");
    }

    #[tokio::test]
    async fn cancelling_withdraws_the_review() {
        let dir = tempfile::tempdir().unwrap();
        let d = dispatcher(&dir, PolicyName::Gate, Reviewers::Attachable);
        std::fs::write(dir.path().join("work/a.txt"), "one\n").unwrap();
        let cancel = CancellationToken::new();
        let c2 = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            c2.cancel();
        });
        let env = d
            .run(
                ToolName::PatchFile,
                args(json!({"target_file": "a.txt", "search_content": "one", "replace_content": "two"})),
                None,
                cancel,
                &NoProgress,
            )
            .await;
        assert_eq!(env.status, Status::Error);
        let run_id = env.run_id.unwrap();
        assert_eq!(d.gate().get(&run_id).unwrap().state, State::Expired);
        assert!(d.gate().pending().is_empty());
    }
}
