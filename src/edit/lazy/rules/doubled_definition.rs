//! Rule `doubled-definition` (check): a result that holds one definition twice in one scope,
//! where neither the file nor the snippet holds it twice there, wrote the snippet's definition
//! beside the file's rather than in its place — a function moved above another and kept at
//! its old place, a block shortened to one line added beside its old body. The merge asks
//! (`check/doubled.rs`).

use super::Rule;
use super::fixture::Fixture;

const FILE: &str = "use std::error::Error;\nuse std::fmt;\n\npub enum ParseError {\n    MissingSlash,\n}\n\nimpl fmt::Display for ParseError {\n    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {\n        f.write_str(\"missing slash\")\n    }\n}\n\nimpl Error for ParseError {\n    #[allow(deprecated)]\n    fn description(&self) -> &str {\n        \"missing slash\"\n    }\n}\n\npub fn parse(s: &str) -> Result<(), ParseError> {\n    s.find('/').map(|_| ()).ok_or(ParseError::MissingSlash)\n}\n";

/// The fixture: an `impl` block shortened to one line, shown after two closers — the block
/// above's, which the old block ends with too.
pub(super) const FIXTURE: Fixture = Fixture {
    rule: Rule::DoubledDefinition,
    path: "mime.rs",
    file: FILE,
    snippet: "// ... existing code ...\n    }\n}\n\nimpl Error for ParseError {}\n\npub fn parse(s: &str) -> Result<(), ParseError> {\n// ... existing code ...\n",
    instruction: None,
};

#[test]
fn the_merge_differs_with_the_rule_off() {
    FIXTURE.differs();
}

/// With the rule off the one-line block goes beside the old one; with it on the merge asks.
#[test]
fn a_block_shortened_to_one_line_is_not_added_beside_its_old_body() {
    super::fixture::refused_where_off_merges(
        &FIXTURE,
        |c| {
            c.contains("impl Error for ParseError {\n")
                && c.contains("impl Error for ParseError {}")
        },
        "`impl Error for ParseError` defined 2 times in one scope",
    );
}

/// Methods of one name in two classes, and overloads, are not one definition twice.
#[test]
fn one_name_in_two_scopes_or_with_other_parameters_is_merged() {
    let file = "class A:\n    def run(self):\n        return 1\n\n\nclass B:\n    def stop(self):\n        return 0\n";
    let f = Fixture {
        path: "ab.py",
        file,
        snippet: "# ... existing code ...\nclass B:\n    def stop(self):\n        return 0\n\n    def run(self):\n        return 2\n",
        ..FIXTURE
    };
    assert_eq!(
        f.merge(super::RuleSet::ALL_ON),
        Ok(format!("{file}\n    def run(self):\n        return 2\n"))
    );
    let file = "class W {\n    void write(String s) {\n        out(s);\n    }\n}\n";
    let f = Fixture {
        path: "W.java",
        file,
        snippet: "class W {\n    void write(String s) {\n        out(s);\n    }\n\n    void write(int n) {\n        out(String.valueOf(n));\n    }\n}\n",
        ..FIXTURE
    };
    assert!(f.merge(super::RuleSet::ALL_ON).is_ok());
}

/// Alternatives of one definition that the language keeps apart: a Rust function under two
/// `#[cfg]` attributes, a Python property's getter and deleter (`@size.deleter`), a C
/// function in an `#ifdef` and its `#else`. A snippet adding the second beside the first is
/// merged.
#[test]
fn alternatives_under_other_attributes_or_preprocessor_branches_are_merged() {
    let cases = [
        (
            "dev.rs",
            "use std::path::Path;\n\n#[cfg(unix)]\nfn open_device(p: &Path) -> i32 {\n    unix_open(p)\n}\n\nfn main() {}\n",
            "// ... existing code ...\n    unix_open(p)\n}\n\n#[cfg(windows)]\nfn open_device(p: &Path) -> i32 {\n    win_open(p)\n}\n// ... existing code ...\n",
            "    unix_open(p)\n}\n\n#[cfg(windows)]\nfn open_device(p: &Path) -> i32 {\n    win_open(p)\n}\n",
        ),
        (
            "box.py",
            "class Box:\n    @property\n    def size(self):\n        return self._size\n\n    def grow(self):\n        self._size += 1\n",
            "# ... existing code ...\n        return self._size\n\n    @size.deleter\n    def size(self):\n        del self._size\n\n    def grow(self):\n# ... existing code ...\n",
            "    @size.deleter\n    def size(self):\n        del self._size\n",
        ),
        (
            "open.c",
            "#include <stdio.h>\n\n#ifdef _WIN32\nstatic int open_file(const char *p) {\n    return win_open(p);\n}\n#endif\n\nint main(void) {\n    return open_file(\"x\");\n}\n",
            "/* ... existing code ... */\n    return win_open(p);\n}\n#else\nstatic int open_file(const char *p) {\n    return posix_open(p);\n}\n#endif\n/* ... existing code ... */\n",
            "}\n#else\nstatic int open_file(const char *p) {\n    return posix_open(p);\n}\n#endif\n",
        ),
    ];
    for (path, file, snippet, added) in cases {
        let f = Fixture {
            path,
            file,
            snippet,
            ..FIXTURE
        };
        let got = f.merge(super::RuleSet::ALL_ON);
        assert!(
            matches!(&got, Ok(c) if c.contains(added)),
            "{path}: {got:?}"
        );
    }
}
