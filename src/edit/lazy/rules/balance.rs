//! Rule `balance` (check): a merge that leaves brackets unbalanced where the snippet keeps them
//! balanced is refused (an un-nested `else` read as the old lines leaves a brace too many).
//! The licence check refuses the same reading with the rule off (the old `if` line is lost
//! unlicensed), so the rule decides only which refusal is given: its own, naming the brackets.

use super::Rule;
use super::fixture::Fixture;

/// The fixture: a file and snippet refused by the rule, and by another check with the rule off.
pub(super) const FIXTURE: Fixture = Fixture {
    rule: Rule::Balance,
    path: "x.go",
    file: "package p\n\nfunc get(m map[string]string, k string) (string, bool) {\n\tif v, ok := m[k]; ok {\n\t\treturn v, true\n\t} else {\n\t\treturn \"\", false\n\t}\n}\n\nfunc other() {\n\tprintln(1)\n}\n",
    snippet: "// ... existing code ...\n\tif v, ok := m[k]; ok && v != \"\" {\n\t\treturn v, true\n\t}\n\treturn \"\", false\n}\n// ... existing code ...\n",
    instruction: None,
};

#[test]
fn the_rules_own_refusal_is_given() {
    super::fixture::refused_otherwise(&FIXTURE, "brackets unbalanced", "does not license");
}
