//! Serving the search tools (`agentic_search`, `fast_search`, `agentic_retrieval`): one
//! [`Searcher`] per dispatcher, made on the first search over the gate's root and its deny
//! rules (with the model of the user's own config); the index is refreshed on a blocking
//! thread, and its progress and the model's turns go out as progress notifications. Nothing
//! here reviews or writes.

use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::args::{self, ToolCall, ToolName};
use super::envelope::Envelope;
use super::progress::{ProgressSink, Report, reporting};
use crate::error::{Error, ErrorCode, Result};
use crate::review::queue::Gate;
use crate::search::explore::Explorer;
use crate::search::{DEFAULT_LIMIT, Mode, Searcher, agent, store::Store};
use crate::workspace::userconfig::UserConfig;

/// The note `fast_search` adds to its answer.
pub const DEPRECATED: &str =
    "fast_search is deprecated and will be removed: call agentic_search (the same answer)";

/// The searcher of one dispatcher, made on first use.
#[derive(Default)]
pub struct Searches {
    searcher: Mutex<Option<Arc<Searcher>>>,
}

impl Searches {
    /// The searcher over `gate`'s root, seeing what its deny rules allow.
    fn get(&self, gate: &Gate) -> Arc<Searcher> {
        let mut slot = self
            .searcher
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(s) = slot.as_ref() {
            return s.clone();
        }
        let policy = gate.policy().clone();
        let keep = Arc::new(move |rel: &str| policy.may_read(rel));
        let root = &gate.workspace().root;
        let model = UserConfig::load()
            .map_err(|e| Error::invalid_input(e.to_string()))
            .and_then(|user| agent::SearchModel::from_user(&user))
            .unwrap_or_else(|e| {
                tracing::warn!("search runs without a model: {}", e.message);
                None
            });
        let searcher = Arc::new(Searcher::new(Store::open(root), keep, model));
        *slot = Some(searcher.clone());
        searcher
    }
}

/// The local answer and the exploration tools over the files it saw, on a blocking thread
/// (the index may be read, built or brought up to date); indexing progress goes to `tx`
/// about every 5%.
async fn local(
    searcher: Arc<Searcher>,
    mode: Mode,
    query: String,
    tx: mpsc::UnboundedSender<Report>,
) -> Result<(crate::search::Answer, Explorer)> {
    tokio::task::spawn_blocking(move || {
        let mut last = usize::MAX;
        let answer = searcher.local(mode, &query, DEFAULT_LIMIT, &mut |done, total| {
            let step = done * 20 / total.max(1);
            if total >= 20 && step != last {
                last = step;
                let _ = tx.send((
                    done as f64,
                    total as f64,
                    format!("indexing {done}/{total} files"),
                ));
            }
        })?;
        Ok((answer, searcher.explorer()))
    })
    .await
    .map_err(|e| Error::new(ErrorCode::FsError, format!("the search stopped: {e}")))?
}

/// The search proper: the local answer (ranked hits, or for retrieval the hints and their
/// links), then the model's exploration from it when one is configured.
async fn answer(
    searcher: Arc<Searcher>,
    tool: ToolName,
    query: String,
    sink: &dyn ProgressSink,
) -> Result<crate::search::Answer> {
    let mode = if tool == ToolName::AgenticRetrieval {
        Mode::Retrieval
    } else {
        Mode::Search
    };
    let (tx, rx) = mpsc::unbounded_channel();
    let (seeds, explorer) =
        reporting(local(searcher.clone(), mode, query.clone(), tx), rx, sink).await?;
    let Some(model) = searcher.model() else {
        return Ok(seeds);
    };
    let (tx, rx) = mpsc::unbounded_channel();
    let mut turn_report = move |turn: u32, max: u32| {
        let _ = tx.send((
            f64::from(turn),
            f64::from(max),
            format!("exploring: model turn {turn} of at most {max}"),
        ));
    };
    let work = agent::explore(model, &explorer, &query, &seeds, &mut turn_report);
    let mut explored = reporting(work, rx, sink).await;
    explored.hints_used = seeds.hints_used;
    Ok(explored)
}

/// Run a search tool call to its JSON answer; `true` with an error envelope.
pub async fn run(
    searches: &Searches,
    gate: &Gate,
    tool: ToolName,
    arguments: &Map<String, Value>,
    cancel: CancellationToken,
    sink: &dyn ProgressSink,
) -> (Value, bool) {
    let query = match args::parse(tool, Some(arguments)) {
        Ok(ToolCall::Search { query, .. }) => query,
        Ok(_) => {
            let e = Error::invalid_input(format!("`{}` is not a search tool", tool.as_str()));
            return (Envelope::error(&e, &[], false).to_value(), true);
        }
        Err(e) => return (Envelope::error(&e, &[], false).to_value(), true),
    };
    let searcher = searches.get(gate);
    let root = searcher.root().to_path_buf();
    let result = tokio::select! {
        r = answer(searcher, tool, query, sink) => r,
        () = cancel.cancelled() => Err(Error::invalid_input("the client cancelled the search")),
    };
    match result {
        Ok(a) => {
            let mut v = a.to_value(&root);
            if tool == ToolName::FastSearch {
                v["_deprecated"] = json!(DEPRECATED);
            }
            (v, false)
        }
        Err(e) => (Envelope::error(&e, &[], false).to_value(), true),
    }
}
