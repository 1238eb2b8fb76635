//! Reading a lazy snippet: the outer code fence, placeholder lines in any comment syntax
//! (`// ... existing code ...`, `# ...`, `/* ... */`, `<!-- ... -->`, `-- ...`, bare
//! `... rest of code ...`), and `remove NAME` directives.

use super::align::FileIndex;

/// One line of a snippet, classified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    /// A line of code (new, changed or an anchor copied from the file).
    Code(String),
    /// An elided stretch of the file. `implicit` ones were added at an edge of the snippet.
    Placeholder {
        /// Added by the engine, not written by the agent.
        implicit: bool,
        /// The placeholder line's indentation in columns (tabs count 4); 0 when implicit.
        indent: usize,
    },
    /// `// remove NAME`: delete the named definition; elides like a placeholder otherwise.
    Remove(String),
}

impl Item {
    /// Whether this item elides file lines.
    pub fn elides(&self) -> bool {
        !matches!(self, Item::Code(_))
    }

    /// The code line's text; empty for placeholders and directives.
    pub fn text(&self) -> &str {
        match self {
            Item::Code(c) => c,
            _ => "",
        }
    }
}

/// A parsed snippet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snippet {
    /// The items, with implicit placeholders at edges the agent left open.
    pub items: Vec<Item>,
    /// Whether the agent wrote a placeholder at the start.
    pub explicit_start: bool,
    /// Whether the agent wrote a placeholder at the end.
    pub explicit_end: bool,
}

impl Snippet {
    /// The code lines.
    pub fn code_lines(&self) -> impl Iterator<Item = &str> {
        self.items.iter().filter_map(|i| match i {
            Item::Code(s) => Some(s.as_str()),
            _ => None,
        })
    }

    /// The names of `remove` directives.
    pub fn removals(&self) -> impl Iterator<Item = &str> {
        self.items.iter().filter_map(|i| match i {
            Item::Remove(s) => Some(s.as_str()),
            _ => None,
        })
    }

    /// Whether the snippet has any placeholder the agent wrote.
    pub fn has_explicit_placeholder(&self) -> bool {
        self.items.iter().any(|i| {
            matches!(
                i,
                Item::Placeholder {
                    implicit: false,
                    ..
                } | Item::Remove(_)
            )
        })
    }
}

/// Markdown targets keep fenced code verbatim.
pub fn is_markdown(ext: Option<&str>) -> bool {
    matches!(
        ext.map(str::to_ascii_lowercase).as_deref(),
        Some("md" | "mdx" | "markdown")
    )
}

/// Strip one outer code fence (```lang … ```) around the whole snippet.
pub fn strip_fence(snippet: &str) -> &str {
    let trimmed = snippet.trim_matches(|c| c == '\n' || c == ' ' || c == '\t');
    let Some(first_nl) = trimmed.find('\n') else {
        return snippet;
    };
    let first = trimmed[..first_nl].trim();
    let Some(last_nl) = trimmed.rfind('\n') else {
        return snippet;
    };
    let last = trimmed[last_nl + 1..].trim();
    let fence = first.chars().take_while(|&c| c == '`' || c == '~').count();
    if fence >= 3
        && first[..fence]
            .chars()
            .all(|c| c == first.as_bytes()[0] as char)
        && last.len() >= fence
        && last.chars().all(|c| c == first.as_bytes()[0] as char)
        && first[fence..]
            .chars()
            .all(|c| !c.is_whitespace() || c == ' ')
        && last_nl > first_nl
    {
        return &trimmed[first_nl + 1..last_nl + 1];
    }
    snippet
}

/// The comment body of a whole-line comment in any common syntax, or the line itself when it
/// is not a comment. The bool says whether a comment marker was removed.
fn comment_body(line: &str) -> (&str, bool) {
    let t = line.trim();
    let t = t
        .strip_prefix('{')
        .and_then(|s| s.strip_suffix('}'))
        .filter(|s| s.trim_start().starts_with("/*"))
        .map(str::trim)
        .unwrap_or(t);
    for (open, close) in [("/*", "*/"), ("<!--", "-->"), ("(*", "*)"), ("{-", "-}")] {
        if let Some(inner) = t.strip_prefix(open) {
            let inner = inner.strip_suffix(close).unwrap_or(inner);
            return (inner.trim(), true);
        }
    }
    for prefix in ["//", "#", "--", ";;", ";", "%", "'", "REM "] {
        if let Some(inner) = t.strip_prefix(prefix) {
            return (inner.trim(), true);
        }
    }
    (t, false)
}

fn has_ellipsis(s: &str) -> bool {
    s.contains("...") || s.contains('…')
}

const PLACEHOLDER_WORDS: &[&str] = &[
    "existing",
    "rest",
    "remaining",
    "unchanged",
    "omitted",
    "other",
    "others",
    "previous",
    "same",
    "keep",
    "kept",
    "more",
    "etc",
    "code",
    "here",
    "lines",
    "implementation",
    "imports",
    "methods",
    "functions",
    "fields",
    "body",
    "content",
    "contents",
    "stuff",
    "original",
    "above",
    "below",
    "before",
    "after",
    "truncated",
    "elided",
    "skipped",
];

fn words(s: &str) -> Vec<String> {
    s.split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
        .collect()
}

/// Whether `line` is a placeholder. `in_file` says whether the same line (ignoring
/// whitespace) is in the file, in which case only an unmistakable placeholder counts.
pub fn is_placeholder(line: &str, in_file: bool) -> bool {
    let (body, commented) = comment_body(line);
    // Code that is neither a comment nor holds an ellipsis is never a placeholder (the common
    // case, decided before any words are collected).
    if !commented && !has_ellipsis(body) {
        return false;
    }
    let ws = words(body);
    let bare_ellipsis = ws.is_empty() && has_ellipsis(body);
    if bare_ellipsis {
        // `...` alone is code in Python (Ellipsis) when the file has such lines.
        return commented || !in_file;
    }
    let strong = strong_phrase(&ws);
    if in_file && !(strong && has_ellipsis(body)) {
        return false;
    }
    if ws.len() > 8 {
        return false;
    }
    if has_ellipsis(body) {
        let starts_or_ends = {
            let b = body.trim();
            b.starts_with("...") || b.starts_with('…') || b.ends_with("...") || b.ends_with('…')
        };
        return starts_or_ends && ws.iter().any(|w| PLACEHOLDER_WORDS.contains(&w.as_str()));
    }
    commented && strong
}

/// Phrases that mean "unchanged code goes here" even without an ellipsis.
fn strong_phrase(ws: &[String]) -> bool {
    let joined = ws.join(" ");
    [
        "existing code",
        "rest of code",
        "rest of the code",
        "rest of file",
        "rest of the file",
        "rest of the function",
        "rest of the method",
        "rest of the class",
        "remains the same",
        "remains unchanged",
        "stays the same",
        "unchanged code",
        "code unchanged",
        "keep existing",
        "previous code",
        "other code",
        "other methods",
        "other functions",
    ]
    .iter()
    .any(|p| joined.contains(p))
}

/// A looser test for text that looks like a placeholder, for the leakage guard.
pub fn looks_like_marker(line: &str) -> bool {
    let (body, commented) = comment_body(line);
    // Code that is neither a comment nor holds an ellipsis is never a placeholder (the common
    // case, decided before any words are collected).
    if !commented && !has_ellipsis(body) {
        return false;
    }
    let ws = words(body);
    if ws.is_empty() {
        return commented && has_ellipsis(body);
    }
    strong_phrase(&ws) || (has_ellipsis(body) && is_placeholder(line, false))
}

/// `remove NAME` → `NAME` (an identifier), when the line is such a directive.
pub fn remove_directive(line: &str) -> Option<String> {
    let (body, commented) = comment_body(line);
    if !commented {
        return None;
    }
    let lower = body.to_ascii_lowercase();
    let rest = lower.strip_prefix("remove ")?;
    let offset = body.len() - rest.len();
    let original = &body[offset..];
    let cleaned: Vec<&str> = original
        .split(|c: char| c.is_whitespace() || matches!(c, '`' | '"' | '\'' | '(' | ')' | ':' | '.'))
        .filter(|w| !w.is_empty())
        .filter(|w| {
            !matches!(
                w.to_ascii_lowercase().as_str(),
                "the"
                    | "function"
                    | "method"
                    | "class"
                    | "block"
                    | "def"
                    | "fn"
                    | "func"
                    | "struct"
                    | "definition"
                    | "entire"
                    | "whole"
                    | "this"
                    | "field"
                    | "property"
                    | "const"
                    | "constant"
                    | "variable"
                    | "type"
                    | "interface"
                    | "enum"
            )
        })
        .collect();
    if cleaned.len() != 1 || original.split_whitespace().count() > 5 {
        return None;
    }
    let name = cleaned[0];
    name.chars()
        .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
        .then(|| name.to_string())
}

pub use super::super::matching::line_key as key;

/// Indentation width in columns, tabs counting 4 (as the alignment measures it).
pub fn indent_columns(line: &str) -> usize {
    line.chars()
        .take_while(|c| c.is_whitespace())
        .map(|c| if c == '\t' { 4 } else { 1 })
        .sum()
}

/// Parse a snippet against the file whose keys are `file_keys`.
pub fn parse(snippet: &str, file_keys: &FileIndex) -> Snippet {
    let mut items: Vec<Item> = Vec::new();
    for line in snippet.split('\n') {
        let in_file = file_keys.contains(&key(line));
        if !in_file && let Some(name) = remove_directive(line) {
            items.push(Item::Remove(name));
        } else if !line.trim().is_empty() && is_placeholder(line, in_file) {
            // Consecutive placeholders are one.
            if !matches!(items.last(), Some(Item::Placeholder { .. })) {
                items.push(Item::Placeholder {
                    implicit: false,
                    indent: indent_columns(line),
                });
            }
        } else {
            items.push(Item::Code(line.to_string()));
        }
    }
    // Blank lines at the snippet's ends carry no meaning.
    while matches!(items.last(), Some(Item::Code(s)) if s.trim().is_empty()) {
        items.pop();
    }
    let lead = items
        .iter()
        .take_while(|i| matches!(i, Item::Code(s) if s.trim().is_empty()))
        .count();
    items.drain(..lead);
    let explicit_start = items.first().is_some_and(Item::elides);
    let explicit_end = items.last().is_some_and(Item::elides);
    if !explicit_start {
        items.insert(
            0,
            Item::Placeholder {
                implicit: true,
                indent: 0,
            },
        );
    }
    if !explicit_end {
        items.push(Item::Placeholder {
            implicit: true,
            indent: 0,
        });
    }
    Snippet {
        items,
        explicit_start,
        explicit_end,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_in_every_comment_syntax() {
        for line in [
            "// ... existing code ...",
            "    # ... rest of code ...",
            "/* ... */",
            "<!-- ... -->",
            "-- ...",
            "// ...",
            "# ... keep existing code ...",
            "{/* ... existing code ... */}",
            "... rest of code ...",
            "// ...existing code...",
            "// rest of the code remains the same",
        ] {
            assert!(is_placeholder(line, false), "{line}");
        }
    }

    #[test]
    fn real_comments_and_code_are_not_placeholders() {
        for line in [
            "// Loading the config, then the cache",
            "x = a ... b",
            "# wait for it...",
            "console.log('...')",
            "// TODO: handle errors",
        ] {
            assert!(!is_placeholder(line, false), "{line}");
        }
        // A bare `...` that the file itself has is Python's Ellipsis.
        assert!(!is_placeholder("    ...", true));
        assert!(is_placeholder("    ...", false));
    }

    #[test]
    fn remove_directives_name_one_identifier() {
        assert_eq!(remove_directive("# remove helper"), Some("helper".into()));
        assert_eq!(
            remove_directive("// remove function `parseArgs`"),
            Some("parseArgs".into())
        );
        assert_eq!(
            remove_directive("// remove the old cache and the lock"),
            None
        );
        assert_eq!(remove_directive("remove helper"), None);
    }

    #[test]
    fn outer_fence_is_stripped() {
        assert_eq!(strip_fence("```python\nx = 1\n```\n"), "x = 1\n");
        assert_eq!(strip_fence("x = 1\n"), "x = 1\n");
    }

    #[test]
    fn implicit_placeholders_close_open_edges() {
        let s = parse("a\n// ...\nb\n", &FileIndex::new(&[]));
        assert!(!s.explicit_start && !s.explicit_end);
        assert_eq!(s.items.len(), 5);
        let s = parse("\n// ...\nb\n// ...\n\n", &FileIndex::new(&[]));
        assert!(s.explicit_start && s.explicit_end);
        assert_eq!(s.items.len(), 3);
    }
}
