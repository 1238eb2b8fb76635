//! Rule `doc-comments` (place): a doc-comment line the snippet copies from another
//! definition's comment does not pin its segment there: a doc comment documents the
//! definition below it. Guards overlap here: with the rule, the copied line places nothing and
//! the snippet's cut function, read as new code, is refused for unbalanced brackets; without
//! it, the copied line pins the segment over `Alpha`, whose deletion only the among-new margin
//! still refuses (a real merge of git-history-wide was harmful with both off).

use super::Rule;
use super::fixture::Fixture;

/// The fixture: a file and snippet refused with the rule on, by another check with it off.
pub(super) const FIXTURE: Fixture = Fixture {
    rule: Rule::DocComments,
    path: "p.go",
    file: "package p\n\n// Alpha does alpha.\n// It is called automatically by the runner at start.\nfunc Alpha() {\n\talphaStep()\n\talphaCheck()\n}\n\n// Beta does beta work for the runner.\nfunc Beta() {\n\tbetaStepOne()\n\tbetaStepTwo()\n\tbetaStepThree()\n}\n",
    snippet: "// ... existing code ...\n\n// Gamma does beta work.\n// It is called automatically by the runner at start.\nfunc Gamma() {\n\tbetaStepOne()\n\tbetaStepTwo()\n\t// ... existing code ...\n",
    instruction: None,
};

#[test]
fn the_rules_reading_is_refused_by_another_check_than_without_it() {
    super::fixture::refused_otherwise(&FIXTURE, "brackets unbalanced", "among new code");
}
