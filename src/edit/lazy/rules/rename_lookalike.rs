//! Rule `rename-lookalike` (place): when a segment's only unique lines are those of a new
//! definition, that definition reads as a rename of the old one it repeats (only its name
//! changed), and those lines place the segment. Without it nothing places the segment.

use super::Rule;
use super::fixture::Fixture;

/// The fixture: a file and snippet on which the merge differs with the rule off.
pub(super) const FIXTURE: Fixture = Fixture {
    rule: Rule::RenameLookalike,
    path: "x.py",
    file: "def a():\n    pass\n\n\ndef helper(x):\n    y = x + 1\n    z = y * 2\n    return z\n\n\ndef z():\n    pass\n",
    snippet: "def helper2(x):\n    y = x + 1\n    z = y * 2\n    return z + 0\n",
    instruction: None,
};

#[test]
fn the_merge_differs_with_the_rule_off() {
    FIXTURE.differs();
}
