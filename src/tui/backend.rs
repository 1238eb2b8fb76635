//! Where the TUI's reviews come from and its decisions go: the gate in this process, or a
//! gate elsewhere through the review API (`patchgate review --connect URL`). Both give the
//! same operations and the same stream of changes.

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::api::types::{
    DecisionBody, Files, Info, ReviewEvent, RewindBody, SessionBody, UndoBody,
};
use crate::review::proposal::{Decision, FileContent};
use crate::review::queue::{Event, Gate, Outcome, Summary};
use crate::review::rules::{NewRule, RuleAdded, RulesList};

/// A change the TUI hears about.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// A review arrived or changed: its summary.
    Upsert(Box<Summary>),
    /// Reload the whole list (events were missed, or the connection came back).
    Resync(Vec<Summary>),
    /// The connection to a remote gate failed (it is retried).
    Lost(String),
    /// The remote gate of this root restarted elsewhere: attached to it now (its URL).
    Moved(String),
    /// The remote gate refused the token (401/403): nothing more is tried; what to do.
    Refused(String),
}

impl Change {
    /// A review arrived or changed.
    pub fn upsert(summary: Summary) -> Change {
        Change::Upsert(Box::new(summary))
    }
}

/// What the status bar shows of the gate.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StatusInfo {
    /// The listen address (`127.0.0.1:8787`), or what the TUI is attached to.
    pub address: String,
    /// The default policy.
    pub policy: String,
    /// Clients heard from recently.
    pub clients: usize,
    /// The patch file under review (`patchgate apply`): no agents wait, there is no policy.
    pub patch: Option<String>,
}

/// Where a remote gate's review API is and the reviewer token it takes.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Endpoint {
    base: String,
    token: String,
}

/// Finds the gate of a root again after it went away (it restarted, perhaps on another
/// port): the base URL of its review API and its reviewer token, or `None` while there is
/// none. The app layer supplies it (it reads the gates' discovery entries); the TUI knows
/// nothing of how gates are found.
pub type Finder = Arc<dyn Fn(&Path) -> Option<(String, String)> + Send + Sync>;

/// A remote gate's review API.
#[derive(Clone)]
pub struct Remote {
    /// Where it is now (the gate may restart elsewhere: see [`Remote::follow`]).
    at: Arc<RwLock<Endpoint>>,
    http: reqwest::Client,
    /// The gate's root and how to find its gate again.
    follow: Option<(PathBuf, Finder)>,
}

/// Why a request to a remote gate failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RemoteError {
    /// The gate refused the token (401 or 403): the text says which token it needs.
    Refused(String),
    /// Anything else (unreachable, a timeout, an error answer).
    Failed(String),
}

impl std::fmt::Display for RemoteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RemoteError::Refused(t) | RemoteError::Failed(t) => f.write_str(t),
        }
    }
}

impl From<RemoteError> for String {
    fn from(e: RemoteError) -> String {
        e.to_string()
    }
}

/// What to say when the gate at `base` answers `status` (401 or 403) to the token: the TUI
/// needs the gate's reviewer token (the agents' token opens only the agent routes).
fn refused_text(base: &str, status: reqwest::StatusCode) -> String {
    let which = if status == reqwest::StatusCode::FORBIDDEN {
        "that is the agents' token, and reviewing needs this gate's REVIEW token"
    } else {
        "reviewing needs this gate's REVIEW token (a new one at every start of the gate)"
    };
    format!(
        "{base} refused the token ({status}): {which}. It is `review_token` in the gate's \
         discovery file (gates/*.json in the state directory of the machine the gate runs on; \
         here {}); `patchgate review --connect URL` without --token reads it when the gate \
         runs on this machine",
        crate::workspace::state::state_dir().display()
    )
}

/// Whether `status` says the token is not good enough.
fn is_refusal(status: reqwest::StatusCode) -> bool {
    status == reqwest::StatusCode::UNAUTHORIZED || status == reqwest::StatusCode::FORBIDDEN
}

/// Writes the `.rej` files of the patch under review (the app layer knows the patch): what
/// to tell the person, or why nothing was written.
pub type RejectWriter = Arc<
    dyn Fn() -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<String, String>> + Send>>
        + Send
        + Sync,
>;

/// A patch file under review (`patchgate apply`): no agent waits for its reviews.
#[derive(Clone)]
pub struct PatchFile {
    /// Its name, for the status bar.
    pub name: String,
    /// What the `W` key runs: its hunks that do not apply written to `FILE.rej` files.
    pub write_rejects: RejectWriter,
}

/// Counts the agents a gate's server heard from lately.
pub(crate) type ClientCount = std::sync::Arc<dyn Fn() -> usize + Send + Sync>;

/// The source of reviews.
#[derive(Clone)]
pub enum Backend {
    /// The gate in this process.
    Local {
        /// The gate (it holds the queue).
        gate: Gate,
        /// How many agents were heard from lately (the server that serves them counts).
        clients: ClientCount,
        /// Where agents reach it, if it listens.
        address: Option<String>,
        /// The patch file under review (`patchgate apply`), when that is what it holds.
        patch: Option<PatchFile>,
    },
    /// A gate reached over HTTP.
    Remote(Remote),
}

fn describe(o: &Outcome) -> Result<String, String> {
    match o {
        Outcome::Applied(s) => Ok(format!("applied {} ({})", s.run_id, s.paths.join(", "))),
        Outcome::Rejected(s) => Ok(format!("rejected {}", s.run_id)),
        Outcome::Pending(s) => Ok(format!("{} now waits for a decision", s.run_id)),
        Outcome::DryRun(s) => Ok(format!("{} is a dry-run", s.run_id)),
        Outcome::Failed(_, e) => Err(format!("{}: {}", e.code, e.message)),
    }
}

/// "rule added: `src/**` auto (your config FILE) · decided: abc123 applied".
fn rule_added_text(added: &RuleAdded) -> String {
    let r = &added.rule;
    let kept = match &added.config {
        Some(file) => format!("in your config {}", file.display()),
        None => "for this session".to_string(),
    };
    let mut text = format!(
        "rule added: `{}` {} {kept}",
        crate::inert::inert_line(&r.glob),
        r.action.as_str()
    );
    if !added.decided.is_empty() {
        let runs: Vec<String> = added
            .decided
            .iter()
            .map(|d| format!("{} {}", d.run_id, d.state))
            .collect();
        text.push_str(&format!(" · decided: {}", runs.join(", ")));
    }
    text
}

fn envelope_text(v: &Value) -> Result<String, String> {
    match v["status"].as_str() {
        Some("error") | None => Err(format!(
            "{}: {}",
            v["code"].as_str().unwrap_or("ERROR"),
            v["message"].as_str().unwrap_or("the gate refused")
        )),
        Some(status) => Ok(format!(
            "{} {}",
            match status {
                "ok" => "applied",
                other => other,
            },
            v["run_id"].as_str().unwrap_or("")
        )),
    }
}

impl Remote {
    /// A client of the gate at `base` (`http://127.0.0.1:8787`) with `token`.
    pub fn new(base: &str, token: &str) -> Result<Remote, String> {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(5))
            .build()
            .map_err(|e| e.to_string())?;
        Ok(Remote {
            at: Arc::new(RwLock::new(Endpoint {
                base: base_of(base),
                token: token.to_string(),
            })),
            http,
            follow: None,
        })
    }

    /// Follow the gate of `root` when it goes away: `find` looks its gate up again, and the
    /// TUI attaches to the one it finds (a restart on another port, with a new token).
    #[must_use]
    pub fn follow(mut self, root: PathBuf, find: Finder) -> Remote {
        self.follow = Some((root, find));
        self
    }

    /// Where the gate is now.
    fn endpoint(&self) -> Endpoint {
        self.at
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// The base URL of the gate's review API now.
    pub fn base(&self) -> String {
        self.endpoint().base
    }

    /// Look the gate of the followed root up again; when it is elsewhere now (another URL
    /// or token), attach to it and return its URL.
    fn find_again(&self) -> Option<String> {
        let (root, find) = self.follow.as_ref()?;
        let (base, token) = find(root)?;
        let found = Endpoint {
            base: base_of(&base),
            token,
        };
        let mut at = self
            .at
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if *at == found || found.token.is_empty() {
            return None;
        }
        *at = found;
        Some(at.base.clone())
    }

    async fn get(&self, path: &str) -> Result<Value, String> {
        Ok(self.get_checked(path).await?)
    }

    /// A GET whose refusal of the token is told apart.
    async fn get_checked(&self, path: &str) -> Result<Value, RemoteError> {
        let at = self.endpoint();
        let resp = self
            .http
            .get(format!("{}{path}", at.base))
            .bearer_auth(&at.token)
            .timeout(Duration::from_secs(30))
            .send()
            .await
            .map_err(|e| RemoteError::Failed(format!("{}: {e}", at.base)))?;
        let status = resp.status();
        if is_refusal(status) {
            return Err(RemoteError::Refused(refused_text(&at.base, status)));
        }
        let v: Value = resp
            .json()
            .await
            .map_err(|e| RemoteError::Failed(e.to_string()))?;
        if !status.is_success() {
            return Err(RemoteError::Failed(format!(
                "{status}: {}",
                v["message"].as_str().unwrap_or("refused")
            )));
        }
        Ok(v)
    }

    async fn post(&self, path: &str, body: Value) -> Result<Value, String> {
        let at = self.endpoint();
        let resp = self
            .http
            .post(format!("{}{path}", at.base))
            .bearer_auth(&at.token)
            .timeout(Duration::from_secs(60))
            .json(&body)
            .send()
            .await
            .map_err(|e| format!("{}: {e}", at.base))?;
        let status = resp.status();
        if is_refusal(status) {
            return Err(refused_text(&at.base, status));
        }
        let v: Value = resp.json().await.map_err(|e| e.to_string())?;
        if !status.is_success() {
            return Err(format!(
                "{}: {}",
                v["code"].as_str().unwrap_or(status.as_str()),
                v["message"].as_str().unwrap_or("refused")
            ));
        }
        Ok(v)
    }

    /// Check the connection and read the gate's description.
    pub async fn info(&self) -> Result<StatusInfo, String> {
        let info: Info =
            serde_json::from_value(self.get("/api/info").await?).map_err(|e| e.to_string())?;
        Ok(self.status_of(info))
    }

    fn status_of(&self, info: Info) -> StatusInfo {
        StatusInfo {
            address: self
                .base()
                .trim_start_matches("http://")
                .trim_start_matches("https://")
                .to_string(),
            policy: info.policy,
            clients: info.clients,
            patch: None,
        }
    }

    /// Attach: read the gate's description, and check that the token is its reviewer
    /// token (the agents' token reads the description too, but may not list or decide).
    pub async fn connect(&self) -> Result<Info, RemoteError> {
        let info: Info = serde_json::from_value(self.get_checked("/api/info").await?)
            .map_err(|e| RemoteError::Failed(e.to_string()))?;
        self.get_checked("/api/reviews").await?;
        Ok(info)
    }
}

/// The base URL of a gate's review API given its URL or its MCP endpoint.
fn base_of(url: &str) -> String {
    let base = url.trim_end_matches('/');
    base.strip_suffix("/mcp").unwrap_or(base).to_string()
}

impl Backend {
    /// The gate in this process; `clients` counts the agents its server heard lately.
    pub fn local(gate: Gate, clients: ClientCount, address: Option<String>) -> Backend {
        Backend::Local {
            gate,
            clients,
            address,
            patch: None,
        }
    }

    /// The gate in this process holding one review per file of `patch` (`patchgate
    /// apply`): no server, no agents.
    pub fn patch(gate: Gate, patch: PatchFile) -> Backend {
        Backend::Local {
            gate,
            clients: std::sync::Arc::new(|| 0),
            address: None,
            patch: Some(patch),
        }
    }

    /// Write the `.rej` files of the patch under review (`W`): what to say, or why not.
    pub async fn write_rejects(&self) -> Result<String, String> {
        match self {
            Backend::Local { patch: Some(p), .. } => (p.write_rejects)().await,
            _ => {
                Err("only a patch under review (`patchgate apply`) has .rej files to write".into())
            }
        }
    }

    /// Whether agents wait for this TUI's decisions (not when it reviews a patch file).
    pub fn answers_agents(&self) -> bool {
        !matches!(self, Backend::Local { patch: Some(_), .. })
    }

    /// The local gate, if this is one.
    pub fn gate(&self) -> Option<&Gate> {
        match self {
            Backend::Local { gate, .. } => Some(gate),
            Backend::Remote(_) => None,
        }
    }

    /// The status bar's facts.
    pub async fn info(&self) -> Result<StatusInfo, String> {
        match self {
            Backend::Local {
                gate,
                clients,
                address,
                patch,
            } => Ok(StatusInfo {
                address: address.clone().unwrap_or_else(|| "not listening".into()),
                patch: patch.as_ref().map(|p| p.name.clone()),
                policy: gate.policy().default.as_str().to_string(),
                clients: clients(),
            }),
            Backend::Remote(r) => r.info().await,
        }
    }

    /// Every review the gate remembers.
    pub async fn list(&self) -> Result<Vec<Summary>, String> {
        match self {
            Backend::Local { gate, .. } => Ok(gate.list()),
            Backend::Remote(r) => {
                serde_json::from_value(r.get("/api/reviews").await?).map_err(|e| e.to_string())
            }
        }
    }

    /// Both versions of every file of a review.
    pub async fn files(&self, run_id: &str) -> Result<Vec<FileContent>, String> {
        match self {
            Backend::Local { gate, .. } => gate
                .get(run_id)
                .map(|p| p.contents())
                .ok_or_else(|| format!("no review {run_id}")),
            Backend::Remote(r) => {
                let v = r.get(&format!("/api/reviews/{run_id}/files")).await?;
                let files: Files = serde_json::from_value(v).map_err(|e| e.to_string())?;
                Ok(files.files)
            }
        }
    }

    /// Decide a review; the text describes the result for the status line.
    pub async fn decide(
        &self,
        run_id: &str,
        decision: Decision,
        note: Option<String>,
    ) -> Result<String, String> {
        match self {
            Backend::Local { gate, .. } => {
                let gate = gate.clone();
                let id = run_id.to_string();
                tokio::task::spawn_blocking(move || {
                    gate.decide_with_note(&id, decision, note.as_deref())
                })
                .await
                .map_err(|e| e.to_string())?
                .map_err(|e| format!("{}: {}", e.code, e.message))
                .and_then(|o| describe(&o))
            }
            Backend::Remote(r) => {
                let body = serde_json::to_value(DecisionBody::of(&decision, note.as_deref()))
                    .map_err(|e| e.to_string())?;
                let v = r
                    .post(&format!("/api/reviews/{run_id}/decision"), body)
                    .await?;
                envelope_text(&v)
            }
        }
    }

    /// A person commits a dry-run.
    pub async fn commit(&self, run_id: &str) -> Result<String, String> {
        match self {
            Backend::Local { gate, .. } => {
                let gate = gate.clone();
                let id = run_id.to_string();
                tokio::task::spawn_blocking(move || gate.commit(&id, true))
                    .await
                    .map_err(|e| e.to_string())?
                    .map_err(|e| format!("{}: {}", e.code, e.message))
                    .and_then(|o| describe(&o))
            }
            Backend::Remote(r) => {
                let v = r
                    .post(&format!("/api/reviews/{run_id}/commit"), json!({}))
                    .await?;
                envelope_text(&v)
            }
        }
    }

    /// Undo an applied edit (`run_id`, or the latest): the run undone and what to say.
    pub async fn undo(&self, run_id: Option<String>) -> Result<(String, String), String> {
        let (run_id, files) = match self {
            Backend::Local { gate, .. } => {
                let gate = gate.clone();
                let entry = tokio::task::spawn_blocking(move || gate.undo(run_id.as_deref()))
                    .await
                    .map_err(|e| e.to_string())?
                    .map_err(|e| format!("{}: {}", e.code, e.message))?;
                (
                    entry.run_id,
                    entry.files.into_iter().map(|f| f.path).collect::<Vec<_>>(),
                )
            }
            Backend::Remote(r) => {
                let body = serde_json::to_value(UndoBody { run_id }).map_err(|e| e.to_string())?;
                let v = r.post("/api/undo", body).await?;
                (
                    v["run_id"].as_str().unwrap_or("").to_string(),
                    v["files"]
                        .as_array()
                        .map(|a| {
                            a.iter()
                                .filter_map(|f| f["path"].as_str().map(str::to_string))
                                .collect()
                        })
                        .unwrap_or_default(),
                )
            }
        };
        let text = format!("undid {run_id}: restored {}", files.join(", "));
        Ok((run_id, text))
    }

    /// Take back `run_id` and every later applied run (all or nothing): what to say. The
    /// rows follow through the gate's events.
    pub async fn rewind(&self, run_id: String) -> Result<String, String> {
        let runs: Vec<String> = match self {
            Backend::Local { gate, .. } => {
                let gate = gate.clone();
                tokio::task::spawn_blocking(move || gate.rewind(&run_id))
                    .await
                    .map_err(|e| e.to_string())?
                    .map_err(|e| format!("{}: {}", e.code, e.message))?
                    .into_iter()
                    .map(|e| e.run_id)
                    .collect()
            }
            Backend::Remote(r) => {
                let body =
                    serde_json::to_value(RewindBody { run_id }).map_err(|e| e.to_string())?;
                let v = r.post("/api/rewind", body).await?;
                v.as_array()
                    .map(|a| {
                        a.iter()
                            .filter_map(|e| e["run_id"].as_str().map(str::to_string))
                            .collect()
                    })
                    .unwrap_or_default()
            }
        };
        Ok(format!("rewound: undid {}", runs.join(", ")))
    }

    /// The session's diff from `since` on (every applied run when `None`), its notes (where
    /// a run met a hand edit) above it.
    pub async fn session_diff(&self, since: Option<String>) -> Result<String, String> {
        let (diff, notes) = match self {
            Backend::Local { gate, .. } => {
                let gate = gate.clone();
                tokio::task::spawn_blocking(move || gate.session_diff(since.as_deref()))
                    .await
                    .map_err(|e| e.to_string())?
                    .map_err(|e| format!("{}: {}", e.code, e.message))?
            }
            Backend::Remote(r) => {
                let body =
                    serde_json::to_value(SessionBody { since }).map_err(|e| e.to_string())?;
                let v = r.post("/api/session", body).await?;
                let notes = v["notes"]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .filter_map(|n| n.as_str().map(str::to_string))
                            .collect()
                    })
                    .unwrap_or_default();
                (v["diff"].as_str().unwrap_or_default().to_string(), notes)
            }
        };
        let mut text: String = notes.iter().map(|n| format!("note: {n}\n")).collect();
        text.push_str(&diff);
        Ok(text)
    }

    /// Add a path rule (docs/DESIGN.md §4, `POST /api/rules`): what to say — the rule, where
    /// it is kept, the pending reviews it decided.
    pub async fn add_rule(&self, rule: NewRule) -> Result<String, String> {
        let added: RuleAdded = match self {
            Backend::Local { gate, .. } => {
                let gate = gate.clone();
                tokio::task::spawn_blocking(move || gate.add_rule(&rule))
                    .await
                    .map_err(|e| e.to_string())?
                    .map_err(|e| format!("{}: {}", e.code, e.message))?
            }
            Backend::Remote(r) => {
                let body = serde_json::to_value(&rule).map_err(|e| e.to_string())?;
                serde_json::from_value(r.post("/api/rules", body).await?)
                    .map_err(|e| e.to_string())?
            }
        };
        Ok(rule_added_text(&added))
    }

    /// Every rule with where it comes from (`GET /api/rules`), as lines to read.
    pub async fn rules(&self) -> Result<String, String> {
        let list: RulesList = match self {
            Backend::Local { gate, .. } => gate.rules_list(),
            Backend::Remote(r) => {
                serde_json::from_value(r.get("/api/rules").await?).map_err(|e| e.to_string())?
            }
        };
        Ok(list.text())
    }

    /// Start listening for changes; they arrive on the returned channel.
    pub(crate) fn watch(&self) -> mpsc::UnboundedReceiver<Change> {
        let (tx, rx) = mpsc::unbounded_channel();
        match self.clone() {
            Backend::Local { gate, .. } => {
                let gate = gate.clone();
                let mut events = gate.subscribe();
                tokio::spawn(async move {
                    loop {
                        let change = match events.recv().await {
                            Ok(Event::New(id) | Event::Updated(id) | Event::Decided(id)) => {
                                match gate.get(&id) {
                                    Some(p) => Change::upsert(Summary::of(&p)),
                                    None => continue,
                                }
                            }
                            Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                                Change::Resync(gate.list())
                            }
                            Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
                        };
                        if tx.send(change).is_err() {
                            break;
                        }
                    }
                });
            }
            Backend::Remote(r) => {
                tokio::spawn(async move { remote_events(r, tx).await });
            }
        }
        rx
    }
}

/// One server-sent event: its name, data and id.
#[derive(Debug, Clone, PartialEq, Eq)]
struct SseEvent {
    name: String,
    data: String,
    id: Option<String>,
}

/// The events of an SSE byte stream (parsed by `sse-stream`: lines, fields and UTF-8 split
/// across chunks are its job); the stream ends at the first error.
fn sse_events<S, E>(bytes: S) -> impl futures_util::Stream<Item = SseEvent>
where
    S: futures_util::Stream<Item = Result<bytes::Bytes, E>>,
    E: std::error::Error + Send + Sync + 'static,
{
    use futures_util::StreamExt;
    sse_stream::SseStream::from_bytes_stream(bytes)
        .take_while(|r| std::future::ready(r.is_ok()))
        .filter_map(|r| {
            std::future::ready(r.ok().map(|sse| SseEvent {
                name: sse.event.unwrap_or_default(),
                data: sse.data.unwrap_or_default(),
                id: sse.id,
            }))
        })
}

/// Follow a remote gate's event stream, reconnecting after a failure (from the last event
/// seen: the gate replays what came after it). A gate that went away is looked up again
/// (see [`Remote::follow`]): one restarted elsewhere is followed there. A refused token
/// ends it: retrying would not help.
async fn remote_events(r: Remote, tx: mpsc::UnboundedSender<Change>) {
    /// Refusals in a row a followed gate gets to write its new discovery entry (a gate
    /// restarted on the same address answers before its entry names its new token).
    const PATIENCE: u32 = 5;
    let mut last_id: Option<String> = None;
    let mut refusals = 0;
    loop {
        let at = r.endpoint();
        let mut req = r
            .http
            .get(format!("{}/api/events", at.base))
            .bearer_auth(&at.token);
        if let Some(id) = &last_id {
            req = req.header("Last-Event-ID", id);
        }
        // What went wrong and how long to wait, or the status that refused the token.
        let failed: Result<(String, u64), reqwest::StatusCode> = match req.send().await {
            Ok(resp) if resp.status().is_success() => {
                refusals = 0;
                if !follow_events(&r, resp, &mut last_id, &tx).await {
                    return;
                }
                Ok((format!("{}: the event stream ended", at.base), 1))
            }
            Ok(resp) if is_refusal(resp.status()) => Err(resp.status()),
            Ok(resp) => Ok((format!("events: {}", resp.status()), 2)),
            Err(e) => Ok((format!("{}: {e}", at.base), 2)),
        };
        // The gate may have restarted elsewhere, or here with a new reviewer token.
        if let Some(url) = r.find_again() {
            // Another gate numbers its events anew.
            last_id = None;
            if tx.send(Change::Moved(url)).is_err() {
                return;
            }
            continue;
        }
        match failed {
            Ok((lost, pause)) => {
                if tx.send(Change::Lost(lost)).is_err() {
                    return;
                }
                tokio::time::sleep(Duration::from_secs(pause)).await;
            }
            Err(status) if r.follow.is_some() && refusals < PATIENCE => {
                refusals += 1;
                let lost = format!("{}: {status} (is the gate restarting?)", at.base);
                if tx.send(Change::Lost(lost)).is_err() {
                    return;
                }
                tokio::time::sleep(Duration::from_secs(2)).await;
            }
            // Retrying with the same token cannot help.
            Err(status) => {
                let _ = tx.send(Change::Refused(refused_text(&at.base, status)));
                return;
            }
        }
    }
}

/// Pass on the changes of one event stream until it ends; `false` when the TUI is gone.
async fn follow_events(
    r: &Remote,
    resp: reqwest::Response,
    last_id: &mut Option<String>,
    tx: &mpsc::UnboundedSender<Change>,
) -> bool {
    use futures_util::StreamExt;
    let events = sse_events(resp.bytes_stream());
    futures_util::pin_mut!(events);
    while let Some(ev) = events.next().await {
        if ev.id.is_some() {
            last_id.clone_from(&ev.id);
        }
        let change = match ev.name.as_str() {
            "ready" | "resync" => match Backend::Remote(r.clone()).list().await {
                Ok(list) => Change::Resync(list),
                Err(e) => Change::Lost(e),
            },
            "new" | "updated" | "decided" => match serde_json::from_str::<ReviewEvent>(&ev.data) {
                Ok(ReviewEvent {
                    review: Some(s), ..
                }) => Change::upsert(s),
                _ => continue,
            },
            _ => continue,
        };
        if tx.send(change).is_err() {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn events_keep_a_character_split_across_chunks_whole() {
        use futures_util::StreamExt;
        // `é` is two bytes; the chunk boundary falls between them.
        let text = "event: new\ndata: {\"note\": \"caf\u{e9}\"}\nid: 7\n\n"
            .as_bytes()
            .to_vec();
        let cut = text.iter().position(|&b| b == 0xC3).unwrap() + 1;
        let chunks: Vec<Result<bytes::Bytes, std::io::Error>> = vec![
            Ok(bytes::Bytes::copy_from_slice(&text[..cut])),
            Ok(bytes::Bytes::copy_from_slice(&text[cut..])),
        ];
        let events: Vec<SseEvent> = sse_events(futures_util::stream::iter(chunks))
            .collect()
            .await;
        assert_eq!(
            events,
            vec![SseEvent {
                name: "new".into(),
                data: "{\"note\": \"caf\u{e9}\"}".into(),
                id: Some("7".into()),
            }]
        );
    }

    /// A server that answers every request with `status` and `body`, and counts them.
    async fn answering(
        status: &'static str,
        body: &'static str,
    ) -> (String, Arc<std::sync::atomic::AtomicUsize>) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let hits = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let count = hits.clone();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let mut head = Vec::new();
                let mut buf = [0u8; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let reply = format!(
                    "HTTP/1.1 {status}\r\nContent-Type: application/json\r\n\
                     Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(reply.as_bytes()).await;
            }
        });
        (url, hits)
    }

    #[tokio::test]
    async fn a_refused_token_ends_the_event_stream_instead_of_retrying() {
        let (url, hits) = answering(
            "403 Forbidden",
            r#"{"code":"FORBIDDEN","message":"the agents' token cannot review"}"#,
        )
        .await;
        let remote = Remote::new(&url, "the-agents-token").unwrap();
        assert!(matches!(
            remote.connect().await,
            Err(RemoteError::Refused(t)) if t.contains("REVIEW token")
        ));
        let mut changes = Backend::Remote(remote).watch();
        let first = tokio::time::timeout(Duration::from_secs(10), changes.recv())
            .await
            .expect("a change");
        match first {
            Some(Change::Refused(text)) => {
                assert!(text.contains("403"), "{text}");
                assert!(text.contains("`review_token`"), "{text}");
            }
            other => panic!("want Refused, got {other:?}"),
        }
        // Nothing follows: the follower stopped (the channel closed) without asking again.
        let next = tokio::time::timeout(Duration::from_secs(10), changes.recv())
            .await
            .expect("the channel closes");
        assert_eq!(next, None);
        // One for `connect` (refused at `/api/info`), one for the events.
        assert_eq!(hits.load(std::sync::atomic::Ordering::SeqCst), 2);
    }
}
