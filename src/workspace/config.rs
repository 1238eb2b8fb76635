//! `.patchgate.toml` at the root: settings a project keeps with its code. It comes with the
//! code, so it is not trusted: the policy layer lets it only tighten the gate (an `auto` rule
//! or a looser policy is ignored) and its `[fallback]` is never used (the user's own config,
//! [`super::userconfig`], holds the model fallback).
//!
//! ```toml
//! policy = "gate"                 # counts only when stricter than the command line's
//! review_timeout_s = 600          # how long a gated tool call waits before answering `pending`
//! dry_run_ttl_s = 300             # how long a dry-run can be committed by its run_id
//! max_file_bytes = 10485760       # files larger than this are refused (FILE_TOO_LARGE)
//!
//! [[rules]]                       # per-path actions, first matching glob wins
//! glob = "secrets/**"
//! action = "deny"                 # gate | deny (auto only in the user's own config)
//! ```

use std::path::{Path, PathBuf};

use serde::Deserialize;

/// The file name looked for at the root.
pub(crate) const FILE_NAME: &str = ".patchgate.toml";

/// The parsed configuration (defaults when the file is absent).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// What happens to edits by default.
    #[serde(default)]
    pub policy: Option<PolicyName>,
    /// Seconds a gated tool call waits for a decision before answering `pending`.
    #[serde(default = "default_review_timeout")]
    pub review_timeout_s: u64,
    /// Seconds a dry-run stays committable.
    #[serde(default = "default_dry_run_ttl")]
    pub dry_run_ttl_s: u64,
    /// Largest file patchgate reads or writes.
    #[serde(default = "default_max_file_bytes")]
    pub max_file_bytes: u64,
    /// Per-path actions by glob, first match wins.
    #[serde(default)]
    pub rules: Vec<RuleConfig>,
    /// The model fallback for lazy snippets the deterministic merge declines.
    #[serde(default)]
    pub fallback: Option<FallbackConfig>,
    /// Never run from here (a repository could make the gate run any program): read only to
    /// warn that it is ignored.
    #[serde(default)]
    pub hook: Option<HookConfig>,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            policy: None,
            review_timeout_s: default_review_timeout(),
            dry_run_ttl_s: default_dry_run_ttl(),
            max_file_bytes: default_max_file_bytes(),
            rules: Vec::new(),
            fallback: None,
            hook: None,
        }
    }
}

/// The policies (docs/DESIGN.md §2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PolicyName {
    /// A person decides every write.
    Gate,
    /// Apply at once and journal it.
    Auto,
    /// Never write; every edit waits for a commit by run_id.
    DryRun,
}

impl PolicyName {
    /// The name as the command line and the file spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            PolicyName::Gate => "gate",
            PolicyName::Auto => "auto",
            PolicyName::DryRun => "dry-run",
        }
    }

    /// Parse `gate`, `auto` or `dry-run`.
    pub fn parse(s: &str) -> Option<PolicyName> {
        match s {
            "gate" => Some(PolicyName::Gate),
            "auto" => Some(PolicyName::Auto),
            "dry-run" | "dry_run" | "dryrun" => Some(PolicyName::DryRun),
            _ => None,
        }
    }
}

/// What a path rule does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RuleAction {
    /// A person decides.
    Gate,
    /// Applied at once.
    Auto,
    /// Refused (`DENIED_BY_RULE`).
    Deny,
}

impl RuleAction {
    /// The name as the config files and the review API spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            RuleAction::Gate => "gate",
            RuleAction::Auto => "auto",
            RuleAction::Deny => "deny",
        }
    }
}

/// One `[[rules]]` entry.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleConfig {
    /// A glob over root-relative paths (`**` crosses directories).
    pub glob: String,
    /// What happens to matching paths.
    pub action: RuleAction,
}

fn default_review_timeout() -> u64 {
    600
}

fn default_dry_run_ttl() -> u64 {
    300
}

fn default_max_file_bytes() -> u64 {
    super::fs::DEFAULT_MAX_FILE_BYTES
}

/// An OpenAI-compatible `chat/completions` endpoint.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FallbackConfig {
    /// Base URL; `/chat/completions` is appended unless it already ends so.
    pub endpoint: String,
    /// The model name sent in the request.
    pub model: String,
    /// The environment variable that holds the API key (sent as a bearer token).
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// Seconds to wait for an answer.
    #[serde(default = "default_timeout")]
    pub timeout_s: u64,
    /// Set to false to keep the section but not call the model.
    #[serde(default = "default_true")]
    pub enabled: bool,
}

fn default_timeout() -> u64 {
    60
}

/// The user's policy hook (`[hook]`, docs/DESIGN.md §4): a program that hears of each edit
/// and answers `auto`, `gate` or `deny`. Only the user's own config runs one; a repository's
/// `[hook]` is read only to say that it is ignored.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HookConfig {
    /// The program and its arguments (no shell): `["path", "args"…]`.
    pub command: Vec<String>,
    /// How long the hook may take, in milliseconds, before the edit waits for a person.
    #[serde(default = "default_hook_timeout_ms")]
    pub timeout_ms: u64,
}

/// A hook's time when the config gives none.
pub const DEFAULT_HOOK_TIMEOUT_MS: u64 = 2000;

fn default_hook_timeout_ms() -> u64 {
    DEFAULT_HOOK_TIMEOUT_MS
}

/// The code search's use of the model (the user's `[search]`; the endpoint is
/// `[fallback]`'s).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchConfig {
    /// Let the model explore from the index's hits (when `[fallback]` is set).
    #[serde(default = "default_true")]
    pub agentic: bool,
    /// The most model turns one search takes before it answers with what it has.
    #[serde(default = "default_search_turns")]
    pub max_turns: u32,
    /// The most seconds one search takes before it answers with what it has.
    #[serde(default = "default_search_timeout")]
    pub timeout_s: u64,
}

impl Default for SearchConfig {
    fn default() -> SearchConfig {
        SearchConfig {
            agentic: true,
            max_turns: default_search_turns(),
            timeout_s: default_search_timeout(),
        }
    }
}

fn default_search_turns() -> u32 {
    8
}

fn default_search_timeout() -> u64 {
    120
}

fn default_true() -> bool {
    true
}

/// A configuration file that cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {message}")]
pub struct ConfigError {
    /// The file.
    pub path: PathBuf,
    /// What is wrong.
    pub message: String,
}

impl Config {
    /// Load `ROOT/.patchgate.toml`; a missing file gives the defaults.
    pub fn load(root: &Path) -> Result<Config, ConfigError> {
        let path = root.join(FILE_NAME);
        match read_bounded(&path) {
            Ok(text) => Config::parse(&text)
                .map(Config::tightened)
                .map_err(|message| ConfigError { path, message }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Config::default()),
            Err(e) => Err(ConfigError {
                path,
                message: e.to_string(),
            }),
        }
    }

    /// Parse the TOML text.
    pub fn parse(text: &str) -> Result<Config, String> {
        toml::from_str(text).map_err(|e| e.to_string())
    }

    /// The file's limits held to the defaults: a repository may only tighten them (a shorter
    /// wait, a shorter dry-run life, a smaller file cap), never lift the HTTP body cap or
    /// hand the gate a duration its arithmetic cannot hold (docs/DESIGN.md §7). The command
    /// line's `--review-timeout` still wins over both.
    pub fn tightened(self) -> Config {
        Config {
            review_timeout_s: self.review_timeout_s.min(default_review_timeout()),
            dry_run_ttl_s: self.dry_run_ttl_s.min(default_dry_run_ttl()),
            max_file_bytes: self.max_file_bytes.min(default_max_file_bytes()),
            ..self
        }
    }
}

/// A `.patchgate.toml` larger than this is refused (the repository controls the file).
const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// The text of the regular file at `path`, at most [`MAX_CONFIG_BYTES`]: a FIFO, a device or
/// an endless file in its place is refused, never waited on or read without end (opened
/// without blocking, so a FIFO swapped in after the check cannot hang the read either).
pub(crate) fn read_bounded(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32);
    }
    let file = options.open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    if meta.len() > MAX_CONFIG_BYTES {
        return Err(std::io::Error::other(format!(
            "{} bytes, over the {MAX_CONFIG_BYTES} byte limit",
            meta.len()
        )));
    }
    let mut text = String::new();
    file.take(MAX_CONFIG_BYTES + 1).read_to_string(&mut text)?;
    if text.len() as u64 > MAX_CONFIG_BYTES {
        return Err(std::io::Error::other("over the size limit"));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_fifo_or_a_huge_file_in_its_place_is_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        let made = std::process::Command::new("mkfifo")
            .arg(&path)
            .status()
            .unwrap();
        assert!(made.success());
        let e = Config::load(dir.path()).unwrap_err();
        assert!(e.message.contains("not a regular file"), "{e:?}");
        std::fs::remove_file(&path).unwrap();
        std::fs::write(&path, "#".repeat((MAX_CONFIG_BYTES + 1) as usize)).unwrap();
        let e = Config::load(dir.path()).unwrap_err();
        assert!(e.message.contains("limit"), "{e:?}");
    }

    #[test]
    fn a_repository_only_tightens_the_limits() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(FILE_NAME),
            "review_timeout_s = 18446744073709551615\ndry_run_ttl_s = 18446744073709551615\nmax_file_bytes = 1099511627776\n",
        )
        .unwrap();
        let c = Config::load(dir.path()).unwrap();
        assert_eq!(c.review_timeout_s, default_review_timeout());
        assert_eq!(c.dry_run_ttl_s, default_dry_run_ttl());
        assert_eq!(c.max_file_bytes, default_max_file_bytes());
        std::fs::write(
            dir.path().join(FILE_NAME),
            "review_timeout_s = 5\ndry_run_ttl_s = 3\nmax_file_bytes = 1024\n",
        )
        .unwrap();
        let c = Config::load(dir.path()).unwrap();
        assert_eq!(
            (c.review_timeout_s, c.dry_run_ttl_s, c.max_file_bytes),
            (5, 3, 1024)
        );
    }

    #[test]
    fn empty_file_gives_defaults() {
        assert_eq!(Config::parse("").unwrap(), Config::default());
    }

    #[test]
    fn fallback_section_parses_with_defaults() {
        let c = Config::parse("[fallback]\nendpoint = \"http://x/v1\"\nmodel = \"m\"\n").unwrap();
        let f = c.fallback.unwrap();
        assert_eq!(f.timeout_s, 60);
        assert!(f.enabled);
        assert_eq!(f.api_key_env, None);
    }

    #[test]
    fn policy_rules_and_timeouts_parse() {
        let c = Config::parse(
            "policy = \"dry-run\"\nreview_timeout_s = 30\n[[rules]]\nglob = \"docs/**\"\naction = \"auto\"\n[[rules]]\nglob = \"**/.env*\"\naction = \"deny\"\n",
        )
        .unwrap();
        assert_eq!(c.policy, Some(PolicyName::DryRun));
        assert_eq!(c.review_timeout_s, 30);
        assert_eq!(c.dry_run_ttl_s, 300);
        assert_eq!(c.rules.len(), 2);
        assert_eq!(c.rules[1].action, RuleAction::Deny);
        assert!(Config::parse("policy = \"sometimes\"\n").is_err());
    }

    #[test]
    fn unknown_keys_are_errors() {
        assert!(Config::parse("[fallback]\nendpoint = \"x\"\nmodel = \"m\"\nmodle = 1\n").is_err());
        assert!(Config::parse("colour = true\n").is_err());
    }

    #[test]
    fn missing_file_gives_defaults() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(Config::load(dir.path()).unwrap(), Config::default());
    }
}
