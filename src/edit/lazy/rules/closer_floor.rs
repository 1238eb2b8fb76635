//! Rule `closer-floor` (place): a segment that starts by closing the block the segment before
//! it opened starts at that block's closing line (its floor). Without it the closer, a line
//! the file repeats, does not place the segment, and the new code after it has no place.

use super::Rule;
use super::fixture::Fixture;

/// The fixture: a file and snippet on which the merge differs with the rule off.
pub(super) const FIXTURE: Fixture = Fixture {
    rule: Rule::CloserFloor,
    path: "x.rs",
    file: "fn a() {\n    one();\n    two();\n    three();\n}\n\nfn b() {\n    four();\n}\n",
    snippet: "fn a() {\n    zero();\n    one();\n    // ... existing code ...\n}\n\nfn c() {\n    five();\n}\n// ... existing code ...\n",
    instruction: None,
};

#[test]
fn the_merge_differs_with_the_rule_off() {
    FIXTURE.differs();
}
