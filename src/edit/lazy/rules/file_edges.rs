//! Rule `file-edges` (place): a segment the snippet opens or ends with no placeholder stands at
//! the file's edge: its last line may be the new version of the file's last line. Without it
//! such a segment has no place.

use super::Rule;
use super::fixture::Fixture;

/// The fixture: a file and snippet on which the merge differs with the rule off.
pub(super) const FIXTURE: Fixture = Fixture {
    rule: Rule::FileEdges,
    path: "api.py",
    file: "def get(url):\n    \"\"\"Send a GET request.\"\"\"\n    return request(\"get\", url)\n\n\ndef delete(url):\n    \"\"\"Send a DELETE request.\"\"\"\n    return request(\"delete\", url)\n",
    snippet: "# ... existing code ...\n\n    return request(\"DELETE\", url)\n",
    instruction: None,
};

#[test]
fn the_merge_differs_with_the_rule_off() {
    FIXTURE.differs();
}
