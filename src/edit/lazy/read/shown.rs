//! What a lazy snippet shows of the file, for the unseen-deletion measure
//! (docs/DESIGN.md §4, [`crate::edit::unseen`]): read as the merge reads it (fence, diff
//! column, placeholders, `remove NAME`), its `-` lines are quoted, each segment is a stretch
//! of the lines the result should hold, and its words and the instruction's are the names it
//! writes.

use crate::edit::Hints;
use crate::edit::lazy::index::FileIndex;
use crate::edit::lazy::place::Context;
use crate::edit::lazy::prepare::{self, Kind};
use crate::edit::lazy::segments::Snippet;
use crate::edit::text::split_lines;
use crate::edit::unseen::Shown;

/// What `snippet` (with `hints`) shows of `content`.
pub(crate) fn shown(content: &str, snippet: &str, hints: &Hints<'_>) -> Shown {
    let mut out = Shown::default();
    out.add_words(snippet);
    if let Some(i) = hints.instruction {
        out.add_words(i);
    }
    let body = crate::edit::lazy::body(snippet, hints);
    let (lines, _) = split_lines(content);
    let file = FileIndex::new(&lines);
    let snippet = Snippet::cut(prepare::read(&body, &file));
    for l in snippet.lines.iter().filter(|l| l.kind == Kind::Removed) {
        out.quote(&l.text);
    }
    for seg in &snippet.segments {
        out.stretch(
            snippet.lines[seg.lines.clone()]
                .iter()
                .filter(|l| l.kind != Kind::Removed)
                .map(|l| l.text.as_str()),
        );
    }
    for name in &snippet.removals {
        out.remove(name);
    }
    // Definitions the instruction removes by name ("remove the X function"), read as the merge
    // reads them (only an instruction that says so costs the reading).
    if let Some(i) = hints.instruction.filter(|i| says_remove(i)) {
        let file = file.with_source(hints.path, content);
        let ctx = Context::new(&file, &snippet);
        for name in crate::edit::lazy::hints::read(i, &file, ctx.defs()).removes {
            out.remove(&name);
        }
    }
    out
}

/// Whether an instruction has a word of removal.
fn says_remove(instruction: &str) -> bool {
    let lower = instruction.to_ascii_lowercase();
    ["remov", "delet", "drop"].iter().any(|w| lower.contains(w))
}
