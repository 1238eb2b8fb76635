//! `patchgate config claude|codex|cursor|vscode`: the snippet that connects a client to
//! patchgate — a stdio server the client spawns (it forwards to whatever gate runs for the
//! root), or a gate's HTTP endpoint — with patchgate's tools pre-approved in the client's own
//! terms (the gate is the approval), and advice on keeping the client's own edit tools off.

use std::path::Path;

use serde_json::json;

/// The clients we write configuration for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientKind {
    /// Claude Code (`claude mcp add`).
    Claude,
    /// Codex CLI (`~/.codex/config.toml`).
    Codex,
    /// Cursor (`.cursor/mcp.json`).
    Cursor,
    /// VS Code (`.vscode/mcp.json`).
    Vscode,
}

/// How the client reaches patchgate.
#[derive(Debug, Clone)]
pub enum Connection<'a> {
    /// A running gate's MCP endpoint.
    Http {
        /// The endpoint.
        url: &'a str,
        /// Its bearer token.
        token: &'a str,
    },
    /// A stdio server the client spawns.
    Stdio {
        /// The patchgate binary.
        exe: &'a Path,
        /// The project root.
        root: &'a Path,
    },
}

fn toml_str(s: &str) -> String {
    // A TOML basic string is a JSON string minus a few escapes JSON never produces.
    serde_json::to_string(s).unwrap_or_else(|_| format!("\"{s}\""))
}

fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-:=@,+".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// The snippet for `kind` over `conn`; `review_timeout_s` sets the client's tool timeout
/// where it has one (a person needs time to decide).
pub fn snippet(kind: ClientKind, conn: &Connection, review_timeout_s: u64) -> String {
    let tool_timeout = review_timeout_s + 60;
    match (kind, conn) {
        (ClientKind::Claude, Connection::Http { url, token }) => format!(
            "claude mcp add --transport http patchgate {} --header {}\n{}",
            shell_quote(url),
            shell_quote(&format!("Authorization: Bearer {token}")),
            claude_permissions()
        ),
        (ClientKind::Claude, Connection::Stdio { exe, root }) => format!(
            "claude mcp add patchgate -- {} serve --stdio --root {}\n{}",
            shell_quote(&exe.to_string_lossy()),
            shell_quote(&root.to_string_lossy()),
            claude_permissions()
        ),
        (ClientKind::Codex, Connection::Http { url, token }) => format!(
            "# ~/.codex/config.toml\n[mcp_servers.patchgate]\nurl = {}\nhttp_headers = {{ \"Authorization\" = {} }}\ntool_timeout_sec = {tool_timeout}\n{CODEX_APPROVE}",
            toml_str(url),
            toml_str(&format!("Bearer {token}"))
        ),
        (ClientKind::Codex, Connection::Stdio { exe, root }) => format!(
            "# ~/.codex/config.toml\n[mcp_servers.patchgate]\ncommand = {}\nargs = [\"serve\", \"--stdio\", \"--root\", {}]\ntool_timeout_sec = {tool_timeout}\n{CODEX_APPROVE}",
            toml_str(&exe.to_string_lossy()),
            toml_str(&root.to_string_lossy())
        ),
        (ClientKind::Cursor, Connection::Http { url, token }) => pretty(json!({
            "mcpServers": {"patchgate": {
                "url": url,
                "headers": {"Authorization": format!("Bearer {token}")}
            }}
        })),
        (ClientKind::Cursor, Connection::Stdio { exe, root }) => pretty(json!({
            "mcpServers": {"patchgate": {
                "command": exe,
                "args": ["serve", "--stdio", "--root", root]
            }}
        })),
        (ClientKind::Vscode, Connection::Http { url, token }) => pretty(json!({
            "servers": {"patchgate": {
                "type": "http",
                "url": url,
                "headers": {"Authorization": format!("Bearer {token}")}
            }}
        })),
        (ClientKind::Vscode, Connection::Stdio { exe, root }) => pretty(json!({
            "servers": {"patchgate": {
                "type": "stdio",
                "command": exe,
                "args": ["serve", "--stdio", "--root", root]
            }}
        })),
    }
}

/// Codex's per-server approval default: patchgate's tools run without Codex asking (a person
/// approves each edit in the gate), so `codex exec` works under `approval_policy = "never"`.
const CODEX_APPROVE: &str = "default_tools_approval_mode = \"approve\"\n";

/// The rule that pre-approves every patchgate tool in Claude Code's permission lists.
pub(crate) const CLAUDE_ALLOW: &str = "mcp__patchgate__*";

/// Claude Code's own file-writing tools, which would write behind the gate's back.
pub(crate) const CLAUDE_EDIT_TOOLS: [&str; 4] = ["Edit", "Write", "MultiEdit", "NotebookEdit"];

/// Claude Code's project settings that pre-approve patchgate's tools and deny its own edit
/// tools, as shell comments (the snippet stays runnable).
fn claude_permissions() -> String {
    let settings = json!({"permissions": {"allow": [CLAUDE_ALLOW], "deny": CLAUDE_EDIT_TOOLS}});
    format!(
        "# pre-approve patchgate and keep Claude's own edit tools off: merge into .claude/settings.json\n#   {settings}\n# headless: claude -p --allowedTools '{CLAUDE_ALLOW}' --disallowedTools {} \"...\"\n",
        CLAUDE_EDIT_TOOLS.join(",")
    )
}

/// How to keep `kind` from writing files behind the gate's back, in its own terms (for
/// standard error, beside the snippet).
pub fn advice(kind: ClientKind, root: &Path) -> String {
    let root = root.display();
    match kind {
        ClientKind::Claude => format!(
            "patchgate: so that every edit of {root} goes through the gate, Claude Code must not write files itself: \
             put the permissions above in {root}/.claude/settings.json (allow `{CLAUDE_ALLOW}`, deny {}); \
             `claude -p` runs need the same, or the --allowedTools/--disallowedTools flags shown\n",
            CLAUDE_EDIT_TOOLS.join(", ")
        ),
        ClientKind::Codex => format!(
            "patchgate: the table above pre-approves patchgate's tools (`default_tools_approval_mode`); \
             so that every edit of {root} goes through the gate, run Codex with `sandbox_mode = \"read-only\"` \
             (or `codex --sandbox read-only`): its own patches and shell writes are then refused, \
             and edits go through patchgate\n"
        ),
        ClientKind::Cursor => format!(
            "patchgate: Cursor's own agent edits do not pass through patchgate: tell the agent to edit {root} \
             only with patchgate's tools, and let patchgate's tools run without asking in Cursor's MCP settings \
             (a person approves each edit in the gate)\n"
        ),
        ClientKind::Vscode => format!(
            "patchgate: VS Code's own edit tools do not pass through patchgate: disable them in the chat's tool \
             picker, and allow patchgate's tools for the workspace {root} when VS Code first asks \
             (a person approves each edit in the gate)\n"
        ),
    }
}

fn pretty(v: serde_json::Value) -> String {
    let mut s = serde_json::to_string_pretty(&v).unwrap_or_default();
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_snippets_carry_url_and_token() {
        let c = Connection::Http {
            url: "http://127.0.0.1:8787/mcp",
            token: "tok",
        };
        let s = snippet(ClientKind::Claude, &c, 600);
        assert!(
            s.starts_with("claude mcp add --transport http patchgate http://127.0.0.1:8787/mcp --header 'Authorization: Bearer tok'\n"),
            "{s}"
        );
        let s = snippet(ClientKind::Codex, &c, 600);
        let t: toml::Value = toml::from_str(&s).unwrap();
        assert_eq!(
            t["mcp_servers"]["patchgate"]["url"].as_str(),
            Some("http://127.0.0.1:8787/mcp")
        );
        assert_eq!(
            t["mcp_servers"]["patchgate"]["tool_timeout_sec"].as_integer(),
            Some(660)
        );
        for kind in [ClientKind::Cursor, ClientKind::Vscode] {
            let v: serde_json::Value = serde_json::from_str(&snippet(kind, &c, 600)).unwrap();
            let key = if kind == ClientKind::Cursor {
                "mcpServers"
            } else {
                "servers"
            };
            assert_eq!(
                v[key]["patchgate"]["headers"]["Authorization"],
                "Bearer tok"
            );
        }
    }

    #[test]
    fn stdio_snippets_spawn_serve_stdio() {
        let exe = Path::new("/opt/my tools/patchgate");
        let root = Path::new("/work/proj");
        let c = Connection::Stdio { exe, root };
        let claude = snippet(ClientKind::Claude, &c, 600);
        assert!(
            claude.starts_with("claude mcp add patchgate -- '/opt/my tools/patchgate' serve --stdio --root /work/proj\n"),
            "{claude}"
        );
        let v: serde_json::Value =
            serde_json::from_str(&snippet(ClientKind::Vscode, &c, 600)).unwrap();
        assert_eq!(v["servers"]["patchgate"]["type"], "stdio");
        assert_eq!(
            v["servers"]["patchgate"]["args"],
            json!(["serve", "--stdio", "--root", "/work/proj"])
        );
        let t: toml::Value = toml::from_str(&snippet(ClientKind::Codex, &c, 600)).unwrap();
        assert_eq!(
            t["mcp_servers"]["patchgate"]["command"].as_str(),
            Some("/opt/my tools/patchgate")
        );
    }

    #[test]
    fn each_client_pre_approves_patchgate_and_keeps_its_own_edits_off() {
        let c = Connection::Stdio {
            exe: Path::new("/bin/patchgate"),
            root: Path::new("/p"),
        };
        let t: toml::Value = toml::from_str(&snippet(ClientKind::Codex, &c, 600)).unwrap();
        assert_eq!(
            t["mcp_servers"]["patchgate"]["default_tools_approval_mode"].as_str(),
            Some("approve")
        );
        let claude = snippet(ClientKind::Claude, &c, 600);
        // Every line after the command is a comment: the snippet stays runnable.
        assert!(
            claude.lines().skip(1).all(|l| l.starts_with('#')),
            "{claude}"
        );
        let json_line = claude
            .lines()
            .nth(2)
            .unwrap()
            .trim_start_matches('#')
            .trim();
        let v: serde_json::Value = serde_json::from_str(json_line).unwrap();
        assert_eq!(v["permissions"]["allow"], json!(["mcp__patchgate__*"]));
        assert_eq!(v["permissions"]["deny"][1], "Write");
        assert!(advice(ClientKind::Codex, Path::new("/p")).contains("read-only"));
        assert!(advice(ClientKind::Claude, Path::new("/p")).contains("/p/.claude/settings.json"));
    }
}
