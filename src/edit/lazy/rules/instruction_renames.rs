//! Rule `instruction-renames` (read): `rename A to B` in the instruction lets a definition the
//! snippet shows as `B` take the place of `A`, body and all. Without it a renamed definition
//! whose body also changed is new code beside the old one, or a question.

use super::Rule;
use super::fixture::Fixture;

/// The fixture: a file and snippet on which the merge differs with the rule off.
pub(super) const FIXTURE: Fixture = Fixture {
    rule: Rule::InstructionRenames,
    path: "net.c",
    file: "#ifdef _WIN32\nstatic int init(void) { return WSAStartup(); }\n#else\nstatic int init(void) { return 0; }\n#endif\n\n#ifdef _WIN32\nstatic void fini(void) { WSACleanup(); }\n#else\nstatic void fini(void) {}\n#endif\n",
    snippet: "#ifdef _WIN32\nstatic int init(void) { return WSAStartup(); }\n#else\nstatic int init(void) { return setup(); }\n#endif\n\n#ifdef _WIN32\nstatic void reset(void) { WSAReset(); }\n#else\nstatic void reset(void) {}\n#endif\n// ... existing code ...\n",
    instruction: Some("rename fini to reset"),
};

#[test]
fn the_merge_differs_with_the_rule_off() {
    FIXTURE.differs();
}
