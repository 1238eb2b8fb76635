//! The calibrated last stage of the ranking: each of the leading [`FEATURE_DEPTH`] files
//! after the hand-set stages becomes a vector of the signals the ranking has ([`Feature`]),
//! and a fixed linear scorer ([`WEIGHTS`], fit by `patchgate search-eval --fit` on one
//! corpus and confirmed on another, see [`super::fit`]) orders them again.

use std::collections::HashMap;

use super::index::Kind;
use super::source::{Posted, Source};

/// How many leading files the scorer orders again (the rest keep their order after them).
pub(crate) const FEATURE_DEPTH: usize = 50;

/// The lowest log score ratio a feature takes (a file scored a millionth of the leader's).
const MIN_LOG_RATIO: f64 = -14.0;

/// The signals of one (query, file) pair, in a fixed order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feature {
    /// The hand-set stages' score, as the log of its ratio to the leader's (≤ 0).
    Score,
    /// The file's rank after those stages, as ln(1 + rank), rank 0-based.
    Rank,
    /// BM25 over the file's terms, by the query's total weight.
    Content,
    /// The share of the query's weight its path holds.
    Path,
    /// The share of the query's weight the names it defines hold.
    Defs,
    /// Its best unit's BM25, by the query's total weight.
    Unit,
    /// The share of the query's weight the file holds anywhere (text, path, names).
    Coverage,
    /// The share of the query's weight its best-covered unit holds (the terms together).
    Proximity,
    /// The share of the query's terms, by count, the file holds anywhere.
    Terms,
    /// 1 for a test.
    Test,
    /// 1 for configuration, markup and other non-source files.
    Other,
    /// 1 for prose.
    Doc,
    /// ln(1 + the file's terms / the mean).
    Length,
    /// 1 when the query names the file (its stem one of the query's words).
    Named,
}

/// How many features there are.
pub const FEATURES: usize = 14;

impl Feature {
    /// Every feature, in vector order.
    pub const ALL: [Feature; FEATURES] = [
        Feature::Score,
        Feature::Rank,
        Feature::Content,
        Feature::Path,
        Feature::Defs,
        Feature::Unit,
        Feature::Coverage,
        Feature::Proximity,
        Feature::Terms,
        Feature::Test,
        Feature::Other,
        Feature::Doc,
        Feature::Length,
        Feature::Named,
    ];

    /// Its name in the fit's report.
    pub fn name(self) -> &'static str {
        match self {
            Feature::Score => "score",
            Feature::Rank => "rank",
            Feature::Content => "content",
            Feature::Path => "path",
            Feature::Defs => "defs",
            Feature::Unit => "unit",
            Feature::Coverage => "coverage",
            Feature::Proximity => "proximity",
            Feature::Terms => "terms",
            Feature::Test => "test",
            Feature::Other => "other",
            Feature::Doc => "doc",
            Feature::Length => "length",
            Feature::Named => "named",
        }
    }
}

/// A feature vector.
pub type Vector = [f64; FEATURES];

/// A linear scorer's weights, one per [`Feature`] in order.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Weights(pub Vector);

/// The weights of the hand-set stages alone: their score, nothing else.
pub const IDENTITY: Weights = {
    let mut w = [0.0; FEATURES];
    w[Feature::Score as usize] = 1.0;
    Weights(w)
};

/// The scorer the ranking uses.
pub const WEIGHTS: Weights = IDENTITY;

impl Weights {
    /// A file's score.
    pub fn score(&self, x: &Vector) -> f64 {
        self.0.iter().zip(x).map(|(w, v)| w * v).sum()
    }

    /// Weights from a comma-separated list of [`FEATURES`] numbers (`search-eval --weights`).
    pub fn parse(text: &str) -> Option<Weights> {
        let mut w = [0.0; FEATURES];
        let mut parts = text.split(',');
        for slot in &mut w {
            *slot = parts
                .next()?
                .trim()
                .parse()
                .ok()
                .filter(|v: &f64| v.is_finite())?;
        }
        parts.next().is_none().then_some(Weights(w))
    }

    /// The weights as a comma-separated list ([`Weights::parse`] reads it back).
    pub fn list(&self) -> String {
        let parts: Vec<String> = self.0.iter().map(|v| format!("{v}")).collect();
        parts.join(",")
    }
}

/// The positions of `vectors` (best first by the hand-set stages) best first by `w`: by its
/// score, ties in their first order.
pub fn order(w: &Weights, vectors: &[Vector]) -> Vec<(usize, f64)> {
    let mut out: Vec<(usize, f64)> = vectors
        .iter()
        .enumerate()
        .map(|(i, x)| (i, w.score(x)))
        .collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    out
}

/// A query term as the features read it.
pub(crate) struct Term<'a> {
    /// The term id.
    pub id: u32,
    /// How much it counts (its idf by its weight).
    pub worth: f64,
    /// Its postings.
    pub posted: &'a Posted,
}

/// What the stages before hand over: the query's terms, the files' scores, the units'
/// scores per file, and the leading files in order.
pub(crate) struct Staged<'a> {
    /// The query's terms.
    pub q: Vec<Term<'a>>,
    /// The BM25 weight of a count in a file of a length (the ranking's).
    pub bm25: &'a dyn Fn(f64, f64) -> f64,
    /// Whether the query names each file, by file.
    pub named: &'a dyn Fn(usize) -> bool,
    /// Each file's score after the hand-set stages.
    pub scores: &'a [f64],
    /// Each wanted file's scored units: (unit, BM25).
    pub units: &'a HashMap<u32, Vec<(u32, f64)>>,
    /// The leading files, best first.
    pub order: &'a [usize],
}

/// The feature vectors of `st.order`'s files, in its order.
pub(crate) fn vectors(src: &dyn Source, st: &Staged<'_>) -> Vec<Vector> {
    let total: f64 = st.q.iter().map(|t| t.worth).sum();
    let Some(&first) = st.order.first() else {
        return Vec::new();
    };
    if total <= 0.0 {
        return vec![[0.0; FEATURES]; st.order.len()];
    }
    let top = st.scores[first];
    let held = unit_held(&st.q, st.order);
    let avg = src.avg_len().max(1.0);
    st.order
        .iter()
        .enumerate()
        .map(|(rank, &f)| {
            let mut x = [0.0; FEATURES];
            let ratio = st.scores[f] / top;
            x[Feature::Score as usize] = if ratio > 0.0 {
                ratio.ln().max(MIN_LOG_RATIO)
            } else {
                MIN_LOG_RATIO
            };
            x[Feature::Rank as usize] = (1.0 + rank as f64).ln();
            let parts = parts(src, st, f);
            x[Feature::Content as usize] = parts.content / total;
            x[Feature::Path as usize] = parts.path / total;
            x[Feature::Defs as usize] = parts.defs / total;
            x[Feature::Coverage as usize] = parts.held / total;
            x[Feature::Terms as usize] = parts.terms as f64 / st.q.len() as f64;
            let best_unit = st
                .units
                .get(&(f as u32))
                .map_or(0.0, |us| us.iter().map(|&(_, s)| s).fold(0.0, f64::max));
            x[Feature::Unit as usize] = best_unit / total;
            x[Feature::Proximity as usize] = held.get(&(f as u32)).copied().unwrap_or(0.0) / total;
            let kind = src.kind(f);
            x[Feature::Test as usize] = f64::from(u8::from(kind == Kind::Test));
            x[Feature::Other as usize] = f64::from(u8::from(kind == Kind::Other));
            x[Feature::Doc as usize] = f64::from(u8::from(kind == Kind::Doc));
            x[Feature::Length as usize] = (1.0 + f64::from(src.terms_len(f)) / avg).ln();
            x[Feature::Named as usize] = f64::from(u8::from((st.named)(f)));
            x
        })
        .collect()
}

/// One file's parts of the query: BM25 over its terms, the weight in its path, in its
/// definitions' names, held anywhere, and the number of terms held.
struct Parts {
    content: f64,
    path: f64,
    defs: f64,
    held: f64,
    terms: usize,
}

fn parts(src: &dyn Source, st: &Staged<'_>, f: usize) -> Parts {
    let mut p = Parts {
        content: 0.0,
        path: 0.0,
        defs: 0.0,
        held: 0.0,
        terms: 0,
    };
    let len = f64::from(src.terms_len(f));
    for t in &st.q {
        let tf = t
            .posted
            .files
            .binary_search_by_key(&(f as u32), |&(g, _)| g)
            .map_or(0, |i| t.posted.files[i].1);
        let in_path = src.path_terms(f).binary_search(&t.id).is_ok();
        let in_defs = src.def_terms(f).binary_search(&t.id).is_ok();
        if tf > 0 {
            p.content += t.worth * (st.bm25)(f64::from(tf), len);
        }
        if in_path {
            p.path += t.worth;
        }
        if in_defs {
            p.defs += t.worth;
        }
        if tf > 0 || in_path || in_defs {
            p.held += t.worth;
            p.terms += 1;
        }
    }
    p
}

/// Per file of `order`: the most query weight one of its units holds (each term counted
/// once, whatever its count).
fn unit_held(q: &[Term<'_>], order: &[usize]) -> HashMap<u32, f64> {
    let wanted: std::collections::HashSet<u32> = order.iter().map(|&f| f as u32).collect();
    let mut by_unit: HashMap<(u32, u32), f64> = HashMap::new();
    for t in q {
        for &(f, u, _) in &t.posted.units {
            if wanted.contains(&f) {
                *by_unit.entry((f, u)).or_insert(0.0) += t.worth;
            }
        }
    }
    let mut out: HashMap<u32, f64> = HashMap::new();
    for ((f, _), w) in by_unit {
        let best = out.entry(f).or_insert(0.0);
        *best = best.max(w);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_read_back_what_they_list_and_refuse_the_rest() {
        let mut w = IDENTITY;
        w.0[Feature::Named as usize] = -0.25;
        assert_eq!(Weights::parse(&w.list()), Some(w));
        assert_eq!(Weights::parse("1,2"), None);
        let long = format!("{},1", w.list());
        assert_eq!(Weights::parse(&long), None);
        let nan = w.list().replacen("1", "NaN", 1);
        assert_eq!(Weights::parse(&nan), None);
    }

    #[test]
    fn the_identity_keeps_the_order_and_ties_keep_theirs() {
        let mut a = [0.0; FEATURES];
        let mut b = [0.0; FEATURES];
        a[Feature::Score as usize] = 0.0;
        b[Feature::Score as usize] = -0.5;
        b[Feature::Named as usize] = 1.0;
        let got: Vec<usize> = order(&IDENTITY, &[a, b, b]).iter().map(|p| p.0).collect();
        assert_eq!(got, [0, 1, 2]);
        let mut w = IDENTITY;
        w.0[Feature::Named as usize] = 1.0;
        let got: Vec<usize> = order(&w, &[a, b]).iter().map(|p| p.0).collect();
        assert_eq!(got, [1, 0]);
    }
}
