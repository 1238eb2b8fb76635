//! Helpers shared by the integration tests: running the binary and locating the corpus.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// The `patchgate` binary built for these tests.
pub(crate) fn bin() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_patchgate"));
    // The machine's own user config (policy, rules, a model) stays out of the tests.
    cmd.env(
        "PATCHGATE_CONFIG",
        "/nonexistent/patchgate-test-config.toml",
    );
    cmd
}

/// Run `patchgate ARGS` with `stdin` and wait for it.
pub(crate) fn run(args: &[&str], stdin: &str) -> Output {
    let mut cmd = bin();
    cmd.args(args);
    run_cmd(cmd, stdin)
}

/// Run `cmd` (a [`bin`] with its arguments and environment) with `stdin` and wait for it.
pub(crate) fn run_cmd(mut cmd: Command, stdin: &str) -> Output {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn patchgate");
    // A run that fails early (a missing file) may exit before reading its input.
    if let Err(e) = child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
    {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "write stdin: {e}");
    }
    child.wait_with_output().expect("wait for patchgate")
}

/// The shared corpus of real edits (`../shared/corpus/git-history` beside the checkout).
pub(crate) fn corpus_dir() -> PathBuf {
    corpus("git-history")
}

/// One of the shared corpora by name (`git-history`, `git-history-wide`, `model-snippets`).
pub(crate) fn corpus(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/corpus")
        .join(name);
    assert!(
        dir.is_dir(),
        "the corpus is missing at {}: CI checks out ../shared beside the repository",
        dir.display()
    );
    dir
}

/// A local stand-in for an OpenAI-compatible `chat/completions` endpoint (no real model is
/// reachable from the test machines): `reply(n, body)` gives the assistant message for the
/// n-th request (0-based). Returns the base URL and the request bodies received.
pub(crate) fn fake_chat(
    reply: impl Fn(usize, &serde_json::Value) -> serde_json::Value + Send + 'static,
) -> (
    String,
    std::sync::Arc<std::sync::Mutex<Vec<serde_json::Value>>>,
) {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut length = 0usize;
            let mut line = String::new();
            while reader.read_line(&mut line).unwrap_or(0) > 0 {
                if line == "\r\n" {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
                line.clear();
            }
            let mut body = vec![0u8; length];
            reader.read_exact(&mut body).unwrap();
            let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
            let n = {
                let mut l = log.lock().unwrap();
                l.push(body.clone());
                l.len() - 1
            };
            let message = reply(n, &body);
            let reply = serde_json::json!({
                "id": format!("cmpl-{n}"), "object": "chat.completion", "model": "stand-in",
                "choices": [{"index": 0, "finish_reason": "stop", "message": message}]
            })
            .to_string();
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}",
                reply.len(),
                reply
            );
        }
    });
    (url, seen)
}
