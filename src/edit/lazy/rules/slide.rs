//! Rule `slide` (align): new code that a placeholder cuts off mid-block is slid so its block
//! balances: the placeholder stands for the rest of the new block, which the old block's copy
//! gives. Without it the new block is left open and the merge is refused or unbalanced.

use super::Rule;
use super::fixture::Fixture;

/// The fixture: a file and snippet on which the merge differs with the rule off.
pub(super) const FIXTURE: Fixture = Fixture {
    rule: Rule::Slide,
    path: "x_test.go",
    file: "func TestA(t *testing.T) {\n\tw := get(\"/a\")\n\n\tassert.Equal(t, 200, w.Code)\n\tassert.Equal(t, \"a\", w.Body)\n\tassert.Equal(t, \"x\", w.Header)\n}\n\nfunc TestZ(t *testing.T) {\n\trun()\n}\n",
    snippet: "// ... existing code ...\n\tassert.Equal(t, 200, w.Code)\n\tassert.Equal(t, \"a\", w.Body)\n\tassert.Equal(t, \"x\", w.Header)\n}\n\nfunc TestB(t *testing.T) {\n\tw := get(\"/b\")\n\n\tassert.Equal(t, 200, w.Code)\n\tassert.Equal(t, \"a\", w.Body)\n// ... existing code ...\n",
    instruction: None,
};

#[test]
fn the_merge_differs_with_the_rule_off() {
    FIXTURE.differs();
}
