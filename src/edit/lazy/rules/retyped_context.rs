//! Rule `retyped-context` (align): a writer retypes the context lines it shows from what it
//! read, and it reads doc comments rendered: `` `name` `` as `name`, `&mdash;` as `—`, `’` as
//! `'`; and code it knows to be the same, such as `Formatter<'_>` as `Formatter` (the compiler
//! elides an anonymous lifetime alike) or a Python string's `'a'` as `"a"`. Such a line is the
//! file's line shown as it reads, not a new version of it: the merge keeps the file's bytes. A
//! snippet is sent to change something, though: when reading its retyped lines so leaves it
//! changing nothing, or nothing but blank lines (a commit that decodes a comment's entities,
//! or requotes strings beside a blank line), they are its change, and it
//! is merged so (`retyped::markup_dropped`, `retyped::lifetime_elided`, `retyped::quotes_retyped`,
//! `lazy::merge_unverified_with`) — except code marks left off, which are a retyping with the
//! rule off too (as before it): a snippet that only leaves them off changes nothing. A line
//! inside a doc comment's code fence is code, never retyped; marks added anywhere in a line
//! make it an edit.

use super::Rule;
use super::fixture::Fixture;

const FILE: &str = "impl Error {\n    /// The lowest level cause of this error &mdash; its cause's cause.\n    pub fn root_cause(&self) -> &Error {\n        self.chain().last().unwrap()\n    }\n\n    /// Whether the error is an `E`.\n    pub fn is<E>(&self) -> bool {\n        self.downcast_ref::<E>().is_some()\n    }\n}\n";

/// The fixture: a doc line retyped with its entity rendered, a new attribute below it.
pub(super) const FIXTURE: Fixture = Fixture {
    rule: Rule::RetypedContext,
    path: "error.rs",
    file: FILE,
    snippet: "impl Error {\n    /// The lowest level cause of this error — its cause's cause.\n    #[must_use]\n    pub fn root_cause(&self) -> &Error {\n// ... existing code ...\n",
    instruction: None,
};

#[test]
fn the_merge_differs_with_the_rule_off() {
    FIXTURE.differs();
}

/// On, the doc line keeps its entity and the attribute is added; off, the entity is lost.
#[test]
fn a_comment_retyped_rendered_keeps_the_files_text() {
    let want = FILE.replace(
        "cause.\n    pub fn root_cause",
        "cause.\n    #[must_use]\n    pub fn root_cause",
    );
    assert_eq!(FIXTURE.merge(super::RuleSet::ALL_ON), Ok(want.clone()));
    let off = FIXTURE.merge(super::RuleSet::ALL_ON.without(Rule::RetypedContext));
    assert_eq!(off, Ok(want.replace("&mdash;", "—")));
}

/// A snippet whose only change is the rendering (a commit decoding the entities) would change
/// nothing read so: its retyped lines are its change.
#[test]
fn a_snippet_whose_only_change_is_the_rendering_is_merged_as_that_change() {
    let f = Fixture {
        snippet: "impl Error {\n    /// The lowest level cause of this error — its cause's cause.\n    pub fn root_cause(&self) -> &Error {\n// ... existing code ...\n",
        ..FIXTURE
    };
    assert_eq!(
        f.merge(super::RuleSet::ALL_ON),
        Ok(FILE.replace("&mdash;", "—"))
    );
}

/// Code retyped without its anonymous lifetime is the file's line too.
#[test]
fn a_signature_retyped_without_its_anonymous_lifetime_keeps_the_files_text() {
    let file = "impl fmt::Display for Error {\n    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {\n        write!(f, \"failed\")\n    }\n}\n";
    let f = Fixture {
        path: "display.rs",
        file,
        snippet: "impl fmt::Display for Error {\n    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {\n        write!(f, \"the operation failed\")\n    }\n}\n",
        ..FIXTURE
    };
    let want = file.replace("\"failed\"", "\"the operation failed\"");
    assert_eq!(f.merge(super::RuleSet::ALL_ON), Ok(want.clone()));
    let off = f.merge(super::RuleSet::ALL_ON.without(Rule::RetypedContext));
    assert_ne!(
        off,
        Ok(want),
        "with the rule off the lifetime is dropped or the merge asks"
    );
}

/// In Python `'a'` and `"a"` are one string: a context line retyped with the other quotes is
/// the file's line (in Rust or C, where `'a'` is a character, it is not).
#[test]
fn a_python_line_retyped_with_other_quotes_keeps_the_files_text() {
    let file = "def convert(value, conversion):\n    if conversion == 's':\n        return str(value)\n    elif conversion == 'a':\n        return ascii(value)\n    raise ValueError('bad {0}'.format(conversion))\n";
    let f = Fixture {
        path: "convert.py",
        file,
        snippet: "# ... existing code ...\n    elif conversion == \"a\":\n        return ascii(value)\n    raise ValueError(f\"bad {conversion!r}\")\n",
        ..FIXTURE
    };
    let want = file.replace(
        "raise ValueError('bad {0}'.format(conversion))",
        "raise ValueError(f\"bad {conversion!r}\")",
    );
    assert_eq!(f.merge(super::RuleSet::ALL_ON), Ok(want.clone()));
    let off = f.merge(super::RuleSet::ALL_ON.without(Rule::RetypedContext));
    assert_eq!(off, Ok(want.replace("== 'a'", "== \"a\"")));
}

/// Entities turned into code marks (`&lt;T&gt;` → `` `<T>` ``) beside another change: fewer
/// marks in all, but marks added are an edit, not a retyping; the line changes.
#[test]
fn entities_turned_into_code_marks_are_an_edit() {
    let file = "use std::fmt;\n\n/// Returns the value &lt;T&gt; if set.\npub fn get<T>(x: Option<T>) -> Option<T> {\n    x\n}\n";
    let f = Fixture {
        path: "get.rs",
        file,
        snippet: "// ... existing code ...\n/// Returns the value `<T>` if set.\n#[must_use]\npub fn get<T>(x: Option<T>) -> Option<T> {\n// ... existing code ...\n",
        ..FIXTURE
    };
    let want = file.replace(
        "/// Returns the value &lt;T&gt; if set.\n",
        "/// Returns the value `<T>` if set.\n#[must_use]\n",
    );
    assert_eq!(f.merge(super::RuleSet::ALL_ON), Ok(want));
}

/// A doc test's line inside its code fence is code that reads as written: an expected value
/// changed from `"a &amp; b"` to `"a & b"` beside the function's change is the edit.
#[test]
fn a_doc_test_line_inside_its_fence_is_code_not_rendered_prose() {
    let file = "/// Escapes `s` for HTML.\n///\n/// ```\n/// assert_eq!(escape(\"a & b\"), \"a &amp; b\");\n/// ```\npub fn escape(s: &str) -> String {\n    s.replace('&', \"&amp;\")\n}\n";
    let f = Fixture {
        path: "escape.rs",
        file,
        snippet: "/// Escapes `s` for HTML.\n///\n/// ```\n/// assert_eq!(escape(\"a & b\"), \"a & b\");\n/// ```\npub fn escape(s: &str) -> String {\n    s.to_string()\n}\n",
        ..FIXTURE
    };
    let want = file
        .replace("\"a &amp; b\");", "\"a & b\");")
        .replace("s.replace('&', \"&amp;\")", "s.to_string()");
    assert_eq!(f.merge(super::RuleSet::ALL_ON), Ok(want));
}

/// A snippet that only leaves a comment's code marks off changes nothing, as before the rule:
/// a writer retypes them so, and merged again with the rule off it would strip the file's
/// marks unasked. (Entities decoded, with nothing else, are the change: see above.)
#[test]
fn a_snippet_that_only_leaves_code_marks_off_changes_nothing() {
    changes_nothing(
        "/// Returns `x` when `y` is set.",
        "/// Returns x when y is set.",
    );
}

/// Assert that a snippet showing `get` under doc line `shown`, where the file has `doc`, is
/// refused `APPLY_NOOP`.
fn changes_nothing(doc: &str, shown: &str) {
    let body = "pub fn get(x: u8, y: bool) -> Option<u8> {\n";
    let file = format!("use std::fmt;\n\n{doc}\n{body}    y.then_some(x)\n}}\n");
    let snippet = format!("// ... existing code ...\n{shown}\n{body}// ... existing code ...\n");
    let hints = crate::edit::Hints {
        path: Some("get.rs"),
        instruction: None,
    };
    let merged = crate::edit::lazy::merge_with(&file, &snippet, &hints, super::RuleSet::ALL_ON)
        .map(|m| m.content)
        .map_err(|e| e.code);
    assert_eq!(merged, Err(crate::edit::ErrorCode::ApplyNoop), "{shown}");
}

/// A comment retyped with its entities rendered, and nothing else: with the rule off its line
/// is too unlike the file's to be its new version, and that reading writes it beside the old
/// one — a doubled comment, not its change. The snippet changes nothing.
#[test]
fn a_retyped_comment_too_unlike_to_be_a_change_is_not_written_twice() {
    changes_nothing(
        "/// &lt;a&gt; &amp;&amp; &lt;b&gt; &mdash; &quot;x&quot;",
        "/// <a> && <b> — \"x\"",
    );
}

/// A preprocessor line looks like a `#` comment, but its string is code: an entity decoded
/// there (`"&amp;"` → `"&"`) beside a new line is the edit.
#[test]
fn a_preprocessor_lines_string_is_code_not_a_comment() {
    let file = "#include <stdio.h>\n\n#define AMP \"&amp;\"\n\nint main(void) {\n    puts(AMP);\n    return 0;\n}\n";
    let f = Fixture {
        path: "amp.c",
        file,
        snippet: "#include <stdio.h>\n\n#define AMP \"&\"\n#define LT \"<\"\n// ... existing code ...\n",
        ..FIXTURE
    };
    let want = file.replace(
        "#define AMP \"&amp;\"\n",
        "#define AMP \"&\"\n#define LT \"<\"\n",
    );
    assert_eq!(f.merge(super::RuleSet::ALL_ON), Ok(want));
}

/// A commit that requotes strings and adds a blank line: read with its requoted lines as the
/// file's, the snippet would change a blank line alone; its requoted lines are its change.
#[test]
fn requoted_lines_beside_a_blank_line_alone_are_the_change() {
    let file = "import os\n\nHOOKS = ['response']\n\n\ndef default_hooks():\n    return {e: [] for e in HOOKS}\n\n# Only 'response' is used.\n";
    let f = Fixture {
        path: "hooks.py",
        file,
        snippet: "import os\n\nHOOKS = [\"response\"]\n\n\ndef default_hooks():\n    return {e: [] for e in HOOKS}\n\n\n# Only 'response' is used.\n",
        ..FIXTURE
    };
    let want = file
        .replace("['response']", "[\"response\"]")
        .replace("\n\n# Only", "\n\n\n# Only");
    assert_eq!(f.merge(super::RuleSet::ALL_ON), Ok(want));
}
