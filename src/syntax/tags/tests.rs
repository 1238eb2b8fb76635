//! Definitions by tags, a test per language: names, kinds, header lines and extents.

use super::*;

/// The definitions of `text` (a file at `path`) as (name, kind, header, end).
fn found(path: &str, text: &str) -> Vec<(String, &'static str, usize, usize)> {
    let lang = Lang::of(path, text.lines().next().unwrap_or(""))
        .unwrap_or_else(|| panic!("{path}: no language"));
    defs(lang, text)
        .unwrap_or_else(|| panic!("{path}: no tags"))
        .into_iter()
        .map(|d| (d.name, d.kind, d.header, d.extent.1))
        .collect()
}

fn check(path: &str, text: &str, expected: &[(&str, &str, usize, usize)]) {
    let got = found(path, text);
    let got: Vec<(&str, &str, usize, usize)> = got
        .iter()
        .map(|(n, k, h, e)| (n.as_str(), *k, *h, *e))
        .collect();
    assert_eq!(got, expected, "{path}");
}

#[test]
fn every_built_in_query_compiles() {
    for lang in Lang::ALL {
        if lang.grammar().is_some() && source(lang).is_some() {
            assert!(
                has_tags(lang),
                "{}: its tags query does not compile",
                lang.name()
            );
        }
    }
    assert!(!has_tags(Lang::Html));
}

#[test]
fn rust_items_and_methods_start_at_their_item_not_their_attributes() {
    let text = "/// Docs.\n#[derive(Debug)]\npub struct Point {\n    x: i32,\n}\n\nimpl Point {\n    pub fn norm(&self) -> i32 {\n        self.x\n    }\n}\n\nfn print(p: &Point) {}\n\nmacro_rules! twice {\n    ($e:expr) => { $e * 2 };\n}\n";
    check(
        "a.rs",
        text,
        &[
            ("Point", "class", 2, 5),
            ("norm", "method", 7, 10),
            ("print", "function", 12, 13),
            ("twice", "macro", 14, 17),
        ],
    );
}

#[test]
fn python_decorated_functions_start_at_def() {
    let text = "import os\n\nLIMIT = 3\n\nclass App:\n    @property\n    def name(self):\n        return 'a'\n\n    def run(self):\n        pass\n\ndef main():\n    App().run()\n";
    check(
        "a.py",
        text,
        &[
            ("LIMIT", "constant", 2, 3),
            ("App", "class", 4, 11),
            ("name", "function", 6, 8),
            ("run", "function", 9, 11),
            ("main", "function", 12, 14),
        ],
    );
}

#[test]
fn javascript_functions_classes_and_arrow_constants() {
    let text = "function head(x) {\n  return x;\n}\n\nclass Cache {\n  get(key) {\n    return key;\n  }\n}\n\nconst sum = (a, b) => a + b;\nmodule.exports.tail = function (x) {\n  return x;\n};\n";
    check(
        "a.js",
        text,
        &[
            ("head", "function", 0, 3),
            ("Cache", "class", 4, 9),
            ("get", "method", 5, 8),
            ("sum", "function", 10, 11),
            ("tail", "function", 11, 14),
        ],
    );
}

#[test]
fn typescript_adds_interfaces_to_the_javascript_tags() {
    let text = "export interface Hooks {\n  before(): void;\n}\n\nexport function run(h: Hooks): void {\n  h.before();\n}\n";
    let got = found("a.ts", text);
    assert!(
        got.contains(&("Hooks".into(), "interface", 0, 3)),
        "{got:?}"
    );
    assert!(got.contains(&("run".into(), "function", 4, 7)), "{got:?}");
    let tsx = "export function App(p: { n: number }) {\n  return <div>{p.n}</div>;\n}\n";
    assert_eq!(found("a.tsx", tsx), [("App".into(), "function", 0, 3)]);
}

#[test]
fn go_functions_methods_and_types() {
    let text = "package gin\n\n// Context is a request.\ntype Context struct {\n\tindex int\n}\n\nfunc (c *Context) Next() {\n\tc.index++\n}\n\nfunc New() *Context {\n\treturn &Context{}\n}\n";
    check(
        "a.go",
        text,
        &[
            ("Context", "type", 3, 6),
            ("Next", "method", 7, 10),
            ("New", "function", 11, 14),
        ],
    );
}

#[test]
fn java_classes_and_methods_include_their_annotations() {
    let text = "class Parser {\n  @Override\n  public String toString() {\n    return \"p\";\n  }\n\n  int size() { return 0; }\n}\n";
    check(
        "Parser.java",
        text,
        &[
            ("Parser", "class", 0, 8),
            ("toString", "method", 1, 5),
            ("size", "method", 6, 7),
        ],
    );
    // The name is on the signature's line.
    let d = defs(Lang::Java, text).unwrap();
    assert_eq!(d[1].name_line, 2);
}

#[test]
fn c_functions_and_types_with_the_name_on_its_own_line() {
    let text =
        "struct point {\n  int x;\n};\n\nstatic int\nnorm(struct point *p)\n{\n  return p->x;\n}\n";
    let got = found("a.c", text);
    assert!(got.contains(&("point".into(), "class", 0, 3)), "{got:?}");
    let norm = defs(Lang::C, text)
        .unwrap()
        .into_iter()
        .find(|d| d.name == "norm")
        .unwrap();
    assert_eq!(
        (norm.header, norm.name_line, norm.extent.1),
        (4, 5, 9),
        "{norm:?}"
    );
}

#[test]
fn php_functions_classes_and_methods() {
    let text = "<?php\nfunction helper($x) {\n  return $x;\n}\n\nclass Router {\n  public function get($path) {\n    return $path;\n  }\n}\n";
    check(
        "a.php",
        text,
        &[
            ("helper", "function", 1, 4),
            ("Router", "class", 5, 10),
            ("get", "function", 6, 9),
        ],
    );
}

#[test]
fn lua_local_and_module_functions() {
    let text = "local M = {}\n\nfunction M.head(file)\n  return file\nend\n\nlocal function tail(x)\n  return x\nend\n\nreturn M\n";
    let got = found("a.lua", text);
    assert!(got.contains(&("head".into(), "function", 2, 5)), "{got:?}");
    assert!(got.contains(&("tail".into(), "function", 6, 9)), "{got:?}");
}

#[test]
fn shell_functions() {
    check(
        "a.sh",
        "#!/bin/sh\nsetup() {\n  mkdir -p out\n}\n\nfunction clean {\n  rm -rf out\n}\nsetup\n",
        &[("setup", "function", 1, 4), ("clean", "function", 5, 8)],
    );
}

#[test]
fn data_files_name_their_keys_and_css_its_rules() {
    check(
        "Cargo.toml",
        "[package]\nname = \"x\"\n\n[[bin]]\nname = \"y\"\n",
        &[("package", "key", 0, 3), ("bin", "key", 3, 5)],
    );
    check(
        "a.json",
        "{\n  \"scripts\": {\n    \"test\": \"x\"\n  }\n}\n",
        &[("scripts", "key", 1, 4), ("test", "key", 2, 3)],
    );
    check(
        "a.yaml",
        "jobs:\n  test:\n    runs-on: x\n",
        &[
            ("jobs", "key", 0, 3),
            ("test", "key", 1, 3),
            ("runs-on", "key", 2, 3),
        ],
    );
    check(
        "a.css",
        ".badge,\n.tag {\n  color: red;\n}\n",
        &[(".badge,\n.tag", "rule", 0, 4)],
    );
}

#[cfg(feature = "lang-kotlin")]
#[test]
fn kotlin_classes_functions_and_properties() {
    check(
        "a.kt",
        "class Repo(val id: Int) {\n    fun load(): Int {\n        return id\n    }\n}\n\nval limit = 3\n",
        &[
            ("Repo", "class", 0, 5),
            ("load", "function", 1, 4),
            ("limit", "constant", 6, 7),
        ],
    );
}

#[cfg(feature = "lang-cpp")]
#[test]
fn cpp_classes_and_out_of_line_methods() {
    let text = "class Logger {\n public:\n  void log(int level);\n};\n\nvoid Logger::log(int level) {\n  (void)level;\n}\n";
    let got = found("a.cpp", text);
    assert!(got.contains(&("Logger".into(), "class", 0, 4)), "{got:?}");
    assert!(
        got.iter()
            .any(|(n, _, h, e)| n == "log" && (*h, *e) == (5, 8)),
        "{got:?}"
    );
}

#[cfg(feature = "lang-ruby")]
#[test]
fn ruby_classes_and_methods() {
    check(
        "a.rb",
        "class Repo\n  def load\n    1\n  end\n\n  def self.build\n    new\n  end\nend\n",
        &[
            ("Repo", "class", 0, 9),
            ("load", "method", 1, 4),
            ("build", "method", 5, 8),
        ],
    );
}

#[cfg(feature = "lang-csharp")]
#[test]
fn csharp_classes_and_methods() {
    let text = "namespace App {\n  public class Repo {\n    public int Load() {\n      return 1;\n    }\n  }\n}\n";
    let got = found("a.cs", text);
    assert!(got.contains(&("Repo".into(), "class", 1, 6)), "{got:?}");
    assert!(got.contains(&("Load".into(), "method", 2, 5)), "{got:?}");
}

#[cfg(feature = "lang-swift")]
#[test]
fn swift_classes_and_functions() {
    let text = "class Repo {\n  func load() -> Int {\n    return 1\n  }\n}\n";
    let got = found("a.swift", text);
    assert!(
        got.iter()
            .any(|(n, _, h, e)| n == "Repo" && (*h, *e) == (0, 5)),
        "{got:?}"
    );
    assert!(
        got.iter()
            .any(|(n, _, h, e)| n == "load" && (*h, *e) == (1, 4)),
        "{got:?}"
    );
}

#[test]
fn a_broken_text_still_gives_the_definitions_that_parse() {
    let text = "fn a() {\n    1 +\n}\n\nfn b() {\n    2\n}\n";
    let got = found("a.rs", text);
    assert!(got.iter().any(|(n, ..)| n == "b"), "{got:?}");
    // An unknown language has no tags.
    assert!(Lang::of("notes.txt", "").is_none());
    assert_eq!(defs(Lang::Html, "<p>x</p>\n"), None);
}

#[test]
fn a_text_parsed_once_gives_the_same_definitions() {
    let text = "def f():\n    return 1\n";
    assert_eq!(defs(Lang::Python, text), defs_once(Lang::Python, text));
}
