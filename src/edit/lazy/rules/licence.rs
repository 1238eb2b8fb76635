//! Rule `licence` (check): the independent licence check: from the file, the snippet and the
//! result alone, every file line the result lost must hold a licence (shown as deleted,
//! between grounded anchors, replaced, moved), or the merge is refused naming the lines. Its
//! `AmongNew` ground feeds [`Rule::AmongNew`]: without the check the old body under a header
//! the new function repeats goes.

use super::Rule;
use super::fixture::Fixture;

/// The fixture: a file and snippet on which the merge differs with the rule off.
pub(super) const FIXTURE: Fixture = Fixture {
    rule: Rule::Licence,
    path: "x.py",
    file: "import os\n\n\ndef load(path):\n    with open(path) as f:\n        data = f.read()\n    return parse(data)\n\n\ndef other():\n    pass\n",
    snippet: "# ... existing code ...\ndef read_text(path):\n    with open(path) as f:\n        return f.read()\n\n\ndef load(path):\n    data = read_text(path)\n    return parse(data)\n# ... existing code ...\n",
    instruction: None,
};

#[test]
fn the_merge_differs_with_the_rule_off() {
    FIXTURE.differs();
}
