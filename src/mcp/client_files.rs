//! `patchgate config CLIENT --write`: merge patchgate's server entry and its pre-approval into
//! the client's own configuration files (the project's, or with `--user` the user's). Every
//! other key is kept, the old file is copied aside first, the new one is written atomically
//! (through a symlink to its target, keeping its mode), and a file that already holds all of it
//! is not touched, so running it twice changes nothing the second time.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::clients::{
    CLAUDE_ALLOW, CLAUDE_EDIT_TOOLS, CURSOR_ALLOW, ClientKind, Connection, SERVER_NAME,
    server_entry,
};

/// Where the configuration goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The project's own files (the client reads them in that project only).
    Project,
    /// The user's files (every project; the stdio server serves its working directory).
    User,
}

/// The user's directories the clients keep their files in.
#[derive(Debug, Clone, Default)]
pub struct Homes {
    /// `$HOME`.
    pub home: Option<PathBuf>,
    /// `$CODEX_HOME` (default `~/.codex`).
    pub codex_home: Option<PathBuf>,
    /// `$XDG_CONFIG_HOME` (default `~/.config`), where VS Code keeps its user files on Linux.
    pub config_home: Option<PathBuf>,
}

impl Homes {
    /// From the environment.
    pub fn from_env() -> Homes {
        let var = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        Homes {
            home: var("HOME"),
            codex_home: var("CODEX_HOME"),
            config_home: var("XDG_CONFIG_HOME"),
        }
    }

    fn home(&self) -> Result<&Path, ConfigFileError> {
        self.home.as_deref().ok_or(ConfigFileError::NoHome)
    }

    /// Codex's directory: `$CODEX_HOME`, else `~/.codex`.
    pub fn codex(&self) -> Option<PathBuf> {
        self.codex_home
            .clone()
            .or_else(|| self.home.as_ref().map(|h| h.join(".codex")))
    }

    /// VS Code's user directory.
    pub(crate) fn vscode_user(&self) -> Result<PathBuf, ConfigFileError> {
        if cfg!(target_os = "macos") {
            return Ok(self.home()?.join("Library/Application Support/Code/User"));
        }
        let config = match &self.config_home {
            Some(c) => c.clone(),
            None => self.home()?.join(".config"),
        };
        Ok(config.join("Code/User"))
    }
}

/// Why a client file could not be changed. Nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum ConfigFileError {
    /// `$HOME` is not set, so the user's files cannot be found.
    #[error("HOME is not set, so the user's configuration cannot be found")]
    NoHome,
    /// The file is not what its client reads (malformed, or a value of the wrong type).
    #[error(
        "{file}: {why}; patchgate changed nothing there (fix it, or add this by hand:\n{wanted})"
    )]
    Unusable {
        /// The file.
        file: PathBuf,
        /// What is wrong with it.
        why: String,
        /// What patchgate would have merged, for a person to add.
        wanted: String,
    },
    /// Reading or writing failed.
    #[error("{file}: cannot {what}: {source}")]
    Io {
        /// The file.
        file: PathBuf,
        /// What was being done.
        what: &'static str,
        /// The cause.
        source: std::io::Error,
    },
}

/// What a file is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// The MCP server entry.
    Server,
    /// The pre-approval of patchgate's tools (and denying the client's own edit tools).
    Approval,
}

/// One change to a JSON or TOML document: set a key, or add strings to a list.
#[derive(Debug, Clone, PartialEq)]
enum Edit {
    /// Set the value at this key path (replacing what was there).
    Set(Vec<&'static str>, Value),
    /// Add these strings to the list at this key path (the ones missing, in order).
    Add(Vec<&'static str>, Vec<String>),
}

/// The edits one client file needs.
#[derive(Debug, Clone)]
pub struct FileChange {
    /// The file.
    pub file: PathBuf,
    /// What it is for.
    pub part: Part,
    /// The project root the file must stay in (after symlinks), for a project's file.
    within: Option<PathBuf>,
    toml: bool,
    edits: Vec<Edit>,
}

/// What happened to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// It did not exist and was created.
    Created,
    /// It was changed; the old content is in `backup`.
    Updated {
        /// The copy of the file as it was.
        backup: PathBuf,
    },
    /// It already held everything.
    Unchanged,
}

/// The files `kind` needs for patchgate over `conn` in `scope`, each with its edits. `conn`
/// should carry no root for a user-wide entry (and for Codex, whose entry is always the
/// user's: see [`user_wide`]).
pub fn plan(
    kind: ClientKind,
    conn: &Connection,
    review_timeout_s: u64,
    scope: Scope,
    root: &Path,
    homes: &Homes,
) -> Result<Vec<FileChange>, ConfigFileError> {
    let entry = server_entry(kind, conn, review_timeout_s);
    let user = scope == Scope::User;
    let within = (!user).then(|| root.to_path_buf());
    let server = |file: PathBuf, key: &'static str| FileChange {
        file,
        part: Part::Server,
        within: within.clone(),
        toml: false,
        edits: vec![Edit::Set(vec![key, SERVER_NAME], entry.clone())],
    };
    Ok(match kind {
        ClientKind::Claude => {
            let (servers, settings) = if user {
                let home = homes.home()?;
                (
                    home.join(".claude.json"),
                    home.join(".claude/settings.json"),
                )
            } else {
                // Project settings.json is ignored until the workspace is trusted;
                // settings.local.json is read without that.
                (
                    root.join(".mcp.json"),
                    root.join(".claude/settings.local.json"),
                )
            };
            let deny = CLAUDE_EDIT_TOOLS.map(String::from).to_vec();
            vec![
                server(servers, "mcpServers"),
                FileChange {
                    file: settings,
                    part: Part::Approval,
                    within: within.clone(),
                    toml: false,
                    edits: claude_approval(user, deny),
                },
            ]
        }
        // Codex reads a project's `.codex/config.toml` only in a project it trusts, and
        // trusting one also lets its own sandbox write there: the server goes into the user's
        // file whatever the scope, without `--root` (Codex starts it in the project).
        ClientKind::Codex => {
            let dir = homes.codex().ok_or(ConfigFileError::NoHome)?;
            vec![FileChange {
                file: dir.join("config.toml"),
                part: Part::Server,
                within: None,
                toml: true,
                edits: vec![Edit::Set(vec!["mcp_servers", SERVER_NAME], entry)],
            }]
        }
        ClientKind::Cursor => {
            let dir = if user {
                homes.home()?.join(".cursor")
            } else {
                root.join(".cursor")
            };
            vec![
                server(dir.join("mcp.json"), "mcpServers"),
                FileChange {
                    file: dir.join("permissions.json"),
                    part: Part::Approval,
                    within: within.clone(),
                    toml: false,
                    edits: vec![Edit::Add(vec!["mcpAllowlist"], vec![CURSOR_ALLOW.into()])],
                },
            ]
        }
        ClientKind::Vscode => {
            let file = if user {
                homes.vscode_user()?.join("mcp.json")
            } else {
                root.join(".vscode/mcp.json")
            };
            vec![server(file, "servers")]
        }
    })
}

/// Whether `kind`'s entry goes into the user's files in `scope` (so it names no root).
pub fn user_wide(kind: ClientKind, scope: Scope) -> bool {
    scope == Scope::User || kind == ClientKind::Codex
}

/// Claude Code's pre-approval: allow patchgate's tools, deny Claude's own edit tools, and in
/// a project mark the `.mcp.json` server approved (what Claude's own "use this server?"
/// question records for interactive sessions; `claude -p` does not ask).
fn claude_approval(user: bool, deny: Vec<String>) -> Vec<Edit> {
    let mut edits = vec![
        Edit::Add(vec!["permissions", "allow"], vec![CLAUDE_ALLOW.into()]),
        Edit::Add(vec!["permissions", "deny"], deny),
    ];
    if !user {
        edits.push(Edit::Add(
            vec!["enabledMcpjsonServers"],
            vec![SERVER_NAME.into()],
        ));
    }
    edits
}

/// Refuse a project's file that resolves (itself, or a directory on its way: `.vscode`,
/// `.claude`, `.cursor`) out of the project: it is not the project's to change. Checked for
/// every file before any is written, and again as each is.
pub fn refuse_link_out(change: &FileChange) -> Result<(), ConfigFileError> {
    let Some(root) = &change.within else {
        return Ok(());
    };
    let file = resolved(&change.file);
    let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.clone());
    if file.starts_with(&root) {
        return Ok(());
    }
    Err(change.unusable(&format!(
        "it links to {}, outside the project",
        file.display()
    )))
}

/// Apply `change` to its file: read it (a missing file is empty), merge, and write it only when
/// the merge changed something, after copying the old file aside.
pub fn apply(change: &FileChange) -> Result<Outcome, ConfigFileError> {
    // A symlinked configuration (a dotfiles repository) is changed at its target; a file
    // not there yet is written where its directory resolves to.
    let file = resolved(&change.file);
    let io = |what: &'static str| {
        let file = file.clone();
        move |source| ConfigFileError::Io { file, what, source }
    };
    refuse_link_out(change)?;
    let old = match read_config(&file) {
        Ok(old) => old,
        Err(ReadError::Unusable(why)) => return Err(change.unusable(why)),
        Err(ReadError::Io(e)) => return Err(io("read it")(e)),
    };
    let text = match &old {
        Some(bytes) => Some(
            String::from_utf8(bytes.clone())
                .map_err(|_| change.unusable("it is not UTF-8 text"))?,
        ),
        None => None,
    };
    let new = if change.toml {
        merge_toml(text.as_deref(), &change.edits).map_err(|why| change.unusable(&why))?
    } else {
        merge_json(text.as_deref(), &change.edits).map_err(|why| change.unusable(&why))?
    };
    let Some(new) = new else {
        return Ok(Outcome::Unchanged);
    };
    let backup = match &old {
        Some(bytes) => Some(backup(&file, bytes).map_err(io("copy it aside"))?),
        None => None,
    };
    crate::workspace::fs::write_user_file(&file, new.as_bytes()).map_err(io("write it"))?;
    Ok(match backup {
        Some(backup) => Outcome::Updated { backup },
        None => Outcome::Created,
    })
}

/// `path` with every symlink resolved: its longest leading part that exists, canonicalized,
/// and the rest (which does not exist yet, so holds no link) as given. A file not there yet
/// in a directory that links out of the project (`.vscode -> ~/.config/Code/User`) resolves
/// out of it, and is refused as such (docs/DESIGN.md §7).
fn resolved(path: &Path) -> PathBuf {
    let mut rest = Vec::new();
    let mut at = path;
    loop {
        if let Ok(real) = std::fs::canonicalize(at) {
            return rest.iter().rev().fold(real, |p, name| p.join(name));
        }
        match (at.parent(), at.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                at = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// A client's configuration file is small; a larger one is not read.
const MAX_CONFIG_BYTES: u64 = 16 << 20;

/// Why a configuration file cannot be read.
#[derive(Debug)]
pub(crate) enum ReadError {
    /// Not a regular file (a device, a FIFO, a directory), or over 16 MiB.
    Unusable(&'static str),
    /// Reading failed.
    Io(std::io::Error),
}

/// A client's configuration file: `None` when it does not exist. Only a regular file (after
/// symlinks) of at most 16 MiB is read, so a repository's `.mcp.json` linked to `/dev/zero`
/// or a FIFO cannot exhaust memory or hang the reader.
pub(crate) fn read_config(path: &Path) -> Result<Option<Vec<u8>>, ReadError> {
    use std::io::Read;
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(ReadError::Io(e)),
    };
    if !meta.is_file() {
        return Err(ReadError::Unusable("it is not a regular file"));
    }
    let file = std::fs::File::open(path).map_err(ReadError::Io)?;
    let mut bytes = Vec::new();
    file.take(MAX_CONFIG_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        return Err(ReadError::Unusable(
            "it is over 16 MiB, too large for a configuration file",
        ));
    }
    Ok(Some(bytes))
}

impl FileChange {
    /// The keys this change sets or adds to, for a person (`mcpServers.patchgate`,
    /// `permissions.allow += mcp__patchgate__*`).
    pub fn describe(&self) -> String {
        let mut s = String::new();
        for (i, e) in self.edits.iter().enumerate() {
            if i > 0 {
                s.push_str(", ");
            }
            match e {
                Edit::Set(at, _) => s.push_str(&at.join(".")),
                Edit::Add(at, items) => {
                    let _ = write!(s, "{} += {}", at.join("."), items.join(" "));
                }
            }
        }
        s
    }

    /// What this change would merge, as a document a person can paste.
    fn wanted(&self) -> String {
        let mut doc = Value::Object(Map::new());
        for e in &self.edits {
            let (at, v) = match e {
                Edit::Set(at, v) => (at, v.clone()),
                Edit::Add(at, items) => (at, json!(items)),
            };
            let mut cur = &mut doc;
            for k in &at[..at.len() - 1] {
                cur = cur
                    .as_object_mut()
                    .map(|o| o.entry(k.to_string()).or_insert_with(|| json!({})))
                    .unwrap_or_else(|| unreachable!("built from objects only"));
            }
            if let Some(o) = cur.as_object_mut() {
                o.insert(at[at.len() - 1].to_string(), v);
            }
        }
        if self.toml {
            toml::to_string(&doc).unwrap_or_default()
        } else {
            serde_json::to_string_pretty(&doc).unwrap_or_default()
        }
    }

    fn unusable(&self, why: &str) -> ConfigFileError {
        ConfigFileError::Unusable {
            file: self.file.clone(),
            why: why.to_string(),
            wanted: self.wanted(),
        }
    }
}

/// Merge `edits` into the JSON document `text` (none: an empty object). `None` when nothing
/// changes.
fn merge_json(text: Option<&str>, edits: &[Edit]) -> Result<Option<String>, String> {
    let mut doc: Value = match text {
        Some(t) if !t.trim().is_empty() => serde_json::from_str(t).map_err(|e| {
            format!("it is not plain JSON ({e}; comments and trailing commas are not merged)")
        })?,
        _ => json!({}),
    };
    let before = doc.clone();
    for e in edits {
        let at = match e {
            Edit::Set(at, _) | Edit::Add(at, _) => at,
        };
        let (last, parents) = at.split_last().unwrap_or_else(|| unreachable!("non-empty"));
        let mut cur = &mut doc;
        let mut path = String::new();
        for k in parents {
            path.push_str(k);
            let obj = cur
                .as_object_mut()
                .ok_or_else(|| format!("`{path}` is not an object"))?;
            cur = obj.entry(k.to_string()).or_insert_with(|| json!({}));
            path.push('.');
        }
        let obj = cur
            .as_object_mut()
            .ok_or_else(|| format!("`{}` is not an object", path.trim_end_matches('.')))?;
        match e {
            Edit::Set(_, v) => {
                obj.insert(last.to_string(), v.clone());
            }
            Edit::Add(_, items) => {
                let list = obj.entry(last.to_string()).or_insert_with(|| json!([]));
                let list = list
                    .as_array_mut()
                    .ok_or_else(|| format!("`{path}{last}` is not a list"))?;
                for item in items {
                    if !list.iter().any(|x| x.as_str() == Some(item)) {
                        list.push(json!(item));
                    }
                }
            }
        }
    }
    if doc == before && text.is_some() {
        return Ok(None);
    }
    let mut out = serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?;
    out.push('\n');
    Ok(Some(out))
}

/// Merge `edits` into the TOML document `text`, keeping its comments and layout. `None` when
/// nothing changes.
fn merge_toml(text: Option<&str>, edits: &[Edit]) -> Result<Option<String>, String> {
    let source = text.unwrap_or("");
    let mut doc: toml_edit::DocumentMut = source
        .parse()
        .map_err(|e| format!("it is not valid TOML ({e})"))?;
    for e in edits {
        let Edit::Set(at, value) = e else {
            unreachable!("TOML files only get tables set");
        };
        let (last, parents) = at.split_last().unwrap_or_else(|| unreachable!("non-empty"));
        let mut table = doc.as_table_mut();
        for k in parents {
            let item = table
                .entry(k)
                .or_insert_with(|| toml_edit::Item::Table(implicit_table()));
            table = item
                .as_table_mut()
                .ok_or_else(|| format!("`{k}` is not a table"))?;
        }
        let wanted = toml_table(value)?;
        let same = table
            .get(last)
            .and_then(toml_edit::Item::as_table)
            .is_some_and(|t| same_table(t, &wanted));
        if !same {
            table.insert(last, toml_edit::Item::Table(wanted));
        }
    }
    let out = doc.to_string();
    Ok((out != source || text.is_none()).then_some(out))
}

fn implicit_table() -> toml_edit::Table {
    let mut t = toml_edit::Table::new();
    t.set_implicit(true);
    t
}

/// A JSON object of strings, numbers, lists and objects as a TOML table, its objects inline
/// (`http_headers = { … }`), so the table stays in one piece wherever it is inserted.
fn toml_table(v: &Value) -> Result<toml_edit::Table, String> {
    let text = toml::to_string(v).map_err(|e| e.to_string())?;
    let doc: toml_edit::DocumentMut = text.parse().map_err(|e| format!("{e}"))?;
    let mut table = toml_edit::Table::new();
    for (k, item) in doc.as_table().iter() {
        let item = match item.as_table() {
            Some(sub) => toml_edit::value(sub.clone().into_inline_table()),
            None => item.clone(),
        };
        table.insert(k, item);
    }
    Ok(table)
}

/// Whether two tables hold the same keys and values, layout aside.
fn same_table(a: &toml_edit::Table, b: &toml_edit::Table) -> bool {
    let plain = |t: &toml_edit::Table| -> Option<toml::Table> {
        let mut doc = toml_edit::DocumentMut::new();
        for (k, v) in t.iter() {
            doc.insert(k, v.clone());
        }
        doc.to_string().parse().ok()
    };
    plain(a).is_some() && plain(a) == plain(b)
}

/// Copy `bytes` (the file as it was) beside `file`, under the first free name
/// `FILE.patchgate-backup`, `FILE.patchgate-backup-2`, …
fn backup(file: &Path, bytes: &[u8]) -> std::io::Result<PathBuf> {
    let name = file.file_name().unwrap_or_default().to_string_lossy();
    for n in 1u32.. {
        let suffix = if n == 1 {
            String::new()
        } else {
            format!("-{n}")
        };
        let path = file.with_file_name(format!("{name}.patchgate-backup{suffix}"));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(mut f) => {
                use std::io::Write;
                // The backup may hold secrets (a client's tokens): only the user reads it.
                set_private(&f)?;
                f.write_all(bytes)?;
                crate::workspace::synced::sync(&f, crate::workspace::synced::Flush::All)?;
                // Its entry too: a crash must not lose the backup once the file is rewritten.
                if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                    crate::workspace::fs::sync_dir_now(dir)?;
                }
                return Ok(path);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    unreachable!("some backup name is free")
}

fn set_private(f: &std::fs::File) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    f.set_permissions(std::fs::Permissions::from_mode(0o600))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stdio() -> Connection<'static> {
        Connection::Stdio {
            exe: Path::new("/opt/bin/patchgate"),
            root: Some(Path::new("/p")),
        }
    }

    #[test]
    fn json_merge_keeps_other_keys_and_adds_only_what_is_missing() {
        let edits = vec![
            Edit::Set(vec!["mcpServers", "patchgate"], json!({"command": "pg"})),
            Edit::Add(vec!["permissions", "allow"], vec!["a".into(), "b".into()]),
        ];
        let text = r#"{"mcpServers": {"other": {"command": "x"}}, "permissions": {"allow": ["b", "c"]}, "theme": "dark"}"#;
        let out = merge_json(Some(text), &edits).unwrap().unwrap();
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["mcpServers"]["other"]["command"], "x");
        assert_eq!(v["mcpServers"]["patchgate"]["command"], "pg");
        assert_eq!(v["permissions"]["allow"], json!(["b", "c", "a"]));
        assert_eq!(v["theme"], "dark");
        assert_eq!(merge_json(Some(&out), &edits).unwrap(), None);
    }

    #[test]
    fn json_that_is_not_what_the_client_reads_is_refused() {
        let edits = vec![Edit::Add(vec!["permissions", "allow"], vec!["a".into()])];
        let e = merge_json(Some(r#"{"permissions": ["x"]}"#), &edits).unwrap_err();
        assert!(e.contains("`permissions` is not an object"), "{e}");
        let e = merge_json(Some(r#"{"permissions": {"allow": "a"}}"#), &edits).unwrap_err();
        assert!(e.contains("`permissions.allow` is not a list"), "{e}");
        let e = merge_json(Some("{\n  // a comment\n}"), &edits).unwrap_err();
        assert!(e.contains("not plain JSON"), "{e}");
    }

    #[test]
    fn toml_merge_keeps_comments_and_other_tables() {
        let edits = vec![Edit::Set(
            vec!["mcp_servers", "patchgate"],
            json!({"command": "pg", "args": ["serve"], "tool_timeout_sec": 660}),
        )];
        let text =
            "# my settings\nmodel = \"o3\" # the model\n\n[mcp_servers.docs]\ncommand = \"docs\"\n";
        let out = merge_toml(Some(text), &edits).unwrap().unwrap();
        assert!(
            out.starts_with("# my settings\nmodel = \"o3\" # the model\n"),
            "{out}"
        );
        let t: toml::Table = out.parse().unwrap();
        assert_eq!(t["mcp_servers"]["docs"]["command"].as_str(), Some("docs"));
        assert_eq!(
            t["mcp_servers"]["patchgate"]["tool_timeout_sec"].as_integer(),
            Some(660)
        );
        assert_eq!(merge_toml(Some(&out), &edits).unwrap(), None);
        // A changed entry is replaced.
        let edits2 = vec![Edit::Set(
            vec!["mcp_servers", "patchgate"],
            json!({"command": "pg2"}),
        )];
        let out2 = merge_toml(Some(&out), &edits2).unwrap().unwrap();
        let t: toml::Table = out2.parse().unwrap();
        assert_eq!(
            t["mcp_servers"]["patchgate"]["command"].as_str(),
            Some("pg2")
        );
        assert!(t["mcp_servers"]["patchgate"].get("args").is_none());
        // Nested objects stay inside the entry, inline, whatever tables follow it.
        let edits3 = vec![Edit::Set(
            vec!["mcp_servers", "patchgate"],
            json!({"url": "http://127.0.0.1:1/mcp", "http_headers": {"Authorization": "Bearer t"}}),
        )];
        let text = "[mcp_servers.docs]\ncommand = \"docs\"\n\n[model_providers.x]\nname = \"x\"\n";
        let out3 = merge_toml(Some(text), &edits3).unwrap().unwrap();
        assert!(
            out3.contains("http_headers = { Authorization = \"Bearer t\" }"),
            "{out3}"
        );
        assert!(
            !out3.contains("[mcp_servers.patchgate.http_headers]"),
            "{out3}"
        );
    }

    #[test]
    fn applying_twice_writes_once_and_backs_up_the_old_file() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(
            root.join(".mcp.json"),
            r#"{"mcpServers": {"db": {"command": "db"}}}"#,
        )
        .unwrap();
        let homes = Homes::default();
        let changes = plan(
            ClientKind::Claude,
            &stdio(),
            600,
            Scope::Project,
            root,
            &homes,
        )
        .unwrap();
        assert_eq!(changes.len(), 2);
        let first: Vec<Outcome> = changes.iter().map(|c| apply(c).unwrap()).collect();
        let backup = root.join(".mcp.json.patchgate-backup");
        assert_eq!(
            first[0],
            Outcome::Updated {
                backup: backup.clone()
            }
        );
        assert_eq!(first[1], Outcome::Created);
        assert_eq!(
            std::fs::read_to_string(&backup).unwrap(),
            r#"{"mcpServers": {"db": {"command": "db"}}}"#
        );
        let second: Vec<Outcome> = changes.iter().map(|c| apply(c).unwrap()).collect();
        assert_eq!(second, [Outcome::Unchanged, Outcome::Unchanged]);
        assert!(!root.join(".mcp.json.patchgate-backup-2").exists());
        let settings: Value = serde_json::from_str(
            &std::fs::read_to_string(root.join(".claude/settings.local.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(settings["permissions"]["allow"], json!([CLAUDE_ALLOW]));
    }

    #[test]
    fn a_device_or_a_link_out_of_the_project_is_refused_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("proj");
        std::fs::create_dir_all(root.join(".claude")).unwrap();
        let home = dir.path().join("home");
        std::fs::create_dir_all(home.join(".claude")).unwrap();
        // The project's files linked out of it: not the project's to change.
        std::os::unix::fs::symlink("/dev/zero", root.join(".mcp.json")).unwrap();
        std::fs::write(home.join(".claude/settings.json"), "{}").unwrap();
        let user_settings = home.join(".claude/settings.json");
        std::os::unix::fs::symlink(&user_settings, root.join(".claude/settings.local.json"))
            .unwrap();
        let none = Homes::default();
        let changes = plan(
            ClientKind::Claude,
            &stdio(),
            600,
            Scope::Project,
            &root,
            &none,
        );
        for c in changes.unwrap() {
            let e = apply(&c).unwrap_err().to_string();
            assert!(e.contains("outside the project"), "{e}");
        }
        assert_eq!(std::fs::read_to_string(&user_settings).unwrap(), "{}");
        assert!(!home.join(".claude/settings.json.patchgate-backup").exists());
        // The user's own file linked to a device: refused at once, not read.
        std::os::unix::fs::symlink("/dev/zero", home.join(".claude.json")).unwrap();
        let homes = Homes {
            home: Some(home.clone()),
            ..Homes::default()
        };
        let changes = plan(
            ClientKind::Claude,
            &stdio(),
            600,
            Scope::User,
            &root,
            &homes,
        );
        let e = apply(&changes.unwrap()[0]).unwrap_err().to_string();
        assert!(e.contains("not a regular file"), "{e}");
    }

    #[test]
    fn a_symlinked_user_file_is_changed_at_its_target() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("dotfiles/mcp.json");
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::write(&target, "{}").unwrap();
        let home = dir.path().join("home");
        std::fs::create_dir_all(home.join(".cursor")).unwrap();
        let link = home.join(".cursor/mcp.json");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let homes = Homes {
            home: Some(home.clone()),
            ..Homes::default()
        };
        let changes = plan(
            ClientKind::Cursor,
            &stdio(),
            600,
            Scope::User,
            dir.path(),
            &homes,
        );
        apply(&changes.unwrap()[0]).unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&target).unwrap()).unwrap();
        assert_eq!(
            v["mcpServers"]["patchgate"]["command"],
            "/opt/bin/patchgate"
        );
    }

    /// A client file's backup is synced through `workspace::synced::sync`, as every sync is
    /// (docs/DESIGN.md §7), so a recording test sees it. Regression: it called `sync_all`
    /// directly, and no record showed it.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_backup_is_synced_where_a_recording_sees_it() {
        let recording = crate::workspace::synced::record();
        let dir = tempfile::tempdir().unwrap();
        let copy = backup(&dir.path().join("client.json"), b"{}\n").unwrap();
        let copy = copy.canonicalize().unwrap();
        assert!(
            (recording.syncs().iter())
                .any(|s| s.path.as_deref() == Some(copy.as_path()) && s.len == 3),
            "the backup's sync was not recorded"
        );
        let here = dir.path().canonicalize().unwrap();
        assert!(
            (recording.syncs().iter()).any(|s| s.path.as_deref() == Some(here.as_path())),
            "the backup's directory was not synced"
        );
    }
}
