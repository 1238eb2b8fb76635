//! A file cut into search units: each definition (function, method, class, type …) with its
//! block, found by the file's grammar (tree-sitter tags) where one is built in, else by the
//! outline the lazy merge uses, and the code between definitions in chunks of at most
//! [`GAP_CHUNK`] lines. An answer's line ranges are the best units.

use crate::edit::lazy::outline::{attached_above, block_extent, declared_name};
use crate::syntax::{self, Lang};

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

/// Words that start statements, never a method signature.
const STATEMENT_WORDS: &[&str] = &[
    "if",
    "else",
    "for",
    "foreach",
    "while",
    "do",
    "switch",
    "case",
    "catch",
    "try",
    "return",
    "throw",
    "new",
    "delete",
    "using",
    "lock",
    "when",
    "synchronized",
    "await",
    "yield",
    "sizeof",
    "assert",
    "elif",
    "with",
    "match",
    "defer",
    "go",
    "select",
    "unless",
    "until",
    "typeof",
];

/// The name of a C-family method or function signature without a declaring keyword
/// (`public static int parse(String s) {`, `Foo::~Foo()`, a JS class's `render() {`): a name
/// right before the first `(`, after type words only, on a line that opens a brace (now or
/// on the next line) and ends no statement.
fn signature_name<'a>(line: &'a str, next: Option<&str>) -> Option<&'a str> {
    let t = line.trim();
    let open = t.find('(')?;
    let (head, rest) = (&t[..open], &t[open..]);
    let opens = t.ends_with('{') || (t.ends_with(')') && next.is_some_and(|n| n.trim() == "{"));
    if !opens
        || t.ends_with(';')
        || rest.contains(['"', '\'', '`'])
        || rest.contains("=>")
        || rest.contains("function")
        || head.contains(['=', '.', '"', '\'', ',', '!', '?'])
        || head.trim().is_empty()
    {
        return None;
    }
    let words: Vec<&str> = head.split_whitespace().collect();
    let first = words.first()?.trim_start_matches('@');
    if STATEMENT_WORDS.contains(&first) {
        return None;
    }
    let last = words.last()?;
    let name = last
        .rsplit("::")
        .next()?
        .trim_start_matches(['*', '&', '~']);
    let is_name = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
        && !name.chars().next().is_some_and(|c| c.is_ascii_digit());
    let keyword = STATEMENT_WORDS.contains(&name)
        || matches!(
            name,
            "pub" | "public" | "private" | "protected" | "static" | "fn" | "def"
        );
    (is_name && !keyword).then_some(name)
}

/// The name a line defines, when it opens a definition worth a unit: local `let`, `var` and
/// `const` inside a block are not. `next` is the following line (for a brace on its own).
pub(crate) fn definition<'a>(line: &'a str, next: Option<&str>) -> Option<&'a str> {
    if is_comment(line) {
        return None;
    }
    // Rust's `pub(crate) fn`: the visibility's parentheses hide the keyword.
    let trimmed = line.trim_start();
    let line = match trimmed.strip_prefix("pub(").and_then(|r| r.split_once(')')) {
        Some((_, rest)) => rest,
        None => line,
    };
    let Some(mut name) = declared_name(line) else {
        return signature_name(line, next);
    };
    // Ruby's `def self.name`: the name is after the receiver.
    if name == "self"
        && let Some(after) = line.split_once("self.").map(|(_, a)| a)
    {
        let end = after
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(after.len());
        if end > 0 {
            name = &after[..end];
        }
    }
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

/// The units of the file at `path`, whose text is `text` and lines `lines`, in line order (a
/// class's unit comes before its methods'). Lines in no definition, and a container's own
/// lines (a class's attributes), come in chunks of at most [`GAP_CHUNK`] lines that never
/// cross a definition's edge.
pub(crate) fn units(path: &str, text: &str, lines: &[&str]) -> Vec<Unit> {
    let defs = tagged(path, text, lines).unwrap_or_else(|| read_defs(lines));
    with_gaps(lines, shallow(defs))
}

/// Definitions nested deeper than this are not units of their own (their lines count in
/// their container's): each line is then in at most this many units, so the index grows
/// linearly with the file however deep its definitions nest (module, class, method and a
/// local function are four).
pub(crate) const MAX_UNIT_DEPTH: usize = 4;

/// The definitions at most [`MAX_UNIT_DEPTH`] deep, in order of start (wider first).
fn shallow(mut defs: Vec<Unit>) -> Vec<Unit> {
    defs.sort_by_key(|u| (u.start, std::cmp::Reverse(u.end)));
    let mut open: Vec<usize> = Vec::new();
    defs.retain(|u| {
        while open.last().is_some_and(|&end| end <= u.start) {
            open.pop();
        }
        if open.len() >= MAX_UNIT_DEPTH {
            return false;
        }
        open.push(u.end);
        true
    });
    defs
}

/// The definitions the file's grammar finds (its tags), each from the comments and
/// decorators attached above it; `None` when there is no grammar with tags for it or the
/// text was not parsed. Keys of data files (JSON, YAML, TOML) are no units.
fn tagged(path: &str, text: &str, lines: &[&str]) -> Option<Vec<Unit>> {
    let lang = Lang::of_text(path, text)?;
    let defs = syntax::defs::defs_once(lang, text)?;
    Some(
        defs.into_iter()
            .filter(|d| d.kind != "key" && d.header < lines.len())
            .map(|d| Unit {
                start: comments_above(lines, attached_above(lines, d.header)),
                end: d.extent.1.clamp(d.header + 1, lines.len()),
                name: Some(d.name),
            })
            .collect(),
    )
}

/// The definitions the hand outline reads in the lines (for languages with no grammar).
fn read_defs(lines: &[&str]) -> Vec<Unit> {
    let mut defs = Vec::new();
    // The ends of the definitions open at each line: one nested deeper than a unit may be is
    // not measured at all (measuring each of n nested blocks would take n² steps).
    let mut open: Vec<usize> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(name) = definition(line, lines.get(i + 1).copied()) else {
            continue;
        };
        while open.last().is_some_and(|&end| end <= i) {
            open.pop();
        }
        if open.len() >= MAX_UNIT_DEPTH {
            continue;
        }
        let (start, end) = block_extent(lines, i);
        open.push(end.max(i + 1));
        defs.push(Unit {
            start: comments_above(lines, start.min(i)),
            end: end.max(i + 1),
            name: Some(name.to_string()),
        });
    }
    defs
}

/// The definitions `defs` with the code around them in chunks, in line order.
fn with_gaps(lines: &[&str], mut defs: Vec<Unit>) -> Vec<Unit> {
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
    fn c_family_signatures_without_a_keyword_are_definitions() {
        let yes = [
            (
                "    public static int parseInt(String s) throws Bad {",
                "parseInt",
            ),
            ("    private List<String> names() {", "names"),
            ("Foo::~Foo()", "Foo"),
            ("static void *worker(void *arg) {", "worker"),
            ("  async render(props) {", "render"),
            ("    public override string ToString()", "ToString"),
        ];
        for (line, name) in yes {
            assert_eq!(definition(line, Some("{")), Some(name), "{line}");
        }
        let no = [
            "    if (x) {",
            "    } else if (y) {",
            "    foo(bar);",
            "    obj.call(x) {",
            "describe('parser', () => {",
            "    return compute(x) {",
            "    x = make(y) {",
            "    for (int i = 0; i < n; i++) {",
        ];
        for line in no {
            assert_eq!(definition(line, Some("{")), None, "{line}");
        }
        assert_eq!(definition("    int size()", Some("    return 1;")), None);
        assert_eq!(definition("  def self.parse(text)", None), Some("parse"));
        assert_eq!(
            definition(
                "    pub(crate) fn units(lines: &[&str]) -> Vec<Unit> {",
                None
            ),
            Some("units")
        );
    }

    /// Check each unit of `text` as (start, end, name).
    fn assert_spans(text: &str, expected: &[(usize, usize, Option<&str>)]) {
        let lines: Vec<&str> = text.lines().collect();
        let all = with_gaps(&lines, read_defs(&lines));
        let got: Vec<(usize, usize, Option<&str>)> = all
            .iter()
            .map(|u| (u.start, u.end, u.name.as_deref()))
            .collect();
        assert_eq!(got, expected);
    }

    #[test]
    fn python_methods_are_units_inside_their_class() {
        let text = "import os\n\nclass App:\n    x = 1\n\n    def run(self):\n        let = 2\n        return let\n\n    @property\n    def name(self):\n        return 'a'\n\nVALUE = 3\n";
        assert_spans(
            text,
            &[
                (0, 2, None),
                (2, 12, Some("App")),
                (2, 5, None),
                (5, 8, Some("run")),
                (9, 12, Some("name")),
                (12, 14, None),
            ],
        );
    }

    #[test]
    fn go_functions_end_at_their_brace_and_locals_are_no_units() {
        let text = "package gin\n\n// Next runs the chain.\nfunc (c *Context) Next() {\n\tvar i = 0\n\tc.index++\n}\n\nconst abortIndex = 63\n";
        assert_spans(
            text,
            &[
                (0, 2, None),
                (2, 7, Some("Next")),
                (8, 9, Some("abortIndex")),
            ],
        );
    }

    /// A file of `depth` definitions each nested in the one before.
    fn nested(depth: usize, keyword: &str) -> String {
        let mut text = String::new();
        for i in 0..depth {
            text.push_str(&format!("{}{keyword} f{i}() {{\n", " ".repeat(i % 64)));
        }
        for i in (0..depth).rev() {
            text.push_str(&format!("{}}}\n", " ".repeat(i % 64)));
        }
        text
    }

    #[test]
    fn deeply_nested_definitions_keep_the_units_linear_in_the_file() {
        for (path, keyword) in [
            ("deep.rs", "fn"),
            ("deep.js", "function"),
            ("deep.zz", "function"),
        ] {
            let text = nested(3000, keyword);
            let lines: Vec<&str> = text.lines().collect();
            let got = units(path, &text, &lines);
            let covered: usize = got.iter().map(|u| u.end - u.start).sum();
            assert!(
                covered <= (MAX_UNIT_DEPTH + 1) * lines.len(),
                "{path}: units cover {covered} lines of a {}-line file",
                lines.len()
            );
            // The outer definitions are still units, whole.
            assert_eq!(got[0].name.as_deref(), Some("f0"), "{path}");
            assert_eq!((got[0].start, got[0].end), (0, lines.len()), "{path}");
        }
    }

    #[test]
    fn a_file_with_a_grammar_is_cut_by_its_definitions() {
        // The string's lines are less indented than the body: the indentation would end
        // `usage` there, the grammar at its `return`.
        let text = "import sys\n\n# Prints the usage.\n@cli\ndef usage():\n    text = \"\"\"\nUsage: tool\n\"\"\"\n    return text\n\n\ndef other():\n    return 1\n";
        let lines: Vec<&str> = text.lines().collect();
        let got: Vec<(usize, usize, Option<String>)> = units("tool.py", text, &lines)
            .into_iter()
            .map(|u| (u.start, u.end, u.name))
            .collect();
        assert_eq!(
            got,
            [
                (0, 2, None),
                (2, 9, Some("usage".into())),
                (11, 13, Some("other".into())),
            ]
        );
        // With no grammar, the line outline cuts it.
        let by_lines = units("tool.unknown", text, &lines);
        assert_ne!(by_lines, units("tool.py", text, &lines));
    }
}
