//! Rule `doubled-definition` (check): a merge that leaves one definition twice in one scope —
//! the same header (`static void flush(Scanner *s) {`, `impl Error for ParseError`) under the
//! same parent line — where neither the file nor the snippet has it twice, wrote the snippet's
//! definition beside the file's instead of in its place: a moved function written at its new
//! place and kept at its old one, a block shortened to one line (`impl Error for E {}`) added
//! beside its old body. Legal text to a syntax check, a compile error or a silent shadow to
//! the program; the merge asks. Overloads differ in their parameters, and methods of one name
//! in two classes have two parents, so neither counts; a header that spans several lines
//! (its parameters unclosed) names too little to count.

use std::collections::HashMap;

use crate::edit::lazy::index::FileIndex;
use crate::edit::lazy::prepare::SLine;
use crate::edit::lazy::units;
use crate::error::{Error, ErrorCode, Result};

/// Refuse `out`, the merge's result, when it holds a definition twice in one scope that the
/// file and the snippet (`lines`) each hold at most once there.
pub(crate) fn check<S: AsRef<str>>(file: &FileIndex<'_>, lines: &[SLine], out: &[S]) -> Result<()> {
    let mut shown: HashMap<&str, usize> = HashMap::new();
    for l in lines.iter().filter(|l| !l.blank) {
        if let Some(key) = units::definition_key(&l.text) {
            *shown.entry(key).or_default() += 1;
        }
    }
    if shown.is_empty() {
        return Ok(());
    }
    let before = scoped(file.lines.iter().copied(), &shown);
    let after = scoped(out.iter().map(AsRef::as_ref), &shown);
    let had = |scope: &(String, &str)| before.get(scope).map_or(0, Vec::len);
    let Some((scope, at)) = after
        .iter()
        .find(|(scope, at)| at.len() > shown[scope.1] && at.len() > had(scope))
    else {
        return Ok(());
    };
    let key = scope.1;
    Err(Error::new(
        ErrorCode::NeedsMoreContext,
        format!(
            "this reading would leave `{key}` defined {} times in one scope (result lines {}), \
             where the file has it {} there and the snippet shows it {}: the snippet's definition \
             was written beside the file's, not in its place. If it moves or replaces the old \
             one, show the old one's lines as `-` lines (or say `remove NAME`); else show 1-3 \
             unchanged lines around the intended place",
            at.len(),
            listed(at),
            times(had(scope)),
            times(shown[key]),
        ),
    ))
}

/// Each definition header of `text` whose key the snippet shows, by (its scope — the lines
/// above it that it stands under, each indented less than the one after it, trimmed and
/// joined; empty at the top — and its key), with the 1-based lines it stands at.
fn scoped<'a>(
    text: impl Iterator<Item = &'a str>,
    shown: &HashMap<&str, usize>,
) -> HashMap<(String, &'a str), Vec<usize>> {
    let mut out: HashMap<(String, &str), Vec<usize>> = HashMap::new();
    // The lines a later line may stand under: indentation strictly growing.
    let mut open: Vec<(usize, &str)> = Vec::new();
    for (n, line) in text.enumerate() {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        let indent = width(line);
        while open.last().is_some_and(|&(w, _)| w >= indent) {
            open.pop();
        }
        if let Some(key) = units::definition_key(line).filter(|k| shown.contains_key(k)) {
            let path: Vec<&str> = open.iter().map(|&(_, p)| p).collect();
            out.entry((path.join("\n"), key)).or_default().push(n + 1);
        }
        open.push((indent, t));
    }
    out
}

/// A line's indentation, a tab counting as four spaces.
fn width(line: &str) -> usize {
    line.chars()
        .take_while(|c| c.is_whitespace())
        .map(|c| if c == '\t' { 4 } else { 1 })
        .sum()
}

fn listed(at: &[usize]) -> String {
    at.iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

fn times(n: usize) -> String {
    match n {
        0 => "nowhere".to_string(),
        1 => "once".to_string(),
        n => format!("{n} times"),
    }
}
