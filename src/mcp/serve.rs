//! The gate's accept loop (docs/DESIGN.md §7): every connection gets `TCP_NODELAY` (else each
//! keep-alive request waits on Nagle and delayed ACKs), connections beyond a cap are closed at
//! once (so idle ones cannot use up the descriptors and lock every client out), and reading a
//! request's head has a deadline, which closes slow-header and idle keep-alive connections.
//! A request in progress (a long wait for a person, an event stream) has no deadline.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt as _;

/// The limits of the accept loop.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Open connections at most; more are closed as they arrive.
    pub max_connections: usize,
    /// How long a connection may take to send a request's head, counted from when the
    /// server is ready for it (so also how long a keep-alive connection may idle).
    pub head_timeout: Duration,
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
    let open = Arc::new(Semaphore::new(limits.max_connections));
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
        let Ok(permit) = Arc::clone(&open).try_acquire_owned() else {
            tracing::warn!(
                "{peer}: over {} open connections, closed",
                limits.max_connections
            );
            drop(stream);
            continue;
        };
        if let Err(e) = stream.set_nodelay(limits.nodelay) {
            tracing::debug!("TCP_NODELAY: {e}");
        }
        let app = app.clone();
        let stop = stop.clone();
        tokio::spawn(async move {
            let service = TowerToHyperService::new(
                app.map_request(|req: hyper::Request<Incoming>| req.map(axum::body::Body::new)),
            );
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
            }
            drop(permit);
        });
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};
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
    async fn closed_within(s: &mut TcpStream, within: Duration) -> bool {
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

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn idle_and_slow_header_connections_are_closed_and_the_cap_holds() {
        let dir = tempfile::tempdir().unwrap();
        let limits = Limits {
            max_connections: 4,
            head_timeout: Duration::from_millis(300),
            ..Limits::default()
        };
        let running = gate(&dir, limits).await;
        let addr = running.addr;
        // Four idle connections fill the cap: a fifth is closed at once.
        let mut idle = Vec::new();
        for _ in 0..4 {
            idle.push(TcpStream::connect(addr).await.unwrap());
        }
        // A slow header on one of them.
        idle[0]
            .write_all(b"GET /api/info HTTP/1.1\r\nHost: loc")
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
        let mut fifth = TcpStream::connect(addr).await.unwrap();
        assert!(closed_within(&mut fifth, Duration::from_millis(250)).await);
        // The idle and the slow ones are closed after the head deadline...
        for s in &mut idle {
            assert!(closed_within(s, Duration::from_secs(3)).await);
        }
        // ...and then clients get in again.
        assert_eq!(info_status(addr).await, Some(200));
        // A request in progress (an event stream) outlives the head deadline.
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
