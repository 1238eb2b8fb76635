//! Forwarding from `serve --stdio` into a live gate (docs/DESIGN.md §1): the stdio server sends each
//! edit to the gate's review API with the bearer token, then waits on the review in short
//! steps so it can relay progress to its own client and withdraw on cancellation.

use std::path::Path;
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::args::{ToolName, confine_paths};
use super::discovery::Discovery;
use super::envelope::Envelope;
use crate::api::types::{Info, ToolCallBody, WaitBody};
use crate::error::{Error, ErrorCode};
use crate::workspace::paths::Root;

/// A connection to a live gate.
#[derive(Debug, Clone)]
pub(crate) struct Forwarder {
    base: String,
    token: String,
    http: reqwest::Client,
    /// The stdio server's own root: every path it forwards resolves under it.
    root: Root,
    /// `base_dir` relative to the gate's root (`""` when they are the same), with a trailing
    /// `/`: stripped from the paths the gate reports, so the agent sees its own paths.
    prefix: String,
    /// The gate's review timeout.
    pub review_timeout: Duration,
}

fn gone(base: &str, e: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorCode::ReviewerGone,
        format!(
            "the patchgate reviewer at {base} stopped answering ({e}); nothing was written by this call — send the edit again"
        ),
    )
}

impl Forwarder {
    /// Connect to the gate `d` describes, for a stdio server rooted at `base_dir` (relative
    /// paths are sent as absolute ones under it).
    pub(crate) async fn connect(d: &Discovery, base_dir: &Path) -> Result<Forwarder, String> {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(3))
            .build()
            .map_err(|e| e.to_string())?;
        let base = d.url.trim_end_matches('/').to_string();
        let info: Info = http
            .get(format!("{base}/api/info"))
            .bearer_auth(&d.token)
            .timeout(Duration::from_secs(5))
            .send()
            .await
            .map_err(|e| e.to_string())?
            .error_for_status()
            .map_err(|e| e.to_string())?
            .json()
            .await
            .map_err(|e| e.to_string())?;
        let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        let prefix = canon(base_dir)
            .strip_prefix(canon(&info.root))
            .map(|rel| {
                let rel = rel.to_string_lossy().replace('\\', "/");
                if rel.is_empty() {
                    rel
                } else {
                    format!("{rel}/")
                }
            })
            .unwrap_or_default();
        let root = Root::new(base_dir).map_err(|e| e.message)?;
        Ok(Forwarder {
            base,
            token: d.token.clone(),
            http,
            root,
            prefix,
            review_timeout: Duration::from_secs(info.review_timeout_s),
        })
    }

    async fn post(&self, path: &str, body: Value, timeout: Duration) -> Result<Envelope, Error> {
        let resp = self
            .http
            .post(format!("{}{path}", self.base))
            .bearer_auth(&self.token)
            .timeout(timeout)
            .json(&body)
            .send()
            .await
            .map_err(|e| gone(&self.base, e))?;
        let status = resp.status();
        if !status.is_success() {
            let text = resp.text().await.unwrap_or_default();
            return Err(Error::new(
                ErrorCode::FsError,
                format!(
                    "the reviewer at {} refused the call ({status}): {text}",
                    self.base
                ),
            ));
        }
        let mut env = resp
            .json::<Envelope>()
            .await
            .map_err(|e| gone(&self.base, e))?;
        if !self.prefix.is_empty() {
            let strip = |p: &mut String| {
                if let Some(rest) = p.strip_prefix(self.prefix.as_str()) {
                    *p = rest.to_string();
                }
            };
            env.path.iter_mut().for_each(strip);
            env.paths.iter_mut().flatten().for_each(strip);
        }
        Ok(env)
    }

    /// Send a tool call; the gate answers at once (`pending` when a person must decide).
    pub(crate) async fn start(
        &self,
        tool: ToolName,
        mut arguments: Map<String, Value>,
        client: Option<String>,
        call_paths: &[String],
        dry_run: bool,
    ) -> Envelope {
        if let Err(e) = confine_paths(tool, &mut arguments, &self.root) {
            return Envelope::error(&e, call_paths, dry_run);
        }
        let body = serde_json::to_value(ToolCallBody { arguments, client }).unwrap_or_default();
        self.post(
            &format!("/api/tools/{}", tool.as_str()),
            body,
            Duration::from_secs(600),
        )
        .await
        .unwrap_or_else(|e| Envelope::error(&e, call_paths, dry_run))
    }

    /// Wait up to `timeout` for a review.
    pub(crate) async fn wait(&self, run_id: &str, timeout: Duration) -> Envelope {
        let secs = timeout.as_secs_f64();
        self.post(
            &format!("/api/reviews/{run_id}/wait"),
            serde_json::to_value(WaitBody {
                timeout_s: Some(secs),
            })
            .unwrap_or_default(),
            timeout + Duration::from_secs(30),
        )
        .await
        .unwrap_or_else(|e| {
            let mut env = Envelope::error(&e, &[], false);
            env.run_id = Some(run_id.to_string());
            env
        })
    }

    /// Withdraw a pending review (the client cancelled).
    pub(crate) async fn withdraw(&self, run_id: &str) {
        let _ = self
            .post(
                &format!("/api/reviews/{run_id}/withdraw"),
                json!({}),
                Duration::from_secs(5),
            )
            .await;
    }
}
