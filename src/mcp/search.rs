//! Serving the search tools (`agentic_search`, `fast_search`, `agentic_retrieval`): one
//! [`Searcher`] per dispatcher, made on the first search over the gate's root and its deny
//! rules (with the model of the user's own config) — for a stdio server under a live gate,
//! the gate's rules too (its configs, and the `deny` rules its reviewer added, read from it
//! for each search), over the same files as the gate names them, and made again when that
//! gate or its rules change (docs/DESIGN.md §7); the index is refreshed on a blocking
//! thread, and its progress and the model's turns go out as progress notifications. Nothing
//! here reviews or writes.

use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::args::{self, ToolCall, ToolName};
use super::envelope::Envelope;
use super::forward::GateScope;
use super::progress::{ProgressSink, Report, reporting};
use crate::error::{Error, ErrorCode, Result};
use crate::review::policy::Policy;
use crate::review::queue::Gate;
use crate::search::explore::{Explorer, Keep};
use crate::search::{DEFAULT_LIMIT, Mode, Searcher, agent, store::Store};
use crate::workspace::config::{Config, PolicyName};
use crate::workspace::userconfig::UserConfig;

/// The note `fast_search` adds to its answer.
pub const DEPRECATED: &str =
    "fast_search is deprecated and will be removed: call agentic_search (the same answer)";

/// What a searcher was made for: nothing beyond its own gate's rules, or a live gate's
/// scope with that gate's root configuration as read then and the `deny` globs its reviewer
/// had added.
type Made = Option<(GateScope, Config, Vec<String>)>;

/// Where a forwarding stdio server's search stands under its live gate: the scope, and the
/// `deny` globs the gate's reviewer added (relative to the gate's root), read for this search.
pub(crate) struct Under {
    /// Where the stdio server's root stands under the gate.
    pub scope: GateScope,
    /// The added `deny` globs.
    pub deny: Vec<String>,
}

/// The searcher of one dispatcher, made on first use.
#[derive(Default)]
pub struct Searches {
    searcher: Mutex<Option<(Made, Arc<Searcher>)>>,
}

/// The failure to read a live gate's rules: the search stops (it never runs without them).
fn rules_unreadable(scope: &GateScope, e: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorCode::FsError,
        format!(
            "the rules of the patchgate gate for {} cannot be read ({e}); nothing was searched — \
             fix them (or stop that gate) and search again",
            scope.root.display()
        ),
    )
}

/// What a search may see: what `own` (this process's gate's policy) lets it read, and
/// under a live gate (`made`) what that gate's rules let it read, the path as the gate names
/// it (`prefix` + the root-relative path).
fn keep_of(own: Policy, made: &Made, user: Option<&UserConfig>) -> Result<Keep> {
    let Some((scope, config, deny)) = made else {
        return Ok(Arc::new(move |rel: &str| own.may_read(rel)));
    };
    let user = user.ok_or_else(|| rules_unreadable(scope, "your own config does not load"))?;
    let theirs = Policy::layered(user, config, None, PolicyName::Gate)
        .map_err(|e| rules_unreadable(scope, e.message))?;
    let mut added = globset::GlobSetBuilder::new();
    for glob in deny {
        added.add(globset::Glob::new(glob).map_err(|e| rules_unreadable(scope, e))?);
    }
    let added = added.build().map_err(|e| rules_unreadable(scope, e))?;
    let prefix = scope.prefix.clone();
    Ok(Arc::new(move |rel: &str| {
        let theirs_rel = format!("{prefix}{rel}");
        own.may_read(rel) && theirs.may_read(&theirs_rel) && !added.is_match(&theirs_rel)
    }))
}

impl Searches {
    /// The searcher over `gate`'s root, seeing what its deny rules allow, and under a live
    /// gate (`scope`) what that gate's rules allow too; an error when those cannot be read.
    fn get(&self, gate: &Gate, under: Option<&Under>) -> Result<Arc<Searcher>> {
        let made: Made = match under {
            None => None,
            Some(Under { scope: s, deny }) => Some((
                s.clone(),
                Config::load(&s.root).map_err(|e| rules_unreadable(s, e))?,
                deny.clone(),
            )),
        };
        let mut slot = self
            .searcher
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((m, s)) = slot.as_ref()
            && *m == made
        {
            return Ok(s.clone());
        }
        let user = UserConfig::load()
            .map_err(|e| Error::invalid_input(e.to_string()))
            .inspect_err(|e| tracing::warn!("your config does not load: {}", e.message))
            .ok();
        let keep = keep_of(gate.policy().clone(), &made, user.as_ref())?;
        let model = user
            .as_ref()
            .map(agent::SearchModel::from_user)
            .transpose()
            .map(Option::flatten)
            .unwrap_or_else(|e| {
                tracing::warn!("search runs without a model: {}", e.message);
                None
            });
        let searcher = Arc::new(Searcher::new(
            Store::open(&gate.workspace().root),
            keep,
            model,
        ));
        *slot = Some((made, searcher.clone()));
        Ok(searcher)
    }
}

/// Local searches on blocking threads at once.
static SEARCHES: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(2);

/// The local answer and the exploration tools over the files it saw, on a blocking thread
/// (the index may be read, built or brought up to date); indexing progress goes to `tx`
/// about every 5%.
async fn local(
    searcher: Arc<Searcher>,
    mode: Mode,
    query: String,
    tx: mpsc::UnboundedSender<Report>,
) -> Result<(crate::search::Answer, Explorer)> {
    // Searches wait here, not on blocking threads: while one builds the index the others
    // would only wait for its lock, each holding one of the threads merges need.
    let _turn = SEARCHES.acquire().await;
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

/// Run a search tool call to its JSON answer; `true` with an error envelope. `under`: where
/// a forwarding stdio server stands under its live gate, whose rules the search obeys too.
pub(crate) async fn run(
    searches: &Searches,
    gate: &Gate,
    under: Option<&Under>,
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
    let searcher = match searches.get(gate, under) {
        Ok(s) => s,
        Err(e) => return (Envelope::error(&e, &[], false).to_value(), true),
    };
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn under_a_gate_its_rules_apply_to_the_paths_as_it_names_them() {
        let own = Policy::from_config(
            &Config::parse("[[rules]]\nglob = \"mine/**\"\naction = \"deny\"\n").unwrap(),
            None,
            PolicyName::Gate,
        )
        .unwrap();
        let scope = GateScope {
            root: "/gate".into(),
            prefix: "sub/".into(),
        };
        let theirs =
            Config::parse("[[rules]]\nglob = \"sub/secrets/**\"\naction = \"deny\"\n").unwrap();
        let made: Made = Some((scope.clone(), theirs, vec!["sub/notes/*.txt".into()]));
        let keep = keep_of(own.clone(), &made, Some(&UserConfig::default())).unwrap();
        assert!(keep("src/a.rs"));
        assert!(!keep("secrets/key.txt"), "the gate's rule");
        assert!(!keep("mine/x.rs"), "its own rule");
        assert!(!keep("notes/a.txt"), "a deny rule its reviewer added");
        assert!(keep("notes/a.md"));
        // Without the user's config the gate's rules are unknown: no search at all.
        let e = keep_of(own.clone(), &made, None).err().unwrap();
        assert_eq!(e.code, ErrorCode::FsError);
        // With no gate, its own rules only.
        let keep = keep_of(own, &None, None).unwrap();
        assert!(keep("secrets/key.txt") && !keep("mine/x.rs"));
    }
}
