//! Rule `edge-copied` (place): a segment that no line of its own places, and that the snippet
//! opens (ends) with no placeholder, goes at the file's start (end) as new code — unless it
//! was copied from within the file: every line it shows is one the file has (a lone `#endif`
//! or `}` shown as context, which would be written again at the top), or the snippet opens
//! with a blank line where the file's first line is not blank, so the file goes on before
//! what it shows. Then nothing says where it goes, and the merge asks. (A blank line a snippet
//! ends with says nothing: writers leave one before their closing fence.)

use super::Rule;
use super::fixture::Fixture;

const FILE: &str = "#ifndef SHAPES_H\n#define SHAPES_H\n\n#include <stddef.h>\n\n#ifdef DEBUG\nint debug_level(void);\n#endif\n\nsize_t shape_count(void);\n\n#endif\n";

/// The fixture: new declarations under a blank line copied from the middle of the file, the
/// snippet opening with that blank line and no placeholder.
pub(super) const FIXTURE: Fixture = Fixture {
    rule: Rule::EdgeCopied,
    path: "shapes.h",
    file: FILE,
    snippet: "\n/* Forward declaration */\nstruct shape;\n\n// ... existing code ...\nsize_t shape_count(void);\n\n#endif\n",
    instruction: None,
};

#[test]
fn the_merge_differs_with_the_rule_off() {
    FIXTURE.differs();
}

/// With the rule off the declarations land above the include guard.
#[test]
fn new_lines_under_a_copied_blank_line_are_not_written_above_the_file() {
    super::fixture::refused_where_off_merges(
        &FIXTURE,
        |c| c.starts_with("/* Forward declaration */"),
        "hold no line from the file, so nothing says where they go (the snippet opens with a \
         blank line, so the file goes on before it)",
    );
}

/// A snippet opening with context the file has twice (`#endif`): with the rule off it is
/// written again at the top of the file.
#[test]
fn context_that_places_nowhere_is_not_new_code_at_the_top() {
    let f = Fixture {
        snippet: "#endif\n\n// ... existing code ...\nsize_t shape_count(void);\nsize_t shape_area(const struct shape *s);\n\n#endif\n",
        ..FIXTURE
    };
    super::fixture::refused_where_off_merges(
        &f,
        |c| c.starts_with("#endif\n"),
        "`#endif` occurs 2 times",
    );
}

/// New code a snippet ends with, a blank line after it, still goes at the file's end: a
/// writer leaves a blank line before its closing fence.
#[test]
fn new_code_ending_with_a_blank_line_is_appended() {
    let f = Fixture {
        snippet: "// ... existing code ...\nvoid reset_all(void);\n\n",
        ..FIXTURE
    };
    assert_eq!(
        f.merge(super::RuleSet::ALL_ON),
        Ok(format!("{FILE}\nvoid reset_all(void);\n"))
    );
}

/// New code the snippet opens (ends) with, with no blank line before (after) it, still goes
/// at the file's start (end).
#[test]
fn new_code_at_an_edge_written_as_such_is_merged() {
    let top = Fixture {
        snippet: "/* Shapes and their measures. */\n// ... existing code ...\n",
        ..FIXTURE
    };
    assert_eq!(
        top.merge(super::RuleSet::ALL_ON),
        Ok(format!("/* Shapes and their measures. */\n\n{FILE}"))
    );
    let end = Fixture {
        snippet: "// ... existing code ...\n/* end of shapes.h */\n",
        ..FIXTURE
    };
    assert_eq!(
        end.merge(super::RuleSet::ALL_ON),
        Ok(format!("{FILE}\n/* end of shapes.h */\n"))
    );
}
