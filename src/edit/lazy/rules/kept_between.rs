//! Rule `kept-between` (check): a segment that keeps file lines between two lines it writes
//! one after the other is one reading of two (they go, or the snippet skipped them): the merge
//! refuses naming them. Blank lines between the two lines change nothing: a blank line is not
//! a placeholder. Without it the old line stays beside the new one.

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

/// A new method written after a line its file ends two methods with, then two blank lines and
/// the next class's decorator: placed after the far copy, the merge would keep the nearer
/// method between the new code and the blank lines the snippet writes under it.
const BLANK_BETWEEN: Fixture = Fixture {
    rule: Rule::KeptBetween,
    path: "t.py",
    file: "class T:\n    def test_a(self):\n        parser = make()\n        del parser\n        collect()\n\n    def test_b(self):\n        parser = other()\n        del parser\n        collect()\n\n\n@skip\nclass U:\n    pass\n",
    snippet: "# ... existing code ...\n        collect()\n\n    def test_c(self):\n        # a check of the keys cache\n        class X:\n            def __hash__(self):\n                e.attrib = {}\n                return 13\n\n        e = Element(\"elem\", {1: 2})\n        r = e.get(X())\n        self.assertIsNone(r)\n\n\n@skip\n# ... existing code ...\n",
    instruction: None,
};

#[test]
fn lines_kept_across_blank_lines_the_snippet_writes_are_two_readings() {
    BLANK_BETWEEN.differs();
    let Err((_, message)) = BLANK_BETWEEN.merge(super::RuleSet::ALL_ON) else {
        panic!("the merge must ask");
    };
    assert!(message.contains("from line 7"), "{message}");
}
