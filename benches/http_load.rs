//! Load on one gate over HTTP: 100 clients (keep-alive connections) each send 100 edits
//! through the agent route `POST /api/tools/patch_file` of an in-process gate (policy auto,
//! so every edit is merged, written atomically and journaled). Checks that none is lost
//! (every file holds its last edit, the journal records every one) and prints edits/s; then
//! the single-client rate with and without `TCP_NODELAY`.
//!
//! `cargo bench --bench http_load` (`-- --clients N --edits N` to change the load; the files
//! and journal go in a temporary directory under `$PATCHGATE_BENCH_DIR`, else the system's).

mod common;
use common::{arg, bench_tempdir};
use std::time::{Duration, Instant};

use patchgate::mcp::http::{HttpOptions, Running, start};
use patchgate::mcp::serve::Limits;
use patchgate::mcp::service::{Dispatcher, Reviewers};
use patchgate::review::journal::Journal;
use patchgate::review::policy::Policy;
use patchgate::review::queue::Gate;
use patchgate::workspace::Workspace;
use patchgate::workspace::config::{Config, PolicyName};
use serde_json::json;

const TOKEN: &str = "bench-token";
/// The binary's blocking pool (`app::runtime`).
const BLOCKING_THREADS: usize = 32;

async fn gate(dir: &std::path::Path, nodelay: bool) -> (Running, Journal) {
    let ws = Workspace::new(dir, Config::default()).unwrap();
    let journal = Journal::at(dir.join("../journal.jsonl"), &ws.root);
    let gate = Gate::new(ws, Policy::simple(PolicyName::Auto), journal.clone(), None);
    let d = Dispatcher::new(gate, Duration::from_secs(60), Reviewers::Attachable, None);
    let running = start(
        d,
        HttpOptions {
            addr: "127.0.0.1:0".parse().unwrap(),
            token: Some(TOKEN.into()),
            review_token: "reviewer".into(),
            extra_hosts: Vec::new(),
            max_body: 1 << 20,
            session_keep_alive: Duration::from_secs(600),
            limits: Limits {
                max_connections: 1024,
                nodelay,
                ..Limits::default()
            },
        },
    )
    .await
    .unwrap();
    (running, journal)
}

/// The TLS configuration every client is built with, made once: the clients speak plain
/// HTTP to the gate, so it holds no root certificate (a default client loads the system's
/// store each time it is built: 3.7% of the bench's samples went there, the gate's none).
fn tls() -> rustls::ClientConfig {
    rustls::ClientConfig::builder()
        .with_root_certificates(rustls::RootCertStore::empty())
        .with_no_client_auth()
}

/// One client's HTTP stack (its own connection pool, no connection made yet).
fn http_client(tls: rustls::ClientConfig) -> reqwest::Client {
    reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .build()
        .expect("a client")
}

/// One client, over `http`: `edits` edits of its own file, each replacing `v{k}` by
/// `v{k+1}`.
async fn client(http: reqwest::Client, url: String, id: usize, edits: usize) -> usize {
    let mut ok = 0;
    for k in 0..edits {
        let body = json!({"arguments": {
            "target_file": format!("f{id}.txt"),
            "search_content": format!("value v{k}"),
            "replace_content": format!("value v{}", k + 1),
        }, "client": format!("bench-{id}")});
        let resp = http
            .post(format!("{url}/api/tools/patch_file"))
            .bearer_auth(TOKEN)
            .json(&body)
            .send()
            .await
            .expect("request");
        let v: serde_json::Value = resp.json().await.expect("envelope");
        if v["status"] == "ok" {
            ok += 1;
        } else {
            eprintln!("client {id} edit {k}: {v}");
        }
    }
    ok
}

/// Run `clients` × `edits` against a fresh gate; returns (edits/s, edits confirmed).
async fn run(clients: usize, edits: usize, nodelay: bool) -> (f64, usize) {
    let tmp = bench_tempdir();
    let work = tmp.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    for id in 0..clients {
        std::fs::write(
            work.join(format!("f{id}.txt")),
            "header\nvalue v0\nfooter\n",
        )
        .unwrap();
    }
    let (running, journal) = gate(&work, nodelay).await;
    // The clients are built before the clock starts (the bench times the gate, not the
    // making of reqwest's clients); each opens its connection with its first edit, timed.
    let tls = tls();
    let https: Vec<reqwest::Client> = (0..clients).map(|_| http_client(tls.clone())).collect();
    let started = Instant::now();
    let tasks: Vec<_> = https
        .into_iter()
        .enumerate()
        .map(|(id, http)| tokio::spawn(client(http, running.url.clone(), id, edits)))
        .collect();
    let mut confirmed = 0;
    for t in tasks {
        confirmed += t.await.unwrap();
    }
    let secs = started.elapsed().as_secs_f64();
    // Nothing lost: every file holds its last edit and the journal has every edit.
    for id in 0..clients {
        let now = std::fs::read_to_string(work.join(format!("f{id}.txt"))).unwrap();
        assert_eq!(
            now,
            format!("header\nvalue v{edits}\nfooter\n"),
            "file {id}"
        );
    }
    let journaled = journal.entries().unwrap().len();
    assert_eq!(journaled, clients * edits, "journal entries");
    running.shutdown().await;
    (confirmed as f64 / secs, confirmed)
}

fn main() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let clients = arg("--clients", 100);
    let edits = arg("--edits", 100);
    // As the binary's runtime (`app::runtime`): the blocking work (writes, fsyncs) on at most
    // 32 threads.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .max_blocking_threads(BLOCKING_THREADS)
        .enable_all()
        .build()
        .unwrap();
    let (rate, confirmed) = rt.block_on(run(clients, edits, true));
    println!("{clients} clients x {edits} edits: {confirmed} confirmed, 0 lost, {rate:.0} edits/s");
    let single = (edits * 3).max(100);
    let (with, _) = rt.block_on(run(1, single, true));
    let (without, _) = rt.block_on(run(1, single, false));
    println!(
        "one client, {single} edits over /api: {with:.0} edits/s with TCP_NODELAY, {without:.0} \
         without ({:.1}x)",
        with / without.max(f64::MIN_POSITIVE)
    );
    let calls = edits.max(50);
    let with = rt.block_on(mcp_rate(calls, true));
    let without = rt.block_on(mcp_rate(calls, false));
    println!(
        "one MCP client, {calls} patch_file calls over /mcp: {with:.0} edits/s with TCP_NODELAY, \
         {without:.0} without ({:.1}x)",
        with / without.max(f64::MIN_POSITIVE)
    );
}

/// One rmcp client over Streamable HTTP (answers come as SSE), `calls` edits in a row.
async fn mcp_rate(calls: usize, nodelay: bool) -> f64 {
    use rmcp::ServiceExt;
    use rmcp::model::CallToolRequestParams;
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    let tmp = bench_tempdir();
    let work = tmp.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(work.join("m.txt"), "header\nvalue v0\nfooter\n").unwrap();
    let (running, _) = gate(&work, nodelay).await;
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(format!("{}/mcp", running.url))
            .auth_header(TOKEN.to_string()),
    );
    let c = ().serve(transport).await.expect("initialize");
    let started = Instant::now();
    for k in 0..calls {
        let args = json!({"target_file": "m.txt", "search_content": format!("value v{k}"),
            "replace_content": format!("value v{}", k + 1)});
        let r = c
            .call_tool(
                CallToolRequestParams::new("patch_file")
                    .with_arguments(args.as_object().unwrap().clone()),
            )
            .await
            .expect("call");
        assert_ne!(r.is_error, Some(true), "{r:?}");
    }
    let rate = calls as f64 / started.elapsed().as_secs_f64();
    let _ = c.cancel().await;
    running.shutdown().await;
    rate
}
