//! Stage 5, render: the merged file from the segments' edits. Lines the snippet shows
//! unchanged keep the file's own bytes; new and changed lines are re-indented by the
//! segment's offset in the file's own indentation (tabs or spaces). Edits that claim the
//! same file lines are refused: two parts of the snippet would write one place.

use std::borrow::Cow;

use crate::edit::lazy::align::{Edit, Op};
use crate::edit::lazy::index::FileIndex;
use crate::edit::lazy::prepare::SLine;
use crate::edit::text::Indent;
use crate::error::{Error, ErrorCode, Result};

/// Which whitespace the snippet indents its lines with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    /// One kind only (or none): a line of the other kind than the file's is the author's
    /// habit (a model writing spaces in a file of tabs), converted to the file's.
    OneKind,
    /// Lines led by tabs and lines led by spaces alike: the author copies a layout that mixes
    /// them (C with tab-indented macros among spaces, aligned continuations), so a line it
    /// leads with tabs where the file has spaces keeps its tabs. (Spaces where the file has
    /// tabs are converted all the same: a model copying some lines with their tabs types
    /// others with spaces.)
    Mixed,
}

impl Layout {
    /// The layout of the snippet's lines.
    pub(crate) fn of(lines: &[SLine]) -> Layout {
        if mixes(lines.iter().filter(|l| !l.blank).map(|l| l.text.as_str())) {
            Layout::Mixed
        } else {
            Layout::OneKind
        }
    }
}

/// Whether some of `lines` are led by a tab and some by two spaces or more (no tab).
fn mixes<'a>(lines: impl Iterator<Item = &'a str>) -> bool {
    let (mut tab, mut spaces) = (false, false);
    for l in lines {
        let ws = lead(l);
        tab |= ws.starts_with('\t');
        spaces |= ws.len() >= 2 && !ws.contains('\t');
        if tab && spaces {
            return true;
        }
    }
    false
}

/// A line's leading whitespace.
fn lead(line: &str) -> &str {
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

/// Re-indent a snippet line by `shift` columns in the file's style; unchanged when the
/// shift is 0 and the line's whitespace is already the file's kind, or the snippet mixes
/// both kinds (`Layout::Mixed`: the line's whitespace is its author's).
pub(crate) fn reindent(text: &str, shift: i64, style: Indent, layout: Layout) -> Cow<'_, str> {
    let code = text.trim_start_matches([' ', '\t']);
    if code.is_empty() {
        // A blank line keeps its bytes unless the whole snippet moves.
        return if shift == 0 {
            Cow::Borrowed(text)
        } else {
            Cow::Borrowed("")
        };
    }
    let ws = &text[..text.len() - code.len()];
    // Whitespace of the other kind only (spaces where the file uses tabs); mixed whitespace
    // is the author's own layout.
    // Spaces where the file has tabs are a model's habit wherever they stand; tabs where it
    // has spaces are the author's own layout when the snippet writes spaces too.
    let mismatched = match style {
        Indent::Tabs => !ws.contains('\t') && ws.len() >= 2,
        Indent::Spaces(_) => !ws.contains(' ') && layout == Layout::OneKind,
    };
    if shift == 0 && !mismatched {
        return Cow::Borrowed(text);
    }
    let cols = i64::from(crate::edit::lazy::lines::indent_of(text));
    let new = (cols + shift).max(0) as usize;
    let mut out = match style {
        Indent::Tabs => {
            let mut s = "\t".repeat(new / 4);
            s.push_str(&" ".repeat(new % 4));
            s
        }
        Indent::Spaces(_) => " ".repeat(new),
    };
    out.push_str(code);
    Cow::Owned(out)
}

/// The merged lines.
pub(crate) fn render<'a>(
    file: &FileIndex<'a>,
    lines: &'a [SLine],
    mut edits: Vec<Edit>,
    style: Indent,
) -> Result<Vec<Cow<'a, str>>> {
    edits.sort_by_key(|e| (e.span.start, e.span.end));
    for w in edits.windows(2) {
        if w[0].span.end > w[1].span.start {
            return Err(overlap(&w[0], &w[1]));
        }
    }
    let mut out: Vec<Cow<'a, str>> = Vec::with_capacity(file.len() + lines.len());
    let layout = Layout::of(lines);
    let mut pos = 0;
    for e in &edits {
        out.extend(
            file.lines[pos..e.span.start]
                .iter()
                .map(|&l| Cow::Borrowed(l)),
        );
        let style = e.style.unwrap_or(style);
        for (k, op) in e.ops.iter().enumerate() {
            match *op {
                // A blank line between code lines takes the snippet's whitespace.
                Op::Same { i, .. } if lines[i].blank && between_code(&e.ops, k, lines) => {
                    out.push(Cow::Borrowed(&lines[i].text));
                }
                Op::Same { i, j } => {
                    out.push(same_line(file, lines, (i, j), e.shift, (style, layout)));
                }
                Op::Change { i, .. } | Op::Add(i) => {
                    out.push(reindent(&lines[i].text, e.shift, style, layout));
                }
                Op::Keep(j) => out.push(Cow::Borrowed(file.lines[j])),
                Op::Sep => out.push(Cow::Borrowed("")),
                Op::Drop(_) => {}
            }
        }
        pos = pos.max(e.span.end);
    }
    out.extend(file.lines[pos..].iter().map(|&l| Cow::Borrowed(l)));
    Ok(out)
}

/// Whether the blank line at `ops[k]` sits between code lines of the edit (blank lines
/// aside): the snippet shows it as it is to be, whitespace included. (A blank line at the
/// edit's edge, next to a placeholder, is a separator that keeps the file's bytes.)
fn between_code(ops: &[Op], k: usize, lines: &[SLine]) -> bool {
    let solid = |op: &&Op| match op {
        Op::Same { i, .. } | Op::Change { i, .. } | Op::Add(i) => !lines[*i].blank,
        Op::Drop(_) => false,
        Op::Keep(_) | Op::Sep => true,
    };
    ops[..k].iter().rev().any(|op| solid(&op)) && ops[k + 1..].iter().any(|op| solid(&op))
}

/// A line the snippet shows unchanged: the file's bytes, unless the snippet moved the line
/// to another depth than the segment's offset (a deliberate re-indent, as when a wrapping
/// block is removed) or respaced it.
fn same_line<'a>(
    file: &FileIndex<'a>,
    lines: &'a [SLine],
    (i, j): (usize, usize),
    shift: i64,
    (style, layout): (Indent, Layout),
) -> Cow<'a, str> {
    let l = &lines[i];
    let f = file.lines[j];
    if l.blank {
        // A blank line's whitespace is the snippet's when it has any, else the file's.
        return if l.text.is_empty() || shift != 0 {
            Cow::Borrowed(f)
        } else {
            Cow::Borrowed(&l.text)
        };
    }
    if i64::from(l.indent) + shift != i64::from(file.indent(j)) {
        return reindent(&l.text, shift, style, layout);
    }
    if layout == Layout::Mixed
        && shift == 0
        && lead(&l.text).contains('\t')
        && !lead(f).contains('\t')
    {
        // A snippet that mixes tabs and spaces copies its layout: a line it indents with tabs
        // where the file has spaces at the same depth was re-indented by the edit.
        return Cow::Owned(format!(
            "{}{}",
            lead(&l.text),
            f.trim_start_matches([' ', '\t'])
        ));
    }
    // Same indentation: the file's bytes, unless the snippet respaced the line's inside
    // (an aligned column, a dropped trailing space) — look-alike characters stay the file's.
    let (ft, st) = (
        f.trim_start_matches([' ', '\t']),
        l.text.trim_start_matches([' ', '\t']),
    );
    if ft == st || !same_but_spacing(ft, st) {
        Cow::Borrowed(f)
    } else {
        Cow::Owned(format!("{}{}", &f[..f.len() - ft.len()], st))
    }
}

/// Whether two texts differ only in whitespace.
fn same_but_spacing(a: &str, b: &str) -> bool {
    a.chars()
        .filter(|c| !c.is_whitespace())
        .eq(b.chars().filter(|c| !c.is_whitespace()))
}

fn overlap(a: &Edit, b: &Edit) -> Error {
    Error::new(
        ErrorCode::NeedsMoreContext,
        format!(
            "two parts of the snippet claim the same lines of the file ({}-{} and {}-{}); \
             separate the parts with a placeholder and give each 1-3 unchanged lines of its own",
            a.span.start + 1,
            a.span.end.max(a.span.start + 1),
            b.span.start + 1,
            b.span.end.max(b.span.start + 1)
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reindent_uses_the_files_style() {
        let one = Layout::OneKind;
        assert_eq!(reindent("  x = 1", 2, Indent::Spaces(4), one), "    x = 1");
        assert_eq!(reindent("    x()", 0, Indent::Tabs, one), "\tx()");
        assert_eq!(reindent("\tx()", 0, Indent::Tabs, one), "\tx()");
        assert_eq!(reindent("x", 8, Indent::Tabs, one), "\t\tx");
        assert_eq!(reindent("   ", 4, Indent::Spaces(2), one), "");
        assert_eq!(reindent("   ", 0, Indent::Spaces(2), one), "   ");
        assert_eq!(reindent("\tx()", 0, Indent::Spaces(4), one), "    x()");
    }

    /// A file of tabs only: a snippet copying some lines with their tabs and typing others
    /// with spaces gets the file's tabs on every line it writes, and its unchanged lines keep
    /// the file's bytes.
    #[test]
    fn a_snippet_mixing_kinds_in_a_file_of_one_kind_takes_the_files_kind() {
        let file = "package main\n\nfunc run(a int) int {\n\tb := a\n\treturn b\n}\n";
        let snippet = "func run(a int) int {\n\tb := a\n    b++\n    return b\n}\n";
        let hints = crate::edit::Hints {
            path: Some("x.go"),
            instruction: None,
        };
        let merged = crate::edit::lazy::merge(file, snippet, &hints).unwrap();
        assert_eq!(
            merged.content,
            "package main\n\nfunc run(a int) int {\n\tb := a\n\tb++\n\treturn b\n}\n"
        );
    }
}
