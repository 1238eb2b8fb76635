//! Rule `split-conflicts` (place): a segment whose unique anchors name two places in the
//! wrong order (the agent left out a placeholder between two edits) is split at a blank line
//! between them and each part placed on its own. Without it the segment is refused.

use super::Rule;
use super::fixture::Fixture;

/// The fixture: a file and snippet on which the merge differs with the rule off.
pub(super) const FIXTURE: Fixture = Fixture {
    rule: Rule::SplitConflicts,
    path: "x.rs",
    file: "fn a() {\n    one();\n    two();\n}\n\nfn b() {\n    three();\n    four();\n}\n",
    snippet: "    three();\n    four();\n    five();\n\n    one();\n    two();\n    zero();\n",
    instruction: None,
};

#[test]
fn the_merge_differs_with_the_rule_off() {
    FIXTURE.differs();
}
