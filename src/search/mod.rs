//! Code search over a root (docs/DESIGN.md §4, `agentic_search`, `fast_search`,
//! `agentic_retrieval`): a local index of identifiers, paths and definitions ranked by BM25
//! with path and definition boosts ([`rank`]), kept per root in the state directory
//! ([`store`]); the follow-up of hinted names for retrieval ([`retrieval`]); and, when a model
//! is configured, a bounded tool loop over read-only exploration tools ([`agent`],
//! [`explore`]). Depends on the engines' outline and the workspace; knows nothing of MCP.

pub mod agent;
pub(crate) mod disk;
pub mod eval;
pub mod explore;
pub mod features;
pub mod fit;
pub mod index;
pub(crate) mod listing;
pub mod rank;
pub mod retrieval;
pub(crate) mod source;
pub mod store;
pub(crate) mod tokens;
pub(crate) mod units;

use std::sync::Mutex;

use serde_json::{Map, Value, json};

use self::agent::SearchModel;
use self::explore::{Explorer, Keep};
use self::rank::Hit;
use self::store::{Refresh, Store};

/// How many files an answer names by default.
pub const DEFAULT_LIMIT: usize = 10;

/// The longest query accepted, in bytes.
pub const MAX_QUERY_BYTES: usize = 4096;

/// An answer to a search: files in rank order with their line ranges.
#[derive(Debug, Clone, Default)]
pub struct Answer {
    /// The query as asked.
    pub query: String,
    /// What was found, in a sentence or a few.
    pub explanation: String,
    /// Root-relative paths, best first, with 1-based inclusive line ranges.
    pub files: Vec<(String, Vec<[u32; 2]>)>,
    /// Model turns used (0 for the local search).
    pub turns_used: u32,
    /// Whether the search stopped early (turns or time ran out).
    pub partial: bool,
    /// For retrieval: how many of the index's hits were followed.
    pub hints_used: Option<usize>,
    /// Why the search stopped early or fell back, when it did.
    pub error: Option<String>,
}

impl Answer {
    /// The answer as the tools return it; paths are made absolute under `root` (as the
    /// reference's are), so an agent's own file tools can open them.
    pub fn to_value(&self, root: &std::path::Path) -> Value {
        let mut files = Map::new();
        for (path, ranges) in &self.files {
            let abs = root.join(path).to_string_lossy().into_owned();
            files.insert(abs, json!(ranges));
        }
        let mut v = json!({
            "query": self.query,
            "explanation": self.explanation,
            "files": files,
            "turns_used": self.turns_used,
            "partial": self.partial,
        });
        if let Some(h) = self.hints_used {
            v["hints_used"] = json!(h);
        }
        if let Some(e) = &self.error {
            v["error"] = json!(e);
        }
        v
    }
}

/// Sort ranges and merge those that overlap (a range inside another disappears).
pub(crate) fn merge_ranges(ranges: &mut Vec<[u32; 2]>) {
    ranges.sort_unstable();
    let mut out: Vec<[u32; 2]> = Vec::with_capacity(ranges.len());
    for r in ranges.drain(..) {
        match out.last_mut() {
            Some(last) if r[0] <= last[1] => last[1] = last[1].max(r[1]),
            _ => out.push(r),
        }
    }
    *ranges = out;
}

/// Check a query: not empty, not too long.
pub fn check_query(query: &str) -> crate::error::Result<&str> {
    let q = query.trim();
    if q.is_empty() {
        return Err(crate::error::Error::invalid_input(
            "the query is empty: say what you are looking for, e.g. \"where are sessions saved\"",
        ));
    }
    if q.len() > MAX_QUERY_BYTES {
        return Err(crate::error::Error::invalid_input(format!(
            "the query is {} bytes, over the {MAX_QUERY_BYTES}-byte limit",
            q.len()
        )));
    }
    Ok(q)
}

/// A sentence on ranked hits: the best files and the names their best ranges define.
pub(crate) fn explain(hits: &[Hit], indexed: usize) -> String {
    if hits.is_empty() {
        return format!(
            "No file among the {indexed} indexed matches the query's words; try the names of \
             functions, types or files you expect."
        );
    }
    let best: Vec<String> = hits
        .iter()
        .take(3)
        .map(|h| {
            if h.names.is_empty() {
                h.path.clone()
            } else {
                format!("{} ({})", h.path, h.names.join(", "))
            }
        })
        .collect();
    format!(
        "The {} best of {indexed} indexed files, best first; the ranges are their \
         best-matching definitions. Most relevant: {}.",
        hits.len(),
        best.join("; ")
    )
}

/// The local answer for ranked hits.
pub fn local_answer(query: &str, hits: Vec<Hit>, indexed: usize) -> Answer {
    Answer {
        query: query.to_string(),
        explanation: explain(&hits, indexed),
        files: hits.into_iter().map(|h| (h.path, h.ranges)).collect(),
        ..Answer::default()
    }
}

/// Which answer a search gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The ranked hits (and the model's exploration from them, when one is configured).
    Search,
    /// The hits as hints, then their definitions and uses followed.
    Retrieval,
}

/// The searches of one root: its store, which paths it may see, and the model if any.
pub struct Searcher {
    root: std::path::PathBuf,
    store: Mutex<Store>,
    keep: Keep,
    model: Option<SearchModel>,
    /// Whether a fresh saved index answers read on demand ([`Searcher::answering_once`]).
    once: bool,
}

impl Searcher {
    /// A searcher over `store`, seeing only the paths `keep` allows.
    pub fn new(store: Store, keep: Keep, model: Option<SearchModel>) -> Searcher {
        Searcher {
            root: store.root().path().to_path_buf(),
            store: Mutex::new(store),
            keep,
            model,
            once: false,
        }
    }

    /// This searcher for a process that answers one query (the command line): a search
    /// (not a retrieval) on a fresh saved index is answered from it read on demand, its
    /// heads and the query's pages only, not read whole (docs/DESIGN.md §4). A long-lived
    /// server keeps the index in memory instead.
    pub fn answering_once(mut self) -> Searcher {
        self.once = true;
        self
    }

    /// The searcher of `root` as the user configured it: the index kept in the state
    /// directory, and the model of the user's own config (if any).
    pub fn for_root(
        root: &crate::workspace::paths::Root,
        keep: Keep,
        user: &crate::workspace::userconfig::UserConfig,
    ) -> crate::error::Result<Searcher> {
        Ok(Searcher::new(
            Store::open(root),
            keep,
            SearchModel::from_user(user)?,
        ))
    }

    fn store(&self) -> std::sync::MutexGuard<'_, Store> {
        self.store
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The root directory.
    pub fn root(&self) -> &std::path::Path {
        &self.root
    }

    /// The model, when one is configured for search.
    pub fn model(&self) -> Option<&SearchModel> {
        self.model.as_ref()
    }

    /// Bring the index up to date; `progress` hears of each file read.
    pub fn refresh(&self, progress: &mut dyn FnMut(usize, usize)) -> Refresh {
        let keep = self.keep.clone();
        self.store().refresh(&move |p| keep(p), progress)
    }

    /// The local answer (blocking: refreshes the index first).
    pub fn local(
        &self,
        mode: Mode,
        query: &str,
        limit: usize,
        progress: &mut dyn FnMut(usize, usize),
    ) -> crate::error::Result<Answer> {
        let query = check_query(query)?;
        if self.once && mode == Mode::Search {
            let keep = |p: &str| (self.keep)(p);
            if let Some((hits, indexed)) = self.store().answer_saved(&keep, query, limit) {
                return Ok(local_answer(query, hits, indexed));
            }
        }
        self.refresh(progress);
        let store = self.store();
        let keep = |p: &str| (self.keep)(p);
        Ok(match mode {
            Mode::Search => {
                let hits = rank::rank(store.index(), query, limit, &keep);
                local_answer(query, hits, store.index().len())
            }
            Mode::Retrieval => retrieval::retrieve(store.index(), query, limit, &keep),
        })
    }

    /// The exploration tools over the files indexed now (blocking while another search
    /// refreshes the index).
    pub fn explorer(&self) -> Explorer {
        let mut store = self.store();
        if !store.is_loaded() {
            // The answer came from the saved index read on demand: the files are read now.
            let keep = self.keep.clone();
            store.refresh(&move |p| keep(p), &mut |_, _| {});
        }
        let files = store.index().paths().map(str::to_string).collect();
        Explorer::new(store.root().clone(), files, self.keep.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_answer_keeps_rank_order_and_absolute_paths() {
        let a = Answer {
            query: "q".into(),
            explanation: "e".into(),
            files: vec![("z.go".into(), vec![[1, 2]]), ("a.go".into(), vec![[3, 4]])],
            ..Answer::default()
        };
        let v = a.to_value(std::path::Path::new("/r"));
        let keys: Vec<&String> = v["files"].as_object().unwrap().keys().collect();
        assert_eq!(keys, ["/r/z.go", "/r/a.go"]);
        assert_eq!(v["partial"], false);
        assert!(v.get("hints_used").is_none());
        assert!(check_query("  ").is_err());
        let mut r = vec![[10, 20], [1, 3], [12, 15], [18, 30], [31, 31]];
        merge_ranges(&mut r);
        assert_eq!(r, [[1, 3], [10, 30], [31, 31]]);
    }
}
