//! Definitions by the grammar: each language's tags query (the grammar crate's own, in the
//! convention GitHub's code navigation uses: `@name` inside `@definition.KIND`), run over a
//! bounded parse, gives every definition's name, kind, header line and extent. Languages whose
//! crates ship no tags query (Kotlin, shell, the data formats) have one in `queries/`;
//! TypeScript's adds to JavaScript's. References in those queries are not run.

use std::collections::HashSet;
use std::sync::OnceLock;

use tree_sitter::{Node, Query, QueryCursor, StreamingIterator, Tree};

use super::Lang;
use super::parse::parse;

/// At most this many definitions are read from one text.
const MAX_DEFS: usize = 20_000;

/// One definition found by the grammar's tags query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Def {
    /// The defined name as written (`print`, `Foo`, `.badge > li` for a CSS rule).
    pub name: String,
    /// What it is, from its capture `@definition.KIND`: `function`, `method`, `class`,
    /// `interface`, `module`, `macro`, `constant`, `type`, `key`, `rule`, …
    pub kind: &'static str,
    /// The 0-based line where the definition's node starts (for Python the `def` line, not a
    /// decorator; attributes and doc comments above are not part of it).
    pub header: usize,
    /// The 0-based line that holds the name.
    pub name_line: usize,
    /// The half-open 0-based lines of the definition: from `header` to the line after its
    /// last.
    pub extent: (usize, usize),
}

/// The tags query source of `lang`, if it has one.
fn source(lang: Lang) -> Option<String> {
    let js = tree_sitter_javascript::TAGS_QUERY;
    Some(match lang {
        Lang::Rust => tree_sitter_rust::TAGS_QUERY.into(),
        Lang::Python => tree_sitter_python::TAGS_QUERY.into(),
        Lang::JavaScript => js.into(),
        Lang::TypeScript | Lang::Tsx => format!("{js}\n{}", tree_sitter_typescript::TAGS_QUERY),
        Lang::Go => tree_sitter_go::TAGS_QUERY.into(),
        Lang::Java => tree_sitter_java::TAGS_QUERY.into(),
        Lang::C => tree_sitter_c::TAGS_QUERY.into(),
        Lang::Php => tree_sitter_php::TAGS_QUERY.into(),
        Lang::Lua => tree_sitter_lua::TAGS_QUERY.into(),
        Lang::Kotlin => include_str!("queries/kotlin.scm").into(),
        Lang::Bash => include_str!("queries/bash.scm").into(),
        Lang::Json => include_str!("queries/json.scm").into(),
        Lang::Yaml => include_str!("queries/yaml.scm").into(),
        Lang::Toml => include_str!("queries/toml.scm").into(),
        Lang::Css => include_str!("queries/css.scm").into(),
        Lang::Html => return None,
        Lang::Cpp | Lang::CSharp | Lang::Ruby | Lang::Swift => return optional_source(lang),
    })
}

/// The tags queries of the languages behind cargo features.
fn optional_source(lang: Lang) -> Option<String> {
    match lang {
        #[cfg(feature = "lang-cpp")]
        Lang::Cpp => Some(tree_sitter_cpp::TAGS_QUERY.into()),
        #[cfg(feature = "lang-csharp")]
        Lang::CSharp => Some(tree_sitter_c_sharp::TAGS_QUERY.into()),
        #[cfg(feature = "lang-ruby")]
        Lang::Ruby => Some(tree_sitter_ruby::TAGS_QUERY.into()),
        #[cfg(feature = "lang-swift")]
        Lang::Swift => Some(tree_sitter_swift::TAGS_QUERY.into()),
        _ => None,
    }
}

/// `lang`'s compiled query with its reference patterns disabled, compiled once; `None` when
/// it has none or it does not compile against the grammar built in.
fn query(lang: Lang) -> Option<&'static Query> {
    static QUERIES: [OnceLock<Option<Query>>; Lang::ALL.len()] =
        [const { OnceLock::new() }; Lang::ALL.len()];
    let at = Lang::ALL.iter().position(|l| *l == lang)?;
    QUERIES[at]
        .get_or_init(|| {
            let text = source(lang)?;
            let mut q = Query::new(&lang.grammar()?, &text).ok()?;
            for p in 0..q.pattern_count() {
                let pattern = text.get(q.start_byte_for_pattern(p)..q.end_byte_for_pattern(p));
                if pattern.is_some_and(|t| !t.contains("@definition.")) {
                    q.disable_pattern(p);
                }
            }
            Some(q)
        })
        .as_ref()
}

/// Whether `lang` has a tags query here (built in, and compiling against its grammar).
pub fn has_tags(lang: Lang) -> bool {
    query(lang).is_some()
}

/// The definitions of `text` as `lang`, ordered by header (the outer first on one line);
/// `None` when the language has no tags query or the text was not parsed (too large, too
/// slow, no grammar). The parse is the remembered one when the text was parsed before (the
/// syntax check keeps it), and is remembered for the check.
pub fn defs(lang: Lang, text: &str) -> Option<Vec<Def>> {
    let q = query(lang)?;
    let tree = super::check::tree(lang, text)?;
    Some(defs_in(q, &tree, text))
}

/// [`defs`] from a parse of its own, remembered nowhere (for indexing many files).
pub fn defs_once(lang: Lang, text: &str) -> Option<Vec<Def>> {
    let q = query(lang)?;
    let tree = parse(lang, text, None).ok()?;
    Some(defs_in(q, &tree, text))
}

/// The definitions `q` finds in `tree` over `text`.
fn defs_in(q: &'static Query, tree: &Tree, text: &str) -> Vec<Def> {
    let names = q.capture_names();
    let name_at = names.iter().position(|n| *n == "name");
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    let mut cursor = QueryCursor::new();
    let mut matches = cursor.matches(q, tree.root_node(), text.as_bytes());
    while let Some(m) = matches.next() {
        let name = m
            .captures
            .iter()
            .find(|c| Some(c.index as usize) == name_at)
            .map(|c| c.node);
        let def = m.captures.iter().find_map(|c| {
            let kind = names[c.index as usize].strip_prefix("definition.")?;
            Some((c.node, kind))
        });
        let (Some(name), Some((node, kind))) = (name, def) else {
            continue;
        };
        let node = whole(node);
        let Some(name_text) = text.get(name.byte_range()) else {
            continue;
        };
        if !seen.insert(node.id()) {
            continue;
        }
        let end = node.end_position();
        // A node that ends at the start of a line (a trailing newline) ends on the line before.
        let last = if end.column == 0 && end.row > node.start_position().row {
            end.row - 1
        } else {
            end.row
        };
        out.push(Def {
            name: name_text.trim().to_string(),
            kind,
            header: node.start_position().row,
            name_line: name.start_position().row,
            extent: (node.start_position().row, last + 1),
        });
        if out.len() == MAX_DEFS {
            break;
        }
    }
    out.sort_by_key(|d| (d.header, std::cmp::Reverse(d.extent.1)));
    out
}

/// The whole definition of a node the query captured: C and C++ capture a function at its
/// declarator (`norm(struct point *p)`), whose definition (or declaration) is the node
/// around the declarators.
fn whole(node: Node<'_>) -> Node<'_> {
    if !node.kind().ends_with("declarator") {
        return node;
    }
    let mut at = node;
    while let Some(up) = at.parent() {
        at = up;
        if !up.kind().ends_with("declarator") {
            break;
        }
    }
    at
}

#[cfg(test)]
mod tests;
