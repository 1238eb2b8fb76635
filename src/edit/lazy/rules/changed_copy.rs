//! Rule `changed-copy` (check): a merge that changes a line the file holds once into another
//! snippet line, while the snippet writes that very line, verbatim, as new code elsewhere, has
//! read one line two ways: the snippet shows it where it stands (and the lines around it go
//! there), or it moved. The merge asks. Without it a longer run of lines the file repeats
//! outvotes the one unique line: a new call copied from the one above is read as that call
//! changed, and the copied call's unique line is written again as new code.

use super::Rule;
use super::fixture::Fixture;

/// The fixture: a file and snippet on which the merge differs with the rule off.
pub(super) const FIXTURE: Fixture = Fixture {
    rule: Rule::ChangedCopy,
    path: "client.py",
    file: "async def edits(session):\n    r = await session.call(\"write\", {\n        \"path\": \"notes.md\",\n        \"mode\": \"whole\",\n    })\n    show(r)\n    r = await session.call(\"patch\", {\n        \"path\": os.path.join(root, \"story.md\"),\n        \"old\": \"The title.\",\n        \"new\": \"A new title.\",\n    })\n    show(r)\n\n\nasync def searches(session):\n    pass\n",
    snippet: "# ... existing code ...\n        \"new\": \"A new title.\",\n    })\n    show(r)\n    r = await session.call(\"patch\", {\n        \"path\": os.path.join(root, \"story.md\"),\n        \"old\": \"The last line.\",\n        \"new\": \"The last line, and one more.\",\n    })\n    show(r)\n\n\nasync def searches(session):\n# ... existing code ...\n",
    instruction: None,
};

#[test]
fn the_merge_differs_with_the_rule_off() {
    FIXTURE.differs();
}

#[test]
fn the_refusal_names_the_line_read_twice() {
    let Err((code, message)) = FIXTURE.merge(super::RuleSet::ALL_ON) else {
        panic!("a line read two ways must be refused");
    };
    assert_eq!(code, crate::edit::ErrorCode::NeedsMoreContext, "{message}");
    assert!(
        message.contains("snippet line 2 is file line 10"),
        "{message}"
    );
}

/// A statement moved to the end of its block, a new line written in its old place: the moved
/// copy's nearest kept neighbour is a line the file holds once, which placed it. Merged, in
/// plain and in diff style.
#[test]
fn a_statement_moved_beside_a_unique_line_is_merged() {
    let file = "class Doc:\n    def save(self):\n        log.info(\"saving\")\n        self.db.write(self.rows)\n        self.dirty = False\n\n    def load(self):\n        self.rows = self.db.read()\n";
    let want = "class Doc:\n    def save(self):\n        self.validate()\n        self.db.write(self.rows)\n        self.dirty = False\n        log.info(\"saving\")\n\n    def load(self):\n        self.rows = self.db.read()\n";
    for snippet in [
        "class Doc:\n    def save(self):\n        self.validate()\n        self.db.write(self.rows)\n        self.dirty = False\n        log.info(\"saving\")\n# ... existing code ...\n",
        "class Doc:\n    def save(self):\n-        log.info(\"saving\")\n+        self.validate()\n        self.db.write(self.rows)\n        self.dirty = False\n+        log.info(\"saving\")\n# ... existing code ...\n",
    ] {
        let moved = Fixture { snippet, ..FIXTURE };
        let moved = Fixture {
            file,
            path: "doc.py",
            ..moved
        };
        assert_eq!(
            moved.merge(super::RuleSet::ALL_ON),
            Ok(want.to_string()),
            "{snippet}"
        );
    }
}
