//! The layers point one way (DESIGN §8): pure engines (`edit`, `diff`) know nothing of files,
//! reviews, MCP or terminals; `workspace` nothing of reviews, MCP or terminals; `review`
//! nothing of MCP or terminals; `search` (and the model client `chat.rs`) nothing of reviews,
//! MCP or terminals; `api` and `mcp` nothing of the TUI; the TUI nothing of MCP (it talks to a
//! gate, local or over the review API). Read from the sources: every
//! `crate::LAYER` path a file names, outside comments.

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
