//! Stage 2, segments: the runs of code lines between placeholders. Each segment is placed on
//! its own; the snippet's open edges (no placeholder before its first line or after its last)
//! are implicit placeholders, so a segment never reaches the file's start or end unless its
//! own lines anchor there.

use std::ops::Range;

use crate::edit::lazy::place::depths;
use crate::edit::lazy::placeholder::Narration;
use crate::edit::lazy::prepare::{BlankEdges, Piece, Prepared, SLine};

/// A run of code lines between two placeholders (or a placeholder and an open edge).
#[derive(Debug, Clone)]
pub(crate) struct Segment {
    /// Its lines in [`Snippet::lines`].
    pub(crate) lines: Range<usize>,
    /// The indentation of the placeholder written before it; `None` at an open edge.
    pub(crate) gap_before: Option<u32>,
    /// The indentation of the placeholder written after it; `None` at an open edge.
    pub(crate) gap_after: Option<u32>,
    /// Whether the segment was cut from the one before (after) it at a blank line, with no
    /// placeholder between: that blank line is the snippet's own, not a separator.
    pub(crate) cut_before: bool,
    pub(crate) cut_after: bool,
    /// Whether what follows it is a placeholder (not a `remove` directive, a narration line
    /// or a cut).
    pub(crate) placeholder_after: bool,
}

/// The snippet, read and cut into segments.
#[derive(Debug, Clone)]
pub(crate) struct Snippet {
    /// Every code line, in snippet order.
    pub(crate) lines: Vec<SLine>,
    pub(crate) segments: Vec<Segment>,
    /// Names of `remove NAME` directives.
    pub(crate) removals: Vec<String>,
    pub(crate) diff_style: bool,
    /// Whether it opens (ends) with a blank line.
    pub(crate) blank_edges: BlankEdges,
}

/// Narration lines are part of a gap: "// imports (top of file)" says where the next code
/// goes, it is not code; a heading ("// Props:") only next to a placeholder or the
/// snippet's edge.
fn narration_to_gaps(pieces: Vec<Piece>) -> Vec<Piece> {
    let is_gap = |p: Option<&Piece>| !matches!(p, Some(Piece::Line(_)));
    let solid = |p: &Piece| !matches!(p, Piece::Line(l) if l.blank);
    let mut out: Vec<Piece> = Vec::with_capacity(pieces.len());
    for (k, piece) in pieces.iter().enumerate() {
        let Piece::Line(l) = piece else {
            out.push(piece.clone());
            continue;
        };
        if l.narration == Narration::Place {
            out.push(Piece::Gap { indent: l.indent });
            continue;
        }
        if l.narration == Narration::Heading {
            let before = pieces[..k].iter().rev().find(|p| solid(p));
            let after = pieces[k + 1..].iter().find(|p| solid(p));
            if is_gap(before) || is_gap(after) {
                out.push(Piece::Gap { indent: l.indent });
                continue;
            }
        }
        out.push(piece.clone());
    }
    out
}

/// What follows a segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Follows {
    /// A placeholder.
    Placeholder,
    /// A `remove` directive, a narration line, a cut or the snippet's end.
    Other,
}

impl Segment {
    /// What follows the segment.
    pub(crate) fn follows(&self) -> Follows {
        if self.placeholder_after {
            Follows::Placeholder
        } else {
            Follows::Other
        }
    }
}

impl Snippet {
    /// Cut prepared pieces into segments. Segments of blank lines only are dropped.
    pub(crate) fn cut(prepared: Prepared) -> Snippet {
        let pieces = narration_to_gaps(prepared.pieces);
        let mut lines = Vec::new();
        let mut segments = Vec::new();
        let mut removals = Vec::new();
        let mut open: Option<(usize, Option<u32>)> = None;
        let mut last_gap: Option<u32> = None;
        let close = |segments: &mut Vec<Segment>,
                     lines: &[SLine],
                     start: usize,
                     before,
                     after,
                     placeholder_after| {
            if lines[start..].iter().any(|l: &SLine| !l.blank) {
                segments.push(Segment {
                    lines: start..lines.len(),
                    gap_before: before,
                    gap_after: after,
                    cut_before: false,
                    cut_after: false,
                    placeholder_after,
                });
            }
        };
        for piece in pieces {
            match piece {
                Piece::Line(l) => {
                    if open.is_none() {
                        open = Some((lines.len(), last_gap));
                    }
                    lines.push(l);
                }
                other => {
                    let placeholder = matches!(other, Piece::Gap { .. });
                    let indent = match other {
                        Piece::Gap { indent } => indent,
                        Piece::Remove(name) => {
                            removals.push(name);
                            0
                        }
                        Piece::Line(_) => unreachable!("lines are handled above"),
                    };
                    if let Some((start, before)) = open.take() {
                        close(
                            &mut segments,
                            &lines,
                            start,
                            before,
                            Some(indent),
                            placeholder,
                        );
                    }
                    last_gap = Some(indent);
                }
            }
        }
        if let Some((start, before)) = open {
            close(&mut segments, &lines, start, before, None, false);
        }
        depths::link(&mut lines);
        Snippet {
            lines,
            segments,
            removals,
            diff_style: prepared.diff_style,
            blank_edges: prepared.blank_edges,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edit::lazy::index::FileIndex;
    use crate::edit::lazy::prepare;

    #[test]
    fn placeholders_and_open_edges_bound_segments() {
        let file = ["a", "b", "c"];
        let index = FileIndex::new(&file);
        let s = Snippet::cut(prepare::read("a\n// ...\n\n// ...\nc\n", &index));
        assert_eq!(s.segments.len(), 2);
        assert_eq!(s.segments[0].gap_before, None);
        assert_eq!(s.segments[0].gap_after, Some(0));
        assert_eq!(s.segments[1].gap_after, None);
        let s = Snippet::cut(prepare::read("  // ...\nb\n# remove c\n", &index));
        assert_eq!(s.segments.len(), 1);
        assert_eq!(s.segments[0].gap_before, Some(2));
        assert_eq!(s.removals, ["c"]);
    }
}
