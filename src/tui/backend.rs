//! Where the TUI's reviews come from and its decisions go: the gate in this process, or a
//! gate elsewhere through the review API (`patchgate review --connect URL`). Both give the
//! same operations and the same stream of changes.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::api::types::{DecisionBody, Files, Info, ReviewEvent, UndoBody};
use crate::review::proposal::{Decision, FileContent};
use crate::review::queue::{Event, Gate, Outcome, Summary};

/// A change the TUI hears about.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// A review arrived or changed: its summary.
    Upsert(Box<Summary>),
    /// Reload the whole list (events were missed, or the connection came back).
    Resync(Vec<Summary>),
    /// The connection to a remote gate failed.
    Lost(String),
}

impl Change {
    /// A review arrived or changed.
    pub fn upsert(summary: Summary) -> Change {
        Change::Upsert(Box::new(summary))
    }
}

/// What the status bar shows of the gate.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StatusInfo {
    /// The listen address (`127.0.0.1:8787`), or what the TUI is attached to.
    pub address: String,
    /// The default policy.
    pub policy: String,
    /// Clients heard from recently.
    pub clients: usize,
}

/// A remote gate's review API.
#[derive(Clone)]
pub struct Remote {
    base: String,
    token: String,
    http: reqwest::Client,
}

/// Counts the agents a gate's server heard from lately.
pub(crate) type ClientCount = std::sync::Arc<dyn Fn() -> usize + Send + Sync>;

/// The source of reviews.
#[derive(Clone)]
pub enum Backend {
    /// The gate in this process.
    Local {
        /// The gate (it holds the queue).
        gate: Gate,
        /// How many agents were heard from lately (the server that serves them counts).
        clients: ClientCount,
        /// Where agents reach it, if it listens.
        address: Option<String>,
    },
    /// A gate reached over HTTP.
    Remote(Remote),
}

fn describe(o: &Outcome) -> Result<String, String> {
    match o {
        Outcome::Applied(s) => Ok(format!("applied {} ({})", s.run_id, s.paths.join(", "))),
        Outcome::Rejected(s) => Ok(format!("rejected {}", s.run_id)),
        Outcome::Pending(s) => Ok(format!("{} now waits for a decision", s.run_id)),
        Outcome::DryRun(s) => Ok(format!("{} is a dry-run", s.run_id)),
        Outcome::Failed(_, e) => Err(format!("{}: {}", e.code, e.message)),
    }
}

fn envelope_text(v: &Value) -> Result<String, String> {
    match v["status"].as_str() {
        Some("error") | None => Err(format!(
            "{}: {}",
            v["code"].as_str().unwrap_or("ERROR"),
            v["message"].as_str().unwrap_or("the gate refused")
        )),
        Some(status) => Ok(format!(
            "{} {}",
            match status {
                "ok" => "applied",
                other => other,
            },
            v["run_id"].as_str().unwrap_or("")
        )),
    }
}

impl Remote {
    /// A client of the gate at `base` (`http://127.0.0.1:8787`) with `token`.
    pub fn new(base: &str, token: &str) -> Result<Remote, String> {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(5))
            .build()
            .map_err(|e| e.to_string())?;
        let base = base.trim_end_matches('/');
        let base = base.strip_suffix("/mcp").unwrap_or(base).to_string();
        Ok(Remote {
            base,
            token: token.to_string(),
            http,
        })
    }

    async fn get(&self, path: &str) -> Result<Value, String> {
        let resp = self
            .http
            .get(format!("{}{path}", self.base))
            .bearer_auth(&self.token)
            .timeout(Duration::from_secs(30))
            .send()
            .await
            .map_err(|e| format!("{}: {e}", self.base))?;
        let status = resp.status();
        let v: Value = resp.json().await.map_err(|e| e.to_string())?;
        if !status.is_success() {
            return Err(format!(
                "{status}: {}",
                v["message"].as_str().unwrap_or("refused")
            ));
        }
        Ok(v)
    }

    async fn post(&self, path: &str, body: Value) -> Result<Value, String> {
        let resp = self
            .http
            .post(format!("{}{path}", self.base))
            .bearer_auth(&self.token)
            .timeout(Duration::from_secs(60))
            .json(&body)
            .send()
            .await
            .map_err(|e| format!("{}: {e}", self.base))?;
        let status = resp.status();
        let v: Value = resp.json().await.map_err(|e| e.to_string())?;
        if !status.is_success() {
            return Err(format!(
                "{}: {}",
                v["code"].as_str().unwrap_or(status.as_str()),
                v["message"].as_str().unwrap_or("refused")
            ));
        }
        Ok(v)
    }

    /// Check the connection and read the gate's description.
    pub async fn info(&self) -> Result<StatusInfo, String> {
        let info: Info =
            serde_json::from_value(self.get("/api/info").await?).map_err(|e| e.to_string())?;
        Ok(StatusInfo {
            address: self
                .base
                .trim_start_matches("http://")
                .trim_start_matches("https://")
                .to_string(),
            policy: info.policy,
            clients: info.clients,
        })
    }
}

impl Backend {
    /// The gate in this process; `clients` counts the agents its server heard lately.
    pub fn local(gate: Gate, clients: ClientCount, address: Option<String>) -> Backend {
        Backend::Local {
            gate,
            clients,
            address,
        }
    }

    /// The local gate, if this is one.
    pub fn gate(&self) -> Option<&Gate> {
        match self {
            Backend::Local { gate, .. } => Some(gate),
            Backend::Remote(_) => None,
        }
    }

    /// The status bar's facts.
    pub async fn info(&self) -> Result<StatusInfo, String> {
        match self {
            Backend::Local {
                gate,
                clients,
                address,
            } => Ok(StatusInfo {
                address: address.clone().unwrap_or_else(|| "not listening".into()),
                policy: gate.policy().default.as_str().to_string(),
                clients: clients(),
            }),
            Backend::Remote(r) => r.info().await,
        }
    }

    /// Every review the gate remembers.
    pub async fn list(&self) -> Result<Vec<Summary>, String> {
        match self {
            Backend::Local { gate, .. } => Ok(gate.list()),
            Backend::Remote(r) => {
                serde_json::from_value(r.get("/api/reviews").await?).map_err(|e| e.to_string())
            }
        }
    }

    /// Both versions of every file of a review.
    pub async fn files(&self, run_id: &str) -> Result<Vec<FileContent>, String> {
        match self {
            Backend::Local { gate, .. } => gate
                .get(run_id)
                .map(|p| p.contents())
                .ok_or_else(|| format!("no review {run_id}")),
            Backend::Remote(r) => {
                let v = r.get(&format!("/api/reviews/{run_id}/files")).await?;
                let files: Files = serde_json::from_value(v).map_err(|e| e.to_string())?;
                Ok(files.files)
            }
        }
    }

    /// Decide a review; the text describes the result for the status line.
    pub async fn decide(
        &self,
        run_id: &str,
        decision: Decision,
        note: Option<String>,
    ) -> Result<String, String> {
        match self {
            Backend::Local { gate, .. } => {
                let gate = gate.clone();
                let id = run_id.to_string();
                tokio::task::spawn_blocking(move || {
                    gate.decide_with_note(&id, decision, note.as_deref())
                })
                .await
                .map_err(|e| e.to_string())?
                .map_err(|e| format!("{}: {}", e.code, e.message))
                .and_then(|o| describe(&o))
            }
            Backend::Remote(r) => {
                let body = serde_json::to_value(DecisionBody::of(&decision, note.as_deref()))
                    .map_err(|e| e.to_string())?;
                let v = r
                    .post(&format!("/api/reviews/{run_id}/decision"), body)
                    .await?;
                envelope_text(&v)
            }
        }
    }

    /// A person commits a dry-run.
    pub async fn commit(&self, run_id: &str) -> Result<String, String> {
        match self {
            Backend::Local { gate, .. } => {
                let gate = gate.clone();
                let id = run_id.to_string();
                tokio::task::spawn_blocking(move || gate.commit(&id, true))
                    .await
                    .map_err(|e| e.to_string())?
                    .map_err(|e| format!("{}: {}", e.code, e.message))
                    .and_then(|o| describe(&o))
            }
            Backend::Remote(r) => {
                let v = r
                    .post(&format!("/api/reviews/{run_id}/commit"), json!({}))
                    .await?;
                envelope_text(&v)
            }
        }
    }

    /// Undo an applied edit (`run_id`, or the latest): the run undone and what to say.
    pub async fn undo(&self, run_id: Option<String>) -> Result<(String, String), String> {
        let (run_id, files) = match self {
            Backend::Local { gate, .. } => {
                let gate = gate.clone();
                let entry = tokio::task::spawn_blocking(move || gate.undo(run_id.as_deref()))
                    .await
                    .map_err(|e| e.to_string())?
                    .map_err(|e| format!("{}: {}", e.code, e.message))?;
                (
                    entry.run_id,
                    entry.files.into_iter().map(|f| f.path).collect::<Vec<_>>(),
                )
            }
            Backend::Remote(r) => {
                let body = serde_json::to_value(UndoBody { run_id }).map_err(|e| e.to_string())?;
                let v = r.post("/api/undo", body).await?;
                (
                    v["run_id"].as_str().unwrap_or("").to_string(),
                    v["files"]
                        .as_array()
                        .map(|a| {
                            a.iter()
                                .filter_map(|f| f["path"].as_str().map(str::to_string))
                                .collect()
                        })
                        .unwrap_or_default(),
                )
            }
        };
        let text = format!("undid {run_id}: restored {}", files.join(", "));
        Ok((run_id, text))
    }

    /// Start listening for changes; they arrive on the returned channel.
    pub(crate) fn watch(&self) -> mpsc::UnboundedReceiver<Change> {
        let (tx, rx) = mpsc::unbounded_channel();
        match self.clone() {
            Backend::Local { gate, .. } => {
                let gate = gate.clone();
                let mut events = gate.subscribe();
                tokio::spawn(async move {
                    loop {
                        let change = match events.recv().await {
                            Ok(Event::New(id) | Event::Updated(id) | Event::Decided(id)) => {
                                match gate.get(&id) {
                                    Some(p) => Change::upsert(Summary::of(&p)),
                                    None => continue,
                                }
                            }
                            Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                                Change::Resync(gate.list())
                            }
                            Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
                        };
                        if tx.send(change).is_err() {
                            break;
                        }
                    }
                });
            }
            Backend::Remote(r) => {
                tokio::spawn(async move { remote_events(r, tx).await });
            }
        }
        rx
    }
}

/// One server-sent event: its name, data and id.
#[derive(Debug, Clone, PartialEq, Eq)]
struct SseEvent {
    name: String,
    data: String,
    id: Option<String>,
}

/// The events of an SSE byte stream (parsed by `sse-stream`: lines, fields and UTF-8 split
/// across chunks are its job); the stream ends at the first error.
fn sse_events<S, E>(bytes: S) -> impl futures_util::Stream<Item = SseEvent>
where
    S: futures_util::Stream<Item = Result<bytes::Bytes, E>>,
    E: std::error::Error + Send + Sync + 'static,
{
    use futures_util::StreamExt;
    sse_stream::SseStream::from_bytes_stream(bytes)
        .take_while(|r| std::future::ready(r.is_ok()))
        .filter_map(|r| {
            std::future::ready(r.ok().map(|sse| SseEvent {
                name: sse.event.unwrap_or_default(),
                data: sse.data.unwrap_or_default(),
                id: sse.id,
            }))
        })
}

/// Follow a remote gate's event stream, reconnecting after a failure (from the last event
/// seen: the gate replays what came after it).
async fn remote_events(r: Remote, tx: mpsc::UnboundedSender<Change>) {
    use futures_util::StreamExt;
    let mut last_id: Option<String> = None;
    loop {
        let mut req = r
            .http
            .get(format!("{}/api/events", r.base))
            .bearer_auth(&r.token);
        if let Some(id) = &last_id {
            req = req.header("Last-Event-ID", id);
        }
        let resp = match req.send().await {
            Ok(resp) if resp.status().is_success() => resp,
            Ok(resp) => {
                let _ = tx.send(Change::Lost(format!("events: {}", resp.status())));
                tokio::time::sleep(Duration::from_secs(2)).await;
                continue;
            }
            Err(e) => {
                let _ = tx.send(Change::Lost(format!("{}: {e}", r.base)));
                tokio::time::sleep(Duration::from_secs(2)).await;
                continue;
            }
        };
        let events = sse_events(resp.bytes_stream());
        futures_util::pin_mut!(events);
        while let Some(ev) = events.next().await {
            if ev.id.is_some() {
                last_id.clone_from(&ev.id);
            }
            let change = match ev.name.as_str() {
                "ready" | "resync" => match Backend::Remote(r.clone()).list().await {
                    Ok(list) => Change::Resync(list),
                    Err(e) => Change::Lost(e),
                },
                "new" | "updated" | "decided" => {
                    match serde_json::from_str::<ReviewEvent>(&ev.data) {
                        Ok(ReviewEvent {
                            review: Some(s), ..
                        }) => Change::upsert(s),
                        _ => continue,
                    }
                }
                _ => continue,
            };
            if tx.send(change).is_err() {
                return;
            }
        }
        if tx
            .send(Change::Lost(format!("{}: the event stream ended", r.base)))
            .is_err()
        {
            return;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn events_keep_a_character_split_across_chunks_whole() {
        use futures_util::StreamExt;
        // `é` is two bytes; the chunk boundary falls between them.
        let text = "event: new\ndata: {\"note\": \"caf\u{e9}\"}\nid: 7\n\n"
            .as_bytes()
            .to_vec();
        let cut = text.iter().position(|&b| b == 0xC3).unwrap() + 1;
        let chunks: Vec<Result<bytes::Bytes, std::io::Error>> = vec![
            Ok(bytes::Bytes::copy_from_slice(&text[..cut])),
            Ok(bytes::Bytes::copy_from_slice(&text[cut..])),
        ];
        let events: Vec<SseEvent> = sse_events(futures_util::stream::iter(chunks))
            .collect()
            .await;
        assert_eq!(
            events,
            vec![SseEvent {
                name: "new".into(),
                data: "{\"note\": \"caf\u{e9}\"}".into(),
                id: Some("7".into()),
            }]
        );
    }
}
