//! Stage 4c, renames: a changed line that gives a definition another name makes the new
//! definition that one's rename only when nothing but the name changed — the rest of its
//! header and its whole body the old one's. A definition under a new name that differs in
//! more is as likely a new one beside the old (`reset` after `init`, where `fini` was) as
//! the old one renamed and changed; the two readings differ by the old definition's lines,
//! so the merge asks — unless the instruction names the rename. A Rust `impl` block counts
//! as a definition named by its trait and type (`impl Debug for B`): another block for
//! another trait or type in its place is held to the same rule. A merge that deletes a
//! definition's header and keeps its body, under the definition before it, asks too.

use std::collections::HashSet;

use crate::edit::lazy::align::{Edit, Op};
use crate::edit::lazy::impls;
use crate::edit::lazy::index::FileIndex;
use crate::edit::lazy::outline;
use crate::edit::lazy::prepare::SLine;
use crate::edit::lazy::units;
use crate::error::{Error, ErrorCode, Result};

/// Every change of a definition's header to another name in `edit` is a rename and nothing
/// more; `renames` (the instruction's `rename A to B`) are taken as said.
pub(crate) fn check(
    file: &FileIndex<'_>,
    lines: &[SLine],
    edit: &Edit,
    renames: &[(String, String)],
) -> Result<()> {
    for (k, op) in edit.ops.iter().enumerate() {
        let Op::Change { i, j } = *op else { continue };
        if let Some(old) = impl_renamed(&lines[i].text, file.lines[j]) {
            // An `impl` block for another trait or type in the old one's place.
            let body = j + 1..outline::block_extent(file.lines, j).1.max(j + 1);
            let renamed = Renamed { lines, file, old };
            let kept = only_the_name(&lines[i].text, file.lines[j])
                && renamed.body_kept(&edit.ops[k + 1..], body);
            if !kept && !said(renames, old) {
                return Err(block_refusal(lines, i, file, j));
            }
            continue;
        }
        // (The file's definitions cost a parse: only where the old line has a word at the
        // new one's place that the new one lacks.)
        if !lost_a_word(&lines[i].text, file.lines[j]) {
            continue;
        }
        let Some(tags) = file.tags() else {
            return Ok(());
        };
        let new = &lines[i].text;
        for def in tags
            .on_line(j)
            .filter(|d| d.name_line == j && units::BODY_KINDS.contains(&d.kind))
        {
            // The new line defines another name where the old one stood (a statement in
            // its place is no rename).
            if units::identifiers(new).any(|w| w == def.name)
                || renamed_to(new, file.lines[j], &def.name).is_none()
                || said(renames, &def.name)
            {
                continue;
            }
            let body = j + 1..def.extent.1.max(j + 1);
            let renamed = Renamed {
                lines,
                file,
                old: &def.name,
            };
            if !only_the_name(new, file.lines[j]) || !renamed.body_kept(&edit.ops[k + 1..], body) {
                return Err(refusal(lines, i, file, j, &def.name));
            }
        }
    }
    headless_bodies(file, lines, &edit.ops)
}

/// Each run of changes (the ops between two kept lines with text: a blank line kept says
/// nothing) that deletes a definition's header while the first line kept after the run is
/// that definition's, adds no header, and keeps no other line of it: the definition is gone
/// but for that one line, left under the definition before it. Most likely that line is
/// another line's new version read as this definition's (a changed last line that a later
/// definition ends with, the definitions between deleted): asked. (The old name written
/// again in the run is the header reshaped; a header of another name added there is a
/// rename or a new definition; more of the old body kept is a body folded into the one
/// above: none of them a cut.)
fn headless_bodies(file: &FileIndex<'_>, lines: &[SLine], ops: &[Op]) -> Result<()> {
    let solid = |op: &Op| matches!(*op, Op::Same { j, .. } if !file.is_blank(j));
    let mut k = 0;
    while k < ops.len() {
        let start = k;
        while k < ops.len() && !solid(&ops[k]) {
            k += 1;
        }
        let Some(&Op::Same { i: next_i, j: next }) = ops.get(k) else {
            break;
        };
        if let Some((j, old)) = headless(file, lines, &ops[start..k], &ops[k..]) {
            return Err(cut_refusal(lines, next_i, file, (j, next), old));
        }
        k += 1;
    }
    Ok(())
}

/// The header (file line and name) `run` deletes, adding no header and not writing its name
/// again, of a definition of which the edit keeps only the first line of `after` (a kept
/// line with text).
fn headless<'f>(
    file: &'f FileIndex<'_>,
    lines: &[SLine],
    run: &[Op],
    after: &[Op],
) -> Option<(usize, &'f str)> {
    let Some(&Op::Same { j: next, .. }) = after.first() else {
        return None;
    };
    let headers: Vec<(usize, &str)> = run
        .iter()
        .filter_map(|op| match *op {
            Op::Drop(j) => units::header_name(without_visibility(file.lines[j])).map(|n| (j, n)),
            _ => None,
        })
        .collect();
    if headers.is_empty() {
        return None;
    }
    let added = || {
        run.iter().filter_map(|op| match *op {
            Op::Add(i) => Some(lines[i].text.as_str()),
            _ => None,
        })
    };
    if added().any(|t| units::header_name(without_visibility(t)).is_some()) {
        return None;
    }
    // Every word the run writes, once (each header deleted is looked up in it).
    let written: HashSet<&str> = added().flat_map(units::identifiers).collect();
    let tags = file.tags()?;
    for (j, old) in headers {
        if written.contains(old) {
            continue;
        }
        let Some(end) = tags
            .on_line(j)
            .find(|d| d.name_line == j && d.name == old && j < next && next < d.extent.1)
            .map(|d| d.extent.1)
        else {
            continue;
        };
        let kept = after[1..]
            .iter()
            .take_while(|op| !matches!(op, Op::Same { j: s, .. } | Op::Drop(s) | Op::Change { j: s, .. } if *s >= end))
            .any(|op| matches!(*op, Op::Same { j: s, .. } | Op::Change { j: s, .. } if !file.is_blank(s)));
        if !kept {
            return Some((j, old));
        }
    }
    None
}

/// The refusal of a merge that deletes `old`'s header (file line `j`) and keeps its body
/// from file line `next` on, as snippet line `i`.
fn cut_refusal(
    lines: &[SLine],
    i: usize,
    file: &FileIndex<'_>,
    (j, next): (usize, usize),
    old: &str,
) -> Error {
    Error::new(
        ErrorCode::NeedsMoreContext,
        format!(
            "snippet line {} `{}` reads as file line {} of `{old}`, so the merge would delete \
             `{old}`'s header (file line {} `{}`) and keep the rest of it: is that snippet line \
             another line's new version? Show the lines around the intended place; to delete \
             `{old}` whole, show the unchanged lines right above and below it",
            lines[i].at,
            lines[i].text.trim(),
            next + 1,
            j + 1,
            file.lines[j].trim()
        ),
    )
}

/// When `new` and `old` are both `impl` headers, for another trait or type: the first word
/// of `old` where the two part.
fn impl_renamed<'a>(new: &str, old: &'a str) -> Option<&'a str> {
    let (was, now) = (impls::for_names(old)?, impls::for_names(new)?);
    if was == now {
        return None;
    }
    let mut fresh = units::identifiers(new);
    units::identifiers(old).find(|&w| fresh.next() != Some(w))
}

fn said(renames: &[(String, String)], old: &str) -> bool {
    renames.iter().any(|(o, _)| o == old)
}

/// Whether the first word where `new` and `old` part is one `new` does not have at all,
/// and `old` reads as defining it: a header by its shape, or the word called where a body
/// opens (`static void fini(void) {`).
fn lost_a_word(new: &str, old: &str) -> bool {
    let mut fresh = units::identifiers(new);
    units::identifiers(old)
        .find(|&w| fresh.next() != Some(w))
        .is_some_and(|w| {
            let opens = old.contains('{') || old.trim_end().ends_with(':');
            let called = old.contains(&format!("{w}("));
            !units::identifiers(new).any(|n| n == w)
                && (units::header_name(without_visibility(old)) == Some(w) || opens && called)
        })
}

/// A line without a leading restricted visibility (`pub(crate) fn f` → `fn f`).
fn without_visibility(line: &str) -> &str {
    let t = line.trim_start();
    match t.strip_prefix("pub(").and_then(|r| r.split_once(')')) {
        Some((_, rest)) => rest.trim_start(),
        None => t,
    }
}

/// The word `new` has where `old` has `name`, when the words before it are the same and it
/// is another.
fn renamed_to<'a>(new: &'a str, old: &str, name: &str) -> Option<&'a str> {
    let before: Vec<&str> = units::identifiers(old).take_while(|&w| w != name).collect();
    let mut fresh = units::identifiers(new);
    for w in &before {
        if fresh.next() != Some(*w) {
            return None;
        }
    }
    fresh.next().filter(|&w| w != name)
}

/// Whether two lines differ in one word only (the name), whitespace aside.
fn only_the_name(new: &str, old: &str) -> bool {
    let squeeze = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let (a, b): (Vec<&str>, Vec<&str>) = (
        units::identifiers(new).collect(),
        units::identifiers(old).collect(),
    );
    if a.len() != b.len() || a.iter().zip(&b).filter(|(x, y)| x != y).count() != 1 {
        return false;
    }
    let strip = |s: &str| {
        s.chars()
            .filter(|c| !(c.is_alphanumeric() || *c == '_' || *c == '$'))
            .collect::<String>()
    };
    strip(&squeeze(new)) == strip(&squeeze(old))
}

/// A definition's lines under a rename of `old`.
struct Renamed<'a> {
    lines: &'a [SLine],
    file: &'a FileIndex<'a>,
    old: &'a str,
}

impl Renamed<'_> {
    /// Whether `ops` go on with file lines `body` one after another, each kept or changed in
    /// the name alone (a recursive call, a constructor), nothing added or left out.
    fn body_kept(&self, ops: &[Op], body: std::ops::Range<usize>) -> bool {
        let mut want = body.start;
        for op in ops {
            if want >= body.end {
                break;
            }
            match *op {
                Op::Same { j, .. } if j == want => want += 1,
                Op::Change { i, j }
                    if j == want
                        && units::identifiers(self.file.lines[j]).any(|w| w == self.old)
                        && only_the_name(&self.lines[i].text, self.file.lines[j]) =>
                {
                    want += 1;
                }
                _ => return false,
            }
        }
        want >= body.end
    }
}

/// The refusal of an `impl` block taking the place of another one's (file line `j`).
fn block_refusal(lines: &[SLine], i: usize, file: &FileIndex<'_>, j: usize) -> Error {
    let header = crate::edit::lazy::lines::quoted(file.lines[j]);
    let old = header.trim_end_matches('{').trim_end();
    Error::new(
        ErrorCode::NeedsMoreContext,
        format!(
            "snippet line {} `{}` would take the place of `{old}` (file line {}) as its new \
             version, but more than the header's name differs: is it a new block beside \
             `{old}`, or that block rewritten for another trait or type? To add it, show \
             `{old}` unchanged next to it (or a placeholder where it stays); to replace it, \
             send its old lines as `-` lines",
            lines[i].at,
            crate::edit::lazy::lines::quoted(&lines[i].text),
            j + 1,
        ),
    )
}

fn refusal(lines: &[SLine], i: usize, file: &FileIndex<'_>, j: usize, old: &str) -> Error {
    Error::new(
        ErrorCode::NeedsMoreContext,
        format!(
            "snippet line {} `{}` would take the place of `{old}` (file line {} `{}`) as its \
             new version, but more than the name differs: is it a new definition beside \
             `{old}`, or `{old}` renamed and rewritten? To add it, show `{old}` unchanged \
             next to it (or a placeholder where it stays); to replace it, say `rename {old} \
             to NEW` in the instruction",
            lines[i].at,
            lines[i].text.trim(),
            j + 1,
            file.lines[j].trim()
        ),
    )
}
