//! Rule `new-definitions` (place): a definition the file does not have is new code, whatever
//! lines of an old one it repeats, so those copies do not place (and drag) its segment.
//! Without it a new test copying the one above is aligned onto the old test.

use super::Rule;
use super::fixture::Fixture;

/// The fixture: a file and snippet on which the merge differs with the rule off.
pub(super) const FIXTURE: Fixture = Fixture {
    rule: Rule::NewDefinitions,
    path: "x_test.go",
    file: "func TestA(t *testing.T) {\n\tw := newRecorder()\n\tbody := \"raw data\"\n\theaders := map[string]string{\"X\": \"y\"}\n\trender(w, body, headers)\n\tassert.Equal(t, body, w.Body())\n\tassert.Equal(t, \"y\", w.Header(\"X\"))\n}\n\ntype Recorder struct {\n\tclosed chan bool\n}\n",
    snippet: "// ... existing code ...\n\tassert.Equal(t, \"y\", w.Header(\"X\"))\n}\n\nfunc TestANoHeaders(t *testing.T) {\n\tw := newRecorder()\n\tbody := \"raw data\"\n\trender(w, body, nil)\n\tassert.Equal(t, body, w.Body())\n}\n\ntype Recorder struct {\n// ... existing code ...\n",
    instruction: None,
};

#[test]
fn the_merge_differs_with_the_rule_off() {
    FIXTURE.differs();
}
