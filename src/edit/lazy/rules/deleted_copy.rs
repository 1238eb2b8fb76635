//! Rule `deleted-copy` (check): a segment that opens (ends) with context the file has twice,
//! kept at one copy while the merge deletes the other copy further in, has a second reading
//! — the context is that other copy, and what lies between stays: two functions that end
//! alike, a declaration written after the second one's end, the first one's end taken for
//! the context and the second function deleted on the way to the next anchor. The merge asks
//! (`check/copies.rs`).

use super::Rule;
use super::fixture::Fixture;

const FILE: &str = "PyAPI_FUNC(int) decode_ex(\n    const char *arg,\n    int current_locale,\n    error_handler errors);\n\nPyAPI_FUNC(int) encode_ex(\n    const wchar_t *text,\n    int current_locale,\n    error_handler errors);\n\n\nPyAPI_FUNC(PyObject *) device_encoding(int);\n";

/// The fixture: a new declaration after the second of two functions that end alike, one of
/// its lines a line of that second function.
pub(super) const FIXTURE: Fixture = Fixture {
    rule: Rule::DeletedCopy,
    path: "fileutils.h",
    file: FILE,
    snippet: "// ... existing code ...\n    int current_locale,\n    error_handler errors);\n\nPyAPI_FUNC(char*) encode_raw(\n    const wchar_t *text,\n    size_t *error_pos);\n\nPyAPI_FUNC(PyObject *) device_encoding(int);\n// ... existing code ...\n",
    instruction: None,
};

#[test]
fn the_merge_differs_with_the_rule_off() {
    FIXTURE.differs();
}

/// With the rule off the second function is deleted; with it on the merge names both copies.
#[test]
fn a_function_between_two_copies_of_the_context_is_not_deleted() {
    super::fixture::refused_where_off_merges(
        &FIXTURE,
        |c| !c.contains("encode_ex"),
        "are file lines 3-4 and again lines 8-9",
    );
}

/// Context written under other kept lines is held where it is: a call collapsed from two
/// copies into one, both copies deleted, is merged.
#[test]
fn context_under_kept_lines_is_not_read_at_its_copy() {
    let file = "def connect(self):\n    # wrap the socket\n    # with the certs\n    try:\n        self.sock = wrap(sock, self.key,\n                         certs=self.certs)\n    except Error:\n        self.sock = wrap(sock, self.key,\n                         certs=self.certs)\n\n    if self.certs:\n        check(self.sock)\n";
    let f = Fixture {
        path: "conn.py",
        file,
        snippet: "# ... existing code ...\n    # wrap the socket\n    # with the certs\n    self.sock = wrap(sock, self.key,\n                     certs=self.certs)\n    if self.certs:\n        check(self.sock)\n",
        ..FIXTURE
    };
    let on = f.merge(super::RuleSet::ALL_ON);
    assert!(
        !matches!(&on, Err((_, m)) if m.contains("and again lines")),
        "{on:?}"
    );
}
