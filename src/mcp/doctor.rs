//! `patchgate doctor`: which gates run and which roots they cover, and whether each client's
//! configuration reaches one (a patchgate stdio server, or a live gate's endpoint) with
//! patchgate's tools pre-approved.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::clients::{CLAUDE_ALLOW, CLAUDE_EDIT_TOOLS};
use super::discovery::Discovery;

/// How one configured MCP server reaches patchgate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Reach {
    /// A stdio server: `patchgate serve --stdio --root ROOT` (forwards to a gate).
    Stdio {
        /// Its `--root`, if given.
        root: Option<PathBuf>,
    },
    /// An HTTP endpoint, and the live gate listening there, if any.
    Http {
        /// The endpoint.
        url: String,
        /// The root of the live gate listening there.
        gate: Option<PathBuf>,
    },
}

/// One client configuration file that names patchgate.
#[derive(Debug, Clone)]
pub(crate) struct Found {
    /// The client ("claude", "codex", "cursor", "vscode").
    pub client: &'static str,
    /// The file.
    pub file: PathBuf,
    /// How it reaches patchgate.
    pub reach: Reach,
    /// Whether patchgate's tools run without the client asking (`None`: not known).
    pub pre_approved: Option<bool>,
}

/// Every client configuration under `home` and in `root` that names a patchgate server.
pub(crate) fn scan(root: &Path, home: Option<&Path>, gates: &[Discovery]) -> Vec<Found> {
    let mut out = Vec::new();
    let mut json_file = |client: &'static str, file: PathBuf, key: &str, project: bool| {
        let Some(v) = read_json(&file) else { return };
        let mut servers: Vec<&Value> = v.get(key).into_iter().collect();
        // Claude Code keeps per-project servers under projects.<path>.mcpServers.
        if project && let Some(p) = v.pointer("/projects").and_then(Value::as_object) {
            servers.extend(
                p.iter()
                    .filter(|(k, _)| Path::new(k) == root)
                    .filter_map(|(_, p)| p.get(key)),
            );
        }
        for s in servers.iter().filter_map(|s| s.as_object()) {
            for entry in s.values() {
                if let Some(reach) = reach_of(entry, gates) {
                    out.push(Found {
                        client,
                        file: file.clone(),
                        reach,
                        pre_approved: None,
                    });
                }
            }
        }
    };
    if let Some(h) = home {
        json_file("claude", h.join(".claude.json"), "mcpServers", true);
        json_file("cursor", h.join(".cursor/mcp.json"), "mcpServers", false);
    }
    json_file("claude", root.join(".mcp.json"), "mcpServers", false);
    json_file("cursor", root.join(".cursor/mcp.json"), "mcpServers", false);
    json_file("vscode", root.join(".vscode/mcp.json"), "servers", false);
    let claude_ok = claude_pre_approved(root, home);
    for f in out.iter_mut().filter(|f| f.client == "claude") {
        f.pre_approved = Some(claude_ok);
    }
    let codex = home
        .map(|h| h.join(".codex/config.toml"))
        .into_iter()
        .chain([root.join(".codex/config.toml")]);
    for file in codex {
        let Some(t) = std::fs::read_to_string(&file)
            .ok()
            .and_then(|s| s.parse::<toml::Table>().ok())
        else {
            continue;
        };
        let Some(servers) = t.get("mcp_servers").and_then(|s| s.as_table()) else {
            continue;
        };
        for entry in servers.values() {
            let v = serde_json::to_value(entry).unwrap_or(Value::Null);
            if let Some(reach) = reach_of(&v, gates) {
                let approve = v["default_tools_approval_mode"].as_str() == Some("approve");
                out.push(Found {
                    client: "codex",
                    file: file.clone(),
                    reach,
                    pre_approved: Some(approve),
                });
            }
        }
    }
    out
}

fn read_json(p: &Path) -> Option<Value> {
    let meta = std::fs::metadata(p).ok()?;
    // A client's configuration is small; a huge file is not read.
    if meta.len() > 16 << 20 {
        return None;
    }
    serde_json::from_slice(&std::fs::read(p).ok()?).ok()
}

/// How a server entry (`command`/`args` or `url`) reaches patchgate, if it does.
fn reach_of(entry: &Value, gates: &[Discovery]) -> Option<Reach> {
    if let Some(cmd) = entry["command"].as_str() {
        let args: Vec<&str> = entry["args"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let is_patchgate = Path::new(cmd).file_stem().is_some_and(|s| s == "patchgate");
        if !is_patchgate || !args.contains(&"serve") {
            return None;
        }
        let root = args
            .iter()
            .position(|a| *a == "--root")
            .and_then(|k| args.get(k + 1))
            .map(PathBuf::from);
        return Some(Reach::Stdio { root });
    }
    let url = entry["url"].as_str()?.trim_end_matches('/');
    let gate = gates
        .iter()
        .find(|g| g.mcp_url.trim_end_matches('/') == url)
        .map(|g| g.root.clone());
    let ours = gate.is_some() || url.ends_with("/mcp") && url.contains("127.0.0.1");
    ours.then(|| Reach::Http {
        url: url.to_string(),
        gate,
    })
}

/// Whether Claude Code's settings (project, project-local or user) allow patchgate's tools
/// and deny Claude's own edit tools.
fn claude_pre_approved(root: &Path, home: Option<&Path>) -> bool {
    let files = [
        Some(root.join(".claude/settings.json")),
        Some(root.join(".claude/settings.local.json")),
        home.map(|h| h.join(".claude/settings.json")),
    ];
    let mut allow = false;
    let mut deny: Vec<String> = Vec::new();
    for v in files.into_iter().flatten().filter_map(|f| read_json(&f)) {
        let list = |k: &str| -> Vec<String> {
            v.pointer(&format!("/permissions/{k}"))
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|x| x.as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default()
        };
        allow |= list("allow")
            .iter()
            .any(|r| r == CLAUDE_ALLOW || r == "mcp__patchgate");
        deny.extend(list("deny"));
    }
    allow
        && CLAUDE_EDIT_TOOLS
            .iter()
            .all(|t| deny.iter().any(|d| d == t))
}

/// The report `patchgate doctor` prints for `root`.
pub fn report(root: &Path, home: Option<&Path>) -> String {
    let gates = Discovery::live_all();
    let mut s = String::new();
    if gates.is_empty() {
        s.push_str("gates: none running\n");
    } else {
        s.push_str("gates:\n");
        for g in &gates {
            let _ = writeln!(s, "  pid {}  {}  root {}", g.pid, g.url, g.root.display());
        }
    }
    match Discovery::for_dir(root) {
        Some(g) => {
            let _ = writeln!(s, "{}: reviewed by the gate at {}", root.display(), g.url);
        }
        None => {
            let _ = writeln!(
                s,
                "{}: no gate covers it (run `patchgate` there so a person reviews edits)",
                root.display()
            );
        }
    }
    let found = scan(root, home, &gates);
    if found.is_empty() {
        s.push_str("clients: none configured for patchgate (see `patchgate config CLIENT`)\n");
    }
    for f in &found {
        let how = match &f.reach {
            Reach::Stdio { root: Some(r) } => format!("stdio server for {}", r.display()),
            Reach::Stdio { root: None } => "stdio server for its working directory".to_string(),
            Reach::Http { url, gate: Some(r) } => {
                format!("{url}, the live gate for {}", r.display())
            }
            Reach::Http { url, gate: None } => format!("{url}, where no gate listens now"),
        };
        let approved = match f.pre_approved {
            Some(true) => "; tools pre-approved",
            Some(false) => "; tools NOT pre-approved (the client will ask; see `patchgate config`)",
            None => "",
        };
        let _ = writeln!(s, "{:<7} {}: {how}{approved}", f.client, f.file.display());
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_stdio_and_http_servers_and_claude_permissions() {
        let dir = tempfile::tempdir().unwrap();
        let (home, root) = (dir.path().join("home"), dir.path().join("proj"));
        std::fs::create_dir_all(home.join(".codex")).unwrap();
        std::fs::create_dir_all(root.join(".claude")).unwrap();
        std::fs::write(
            home.join(".codex/config.toml"),
            "[mcp_servers.pg]\ncommand = \"/usr/bin/patchgate\"\nargs = [\"serve\", \"--stdio\", \"--root\", \"/proj\"]\ndefault_tools_approval_mode = \"approve\"\n[mcp_servers.other]\ncommand = \"node\"\n",
        )
        .unwrap();
        std::fs::write(
            root.join(".mcp.json"),
            r#"{"mcpServers": {"patchgate": {"type": "http", "url": "http://127.0.0.1:8787/mcp"}}}"#,
        )
        .unwrap();
        let found = scan(&root, Some(&home), &[]);
        assert_eq!(found.len(), 2, "{found:?}");
        let claude = found.iter().find(|f| f.client == "claude").unwrap();
        assert_eq!(
            claude.reach,
            Reach::Http {
                url: "http://127.0.0.1:8787/mcp".into(),
                gate: None
            }
        );
        assert_eq!(claude.pre_approved, Some(false));
        let codex = found.iter().find(|f| f.client == "codex").unwrap();
        assert_eq!(
            codex.reach,
            Reach::Stdio {
                root: Some("/proj".into())
            }
        );
        assert_eq!(codex.pre_approved, Some(true));
        std::fs::write(
            root.join(".claude/settings.json"),
            r#"{"permissions": {"allow": ["mcp__patchgate__*"], "deny": ["Edit", "Write", "MultiEdit", "NotebookEdit"]}}"#,
        )
        .unwrap();
        let found = scan(&root, Some(&home), &[]);
        let claude = found.iter().find(|f| f.client == "claude").unwrap();
        assert_eq!(claude.pre_approved, Some(true));
    }
}
