//! Stage 4d, doubles: new code that defines a name its scope already has, beside the old
//! definition the snippet does not show, leaves two — the old one was meant to be replaced
//! (shown too little to place it there) or the new one misplaced. Either way the merge asks,
//! unless the snippet shows both.

use std::collections::HashSet;

use super::align::{Edit, Op};
use super::costs::MOST_LOOKED_UP;
use super::index::FileIndex;
use super::prepare::SLine;
use super::units;
use crate::error::{Error, ErrorCode, Result};
use crate::syntax::defs::Def;

/// No new definition in `edits` doubles one its scope has that the snippet does not show.
pub(crate) fn check(file: &FileIndex<'_>, lines: &[SLine], edits: &[Edit]) -> Result<()> {
    let fresh = new_headers(lines, edits);
    if fresh.is_empty() {
        return Ok(());
    }
    // The file's definitions cost a parse: only when one of the names is in the file (one
    // pass over it, whatever the number of names).
    let names: HashSet<&str> = fresh.iter().map(|&(_, name, _)| name).collect();
    let held: HashSet<&str> = file
        .lines
        .iter()
        .flat_map(|l| units::identifiers(l))
        .filter(|w| names.contains(w))
        .collect();
    if held.is_empty() {
        return Ok(());
    }
    let Some(tags) = file.tags() else {
        return Ok(());
    };
    let shown: HashSet<usize> = edits
        .iter()
        .flat_map(|e| &e.ops)
        .filter_map(|op| match *op {
            Op::Same { j, .. } | Op::Change { j, .. } | Op::Drop(j) => Some(j),
            _ => None,
        })
        .collect();
    let looked_up = fresh.iter().filter(|(_, name, _)| held.contains(name));
    for &(i, name, at) in looked_up.take(MOST_LOOKED_UP) {
        let scope = innermost(&tags.defs, at);
        let new = &lines[i].text;
        if let Some(old) = tags.defs.iter().find(|d| {
            d.name == name
                && units::BODY_KINDS.contains(&d.kind)
                && !shown.contains(&d.name_line)
                && innermost(&tags.defs, Some(d.header)) == scope
                && before(new, name) == before(file.lines[d.name_line], name)
        }) {
            return Err(double(lines, i, file, old));
        }
    }
    Ok(())
}

/// The new lines of `edits` that define a name: the snippet line, the name, and the file
/// line they follow.
fn new_headers<'l>(lines: &'l [SLine], edits: &[Edit]) -> Vec<(usize, &'l str, Option<usize>)> {
    let mut out = Vec::new();
    for e in edits {
        let mut at = e.span.start.checked_sub(1);
        for op in &e.ops {
            match *op {
                Op::Same { j, .. } | Op::Change { j, .. } | Op::Drop(j) | Op::Keep(j) => {
                    at = Some(j);
                }
                Op::Add(i) => {
                    if let Some(name) = units::header_name(&lines[i].text) {
                        out.push((i, name, at));
                    }
                }
                Op::Sep => {}
            }
        }
    }
    out
}

/// The words of `line` before `name`: a definition's kind and owner (`def`, `pub fn`,
/// `func (c *Command)`): the same name under another owner is another definition.
fn before<'a>(line: &'a str, name: &str) -> Vec<&'a str> {
    units::identifiers(line)
        .take_while(|&w| w != name)
        .collect()
}

/// The innermost definition holding the place after file line `at` (the header line of a
/// definition is outside its own scope).
fn innermost(defs: &[Def], at: Option<usize>) -> Option<usize> {
    let at = at?;
    defs.iter()
        .enumerate()
        .filter(|(_, d)| d.header < at && at + 1 < d.extent.1)
        .min_by_key(|(_, d)| d.extent.1 - d.extent.0)
        .map(|(k, _)| k)
}

fn double(lines: &[SLine], i: usize, file: &FileIndex<'_>, old: &Def) -> Error {
    Error::new(
        ErrorCode::NeedsMoreContext,
        format!(
            "snippet line {} `{}` defines `{}` again beside file line {} `{}`, which the \
             snippet does not show: should it replace that one, or is it misplaced? To replace \
             it, show its header (and its last line); to keep both, show the old one too",
            lines[i].at,
            lines[i].text.trim(),
            old.name,
            old.name_line + 1,
            file.lines[old.name_line].trim()
        ),
    )
}
