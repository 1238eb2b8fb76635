//! `patchgate eval --curve`: what the lazy merge's decision threshold buys. Each case's merge
//! is scored before the decision ([`super::Undecided`]), with its margin; at a threshold, a
//! merge whose margin is below it is refused and every other case keeps that outcome. One row
//! per threshold: right, harmful, lost code and refused, as shares of the merge cases.

use std::fmt::Write as _;

use super::{Outcome, Report};

/// Rows printed at most (thresholds between the margins seen, evenly picked).
const MAX_ROWS: usize = 24;

/// The counts at one threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Point {
    /// Correct or loose.
    pub right: usize,
    /// Wrong and not loose.
    pub harmful: usize,
    /// Wrong and losing the file's own code.
    pub lost_code: usize,
    /// Refused (by the threshold or before it).
    pub refused: usize,
}

impl Report {
    /// The counts when merges with a margin below `threshold` are refused.
    pub fn at_threshold(&self, threshold: f32) -> Point {
        let mut p = Point::default();
        for c in self.cases.iter().filter(|c| !c.expect_decline) {
            let u = &c.undecided;
            let cut = u.margin.is_some_and(|m| m < threshold);
            match &u.outcome {
                _ if cut => p.refused += 1,
                Outcome::Refused(..) => p.refused += 1,
                Outcome::Correct => p.right += 1,
                Outcome::Wrong if u.loose => p.right += 1,
                Outcome::Wrong => {
                    p.harmful += 1;
                    p.lost_code += usize::from(u.lost_code);
                }
            }
        }
        p
    }

    /// The thresholds worth a row: below every margin, then just above each distinct margin
    /// (at most [`MAX_ROWS`]).
    fn thresholds(&self) -> Vec<f32> {
        let mut m: Vec<f32> = self
            .cases
            .iter()
            .filter_map(|c| c.undecided.margin)
            .filter(|m| m.is_finite())
            .collect();
        m.sort_by(f32::total_cmp);
        m.dedup();
        let step = m.len().div_ceil(MAX_ROWS - 1).max(1);
        let mut out = vec![f32::NEG_INFINITY];
        out.extend(m.iter().step_by(step).map(|v| v + 1e-3));
        // Always past the highest margin (every weighed merge refused).
        if let Some(&top) = m.last()
            && out.last().is_some_and(|&t| t < top + 1e-3)
        {
            out.push(top + 1e-3);
        }
        out
    }

    /// The curve as a table.
    pub fn render_curve(&self) -> String {
        let n = self.merge_cases().max(1) as f64;
        let pct = |k: usize| 100.0 * k as f64 / n;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "curve: threshold  right%  harmful%  lost_code%  refused%   (now {})",
            crate::edit::lazy::MARGIN.threshold
        );
        for t in self.thresholds() {
            let p = self.at_threshold(t);
            let label = if t.is_finite() {
                format!("{t:>9.3}")
            } else {
                format!("{:>9}", "none")
            };
            let _ = writeln!(
                out,
                "  {label}   {:>6.1}  {:>8.1}  {:>10.1}  {:>8.1}",
                pct(p.right),
                pct(p.harmful),
                pct(p.lost_code),
                pct(p.refused)
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edit::Format;
    use crate::eval::{CaseResult, Undecided};

    fn case(outcome: Outcome, loose: bool, lost_code: bool, margin: Option<f32>) -> CaseResult {
        CaseResult {
            name: String::new(),
            outcome: outcome.clone(),
            expect_decline: false,
            nanos: 0,
            check_nanos: None,
            flagged: false,
            lost: false,
            lost_code,
            unseen: false,
            loose,
            undecided: Undecided {
                outcome,
                loose,
                lost_code,
                margin,
            },
        }
    }

    #[test]
    fn a_threshold_refuses_the_merges_below_it_and_keeps_every_other_outcome() {
        let refused = Outcome::Refused(crate::error::ErrorCode::NoMatch, String::new());
        let report = Report {
            format: Format::Lazy,
            cases: vec![
                case(Outcome::Correct, false, false, Some(1.5)),
                case(Outcome::Correct, false, false, Some(0.4)),
                case(Outcome::Wrong, true, false, Some(0.6)),
                case(Outcome::Wrong, false, true, Some(0.2)),
                case(refused, false, false, None),
            ],
        };
        let none = report.at_threshold(f32::NEG_INFINITY);
        assert_eq!(
            none,
            Point {
                right: 3,
                harmful: 1,
                lost_code: 1,
                refused: 1
            }
        );
        // At 0.5 the harmful merge (0.2) and one right one (0.4) are refused.
        let half = report.at_threshold(0.5);
        assert_eq!(
            half,
            Point {
                right: 2,
                harmful: 0,
                lost_code: 0,
                refused: 3
            }
        );
        let table = report.render_curve();
        assert!(table.lines().count() >= 4, "{table}");
        assert!(table.contains("none"), "{table}");
    }
}
