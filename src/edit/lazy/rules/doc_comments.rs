//! Rule `doc-comments` (place): a doc-comment line the snippet copies from another
//! definition's comment does not pin its segment there: a doc comment documents the
//! definition below it. Without it the copied line licenses deleting the other definition.

use super::Rule;
use super::fixture::Fixture;

/// The fixture: a file and snippet on which the merge differs with the rule off.
pub(super) const FIXTURE: Fixture = Fixture {
    rule: Rule::DocComments,
    path: "p.go",
    file: "package p\n\n// Alpha does alpha.\n// It is called automatically by the runner at start.\nfunc Alpha() {\n\talphaStep()\n\talphaCheck()\n}\n\n// Beta does beta work for the runner.\nfunc Beta() {\n\tbetaStepOne()\n\tbetaStepTwo()\n\tbetaStepThree()\n}\n",
    snippet: "// ... existing code ...\n\n// Gamma does beta work.\n// It is called automatically by the runner at start.\nfunc Gamma() {\n\tbetaStepOne()\n\tbetaStepTwo()\n\t// ... existing code ...\n",
    instruction: None,
};

#[test]
fn the_merge_differs_with_the_rule_off() {
    FIXTURE.differs();
}
