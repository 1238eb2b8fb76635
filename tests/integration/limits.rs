//! A repository's limits and the syntax check's bounds through the real binary: a
//! `.patchgate.toml` only tightens the gate's limits (docs/DESIGN.md §7), parses are bounded in
//! memory across calls, and a check that cannot finish holds an `auto` edit for a person.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

use crate::mcp::{Gate, Project, oversized_post};

/// A review timeout past the clock is held to the default: the gate starts (it panicked,
/// "overflow when multiplying duration by scalar").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repository_review_timeout_past_the_clock_is_held_to_the_default() {
    let p = Project::new();
    p.write(
        ".patchgate.toml",
        "review_timeout_s = 18446744073709551615\n",
    );
    let gate = Gate::start(&p, &[]);
    let info = gate.api(reqwest::Method::GET, "/api/info", None).await;
    assert_eq!(info["review_timeout_s"], 600, "{info}");
}

/// A file cap of a terabyte is held to the default: a 200 MB body is refused on its declared
/// length (it was accepted).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repository_cannot_lift_the_body_cap() {
    let p = Project::new();
    p.write(".patchgate.toml", "max_file_bytes = 1099511627776\n");
    let gate = Gate::start(&p, &[]);
    let api_url = format!("{}/api/tools/patch_file", gate.url);
    for url in [api_url.as_str(), gate.mcp_url.as_str()] {
        let (status, body) = oversized_post(url, &gate.token, 200 << 20).await;
        assert_eq!(status, 413, "{url}: {body}");
    }
}

/// A dry-run life past the clock is held to the default: the dry-run answers and expires in
/// time (its worker panicked and the call got no answer).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repository_dry_run_life_past_the_clock_is_held_to_the_default() {
    let p = Project::new();
    p.write("a.txt", "one\n");
    p.write(".patchgate.toml", "dry_run_ttl_s = 18446744073709551615\n");
    let gate = Gate::start(&p, &["--policy", "dry-run"]);
    let call = gate.api(
        reqwest::Method::POST,
        "/api/tools/patch_file",
        Some(json!({"arguments": {"target_file": "a.txt", "search_content": "one", "replace_content": "two"}, "client": "script"})),
    );
    let v = tokio::time::timeout(Duration::from_secs(20), call)
        .await
        .expect("the dry-run answers");
    assert_eq!(v["dry_run"], true, "{v}");
    let list = gate.api(reqwest::Method::GET, "/api/reviews", None).await;
    let expires = list[0]["expires_in"].as_u64().expect("expires_in");
    assert!(expires <= 300, "{list}");
    assert_eq!(p.read("a.txt"), "one\n");
}

/// A `VmHWM`/`VmRSS` line of `/proc/PID/status`, in KiB.
fn status_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no {field} in {status}"))
}

/// A megabyte of `!` in a `.rs` file: costs tree-sitter about 300 bytes a byte to parse.
fn hostile_rust() -> String {
    let line = format!("{}\n", "!".repeat(127));
    line.repeat((1 << 20) / line.len() - 8)
}

/// A megabyte of unclosed `#[` in a `.rs` file: its parse runs far past the deadline (an
/// eighth of it still did not finish in 500 ms on an idle machine), where the megabyte of `!`
/// that [`hostile_rust`] writes parses in about 0.4 s there: a test of the deadline must not
/// depend on the machine being busy.
fn slow_rust() -> String {
    let line = format!("{}\n", "#[".repeat(63));
    line.repeat((1 << 20) / line.len() - 8)
}

/// How often a request answered 503 (busy), or whose body the gate did not take, is sent again.
const BUSY_RETRIES: usize = 10;

/// 128 agents each proposing a different 1 MiB file at once: a tree holds its share of the
/// parse budget for as long as it lives and a large one gives its memory back when dropped,
/// so the gate stays under 1 GiB resident at its peak, and every request is answered (a busy
/// answer, 503 with Retry-After, or a connection the gate closed on a body it did not take,
/// is sent again as a client would: every edit is proposed in the end).
/// Measured in a debug build: 1,474 MiB before the budget (every parse at once), 707–762 MiB
/// now; about 400 MiB of that is the 100 dry-runs the open-proposal cap admits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_and_twenty_eight_concurrent_megabyte_edits_stay_under_a_gibibyte() {
    let p = Project::new();
    let gate = Gate::start(&p, &["--policy", "dry-run"]);
    let text = std::sync::Arc::new(hostile_rust());
    let client = crate::mcp::http_client();
    let mut tasks = tokio::task::JoinSet::new();
    // How many sends were answered 503, and how many did not go through whole.
    let resent: std::sync::Arc<[AtomicUsize; 2]> = std::sync::Arc::default();
    for i in 0..128 {
        let (client, text, resent) = (client.clone(), text.clone(), resent.clone());
        let url = format!("{}/api/tools/FileWriteOrEdit", gate.url);
        let token = gate.review_token.clone();
        tasks.spawn(async move {
            // Each text its own, so no parse is shared through the cache.
            let body = json!({"arguments": {"file_path": format!("f{i}.rs"), "percentage_to_change": 100,
                "text_or_search_replace_blocks": format!("// {i}\n{text}")}, "client": format!("c{i}")});
            // A 503 says the in-flight budget stayed full past its wait (a loaded machine):
            // a client retries after its Retry-After, as the gate asks; the work is still done.
            // On a loaded machine a send may still fail (a body not in whole within its
            // deadline is cut off; connections time out under load, cause not pinned down):
            // the client sends again, as after a 503 (whose body the gate reads first).
            let mut last = Value::Null;
            for _ in 0..BUSY_RETRIES {
                match client.post(&url).bearer_auth(&token).json(&body).send().await {
                    Ok(r) if r.status().as_u16() != 503 => {
                        let status = r.status().as_u16();
                        return (status, r.json::<Value>().await.unwrap_or(Value::Null));
                    }
                    Ok(_) => {
                        resent[0].fetch_add(1, Ordering::Relaxed);
                        last = json!("503");
                    }
                    Err(e) => {
                        resent[1].fetch_add(1, Ordering::Relaxed);
                        last = json!(format!("not sent whole: {e:?}"));
                    }
                }
                tokio::time::sleep(std::time::Duration::from_secs(1)).await;
            }
            (503, last)
        });
    }
    let (mut answered, mut held) = (0, 0);
    while let Some(answer) = tasks.join_next().await {
        let (status, v) = answer.unwrap();
        assert_eq!(status, 200, "{v}");
        answered += 1;
        held += usize::from(v["dry_run"] == true);
    }
    assert_eq!(answered, 128);
    // The open-proposal cap (256 MiB) admits about 100 of them: the gate did the work, it
    // did not dodge it by refusing (measured: 100).
    assert!(held >= 90, "only {held} dry-runs held");
    let peak = status_kib(gate.pid(), "VmHWM:");
    let now = status_kib(gate.pid(), "VmRSS:");
    eprintln!(
        "gate resident: peak {} MiB, now {} MiB; sent again after a 503: {}, after a send cut off: {}",
        peak >> 10,
        now >> 10,
        resent[0].load(Ordering::Relaxed),
        resent[1].load(Ordering::Relaxed)
    );
    assert!(peak < 1 << 20, "peak {} MiB", peak >> 10);
}

/// Under `auto`, content whose parse runs past its deadline is not applied unseen: it waits
/// for a person, and its warnings say why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_auto_a_parse_past_its_deadline_waits_for_a_person() {
    let p = Project::new();
    let gate = Gate::start(&p, &["--policy", "auto", "--review-timeout", "1"]);
    let v = gate
        .api(
            reqwest::Method::POST,
            "/api/tools/FileWriteOrEdit",
            Some(
                json!({"arguments": {"file_path": "slow.rs", "percentage_to_change": 100,
                "text_or_search_replace_blocks": slow_rust()}, "client": "script"}),
            ),
        )
        .await;
    assert_eq!(v["status"], "pending", "{v}");
    let why = v["warnings"].to_string();
    assert!(why.contains("could not finish"), "{why}");
    assert!(why.contains("deadline") || why.contains("budget"), "{why}");
    assert!(!p.root.join("slow.rs").exists(), "written unseen");
}

/// Sixteen edits one after the other, each a different 64 KiB JSON array of numbers (whose
/// tree takes about 170 bytes a byte, 11 MB): the remembered parses are bounded by their
/// trees' size, not their texts', so the gate does not keep 16 such trees.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remembered_parses_are_bounded_by_their_trees_size() {
    let p = Project::new();
    let gate = Gate::start(&p, &["--policy", "dry-run"]);
    let before = status_kib(gate.pid(), "VmRSS:");
    for i in 0..16 {
        let text = format!("[{i},{}0]\n", "1,".repeat(32 << 10));
        let v = gate
            .api(
                reqwest::Method::POST,
                "/api/tools/FileWriteOrEdit",
                Some(json!({"arguments": {"file_path": format!("f{i}.json"), "percentage_to_change": 100,
                    "text_or_search_replace_blocks": text}, "client": format!("c{i}")})),
            )
            .await;
        assert_eq!(v["dry_run"], true, "{v}");
    }
    let now = status_kib(gate.pid(), "VmRSS:");
    let peak = status_kib(gate.pid(), "VmHWM:");
    eprintln!(
        "gate resident: before {} MiB, now {} MiB, peak {} MiB",
        before >> 10,
        now >> 10,
        peak >> 10
    );
    // Measured: 98 MiB more with the bound; 168 MiB more when each tree counted as its text.
    assert!(
        now < before + (128 << 10),
        "{} MiB more",
        (now - before) >> 10
    );
}

/// Open a connection to `url` and send the head of a POST declaring `len` bytes of body,
/// and none of the body: the gate takes `len` from its in-flight budget and waits for it.
async fn body_never_sent(url: &str, token: &str, len: usize) -> tokio::net::TcpStream {
    use tokio::io::AsyncWriteExt;
    let url = reqwest::Url::parse(url).unwrap();
    let host = format!("{}:{}", url.host_str().unwrap(), url.port().unwrap());
    let mut stream = tokio::net::TcpStream::connect(&host).await.unwrap();
    let head = format!(
        "POST {} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nContent-Length: {len}\r\n\r\n",
        url.path()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream
}

/// What a client got: the status and `Retry-After` of the answer, or why there was none.
type Got = Result<(u16, Option<String>), String>;

/// A reqwest POST of `body` (sent whole at once, as `.json` does).
async fn send(url: String, token: String, body: Value) -> Got {
    let r = crate::mcp::http_client()
        .post(&url)
        .bearer_auth(&token)
        .header("Accept", "application/json, text/event-stream")
        .json(&body)
        .send()
        .await
        .map_err(|e| format!("{e:?}"))?;
    let retry = r
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().to_string());
    Ok((r.status().as_u16(), retry))
}

/// A client that writes its whole request before it reads the answer (as Python's
/// `http.client` does), over a socket whose send buffer is 16 KiB (a link slower than
/// loopback): its 1 MiB body is still being written when the gate answers.
async fn send_then_read(url: String, token: String, body: Value) -> Got {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let url = reqwest::Url::parse(&url).unwrap();
    let body = serde_json::to_vec(&body).unwrap();
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_send_buffer_size(16 << 10).unwrap();
    let addr = format!("{}:{}", url.host_str().unwrap(), url.port().unwrap());
    let mut s = socket.connect(addr.parse().unwrap()).await.unwrap();
    let head = format!(
        "POST {} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Content-Length: {}\r\n\r\n",
        url.path(),
        body.len()
    );
    s.write_all(head.as_bytes())
        .await
        .map_err(|e| format!("head: {e}"))?;
    s.write_all(&body).await.map_err(|e| format!("body: {e}"))?;
    let mut answer = Vec::new();
    s.read_to_end(&mut answer)
        .await
        .map_err(|e| format!("answer: {e}"))?;
    let text = String::from_utf8_lossy(&answer).to_ascii_lowercase();
    let status = text.split_whitespace().nth(1).and_then(|c| c.parse().ok());
    let retry = text
        .lines()
        .find_map(|l| l.strip_prefix("retry-after:"))
        .map(|v| v.trim().to_string());
    status
        .map(|s| (s, retry))
        .ok_or_else(|| format!("no answer: {text:?}"))
}

/// With the in-flight budget full (two requests that declared 16 MiB each and send nothing),
/// clients sending a 1 MiB edit (and one of 8 MiB), to the review API and to `/mcp`, get
/// the gate's answer when its 20 s wait for their bytes ends, 503 with `Retry-After`, not a
/// transport error: the gate reads and discards the body it will not handle before
/// answering. It answered before reading, then closed the connection on the body still
/// arriving: a client still writing saw a broken pipe or a reset.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_busy_gate_answers_a_megabyte_body_with_503_and_retry_after() {
    let p = Project::new();
    let gate = Gate::start(&p, &["--policy", "dry-run"]);
    let api_url = format!("{}/api/tools/FileWriteOrEdit", gate.url);
    let mut holders = Vec::new();
    for _ in 0..2 {
        holders.push(body_never_sent(&api_url, &gate.review_token, 16 << 20).await);
    }
    // The holders' heads are read and their bytes taken before the megabyte comes.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let edit = |mib: usize| {
        json!({"arguments": {"file_path": "big.txt", "percentage_to_change": 100,
            "text_or_search_replace_blocks": "x".repeat(mib << 20)}, "client": "busy"})
    };
    let mcp = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "FileWriteOrEdit", "arguments": edit(1)["arguments"]}});
    let (rt, t) = (gate.review_token.clone(), gate.token.clone());
    let sends = [
        (
            "api, reqwest",
            tokio::spawn(send(api_url.clone(), rt.clone(), edit(1))),
        ),
        (
            "mcp, reqwest",
            tokio::spawn(send(gate.mcp_url.clone(), t.clone(), mcp.clone())),
        ),
        (
            "api, reqwest, 8 MiB",
            tokio::spawn(send(api_url.clone(), rt.clone(), edit(8))),
        ),
        (
            "api, write then read",
            tokio::spawn(send_then_read(api_url.clone(), rt, edit(1))),
        ),
        (
            "mcp, write then read",
            tokio::spawn(send_then_read(gate.mcp_url.clone(), t, mcp)),
        ),
    ];
    let mut got = Vec::new();
    for (what, send) in sends {
        got.push((what, send.await.unwrap()));
    }
    eprintln!("{got:#?}");
    for (what, answer) in got {
        assert_eq!(answer, Ok((503, Some("1".to_string()))), "{what}");
    }
    drop(holders);
    assert!(!p.root.join("big.txt").exists());
}
