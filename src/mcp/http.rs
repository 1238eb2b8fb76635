//! The HTTP side of a gate (docs/DESIGN.md §1, §7): the MCP Streamable-HTTP endpoint at `/mcp` and the
//! review API under `/api`, behind one guard: the `Host` and `Origin` headers must be loopback
//! (or an allowed host) — DNS-rebinding protection — and every request carries a bearer
//! token: the agents' token opens `/mcp` and the agent routes (tool calls, waiting on and
//! withdrawing a review, info), the reviewers' token every route; an agent cannot decide.
//! Bodies are size-capped; one refused as busy (503) is read and discarded first, so that the
//! client reads the answer. The review API is what TUIs, scripts and forwarding stdio
//! servers use; nothing bypasses the gate.
//!
//! | route | what |
//! | --- | --- |
//! | `GET /api/info` | root, policy, review timeout, version, added deny globs |
//! | `GET /api/reviews` | every proposal the gate remembers (JSON list) |
//! | `GET /api/reviews/{run_id}` | one proposal |
//! | `GET /api/reviews/{run_id}/files` | both versions of each of its files |
//! | `GET /api/events` | SSE: `new`, `updated`, `decided` with the proposal |
//! | `POST /api/reviews/{run_id}/decision` | `{decision: accept\|reject, hunks?, skip_lines?, content?, note?}` |
//! | `POST /api/reviews/{run_id}/commit` | a person commits a dry-run |
//! | `POST /api/reviews/{run_id}/wait` | `{timeout_s}`: wait for a decision (envelope) |
//! | `POST /api/reviews/{run_id}/withdraw` | the agent gave up waiting |
//! | `POST /api/tools/{tool}` | `{arguments, client, agent?}`: start a tool call (envelope, no wait) |
//! | `GET /api/agents/link` | SSE held by a forwarding stdio server: `link` `{id}` first; when it ends, the agent's pending reviews are withdrawn |
//! | `POST /api/undo` | `{run_id?}`: revert an applied edit |
//! | `POST /api/session` | `{since?}`: `{diff, notes}`, one diff of what the applied runs changed (`log --diff`) |
//! | `POST /api/rewind` | `{run_id}`: revert that run and every later one, all or nothing (the `undone` entries, newest first) |
//! | `GET /api/rules` | `{policy, config, rules}`: every path rule with its `source` (`built-in`, `user`, `repository`, `session`) |
//! | `POST /api/rules` | `{glob, action: auto\|gate\|deny, scope: session\|user}`: add a rule; the pending reviews it names are decided again |

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Json;
use axum::Router;
use axum::extract::{DefaultBodyLimit, Path, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::{Value, json};
use tokio_stream::StreamExt;
use tokio_stream::wrappers::BroadcastStream;
use tokio_util::sync::CancellationToken;

use super::args::ToolName;
use super::hangup::{Hangup, hangup_body};
use super::server::McpServer;
use super::service::{Dispatcher, MAX_AWAIT};
use crate::api::types::{
    AgentLinkEvent, DecisionBody, Files, Info, ReviewEvent, RewindBody, SessionBody, ToolCallBody,
    UndoBody, WaitBody,
};
use crate::error::{Error, ErrorCode};
use crate::review::queue::{Event, Gate, Outcome};

/// How a listening gate is set up.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Where to listen (port 0: any free port).
    pub addr: SocketAddr,
    /// The agents' bearer token for `/mcp` and the agent routes of `/api` (tool calls, waits,
    /// withdrawals, info); `None`: those need no token (loopback only, `--no-token`).
    pub token: Option<String>,
    /// The reviewers' token: every route, and the only one for deciding, committing,
    /// listing, events and undo. An agent cannot approve its own edit.
    pub review_token: String,
    /// Host names accepted besides the loopback ones (for a non-loopback bind).
    pub extra_hosts: Vec<String>,
    /// The largest request body.
    pub max_body: usize,
    /// How long an idle MCP session is kept.
    pub session_keep_alive: Duration,
    /// Connections at most (the one idle longest makes room at the cap), and the deadlines
    /// for a request's head and for its body.
    pub limits: super::serve::Limits,
}

/// A gate's HTTP server, running.
pub struct Running {
    /// The bound address.
    pub addr: SocketAddr,
    /// The base URL (`http://127.0.0.1:PORT`).
    pub url: String,
    shutdown: CancellationToken,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Running {
    /// The MCP endpoint.
    pub fn mcp_url(&self) -> String {
        format!("{}/mcp", self.url)
    }

    /// Stop accepting, end the sessions, and wait for the server task.
    pub async fn shutdown(self) {
        self.shutdown.cancel();
        let _ = tokio::time::timeout(Duration::from_secs(5), self.task).await;
    }
}

#[derive(Clone)]
struct AppState {
    dispatcher: Dispatcher,
    token: Option<Arc<str>>,
    review_token: Arc<str>,
    hosts: Arc<Vec<String>>,
    reviewers: Arc<AtomicUsize>,
    info: Arc<Info>,
    /// The gate's events, numbered, for replay after `Last-Event-ID`.
    events: super::events::EventLog,
    /// The MCP sessions, and how many may be open at once.
    sessions: Arc<LocalSessionManager>,
    max_sessions: usize,
    /// The largest request body read.
    max_body: usize,
    /// The bytes of requests being handled at once.
    in_flight: super::inflight::InFlight,
}

/// The loopback host names.
const LOOPBACK: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// The host part of a `Host` header or an origin's authority (`[::1]:8080` → `::1`).
fn host_part(authority: &str) -> &str {
    let a = authority.trim();
    if let Some(rest) = a.strip_prefix('[') {
        return rest.split(']').next().unwrap_or("");
    }
    match a.rsplit_once(':') {
        Some((h, port)) if port.chars().all(|c| c.is_ascii_digit()) => h,
        _ => a,
    }
}

fn eq_constant_time(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn refuse(status: StatusCode, message: &str) -> Response {
    (
        status,
        Json(json!({"code": status.as_u16(), "message": message})),
    )
        .into_response()
}

/// The guard in front of every route: Host, Origin, then the bearer token.
async fn guard(State(st): State<AppState>, mut req: Request, next: Next) -> Response {
    let headers = req.headers();
    // Two Host headers could pass the check with one and route by the other.
    if headers.get_all(header::HOST).iter().count() > 1 {
        return refuse(
            StatusCode::BAD_REQUEST,
            "a request carries exactly one Host header",
        );
    }
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .map(host_part)
        .map(str::to_ascii_lowercase);
    let allowed = |h: &str| st.hosts.iter().any(|a| a.eq_ignore_ascii_case(h));
    match host {
        Some(h) if allowed(&h) => {}
        _ => {
            return refuse(
                StatusCode::FORBIDDEN,
                "the Host header is not one this server answers to",
            );
        }
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let ok = origin
            .to_str()
            .ok()
            .and_then(|o| o.split_once("://"))
            .filter(|(scheme, _)| *scheme == "http" || *scheme == "https")
            .map(|(_, rest)| host_part(rest.split('/').next().unwrap_or("")).to_ascii_lowercase())
            .is_some_and(|h| allowed(&h));
        if !ok {
            return refuse(StatusCode::FORBIDDEN, "cross-origin requests are refused");
        }
    }
    if let Some(refusal) = authorize(&st, req.headers(), req.uri().path()) {
        return refusal;
    }
    // A body declared larger than the cap is refused before any of it is read.
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > st.max_body as u64) {
        return (
            StatusCode::PAYLOAD_TOO_LARGE,
            Json(json!({
                "code": "FILE_TOO_LARGE",
                "message": format!(
                    "the request body is larger than this server reads ({} bytes)",
                    st.max_body
                ),
            })),
        )
            .into_response();
    }
    let share = match in_flight_share(&st, &mut req, declared).await {
        Ok(share) => share,
        Err(()) => return busy(req.into_body(), st.max_body).await,
    };
    let delete = req.method() == axum::http::Method::DELETE;
    let mut req = match json_rpc_body(req, &st).await {
        Ok(req) => req,
        Err(resp) => return resp,
    };
    // An MCP request whose connection closes before its answer ended was hung up on.
    let hangup = (req.uri().path() == "/mcp").then(Hangup::default);
    if let Some(h) = &hangup {
        req.extensions_mut().insert(h.clone());
    }
    let mut resp = next.run(req).await;
    drop(share);
    if let Some(h) = &hangup {
        resp = resp.map(|b| axum::body::Body::new(hangup_body(b, h)));
    }
    // A closed MCP session: rmcp answers 202, clients expect 200 or 204.
    if delete && resp.status() == StatusCode::ACCEPTED {
        *resp.status_mut() = StatusCode::NO_CONTENT;
        *resp.body_mut() = axum::body::Body::empty();
    }
    resp
}

/// The bearer token check (`Some`: the refusal): the reviewers' token opens every route, the
/// agents' token (or none, with `--no-token`) the agent routes only.
fn authorize(st: &AppState, headers: &HeaderMap, path: &str) -> Option<Response> {
    let presented = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            v.strip_prefix("Bearer ")
                .or_else(|| v.strip_prefix("bearer "))
        })
        .map(str::trim);
    let agent_route = is_agent_route(path);
    let reviewer =
        presented.is_some_and(|t| eq_constant_time(t.as_bytes(), st.review_token.as_bytes()));
    let agent = match (&st.token, presented) {
        (Some(tok), Some(t)) => eq_constant_time(t.as_bytes(), tok.as_bytes()),
        (None, _) => true,
        (Some(_), None) => false,
    };
    if reviewer || (agent && agent_route) {
        return None;
    }
    if agent && presented.is_some() {
        return Some(refuse(
            StatusCode::FORBIDDEN,
            "the agents' token cannot review: deciding, committing, listing and undoing need the reviewer token",
        ));
    }
    let mut r = refuse(
        StatusCode::UNAUTHORIZED,
        "a bearer token is required (Authorization: Bearer TOKEN; see reviewer.json in the state directory)",
    );
    r.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static("Bearer realm=\"patchgate\""),
    );
    Some(r)
}

/// The request's share of the in-flight budget, taken before any of its body is read (and
/// given back when the answer starts; an MCP tool call gives back its clone sooner), put in
/// its extensions; `None` for a body that takes nothing, `Err` when others held the bytes
/// past the wait. The wait is not counted in the body's deadline: the client could send no
/// faster than the gate read.
async fn in_flight_share(
    st: &AppState,
    req: &mut Request,
    declared: Option<u64>,
) -> Result<Option<super::inflight::Share>, ()> {
    let n = body_bytes(req.headers(), declared, st.max_body);
    if n == 0 {
        return Ok(None);
    }
    let asked = tokio::time::Instant::now();
    let share = st.in_flight.take(n).await;
    if let Some(clock) = req.extensions().get::<super::deadline_body::BodyClock>() {
        clock.postpone(asked.elapsed());
    }
    let share = share.ok_or(())?;
    req.extensions_mut().insert(share.clone());
    Ok(Some(share))
}

/// The bytes a request's body counts in the in-flight budget: its declared length, the body
/// cap when it is sent in chunks of unknown length, none when it has no body or a small one.
fn body_bytes(headers: &HeaderMap, declared: Option<u64>, max_body: usize) -> usize {
    match declared {
        // Small bodies are free: the reviewer's decisions, waits and most tool calls never
        // queue behind large edits (512 connections × 64 KiB is the budget again, at most).
        Some(n) if n < super::inflight::SMALL_BODY_BYTES as u64 => 0,
        Some(n) => usize::try_from(n).unwrap_or(max_body).min(max_body),
        None if headers.contains_key(header::TRANSFER_ENCODING) => max_body,
        None => 0,
    }
}

/// The answer to a request that waited too long for its bytes in flight: 503 with
/// `Retry-After`, once its body is read and discarded ([`discard`]), on a connection then
/// closed (`Connection: close`; the client comes back after `Retry-After` anyway).
async fn busy(body: axum::body::Body, max_body: usize) -> Response {
    if discard(body, max_body).await == Drained::Cut {
        tracing::debug!("busy: a body not read whole before the 503; the connection closes");
    }
    let mut r = refuse(
        StatusCode::SERVICE_UNAVAILABLE,
        "the gate is handling as many large requests as it holds at once; retry shortly",
    );
    r.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    r.headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    r
}

/// How far [`discard`] read a body.
#[derive(Debug, PartialEq, Eq)]
enum Drained {
    /// To its end: the client has sent everything and reads the answer.
    Whole,
    /// Not to its end: it failed (its deadline passed, the client went) or ran past the cap.
    Cut,
}

/// Read a body the gate will not handle to its end, keeping none of it, so that a client
/// still sending it reads the answer instead of a reset (a socket closed with data unread
/// is reset, and a client that writes its whole request before it reads sees a broken
/// pipe). Bounded in bytes by `cap` (a body declaring more was refused before this; one sent
/// in chunks stops here) and in time by the body's deadline (`serve.rs`, from the head), so
/// trickling it holds the connection no longer than a body the gate takes.
async fn discard(body: axum::body::Body, cap: usize) -> Drained {
    let mut chunks = body.into_data_stream();
    let mut read = 0usize;
    while let Some(chunk) = chunks.next().await {
        match chunk {
            Ok(bytes) => read = read.saturating_add(bytes.len()),
            Err(_) => return Drained::Cut,
        }
        if read > cap {
            return Drained::Cut;
        }
    }
    Drained::Whole
}

/// A JSON-RPC message to `/mcp` that is not JSON gets JSON-RPC's parse error (-32700), as the
/// protocol says, not an HTTP 415, and a call whose params have the wrong shape gets invalid
/// params (-32602); other requests pass through untouched.
async fn json_rpc_body(req: Request, st: &AppState) -> Result<Request, Response> {
    let max_body = st.max_body;
    if req.uri().path() != "/mcp" || req.method() != axum::http::Method::POST {
        return Ok(req);
    }
    let (parts, body) = req.into_parts();
    let bytes = match axum::body::to_bytes(body, max_body).await {
        Ok(b) => b,
        Err(e) => {
            return Err(refuse(
                StatusCode::BAD_REQUEST,
                &format!("cannot read the body: {e}"),
            ));
        }
    };
    // A body sent in chunks took the whole cap; read, a small one gives its share back.
    if bytes.len() < super::inflight::SMALL_BODY_BYTES
        && let Some(share) = parts.extensions.get::<super::inflight::Share>()
    {
        share.release();
    }
    let message = match serde_json::from_slice::<Value>(&bytes) {
        Ok(v) => v,
        Err(e) => {
            let error = json!({
                "jsonrpc": "2.0",
                "id": null,
                "error": {"code": -32700, "message": format!("Parse error: {e}")},
            });
            return Err((StatusCode::BAD_REQUEST, Json(error)).into_response());
        }
    };
    let new_session = !parts.headers.contains_key("mcp-session-id");
    if message["method"] == "initialize"
        && new_session
        && st.sessions.sessions.read().await.len() >= st.max_sessions
    {
        let error = json!({
            "jsonrpc": "2.0",
            "id": message.get("id"),
            "error": {"code": -32000, "message": format!(
                "this gate holds {} MCP sessions, its most; close one (or wait for idle ones to \
                 expire) and connect again", st.max_sessions)},
        });
        return Err((StatusCode::SERVICE_UNAVAILABLE, Json(error)).into_response());
    }
    if let (Some(id), Some(method)) = (message.get("id"), message["method"].as_str())
        && let Some(why) = bad_params(method, message.get("params"))
    {
        let error = json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": {"code": -32602, "message": format!("Invalid params for {method}: {why}")},
        });
        return Err((StatusCode::OK, Json(error)).into_response());
    }
    Ok(Request::from_parts(parts, axum::body::Body::from(bytes)))
}

/// What is wrong with a request's `params`, for the methods whose shape is known: JSON-RPC's
/// invalid params (-32602), where the MCP library would answer "method not found".
fn bad_params(method: &str, params: Option<&Value>) -> Option<String> {
    let object = match params {
        None | Some(Value::Null) => None,
        Some(Value::Object(o)) => Some(o),
        Some(_) => return Some("params must be an object".into()),
    };
    match method {
        "tools/call" => {
            let Some(o) = object else {
                return Some("params with the tool's `name` are required".into());
            };
            if !o.get("name").is_some_and(Value::is_string) {
                return Some("`name` must be the tool's name, a string".into());
            }
            match o.get("arguments") {
                None | Some(Value::Null | Value::Object(_)) => None,
                Some(_) => Some("`arguments` must be an object".into()),
            }
        }
        _ => None,
    }
}

/// Whether `path` is one an agent (a client or a forwarding stdio server) uses: MCP, tool
/// calls, waiting on or withdrawing its own review, and the gate's info.
fn is_agent_route(path: &str) -> bool {
    if path == "/mcp" || path.starts_with("/mcp/") || path == "/api/info" || path == AGENT_LINK {
        return true;
    }
    if path.starts_with("/api/tools/") {
        return true;
    }
    path.strip_prefix("/api/reviews/")
        .and_then(|rest| rest.split_once('/'))
        .is_some_and(|(id, what)| !id.is_empty() && (what == "wait" || what == "withdraw"))
}

/// The route a forwarding stdio server holds open for as long as it lives.
const AGENT_LINK: &str = "/api/agents/link";

fn api_error(e: &Error) -> Response {
    let status = match e.code {
        ErrorCode::InvalidInput => StatusCode::BAD_REQUEST,
        ErrorCode::RunNotFound => StatusCode::NOT_FOUND,
        ErrorCode::RunAlreadyUsed | ErrorCode::RunExpired | ErrorCode::FileChanged => {
            StatusCode::CONFLICT
        }
        _ => StatusCode::UNPROCESSABLE_ENTITY,
    };
    (status, Json(e.to_json())).into_response()
}

/// A body that could not be read as JSON (too large: 413; malformed: 400 or 422).
fn rejection(e: &axum::extract::rejection::JsonRejection) -> Response {
    let code = if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
        "FILE_TOO_LARGE"
    } else {
        "INVALID_INPUT"
    };
    (
        e.status(),
        Json(json!({"code": code, "message": e.body_text()})),
    )
        .into_response()
}

fn outcome_response(o: &Outcome) -> Response {
    Json(super::envelope::Envelope::from_outcome(o, &[], false).to_value()).into_response()
}

async fn get_info(State(st): State<AppState>) -> Json<Info> {
    let mut info = st.info.as_ref().clone();
    info.clients = st.dispatcher.active_clients();
    info.pending = st.dispatcher.gate().pending().len();
    info.deny = st.dispatcher.gate().policy().added_deny_globs();
    Json(info)
}

async fn reviews(State(st): State<AppState>) -> Json<Value> {
    Json(json!(st.dispatcher.gate().list()))
}

async fn review(State(st): State<AppState>, Path(run_id): Path<String>) -> Response {
    let gate = st.dispatcher.gate();
    gate.sweep();
    // An undo another process made shows at once (docs/DESIGN.md §4).
    gate.notice_undos();
    match gate.get(&run_id) {
        Some(p) => Json(json!(crate::review::queue::Summary::of(&p))).into_response(),
        None => api_error(&Error::new(
            ErrorCode::RunNotFound,
            format!("no review with run id `{run_id}`"),
        )),
    }
}

async fn review_files(State(st): State<AppState>, Path(run_id): Path<String>) -> Response {
    match st.dispatcher.gate().get(&run_id) {
        Some(p) => Json(Files {
            run_id,
            files: p.contents(),
        })
        .into_response(),
        None => api_error(&Error::new(
            ErrorCode::RunNotFound,
            format!("no review with run id `{run_id}`"),
        )),
    }
}

async fn decide(
    State(st): State<AppState>,
    Path(run_id): Path<String>,
    body: Result<Json<DecisionBody>, axum::extract::rejection::JsonRejection>,
) -> Response {
    let body = match body {
        Ok(Json(b)) => b,
        Err(e) => return rejection(&e),
    };
    let (decision, note) = match body.into_decision() {
        Ok(d) => d,
        Err(e) => return api_error(&e),
    };
    let gate = st.dispatcher.gate().clone();
    let result = tokio::task::spawn_blocking(move || {
        gate.decide_with_note(&run_id, decision, note.as_deref())
    })
    .await;
    match result {
        Ok(Ok(o)) => outcome_response(&o),
        Ok(Err(e)) => api_error(&e),
        Err(e) => api_error(&Error::new(ErrorCode::FsError, e.to_string())),
    }
}

async fn commit(State(st): State<AppState>, Path(run_id): Path<String>) -> Response {
    let gate = st.dispatcher.gate().clone();
    match tokio::task::spawn_blocking(move || gate.commit(&run_id, true)).await {
        Ok(Ok(o)) => outcome_response(&o),
        Ok(Err(e)) => api_error(&e),
        Err(e) => api_error(&Error::new(ErrorCode::FsError, e.to_string())),
    }
}

async fn wait(
    State(st): State<AppState>,
    Path(run_id): Path<String>,
    body: Option<Json<WaitBody>>,
) -> Response {
    let secs = body
        .and_then(|Json(b)| b.timeout_s)
        .unwrap_or(0.0)
        .clamp(0.0, MAX_AWAIT.as_secs_f64());
    let env = st
        .dispatcher
        .wait_local(&run_id, Duration::from_secs_f64(secs))
        .await;
    Json(env.to_value()).into_response()
}

async fn withdraw(State(st): State<AppState>, Path(run_id): Path<String>) -> Response {
    st.dispatcher.gate().withdraw(&run_id);
    outcome_response(&st.dispatcher.gate().status(&run_id))
}

async fn tool(
    State(st): State<AppState>,
    Path(name): Path<String>,
    body: Result<Json<ToolCallBody>, axum::extract::rejection::JsonRejection>,
) -> Response {
    let Some(tool) = ToolName::parse(&name) else {
        return api_error(&Error::invalid_input(format!("unknown tool `{name}`")));
    };
    let body = match body {
        Ok(Json(b)) => b,
        Err(e) => return rejection(&e),
    };
    // A link that ended already: the request comes from nobody who waits.
    let agent = body.agent.map(|id| st.dispatcher.gate().agent(id));
    if let Some(None) = agent {
        return api_error(&Error::new(
            ErrorCode::ReviewerGone,
            "this agent's link to the gate ended; nothing was proposed — connect again",
        ));
    }
    let caller = super::service::Caller {
        // A self-declared name is kept bounded (docs/DESIGN.md §7).
        client: body.client.as_deref().and_then(crate::inert::client_name),
        agent: agent.flatten(),
        ..Default::default()
    };
    let env = st
        .dispatcher
        .start_raw_local(tool, &body.arguments, caller)
        .await;
    Json(env.to_value()).into_response()
}

async fn undo(State(st): State<AppState>, body: Option<Json<UndoBody>>) -> Response {
    let run_id = body.and_then(|Json(b)| b.run_id);
    let gate = st.dispatcher.gate().clone();
    match tokio::task::spawn_blocking(move || gate.undo(run_id.as_deref())).await {
        Ok(Ok(entry)) => Json(json!(entry)).into_response(),
        Ok(Err(e)) => api_error(&e),
        Err(e) => api_error(&Error::new(ErrorCode::FsError, e.to_string())),
    }
}

async fn session(State(st): State<AppState>, body: Option<Json<SessionBody>>) -> Response {
    let since = body.and_then(|Json(b)| b.since);
    let gate = st.dispatcher.gate().clone();
    match tokio::task::spawn_blocking(move || gate.session_diff(since.as_deref())).await {
        Ok(Ok((diff, notes))) => Json(json!({"diff": diff, "notes": notes})).into_response(),
        Ok(Err(e)) => api_error(&e),
        Err(e) => api_error(&Error::new(ErrorCode::FsError, e.to_string())),
    }
}

async fn rewind(State(st): State<AppState>, Json(body): Json<RewindBody>) -> Response {
    let gate = st.dispatcher.gate().clone();
    match tokio::task::spawn_blocking(move || gate.rewind(&body.run_id)).await {
        Ok(Ok(entries)) => Json(json!(entries)).into_response(),
        Ok(Err(e)) => api_error(&e),
        Err(e) => api_error(&Error::new(ErrorCode::FsError, e.to_string())),
    }
}

async fn rules(State(st): State<AppState>) -> Response {
    Json(st.dispatcher.gate().rules_list()).into_response()
}

/// `POST /api/rules`: the body read here, so that every malformed one (not JSON, an unknown
/// field, action or scope, a missing one) is a 400 that says what is wrong.
async fn add_rule(State(st): State<AppState>, body: axum::body::Bytes) -> Response {
    let rule: crate::review::rules::NewRule = match serde_json::from_slice(&body) {
        Ok(rule) => rule,
        Err(e) => {
            return api_error(&Error::invalid_input(format!(
                "a rule is {{\"glob\": GLOB, \"action\": \"auto\"|\"gate\"|\"deny\", \
                 \"scope\": \"session\"|\"user\"}}: {e}"
            )));
        }
    };
    let gate = st.dispatcher.gate().clone();
    match tokio::task::spawn_blocking(move || gate.add_rule(&rule)).await {
        Ok(Ok(added)) => Json(json!(added)).into_response(),
        Ok(Err(e)) => api_error(&e),
        Err(e) => api_error(&Error::new(ErrorCode::FsError, e.to_string())),
    }
}

/// Counts an attached reviewer (an open event stream) for as long as it lives; when the last
/// one leaves and none comes back within a grace period, pending reviews fail with
/// `REVIEWER_GONE`.
struct Attached {
    count: Arc<AtomicUsize>,
    gate: Gate,
}

/// How long the last reviewer may be away (a reconnect) before pending reviews fail.
const REVIEWER_GRACE: Duration = Duration::from_secs(3);

impl Drop for Attached {
    fn drop(&mut self) {
        if self.count.fetch_sub(1, Ordering::SeqCst) == 1 {
            let count = self.count.clone();
            let gate = self.gate.clone();
            if let Ok(rt) = tokio::runtime::Handle::try_current() {
                rt.spawn(async move {
                    tokio::time::sleep(REVIEWER_GRACE).await;
                    if count.load(Ordering::SeqCst) == 0 {
                        tracing::info!("the last reviewer left; pending reviews fail");
                        gate.reviewer_gone();
                    }
                });
            }
        }
    }
}

/// `GET /api/agents/link`: a forwarding stdio server's link, an event stream it holds for
/// as long as it lives. Its first event names the link; when the stream ends (the server
/// exited or was killed), the agent's pending reviews are withdrawn at once.
async fn agent_link(State(st): State<AppState>) -> Response {
    let link = st.dispatcher.gate().connect_agent();
    let first = SseEvent::default()
        .event("link")
        .data(serde_json::to_string(&AgentLinkEvent { id: link.id() }).unwrap_or_default());
    let head = tokio_stream::iter([Ok::<_, Infallible>(first)]);
    // Never ends on its own: the stream lives (and holds the link) until the connection goes.
    let held = tokio_stream::pending::<Result<SseEvent, Infallible>>().map(move |e| {
        let _keep = &link;
        e
    });
    Sse::new(head.chain(held))
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response()
}

async fn events(State(st): State<AppState>, headers: HeaderMap) -> Response {
    let gate = st.dispatcher.gate().clone();
    st.reviewers.fetch_add(1, Ordering::SeqCst);
    let attached = Attached {
        count: st.reviewers.clone(),
        gate: gate.clone(),
    };
    // A reconnecting reviewer replays what it missed after the last event it saw.
    let last = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let (live, replay) = st.events.follow(last);
    let pending = gate.pending().len();
    let mut first = vec![
        SseEvent::default()
            .event("ready")
            .data(json!({"pending": pending}).to_string()),
    ];
    let mut seen = last.unwrap_or(0);
    match replay {
        Some(missed) => {
            for (id, e) in &missed {
                first.push(sse_event(&gate, *id, e));
                seen = seen.max(*id);
            }
        }
        // Too far behind: the reviewer reloads the list.
        None => first.push(SseEvent::default().event("resync").data("{}")),
    }
    let head = tokio_stream::iter(first.into_iter().map(Ok::<_, Infallible>));
    let updates = BroadcastStream::new(live).filter_map(move |item| {
        let _keep = &attached;
        match item {
            Ok((id, _)) if id <= seen => None,
            Ok((id, e)) => Some(Ok::<_, Infallible>(sse_event(&gate, id, &e))),
            // Missed events: the reviewer reloads the list.
            Err(_) => Some(Ok(SseEvent::default().event("resync").data("{}"))),
        }
    });
    Sse::new(head.chain(updates))
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response()
}

/// One gate event as SSE, numbered `id`, with the proposal as it stands now.
fn sse_event(gate: &Gate, id: u64, e: &Event) -> SseEvent {
    let (name, run_id) = match e {
        Event::New(id) => ("new", id),
        Event::Updated(id) => ("updated", id),
        Event::Decided(id) => ("decided", id),
    };
    let review = gate
        .get(run_id)
        .map(|p| crate::review::queue::Summary::of(&p));
    SseEvent::default().id(id.to_string()).event(name).data(
        serde_json::to_string(&ReviewEvent {
            run_id: run_id.to_string(),
            review,
        })
        .unwrap_or_default(),
    )
}

async fn not_found() -> Response {
    refuse(
        StatusCode::NOT_FOUND,
        "no such route; the MCP endpoint is /mcp",
    )
}

/// The MCP endpoint and its session manager (idle sessions expire after the keep-alive).
fn mcp_service(
    dispatcher: &Dispatcher,
    opts: &HttpOptions,
    shutdown: &CancellationToken,
) -> (
    StreamableHttpService<McpServer, LocalSessionManager>,
    Arc<LocalSessionManager>,
) {
    let mut session = LocalSessionManager::default();
    session.session_config.keep_alive = Some(opts.session_keep_alive);
    let server = McpServer::new(dispatcher.clone());
    let mcp_config = StreamableHttpServerConfig::default()
        // The guard already checked Host and Origin for every route.
        .disable_allowed_hosts()
        .disable_allowed_origins()
        .with_max_request_body_bytes(opts.max_body)
        .with_sse_keep_alive(Some(Duration::from_secs(15)))
        .with_cancellation_token(shutdown.child_token());
    let sessions = Arc::new(session);
    let mcp = StreamableHttpService::new(
        move || Ok(server.for_session()),
        Arc::clone(&sessions),
        mcp_config,
    );
    (mcp, sessions)
}

/// Bind and serve the gate's MCP endpoint and review API.
pub async fn start(dispatcher: Dispatcher, opts: HttpOptions) -> std::io::Result<Running> {
    let listener = tokio::net::TcpListener::bind(opts.addr)
        .await
        .map_err(|e| {
            std::io::Error::new(e.kind(), format!("cannot listen on {}: {e}", opts.addr))
        })?;
    let addr = listener.local_addr()?;
    let shutdown = CancellationToken::new();

    let mut hosts: Vec<String> = LOOPBACK
        .iter()
        .map(std::string::ToString::to_string)
        .collect();
    if !addr.ip().is_loopback() && !addr.ip().is_unspecified() {
        hosts.push(addr.ip().to_string());
    }
    hosts.extend(opts.extra_hosts.iter().map(|h| h.to_ascii_lowercase()));

    let (mcp, sessions) = mcp_service(&dispatcher, &opts, &shutdown);

    let gate = dispatcher.gate();
    let info = Info {
        name: "patchgate".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        root: gate.workspace().root.path().to_path_buf(),
        policy: gate.policy().default.as_str().into(),
        review_timeout_s: dispatcher.review_timeout().as_secs(),
        dry_run_ttl_s: gate.workspace().config.dry_run_ttl_s,
        mcp: "/mcp".into(),
        clients: 0,
        pending: 0,
        deny: Vec::new(),
    };
    let event_log = super::events::EventLog::start(dispatcher.gate());
    let state = AppState {
        dispatcher,
        token: opts.token.as_deref().map(Arc::from),
        review_token: Arc::from(opts.review_token.as_str()),
        hosts: Arc::new(hosts),
        reviewers: Arc::new(AtomicUsize::new(0)),
        info: Arc::new(info),
        events: event_log,
        sessions,
        max_sessions: opts.limits.max_sessions,
        max_body: opts.max_body,
        in_flight: super::inflight::InFlight::new(
            super::inflight::IN_FLIGHT_BYTES,
            super::inflight::IN_FLIGHT_WAIT,
        ),
    };
    let api = Router::new()
        .route("/api/info", get(get_info))
        .route("/api/reviews", get(reviews))
        .route("/api/reviews/{run_id}", get(review))
        .route("/api/reviews/{run_id}/files", get(review_files))
        .route("/api/reviews/{run_id}/decision", post(decide))
        .route("/api/reviews/{run_id}/commit", post(commit))
        .route("/api/reviews/{run_id}/wait", post(wait))
        .route("/api/reviews/{run_id}/withdraw", post(withdraw))
        .route("/api/tools/{tool}", post(tool))
        .route("/api/undo", post(undo))
        .route("/api/rewind", post(rewind))
        .route("/api/session", post(session))
        .route("/api/rules", get(rules).post(add_rule))
        .route("/api/events", get(events))
        .route(AGENT_LINK, get(agent_link))
        .layer(DefaultBodyLimit::max(opts.max_body));
    let app = api
        .route_service("/mcp", mcp)
        .fallback(not_found)
        .layer(middleware::from_fn_with_state(state.clone(), guard))
        .with_state(state);

    let url = format!(
        "http://{}",
        if addr.ip().is_unspecified() {
            SocketAddr::new(std::net::Ipv4Addr::LOCALHOST.into(), addr.port())
        } else {
            addr
        }
    );
    let stop = shutdown.clone();
    let limits = opts.limits;
    let task = tokio::spawn(super::serve::serve(listener, app, limits, stop));
    Ok(Running {
        addr,
        url,
        shutdown,
        task,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_routes_are_the_agents_own() {
        for p in [
            "/mcp",
            "/api/info",
            "/api/tools/fast_apply",
            "/api/reviews/abc/wait",
            "/api/reviews/abc/withdraw",
            "/api/agents/link",
        ] {
            assert!(is_agent_route(p), "{p}");
        }
        for p in [
            "/api/reviews",
            "/api/reviews/abc",
            "/api/reviews/abc/decision",
            "/api/reviews/abc/commit",
            "/api/reviews/abc/files",
            "/api/undo",
            "/api/rewind",
            "/api/session",
            "/api/events",
            "/api/reviews/wait",
        ] {
            assert!(!is_agent_route(p), "{p}");
        }
    }

    #[test]
    fn host_parts() {
        assert_eq!(host_part("localhost:8787"), "localhost");
        assert_eq!(host_part("127.0.0.1"), "127.0.0.1");
        assert_eq!(host_part("[::1]:80"), "::1");
        assert_eq!(host_part("evil.example"), "evil.example");
    }

    #[tokio::test]
    async fn a_discarded_body_is_read_to_its_end_within_the_cap() {
        use futures_util::stream;
        let chunks = |n: usize| {
            let chunk = bytes::Bytes::from(vec![b'x'; 1000]);
            let body = stream::iter((0..n).map(move |_| Ok::<_, Infallible>(chunk.clone())));
            axum::body::Body::from_stream(body)
        };
        assert_eq!(discard(chunks(10), 10_000).await, Drained::Whole);
        // One sent in chunks past the cap is read no further than just past it.
        let read = Arc::new(AtomicUsize::new(0));
        let counted = read.clone();
        let endless = stream::repeat(bytes::Bytes::from(vec![b'x'; 1000])).map(move |c| {
            counted.fetch_add(1, Ordering::SeqCst);
            Ok::<_, Infallible>(c)
        });
        let body = axum::body::Body::from_stream(endless);
        assert_eq!(discard(body, 10_000).await, Drained::Cut);
        assert_eq!(read.load(Ordering::SeqCst), 11);
        // A body that fails (its deadline) is cut.
        let failing = stream::iter([
            Ok(bytes::Bytes::from_static(b"x")),
            Err(std::io::Error::other("deadline")),
        ]);
        let body = axum::body::Body::from_stream(failing);
        assert_eq!(discard(body, 10_000).await, Drained::Cut);
    }

    #[test]
    fn tokens_compare_whole() {
        assert!(eq_constant_time(b"abc", b"abc"));
        assert!(!eq_constant_time(b"abc", b"abd"));
        assert!(!eq_constant_time(b"abc", b"abcd"));
    }
}
