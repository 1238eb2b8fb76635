//! `patchgate config claude|codex|cursor|vscode`: the snippet that connects a client to the
//! running gate over HTTP (URL and token from the discovery file), or, with no gate running,
//! to a stdio server (which forwards to a gate whenever one runs).

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
            "claude mcp add --transport http patchgate {} --header {}\n",
            shell_quote(url),
            shell_quote(&format!("Authorization: Bearer {token}"))
        ),
        (ClientKind::Claude, Connection::Stdio { exe, root }) => format!(
            "claude mcp add patchgate -- {} serve --stdio --root {}\n",
            shell_quote(&exe.to_string_lossy()),
            shell_quote(&root.to_string_lossy())
        ),
        (ClientKind::Codex, Connection::Http { url, token }) => format!(
            "# ~/.codex/config.toml\n[mcp_servers.patchgate]\nurl = {}\nhttp_headers = {{ \"Authorization\" = {} }}\ntool_timeout_sec = {tool_timeout}\n",
            toml_str(url),
            toml_str(&format!("Bearer {token}"))
        ),
        (ClientKind::Codex, Connection::Stdio { exe, root }) => format!(
            "# ~/.codex/config.toml\n[mcp_servers.patchgate]\ncommand = {}\nargs = [\"serve\", \"--stdio\", \"--root\", {}]\ntool_timeout_sec = {tool_timeout}\n",
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
        assert_eq!(
            s,
            "claude mcp add --transport http patchgate http://127.0.0.1:8787/mcp --header 'Authorization: Bearer tok'\n"
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
        assert_eq!(
            snippet(ClientKind::Claude, &c, 600),
            "claude mcp add patchgate -- '/opt/my tools/patchgate' serve --stdio --root /work/proj\n"
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
}
