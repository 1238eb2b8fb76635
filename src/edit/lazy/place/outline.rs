//! A language-agnostic outline of a file: where definitions start and end (by braces or by
//! indentation), used to delete the block a `remove NAME` directive names and to list top-level
//! definitions when a snippet gives nothing to anchor on.

use crate::edit::lazy::costs::WEIGHTS;

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
    "mut",
    "unsafe",
    "default",
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

/// Lines directly above a definition that belong to it: decorators, attributes, doc comments.
pub(crate) fn attached_above(lines: &[&str], start: usize) -> usize {
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
pub(crate) fn block_extent(lines: &[&str], start: usize) -> (usize, usize) {
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
        // `ensure`, `rescue`, `else` at the header's depth go on with the block.
        if indent_of(l) == base && is_continuation_keyword(l) {
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

/// Whether `line` continues a block at its header's depth without ending it: Ruby's `ensure`
/// and `rescue`, and `else`/`elsif` (shell's `else` too).
pub(crate) fn is_continuation_keyword(line: &str) -> bool {
    let first = line.split_whitespace().next().unwrap_or("");
    matches!(first, "ensure" | "rescue" | "else" | "elsif")
}

/// The characters of a line outside string literals and `//` comments, so brackets inside
/// them are not counted.
pub(crate) fn code_chars(line: &str) -> impl Iterator<Item = char> + '_ {
    let mut quote: Option<char> = None;
    let mut escaped = false;
    let mut prev_slash = false;
    let mut done = false;
    let mut lifetimes = Lifetimes::default();
    line.char_indices().filter_map(move |(at, c)| {
        if done {
            return None;
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
                None
            }
            None => {
                if c == '\'' && lifetimes.is_lifetime(line, at) {
                    prev_slash = false;
                    Some(c)
                } else if c == '"' || c == '\'' || c == '`' {
                    quote = Some(c);
                    prev_slash = false;
                    None
                } else if c == '/' && prev_slash {
                    done = true;
                    None
                } else {
                    prev_slash = c == '/';
                    Some(c)
                }
            }
        }
    })
}

/// Rust's lifetimes and loop labels (`<'a>`, `&'a str`, `'static`, `'outer: loop`): a `'`
/// before a name that no `'` closes opens no character literal. Read only where Rust writes
/// them — right after `<` or `&`, `'static` after `:` or `+`, a label opening the line, and
/// any further name of that form on a line that already has one (`<'a, 'b>`), each followed
/// by what follows a lifetime — so a string in quotes (`'a b'`, `'static/*'`) is still one.
#[derive(Default)]
struct Lifetimes {
    seen: bool,
}

impl Lifetimes {
    fn is_lifetime(&mut self, line: &str, at: usize) -> bool {
        let rest = &line[at + 1..];
        let name_len = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let name = &rest[..name_len];
        let next = rest[name_len..].chars().next();
        if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) || next == Some('\'') {
            return false;
        }
        let before = line[..at].chars().next_back();
        let opens_line = line[..at].trim().is_empty();
        // What follows a lifetime in Rust: the end of a generic list or a reference's type.
        let ends = next.is_none_or(|c| c.is_whitespace() || ">,)+;{".contains(c));
        let is = (ends && (self.seen || matches!(before, Some('<' | '&'))))
            || (name == "static" && ends && line[..at].trim_end().ends_with([':', '+']))
            || (opens_line && next == Some(':'));
        self.seen |= is;
        is
    }
}

/// The name a line declares (`const NAME =`, `def NAME(`, `func (r T) NAME(`,
/// `export interface NAME {` …), if it starts with declaring keywords.
pub(crate) fn declared_name(line: &str) -> Option<&str> {
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
        let after = rest[end..].trim_start();
        if !is_def_word(word) {
            return declared.then_some(word);
        }
        // After the declaring keyword, a modifier word not followed by another word is the
        // name: `mod private {`, `fn default() {`.
        let named = declared
            && !DECLARING_WORDS.contains(&word)
            && !after.starts_with(|c: char| c.is_alphanumeric() || c == '_' || c == '$');
        if named {
            return Some(word);
        }
        declared |= DECLARING_WORDS.contains(&word);
        rest = after;
    }
}

/// Top-level definitions (unindented lines that open a definition), as `line: text`.
pub(crate) fn top_level(lines: &[&str]) -> Vec<String> {
    lines
        .iter()
        .enumerate()
        .filter(|(_, l)| {
            indent_of(l) == 0 && {
                let ids: Vec<&str> = identifiers(l).take(WEIGHTS.header_identifiers).collect();
                ids.iter().any(|w| is_def_word(w))
                    && !l.trim_start().starts_with("//")
                    && !l.trim_start().starts_with('#')
            }
        })
        .map(|(i, l)| format!("{}: {}", i + 1, l.trim_end()))
        .collect()
}

#[cfg(test)]
mod tests {
    fn code(line: &str) -> String {
        code_chars(line).collect()
    }

    #[test]
    fn rust_lifetimes_and_labels_open_no_character_literal() {
        let f = "    fn next(&mut self) -> io::Result<Option<Entry<'a, io::Empty>>> {";
        assert!(code(f).ends_with('{'), "{}", code(f));
        assert!(code("impl<'a, 'b> Pair<'a, 'b> {").ends_with('{'));
        assert!(code("fn name(&self) -> &'static str {").ends_with('{'));
        assert!(code("    'outer: loop {").ends_with('{'));
        // Character literals and quoted strings are still quoted.
        assert_eq!(code("let c = '{';"), "let c = ;");
        assert_eq!(code("let c = '\\'';"), "let c = ;");
        assert_eq!(code("x = {'a b': '{'}"), "x = {: }");
        assert_eq!(code("s = 'it' + '{'"), "s =  + ");
        assert_eq!(code("d = {'a': ['static/*', '{']}"), "d = {: [, ]}");
        assert!(code("fn f<T: 'static>(t: T) {").ends_with('{'));
    }

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
    fn a_modifier_word_after_the_declaring_keyword_is_the_name() {
        assert_eq!(declared_name("mod private {"), Some("private"));
        assert_eq!(declared_name("pub mod public;"), Some("public"));
        assert_eq!(declared_name("    fn default() -> Self {"), Some("default"));
        assert_eq!(declared_name("let mut count = 0;"), Some("count"));
        assert_eq!(
            declared_name("pub unsafe fn read(p: *const u8) {"),
            Some("read")
        );
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
        assert_eq!(block_extent(&src, 2), (2, 6));
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
        assert_eq!(block_extent(&src, 0), (0, 4));
        assert_eq!(block_extent(&src, 5), (5, 6));
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
        // The extent takes in the annotation and the doc comment above the header.
        assert_eq!(block_extent(&src, 5), (1, 8));
    }

    #[test]
    fn ruby_ensure_and_rescue_stay_inside_the_method() {
        let src = [
            "  def render(engine)",
            "    was = engine",
            "    super",
            "  rescue Error",
            "    retry",
            "  ensure",
            "    @engine = was",
            "  end",
            "  def next_one",
        ];
        assert_eq!(block_extent(&src, 0), (0, 8));
    }
}
