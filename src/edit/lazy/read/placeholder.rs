//! Reading the words of a snippet line: placeholders in any comment syntax (`// ... existing
//! code ...`, `# ...`, `/* ... */`, `<!-- ... -->`, `-- ...`, bare `... rest of code ...`,
//! `[...]`, `…`, "rest of file", "keep X as is"), `remove NAME` directives, narration lines
//! ("// and at the top of the file:"), the outer code fence and Markdown targets.

use crate::edit::lazy::costs::WEIGHTS;
/// Markdown targets keep fenced code verbatim.
pub(crate) fn is_markdown(ext: Option<&str>) -> bool {
    matches!(
        ext.map(str::to_ascii_lowercase).as_deref(),
        Some("md" | "mdx" | "markdown")
    )
}

/// Strip one outer code fence (```lang … ```) around the whole snippet.
pub(crate) fn strip_fence(snippet: &str) -> &str {
    let trimmed = snippet.trim_matches(|c| c == '\n' || c == ' ' || c == '\t');
    let (Some(first_nl), Some(last_nl)) = (trimmed.find('\n'), trimmed.rfind('\n')) else {
        return snippet;
    };
    let first = trimmed[..first_nl].trim();
    let last = trimmed[last_nl + 1..].trim();
    let Some(mark) = first.chars().next().filter(|c| *c == '`' || *c == '~') else {
        return snippet;
    };
    let fence = first.chars().take_while(|&c| c == mark).count();
    let info_ok = first[fence..]
        .chars()
        .all(|c| !c.is_whitespace() || c == ' ');
    if fence >= 3
        && last.len() >= fence
        && last.chars().all(|c| c == mark)
        && info_ok
        && last_nl > first_nl
    {
        return &trimmed[first_nl + 1..last_nl + 1];
    }
    snippet
}

/// The comment body of a whole-line comment in any common syntax, or the line itself when it
/// is not a comment. The bool says whether a comment marker was removed.
pub(crate) fn comment_body(line: &str) -> (&str, bool) {
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
    for prefix in ["///", "//", "#", "--", ";;", ";", "%", "'", "REM "] {
        if let Some(inner) = t.strip_prefix(prefix) {
            return (inner.trim(), true);
        }
    }
    (t, false)
}

fn has_ellipsis(s: &str) -> bool {
    s.contains("...") || s.contains('…')
}

fn starts_with_ellipsis(s: &str) -> bool {
    let s = s.trim_start_matches(['[', '(']);
    s.starts_with("...") || s.starts_with('…')
}

fn ends_with_ellipsis(s: &str) -> bool {
    let s = s.trim_end().trim_end_matches([']', ')', ':']).trim_end();
    s.ends_with("...") || s.ends_with('…')
}

/// Words that, after an ellipsis, make a comment a placeholder.
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
    "as",
    "is",
];

fn words(s: &str) -> Vec<String> {
    s.split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
        .collect()
}

/// Whether the same line (ignoring whitespace) is in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Presence {
    Absent,
    InFile,
}

/// Whether `line` is a placeholder. When the same line (ignoring whitespace) is in the file
/// (`presence`), only an unmistakable placeholder counts.
pub(crate) fn is_placeholder(line: &str, presence: Presence) -> bool {
    let in_file = presence == Presence::InFile;
    let (body, commented) = comment_body(line);
    if !commented && !has_ellipsis(body) {
        return false;
    }
    if !commented && !bare_placeholder(body) {
        return false;
    }
    let ws = words(body);
    if ws.is_empty() {
        // `...` alone is code in Python (Ellipsis) when the file has such lines.
        return has_ellipsis(body) && (commented || !in_file);
    }
    let strong = strong_phrase(&ws);
    if in_file && !(strong && has_ellipsis(body)) {
        return false;
    }
    if ws.len() > WEIGHTS.placeholder_max_words {
        return false;
    }
    if has_ellipsis(body) {
        let (starts, ends) = (starts_with_ellipsis(body), ends_with_ellipsis(body));
        // `// ... anything ...` is a placeholder; `// ... words` needs a telling word.
        return (starts && ends)
            || ((starts || ends) && ws.iter().any(|w| PLACEHOLDER_WORDS.contains(&w.as_str())));
    }
    // Without an ellipsis only a short comment is a placeholder: a sentence that mentions
    // unchanged data is documentation.
    commented && strong && ws.len() <= WEIGHTS.phrase_max_words
}

/// A line that is not a comment but reads as a placeholder: `... rest of code ...`,
/// `... (readable check stays as is)`, `[...]`, `…` — an ellipsis that starts the line and
/// is followed by a space, a bracket or nothing (unlike a spread `...props`).
fn bare_placeholder(body: &str) -> bool {
    let t = body.trim();
    let t = t.strip_prefix('[').unwrap_or(t);
    let rest = if let Some(r) = t.strip_prefix("...") {
        r
    } else if let Some(r) = t.strip_prefix('…') {
        r
    } else {
        return false;
    };
    rest.is_empty() || rest.starts_with([' ', '(', ']', '.'])
}

/// Phrases that mean "unchanged code goes here" even without an ellipsis.
fn strong_phrase(ws: &[String]) -> bool {
    let joined = ws.join(" ");
    const PHRASES: &[&str] = &[
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
        "remain unchanged",
        "stays the same",
        "stay the same",
        "unchanged code",
        "code unchanged",
        "keep existing",
        "previous code",
        "other code",
        "other methods",
        "other functions",
        "as is",
        "as before",
        "existing tests",
        "existing imports",
        "existing methods",
    ];
    PHRASES.iter().any(|p| joined.contains(p)) || ws.last().is_some_and(|w| w == "unchanged")
}

/// Phrases that mean a placeholder however long the comment around them: documentation
/// does not say them.
const UNMISTAKABLE_PHRASES: &[&str] = &[
    "rest of the code",
    "rest of code",
    "code remains the same",
    "code remains unchanged",
];

/// A looser test for text that looks like a placeholder, for the leakage guard.
pub(crate) fn looks_like_marker(line: &str) -> bool {
    let (body, commented) = comment_body(line);
    if !commented && !has_ellipsis(body) {
        return false;
    }
    let ws = words(body);
    if ws.is_empty() {
        return commented && has_ellipsis(body);
    }
    let joined = ws.join(" ");
    (strong_phrase(&ws) && ws.len() <= WEIGHTS.phrase_max_words)
        || (commented && UNMISTAKABLE_PHRASES.iter().any(|p| joined.contains(p)))
        || is_placeholder(line, Presence::Absent)
}

/// Phrases a narration line uses to say where the next code goes.
const NARRATION_PHRASES: &[&str] = &[
    "of the file",
    "of file",
    "at the top",
    "at the bottom",
    "at the very end",
    "top of",
];

/// Whether a comment line the file does not have narrates the snippet rather than being new
/// code: `// and at the top of the file:`, `// Props:`, `# imports (top of file)`. Such a
/// line separates two parts of the snippet when they belong to different places.
pub(crate) fn narration(line: &str) -> Narration {
    let (body, commented) = comment_body(line);
    if !commented || body.is_empty() {
        return Narration::No;
    }
    let ws = words(body);
    if ws.is_empty() || ws.len() > 12 {
        return Narration::No;
    }
    let joined = ws.join(" ");
    let lower = body.to_ascii_lowercase();
    if NARRATION_PHRASES.iter().any(|p| joined.contains(p)) || lower.contains("(top") {
        Narration::Place
    } else if body.trim_end().ends_with(':') {
        Narration::Heading
    } else {
        Narration::No
    }
}

/// How surely a comment line narrates the snippet instead of being code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Narration {
    /// Not narration.
    No,
    /// Ends with a colon ("// Props:"): narration where it stands next to a placeholder, or
    /// where it separates parts that belong to different places.
    Heading,
    /// Names a place ("// imports (top of file)"): always narration.
    Place,
}

/// Whether a comment line the file does not have narrates the snippet (see [`narration`]).
#[cfg(test)]
fn is_narration(line: &str) -> bool {
    narration(line) != Narration::No
}

/// Words of a `remove …` directive that are not the name.
const DIRECTIVE_FILLER: &[&str] = &[
    "the",
    "function",
    "method",
    "class",
    "block",
    "def",
    "fn",
    "func",
    "struct",
    "definition",
    "entire",
    "whole",
    "this",
    "field",
    "property",
    "const",
    "constant",
    "variable",
    "type",
    "interface",
    "enum",
];

/// `remove NAME` → `NAME` (an identifier), when the line is such a directive.
pub(crate) fn remove_directive(line: &str) -> Option<String> {
    let (body, commented) = comment_body(line);
    if !commented {
        return None;
    }
    let lower = body.to_ascii_lowercase();
    let rest = lower
        .strip_prefix("remove ")
        .or_else(|| lower.strip_prefix("delete "))?;
    let original = &body[body.len() - rest.len()..];
    let cleaned: Vec<&str> = original
        .split(|c: char| c.is_whitespace() || matches!(c, '`' | '"' | '\'' | '(' | ')' | ':' | '.'))
        .filter(|w| !w.is_empty())
        .filter(|w| !DIRECTIVE_FILLER.contains(&w.to_ascii_lowercase().as_str()))
        .collect();
    if cleaned.len() != 1 || original.split_whitespace().count() > 5 {
        return None;
    }
    let name = cleaned[0];
    name.chars()
        .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
        .then(|| name.to_string())
}

/// Whether a line is a diff hunk header used as a placeholder (`@@ ... @@`, `@@ fn @@`).
pub(crate) fn is_hunk_header(line: &str) -> bool {
    let t = line.trim();
    t.len() >= 4 && t.starts_with("@@") && t[2..].contains("@@")
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
            "...",
            "[...]",
            "…",
            "// … unchanged …",
            "... (readable check stays as is)",
            "// ... constructor, emit(), emitHeaders(), emitStatusLine() unchanged ...",
            "# ... (header docs unchanged until the directive note) ...",
            "// keep the other handlers as is",
            "-- ... rest of config.lua unchanged ...",
            "// ... (top of file: requires) ...",
        ] {
            assert!(is_placeholder(line, Presence::Absent), "{line}");
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
            "// Currently, only the Authorization header is sanitized. All other headers and request data remain unchanged.",
            "  ...props,",
            "...rest",
        ] {
            assert!(!is_placeholder(line, Presence::Absent), "{line}");
        }
        // A bare `...` that the file itself has is Python's Ellipsis.
        assert!(!is_placeholder("    ...", Presence::InFile));
        assert!(is_placeholder("    ...", Presence::Absent));
    }

    #[test]
    fn narration_lines_say_where_code_goes() {
        for line in [
            "// and at the top of the file:",
            "// Props:",
            "// imports (top of file)",
            "-- and in M.check(), right after the git check:",
        ] {
            assert!(is_narration(line), "{line}");
        }
        for line in [
            "// mark the transfer as finished",
            "x = 1 // top",
            "// the file is read",
            "# the end of the hostname, both with and without the port.",
        ] {
            assert!(!is_narration(line), "{line}");
        }
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
}
