//! The evidence a lazy merge rests on, as data, and the one decision made of it (docs/DESIGN.md
//! §5.1, "sure or refuse"): every placed segment says how it is anchored, and the reading check
//! says whether the result parses as the file did; one function of that evidence, with its
//! weights in [`MarginWeights`], gives the merge a margin, and a merge below the threshold is
//! refused `NEEDS_MORE_CONTEXT`, naming its weakest evidence and what to send.

use super::index::FileIndex;
use super::place::Pin;
use super::plan::{Planned, Where};
use super::prepare::SLine;
use crate::edit::{Error, ErrorCode, Result};

/// How a placed segment is tied to the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Anchor {
    /// At least one of its lines is a non-trivial line the file holds once, kept where it is.
    Unique {
        /// How many such lines.
        lines: usize,
    },
    /// Its file lines are all ones the file holds more than once, or trivial ones (closers,
    /// blank-ish lines): it floats wherever such lines stand.
    Repeated,
    /// No line of it is the file's: placed by its neighbours, the instruction or the file's
    /// outline.
    Position,
}

/// What the reading check found in the result's syntax.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Syntax {
    /// No parse error the file did not have (or no grammar to tell).
    #[default]
    Clean,
    /// A new parse error on a line whose text has an error in the snippet read alone too: the
    /// snippet's own, or a piece placed where it does not fit (at this 1-based result line).
    Excused(usize),
}

/// The evidence of one merge.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Evidence {
    /// Per placed segment: its first snippet line (1-based, as the agent wrote it) and how it is
    /// anchored.
    pub(crate) anchors: Vec<(usize, Anchor)>,
    /// The result's syntax.
    pub(crate) syntax: Syntax,
}

/// The weights of the decision, each with the reason for its value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MarginWeights {
    /// A segment held by one unique line; each more unique line adds [`Self::per_unique`] up
    /// to [`Self::unique_cap`].
    pub unique: f32,
    /// What each further unique line adds.
    pub per_unique: f32,
    /// The most a segment's unique lines give.
    pub unique_cap: f32,
    /// A segment held only by repeated or trivial lines.
    pub repeated: f32,
    /// A segment of new code placed by its neighbours: as sure as those neighbours, whose own
    /// anchors count; its place was checked by the rules that chose it.
    pub position: f32,
    /// A new parse error the snippet's own text shares: a fragment's own error, or a piece
    /// put where it does not fit.
    pub excused_syntax: f32,
    /// Merges with a margin below this are refused.
    pub threshold: f32,
}

/// The weights the merge uses.
pub const MARGIN: MarginWeights = MarginWeights {
    unique: 1.0,
    per_unique: 0.25,
    unique_cap: 2.0,
    repeated: 0.5,
    position: 1.0,
    excused_syntax: 0.75,
    threshold: 0.3,
};

/// The margin of a merge: how sure it is, and the evidence that makes it least sure.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Margin {
    /// The margin (above the threshold: merged; below: refused).
    pub value: f32,
    /// The weakest evidence, in words, for the refusal.
    pub weakest: String,
}

impl Anchor {
    /// How `pins` tie a segment to `file`.
    pub(crate) fn of(file: &FileIndex<'_>, pins: &[Pin]) -> Anchor {
        let unique = pins
            .iter()
            .filter(|p| !p.replace && !file.is_trivial(p.j) && file.count(file.key(p.j)) == 1)
            .count();
        match (unique, pins.is_empty()) {
            (0, true) => Anchor::Position,
            (0, false) => Anchor::Repeated,
            (n, _) => Anchor::Unique { lines: n },
        }
    }

    fn weight(self, w: &MarginWeights) -> f32 {
        match self {
            Anchor::Unique { lines } => {
                (w.unique + w.per_unique * (lines - 1) as f32).min(w.unique_cap)
            }
            Anchor::Repeated => w.repeated,
            Anchor::Position => w.position,
        }
    }
}

impl Evidence {
    /// The anchors of the planned segments.
    pub(crate) fn of(file: &FileIndex<'_>, lines: &[SLine], planned: &[Planned]) -> Evidence {
        let anchors = planned
            .iter()
            .map(|p| {
                let at = p
                    .seg
                    .lines
                    .clone()
                    .find(|&i| !lines[i].blank)
                    .map_or(0, |i| lines[i].at);
                let anchor = match &p.at {
                    Where::Pins(pins) => Anchor::of(file, pins),
                    Where::Insert { .. } => Anchor::Position,
                };
                (at, anchor)
            })
            .collect();
        Evidence {
            anchors,
            syntax: Syntax::Clean,
        }
    }

    /// The margin under `w`: the weakest segment's anchor, less what the syntax costs.
    pub(crate) fn margin(&self, w: &MarginWeights) -> Margin {
        let weakest = self
            .anchors
            .iter()
            .min_by(|a, b| a.1.weight(w).total_cmp(&b.1.weight(w)));
        let (mut value, mut why) = match weakest {
            Some(&(at, anchor)) => (anchor.weight(w), describe(at, anchor)),
            None => (w.unique_cap, "the snippet only removes".to_string()),
        };
        if let Syntax::Excused(line) = self.syntax {
            value -= w.excused_syntax;
            why = format!(
                "{why}; merged so, the file gets a syntax error at line {line} it did not have"
            );
        }
        Margin {
            value,
            weakest: why,
        }
    }
}

fn describe(at: usize, anchor: Anchor) -> String {
    match anchor {
        Anchor::Unique { lines } => {
            format!(
                "the segment at snippet line {at} is held by {lines} line(s) unique in the file"
            )
        }
        Anchor::Repeated => format!(
            "the segment at snippet line {at} is held only by lines the file has more than once \
             (or closers), so it could stand at any of their places"
        ),
        Anchor::Position => {
            format!("the segment at snippet line {at} holds no line of the file")
        }
    }
}

/// Refuse a merge whose margin is below `w.threshold`.
pub(crate) fn decide(margin: &Margin, w: &MarginWeights) -> Result<()> {
    if margin.value >= w.threshold {
        return Ok(());
    }
    Err(Error::new(
        ErrorCode::NeedsMoreContext,
        format!(
            "not sure enough of this reading to write it: {}. Show one or two unchanged lines \
             that occur once in the file next to that segment (or say where it goes in the \
             instruction)",
            margin.weakest
        ),
    ))
}
