//! `.patchgate.toml` at the root: settings a project keeps with its code.
//!
//! ```toml
//! [fallback]                      # optional model fallback for lazy snippets, off by default
//! endpoint = "http://127.0.0.1:11434/v1"   # OpenAI-compatible base URL
//! model = "qwen2.5-coder:7b"
//! api_key_env = "OPENAI_API_KEY"  # environment variable holding the key, if any
//! timeout_s = 60
//! ```

use std::path::{Path, PathBuf};

use serde::Deserialize;

/// The file name looked for at the root.
pub const FILE_NAME: &str = ".patchgate.toml";

/// The parsed configuration (defaults when the file is absent).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// The model fallback for lazy snippets the deterministic merge declines.
    #[serde(default)]
    pub fallback: Option<FallbackConfig>,
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
        match std::fs::read_to_string(&path) {
            Ok(text) => Config::parse(&text).map_err(|message| ConfigError { path, message }),
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
}

#[cfg(test)]
mod tests {
    use super::*;

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
