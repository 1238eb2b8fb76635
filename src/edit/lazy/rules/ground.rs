//! Rule `ground` (check): every deletion's anchors must be grounded: lines among new code
//! license nothing by chance. The new example's first lines are unique in the file, but new
//! lines surround them: taken for the old example's, they would replace its summary line.
//! With the rule the merge asks, naming the ungrounded anchors; without it the licence check
//! refuses the same loss of the summary line, so the rule decides only which refusal is given.

use super::Rule;
use super::fixture::Fixture;

/// The fixture: a file and snippet refused by the rule, and by another check with the rule off.
pub(super) const FIXTURE: Fixture = Fixture {
    rule: Rule::Ground,
    path: "lib.rs",
    file: "//! Examples.\n\n/// Parse a flag.\n///\n/// ```\n/// use demo::Parser;\n/// let p = Parser::new();\n/// assert!(p.flag(\"-v\"));\n/// ```\npub fn flag_example() {}\n\n/// Parse an option.\npub fn option_example() {}\n",
    snippet: "// ... existing code ...\npub fn flag_example() {}\n\n/// Parse a count.\n///\n/// ```\n/// use demo::Parser;\n/// let p = Parser::new();\n/// assert_eq!(p.count(\"-vvv\"), 3);\n/// ```\npub fn count_example() {}\n// ... existing code ...\n",
    instruction: None,
};

#[test]
fn the_rules_own_refusal_is_given() {
    super::fixture::refused_otherwise(&FIXTURE, "sit among new lines", "does not license");
}
