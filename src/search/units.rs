//! A file cut into search units: each definition (function, method, class, type …) with its
//! block, found by the outline the lazy merge uses, and the code between definitions in
//! chunks of at most [`GAP_CHUNK`] lines. An answer's line ranges are the best units.

use crate::edit::lazy::outline::{block_extent, declared_name};

/// The most lines of code outside definitions one unit holds.
pub(crate) const GAP_CHUNK: usize = 40;

/// One unit: 0-based half-open line range, and the name it defines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unit {
    /// First line (0-based).
    pub start: usize,
    /// One past the last line.
    pub end: usize,
    /// The defined name, for definitions.
    pub name: Option<String>,
}

/// Whether a line starts a comment (so a word in it declares nothing).
fn is_comment(line: &str) -> bool {
    let t = line.trim_start();
    ["//", "#", "/*", "*", "--", ";", "\"\"\"", "'''"]
        .iter()
        .any(|m| t.starts_with(m))
}

/// The name a line defines, when it opens a definition worth a unit: local `let`, `var` and
/// `const` inside a block are not.
pub(crate) fn definition(line: &str) -> Option<&str> {
    if is_comment(line) {
        return None;
    }
    let name = declared_name(line)?;
    let first = line.split_whitespace().next().unwrap_or("");
    let local = matches!(first, "let" | "var" | "const" | "local");
    let indented = line.starts_with([' ', '\t']);
    (!(local && indented) && name.chars().next().is_some_and(|c| !c.is_ascii_digit()))
        .then_some(name)
}

/// The start of the line comments directly above `start` at its indentation (a Go or
/// Python comment that documents the definition).
fn comments_above(lines: &[&str], start: usize) -> usize {
    let indent = |l: &str| l.len() - l.trim_start().len();
    let mut first = start;
    while first > 0 {
        let above = lines[first - 1];
        let t = above.trim_start();
        let comment = ["//", "#", "--", ";;"].iter().any(|m| t.starts_with(m))
            && !t.starts_with("#[")
            && !t.starts_with("#!");
        if !comment || indent(above) != indent(lines[start]) {
            break;
        }
        first -= 1;
    }
    first
}

/// The innermost definition holding each line (an index into `defs`), if any.
fn owners(lines: usize, defs: &[Unit]) -> Vec<Option<usize>> {
    let mut owner: Vec<Option<usize>> = vec![None; lines];
    // Wider units first, so a nested one overwrites its container's lines.
    let mut order: Vec<usize> = (0..defs.len()).collect();
    order.sort_by_key(|&k| std::cmp::Reverse(defs[k].end - defs[k].start));
    for k in order {
        owner[defs[k].start..defs[k].end]
            .iter_mut()
            .for_each(|o| *o = Some(k));
    }
    owner
}

/// Which definitions hold another (`defs` sorted by start, wider first).
fn containers(defs: &[Unit]) -> Vec<bool> {
    (0..defs.len())
        .map(|k| defs.get(k + 1).is_some_and(|next| next.start < defs[k].end))
        .collect()
}

/// The units of a file's lines, in line order (a class's unit comes before its methods').
/// Lines in no definition, and a container's own lines (a class's attributes), come in
/// chunks of at most [`GAP_CHUNK`] lines that never cross a definition's edge.
pub(crate) fn units(lines: &[&str]) -> Vec<Unit> {
    let mut defs = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(name) = definition(line) else {
            continue;
        };
        let (start, end) = block_extent(lines, i);
        defs.push(Unit {
            start: comments_above(lines, start.min(i)),
            end: end.max(i + 1),
            name: Some(name.to_string()),
        });
    }
    defs.sort_by_key(|u| (u.start, std::cmp::Reverse(u.end)));
    let owner = owners(lines.len(), &defs);
    let container = containers(&defs);
    let in_gap = |i: usize| owner[i].is_none_or(|k| container[k]);
    let mut out = defs;
    let mut i = 0;
    while i < lines.len() {
        if !in_gap(i) {
            i += 1;
            continue;
        }
        let start = i;
        while i < lines.len() && in_gap(i) && owner[i] == owner[start] && i - start < GAP_CHUNK {
            i += 1;
        }
        if lines[start..i]
            .iter()
            .any(|l| l.chars().any(char::is_alphanumeric))
        {
            out.push(Unit {
                start,
                end: i,
                name: None,
            });
        }
    }
    out.sort_by_key(|u| (u.start, std::cmp::Reverse(u.end)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_methods_are_units_inside_their_class() {
        let text = "import os\n\nclass App:\n    x = 1\n\n    def run(self):\n        let = 2\n        return let\n\n    @property\n    def name(self):\n        return 'a'\n\nVALUE = 3\n";
        let lines: Vec<&str> = text.lines().collect();
        let all = units(&lines);
        let got: Vec<(usize, usize, Option<&str>)> = all
            .iter()
            .map(|u| (u.start, u.end, u.name.as_deref()))
            .collect();
        assert_eq!(
            got,
            [
                (0, 2, None),
                (2, 12, Some("App")),
                (2, 5, None),
                (5, 8, Some("run")),
                (9, 12, Some("name")),
                (12, 14, None),
            ]
        );
    }

    #[test]
    fn go_functions_end_at_their_brace_and_locals_are_no_units() {
        let text = "package gin\n\n// Next runs the chain.\nfunc (c *Context) Next() {\n\tvar i = 0\n\tc.index++\n}\n\nconst abortIndex = 63\n";
        let lines: Vec<&str> = text.lines().collect();
        let all = units(&lines);
        let got: Vec<(usize, usize, Option<&str>)> = all
            .iter()
            .map(|u| (u.start, u.end, u.name.as_deref()))
            .collect();
        assert_eq!(
            got,
            [
                (0, 2, None),
                (2, 7, Some("Next")),
                (8, 9, Some("abortIndex")),
            ]
        );
    }
}
