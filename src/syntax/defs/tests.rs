//! Definitions by tags: a test per language (names, kinds, header and name lines, extents),
//! every query compiling, and the edge cases (decorators, attributes, broken text, dedupe).

use super::*;

/// One expected definition: name, kind, header, name line, end of extent (its start is the
/// header).
type Row<'a> = (&'a str, &'a str, usize, usize, usize);

/// Check the definitions of `text` as `lang`, all of them and in order.
fn check(lang: Lang, text: &str, expected: &[Row<'_>]) {
    let got = defs(lang, text).unwrap_or_else(|| panic!("{}: no tags", lang.name()));
    let rows: Vec<Row<'_>> = got
        .iter()
        .map(|d| {
            assert_eq!(d.extent.0, d.header, "{d:?}");
            (d.name.as_str(), d.kind, d.header, d.name_line, d.extent.1)
        })
        .collect();
    assert_eq!(rows, expected, "{}:\n{text}", lang.name());
}

#[test]
fn every_built_in_query_compiles() {
    let mut tagged = 0;
    for lang in Lang::ALL {
        if lang.grammar().is_some() && sources(lang).is_some() {
            assert!(
                has_tags(lang),
                "{}: its query does not compile",
                lang.name()
            );
            tagged += 1;
        }
    }
    // Rust to Lua and the six of our own without features; the five behind features.
    let optional = [
        cfg!(feature = "lang-cpp"),
        cfg!(feature = "lang-csharp"),
        cfg!(feature = "lang-ruby"),
        cfg!(feature = "lang-kotlin"),
        cfg!(feature = "lang-swift"),
    ];
    assert_eq!(tagged, 15 + optional.iter().filter(|on| **on).count());
}

#[test]
fn a_language_without_tags_has_no_definitions() {
    assert!(!has_tags(Lang::Html));
    assert_eq!(defs(Lang::Html, "<p>x</p>\n"), None);
    assert_eq!(defs_once(Lang::Html, "<p>x</p>\n"), None);
    // A feature left out: no grammar, no tags.
    if !cfg!(feature = "lang-kotlin") {
        assert_eq!(defs(Lang::Kotlin, "fun main() {}\n"), None);
    }
    // Too large to parse.
    let huge = format!(
        "[{}0]",
        "0,".repeat(super::super::parse::MAX_PARSE_BYTES / 2)
    );
    assert_eq!(defs(Lang::Json, &huge), None);
}

#[test]
fn rust_items_start_at_the_item_not_its_attributes_or_docs() {
    let text = "\
/// A point.
#[derive(Debug)]
pub struct Point {
    x: i32,
}

const LIMIT: usize = 3;

pub trait Shape {
    fn area(&self) -> f64;
}

impl Point {
    /// Its norm.
    #[inline]
    pub fn norm(&self) -> i32 {
        self.x
    }
}

macro_rules! twice {
    ($e:expr) => {
        $e * 2
    };
}
";
    check(
        Lang::Rust,
        text,
        &[
            ("Point", "class", 2, 2, 5),
            ("LIMIT", "constant", 6, 6, 7),
            ("Shape", "interface", 8, 8, 11),
            ("area", "method", 9, 9, 10),
            ("norm", "method", 15, 15, 18),
            ("twice", "macro", 20, 20, 25),
        ],
    );
}

#[test]
fn python_methods_and_decorated_functions_start_at_def() {
    let text = "\
import os

LIMIT = 3

class App:
    @property
    def name(self):
        return 'a'

    def run(self):
        def step():
            pass

@cache
def grüße(x):
    return App().run()
";
    check(
        Lang::Python,
        text,
        &[
            ("LIMIT", "constant", 2, 2, 3),
            ("App", "class", 4, 4, 12),
            ("name", "method", 6, 6, 8),
            ("run", "method", 9, 9, 12),
            ("step", "function", 10, 10, 12),
            ("grüße", "function", 14, 14, 16),
        ],
    );
}

#[test]
fn javascript_functions_classes_methods_and_arrow_constants() {
    let text = "\
/** Heads. */
function head(x) {
  return x;
}

class Cache {
  constructor() {}
  get(key) {
    return key;
  }
}

const sum = (a, b) => a + b;
module.exports.tail = function (x) {
  return x;
};
";
    check(
        Lang::JavaScript,
        text,
        &[
            ("head", "function", 1, 1, 4),
            ("Cache", "class", 5, 5, 11),
            ("get", "method", 7, 7, 10),
            ("sum", "function", 12, 12, 13),
            ("tail", "function", 13, 13, 16),
        ],
    );
}

#[test]
fn typescript_adds_its_own_definitions_to_javascripts() {
    let text = "\
export interface Hooks {
  before(): void;
}

type Id = number;

export abstract class Base {
  abstract run(h: Hooks): void;
  stop(): void {}
}

export function start(h: Hooks): void {
  h.before();
}
";
    check(
        Lang::TypeScript,
        text,
        &[
            ("Hooks", "interface", 0, 0, 3),
            ("before", "method", 1, 1, 2),
            ("Id", "type", 4, 4, 5),
            ("Base", "class", 6, 6, 10),
            ("run", "method", 7, 7, 8),
            ("stop", "method", 8, 8, 9),
            ("start", "function", 11, 11, 14),
        ],
    );
    let tsx = "\
export const App = (p: { n: number }) => <div>{p.n}</div>;

export function List(p: { items: string[] }) {
  return <ul>{p.items.map((i) => <li>{i}</li>)}</ul>;
}
";
    check(
        Lang::Tsx,
        tsx,
        &[("App", "function", 0, 0, 1), ("List", "function", 2, 2, 5)],
    );
}

#[test]
fn go_functions_methods_and_types() {
    let text = "\
package gin

// Context is a request.
type Context struct {
\tindex int
}

func (c *Context) Next() {
\tc.index++
}

func New() *Context {
\treturn &Context{}
}
";
    check(
        Lang::Go,
        text,
        &[
            ("Context", "type", 3, 3, 6),
            ("Next", "method", 7, 7, 10),
            ("New", "function", 11, 11, 14),
        ],
    );
}

#[test]
fn java_classes_constructors_and_methods_with_their_annotations() {
    let text = "\
public class Parser {
  public Parser() {}

  @Override
  public String toString() {
    return \"p\";
  }

  enum Mode { A, B }
}
";
    check(
        Lang::Java,
        text,
        &[
            ("Parser", "class", 0, 0, 10),
            ("Parser", "method", 1, 1, 2),
            // The annotation is part of the method's node (its modifiers).
            ("toString", "method", 3, 4, 7),
            ("Mode", "class", 8, 8, 9),
        ],
    );
}

#[test]
fn c_functions_from_their_return_type_and_types() {
    let text = "\
struct point {
  int x;
};

typedef int length;

static int
norm(struct point *p)
{
  return p->x;
}

char *name(void);
";
    check(
        Lang::C,
        text,
        &[
            ("point", "class", 0, 0, 3),
            ("length", "type", 4, 4, 5),
            ("norm", "function", 6, 7, 11),
            ("name", "function", 12, 12, 13),
        ],
    );
}

#[test]
fn php_functions_classes_and_methods() {
    let text = "\
<?php
namespace App;

function helper($x) {
  return $x;
}

class Router {
  public $routes;

  public function get($path) {
    return $path;
  }
}
";
    check(
        Lang::Php,
        text,
        &[
            ("App", "module", 1, 1, 2),
            ("helper", "function", 3, 3, 6),
            ("Router", "class", 7, 7, 14),
            ("routes", "field", 8, 8, 9),
            ("get", "method", 10, 10, 13),
        ],
    );
}

#[test]
fn lua_local_module_and_method_functions() {
    let text = "\
local M = {}

function M.head(file)
  return file
end

function M:size()
  return 0
end

local function tail(x)
  return x
end

return M
";
    check(
        Lang::Lua,
        text,
        &[
            ("head", "function", 2, 2, 5),
            ("size", "method", 6, 6, 9),
            ("tail", "function", 10, 10, 13),
        ],
    );
}

#[test]
fn shell_functions_in_both_forms() {
    let text = "\
#!/bin/sh
setup() {
  mkdir -p out
}

function clean {
  rm -rf out
}
setup
";
    check(
        Lang::Bash,
        text,
        &[
            ("setup", "function", 1, 1, 4),
            ("clean", "function", 5, 5, 8),
        ],
    );
}

#[test]
fn json_keys_at_every_depth() {
    let text = "{\n  \"scripts\": {\n    \"test\": \"x\"\n  },\n  \"private\": true\n}\n";
    check(
        Lang::Json,
        text,
        &[
            ("scripts", "key", 1, 1, 4),
            ("test", "key", 2, 2, 3),
            ("private", "key", 4, 4, 5),
        ],
    );
}

#[test]
fn yaml_mapping_keys_block_and_flow() {
    let text = "\
jobs:
  test:
    \"runs-on\": x
    with: {node: 20}
";
    check(
        Lang::Yaml,
        text,
        &[
            ("jobs", "key", 0, 0, 4),
            ("test", "key", 1, 1, 4),
            ("\"runs-on\"", "key", 2, 2, 3),
            ("with", "key", 3, 3, 4),
            ("node", "key", 3, 3, 4),
        ],
    );
}

#[test]
fn toml_tables_and_their_keys() {
    let text = "\
[package]
name = \"x\"
version.major = 1

[[bin]]
name = \"y\"
opts = { lto = true }
";
    check(
        Lang::Toml,
        text,
        &[
            // A table ends at its last pair, not the blank line after it.
            ("package", "key", 0, 0, 3),
            ("name", "key", 1, 1, 2),
            ("version.major", "key", 2, 2, 3),
            ("bin", "key", 4, 4, 7),
            ("name", "key", 5, 5, 6),
            ("opts", "key", 6, 6, 7),
            ("lto", "key", 6, 6, 7),
        ],
    );
}

#[test]
fn css_rules_are_named_by_their_selectors() {
    let text = "\
.badge,
.tag > li {
  color: red;
}

@media (max-width: 600px) {
  .badge { display: none; }
}
";
    check(
        Lang::Css,
        text,
        &[
            (".badge,\n.tag > li", "rule", 0, 0, 4),
            (".badge", "rule", 6, 6, 7),
        ],
    );
}

#[cfg(feature = "lang-kotlin")]
#[test]
fn kotlin_classes_objects_functions_and_properties() {
    let text = "\
interface Store {
    fun get(): Int
}

class Repo(val id: Int) : Store {
    val limit = 3

    override fun get(): Int {
        val local = 1
        return id + local
    }
}

object Registry

fun main() {}
";
    check(
        Lang::Kotlin,
        text,
        &[
            ("Store", "interface", 0, 0, 3),
            ("get", "method", 1, 1, 2),
            ("Repo", "class", 4, 4, 12),
            ("limit", "property", 5, 5, 6),
            ("get", "method", 7, 7, 11),
            ("Registry", "class", 13, 13, 14),
            ("main", "function", 15, 15, 16),
        ],
    );
}

#[cfg(feature = "lang-swift")]
#[test]
fn swift_types_methods_and_properties_each_their_own_node() {
    let text = "\
class Repo {
  var count = 0
  init() {}
  func load() -> Int {
    return 1
  }
}

protocol Store {
  func get() -> Int
}

func top() {}
";
    check(
        Lang::Swift,
        text,
        &[
            ("Repo", "class", 0, 0, 7),
            ("count", "property", 1, 1, 2),
            ("init", "method", 2, 2, 3),
            ("load", "method", 3, 3, 6),
            ("Store", "interface", 8, 8, 11),
            ("get", "method", 9, 9, 10),
            ("top", "function", 12, 12, 13),
        ],
    );
}

#[cfg(feature = "lang-cpp")]
#[test]
fn cpp_classes_namespaces_and_out_of_line_methods() {
    let text = "\
namespace app {
class Logger {
 public:
  void log(int level);
};

void Logger::log(int level) {
  (void)level;
}
}
";
    check(
        Lang::Cpp,
        text,
        &[
            ("app", "module", 0, 0, 10),
            ("Logger", "class", 1, 1, 5),
            ("log", "function", 3, 3, 4),
            ("log", "method", 6, 6, 9),
        ],
    );
}

#[cfg(feature = "lang-csharp")]
#[test]
fn csharp_namespaces_classes_structs_and_methods() {
    let text = "\
namespace App {
  public class Repo {
    public Repo() {}
    public int Load() {
      return 1;
    }
  }
  struct Point { int X; }
}
";
    check(
        Lang::CSharp,
        text,
        &[
            ("App", "module", 0, 0, 9),
            ("Repo", "class", 1, 1, 7),
            ("Repo", "method", 2, 2, 3),
            ("Load", "method", 3, 3, 6),
            ("Point", "class", 7, 7, 8),
        ],
    );
}

#[cfg(feature = "lang-ruby")]
#[test]
fn ruby_modules_classes_and_methods() {
    let text = "\
module Store
  class Repo
    # Loads.
    def load
      1
    end

    def self.build
      new
    end
  end
end
";
    check(
        Lang::Ruby,
        text,
        &[
            ("Store", "module", 0, 0, 12),
            ("Repo", "class", 1, 1, 11),
            ("load", "method", 3, 3, 6),
            ("build", "method", 7, 7, 10),
        ],
    );
}

#[test]
fn a_text_with_a_syntax_error_keeps_the_definitions_that_parse() {
    let text = "\
fn a() {
    let x = ;
}

fn b() -> i32 {
    2
}
";
    let got = defs(Lang::Rust, text).unwrap();
    assert!(
        got.iter()
            .any(|d| d.name == "b" && d.header == 4 && d.extent == (4, 7)),
        "{got:?}"
    );
    let text = "def a(:\n    pass\n\ndef b():\n    return 1\n";
    let got = defs(Lang::Python, text).unwrap();
    assert!(
        got.iter().any(|d| d.name == "b" && d.extent == (3, 5)),
        "{got:?}"
    );
}

#[test]
fn a_node_two_patterns_capture_is_one_definition_of_the_first_patterns_kind() {
    // Rust's crate query has a method pattern and a function pattern that both capture
    // `norm`; ours one for a function in an inline module before them. Python's has only a
    // function one, ours a method one before it.
    let rust = "impl P {\n    fn norm(&self) {}\n}\n\nmod tests {\n    fn helper() {}\n}\n";
    check(
        Lang::Rust,
        rust,
        &[
            ("norm", "method", 1, 1, 2),
            ("tests", "module", 4, 4, 7),
            ("helper", "function", 5, 5, 6),
        ],
    );
    let python = "class P:\n    def norm(self):\n        pass\n";
    check(
        Lang::Python,
        python,
        &[("P", "class", 0, 0, 3), ("norm", "method", 1, 1, 3)],
    );
}

#[test]
fn a_text_parsed_on_its_own_gives_the_same_definitions() {
    let text = "def f():\n    return 1\n\nclass C:\n    pass\n";
    assert_eq!(defs(Lang::Python, text), defs_once(Lang::Python, text));
    assert_eq!(defs(Lang::Python, text).map(|d| d.len()), Some(2));
}

#[test]
fn doc_comment_runs_are_not_matched() {
    for lang in Lang::ALL {
        let Some(parts) = sources(lang) else {
            continue;
        };
        let query = without_docs(&parts.join("\n"));
        assert!(!query.contains("@doc"), "{}:\n{query}", lang.name());
    }
    // A long run of comments costs no more than its lines (matched as doc comments, it took
    // time quadratic in the run and ran past the deadline).
    let mut text = String::from("class A {\n");
    text.push_str(&"  // old code\n".repeat(20_000));
    text.push_str("  m() {}\n}\n");
    check(
        Lang::JavaScript,
        &text,
        &[
            ("A", "class", 0, 0, 20_003),
            ("m", "method", 20_001, 20_001, 20_002),
        ],
    );
}

#[test]
fn a_toml_table_ends_before_the_comment_that_heads_the_next() {
    let text = "[server]\nport = 80\n\n# Database settings\n[database]\nurl = \"x\"\n";
    let d = defs(Lang::Toml, text).unwrap();
    let server = d.iter().find(|d| d.name == "server").unwrap();
    assert_eq!(server.extent, (0, 2), "{d:?}");
}

#[test]
fn prototypes_and_signatures_have_no_body() {
    let text = "int parse(const char *s);\n\nint parse(const char *s)\n{\n  return *s;\n}\n";
    let d = defs(Lang::C, text).unwrap();
    let bodies: Vec<(usize, bool)> = d
        .iter()
        .filter(|d| d.name == "parse")
        .map(|d| (d.header, d.body))
        .collect();
    assert_eq!(bodies, [(0, false), (2, true)], "{d:?}");
}

/// Each definition's extent end of `text` as `lang`, by name, in order.
fn ends(lang: Lang, text: &str) -> Vec<(String, usize)> {
    let got = defs(lang, text).unwrap_or_else(|| panic!("{}: no tags", lang.name()));
    got.into_iter().map(|d| (d.name, d.extent.1)).collect()
}

#[test]
fn nested_extents_end_at_the_last_line_before_trailing_blanks_and_comments() {
    let rust = "fn outer() {\n    fn inner() {\n        let x = 1;\n    }\n    // tail\n}\n\n\n";
    let want = [("outer".to_string(), 6), ("inner".to_string(), 4)];
    assert_eq!(ends(Lang::Rust, rust), want);
    assert_eq!(ends(Lang::Rust, &rust.replace('\n', "\r\n")), want);
    let python = "\
def outer():
    def inner():
        return 1
        # inner tail

    # outer tail

x = 1
";
    // Python's trailing comments are its block's, not the definition's: they count.
    let want = [
        ("outer".to_string(), 6),
        ("inner".to_string(), 4),
        ("x".to_string(), 8),
    ];
    assert_eq!(ends(Lang::Python, python), want);
    assert_eq!(ends(Lang::Python, &python.replace('\n', "\r\n")), want);
}
