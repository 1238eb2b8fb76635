//! A language-agnostic outline of a file: where definitions start and end (by braces or by
//! indentation), used to delete the block a `remove NAME` directive names, to list top-level
//! definitions when a snippet gives nothing to anchor on, and to read placement hints from an
//! `instruction` ("in function foo", "after imports", "at the end").

/// Keywords that declare a name in common languages.
const DECLARING_WORDS: &[&str] = &[
    "def",
    "class",
    "fn",
    "fun",
    "func",
    "function",
    "struct",
    "enum",
    "trait",
    "impl",
    "interface",
    "type",
    "module",
    "mod",
    "record",
    "object",
    "sub",
    "proc",
    "macro",
    "const",
    "let",
    "var",
    "defn",
    "defun",
];

/// Words that qualify a definition (visibility, storage, return type …).
const MODIFIER_WORDS: &[&str] = &[
    "static",
    "async",
    "export",
    "pub",
    "public",
    "private",
    "protected",
    "internal",
    "abstract",
    "final",
    "override",
    "virtual",
    "void",
    "local",
];

/// Whether a word opens a definition (a declaring keyword or a modifier).
fn is_def_word(word: &str) -> bool {
    DECLARING_WORDS.contains(&word) || MODIFIER_WORDS.contains(&word)
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

fn identifiers(line: &str) -> impl Iterator<Item = &str> {
    line.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
        .filter(|w| !w.is_empty())
}

const CONTROL_WORDS: &[&str] = &[
    "if", "for", "while", "switch", "return", "else", "catch", "match", "when", "elif", "with",
    "new", "await", "throw", "case", "assert", "print", "yield",
];

/// Whether `line` looks like the start of a definition of `name`.
fn defines(line: &str, name: &str) -> bool {
    let t = line.trim();
    if t.starts_with("//") || t.starts_with('#') || t.starts_with('*') || t.starts_with("--") {
        return false;
    }
    let ids: Vec<&str> = identifiers(t).collect();
    let Some(pos) = ids.iter().position(|w| *w == name) else {
        return false;
    };
    // `class Dispatch(Base, metaclass=Meta):` defines Dispatch, not Meta.
    if let Some(declared) = declared_name(t) {
        return declared == name;
    }
    if ids.first().is_some_and(|w| CONTROL_WORDS.contains(w)) {
        return false;
    }
    let Some(at) = find_word(t, name) else {
        return false;
    };
    let after = t[at + name.len()..].trim_start();
    if after.starts_with('.') {
        return false;
    }
    let opens = t.ends_with('{') || t.ends_with(':') || t.ends_with("=>");
    let assigned = (after.starts_with('=') && !after.starts_with("==")) || after.starts_with(":=");
    let keyword_before = ids[..pos].iter().any(|w| is_def_word(w));
    if keyword_before {
        return true;
    }
    // `int helper(int x) {`, `helper(a) {` (methods, shell functions), `name = …`
    (after.starts_with('(') && opens) || (pos == 0 && assigned)
}

/// Whether `line` names `word` as a whole identifier.
pub fn mentions(line: &str, word: &str) -> bool {
    find_word(line, word).is_some()
}

/// Byte offset of `word` as a whole identifier in `s`.
fn find_word(s: &str, word: &str) -> Option<usize> {
    let is_id = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    s.match_indices(word).map(|(i, _)| i).find(|&i| {
        let before_ok = s[..i].chars().next_back().is_none_or(|c| !is_id(c));
        let after_ok = s[i + word.len()..].chars().next().is_none_or(|c| !is_id(c));
        before_ok && after_ok
    })
}

/// Lines directly above a definition that belong to it: decorators, attributes, doc comments.
fn attached_above(lines: &[&str], start: usize) -> usize {
    let mut first = start;
    let mut in_doc = false;
    while first > 0 {
        let above = lines[first - 1].trim();
        if in_doc {
            first -= 1;
            if above.starts_with("/**") || above.starts_with("/*") {
                in_doc = false;
            }
            continue;
        }
        if above.ends_with("*/") && !above.starts_with("//") {
            in_doc = !above.starts_with("/*");
            first -= 1;
            continue;
        }
        if above.starts_with('@') || above.starts_with("#[") || above.starts_with("///") {
            first -= 1;
            continue;
        }
        break;
    }
    first
}

/// The lines (0-based, half-open) of the block that starts at `start`: through the matching
/// closing bracket when the definition opens one, else through the lines indented deeper.
/// Decorators, attributes and doc comments directly above are included.
pub fn block_extent(lines: &[&str], start: usize) -> (usize, usize) {
    let first = attached_above(lines, start);
    let base = indent_of(lines[start]);
    let mut depth: i64 = 0;
    let mut opened = false;
    let mut i = start;
    while i < lines.len() {
        for c in code_chars(lines[i]) {
            match c {
                '{' | '(' | '[' => {
                    depth += 1;
                    opened |= c == '{';
                }
                '}' | ')' | ']' => depth -= 1,
                _ => {}
            }
        }
        if opened && depth <= 0 {
            return (first, i + 1);
        }
        if !opened && depth <= 0 {
            // The signature is complete and no brace opened yet.
            if lines[i].trim_end().ends_with(':') {
                break;
            }
            let next = lines[i + 1..].iter().find(|l| !l.trim().is_empty());
            match next {
                Some(n) if n.trim_start().starts_with('{') => {}
                Some(n) if indent_of(n) > base => break,
                _ => return (first, i + 1),
            }
        }
        i += 1;
    }
    if opened {
        return (first, lines.len());
    }
    // Indented block: every following line indented deeper (blank lines inside included).
    let mut end = i + 1;
    let mut k = i + 1;
    while k < lines.len() {
        let l = lines[k];
        if l.trim().is_empty() {
            k += 1;
            continue;
        }
        if indent_of(l) > base {
            end = k + 1;
            k += 1;
            continue;
        }
        // `end` keywords close blocks in Ruby, Lua and shell.
        if indent_of(l) == base && matches!(l.trim(), "end" | "fi" | "done" | "esac" | "end;") {
            end = k + 1;
        }
        break;
    }
    (first, end.min(lines.len()))
}

/// The characters of a line outside string literals and `//` comments, so brackets inside
/// them are not counted.
pub fn code_chars(line: &str) -> impl Iterator<Item = char> + '_ {
    let mut quote: Option<char> = None;
    let mut escaped = false;
    let mut prev_slash = false;
    let mut done = false;
    line.chars().filter(move |&c| {
        if done {
            return false;
        }
        match quote {
            Some(q) => {
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                }
                false
            }
            None => {
                if c == '"' || c == '\'' || c == '`' {
                    quote = Some(c);
                    prev_slash = false;
                    false
                } else if c == '/' && prev_slash {
                    done = true;
                    false
                } else {
                    prev_slash = c == '/';
                    true
                }
            }
        }
    })
}

/// Every definition of `name`: the block extents, in file order.
pub fn find_definitions(lines: &[&str], name: &str) -> Vec<(usize, usize)> {
    lines
        .iter()
        .enumerate()
        .filter(|(_, l)| defines(l, name))
        .map(|(i, _)| block_extent(lines, i))
        .collect()
}

/// The name a line declares (`const NAME =`, `def NAME(`, `func (r T) NAME(`,
/// `export interface NAME {` …), if it starts with declaring keywords.
pub fn declared_name(line: &str) -> Option<&str> {
    let mut rest = line.trim_start();
    let mut declared = false;
    loop {
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
            .unwrap_or(rest.len());
        let word = &rest[..end];
        if word.is_empty() {
            // Go's method receiver: `func (r *T) Name(`.
            if declared && rest.starts_with('(') {
                rest = rest[rest.find(')')? + 1..].trim_start();
                continue;
            }
            return None;
        }
        if !is_def_word(word) {
            return declared.then_some(word);
        }
        declared |= DECLARING_WORDS.contains(&word);
        rest = rest[end..].trim_start();
    }
}

/// Top-level definitions (unindented lines that open a definition), as `line: text`.
pub fn top_level(lines: &[&str]) -> Vec<String> {
    lines
        .iter()
        .enumerate()
        .filter(|(_, l)| {
            indent_of(l) == 0 && {
                let ids: Vec<&str> = identifiers(l).take(4).collect();
                ids.iter().any(|w| is_def_word(w))
                    && !l.trim_start().starts_with("//")
                    && !l.trim_start().starts_with('#')
            }
        })
        .map(|(i, l)| format!("{}: {}", i + 1, l.trim_end()))
        .collect()
}

/// Where an instruction asks the edit to go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hint {
    /// Inside these file lines (a named definition).
    Within(usize, usize),
    /// After the last import line.
    AfterImports(usize),
    /// At the start of the file.
    Top,
    /// At the end of the file.
    End,
}

/// Read a placement hint from a free-text instruction.
pub fn read_hint(instruction: &str, lines: &[&str]) -> Option<Hint> {
    let lower = instruction.to_ascii_lowercase();
    if lower.contains("after import")
        || lower.contains("after the import")
        || lower.contains("below the import")
    {
        let last = lines.iter().rposition(|l| {
            let t = l.trim_start();
            t.starts_with("import ")
                || t.starts_with("from ") && t.contains(" import ")
                || t.starts_with("use ")
                || t.starts_with("#include")
                || t.starts_with("require")
                || (t.starts_with("const ") && t.contains("require("))
        })?;
        return Some(Hint::AfterImports(last + 1));
    }
    if lower.contains("at the end")
        || lower.contains("end of the file")
        || lower.contains("end of file")
        || lower.starts_with("append")
    {
        return Some(Hint::End);
    }
    if lower.contains("at the top")
        || lower.contains("beginning of the file")
        || lower.contains("start of the file")
    {
        return Some(Hint::Top);
    }
    // "in function foo", "inside the foo method", "in foo()", "to class Foo"
    let ids: Vec<&str> = identifiers(instruction).collect();
    for w in ids.iter().rev() {
        let name = w.trim_end_matches("()");
        if name.is_empty() || is_def_word(name) || is_common_word(&name.to_ascii_lowercase()) {
            continue;
        }
        let defs = find_definitions(lines, name);
        if let [(a, b)] = defs.as_slice() {
            return Some(Hint::Within(*a, *b));
        }
    }
    None
}

fn is_common_word(w: &str) -> bool {
    matches!(
        w,
        "in" | "inside"
            | "the"
            | "to"
            | "of"
            | "add"
            | "after"
            | "before"
            | "method"
            | "function"
            | "class"
            | "into"
            | "a"
            | "an"
            | "and"
            | "at"
            | "for"
            | "with"
            | "new"
            | "call"
            | "update"
            | "change"
            | "replace"
            | "remove"
            | "fix"
            | "make"
            | "use"
            | "on"
            | "it"
            | "file"
            | "line"
            | "lines"
            | "code"
            | "block"
            | "body"
            | "return"
            | "value"
            | "field"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declared_names_across_languages() {
        assert_eq!(
            declared_name("const responseTypes = ["),
            Some("responseTypes")
        );
        assert_eq!(declared_name("  export interface Hooks {"), Some("Hooks"));
        assert_eq!(declared_name("def run(self):"), Some("run"));
        assert_eq!(
            declared_name("func (c *Context) File(path string) {"),
            Some("File")
        );
        assert_eq!(declared_name("pub async fn serve() {"), Some("serve"));
        assert_eq!(declared_name("public static void main(String[] a) {"), None);
        assert_eq!(declared_name("return x;"), None);
        assert_eq!(declared_name("export default foo;"), None);
    }

    #[test]
    fn python_function_extent_follows_indentation() {
        let src = [
            "import os",
            "",
            "def helper(x):",
            "    y = x",
            "",
            "    return y",
            "",
            "def main():",
            "    pass",
        ];
        assert_eq!(find_definitions(&src, "helper"), vec![(2, 6)]);
    }

    #[test]
    fn brace_function_extent_follows_brackets() {
        let src = [
            "func a() {",
            "\tx := map[string]int{",
            "\t}",
            "}",
            "",
            "func b() {}",
        ];
        assert_eq!(find_definitions(&src, "a"), vec![(0, 4)]);
        assert_eq!(find_definitions(&src, "b"), vec![(5, 6)]);
    }

    #[test]
    fn java_method_with_annotation_and_javadoc() {
        let src = [
            "class A {",
            "  /**",
            "   * Doc.",
            "   */",
            "  @Override",
            "  public int size() {",
            "    return 1;",
            "  }",
            "}",
        ];
        assert_eq!(find_definitions(&src, "size"), vec![(1, 8)]);
    }

    #[test]
    fn calls_are_not_definitions() {
        let src = ["def f():", "    helper(1)", "    x = helper(2)"];
        assert!(find_definitions(&src, "helper").is_empty());
    }

    #[test]
    fn a_name_used_in_a_definition_line_is_not_defined_there() {
        let src = [
            "class Meta(type):",
            "    pass",
            "class View(Base, metaclass=Meta):",
            "    pass",
        ];
        assert_eq!(find_definitions(&src, "Meta"), vec![(0, 2)]);
        assert_eq!(find_definitions(&src, "View"), vec![(2, 4)]);
    }

    #[test]
    fn hints_from_instructions() {
        let src = ["import a", "import b", "", "def run():", "    pass"];
        assert_eq!(
            read_hint("add it after imports", &src),
            Some(Hint::AfterImports(2))
        );
        assert_eq!(read_hint("append at the end", &src), Some(Hint::End));
        assert_eq!(read_hint("in function run", &src), Some(Hint::Within(3, 5)));
        assert_eq!(read_hint("make it faster", &src), None);
    }
}
