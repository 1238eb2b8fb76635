//! Rule `rename-check` (check): a definition aligned onto one of another name may change only
//! its name; a new definition shaped like an old one is no rename of it, and the merge asks.
//! Without it the new definition takes the old one's place.

use super::Rule;
use super::fixture::Fixture;

/// The fixture: a file and snippet on which the merge differs with the rule off.
pub(super) const FIXTURE: Fixture = Fixture {
    rule: Rule::RenameCheck,
    path: "net.c",
    file: "#ifdef _WIN32\nstatic int init(void) { return WSAStartup(); }\n#else\nstatic int init(void) { return 0; }\n#endif\n\n#ifdef _WIN32\nstatic void fini(void) { WSACleanup(); }\n#else\nstatic void fini(void) {}\n#endif\n",
    snippet: "#ifdef _WIN32\nstatic int init(void) { return WSAStartup(); }\n#else\nstatic int init(void) { return setup(); }\n#endif\n\n#ifdef _WIN32\nstatic void reset(void) { WSAReset(); }\n#else\nstatic void reset(void) {}\n#endif\n// ... existing code ...\n",
    instruction: None,
};

#[test]
fn the_merge_differs_with_the_rule_off() {
    FIXTURE.differs();
}
