//! Rule `instruction-removes` (read): a definition the instruction says to remove ("remove the
//! helper function"), which no segment shows or touches, is deleted whole. Without it only
//! `remove NAME` lines in the snippet delete definitions.

use super::Rule;
use super::fixture::Fixture;

/// The fixture: a file and snippet on which the merge differs with the rule off.
pub(super) const FIXTURE: Fixture = Fixture {
    rule: Rule::InstructionRemoves,
    path: "x.py",
    file: "import os\n\n\ndef first():\n    a = 1\n    b = 2\n    c = 3\n    return a + b + c\n\n\ndef helper(x):\n    return x * 2\n\n\ndef last():\n    return helper(first())\n",
    snippet: "# ... existing code ...\n    c = 3\n    d = 4\n    return a + b + c\n# ... existing code ...\n",
    instruction: Some("add d and remove the helper function"),
};

#[test]
fn the_merge_differs_with_the_rule_off() {
    FIXTURE.differs();
}
