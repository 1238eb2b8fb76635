//! Rule `balance` (check): a merge that leaves brackets unbalanced where the snippet keeps them
//! balanced is refused (an un-nested `else` read as the old lines leaves two braces too many).
//! With the rule off the reading check refuses that reading later, for the syntax error the
//! unbalanced brackets make (the snippet's own error on its last closer does not excuse it:
//! a placeholder follows that line).

use super::Rule;
use super::fixture::Fixture;

/// The fixture: a file and snippet refused by the rule, and by the reading check without it.
pub(super) const FIXTURE: Fixture = Fixture {
    rule: Rule::Balance,
    path: "x.go",
    file: "package p\n\nfunc get(m map[string]string, k string) (string, bool) {\n\tif v, ok := m[k]; ok {\n\t\treturn v, true\n\t} else {\n\t\treturn \"\", false\n\t}\n}\n\nfunc other() {\n\tprintln(1)\n}\n",
    snippet: "// ... existing code ...\n\tif v, ok := m[k]; ok && v != \"\" {\n\t\treturn v, true\n\t}\n\treturn \"\", false\n}\n// ... existing code ...\n",
    instruction: None,
};

#[test]
fn the_refusal_is_the_rules_own_with_it_on() {
    super::fixture::refused_otherwise(&FIXTURE, "unbalanced", "syntax error");
}
