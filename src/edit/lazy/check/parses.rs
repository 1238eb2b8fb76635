//! The reading check (docs/DESIGN.md §5.1 step 6, run last): a reading of the snippet that
//! leaves the file with a parse error the snippet's own text does not have is a wrong reading.
//! When the merged file has a syntax error the original did not, on a line whose text has no
//! error in the snippet parsed on its own (dedented; PHP inside `<?php`), the pieces were put
//! together at the wrong place: the merge is refused `NEEDS_MORE_CONTEXT`, naming the line,
//! instead of being written broken. An error the snippet has too (syntax newer than the
//! grammar, say) is the snippet's own: the merge stands and the review's `syntax:` warning
//! shows it. A file broken already is not refused. Either way the error joins the merge's
//! evidence (`evidence::Syntax`): on a line of code it is the snippet's own, on a closer-like
//! line a misfit that costs the margin.

use crate::edit::lazy::evidence::Syntax;
use crate::edit::lazy::lines::indent_of;
use crate::edit::lazy::placeholder::{Presence, is_placeholder};
use crate::error::{Error, ErrorCode, Result};
use crate::syntax::{self, Lang};

/// Refuse `merged` when it breaks the syntax of `original` where the snippet `body` does not;
/// else say whether it has a new error the snippet's own text shares (evidence for the margin).
pub(crate) fn check(
    path: Option<&str>,
    original: &str,
    merged: &str,
    body: &str,
) -> Result<Syntax> {
    let Some(path) = path else {
        return Ok(Syntax::Clean);
    };
    let Some(lang) = Lang::of_text(path, merged) else {
        return Ok(Syntax::Clean);
    };
    let fresh = syntax::new_errors(path, Some(original), merged);
    let Some(excused) = fresh.first() else {
        return Ok(Syntax::Clean);
    };
    // A file broken already: which error is new is told less surely (the review's warning
    // shows what it can), so it is evidence, not a refusal.
    if syntax::check::errors_of(lang, original).is_none_or(|e| !e.is_empty()) {
        return Ok(excused_by_text(excused.line, excused.line_in(merged)));
    }
    let own_text = own_text(lang, body);
    let Some(own) = syntax::errors_once(lang, &own_text) else {
        return Ok(excused_by_text(excused.line, excused.line_in(merged)));
    };
    // An error on a line whose text the snippet has the same error on is the snippet's own (a
    // blank line excuses nothing: every fragment's end is one). Another error on that line is
    // not: a fragment's open end (a block opener with its body under a placeholder) is an
    // error alone, and the misplaced merge's error there is of another kind.
    // Nor is an error the gap after its line makes (a placeholder, or the snippet's open end,
    // follows a line that opens or closes a block): a block opener whose body the placeholder
    // keeps is an error alone, which the kept lines mend where the merge is right; the same
    // error in the result says they are not its body. An error of another kind, or on a line
    // that opens nothing, is the snippet's own wherever it stands (syntax newer than the
    // grammar: `-> impl use<> Iterator` in a signature, a one-line item at the snippet's end).
    let own_text_lines: Vec<&str> = own_text.lines().collect();
    let own_errors: Vec<(&str, &str)> = own
        .iter()
        .filter(|e| !(before_a_gap(&own_text_lines, e.line) && gap_made(&own_text_lines, e)))
        .map(|e| (e.line_in(&own_text), e.what.as_str()))
        .filter(|(l, _)| !l.is_empty())
        .collect();
    let Some(first) = fresh.iter().find(|e| {
        let line = e.line_in(merged);
        !own_errors
            .iter()
            .any(|&(l, what)| l == line && excuses(what, &e.what))
    }) else {
        return Ok(excused_by_text(excused.line, excused.line_in(merged)));
    };
    let line = first.line_in(merged);
    Err(Error::new(
        ErrorCode::NeedsMoreContext,
        format!(
            "merged here, the snippet leaves a syntax error at line {} of the file (`{line}`: \
             {}) that neither the file nor the snippet's own text has, so a piece was most \
             likely placed at the wrong spot; show more unchanged lines around that place",
            first.line, first.what
        ),
    ))
}

/// Whether line `line` (from 1) of the snippet's own text is followed by a placeholder or by
/// nothing but blank lines: what comes after it in the file is not in the snippet.
fn before_a_gap(lines: &[&str], line: usize) -> bool {
    lines
        .iter()
        .skip(line)
        .find(|l| !l.trim().is_empty())
        .is_none_or(|l| is_placeholder(l, Presence::Absent))
}

/// Whether the snippet's own error `e` (on a line a gap follows) is one that gap may make: the
/// line opens a block or bracket the kept lines would finish, or closes one they opened (net
/// brackets, a trailing `:`, a placeholder indented under it), and the error is of the kind a
/// missing body or closer makes (an empty body, something not closed, a missing token, an
/// unexpected closer).
fn gap_made(lines: &[&str], e: &syntax::SyntaxError) -> bool {
    let Some(text) = e.line.checked_sub(1).and_then(|i| lines.get(i)) else {
        return false;
    };
    let code = crate::edit::lazy::lines::without_trailing_comment(text).unwrap_or(text);
    let under = lines
        .iter()
        .skip(e.line)
        .find(|l| !l.trim().is_empty())
        .is_some_and(|l| indent_of(l) > indent_of(text));
    let opens = crate::edit::lazy::units::depth_change(code).0 != 0
        || code.trim_end().ends_with(':')
        || under;
    let what = e.what.as_str();
    let kind = what.starts_with("an empty body")
        || what.starts_with("missing ")
        || what.ends_with(" here is not closed before the end of the file")
        || what
            .strip_prefix("unexpected ")
            .is_some_and(|t| crate::edit::lazy::lines::is_closer(t.trim_matches('"')));
    opens && kind
}

/// Whether the snippet's own error `alone` (parsed on its own) excuses the result's error
/// `merged` on a line of the same text: the same error; or a token the snippet has out of
/// place (`unexpected "for"`), which in the longer file error recovery may carry to its end
/// (`"for" here is not closed before the end of the file`). Not the other way round: a
/// fragment's open end is an error alone that reaches its end, and says nothing of a token
/// out of place in the result.
fn excuses(alone: &str, merged: &str) -> bool {
    alone == merged
        || alone.strip_prefix("unexpected ").is_some_and(|token| {
            merged.strip_suffix(" here is not closed before the end of the file") == Some(token)
        })
}

/// What a new error the snippet's own text shares says: on a line of code, the snippet's own
/// broken code; on a closer or a line that says little, a piece placed where it does not fit.
fn excused_by_text(line: usize, text: &str) -> Syntax {
    if crate::edit::lazy::lines::is_trivial(text) {
        Syntax::Misfit(line)
    } else {
        Syntax::Own(line)
    }
}

/// The snippet's text to parse on its own: dedented, and for PHP inside `<?php` (else the
/// grammar reads it as HTML, where nothing is an error).
fn own_text(lang: Lang, body: &str) -> String {
    let text = dedent(body);
    if lang == Lang::Php && !text.contains("<?php") {
        format!("<?php\n{text}")
    } else {
        text
    }
}

/// `text` with the indentation its lines share removed.
fn dedent(text: &str) -> String {
    let common = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    text.lines()
        .map(|l| l.get(common..).unwrap_or(l.trim_start()))
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clean_snippet_merged_into_broken_code_is_refused_naming_the_line() {
        let old = "fn a() {\n    1\n}\n\nfn b() {\n    2\n}\n";
        let broken = "fn a() {\n    1\n\nfn b() {\n    2\n}\n";
        let snippet = "fn b() {\n    2\n}\n";
        let e = check(Some("src/x.rs"), old, broken, snippet).unwrap_err();
        assert_eq!(e.code, ErrorCode::NeedsMoreContext);
        let at = syntax::new_errors("src/x.rs", Some(old), broken)[0].line;
        assert!(
            e.message.contains(&format!("at line {at} ")),
            "{}",
            e.message
        );
    }

    #[test]
    fn a_snippet_that_does_not_parse_alone_or_a_clean_result_is_let_through() {
        let old = "fn a() {\n    1\n}\n";
        let broken = "fn a() {\n    1 +\n}\n";
        // The snippet itself has the error: the review's warning shows it, the merge stands.
        assert!(check(Some("x.rs"), old, broken, "fn a() {\n    1 +\n}\n").is_ok());
        assert!(check(Some("x.rs"), old, "fn a() {\n    2\n}\n", "    2\n").is_ok());
        // Unknown language, or no path: nothing to parse with.
        assert!(check(Some("x.txt"), old, broken, "fn a() {}\n").is_ok());
        assert!(check(None, old, broken, "fn a() {}\n").is_ok());
    }

    #[test]
    fn an_error_elsewhere_in_the_snippet_does_not_excuse_a_new_one() {
        let old = "fn a() {\n    1\n}\n\nfn b() {\n    2\n}\n";
        let broken = "fn a() {\n    1\n\nfn b() {\n    2 +\n}\n";
        // The snippet's own error is on `2 +`; the file's new one is where `a` lost its brace.
        let e = check(Some("x.rs"), old, broken, "    2 +\n}\n").unwrap_err();
        assert_eq!(e.code, ErrorCode::NeedsMoreContext);
    }

    #[test]
    fn another_error_on_a_line_the_snippet_breaks_too_is_not_its_own() {
        let old = "def a():\n    try:\n        x()\n    except E:\n        pass\n";
        // The snippet ends on the handler's header (its body under a placeholder): alone it
        // has an error there, of another kind than the merge's stray `except`.
        let snippet = "    try:\n        x()\n    except E:\n";
        let broken = "def a():\n    x()\n    except E:\n        pass\n";
        let alone = syntax::errors_once(Lang::Python, &own_text(Lang::Python, snippet)).unwrap();
        let merged = syntax::new_errors("a.py", Some(old), broken);
        assert!(
            alone
                .iter()
                .any(|e| e.line_in(&dedent(snippet)) == "except E:"),
            "{alone:?}"
        );
        assert!(
            merged.iter().any(|e| e.line_in(broken) == "except E:"),
            "{merged:?}"
        );
        let e = check(Some("a.py"), old, broken, snippet).unwrap_err();
        assert_eq!(e.code, ErrorCode::NeedsMoreContext);
    }

    #[test]
    fn the_snippets_own_token_out_of_place_excuses_it_carried_to_the_files_end() {
        // Alone the snippet's broken `for` is `unexpected "for"`; in the file error recovery
        // carries it to the end (`"for" here is not closed ...`): the same error, its own.
        let old = "def first(items):\n    total = 0\n    for x in items:\n        total += x\n    return total\n";
        let snippet = "    total = 0\n    for x in items if x\n        total += x\n";
        let broken = old.replace("for x in items:", "for x in items if x");
        let merged = syntax::new_errors("a.py", Some(old), &broken);
        assert!(
            merged.iter().any(|e| e
                .what
                .ends_with("here is not closed before the end of the file")),
            "{merged:?}"
        );
        assert!(check(Some("a.py"), old, &broken, snippet).is_ok());
        assert!(excuses(
            "unexpected \"for\"",
            "\"for\" here is not closed before the end of the file"
        ));
        assert!(!excuses(
            "\"for\" here is not closed before the end of the file",
            "unexpected \"for\""
        ));
    }

    #[test]
    fn a_php_snippet_is_read_as_php_and_a_broken_file_is_not_judged() {
        let old = "<?php\nfunction a() {\n  return 1;\n}\n";
        // The snippet's own error, merged where it belongs: the merge stands. Without `<?php`
        // the snippet would be HTML, never in error, and excuse nothing.
        let own = "<?php\nfunction a() {\n  return 1 +;\n}\n";
        assert!(
            check(
                Some("a.php"),
                old,
                own,
                "function a() {\n  return 1 +;\n}\n"
            )
            .is_ok()
        );
        let broken = "<?php\nfunction a() {\n  return 1;\n";
        assert!(
            check(
                Some("a.php"),
                old,
                broken,
                "function a() {\n  return 1;\n}\n"
            )
            .is_err()
        );
        // The original was broken already: its errors and the new ones cannot be told apart.
        let was_broken = "<?php\nfunction a( {\n  return 1;\n}\n";
        assert!(check(Some("a.php"), was_broken, "<?php\nfunction a( {\n", "x").is_ok());
    }

    #[test]
    fn an_opener_a_placeholder_follows_excuses_no_empty_body_in_the_result() {
        // Alone, the snippet's `if` has no body: the placeholder keeps it. Merged where the
        // kept lines are not its body, the result has the same error on the same line: the
        // reading is wrong, not the snippet. The same error the snippet writes itself (code
        // right under the opener, or the snippet's own end) is still its own.
        let old = "def a(x):\n    if x:\n        y()\n    return x\n\n\ndef b(x):\n    return x\n";
        let broken = old.replace("def b(x):\n", "def b(x):\n    if x > 1:\n");
        assert!(!syntax::new_errors("a.py", Some(old), &broken).is_empty());
        for gap in ["    # ... existing code ...\n", "\n    # ...\n"] {
            let snippet = format!("def b(x):\n    if x > 1:\n{gap}");
            let e = check(Some("a.py"), old, &broken, &snippet).unwrap_err();
            assert_eq!(e.code, ErrorCode::NeedsMoreContext, "{snippet}");
        }
        assert!(
            check(
                Some("a.py"),
                old,
                &broken,
                "def b(x):\n    if x > 1:\n    return x\n"
            )
            .is_ok()
        );
        assert!(before_a_gap(&["if x:", "", "# ... existing code ..."], 1));
        assert!(before_a_gap(&["if x:", ""], 1));
        assert!(!before_a_gap(&["if x:", "return x"], 1));
    }

    #[test]
    fn a_gap_excuses_no_error_it_cannot_make() {
        // Syntax newer than the grammar (Rust 1.82's `impl use<>`) on a line a gap follows:
        // a signature whose body a placeholder keeps (`unexpected "->"` is no missing body),
        // and a one-line item at the snippet's end (it opens nothing for a gap to finish).
        // The merge is right; the error is the snippet's own, as anywhere else.
        let old = "fn a(x: u32) -> u32 {\n    x + 1\n}\n";
        let sig = "fn a(x: u32) -> impl use<> Iterator<Item = u32> {";
        let merged = old.replace("fn a(x: u32) -> u32 {", sig);
        assert!(!syntax::new_errors("x.rs", Some(old), &merged).is_empty());
        let snippet = format!("{sig}\n    // ... existing code ...\n}}\n");
        assert!(check(Some("x.rs"), old, &merged, &snippet).is_ok());
        let item = "fn b() -> impl use<> Iterator<Item = u8> { std::iter::empty() }";
        let merged = format!("{old}\n{item}\n");
        assert!(!syntax::new_errors("x.rs", Some(old), &merged).is_empty());
        let snippet = format!("// ... existing code ...\n}}\n\n{item}\n");
        assert!(check(Some("x.rs"), old, &merged, &snippet).is_ok());
        // An opener's missing body, and a closer whose opener is above the snippet, are what
        // a gap makes; a line that opens nothing is not.
        let e = |line: usize, what: &str| syntax::SyntaxError {
            line,
            column: 1,
            what: what.to_string(),
        };
        let empty = "an empty body: nothing indented under this line";
        assert!(gap_made(&["if x:", "# ..."], &e(1, empty)));
        assert!(gap_made(&["}", "// ..."], &e(1, "unexpected \"}\"")));
        assert!(gap_made(&["do |x|", "  # ..."], &e(1, "missing \"end\"")));
        assert!(!gap_made(
            &["fn a() -> impl use<> T {"],
            &e(1, "unexpected \"->\"")
        ));
        assert!(!gap_made(&["int _BitInt(24) x;"], &e(1, "missing \")\"")));
    }

    #[test]
    fn an_indented_snippet_is_parsed_at_its_own_depth() {
        assert_eq!(
            dedent("    def f():\n        pass\n\n"),
            "def f():\n    pass\n\n"
        );
    }
}
