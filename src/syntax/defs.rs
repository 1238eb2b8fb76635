//! The definitions in a source text, by its grammar's tags query: the patterns that capture a
//! `@name` inside a `@definition.KIND` (the convention of the grammar crates' `TAGS_QUERY` and
//! GitHub's code navigation), run over a bounded parse, give each definition's name, kind,
//! header line and extent. References and doc captures are not read. Languages whose crate
//! ships no tags query (Kotlin, shell, the data formats, CSS), or whose query misses common
//! definitions or is wrong (Swift's), have theirs in `queries/defs/`.

use std::cell::Cell;
use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::ops::ControlFlow;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use regex::Regex;
use tree_sitter::{
    Node, Query, QueryCursor, QueryCursorOptions, QueryCursorState, QueryMatch, StreamingIterator,
    Tree,
};

use super::Lang;
use super::memory::memory;
use super::parse::{PARSE_DEADLINE, parse};

/// At most this many definitions are read from one text.
const MAX_DEFS: usize = 20_000;

/// At most this many matches are in progress at once (memory); a text that needs more is not
/// read, rather than read with definitions missing.
const MATCH_LIMIT: u32 = 1 << 14;

/// One definition found by the grammar's tags query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Def {
    /// The defined name as written (`print`, `Foo`, `.badge` for a CSS rule).
    pub name: String,
    /// What it is, from the capture `@definition.KIND`: "function", "method", "class",
    /// "interface", "module", "macro", "constant", "type", "key", "rule", ...
    pub kind: &'static str,
    /// The 0-based line where the definition's node starts (its header; for Python the
    /// `def`/`class` line, not a decorator; attributes/doc comments above are not part of it).
    pub header: usize,
    /// The 0-based line holding the name (often == header).
    pub name_line: usize,
    /// The half-open 0-based line range of the definition's node: from `header` to the line
    /// after its last line (trailing comments aside).
    pub extent: (usize, usize),
    /// Whether it has a body: a declaration (a C prototype, `enum color c;`, a trait's or an
    /// interface's method signature) names a definition made elsewhere.
    pub body: bool,
}

/// A language's compiled query, its reference patterns disabled.
struct Tags {
    query: Query,
    /// The index of the `@name` capture.
    name: u32,
}

/// The query texts of `lang`, in order: ours first (where two patterns capture one node, the
/// first pattern's kind is taken), then the grammar crate's; `None` when it has none.
fn sources(lang: Lang) -> Option<Vec<&'static str>> {
    let js = tree_sitter_javascript::TAGS_QUERY;
    Some(match lang {
        Lang::Rust => vec![
            include_str!("queries/defs/rust.scm"),
            tree_sitter_rust::TAGS_QUERY,
        ],
        Lang::Python => vec![
            include_str!("queries/defs/python.scm"),
            tree_sitter_python::TAGS_QUERY,
        ],
        Lang::JavaScript => vec![js],
        // TypeScript's query holds only what TypeScript adds to JavaScript.
        Lang::TypeScript | Lang::Tsx => vec![
            include_str!("queries/defs/typescript.scm"),
            js,
            tree_sitter_typescript::TAGS_QUERY,
        ],
        Lang::Go => vec![tree_sitter_go::TAGS_QUERY],
        Lang::Java => vec![
            include_str!("queries/defs/java.scm"),
            tree_sitter_java::TAGS_QUERY,
        ],
        Lang::C => vec![tree_sitter_c::TAGS_QUERY],
        Lang::Php => vec![
            include_str!("queries/defs/php.scm"),
            tree_sitter_php::TAGS_QUERY,
        ],
        Lang::Lua => vec![tree_sitter_lua::TAGS_QUERY],
        Lang::Kotlin => vec![include_str!("queries/defs/kotlin.scm")],
        Lang::Swift => vec![include_str!("queries/defs/swift.scm")],
        Lang::Bash => vec![include_str!("queries/defs/bash.scm")],
        Lang::Json => vec![include_str!("queries/defs/json.scm")],
        Lang::Yaml => vec![include_str!("queries/defs/yaml.scm")],
        Lang::Toml => vec![include_str!("queries/defs/toml.scm")],
        Lang::Css => vec![include_str!("queries/defs/css.scm")],
        Lang::Html => return None,
        Lang::Cpp | Lang::CSharp | Lang::Ruby => return optional_sources(lang),
    })
}

/// The query texts of the languages whose grammar crates are behind cargo features.
fn optional_sources(lang: Lang) -> Option<Vec<&'static str>> {
    match lang {
        #[cfg(feature = "lang-cpp")]
        Lang::Cpp => Some(vec![
            include_str!("queries/defs/cpp.scm"),
            tree_sitter_cpp::TAGS_QUERY,
        ]),
        #[cfg(feature = "lang-csharp")]
        Lang::CSharp => Some(vec![
            include_str!("queries/defs/csharp.scm"),
            tree_sitter_c_sharp::TAGS_QUERY,
        ]),
        #[cfg(feature = "lang-ruby")]
        Lang::Ruby => Some(vec![tree_sitter_ruby::TAGS_QUERY]),
        _ => None,
    }
}

/// `lang`'s query, compiled on first use; `None` when it has none, its grammar is not built
/// in, or the query does not compile against the grammar.
fn tags(lang: Lang) -> Option<&'static Tags> {
    static TAGS: [OnceLock<Option<Tags>>; Lang::ALL.len()] =
        [const { OnceLock::new() }; Lang::ALL.len()];
    let at = Lang::ALL.iter().position(|l| *l == lang)?;
    TAGS.get(at)?.get_or_init(|| compile(lang)).as_ref()
}

/// Compile `lang`'s query and disable the patterns that capture no definition (references,
/// which can match every identifier).
fn compile(lang: Lang) -> Option<Tags> {
    let text = without_docs(&sources(lang)?.join("\n"));
    let mut query = Query::new(&lang.grammar()?, &text).ok()?;
    let name = query.capture_index_for_name("name")?;
    for p in 0..query.pattern_count() {
        let pattern = text
            .get(query.start_byte_for_pattern(p)..query.end_byte_for_pattern(p))
            .unwrap_or_default();
        if !pattern.contains("@definition.") {
            query.disable_pattern(p);
        }
    }
    Some(Tags { query, name })
}

/// `query` without its doc comment captures, which are not read: `(comment)* @doc .` before
/// a definition and the `#strip!`/`#select-adjacent!`/`#set-adjacent!` settings on `@doc`.
/// Matching any run of comments before every definition costs time quadratic in the run (a
/// file of 50,000 comment lines takes seconds); without it, every definition still matches.
fn without_docs(query: &str) -> String {
    static DOCS: OnceLock<Option<(Regex, Regex)>> = OnceLock::new();
    let Some((runs, settings)) = DOCS.get_or_init(|| {
        let runs = Regex::new(r"\(comment\)\*\s*@doc\s*\.").ok()?;
        let settings = Regex::new(
            r#"\(#(?:strip|select-adjacent|set-adjacent)!\s+@doc\b(?:[^()"]|"[^"]*")*\)"#,
        )
        .ok()?;
        Some((runs, settings))
    }) else {
        return query.to_string();
    };
    let query = runs.replace_all(query, "");
    settings.replace_all(&query, "").into_owned()
}

/// Whether `lang` has a tags query here.
pub fn has_tags(lang: Lang) -> bool {
    tags(lang).is_some()
}

/// The definitions of `text` as `lang`, in order of `header` (ties: outer first, i.e. larger
/// extent first); `None` when the language has no tags query built in, or the text was not
/// parsed (too large, too slow, no grammar). The parse is the one the syntax check keeps for
/// the text, if any, and is kept for it, with the definitions read from it.
pub fn defs(lang: Lang, text: &str) -> Option<Vec<Def>> {
    remembered(lang, text, Wanted::Any)
}

/// [`defs`] of a text that parses without errors; `None` too when it has some (a broken
/// text's tree misplaces what follows the error). One parse, the remembered one.
pub fn defs_if_clean(lang: Lang, text: &str) -> Option<Vec<Def>> {
    remembered(lang, text, Wanted::Clean)
}

/// Of which texts [`remembered`] reads the definitions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wanted {
    /// Of any text that parses.
    Any,
    /// Only of a text that parses without errors.
    Clean,
}

/// Why [`defs_in`] read no definitions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unread {
    /// The query ran past its deadline: a slow moment, perhaps not the next time.
    Late,
    /// Past the query's match limit or [`MAX_DEFS`]: so every time.
    TooMany,
}

/// [`defs`] (of the texts `wanted`), read once per remembered text; definitions not read
/// for the deadline are not remembered (read again the next time).
fn remembered(lang: Lang, text: &str, wanted: Wanted) -> Option<Vec<Def>> {
    let tags = tags(lang)?;
    let tree = super::check::tree(lang, text)?;
    if wanted == Wanted::Clean && tree.root_node().has_error() {
        return None;
    }
    if let Some(found) = memory().defs(lang, text) {
        return found.map(|d| d.to_vec());
    }
    let found = match defs_in(tags, &tree, text) {
        Ok(d) => Some(Arc::new(d)),
        Err(Unread::TooMany) => None,
        Err(Unread::Late) => return None,
    };
    memory().put_defs(lang, text, found.clone());
    found.map(|d| d.to_vec())
}

/// [`defs`] from a parse of its own that is kept nowhere (for reading many files once).
pub fn defs_once(lang: Lang, text: &str) -> Option<Vec<Def>> {
    let tags = tags(lang)?;
    let tree = parse(lang, text, None).ok()?;
    defs_in(tags, &tree, text).ok()
}

/// A definition found, with what orders and dedupes it.
struct Found {
    def: Def,
    /// The pattern that found it: on a node two patterns capture, the first one wins.
    pattern: usize,
    /// Its node's bytes, to order definitions on one line outer first.
    bytes: (usize, usize),
}

/// The definitions the query of `tags` finds in `tree` over `text`; an error when the query
/// ran past the deadline or its match limit (some definitions would be missing).
fn defs_in(tags: &'static Tags, tree: &Tree, text: &str) -> Result<Vec<Def>, Unread> {
    let deadline = Instant::now() + PARSE_DEADLINE;
    let late = Cell::new(false);
    let mut past_deadline = |_: &QueryCursorState| {
        if Instant::now() > deadline {
            late.set(true);
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    };
    let options = QueryCursorOptions::new().progress_callback(&mut past_deadline);
    let mut cursor = QueryCursor::new();
    cursor.set_match_limit(MATCH_LIMIT);
    let mut found: Vec<Found> = Vec::new();
    let mut by_node: HashMap<usize, usize> = HashMap::new();
    let mut matches =
        cursor.matches_with_options(&tags.query, tree.root_node(), text.as_bytes(), options);
    while let Some(m) = matches.next() {
        let Some((node, f)) = found_in(tags, m, text) else {
            continue;
        };
        match by_node.entry(node) {
            Entry::Occupied(at) => {
                let old = &mut found[*at.get()];
                if f.pattern < old.pattern {
                    *old = f;
                }
            }
            Entry::Vacant(at) => {
                at.insert(found.len());
                found.push(f);
                if found.len() > MAX_DEFS {
                    // Some would be missing: a name defined once before the cut and again
                    // after it would look unique.
                    return Err(Unread::TooMany);
                }
            }
        }
    }
    drop(matches);
    if late.get() {
        return Err(Unread::Late);
    }
    if cursor.did_exceed_match_limit() {
        return Err(Unread::TooMany);
    }
    found.sort_by_key(|f| {
        let d = &f.def;
        (
            d.header,
            std::cmp::Reverse(d.extent.1),
            f.bytes.0,
            std::cmp::Reverse(f.bytes.1),
        )
    });
    Ok(found.into_iter().map(|f| f.def).collect())
}

/// The definition one match captures, with the id of the node captured as the definition;
/// `None` when the match captures no definition, no name, or an empty one (a node error
/// recovery made up).
fn found_in(tags: &'static Tags, m: &QueryMatch<'_, '_>, text: &str) -> Option<(usize, Found)> {
    let names: &'static [&'static str] = tags.query.capture_names();
    let mut name = None;
    let mut def = None;
    for c in m.captures {
        if c.index == tags.name {
            name = Some(c.node);
        } else if let Some(kind) = names
            .get(c.index as usize)
            .and_then(|n| n.strip_prefix("definition."))
        {
            def = Some((c.node, kind));
        }
    }
    let (name, (captured, kind)) = (name?, def?);
    let written = text.get(name.byte_range()).filter(|t| !t.is_empty())?;
    let node = whole(captured);
    let header = node.start_position().row;
    let def = Def {
        name: written.to_string(),
        kind,
        header,
        name_line: name.start_position().row,
        extent: (header, last_line(node, text) + 1),
        body: !declares_only(node),
    };
    let f = Found {
        def,
        pattern: m.pattern_index,
        bytes: (node.start_byte(), node.end_byte()),
    };
    Some((captured.id(), f))
}

/// The whole definition of a node the query captured: C's and C++'s queries capture a
/// function at its declarator (`norm(struct point *p)`), which is inside the definition or
/// declaration (past any pointer or reference declarators) that gives its return type and
/// body, itself inside a C++ `template <…>` when there is one.
fn whole(node: Node<'_>) -> Node<'_> {
    if node.kind() != "function_declarator" {
        return node;
    }
    let mut at = node;
    while at.kind().ends_with("declarator") {
        match at.parent() {
            Some(up) => at = up,
            None => break,
        }
    }
    match at.parent() {
        Some(up) if up.kind() == "template_declaration" => up,
        _ => at,
    }
}

/// Whether `node` only declares what is defined elsewhere: a declaration (a prototype), a
/// signature, or a type specifier with no body (`enum color c;`).
fn declares_only(node: Node<'_>) -> bool {
    let kind = node.kind();
    matches!(kind, "declaration" | "field_declaration")
        || kind.contains("signature")
        || (kind.ends_with("_specifier") && node.child_by_field_name("body").is_none())
}

/// The last line of `node` that holds more than white space and trailing comments (a node
/// can end with the newline of its last line, or with blank lines; a TOML table holds the
/// comment that heads the next one).
fn last_line(node: Node<'_>, text: &str) -> usize {
    let (mut end, mut end_row) = (node.end_byte(), node.end_position().row);
    let mut child = node
        .named_child_count()
        .checked_sub(1)
        .and_then(|k| node.named_child(u32::try_from(k).ok()?));
    while let Some(c) =
        child.filter(|c| c.kind() == "comment" && c.start_byte() > node.start_byte())
    {
        (end, end_row) = (c.start_byte(), c.start_position().row);
        child = c.prev_named_sibling();
    }
    let start = node.start_position().row;
    // The row of `end` less the newlines of the white space trimmed before it: counting the
    // body's own newlines instead reads each nested definition's text again, work that grows
    // with the nesting depth times the file (docs/DESIGN.md §7, bounded work).
    let Some(body) = text.get(node.start_byte()..end) else {
        return start;
    };
    let tail = &body.as_bytes()[body.trim_end().len()..];
    end_row
        .saturating_sub(memchr::memchr_iter(b'\n', tail).count())
        .max(start)
}

#[cfg(test)]
mod tests;
