//! The MCP server end to end: the real binary over stdio and Streamable HTTP, driven by rmcp's
//! client (and, in `mcp_python`, the official Python SDK); the review API; the gate's
//! progress, decisions, cancellation and reviewer loss; the HTTP guard.

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation,
    ProgressNotificationParam,
};
use rmcp::service::{NotificationContext, RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, ServiceExt};
use serde_json::{Value, json};

/// `patchgate ARGS --root ROOT` with the project's state directory, run to its end.
pub(crate) fn cli(p: &Project, args: &[&str]) -> std::process::Output {
    crate::support::bin()
        .args(args)
        .arg("--root")
        .arg(&p.root)
        .env("PATCHGATE_STATE_DIR", &p.state)
        .output()
        .unwrap()
}

/// A project root and a state directory of its own (journal, discovery file, log).
pub(crate) struct Project {
    _dir: tempfile::TempDir,
    /// The root the server edits.
    pub root: PathBuf,
    /// `PATCHGATE_STATE_DIR`.
    pub state: PathBuf,
}

impl Project {
    pub(crate) fn new() -> Project {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("work");
        let state = dir.path().join("state");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&state).unwrap();
        let root = std::fs::canonicalize(root).unwrap();
        Project {
            _dir: dir,
            root,
            state,
        }
    }

    pub(crate) fn write(&self, rel: &str, content: &str) {
        let p = self.root.join(rel);
        if let Some(d) = p.parent() {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(p, content).unwrap();
    }

    pub(crate) fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.root.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
    }

    fn envs(&self, cmd: &mut std::process::Command) {
        cmd.env("PATCHGATE_STATE_DIR", &self.state)
            .env("PATCHGATE_LOG", self.state.join("patchgate.log"))
            .env("PATCHGATE_CONFIG", self.state.join("no-user-config.toml"))
            .env_remove("PATCHGATE_TOKEN");
    }
}

/// A `serve --listen` gate, killed on drop.
pub(crate) struct Gate {
    child: Child,
    pub url: String,
    pub mcp_url: String,
    /// The agents' token (`/mcp` and the agent routes).
    pub token: String,
    /// The reviewers' token (the whole review API).
    pub review_token: String,
}

impl Gate {
    /// Start a gate over `p` with `args` (e.g. `--policy auto`) and wait for its discovery
    /// file.
    pub(crate) fn start(p: &Project, args: &[&str]) -> Gate {
        Gate::start_as(p, args, None)
    }

    /// [`Gate::start`] as another user (uid and gid).
    pub(crate) fn start_as(p: &Project, args: &[&str], uid: Option<u32>) -> Gate {
        let _ = std::fs::remove_file(p.state.join("reviewer.json"));
        let mut cmd = crate::support::bin();
        if let Some(id) = uid {
            use std::os::unix::process::CommandExt;
            cmd.uid(id).gid(id);
        }
        cmd.args(["serve", "--listen", "127.0.0.1:0", "--root"])
            .arg(&p.root)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        p.envs(&mut cmd);
        let mut child = cmd.spawn().expect("spawn serve --listen");
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(bytes) = std::fs::read(p.state.join("reviewer.json"))
                && let Ok(v) = serde_json::from_slice::<Value>(&bytes)
            {
                assert_eq!(v["pid"], child.id(), "the discovery file names the gate");
                assert_eq!(Path::new(v["root"].as_str().unwrap()), p.root);
                return Gate {
                    child,
                    url: v["url"].as_str().unwrap().to_string(),
                    mcp_url: v["mcp_url"].as_str().unwrap().to_string(),
                    token: v["token"].as_str().unwrap().to_string(),
                    review_token: v["review_token"].as_str().unwrap().to_string(),
                };
            }
            if let Ok(Some(status)) = child.try_wait() {
                panic!("serve --listen exited early: {status}");
            }
            assert!(Instant::now() < deadline, "no discovery file after 30 s");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The gate's process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `POST /api/reviews/RUN/decision` with `body` (`{"decision": …, "note": …}`).
    pub(crate) async fn decide(&self, run: &str, body: Value) -> Value {
        self.api(
            reqwest::Method::POST,
            &format!("/api/reviews/{run}/decision"),
            Some(body),
        )
        .await
    }

    /// A review-API request.
    pub(crate) async fn api(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> Value {
        let (status, v) = self.api_status(method, path, body).await;
        assert!(status.is_success(), "{path}: {status} {v}");
        v
    }

    pub(crate) async fn api_status(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> (reqwest::StatusCode, Value) {
        let mut req = http_client()
            .request(method, format!("{}{path}", self.url))
            .bearer_auth(&self.review_token);
        if let Some(b) = body {
            req = req.json(&b);
        }
        let resp = req.send().await.expect("review API request");
        let status = resp.status();
        let v = resp.json::<Value>().await.unwrap_or(Value::Null);
        (status, v)
    }

    /// The run ids of pending reviews.
    pub(crate) async fn pending(&self) -> Vec<String> {
        let list = self.api(reqwest::Method::GET, "/api/reviews", None).await;
        list.as_array()
            .unwrap()
            .iter()
            .filter(|r| r["state"] == "pending")
            .map(|r| r["run_id"].as_str().unwrap().to_string())
            .collect()
    }

    /// Wait until `n` reviews are pending.
    pub(crate) async fn wait_pending(&self, n: usize) -> Vec<String> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let p = self.pending().await;
            if p.len() >= n {
                return p;
            }
            assert!(Instant::now() < deadline, "{} pending, want {n}", p.len());
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The gate's peak resident memory so far, in bytes (`VmHWM` of /proc).
    pub(crate) fn peak_rss(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .expect("the gate's /proc status");
        let kib: u64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .expect("VmHWM");
        kib << 10
    }

    /// Stop the gate the way Ctrl-C does.
    pub(crate) fn interrupt(&mut self) {
        let pid = rustix::process::Pid::from_raw(self.child.id() as i32).expect("a child's pid");
        rustix::process::kill_process(pid, rustix::process::Signal::INT).expect("SIGINT");
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("the gate did not stop on SIGINT");
    }
}

impl Drop for Gate {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) fn http_client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder().build().unwrap()
}

/// An MCP client that records progress notifications.
#[derive(Clone, Default)]
pub(crate) struct Recorder {
    pub progress: Arc<Mutex<Vec<(Instant, String)>>>,
}

impl ClientHandler for Recorder {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _ctx: NotificationContext<RoleClient>,
    ) {
        self.progress
            .lock()
            .unwrap()
            .push((Instant::now(), params.message.unwrap_or_default()));
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("patchgate-it", "1.0"),
        )
    }
}

pub(crate) type Client = RunningService<RoleClient, Recorder>;

/// A client of `serve --stdio --root ROOT ARGS`.
pub(crate) async fn stdio(p: &Project, args: &[&str], rec: Recorder) -> Client {
    stdio_with_state(p, &p.state, args, rec).await
}

/// [`stdio`] with the state directory at `state` (the log and user config stay in the
/// project's own state directory).
pub(crate) async fn stdio_with_state(
    p: &Project,
    state: &Path,
    args: &[&str],
    rec: Recorder,
) -> Client {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_patchgate"));
    cmd.args(["serve", "--stdio", "--root"])
        .arg(&p.root)
        .args(args)
        .env("PATCHGATE_STATE_DIR", state)
        .env("PATCHGATE_LOG", p.state.join("patchgate.log"))
        .env("PATCHGATE_CONFIG", p.state.join("no-user-config.toml"));
    let (transport, _) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn serve --stdio");
    rec.serve(transport).await.expect("initialize over stdio")
}

/// A client of a gate's MCP endpoint.
pub(crate) async fn http(gate: &Gate, rec: Recorder) -> Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(gate.mcp_url.as_str())
            .auth_header(gate.token.clone()),
    );
    rec.serve(transport).await.expect("initialize over HTTP")
}

/// Call a tool; return its envelope, checking the text twin and `isError`.
pub(crate) async fn call(c: &Client, tool: &str, args: Value) -> Value {
    let r = c
        .call_tool(
            CallToolRequestParams::new(tool.to_string())
                .with_arguments(args.as_object().expect("object").clone()),
        )
        .await
        .unwrap_or_else(|e| panic!("{tool}: {e}"));
    let v = r.structured_content.clone().expect("structured content");
    let text = r.content[0].as_text().expect("text content").text.clone();
    assert_eq!(
        serde_json::from_str::<Value>(&text).unwrap(),
        v,
        "text = envelope"
    );
    assert_eq!(
        r.is_error == Some(true),
        v["status"] == "error",
        "isError follows status: {v}"
    );
    v
}

fn ok(v: &Value) {
    assert_eq!(v["status"], "ok", "{v}");
}

fn code(v: &Value, code: &str) {
    assert_eq!(v["status"], "error", "{v}");
    assert_eq!(v["code"], code, "{v}");
    assert!(!v["message"].as_str().unwrap().is_empty(), "{v}");
}

const LIB: &str = "\
fn parse(input: &str) -> Option<u32> {
    input.trim().parse().ok()
}

fn render(value: u32) -> String {
    format!(\"value = {value}\")
}

fn main() {
    let v = parse(\"42\").unwrap();
    println!(\"{}\", render(v));
}
";

/// Every tool and the client-caused error codes, against a server over `p` whose policy is
/// `auto`, a `.patchgate.toml` with a 3 s dry-run TTL, a 64 KiB file cap and a deny rule.
async fn exercise(c: &Client, p: &Project) {
    // tools/list: the reference names and annotations.
    let tools = c.list_all_tools().await.expect("tools/list");
    let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "FileWriteOrEdit",
            "agentic_retrieval",
            "agentic_search",
            "apply_last_dry_run",
            "await_review",
            "batch_patch_files",
            "fast_apply",
            "fast_search",
            "patch_file"
        ]
    );
    for t in &tools {
        let a = t.annotations.as_ref().expect("annotations");
        let read_only = [
            "await_review",
            "agentic_search",
            "fast_search",
            "agentic_retrieval",
        ]
        .contains(&t.name.as_ref());
        assert_eq!(a.read_only_hint, Some(read_only), "{}", t.name);
        assert_eq!(a.destructive_hint, Some(!read_only), "{}", t.name);
        assert!(t.description.as_ref().unwrap().len() > 200, "{}", t.name);
    }

    p.write("src/lib.rs", LIB);
    p.write("secrets/render.rs", "fn render() {}\n");

    // The search sees the code but not what a rule denies.
    let v = call(
        c,
        "agentic_search",
        json!({"query": "parse and render a value"}),
    )
    .await;
    let files: Vec<&String> = v["files"].as_object().unwrap().keys().collect();
    assert!(files[0].ends_with("/src/lib.rs"), "{v}");
    assert!(!files.iter().any(|f| f.contains("secrets")), "{v}");

    // fast_apply: a lazy snippet.
    let v = call(
        c,
        "fast_apply",
        json!({"path": "src/lib.rs", "edit_snippet": "fn render(value: u32) -> String {\n    format!(\"value: {value}\")\n}\n// ... existing code ...\n"}),
    )
    .await;
    ok(&v);
    assert_eq!(v["path"], "src/lib.rs");
    assert_eq!(v["dry_run"], false);
    assert!(
        v["diff"]
            .as_str()
            .unwrap()
            .contains("+    format!(\"value: {value}\")")
    );
    assert!(p.read("src/lib.rs").contains("value: {value}"));
    assert!(p.read("src/lib.rs").contains("fn main()"));
    let applied = v["run_id"].as_str().unwrap().to_string();

    // await_review on a decided run answers its outcome at once.
    let v = call(c, "await_review", json!({"run_id": applied})).await;
    ok(&v);

    // fast_apply creates a missing file from a snippet without placeholders.
    let v = call(
        c,
        "fast_apply",
        json!({"path": "src/new.rs", "edit_snippet": "pub fn new() {}\n"}),
    )
    .await;
    ok(&v);
    assert_eq!(p.read("src/new.rs"), "pub fn new() {}\n");

    // patch_file: every form.
    let v = call(
        c,
        "patch_file",
        json!({"target_file": "src/lib.rs", "search_content": "\"42\"", "replace_content": "\"43\""}),
    )
    .await;
    ok(&v);
    let v = call(
        c,
        "patch_file",
        json!({"target_file": "src/lib.rs", "replacements": [
            {"search_content": "fn parse(", "replace_content": "pub fn parse("},
            {"search_content": "fn render(", "replace_content": "pub fn render("}
        ]}),
    )
    .await;
    ok(&v);
    let v = call(
        c,
        "patch_file",
        json!({"target_file": "src/lib.rs", "insert_line": 1, "insert_content": "//! A library.\n"}),
    )
    .await;
    ok(&v);
    let v = call(
        c,
        "patch_file",
        json!({"target_file": "src/lib.rs", "patch_content": "@@ -11,4 +11,4 @@\n fn main() {\n-    let v = parse(\"43\").unwrap();\n+    let v = parse(\"44\").unwrap();\n     println!(\"{}\", render(v));\n }\n"}),
    )
    .await;
    ok(&v);
    let lib = p.read("src/lib.rs");
    assert!(lib.starts_with("//! A library.\npub fn parse("), "{lib}");
    assert!(lib.contains("parse(\"44\")"), "{lib}");

    // Dry run, then commit by run_id; a second commit is refused.
    let before = p.read("src/lib.rs");
    let v = call(
        c,
        "patch_file",
        json!({"target_file": "src/lib.rs", "search_content": "//! A library.", "replace_content": "//! The library.", "dry_run": true}),
    )
    .await;
    ok(&v);
    assert_eq!(v["dry_run"], true);
    assert!(v["expires_in"].as_u64().unwrap() > 0);
    assert!(v["diff"].as_str().unwrap().contains("+//! The library."));
    assert_eq!(p.read("src/lib.rs"), before, "a dry run writes nothing");
    let run = v["run_id"].as_str().unwrap().to_string();
    let v = call(c, "apply_last_dry_run", json!({"run_id": run})).await;
    ok(&v);
    assert_eq!(v["run_id"], run);
    assert!(p.read("src/lib.rs").starts_with("//! The library."));
    code(
        &call(c, "apply_last_dry_run", json!({"run_id": run})).await,
        "RUN_ALREADY_USED",
    );
    code(
        &call(c, "apply_last_dry_run", json!({"run_id": "nosuchrun1"})).await,
        "RUN_NOT_FOUND",
    );

    // FILE_CHANGED: the file moved on after the dry run.
    let v = call(
        c,
        "patch_file",
        json!({"target_file": "src/new.rs", "search_content": "new()", "replace_content": "create()", "dry_run": true}),
    )
    .await;
    let run = v["run_id"].as_str().unwrap().to_string();
    p.write("src/new.rs", "pub fn new() {}\n// touched\n");
    code(
        &call(c, "apply_last_dry_run", json!({"run_id": run})).await,
        "FILE_CHANGED",
    );
    assert_eq!(p.read("src/new.rs"), "pub fn new() {}\n// touched\n");

    // RUN_EXPIRED: the TTL is 3 s here.
    let v = call(
        c,
        "patch_file",
        json!({"target_file": "src/new.rs", "search_content": "// touched", "replace_content": "// seen", "dry_run": true}),
    )
    .await;
    let run = v["run_id"].as_str().unwrap().to_string();
    tokio::time::sleep(Duration::from_millis(3300)).await;
    code(
        &call(c, "apply_last_dry_run", json!({"run_id": run})).await,
        "RUN_EXPIRED",
    );

    // batch_patch_files: all or nothing.
    p.write("a.txt", "alpha\n");
    p.write("b.txt", "beta\n");
    let v = call(
        c,
        "batch_patch_files",
        json!({"patches": [
            {"target_file": "a.txt", "search_content": "alpha", "replace_content": "ALPHA"},
            {"target_file": "b.txt", "search_content": "gamma", "replace_content": "GAMMA"}
        ]}),
    )
    .await;
    code(&v, "NO_MATCH");
    assert!(v["message"].as_str().unwrap().contains("b.txt"), "{v}");
    assert_eq!(
        p.read("a.txt"),
        "alpha\n",
        "nothing written when one entry fails"
    );
    let v = call(
        c,
        "batch_patch_files",
        json!({"patches": [
            {"target_file": "a.txt", "search_content": "alpha", "replace_content": "ALPHA"},
            {"target_file": "b.txt", "patch_content": "--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-beta\n+BETA\n"}
        ], "dry_run": true}),
    )
    .await;
    ok(&v);
    assert_eq!(v["paths"], json!(["a.txt", "b.txt"]));
    assert_eq!(p.read("a.txt"), "alpha\n");
    let run = v["run_id"].as_str().unwrap().to_string();
    ok(&call(c, "apply_last_dry_run", json!({"run_id": run})).await);
    assert_eq!(p.read("a.txt"), "ALPHA\n");
    assert_eq!(p.read("b.txt"), "BETA\n");

    // FileWriteOrEdit: blocks (absolute path), then a whole file.
    let abs = p.root.join("a.txt");
    let v = call(
        c,
        "FileWriteOrEdit",
        json!({"file_path": abs, "percentage_to_change": 20, "text_or_search_replace_blocks": "<<<<<<< SEARCH\nALPHA\n=======\nAlpha\n>>>>>>> REPLACE\n", "thread_id": "t"}),
    )
    .await;
    ok(&v);
    assert_eq!(p.read("a.txt"), "Alpha\n");
    let v = call(
        c,
        "FileWriteOrEdit",
        json!({"file_path": "docs/guide.md", "percentage_to_change": 100, "text_or_search_replace_blocks": "# Guide\n"}),
    )
    .await;
    ok(&v);
    assert_eq!(p.read("docs/guide.md"), "# Guide\n");
    code(
        &call(
            c,
            "FileWriteOrEdit",
            json!({"file_path": "a.txt", "percentage_to_change": 10, "text_or_search_replace_blocks": "just text\n"}),
        )
        .await,
        "INVALID_INPUT",
    );

    // Client-caused errors.
    code(
        &call(c, "fast_apply", json!({"path": "src/lib.rs"})).await,
        "INVALID_INPUT",
    );
    code(
        &call(
            c,
            "patch_file",
            json!({"target_file": "src/lib.rs", "search": "x", "replace_content": "y"}),
        )
        .await,
        "INVALID_INPUT",
    );
    code(
        &call(
            c,
            "patch_file",
            json!({"target_file": "../outside.txt", "search_content": "x", "replace_content": "y"}),
        )
        .await,
        "INVALID_PATH",
    );
    code(
        &call(
            c,
            "fast_apply",
            json!({"path": ".git/config", "edit_snippet": "[core]\n"}),
        )
        .await,
        "INVALID_PATH",
    );
    code(
        &call(
            c,
            "patch_file",
            json!({"target_file": "secrets/key.txt", "insert_line": -1, "insert_content": "x\n"}),
        )
        .await,
        "DENIED_BY_RULE",
    );
    p.write("dup.txt", "same\nother\nsame\n");
    let v = call(
        c,
        "patch_file",
        json!({"target_file": "dup.txt", "search_content": "same", "replace_content": "new"}),
    )
    .await;
    code(&v, "AMBIGUOUS_MATCH");
    assert!(v["message"].as_str().unwrap().contains("line 3"), "{v}");
    code(
        &call(
            c,
            "patch_file",
            json!({"target_file": "dup.txt", "search_content": "absent", "replace_content": "x"}),
        )
        .await,
        "NO_MATCH",
    );
    code(
        &call(
            c,
            "patch_file",
            json!({"target_file": "dup.txt", "search_content": "other", "replace_content": "other"}),
        )
        .await,
        "APPLY_NOOP",
    );
    p.write(
        "twice.py",
        "def a():\n    x = 1\n    return x\n\n\ndef b():\n    x = 1\n    return x\n",
    );
    code(
        &call(
            c,
            "fast_apply",
            json!({"path": "twice.py", "edit_snippet": "    x = 1\n    log(x)\n    return x\n"}),
        )
        .await,
        "NEEDS_MORE_CONTEXT",
    );
    let long: String = (0..40)
        .map(|i| format!("value_{i} = compute({i}, 'some longer text')\n"))
        .collect();
    p.write("long.py", &long);
    code(
        &call(
            c,
            "fast_apply",
            // First and last line adjacent around a new one, no placeholder: the snippet
            // shows the file whole, so the 38 lines between would go.
            json!({"path": "long.py", "edit_snippet": "value_0 = compute(0, 'some longer text')\nvalue_1 = 2\nvalue_39 = compute(39, 'some longer text')\n"}),
        )
        .await,
        "TRUNCATION_DETECTED",
    );
    let settings: String = (0..20).map(|i| format!("setting_{i} = {i}\n")).collect();
    p.write("settings.py", &settings);
    let changed: String = (0..20)
        .map(|i| format!("setting_{i} = {}\n", i * 10))
        .collect();
    code(
        &call(
            c,
            "fast_apply",
            json!({"path": "settings.py", "edit_snippet": changed}),
        )
        .await,
        "BLAST_RADIUS_EXCEEDED",
    );
    p.write(
        "helper.py",
        "import os\n\n\ndef helper(x):\n    y = x + 1\n    return x * 2\n\n\ndef other():\n    pass\n",
    );
    code(
        &call(
            c,
            "fast_apply",
            json!({"path": "helper.py", "edit_snippet": "# ... existing code ...\ndef helper(x):\n    # rest of the code remains the same as before, see above\n    return x * 3\n# ... existing code ...\n"}),
        )
        .await,
        "MARKER_LEAKAGE",
    );
    std::fs::write(p.root.join("blob.bin"), b"\x7fELF\0\0\x01binary").unwrap();
    code(
        &call(
            c,
            "patch_file",
            json!({"target_file": "blob.bin", "search_content": "ELF", "replace_content": "FLE"}),
        )
        .await,
        "BINARY_FILE",
    );
    std::fs::write(p.root.join("utf16.txt"), b"\xFF\xFEh\0i\0").unwrap();
    code(
        &call(
            c,
            "patch_file",
            json!({"target_file": "utf16.txt", "search_content": "hi", "replace_content": "yo"}),
        )
        .await,
        "ENCODING_ERROR",
    );
    p.write("big.txt", &"0123456789abcdef\n".repeat(5000));
    code(
        &call(
            c,
            "patch_file",
            json!({"target_file": "big.txt", "insert_line": 1, "insert_content": "x\n"}),
        )
        .await,
        "FILE_TOO_LARGE",
    );
    code(
        &call(
            c,
            "FileWriteOrEdit",
            json!({"file_path": "a.txt/inside.txt", "percentage_to_change": 100, "text_or_search_replace_blocks": "x\n"}),
        )
        .await,
        "FS_ERROR",
    );
    code(
        &call(c, "await_review", json!({"run_id": "nosuchrun2"})).await,
        "RUN_NOT_FOUND",
    );
    // An unknown tool is the one protocol error.
    let err = c
        .call_tool(CallToolRequestParams::new("edit_file").with_arguments(Default::default()))
        .await;
    assert!(err.is_err(), "unknown tool: {err:?}");
}

const CONFIG: &str = "\
dry_run_ttl_s = 3
max_file_bytes = 65536

[[rules]]
glob = \"secrets/**\"
action = \"deny\"
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_tool_and_error_over_stdio() {
    let p = Project::new();
    p.write(".patchgate.toml", CONFIG);
    let c = stdio(&p, &["--policy", "auto"], Recorder::default()).await;
    exercise(&c, &p).await;
    c.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_tool_and_error_over_http() {
    let p = Project::new();
    p.write(".patchgate.toml", CONFIG);
    let gate = Gate::start(&p, &["--policy", "auto"]);
    let c = http(&gate, Recorder::default()).await;
    exercise(&c, &p).await;
    c.cancel().await.unwrap();
    // The journal holds what the auto policy applied.
    let log = crate::support::bin()
        .args(["log", "--json", "--root"])
        .arg(&p.root)
        .env("PATCHGATE_STATE_DIR", &p.state)
        .output()
        .unwrap();
    let lines = String::from_utf8(log.stdout).unwrap();
    assert!(lines.lines().count() >= 8, "{lines}");
    assert!(lines.contains("\"tool\":\"fast_apply\""), "{lines}");
}

/// A dry-run policy keeps every edit for a commit by run_id, whatever the call asked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dry_run_policy_writes_only_on_commit() {
    let p = Project::new();
    p.write("a.txt", "one\n");
    let c = stdio(&p, &[], Recorder::default()).await;
    let v = call(
        &c,
        "patch_file",
        json!({"target_file": "a.txt", "search_content": "one", "replace_content": "two"}),
    )
    .await;
    ok(&v);
    assert_eq!(v["dry_run"], true, "{v}");
    assert_eq!(p.read("a.txt"), "one\n");
    let run = v["run_id"].as_str().unwrap();
    ok(&call(&c, "apply_last_dry_run", json!({"run_id": run})).await);
    assert_eq!(p.read("a.txt"), "two\n");
    c.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn permission_errors_reach_the_agent() {
    use std::os::unix::fs::PermissionsExt;
    let p = Project::new();
    p.write("locked/a.txt", "one\n");
    let locked = p.root.join("locked");
    let root_user = rustix::process::geteuid().is_root();
    // Root ignores permission bits: then the servers run as `nobody`, over a tree they may
    // read everywhere and write only outside `locked/`.
    let uid = root_user.then_some(65534u32);
    if root_user {
        for d in [p.root.parent().unwrap(), &p.root] {
            std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o777)).unwrap();
        }
        // The state directory is the user's own (one others can write is refused).
        std::os::unix::fs::chown(&p.state, Some(65534), Some(65534)).unwrap();
        std::fs::set_permissions(&p.state, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::fs::set_permissions(
            p.root.join("locked/a.txt"),
            std::fs::Permissions::from_mode(0o644),
        )
        .unwrap();
    }
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o555)).unwrap();
    let edit =
        json!({"target_file": "locked/a.txt", "search_content": "one", "replace_content": "two"});

    // Over stdio.
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_patchgate"));
    cmd.args(["serve", "--stdio", "--policy", "auto", "--root"])
        .arg(&p.root)
        .env("PATCHGATE_STATE_DIR", &p.state)
        .env("PATCHGATE_LOG", p.state.join("stdio.log"));
    if let Some(id) = uid {
        cmd.uid(id).gid(id);
    }
    let (transport, _) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let c = Recorder::default().serve(transport).await.unwrap();
    code(
        &call(&c, "patch_file", edit.clone()).await,
        "PERMISSION_ERROR",
    );
    c.cancel().await.unwrap();

    // Over HTTP.
    let gate = Gate::start_as(&p, &["--policy", "auto"], uid);
    let c = http(&gate, Recorder::default()).await;
    code(&call(&c, "patch_file", edit).await, "PERMISSION_ERROR");
    c.cancel().await.unwrap();
    assert_eq!(p.read("locked/a.txt"), "one\n");
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// The acceptance scenario: a gated call over HTTP decided through the review API after
/// 25 s; the client sees a progress notification every 10 s (`PROGRESS_EVERY`), then the
/// result, which comes only once the decision is taken.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gated_call_reports_progress_until_the_decision() {
    let p = Project::new();
    p.write("src/x.rs", "fn x() -> u32 {\n    1\n}\n");
    let gate = Gate::start(&p, &["--policy", "gate"]);
    let rec = Recorder::default();
    let c = http(&gate, rec.clone()).await;
    let started = Instant::now();
    let call_fut = async {
        let v = call(
            &c,
            "patch_file",
            json!({"target_file": "src/x.rs", "search_content": "    1", "replace_content": "    2"}),
        )
        .await;
        (v, Instant::now())
    };
    let decide = async {
        let pending = gate.wait_pending(1).await;
        let review = gate
            .api(
                reqwest::Method::GET,
                &format!("/api/reviews/{}", pending[0]),
                None,
            )
            .await;
        assert_eq!(review["client"], "patchgate-it 1.0");
        assert_eq!(review["paths"], json!(["src/x.rs"]));
        tokio::time::sleep(Duration::from_secs(25)).await;
        assert_eq!(p.read("src/x.rs"), "fn x() -> u32 {\n    1\n}\n");
        let deciding = Instant::now();
        let decided = gate
            .api(
                reqwest::Method::POST,
                &format!("/api/reviews/{}/decision", pending[0]),
                Some(json!({"decision": "accept", "note": "fine"})),
            )
            .await;
        (decided, deciding)
    };
    let ((v, answered), (decided, deciding)) = tokio::join!(call_fut, decide);
    assert!(
        answered >= deciding,
        "the call answered {:?} before the decision was sent",
        deciding - answered
    );
    ok(&v);
    assert_eq!(decided["status"], "ok");
    assert_eq!(v["review"]["decision"], "accept");
    assert_eq!(v["review"]["note"], "fine");
    assert_eq!(v["review"]["hunks_accepted"], 1);
    assert_eq!(p.read("src/x.rs"), "fn x() -> u32 {\n    2\n}\n");
    let progress = rec.progress.lock().unwrap().clone();
    assert!(progress.len() >= 2, "progress: {progress:?}");
    assert!(
        progress[0].1.starts_with("awaiting review of src/x.rs, "),
        "{progress:?}"
    );
    // One notification every 10 s of waiting, saying how long by the gate's clock (not the
    // test's sleep): about 10 s, then 20 s; none after the answer.
    let mut last = started;
    for (n, (at, message)) in (1u64..).zip(&progress) {
        let secs: u64 = message
            .strip_prefix("awaiting review of src/x.rs, ")
            .and_then(|t| t.strip_suffix('s'))
            .and_then(|t| t.parse().ok())
            .unwrap_or_else(|| panic!("{message}"));
        assert!((10 * n..10 * n + 3).contains(&secs), "{progress:?}");
        assert!(
            *at - last >= Duration::from_secs(9),
            "{message} came {:?} after the one before",
            *at - last
        );
        assert!(*at <= answered, "{message} came after the answer");
        last = *at;
    }
    c.cancel().await.unwrap();
}

/// Decisions a person can take reach the agent: a rejection with its reason, a partial
/// acceptance with the diff that was written, an edited acceptance; and the review timeout
/// answers `pending`, after which `await_review` gets the decision.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn decisions_reach_the_agent() {
    let p = Project::new();
    let file: String = (1..=30).map(|i| format!("line {i}\n")).collect();
    p.write("f.txt", &file);
    let gate = Gate::start(&p, &["--policy", "gate", "--review-timeout", "2"]);
    let c = http(&gate, Recorder::default()).await;

    // Timeout: pending with the run id; await_review then gets the decision.
    let v = call(
        &c,
        "patch_file",
        json!({"target_file": "f.txt", "search_content": "line 1\n", "replace_content": "LINE 1\n"}),
    )
    .await;
    assert_eq!(v["status"], "pending", "{v}");
    assert!(v["message"].as_str().unwrap().contains("await_review"));
    let run = v["run_id"].as_str().unwrap().to_string();
    let (rejected, _) = tokio::join!(
        call(&c, "await_review", json!({"run_id": run, "timeout_s": 30})),
        async {
            tokio::time::sleep(Duration::from_millis(500)).await;
            gate.decide(
                &run,
                json!({"decision": "reject", "note": "keep lowercase"}),
            )
            .await
        }
    );
    assert_eq!(rejected["status"], "rejected", "{rejected}");
    assert_eq!(rejected["review"]["note"], "keep lowercase");
    assert!(
        rejected["message"]
            .as_str()
            .unwrap()
            .contains("keep lowercase")
    );
    assert_eq!(p.read("f.txt"), file);

    // Two hunks; the reviewer keeps the second only.
    let edit = json!({"target_file": "f.txt", "replacements": [
        {"search_content": "line 2\n", "replace_content": "LINE 2\n"},
        {"search_content": "line 29\n", "replace_content": "LINE 29\n"}
    ]});
    let (v, _) = tokio::join!(call(&c, "patch_file", edit), async {
        let run = gate.wait_pending(1).await.remove(0);
        gate.decide(&run, json!({"decision": "accept", "hunks": [1]}))
            .await
    });
    ok(&v);
    assert_eq!(v["review"]["hunks_accepted"], 1);
    assert_eq!(v["review"]["hunks_total"], 2);
    let diff = v["diff"].as_str().unwrap();
    assert!(
        diff.contains("+LINE 29") && !diff.contains("+LINE 2\n"),
        "{diff}"
    );
    let now = p.read("f.txt");
    assert!(
        now.contains("LINE 29\n") && now.contains("line 2\n"),
        "{now}"
    );

    // The reviewer edits the proposal before accepting.
    let (v, _) = tokio::join!(
        call(
            &c,
            "patch_file",
            json!({"target_file": "f.txt", "search_content": "line 3\n", "replace_content": "LINE 3\n"}),
        ),
        async {
            let run = gate.wait_pending(1).await.remove(0);
            let edited = now.replace("line 3\n", "Line three\n");
            gate.decide(&run, json!({"decision": "accept", "content": edited}))
                .await
        }
    );
    ok(&v);
    assert_eq!(v["review"]["edited_by_reviewer"], true);
    assert!(p.read("f.txt").contains("Line three\n"));

    // A decided run cannot be decided again.
    let (status, body) = gate
        .api_status(
            reqwest::Method::POST,
            &format!("/api/reviews/{}/decision", v["run_id"].as_str().unwrap()),
            Some(json!({"decision": "accept"})),
        )
        .await;
    assert_eq!(status, reqwest::StatusCode::CONFLICT, "{body}");
    assert_eq!(body["code"], "RUN_ALREADY_USED");
    c.cancel().await.unwrap();
}

/// A client that cancels its call withdraws the review; `await_review` then says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_a_call_withdraws_its_review() {
    let p = Project::new();
    p.write("a.txt", "one\n");
    let gate = Gate::start(&p, &["--policy", "gate"]);
    let c = http(&gate, Recorder::default()).await;
    let cancelled = tokio::time::timeout(
        Duration::from_secs(2),
        call(
            &c,
            "patch_file",
            json!({"target_file": "a.txt", "search_content": "one", "replace_content": "two"}),
        ),
    )
    .await;
    assert!(cancelled.is_err(), "the call should still be waiting");
    // The dropped request sent notifications/cancelled: the review is withdrawn.
    expect_withdrawn(&gate, &c).await;
    assert_eq!(p.read("a.txt"), "one\n");
    c.cancel().await.unwrap();
}

/// Wait (up to 10 s) until the gate lists a withdrawn (expired) review, and check that
/// awaiting it answers REVIEW_TIMEOUT.
async fn expect_withdrawn(gate: &Gate, c: &Client) {
    let deadline = Instant::now() + Duration::from_secs(10);
    let run = loop {
        let list = gate.api(reqwest::Method::GET, "/api/reviews", None).await;
        if let Some(r) = list
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["state"] == "expired")
        {
            break r["run_id"].as_str().unwrap().to_string();
        }
        assert!(Instant::now() < deadline, "not withdrawn: {list}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    code(
        &call(c, "await_review", json!({"run_id": run})).await,
        "REVIEW_TIMEOUT",
    );
}

/// A reviewer that goes away fails the waiting calls with REVIEWER_GONE: the last attached
/// reviewer (an event stream) leaving, the gate stopping, or nobody to review at all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reviewer_gone_reaches_the_agent() {
    let p = Project::new();
    p.write("a.txt", "one\n");

    // A stdio server on its own with a gate policy has nobody to ask.
    let c = stdio(&p, &["--policy", "gate"], Recorder::default()).await;
    code(
        &call(
            &c,
            "patch_file",
            json!({"target_file": "a.txt", "search_content": "one", "replace_content": "two"}),
        )
        .await,
        "REVIEWER_GONE",
    );
    c.cancel().await.unwrap();

    // An attached reviewer leaves.
    let mut gate = Gate::start(&p, &["--policy", "gate"]);
    let c = http(&gate, Recorder::default()).await;
    let events = http_client()
        .get(format!("{}/api/events", gate.url))
        .bearer_auth(&gate.review_token)
        .send()
        .await
        .unwrap();
    assert_eq!(events.status(), 200);
    let (v, _) = tokio::join!(
        call(
            &c,
            "patch_file",
            json!({"target_file": "a.txt", "search_content": "one", "replace_content": "two"}),
        ),
        async {
            gate.wait_pending(1).await;
            drop(events);
        }
    );
    code(&v, "REVIEWER_GONE");

    // The gate stops while a call waits.
    let (v, _) = tokio::join!(
        call(
            &c,
            "patch_file",
            json!({"target_file": "a.txt", "search_content": "one", "replace_content": "three"}),
        ),
        async {
            gate.wait_pending(1).await;
            let g = &mut gate;
            g.interrupt();
        }
    );
    code(&v, "REVIEWER_GONE");
    assert_eq!(p.read("a.txt"), "one\n");
    assert!(
        !p.state.join("reviewer.json").exists(),
        "the discovery file is removed on exit"
    );
}

/// `serve --stdio` finds a live gate through the discovery file, forwards the edit there and
/// relays its progress; paths stay the agent's own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_forwards_to_a_live_gate_and_relays_progress() {
    let p = Project::new();
    p.write("pkg/a.txt", "one\n");
    let gate = Gate::start(&p, &["--policy", "gate"]);
    let sub = Project {
        _dir: tempfile::tempdir().unwrap(),
        root: p.root.join("pkg"),
        state: p.state.clone(),
    };
    let rec = Recorder::default();
    // The stdio server's own policy would be auto; the gate's (a person decides) wins.
    let c = stdio(&sub, &["--policy", "auto"], rec.clone()).await;
    let (v, _) = tokio::join!(
        call(
            &c,
            "patch_file",
            json!({"target_file": "a.txt", "search_content": "one", "replace_content": "two"}),
        ),
        async {
            let run = gate.wait_pending(1).await.remove(0);
            let r = gate
                .api(reqwest::Method::GET, &format!("/api/reviews/{run}"), None)
                .await;
            assert_eq!(r["paths"], json!(["pkg/a.txt"]));
            tokio::time::sleep(Duration::from_secs(11)).await;
            gate.decide(&run, json!({"decision": "accept"})).await
        }
    );
    ok(&v);
    assert_eq!(v["path"], "a.txt", "the agent's own path: {v}");
    assert_eq!(p.read("pkg/a.txt"), "two\n");
    assert!(!rec.progress.lock().unwrap().is_empty(), "progress relayed");

    // The stdio server's root stays its own: a path under the gate's wider root but outside
    // `pkg/` is refused before it reaches the gate.
    p.write("top.txt", "top\n");
    let outside = p.root.join("top.txt").display().to_string();
    for path in ["../top.txt", outside.as_str()] {
        let v = tokio::time::timeout(
            Duration::from_secs(10),
            call(
                &c,
                "patch_file",
                json!({"target_file": path, "search_content": "top", "replace_content": "widened"}),
            ),
        )
        .await
        .expect("refused at once, not sent to the gate for review");
        code(&v, "INVALID_PATH");
    }
    assert!(gate.pending().await.is_empty());
    assert_eq!(p.read("top.txt"), "top\n");

    // A cancelled forwarded call withdraws the review at the gate; await_review (forwarded
    // too) then says REVIEW_TIMEOUT.
    let cancelled = tokio::time::timeout(
        Duration::from_secs(2),
        call(
            &c,
            "patch_file",
            json!({"target_file": "a.txt", "search_content": "two", "replace_content": "three"}),
        ),
    )
    .await;
    assert!(cancelled.is_err());
    expect_withdrawn(&gate, &c).await;
    assert_eq!(p.read("pkg/a.txt"), "two\n");
    c.cancel().await.unwrap();
}

/// A patch_file call through `c` that waits at gate `own` only (`other` sees nothing), and
/// that a person accepts there; its result.
async fn accepted_at(c: &Client, own: &Gate, other: &Gate, args: Value) -> Value {
    let (v, run) = tokio::join!(call(c, "patch_file", args), async {
        let run = own.wait_pending(1).await.remove(0);
        assert!(
            other.pending().await.is_empty(),
            "the other gate saw nothing"
        );
        own.decide(&run, json!({"decision": "accept"})).await;
        run
    });
    ok(&v);
    assert_eq!(v["run_id"], run);
    v
}

/// Two gates on two roots (one inside the other) share a state directory: each stdio server
/// reaches the gate of the deepest root holding its own; with no gate, every edit's result
/// says that nobody reviews it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_gates_each_stdio_server_reaches_its_own() {
    let outer = Project::new();
    outer.write("a.txt", "outer\n");
    outer.write("inner/b.txt", "inner\n");
    let inner = Project {
        _dir: tempfile::tempdir().unwrap(),
        root: outer.root.join("inner"),
        state: outer.state.clone(),
    };
    let gate_outer = Gate::start(&outer, &["--policy", "gate"]);
    let gate_inner = Gate::start(&inner, &["--policy", "gate"]);
    assert_eq!(
        std::fs::read_dir(outer.state.join("gates"))
            .unwrap()
            .count(),
        2,
        "one discovery entry per live gate"
    );
    let c_outer = stdio(&outer, &[], Recorder::default()).await;
    let c_inner = stdio(&inner, &[], Recorder::default()).await;
    let edit = |c: &'static str, from: &'static str, to: &'static str| json!({"target_file": c, "search_content": from, "replace_content": to});
    accepted_at(
        &c_outer,
        &gate_outer,
        &gate_inner,
        edit("a.txt", "outer", "OUTER"),
    )
    .await;
    assert_eq!(outer.read("a.txt"), "OUTER\n");
    let v = accepted_at(
        &c_inner,
        &gate_inner,
        &gate_outer,
        edit("b.txt", "inner", "INNER"),
    )
    .await;
    assert_eq!(outer.read("inner/b.txt"), "INNER\n");
    assert!(
        v["warnings"].as_array().is_none_or(std::vec::Vec::is_empty),
        "{v}"
    );
    c_outer.cancel().await.unwrap();
    c_inner.cancel().await.unwrap();

    // No gate for this root: the edit is a dry-run of the stdio server's own, and says so.
    let alone = Project::new();
    alone.write("c.txt", "c\n");
    let c = stdio(&alone, &[], Recorder::default()).await;
    let v = call(&c, "patch_file", edit("c.txt", "c", "C")).await;
    assert_eq!(v["status"], "ok", "{v}");
    assert_eq!(v["dry_run"], true, "{v}");
    let w = v["warnings"][0].as_str().unwrap_or_default();
    assert!(w.contains("not reviewed by a person"), "{v}");
    assert_eq!(alone.read("c.txt"), "c\n");
    c.cancel().await.unwrap();
}

/// The HTTP guard: token, Host, Origin, body size; and the review API's shape.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_guard_and_review_api() {
    let p = Project::new();
    p.write(".patchgate.toml", "max_file_bytes = 1024\n");
    p.write("a.txt", "one\n");
    let gate = Gate::start(&p, &["--policy", "dry-run", "--token", "s3cret"]);
    assert_eq!(gate.token, "s3cret");
    let h = http_client();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "curl", "version": "1"}}});
    let post = |token: Option<&str>, host: Option<&str>, origin: Option<&str>| {
        let mut r = h
            .post(&gate.mcp_url)
            .header("accept", "application/json, text/event-stream")
            .json(&init);
        if let Some(t) = token {
            r = r.bearer_auth(t);
        }
        if let Some(hh) = host {
            r = r.header("host", hh);
        }
        if let Some(o) = origin {
            r = r.header("origin", o);
        }
        r.send()
    };
    assert_eq!(post(None, None, None).await.unwrap().status(), 401);
    assert_eq!(post(Some("wrong"), None, None).await.unwrap().status(), 401);
    assert_eq!(
        post(Some("s3cret"), Some("evil.example:80"), None)
            .await
            .unwrap()
            .status(),
        403
    );
    assert_eq!(
        post(Some("s3cret"), None, Some("http://evil.example"))
            .await
            .unwrap()
            .status(),
        403
    );
    assert_eq!(
        post(Some("s3cret"), None, Some("null"))
            .await
            .unwrap()
            .status(),
        403
    );
    assert_eq!(
        post(
            Some("s3cret"),
            Some("localhost"),
            Some("http://localhost:3000")
        )
        .await
        .unwrap()
        .status(),
        200
    );
    for path in ["/api/reviews", "/api/events", "/api/info"] {
        let r = h.get(format!("{}{path}", gate.url)).send().await.unwrap();
        assert_eq!(r.status(), 401, "{path}");
    }
    // A message that is not JSON is JSON-RPC's parse error.
    let r = h
        .post(&gate.mcp_url)
        .bearer_auth("s3cret")
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["error"]["code"], -32700, "{v}");
    // A call whose params have the wrong shape is invalid params, not an unknown method.
    for params in [
        json!({"name": 5}),
        json!({"name": "patch_file", "arguments": "x"}),
    ] {
        let r = h
            .post(&gate.mcp_url)
            .bearer_auth("s3cret")
            .header("Accept", "application/json, text/event-stream")
            .json(&json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}))
            .send()
            .await
            .unwrap();
        let v: Value = r.json().await.unwrap();
        assert_eq!(v["error"]["code"], -32602, "{v}");
        assert_eq!(v["id"], 7, "{v}");
    }
    // Exactly one Host header: a second could differ from the one checked.
    let one = raw_status(&gate.url, "Host: localhost\r\n", &gate.review_token).await;
    assert_eq!(one, 200);
    let two = raw_status(
        &gate.url,
        "Host: localhost\r\nHost: evil.example\r\n",
        &gate.review_token,
    )
    .await;
    assert_eq!(two, 400);
    // Bodies are capped (2 × max_file_bytes + 1 MiB), on the declared length before any
    // byte of the body is read, for the review API and the MCP endpoint alike.
    let api_url = format!("{}/api/tools/patch_file", gate.url);
    for url in [api_url.as_str(), gate.mcp_url.as_str()] {
        let (status, body) = oversized_post(url, "s3cret", 3 << 20).await;
        assert_eq!(status, 413, "{url}: {body}");
        assert!(body.contains("FILE_TOO_LARGE"), "{url}: {body}");
    }

    // The review API: info, a dry-run through the tool endpoint, a person's commit.
    let info = gate.api(reqwest::Method::GET, "/api/info", None).await;
    let info: patchgate::api::types::Info = serde_json::from_value(info).unwrap();
    assert_eq!(info.policy, "dry-run");
    assert_eq!(info.name, "patchgate");
    assert_eq!(info.pending, 0);
    let v = gate
        .api(
            reqwest::Method::POST,
            "/api/tools/patch_file",
            Some(json!({"arguments": {"target_file": "a.txt", "search_content": "one", "replace_content": "two"}, "client": "script"})),
        )
        .await;
    assert_eq!(v["dry_run"], true, "{v}");
    let run = v["run_id"].as_str().unwrap();
    // The agents' token cannot review: no listing, no decision, no commit, no undo.
    assert_ne!(gate.token, gate.review_token);
    for (method, path) in [
        (reqwest::Method::GET, "/api/reviews".to_string()),
        (reqwest::Method::GET, "/api/events".to_string()),
        (
            reqwest::Method::POST,
            format!("/api/reviews/{run}/decision"),
        ),
        (reqwest::Method::POST, format!("/api/reviews/{run}/commit")),
        (reqwest::Method::POST, "/api/undo".to_string()),
    ] {
        let r = h
            .request(method, format!("{}{path}", gate.url))
            .bearer_auth("s3cret")
            .json(&json!({"decision": "accept"}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 403, "{path}");
    }
    assert_eq!(p.read("a.txt"), "one\n");
    let list = gate.api(reqwest::Method::GET, "/api/reviews", None).await;
    assert_eq!(list[0]["client"], "script");
    assert_eq!(list[0]["state"], "dry-run");
    let v = gate
        .api(
            reqwest::Method::POST,
            &format!("/api/reviews/{run}/commit"),
            None,
        )
        .await;
    assert_eq!(v["status"], "ok");
    assert_eq!(p.read("a.txt"), "two\n");
    let (status, body) = gate
        .api_status(
            reqwest::Method::POST,
            "/api/reviews/nosuchrun/decision",
            Some(json!({"decision": "accept"})),
        )
        .await;
    assert_eq!(status, 404, "{body}");
    let (status, _) = gate
        .api_status(
            reqwest::Method::POST,
            &format!("/api/reviews/{run}/decision"),
            Some(json!({"decision": "perhaps"})),
        )
        .await;
    assert_eq!(status, 400);
    // A second decision on a decided run is refused: the first stands.
    let (status, body) = gate
        .api_status(
            reqwest::Method::POST,
            &format!("/api/reviews/{run}/decision"),
            Some(json!({"decision": "reject", "note": "too late"})),
        )
        .await;
    assert_eq!(status, 409, "{body}");
    assert!(body.to_string().contains("first decision stands"), "{body}");
    assert_eq!(p.read("a.txt"), "two\n");
    // Undo through the API restores the file.
    let undone = gate
        .api(reqwest::Method::POST, "/api/undo", Some(json!({})))
        .await;
    assert_eq!(undone["run_id"], run);
    assert_eq!(p.read("a.txt"), "one\n");
}

/// POST only the head of a request that declares a `len`-byte body, and read the answer's
/// status and body. (Sending the body too would race the server's early refusal: a client
/// still writing can see the connection close before it reads the answer.)
/// The status of a raw `GET /api/info` with the given Host header lines.
async fn raw_status(base: &str, host_lines: &str, token: &str) -> u16 {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let url = reqwest::Url::parse(base).unwrap();
    let addr = format!("{}:{}", url.host_str().unwrap(), url.port().unwrap());
    let mut stream = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let req = format!(
        "GET /api/info HTTP/1.1\r\n{host_lines}Authorization: Bearer {token}\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(req.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut answer)).await;
    let text = String::from_utf8_lossy(&answer);
    text.split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no status in {text:?}"))
}

pub(crate) async fn oversized_post(url: &str, token: &str, len: usize) -> (u16, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let url = reqwest::Url::parse(url).unwrap();
    let host = format!("{}:{}", url.host_str().unwrap(), url.port().unwrap());
    let mut stream = tokio::net::TcpStream::connect(&host).await.unwrap();
    let head = format!(
        "POST {} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Content-Length: {len}\r\n\r\n",
        url.path()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(10), async {
        let mut buf = [0u8; 4096];
        loop {
            let n = stream.read(&mut buf).await.unwrap_or(0);
            if n == 0 {
                break;
            }
            answer.extend_from_slice(&buf[..n]);
            let text = String::from_utf8_lossy(&answer);
            if let Some((head, body)) = text.split_once("\r\n\r\n") {
                let length = head.lines().find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                });
                if length.is_some_and(|n| body.len() >= n) {
                    break;
                }
            }
        }
    })
    .await;
    assert!(read.is_ok(), "no answer within 10 s");
    let text = String::from_utf8_lossy(&answer).into_owned();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .to_string();
    (status, body)
}

/// The review API's event stream announces new and decided reviews.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_announce_new_and_decided_reviews() {
    use tokio_stream::StreamExt;
    let p = Project::new();
    p.write("a.txt", "one\n");
    let gate = Gate::start(&p, &["--policy", "dry-run"]);
    let resp = http_client()
        .get(format!("{}/api/events", gate.url))
        .bearer_auth(&gate.review_token)
        .send()
        .await
        .unwrap();
    let mut body = resp.bytes_stream();
    let mut seen = String::new();
    let mut read_until = async |seen: &mut String, needle: &str| {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !seen.contains(needle) {
            assert!(Instant::now() < deadline, "no `{needle}` in {seen}");
            let chunk = tokio::time::timeout(Duration::from_secs(10), body.next())
                .await
                .unwrap()
                .unwrap()
                .unwrap();
            seen.push_str(&String::from_utf8_lossy(&chunk));
        }
    };
    read_until(&mut seen, "event: ready").await;
    let v = gate
        .api(
            reqwest::Method::POST,
            "/api/tools/patch_file",
            Some(json!({"arguments": {"target_file": "a.txt", "search_content": "one", "replace_content": "two"}})),
        )
        .await;
    let run = v["run_id"].as_str().unwrap().to_string();
    read_until(&mut seen, "event: new").await;
    assert!(seen.contains(&run));
    gate.api(
        reqwest::Method::POST,
        &format!("/api/reviews/{run}/commit"),
        None,
    )
    .await;
    read_until(&mut seen, "event: decided").await;
    drop(body);

    // Reconnecting after the `new` event replays the `decided` one it would have missed.
    let new_id: u64 = seen
        .split("\n\n")
        .find(|block| block.contains("event: new"))
        .and_then(|block| block.lines().find_map(|l| l.strip_prefix("id: ")))
        .expect("the new event has an id")
        .trim()
        .parse()
        .unwrap();
    let resp = http_client()
        .get(format!("{}/api/events", gate.url))
        .bearer_auth(&gate.review_token)
        .header("Last-Event-ID", new_id.to_string())
        .send()
        .await
        .unwrap();
    let mut body = resp.bytes_stream();
    let mut again = String::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !again.contains("event: decided") {
        assert!(Instant::now() < deadline, "no replay in {again}");
        let chunk = tokio::time::timeout(Duration::from_secs(10), body.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        again.push_str(&String::from_utf8_lossy(&chunk));
    }
    assert!(
        again.contains(&run) && !again.contains("event: new"),
        "{again}"
    );
}

/// 50 concurrent HTTP clients × 20 edits each under `auto`: every call answered, every file
/// exactly right (each client appends to its own file and to one file they all share).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fifty_clients_twenty_edits_each() {
    let p = Project::new();
    p.write("shared.txt", "# shared\n");
    let gate = Arc::new(Gate::start(&p, &["--policy", "auto"]));
    let mut tasks = Vec::new();
    for client in 0..50 {
        let gate = gate.clone();
        let root = p.root.clone();
        tasks.push(tokio::spawn(async move {
            std::fs::write(root.join(format!("c{client}.txt")), "start\n").unwrap();
            let c = http(&gate, Recorder::default()).await;
            for i in 0..20 {
                let v = call(
                    &c,
                    "patch_file",
                    json!({"target_file": format!("c{client}.txt"), "insert_line": -1, "insert_content": format!("edit {i}\n")}),
                )
                .await;
                assert_eq!(v["status"], "ok", "{v}");
                let v = call(
                    &c,
                    "patch_file",
                    json!({"target_file": "shared.txt", "insert_line": -1, "insert_content": format!("c{client} e{i}\n")}),
                )
                .await;
                assert_eq!(v["status"], "ok", "{v}");
            }
            c.cancel().await.unwrap();
        }));
    }
    for t in tasks {
        t.await.expect("client task");
    }
    for client in 0..50 {
        let want: String = std::iter::once("start\n".to_string())
            .chain((0..20).map(|i| format!("edit {i}\n")))
            .collect();
        assert_eq!(p.read(&format!("c{client}.txt")), want, "client {client}");
    }
    let shared = p.read("shared.txt");
    let mut lines: Vec<&str> = shared.lines().skip(1).collect();
    assert_eq!(lines.len(), 1000, "every shared append landed once");
    lines.sort_unstable();
    lines.dedup();
    assert_eq!(lines.len(), 1000);
    // Each client's appends are in its own order.
    for client in 0..50 {
        let mine: Vec<&str> = shared
            .lines()
            .filter(|l| l.starts_with(&format!("c{client} ")))
            .collect();
        let want: Vec<String> = (0..20).map(|i| format!("c{client} e{i}")).collect();
        assert_eq!(mine, want);
    }
}

/// `patchgate config` prints the stdio form (it survives gate restarts) with patchgate's
/// tools pre-approved, and with `--http` the running gate's endpoint and its kept token.
#[test]
fn config_prints_snippets_for_the_running_gate() {
    let p = Project::new();
    let run = |client: &str, extra: &[&str]| {
        let mut cmd = crate::support::bin();
        cmd.args(["config", client, "--root"])
            .arg(&p.root)
            .args(extra);
        p.envs(&mut cmd);
        let out = cmd.output().unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    let s = run("vscode", &[]);
    let v: Value = serde_json::from_str(&s).unwrap();
    assert_eq!(v["servers"]["patchgate"]["type"], "stdio");
    assert_eq!(
        v["servers"]["patchgate"]["args"],
        json!(["serve", "--stdio", "--root", p.root])
    );
    let mut gate = Gate::start(&p, &["--policy", "auto"]);
    // The stdio form stays the default with a gate running.
    let codex = run("codex", &[]);
    assert!(codex.contains("\"serve\", \"--stdio\""), "{codex}");
    assert!(
        codex.contains("default_tools_approval_mode = \"approve\""),
        "{codex}"
    );
    let s = run("claude", &["--http"]);
    assert!(
        s.starts_with(&format!(
            "claude mcp add --scope project --transport http patchgate {} --header 'Authorization: Bearer {}'",
            gate.mcp_url, gate.token
        )),
        "{s}"
    );
    assert!(s.contains("config claude --write --only approval"), "{s}");
    let v: Value = serde_json::from_str(&run("cursor", &["--http"])).unwrap();
    assert_eq!(v["mcpServers"]["patchgate"]["url"], gate.mcp_url);
    // The agents' token is kept across a restart: an HTTP configuration survives it.
    let token = gate.token.clone();
    let _ = gate.child.kill();
    let _ = gate.child.wait();
    let again = Gate::start(&p, &["--policy", "auto"]);
    assert_eq!(again.token, token);
    // With no gate running, --http names the address to start it on, with that token.
    drop(again);
    let s = run("codex", &["--http", "--listen", "127.0.0.1:9999"]);
    assert!(s.contains("url = \"http://127.0.0.1:9999/mcp\""), "{s}");
    assert!(s.contains(&format!("Bearer {token}")), "{s}");
}

/// `patchgate doctor`: the gates that run, whether the root is covered, and each client
/// configuration that names patchgate, pre-approved or not.
#[test]
fn doctor_shows_the_gates_and_the_client_configurations() {
    let p = Project::new();
    let home = p.state.join("home");
    std::fs::create_dir_all(home.join(".codex")).unwrap();
    let doctor = || {
        let mut cmd = crate::support::bin();
        cmd.args(["doctor", "--root"])
            .arg(&p.root)
            .env("HOME", &home);
        p.envs(&mut cmd);
        let out = cmd.output().unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    let s = doctor();
    assert!(s.contains("gates: none running"), "{s}");
    assert!(s.contains("no gate covers it"), "{s}");
    assert!(
        s.contains("configured: no client's file names patchgate"),
        "{s}"
    );
    // One `clients:` header, over the readiness of each client.
    assert_eq!(s.matches("clients:").count(), 1, "{s}");
    // The stdio configuration `patchgate config codex` prints, put where Codex reads it.
    let mut cmd = crate::support::bin();
    cmd.args(["config", "codex", "--root"]).arg(&p.root);
    p.envs(&mut cmd);
    let toml = String::from_utf8(cmd.output().unwrap().stdout).unwrap();
    std::fs::write(home.join(".codex/config.toml"), toml).unwrap();
    let gate = Gate::start(&p, &[]);
    let s = doctor();
    assert!(s.contains(&gate.url), "{s}");
    assert!(s.contains("reviewed by the gate at"), "{s}");
    assert!(
        s.contains("codex") && s.contains("stdio server for") && s.contains("tools pre-approved"),
        "{s}"
    );
}

#[test]
fn a_second_gate_on_the_same_root_refuses_to_start_and_names_the_first() {
    let p = Project::new();
    let first = Gate::start(&p, &[]);
    // Another state directory: the lock must not live there.
    let other_state = tempfile::tempdir().unwrap();
    let mut second = crate::support::bin()
        .args(["serve", "--listen", "127.0.0.1:0", "--root"])
        .arg(&p.root)
        .env("PATCHGATE_STATE_DIR", other_state.path())
        .env("PATCHGATE_LOG", other_state.path().join("patchgate.log"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while second.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = second.kill();
            panic!("a second gate on the same root started");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = second.wait_with_output().unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("pid {}", first.child.id())) && stderr.contains(&first.url),
        "{stderr}"
    );
    assert!(!other_state.path().join("reviewer.json").exists());
    // Once the first stops, the root is free.
    drop(first);
    let _second = Gate::start(&p, &[]);
}

/// A repository's `.patchgate.toml` cannot loosen the gate, and the gate's own config and
/// env files always wait for a person.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repository_cannot_loosen_the_gate() {
    let p = Project::new();
    p.write(
        ".patchgate.toml",
        "policy = \"auto\"\n[[rules]]\nglob = \"**\"\naction = \"auto\"\n",
    );
    p.write("a.txt", "one\n");
    let gate = Gate::start(&p, &["--policy", "gate"]);
    let c = http(&gate, Recorder::default()).await;
    let (v, _) = tokio::join!(
        call(
            &c,
            "patch_file",
            json!({"target_file": "a.txt", "search_content": "one", "replace_content": "two"}),
        ),
        async {
            // It waits for a person, though the repository says auto.
            let run = gate.wait_pending(1).await.remove(0);
            assert_eq!(p.read("a.txt"), "one\n");
            gate.decide(&run, json!({"decision": "reject", "note": "no"}))
                .await
        }
    );
    assert_eq!(v["status"], "rejected", "{v}");
    c.cancel().await.unwrap();
    drop(gate);

    // Under `--policy auto`, an edit of the gate's config or an env file still waits.
    let gate = Gate::start(&p, &["--policy", "auto"]);
    let c = http(&gate, Recorder::default()).await;
    p.write(".patchgate.toml", "policy = \"auto\"\n");
    p.write(".env", "KEY=1\n");
    for file in [".patchgate.toml", ".env"] {
        let search = p.read(file);
        let (v, _) = tokio::join!(
            call(
                &c,
                "patch_file",
                json!({"target_file": file, "search_content": search.trim_end(), "replace_content": "x = 1"}),
            ),
            async {
                let run = gate.wait_pending(1).await.remove(0);
                gate.decide(&run, json!({"decision": "reject"})).await
            }
        );
        assert_eq!(v["status"], "rejected", "{file}: {v}");
        assert_eq!(p.read(file), search, "{file}");
    }
    c.cancel().await.unwrap();
}

/// A repository's `.patchgate.toml` tightens a looser command line (docs/DESIGN.md §4, §7):
/// under `--policy auto` its `policy = "gate"` holds every edit for a person and its deny rule
/// refuses; with no policy of its own its `gate` rule holds the paths it names and the others
/// are applied at once; its `policy = "dry-run"` keeps a stdio server's edits for a commit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repositorys_stricter_policy_tightens_the_command_line() {
    let p = Project::new();
    let edit =
        |f: &str| json!({"target_file": f, "search_content": "one", "replace_content": "two"});
    p.write(
        ".patchgate.toml",
        "policy = \"gate\"\n[[rules]]\nglob = \"vault/**\"\naction = \"deny\"\n",
    );
    p.write("a.txt", "one\n");
    p.write("vault/b.txt", "one\n");
    let gate = Gate::start(&p, &["--policy", "auto"]);
    let c = http(&gate, Recorder::default()).await;
    let (v, _) = tokio::join!(call(&c, "patch_file", edit("a.txt")), async {
        let run = gate.wait_pending(1).await.remove(0);
        assert_eq!(p.read("a.txt"), "one\n", "written before the decision");
        gate.decide(&run, json!({"decision": "reject", "note": "not now"}))
            .await
    });
    assert_eq!(v["status"], "rejected", "{v}");
    assert_eq!(p.read("a.txt"), "one\n");
    code(
        &call(&c, "patch_file", edit("vault/b.txt")).await,
        "DENIED_BY_RULE",
    );
    assert_eq!(p.read("vault/b.txt"), "one\n");
    c.cancel().await.unwrap();
    drop(gate);

    p.write(
        ".patchgate.toml",
        "[[rules]]\nglob = \"src/**\"\naction = \"gate\"\n",
    );
    p.write("src/c.txt", "one\n");
    let gate = Gate::start(&p, &["--policy", "auto"]);
    let c = http(&gate, Recorder::default()).await;
    let v = call(&c, "patch_file", edit("a.txt")).await;
    ok(&v);
    assert_eq!(p.read("a.txt"), "two\n", "auto outside the rule: {v}");
    let (v, _) = tokio::join!(call(&c, "patch_file", edit("src/c.txt")), async {
        let run = gate.wait_pending(1).await.remove(0);
        assert_eq!(p.read("src/c.txt"), "one\n", "written before the decision");
        gate.decide(&run, json!({"decision": "accept"})).await
    });
    ok(&v);
    assert_eq!(v["review"]["decision"], "accept", "{v}");
    assert_eq!(p.read("src/c.txt"), "two\n");
    c.cancel().await.unwrap();
    drop(gate);

    p.write(".patchgate.toml", "policy = \"dry-run\"\n");
    p.write("d.txt", "one\n");
    let c = stdio(&p, &["--policy", "auto"], Recorder::default()).await;
    let v = call(&c, "patch_file", edit("d.txt")).await;
    ok(&v);
    assert_eq!(v["dry_run"], true, "{v}");
    assert_eq!(p.read("d.txt"), "one\n");
    let run = v["run_id"].as_str().unwrap();
    ok(&call(&c, "apply_last_dry_run", json!({"run_id": run})).await);
    assert_eq!(p.read("d.txt"), "two\n");
    c.cancel().await.unwrap();
}

/// `--no-token` opens `/mcp` to local tools that cannot send headers, never the review API;
/// `--token-file` keeps the token off the command line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_token_opens_mcp_only_and_a_token_file_works() {
    let p = Project::new();
    let gate = Gate::start(&p, &["--no-token"]);
    let h = http_client();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-03-26", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}});
    let r = h
        .post(&gate.mcp_url)
        .header("Accept", "application/json, text/event-stream")
        .json(&init)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    for path in ["/api/reviews", "/api/events"] {
        let r = h.get(format!("{}{path}", gate.url)).send().await.unwrap();
        assert_eq!(r.status(), 401, "{path}");
    }
    gate.api(reqwest::Method::GET, "/api/reviews", None).await;
    drop(gate);

    // A non-loopback --no-token is refused.
    let out = crate::support::bin()
        .args(["serve", "--listen", "0.0.0.0:0", "--no-token", "--root"])
        .arg(&p.root)
        .env("PATCHGATE_STATE_DIR", p.state.join("other"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("loopback"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let token_file = p.state.join("agent-token");
    std::fs::write(&token_file, "from-a-file\n").unwrap();
    let gate = Gate::start(&p, &["--token-file", token_file.to_str().unwrap()]);
    assert_eq!(gate.token, "from-a-file");
}
