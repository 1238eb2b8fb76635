//! Rule `gap-depth` (align): a placeholder written inside a body, followed by a shallower
//! definition, either stands for the definitions between or deletes them; the merge asks.
//! Without it the definitions between are deleted.

use super::Rule;
use super::fixture::Fixture;

/// The fixture: a file and snippet on which the merge differs with the rule off.
pub(super) const FIXTURE: Fixture = Fixture {
    rule: Rule::GapDepth,
    path: "x.py",
    file: "class A:\n    def run(self):\n        one()\n        two()\n        return 3\n\n\ndef gone(x):\n    return x\n\n\nclass B:\n    pass\n",
    snippet: "        # ... existing code ...\n\n\nclass B:\n    x = 1\n",
    instruction: None,
};

#[test]
fn the_merge_differs_with_the_rule_off() {
    FIXTURE.differs();
}
