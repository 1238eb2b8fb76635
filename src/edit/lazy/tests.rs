//! Unit tests of the lazy merge, each named for what it shows.

use super::*;
use crate::edit::text::Text;

fn hints(path: &str) -> Hints<'_> {
    Hints {
        path: Some(path),
        instruction: None,
    }
}

fn lazy(file: &str, snippet: &str) -> Result<String> {
    merge(file, snippet, &hints("x.py")).map(|m| m.content)
}

const PY: &str = "import os\n\n\ndef first():\n    a = 1\n    b = 2\n    c = 3\n    return a + b + c\n\n\ndef helper(x):\n    return x * 2\n\n\ndef last():\n    return helper(first())\n";

#[test]
fn a_deletion_expressed_by_context_above_and_below() {
    let snippet = "# ... existing code ...\n    a = 1\n    c = 3\n    return a + b + c\n# ... existing code ...\n";
    let out = lazy(PY, snippet).unwrap();
    assert_eq!(out, PY.replace("    b = 2\n", ""));
}

#[test]
fn remove_directive_deletes_a_function() {
    let snippet = "# ... existing code ...\n# remove helper\n# ... existing code ...\n";
    let out = lazy(PY, snippet).unwrap();
    assert_eq!(
        out,
        PY.replace("def helper(x):\n    return x * 2\n\n\n", "")
    );
}

#[test]
fn a_placeholder_free_snippet_replaces_one_method_of_a_class() {
    let file = "class Calc:\n    def add(self, a, b):\n        return a + b\n\n    def sub(self, a, b):\n        return a - b\n\n    def mul(self, a, b):\n        return a * b\n";
    let snippet = "    def sub(self, a, b):\n        result = a - b\n        return result\n";
    let out = merge(file, snippet, &hints("calc.py")).unwrap().content;
    assert_eq!(
        out,
        file.replace(
            "        return a - b\n",
            "        result = a - b\n        return result\n"
        )
    );
}

#[test]
fn a_snippet_whose_only_anchors_are_braces_in_two_places_needs_more_context() {
    let file = "function a() {\n  one();\n}\n\nfunction b() {\n  two();\n}\n\nfunction c() {\n  three();\n}\n";
    let snippet = "// ... existing code ...\n}\n\nfunction added() {}\n// ... existing code ...\n";
    let e = merge(file, snippet, &hints("x.js")).unwrap_err();
    assert_eq!(e.code, ErrorCode::NeedsMoreContext);
    assert!(e.message.contains("unchanged lines"), "{}", e.message);
}

#[test]
fn a_crlf_file_stays_crlf() {
    let bytes = PY.replace('\n', "\r\n").into_bytes();
    let text = Text::decode(&bytes).unwrap();
    let snippet = "# ... existing code ...\r\ndef helper(x):\r\n    return x * 3\r\n# ... existing code ...\r\n";
    let merged = merge(text.content(), snippet, &hints("x.py")).unwrap();
    let out = text.encode(&merged.content).unwrap();
    assert_eq!(
        out,
        PY.replace("x * 2", "x * 3")
            .replace('\n', "\r\n")
            .into_bytes()
    );
}

#[test]
fn slash_and_block_comment_placeholders() {
    let file =
        "const a = 1;\nconst b = 2;\n\nfunction f() {\n  return a;\n}\n\nexport default f;\n";
    let slash = "// ...\nfunction f() {\n  return a + b;\n}\n// ...\n";
    let block = "/* ... */\nfunction f() {\n  return a + b;\n}\n/* ... */\n";
    let expected = file.replace("  return a;\n", "  return a + b;\n");
    assert_eq!(
        merge(file, slash, &hints("x.js")).unwrap().content,
        expected
    );
    assert_eq!(
        merge(file, block, &hints("x.js")).unwrap().content,
        expected
    );
}

#[test]
fn placeholders_in_a_foreign_comment_syntax_are_recognised() {
    let file = "local x = 1\nlocal y = 2\nreturn x + y\n";
    let snippet = "// ... existing code ...\nlocal y = 3\n// ... existing code ...\n";
    assert_eq!(
        merge(file, snippet, &hints("init.lua")).unwrap().content,
        "local x = 1\nlocal y = 3\nreturn x + y\n"
    );
}

#[test]
fn a_markdown_target_keeps_its_fences() {
    let file = "# Title\n\nIntro.\n\n## Usage\n\nOld usage.\n";
    let snippet = "## Usage\n\n```sh\nrun it\n```\n\nOld usage.\n";
    let out = merge(file, snippet, &hints("README.md")).unwrap().content;
    assert_eq!(
        out,
        "# Title\n\nIntro.\n\n## Usage\n\n```sh\nrun it\n```\n\nOld usage.\n"
    );
    // The same snippet for a code file loses its outer fence.
    let code = "x = 1\n";
    let fenced = "```python\nx = 2\n```\n";
    assert_eq!(
        merge(code, fenced, &hints("x.py")).unwrap().content,
        "x = 2\n"
    );
}

#[test]
fn adding_an_import_at_the_top_with_no_leading_placeholder() {
    let snippet = "import sys\nimport os\n# ... existing code ...\n";
    assert_eq!(lazy(PY, snippet).unwrap(), format!("import sys\n{PY}"));
}

#[test]
fn appending_at_the_end() {
    let snippet = "# ... existing code ...\ndef last():\n    return helper(first())\n\n\ndef newest():\n    return 0\n";
    assert_eq!(
        lazy(PY, snippet).unwrap(),
        format!("{PY}\n\ndef newest():\n    return 0\n")
    );
}

/// A snippet that takes a block out of an `if` shows that block shallower than the file has
/// it, among lines shown at the file's own depth: it is written at the file's depth and moves
/// nothing as a whole (moving it would push the new code into the `except` body above).
#[test]
fn a_block_taken_out_of_an_if_keeps_the_snippets_depth() {
    let file = "def read(self, chunk):\n    try:\n        tag = unpack(chunk)\n    except Error:\n        raise EOFError from None\n    if tag == PCM:\n        self.width = unpack2(chunk)\n        self.depth = self.width // 8\n    else:\n        raise Error('unknown')\n    if not self.channels:\n        raise Error('no channels')\n    return self\n";
    let snippet = "# ... existing code ...\n        raise EOFError from None\n    if tag != PCM:\n        raise Error('unknown')\n    self.width = unpack2(chunk)\n    self.depth = self.width // 8\n    if not self.channels:\n# ... existing code ...\n";
    let merged = merge(file, snippet, &hints("wav.py")).unwrap();
    assert_eq!(
        merged.content,
        "def read(self, chunk):\n    try:\n        tag = unpack(chunk)\n    except Error:\n        raise EOFError from None\n    if tag != PCM:\n        raise Error('unknown')\n    self.width = unpack2(chunk)\n    self.depth = self.width // 8\n    if not self.channels:\n        raise Error('no channels')\n    return self\n"
    );
    assert!(
        !merged.warnings.iter().any(|w| w.contains("re-indented")),
        "{:?}",
        merged.warnings
    );
}

/// One line at its file line's own depth does not make a body pasted at column 0 the file's
/// depth: a C label (or a commented-out line) sits at column 0 in any body.
#[test]
fn a_body_at_column_0_is_reindented_whatever_its_column_0_label_says() {
    let file = "static int probe(struct device *dev)\n{\n\tint ret;\n\n\tret = setup(dev);\n\tif (ret)\n\t\tgoto out;\n\tpm_enable(dev);\nout:\n\tteardown(dev);\n\treturn ret;\n}\n";
    let snippet = "// ... existing code ...\nret = setup(dev);\nif (ret)\n\tgoto out;\npm_enable(dev);\npm_mark(dev);\nout:\nteardown(dev);\n// ... existing code ...\n";
    let merged = merge(file, snippet, &hints("p.c")).unwrap();
    assert!(
        merged.content.contains(
            "\tret = setup(dev);\n\tif (ret)\n\t\tgoto out;\n\tpm_enable(dev);\n\tpm_mark(dev);\n"
        ),
        "{}",
        merged.content
    );
    assert!(
        merged
            .content
            .contains("\tteardown(dev);\n\treturn ret;\n}\n")
    );
    assert!(merged.warnings.iter().any(|w| w.contains("re-indented")));
    let file = "class A:\n    def run(self):\n        x = compute(1)\n#        debug_dump(x)\n        y = compute(2)\n        return x + y\n\n    def other(self):\n        pass\n";
    let snippet = "# ... existing code ...\nx = compute(1)\n#        debug_dump(x)\ny = compute(2)\nlog(y)\nreturn x + y\n# ... existing code ...\n";
    let out = merge(file, snippet, &hints("c.py")).unwrap().content;
    assert!(
        out.contains(
            "        y = compute(2)\n        log(y)\n        return x + y\n\n    def other"
        ),
        "{out}"
    );
}

#[test]
fn a_dedented_method_body_is_reindented() {
    let file = "class A:\n    def run(self):\n        x = 1\n        y = 2\n        return x + y\n";
    let snippet = "# ... existing code ...\nx = 1\nz = 5\ny = 2\n# ... existing code ...\n";
    let merged = merge(file, snippet, &hints("a.py")).unwrap();
    assert_eq!(
        merged.content,
        "class A:\n    def run(self):\n        x = 1\n        z = 5\n        y = 2\n        return x + y\n"
    );
    assert!(
        merged.warnings.iter().any(|w| w.contains("re-indented")),
        "{:?}",
        merged.warnings
    );
}

#[test]
fn a_placeholder_only_snippet_lists_the_top_level_definitions() {
    let e = lazy(PY, "# ... existing code ...\n").unwrap_err();
    assert_eq!(e.code, ErrorCode::NeedsMoreContext);
    assert!(e.message.contains("4: def first():"), "{}", e.message);
    assert!(e.message.contains("11: def helper(x):"), "{}", e.message);
}

#[test]
fn a_new_file_with_placeholders_is_invalid_input() {
    let e = merge(
        "",
        "def f():\n    pass\n# ... existing code ...\n",
        &hints("new.py"),
    )
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidInput);
    let ok = merge("", "def f():\n    pass\n", &hints("new.py")).unwrap();
    assert_eq!(ok.content, "def f():\n    pass\n");
}

#[test]
fn an_unrecognised_placeholder_is_marker_leakage() {
    // Not a comment, so not read as a placeholder; it must not land in the file as code.
    let snippet = "# ... existing code ...\ndef helper(x):\n    rest of the code ...\n    return x * 3\n# ... existing code ...\n";
    let e = lazy(PY, snippet).unwrap_err();
    assert_eq!(e.code, ErrorCode::MarkerLeakage, "{}", e.message);
    // Too long a comment to be read as a placeholder, but worded as one.
    let long = "# ... existing code ...\ndef helper(x):\n    # rest of the code remains the same as before, see above\n    return x * 3\n# ... existing code ...\n";
    let e = lazy(PY, long).unwrap_err();
    assert_eq!(e.code, ErrorCode::MarkerLeakage, "{}", e.message);
}

#[test]
fn a_placeholder_comment_in_other_words_is_a_placeholder() {
    let snippet = "# ... existing code ...\ndef first():\n    a = 1\n    # rest of the code stays the same\n    return a + b + c\n\n\ndef helper(x):\n    return x * 3\n# ... existing code ...\n";
    assert_eq!(lazy(PY, snippet).unwrap(), PY.replace("x * 2", "x * 3"));
}

#[test]
fn losing_most_of_the_file_is_truncation() {
    let long: String = (0..40)
        .map(|i| format!("value_{i} = compute({i}, 'some longer text')\n"))
        .collect();
    // First and last line with nothing but one new line between, and no placeholder: the
    // snippet shows the file completely, so everything between goes.
    let snippet = "value_0 = compute(0, 'some longer text')\nvalue_1 = 2\nvalue_39 = compute(39, 'some longer text')\n";
    let e = merge(&long, snippet, &hints("v.py")).unwrap_err();
    assert!(
        e.code == ErrorCode::TruncationDetected,
        "{:?}: {}",
        e.code,
        e.message
    );
}

#[test]
fn changing_nearly_every_line_is_blast_radius() {
    let file: String = (0..20).map(|i| format!("setting_{i} = {i}\n")).collect();
    let snippet: String = (0..20)
        .map(|i| format!("setting_{i} = {}\n", i * 10))
        .collect();
    let e = merge(&file, &snippet, &hints("s.py")).unwrap_err();
    assert_eq!(e.code, ErrorCode::BlastRadiusExceeded, "{}", e.message);
}

#[test]
fn new_lines_that_change_nothing_are_apply_noop() {
    // `x = 2` is new, but it lands where the file already says the same.
    let file = "x = 1\ny = 2\n";
    let snippet = "# remove nothing_here\n";
    assert!(merge(file, snippet, &hints("a.py")).is_err());
    let same = merge(file, "# ... existing code ...\ny = 2\n", &hints("a.py")).unwrap_err();
    assert_eq!(same.code, ErrorCode::ApplyNoop, "{}", same.message);
}

#[test]
fn the_instruction_places_new_code_at_the_end() {
    let h = Hints {
        path: Some("x.py"),
        instruction: Some("append it at the end of the file"),
    };
    let out = merge(
        PY,
        "# ... existing code ...\ndef tail():\n    pass\n# ... existing code ...\n",
        &h,
    )
    .unwrap()
    .content;
    assert_eq!(out, format!("{PY}\ndef tail():\n    pass\n"));
}

#[test]
fn the_instruction_names_the_function_to_edit() {
    let file = "def a():\n    x = 1\n    return x\n\n\ndef b():\n    x = 1\n    return x\n";
    let snippet = "    x = 1\n    y = 2\n    return x\n";
    let ambiguous = merge(file, snippet, &hints("ab.py")).unwrap_err();
    assert_eq!(ambiguous.code, ErrorCode::NeedsMoreContext);
    let h = Hints {
        path: Some("ab.py"),
        instruction: Some("in function b"),
    };
    let out = merge(file, snippet, &h).unwrap().content;
    assert_eq!(
        out,
        "def a():\n    x = 1\n    return x\n\n\ndef b():\n    x = 1\n    y = 2\n    return x\n"
    );
}

#[test]
fn an_instruction_naming_a_definition_does_not_confine_a_snippet_reaching_past_it() {
    // Caught by the demo: "simplify total" named `total`, and merging inside `total` alone
    // duplicated the closing brace of the impl.
    let file = "impl Stock {\n    fn add(&mut self) {\n        self.n += 1;\n    }\n\n    fn total(&self) -> u64 {\n        let mut t = 0;\n        t += self.n;\n        t\n    }\n}\n";
    let snippet = "// ... existing code ...\n    fn total(&self) -> u64 {\n        self.n\n    }\n\n    fn low(&self) -> bool {\n        self.n < 3\n    }\n}\n";
    let h = Hints {
        path: Some("stock.rs"),
        instruction: Some("simplify total and add low"),
    };
    let m = merge(file, snippet, &h).unwrap();
    assert_eq!(
        m.content,
        "impl Stock {\n    fn add(&mut self) {\n        self.n += 1;\n    }\n\n    fn total(&self) -> u64 {\n        self.n\n    }\n\n    fn low(&self) -> bool {\n        self.n < 3\n    }\n}\n"
    );
}

/// Four functions alike but for their numbers.
fn alike() -> String {
    (0..4)
        .map(|i| {
            format!(
                "pub fn item_{i}(input: &[u32], scale: u32) -> u32 {{\n    \
                 let total: u32 = input.iter().map(|v| v * scale).sum();\n    \
                 if total > {i} {{ return total - {i}; }}\n    \
                 total + {i}\n}}\n\n"
            )
        })
        .collect()
}

#[test]
fn a_placeholder_before_a_closing_brace_keeps_the_rest_of_that_block() {
    let file = alike();
    let snippet = "pub fn item_1(input: &[u32], scale: u32) -> u32 {\n    \
                   let total: u32 = input.iter().map(|v| v * scale * 3).sum();\n    \
                   // ... existing code ...\n}\n";
    let out = lazy(&file, snippet).unwrap();
    let want = file.replacen(
        "pub fn item_1(input: &[u32], scale: u32) -> u32 {\n    let total: u32 = input.iter().map(|v| v * scale).sum();",
        "pub fn item_1(input: &[u32], scale: u32) -> u32 {\n    let total: u32 = input.iter().map(|v| v * scale * 3).sum();",
        1,
    );
    assert_eq!(out, want);
}

#[test]
fn a_line_moved_out_of_a_block_is_refused_rather_than_merged_unbalanced() {
    // The snippet un-nests an `else`: its last `}` is the function's, not the `if`'s. The
    // merge reads the dedented `return` as the old one, which would leave a brace too many;
    // the bracket guard refuses that reading instead of writing it.
    let file = "package p\n\nfunc get(m map[string]string, k string) (string, bool) {\n\tif v, ok := m[k]; ok {\n\t\treturn v, true\n\t} else {\n\t\treturn \"\", false\n\t}\n}\n\nfunc other() {\n\tprintln(1)\n}\n";
    let snippet = "// ... existing code ...\n\tif v, ok := m[k]; ok && v != \"\" {\n\t\treturn v, true\n\t}\n\treturn \"\", false\n}\n// ... existing code ...\n";
    let e = merge(file, snippet, &hints("x.go")).unwrap_err();
    assert_eq!(e.code, ErrorCode::NeedsMoreContext);
    assert!(e.message.contains("unbalanced"), "{}", e.message);
}

#[test]
fn new_code_repeating_the_function_above_goes_between_the_snippets_context_lines() {
    // The added test copies most lines of the one before it; those copies must not drag the
    // edit onto the old test.
    let file = "func TestA(t *testing.T) {\n\tw := newRecorder()\n\tbody := \"raw data\"\n\theaders := map[string]string{\"X\": \"y\"}\n\trender(w, body, headers)\n\tassert.Equal(t, body, w.Body())\n\tassert.Equal(t, \"y\", w.Header(\"X\"))\n}\n\ntype Recorder struct {\n\tclosed chan bool\n}\n";
    let snippet = "// ... existing code ...\n\tassert.Equal(t, \"y\", w.Header(\"X\"))\n}\n\nfunc TestANoHeaders(t *testing.T) {\n\tw := newRecorder()\n\tbody := \"raw data\"\n\trender(w, body, nil)\n\tassert.Equal(t, body, w.Body())\n}\n\ntype Recorder struct {\n// ... existing code ...\n";
    let out = merge(file, snippet, &hints("x_test.go")).unwrap().content;
    assert_eq!(
        out,
        file.replace(
            "}\n\ntype Recorder",
            "}\n\nfunc TestANoHeaders(t *testing.T) {\n\tw := newRecorder()\n\tbody := \"raw data\"\n\trender(w, body, nil)\n\tassert.Equal(t, body, w.Body())\n}\n\ntype Recorder"
        )
    );
}

#[test]
fn a_changed_declaration_replaces_the_old_declaration_of_that_name() {
    let file = "const first = [\n\t1,\n];\n\nconst kinds = [\n\t'json',\n\t'text',\n];\n\nconst retry = new Set([\n\t'get',\n]);\n";
    let snippet = "// ... existing code ...\n];\n\nconst kinds = {\n\tjson: 'application/json',\n\ttext: 'text/*',\n};\n\nconst retry = new Set([\n// ... existing code ...\n";
    let out = merge(file, snippet, &hints("x.js")).unwrap().content;
    assert_eq!(
        out,
        "const first = [\n\t1,\n];\n\nconst kinds = {\n\tjson: 'application/json',\n\ttext: 'text/*',\n};\n\nconst retry = new Set([\n\t'get',\n]);\n"
    );
}

#[test]
fn a_changed_line_goes_to_its_closest_old_version() {
    // Both doc comments are somewhat like the new one; the first clearly more.
    let file = "enum Token {\n  /**\n   * The opening of an array, read by beginObject.\n   */\n  BEGIN_ARRAY,\n\n  /**\n   * Marks where a list of values ends.\n   */\n  END_ARRAY,\n}\n";
    let snippet =
        "// ...\n  /**\n   * The opening of an array, read by beginArray.\n   */\n// ...\n";
    let out = merge(file, snippet, &hints("x.java")).unwrap().content;
    assert_eq!(out, file.replace("by beginObject", "by beginArray"));
    // Two old versions about as close: no telling which one changed.
    let twins = file.replace(
        "Marks where a list of values ends.",
        "The closing of an array, read by endArray.",
    );
    let e = merge(&twins, snippet, &hints("x.java")).unwrap_err();
    assert_eq!(e.code, ErrorCode::NeedsMoreContext, "{}", e.message);
}

#[test]
fn a_blank_separator_before_a_placeholder_keeps_the_files_whitespace() {
    let file = "class A {\n  int f() {\n    int x = 1;\n    \n    return x;\n  }\n}\n";
    let snippet =
        "// ... existing code ...\n  int f() {\n    int x = 2;\n\n// ... existing code ...\n";
    let out = merge(file, snippet, &hints("A.java")).unwrap().content;
    assert_eq!(out, file.replace("int x = 1;", "int x = 2;"));
}

/// `collect` is used once; the edit inlines its body into `setup`.
const MOVED: &str = "import x\n\n\ndef collect(cls):\n    found = set()\n    for key in KEYS:\n        if hasattr(cls, key):\n            found.add(key.upper())\n    found.discard(\"TRACE\")\n    return sorted(found)\n\n\nclass Base:\n    methods = None\n\n\nclass Dispatch(Base):\n    def setup(self):\n        self.methods = collect(type(self))\n\n    def dispatch(self):\n        return 2\n";

const INLINED: &str = "class Dispatch(Base):\n    def setup(self):\n        found = set()\n        for key in KEYS:\n            if hasattr(type(self), key):\n                found.add(key.upper())\n        found.discard(\"TRACE\")\n        self.methods = sorted(found)\n\n    def dispatch(self):\n        # ... existing code ...\n";

#[test]
fn code_moved_out_of_a_kept_definition_needs_more_context_naming_it() {
    let snippet = format!("# ... existing code ...\n{INLINED}");
    let e = lazy(MOVED, &snippet).unwrap_err();
    assert_eq!(e.code, ErrorCode::NeedsMoreContext);
    assert!(
        e.message.contains("`collect` (lines 4-10)") && e.message.contains("remove collect"),
        "{}",
        e.message
    );
}

#[test]
fn a_remove_directive_settles_moved_code() {
    let snippet = format!("# ... existing code ...\n# remove collect\n\n\n{INLINED}");
    let out = lazy(MOVED, &snippet).unwrap();
    let (body, _) = INLINED.split_once("    def dispatch").unwrap();
    let expected = format!(
        "import x\n\n\nclass Base:\n    methods = None\n\n\n{body}    def dispatch(self):\n        return 2\n"
    );
    assert_eq!(out, expected);
}

#[test]
fn showing_the_kept_definition_with_copied_code_in_one_segment_still_asks() {
    // The copies sit in the same part as their new definition: copied or moved, the merge
    // asks rather than guessing.
    let snippet = format!(
        "# ... existing code ...\ndef collect(cls):\n    # ... existing code ...\n\n\n{INLINED}"
    );
    let e = lazy(MOVED, &snippet).unwrap_err();
    assert_eq!(e.code, ErrorCode::NeedsMoreContext, "{}", e.message);
}

#[test]
fn a_placeholder_at_column_0_stands_for_every_definition_up_to_the_next_segment() {
    let file = "class A:\n    def run(self):\n        one()\n        two()\n        return 3\n\n\ndef gone(x):\n    return x\n\n\nclass B:\n    pass\n";
    let snippet = "# ... existing code ...\n\n\nclass B:\n    x = 1\n";
    let out = lazy(file, snippet).unwrap();
    assert_eq!(out, file.replace("    pass\n", "    x = 1\n"));
}

#[test]
fn an_indented_placeholder_keeps_the_closer_of_its_block() {
    let file = "func a() {\n\tif x {\n\t\tone()\n\t}\n}\n\nfunc b() {\n\ttwo()\n}\n";
    let snippet = "\t\t// ... existing code ...\n\nfunc b() {\n\tthree()\n}\n";
    let out = merge(file, snippet, &hints("x.go")).unwrap().content;
    assert_eq!(out, file.replace("two()", "three()"));
}

#[test]
fn a_long_line_with_its_tail_rewritten_places_a_snippet_with_only_braces_around_it() {
    let file = "function a(options) {\n\tconst x = 1;\n\treturn x;\n}\n\nfunction backoff(options, count) {\n\tcheck(options);\n\n\tconst FACTOR = 0.3;\n\treturn Math.min(options.retry.backoffLimit, FACTOR * (2 ** (count - 1)) * 1000);\n}\n\nfunction c() {\n\treturn 3;\n}\n";
    let snippet = "\t// ...\n\n\tconst delay = options.retry.delay(count);\n\treturn Math.min(options.retry.backoffLimit, delay);\n}\n// ...\n";
    let out = merge(file, snippet, &hints("x.js")).unwrap().content;
    assert_eq!(
        out,
        file.replace(
            "\tconst FACTOR = 0.3;\n\treturn Math.min(options.retry.backoffLimit, FACTOR * (2 ** (count - 1)) * 1000);\n",
            "\tconst delay = options.retry.delay(count);\n\treturn Math.min(options.retry.backoffLimit, delay);\n"
        )
    );
}

#[test]
fn closing_lines_alone_do_not_place_a_snippet() {
    // `}),` then `);` occur together once, but lines without a word say too little about
    // the place: the merge asks for a line of code.
    let file = "export function a() {\n\tcall(x, () => {\n\t\tone();\n\t});\n}\n\nexport function b() {\n\treturn wrap(\n\t\tnew Stream({\n\t\t\tstart() {},\n\t\t}),\n\t);\n}\n";
    let snippet = "// ...\n\t\t}),\n\t\t{\n\t\t\tstatus: 200,\n\t\t},\n\t);\n// ...\n";
    let e = merge(file, snippet, &hints("x.ts")).unwrap_err();
    assert_eq!(e.code, ErrorCode::NeedsMoreContext, "{}", e.message);
    // With a line of code it goes in.
    let anchored =
        "// ...\n\t\t\tstart() {},\n\t\t}),\n\t\t{\n\t\t\tstatus: 200,\n\t\t},\n\t);\n// ...\n";
    let out = merge(file, anchored, &hints("x.ts")).unwrap().content;
    assert_eq!(
        out,
        file.replace("\t\t}),\n", "\t\t}),\n\t\t{\n\t\t\tstatus: 200,\n\t\t},\n")
    );
}

#[test]
fn last_lines_shown_before_a_closer_may_be_a_later_blocks_so_nothing_between_goes() {
    // `map.freeze(); return map; }` ends `first` and `second` alike: read as first's, second
    // would go; read as second's, nothing does. The reading that deletes nothing unshown is
    // taken, and the snippet then changes nothing.
    let file = "class A {\n  static Map first() {\n    Map map = new Map();\n    map.put(1);\n\n    map.freeze();\n    return map;\n  }\n\n  static Map second() {\n    Map map = new Map();\n    map.put(2);\n    map.freeze();\n    return map;\n  }\n\n  static Map third() {\n    return null;\n  }\n}\n";
    let snippet = "  // ... existing code ...\n  static Map first() {\n    // ... existing code ...\n\n    map.freeze();\n    return map;\n  }\n\n  static Map third() {\n  // ... existing code ...\n";
    let e = merge(file, snippet, &hints("A.java")).unwrap_err();
    assert_eq!(e.code, ErrorCode::ApplyNoop, "{}", e.message);
}

#[test]
fn braces_at_another_depth_do_not_make_a_segment_of_braces_ambiguous() {
    // `    }` then `  }` occurs once; the same braces one level deeper (lines 12-13) and one
    // level shallower (lines 15-16) are other lines.
    let file = "class Shapes {\n  area(kind) {\n    if (kind === 'square') {\n      return this.side * this.side;\n    }\n  }\n\n  scale(factor) {\n    for (const p of this.points) {\n      if (p.active) {\n        p.x *= factor;\n      }\n    }\n    this.scaled = true;\n  }\n}\n";
    let snippet = "// ... existing code ...\n    if (kind === 'square') {\n      this.count += 1;\n      return this.side * this.side;\n      // ... existing code ...\n    }\n  }\n\n  perimeter() {\n    return 4 * this.side;\n  }\n\n// ... existing code ...\n";
    let out = merge(file, snippet, &hints("shapes.js")).unwrap().content;
    let expected = file
        .replace(
            "      return this.side",
            "      this.count += 1;\n      return this.side",
        )
        .replace(
            "  }\n\n  scale",
            "  }\n\n  perimeter() {\n    return 4 * this.side;\n  }\n\n  scale",
        );
    assert_eq!(out, expected);
}

#[test]
fn a_context_line_without_its_trailing_whitespace_loses_it() {
    let file = "def first():\n    a = 1  \n    return a\n\n\ndef last():\n    return 2\n";
    let snippet = "def first():\n    a = 1\n    b = 2\n    return a\n# ... existing code ...\n";
    let out = lazy(file, snippet).unwrap();
    assert_eq!(out, file.replace("    a = 1  \n", "    a = 1\n    b = 2\n"));
}

const JS: &str = "import fs from 'fs';\n\nexport function read(dir) {\n  if (!fs.existsSync(dir)) {\n    return {};\n  }\n  return fs.readFileSync(dir);\n}\n\nexport function main() {\n  const config = read(process.cwd());\n  console.log(config);\n}\n";

#[test]
fn a_new_function_after_a_placeholder_is_appended_not_written_over_the_last_one() {
    let snippet =
        "// ... existing code ...\n\nexport function reset(dir) {\n  fs.rmSync(dir);\n}\n";
    let out = merge(JS, snippet, &hints("app.js")).unwrap().content;
    assert_eq!(
        out,
        format!("{JS}\nexport function reset(dir) {{\n  fs.rmSync(dir);\n}}\n")
    );
}

#[test]
fn a_new_python_function_after_a_placeholder_is_appended() {
    let snippet = "# ... existing code ...\n\n\ndef newest():\n    return 4\n";
    assert_eq!(
        lazy(PY, snippet).unwrap(),
        format!("{PY}\n\ndef newest():\n    return 4\n")
    );
}

#[test]
fn a_new_function_before_a_placeholder_goes_first_without_deleting_anything() {
    let snippet = "export function helper() {\n  return 1;\n}\n\n// ... existing code ...\n";
    let out = merge(JS, snippet, &hints("app.js")).unwrap().content;
    assert!(
        out.starts_with("export function helper() {\n  return 1;\n}\n"),
        "{out}"
    );
    assert!(out.ends_with(JS), "{out}");
}

#[test]
fn a_new_method_before_the_closing_brace_of_a_class_goes_inside_it() {
    let file = "export class Store {\n  add(item) {\n    this.items.push(item);\n  }\n\n  size() {\n    return this.items.length;\n  }\n}\n";
    let snippet = "// ... existing code ...\n\n  clear() {\n    this.items = [];\n  }\n}\n";
    let out = merge(file, snippet, &hints("store.js")).unwrap().content;
    assert_eq!(
        out,
        file.replace(
            "    return this.items.length;\n  }\n}\n",
            "    return this.items.length;\n  }\n\n  clear() {\n    this.items = [];\n  }\n}\n"
        )
    );
}

#[test]
fn a_placeholder_free_method_with_a_changed_signature_replaces_that_method() {
    let file = "import math\n\n\nclass Calc:\n    def add(self, a, b):\n        return a + b\n\n    def mul(self, a, b):\n        return a * b\n";
    let snippet = "    def mul(self, a, b, c=1):\n        return a * b * c\n";
    let out = merge(file, snippet, &hints("calc.py")).unwrap().content;
    assert_eq!(
        out,
        file.replace(
            "    def mul(self, a, b):\n        return a * b\n",
            "    def mul(self, a, b, c=1):\n        return a * b * c\n"
        )
    );
}
#[test]
fn new_code_cut_off_by_a_placeholder_ends_like_the_block_before_it() {
    // The new test's last lines repeat the old test's, and a placeholder cuts it off: the
    // placeholder stands for the rest of the new test, which the old test's copy gives.
    let file = "func TestA(t *testing.T) {\n\tw := get(\"/a\")\n\n\tassert.Equal(t, 200, w.Code)\n\tassert.Equal(t, \"a\", w.Body)\n\tassert.Equal(t, \"x\", w.Header)\n}\n\nfunc TestZ(t *testing.T) {\n\trun()\n}\n";
    let snippet = "// ... existing code ...\n\tassert.Equal(t, 200, w.Code)\n\tassert.Equal(t, \"a\", w.Body)\n\tassert.Equal(t, \"x\", w.Header)\n}\n\nfunc TestB(t *testing.T) {\n\tw := get(\"/b\")\n\n\tassert.Equal(t, 200, w.Code)\n\tassert.Equal(t, \"a\", w.Body)\n// ... existing code ...\n";
    let out = merge(file, snippet, &hints("x_test.go")).unwrap().content;
    assert_eq!(
        out,
        "func TestA(t *testing.T) {\n\tw := get(\"/a\")\n\n\tassert.Equal(t, 200, w.Code)\n\tassert.Equal(t, \"a\", w.Body)\n\tassert.Equal(t, \"x\", w.Header)\n}\n\nfunc TestB(t *testing.T) {\n\tw := get(\"/b\")\n\n\tassert.Equal(t, 200, w.Code)\n\tassert.Equal(t, \"a\", w.Body)\n\tassert.Equal(t, \"x\", w.Header)\n}\n\nfunc TestZ(t *testing.T) {\n\trun()\n}\n"
    );
}

#[test]
fn a_moved_line_takes_the_blank_line_that_set_it_apart() {
    // The import moved to the top of the group; the blank line that separated it goes too.
    let file = "package gin\n\nimport (\n\t\"net/http\"\n\t\"path\"\n\n\t\"github.com/x/router\"\n)\n\ntype Group struct{}\n";
    let snippet = "// ... existing code ...\nimport (\n\t\"github.com/x/router\"\n\t\"net/http\"\n\t\"path\"\n)\n// ... existing code ...\n";
    let out = merge(file, snippet, &hints("x.go")).unwrap().content;
    assert_eq!(
        out,
        "package gin\n\nimport (\n\t\"github.com/x/router\"\n\t\"net/http\"\n\t\"path\"\n)\n\ntype Group struct{}\n"
    );
}

#[test]
fn a_closer_after_a_placeholder_that_two_blocks_end_alike_is_two_readings() {
    // `first` is shown open and its last lines closed, then a blank line and `third`; `second`
    // ends the same way, so the closer is first's (and `second` goes: the snippet writes
    // `third` right after it) or second's (the placeholder keeps `second`). The merge asks,
    // naming `second`'s lines; with `second` shown under a placeholder it merges.
    let file = "class Maps {\n  static Map first() {\n    Map map = new Map();\n    map.put(1);\n    map.freeze();\n    return map;\n  }\n\n  static Map second() {\n    Map map = new Map();\n    map.put(2);\n    map.freeze();\n    return map;\n  }\n\n  static Map third() {\n    return null;\n  }\n}\n";
    let snippet = "  // ... existing code ...\n  static Map first() {\n    // ... existing code ...\n    map.freeze();\n    return map;\n  }\n\n  static Map third() {\n    return Map.empty();\n  }\n  // ... existing code ...\n";
    let e = merge(file, snippet, &hints("Maps.java")).unwrap_err();
    assert_eq!(e.code, ErrorCode::NeedsMoreContext);
    assert!(
        e.message.contains("6 line(s) between them (from line 9)"),
        "{}",
        e.message
    );
    let shown = snippet.replace(
        "  }\n\n  static Map third",
        "  }\n  // ... existing code ...\n  static Map third",
    );
    let out = merge(file, &shown, &hints("Maps.java")).unwrap().content;
    assert_eq!(out, file.replace("return null;", "return Map.empty();"));
}

#[test]
fn a_class_header_continued_on_its_next_line_opens_the_body() {
    // `implements ...{` continues the header: the class is open at the placeholder, so the
    // method's closing brace is not the class's.
    let file = "final class Adapters {\n  private static final class NumberAdapter\n      implements Serializer<Number>, Deserializer<Number> {\n    public Element serialize(Number src) {\n      return new Primitive(src);\n    }\n\n    public Number deserialize(Element json) {\n      return json.getAsNumber();\n    }\n  }\n}\n";
    let snippet = "  private static final class NumberAdapter\n      implements Serializer<Number>, Deserializer<Number> {\n    public Element serialize(Number src) {\n      return new Primitive(src, true);\n    }\n\n// ... keep existing code ...\n";
    let out = merge(file, snippet, &hints("Adapters.java"))
        .unwrap()
        .content;
    assert_eq!(
        out,
        "final class Adapters {\n  private static final class NumberAdapter\n      implements Serializer<Number>, Deserializer<Number> {\n    public Element serialize(Number src) {\n      return new Primitive(src, true);\n    }\n\n    public Number deserialize(Element json) {\n      return json.getAsNumber();\n    }\n  }\n}\n"
    );
}

#[test]
fn of_two_equal_anchors_the_one_keeping_the_snippets_distances_wins() {
    // `except ImportError:` and the Headers import both occur once; the new try block's copy
    // of the former is new code, the latter is context at its distance.
    let file = "from time import time\nfrom threading import RLock\nfrom werkzeug.urls import url_quote\nfrom functools import update_wrapper\n\n\nfrom werkzeug.datastructures import Headers\nfrom werkzeug.exceptions import NotFound\n\ntry:\n    from werkzeug.wsgi import wrap_file\nexcept ImportError:\n    from werkzeug.utils import wrap_file\n";
    let snippet = "# ... existing code ...\nfrom threading import RLock\nfrom functools import update_wrapper\n\ntry:\n    from werkzeug.urls import url_quote\nexcept ImportError:\n    from urlparse import quote as url_quote\n\nfrom werkzeug.datastructures import Headers\n# ... existing code ...\n";
    let out = merge(file, snippet, &hints("x.py")).unwrap().content;
    assert_eq!(
        out,
        "from time import time\nfrom threading import RLock\nfrom functools import update_wrapper\n\ntry:\n    from werkzeug.urls import url_quote\nexcept ImportError:\n    from urlparse import quote as url_quote\n\nfrom werkzeug.datastructures import Headers\nfrom werkzeug.exceptions import NotFound\n\ntry:\n    from werkzeug.wsgi import wrap_file\nexcept ImportError:\n    from werkzeug.utils import wrap_file\n"
    );
}

#[test]
fn of_two_single_line_anchors_the_longer_line_wins() {
    // `@returns A new Ky instance.` and the long description line each occur once but
    // disagree; the longer says more.
    let file = "interface Ky {\n\t/**\n\tFetch the given `url` with the delete method.\n\n\t@returns A promise with body methods.\n\t*/\n\tdelete(url: string): ResponsePromise;\n\n\t/**\n\tCreate a new Ky instance with some defaults overridden with your own.\n\n\t@returns A new Ky instance.\n\t*/\n\textend(defaults: Options): Ky;\n}\n";
    let snippet = "// ... keep existing code ...\n\t/**\n\tCreate a new Ky instance with complete new defaults.\n\n\t@returns A new Ky instance.\n\t*/\n\tcreate(defaults: Options): Ky;\n\n\t/**\n\tCreate a new Ky instance with some defaults overridden with your own.\n\n\t// ... keep existing code ...\n";
    let out = merge(file, snippet, &hints("ky.ts")).unwrap().content;
    assert_eq!(
        out,
        "interface Ky {\n\t/**\n\tFetch the given `url` with the delete method.\n\n\t@returns A promise with body methods.\n\t*/\n\tdelete(url: string): ResponsePromise;\n\n\t/**\n\tCreate a new Ky instance with complete new defaults.\n\n\t@returns A new Ky instance.\n\t*/\n\tcreate(defaults: Options): Ky;\n\n\t/**\n\tCreate a new Ky instance with some defaults overridden with your own.\n\n\t@returns A new Ky instance.\n\t*/\n\textend(defaults: Options): Ky;\n}\n"
    );
}

#[test]
fn the_snippets_last_line_may_be_the_new_version_of_the_files_last_line() {
    // Nothing else anchors the part: its last line, at the snippet's open end, is the
    // changed last line of the file.
    let file = "def get(url):\n    \"\"\"Send a GET request.\"\"\"\n    return request(\"get\", url)\n\n\ndef delete(url):\n    \"\"\"Send a DELETE request.\"\"\"\n    return request(\"delete\", url)\n";
    let snippet = "# ... existing code ...\n\n    return request(\"DELETE\", url)\n";
    let out = merge(file, snippet, &hints("api.py")).unwrap().content;
    assert_eq!(
        out,
        "def get(url):\n    \"\"\"Send a GET request.\"\"\"\n    return request(\"get\", url)\n\n\ndef delete(url):\n    \"\"\"Send a DELETE request.\"\"\"\n    return request(\"DELETE\", url)\n"
    );
}

#[test]
fn lines_moved_into_another_part_of_the_snippet_leave_their_old_place() {
    // The two fields reappear in a new struct further down: the edge after `Owner` passes
    // over their old copies to the blank line the snippet shows, and they go.
    let file = "package p\n\ntype Project struct {\n\tName    string\n\tOwner   string\n\tCmdName string\n\tCmdArgs string\n\n\tpath string\n}\n\nfunc (p *Project) Create() error {\n\treturn nil\n}\n";
    let snippet = "// ... existing code ...\ntype Project struct {\n\tName    string\n\tOwner   string\n\n\t// ... existing code ...\n}\n\ntype Command struct {\n\tCmdName string\n\tCmdArgs string\n}\n\n// ... existing code ...\n";
    let out = merge(file, snippet, &hints("p.go")).unwrap().content;
    assert_eq!(
        out,
        "package p\n\ntype Project struct {\n\tName    string\n\tOwner   string\n\n\tpath string\n}\n\ntype Command struct {\n\tCmdName string\n\tCmdArgs string\n}\n\nfunc (p *Project) Create() error {\n\treturn nil\n}\n"
    );
}

#[test]
fn lines_above_a_snippet_opening_with_no_placeholder_that_it_shows_moved_go() {
    // The snippet opens at the file's top with the imports reordered: its first line stands
    // at file line 2, and the line above it is the one it shows next.
    let file = "import b\nimport a\n\n\ndef f():\n    return a.x + b.y\n";
    let snippet =
        "import a\nimport b\n\n\ndef f():\n    return a.x + b.y\n# ... existing code ...\n";
    assert_eq!(
        lazy(file, snippet).unwrap(),
        "import a\nimport b\n\n\ndef f():\n    return a.x + b.y\n"
    );
    // The same at the end: the snippet ends with no placeholder, and what follows its last
    // line in the file is what it moved above.
    let file = "a = 1\n\n\ndef f():\n    return a\n\n\nb = 2\n";
    let snippet = "# ... existing code ...\nb = 2\n\n\ndef f():\n    return a\n";
    assert_eq!(
        lazy(file, snippet).unwrap(),
        "a = 1\n\n\nb = 2\n\n\ndef f():\n    return a\n"
    );
}

#[test]
fn lines_above_a_snippet_opening_with_no_placeholder_stay_when_one_is_not_shown() {
    // `import c` is shown nowhere: the snippet may only have left its placeholder out, so
    // nothing above its first line goes (and `import b` stays where it was too).
    let file = "import c\nimport b\nimport a\n\n\ndef f():\n    return a.x + b.y\n";
    let snippet =
        "import a\nimport b\n\n\ndef f():\n    return a.x + b.y\n# ... existing code ...\n";
    // (The snippet's `import b` is new below `import a`; the old one, kept, stays too.)
    assert_eq!(
        lazy(file, snippet).unwrap(),
        "import c\nimport b\nimport a\nimport b\n\n\ndef f():\n    return a.x + b.y\n"
    );
}

#[test]
fn a_line_above_an_open_start_stays_when_the_snippet_keeps_a_copy_of_it_in_place() {
    // The file has `x = 1` twice and the snippet shows it twice: once kept in `f`, once new
    // in `g`. The global one above the snippet's first line was not moved: it stays.
    let file = "x = 1\n\n\ndef f():\n    x = 1\n    return x\n\n\ndef g():\n    return 2\n";
    let snippet = "def f():\n    x = 1\n    return x\n\n\ndef g():\n    x = 1\n    return x + 2\n";
    let out = lazy(file, snippet).unwrap();
    assert!(out.starts_with("x = 1\n\n\ndef f():\n"), "{out}");
    // Out of the file's order, the segment that opens the snippet does not start the file:
    // the line between the two parts is no open edge's, and stays.
    let file = "def a():\n    return 1\nX = 1\ndef b():\n    return 2\n";
    let snippet =
        "def b():\n    return 2\nX = 1\n# ... existing code ...\ndef a():\n    return 1\n";
    let out = lazy(file, snippet).unwrap();
    assert!(
        out.starts_with("def a():\n    return 1\nX = 1\ndef b():\n"),
        "{out}"
    );
    // A diff-style snippet deletes only its `-` lines.
    let file = "X = 1\n\n\ndef f():\n    return 1\n\n\nY = 2\n";
    let snippet = " def f():\n-    return 1\n+    return 2\n \n \n Y = 2\n X = 1\n";
    let out = lazy(file, snippet).unwrap();
    assert!(out.starts_with("X = 1\n"), "{out}");
}

#[test]
fn context_shown_without_its_trailing_comment_keeps_it_though_the_bare_line_recurs() {
    // The bare line stands elsewhere in the file too: shown without its comment as context
    // next to a changed signature, it is still the file's line there (the comment kept), not
    // a copy of the other one written in place of the commented line.
    let file = "impl F {\n    fn grow(&mut self, n: u64) -> Result<(), Error> {\n        if n > self.max {\n            self.roll()?; // a no-op once rolled\n        }\n        self.len = n;\n        Ok(())\n    }\n\n    fn flush(&mut self) -> Result<(), Error> {\n        self.roll()?;\n        Ok(())\n    }\n}\n";
    let snippet = "impl F {\n    fn grow(&mut self, n: u64) -> io::Result<()> {\n        if n > self.max {\n            self.roll()?;\n        }\n        self.len = n;\n    // ... existing code ...\n}\n";
    assert_eq!(
        merge(file, snippet, &hints("f.rs")).unwrap().content,
        file.replace(
            "fn grow(&mut self, n: u64) -> Result<(), Error> {",
            "fn grow(&mut self, n: u64) -> io::Result<()> {"
        )
    );
}

#[test]
fn a_doc_line_retyped_without_its_code_marks_is_the_files_line() {
    // The snippet shows a doc line as context with its backticks left off: the file's line,
    // marks kept — not a changed line (nor a new one next to the old).
    let file = "/// Parse `input` as a date.\n/// Fails on an empty `input`.\npub fn parse(input: &str) -> Result<Date, Error> {\n    let t = input.trim();\n    Date::from(t)\n}\n";
    let snippet = "/// Fails on an empty input.\npub fn parse(input: &str) -> Result<Date, Error> {\n    let t = input.trim();\n    if t.is_empty() {\n        return Err(Error::Empty);\n    }\n// ... existing code ...\n";
    assert_eq!(
        merge(file, snippet, &hints("d.rs")).unwrap().content,
        file.replace(
            "    Date::from(t)\n",
            "    if t.is_empty() {\n        return Err(Error::Empty);\n    }\n    Date::from(t)\n"
        )
    );
}

#[test]
fn a_trailing_comment_moved_onto_its_own_line_changes_the_line() {
    let file = "def run():\n    setup()\n    total = compute(items)  # cache the items for the next run\n    return total\n";
    // Shown without its comment, the line is the file's (the comment kept)...
    let shortened = "# ... existing code ...\n    setup()\n    total = compute(items)\n    report(total)\n    return total\n";
    assert_eq!(
        merge(file, shortened, &hints("r.py")).unwrap().content,
        file.replace(
            "    return total\n",
            "    report(total)\n    return total\n"
        )
    );
    // ...unless the comment follows on a line of its own: then it moved.
    let moved = "# ... existing code ...\n    setup()\n    total = compute(items)\n    # cache the items for the next run\n    return total\n";
    assert_eq!(
        merge(file, moved, &hints("r.py")).unwrap().content,
        "def run():\n    setup()\n    total = compute(items)\n    # cache the items for the next run\n    return total\n"
    );
}

#[test]
fn a_blank_line_between_shown_code_takes_the_snippets_whitespace() {
    let file = "def f():\n    a = 1\n    \n    b = 2\n    return a + b\n";
    let snippet = "# ... existing code ...\n    a = 1\n\n    b = 3\n    return a + b\n";
    assert_eq!(
        merge(file, snippet, &hints("f.py")).unwrap().content,
        "def f():\n    a = 1\n\n    b = 3\n    return a + b\n"
    );
}

#[test]
fn a_short_fragment_far_away_licenses_no_deletion() {
    // `done()` occurs once, but a line that short is once by chance: it does not pin the
    // snippet 20 lines down and delete everything between. Shown right after new code, it
    // is either the file's line (the steps deleted) or a copy: the merge asks.
    let steps: String = (0..20).map(|k| format!("    step_{k}(items);\n")).collect();
    let file = format!(
        "fn a(items: &[u32]) -> u32 {{\n    let total = compute(items);\n{steps}    done()\n}}\n"
    );
    let snippet = "// ... existing code ...\n    let total = compute(items);\n    let y = 2;\n    done()\n// ... existing code ...\n";
    let e = merge(&file, snippet, &hints("a.rs")).unwrap_err();
    assert_eq!(e.code, ErrorCode::NeedsMoreContext, "{}", e.message);
    assert!(e.message.contains("line 23"), "{}", e.message);
    // Next to the anchor it is the file's line: the three lines between go.
    let near = "fn a(items: &[u32]) -> u32 {\n    let total = compute(items);\n    step_one();\n    step_two();\n    step_three();\n    done()\n}\n";
    assert_eq!(
        merge(near, snippet, &hints("a.rs")).unwrap().content,
        "fn a(items: &[u32]) -> u32 {\n    let total = compute(items);\n    let y = 2;\n    done()\n}\n"
    );
}

#[test]
fn a_short_edge_line_near_its_anchor_holds_even_with_new_lines_between() {
    // `"reflect"` is too short to anchor on its own, but it is the one such line within
    // reach of the segment's first sure anchor: it pins the segment's edge there, though
    // the snippet adds lines between the two.
    let file = "package p\n\nimport (\n\t\"bytes\"\n\t\"reflect\"\n)\n\nconst (\n\tKindAlpha = 1\n\tKindBeta  = 2\n\n\tKindEverything = KindAlpha | KindBeta\n)\n\ntype Holder struct {\n\tvalue int\n}\n\nfunc (h *Holder) Value() int {\n\treturn h.value\n}\n";
    let snippet = "\t// ...\n\t\"reflect\"\n)\n\ntype Kind uint64\n\nconst (\n\tKindAlpha Kind = 1 << 63 // set when binding fails\n\tKindBeta  Kind = 1 << 62 // set when rendering fails\n\n\tKindEverything = KindAlpha | KindBeta\n)\n// ...\n";
    let out = merge(file, snippet, &hints("p.go")).unwrap().content;
    assert_eq!(
        out,
        file.replace("const (\n\tKindAlpha = 1\n\tKindBeta  = 2\n", "type Kind uint64\n\nconst (\n\tKindAlpha Kind = 1 << 63 // set when binding fails\n\tKindBeta  Kind = 1 << 62 // set when rendering fails\n")
    );
}

#[test]
fn the_last_line_of_a_new_function_is_not_pinned_to_a_look_alike() {
    // The snippet ends with a new function whose `return red` is also the last line of the
    // function after the shown one: that line is new code, not the place of the snippet's
    // end, and `tail` is kept.
    let file = "def fix(red):\n    red = fix_one(red)\n    return red\n\n\ndef tail(red):\n    red = tail_step(red)\n    return red\n\n\nif __name__ == \"__main__\":\n    main()\n";
    let snippet = "def fix(red):\n    red = fix_one(red)\n    return red\n\n\ndef fix_two(red):\n    red = step(red)\n    return red\n\n\n# ... existing code ...\n";
    let out = lazy(file, snippet).map_err(|e| e.message).unwrap();
    assert_eq!(
        out,
        file.replace(
            "\n\n\ndef tail",
            "\n\n\ndef fix_two(red):\n    red = step(red)\n    return red\n\n\ndef tail"
        )
    );
}

#[test]
fn new_code_for_the_end_of_a_file_ending_with_its_entry_guard_asks() {
    // The snippet ends with new code after a placeholder: the end of the file, which is
    // after the guard that runs the program (the new code would be defined too late), or
    // just before the guard? Two readings.
    let file = "import sys\n\n\ndef main():\n    run(sys.argv)\n\n\nif __name__ == '__main__':\n    main()\n";
    let snippet = "# ... existing code ...\n\n\nsettings = load()\n";
    let e = lazy(file, snippet).unwrap_err();
    assert_eq!(e.code, ErrorCode::NeedsMoreContext, "{}", e.message);
    assert!(
        e.message
            .contains("entry guard `if __name__ == '__main__':` (line 8)"),
        "{}",
        e.message
    );
    // Ruby's guard ends with `end`, and is read the same.
    let file = "def main\n  run(ARGV)\nend\n\nif __FILE__ == $0\n  main\nend\n";
    let snippet = "# ... existing code ...\n\nSETTINGS = load\n";
    let e = merge(file, snippet, &hints("tool.rb")).unwrap_err();
    assert!(
        e.message
            .contains("entry guard `if __FILE__ == $0` (line 5)"),
        "{}",
        e.message
    );
    // With the guard shown before it, the new code goes after the guard as the snippet says.
    let snippet =
        "# ... existing code ...\nif __name__ == '__main__':\n    main()\n\nsettings = load()\n";
    let file = "import sys\n\n\ndef main():\n    run(sys.argv)\n\n\nif __name__ == '__main__':\n    main()\n";
    assert_eq!(
        lazy(file, snippet).unwrap(),
        format!("{file}\nsettings = load()\n")
    );
}

#[test]
fn a_new_header_comment_over_an_unshown_one_asks() {
    // The snippet opens on a new comment block right above the file's first code line; the
    // file's own header comment above is not shown: replaced, or kept above the new one?
    let file = "# old header\n# of the module\n\nimport sys\n\n\ndef main():\n    run(sys.argv)\n";
    let snippet = "# A tool that rewrites imports.\n# Run it on one file.\n\nimport sys\n\n\ndef main():\n    run_all(sys.argv)\n";
    let e = lazy(file, snippet).unwrap_err();
    assert_eq!(e.code, ErrorCode::NeedsMoreContext, "{}", e.message);
    assert!(
        e.message.contains("header comment (lines 1-2)"),
        "{}",
        e.message
    );
    // Above code, not a header, the new comment simply goes in.
    let coded = "import os\n\nimport sys\n\n\ndef main():\n    run(sys.argv)\n";
    assert_eq!(
        lazy(coded, snippet).unwrap(),
        "import os\n\n# A tool that rewrites imports.\n# Run it on one file.\n\nimport sys\n\n\ndef main():\n    run_all(sys.argv)\n"
    );
}

#[test]
fn a_doc_line_copied_from_another_definition_licenses_no_deletion() {
    // The new doc comment reuses a line of `Alpha`'s: pinned there, it would license
    // deleting `Alpha` whole up to `Beta`'s body. A doc comment documents the definition
    // below it, and `Alpha` is not `Gamma`: the line is new, `Alpha` stays.
    let file = "package p\n\n// Alpha does alpha.\n// It is called automatically by the runner at start.\nfunc Alpha() {\n\talphaStep()\n\talphaCheck()\n}\n\n// Beta does beta work for the runner.\nfunc Beta() {\n\tbetaStepOne()\n\tbetaStepTwo()\n\tbetaStepThree()\n}\n";
    let snippet = "// ... existing code ...\n\n// Gamma does beta work.\n// It is called automatically by the runner at start.\nfunc Gamma() {\n\tbetaStepOne()\n\tbetaStepTwo()\n\t// ... existing code ...\n";
    match merge(file, snippet, &hints("p.go")) {
        Ok(m) => assert!(
            m.content
                .contains("func Alpha() {\n\talphaStep()\n\talphaCheck()\n}\n"),
            "{}",
            m.content
        ),
        Err(e) => assert_eq!(e.code, ErrorCode::NeedsMoreContext, "{}", e.message),
    }
}

#[test]
fn a_closer_that_places_a_segment_licenses_no_deletion_across_a_changed_line() {
    // The segment after the placeholder starts with the closers of the block the placeholder
    // sits in; then a changed line, then a unique anchor. The definition between the block
    // and the changed line is not shown, and a lone closer does not say it goes.
    let file = "a = 1\n\nread = function(path, done) {\n  var p = node.fs.cat(path)\n  p.then(function(text){\n    setTimeout(function(){\n      done(text)\n    }, 50)\n  })\n}\n\nload = function(path) {\n  read(path, function(text){\n    run(text)\n  })\n}\n\nload('/usr/lib/spec.js')\nload('lib/core.js')\nload('lib/mocks.js')\n";
    let snippet = "a = 1\n\nread = function(path, done) {\n  var p = posix.cat(path)\n  p.then(function(text){\n    setTimeout(function(){\n    // ... existing code ...\n  })\n}\n\nload('../spec.js')\nload('lib/core.js')\n// ... existing code ...\n";
    let out = merge(file, snippet, &hints("x.js")).unwrap().content;
    let want = file
        .replace("node.fs.cat", "posix.cat")
        .replace("load('/usr/lib/spec.js')", "load('../spec.js')");
    assert_eq!(out, want);
}

#[test]
fn a_closer_right_before_a_sure_anchor_ends_the_block_only_when_no_later_one_may() {
    // `return map; }` ends `a` and `b` alike: the snippet's may be b's, so b stays.
    let file = "class M {\n  static a() {\n    one();\n    two();\n    return map;\n  }\n\n  static b() {\n    three();\n    return map;\n  }\n\n  static c() {\n    four();\n    return map;\n  }\n}\n";
    let snippet = "class M {\n  static a() {\n    // ... existing code ...\n    return map;\n  }\n\n  static c() {\n    four();\n    return map;\n  }\n}\n";
    let e = merge(file, snippet, &hints("x.js")).unwrap_err();
    assert_eq!(e.code, ErrorCode::ApplyNoop, "{}", e.message);
    // Ending differently from b, a's last line places the closer at a's end: b goes.
    let file = file.replacen("    return map;\n", "    return done;\n", 1);
    let snippet = snippet.replacen("    return map;\n", "    return done;\n", 1);
    let out = merge(&file, &snippet, &hints("x.js")).unwrap().content;
    assert_eq!(
        out,
        file.replace("  static b() {\n    three();\n    return map;\n  }\n\n", "")
    );
}

/// A function holding a line less indented than its body (a multi-line string): the grammar's
/// extent runs to its real end, where the indentation would stop at the string.
const USAGE: &str = "import sys\n\n\ndef usage():\n    text = \"\"\"\nUsage: tool [options]\n  -h  help\n\"\"\"\n    return text\n\n\ndef other():\n    return 1\n";

#[test]
fn remove_deletes_a_definition_to_the_end_its_grammar_gives() {
    let snippet = "# ... existing code ...\n# remove usage\n# ... existing code ...\n";
    let out = merge(USAGE, snippet, &hints("tool.py")).unwrap().content;
    assert_eq!(out, "import sys\n\n\ndef other():\n    return 1\n");
}

#[test]
fn a_definition_the_line_reading_misses_is_found_by_the_grammar() {
    // GNU style: the name on its own line, after the return type.
    let file = "static int\nnorm(struct point *p)\n{\n  return p->x;\n}\n";
    let (lines, _) = split_lines(file);
    let by_lines = FileIndex::new(&lines);
    assert!(units::FileDefs::new(&by_lines).headers("norm").is_empty());
    let by_grammar = FileIndex::new(&lines).with_source(Some("geo.c"), file);
    assert_eq!(*units::FileDefs::new(&by_grammar).headers("norm"), [1]);
    assert_eq!(units::file_extent(&by_grammar, 1), (1, 5));
    // A language with no grammar here keeps to the lines.
    let unknown = FileIndex::new(&lines).with_source(Some("geo.unknown"), file);
    assert!(units::FileDefs::new(&unknown).headers("norm").is_empty());
}

#[test]
fn remove_refuses_a_definition_that_shares_its_line_with_another() {
    let file = "{\n  \"name\": \"x\",\n  \"scripts\": { \"build\": \"tsc\",\n    \"test\": \"jest\" },\n  \"version\": \"1.0.0\"\n}\n";
    let snippet = "// ... existing code ...\n// remove build\n// ... existing code ...\n";
    let e = merge(file, snippet, &hints("package.json")).unwrap_err();
    assert_eq!(e.code, ErrorCode::NeedsMoreContext);
    assert!(e.message.contains("`scripts`"), "{}", e.message);
}

#[test]
fn a_prototype_is_no_second_definition() {
    let file = "int parse(const char *s);\n\nint main(void)\n{\n  return parse(\"1\");\n}\n\nint parse(const char *s)\n{\n  return *s - '0';\n}\n";
    let (lines, _) = split_lines(file);
    let index = FileIndex::new(&lines).with_source(Some("main.c"), file);
    assert_eq!(*units::FileDefs::new(&index).headers("parse"), [7]);
    // So `remove parse` takes the definition, and the prototype stays for a person to see.
    let snippet = "/* ... existing code ... */\n/* remove parse */\n";
    let out = merge(file, snippet, &hints("main.c")).unwrap().content;
    assert!(!out.contains("return *s - '0';"), "{out}");
    assert!(out.starts_with("int parse(const char *s);\n"), "{out}");
}

#[test]
fn remove_takes_a_c_return_type_on_the_line_above() {
    let file = "#include <stdio.h>\n\nstatic int\nnorm(int x)\n{\n  return x;\n}\n\nint main(void)\n{\n  return 0;\n}\n";
    let snippet = "/* ... existing code ... */\n/* remove norm */\n/* ... existing code ... */\n";
    let out = merge(file, snippet, &hints("geo.c")).unwrap().content;
    assert_eq!(
        out,
        "#include <stdio.h>\n\nint main(void)\n{\n  return 0;\n}\n"
    );
}

#[test]
fn a_unit_shown_whole_replaces_the_definition_to_the_end_its_grammar_gives() {
    // The snippet's unit ends where the line reading ends it (at the string's lines); the
    // file's definition runs to its `return` by the grammar: the merge replaces it whole.
    let snippet = "def usage():\n    text = \"\"\"\nUsage: tool [options]\n  -h  help\n  -v  verbose\n\"\"\"\n    return text\n";
    let out = merge(USAGE, snippet, &hints("tool.py")).unwrap().content;
    assert_eq!(
        out,
        USAGE.replace("  -h  help\n", "  -h  help\n  -v  verbose\n")
    );
}

const JOBS: &str = "jobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n      - run: npm ci\n      - run: npm test\n  lint:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n      - run: npm ci\n      - run: npm run lint\n  docs:\n    runs-on: ubuntu-latest\n    steps:\n      - run: npm run docs\n";

#[test]
fn steps_a_new_job_repeats_license_no_change_to_an_old_jobs_steps() {
    // The new job's steps are the old jobs' too: aligned with `lint`'s, they would make
    // `npm run build` a new version of `npm run lint`, and `build:` a line inside `lint`.
    let snippet = "  build:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n      - run: npm ci\n      - run: npm run build\n  docs:\n    runs-on: ubuntu-latest\n";
    let e = merge(JOBS, snippet, &hints("ci.yml")).unwrap_err();
    assert_eq!(e.code, ErrorCode::NeedsMoreContext);
    assert!(e.message.contains("`- run: npm run lint`"), "{}", e.message);
    assert!(e.message.contains("elsewhere in the file"), "{}", e.message);
}

#[test]
fn the_same_steps_next_to_unchanged_lines_still_change_in_place() {
    // Shown from the job's own name down, the same steps are that job's: grounded.
    let snippet = "# ... existing code ...\n  lint:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n      - run: npm ci\n      - run: npm run lint -- --fix\n  docs:\n# ... existing code ...\n";
    let out = merge(JOBS, snippet, &hints("ci.yml")).unwrap().content;
    assert_eq!(
        out,
        JOBS.replace("npm run lint\n", "npm run lint -- --fix\n")
    );
}

const EXAMPLES: &str = "//! Examples.\n\n/// Parse a flag.\n///\n/// ```\n/// use demo::Parser;\n/// let p = Parser::new();\n/// assert!(p.flag(\"-v\"));\n/// ```\npub fn flag_example() {}\n\n/// Parse an option.\npub fn option_example() {}\n";

#[test]
fn lines_a_new_example_repeats_from_an_old_one_license_no_deletion_there() {
    // The new example's first lines are unique in the file, but new lines surround them:
    // taken for the old example's, they would replace its summary line.
    let snippet = "// ... existing code ...\npub fn flag_example() {}\n\n/// Parse a count.\n///\n/// ```\n/// use demo::Parser;\n/// let p = Parser::new();\n/// assert_eq!(p.count(\"-vvv\"), 3);\n/// ```\npub fn count_example() {}\n// ... existing code ...\n";
    let e = merge(EXAMPLES, snippet, &hints("lib.rs")).unwrap_err();
    assert_eq!(e.code, ErrorCode::NeedsMoreContext);
    assert!(e.message.contains("`/// Parse a flag.`"), "{}", e.message);
    assert!(
        e.message.contains("no unchanged line across"),
        "{}",
        e.message
    );
}

#[test]
fn a_body_replaced_under_a_new_function_is_refused_unless_its_lines_are_marked() {
    // The header run `with open(path) as f:` sits among new code: read as the file's, the
    // line after it goes; but the new function may merely repeat it. The line that goes pairs
    // with no new line as its changed version, so the merge asks (issue 37: a deletion
    // licensed only among new lines is refused, naming it and the ways to say it).
    let file = "import os\n\n\ndef load(path):\n    with open(path) as f:\n        data = f.read()\n    return parse(data)\n\n\ndef other():\n    pass\n";
    let snippet = "# ... existing code ...\ndef read_text(path):\n    with open(path) as f:\n        return f.read()\n\n\ndef load(path):\n    data = read_text(path)\n    return parse(data)\n# ... existing code ...\n";
    let e = merge(file, snippet, &hints("x.py")).unwrap_err();
    assert_eq!(e.code, ErrorCode::NeedsMoreContext);
    assert!(e.message.contains("from line 6"), "{}", e.message);
    assert!(e.message.contains("`-` lines"), "{}", e.message);
}

const CACHE: &str = "class Cache:\n    def get(self, key):\n        return self.data.get(key)\n\n    def put(self, key, value):\n        self.data[key] = value\n        self.size += 1\n\n    def clear(self):\n        self.data = {}\n";

#[test]
fn a_placeholder_right_under_a_body_keeps_the_rest_of_it_however_deep() {
    // The placeholder at the margin, right under the second line of `put`'s body: the
    // snippet shows the start of the body, not all of it — `self.size += 1` stays.
    let snippet = "# ... existing code ...\n    def get(self, key):\n        return self.data.get(key)\n\n    def put(self, key, value, ttl=None):\n        self.data[key] = value\n        self.expiry[key] = ttl\n# ... existing code ...\n";
    let out = lazy(CACHE, snippet).unwrap();
    assert_eq!(
        out,
        CACHE.replace(
            "    def put(self, key, value):\n        self.data[key] = value\n",
            "    def put(self, key, value, ttl=None):\n        self.data[key] = value\n        self.expiry[key] = ttl\n"
        )
    );
}

#[test]
fn a_blank_line_before_the_placeholder_ends_the_body_shown() {
    // After a blank line, the placeholder stands for what follows the method: `put` is shown
    // whole, and replaced whole.
    let snippet = "# ... existing code ...\n    def put(self, key, value):\n        self.data[key] = value\n        self.count()\n\n# ... existing code ...\n";
    let out = lazy(CACHE, snippet).unwrap();
    assert_eq!(
        out,
        CACHE.replace("        self.size += 1\n", "        self.count()\n")
    );
}

#[test]
fn a_new_definition_shaped_like_an_old_one_is_no_rename_of_it() {
    // The new `reset` block repeats the `#ifdef` lines of `fini`'s: aligned there, `reset`
    // would take the place of `fini`, whose body is another. New beside, or renamed and
    // rewritten? Asked, naming both.
    let file = "#ifdef _WIN32\nstatic int init(void) { return WSAStartup(); }\n#else\nstatic int init(void) { return 0; }\n#endif\n\n#ifdef _WIN32\nstatic void fini(void) { WSACleanup(); }\n#else\nstatic void fini(void) {}\n#endif\n";
    let snippet = "#ifdef _WIN32\nstatic int init(void) { return WSAStartup(); }\n#else\nstatic int init(void) { return setup(); }\n#endif\n\n#ifdef _WIN32\nstatic void reset(void) { WSAReset(); }\n#else\nstatic void reset(void) {}\n#endif\n// ... existing code ...\n";
    let e = merge(file, snippet, &hints("net.c")).unwrap_err();
    assert_eq!(e.code, ErrorCode::NeedsMoreContext);
    assert!(
        e.message.contains("take the place of `fini`"),
        "{}",
        e.message
    );
    assert!(e.message.contains("rename fini to"), "{}", e.message);
    // Said in the instruction, the rename is made.
    let renamed = merge(
        file,
        snippet,
        &Hints {
            path: Some("net.c"),
            instruction: Some("rename fini to reset"),
        },
    );
    assert!(renamed.is_ok(), "{renamed:?}");
}

#[test]
fn a_changed_last_line_another_definition_ends_with_does_not_cut_that_one() {
    // `return response` is `before_request`'s new last line, and `after_response`'s own: read
    // as the latter, the merge deleted `before_retry` whole and `after_response`'s header,
    // the rest of it left under `before_request`. Asked instead.
    let file = "def before_request(request, options):\n    return None\n\n\ndef before_retry(request, options, error):\n    log(error)\n    return None\n\n\ndef after_response(request, options, response):\n    return response\n\n\ndef a():\n    return 1\n\n\ndef b():\n    return 2\n\n\ndef c():\n    return 3\n";
    let snippet = "# ... existing code ...\ndef before_request(request, options):\n    return response\n# ... existing code ...\n";
    let e = merge(file, snippet, &hints("hooks.py")).unwrap_err();
    assert_eq!(e.code, ErrorCode::NeedsMoreContext);
    assert!(
        e.message.contains("delete `after_response`'s header"),
        "{}",
        e.message
    );
    // With the line under it shown, the change is read in place.
    let shown = "# ... existing code ...\ndef before_request(request, options):\n    return response\n\n\ndef before_retry(request, options, error):\n# ... existing code ...\n";
    let out = lazy(file, shown).unwrap();
    assert_eq!(
        out,
        file.replacen("    return None\n", "    return response\n", 1)
    );
}

#[test]
fn a_body_folded_into_the_definition_above_is_merged() {
    // `setup_more`'s header goes and its body joins `setup`'s: more of the old body is kept
    // than one line, so it is no cut (nor when the snippet is the whole file, nor in a class).
    let file = "def setup(app):\n    app.init()\n    app.load()\n\n\ndef setup_more(app):\n    app.extra()\n    app.finish()\n\n\ndef run(app):\n    app.run()\n";
    let folded = "def setup(app):\n    app.init()\n    app.load()\n    app.extra()\n    app.finish()\n\n\ndef run(app):\n    app.run()\n";
    assert_eq!(lazy(file, folded).unwrap(), folded);
    let in_class = format!("class App:\n{}", indent_by(file, 4));
    let snippet = format!(
        "class App:\n{}# ... existing code ...\n",
        indent_by(
            "def setup(app):\n    app.init()\n    app.load()\n    app.extra()\n    app.finish()\n\n\ndef run(app):\n",
            4
        )
    );
    assert_eq!(
        lazy(&in_class, &snippet).unwrap(),
        format!("class App:\n{}", indent_by(folded, 4))
    );
}

/// `text` with each line that has text indented by `n` spaces.
fn indent_by(text: &str, n: usize) -> String {
    text.lines()
        .map(|l| {
            if l.is_empty() {
                "\n".to_string()
            } else {
                format!("{}{l}\n", " ".repeat(n))
            }
        })
        .collect()
}

#[test]
fn a_definition_renamed_and_nothing_else_is_a_rename() {
    let file = "def a():\n    pass\n\n\ndef helper(x):\n    return x + 1\n\n\ndef z():\n    pass\n";
    let snippet = file.replace("def helper(x):", "def plus_one(x):");
    let out = lazy(file, &snippet).unwrap();
    assert_eq!(out, snippet);
}

#[test]
fn a_remove_directive_right_under_a_body_ends_that_body() {
    // Not a placeholder: the body shown is the whole body, replaced.
    let snippet = "# ... existing code ...\ndef first():\n    return 2\n# remove helper\n# ... existing code ...\n";
    let out = lazy(PY, snippet).unwrap();
    assert_eq!(
        out,
        PY.replace(
            "    a = 1\n    b = 2\n    c = 3\n    return a + b + c\n\n\ndef helper(x):\n    return x * 2\n",
            "    return 2\n"
        )
    );
}

#[test]
fn a_recursive_definition_renamed_and_nothing_else_is_a_rename() {
    let file = "def a():\n    pass\n\n\ndef fact(n):\n    return 1 if n < 2 else n * fact(n - 1)\n\n\ndef z():\n    pass\n";
    let snippet = file.replace("fact(", "factorial(");
    let out = lazy(file, &snippet).unwrap();
    assert_eq!(out, snippet);
}

#[test]
fn deletions_a_diff_style_snippet_spells_out_need_no_other_licence() {
    let file = "fn load() -> u32 {\n    1\n}\n\nfn other() {}\n";
    let snippet = "+fn helper() -> u32 {\n+    2\n+}\n+\n fn load() -> u32 {\n-    1\n+    helper() + 1\n }\n";
    let out = merge(file, snippet, &hints("x.rs")).unwrap().content;
    assert_eq!(
        out,
        "fn helper() -> u32 {\n    2\n}\n\nfn load() -> u32 {\n    helper() + 1\n}\n\nfn other() {}\n"
    );
}

const SEALED: &str = "use crate::parse::{inner_unexpected, ParseBuffer, Unexpected};\nuse std::fmt;\n\n/// Doc.\npub trait AnyDelimiter {\n    /// Returns the delimiter.\n    fn delimiter(&self) -> u8;\n    fn span(&self) -> u32;\n}\n\nimpl<'a> AnyDelimiter for ParseBuffer<'a> {\n    fn delimiter(&self) -> u8 {\n        0\n    }\n    fn span(&self) -> u32 {\n        1\n    }\n}\n";

#[test]
fn a_new_module_named_like_a_modifier_is_new_code_not_a_changed_import_or_impl() {
    // `mod private` is a new definition: its `use` line and its `impl` are new code, not new
    // versions of the file's `use` and `impl` lines.
    let snippet = "// ...\n/// Doc.\npub trait AnyDelimiter: private::Sealed {\n    /// Returns the delimiter.\n    // ...\n}\n\nmod private {\n    use crate::parse::ParseBuffer;\n\n    pub trait Sealed {}\n\n    impl<'a> Sealed for ParseBuffer<'a> {}\n}\n";
    let out = merge(SEALED, snippet, &hints("ext.rs")).unwrap().content;
    let expected = SEALED
        .replace("pub trait AnyDelimiter {", "pub trait AnyDelimiter: private::Sealed {")
        .replace(
            "}\n\nimpl<'a> AnyDelimiter",
            "}\n\nmod private {\n    use crate::parse::ParseBuffer;\n\n    pub trait Sealed {}\n\n    impl<'a> Sealed for ParseBuffer<'a> {}\n}\n\nimpl<'a> AnyDelimiter",
        );
    assert_eq!(out, expected);
}

const LEXER: &str = "static void reset(Lexer *l) {\n  l->pos = 0;\n  if (skip) l->start = l->pos;\n}\n\nstatic void advance(Lexer *l, bool skip) {\n  if (skip) {\n    LOG(\"skip\");\n  } else {\n    LOG(\"consume\");\n  }\n  l->pos++;\n}\n";

#[test]
fn a_line_new_code_repeats_gives_way_to_the_context_that_opens_the_segment() {
    // The new block repeats `reset`'s longer line: taken as the anchor, it would move the
    // segment into `reset`, and the context that opens it would be copied there as new code.
    let snippet = "// ... existing code ...\n  } else {\n    LOG(\"consume\");\n  }\n\n  if (l->fast) {\n    l->start = l->pos;\n    if (skip) l->start = l->pos;\n    return;\n  }\n  l->pos++;\n// ... existing code ...\n";
    let out = merge(LEXER, snippet, &hints("lexer.c")).unwrap().content;
    assert_eq!(
        out,
        LEXER.replace(
            "  }\n  l->pos++;\n",
            "  }\n\n  if (l->fast) {\n    l->start = l->pos;\n    if (skip) l->start = l->pos;\n    return;\n  }\n  l->pos++;\n"
        )
    );
}

#[test]
fn a_line_only_like_the_next_one_is_no_change_of_it_when_new_code_runs_to_a_placeholder() {
    // `l->pos += 2;` opens nothing, sits deeper and shares no word of its own with
    // `l->pos++;`: inserted before it or replacing it, both read; the merge asks.
    let snippet = "// ... existing code ...\n  } else {\n    LOG(\"consume\");\n  }\n\n  if (l->fast) {\n    l->pos += 2;\n    return;\n  }\n// ... existing code ...\n";
    let e = merge(LEXER, snippet, &hints("lexer.c")).unwrap_err();
    assert_eq!(e.code, ErrorCode::NeedsMoreContext);
    assert!(
        e.message.contains("file line 12 `l->pos++;`"),
        "{}",
        e.message
    );
    assert!(e.message.contains("go beside it"), "{}", e.message);
}

#[test]
fn a_changed_line_that_opens_the_same_bracket_replaces_its_old_version_beside_new_lines() {
    // Kept beside its new version, the old line would leave a bracket open: it is changed.
    let file = "function check(response) {\n  if (!response.ok && (\n    strict\n  )) {\n    throw new Error();\n  }\n}\n";
    let snippet = "// ...\n  // Opaque responses are fine.\n  if (!response.ok && response.type !== 'opaque' && (\n    strict\n// ...\n";
    let out = merge(file, snippet, &hints("check.js")).unwrap().content;
    assert_eq!(
        out,
        file.replace(
            "  if (!response.ok && (\n",
            "  // Opaque responses are fine.\n  if (!response.ok && response.type !== 'opaque' && (\n"
        )
    );
}

const IMPLS: &str = "impl Debug for A {\n    fn fmt(&self, f: &mut Formatter) -> Result {\n        f.write_str(\"a\")\n    }\n}\n\nimpl Debug for B {\n    fn fmt(&self, f: &mut Formatter) -> Result {\n        f.write_str(\"b\")\n    }\n}\n\nimpl Debug for C {\n    fn fmt(&self, f: &mut Formatter) -> Result {\n        f.write_str(\"c\")\n    }\n}\n";

#[test]
fn a_new_impl_for_another_type_does_not_take_an_old_impls_place() {
    // The new blocks' `fn fmt` lines are the old blocks' too: aligned with them, `impl Debug
    // for New` would become `impl Debug for B`'s new version, and B's block would be gone.
    let mut snippet = String::from(
        "// ...\n    fn fmt(&self, f: &mut Formatter) -> Result {\n        f.write_str(\"x\")\n    }\n}\n",
    );
    for name in ["New", "Other"] {
        snippet.push_str(&format!("\nstruct {name};\n\nimpl Debug for {name} {{\n    fn fmt(&self, f: &mut Formatter) -> Result {{\n        f.write_str(\"{name}\")\n    }}\n}}\n"));
    }
    let e = merge(IMPLS, &snippet, &hints("debug.rs")).unwrap_err();
    assert_eq!(e.code, ErrorCode::NeedsMoreContext);
    assert!(
        e.message.contains("`impl Debug for B` (file line 7)"),
        "{}",
        e.message
    );
}

#[test]
fn an_impl_for_a_renamed_type_with_its_body_kept_is_a_rename() {
    let snippet = "// ...\n\nimpl Debug for Bee {\n    fn fmt(&self, f: &mut Formatter) -> Result {\n        f.write_str(\"b\")\n    }\n}\n\nimpl Debug for C {\n// ...\n";
    let out = merge(IMPLS, snippet, &hints("debug.rs")).unwrap().content;
    assert_eq!(
        out,
        IMPLS.replace("impl Debug for B {", "impl Debug for Bee {")
    );
}

#[test]
fn an_impl_whose_generics_change_is_the_same_block() {
    let file = "impl<'a, T> Debug for Lite<&'a T> {\n    fn fmt(&self) -> String {\n        old(self)\n    }\n}\n\nfn tail() {}\n";
    let snippet = "impl<T> Debug for Lite<&T> {\n    fn fmt(&self) -> String {\n        new(self)\n    }\n}\n// ...\n";
    let out = merge(file, snippet, &hints("lite.rs")).unwrap().content;
    assert_eq!(
        out,
        file.replace(
            "impl<'a, T> Debug for Lite<&'a T>",
            "impl<T> Debug for Lite<&T>"
        )
        .replace("old(self)", "new(self)")
    );
}

#[test]
fn a_closer_at_another_depth_does_not_pin_an_anchorless_snippet_to_the_files_end() {
    // `    }` is not the file's last `}`: nothing places these lines, so nothing may go.
    let file = "mod tests {\n    #[test]\n    fn a() {\n        check(\n            1,\n        );\n    }\n}\n";
    let snippet = "        );\n        assert!(done());\n    }\n";
    let e = merge(file, snippet, &hints("t.rs")).unwrap_err();
    assert_eq!(e.code, ErrorCode::NeedsMoreContext);
    assert!(
        e.message
            .contains("hold no line that places them: `);` (line 6) is too plain"),
        "{}",
        e.message
    );
    assert!(
        e.message.contains("`}` occurs 2 times (lines 7, 8)"),
        "{}",
        e.message
    );
}

#[test]
fn a_snippet_anchored_only_on_repeated_lines_is_told_where_they_occur() {
    // `}` and `#[test]` are in the file, many times: the refusal says so, and where, instead
    // of saying the file has none of the snippet's lines.
    let mut file = String::from("mod tests {\n");
    for k in 0..5 {
        file += &format!("    #[test]\n    fn t{k}() {{\n        check({k});\n    }}\n\n");
    }
    file += "}\n";
    let snippet = "    }\n\n    #[test]\n    fn t_new() {\n        check(9);\n    }\n";
    let e = merge(&file, snippet, &hints("t.rs")).unwrap_err();
    assert_eq!(e.code, ErrorCode::NeedsMoreContext);
    assert!(
        !e.message.contains("no line from the file"),
        "{}",
        e.message
    );
    assert!(
        e.message
            .contains("`}` occurs 6 times (lines 5, 10, 15, 20, …)"),
        "{}",
        e.message
    );
    assert!(
        e.message
            .contains("`#[test]` occurs 5 times (lines 2, 7, 12, 17, …)"),
        "{}",
        e.message
    );
}

const OPTS: &str = "use std::path::PathBuf;\n\nstruct Opt {\n    /// Decode instead.\n    #[arg(short = 'd')]\n    decode: bool,\n\n    /// The input file.\n    #[arg(name = \"FILE\", value_parser)]\n    file: Option<PathBuf>,\n}\n\nfn main() {\n    let opt = Opt::parse();\n    run(opt);\n}\n";

#[test]
fn a_closing_brace_at_a_snippets_open_end_is_not_the_files_last_one_past_unshown_code() {
    // The struct's `}` ends the snippet; read as the file's last `}`, it would delete `main`.
    let snippet =
        "\n    /// The input file.\n    #[arg(name = \"FILE\")]\n    file: Option<PathBuf>,\n}\n";
    let out = merge(OPTS, snippet, &hints("main.rs")).unwrap().content;
    assert_eq!(out, OPTS.replace(", value_parser", ""));
}

#[test]
fn a_new_crate_visible_function_shaped_like_the_last_one_is_no_rename_of_it() {
    // `pub(crate) fn` reads as a definition header, so the renamed-and-rewritten reading is
    // seen: the new function would otherwise take the old one's place whole.
    let file = "use std::cmp::Ordering;\n\npub(crate) fn smallest<I>(iter: I, k: usize) -> Vec<I::Item>\nwhere\n    I: Iterator,\n{\n    let mut heap = iter.take(k).collect::<Vec<_>>();\n    heap.sort();\n    heap\n}\n";
    let snippet = "// ...\npub(crate) fn smallest_relaxed<I>(iter: I, k: usize) -> Vec<I::Item>\nwhere\n    I: Iterator,\n{\n    let mut buf = iter.take(2 * k).collect::<Vec<_>>();\n    buf.truncate(k);\n    buf\n}\n";
    let e = merge(file, snippet, &hints("k.rs")).unwrap_err();
    assert_eq!(e.code, ErrorCode::NeedsMoreContext);
    assert!(e.message.contains("`smallest`"), "{}", e.message);
}

#[test]
fn a_doc_heading_beside_bare_comment_marks_is_not_changed_into_a_new_paragraph() {
    // The new paragraph's `//!` lines match the file's bare ones; read that way, the
    // `# Usage` heading would be its first line's old version.
    let file = "//! A codec.\n//!\n//! It reads and writes frames.\n//!\n//! # Usage\n//!\n//! Call `encode`.\n\npub fn encode() {}\n";
    let snippet = "// ...\n//! It reads and writes frames.\n//!\n//! Frames longer than 64 KiB are split.\n//!\n// ...\n";
    let e = merge(file, snippet, &hints("codec.rs")).unwrap_err();
    assert_eq!(e.code, ErrorCode::NeedsMoreContext);
    assert!(e.message.contains("`//! # Usage`"), "{}", e.message);
}

#[test]
fn a_doc_line_reworded_beside_bare_comment_marks_still_changes_in_place() {
    let file = "//! A codec.\n//!\n//! It reads and writes frames.\n//!\n//! # Usage\n\npub fn encode() {}\n";
    let snippet = "//! A codec.\n//!\n//! It reads, checks and writes frames.\n//!\n// ...\n";
    let out = merge(file, snippet, &hints("codec.rs")).unwrap().content;
    assert_eq!(
        out,
        file.replace("reads and writes", "reads, checks and writes")
    );
}

const THREE: &str = "impl Stack {\n    fn push(&mut self, v: u8) {\n        self.items.push(v);\n        self.len += 1;\n    }\n\n    fn peek(&self) -> Option<u8> {\n        self.items.last().copied()\n    }\n\n    fn pop(&mut self) -> Option<u8> {\n        self.items.pop()\n    }\n}\n";

#[test]
fn a_closer_after_a_deep_placeholder_may_be_a_later_one_so_nothing_between_goes() {
    // `    }` may close `push` (and `peek` would go) or close `peek`: the second reading
    // deletes nothing the snippet never showed, so the lines stay.
    let snippet = "impl Stack {\n    fn push(&mut self, v: u8) {\n        self.items.push(v);\n        // ... existing code ...\n    }\n\n    fn pop(&mut self) -> Option<u8> {\n        self.len -= 1;\n        self.items.pop()\n    }\n}\n";
    let out = merge(THREE, snippet, &hints("stack.rs")).unwrap().content;
    assert_eq!(
        out,
        THREE.replace(
            "        self.items.pop()\n",
            "        self.len -= 1;\n        self.items.pop()\n"
        )
    );
}

#[test]
fn a_line_moved_into_a_new_block_beside_new_lines_is_refused_naming_its_depth() {
    let file = "fn f() {\n    call(alpha);\n    next();\n}\n";
    let snippet = "fn f() {\n    if ok {\n        call(alpha, beta);\n    }\n    // ... existing code ...\n}\n";
    let e = merge(file, snippet, &hints("f.rs")).unwrap_err();
    assert_eq!(e.code, ErrorCode::NeedsMoreContext);
    assert!(e.message.contains("at another depth"), "{}", e.message);
}

/// New code after a placeholder indented inside a definition's body, at the snippet's end:
/// the rest of that body, then the new code. When the body ends before the file does, the
/// file's end lies in another body (or past a closing line): two readings, refused, naming
/// both; when the body runs to the file's end, both readings are one.
#[test]
fn new_code_after_a_placeholder_inside_a_body_never_lands_in_another_body() {
    let file = "def add(a, b):\n    return a + b\n\n\ndef area(w, h):\n    return w * h\n";
    let snippet = "def add(a, b):\n    # ... existing code ...\n    print(a)\n";
    let e = lazy(file, snippet).unwrap_err();
    assert_eq!(e.code, ErrorCode::NeedsMoreContext);
    assert!(
        e.message.contains("end of that body") && e.message.contains("end of the file"),
        "{}",
        e.message
    );
    // Braces: the last function's closing line ends its body before the file does.
    let js =
        "function area(w, h) {\n  return w * h;\n}\n\nfunction add(a, b) {\n  return a + b;\n}\n";
    let snippet = "function add(a, b) {\n  // ... existing code ...\n  log(a);\n";
    let e = merge(js, snippet, &hints("calc.js")).unwrap_err();
    assert_eq!(e.code, ErrorCode::NeedsMoreContext, "{}", e.message);
    // The last definition's body runs to the file's end: one reading, merged there.
    let last = "def area(w, h):\n    return w * h\n\n\ndef add(a, b):\n    return a + b\n";
    let out = lazy(
        last,
        "def add(a, b):\n    # ... existing code ...\n    print(a)\n",
    )
    .unwrap();
    assert!(
        out.starts_with(last) && out.trim_end().ends_with("\n    print(a)"),
        "{out}"
    );
}

/// A C file indented with spaces whose macro bodies are indented with tabs: a snippet that
/// copies both kinds writes its new tab-indented line with its tab, and a line it re-indents
/// from spaces to a tab at the same depth is re-indented (a model writing one kind only still
/// gets the file's kind: `reindent_uses_the_files_style`).
#[test]
fn a_snippet_mixing_tabs_and_spaces_keeps_each_lines_own_whitespace() {
    let file = "#define CHECK(x) \\\n\tdo { \\\n\t\tif (!(x)) abort(); \\\n\t} while (0)\n\nint run(int a) {\n    int b = a;\n    return b;\n}\n";
    let snippet = "#define CHECK(x) \\\n\tdo { \\\n\t\tif (!(x)) abort(); \\\n\t\tcount++; \\\n\t} while (0)\n\nint run(int a) {\n    int b = a;\n\treturn b;\n}\n";
    let merged = merge(file, snippet, &hints("x.c")).unwrap();
    assert_eq!(merged.content, snippet);
    // One kind only: the new line takes the file's spaces.
    let snippet =
        "// ... existing code ...\nint run(int a) {\n\tint b = a;\n\tb++;\n\treturn b;\n}\n";
    let merged = merge(file, snippet, &hints("x.c")).unwrap();
    assert!(
        merged.content.contains("    b++;\n    return b;\n"),
        "{}",
        merged.content
    );
}

#[test]
fn a_snippet_that_stops_inside_an_indented_body_keeps_the_rest_of_it() {
    // The snippet changes a function's docstring and ends at its closing quotes with no
    // placeholder: the open edge keeps the body's other lines (read as the whole function,
    // the merge deleted them). A snippet showing the body to its last line still replaces
    // the function whole.
    let file = "import os\n\n\ndef load(path):\n    \"\"\"Read the file at path\n    and return its text.\n    \"\"\"\n    with open(path) as f:\n        text = f.read()\n    return text\n\n\ndef save(path, text):\n    with open(path, \"w\") as f:\n        f.write(text)\n";
    let snippet = "# ... existing code ...\ndef load(path):\n    \"\"\"Read the file at path (relative to os.getcwd())\n    and return its text.\n    \"\"\"\n";
    let changed = "Read the file at path (relative to os.getcwd())";
    assert_eq!(
        lazy(file, snippet).unwrap(),
        file.replace("Read the file at path", changed)
    );
    let whole = "# ... existing code ...\ndef load(path):\n    \"\"\"Read the file at path\n    and return its text.\n    \"\"\"\n    with open(path) as f:\n        return f.read()\n";
    assert_eq!(
        lazy(file, whole).unwrap(),
        file.replace(
            "        text = f.read()\n    return text\n",
            "        return f.read()\n"
        )
    );
}

#[test]
fn a_closer_after_an_inner_placeholder_ends_the_unit_the_snippet_opened() {
    // A long method shown the way careful models show one: its header, a placeholder, the
    // changed part (which closes an inner block it does not show open), a placeholder, and
    // the method's closing line. That `}` closes the method, whatever the inner `}` closed.
    let file = "class Client {\n\tconstructor() {\n\t\tthis.n = 0;\n\t}\n\n\tsend(x) {\n\t\tfor (const y of x) {\n\t\t\tif (y) {\n\t\t\t\tthis.n++;\n\t\t\t}\n\n\t\t\tif (!y) {\n\t\t\t\tthrow new Error('empty');\n\t\t\t}\n\n\t\t\tlog(y);\n\t\t}\n\n\t\treturn this.n;\n\t}\n\n\tclose() {\n\t\tthis.n = 0;\n\t}\n}\n";
    let snippet = "// ... existing code ...\n\tsend(x) {\n\t\t// ... existing code ...\n\t\t\t\tthis.n++;\n\t\t\t}\n\n\t\t\tif (!y && this.n > 0) {\n\t\t\t\tthrow new Error('empty');\n\t\t\t// ... existing code ...\n\t}\n\n// ... existing code ...\n";
    assert_eq!(
        lazy(file, snippet).unwrap(),
        file.replace("if (!y) {", "if (!y && this.n > 0) {")
    );
}

#[test]
fn a_snippet_that_rewords_a_one_line_docstring_and_stops_keeps_the_body() {
    // The snippet's last line is the changed version of the line under the header, not that
    // line itself, or a docstring the file lacks: the open edge still keeps the body's other
    // lines (read as the function shown whole, the merge deleted all three). A whole rewrite
    // still replaces the body.
    let file = "import os\n\n\ndef load(path):\n    \"\"\"Read the file.\"\"\"\n    with open(path) as f:\n        text = f.read()\n    return text\n\n\ndef save(path, text):\n    \"\"\"Write the file.\"\"\"\n    with open(path, \"w\") as f:\n        f.write(text)\n";
    let doc = "\"\"\"Read the file at path, relative to os.getcwd().\"\"\"";
    let snippet = format!("# ... existing code ...\ndef load(path):\n    {doc}\n");
    assert_eq!(
        lazy(file, &snippet).unwrap(),
        file.replace("\"\"\"Read the file.\"\"\"", doc)
    );
    // A docstring added where the file has none keeps the body the same way.
    let bare = file.replace("    \"\"\"Read the file.\"\"\"\n", "");
    assert_eq!(
        lazy(&bare, &snippet).unwrap(),
        file.replace("\"\"\"Read the file.\"\"\"", doc)
    );
    let whole = format!(
        "# ... existing code ...\ndef load(path):\n    {doc}\n    return open(path).read()\n"
    );
    assert_eq!(
        lazy(file, &whole).unwrap(),
        file.replace(
            "\"\"\"Read the file.\"\"\"\n    with open(path) as f:\n        text = f.read()\n    return text\n",
            &format!("{doc}\n    return open(path).read()\n")
        )
    );
}

#[test]
fn a_closer_after_a_header_with_lifetimes_closes_that_header() {
    // The careful way to show a long method: header, placeholder, the changed part,
    // placeholder, the method's closing line. The header's lifetimes (`<'a, …>`) are no
    // character literals: its `{` opens the block the closing line ends.
    let file = "impl<'a> Entries<'a> {\n    fn next(&mut self) -> Option<Entry<'a, Empty>> {\n        let mut n = 0;\n        loop {\n            if n > 3 {\n                return None;\n            }\n            n += 1;\n        }\n    }\n\n    fn skip(&mut self) {\n        loop {}\n    }\n}\n";
    let snippet = "// ... existing code ...\n    fn next(&mut self) -> Option<Entry<'a, Empty>> {\n        // ... existing code ...\n            if n > 4 {\n                return None;\n            }\n            // ... existing code ...\n    }\n// ... existing code ...\n";
    assert_eq!(
        merge(file, snippet, &hints("e.rs")).unwrap().content,
        file.replace("if n > 3 {", "if n > 4 {")
    );
}

#[test]
fn a_snippet_dropping_only_a_trailing_comment_is_told_how_to_delete_it() {
    // Shown without its comment, the line is context: the merge changes nothing, and says why
    // and what to send to delete the comment; the diff-style form deletes it.
    let file = "fn a() {\n    let x = load(); // cached\n    use_it(x);\n}\n\nfn b() {\n    let x = load();\n    other(x);\n}\n";
    let snippet = "fn a() {\n    let x = load();\n    use_it(x);\n}\n// ... existing code ...\n";
    let e = merge(file, snippet, &hints("a.rs")).unwrap_err();
    assert_eq!(e.code, ErrorCode::ApplyNoop, "{}", e.message);
    assert!(
        e.message
            .contains("Snippet line 2 is file line 2 without its trailing comment"),
        "{}",
        e.message
    );
    let diff =
        " fn a() {\n-    let x = load(); // cached\n+    let x = load();\n     use_it(x);\n }\n";
    assert_eq!(
        merge(file, diff, &hints("a.rs")).unwrap().content,
        file.replace("load(); // cached", "load();")
    );
}

#[test]
fn a_short_compound_assignment_changed_under_its_header_replaces_the_old_one() {
    // `n += 1;` is the new version of `n += 2;` (one target, one operator), not a new
    // statement beside it: the old line is replaced, not kept above or below the new one.
    let file = "int count(const char *s) {\n    int n = 0;\n    while (*s) {\n        if (*s == '\\t') {\n            n += 2;\n        }\n        s++;\n    }\n    return n;\n}\n";
    let snippet = "// ... existing code ...\n        if (*s == '\\t') {\n            n += 1;\n// ... existing code ...\n";
    assert_eq!(
        merge(file, snippet, &hints("count.c")).unwrap().content,
        file.replace("n += 2;", "n += 1;")
    );
}

#[test]
fn a_header_shown_without_its_trailing_comment_keeps_it() {
    // The header is placed by its name under a placeholder; shown without its comment it is
    // the file's line, comment kept, as any other line so shown.
    let file = "class Cmp:\n    def __init__(self, a):\n        self.a = a\n\n    def phase2(self): # Distinguish files, directories, funnies\n        self.dirs = []\n        for x in self.common:\n            try:\n                st = os.stat(x)\n            except OSError:\n                ok = 0\n\n    def phase3(self): # Find out differences\n        pass\n";
    let snippet = "# ... existing code ...\n    def phase2(self):\n        self.dirs = []\n        for x in self.common:\n            try:\n                st = os.stat(x)\n            except OSError:\n                ok = 1\n# ... existing code ...\n";
    assert_eq!(
        merge(file, snippet, &hints("cmp.py")).unwrap().content,
        file.replace("ok = 0", "ok = 1")
    );
}

#[test]
fn a_new_update_of_a_target_with_another_kind_of_value_goes_beside_the_old_one() {
    // `html += escape(it)` under the loop's header is a new statement: the file updates
    // `html` in turn, and `"<li>"` (text) is no earlier version of a call. Replacing it
    // would drop the file's `html += "<li>"` unseen.
    let file = "def render(items):\n    html = \"<ul>\"\n    for it in items:\n        html += \"<li>\"\n        html += it\n    html += \"</ul>\"\n    return html\n";
    let snippet = "    for it in items:\n        html += escape(it)\n# ... existing code ...\n";
    let merged = merge(file, snippet, &hints("render.py"));
    assert!(
        merged
            .as_ref()
            .is_ok_and(|m| m.content.contains("        html += \"<li>\"\n")),
        "{merged:?}"
    );
}

/// New code after the last line a segment places, shaped like the file's next block (`if
/// (…) { problems.add(…) }`) but with another condition, right before a placeholder: its
/// body line is a clear version of that block's, its header only loosely like. Nothing after
/// it confirms that the file's block is what it rewrites (its closer closes the block it
/// opens), so it is new code there and the file's block stays.
#[test]
fn a_new_sibling_block_before_a_placeholder_does_not_rewrite_the_next_one() {
    let file = "function check(node) {\n  const problems = new Set()\n  if (node.invalid) {\n    problems.add(`invalid: ${node.pkgid}`)\n  }\n\n  if (isExtraneous(node)) {\n    problems.add(`extraneous: ${node.pkgid}`)\n  }\n\n  return problems\n}\n";
    let snippet = "// ... existing code ...\n    problems.add(`invalid: ${node.pkgid}`)\n  }\n\n  if (node.errors?.length) {\n    problems.add(`error loading: ${node.pkgid}`)\n  }\n// ... existing code ...\n";
    let want = file.replace(
        "  if (isExtraneous",
        "  if (node.errors?.length) {\n    problems.add(`error loading: ${node.pkgid}`)\n  }\n\n  if (isExtraneous",
    );
    assert_eq!(
        merge(file, snippet, &hints("check.js")).map(|m| m.content),
        Ok(want)
    );
}

/// A fix that makes one method read as its siblings do: the changed line is verbatim a line of
/// the next method, a few lines on. Pinned at that copy, the snippet's two lines written
/// together would delete the rest of the method and the next one's header; the line right
/// after the context is its likeness, and it is that line's new version.
#[test]
fn a_line_made_like_its_siblings_changes_its_own_line_not_a_jump_to_their_copy() {
    let file = "struct Switch {\n  Switch &EndsWith(Str S, T Value) {\n    if (!Result && Str.ends_with(S))\n      Result = Value;\n\n    return *this;\n  }\n\n  Switch &StartsWith(Str S, T Value) {\n    if (!Result && Str.starts_with(S))\n      Result = std::move(Value);\n\n    return *this;\n  }\n\n  Switch &Case(Str S, T Value) {\n    if (!Result && Str == S)\n      Result = std::move(Value);\n\n    return *this;\n  }\n};\n";
    let snippet = "// ... existing code ...\n    if (!Result && Str.ends_with(S))\n      Result = std::move(Value);\n// ... existing code ...\n";
    let want = file.replacen(
        "      Result = Value;\n",
        "      Result = std::move(Value);\n",
        1,
    );
    assert_eq!(
        merge(file, snippet, &hints("switch.h")).map(|m| m.content),
        Ok(want)
    );
}
