//! Rule `instruction-place` (read): a segment no file line places goes where the instruction
//! says ("after X", "in X", "at the end"). Without it, new code the snippet shows between two
//! placeholders has no place and is refused.

use super::Rule;
use super::fixture::Fixture;

/// The fixture: a file and snippet on which the merge differs with the rule off.
pub(super) const FIXTURE: Fixture = Fixture {
    rule: Rule::InstructionPlace,
    path: "x.py",
    file: "import os\n\n\ndef first():\n    a = 1\n    b = 2\n    c = 3\n    return a + b + c\n\n\ndef helper(x):\n    return x * 2\n\n\ndef last():\n    return helper(first())\n",
    snippet: "# ... existing code ...\ndef tail():\n    pass\n# ... existing code ...\n",
    instruction: Some("append it at the end of the file"),
};

#[test]
fn the_merge_differs_with_the_rule_off() {
    FIXTURE.differs();
}
