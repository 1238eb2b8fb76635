//! Rule `licence` (check): the independent licence check: from the file, the snippet and the
//! result alone, every file line the result lost must hold a licence (shown as deleted,
//! between grounded anchors, replaced, moved), or the merge is refused naming the lines. Its
//! `AmongNew` ground also feeds [`Rule::AmongNew`]. Here a definition read as a rename of its
//! lookalike loses the old `return z`, which nothing licenses: the check refuses; without it
//! the old header is left with an empty body, which the reading check's syntax refusal
//! catches instead (guards overlap: the fixture shows which refusal is given).

use super::Rule;
use super::fixture::Fixture;

/// The fixture: a file and snippet the check refuses, and the syntax refusal without it.
pub(super) const FIXTURE: Fixture = Fixture {
    rule: Rule::Licence,
    path: "x.py",
    file: "def a():\n    pass\n\n\ndef helper(x):\n    y = x + 1\n    z = y * 2\n    return z\n\n\ndef z():\n    pass\n",
    snippet: "def helper2(x):\n    y = x + 1\n    z = y * 2\n    return z + 0\n",
    instruction: None,
};

#[test]
fn the_rules_own_refusal_is_given() {
    // With the check off, the old header is kept with its body gone: the reading check's
    // syntax refusal (a Python body left empty) catches that result instead.
    super::fixture::refused_otherwise(&FIXTURE, "does not license", "an empty body");
}
