//! Facts about one line that the file and the snippet share: its key (whitespace and
//! look-alikes ignored), whether it is trivial (says little about where it stands), its
//! indentation, and how similar two lines are.

use super::costs::{QUOTED_CHARS, WEIGHTS};
use super::prepare::SLine;
pub(crate) use crate::edit::likeness::{bigrams, same_setting, setting_key, similarity};
pub(crate) use crate::edit::matching::line_key as key;

/// The start of a line that a similarity compares (its cost grows with the length): its
/// first `compared_chars` characters.
pub(crate) fn compared(line: &str) -> &str {
    match line.char_indices().nth(WEIGHTS.compared_chars) {
        Some((at, _)) => &line[..at],
        None => line,
    }
}

/// Lines whose content says little about where they are: blank lines, lines without letters
/// or digits (`}`, `});`, `*/`), and bare keyword lines (`else`, `end`, `return;` …).
pub(crate) fn is_trivial(line: &str) -> bool {
    // Without allocating: the first WEIGHTS.trivial_key_max non-blank bytes of an ASCII line go to a
    // buffer; a longer line is trivial only when it has no letter or digit.
    let mut buf = [0u8; WEIGHTS.trivial_key_max];
    let mut n = 0;
    let mut alnum = false;
    let mut long = false;
    for c in line.chars().filter(|c| !c.is_whitespace()) {
        alnum |= c.is_alphanumeric();
        if c.is_ascii() && n < WEIGHTS.trivial_key_max {
            buf[n] = c as u8;
            n += 1;
        } else {
            long = true;
            if alnum {
                return false;
            }
        }
    }
    if !alnum {
        return true;
    }
    !long && std::str::from_utf8(&buf[..n]).is_ok_and(is_trivial_key)
}

/// Whether a line without its whitespace is a bare keyword line (`else`, `return;` …).
fn is_trivial_key(key: &str) -> bool {
    matches!(
        key,
        "else"
            | "else{"
            | "}else{"
            | "end"
            | "end;"
            | "end)"
            | "end,"
            | "pass"
            | "break"
            | "break;"
            | "continue"
            | "continue;"
            | "return"
            | "return;"
            | "returnthis;"
            | "returntrue;"
            | "returnfalse;"
            | "returnnull;"
            | "returnnil"
            | "returnerr"
            | "returnTrue"
            | "returnFalse"
            | "returnNone"
            | "returnfalse"
            | "returntrue"
            | "default:"
            | "try:"
            | "try"
            | "try{"
            | "}finally{"
            | "finally"
            | "finally:"
            | "finally{"
            | "done"
            | "esac"
            | "else:"
            | "endif"
            | "#endif"
            | "#else"
            | "fi"
            | "do"
            | "then"
            | "begin"
            | "}catch{"
            | "@Override"
            | "ensure"
            | "rescue"
            | "private"
            | "public"
            | "protected"
            | "private:"
            | "public:"
            | "protected:"
            | "with:"
            | "steps:"
            | "<summary>"
            | "</summary>"
            | "///<summary>"
            | "///</summary>"
            | "*"
            | "#"
            | "//"
    )
}

/// A line's facts in one pass: its key, indentation (columns), blankness and triviality.
pub(crate) fn facts(line: &str) -> (u64, u32, bool, bool) {
    if !line.is_ascii() {
        return (key(line), indent_of(line), is_blank(line), is_trivial(line));
    }
    let bytes = line.as_bytes();
    let mut indent = 0u32;
    let mut at = 0;
    while at < bytes.len() && (bytes[at] == b' ' || bytes[at] == b'\t') {
        indent = if bytes[at] == b'\t' {
            (indent / 4 + 1) * 4
        } else {
            indent + 1
        };
        at += 1;
    }
    let mut h = crate::edit::matching::KEY_SEED;
    let mut buf = [0u8; WEIGHTS.trivial_key_max];
    let (mut n, mut alnum) = (0usize, false);
    for &b in &bytes[at..] {
        if b.is_ascii_whitespace() || b == 0x0B {
            continue;
        }
        h = crate::edit::matching::key_step(h, u32::from(b));
        alnum |= b.is_ascii_alphanumeric();
        if n < WEIGHTS.trivial_key_max {
            buf[n] = b;
        }
        n += 1;
    }
    let blank = n == 0;
    let trivial = !alnum
        || (n <= WEIGHTS.trivial_key_max
            && std::str::from_utf8(&buf[..n]).is_ok_and(is_trivial_key));
    (h, indent, blank, trivial)
}

/// Indentation width in columns, a tab reaching the next multiple of 4.
pub(crate) fn indent_of(line: &str) -> u32 {
    line.bytes()
        .take_while(|b| *b == b' ' || *b == b'\t')
        .fold(0u32, |col, b| {
            if b == b'\t' {
                (col / 4 + 1) * 4
            } else {
                col + 1
            }
        })
}

/// Whether a line holds only whitespace.
pub(crate) fn is_blank(line: &str) -> bool {
    line.trim().is_empty()
}

/// Whether a line is a closing line: it starts with a closing bracket or block keyword
/// (`}`, `)`, `]`, `end`, `*/`, `</tag>`) and holds nothing that opens.
pub(crate) fn is_closer(line: &str) -> bool {
    let t = line.trim();
    if t.is_empty() {
        return false;
    }
    let starts = t.starts_with(['}', ')', ']'])
        || t == "end"
        || t.starts_with("end ")
        || t.starts_with("end)")
        || t.starts_with("end,")
        || t == "*/"
        || t.starts_with("</")
        || t.starts_with("///</");
    starts && !t.ends_with('{') && !t.ends_with('(') && !t.ends_with('[')
}

/// Whether snippet line `snip` is file line `file` with (part of) its trailing comment left
/// off — context the model shortened, not a change (`x = 1,` for `x = 1, -- note`).
pub(crate) fn truncated_comment(snip: &str, file: &str) -> bool {
    let (s, f) = (snip.trim(), file.trim());
    if s.is_empty() || s.len() >= f.len() || !f.starts_with(s) {
        return false;
    }
    let rest = &f[s.len()..];
    let rest_trim = rest.trim_start();
    // The cut is at a comment, or inside one the snippet already shows.
    let at_comment = ["#", "//", "--", "/*"]
        .iter()
        .any(|m| rest_trim.starts_with(m))
        && (rest.len() > rest_trim.len() || s.ends_with([',', ';', ')', '}', ']']));
    let inside_comment =
        without_trailing_comment(s).is_some() && rest.starts_with(char::is_whitespace);
    at_comment || inside_comment
}

/// Whether snippet line `i` of `lines` is `file_line` shown without its trailing comment
/// ([`truncated_comment`]) and the comment did not move onto the snippet's next lines (its
/// words there: then the line did change, its comment now on lines of its own).
pub(crate) fn shown_without_comment(lines: &[SLine], i: usize, file_line: &str) -> bool {
    let (s, f) = (lines[i].text.trim(), file_line.trim());
    if !truncated_comment(s, f) {
        return false;
    }
    let comment = f.get(s.len()..).unwrap_or("").trim();
    let words = |t: &str| -> Vec<String> {
        t.split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.len() > 2)
            .map(str::to_lowercase)
            .collect()
    };
    let said = words(comment);
    if said.is_empty() {
        return true;
    }
    let below: Vec<String> = lines[i + 1..]
        .iter()
        .take(WEIGHTS.comment_lookahead)
        .flat_map(|l| words(&l.text))
        .collect();
    let found = said.iter().filter(|w| below.contains(w)).count();
    found * 2 <= said.len()
}

/// A comment or preprocessor line (`//`, `/*`, ` *`, `--`, `;`, `#` but not a `#[` attribute),
/// which may stand at any depth.
pub(crate) fn comment_like(line: &str) -> bool {
    let t = line.trim_start();
    ["//", "/*", "*", "--", ";"]
        .iter()
        .any(|m| t.starts_with(m))
        || (t.starts_with('#') && !t.starts_with("#["))
}

/// Whether comment line `snip` is comment line `file` retyped as it reads rendered: without
/// its code marks (`` `name` `` → `name`), its HTML entities written as the characters they
/// stand for (`&mdash;` → `—`), or typographic quotes and dashes as plain ones (`’` → `'`) —
/// context a writer retyped, not an edit. Each character and mark must be as far rendered as
/// the file's or further, and one further: marks added anywhere (`&lt;T&gt;` → `` `<T>` ``,
/// entities turned into code) are an edit, however many others were dropped. `rendering`
/// says which of these a retyping may leave off.
pub(crate) fn markup_dropped(snip: &str, file: &str, rendering: Rendering) -> bool {
    let comment = |t: &str| prose_comment(t) || t.starts_with("\"\"\"");
    let (s, f) = (snip.trim(), file.trim());
    if s == f || !comment(s) || !comment(f) {
        return false;
    }
    let (s, f) = (rendered(s), rendered(f));
    s.weight < f.weight
        && s.chars.len() == f.chars.len()
        && s.chars.iter().zip(&f.chars).all(|(a, b)| {
            a.0 == b.0
                && match rendering {
                    Rendering::CodeMarks => a.1 == b.1,
                    Rendering::Full => a.1 <= b.1,
                }
        })
        && marks_kept(&s.marks, &f.marks)
}

/// A comment line whose text is prose a writer reads rendered: a comment-like line but a
/// directive or code whose mark runs straight into a word (`#define AMP "&amp;"`, `#include`,
/// a shell line's `--title "…"`, C's `*p = …`): their strings are code, read as written.
fn prose_comment(t: &str) -> bool {
    let t = t.trim_start();
    let directive = ["#", "--", "*"].iter().any(|m| {
        t.strip_prefix(m)
            .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_alphabetic()))
    });
    comment_like(t) && !directive
}

/// How much of a comment's markup a line retyped as it reads may leave off
/// ([`markup_dropped`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rendering {
    /// Code marks only (`` `name` `` → `name`): a writer's retyping, never a change alone,
    /// so a snippet that only leaves them off changes nothing.
    CodeMarks,
    /// Code marks, HTML entities and typographic characters (rule `retyped-context`; with
    /// the rule off, entities decoded are the snippet's change).
    Full,
}

/// HTML entities a doc comment writes, with the characters they render as.
const ENTITIES: [(&str, char); 10] = [
    ("&mdash;", '—'),
    ("&ndash;", '–'),
    ("&amp;", '&'),
    ("&lt;", '<'),
    ("&gt;", '>'),
    ("&quot;", '"'),
    ("&apos;", '\''),
    ("&#39;", '\''),
    ("&nbsp;", ' '),
    ("&hellip;", '…'),
];

/// A typographic character's plain form.
fn typographic(c: char) -> Option<char> {
    match c {
        '—' | '–' => Some('-'),
        '‘' | '’' => Some('\''),
        '“' | '”' => Some('"'),
        _ => None,
    }
}

/// A comment's text as it reads rendered ([`rendered`]).
struct Rendered {
    /// Its characters without whitespace, each in its plain form, with how far the written
    /// form is from it: 0 plain, 1 typographic (`—`), 2 an entity (`&mdash;`), so that
    /// `&mdash;` → `—` → `-` each renders further.
    chars: Vec<(char, u8)>,
    /// Where its code marks stand, as counts of the characters before them.
    marks: Vec<usize>,
    /// How far the whole text is from its plainest form: the steps, and a code mark one.
    weight: usize,
}

/// A comment's text as it reads rendered: code marks dropped, entities decoded (but inside
/// code marks, where they render as written), typographic characters plain.
fn rendered(t: &str) -> Rendered {
    let mut out = Rendered {
        chars: Vec::new(),
        marks: Vec::new(),
        weight: 0,
    };
    let mut rest = t;
    let mut in_code = false;
    while let Some(c) = rest.chars().next() {
        if c == '&'
            && !in_code
            && let Some((e, r)) = ENTITIES.iter().find(|(e, _)| rest.starts_with(e))
        {
            rest = &rest[e.len()..];
            out.weight += 2;
            if !r.is_whitespace() {
                out.chars.push((typographic(*r).unwrap_or(*r), 2));
            }
            continue;
        }
        rest = &rest[c.len_utf8()..];
        if c == '`' {
            out.marks.push(out.chars.len());
            out.weight += 1;
            in_code = !in_code;
        } else if !c.is_whitespace() {
            let plain = typographic(c);
            out.weight += usize::from(plain.is_some());
            out.chars
                .push((plain.unwrap_or(c), u8::from(plain.is_some())));
        }
    }
    out
}

/// Whether every code mark of `snip` (positions in order) stands where one of `file`'s does.
fn marks_kept(snip: &[usize], file: &[usize]) -> bool {
    let mut left = file.iter();
    snip.iter().all(|m| left.any(|f| f == m))
}

/// Whether line `j` of `lines` stands inside a fenced code block of the comment it belongs
/// to (a doc test: an odd count of ```` ``` ```` lines above it in its run of comment lines),
/// where its text is code that reads as written, not rendered prose.
pub(crate) fn in_comment_fence(lines: &[&str], j: usize) -> bool {
    let fence = |l: &&&str| {
        let text = l
            .trim_start()
            .trim_start_matches(['/', '!', '*', '#', '-', ';']);
        let text = text.trim_start();
        text.starts_with("```") || text.starts_with("~~~")
    };
    let above = lines[..j].iter().rev().take_while(|l| comment_like(l));
    above.filter(fence).count() % 2 == 1
}

/// Whether code line `snip` is code line `file` retyped without its anonymous lifetimes
/// (`Formatter<'_>` → `Formatter`, `&'_ str` → `&str`): the same code, since the compiler
/// elides them alike, so context a writer retyped, not an edit.
pub(crate) fn lifetime_elided(snip: &str, file: &str) -> bool {
    let (s, f) = (snip.trim(), file.trim());
    if !f.contains("'_") || s.contains("'_") || comment_like(f) {
        return false;
    }
    let elided = f
        .replace("<'_>", "")
        .replace("<'_, ", "<")
        .replace("&'_ ", "&");
    let bare = |t: &str| t.chars().filter(|c| !c.is_whitespace()).collect::<String>();
    bare(&elided) == bare(s)
}

/// Whether code line `snip` is code line `file` with its string literals' quotes retyped
/// (`'a'` as `"a"`), in a language where both quotes make the same string
/// ([`quotes_alike`]): the same code, so context a writer retyped, not an edit. Lines with
/// escapes are left alone (an escaped quote changes with the delimiter).
pub(crate) fn quotes_retyped(snip: &str, file: &str) -> bool {
    let (s, f) = (snip.trim(), file.trim());
    if s == f || s.contains('\\') || f.contains('\\') || comment_like(f) {
        return false;
    }
    let plain = |t: &str| -> String {
        t.chars()
            .filter(|c| !c.is_whitespace())
            .map(|c| if c == '\'' { '"' } else { c })
            .collect()
    };
    (s.contains(['\'', '"']) || f.contains(['\'', '"'])) && plain(s) == plain(f)
}

/// Whether `'…'` and `"…"` make the same string in `lang`: Python, JavaScript and TypeScript,
/// Lua (not Ruby, PHP or the shell, where only one interpolates; not C, Rust, Go or Java,
/// where one is a character).
pub(crate) fn quotes_alike(lang: Option<crate::syntax::Lang>) -> bool {
    use crate::syntax::Lang;
    matches!(
        lang,
        Some(Lang::Python | Lang::JavaScript | Lang::TypeScript | Lang::Tsx | Lang::Lua)
    )
}

/// The code of a line without a trailing comment (`x = 1  # note` → `x = 1`), for lines
/// whose comment the snippet shortened or dropped; `None` when there is no trailing comment.
pub(crate) fn without_trailing_comment(line: &str) -> Option<&str> {
    let t = line.trim_end();
    let mut quote: Option<char> = None;
    let mut prev = ' ';
    for (at, c) in t.char_indices() {
        match quote {
            Some(q) => {
                if c == q && prev != '\\' {
                    quote = None;
                }
            }
            None => {
                if c == '"' || c == '\'' || c == '`' {
                    quote = Some(c);
                } else if at > 0 && prev.is_whitespace() {
                    let rest = &t[at..];
                    if rest.starts_with("//")
                        || rest.starts_with("# ")
                        || rest.starts_with("-- ")
                        || rest.starts_with("/*")
                    {
                        let code = t[..at].trim_end();
                        return (!code.trim().is_empty()).then_some(code);
                    }
                }
            }
        }
        prev = c;
    }
    None
}

/// A line of comment marks only: no letter, digit or bracket (`//!`, ` *`, `#`).
pub(crate) fn bare_marker(line: &str) -> bool {
    line.chars()
        .all(|c| !(c.is_alphanumeric() || "{}()[]".contains(c)))
}

/// A line as a refusal quotes it: trimmed, and cut at [`QUOTED_CHARS`] with `…`.
pub(crate) fn quoted(line: &str) -> String {
    let t = line.trim();
    match t.char_indices().nth(QUOTED_CHARS) {
        Some((at, _)) => format!("{}…", &t[..at]),
        None => t.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_comment_retyped_without_its_code_marks_is_markup_dropped() {
        assert!(markup_dropped(
            "    /// Calls parse.",
            "    /// Calls `parse`.",
            Rendering::Full
        ));
        assert!(markup_dropped(
            "# see name",
            "# see `name`",
            Rendering::Full
        ));
        // Code, other words, or marks added rather than dropped: no.
        assert!(!markup_dropped(
            "let a = b;",
            "let a = `b`;",
            Rendering::Full
        ));
        assert!(!markup_dropped(
            "/// Calls parse now.",
            "/// Calls `parse`.",
            Rendering::Full
        ));
        assert!(!markup_dropped(
            "/// Calls `parse`.",
            "/// Calls parse.",
            Rendering::Full
        ));
    }

    #[test]
    fn a_line_retyped_without_its_anonymous_lifetimes_is_lifetime_elided() {
        assert!(lifetime_elided(
            "    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {",
            "    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {"
        ));
        assert!(lifetime_elided(
            "fn name(&self) -> &str {",
            "fn name(&self) -> &'_ str {"
        ));
        assert!(lifetime_elided("impl Iter<T> {", "impl Iter<'_, T> {"));
        // A named lifetime, another change, or a lifetime added: an edit.
        assert!(!lifetime_elided("fn a(x: &str) {", "fn a(x: &'a str) {"));
        assert!(!lifetime_elided(
            "fn fmt(f: &mut Formatter) -> Result {",
            "fn fmt(f: &mut Formatter<'_>) {"
        ));
        assert!(!lifetime_elided("fn f(x: &'_ str) {", "fn f(x: &str) {"));
    }

    #[test]
    fn a_line_retyped_with_its_strings_other_quotes_is_quotes_retyped() {
        assert!(quotes_retyped(
            "elif conversion == \"a\":",
            "elif conversion == 'a':"
        ));
        assert!(quotes_retyped("x = {'k': 1}", "x = {\"k\": 1}"));
        // Other words, escapes, or no quotes at all: no.
        assert!(!quotes_retyped(
            "elif conversion == \"b\":",
            "elif conversion == 'a':"
        ));
        assert!(!quotes_retyped("s = \"it\\'s\"", "s = 'it\\'s'"));
        assert!(!quotes_retyped("a = b", "a = b"));
        assert!(quotes_alike(Some(crate::syntax::Lang::Python)));
        assert!(!quotes_alike(Some(crate::syntax::Lang::Rust)));
        assert!(!quotes_alike(Some(crate::syntax::Lang::Ruby)));
    }

    #[test]
    fn a_comment_retyped_with_its_entities_or_typography_rendered_is_markup_dropped() {
        assert!(markup_dropped(
            "    /// The lowest cause — its cause's cause.",
            "    /// The lowest cause &mdash; its cause&#39;s cause.",
            Rendering::Full
        ));
        assert!(markup_dropped(
            "// a < b && b > c",
            "// a &lt; b &amp;&amp; b &gt; c",
            Rendering::Full
        ));
        assert!(markup_dropped(
            "# it's \"done\"",
            "# it’s “done”",
            Rendering::Full
        ));
        // Entities written where the file has the characters, or other words: an edit.
        assert!(!markup_dropped("// a &lt; b", "// a < b", Rendering::Full));
        assert!(!markup_dropped(
            "/// The lowest cause - its cause.",
            "/// The lowest cause &mdash; its own cause.",
            Rendering::Full
        ));
        assert!(!markup_dropped(
            "let s = \"a—b\";",
            "let s = \"a&mdash;b\";",
            Rendering::Full
        ));
    }

    #[test]
    fn markup_added_or_moved_beside_markup_dropped_is_an_edit() {
        // Entities turned into code: fewer marks in all, but the code marks are new.
        assert!(!markup_dropped(
            "/// Returns the value `<T>` if set.",
            "/// Returns the value &lt;T&gt; if set.",
            Rendering::Full
        ));
        // Code marks moved, some dropped.
        assert!(!markup_dropped(
            "/// a b `c`",
            "/// `a` `b` c",
            Rendering::Full
        ));
        // An entity inside code marks reads as written: `&amp;` is not `&`.
        assert!(!markup_dropped(
            "/// Use & here.",
            "/// Use `&amp;` here.",
            Rendering::Full
        ));
        // A typographic character made plain where an entity became typographic: both
        // render further.
        assert!(markup_dropped(
            "// a - b — c",
            "// a — b &mdash; c",
            Rendering::Full
        ));
        assert!(markup_dropped(
            "/// Use `x` - or y.",
            "/// Use `x` &mdash; or `y`.",
            Rendering::Full
        ));
    }

    #[test]
    fn code_marks_alone_are_left_off_under_either_rendering_and_entities_only_under_full() {
        let (f, s) = (
            "/// Returns `x` &mdash; or y.",
            "/// Returns x &mdash; or y.",
        );
        assert!(markup_dropped(s, f, Rendering::CodeMarks));
        assert!(markup_dropped(s, f, Rendering::Full));
        let decoded = "/// Returns x — or y.";
        assert!(!markup_dropped(decoded, f, Rendering::CodeMarks));
        assert!(markup_dropped(decoded, f, Rendering::Full));
    }

    #[test]
    fn a_directive_or_code_line_that_looks_like_a_comment_is_never_retyped() {
        let full = Rendering::Full;
        assert!(!markup_dropped(
            "#define AMP \"&\"",
            "#define AMP \"&amp;\"",
            full
        ));
        assert!(!markup_dropped(
            "--title \"a - b\"",
            "--title \"a &mdash; b\"",
            full
        ));
        assert!(!markup_dropped("*p = \"<\";", "*p = \"&lt;\";", full));
        assert!(markup_dropped("# a - b", "# a &mdash; b", full));
        assert!(markup_dropped(" * a - b", " * a &mdash; b", full));
        assert!(markup_dropped("-- a - b", "-- a &mdash; b", full));
    }

    #[test]
    fn a_line_inside_a_doc_comments_code_fence_is_in_the_fence() {
        let f = [
            "/// Escapes.",
            "///",
            "/// ```",
            "/// assert_eq!(escape(\"&\"), \"&amp;\");",
            "/// ```",
            "/// After.",
            "fn escape() {}",
        ];
        assert!(!in_comment_fence(&f, 1));
        assert!(in_comment_fence(&f, 3));
        assert!(!in_comment_fence(&f, 5));
        assert!(!in_comment_fence(&f, 6));
    }

    #[test]
    fn a_quoted_line_is_trimmed_and_cut_at_its_limit() {
        assert_eq!(quoted("    short();  "), "short();");
        let long = format!("  {}", "é".repeat(QUOTED_CHARS + 50));
        let q = quoted(&long);
        assert_eq!(q.chars().count(), QUOTED_CHARS + 1);
        assert!(q.ends_with('…'));
    }

    #[test]
    fn trivial_lines_are_bare_keywords_and_lines_without_letters_or_digits() {
        for t in [
            "}",
            "  });",
            "",
            "   ",
            "end",
            "else {",
            "return;",
            "*/",
            "/// <summary>",
        ] {
            assert!(is_trivial(t), "{t:?}");
        }
        for t in [
            "return x;",
            "x = 1",
            "def f():",
            "}) // done",
            "end # of loop",
        ] {
            assert!(!is_trivial(t), "{t:?}");
        }
    }

    #[test]
    fn facts_in_one_pass_agree_with_the_separate_ones() {
        for l in [
            "",
            "  }",
            "\treturn x;",
            "   else {",
            "foo(bar) // x",
            "  é = 1",
            "*",
            "\t\t}",
        ] {
            assert_eq!(
                facts(l),
                (key(l), indent_of(l), is_blank(l), is_trivial(l)),
                "{l:?}"
            );
        }
    }

    #[test]
    fn similarity_separates_versions_of_a_line_from_other_lines() {
        let v1 = "    timeout = 120, -- kill processes that take more than 2 minutes";
        let v2 = "    timeout = 300, -- kill processes that take more than 5 minutes";
        assert!(similarity(v1, v2) >= 0.8);
        let d1 = "/// Gets or sets an optional delegate to use to dynamically generate the break duration.";
        let d2 = "/// Gets or sets a predicate that determines whether the outcome should be handled by the circuit breaker.";
        assert!(similarity(d1, d2) < 0.6, "{}", similarity(d1, d2));
        assert_eq!(similarity("", "x"), 0.0);
        let u1 = "      uses: actions/checkout@f43a0e5ff2bd294095638e18286ca9a3d1956744 # v3.6.0";
        let u2 = "      uses: actions/checkout@c85c95e3d7251135ab7dc9ce3241c5835cc595a9 # v3.5.3";
        assert!(similarity(u1, u2) >= 0.6);
        // One target updated with one operator: versions of a line, however short.
        assert!(similarity("n += 2;", "n += 1;") >= 0.6);
        assert!(same_setting("flags |= A;", "flags |= B | C;"));
        assert!(!same_setting("i += 1;", "i = next;"));
        assert!(!same_setting("a <= b", "a <= c"));
        assert!(!same_setting("n += 1;", "m += 1;"));
        // One target updated in turn with values of other kinds: a run of statements.
        assert!(!same_setting("html += \"<li>\";", "html += escape(it);"));
        assert!(!same_setting("html += it;", "html += escape(it);"));
        assert!(same_setting("out += f\"<b>{x}\";", "out += \"<i>\";"));
        assert!(same_setting("n -= 1", "n -= -2"));
    }

    #[test]
    fn a_shortened_trailing_comment_is_the_same_line() {
        assert!(truncated_comment(
            r#"    log = { "-8" },"#,
            r#"    log = { "-8" }, -- show the last 8 commits"#
        ));
        assert!(truncated_comment(
            "body=request.body,  # type: ignore[arg-type]",
            "body=request.body,  # type: ignore[arg-type]  # urllib3 stubs"
        ));
        assert!(!truncated_comment("x = 1", "x = 10  # ten"));
        assert!(!truncated_comment("foo(a)", "foo(a).bar()"));
    }

    #[test]
    fn a_trailing_comment_is_split_off_outside_strings() {
        assert_eq!(
            without_trailing_comment(r#"log = { "-8" }, -- show the last 8"#),
            Some(r#"log = { "-8" },"#)
        );
        assert_eq!(without_trailing_comment(r#"x = "a # b""#), None);
        assert_eq!(without_trailing_comment("# only a comment"), None);
    }
}
