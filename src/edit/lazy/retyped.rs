//! Context retyped (rule `retyped-context`, docs/DESIGN.md §5.1): whether a snippet line is a
//! file line typed as it reads rather than as it is written — a comment with its code marks
//! left off, its entities or typography rendered; code without its anonymous lifetimes, or
//! with a string's other quotes where both make one string. Such a line is the file's line.

use super::lines::comment_like;

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
    // A file line with nothing to render (no code mark, entity or typographic character)
    // cannot have been retyped rendered: asked of many pairs of lines, say no at once.
    let marked = f.contains(['`', '&']) || !f.is_ascii();
    if s == f || !marked || !comment(s) || !comment(f) {
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
pub(crate) fn quotes_retyped<'a>(snip: &'a str, file: &'a str) -> bool {
    let (s, f) = (snip.trim(), file.trim());
    if s == f || s.contains('\\') || f.contains('\\') || comment_like(f) {
        return false;
    }
    let plain = |t: &'a str| {
        t.chars()
            .filter(|c| !c.is_whitespace())
            .map(|c| if c == '\'' { '"' } else { c })
    };
    (s.contains(['\'', '"']) || f.contains(['\'', '"'])) && plain(s).eq(plain(f))
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
}
