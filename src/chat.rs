//! An OpenAI-compatible `chat/completions` client, configured only from the user's own
//! config (`[fallback]`): the lazy merge's fallback and the search loop both talk through it.
//! One POST per call, bounded by the configured timeout; the answer comes back as JSON.

use std::time::Duration;

use serde_json::Value;

use crate::error::{Error, ErrorCode, Result};
use crate::workspace::config::FallbackConfig;

/// A configured endpoint.
#[derive(Debug, Clone)]
pub struct Chat {
    client: reqwest::Client,
    url: String,
    /// The model name sent in each request.
    pub model: String,
    api_key: Option<String>,
}

impl Chat {
    /// The client for `config`; `None` when the section is disabled.
    pub fn from_config(config: &FallbackConfig) -> Result<Option<Chat>> {
        if !config.enabled {
            return Ok(None);
        }
        // One process-wide TLS provider; a second install is refused harmlessly.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(config.timeout_s.max(1)))
            .build()
            .map_err(|e| Error::invalid_input(format!("cannot set up the model client: {e}")))?;
        let base = config.endpoint.trim_end_matches('/');
        let url = if base.ends_with("/chat/completions") {
            base.to_string()
        } else {
            format!("{base}/chat/completions")
        };
        let api_key = config
            .api_key_env
            .as_deref()
            .and_then(|var| std::env::var(var).ok())
            .filter(|k| !k.is_empty());
        Ok(Some(Chat {
            client,
            url,
            model: config.model.clone(),
            api_key,
        }))
    }

    /// Send one request body (the model name is filled in) and return the answer's JSON;
    /// `what` names the caller in errors ("the fallback model", "the search model").
    pub async fn post(&self, mut body: Value, what: &str) -> Result<Value> {
        body["model"] = Value::String(self.model.clone());
        let mut request = self.client.post(&self.url).json(&body);
        if let Some(key) = &self.api_key {
            request = request.bearer_auth(key);
        }
        let failed = |why: String| Error::new(ErrorCode::FsError, format!("{what} failed: {why}"));
        let response = request.send().await.map_err(|e| failed(e.to_string()))?;
        let status = response.status();
        let value: Value = response
            .json()
            .await
            .map_err(|e| failed(format!("{status}: {e}")))?;
        if !status.is_success() {
            return Err(failed(format!("{status}: {value}")));
        }
        Ok(value)
    }
}
