//! `patchgate demo`: a temporary copy of the embedded project in `assets/demo/` and a scripted
//! agent that sends it realistic edits through the same tool path as an MCP client — every
//! tool kind, one that fails and one dry-run — while the TUI shows them for review. What the
//! agent sends is data, `assets/demo/agent.toml`, embedded and checked when the demo starts.

use std::path::Path;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Map, Value};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use patchgate::mcp::args::ToolName;
use patchgate::mcp::envelope::{Envelope, Status};
use patchgate::mcp::service::{Dispatcher, NoProgress};
use patchgate::tui::update::Msg;

/// The demo project, embedded in the binary: (path, content).
pub(crate) const FILES: &[(&str, &str)] = &[
    ("README.md", include_str!("../../assets/demo/README.md")),
    (
        "config/settings.toml",
        include_str!("../../assets/demo/config/settings.toml"),
    ),
    (
        "src/inventory.rs",
        include_str!("../../assets/demo/src/inventory.rs"),
    ),
    ("src/main.rs", include_str!("../../assets/demo/src/main.rs")),
    (
        "app/server.py",
        include_str!("../../assets/demo/app/server.py"),
    ),
    ("web/cart.ts", include_str!("../../assets/demo/web/cart.ts")),
];

/// Write the demo project into `dir`.
pub(crate) fn materialize(dir: &Path) -> std::io::Result<()> {
    for (rel, content) in FILES {
        let p = dir.join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(p, content)?;
    }
    Ok(())
}

/// The scripted agent's calls, embedded: see the file's own header.
const AGENT: &str = include_str!("../../assets/demo/agent.toml");

/// `assets/demo/agent.toml` as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AgentFile {
    call: Vec<CallEntry>,
    #[serde(default)]
    revision: Vec<RevisionEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CallEntry {
    tool: String,
    args: Map<String, Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RevisionEntry {
    /// The call (from 0) it answers when that call is rejected with a note.
    answers: usize,
    tool: String,
    args: Map<String, Value>,
}

/// One call: the tool and its arguments.
pub(crate) type Call = (ToolName, Map<String, Value>);

/// The scripted agent: its calls in order, and the revisions that answer rejections.
#[derive(Debug, Clone)]
pub(crate) struct Script {
    calls: Vec<Call>,
    revisions: Vec<(usize, Call)>,
}

impl Script {
    /// The embedded script, checked: every tool known, every revision answering a call.
    pub(crate) fn embedded() -> Result<Script, String> {
        Script::parse(AGENT)
    }

    fn parse(text: &str) -> Result<Script, String> {
        let file: AgentFile = toml::from_str(text).map_err(|e| e.to_string())?;
        let tool = |name: &str| {
            ToolName::parse(name).ok_or_else(|| format!("`{name}` is not a tool patchgate serves"))
        };
        let calls = file
            .call
            .into_iter()
            .map(|c| Ok((tool(&c.tool)?, c.args)))
            .collect::<Result<Vec<Call>, String>>()?;
        let revisions = file
            .revision
            .into_iter()
            .map(|r| {
                if r.answers >= calls.len() {
                    return Err(format!(
                        "a revision answers call {}, but there are {} calls (counted from 0)",
                        r.answers,
                        calls.len()
                    ));
                }
                Ok((r.answers, (tool(&r.tool)?, r.args)))
            })
            .collect::<Result<Vec<_>, String>>()?;
        Ok(Script { calls, revisions })
    }

    /// The agent's calls, in order.
    pub(crate) fn calls(&self) -> &[Call] {
        &self.calls
    }

    /// The agent's answer when the person rejects its call `k` with a note: the next
    /// revision of that edit, if it has one.
    fn revision(&self, k: usize) -> Option<&Call> {
        self.revisions
            .iter()
            .find(|(answers, _)| *answers == k)
            .map(|(_, call)| call)
    }
}

/// Whether the person rejected the call with a note (to be answered by a revision).
fn rejected_with_note(env: &Envelope) -> bool {
    env.status == Status::Rejected
        && env
            .review
            .as_ref()
            .is_some_and(|r| !r.note.trim().is_empty())
}

fn what(tool: ToolName, args: &Map<String, Value>) -> String {
    let path = ["path", "target_file", "file_path"]
        .iter()
        .find_map(|k| args.get(*k).and_then(Value::as_str))
        .map(str::to_string)
        .or_else(|| {
            args.get("patches").and_then(Value::as_array).map(|p| {
                p.iter()
                    .filter_map(|e| e["target_file"].as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            })
        })
        .unwrap_or_default();
    format!("{} {path}", tool.as_str())
}

fn heard(env: &Envelope) -> Result<String, String> {
    let first_line = env.message.lines().next().unwrap_or("").to_string();
    match env.status {
        Status::Error => Err(format!(
            "{}: {}",
            env.code.map_or("error", |c| c.as_str()),
            first_line
        )),
        Status::Rejected => Ok(format!(
            "rejected — {}",
            env.review
                .as_ref()
                .map(|r| r.note.as_str())
                .filter(|n| !n.is_empty())
                .unwrap_or("no reason given")
        )),
        Status::Pending => Ok("still pending".into()),
        Status::Ok if env.dry_run => Ok(format!(
            "dry-run {} (press c to commit it)",
            env.run_id.as_deref().unwrap_or("")
        )),
        Status::Ok => Ok(match &env.review {
            Some(r) if r.hunks_accepted != r.hunks_total => {
                format!("applied {}/{} hunks", r.hunks_accepted, r.hunks_total)
            }
            Some(r) if r.edited_by_reviewer => "applied as edited".into(),
            _ => "applied".into(),
        }),
    }
}

/// Start the scripted agent: its calls go out `every` apart; what it hears back is sent to
/// the TUI's status line.
pub(crate) fn start_agent(
    script: Script,
    dispatcher: Dispatcher,
    tx: mpsc::UnboundedSender<Msg>,
    every: Duration,
) {
    let script = std::sync::Arc::new(script);
    tokio::spawn(async move {
        tokio::time::sleep(every / 2).await;
        for (k, (tool, args)) in script.calls().iter().cloned().enumerate() {
            let d = dispatcher.clone();
            let tx = tx.clone();
            let script = script.clone();
            tokio::spawn(async move {
                let env = call(&d, &tx, tool, args).await;
                if rejected_with_note(&env)
                    && let Some((tool, args)) = script.revision(k).cloned()
                {
                    call(&d, &tx, tool, args).await;
                }
            });
            tokio::time::sleep(every).await;
        }
    });
}

/// One call of the agent; what it hears back goes to the TUI's status line.
async fn call(
    d: &Dispatcher,
    tx: &mpsc::UnboundedSender<Msg>,
    tool: ToolName,
    args: Map<String, Value>,
) -> Envelope {
    let label = what(tool, &args);
    let env = d
        .run(
            tool,
            args,
            Some("demo-agent".into()),
            CancellationToken::new(),
            &NoProgress,
        )
        .await;
    let msg = match heard(&env) {
        Ok(t) => Ok(format!("agent ← {label}: {t}")),
        Err(t) => Err(format!("agent ← {label}: {t}")),
    };
    let _ = tx.send(Msg::Done(msg));
    env
}

#[cfg(test)]
mod tests {
    use super::*;
    use patchgate::mcp::service::Reviewers;
    use patchgate::review::journal::Journal;
    use patchgate::review::policy::Policy;
    use patchgate::review::queue::Gate;
    use patchgate::workspace::Workspace;
    use patchgate::workspace::config::{Config, PolicyName};

    /// The demo project in `dir`, and a dispatcher over it that applies every edit (`auto`).
    fn demo_under_auto(dir: &std::path::Path) -> (std::path::PathBuf, Dispatcher) {
        let root = dir.join("demo");
        std::fs::create_dir_all(&root).unwrap();
        materialize(&root).unwrap();
        let ws = Workspace::new(&root, Config::default()).unwrap();
        let journal = Journal::at(dir.join("journal.jsonl"), &ws.root);
        let gate = Gate::new(ws, Policy::simple(PolicyName::Auto), journal, None);
        let d = Dispatcher::new(gate, Duration::from_secs(600), Reviewers::Attachable, None);
        (root, d)
    }

    /// Every scripted edit does what the demo says: all apply under `auto` except the one
    /// meant to fail (NO_MATCH) and the dry-run; the cart edit has three hunks.
    #[tokio::test]
    async fn the_script_applies_to_the_demo_project() {
        let dir = tempfile::tempdir().unwrap();
        let (root, d) = demo_under_auto(dir.path());
        let mut outcomes = Vec::new();
        for (tool, args) in Script::embedded().unwrap().calls().iter().cloned() {
            let env = d
                .run(tool, args, None, CancellationToken::new(), &NoProgress)
                .await;
            outcomes.push((tool, env));
        }
        assert_eq!(outcomes.len(), 8);
        for (i, (tool, env)) in outcomes.iter().enumerate() {
            match i {
                4 => assert!(env.dry_run && env.status == Status::Ok, "{env:?}"),
                7 => assert_eq!(
                    env.code,
                    Some(patchgate::error::ErrorCode::NoMatch),
                    "{env:?}"
                ),
                _ => assert_eq!(env.status, Status::Ok, "{tool:?}: {env:?}"),
            }
        }
        let cart = &outcomes[2].1;
        assert_eq!(
            cart.diff.as_deref().unwrap().matches("\n@@ ").count() + 1,
            3,
            "three hunks: {}",
            cart.diff.as_deref().unwrap()
        );
        let inv = std::fs::read_to_string(root.join("src/inventory.rs")).unwrap();
        assert!(inv.contains("pub fn low_stock"), "{inv}");
        assert!(!inv.contains("let mut total = 0;"), "{inv}");
        assert!(inv.contains("pub fn remove"), "{inv}");
        let main = std::fs::read_to_string(root.join("src/main.rs")).unwrap();
        assert!(main.contains("low stock:"));
        assert!(root.join("app/test_server.py").exists());
    }

    /// Rejected with a note, the first call is answered by its revision, which applies to
    /// the file as it was (the rejected edit never landed) and does what the note asked.
    #[tokio::test]
    async fn a_rejected_first_edit_is_answered_by_a_revision_that_applies() {
        let script = Script::embedded().unwrap();
        assert!(script.revision(1).is_none());
        let dir = tempfile::tempdir().unwrap();
        let (root, d) = demo_under_auto(dir.path());
        let (tool, args) = script.revision(0).cloned().unwrap();
        let env = d
            .run(tool, args, None, CancellationToken::new(), &NoProgress)
            .await;
        assert_eq!(env.status, Status::Ok, "{env:?}");
        let inv = std::fs::read_to_string(root.join("src/inventory.rs")).unwrap();
        assert!(inv.contains("a.quantity.cmp(&b.quantity)"), "{inv}");
        assert!(inv.contains("pub fn remove"), "{inv}");
    }

    /// The embedded script parses (a malformed asset fails here, not in a user's demo) and
    /// drives the demo's calls: every tool kind, on the files the demo shows, in order.
    #[test]
    fn the_embedded_script_parses_and_drives_the_demos_calls() {
        let script = Script::embedded().unwrap();
        let calls: Vec<String> = script
            .calls()
            .iter()
            .map(|(tool, args)| what(*tool, args))
            .collect();
        assert_eq!(
            calls,
            [
                "fast_apply src/inventory.rs",
                "patch_file app/server.py",
                "FileWriteOrEdit web/cart.ts",
                "batch_patch_files config/settings.toml, README.md",
                "patch_file app/server.py",
                "fast_apply app/test_server.py",
                "patch_file src/main.rs",
                "patch_file web/cart.ts",
            ]
        );
        assert_eq!(script.calls()[4].1["dry_run"], Value::Bool(true));
        let (tool, args) = script.revision(0).unwrap();
        assert_eq!(what(*tool, args), "fast_apply src/inventory.rs");
        assert!((1..8).all(|k| script.revision(k).is_none()));
    }

    /// A script that is not TOML, names a tool patchgate does not serve, has a key it does
    /// not know, or a revision answering no call is refused with why, never a panic.
    #[test]
    fn a_malformed_script_is_refused_with_why() {
        let call = "[[call]]\ntool = \"patch_file\"\n[call.args]\ntarget_file = \"a\"\n";
        assert!(Script::parse(call).is_ok());
        for (bad, says) in [
            ("[[call]\n".to_string(), ""),
            (call.replace("patch_file", "rm_rf"), "`rm_rf` is not a tool"),
            (call.replace("tool =", "tol = 1\ntool ="), "unknown field"),
            (
                format!("{call}[[revision]]\nanswers = 1\ntool = \"patch_file\"\nargs = {{}}\n"),
                "answers call 1, but there are 1 calls",
            ),
        ] {
            let e = Script::parse(&bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }
}
