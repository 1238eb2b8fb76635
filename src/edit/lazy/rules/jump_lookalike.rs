//! Rule `jump-lookalike` (place): a segment's sure anchors that jump over file lines (two
//! lines the snippet writes one after the other, far apart in the file), when the lines on one
//! side also pair with the lines beside the other side, one of them as its changed version,
//! are two readings — the jump deletes the lines between, the other changes one line — and
//! the merge asks. Without it the jump wins: a test's table edited in place takes the head of
//! another test's table and deletes everything between.

use super::Rule;
use super::fixture::Fixture;

/// The fixture: a file and snippet on which the merge differs with the rule off.
pub(super) const FIXTURE: Fixture = Fixture {
    rule: Rule::JumpLookalike,
    path: "t.py",
    file: "def test_a(self):\n    expected = {\n        (self.filename, first + 1): 1,\n        (self.filename, first + 2): 11,\n        (self.filename, first + 3): 10,\n    }\n    check(expected)\n\n\ndef test_b(self):\n    expected = {\n        (self.filename, first + 1): 1,\n        # counted twice before\n        (self.filename, first + 2): 12,\n        (self.filename, first + 3): 1,\n        (self.filename, called + 1): 10,\n    }\n    check(expected)\n",
    snippet: "# ... existing code ...\n    expected = {\n        (self.filename, first + 1): 1,\n        (self.filename, first + 2): 11,\n        (self.filename, first + 3): 1,\n        (self.filename, called + 1): 10,\n    }\n# ... existing code ...\n",
    instruction: None,
};

/// Guards overlap: with the rule off, `joined-blocks` refuses the jump (it deletes `test_b`'s
/// header and joins the two tests); with both off the jump is merged.
#[test]
fn the_rules_own_refusal_is_given() {
    super::fixture::refused_otherwise(&FIXTURE, "read two ways", "end one block and start another");
    let both_off = FIXTURE.merge(
        super::RuleSet::ALL_ON
            .without(Rule::JumpLookalike)
            .without(Rule::JoinedBlocks),
    );
    assert!(
        matches!(&both_off, Ok(c) if !c.contains("def test_b")),
        "{both_off:?}"
    );
}
