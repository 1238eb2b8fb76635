//! The real coding clients end to end: Claude Code (`@anthropic-ai/claude-code`) and the Codex
//! CLI (`@openai/codex`), installed from npm into a cache shared across test runs, configured
//! with nothing but `patchgate config CLIENT --write` in a temporary HOME, then run headless
//! (`claude -p`, `codex exec`) against a local stand-in for the model's API (no model is
//! reachable from the test machines). The stand-in asks for one `fast_apply` edit; the test
//! checks that the edit waits at the gate as a pending review with the file untouched and the
//! client still waiting, accepts it through the review API, and then that the client exits 0,
//! the file holds the merged edit and the tool result the model got says `ok` — with no
//! permission prompt and no manual step. Without `npm` on PATH the tests say so and pass.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::mcp::{Gate, Project};

/// The Claude Code release the test runs (`PATCHGATE_TEST_CLAUDE_CODE` overrides the spec,
/// e.g. `@anthropic-ai/claude-code@latest`).
const CLAUDE_CODE: &str = "@anthropic-ai/claude-code@2.1.332";
/// The Codex CLI release the test runs (`PATCHGATE_TEST_CODEX` overrides the spec).
const CODEX: &str = "@openai/codex@0.169.0";

/// The file the agent edits, before and after its `fast_apply` snippet.
const BEFORE: &str = "fn parse(input: &str) -> Option<u32> {\n    input.trim().parse().ok()\n}\n\nfn render(value: u32) -> String {\n    value.to_string()\n}\n";
const AFTER: &str = "fn parse(input: &str) -> Option<u32> {\n    input.trim().parse().ok()\n}\n\nfn render(value: u32) -> String {\n    format!(\"value: {value}\")\n}\n";
const SNIPPET: &str = "// ... existing code ...\nfn render(value: u32) -> String {\n    format!(\"value: {value}\")\n}\n";
const PROMPT: &str = "Make render in src/lib.rs print `value: N`.";

/// How long the client may take to reach the gate, and to finish once the edit is accepted.
const TO_GATE: Duration = Duration::from_secs(90);
const TO_EXIT: Duration = Duration::from_secs(60);

/// Claude Code in `-p` mode, configured by `patchgate config claude --write` (`.mcp.json` and
/// `.claude/settings.local.json` in the project), calls patchgate's `fast_apply` (loaded
/// through its ToolSearch, as a real model does) without asking; the edit waits at the gate
/// and lands on accept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_headless_edit_waits_at_the_gate_and_lands_on_accept() {
    let spec = std::env::var("PATCHGATE_TEST_CLAUDE_CODE").unwrap_or(CLAUDE_CODE.into());
    let Some(claude) = npm_client(&spec, "claude") else {
        return;
    };
    let t = Setup::new();
    t.config("claude", &[]);
    let mcp: Value = serde_json::from_str(&t.p.read(".mcp.json")).expect(".mcp.json is JSON");
    let server = &mcp["mcpServers"]["patchgate"];
    assert_eq!(
        (&server["args"][0], &server["args"][1]),
        (&json!("serve"), &json!("--stdio")),
        "{mcp}"
    );
    let local: Value = serde_json::from_str(&t.p.read(".claude/settings.local.json")).unwrap();
    assert!(
        local["permissions"]["allow"]
            .as_array()
            .is_some_and(|a| a.contains(&json!("mcp__patchgate__*"))),
        "{local}"
    );
    let model = StandIn::start(Api::Anthropic);
    let mut cmd = Command::new(&claude);
    cmd.args(["-p", PROMPT])
        .env("ANTHROPIC_BASE_URL", &model.base)
        .env("ANTHROPIC_API_KEY", "sk-stand-in")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("DISABLE_TELEMETRY", "1");
    t.run_client("claude", cmd, &model).await;
}

/// `codex exec`, configured by `patchgate config codex --write` (in `~/.codex/config.toml`, as
/// the project is not trusted), calls patchgate's
/// `fast_apply` (namespace `mcp__patchgate`) under its default `approval: never` without
/// asking; the edit waits at the gate and lands on accept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_exec_headless_edit_waits_at_the_gate_and_lands_on_accept() {
    let spec = std::env::var("PATCHGATE_TEST_CODEX").unwrap_or(CODEX.into());
    let Some(codex) = npm_client(&spec, "codex") else {
        return;
    };
    let t = Setup::new();
    let model = StandIn::start(Api::Responses);
    // The model provider is the test's own part of the user's Codex configuration; `config
    // codex --write` must keep it when it merges its table in.
    let codex_home = t.home.join(".codex");
    std::fs::create_dir_all(&codex_home).unwrap();
    let provider = format!(
        "model = \"stand-in\"\nmodel_provider = \"standin\"\n\n[model_providers.standin]\nname = \"Stand-in\"\nbase_url = \"{}\"\nwire_api = \"responses\"\nenv_key = \"STANDIN_API_KEY\"\n",
        model.base_v1()
    );
    std::fs::write(codex_home.join("config.toml"), &provider).unwrap();
    // Codex reads a project's .codex/config.toml only in a project it trusts, and it does not
    // trust this one: the table must land in the user's file.
    t.config("codex", &[]);
    let written = std::fs::read_to_string(codex_home.join("config.toml")).unwrap();
    let toml: toml::Value = toml::from_str(&written).expect("config.toml stays TOML");
    assert_eq!(
        toml["model_providers"]["standin"]["base_url"].as_str(),
        Some(model.base_v1().as_str()),
        "the user's own settings are kept:\n{written}"
    );
    let server = &toml["mcp_servers"]["patchgate"];
    assert_eq!(
        server["default_tools_approval_mode"].as_str(),
        Some("approve"),
        "{written}"
    );
    let mut cmd = Command::new(&codex);
    // The project is no git repository (and not trusted).
    cmd.args(["exec", "--skip-git-repo-check", PROMPT])
        .env("STANDIN_API_KEY", "sk-stand-in");
    t.run_client("codex", cmd, &model).await;
}

/// What `patchgate config claude` prints is shell commands that, run as printed with the real
/// `claude` on PATH, leave the same files as `config claude --write`: a `--write` after them
/// finds everything in place.
#[test]
fn config_claude_prints_commands_with_the_same_effect_as_write() {
    let spec = std::env::var("PATCHGATE_TEST_CLAUDE_CODE").unwrap_or(CLAUDE_CODE.into());
    let Some(claude) = npm_client(&spec, "claude") else {
        return;
    };
    let t = Setup::new();
    let mut print = crate::support::bin();
    t.envs(&mut print);
    let out = print
        .args(["config", "claude", "--root"])
        .arg(&t.p.root)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let commands = String::from_utf8(out.stdout).unwrap();
    assert!(!commands.lines().any(|l| l.starts_with('#')), "{commands}");
    let mut sh = Command::new("sh");
    t.envs(&mut sh);
    let path = sh
        .get_envs()
        .find(|(k, _)| *k == "PATH")
        .and_then(|(_, v)| v.map(ToOwned::to_owned))
        .unwrap();
    let path = std::env::join_paths(
        std::iter::once(claude.parent().unwrap().to_path_buf()).chain(std::env::split_paths(&path)),
    )
    .unwrap();
    let ran = sh
        .env("PATH", path)
        .args(["-e", "-c", &commands])
        .current_dir(t.home.as_path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        ran.status.success(),
        "the printed commands failed:\n{commands}\n{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    let mut write = crate::support::bin();
    t.envs(&mut write);
    let out = write
        .args(["config", "claude", "--write", "--root"])
        .arg(&t.p.root)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(said.lines().count(), 2, "{said}");
    assert!(
        said.lines().all(|l| l.starts_with("unchanged ")),
        "the printed commands did not do what --write does:\n{commands}\n{said}"
    );
}

/// A project with the file to edit, a gate over it (policy gate), and a temporary HOME.
struct Setup {
    p: Project,
    gate: Gate,
    _home_dir: tempfile::TempDir,
    home: PathBuf,
}

impl Setup {
    fn new() -> Setup {
        let p = Project::new();
        p.write("src/lib.rs", BEFORE);
        let home_dir = tempfile::tempdir().expect("tempdir");
        let home = std::fs::canonicalize(home_dir.path()).unwrap();
        for d in [".config", ".cache", ".local/share", ".local/state"] {
            std::fs::create_dir_all(home.join(d)).unwrap();
        }
        let gate = Gate::start(&p, &[]);
        Setup {
            p,
            gate,
            _home_dir: home_dir,
            home,
        }
    }

    /// The environment of everything the test starts: the temporary HOME and XDG dirs, and
    /// patchgate's state directory (where the gate's discovery file is).
    fn envs(&self, cmd: &mut Command) {
        // The patchgate on PATH is the binary under test: `config` names the one on PATH, and
        // an installed (older) one must not stand in for it.
        let bin_dir = self.home.join("bin");
        if !bin_dir.join("patchgate").exists() {
            std::fs::create_dir_all(&bin_dir).unwrap();
            std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_patchgate"), bin_dir.join("patchgate"))
                .unwrap();
        }
        let path = std::env::var_os("PATH").unwrap_or_default();
        let path =
            std::env::join_paths(std::iter::once(bin_dir).chain(std::env::split_paths(&path)))
                .unwrap();
        cmd.env_clear()
            .env("PATH", path)
            .env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", self.home.join(".config"))
            .env("XDG_CACHE_HOME", self.home.join(".cache"))
            .env("XDG_DATA_HOME", self.home.join(".local/share"))
            .env("XDG_STATE_HOME", self.home.join(".local/state"))
            .env("LANG", "C.UTF-8")
            .env("PATCHGATE_STATE_DIR", &self.p.state)
            .env("PATCHGATE_LOG", self.p.state.join("patchgate.log"))
            .env("PATCHGATE_CONFIG", self.p.state.join("no-user-config.toml"));
    }

    /// `patchgate config CLIENT --write --root ROOT ARGS`, as a user runs it.
    fn config(&self, client: &str, args: &[&str]) {
        let mut cmd = crate::support::bin();
        self.envs(&mut cmd);
        cmd.args(["config", client, "--write", "--root"])
            .arg(&self.p.root)
            .args(args)
            .current_dir(&self.p.root)
            .stdin(Stdio::null());
        let out = cmd.output().expect("run patchgate config");
        assert!(
            out.status.success(),
            "patchgate config {client} --write: {}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Run the client (`cmd`, in the project), wait for its edit at the gate, check that it
    /// waits there, accept it, and check the client's exit, the file and the tool result.
    async fn run_client(&self, name: &str, mut cmd: Command, model: &StandIn) {
        let start = Instant::now();
        let out = self.home.join(format!("{name}.out"));
        let err = self.home.join(format!("{name}.err"));
        // Its own variables first: envs() clears the environment.
        let own: Vec<_> = cmd
            .get_envs()
            .map(|(k, v)| (k.to_owned(), v.map(ToOwned::to_owned)))
            .collect();
        self.envs(&mut cmd);
        for (k, v) in own {
            if let Some(v) = v {
                cmd.env(k, v);
            }
        }
        cmd.current_dir(&self.p.root)
            .stdin(Stdio::null())
            .stdout(File::create(&out).unwrap())
            .stderr(File::create(&err).unwrap());
        let mut child = Running(cmd.spawn().unwrap_or_else(|e| panic!("spawn {name}: {e}")));
        let report = |what: &str| {
            format!(
                "{name} {what}\n--- stdout\n{}\n--- stderr\n{}\n--- model requests\n{}\n--- fast_apply result\n{}",
                std::fs::read_to_string(&out).unwrap_or_default(),
                std::fs::read_to_string(&err).unwrap_or_default(),
                model.summary(),
                model.tool_result_text().unwrap_or_else(|| "(none)".into())
            )
        };

        // The edit reaches the gate and waits there.
        let run = loop {
            if let Some(run) = self.gate.pending().await.into_iter().next() {
                break run;
            }
            if let Ok(Some(status)) = child.0.try_wait() {
                panic!(
                    "{}",
                    report(&format!(
                        "exited ({status}) before any edit reached the gate"
                    ))
                );
            }
            assert!(
                start.elapsed() < TO_GATE,
                "{}",
                report("reached no gate in time")
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        let at_gate = start.elapsed();
        let review = self
            .gate
            .api(reqwest::Method::GET, &format!("/api/reviews/{run}"), None)
            .await;
        assert_eq!(review["tool"], "fast_apply", "{review}");
        assert_eq!(review["paths"], json!(["src/lib.rs"]), "{review}");
        assert!(
            model.asked_for_the_edit(),
            "{}",
            report("pending, but not by the model's call")
        );
        // Held for a while: the client waits for the person, the file stays as it was.
        tokio::time::sleep(Duration::from_secs(2)).await;
        assert!(
            child.0.try_wait().unwrap().is_none(),
            "{}",
            report("did not wait for the review")
        );
        assert_eq!(
            self.p.read("src/lib.rs"),
            BEFORE,
            "written before the decision"
        );
        assert_eq!(self.gate.pending().await, std::slice::from_ref(&run));

        let decided = self.gate.decide(&run, json!({"decision": "accept"})).await;
        assert_eq!(decided["status"], "ok", "{decided}");

        let deadline = Instant::now() + TO_EXIT;
        let status = loop {
            if let Some(status) = child.0.try_wait().unwrap() {
                break status;
            }
            assert!(
                Instant::now() < deadline,
                "{}",
                report("did not exit after the accept")
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        assert!(status.success(), "{}", report(&format!("failed: {status}")));
        assert_eq!(self.p.read("src/lib.rs"), AFTER);
        let result = model
            .tool_result()
            .unwrap_or_else(|| panic!("{}", report("sent the model no fast_apply result")));
        assert_eq!(result["status"], "ok", "{result}");
        assert_eq!(result["run_id"], run.as_str(), "{result}");
        assert_eq!(result["review"]["decision"], "accept", "{result}");
        eprintln!(
            "{name}: the edit reached the gate after {:.1} s; the run took {:.1} s",
            at_gate.as_secs_f64(),
            start.elapsed().as_secs_f64()
        );
    }
}

/// A child process killed (and reaped) when the test ends, passed or not.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
        }
        let _ = self.0.wait();
    }
}

/// `node_modules/.bin/BIN` of the npm package `spec`, installed once into
/// `target/npm-clients/` and shared by every later run; `None` (the test is skipped, and says
/// why) when `npm` is not on PATH. The install goes into a temporary directory renamed into
/// place only when complete, under a file lock: two test processes never see half an install.
fn npm_client(spec: &str, bin: &str) -> Option<PathBuf> {
    match Command::new("npm").arg("--version").output() {
        Ok(out) if out.status.success() => {}
        Ok(out) => panic!(
            "npm --version failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(e) => {
            eprintln!("skipped: the test installs {spec} with npm, and npm is not on PATH ({e})");
            return None;
        }
    }
    let cache = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/npm-clients");
    std::fs::create_dir_all(&cache).unwrap();
    let name: String = spec
        .trim_start_matches('@')
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect();
    let dir = cache.join(&name);
    let exe = dir.join("node_modules/.bin").join(bin);
    let lock = File::create(cache.join(format!("{name}.lock"))).unwrap();
    lock.lock().expect("lock the npm cache");
    if !exe.exists() {
        let started = Instant::now();
        let tmp = tempfile::Builder::new()
            .prefix(&format!(".{name}-"))
            .tempdir_in(&cache)
            .unwrap();
        let log = tmp.path().join("npm-install.log");
        let mut npm = Running(
            Command::new("npm")
                .args(["install", "--no-audit", "--no-fund", "--prefix"])
                .arg(tmp.path())
                .arg(spec)
                .stdin(Stdio::null())
                .stdout(File::create(&log).unwrap())
                .stderr(Stdio::from(
                    File::create(tmp.path().join("npm-install.err")).unwrap(),
                ))
                .spawn()
                .expect("spawn npm"),
        );
        let deadline = Instant::now() + Duration::from_secs(600);
        let status = loop {
            if let Some(s) = npm.0.try_wait().unwrap() {
                break s;
            }
            assert!(
                Instant::now() < deadline,
                "npm install {spec}: no end in 600 s"
            );
            std::thread::sleep(Duration::from_millis(200));
        };
        let errors =
            std::fs::read_to_string(tmp.path().join("npm-install.err")).unwrap_or_default();
        assert!(status.success(), "npm install {spec}: {status}\n{errors}");
        let staged = tmp.path().join("node_modules/.bin").join(bin);
        assert!(
            staged.exists(),
            "npm install {spec} made no {}",
            staged.display()
        );
        // An earlier run that died between a rename and a check leaves nothing to keep.
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::rename(tmp.keep(), &dir).expect("move the install into place");
        eprintln!(
            "installed {spec} in {:.1} s into {}",
            started.elapsed().as_secs_f64(),
            dir.display()
        );
    }
    drop(lock);
    Some(exe)
}

/// Which model API the stand-in speaks.
#[derive(Clone, Copy, PartialEq)]
enum Api {
    /// Anthropic's `POST /v1/messages` (Claude Code), streamed as server-sent events.
    Anthropic,
    /// OpenAI's Responses API `POST /v1/responses` (Codex), streamed as server-sent events.
    Responses,
}

/// A local stand-in for the model's API: it asks for one `fast_apply` edit of src/lib.rs and,
/// once it has the result, answers with a short text. Every request is recorded.
struct StandIn {
    /// The base URL (`http://127.0.0.1:PORT`).
    base: String,
    requests: Arc<Mutex<Vec<(String, Value)>>>,
    api: Api,
}

/// The patchgate tool the model calls, as each client names it.
const CLAUDE_TOOL: &str = "mcp__patchgate__fast_apply";
const CODEX_NAMESPACE: &str = "mcp__patchgate";

impl StandIn {
    fn start(api: Api) -> StandIn {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let log = requests.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let log = log.clone();
                std::thread::spawn(move || serve(stream, api, &log));
            }
        });
        StandIn {
            base,
            requests,
            api,
        }
    }

    fn base_v1(&self) -> String {
        format!("{}/v1", self.base)
    }

    /// Whether the model has been asked and has answered with the fast_apply call.
    fn asked_for_the_edit(&self) -> bool {
        self.requests.lock().unwrap().iter().any(
            |(_, body)| matches!(reply(self.api, body), Reply::Call(ref n, _) if n != "ToolSearch"),
        )
    }

    /// The result of the fast_apply call the client sent back to the model (the envelope).
    fn tool_result(&self) -> Option<Value> {
        envelope(&self.tool_result_text()?)
    }

    /// The text of that result.
    fn tool_result_text(&self) -> Option<String> {
        let requests = self.requests.lock().unwrap();
        requests.iter().rev().find_map(|(_, body)| match self.api {
            Api::Anthropic => {
                let messages = body["messages"].as_array()?;
                let id = messages.iter().find_map(|m| {
                    m["content"].as_array()?.iter().find_map(|c| {
                        (c["type"] == "tool_use" && c["name"] == CLAUDE_TOOL)
                            .then(|| c["id"].clone())
                    })
                })?;
                messages.iter().find_map(|m| {
                    let c = m["content"]
                        .as_array()?
                        .iter()
                        .find(|c| c["type"] == "tool_result" && c["tool_use_id"] == id)?;
                    Some(text_of(&c["content"]))
                })
            }
            Api::Responses => {
                let input = body["input"].as_array()?;
                let id = input.iter().find_map(|i| {
                    (i["type"] == "function_call" && i["namespace"] == CODEX_NAMESPACE)
                        .then(|| i["call_id"].clone())
                })?;
                let out = input
                    .iter()
                    .find(|i| i["type"] == "function_call_output" && i["call_id"] == id)?;
                Some(text_of(&out["output"]))
            }
        })
    }

    /// One line per request: its path and the tools it offered, for failure messages.
    fn summary(&self) -> String {
        let requests = self.requests.lock().unwrap();
        if requests.is_empty() {
            return "(none)".into();
        }
        requests
            .iter()
            .map(|(path, body)| {
                let tools: Vec<String> = body["tools"]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .map(|t| t["name"].as_str().unwrap_or("?").to_string())
                            .collect()
                    })
                    .unwrap_or_default();
                format!("{path}: tools {tools:?} -> {:?}", reply(self.api, body))
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// A tool result's text: a string, or the text parts of a list.
fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The JSON envelope in a tool result's text (Codex puts "Wall time: …\nOutput:\n" before it).
fn envelope(text: &str) -> Option<Value> {
    let at = text.find('{')?;
    serde_json::Deserializer::from_str(&text[at..])
        .into_iter::<Value>()
        .next()?
        .ok()
}

/// What the stand-in answers to one request.
#[derive(Debug)]
enum Reply {
    /// Call a tool: its name (Claude) or its name in a namespace (Codex), and its input.
    Call(String, Value),
    /// A short final text.
    Text,
}

/// The stand-in model's turn: call fast_apply once (loading it through ToolSearch first when
/// Claude Code defers it), then answer with text.
fn reply(api: Api, body: &Value) -> Reply {
    let args = json!({"path": "src/lib.rs", "edit_snippet": SNIPPET});
    let empty = Vec::new();
    let tools = body["tools"].as_array().unwrap_or(&empty);
    match api {
        Api::Anthropic => {
            let called: Vec<&str> = body["messages"]
                .as_array()
                .unwrap_or(&empty)
                .iter()
                .filter(|m| m["role"] == "assistant")
                .filter_map(|m| m["content"].as_array())
                .flatten()
                .filter(|c| c["type"] == "tool_use")
                .filter_map(|c| c["name"].as_str())
                .collect();
            let offered = |name: &str| tools.iter().any(|t| t["name"] == name);
            if called.contains(&CLAUDE_TOOL) {
                Reply::Text
            } else if offered(CLAUDE_TOOL) {
                Reply::Call(CLAUDE_TOOL.into(), args)
            } else if offered("ToolSearch")
                && !called.contains(&"ToolSearch")
                && body.to_string().contains(CLAUDE_TOOL)
            {
                // Claude Code lists MCP tools by name only ("deferred") until ToolSearch
                // loads their schemas.
                Reply::Call(
                    "ToolSearch".into(),
                    json!({"query": format!("select:{CLAUDE_TOOL}")}),
                )
            } else {
                Reply::Text
            }
        }
        Api::Responses => {
            let input = body["input"].as_array().unwrap_or(&empty);
            let answered = input.iter().any(|i| i["type"] == "function_call_output");
            let offered = tools.iter().any(|t| {
                t["type"] == "namespace"
                    && t["name"] == CODEX_NAMESPACE
                    && t["tools"]
                        .as_array()
                        .is_some_and(|ts| ts.iter().any(|f| f["name"] == "fast_apply"))
            });
            if offered && !answered {
                Reply::Call("fast_apply".into(), args)
            } else {
                Reply::Text
            }
        }
    }
}

/// One server-sent event.
fn event(name: &str, data: &Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

/// The streamed answer (Anthropic's Messages API) for request number `n`.
fn anthropic_stream(n: usize, body: &Value) -> String {
    let model = body["model"].as_str().unwrap_or("stand-in");
    let mut s = event(
        "message_start",
        &json!({"type": "message_start", "message": {
            "id": format!("msg_{n}"), "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": 10, "output_tokens": 1}
        }}),
    );
    let (block, delta, stop) = match reply(Api::Anthropic, body) {
        Reply::Call(name, input) => (
            json!({"type": "tool_use", "id": format!("toolu_{n}"), "name": name, "input": {}}),
            json!({"type": "input_json_delta", "partial_json": input.to_string()}),
            "tool_use",
        ),
        Reply::Text => (
            json!({"type": "text", "text": ""}),
            json!({"type": "text_delta", "text": "Done."}),
            "end_turn",
        ),
    };
    s += &event(
        "content_block_start",
        &json!({"type": "content_block_start", "index": 0, "content_block": block}),
    );
    s += &event(
        "content_block_delta",
        &json!({"type": "content_block_delta", "index": 0, "delta": delta}),
    );
    s += &event(
        "content_block_stop",
        &json!({"type": "content_block_stop", "index": 0}),
    );
    s += &event(
        "message_delta",
        &json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
                "usage": {"output_tokens": 5}}),
    );
    s + &event("message_stop", &json!({"type": "message_stop"}))
}

/// The streamed answer (OpenAI's Responses API) for request number `n`.
fn responses_stream(n: usize, body: &Value) -> String {
    let item = match reply(Api::Responses, body) {
        Reply::Call(name, input) => json!({
            "type": "function_call", "id": format!("fc_{n}"), "call_id": format!("call_{n}"),
            "namespace": CODEX_NAMESPACE, "name": name, "arguments": input.to_string(),
            "status": "completed"
        }),
        Reply::Text => json!({
            "type": "message", "id": format!("msg_{n}"), "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "Done.", "annotations": []}]
        }),
    };
    let id = format!("resp_{n}");
    let mut s = event(
        "response.created",
        &json!({"type": "response.created", "response": {"id": id}}),
    );
    for kind in ["response.output_item.added", "response.output_item.done"] {
        s += &event(
            kind,
            &json!({"type": kind, "output_index": 0, "item": item}),
        );
    }
    s + &event(
        "response.completed",
        &json!({"type": "response.completed", "response": {
            "id": id, "output": [item],
            "usage": {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
                      "total_tokens": 15}
        }}),
    )
}

/// Answer one connection: one request, recorded, then the connection closes.
fn serve(stream: TcpStream, api: Api, log: &Mutex<Vec<(String, Value)>>) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let Some((method, path, body)) = read_request(&mut reader) else {
        return;
    };
    let mut stream = stream;
    let route = path.split('?').next().unwrap_or_default();
    let (ctype, text) = match (method.as_str(), route) {
        ("POST", "/v1/messages/count_tokens") => {
            ("application/json", json!({"input_tokens": 10}).to_string())
        }
        ("POST", "/v1/messages" | "/v1/responses") => {
            let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let n = {
                let mut l = log.lock().unwrap();
                l.push((path.clone(), body.clone()));
                l.len() - 1
            };
            let text = match api {
                Api::Anthropic => anthropic_stream(n, &body),
                Api::Responses => responses_stream(n, &body),
            };
            ("text/event-stream", text)
        }
        _ => {
            let _ = write!(
                stream,
                "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            );
            return;
        }
    };
    let _ = write!(
        stream,
        "HTTP/1.1 200 OK\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
        text.len()
    );
    let _ = stream.flush();
}

/// Read one HTTP/1.1 request: method, path and body (by Content-Length, or chunked).
fn read_request(reader: &mut impl BufRead) -> Option<(String, String, Vec<u8>)> {
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_string();
    let path = parts.next()?.to_string();
    let (mut length, mut chunked) = (0usize, false);
    loop {
        line.clear();
        if reader.read_line(&mut line).ok()? == 0 || line == "\r\n" {
            break;
        }
        let lower = line.to_ascii_lowercase();
        if let Some(v) = lower.strip_prefix("content-length:") {
            length = v.trim().parse().ok()?;
        } else if let Some(v) = lower.strip_prefix("transfer-encoding:") {
            chunked = v.contains("chunked");
        }
    }
    let mut body = Vec::new();
    if chunked {
        loop {
            line.clear();
            reader.read_line(&mut line).ok()?;
            let size = usize::from_str_radix(line.trim().split(';').next()?, 16).ok()?;
            let mut chunk = vec![0u8; size + 2];
            reader.read_exact(&mut chunk).ok()?;
            if size == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..size]);
        }
    } else {
        body.resize(length, 0);
        reader.read_exact(&mut body).ok()?;
    }
    Some((method, path, body))
}
