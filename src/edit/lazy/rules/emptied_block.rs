//! Rule `emptied-block` (check): a new line that closes one branch and opens the next
//! (`} else if (…) {`), written right under a file header at its depth that the snippet does
//! not show, takes that header's body and leaves it an empty block — legal code, which no
//! syntax check sees. The new line is most likely the old header rewritten further than a
//! changed line's similarity reaches (a condition replaced by a helper's call). Two readings,
//! one destructive: the merge asks (`check/emptied.rs`).

use super::Rule;
use super::fixture::Fixture;

const FILE: &str = "int classify(int c) {\n    int kind = 0;\n    if (c == ' ') {\n        kind = 1;\n    } else if (c == '\\n' || c == '\\r' || c == 0x2028 || c == 0x2029) {\n        kind = 2;\n        lines++;\n    } else {\n        kind = 3;\n    }\n    return kind;\n}\n";

/// The fixture: the branch's condition replaced by a helper's call, the snippet showing the
/// new header and the body under it.
pub(super) const FIXTURE: Fixture = Fixture {
    rule: Rule::EmptiedBlock,
    path: "classify.c",
    file: FILE,
    snippet: "// ... existing code ...\n    } else if (is_line_end(c)) {\n        kind = 2;\n        lines++;\n// ... existing code ...\n",
    instruction: None,
};

#[test]
fn the_merge_differs_with_the_rule_off() {
    FIXTURE.differs();
}

/// With the rule off the old header stays with an empty block above the new one; with it on
/// the merge asks, naming the header and both readings.
#[test]
fn the_refusal_names_the_header_and_both_readings() {
    let off = FIXTURE.merge(super::RuleSet::ALL_ON.without(Rule::EmptiedBlock));
    assert!(
        matches!(&off, Ok(c) if c.contains("0x2029) {\n    } else if (is_line_end(c)) {")),
        "the category, with the rule off: {off:?}"
    );
    let Err((code, message)) = FIXTURE.merge(super::RuleSet::ALL_ON) else {
        panic!("a new branch line emptying the old one's block must be refused");
    };
    assert_eq!(code, crate::edit::ErrorCode::NeedsMoreContext, "{message}");
    assert!(
        message.contains("snippet line 2 goes right under file line 5"),
        "{message}"
    );
}

/// Shown with the line above it, the old header is replaced; shown as a sibling after the old
/// branch's end, the new branch is added: both merged.
#[test]
fn a_rewritten_header_shown_with_its_neighbour_or_a_new_branch_is_merged() {
    let replaced = Fixture {
        snippet: "// ... existing code ...\n        kind = 1;\n    } else if (is_line_end(c)) {\n        kind = 2;\n        lines++;\n// ... existing code ...\n",
        ..FIXTURE
    };
    let want = FILE.replace(
        "} else if (c == '\\n' || c == '\\r' || c == 0x2028 || c == 0x2029) {",
        "} else if (is_line_end(c)) {",
    );
    assert_eq!(replaced.merge(super::RuleSet::ALL_ON), Ok(want));
    let added = Fixture {
        snippet: "// ... existing code ...\n        kind = 2;\n        lines++;\n    } else if (c == '\\t') {\n        kind = 4;\n    } else {\n// ... existing code ...\n",
        ..FIXTURE
    };
    let want = FILE.replace(
        "        lines++;\n",
        "        lines++;\n    } else if (c == '\\t') {\n        kind = 4;\n",
    );
    assert_eq!(added.merge(super::RuleSet::ALL_ON), Ok(want));
}

/// A comment written above the new header does not hide it: the old branch would still be
/// left empty under it, so the merge asks.
#[test]
fn a_comment_above_the_new_header_is_refused_too() {
    let f = Fixture {
        snippet: "// ... existing code ...\n    /* any line end */\n    } else if (is_line_end(c)) {\n        kind = 2;\n        lines++;\n// ... existing code ...\n",
        ..FIXTURE
    };
    let Err((code, message)) = f.merge(super::RuleSet::ALL_ON) else {
        panic!("a commented new branch line emptying the old one's block must be refused");
    };
    assert_eq!(code, crate::edit::ErrorCode::NeedsMoreContext, "{message}");
    assert!(
        message.contains("snippet line 3 goes right under file line 5"),
        "{message}"
    );
}

/// The keyword form (Ruby's `elsif`, whose empty branch is legal code): the same two readings,
/// the same question.
#[test]
fn a_rewritten_keyword_branch_is_refused_too() {
    let f = Fixture {
        path: "classify.rb",
        file: "def classify(c)\n  kind = 0\n  if c == ' '\n    kind = 1\n  elsif c == \"\\n\" || c == \"\\r\" || c == \"\\u2028\" || c == \"\\u2029\"\n    kind = 2\n    @lines += 1\n  else\n    kind = 3\n  end\n  kind\nend\n",
        snippet: "# ... existing code ...\n  elsif line_end?(c)\n    kind = 2\n    @lines += 1\n# ... existing code ...\n",
        ..FIXTURE
    };
    let off = f.merge(super::RuleSet::ALL_ON.without(Rule::EmptiedBlock));
    assert!(
        matches!(&off, Ok(c) if c.contains("\\u2029\"\n  elsif line_end?(c)\n")),
        "the category, with the rule off: {off:?}"
    );
    let Err((code, message)) = f.merge(super::RuleSet::ALL_ON) else {
        panic!("a new `elsif` emptying the old one's branch must be refused");
    };
    assert_eq!(code, crate::edit::ErrorCode::NeedsMoreContext, "{message}");
    assert!(
        message.contains("snippet line 2 goes right under file line 5"),
        "{message}"
    );
}
