//! Rule `joined-blocks` (check): a segment that keeps two file lines and deletes what stands
//! between them, adding nothing there, where the deleted lines close the block the upper kept
//! line stands in and open the one the lower stands in, joins two blocks into one. A snippet
//! rarely means that; far more often the lines from the lower one on are new code that
//! repeat a look-alike block's lines further down (a stanza added at the end of one test,
//! copied from the next test, whose copied line the file has once and so pins the segment
//! there). Two readings, one destructive: the merge asks (`check/joins.rs`).

use super::Rule;
use super::fixture::Fixture;

const FILE: &str = "#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn parses_dates() {\n        let d = parse(\"2020-01-31\");\n        assert_eq!(d.day, 31);\n    }\n\n    #[test]\n    fn parses_times() {\n        let t = parse(\"12:30\");\n        assert_eq!(t.hour, 12);\n\n        let t = parse(\"23:59\");\n        assert_eq!(t.hour, 23);\n    }\n}\n";

/// The fixture: a stanza added at the end of the first test, its first line copied from the
/// second test, the snippet ending at the first test's closer with no placeholder after.
pub(super) const FIXTURE: Fixture = Fixture {
    rule: Rule::JoinedBlocks,
    path: "parse.rs",
    file: FILE,
    snippet: "// ... existing code ...\n    fn parses_dates() {\n        let d = parse(\"2020-01-31\");\n        assert_eq!(d.day, 31);\n\n        let t = parse(\"23:59\");\n        assert!(t.date.is_none());\n    }\n",
    instruction: None,
};

#[test]
fn the_merge_differs_with_the_rule_off() {
    FIXTURE.differs();
}

/// With the rule off the second test's header and first stanza go: its last lines become the
/// first test's. With it on the merge asks, naming the deleted lines and the joint.
#[test]
fn the_refusal_names_the_joint_and_both_readings() {
    let off = FIXTURE.merge(super::RuleSet::ALL_ON.without(Rule::JoinedBlocks));
    assert!(
        matches!(&off, Ok(c) if !c.contains("fn parses_times")),
        "the category, with the rule off: {off:?}"
    );
    let Err((code, message)) = FIXTURE.merge(super::RuleSet::ALL_ON) else {
        panic!("a deletion joining two tests must be refused");
    };
    assert_eq!(code, crate::edit::ErrorCode::NeedsMoreContext, "{message}");
    assert!(message.contains("file lines 9-14"), "{message}");
    assert!(message.contains("snippet line 6"), "{message}");
}

/// A whole definition deleted between two kept ones, and statements deleted inside one body,
/// join nothing: merged.
#[test]
fn whole_definitions_and_statements_deleted_are_merged() {
    let file = "use std::io;\n\nfn a() {\n    one();\n}\n\nfn b() {\n    two();\n}\n\nfn c() {\n    three();\n}\n";
    let f = Fixture {
        file,
        snippet: "// ... existing code ...\n    one();\n}\n\nfn c() {\n    three();\n}\n",
        ..FIXTURE
    };
    let want = file.replace("fn b() {\n    two();\n}\n\n", "");
    assert_eq!(f.merge(super::RuleSet::ALL_ON), Ok(want));
    let inside = "// ... existing code ...\n    fn parses_times() {\n        let t = parse(\"12:30\");\n        let t = parse(\"23:59\");\n        assert_eq!(t.hour, 23);\n    }\n}\n";
    let f = Fixture {
        snippet: inside,
        ..FIXTURE
    };
    let want = FILE.replace("        assert_eq!(t.hour, 12);\n\n", "");
    assert_eq!(f.merge(super::RuleSet::ALL_ON), Ok(want));
}

/// A kept header over the next definition's body: `a`'s header kept, its body, its closer and
/// `b`'s header deleted (the snippet's context line, its trailing comment left off, is also
/// `b`'s line). Refused, naming `b`'s header as the joint.
#[test]
fn a_kept_header_joined_to_the_next_definitions_body_is_refused() {
    let f = Fixture {
        path: "load.rs",
        file: "fn a() {\n    let x = load(); // cached\n    use_it(x);\n}\n\nfn b() {\n    let x = load();\n    other(x);\n}\n",
        snippet: "// ... existing code ...\nfn a() {\n    let x = load();\n    use_it(&x);\n}\n// ... existing code ...\n",
        ..FIXTURE
    };
    let Err((code, message)) = f.merge(super::RuleSet::ALL_ON) else {
        panic!("a's header over b's body must be refused");
    };
    assert_eq!(code, crate::edit::ErrorCode::NeedsMoreContext, "{message}");
    assert!(message.contains("(line 6 `fn b() {`)"), "{message}");
}

/// In YAML a bare key over deeper lines heads a block (a CI job): a step added at the end of
/// one job, copied from the next job's steps, must not take that job's header and settings.
#[test]
fn a_yaml_job_joined_to_the_next_is_refused() {
    let f = Fixture {
        path: "ci.yml",
        file: "name: ci\non: [push]\njobs:\n  build:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n      - run: make\n\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/setup-go@v5\n      - run: make test\n",
        snippet: "# ... existing code ...\n      - run: make\n      - uses: actions/setup-go@v5\n      - run: make test\n# ... existing code ...\n",
        ..FIXTURE
    };
    let off = f.merge(super::RuleSet::ALL_ON.without(Rule::JoinedBlocks));
    assert!(
        matches!(&off, Ok(c) if !c.contains("  test:")),
        "the category, with the rule off: {off:?}"
    );
    let Err((code, message)) = f.merge(super::RuleSet::ALL_ON) else {
        panic!("a deletion joining two YAML jobs must be refused");
    };
    assert_eq!(code, crate::edit::ErrorCode::NeedsMoreContext, "{message}");
    assert!(message.contains("line 10 `test:`"), "{message}");
}
