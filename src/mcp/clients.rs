//! `patchgate config claude|codex|cursor|vscode`: the snippet that connects a client to
//! patchgate — a stdio server the client spawns (it forwards to whatever gate runs for the
//! root), or a gate's HTTP endpoint — with patchgate's tools pre-approved in the client's own
//! terms (the gate is the approval), and advice on keeping the client's own edit tools off.

use std::path::Path;

use serde_json::{Value, json};

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
        /// The project root; none: the server's working directory (a user-wide entry).
        root: Option<&'a Path>,
    },
}

/// The name patchgate's server has in every client's configuration.
pub const SERVER_NAME: &str = "patchgate";

/// The rule that pre-approves every patchgate tool in Claude Code's permission lists.
pub(crate) const CLAUDE_ALLOW: &str = "mcp__patchgate__*";

/// Claude Code's own file-writing tools, which would write behind the gate's back (the tools
/// Claude Code 2.1 offers its model; a deny rule naming a tool it does not have is warned
/// about).
pub(crate) const CLAUDE_EDIT_TOOLS: [&str; 3] = ["Edit", "Write", "NotebookEdit"];

/// Codex's per-server approval key: `approve` lets patchgate's tools run without Codex asking
/// (a person approves each edit in the gate), so `codex exec` works unattended.
pub(crate) const CODEX_APPROVE_KEY: &str = "default_tools_approval_mode";

/// The variables Codex passes on to patchgate's stdio server (it passes only a few by
/// default): where the state directory, and so the gates' discovery entries, are.
pub(crate) const CODEX_ENV_VARS: [&str; 4] = [
    "PATCHGATE_STATE_DIR",
    "XDG_STATE_HOME",
    "PATCHGATE_CONFIG",
    "PATCHGATE_LOG",
];

/// The entry of Cursor's `permissions.json` `mcpAllowlist` that lets every patchgate tool run
/// without asking.
pub(crate) const CURSOR_ALLOW: &str = "patchgate:*";

/// A word for a POSIX shell: as it is when it is plain, else single-quoted.
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-:=@,+".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// `serve --stdio` and its `--root`, when there is one.
fn stdio_args(root: Option<&Path>) -> Vec<String> {
    let mut args = vec!["serve".to_string(), "--stdio".to_string()];
    if let Some(r) = root {
        args.push("--root".to_string());
        args.push(r.to_string_lossy().into_owned());
    }
    args
}

/// patchgate's server entry in `kind`'s configuration over `conn`, as JSON (Codex's TOML
/// table has the same keys); `review_timeout_s` sets the client's tool timeout where it has
/// one (a person needs time to decide).
pub fn server_entry(kind: ClientKind, conn: &Connection, review_timeout_s: u64) -> Value {
    let tool_timeout = review_timeout_s.saturating_add(60);
    let bearer = |token: &str| format!("Bearer {token}");
    match (kind, conn) {
        (ClientKind::Claude | ClientKind::Vscode, Connection::Http { url, token }) => json!({
            "type": "http", "url": url, "headers": {"Authorization": bearer(token)}
        }),
        (ClientKind::Claude, Connection::Stdio { exe, root }) => json!({
            "type": "stdio", "command": exe, "args": stdio_args(*root), "env": {}
        }),
        (ClientKind::Vscode, Connection::Stdio { exe, root }) => json!({
            "type": "stdio", "command": exe, "args": stdio_args(*root)
        }),
        (ClientKind::Cursor, Connection::Http { url, token }) => json!({
            "url": url, "headers": {"Authorization": bearer(token)}
        }),
        (ClientKind::Cursor, Connection::Stdio { exe, root }) => json!({
            "command": exe, "args": stdio_args(*root)
        }),
        (ClientKind::Codex, Connection::Http { url, token }) => json!({
            "url": url,
            "http_headers": {"Authorization": bearer(token)},
            "tool_timeout_sec": tool_timeout,
            CODEX_APPROVE_KEY: "approve",
        }),
        // Codex passes only a few variables (HOME, PATH, …) to a server: the ones that say
        // where the gates' discovery entries are must be named.
        (ClientKind::Codex, Connection::Stdio { exe, root }) => json!({
            "command": exe,
            "args": stdio_args(*root),
            "env_vars": CODEX_ENV_VARS,
            "tool_timeout_sec": tool_timeout,
            CODEX_APPROVE_KEY: "approve",
        }),
    }
}

/// What `patchgate config` prints for `kind` over `conn`: for Claude Code, shell commands with
/// the same effect as `--write` (`exe` names the patchgate binary to run); for the others, the
/// file's content to merge, headed by a comment naming the file where its format has comments.
pub fn snippet(
    kind: ClientKind,
    conn: &Connection,
    review_timeout_s: u64,
    user: bool,
    exe: &Path,
) -> String {
    let entry = server_entry(kind, conn, review_timeout_s);
    match kind {
        ClientKind::Claude => claude_commands(conn, user, exe),
        ClientKind::Codex => {
            let table = json!({"mcp_servers": {SERVER_NAME: entry}});
            format!(
                "# ~/.codex/config.toml\n{}",
                toml::to_string(&table).unwrap_or_default()
            )
        }
        ClientKind::Cursor => pretty(json!({"mcpServers": {SERVER_NAME: entry}})),
        ClientKind::Vscode => pretty(json!({"servers": {SERVER_NAME: entry}})),
    }
}

/// Claude Code's commands: `claude mcp add` writes the server entry (`.mcp.json`, or the user's
/// `~/.claude.json`), and patchgate merges the pre-approval, which Claude has no command for.
fn claude_commands(conn: &Connection, user: bool, exe: &Path) -> String {
    let scope = if user { "user" } else { "project" };
    let add = match conn {
        Connection::Http { url, token } => format!(
            "claude mcp add --scope {scope} --transport http {SERVER_NAME} {} --header {}",
            shell_quote(url),
            shell_quote(&format!("Authorization: Bearer {token}"))
        ),
        Connection::Stdio { exe, root } => {
            let args: Vec<String> = stdio_args(*root).iter().map(|a| shell_quote(a)).collect();
            format!(
                "claude mcp add --scope {scope} {SERVER_NAME} -- {} {}",
                shell_quote(&exe.to_string_lossy()),
                args.join(" ")
            )
        }
    };
    let exe = shell_quote(&exe.to_string_lossy());
    match (conn, user) {
        (_, true) => format!("{add}\n{exe} config claude --write --user --only approval\n"),
        (
            Connection::Stdio {
                root: Some(root), ..
            },
            false,
        ) => {
            let root = shell_quote(&root.to_string_lossy());
            format!("cd {root}\n{add}\n{exe} config claude --write --only approval --root {root}\n")
        }
        (_, false) => format!("{add}\n{exe} config claude --write --only approval\n"),
    }
}

/// What `patchgate config` did with the configuration, so that its advice names what is
/// there: printed it (commands or a file's content above the advice), or wrote the parts named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    /// Printed on standard output.
    Printed,
    /// Written into the client's files (`--write`), with or without each part (`--only`).
    Written {
        /// The server entry was written.
        server: bool,
        /// The pre-approval was written.
        approval: bool,
    },
}

/// How to keep `kind` from writing files behind the gate's back, in its own terms (for
/// standard error, after the snippet or the list of files written, as `shown` says; `user`:
/// the user's files, for every project, rather than the project's).
pub fn advice(kind: ClientKind, root: &Path, shown: Shown, user: bool) -> String {
    let root = root.display();
    match kind {
        ClientKind::Claude => {
            let tools = CLAUDE_EDIT_TOOLS.join(", ");
            let denied = match shown {
                Shown::Printed => "the commands above also deny",
                Shown::Written { approval: true, .. } => "the approval just written also denies",
                Shown::Written {
                    approval: false, ..
                } => {
                    return format!(
                        "patchgate: the approval was not written (--only server): Claude Code's own \
                         edit tools ({tools}) can still write {root} behind the gate's back; \
                         `patchgate config claude --write --only approval` denies them\n"
                    );
                }
            };
            if user {
                return format!(
                    "patchgate: so that every edit goes through the gate, {denied} Claude Code's own \
                     edit tools ({tools}) in ~/.claude/settings.json, for every project\n"
                );
            }
            format!(
                "patchgate: so that every edit of {root} goes through the gate, {denied} Claude Code's own \
                 edit tools ({tools}) in .claude/settings.local.json, which Claude reads without a trust prompt \
                 (Claude Code 2.1.200 or later; older ones read its permissions only in a trusted workspace: \
                 run `claude` there once and trust it, or use --user)\n"
            )
        }
        ClientKind::Codex => {
            let table = match shown {
                Shown::Printed => "the table above pre-approves",
                Shown::Written { server: true, .. } => "the table just written pre-approves",
                Shown::Written { server: false, .. } => {
                    "nothing was written: Codex's pre-approval is a key of patchgate's server \
                     table, which `--only approval` leaves out; without --only, the table \
                     pre-approves"
                }
            };
            format!(
                "patchgate: {table} patchgate's tools (`{CODEX_APPROVE_KEY}`); \
                 so that every edit of {root} goes through the gate, run Codex with `sandbox_mode = \"read-only\"` \
                 (or `codex --sandbox read-only`): its own patches and shell writes are then refused, \
                 and edits go through patchgate\n"
            )
        }
        ClientKind::Cursor => {
            let allow = match shown {
                Shown::Written { approval: true, .. } => "the approval just written lets",
                Shown::Printed | Shown::Written { .. } => "`--write` (its approval part) lets",
            };
            format!(
                "patchgate: Cursor's own agent edits do not pass through patchgate: tell the agent to edit {root} \
                 only with patchgate's tools; {allow} patchgate's tools run without asking \
                 (`{CURSOR_ALLOW}` in .cursor/permissions.json's mcpAllowlist; a person approves each edit in the gate)\n"
            )
        }
        ClientKind::Vscode => format!(
            "patchgate: VS Code's own edit tools do not pass through patchgate: disable them in the chat's tool \
             picker, and allow patchgate's tools for the workspace {root} when VS Code first asks \
             (VS Code keeps that choice itself, not in a file; a person approves each edit in the gate)\n"
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

    const EXE: &str = "/opt/my tools/patchgate";

    #[test]
    fn http_entries_carry_url_and_token() {
        let c = Connection::Http {
            url: "http://127.0.0.1:8787/mcp",
            token: "tok",
        };
        let s = snippet(ClientKind::Claude, &c, 600, false, Path::new(EXE));
        assert!(
            s.starts_with("claude mcp add --scope project --transport http patchgate http://127.0.0.1:8787/mcp --header 'Authorization: Bearer tok'\n"),
            "{s}"
        );
        let t: toml::Value =
            toml::from_str(&snippet(ClientKind::Codex, &c, 600, false, Path::new(EXE))).unwrap();
        assert_eq!(
            t["mcp_servers"]["patchgate"]["url"].as_str(),
            Some("http://127.0.0.1:8787/mcp")
        );
        assert_eq!(
            t["mcp_servers"]["patchgate"]["tool_timeout_sec"].as_integer(),
            Some(660)
        );
        for kind in [ClientKind::Cursor, ClientKind::Vscode, ClientKind::Claude] {
            let v = server_entry(kind, &c, 600);
            assert_eq!(v["headers"]["Authorization"], "Bearer tok", "{kind:?}");
        }
    }

    #[test]
    fn stdio_entries_spawn_serve_stdio_with_the_root_or_without_for_the_user() {
        let exe = Path::new(EXE);
        let c = Connection::Stdio {
            exe,
            root: Some(Path::new("/work/proj")),
        };
        let v = server_entry(ClientKind::Vscode, &c, 600);
        assert_eq!(v["type"], "stdio");
        assert_eq!(
            v["args"],
            json!(["serve", "--stdio", "--root", "/work/proj"])
        );
        let t: toml::Value =
            toml::from_str(&snippet(ClientKind::Codex, &c, 600, false, exe)).unwrap();
        assert_eq!(t["mcp_servers"]["patchgate"]["command"].as_str(), Some(EXE));
        assert_eq!(
            t["mcp_servers"]["patchgate"][CODEX_APPROVE_KEY].as_str(),
            Some("approve")
        );
        let user = Connection::Stdio { exe, root: None };
        assert_eq!(
            server_entry(ClientKind::Cursor, &user, 600)["args"],
            json!(["serve", "--stdio"])
        );
    }

    #[test]
    fn claude_commands_are_runnable_lines_not_comments() {
        let exe = Path::new(EXE);
        let c = Connection::Stdio {
            exe,
            root: Some(Path::new("/work/my proj")),
        };
        let s = snippet(ClientKind::Claude, &c, 600, false, exe);
        assert_eq!(
            s,
            "cd '/work/my proj'\n\
             claude mcp add --scope project patchgate -- '/opt/my tools/patchgate' serve --stdio --root '/work/my proj'\n\
             '/opt/my tools/patchgate' config claude --write --only approval --root '/work/my proj'\n"
        );
        assert!(s.lines().all(|l| !l.starts_with('#')));
        let user = snippet(
            ClientKind::Claude,
            &Connection::Stdio { exe, root: None },
            600,
            true,
            exe,
        );
        assert!(
            user.starts_with("claude mcp add --scope user patchgate -- "),
            "{user}"
        );
        assert!(user.contains("--write --user --only approval"), "{user}");
        let printed = Shown::Printed;
        assert!(advice(ClientKind::Codex, Path::new("/p"), printed, false).contains("read-only"));
        assert!(
            advice(ClientKind::Claude, Path::new("/p"), printed, false)
                .contains("settings.local.json")
        );
    }
}
