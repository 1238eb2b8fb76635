//! The design lives in the repository: `docs/DESIGN.md` exists, every `docs/DESIGN.md §N` that a
//! source comment, the README or a reference page in `docs/` cites names a section it has, and
//! nothing points at a design outside the repository.

use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn design_citations_name_sections_of_docs_design() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let design = std::fs::read_to_string(repo.join("docs/DESIGN.md"))
        .expect("docs/DESIGN.md is the design, in the repository");
    let sections: Vec<String> = design
        .lines()
        .filter_map(|l| l.strip_prefix("## ").or_else(|| l.strip_prefix("### ")))
        .filter_map(|h| h.split_whitespace().next())
        .map(|n| n.trim_end_matches('.').to_string())
        .collect();
    let mut sources = Vec::new();
    for d in ["src", "tests", "benches"] {
        files(&repo.join(d), &mut sources);
    }
    sources.push(repo.join("README.md"));
    for e in std::fs::read_dir(repo.join("docs")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "md") && !p.ends_with("docs/DESIGN.md") {
            sources.push(p);
        }
    }
    let mut cited = 0;
    // This file names the pattern it looks for.
    sources.retain(|f| !f.ends_with("tests/integration/docs.rs"));
    for f in &sources {
        let text = std::fs::read_to_string(f).unwrap();
        let shown = f.strip_prefix(&repo).unwrap().display();
        assert!(
            !text.contains(&["..", "shared", "DESIGN.md"].join("/")),
            "{shown} points at a design outside the repository"
        );
        for (at, _) in text.match_indices("DESIGN.md §") {
            let rest = &text[at + "DESIGN.md §".len()..];
            let n: String = rest
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '.')
                .collect();
            let n = n.trim_end_matches('.');
            assert!(
                sections.iter().any(|s| s == n),
                "{shown} cites docs/DESIGN.md §{n}, which has no such section"
            );
            cited += 1;
        }
    }
    assert!(
        cited >= 20,
        "only {cited} citations of docs/DESIGN.md found"
    );
}
