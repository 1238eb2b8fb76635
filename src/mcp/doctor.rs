//! `patchgate doctor`: which gates run and which roots they cover, each client configuration
//! that reaches one (a patchgate stdio server, or a live gate's endpoint), and per client
//! whether it is ready — patchgate's server where the client reads it and its tools
//! pre-approved — or the one command that makes it ready.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::client_files::{Homes, Scope, read_config};
use super::clients::{
    CLAUDE_ALLOW, CLAUDE_EDIT_TOOLS, CODEX_APPROVE_KEY, CURSOR_ALLOW, ClientKind,
};
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
pub(crate) fn scan(root: &Path, homes: &Homes, gates: &[Discovery]) -> Vec<Found> {
    let home = homes.home.as_deref();
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
    if let Some(user) = vscode_user_file(homes) {
        json_file("vscode", user, "servers", false);
    }
    let claude_ok = claude_pre_approved(root, home);
    for f in out.iter_mut().filter(|f| f.client == "claude") {
        f.pre_approved = Some(claude_ok);
    }
    let codex = homes
        .codex()
        .map(|h| h.join("config.toml"))
        .into_iter()
        .chain([root.join(".codex/config.toml")]);
    for file in codex {
        let Some(t) = read_toml(&file) else {
            continue;
        };
        let Some(servers) = t.get("mcp_servers").and_then(|s| s.as_table()) else {
            continue;
        };
        for entry in servers.values() {
            let v = serde_json::to_value(entry).unwrap_or(Value::Null);
            if let Some(reach) = reach_of(&v, gates) {
                let approve = v[CODEX_APPROVE_KEY].as_str() == Some("approve");
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
    serde_json::from_slice(&read_config(p).ok()??).ok()
}

/// A TOML configuration file, bounded as [`read_config`] reads.
fn read_toml(p: &Path) -> Option<toml::Table> {
    String::from_utf8(read_config(p).ok()??).ok()?.parse().ok()
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

/// VS Code's user `mcp.json`.
fn vscode_user_file(homes: &Homes) -> Option<PathBuf> {
    homes.vscode_user().ok().map(|d| d.join("mcp.json"))
}

/// The strings of the list at `pointer` in `v`.
fn strings(v: &Value, pointer: &str) -> Vec<String> {
    v.pointer(pointer)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// Claude Code's settings files that apply to `root` without a trust prompt: the local
/// project settings and the user's; the shared project settings only once the workspace is
/// trusted (Claude ignores their permissions before).
fn claude_settings(root: &Path, home: Option<&Path>) -> Vec<Value> {
    let trusted = home
        .and_then(|h| read_json(&h.join(".claude.json")))
        .and_then(|v| {
            let projects = v.get("projects")?.as_object()?.clone();
            projects
                .iter()
                .find(|(k, _)| Path::new(k) == root)
                .map(|(_, p)| p["hasTrustDialogAccepted"] == Value::Bool(true))
        })
        .unwrap_or(false);
    let files = [
        trusted.then(|| root.join(".claude/settings.json")),
        Some(root.join(".claude/settings.local.json")),
        home.map(|h| h.join(".claude/settings.json")),
    ];
    files
        .into_iter()
        .flatten()
        .filter_map(|f| read_json(&f))
        .collect()
}

/// Whether Claude Code's settings allow patchgate's tools without asking.
fn claude_pre_approved(root: &Path, home: Option<&Path>) -> bool {
    claude_settings(root, home).iter().any(|v| {
        strings(v, "/permissions/allow")
            .iter()
            .any(|r| r == CLAUDE_ALLOW || r == "mcp__patchgate")
    })
}

/// Claude Code's own edit tools that its settings do not deny.
fn claude_undenied(root: &Path, home: Option<&Path>) -> Vec<&'static str> {
    let deny: Vec<String> = claude_settings(root, home)
        .iter()
        .flat_map(|v| strings(v, "/permissions/deny"))
        .collect();
    CLAUDE_EDIT_TOOLS
        .into_iter()
        .filter(|t| !deny.iter().any(|d| d == t))
        .collect()
}

/// Whether Codex trusts `root` (or a directory above it): it reads a project's
/// `.codex/config.toml` only then.
fn codex_trusts(root: &Path, homes: &Homes) -> bool {
    let Some(t) = homes
        .codex()
        .and_then(|d| read_toml(&d.join("config.toml")))
    else {
        return false;
    };
    let Some(projects) = t.get("projects").and_then(|p| p.as_table()) else {
        return false;
    };
    projects.iter().any(|(k, v)| {
        root.starts_with(k) && v.get("trust_level").and_then(|l| l.as_str()) == Some("trusted")
    })
}

/// Whether Cursor's permissions let patchgate's tools run without asking.
fn cursor_pre_approved(root: &Path, home: Option<&Path>) -> bool {
    [
        Some(root.join(".cursor/permissions.json")),
        home.map(|h| h.join(".cursor/permissions.json")),
    ]
    .into_iter()
    .flatten()
    .filter_map(|f| read_json(&f))
    .any(|v| {
        strings(&v, "/mcpAllowlist")
            .iter()
            .any(|e| e == CURSOR_ALLOW)
    })
}

/// A note on where `config --write` put the configuration when that is not where the scope
/// says (Codex's server always goes into the user's file).
pub fn scope_note(kind: ClientKind, scope: Scope, root: &Path, homes: &Homes) -> Option<String> {
    (kind == ClientKind::Codex && scope == Scope::Project).then(|| {
        let trust = if codex_trusts(root, homes) {
            ""
        } else {
            ", and it does not trust this project"
        };
        format!(
            "patchgate's Codex server went into your own config.toml, where it serves the project Codex \
             runs in: Codex reads a project's .codex/config.toml only in a project it trusts{trust}"
        )
    })
}

/// One client's state for `root`: `Ok(where it reads patchgate)` when it is ready, else
/// `Err(what is missing, the command that makes it ready)`.
fn readiness(
    kind: ClientKind,
    name: &str,
    found: &[Found],
    root: &Path,
    homes: &Homes,
) -> Result<String, (String, String)> {
    let fix = |extra: &str| format!("patchgate config {name} --write{extra}");
    let home = homes.home.as_deref();
    let mut servers = found
        .iter()
        .filter(|f| f.client == name)
        .filter(|f| {
            // A project's Codex file counts only where Codex trusts the project.
            kind != ClientKind::Codex || !f.file.starts_with(root) || codex_trusts(root, homes)
        })
        // An entry for another project's root (or its gate) does not serve this one.
        .filter(|f| match &f.reach {
            Reach::Stdio { root: Some(r) } | Reach::Http { gate: Some(r), .. } => {
                root.starts_with(r)
            }
            Reach::Stdio { root: None } | Reach::Http { gate: None, .. } => true,
        });
    let Some(server) = servers.next() else {
        let untrusted = kind == ClientKind::Codex
            && found
                .iter()
                .any(|f| f.client == name && f.file.starts_with(root));
        return Err(if untrusted {
            (
                "its project file is not read: Codex does not trust this project".into(),
                fix(""),
            )
        } else {
            ("no patchgate server where it looks".into(), fix(""))
        });
    };
    let file = server.file.display();
    let approved = match kind {
        ClientKind::Claude => claude_pre_approved(root, home),
        ClientKind::Codex => server.pre_approved == Some(true),
        ClientKind::Cursor => cursor_pre_approved(root, home),
        // VS Code keeps tool approvals itself; it asks once.
        ClientKind::Vscode => true,
    };
    if !approved {
        let only = if kind == ClientKind::Codex {
            ""
        } else {
            " --only approval"
        };
        return Err((
            format!(
                "{file} names patchgate, but its tools are not pre-approved (the client will ask)"
            ),
            fix(only),
        ));
    }
    Ok(format!("{file}"))
}

/// The report `patchgate doctor` prints for `root`.
pub fn report(root: &Path, homes: &Homes) -> String {
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
    let found = scan(root, homes, &gates);
    if found.is_empty() {
        // The `clients:` header comes once, below, with each client's readiness.
        s.push_str("configured: no client's file names patchgate\n");
    } else {
        s.push_str("configured:\n");
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
            Some(false) => "; tools NOT pre-approved (the client will ask)",
            None => "",
        };
        let _ = writeln!(s, "  {:<7} {}: {how}{approved}", f.client, f.file.display());
    }
    s.push_str("clients:\n");
    let kinds = [
        (ClientKind::Claude, "claude"),
        (ClientKind::Codex, "codex"),
        (ClientKind::Cursor, "cursor"),
        (ClientKind::Vscode, "vscode"),
    ];
    for (kind, name) in kinds {
        match readiness(kind, name, &found, root, homes) {
            Ok(file) => {
                let _ = write!(s, "  {name:<7} ready ({file})");
                if kind == ClientKind::Claude {
                    let open = claude_undenied(root, homes.home.as_deref());
                    if !open.is_empty() {
                        let _ = write!(
                            s,
                            "; its own {} can still write behind the gate: `patchgate config claude --write --only approval`",
                            open.join(", ")
                        );
                    }
                }
                s.push('\n');
            }
            Err((why, fix)) => {
                let _ = writeln!(s, "  {name:<7} not ready: {why}; run `{fix}`");
            }
        }
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
        let homes = Homes {
            home: Some(home.clone()),
            ..Homes::default()
        };
        let found = scan(&root, &homes, &[]);
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
        // The shared project settings count only in a trusted workspace; the local ones always.
        let allow = r#"{"permissions": {"allow": ["mcp__patchgate__*"], "deny": ["Edit", "Write", "NotebookEdit"]}}"#;
        std::fs::write(root.join(".claude/settings.json"), allow).unwrap();
        let found = scan(&root, &homes, &[]);
        let claude = found.iter().find(|f| f.client == "claude").unwrap();
        assert_eq!(claude.pre_approved, Some(false));
        let trust = serde_json::json!({"projects": {root.to_str().unwrap(): {"hasTrustDialogAccepted": true}}});
        std::fs::write(home.join(".claude.json"), trust.to_string()).unwrap();
        let found = scan(&root, &homes, &[]);
        let claude = found.iter().find(|f| f.client == "claude").unwrap();
        assert_eq!(claude.pre_approved, Some(true));
        std::fs::remove_file(home.join(".claude.json")).unwrap();
        std::fs::rename(
            root.join(".claude/settings.json"),
            root.join(".claude/settings.local.json"),
        )
        .unwrap();
        let found = scan(&root, &homes, &[]);
        let claude = found.iter().find(|f| f.client == "claude").unwrap();
        assert_eq!(claude.pre_approved, Some(true));
        // Codex's server in the user's file serves another root (/proj): not ready here.
        let r = report(&root, &homes);
        assert!(r.contains("claude  ready"), "{r}");
        assert!(r.contains("codex   not ready"), "{r}");
        // A root-free entry serves whatever project Codex runs in.
        std::fs::write(
            home.join(".codex/config.toml"),
            "[mcp_servers.pg]\ncommand = \"/usr/bin/patchgate\"\nargs = [\"serve\", \"--stdio\"]\ndefault_tools_approval_mode = \"approve\"\n",
        )
        .unwrap();
        let r = report(&root, &homes);
        assert!(r.contains("codex   ready"), "{r}");
        assert!(
            r.contains("cursor  not ready: no patchgate server where it looks; run `patchgate config cursor --write`"),
            "{r}"
        );
    }
}
