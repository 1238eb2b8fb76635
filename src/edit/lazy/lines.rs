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
