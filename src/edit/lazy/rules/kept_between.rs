//! Rule `kept-between` (check): a segment that keeps file lines between two lines it writes
//! one after the other is one reading of two (they go, or the snippet skipped them): the merge
//! refuses naming them. Without it the old line stays beside the new one.

use super::Rule;
use super::fixture::Fixture;

/// The fixture: a file and snippet on which the merge differs with the rule off.
pub(super) const FIXTURE: Fixture = Fixture {
    rule: Rule::KeptBetween,
    path: "x.rs",
    file: "fn a() {\n    let t = start(\n        &state,\n        120,\n        30,\n    );\n}\n\nfn b() {\n    let t = start(\n        &state,\n        120,\n        30,\n    );\n}\n",
    snippet: "// ... existing code ...\nfn b() {\n    let other = 1;\n    let t = start(\n        &other,\n        120,\n        30,\n// ... existing code ...\n",
    instruction: None,
};

#[test]
fn the_merge_differs_with_the_rule_off() {
    FIXTURE.differs();
}
