//! Rule `loose-elsewhere` (place): when every line anchoring a segment is repeated in the file
//! (only their adjacency is unique), another place holding the same lines in the same order a
//! few lines apart is a second reading, and the merge asks. Without it the adjacent copy wins.

use super::Rule;
use super::fixture::Fixture;

/// The fixture: a file and snippet on which the merge differs with the rule off.
pub(super) const FIXTURE: Fixture = Fixture {
    rule: Rule::LooseElsewhere,
    path: "x.rs",
    file: "fn f() {\n    start();\n    end();\n    start();\n    middle();\n    end();\n}\n",
    snippet: "// ... existing code ...\n    start();\n    end();\n    fresh();\n// ... existing code ...\n",
    instruction: None,
};

#[test]
fn the_merge_differs_with_the_rule_off() {
    FIXTURE.differs();
}
