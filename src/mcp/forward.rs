//! Forwarding from `serve --stdio` into a live gate (docs/DESIGN.md §1): the stdio server sends each
//! edit to the gate's review API with the bearer token, then waits on the review in short
//! steps so it can relay progress to its own client and withdraw on cancellation. A stdio
//! server stands under its gate at a [`GateScope`]: its root relative to the gate's, which
//! confines what it may commit or await by run_id and which paths of the gate's rules its
//! own search obeys (docs/DESIGN.md §7).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::args::{ToolName, confine_paths};
use super::discovery::Discovery;
use super::envelope::Envelope;
use crate::api::types::{AgentLinkEvent, Info, ToolCallBody, WaitBody};
use crate::error::{Error, ErrorCode};
use crate::workspace::paths::Root;

/// How long a read of the gate's `GET /api/info` may take.
const INFO_TIMEOUT: Duration = Duration::from_secs(5);

/// Where a forwarding stdio server stands under its gate: the gate's root, as the gate itself
/// (or the user's own discovery entry) names it — never as the repository says — and the
/// stdio server's root relative to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GateScope {
    /// The gate's root (canonical when it exists).
    pub root: PathBuf,
    /// The stdio server's root relative to the gate's (`""` when they are the same), with a
    /// trailing `/`.
    pub prefix: String,
}

impl GateScope {
    /// The scope of a stdio server rooted at `base_dir` under a gate rooted at `gate_root`;
    /// an error when the gate's root does not hold it.
    pub(crate) fn new(gate_root: &Path, base_dir: &Path) -> Result<GateScope, String> {
        let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        let root = canon(gate_root);
        let base = canon(base_dir);
        let rel = base.strip_prefix(&root).map_err(|_| {
            format!(
                "the gate's root {} does not hold this server's root {}",
                root.display(),
                base.display()
            )
        })?;
        let rel = rel.to_string_lossy().replace('\\', "/");
        let prefix = if rel.is_empty() {
            rel
        } else {
            format!("{rel}/")
        };
        Ok(GateScope { root, prefix })
    }

    /// Whether the gate-relative path `gate_rel` lies under the stdio server's root.
    pub(crate) fn holds(&self, gate_rel: &str) -> bool {
        gate_rel.starts_with(self.prefix.as_str())
    }
}

/// A connection to a live gate.
#[derive(Debug, Clone)]
pub(crate) struct Forwarder {
    base: String,
    token: String,
    http: reqwest::Client,
    /// The stdio server's own root: every path it forwards resolves under it.
    root: Root,
    /// Where `root` stands under the gate: its prefix is stripped from the paths the gate
    /// reports, so the agent sees its own paths.
    scope: GateScope,
    /// The gate's review timeout.
    pub review_timeout: Duration,
    /// This server's link to the gate (none from a gate without links): the edits it
    /// forwards come over it, and the gate withdraws their pending reviews when it ends.
    link: Option<Arc<Link>>,
}

/// A forwarding server's link to its gate (`GET /api/agents/link`, docs/DESIGN.md §4): an
/// event stream held open by a task for as long as the forwarder lives; when this process
/// exits or is killed, the connection closes and the gate withdraws its pending reviews.
#[derive(Debug)]
struct Link {
    id: u64,
    task: tokio::task::JoinHandle<()>,
    /// Cleared when the gate ends the stream (its connection dropped): the forwarder then
    /// opens a new link before its next edit.
    open: Arc<std::sync::atomic::AtomicBool>,
}

impl Drop for Link {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// How long the gate may take to name a new link.
const LINK_TIMEOUT: Duration = Duration::from_secs(5);

/// The most of the link stream read before its first event (it is a few bytes).
const LINK_HEAD_BYTES: usize = 4096;

/// Open this server's link to the gate at `base`; `None` when the gate has none (an older
/// gate) or does not answer.
async fn open_link(http: &reqwest::Client, base: &str, token: &str) -> Option<Link> {
    let mut resp = tokio::time::timeout(
        LINK_TIMEOUT,
        http.get(format!("{base}/api/agents/link"))
            .bearer_auth(token)
            .send(),
    )
    .await
    .ok()?
    .ok()?
    .error_for_status()
    .ok()?;
    let mut head = Vec::new();
    let id = loop {
        let chunk = tokio::time::timeout(LINK_TIMEOUT, resp.chunk())
            .await
            .ok()?
            .ok()??;
        head.extend_from_slice(&chunk);
        let text = String::from_utf8_lossy(&head);
        if let Some(id) = text.lines().find_map(|l| {
            let data = l.strip_prefix("data:")?.trim();
            serde_json::from_str::<AgentLinkEvent>(data).ok()
        }) {
            break id.id;
        }
        if head.len() > LINK_HEAD_BYTES {
            return None;
        }
    };
    // Held (read and discarded: keep-alives) until the gate ends it or the forwarder goes.
    let open = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let flag = open.clone();
    let task = tokio::spawn(async move {
        while let Ok(Some(_)) = resp.chunk().await {}
        flag.store(false, std::sync::atomic::Ordering::SeqCst);
    });
    Some(Link { id, task, open })
}

fn gone(base: &str, e: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorCode::ReviewerGone,
        format!(
            "the patchgate reviewer at {base} stopped answering ({e}); nothing was written by this call — send the edit again"
        ),
    )
}

/// What a wait tells the agent when the gate stopped answering (`REVIEWER_GONE`: it was
/// killed, or its machine went down): the review is not lost with the call, as a gate
/// killed keeps its pending reviews in its state directory (docs/DESIGN.md §4); another
/// error is told as it is.
fn lost_while_waiting(e: Error, base: &str, run_id: &str) -> Error {
    if e.code != ErrorCode::ReviewerGone {
        return e;
    }
    Error::new(
        ErrorCode::ReviewerGone,
        format!(
            "the patchgate gate at {base} stopped answering while run {run_id} waited for a \
             person; nothing was written yet. A gate that was killed keeps its pending reviews: \
             once it runs again, call await_review with run_id \"{run_id}\" to hear the \
             decision (send the edit again only if that answers RUN_NOT_FOUND)"
        ),
    )
}

/// The answer for a run this server may not see, word for word the gate's for an unknown run.
fn run_not_found(run_id: &str) -> Error {
    Error::new(
        ErrorCode::RunNotFound,
        format!(
            "no dry-run or review with run id `{run_id}` (a run id lasts while its gate runs, an open review's across a restart)"
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
        let info = read_info(&http, &base, &d.token).await?;
        let scope = GateScope::new(&info.root, base_dir)?;
        let root = Root::new(base_dir).map_err(|e| e.message)?;
        let link = open_link(&http, &base, &d.token).await.map(Arc::new);
        if link.is_none() {
            tracing::warn!(
                "the gate at {base} gave no agent link; a review stays pending if this server goes away"
            );
        }
        Ok(Forwarder {
            link,
            base,
            token: d.token.clone(),
            http,
            root,
            scope,
            review_timeout: Duration::from_secs(info.review_timeout_s),
        })
    }

    /// Whether its link to the gate ended (the gate dropped it): a forwarder with no link
    /// at all (an older gate) has none to lose.
    pub(crate) fn link_lost(&self) -> bool {
        self.link
            .as_ref()
            .is_some_and(|l| !l.open.load(std::sync::atomic::Ordering::SeqCst))
    }

    /// The globs of the `deny` rules the gate's reviewer added (`GET /api/info`, read anew
    /// on each call); an error when the gate does not answer.
    pub(crate) async fn added_deny(&self) -> Result<Vec<String>, String> {
        Ok(read_info(&self.http, &self.base, &self.token).await?.deny)
    }

    /// Where this server stands under the gate.
    pub(crate) fn scope(&self) -> &GateScope {
        &self.scope
    }

    /// A review-API call answered with an envelope, its paths as the gate reports them
    /// (relative to the gate's root).
    async fn post_raw(
        &self,
        path: &str,
        body: Value,
        timeout: Duration,
    ) -> Result<Envelope, Error> {
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
        resp.json::<Envelope>()
            .await
            .map_err(|e| gone(&self.base, e))
    }

    /// [`Forwarder::post_raw`] with the paths made the agent's own.
    async fn post(&self, path: &str, body: Value, timeout: Duration) -> Result<Envelope, Error> {
        let mut env = self.post_raw(path, body, timeout).await?;
        let prefix = self.scope.prefix.as_str();
        if !prefix.is_empty() {
            let strip = |p: &mut String| {
                if let Some(rest) = p.strip_prefix(prefix) {
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
        let body = serde_json::to_value(ToolCallBody {
            arguments,
            client,
            agent: self.link.as_ref().map(|l| l.id),
        })
        .unwrap_or_default();
        self.post(
            &format!("/api/tools/{}", tool.as_str()),
            body,
            Duration::from_secs(600),
        )
        .await
        .unwrap_or_else(|e| Envelope::error(&e, call_paths, dry_run))
    }

    /// Confirm that run `run_id` at the gate is this server's to commit or await: every file
    /// of it lies under this server's root. Another root's run is `RUN_NOT_FOUND`, as if it
    /// did not exist (nothing about it is told).
    pub(crate) async fn confirm_own_run(&self, run_id: &str) -> Result<(), Error> {
        // A wait of no time answers at once with the run's paths, on an agent route.
        let body = serde_json::to_value(WaitBody {
            timeout_s: Some(0.0),
        })
        .unwrap_or_default();
        let env = self
            .post_raw(
                &format!("/api/reviews/{run_id}/wait"),
                body,
                Duration::from_secs(30),
            )
            .await?;
        let paths: Vec<&String> = env.path.iter().chain(env.paths.iter().flatten()).collect();
        let own = env.code != Some(ErrorCode::RunNotFound)
            && !paths.is_empty()
            && paths.iter().all(|p| self.scope.holds(p));
        if own {
            Ok(())
        } else {
            tracing::info!("run {run_id}: not under this server's root; refused");
            Err(run_not_found(run_id))
        }
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
            timeout.saturating_add(Duration::from_secs(30)),
        )
        .await
        .unwrap_or_else(|e| {
            let mut env = Envelope::error(&lost_while_waiting(e, &self.base, run_id), &[], false);
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

/// The gate's `GET /api/info` with the agents' token.
async fn read_info(http: &reqwest::Client, base: &str, token: &str) -> Result<Info, String> {
    http.get(format!("{base}/api/info"))
        .bearer_auth(token)
        .timeout(INFO_TIMEOUT)
        .send()
        .await
        .map_err(|e| e.to_string())?
        .error_for_status()
        .map_err(|e| e.to_string())?
        .json()
        .await
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scope_holds_its_own_directory_only() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("sub/deep")).unwrap();
        let s = GateScope::new(dir.path(), &dir.path().join("sub")).unwrap();
        assert_eq!(s.prefix, "sub/");
        assert!(s.holds("sub/a.txt") && s.holds("sub/deep/b.txt"));
        for other in ["sub", "subway/a.txt", "other/a.txt", "a.txt"] {
            assert!(!s.holds(other), "{other}");
        }
        let same = GateScope::new(dir.path(), dir.path()).unwrap();
        assert_eq!(same.prefix, "");
        assert!(same.holds("a.txt"));
        assert!(GateScope::new(&dir.path().join("sub"), dir.path()).is_err());
    }
}
