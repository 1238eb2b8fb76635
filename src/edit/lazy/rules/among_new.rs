//! Rule `among-new` (check): a deletion whose only licence is a block among new lines (the
//! new code may merely repeat the file's lines there) is refused, naming its lines and the
//! ways to say it. Without it the old body under the repeated header goes.

use super::Rule;
use super::fixture::Fixture;

/// The fixture: a file and snippet on which the merge differs with the rule off.
pub(super) const FIXTURE: Fixture = Fixture {
    rule: Rule::AmongNew,
    path: "x.py",
    file: "import os\n\n\ndef load(path):\n    with open(path) as f:\n        data = f.read()\n    return parse(data)\n\n\ndef other():\n    pass\n",
    snippet: "# ... existing code ...\ndef read_text(path):\n    with open(path) as f:\n        return f.read()\n\n\ndef load(path):\n    data = read_text(path)\n    return parse(data)\n# ... existing code ...\n",
    instruction: None,
};

#[test]
fn the_merge_differs_with_the_rule_off() {
    FIXTURE.differs();
}
