//! Ranking files for a query: BM25 over each file's terms, plus boosts for query terms in
//! the file's path and in the names it defines, times a prior by kind (program source over
//! tests and prose); the file's best unit counts again, so the query's words together in
//! one definition outweigh the same words scattered. A second stage scores the leading
//! [`RERANK_DEPTH`] files again by the share of the query's weight their path holds, and
//! favours a file the query names (its name's stem, as written, one of the query's words).
//! A last stage orders the leading [`FEATURE_DEPTH`] files by a fitted linear scorer over
//! their signals ([`features`]). Each hit's line ranges are its best-scoring units.

use std::collections::HashMap;

use super::features::{self, FEATURE_DEPTH, IDENTITY, Staged, Term, Vector, Weights};
use super::index::{Index, Kind};
use super::source::{Damaged, Posted, Source, Span};
use super::tokens;

/// BM25's term-frequency saturation.
const K1: f64 = 1.2;
/// BM25's length normalisation (low: long central files are often the answer).
const B: f64 = 0.4;
/// Weight of a query term in the path, relative to its content weight.
const PATH_WEIGHT: f64 = 1.2;
/// Weight of a query term in a defined name.
const DEF_WEIGHT: f64 = 0.8;
/// Weight of the file's best unit (the query's terms together in one definition).
const UNIT_WEIGHT: f64 = 0.6;
/// How many leading files the second stage scores again.
pub(crate) const RERANK_DEPTH: usize = 30;
/// How much a path holding all the query's weight multiplies a file's score by, less one
/// (the path's words already count in the first stage; this favours the file whose path
/// holds more of the query over one that holds a single common word of it).
const PATH_SHARE_WEIGHT: f64 = 0.3;
/// How much a file the query names (its stem one of the query's words, e.g. `utils` for
/// `utils.go`, `SetCookie` for `SetCookie.php`) multiplies its score by, less one.
const NAMED_WEIGHT: f64 = 0.25;
/// The shortest stem a query can name a file by (shorter ones are words by chance).
const MIN_NAMED_STEM: usize = 3;
/// How many leading files get the proximity bonus at least.
const MIN_CANDIDATES: usize = 100;
/// The most ranges one hit reports.
const MAX_RANGES: usize = 3;
/// The most lines of a file reported when no unit matches.
const HEAD_LINES: u32 = 60;

/// One query term, with how much it counts and where it is.
#[derive(Debug, Clone)]
pub(crate) struct QueryTerm {
    /// The term id.
    pub id: u32,
    /// Its weight: 1 for a word, more for an exact identifier of several parts.
    pub weight: f64,
    /// Its inverse document frequency.
    pub idf: f64,
    /// Its postings.
    pub posted: Posted,
}

impl QueryTerm {
    /// How much the term counts: its idf by its weight.
    fn worth(&self) -> f64 {
        self.idf * self.weight
    }
}

/// A ranked file.
#[derive(Debug, Clone)]
pub struct Hit {
    /// Root-relative path.
    pub path: String,
    /// The score.
    pub score: f64,
    /// 1-based inclusive line ranges of its best units.
    pub ranges: Vec<[u32; 2]>,
    /// The names its best units define.
    pub names: Vec<String>,
}

/// The query's terms known to the index.
pub(crate) fn query_terms(src: &dyn Source, query: &str) -> Result<Vec<QueryTerm>, Damaged> {
    let mut out: Vec<QueryTerm> = Vec::new();
    let n = src.file_count() as f64;
    for id in tokens::identifiers(query) {
        let lower = id.to_lowercase();
        if tokens::is_stopword(&lower) {
            continue;
        }
        let mut terms = Vec::new();
        tokens::identifier_terms(id, &mut terms);
        for t in terms {
            let weight = if t.starts_with('=') { 2.0 } else { 1.0 };
            let Some(posted) = src.posted(&t)? else {
                continue;
            };
            match out.iter_mut().find(|q| q.id == posted.id) {
                Some(q) => q.weight = q.weight.max(weight),
                None => {
                    let df = posted.files.len() as f64;
                    out.push(QueryTerm {
                        id: posted.id,
                        weight,
                        idf: (1.0 + (n - df + 0.5) / (df + 0.5)).ln(),
                        posted,
                    });
                }
            }
        }
    }
    Ok(out)
}

/// The prior of a kind of file.
pub(crate) fn prior(kind: Kind) -> f64 {
    match kind {
        Kind::Source => 1.0,
        Kind::Other => 0.3,
        Kind::Test => 0.35,
        Kind::Doc => 0.1,
    }
}

/// The BM25 weight of a count in a document of `len` terms.
fn saturate(tf: f64, len: f64, avg: f64) -> f64 {
    tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * len / avg))
}

/// The mean length of a unit, for its BM25.
const UNIT_AVG_LEN: f64 = 60.0;

/// Files ranked for `query`, best first, at most `limit`; files `keep` refuses are left out.
pub fn rank(index: &Index, query: &str, limit: usize, keep: &dyn Fn(&str) -> bool) -> Vec<Hit> {
    // The index in memory is never damaged.
    rank_in(index, query, limit, keep).unwrap_or_default()
}

/// [`rank`] over any source: the saved index read on demand, or the one in memory.
pub(crate) fn rank_in(
    src: &dyn Source,
    query: &str,
    limit: usize,
    keep: &dyn Fn(&str) -> bool,
) -> Result<Vec<Hit>, Damaged> {
    Ok(rank_with(src, query, limit, keep, &features::WEIGHTS, false)?.0)
}

/// [`rank_in`] with the last stage's weights `w`; with the hits, when `vectors` is asked
/// for, the feature vectors of the leading files as the hand-set stages ordered them and
/// those files' paths (the fit's material). Weights of the score alone ([`IDENTITY`]) keep
/// the hand-set order: the vectors are then not made unless asked for.
pub(crate) fn rank_with(
    src: &dyn Source,
    query: &str,
    limit: usize,
    keep: &dyn Fn(&str) -> bool,
    w: &Weights,
    vectors: bool,
) -> Result<Ranked, Damaged> {
    let q = query_terms(src, query)?;
    let count = src.file_count();
    if q.is_empty() || count == 0 {
        return Ok((Vec::new(), Vec::new(), Vec::new()));
    }
    let mut scores = first_scores(src, &q);
    let by_score = |scores: &[f64], a: &usize, b: &usize| {
        scores[*b]
            .total_cmp(&scores[*a])
            .then_with(|| src.path(*a).cmp(src.path(*b)))
    };
    let mut order: Vec<usize> = (0..count)
        .filter(|&i| scores[i] > 0.0 && keep(src.path(i)))
        .collect();
    // Proximity, for the leading candidates only (a common word matches most files): the
    // query's terms together in one definition count again.
    let candidates = (limit * 4).max(MIN_CANDIDATES);
    let prior_score = |i: usize| scores[i] * prior(src.kind(i));
    order.sort_by(|a, b| {
        prior_score(*b)
            .total_cmp(&prior_score(*a))
            .then_with(|| by_score(&scores, a, b))
    });
    order.truncate(candidates);
    let mut wanted = vec![false; count];
    for &i in &order {
        wanted[i] = true;
    }
    let units = unit_scores(src, &q, &wanted);
    for &i in &order {
        let best_unit = units
            .get(&(i as u32))
            .map_or(0.0, |us| us.iter().map(|&(_, s)| s).fold(0.0, f64::max));
        scores[i] = (scores[i] + UNIT_WEIGHT * best_unit) * prior(src.kind(i));
    }
    order.sort_by(|a, b| by_score(&scores, a, b));
    let words = query_words(query);
    rerank(src, &q, &words, &mut scores, &order);
    order.sort_by(|a, b| by_score(&scores, a, b));
    let depth = order.len().min(FEATURE_DEPTH.max(limit));
    let named = |f: usize| is_named(src.path(f), &words);
    let avg = src.avg_len();
    let bm25 = |tf: f64, len: f64| saturate(tf, len, avg);
    let staged = Staged {
        q: q.iter()
            .map(|t| Term {
                id: t.id,
                worth: t.worth(),
                posted: &t.posted,
            })
            .collect(),
        bm25: &bm25,
        named: &named,
        scores: &scores,
        units: &units,
        order: &order[..order.len().min(FEATURE_DEPTH)],
    };
    let wanted = vectors || *w != IDENTITY;
    let vectors = if wanted {
        features::vectors(src, &staged)
    } else {
        Vec::new()
    };
    let scored = last_stage(w, &vectors, &order[..depth], &scores);
    let leading: Vec<String> = vectors
        .iter()
        .zip(staged.order)
        .map(|(_, &i)| src.path(i).to_string())
        .collect();
    let hits = scored
        .into_iter()
        .take(limit)
        .map(|(i, score)| hit(src, i, score, &units))
        .collect::<Result<Vec<Hit>, Damaged>>()?;
    Ok((hits, vectors, leading))
}

/// Each file's first score: BM25 over its terms, plus the query's terms in its path and in
/// the names it defines.
fn first_scores(src: &dyn Source, q: &[QueryTerm]) -> Vec<f64> {
    let mut scores = vec![0.0f64; src.file_count()];
    let avg = src.avg_len();
    for t in q {
        for &(f, tf) in &t.posted.files {
            let len = f64::from(src.terms_len(f as usize));
            scores[f as usize] += t.worth() * saturate(f64::from(tf), len, avg);
        }
    }
    for (i, score) in scores.iter_mut().enumerate() {
        let mut extra = 0.0;
        for t in q {
            if src.path_terms(i).binary_search(&t.id).is_ok() {
                extra += PATH_WEIGHT * t.worth();
            }
            if src.def_terms(i).binary_search(&t.id).is_ok() {
                extra += DEF_WEIGHT * t.worth();
            }
        }
        *score += extra;
    }
    scores
}

/// File `i`'s hit with `score`, its ranges its best units by `units`.
fn hit(
    src: &dyn Source,
    i: usize,
    score: f64,
    units: &HashMap<u32, Vec<(u32, f64)>>,
) -> Result<Hit, Damaged> {
    let scored = units.get(&(i as u32)).map_or(&[][..], Vec::as_slice);
    let (ranges, names) = best_units(src.lines(i), &src.spans(i)?, scored);
    Ok(Hit {
        path: src.path(i).to_string(),
        score,
        ranges,
        names,
    })
}

/// The hits, the leading files' feature vectors and their paths (see [`rank_with`]).
pub(crate) type Ranked = (Vec<Hit>, Vec<Vector>, Vec<String>);

/// The last stage: the files of `order` (best first) with `vectors` (its leading ones')
/// ordered by `w`, each with its score; those past the vectors follow in their order, each
/// scored below the last scored one by the log of its first stages' score's ratio to the
/// first of them (with no vectors, each file's score is that log ratio to the first file's).
fn last_stage(
    w: &Weights,
    vectors: &[Vector],
    order: &[usize],
    scores: &[f64],
) -> Vec<(usize, f64)> {
    let mut out: Vec<(usize, f64)> = features::order(w, vectors)
        .into_iter()
        .map(|(k, s)| (order[k], s))
        .collect();
    let floor = if out.is_empty() {
        1.0
    } else {
        out.iter().map(|p| p.1).fold(f64::INFINITY, f64::min)
    };
    let rest = &order[vectors.len().min(order.len())..];
    if let Some(&head) = rest.first() {
        for &i in rest {
            let ratio = (scores[i] / scores[head]).max(f64::MIN_POSITIVE);
            out.push((i, floor - 1.0 + ratio.ln()));
        }
    }
    out
}

/// The query's words as written, lowercased, stopwords left out: what can name a file.
fn query_words(query: &str) -> Vec<String> {
    tokens::identifiers(query)
        .map(str::to_lowercase)
        .filter(|w| !tokens::is_stopword(w))
        .collect()
}

/// Whether the query (its `words`) names the file at `path`: the file's name up to its
/// first dot, lowercased, is one of them and at least [`MIN_NAMED_STEM`] long.
fn is_named(path: &str, words: &[String]) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let stem = name.split('.').next().unwrap_or(name).to_lowercase();
    stem.chars().count() >= MIN_NAMED_STEM && words.contains(&stem)
}

/// The second stage: each of the leading [`RERANK_DEPTH`] files (`order`, best first) times
/// one plus [`PATH_SHARE_WEIGHT`] times the share of the query's weight (idf by weight) its
/// path's terms hold, and times one plus [`NAMED_WEIGHT`] when the query names it (`words`:
/// [`query_words`]).
fn rerank(
    src: &dyn Source,
    q: &[QueryTerm],
    words: &[String],
    scores: &mut [f64],
    order: &[usize],
) {
    let total: f64 = q.iter().map(QueryTerm::worth).sum();
    if total <= 0.0 {
        return;
    }
    for &i in order.iter().take(RERANK_DEPTH) {
        let in_path: f64 = q
            .iter()
            .filter(|t| src.path_terms(i).binary_search(&t.id).is_ok())
            .map(QueryTerm::worth)
            .sum();
        scores[i] *= 1.0 + PATH_SHARE_WEIGHT * in_path / total;
        if is_named(src.path(i), words) {
            scores[i] *= 1.0 + NAMED_WEIGHT;
        }
    }
}

/// The score of every unit of the `wanted` files holding a query term, per file: (unit,
/// score), unordered (a unit's terms add up in the query's order).
fn unit_scores(
    src: &dyn Source,
    q: &[QueryTerm],
    wanted: &[bool],
) -> HashMap<u32, Vec<(u32, f64)>> {
    let mut by_unit: HashMap<(u32, u32), f64> = HashMap::new();
    for t in q {
        for &(f, u, tf) in &t.posted.units {
            if !wanted[f as usize] {
                continue;
            }
            let len = f64::from(src.unit_len(f as usize, u as usize));
            *by_unit.entry((f, u)).or_insert(0.0) +=
                t.worth() * saturate(f64::from(tf), len, UNIT_AVG_LEN);
        }
    }
    let mut out: HashMap<u32, Vec<(u32, f64)>> = HashMap::new();
    for ((f, u), s) in by_unit {
        out.entry(f).or_default().push((u, s));
    }
    out
}

/// A file's best units for the query (`scored`: (unit, score)): up to [`MAX_RANGES`] units,
/// no two nested, as 1-based inclusive ranges in line order (the file's head when none
/// matches).
fn best_units(lines: u32, spans: &[Span], scored: &[(u32, f64)]) -> (Vec<[u32; 2]>, Vec<String>) {
    let mut scored: Vec<(f64, usize)> = scored
        .iter()
        .map(|&(u, s)| (s, u as usize))
        .filter(|&(s, u)| s > 0.0 && u < spans.len())
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut picked: Vec<usize> = Vec::new();
    for (_, i) in scored {
        let u = &spans[i];
        let overlaps = picked.iter().any(|&p| {
            let v = &spans[p];
            u.start < v.end && v.start < u.end
        });
        if !overlaps {
            picked.push(i);
        }
        if picked.len() == MAX_RANGES {
            break;
        }
    }
    if picked.is_empty() {
        return (vec![[1, lines.clamp(1, HEAD_LINES)]], Vec::new());
    }
    picked.sort_by_key(|&i| spans[i].start);
    let ranges = picked
        .iter()
        .map(|&i| [spans[i].start + 1, spans[i].end.max(spans[i].start + 1)])
        .collect();
    let mut names: Vec<String> = Vec::new();
    for &i in &picked {
        if let Some(n) = &spans[i].name
            && !names.contains(n)
        {
            names.push(n.clone());
        }
    }
    (ranges, names)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(files: &[(&str, &str)]) -> Index {
        let mut ix = Index::new();
        for (p, t) in files {
            ix.add(p, 0, t.len() as u64, t);
        }
        ix.finish();
        ix
    }

    #[test]
    fn the_file_defining_a_named_function_ranks_first_with_its_range() {
        let ix = index(&[
            (
                "context.go",
                "package gin\n\nfunc (c *Context) Next() {\n\tc.index++\n}\n\n// SaveUploadedFile saves a file.\nfunc (c *Context) SaveUploadedFile(f *File, dst string) error {\n\tos.MkdirAll(dst)\n\treturn nil\n}\n",
            ),
            (
                "gin.go",
                "package gin\n\nfunc New() *Engine {\n\t// calls SaveUploadedFile? no\n\treturn nil\n}\n",
            ),
            (
                "context_test.go",
                "func TestSaveUploadedFile(t *T) {\n\tc.SaveUploadedFile(f, dst)\n\tc.SaveUploadedFile(f, dst)\n}\n",
            ),
        ]);
        let hits = rank(&ix, "skip chmod on dirs in SaveUploadedFile", 10, &|_| true);
        assert_eq!(hits[0].path, "context.go");
        assert_eq!(hits[0].ranges, [[7, 11]]);
        assert_eq!(hits[0].names, ["SaveUploadedFile"]);
        assert!(hits.iter().any(|h| h.path == "context_test.go"));
    }

    /// The second stage: `session/cookie.go` holds the whole query in its path, `store.go`
    /// none of it but the words more often in its code; the first stage alone puts
    /// `store.go` first (3.24 against 2.56), the second turns it (2.56 × 1.3 = 3.33).
    #[test]
    fn the_second_stage_favours_the_path_that_holds_more_of_the_query() {
        let ix = index(&[
            (
                "session/cookie.go",
                "package session\n\nfunc Write(w Writer) {\n\tw.Set(name, value)\n}\n",
            ),
            (
                "store.go",
                "package store\n\n// Save keeps a session's cookie.\nfunc Save(s Session, c Cookie) {\n\tc.Write()\n}\n",
            ),
            ("other.go", "package other\n\nfunc Other() {}\n"),
        ]);
        let hits = rank(&ix, "session cookie", 10, &|_| true);
        assert_eq!(hits[0].path, "session/cookie.go");
    }

    /// A file the query names: `backoff.go` holds the query's word `backoff` in its path
    /// only (`wait.go` in its code), `client.go` the query's other words in its code; the
    /// first stage and the path's share put `client.go` first (2.23 against 1.86), the
    /// query naming `backoff.go` turns them (1.86 × 1.25 = 2.33). A stem under
    /// [`MIN_NAMED_STEM`], or a word that only holds a stem, names nothing.
    #[test]
    fn a_file_the_query_names_comes_first() {
        let ix = index(&[
            (
                "backoff.go",
                "package retry\n\nfunc Wait(n int) int {\n\treturn n * 2\n}\n",
            ),
            (
                "client.go",
                "package retry\n\nfunc Send(r Request) {\n\tsend(r)\n}\n",
            ),
            ("other.go", "package retry\n\nfunc Other() {}\n"),
            (
                "wait.go",
                "package retry\n\n// wait for the backoff\nfunc Pause() {}\n",
            ),
        ]);
        let hits = rank(&ix, "retry the request with backoff", 10, &|_| true);
        let paths: Vec<&str> = hits.iter().map(|h| h.path.as_str()).collect();
        assert_eq!(paths[..2], ["backoff.go", "client.go"]);
        let words = query_words("fix go in backoffs");
        assert!(!is_named("a/go.go", &words) && !is_named("backoff.go", &words));
        assert!(is_named("src/Backoff.test.ts", &query_words("Backoff")));
    }

    /// The last stage: the hand-set weights keep the order whether the vectors are made or
    /// not, and give the vectors of the leading files in that order with their paths;
    /// weights that count a file the query names more lift `backoff.go` further.
    #[test]
    fn the_last_stage_orders_the_leading_files_by_its_weights() {
        let ix = index(&[
            ("backoff.go", "package retry\n\nfunc Wait() {}\n"),
            (
                "client.go",
                "package retry\n\nfunc Send(r Request) {\n\tsend(r)\n}\n",
            ),
            (
                "req.go",
                "package retry\n\n// a request, sent with backoff\nfunc Request() {}\n",
            ),
        ]);
        let ranked = |w: &Weights, vectors: bool| {
            rank_with(
                &ix,
                "send the request with backoff",
                10,
                &|_| true,
                w,
                vectors,
            )
            .unwrap()
        };
        let paths = |r: &Ranked| r.0.iter().map(|h| h.path.clone()).collect::<Vec<_>>();
        let (plain, with) = (ranked(&IDENTITY, false), ranked(&IDENTITY, true));
        assert_eq!(paths(&plain), paths(&with));
        assert!(plain.1.is_empty() && plain.2.is_empty());
        assert_eq!(with.2, paths(&with));
        assert_eq!(with.1.len(), 3);
        assert_ne!(paths(&with)[0], "backoff.go");
        let mut w = IDENTITY;
        w.0[features::Feature::Named as usize] = 10.0;
        assert_eq!(paths(&ranked(&w, false))[0], "backoff.go");
    }

    #[test]
    fn a_word_of_the_path_counts_and_refused_files_are_left_out() {
        let ix = index(&[
            (
                "recovery.go",
                "package gin\n\nfunc stack() []byte {\n\treturn nil\n}\n",
            ),
            (
                "logger.go",
                "package gin\n\n// recovery is logged here\nfunc log() {}\n",
            ),
        ]);
        let hits = rank(&ix, "recovery stack", 10, &|_| true);
        assert_eq!(hits[0].path, "recovery.go");
        let hits = rank(&ix, "recovery stack", 10, &|p| p != "recovery.go");
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].path, "logger.go");
    }
}
