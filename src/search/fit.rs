//! Fitting the last stage's weights ([`super::features::Weights`]) on a corpus
//! (`patchgate search-eval DIR --fit`): coordinate ascent on the measures themselves,
//! recall@5 with hit@1 as a second aim, over each query's leading files as the hand-set
//! stages ordered them. A development tool: the weights it prints are pasted into
//! [`super::features::WEIGHTS`] only once they also lift the other corpus, scored by its
//! numbers alone.

use super::features::{self, FEATURES, Feature, Vector, Weights};

/// The steps tried on each weight, each way.
const STEPS: [f64; 7] = [2.0, 1.0, 0.5, 0.25, 0.1, 0.05, 0.02];
/// The most passes over the weights.
const MAX_PASSES: usize = 8;
/// How much hit@1 counts beside recall@5 in the aim.
const HIT_WEIGHT: f64 = 0.5;
/// What each unit of weight moved away from the hand-set stages costs in the aim (of
/// two changes that score the same, the smaller is kept).
const SHRINK: f64 = 0.0005;
/// The least gain in the aim a step must bring.
const MIN_GAIN: f64 = 1e-9;
/// How many leading files recall counts.
const TOP: usize = 5;

/// One query, as the fit sees it.
#[derive(Debug, Clone)]
pub struct Case {
    /// The leading files' feature vectors, best first by the hand-set stages.
    pub vectors: Vec<Vector>,
    /// Whether each of those files answers the query.
    pub answers: Vec<bool>,
    /// How many files answer the query (some may not be among the leading ones).
    pub files: usize,
}

/// Mean recall@5 and hit@1 of `cases` ranked by `w`.
pub fn measure(w: &Weights, cases: &[Case]) -> (f64, f64) {
    let mut recall = 0.0;
    let mut hits = 0.0;
    for c in cases {
        let order = features::order(w, &c.vectors);
        let found = order
            .iter()
            .take(TOP)
            .filter(|&&(k, _)| c.answers[k])
            .count();
        recall += if c.files == 0 {
            1.0
        } else {
            found as f64 / c.files as f64
        };
        if order.first().is_some_and(|&(k, _)| c.answers[k]) {
            hits += 1.0;
        }
    }
    let n = cases.len().max(1) as f64;
    (recall / n, hits / n)
}

/// The aim the fit climbs.
fn aim(w: &Weights, cases: &[Case]) -> f64 {
    let (recall, hit) = measure(w, cases);
    let moved: f64 =
        w.0.iter()
            .zip(features::IDENTITY.0)
            .map(|(a, b)| (a - b).abs())
            .sum();
    recall + HIT_WEIGHT * hit - SHRINK * moved
}

/// Weights fit on `cases`, from the hand-set stages' (the score's weight stays 1: the
/// ranking is the same at any scale).
pub fn fit(cases: &[Case]) -> Weights {
    let mut w = features::IDENTITY;
    let mut best = aim(&w, cases);
    for _ in 0..MAX_PASSES {
        let mut moved = false;
        for k in 0..FEATURES {
            if k == Feature::Score as usize {
                continue;
            }
            let mut step_best: Option<(f64, f64)> = None;
            for step in STEPS.iter().flat_map(|&s| [s, -s]) {
                let mut tried = w;
                tried.0[k] += step;
                let got = aim(&tried, cases);
                if got > best + MIN_GAIN && step_best.is_none_or(|(_, a)| got > a) {
                    step_best = Some((tried.0[k], got));
                }
            }
            if let Some((value, got)) = step_best {
                w.0[k] = value;
                best = got;
                moved = true;
            }
        }
        if !moved {
            break;
        }
    }
    w
}

/// Gradient steps of the pairwise fit.
const PAIR_ROUNDS: usize = 400;
/// The pairwise fit's step size (on standardised features).
const PAIR_RATE: f64 = 0.5;
/// The pairwise fit's pull toward the hand-set stages (L2, on standardised features).
const PAIR_L2: f64 = 0.01;
/// How many of a query's leading files (by the hand-set stages) an answer is paired with
/// (5 or 10 fit the first places' quirks and transfer worse; 50 pairs mostly with files
/// no ranking would put first).
const PAIR_DEPTH: usize = 20;

/// Weights fit on `cases` by pairwise logistic regression: every answer among a query's
/// leading files against every other leading file of the query, the loss ln(1 + e^-(s_a -
/// s_o)) on standardised features, pulled toward the hand-set stages; scaled so the score
/// weighs 1.
pub fn fit_pairwise(cases: &[Case]) -> Weights {
    let (mean, sd) = spread(cases);
    let diffs = pairs(cases, &mean, &sd);
    let score = Feature::Score as usize;
    let mut start = [0.0; FEATURES];
    start[score] = sd[score];
    let mut v = start;
    let n = diffs.len().max(1) as f64;
    for _ in 0..PAIR_ROUNDS {
        let mut grad = [0.0; FEATURES];
        for d in &diffs {
            let s: f64 = v.iter().zip(d).map(|(a, b)| a * b).sum();
            let g = -1.0 / (1.0 + s.exp());
            for k in 0..FEATURES {
                grad[k] += g * d[k] / n;
            }
        }
        for k in 0..FEATURES {
            v[k] -= PAIR_RATE * (grad[k] + 2.0 * PAIR_L2 * (v[k] - start[k]));
        }
    }
    let mut w = [0.0; FEATURES];
    for k in 0..FEATURES {
        w[k] = v[k] / sd[k];
    }
    let scale = if w[score] > 0.0 { w[score] } else { 1.0 };
    Weights(w.map(|x| x / scale))
}

/// The differences of standardised vectors (answer less other) of each answer among a
/// query's leading files with each other file among its first [`PAIR_DEPTH`].
fn pairs(cases: &[Case], mean: &Vector, sd: &Vector) -> Vec<Vector> {
    let std = |x: &Vector| -> Vector { std::array::from_fn(|k| (x[k] - mean[k]) / sd[k]) };
    let mut diffs: Vec<Vector> = Vec::new();
    for c in cases {
        let answers = c.vectors.iter().zip(&c.answers).filter(|p| *p.1);
        for (xa, _) in answers {
            let za = std(xa);
            let others = c.vectors.iter().zip(&c.answers).take(PAIR_DEPTH);
            for (xo, _) in others.filter(|p| !*p.1) {
                let zo = std(xo);
                diffs.push(std::array::from_fn(|k| za[k] - zo[k]));
            }
        }
    }
    diffs
}

/// Each feature's mean and standard deviation over every leading file of `cases` (1 where
/// a feature does not vary).
fn spread(cases: &[Case]) -> (Vector, Vector) {
    let all: Vec<&Vector> = cases.iter().flat_map(|c| &c.vectors).collect();
    let n = all.len().max(1) as f64;
    let mut mean = [0.0; FEATURES];
    let mut sd = [0.0; FEATURES];
    for x in &all {
        for k in 0..FEATURES {
            mean[k] += x[k] / n;
        }
    }
    for x in &all {
        for k in 0..FEATURES {
            sd[k] += (x[k] - mean[k]).powi(2) / n;
        }
    }
    (mean, sd.map(|v| if v > 0.0 { v.sqrt() } else { 1.0 }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vector(score: f64, named: f64) -> Vector {
        let mut x = [0.0; FEATURES];
        x[Feature::Score as usize] = score;
        x[Feature::Named as usize] = named;
        x
    }

    /// Six leading files where the answer is the one the query names, sixth by score: the
    /// hand-set stages miss it from the first five, the fit finds the weight that lifts it
    /// (and leaves a feature that tells nothing at 0).
    #[test]
    fn the_fit_finds_the_feature_that_lifts_the_answers() {
        let case = |answer: usize| {
            let vectors: Vec<Vector> = (0..6)
                .map(|i| vector(-(i as f64) * 0.1, f64::from(u8::from(i == answer))))
                .collect();
            Case {
                answers: (0..6).map(|i| i == answer).collect(),
                vectors,
                files: 1,
            }
        };
        let cases = [case(5), case(5), case(4)];
        assert_eq!(measure(&features::IDENTITY, &cases), (1.0 / 3.0, 0.0));
        let w = fit(&cases);
        assert_eq!(measure(&w, &cases), (1.0, 1.0));
        assert!(w.0[Feature::Named as usize] > 0.5);
        assert_eq!(w.0[Feature::Length as usize], 0.0);
        let pw = fit_pairwise(&cases);
        assert_eq!(measure(&pw, &cases).0, 1.0);
        assert!(pw.0[Feature::Named as usize] > 0.5);
    }
}
