//! The numbers that tune the lazy merge, in one place, each with the reason for its value.
//! Nothing else in `edit/lazy/` hides a threshold.

/// A snippet line that occurs more often than this in the file does not seed a run of
/// matching lines (runs through it are still found from rarer lines next to it). Keeps the
/// work per line bounded on files full of repeated lines.
pub(crate) const MAX_SEED_OCCURRENCES: usize = 64;

/// Similarity (0..1, see `lines::similarity`) at which a changed line at a segment's edge
/// replaces the old line at its place instead of being added beside it. High enough that two
/// different doc comments ("Gets or sets a …") or two calls of one function with other
/// arguments are not taken for versions of each other; low enough for a changed argument
/// list or a new trailing clause.
pub(crate) const EDGE_CHANGE_SIMILARITY: f32 = 0.6;

/// Similarity at which a changed line places a segment that has no unchanged line, when its
/// old version is the only line of the file that close to it.
pub(crate) const PLACING_CHANGE_SIMILARITY: f32 = 0.62;

/// How much closer the old version that places a segment must be than any other file line.
pub(crate) const PLACING_CHANGE_MARGIN: f32 = 0.12;

/// A changed line shorter than this (without whitespace) never places a segment on its own:
/// short lines are alike by chance.
pub(crate) const PLACING_CHANGE_MIN_CHARS: usize = 12;

/// Lines at a segment's edge aligned with the bounded edge alignment; the rest of a longer
/// edge is new code. The edge alignment is quadratic in this.
pub(crate) const EDGE_ALIGN_MAX: usize = 3000;

/// Interior alignments up to this many cells (snippet lines × file lines) are solved exactly
/// with weights; larger ones with Myers' diff on line keys (linear memory).
pub(crate) const INTERIOR_DP_MAX_CELLS: usize = 1 << 20;

/// Share of characters a merge may lose before it counts as truncation (with lines below).
pub(crate) const TRUNCATION_CHARS: f64 = 0.6;
/// Share of lines a merge may lose before it counts as truncation (with chars above).
pub(crate) const TRUNCATION_LINES: f64 = 0.5;
/// Share of the file's lines a snippet edit may change.
pub(crate) const BLAST_RADIUS: f64 = 0.8;
/// Files shorter than this are not held to the truncation and blast-radius guards.
pub(crate) const GUARD_MIN_LINES: usize = 10;

/// The default cap on a snippet's size: larger snippets are `FILE_TOO_LARGE` (send the whole
/// file with a full-content tool instead). The file itself is capped by the workspace.
pub(crate) const DEFAULT_MAX_SNIPPET_BYTES: usize = 2 << 20;

/// The default cap on the file a snippet is merged into.
pub(crate) const DEFAULT_MAX_FILE_BYTES: usize = 16 << 20;

/// Candidate places listed in a refusal.
pub(crate) const PLACES_LISTED: usize = 6;
