//! Rule `moved-lines` (align): a file line the snippet shows elsewhere, every copy of it, was
//! moved by the snippet, and an edge passing over its old place deletes it there; so does an
//! open edge (a snippet opening or ending with no placeholder) when every file line beyond it
//! is such a line or blank. Without it the moved lines stay in both places.

use super::Rule;
use super::fixture::Fixture;

/// The fixture: a file and snippet on which the merge differs with the rule off.
pub(super) const FIXTURE: Fixture = Fixture {
    rule: Rule::MovedLines,
    path: "p.go",
    file: "package p\n\ntype Project struct {\n\tName    string\n\tOwner   string\n\tCmdName string\n\tCmdArgs string\n\n\tpath string\n}\n\nfunc (p *Project) Create() error {\n\treturn nil\n}\n",
    snippet: "// ... existing code ...\ntype Project struct {\n\tName    string\n\tOwner   string\n\n\t// ... existing code ...\n}\n\ntype Command struct {\n\tCmdName string\n\tCmdArgs string\n}\n\n// ... existing code ...\n",
    instruction: None,
};

#[test]
fn the_merge_differs_with_the_rule_off() {
    FIXTURE.differs();
}
