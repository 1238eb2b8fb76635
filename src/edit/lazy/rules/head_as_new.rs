//! Rule `head-as-new` (check): a snippet shows the file's own lines next to a placeholder, so
//! the first line of a segment, right under one, is most likely a line of the file. A merge
//! that writes it as new code in front of the file lines it keeps, though the file has that
//! line where the segment goes, takes the file's lines after it into the new code: a new `if`
//! written after a sibling that ends alike (`return 0.0;`, `}`) takes the sibling's ending as
//! its own, and the sibling is left without it; a new closer under the placeholder closes a
//! block of the file in its middle. One reading of two — the line is the file's, the new code
//! goes after it — so the merge asks. (Also when the segment changes file lines before the
//! line it keeps first and the file has its first line anywhere, or when that line is the one
//! new line before the line it keeps first and the file has it anywhere: context copied from
//! another place as much as a new line.)

use super::Rule;
use super::fixture::Fixture;

const FILE: &str = "fn area(s: &Shape) -> f64 {\n    let w = s.width();\n    if w < 0.0 {\n        log::warn!(\"negative width\");\n        return 0.0;\n    }\n    w * s.height()\n}\n";

/// The fixture: a new check written after a sibling that ends alike, the snippet starting
/// with the sibling's closer.
pub(super) const FIXTURE: Fixture = Fixture {
    rule: Rule::HeadAsNew,
    path: "shape.rs",
    file: FILE,
    snippet: "// ... existing code ...\n    }\n    if s.height() < 0.0 {\n        log::warn!(\"negative height\");\n        return 0.0;\n    }\n    w * s.height()\n}\n",
    instruction: None,
};

#[test]
fn the_merge_differs_with_the_rule_off() {
    FIXTURE.differs();
}

#[test]
fn the_refusal_names_both_readings() {
    let Err((code, message)) = FIXTURE.merge(super::RuleSet::ALL_ON) else {
        panic!("a first line under a placeholder read as new code must be refused");
    };
    assert_eq!(code, crate::edit::ErrorCode::NeedsMoreContext, "{message}");
    assert!(
        message.contains("snippet line 2 stands right under a placeholder"),
        "{message}"
    );
    assert!(message.contains("the file's own line 6"), "{message}");
}

/// The snippet starts with the sibling's last two lines: merged with the rule off, the new
/// check takes the sibling's `return` and changes its warning into its own, and the sibling
/// loses its warning line.
#[test]
fn a_sibling_that_ends_alike_keeps_its_lines() {
    let snippet = "// ... existing code ...\n        return 0.0;\n    }\n    if s.height() < 0.0 {\n        log::warn!(\"negative height\");\n        return 0.0;\n    }\n    w * s.height()\n}\n";
    let f = Fixture { snippet, ..FIXTURE };
    let off = f.merge(super::RuleSet::ALL_ON.without(Rule::HeadAsNew));
    assert!(
        matches!(&off, Ok(c) if !c.contains("negative width")),
        "the category, with the rule off: {off:?}"
    );
    let on = f.merge(super::RuleSet::ALL_ON);
    assert!(
        matches!(&on, Err((_, m)) if m.contains("snippet line 2")),
        "{on:?}"
    );
}

/// A function appended after the file's last one, written under a placeholder with the
/// closer it follows: whichever `}` the merge takes for the file's, the text is the same, and
/// it is merged.
#[test]
fn an_appended_function_after_the_last_closer_is_merged() {
    let f = Fixture {
        file: "fn one() -> u32 {\n    1\n}\n",
        snippet: "// ... existing code ...\n}\n\nfn two() -> u32 {\n    2\n}\n",
        path: "n.rs",
        ..FIXTURE
    };
    assert_eq!(
        f.merge(super::RuleSet::ALL_ON),
        Ok("fn one() -> u32 {\n    1\n}\n\nfn two() -> u32 {\n    2\n}\n".to_string())
    );
}

/// New code whose first line copies one the file has elsewhere (a decorator), written under a
/// placeholder above a line the file holds once: the copy is not where the segment goes, and
/// nothing of the file changes there. Merged.
#[test]
fn new_code_starting_with_a_line_the_file_has_elsewhere_is_merged() {
    let file = "class T:\n    @slow\n    def test_a(self):\n        run(1)\n\n    # the examples below\n    def test_b(self):\n        run(2)\n";
    let snippet = "# ... existing code ...\n    @slow\n    def test_c(self):\n        run(3)\n\n    # the examples below\n# ... existing code ...\n";
    let want = "class T:\n    @slow\n    def test_a(self):\n        run(1)\n\n    @slow\n    def test_c(self):\n        run(3)\n\n    # the examples below\n    def test_b(self):\n        run(2)\n";
    let f = Fixture {
        file,
        snippet,
        path: "t.py",
        ..FIXTURE
    };
    assert_eq!(f.merge(super::RuleSet::ALL_ON), Ok(want.to_string()));
}

/// The snippet's first line matched as the file's own: merged, the sibling whole.
#[test]
fn a_first_line_matched_as_the_files_is_merged() {
    let snippet = "// ... existing code ...\n        log::warn!(\"negative width\");\n        return 0.0;\n    }\n    if s.height() < 0.0 {\n        return 0.0;\n    }\n// ... existing code ...\n";
    let want = "fn area(s: &Shape) -> f64 {\n    let w = s.width();\n    if w < 0.0 {\n        log::warn!(\"negative width\");\n        return 0.0;\n    }\n    if s.height() < 0.0 {\n        return 0.0;\n    }\n    w * s.height()\n}\n";
    let f = Fixture { snippet, ..FIXTURE };
    assert_eq!(f.merge(super::RuleSet::ALL_ON), Ok(want.to_string()));
}

/// A new decorated test written above a sibling that has a comment over its own attribute:
/// the new item is balanced, takes none of the file's lines, and is merged (its first line's
/// copy, the sibling's `#[test]`, is kept after the comment).
#[test]
fn a_new_item_above_a_commented_sibling_is_merged() {
    let file = "mod tests {\n    #[test]\n    fn name_is_kept() {\n        assert_eq!(name(), \"a\");\n    }\n\n    /// The port falls back to 80.\n    #[test]\n    fn port_defaults() {\n        assert_eq!(port(), 80);\n    }\n}\n";
    let snippet = "// ... existing code ...\n    #[test]\n    fn host_is_local() {\n        assert_eq!(host(), \"localhost\");\n    }\n\n    /// The port falls back to 80.\n    #[test]\n    fn port_defaults() {\n// ... existing code ...\n";
    let want = file.replace(
        "    /// The port",
        "    #[test]\n    fn host_is_local() {\n        assert_eq!(host(), \"localhost\");\n    }\n\n    /// The port",
    );
    let f = Fixture {
        file,
        snippet,
        path: "cfg.rs",
        ..FIXTURE
    };
    assert_eq!(f.merge(super::RuleSet::ALL_ON), Ok(want));
}

/// A snippet whose first line, under a placeholder, the file has in two functions, over
/// lines the file has once in a third: read as new code, that line is written alone above
/// the third function's loop, and the function the snippet changes keeps its old loop. It may
/// as well be the file's line, the loop new code under it: two readings, refused.
#[test]
fn a_lone_line_the_file_has_elsewhere_above_kept_lines_is_refused() {
    let file = "static void reset_all(Scanner *s) {\n    s->depth = 0;\n    for (uint32_t i = 0; i < s->n; i++) {\n        reset(&s->items[i]);\n    }\n}\n\nvoid *create(void *payload) {\n    Scanner *s = (Scanner *)payload;\n    s->n = 0;\n    return s;\n}\n\nvoid destroy(void *payload) {\n    Scanner *s = (Scanner *)payload;\n    for (size_t i = 0; i < s->n; i++) {\n        free(s->items[i].word);\n    }\n    free(s);\n}\n";
    let snippet = "// ...\n    Scanner *s = (Scanner *)payload;\n    for (uint32_t i = 0; i < s->n; i++) {\n        reset(&s->items[i]);\n    }\n// ...\n";
    let f = Fixture {
        file,
        snippet,
        path: "scanner.c",
        ..FIXTURE
    };
    super::fixture::refused_where_off_merges(
        &f,
        |c| c.contains("s->depth = 0;\n    Scanner *s"),
        "writes it as the one new line before file line 3",
    );
}
