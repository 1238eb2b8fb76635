//! Rule `licence` (check): the independent licence check: from the file, the snippet and the
//! result alone, every file line the result lost must hold a licence (shown as deleted,
//! between grounded anchors, replaced, moved), or the merge is refused naming the lines. Its
//! `AmongNew` ground also feeds [`Rule::AmongNew`]. Here a definition read as a rename of its
//! lookalike loses the old `return z`, which nothing licenses: the check refuses; without it
//! the line's deletion is written.

use super::Rule;
use super::fixture::Fixture;

/// The fixture: a file and snippet on which the merge differs with the rule off.
pub(super) const FIXTURE: Fixture = Fixture {
    rule: Rule::Licence,
    path: "x.py",
    file: "def a():\n    pass\n\n\ndef helper(x):\n    y = x + 1\n    z = y * 2\n    return z\n\n\ndef z():\n    pass\n",
    snippet: "def helper2(x):\n    y = x + 1\n    z = y * 2\n    return z + 0\n",
    instruction: None,
};

#[test]
fn the_merge_differs_with_the_rule_off() {
    FIXTURE.differs();
    let refused = FIXTURE.merge(super::RuleSet::ALL_ON);
    assert!(
        matches!(&refused, Err((_, m)) if m.contains("does not license")),
        "the licence check's own refusal: {refused:?}"
    );
    let written = FIXTURE.merge(super::RuleSet::ALL_ON.without(Rule::Licence));
    assert!(
        matches!(&written, Ok(c) if !c.contains("    return z\n")),
        "the deletion is written: {written:?}"
    );
}
