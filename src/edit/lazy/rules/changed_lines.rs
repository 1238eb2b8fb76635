//! Rule `changed-lines` (place): a changed line whose closest file line is similar enough, and
//! clearly closer than any other, places a segment that has no sure anchor, replacing that
//! line. Without it a snippet of one rewritten line has no place.

use super::Rule;
use super::fixture::Fixture;

/// The fixture: a file and snippet on which the merge differs with the rule off.
pub(super) const FIXTURE: Fixture = Fixture {
    rule: Rule::ChangedLines,
    path: "x.java",
    file: "enum Token {\n  /**\n   * The opening of an array, read by beginObject.\n   */\n  BEGIN_ARRAY,\n\n  /**\n   * Marks where a list of values ends.\n   */\n  END_ARRAY,\n}\n",
    snippet: "// ...\n  /**\n   * The opening of an array, read by beginArray.\n   */\n// ...\n",
    instruction: None,
};

#[test]
fn the_merge_differs_with_the_rule_off() {
    FIXTURE.differs();
}
