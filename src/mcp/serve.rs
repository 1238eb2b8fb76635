//! The gate's accept loop (docs/DESIGN.md §7): every connection gets `TCP_NODELAY` (else each
//! keep-alive request waits on Nagle and delayed ACKs); the open connections are capped (so idle
//! ones cannot use up the descriptors), and at the cap the connection idle longest (no request
//! in flight: before its first request or between keep-alive requests) is closed to make room
//! for the newcomer, which is refused only when every connection is busy. Reading a request's
//! head has a deadline, which closes slow-header and idle keep-alive connections, and so has
//! receiving its body (counted from the head's arrival, postponed by the time the gate held
//! the body unread waiting for its in-flight budget), which closes slow-body ones. A request
//! in progress (a long wait for a person, an event stream) has no deadline and is never closed
//! to make room.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;
use tower::ServiceExt as _;

use super::deadline_body::DeadlineBody;
use super::guarded_body::{EndGuard, GuardedBody};

/// How long a connection closed to make room may take to finish: one that never served a
/// request is dropped at once; one between requests closes at once; one still sending a
/// later head (or flushing a finished answer to a slow reader) is dropped after this. It
/// leaves the table at once, so for this long the sockets open may exceed the cap by such
/// connections.
const EVICT_GRACE: Duration = Duration::from_millis(500);

/// The limits of the accept loop.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Open connections at most; at the cap a newcomer replaces the connection idle longest,
    /// and is closed as it arrives only when none is idle.
    pub max_connections: usize,
    /// How long a connection may take to send a request's head, counted from when the
    /// server is ready for it (so also how long a keep-alive connection may idle).
    pub head_timeout: Duration,
    /// How long a request's body may take to arrive whole, counted from the head's arrival
    /// (the gate's wait for the in-flight budget not counted); past it reading the body fails
    /// and the connection is closed.
    pub body_timeout: Duration,
    /// Set `TCP_NODELAY` on each connection (off only to measure what it saves).
    pub nodelay: bool,
    /// Open MCP sessions at most (idle ones expire after the session keep-alive).
    pub max_sessions: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_connections: 512,
            head_timeout: Duration::from_secs(30),
            body_timeout: Duration::from_secs(30),
            nodelay: true,
            max_sessions: 256,
        }
    }
}

/// Serve `app` on `listener` until `stop`; open connections then finish their request.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: Limits,
    stop: CancellationToken,
) -> std::io::Result<()> {
    let table = Arc::new(Table::new(limits.max_connections));
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(pair) => pair,
                // Out of descriptors or a connection reset before accept: keep serving.
                Err(e) => {
                    tracing::debug!("accept: {e}");
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                }
            },
            () = stop.cancelled() => return Ok(()),
        };
        let Some(slot) = table.admit() else {
            tracing::warn!(
                "{peer}: {} open connections, all busy: closed",
                limits.max_connections
            );
            drop(stream);
            continue;
        };
        if let Err(e) = stream.set_nodelay(limits.nodelay) {
            tracing::debug!("TCP_NODELAY: {e}");
        }
        let conn = Conn {
            table: Arc::clone(&table),
            slot,
            peer,
        };
        tokio::spawn(conn.run(stream, app.clone(), limits, stop.clone()));
    }
}

/// One open connection: its place in the table and its peer.
struct Conn {
    table: Arc<Table>,
    slot: Arc<Slot>,
    peer: SocketAddr,
}

impl Conn {
    /// Serve HTTP/1 on `stream` until the client or the server closes it, the server stops,
    /// or the connection is closed to make room; then leave the table.
    async fn run(self, stream: TcpStream, app: Router, limits: Limits, stop: CancellationToken) {
        let (table, slot, peer) = (Arc::clone(&self.table), Arc::clone(&self.slot), self.peer);
        let service = hyper::service::service_fn(move |req: hyper::Request<Incoming>| {
            let busy = Busy::start(&table, &slot);
            let (mut parts, body) = req.into_parts();
            let body = DeadlineBody::new(body, limits.body_timeout);
            // The gate postpones the deadline by the time it holds the body unread.
            parts.extensions.insert(body.clock());
            let req = hyper::Request::from_parts(parts, axum::body::Body::new(body));
            let app = app.clone();
            async move {
                let resp = app
                    .oneshot(req)
                    .await
                    .unwrap_or_else(|never| match never {});
                Ok::<_, Infallible>(resp.map(|inner| GuardedBody::new(inner, busy)))
            }
        });
        let mut builder = hyper::server::conn::http1::Builder::new();
        builder
            .timer(TokioTimer::new())
            .header_read_timeout(limits.head_timeout)
            .keep_alive(true);
        let conn = builder.serve_connection(TokioIo::new(stream), service);
        let mut conn = std::pin::pin!(conn);
        tokio::select! {
            result = conn.as_mut() => {
                if let Err(e) = result {
                    tracing::debug!("{peer}: {e}");
                }
            }
            () = stop.cancelled() => {
                conn.as_mut().graceful_shutdown();
                let _ = tokio::time::timeout(Duration::from_secs(5), conn).await;
            }
            () = self.slot.evict.cancelled() => {
                // Never served a request (idle since it connected, or still sending a first
                // head): dropped at once, so the sockets open stay within the cap.
                if !self.slot.served.load(Ordering::SeqCst) && self.slot.is_idle() {
                    tracing::debug!("{peer}: closed to make room for a new connection");
                    self.table.remove(self.slot.id);
                    return;
                }
                // Idle between requests: closed at once. Still sending a later head: dropped
                // after the grace. A request that slipped in meanwhile: closed after it.
                conn.as_mut().graceful_shutdown();
                let finished = tokio::time::timeout(EVICT_GRACE, conn.as_mut()).await;
                if finished.is_err() && !self.slot.is_idle() {
                    tokio::select! {
                        _ = conn => {}
                        () = stop.cancelled() => {}
                    }
                }
                tracing::debug!("{peer}: closed to make room for a new connection");
            }
        }
        self.table.remove(self.slot.id);
    }
}

/// The open connections, for closing the one idle longest when a new one arrives at the cap.
struct Table {
    max: usize,
    slots: Mutex<Vec<Arc<Slot>>>,
    /// Numbers the connections, and orders the moments they fell idle.
    clock: AtomicU64,
}

/// One open connection's state.
struct Slot {
    id: u64,
    /// Requests in flight (from the service's call until the response body is done).
    busy: AtomicUsize,
    /// The `clock` reading when it last fell idle (or arrived).
    idle_since: AtomicU64,
    /// Cancelled to close the connection to make room.
    evict: CancellationToken,
    /// Whether a request has ever come in on it.
    served: AtomicBool,
}

impl Slot {
    fn is_idle(&self) -> bool {
        self.busy.load(Ordering::SeqCst) == 0
    }
}

impl Table {
    fn new(max: usize) -> Table {
        Table {
            max,
            slots: Mutex::new(Vec::with_capacity(max.min(1024))),
            clock: AtomicU64::new(0),
        }
    }

    fn tick(&self) -> u64 {
        self.clock.fetch_add(1, Ordering::SeqCst)
    }

    /// A place for a new connection: a free one, or the one of the connection idle longest,
    /// which is told to close; `None` when the table is full of busy connections.
    fn admit(&self) -> Option<Arc<Slot>> {
        let mut slots = self
            .slots
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if slots.len() >= self.max {
            let oldest = slots
                .iter()
                .enumerate()
                .filter(|(_, s)| s.is_idle())
                .min_by_key(|(_, s)| s.idle_since.load(Ordering::SeqCst))
                .map(|(i, _)| i)?;
            slots.swap_remove(oldest).evict.cancel();
        }
        let now = self.tick();
        let slot = Arc::new(Slot {
            id: now,
            busy: AtomicUsize::new(0),
            idle_since: AtomicU64::new(now),
            evict: CancellationToken::new(),
            served: AtomicBool::new(false),
        });
        slots.push(Arc::clone(&slot));
        Some(slot)
    }

    /// Forget a closed connection (if it was not already replaced).
    fn remove(&self, id: u64) {
        let mut slots = self
            .slots
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(i) = slots.iter().position(|s| s.id == id) {
            slots.swap_remove(i);
        }
    }
}

/// A request in flight on a connection; dropping it marks the connection idle again.
struct Busy {
    table: Arc<Table>,
    slot: Arc<Slot>,
}

impl Busy {
    fn start(table: &Arc<Table>, slot: &Arc<Slot>) -> Busy {
        slot.busy.fetch_add(1, Ordering::SeqCst);
        slot.served.store(true, Ordering::SeqCst);
        Busy {
            table: Arc::clone(table),
            slot: Arc::clone(slot),
        }
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        // The idle moment first, so a table scan that sees it idle sees when it fell idle.
        self.slot
            .idle_since
            .store(self.table.tick(), Ordering::SeqCst);
        self.slot.busy.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A response body keeps its request counted in flight until it ends or is dropped (an event
/// stream is busy for its whole life): dropping the [`Busy`] does it.
impl EndGuard for Busy {}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpStream;

    use super::*;
    use crate::mcp::http::{HttpOptions, start};
    use crate::mcp::service::{Dispatcher, Reviewers};
    use crate::review::journal::Journal;
    use crate::review::policy::Policy;
    use crate::review::queue::Gate;
    use crate::workspace::Workspace;
    use crate::workspace::config::{Config, PolicyName};

    const TOKEN: &str = "t0ken";

    async fn gate(dir: &tempfile::TempDir, limits: Limits) -> crate::mcp::http::Running {
        let ws = Workspace::new(dir.path(), Config::default()).unwrap();
        let journal = Journal::at(dir.path().join("j.jsonl"), &ws.root);
        let gate = Gate::new(ws, Policy::simple(PolicyName::Gate), journal, None);
        let d = Dispatcher::new(gate, Duration::from_secs(5), Reviewers::Attachable, None);
        start(
            d,
            HttpOptions {
                addr: "127.0.0.1:0".parse().unwrap(),
                token: Some(TOKEN.into()),
                review_token: TOKEN.into(),
                extra_hosts: Vec::new(),
                max_body: 1 << 20,
                session_keep_alive: Duration::from_secs(60),
                limits,
            },
        )
        .await
        .unwrap()
    }

    /// Whether the server closes `s` within `within` (reads until EOF).
    async fn closed_within(s: &mut (impl AsyncRead + Unpin), within: Duration) -> bool {
        let mut buf = [0u8; 1024];
        let deadline = Instant::now() + within;
        while Instant::now() < deadline {
            match tokio::time::timeout(Duration::from_millis(50), s.read(&mut buf)).await {
                Ok(Ok(0)) | Ok(Err(_)) => return true,
                _ => {}
            }
        }
        false
    }

    async fn info_status(addr: std::net::SocketAddr) -> Option<u16> {
        let mut s = TcpStream::connect(addr).await.ok()?;
        let req = format!(
            "GET /api/info HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {TOKEN}\r\nConnection: close\r\n\r\n"
        );
        s.write_all(req.as_bytes()).await.ok()?;
        let mut out = Vec::new();
        tokio::time::timeout(Duration::from_secs(5), s.read_to_end(&mut out))
            .await
            .ok()?
            .ok()?;
        String::from_utf8_lossy(&out)
            .split_whitespace()
            .nth(1)?
            .parse()
            .ok()
    }

    /// `GET /api/info` on an open connection that stays open: the status.
    async fn keep_alive_info(s: &mut TcpStream) -> u16 {
        let req = format!(
            "GET /api/info HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {TOKEN}\r\n\r\n"
        );
        s.write_all(req.as_bytes()).await.unwrap();
        let mut out = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            let n = tokio::time::timeout(Duration::from_secs(5), s.read(&mut buf))
                .await
                .unwrap()
                .unwrap();
            assert!(n > 0, "closed before the answer");
            out.extend_from_slice(&buf[..n]);
            let text = String::from_utf8_lossy(&out).to_ascii_lowercase();
            let Some(end) = text.find("\r\n\r\n") else {
                continue;
            };
            let length: usize = text[..end]
                .split("content-length:")
                .nth(1)
                .and_then(|v| v.lines().next())
                .and_then(|v| v.trim().parse().ok())
                .unwrap();
            if out.len() >= end + 4 + length {
                return text.split_whitespace().nth(1).unwrap().parse().unwrap();
            }
        }
    }

    /// The status of `/api/info`, asked again for up to a second while a slot is not yet
    /// free (the server forgets a closed connection just after closing it).
    async fn info_status_soon(addr: std::net::SocketAddr) -> Option<u16> {
        for _ in 0..20 {
            if let Some(status) = info_status(addr).await {
                return Some(status);
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        None
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn idle_and_slow_header_connections_are_closed() {
        let dir = tempfile::tempdir().unwrap();
        let limits = Limits {
            max_connections: 4,
            head_timeout: Duration::from_millis(300),
            body_timeout: Duration::from_millis(300),
            ..Limits::default()
        };
        let running = gate(&dir, limits).await;
        let addr = running.addr;
        let mut idle = Vec::new();
        for _ in 0..4 {
            idle.push(TcpStream::connect(addr).await.unwrap());
        }
        // A slow header on one of them.
        idle[0]
            .write_all(b"GET /api/info HTTP/1.1\r\nHost: loc")
            .await
            .unwrap();
        // The idle and the slow ones are closed after the head deadline...
        for s in &mut idle {
            assert!(closed_within(s, Duration::from_secs(3)).await);
        }
        // ...and then clients get in again.
        assert_eq!(info_status(addr).await, Some(200));
        // A request in progress (an event stream) outlives the head and body deadlines.
        let mut events = TcpStream::connect(addr).await.unwrap();
        let req = format!(
            "GET /api/events HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {TOKEN}\r\n\r\n"
        );
        events.write_all(req.as_bytes()).await.unwrap();
        let mut buf = [0u8; 4096];
        let n = events.read(&mut buf).await.unwrap();
        assert!(String::from_utf8_lossy(&buf[..n]).contains("200"));
        assert!(!closed_within(&mut events, Duration::from_millis(900)).await);
        running.shutdown().await;
    }

    /// Open `GET /api/events` on a new connection and wait for its 200.
    async fn event_stream(addr: std::net::SocketAddr) -> TcpStream {
        let mut s = TcpStream::connect(addr).await.unwrap();
        let req = format!(
            "GET /api/events HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {TOKEN}\r\n\r\n"
        );
        s.write_all(req.as_bytes()).await.unwrap();
        let mut buf = [0u8; 4096];
        let n = tokio::time::timeout(Duration::from_secs(5), s.read(&mut buf))
            .await
            .unwrap()
            .unwrap();
        assert!(String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200"));
        s
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_trickling_body_is_cut_off_at_its_deadline_and_frees_its_slot() {
        let dir = tempfile::tempdir().unwrap();
        let limits = Limits {
            max_connections: 1,
            body_timeout: Duration::from_millis(400),
            ..Limits::default()
        };
        let running = gate(&dir, limits).await;
        let addr = running.addr;
        // Taken before the connection opens: the gate's clock for the body starts once it has
        // read the head, which may be before `write_all` returns here.
        let start = Instant::now();
        let (mut rd, mut wr) = TcpStream::connect(addr).await.unwrap().into_split();
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {TOKEN}\r\n\
             Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
             Content-Length: 100\r\n\r\n"
        );
        wr.write_all(head.as_bytes()).await.unwrap();
        // A byte every 100 ms: the body would take 10 s; no single wait reaches the deadline.
        let trickle = tokio::spawn(async move {
            for _ in 0..100 {
                tokio::time::sleep(Duration::from_millis(100)).await;
                if wr.write_all(b" ").await.is_err() {
                    break;
                }
            }
        });
        let mut out = Vec::new();
        let ended = tokio::time::timeout(Duration::from_secs(3), rd.read_to_end(&mut out)).await;
        trickle.abort();
        assert!(ended.is_ok(), "the connection was still open after 3 s");
        assert!(start.elapsed() >= Duration::from_millis(400));
        let answer = String::from_utf8_lossy(&out);
        assert!(
            answer.is_empty() || answer.starts_with("HTTP/1.1 4"),
            "{answer}"
        );
        // Its slot is free again (the server forgets it just after closing it).
        assert_eq!(info_status_soon(addr).await, Some(200));
        running.shutdown().await;
    }

    /// A request that waited for its bytes in flight has its whole body time once the gate
    /// reads: its client, still sending, could send no faster than the gate read. Here 32
    /// bodies declared and never sent hold the budget until they are cut at their 3 s
    /// deadline, and a 100 KiB edit, its head sent 0.5 s after theirs, arrives in ten parts
    /// 400 ms apart: it was cut 3 s after its head, the 2.5 s wait charged to it.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_wait_for_the_in_flight_budget_is_not_charged_to_the_body() {
        let dir = tempfile::tempdir().unwrap();
        let limits = Limits {
            body_timeout: Duration::from_secs(3),
            ..Limits::default()
        };
        let running = gate(&dir, limits).await;
        let addr = running.addr;
        let head = |len: usize| {
            format!(
                "POST /api/tools/patch_file HTTP/1.1\r\nHost: localhost\r\n\
                 Authorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\n\
                 Connection: close\r\nContent-Length: {len}\r\n\r\n"
            )
        };
        let mut holders = Vec::new();
        for _ in 0..32 {
            let mut s = TcpStream::connect(addr).await.unwrap();
            s.write_all(head(1 << 20).as_bytes()).await.unwrap();
            holders.push(s);
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        let body = serde_json::json!({"arguments": {"target_file": "a.txt",
            "search_content": "x".repeat(100 << 10), "replace_content": "y"}, "client": "slow"});
        let body = serde_json::to_vec(&body).unwrap();
        let (mut rd, mut wr) = TcpStream::connect(addr).await.unwrap().into_split();
        wr.write_all(head(body.len()).as_bytes()).await.unwrap();
        for part in body.chunks(body.len().div_ceil(10)) {
            tokio::time::sleep(Duration::from_millis(400)).await;
            if wr.write_all(part).await.is_err() {
                break;
            }
        }
        let mut out = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(10), rd.read_to_end(&mut out)).await;
        let answer = String::from_utf8_lossy(&out);
        assert!(
            matches!(read, Ok(Ok(_))) && answer.starts_with("HTTP/1.1 200"),
            "{read:?}: {answer}"
        );
        // The tool was called: the file it names is not there.
        assert!(answer.contains("a.txt"), "{answer}");
        drop(holders);
        running.shutdown().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn at_the_cap_the_connection_idle_longest_makes_room() {
        let dir = tempfile::tempdir().unwrap();
        let limits = Limits {
            max_connections: 4,
            head_timeout: Duration::from_secs(20),
            ..Limits::default()
        };
        let running = gate(&dir, limits).await;
        let addr = running.addr;
        let mut conns = Vec::new();
        for _ in 0..4 {
            conns.push(TcpStream::connect(addr).await.unwrap());
            tokio::time::sleep(Duration::from_millis(30)).await;
        }
        // The first one makes a keep-alive request: now the second has been idle longest,
        // and it is still sending its first head.
        assert_eq!(keep_alive_info(&mut conns[0]).await, 200);
        conns[1]
            .write_all(b"GET /api/info HTTP/1.1\r\nHost: loc")
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
        // A fifth client gets in, and the second connection is closed for it.
        assert_eq!(info_status(addr).await, Some(200));
        assert!(closed_within(&mut conns[1], Duration::from_secs(2)).await);
        for i in [0, 2, 3] {
            assert!(
                !closed_within(&mut conns[i], Duration::from_millis(200)).await,
                "connection {i} was closed"
            );
        }
        // The kept one still works.
        assert_eq!(keep_alive_info(&mut conns[0]).await, 200);
        running.shutdown().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn busy_connections_are_not_closed_to_make_room() {
        let dir = tempfile::tempdir().unwrap();
        let limits = Limits {
            max_connections: 2,
            ..Limits::default()
        };
        let running = gate(&dir, limits).await;
        let addr = running.addr;
        // Two event streams (busy for their whole life) fill the cap.
        let mut streams = [event_stream(addr).await, event_stream(addr).await];
        // A newcomer is closed at once, and the streams go on.
        let mut third = TcpStream::connect(addr).await.unwrap();
        assert!(closed_within(&mut third, Duration::from_millis(500)).await);
        for s in &mut streams {
            assert!(!closed_within(s, Duration::from_millis(300)).await);
        }
        // Once a stream ends, its place is free.
        drop(streams);
        assert_eq!(info_status_soon(addr).await, Some(200));
        running.shutdown().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn mcp_sessions_are_capped() {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let dir = tempfile::tempdir().unwrap();
        let limits = Limits {
            max_sessions: 2,
            ..Limits::default()
        };
        let running = gate(&dir, limits).await;
        let http = reqwest::Client::new();
        let init = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-03-26", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}});
        let mut statuses = Vec::new();
        for _ in 0..3 {
            let r = http
                .post(format!("{}/mcp", running.url))
                .bearer_auth(TOKEN)
                .header("Accept", "application/json, text/event-stream")
                .json(&init)
                .send()
                .await
                .unwrap();
            statuses.push(r.status().as_u16());
        }
        assert_eq!(statuses, [200, 200, 503]);
        running.shutdown().await;
    }
}
