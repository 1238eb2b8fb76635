//! The layers point one way (docs/DESIGN.md §8): pure engines (`edit`, `diff`, and `syntax`, which
//! names none of the others) know nothing of files,
//! reviews, MCP or terminals; `workspace` nothing of reviews, MCP or terminals; `review`
//! nothing of MCP or terminals; `search` (and the model client `chat.rs`) nothing of reviews,
//! MCP or terminals; `api` and `mcp` nothing of the TUI; the TUI nothing of MCP (it talks to a
//! gate, local or over the review API). Read from the sources: every
//! `crate::LAYER` path a file names, outside comments.
//!
//! One level down, the files inside a layer directory import each other without a cycle
//! (`super::X`, `crate::LAYER::X`, outside comments, strings and `#[cfg(test)]` items).

use std::path::{Path, PathBuf};

/// The layers a file under `src/DIR` (or the file `src/NAME.rs`) must not name.
const FORBIDDEN: &[(&str, &[&str])] = &[
    (
        "edit",
        &["workspace", "review", "search", "mcp", "tui", "eval", "log"],
    ),
    (
        "diff",
        &["workspace", "review", "search", "mcp", "tui", "eval", "log"],
    ),
    (
        "syntax",
        &[
            "edit",
            "diff",
            "workspace",
            "review",
            "search",
            "mcp",
            "tui",
            "api",
            "eval",
            "log",
        ],
    ),
    ("workspace", &["review", "search", "mcp", "tui", "eval"]),
    ("review", &["search", "mcp", "tui", "eval"]),
    ("search", &["review", "mcp", "tui", "api", "eval"]),
    (
        "chat.rs",
        &["review", "search", "mcp", "tui", "api", "eval"],
    ),
    ("mcp", &["tui", "eval"]),
    ("tui", &["mcp", "eval"]),
    ("api", &["mcp", "tui", "eval"]),
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let p = entry.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The layers `code` names as `crate::LAYER`, with their line numbers (comments skipped).
fn named_layers(code: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (n, line) in code.lines().enumerate() {
        let code_part = line.split("//").next().unwrap_or("");
        let mut rest = code_part;
        while let Some(at) = rest.find("crate::") {
            let after = &rest[at + "crate::".len()..];
            let name: String = after
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            out.push((n + 1, name));
            rest = after;
        }
    }
    out
}

#[test]
fn the_layers_point_one_way() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut bad = Vec::new();
    for (dir, forbidden) in FORBIDDEN {
        let mut files = Vec::new();
        let place = src.join(dir);
        if place.is_file() {
            files.push(place);
        } else {
            rust_files(&place, &mut files);
        }
        assert!(!files.is_empty(), "no sources under src/{dir}");
        for f in files {
            let code = std::fs::read_to_string(&f).unwrap();
            for (line, layer) in named_layers(&code) {
                if forbidden.contains(&layer.as_str()) {
                    bad.push(format!("{}:{line}: names crate::{layer}", f.display()));
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "imports against the layers:\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_check_sees_an_import() {
    let code = "use crate::edit::text;\n// crate::mcp in a comment\nlet x = crate::review::queue::Gate::new();\n";
    let layers: Vec<String> = named_layers(code).into_iter().map(|(_, l)| l).collect();
    assert_eq!(layers, ["edit", "review"]);
}

/// The layer directories whose files import each other without a cycle (the layers' rule,
/// one level down). `mod.rs` is left out: it declares every file of its directory, so it is
/// everyone's parent, not a neighbour.
const ACYCLIC: &[&str] = &[
    "mcp",
    "workspace",
    "review",
    "search",
    "tui",
    "api",
    "app",
    "edit",
    "syntax",
];

/// A token of Rust source, as far as paths go: comments, strings and characters are gone.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Ident(String),
    /// `::`
    Sep,
    Punct(char),
}

/// The tokens of `code` with their line numbers.
fn tokens(code: &str) -> Vec<(usize, Tok)> {
    let c: Vec<char> = code.chars().collect();
    let (mut out, mut i, mut line) = (Vec::new(), 0, 1);
    // Skip a quoted literal whose opening quote is at `i`; `raw`: no escapes, `hashes` `#`s.
    let skip_quoted = |i: &mut usize, line: &mut usize, raw: bool, hashes: usize| {
        *i += 1;
        while *i < c.len() {
            match c[*i] {
                '\\' if !raw => *i += 1,
                '"' if c[*i + 1..]
                    .iter()
                    .take(hashes)
                    .filter(|&&h| h == '#')
                    .count()
                    == hashes =>
                {
                    *i += 1 + hashes;
                    return;
                }
                '\n' => *line += 1,
                _ => {}
            }
            *i += 1;
        }
    };
    while i < c.len() {
        let ch = c[i];
        if ch == '\n' {
            line += 1;
            i += 1;
        } else if ch.is_whitespace() {
            i += 1;
        } else if ch == '/' && c.get(i + 1) == Some(&'/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && c.get(i + 1) == Some(&'*') {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    line += usize::from(c[i] == '\n');
                    i += 1;
                }
            }
        } else if ch == '"' {
            skip_quoted(&mut i, &mut line, false, 0);
        } else if ch == '\'' {
            // A character ('x', '\n', '\'', '\u{1b}') or a lifetime ('a).
            if c.get(i + 1) == Some(&'\\') {
                i += 3;
                while i < c.len() && c[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if c.get(i + 2) == Some(&'\'') {
                i += 3;
            } else {
                i += 1;
            }
        } else if ch.is_alphanumeric() || ch == '_' {
            let start = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            let word: String = c[start..i].iter().collect();
            let next = c.get(i).copied();
            let hashes = c[i..].iter().take_while(|&&h| h == '#').count();
            if matches!(word.as_str(), "r" | "br" | "cr") && c.get(i + hashes) == Some(&'"') {
                i += hashes;
                skip_quoted(&mut i, &mut line, true, hashes);
            } else if word == "r" && hashes == 1 {
                // A raw identifier (`r#type`): the identifier comes next.
                i += 1;
            } else if matches!(word.as_str(), "b" | "c") && next == Some('"') {
                skip_quoted(&mut i, &mut line, false, 0);
            } else if word == "b" && next == Some('\'') {
                i += 1;
                while i < c.len() && c[i] != '\'' {
                    i += usize::from(c[i] == '\\') + 1;
                }
                i += 1;
            } else {
                out.push((line, Tok::Ident(word)));
            }
        } else if ch == ':' && c.get(i + 1) == Some(&':') {
            out.push((line, Tok::Sep));
            i += 2;
        } else {
            out.push((line, Tok::Punct(ch)));
            i += 1;
        }
    }
    out
}

/// The paths of the path (or `use` tree) starting at `toks[*i]`, each as its segments.
fn path_at(toks: &[(usize, Tok)], i: &mut usize, prefix: &[String], out: &mut Vec<Vec<String>>) {
    let mut segs = prefix.to_vec();
    loop {
        match toks.get(*i).map(|t| &t.1) {
            Some(Tok::Ident(s)) => {
                segs.push(s.clone());
                *i += 1;
            }
            Some(Tok::Punct('{')) => {
                *i += 1;
                while !matches!(toks.get(*i).map(|t| &t.1), None | Some(Tok::Punct('}'))) {
                    if toks[*i].1 == Tok::Punct(',') {
                        *i += 1;
                    } else {
                        let before = *i;
                        path_at(toks, i, &segs, out);
                        *i = (*i).max(before + 1);
                    }
                }
                *i += 1;
                return;
            }
            _ => break,
        }
        if toks.get(*i).map(|t| &t.1) != Some(&Tok::Sep) {
            break;
        }
        *i += 1;
    }
    // `X as Y` names X.
    if matches!(toks.get(*i), Some((_, Tok::Ident(w))) if w == "as") {
        *i += 2;
    }
    out.push(segs);
}

/// The files of directory `layer` that `code` (of the file `me` there) names, with the line
/// of the first mention: `super::X`, `use super::{X, ..}`, `crate::LAYER::X`, outside
/// comments, strings and `#[cfg(test)]` items (tests may reach anywhere in their layer).
fn neighbours(code: &str, layer: &str, me: &str) -> Vec<(String, usize)> {
    let toks = tokens(code);
    let ident = |k: usize, s: &str| matches!(toks.get(k), Some((_, Tok::Ident(w))) if w == s);
    let punct = |k: usize, p: char| matches!(toks.get(k), Some((_, Tok::Punct(q))) if *q == p);
    let mut out: Vec<(String, usize)> = Vec::new();
    // The brace depth, the depths at which inline modules opened.
    let (mut depth, mut mods, mut i) = (0usize, Vec::<usize>::new(), 0);
    while i < toks.len() {
        let (line, tok) = &toks[i];
        let at_start = i == 0 || toks[i - 1].1 != Tok::Sep;
        match tok {
            // `#[cfg(test)]`: skip the item it marks (to its `;` or `,`, its closing brace, or
            // the end of the block around it).
            Tok::Punct('#')
                if punct(i + 1, '[')
                    && ident(i + 2, "cfg")
                    && punct(i + 3, '(')
                    && ident(i + 4, "test")
                    && punct(i + 5, ')')
                    && punct(i + 6, ']') =>
            {
                i += 7;
                let mut d = 0usize;
                while i < toks.len() {
                    match toks[i].1 {
                        Tok::Punct(';' | ',') if d == 0 => break,
                        Tok::Punct(')' | ']' | '}') if d == 0 => {
                            i -= 1; // the end of the block around: not the item's
                            break;
                        }
                        Tok::Punct('(' | '[' | '{') => d += 1,
                        Tok::Punct('}') if d == 1 => break,
                        Tok::Punct(')' | ']' | '}') => d -= 1,
                        _ => {}
                    }
                    i += 1;
                }
                i += 1;
                continue;
            }
            Tok::Punct('{') => depth += 1,
            Tok::Punct('}') => {
                depth = depth.saturating_sub(1);
                if mods.last() == Some(&depth) {
                    mods.pop();
                }
            }
            Tok::Ident(w) if w == "mod" && punct(i + 2, '{') => {
                mods.push(depth);
            }
            Tok::Ident(w) if at_start && (w == "super" || w == "crate") => {
                let mut paths = Vec::new();
                path_at(&toks, &mut i, &[], &mut paths);
                for p in paths {
                    let supers = p.iter().take_while(|s| *s == "super").count();
                    let name = if supers == mods.len() + 1 {
                        p.get(supers)
                    } else if supers == 0 && p[0] == "crate" && p.get(1).is_some_and(|l| l == layer)
                    {
                        p.get(2)
                    } else {
                        None
                    };
                    if let Some(n) = name
                        .filter(|n| *n != me && *n != "self" && !out.iter().any(|(o, _)| o == *n))
                    {
                        out.push((n.clone(), *line));
                    }
                }
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// Every cycle the depth-first walk of `graph` meets, as `a -> b -> a` (one per back edge).
fn cycles(graph: &std::collections::BTreeMap<String, Vec<String>>) -> Vec<String> {
    fn walk(
        n: &str,
        graph: &std::collections::BTreeMap<String, Vec<String>>,
        path: &mut Vec<String>,
        done: &mut std::collections::BTreeSet<String>,
        found: &mut Vec<String>,
    ) {
        if let Some(at) = path.iter().position(|p| p == n) {
            let mut cycle = path[at..].to_vec();
            cycle.push(n.to_string());
            found.push(cycle.join(" -> "));
            return;
        }
        if done.contains(n) {
            return;
        }
        path.push(n.to_string());
        for m in graph.get(n).into_iter().flatten() {
            walk(m, graph, path, done, found);
        }
        path.pop();
        done.insert(n.to_string());
    }
    let (mut done, mut found) = (std::collections::BTreeSet::new(), Vec::new());
    for n in graph.keys() {
        walk(n, graph, &mut Vec::new(), &mut done, &mut found);
    }
    found
}

/// The import cycles among the files of `src/LAYER`, each with the lines that make its edges.
fn layer_cycles(src: &Path, layer: &str) -> Vec<String> {
    let dir = src.join(layer);
    let mut files: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .map(|p| {
            let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
            (stem, std::fs::read_to_string(&p).unwrap())
        })
        .filter(|(stem, _)| stem != "mod")
        .collect();
    files.sort();
    let names: Vec<&str> = files.iter().map(|(s, _)| s.as_str()).collect();
    let mut graph = std::collections::BTreeMap::new();
    let mut lines = std::collections::BTreeMap::new();
    for (stem, code) in &files {
        let mut next = Vec::new();
        for (n, line) in neighbours(code, layer, stem) {
            if names.contains(&n.as_str()) {
                lines.insert((stem.clone(), n.clone()), line);
                next.push(n);
            }
        }
        graph.insert(stem.clone(), next);
    }
    cycles(&graph)
        .into_iter()
        .map(|c| {
            let hops: Vec<&str> = c.split(" -> ").collect();
            let at: Vec<String> = hops
                .windows(2)
                .map(|w| {
                    format!(
                        "{}.rs:{}",
                        w[0],
                        lines[&(w[0].to_string(), w[1].to_string())]
                    )
                })
                .collect();
            format!("src/{layer}: {c} (at {})", at.join(", "))
        })
        .collect()
}

#[test]
fn the_files_of_a_layer_import_each_other_one_way() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let found: Vec<String> = ACYCLIC.iter().flat_map(|l| layer_cycles(&src, l)).collect();
    assert!(
        found.is_empty(),
        "import cycles among the files of a layer:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_cycle_check_sees_imports_and_cycles() {
    let code = r##"
use super::{a::X, b};
use crate::layer::{self as l, c::Y};
// super::d in a comment
const S: &str = "super::e";
fn f<'a>(x: &'a str) -> char { let _ = super::g::h(x); '{' }
pub(super) fn v() {}
const Q: char = '\'';
fn r#type() { let _ = r#"super::f"#; let _ = br"super::f"; }
struct T {
    #[cfg(test)]
    t: super::l::T
}
#[cfg(test)]
mod tests {
    use super::*;
    use super::super::i;
}
mod inner {
    use super::super::j;
    use super::k;
}
"##;
    let names: Vec<String> = neighbours(code, "layer", "me")
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(names, ["a", "b", "c", "g", "j"]);
    let graph = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a"]),
        ("d", vec!["a"]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.into_iter().map(String::from).collect()))
    .collect();
    assert_eq!(cycles(&graph), ["a -> b -> c -> a"]);
}
