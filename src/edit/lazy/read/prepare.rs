//! Stage 1, prepare: turn the snippet's text into classified lines. Strips an outer code
//! fence (not for Markdown targets) and a byte-order mark, normalises line endings, and says
//! what each line is: code, a placeholder (a gap that keeps file lines), a `remove NAME`
//! directive, or — in a snippet written like a diff — an added or removed line.
//!
//! Diff-style snippets are recognised by a `+`/`-` column: a line starting with `-` whose
//! rest is a file line (and which is not itself one) is a removal; a line starting with `+`
//! that the file does not hold is an addition. Context lines may carry the diff's space
//! column or not.

use crate::edit::lazy::costs::WEIGHTS;
use crate::edit::lazy::index::FileIndex;
use crate::edit::lazy::lines;
use crate::edit::lazy::place::depths::Depth;
use crate::edit::lazy::placeholder::{self, Narration, Presence};
use crate::edit::text::normalize_newlines;

/// What the snippet says about a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Code: unchanged context, or a new or changed line (the file decides which).
    Plain,
    /// A diff-style `+` line: new code.
    Added,
    /// A diff-style `-` line: a file line to delete.
    Removed,
}

/// One code line of the snippet.
#[derive(Debug, Clone)]
pub(crate) struct SLine {
    /// The text, without a diff prefix.
    pub(crate) text: String,
    pub(crate) kind: Kind,
    pub(crate) key: u64,
    pub(crate) indent: u32,
    pub(crate) blank: bool,
    pub(crate) trivial: bool,
    /// How many file lines have this line's key.
    pub(crate) count: usize,
    /// A comment line the file lacks that may narrate ("// and at the top of the file:").
    pub(crate) narration: Narration,
    /// The line's number in the snippet (1-based), for messages.
    pub(crate) at: usize,
    /// Its brackets, linked to the other lines' when the snippet is cut into segments.
    pub(crate) brackets: Depth,
}

impl SLine {
    fn new(text: String, kind: Kind, file: &FileIndex<'_>) -> SLine {
        let (key, indent, blank, trivial) = lines::facts(&text);
        SLine {
            key,
            kind,
            indent,
            blank,
            trivial,
            count: file.count(key),
            narration: if kind == Kind::Plain && !file.contains(key) {
                placeholder::narration(&text)
            } else {
                Narration::No
            },
            brackets: Depth::of(&text),
            text,
            at: 0,
        }
    }

    /// Whether the line may stand for a file line (context or a removal).
    pub(crate) fn is_old(&self) -> bool {
        self.kind != Kind::Added
    }
}

/// A piece of the snippet.
#[derive(Debug, Clone)]
pub(crate) enum Piece {
    Line(SLine),
    /// A placeholder: file lines kept as they are. `indent` is the placeholder's own.
    Gap {
        indent: u32,
    },
    /// `remove NAME`: delete the named definition (elides like a placeholder otherwise).
    Remove(String),
}

/// The prepared snippet.
#[derive(Debug, Clone)]
pub(crate) struct Prepared {
    pub(crate) pieces: Vec<Piece>,
    /// Whether the snippet is written like a diff.
    pub(crate) diff_style: bool,
    /// The blank lines it opens and ends with, which carry no code.
    pub(crate) blank_edges: BlankEdges,
}

/// Whether a snippet opens (ends) with a blank line: then its first (last) line was copied
/// from within the file, which goes on before (after) it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct BlankEdges {
    pub(crate) start: bool,
    pub(crate) end: bool,
}

/// What an outer code fence around a snippet is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fence {
    /// The target's content (Markdown): kept.
    Content,
    /// A wrapper around the code: removed.
    Wrapper,
}

/// How a snippet is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Style {
    Plain,
    /// Like a diff: `+`, `-` and space-prefixed lines.
    Diff,
}

/// Whether a diff-style snippet's context lines carry the diff's space column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SpaceColumn {
    Present,
    Absent,
}

/// The snippet's body: line endings normalised, a byte-order mark and an outer code fence
/// (kept for Markdown targets, whose fences are content) removed.
pub(crate) fn body(snippet: &str, fence: Fence) -> String {
    let s = normalize_newlines(snippet);
    let s = s.strip_prefix('\u{feff}').unwrap_or(&s);
    match fence {
        Fence::Content => s.to_string(),
        Fence::Wrapper => placeholder::strip_fence(s).to_string(),
    }
}

/// How a raw line reads in a diff-style snippet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DiffMark {
    None,
    Plus,
    Minus,
}

fn diff_mark(line: &str, file: &FileIndex<'_>) -> DiffMark {
    if file.contains(lines::key(line)) {
        return DiffMark::None;
    }
    if let Some(rest) = line.strip_prefix('-') {
        if !rest.trim().is_empty() && file.contains(lines::key(rest)) {
            return DiffMark::Minus;
        }
    } else if let Some(rest) = line.strip_prefix('+')
        && !rest.starts_with('+')
    {
        return DiffMark::Plus;
    }
    DiffMark::None
}

/// Whether context lines carry the diff's space column: more of them sit at the file's
/// indentation with one leading space removed than without.
fn has_space_column(raw: &[&str], file: &FileIndex<'_>) -> bool {
    let mut with = 0usize;
    let mut without = 0usize;
    for line in raw.iter().filter(|l| l.starts_with(' ')) {
        let key = lines::key(line);
        let Some(&j) = file.positions(key).first() else {
            continue;
        };
        let file_indent = file.indent(j as usize);
        if lines::indent_of(&line[1..]) == file_indent {
            with += 1;
        } else if lines::indent_of(line) == file_indent {
            without += 1;
        }
    }
    with > without
}

/// Whether a diff-style context line starting with a space carries the diff's space column:
/// when only one of the line with and without that space sits at an indentation its text
/// has in the file, that one; else what most context lines do.
fn strip_column(line: &str, column: SpaceColumn, file: &FileIndex<'_>) -> bool {
    let space_column = column == SpaceColumn::Present;
    let positions = file.positions(lines::key(line));
    if positions.is_empty() || positions.len() > WEIGHTS.column_positions_max {
        return space_column;
    }
    let at = |indent: u32| positions.iter().any(|&j| file.indent(j as usize) == indent);
    match (at(lines::indent_of(&line[1..])), at(lines::indent_of(line))) {
        (true, false) => true,
        (false, true) => false,
        _ => space_column,
    }
}

/// Classify the lines of a snippet body against the file.
pub(crate) fn read(body: &str, file: &FileIndex<'_>) -> Prepared {
    let mut raw: Vec<&str> = body.split('\n').collect();
    if raw.last() == Some(&"") {
        raw.pop();
    }
    let is_gap = |l: &str| {
        placeholder::is_hunk_header(l) || placeholder::is_placeholder(l, presence(l, file))
    };
    let marks: Vec<DiffMark> = raw
        .iter()
        .map(|l| {
            if is_gap(l) {
                DiffMark::None
            } else {
                diff_mark(l, file)
            }
        })
        .collect();
    let diff_style = marks.contains(&DiffMark::Minus)
        || marks.iter().filter(|m| **m == DiffMark::Plus).count() >= 1
            && raw.iter().any(|l| l.starts_with(' ') || l.starts_with('-'));
    let style = if diff_style {
        Style::Diff
    } else {
        Style::Plain
    };
    let column = if diff_style && has_space_column(&raw, file) {
        SpaceColumn::Present
    } else {
        SpaceColumn::Absent
    };
    let mut pieces: Vec<Piece> = Vec::with_capacity(raw.len());
    for (n, (line, mark)) in raw.iter().zip(&marks).enumerate() {
        let mut piece = classify(line, *mark, style, column, file);
        if let Piece::Line(l) = &mut piece {
            l.at = n + 1;
        }
        if matches!(piece, Piece::Gap { .. }) && matches!(pieces.last(), Some(Piece::Gap { .. })) {
            continue;
        }
        pieces.push(piece);
    }
    let blank_edges = trim_blank_ends(&mut pieces);
    Prepared {
        pieces,
        diff_style,
        blank_edges,
    }
}

/// Whether `line` (ignoring whitespace) is in the file.
fn presence(line: &str, file: &FileIndex<'_>) -> Presence {
    if file.contains(lines::key(line)) {
        Presence::InFile
    } else {
        Presence::Absent
    }
}

fn classify(
    line: &str,
    mark: DiffMark,
    style: Style,
    column: SpaceColumn,
    file: &FileIndex<'_>,
) -> Piece {
    let diff_style = style == Style::Diff;
    let in_file = presence(line, file);
    let unprefixed = if diff_style && line.starts_with([' ', '+', '-']) {
        &line[1..]
    } else {
        line
    };
    if placeholder::is_hunk_header(line)
        || placeholder::is_placeholder(line, in_file)
        || (diff_style
            && mark == DiffMark::None
            && placeholder::is_placeholder(unprefixed, in_file))
    {
        return Piece::Gap {
            indent: lines::indent_of(line),
        };
    }
    if in_file == Presence::Absent
        && let Some(name) = placeholder::remove_directive(line)
    {
        return Piece::Remove(name);
    }
    let (text, kind) = match (diff_style, mark) {
        (true, DiffMark::Plus) => (&line[1..], Kind::Added),
        (true, DiffMark::Minus) => (&line[1..], Kind::Removed),
        // A bare `-` or `+`: a removed or added blank line.
        (true, DiffMark::None) if line.trim_end() == "-" => ("", Kind::Removed),
        (true, DiffMark::None) if line.trim_end() == "+" => ("", Kind::Added),
        (true, DiffMark::None) if line.starts_with(' ') && strip_column(line, column, file) => {
            (&line[1..], Kind::Plain)
        }
        _ => (line, Kind::Plain),
    };
    Piece::Line(SLine::new(
        text.trim_end_matches('\r').to_string(),
        kind,
        file,
    ))
}

/// Blank lines at the snippet's very ends are no code: they go, and only whether there were
/// any is kept.
fn trim_blank_ends(pieces: &mut Vec<Piece>) -> BlankEdges {
    let blank = |p: &Piece| matches!(p, Piece::Line(l) if l.blank);
    let tail = pieces.iter().rev().take_while(|p| blank(p)).count();
    pieces.truncate(pieces.len() - tail);
    let lead = pieces.iter().take_while(|p| blank(p)).count();
    pieces.drain(..lead);
    BlankEdges {
        start: lead > 0,
        end: tail > 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(snippet: &str, file: &[&str]) -> (Vec<String>, bool) {
        let index = FileIndex::new(file);
        let p = read(snippet, &index);
        let out = p
            .pieces
            .iter()
            .map(|piece| match piece {
                Piece::Line(l) => format!("{:?}:{}", l.kind, l.text),
                Piece::Gap { .. } => "gap".into(),
                Piece::Remove(n) => format!("remove:{n}"),
            })
            .collect();
        (out, p.diff_style)
    }

    #[test]
    fn a_diff_style_snippet_has_added_and_removed_lines() {
        let file = ["def f():", "    x = 1", "    return x"];
        let (k, diff) = kinds(
            "# ... existing code ...\n def f():\n-    x = 1\n+    x = 2\n     return x\n",
            &file,
        );
        assert!(diff);
        assert_eq!(
            k,
            [
                "gap",
                "Plain:def f():",
                "Removed:    x = 1",
                "Added:    x = 2",
                "Plain:    return x"
            ]
        );
    }

    #[test]
    fn lua_comments_and_yaml_lists_are_not_diff_lines() {
        let file = ["-- setup", "- name: a", "x = 1"];
        let (k, diff) = kinds("-- setup\n- name: a\n- name: b\nx = 1\n", &file);
        assert!(!diff, "{k:?}");
        let (k, _) = kinds("-- ... existing code ...\nx = 1\n", &file);
        assert_eq!(k[0], "gap");
    }

    #[test]
    fn a_byte_order_mark_and_fence_are_removed() {
        assert_eq!(
            body("\u{feff}```rust\nfn a() {}\n```\n", Fence::Wrapper),
            "fn a() {}\n"
        );
        assert_eq!(
            body("```md\n# x\n```\n", Fence::Content),
            "```md\n# x\n```\n"
        );
    }
}
