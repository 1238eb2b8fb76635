//! Rule `edge-lookalike` (align): an edge whose outermost context lines also stand in the
//! file nearer the pin, when the alignment changed file lines to reach the farther copy, has
//! two readings — the new lines replace the lookalike lines between, or they are inserted and
//! nothing goes — and the merge takes the nearer one, which changes and deletes nothing (what
//! it keeps the diff shows). Without it the farther copy wins (it pairs more lines): a new
//! doctest example written after an old one whose lines it repeats overwrites it.

use super::Rule;
use super::fixture::Fixture;

/// The fixture: a file and snippet on which the merge differs with the rule off.
pub(super) const FIXTURE: Fixture = Fixture {
    rule: Rule::EdgeLookalike,
    path: "t.py",
    file: "\"\"\"\nMissing keys:\n\n    >>> table[\"x\"]\n    Traceback (most recent call last):\n      ...\n    KeyError: missing key in table\n\n    >>> table[\"y\"]\n    Traceback (most recent call last):\n      ...\n    KeyError: missing key in table\n\nDefault values:\n\n    >>> table.get(\"x\", 0)\n    0\n\"\"\"\n",
    snippet: "# ... existing code ...\n      ...\n    KeyError: missing key in table\n\nEmpty keys too:\n\n    >>> table[\"\"]\n    Traceback (most recent call last):\n      ...\n    KeyError: missing key in tables\n\nDefault values:\n# ... existing code ...\n",
    instruction: None,
};

#[test]
fn the_merge_differs_with_the_rule_off() {
    FIXTURE.differs();
}
