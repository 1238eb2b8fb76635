//! Stage 4c, placeholder depth: a placeholder written inside a body (indented) stands for
//! the rest of that body. New code after such a placeholder at the snippet's end, when the
//! body it is inside ends before the file does, has two readings: the end of that body, or
//! the end of the file (another body); the merge asks. So it does when such code would go
//! after the file's closing entry guard (`if __name__ == "__main__":`).

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

/// Refuses new code bound for the file's end when the file ends with its entry guard — a
/// top-level `if __name__ == "__main__":` (Python) or `if __FILE__ == $0` (Ruby) block that
/// runs the program: code after it is defined only once the program has run, so the
/// snippet's open end (the end of the file) and "before the guard" are two readings. Called
/// when the code would go at the file's end.
pub(crate) fn check_entry_guard_at_file_end(file: &FileIndex<'_>) -> Result<()> {
    // The file's last top-level line that is not a closer (Ruby's guard ends with `end`).
    let Some(j) = (0..file.len())
        .rev()
        .find(|&j| !file.is_blank(j) && file.indent(j) == 0 && !is_block_end(file.lines[j]))
    else {
        return Ok(());
    };
    let line = file.lines[j].trim_end();
    if !is_entry_guard(line) {
        return Ok(());
    }
    Err(Error::new(
        ErrorCode::NeedsMoreContext,
        format!(
            "the snippet ends with new code after a placeholder, which reads as the end of the \
             file, but the file ends with its entry guard `{line}` (line {}): code after it is \
             defined only after the program has run; to add it before the guard, show the \
             guard's line after the new code; to add it after, show the guard's last line \
             before it",
            j + 1
        ),
    ))
}

/// Whether a top-level line opens a block that runs the file as a program.
fn is_entry_guard(line: &str) -> bool {
    let compact: String = line.chars().filter(|c| !c.is_whitespace()).collect();
    let python = ["__name__=='__main__'", "__name__==\"__main__\""]
        .iter()
        .any(|g| compact == format!("if{g}:") || compact == format!("if({g}):"));
    let ruby = ["$0", "$PROGRAM_NAME"]
        .iter()
        .any(|g| compact == format!("if__FILE__=={g}") || compact == format!("if{g}==__FILE__"));
    python || ruby
}

/// Whether a line only ends a block (`end`, `}`).
fn is_block_end(line: &str) -> bool {
    matches!(line.trim(), "end" | "}")
}

/// The name a line defines when it opens a body: `def name(...):`, `fn name() {`.
fn definition(line: &str) -> Option<&str> {
    let t = line.trim_end();
    let opens = t.ends_with(':') || t.ends_with('{') || units::depth_change(t).1;
    units::header_name(line).filter(|_| opens)
}
