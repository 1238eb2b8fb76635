//! Rule `entry-guard` (place): new code that the snippet ends with after a placeholder, with
//! no anchor of its own, goes at the file's end; when the file ends with its entry guard (a
//! top-level `if __name__ == "__main__":`, Ruby's `if __FILE__ == $0`), code after it is
//! defined only once the program has run, so "before the guard" is a second reading and the
//! merge asks. Without it the code goes after the guard.

use super::Rule;
use super::fixture::Fixture;

/// The fixture: a file and snippet on which the merge differs with the rule off.
pub(super) const FIXTURE: Fixture = Fixture {
    rule: Rule::EntryGuard,
    path: "tool.py",
    file: "import sys\n\n\ndef main():\n    run(sys.argv)\n\n\nif __name__ == \"__main__\":\n    main()\n",
    snippet: "# ... existing code ...\n\n\nsettings = load()\n",
    instruction: None,
};

#[test]
fn the_merge_differs_with_the_rule_off() {
    FIXTURE.differs();
}
