//! Rule `rename-lookalike` (place): when a segment's only unique lines are those of a new
//! definition, that definition reads as a rename of the old one it repeats (only its name
//! changed), and those lines place the segment. Here the placed reading loses the old
//! `return z` unlicensed, so the licence check refuses it; without the rule nothing places
//! the segment and the merge refuses saying so: the rule decides which refusal is given.

use super::Rule;
use super::fixture::Fixture;

/// The fixture: a file and snippet placed with the rule (then refused by the licence check), unplaced without.
pub(super) const FIXTURE: Fixture = Fixture {
    rule: Rule::RenameLookalike,
    path: "x.py",
    file: "def a():\n    pass\n\n\ndef helper(x):\n    y = x + 1\n    z = y * 2\n    return z\n\n\ndef z():\n    pass\n",
    snippet: "def helper2(x):\n    y = x + 1\n    z = y * 2\n    return z + 0\n",
    instruction: None,
};

#[test]
fn the_rules_own_refusal_is_given() {
    super::fixture::refused_otherwise(&FIXTURE, "does not license", "hold no line that places");
}
