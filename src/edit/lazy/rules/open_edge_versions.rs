//! Rule `open-edge-versions` (place, `place/open_edge.rs`): new code no file line places, bound
//! for the file's start or end only because the snippet shows no placeholder there, with a
//! line as like a file line as a changed line must be to place itself, may be that line's new
//! version (a snippet may leave out the placeholder at an edge though the file continues):
//! two readings, refused. Without it the line goes to the file's edge as new code.

use super::Rule;
use super::fixture::Fixture;

/// The fixture: a file and snippet on which the merge differs with the rule off.
pub(super) const FIXTURE: Fixture = Fixture {
    rule: Rule::OpenEdgeVersions,
    path: "links.py",
    file: "\"\"\"Links.\n\n__ https://example.org/docs/latest/links.html\n\"\"\"\n\nHELP = \"\"\"\n    https://example.org/docs/latest/links.html#more\n\"\"\"\n\n\ndef show():\n    print(HELP)\n",
    snippet: "__ https://example.org/docs/stable/links.html\n\n# ... existing code ...\n",
    instruction: None,
};

#[test]
fn the_merge_differs_with_the_rule_off() {
    FIXTURE.differs();
}
