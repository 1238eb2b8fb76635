//! Scoring the search on a corpus (`patchgate search-eval DIR`): each project directory holds
//! `snapshot.tar.gz` (the project at one commit) and `queries.jsonl` (lines of
//! `{"query", "files"}`: a commit's subject and the source files it changed). The snapshot
//! is unpacked to a temporary directory, indexed once (timed), and every query is ranked
//! (timed): recall@5, hit@1 and MRR against the files, in all and by group: the answers'
//! language (their files' extension) and the query's kind (from its first verb); and each
//! file missed from the first five, by why ([`Miss`]): what tells whether a ranking by the
//! files' text could find it at all; and those it could, by the band of rank they sat in
//! ([`BANDS`]).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Deserialize;

use super::features::Weights;
use super::fit::Case;
use super::index::Index;
use super::rank;
use super::store::Store;
use crate::error::{Error, ErrorCode, Result};
use crate::workspace::paths::Root;

/// How deep the ranking goes for MRR.
const DEPTH: usize = 50;

/// One query of a corpus.
#[derive(Debug, Clone, Deserialize)]
pub struct Query {
    /// The query text.
    pub query: String,
    /// The files that answer it.
    pub files: Vec<String>,
}

/// One query's result.
#[derive(Debug, Clone)]
pub struct QueryResult {
    /// The query.
    pub query: Query,
    /// The ranked paths (up to the depth MRR needs).
    pub ranked: Vec<String>,
    /// Their scores, in the same order.
    pub scores: Vec<f64>,
    /// Time to rank.
    pub elapsed: Duration,
    /// The query's files not in the first five, in the query's order.
    pub missed: Vec<Missed>,
    /// The query as the last stage's fit sees it.
    pub case: Case,
}

/// Why a query's file is not among the first five.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Miss {
    /// The file holds none of the query's terms (in its text, path or defined names, after
    /// identifier splitting and stemming): no ranking by text can find it.
    Unreachable,
    /// The file holds some of the query's terms, and no other file of the query is in the
    /// first five: other files outrank it.
    Outranked,
    /// The file holds some of the query's terms and another file of the query is in the
    /// first five: the same change's second file.
    Companion,
}

impl Miss {
    /// Every class, in report order.
    pub const ALL: [Miss; 3] = [Miss::Unreachable, Miss::Outranked, Miss::Companion];

    /// Its name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Miss::Unreachable => "unreachable",
            Miss::Outranked => "outranked",
            Miss::Companion => "companion",
        }
    }
}

/// One of a query's files missed from the first five.
#[derive(Debug, Clone)]
pub struct Missed {
    /// Its path.
    pub path: String,
    /// Its 1-based rank, when ranked within the depth.
    pub rank: Option<usize>,
    /// Why it missed.
    pub why: Miss,
}

/// The query's files missing from the first five of `ranked`, each with why: whether the
/// file (as `index` holds it) holds any of the query's terms, and whether another of the
/// query's files made the first five.
pub(crate) fn missed(index: &Index, query: &Query, ranked: &[String]) -> Vec<Missed> {
    // The index in memory is never damaged.
    let terms: Vec<u32> = rank::query_terms(index, &query.query)
        .unwrap_or_default()
        .iter()
        .map(|t| t.id)
        .collect();
    let top = &ranked[..ranked.len().min(5)];
    let holds = |path: &str| {
        index.file(path).is_some_and(|f| {
            terms.iter().any(|t| {
                f.terms.binary_search_by_key(t, |&(id, _)| id).is_ok()
                    || f.path_terms.contains(t)
                    || f.def_terms.contains(t)
            })
        })
    };
    let companion = |path: &str| query.files.iter().any(|g| g != path && top.contains(g));
    query
        .files
        .iter()
        .filter(|f| !top.contains(f))
        .map(|f| Missed {
            path: f.clone(),
            rank: ranked.iter().position(|g| g == f).map(|i| i + 1),
            why: if !holds(f) {
                Miss::Unreachable
            } else if companion(f) {
                Miss::Companion
            } else {
                Miss::Outranked
            },
        })
        .collect()
}

/// Per class of [`Miss`]: the files missed, and the recall@5 they cost (percentage points
/// over all `results`: a query of `k` files loses `1 / k` of its recall for each).
pub fn misses(results: &[&QueryResult]) -> Vec<(Miss, usize, f64)> {
    Miss::ALL
        .iter()
        .map(|&class| {
            let (count, lost) = cost(results, |m| m.why == class);
            (class, count, lost)
        })
        .collect()
}

/// The bands of rank the files a ranking could reach (not [`Miss::Unreachable`]) are
/// counted by when missed: first and last rank, 1-based; the last band holds the files not
/// ranked within the depth.
pub const BANDS: [(usize, usize); 4] = [(6, 10), (11, 20), (21, DEPTH), (DEPTH + 1, usize::MAX)];

/// A band's name in reports: `6-10`, `past 50`.
pub fn band_name((first, last): (usize, usize)) -> String {
    if last == usize::MAX {
        format!("past {}", first - 1)
    } else {
        format!("{first}-{last}")
    }
}

/// Per band of [`BANDS`]: the files missed from the first five that hold some of the
/// query's terms (outranked or companions) and ranked there, and the recall@5 they cost (as
/// [`misses`] counts it): how far below the five what a ranking could still take sits.
pub fn bands(results: &[&QueryResult]) -> Vec<((usize, usize), usize, f64)> {
    BANDS
        .iter()
        .map(|&(first, last)| {
            let (count, lost) = cost(results, |m| {
                let at = m.rank.unwrap_or(usize::MAX);
                m.why != Miss::Unreachable && (first..=last).contains(&at)
            });
            ((first, last), count, lost)
        })
        .collect()
}

/// The missed files `which` takes over all `results`, and the recall@5 they cost in
/// percentage points (a query of `k` files loses `1 / k` of its recall for each).
fn cost(results: &[&QueryResult], which: impl Fn(&Missed) -> bool) -> (usize, f64) {
    let n = results.len().max(1) as f64;
    let mut count = 0;
    let mut lost = 0.0;
    for r in results {
        let k = r.missed.iter().filter(|m| which(m)).count();
        count += k;
        lost += k as f64 / r.query.files.len().max(1) as f64;
    }
    (count, lost * 100.0 / n)
}

impl QueryResult {
    /// The share of the answer's files in the first five.
    pub fn recall_at_5(&self) -> f64 {
        if self.query.files.is_empty() {
            return 1.0;
        }
        let top: Vec<&String> = self.ranked.iter().take(5).collect();
        let found = self.query.files.iter().filter(|f| top.contains(f)).count();
        found as f64 / self.query.files.len() as f64
    }

    /// Whether the first file answers.
    pub fn hit_at_1(&self) -> bool {
        self.ranked
            .first()
            .is_some_and(|f| self.query.files.contains(f))
    }

    /// The reciprocal rank of the first answering file (0 when none is ranked).
    pub fn reciprocal_rank(&self) -> f64 {
        self.ranked
            .iter()
            .position(|f| self.query.files.contains(f))
            .map_or(0.0, |i| 1.0 / (i as f64 + 1.0))
    }
}

/// What a query asks for, read from its first verb (a commit subject's habit).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum QueryKind {
    /// A bug fix: "fix", "prevent", "avoid", "handle" …
    Fix,
    /// A feature: "add", "allow", "support", "implement" …
    Feature,
    /// A refactor: "refactor", "rename", "move", "remove", "use" …
    Refactor,
    /// Anything else (documentation, releases, a subject that starts with a noun).
    Other,
}

/// First verbs of bug fixes.
const FIX_VERBS: &[&str] = &[
    "fix", "fixed", "fixes", "fixing", "bugfix", "hotfix", "correct", "prevent", "avoid", "stop",
    "resolve", "restore", "repair", "ensure", "preserve", "keep", "handle", "don't", "dont",
    "revert", "reject",
];

/// First verbs of features.
const FEATURE_VERBS: &[&str] = &[
    "add",
    "added",
    "adds",
    "adding",
    "allow",
    "support",
    "implement",
    "enable",
    "expose",
    "introduce",
    "provide",
    "accept",
    "new",
    "create",
    "let",
    "give",
    "feat",
    "feature",
];

/// First verbs of refactors.
const REFACTOR_VERBS: &[&str] = &[
    "refactor",
    "rename",
    "move",
    "remove",
    "drop",
    "cleanup",
    "clean",
    "simplify",
    "replace",
    "extract",
    "split",
    "use",
    "migrate",
    "switch",
    "rewrite",
    "tidy",
    "reorganize",
    "deprecate",
    "optimize",
    "improve",
    "inline",
    "merge",
    "change",
    "update",
];

impl QueryKind {
    /// The kind of a query: its first word that is no tag (`[7.0]`) or scope (`core:`),
    /// lowercased, looked up in the verb lists.
    pub fn of(query: &str) -> QueryKind {
        let verb = query
            .split_whitespace()
            .find(|w| !(w.starts_with('[') || w.ends_with(':')))
            .map(|w| {
                w.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'')
                    .to_lowercase()
            })
            .unwrap_or_default();
        let verb = verb.as_str();
        if FIX_VERBS.contains(&verb) {
            QueryKind::Fix
        } else if FEATURE_VERBS.contains(&verb) {
            QueryKind::Feature
        } else if REFACTOR_VERBS.contains(&verb) {
            QueryKind::Refactor
        } else {
            QueryKind::Other
        }
    }

    /// Its name in reports.
    pub fn name(self) -> &'static str {
        match self {
            QueryKind::Fix => "fix",
            QueryKind::Feature => "feature",
            QueryKind::Refactor => "refactor",
            QueryKind::Other => "other",
        }
    }
}

/// The language of a query's answers: the extension most of its files share (the first
/// file's on a tie), `none` when they have none.
pub fn language(files: &[String]) -> String {
    let ext = |f: &String| {
        let name = f.rsplit('/').next().unwrap_or(f);
        name.rsplit_once('.')
            .map_or_else(|| "none".to_string(), |(_, e)| e.to_ascii_lowercase())
    };
    let exts: Vec<String> = files.iter().map(ext).collect();
    let mut best: Option<(&String, usize)> = None;
    for e in &exts {
        let n = exts.iter().filter(|x| *x == e).count();
        if best.is_none_or(|(_, m)| n > m) {
            best = Some((e, n));
        }
    }
    best.map_or_else(|| "none".to_string(), |(e, _)| e.clone())
}

/// Results grouped by a key, groups in key order.
pub fn grouped<'a, K: Ord + Clone>(
    results: &[&'a QueryResult],
    key: impl Fn(&QueryResult) -> K,
) -> Vec<(K, Vec<&'a QueryResult>)> {
    let mut groups: std::collections::BTreeMap<K, Vec<&'a QueryResult>> =
        std::collections::BTreeMap::new();
    for r in results {
        groups.entry(key(r)).or_default().push(r);
    }
    groups.into_iter().collect()
}

/// The scores of one project.
#[derive(Debug, Clone)]
pub struct ProjectScore {
    /// The project directory's name.
    pub name: String,
    /// Files indexed.
    pub files: usize,
    /// Time to build the index.
    pub build: Duration,
    /// Each query's result.
    pub results: Vec<QueryResult>,
}

/// Mean recall@5, hit@1 rate and MRR of results.
pub fn summary(results: &[&QueryResult]) -> (f64, f64, f64) {
    let n = results.len().max(1) as f64;
    let recall = results.iter().map(|r| r.recall_at_5()).sum::<f64>() / n;
    let hit = results.iter().filter(|r| r.hit_at_1()).count() as f64 / n;
    let mrr = results.iter().map(|r| r.reciprocal_rank()).sum::<f64>() / n;
    (recall, hit, mrr)
}

/// The median of durations.
pub fn median(mut times: Vec<Duration>) -> Duration {
    if times.is_empty() {
        return Duration::ZERO;
    }
    times.sort();
    times[times.len() / 2]
}

fn fs_error(what: &str, e: impl std::fmt::Display) -> Error {
    Error::new(ErrorCode::FsError, format!("{what}: {e}"))
}

/// The project directories of a corpus (those holding `queries.jsonl`), sorted; `dir` itself
/// when it is one.
pub fn projects(dir: &Path) -> Result<Vec<PathBuf>> {
    if dir.join("queries.jsonl").is_file() {
        return Ok(vec![dir.to_path_buf()]);
    }
    let entries = std::fs::read_dir(dir)
        .map_err(|e| fs_error(&format!("cannot read {}", dir.display()), e))?;
    let mut out: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("queries.jsonl").is_file())
        .collect();
    out.sort();
    if out.is_empty() {
        return Err(Error::invalid_input(format!(
            "{} holds no search corpus: no queries.jsonl in it or in its directories",
            dir.display()
        )));
    }
    Ok(out)
}

/// Read a project's queries.
pub fn queries(project: &Path) -> Result<Vec<Query>> {
    let file = project.join("queries.jsonl");
    let text = std::fs::read_to_string(&file)
        .map_err(|e| fs_error(&format!("cannot read {}", file.display()), e))?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(n, l)| {
            serde_json::from_str(l)
                .map_err(|e| Error::invalid_input(format!("{}:{}: {e}", file.display(), n + 1)))
        })
        .collect()
}

/// Unpack a project's snapshot into `into`; the directory to index (the single top
/// directory when the archive has one).
pub fn unpack(project: &Path, into: &Path) -> Result<PathBuf> {
    let archive = project.join("snapshot.tar.gz");
    let file = std::fs::File::open(&archive)
        .map_err(|e| fs_error(&format!("cannot open {}", archive.display()), e))?;
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(file));
    tar.set_preserve_permissions(false);
    tar.unpack(into)
        .map_err(|e| fs_error(&format!("cannot unpack {}", archive.display()), e))?;
    let entries: Vec<PathBuf> = std::fs::read_dir(into)
        .map_err(|e| fs_error("cannot list the snapshot", e))?
        .flatten()
        .map(|e| e.path())
        .collect();
    Ok(match entries.as_slice() {
        [one] if one.is_dir() => one.clone(),
        _ => into.to_path_buf(),
    })
}

/// Score one project: unpack, index (reporting progress), rank every query with the last
/// stage's weights `w`.
pub fn score_project(
    project: &Path,
    w: &Weights,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<ProjectScore> {
    let qs = queries(project)?;
    let tmp = tempfile::tempdir().map_err(|e| fs_error("cannot make a temporary directory", e))?;
    let dir = unpack(project, tmp.path())?;
    let root = Root::new(&dir)?;
    let mut store = Store::in_memory(&root);
    let built = store.refresh(&|_| true, progress);
    let mut results = Vec::with_capacity(qs.len());
    for q in qs {
        let started = Instant::now();
        // The index in memory is never damaged.
        let (hits, vectors, leading) =
            rank::rank_with(store.index(), &q.query, DEPTH, &|_| true, w, true).unwrap_or_default();
        let elapsed = started.elapsed();
        let ranked: Vec<String> = hits.iter().map(|h| h.path.clone()).collect();
        let case = Case {
            answers: leading.iter().map(|p| q.files.contains(p)).collect(),
            vectors,
            files: q.files.len(),
        };
        results.push(QueryResult {
            case,
            scores: hits.iter().map(|h| h.score).collect(),
            missed: missed(store.index(), &q, &ranked),
            ranked,
            query: q,
            elapsed,
        });
    }
    Ok(ProjectScore {
        name: project
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
        files: built.files,
        build: built.elapsed,
        results,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(files: &[&str], ranked: &[&str]) -> QueryResult {
        QueryResult {
            query: Query {
                query: String::new(),
                files: files.iter().map(ToString::to_string).collect(),
            },
            ranked: ranked.iter().map(ToString::to_string).collect(),
            scores: vec![0.0; ranked.len()],
            elapsed: Duration::ZERO,
            missed: Vec::new(),
            case: Case {
                vectors: Vec::new(),
                answers: Vec::new(),
                files: files.len(),
            },
        }
    }

    /// Each missed file's class: `sessions.go` holds none of the query's terms
    /// (unreachable); `cookie.go` holds them but no other answer made the first five
    /// (outranked) in one ranking, and `store.go` did in the other (companion). The cost of
    /// each class: a file of a two-file query loses half its recall.
    #[test]
    fn a_missed_file_is_unreachable_outranked_or_a_companion() {
        let mut ix = Index::new();
        for (p, t) in [
            ("cookie.go", "func SetCookie() {}\n"),
            ("store.go", "func Save() {}\n"),
            ("sessions.go", "func Open() {}\n"),
        ] {
            ix.add(p, 0, t.len() as u64, t);
        }
        ix.finish();
        let query = |files: &[&str]| Query {
            query: "save the cookie".into(),
            files: files.iter().map(ToString::to_string).collect(),
        };
        let ranked = |paths: &[&str]| paths.iter().map(ToString::to_string).collect::<Vec<_>>();
        let fillers = ["a", "b", "c", "d", "e"];
        let leads = |first: &[&str]| ranked(&[first, &fillers[..]].concat());
        let why = |q: &Query, r: &[String]| {
            missed(&ix, q, r)
                .into_iter()
                .map(|m| (m.path, m.rank, m.why))
                .collect::<Vec<_>>()
        };
        let q = query(&["cookie.go", "sessions.go"]);
        let r = ranked(&["a", "b", "c", "d", "e", "cookie.go"]);
        assert_eq!(
            why(&q, &r),
            [
                ("cookie.go".into(), Some(6), Miss::Outranked),
                ("sessions.go".into(), None, Miss::Unreachable),
            ]
        );
        let q2 = query(&["store.go", "cookie.go"]);
        let r2 = leads(&["store.go"]);
        assert_eq!(why(&q2, &r2), [("cookie.go".into(), None, Miss::Companion)]);
        let mut a = result(&["cookie.go", "sessions.go"], &[]);
        a.missed = missed(&ix, &q, &r);
        let mut b = result(&["store.go", "cookie.go"], &[]);
        b.missed = missed(&ix, &q2, &r2);
        let costs: Vec<(Miss, usize, f64)> = misses(&[&a, &b]);
        assert_eq!(
            costs,
            [
                (Miss::Unreachable, 1, 25.0),
                (Miss::Outranked, 1, 25.0),
                (Miss::Companion, 1, 25.0),
            ]
        );
    }

    /// The reachable missed files by where they ranked: ranks 6, 10, 11, 20, 21, 50 and
    /// none fall in the bands by their edges; an unreachable file (ranked or not) in none.
    /// Each query here has two files, so each missed file costs half its query's recall.
    #[test]
    fn reachable_misses_are_counted_by_where_they_ranked() {
        let miss = |rank: Option<usize>, why: Miss| Missed {
            path: String::new(),
            rank,
            why,
        };
        let (out, com, unr) = (Miss::Outranked, Miss::Companion, Miss::Unreachable);
        let mut a = result(&["x", "y"], &[]);
        a.missed = vec![miss(Some(6), out), miss(Some(10), com)];
        let mut b = result(&["x", "y"], &[]);
        b.missed = vec![miss(Some(11), out), miss(Some(20), out)];
        let mut c = result(&["x", "y"], &[]);
        c.missed = vec![miss(Some(21), com), miss(Some(50), out)];
        let mut d = result(&["x", "y"], &[]);
        d.missed = vec![miss(None, out), miss(Some(7), unr)];
        let mut e = result(&["x", "y"], &[]);
        e.missed = vec![miss(None, unr)];
        let got = bands(&[&a, &b, &c, &d, &e]);
        let names: Vec<String> = got.iter().map(|&(b, _, _)| band_name(b)).collect();
        assert_eq!(names, ["6-10", "11-20", "21-50", "past 50"]);
        let counts: Vec<(usize, f64)> = got.iter().map(|&(_, n, l)| (n, l)).collect();
        assert_eq!(counts, [(2, 20.0), (2, 20.0), (2, 20.0), (1, 10.0)]);
        let classes = misses(&[&a, &b, &c, &d, &e]);
        assert_eq!(classes[0], (Miss::Unreachable, 2, 20.0));
    }

    #[test]
    fn the_measures_count_what_they_say() {
        let r = result(&["a", "b"], &["x", "a", "y", "z", "w", "b"]);
        assert_eq!(r.recall_at_5(), 0.5);
        assert!(!r.hit_at_1());
        assert_eq!(r.reciprocal_rank(), 0.5);
        let s = result(&["a"], &["a"]);
        let (recall, hit, mrr) = summary(&[&r, &s]);
        assert_eq!((recall, hit, mrr), (0.75, 0.5, 0.75));
        assert_eq!(result(&["a"], &[]).reciprocal_rank(), 0.0);
    }

    #[test]
    fn queries_group_by_their_first_verb_and_their_answers_extension() {
        assert_eq!(QueryKind::of("Fix panic on empty config"), QueryKind::Fix);
        assert_eq!(QueryKind::of("[7.0] Added a flag"), QueryKind::Feature);
        assert_eq!(
            QueryKind::of("core: rename the loader"),
            QueryKind::Refactor
        );
        assert_eq!(QueryKind::of("Don't close the stream"), QueryKind::Fix);
        assert_eq!(QueryKind::of("Release 2.0"), QueryKind::Other);
        assert_eq!(QueryKind::of(""), QueryKind::Other);
        let files = |f: &[&str]| f.iter().map(ToString::to_string).collect::<Vec<_>>();
        assert_eq!(language(&files(&["a/b.go", "c.py", "d.py"])), "py");
        assert_eq!(language(&files(&["a/b.Go", "c.py"])), "go");
        assert_eq!(language(&files(&["Makefile"])), "none");
        assert_eq!(language(&[]), "none");
        let a = result(&["x.go"], &["x.go"]);
        let b = result(&["y.py"], &[]);
        let c = result(&["z.go"], &[]);
        let groups = grouped(&[&a, &b, &c], |r| language(&r.query.files));
        let sizes: Vec<(String, usize)> =
            groups.iter().map(|(k, v)| (k.clone(), v.len())).collect();
        assert_eq!(sizes, [("go".to_string(), 2), ("py".to_string(), 1)]);
    }
}
