//! The user's own configuration, outside every repository: `$PATCHGATE_CONFIG`, else
//! `$XDG_CONFIG_HOME/patchgate/config.toml`, else `~/.config/patchgate/config.toml`. It is
//! trusted where a repository's `.patchgate.toml` is not: only here may a policy or a rule
//! loosen the gate, and only here is the model fallback (its endpoint and key) configured.
//! A reviewer's `user` rule (`POST /api/rules`, the TUI's `R`) is merged into the file by
//! [`super::userrules`].
//!
//! ```toml
//! policy = "gate"                 # the default when the command line gives none
//!
//! [[rules]]                       # may loosen: auto-apply docs in every project
//! glob = "docs/**"
//! action = "auto"
//!
//! journal_max_bytes = 268435456  # the cap on the journal's pre-images (undo data)
//!
//! [fallback]                      # the optional model fallback for lazy snippets
//! endpoint = "http://127.0.0.1:11434/v1"
//! model = "qwen2.5-coder:7b"
//! api_key_env = "OPENAI_API_KEY"
//!
//! [search]                        # the code search's model loop (uses [fallback]'s model)
//! agentic = true
//! max_turns = 8
//! timeout_s = 120
//!
//! [hook]                          # a program of yours that judges each edit (only here)
//! command = ["/home/me/bin/judge-edit", "--strict"]
//! timeout_ms = 2000
//! ```

use std::path::PathBuf;

use serde::Deserialize;

use super::config::{
    ConfigError, FallbackConfig, HookConfig, PolicyName, RuleConfig, SearchConfig,
};

/// The user's configuration (empty when there is no file).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserConfig {
    /// The default policy when the command line names none.
    #[serde(default)]
    pub policy: Option<PolicyName>,
    /// Trusted per-path rules, first match wins (checked before a repository's).
    #[serde(default)]
    pub rules: Vec<RuleConfig>,
    /// The model fallback for lazy snippets the deterministic merge declines.
    #[serde(default)]
    pub fallback: Option<FallbackConfig>,
    /// How the code search uses the model.
    #[serde(default)]
    pub search: Option<SearchConfig>,
    /// The cap on the journal's stored pre-images, in bytes (default 256 MiB); edits whose
    /// pre-images are dropped past it can no longer be undone.
    #[serde(default)]
    pub journal_max_bytes: Option<u64>,
    /// The policy hook: a program that hears of each edit and answers auto, gate or deny.
    #[serde(default)]
    pub hook: Option<HookConfig>,
}

/// Where the user's configuration is looked for.
pub fn path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("PATCHGATE_CONFIG").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(base.join("patchgate").join("config.toml"))
}

impl UserConfig {
    /// Load the user's configuration; a missing file gives the empty one.
    pub fn load() -> Result<UserConfig, ConfigError> {
        let Some(path) = path() else {
            return Ok(UserConfig::default());
        };
        match std::fs::read_to_string(&path) {
            Ok(text) => UserConfig::parse(&text).map_err(|message| ConfigError { path, message }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(UserConfig::default()),
            // Another user's home (a server run as `nobody`): the gate runs on the command
            // line's policy alone, and says so in the log.
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                tracing::warn!("cannot read {}: {e}; running without it", path.display());
                Ok(UserConfig::default())
            }
            Err(e) => Err(ConfigError {
                path,
                message: e.to_string(),
            }),
        }
    }

    /// Parse the TOML text.
    pub fn parse(text: &str) -> Result<UserConfig, String> {
        toml::from_str(text).map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_and_fallback_parse_and_unknown_keys_are_refused() {
        let c = UserConfig::parse(
            "policy = \"auto\"\n[[rules]]\nglob = \"docs/**\"\naction = \"auto\"\n[fallback]\nendpoint = \"http://x/v1\"\nmodel = \"m\"\n",
        )
        .unwrap();
        assert_eq!(c.policy, Some(PolicyName::Auto));
        assert_eq!(c.rules.len(), 1);
        assert_eq!(c.fallback.unwrap().model, "m");
        assert!(c.search.is_none());
        let s = UserConfig::parse("[search]\nmax_turns = 3\n").unwrap();
        assert_eq!(s.search.unwrap().max_turns, 3);
        assert!(UserConfig::parse("[search]\nturns = 3\n").is_err());
        assert!(UserConfig::parse("polcy = \"auto\"\n").is_err());
    }
}
