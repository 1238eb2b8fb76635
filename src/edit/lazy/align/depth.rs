//! Stage 4c, placeholder depth: a placeholder written inside a body (indented) stands for
//! the rest of that body. New code after such a placeholder at the snippet's end, when the
//! body it is inside ends before the file does, has two readings: the end of that body, or
//! the end of the file (another body); the merge asks.

use crate::edit::lazy::index::FileIndex;
use crate::edit::lazy::prepare::SLine;
use crate::edit::lazy::segments::Segment;
use crate::edit::lazy::units;
use crate::error::{Error, ErrorCode, Result};

/// Refuses new code that ends the snippet after a placeholder indented inside the body of
/// the definition whose header ends the segment before it, when that body ends before the
/// file does: "the rest of the body, then this" reads as the end of that body, while the
/// snippet's open end reads as the end of the file, which lies in another body or past a
/// closing line. Called when the code would go at the file's end.
pub(crate) fn check_body_at_file_end(
    file: &FileIndex<'_>,
    lines: &[SLine],
    segs: &[Segment],
    k: usize,
) -> Result<()> {
    let Some(g) = segs[k].gap_before.filter(|&g| g > 0) else {
        return Ok(());
    };
    let Some(h) = k
        .checked_sub(1)
        .and_then(|p| segs[p].lines.clone().rev().find(|&i| !lines[i].blank))
    else {
        return Ok(());
    };
    let header = &lines[h];
    let Some(name) = definition(&header.text).filter(|_| header.indent < g) else {
        return Ok(());
    };
    // The header's one line in the file, and the first line after it no deeper than it.
    let mut found = (0..file.len()).filter(|&j| file.key(j) == header.key);
    let (Some(j), None) = (found.next(), found.next()) else {
        return Ok(());
    };
    let Some(after) =
        (j + 1..file.len()).find(|&x| !file.is_blank(x) && file.indent(x) <= file.indent(j))
    else {
        return Ok(());
    };
    Err(Error::new(
        ErrorCode::NeedsMoreContext,
        format!(
            "the placeholder after `{name}` (file line {}) is indented {g} columns, inside its \
             body, but the snippet ends there: the new code after it could go at the end of \
             that body (before file line {}) or at the end of the file, outside it; to add to \
             `{name}`, show its last line before the new code; to add at the end of the file, \
             write the placeholder at column 0",
            j + 1,
            after + 1,
        ),
    ))
}

/// The name a line defines when it opens a body: `def name(...):`, `fn name() {`.
fn definition(line: &str) -> Option<&str> {
    let t = line.trim_end();
    let opens = t.ends_with(':') || t.ends_with('{') || units::depth_change(t).1;
    units::header_name(line).filter(|_| opens)
}
