//! The pure edit engines (docs/DESIGN.md §5): text in, merged text or a precise error out. Nothing here
//! touches files, the network, a runtime or a terminal.
//!
//! Every engine works on LF-normalised content (see [`text`]); the caller decodes a file with
//! [`text::Text::decode`], runs an engine on [`text::Text::content`] and encodes the result
//! with [`text::Text::encode`], which restores line endings, BOM and encoding.

pub mod blocks;
pub mod codex;
pub mod lazy;
pub(crate) mod likeness;
pub mod matching;
pub mod patchfile;
pub mod replace;
pub mod text;
pub mod udiff;
pub mod unseen;

use serde::Serialize;

pub use crate::error::{Error, ErrorCode, Result};

/// A successful merge: the new LF-normalised content and what was tolerated on the way.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct Merged {
    /// The merged content (LF line endings, no BOM).
    pub content: String,
    /// One line for each mismatch that was tolerated (whitespace, quotes, offsets, …).
    pub warnings: Vec<String>,
    /// How many edits (blocks, replacements, hunks) were applied.
    pub applied: usize,
    /// A lazy merge's margin, once its syntax stage has run ([`verify`]): how sure the reading
    /// is (docs/DESIGN.md §5.1, "sure or refuse"). Other engines place text where the edit
    /// says and have none.
    #[serde(skip)]
    pub margin: Option<lazy::Margin>,
    /// A lazy merge's evidence, before its syntax stage.
    #[serde(skip)]
    pub(crate) evidence: Option<lazy::Evidence>,
}

/// The edit formats `patchgate merge` and the tools accept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// A lazy snippet with `... existing code ...` placeholders (`fast_apply`).
    Lazy,
    /// SEARCH/REPLACE blocks (`FileWriteOrEdit`).
    Blocks,
    /// Exact replacements (`patch_file`), given as JSON.
    Replace,
    /// A unified diff (git or plain) for one file.
    Udiff,
}

impl Format {
    /// Parse a format name as the command line spells it.
    pub fn parse(name: &str) -> Option<Format> {
        match name {
            "lazy" => Some(Format::Lazy),
            "blocks" => Some(Format::Blocks),
            "replace" => Some(Format::Replace),
            "udiff" => Some(Format::Udiff),
            _ => None,
        }
    }

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Format::Lazy => "lazy",
            Format::Blocks => "blocks",
            Format::Replace => "replace",
            Format::Udiff => "udiff",
        }
    }
}

/// What an engine may know about the edit besides the text: the file's path (its extension
/// picks comment syntax and Markdown handling) and the agent's free-text instruction.
#[derive(Debug, Clone, Copy, Default)]
pub struct Hints<'a> {
    /// The target path as the agent named it.
    pub path: Option<&'a str>,
    /// A placement hint ("after imports", "in function foo", "at the end").
    pub instruction: Option<&'a str>,
}

/// Run the engine for `format` on a decoded file. `edit` is the snippet, the blocks, the
/// replace JSON or the diff.
pub fn run(format: Format, text: &text::Text, edit: &str, hints: &Hints<'_>) -> Result<Merged> {
    let merged = run_unverified(format, text, edit, hints)?;
    verify(format, text, edit, hints, merged)
}

/// [`verify`] without the lazy merge's decision: the syntax stage, which gives a lazy merge its
/// [`Merged::margin`] under `weights` (for `eval --curve`, which reads margins before any
/// threshold; [`decide`] then takes the same weights).
pub fn weigh(
    format: Format,
    text: &text::Text,
    edit: &str,
    hints: &Hints<'_>,
    merged: Merged,
    weights: &lazy::MarginWeights,
) -> Result<Merged> {
    match format {
        Format::Lazy => lazy::weigh(text.content(), edit, hints, merged, weights),
        Format::Blocks | Format::Replace | Format::Udiff => Ok(merged),
    }
}

/// The lazy merge's decision on a weighed merge under `weights`: below their threshold it is
/// refused `NEEDS_MORE_CONTEXT` (docs/DESIGN.md §5.1, "sure or refuse").
pub fn decide(merged: Merged, weights: &lazy::MarginWeights) -> Result<Merged> {
    lazy::decide(merged, weights)
}

/// [`run`] without its last stage, [`verify`] (for timing the two apart).
pub fn run_unverified(
    format: Format,
    text: &text::Text,
    edit: &str,
    hints: &Hints<'_>,
) -> Result<Merged> {
    run_unverified_with(format, text, edit, hints, lazy::RuleSet::ALL_ON)
}

/// [`run_unverified`] with the lazy merge's rules that `rules` switches on (`eval --without`;
/// the other engines have no rules).
pub fn run_unverified_with(
    format: Format,
    text: &text::Text,
    edit: &str,
    hints: &Hints<'_>,
    rules: lazy::RuleSet,
) -> Result<Merged> {
    match format {
        Format::Lazy => {
            lazy::merge_unverified_with(text.content(), &|| text.indent(), edit, hints, rules)
        }
        Format::Blocks => blocks::merge(text, edit),
        Format::Replace => replace::apply(text.content(), &replace::parse_json(edit)?),
        Format::Udiff => udiff::merge(text.content(), edit),
    }
}

/// The stage of [`run`] that parses: a lazy merge whose result breaks the file's syntax where
/// the snippet's own text does not is refused (docs/DESIGN.md §5.1 step 6); the other
/// engines place text exactly where the edit says and keep their result.
pub fn verify(
    format: Format,
    text: &text::Text,
    edit: &str,
    hints: &Hints<'_>,
    merged: Merged,
) -> Result<Merged> {
    let weights = &lazy::MARGIN;
    decide(weigh(format, text, edit, hints, merged, weights)?, weights)
}

/// What `edit` in `format` shows of the file whose content is `content` (docs/DESIGN.md §4):
/// a lazy snippet as its merge reads it; blocks, replacements and diffs quote every line they
/// hold.
pub fn shown(format: Format, content: &str, edit: &str, hints: &Hints<'_>) -> unseen::Shown {
    match format {
        Format::Lazy => lazy::shown(content, edit, hints),
        Format::Blocks | Format::Replace | Format::Udiff => unseen::Shown::quoting([edit]),
    }
}

/// The lines of `old` (0-based, ascending) that `edit` in `format` deletes in `new` without
/// showing them, and the `unseen:` warning that names them (docs/DESIGN.md §4).
pub fn unseen_deletions(
    format: Format,
    old: &str,
    new: &str,
    edit: &str,
    hints: &Hints<'_>,
) -> (Vec<usize>, Option<String>) {
    let shown = shown(format, old, edit, hints);
    let diff = crate::diff::FileDiff::compute(old, new, 0);
    let lines = unseen::lines(hints.path, old, new, &diff, &shown);
    let warning = unseen::warning(old, &lines);
    (lines, warning)
}
