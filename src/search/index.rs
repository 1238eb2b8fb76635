//! The code index: per file its terms (with counts), its path's terms, the names it defines
//! and its units, over one dictionary; the postings and statistics ranking needs are derived
//! in memory. Pure: files come in as text, so the walker and the store decide what is read.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::tokens;
use super::units;

/// What a file is, for the ranking's prior.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Kind {
    /// Program source.
    Source,
    /// Tests, fixtures, examples.
    Test,
    /// Prose: README, docs, changelogs.
    Doc,
    /// Everything else (configuration, data, markup).
    Other,
}

/// Extensions of program source.
const SOURCE_EXT: &[&str] = &[
    "rs", "go", "py", "pyi", "js", "jsx", "mjs", "cjs", "ts", "tsx", "java", "kt", "kts", "scala",
    "c", "h", "cc", "cpp", "cxx", "hpp", "hh", "cs", "fs", "swift", "m", "mm", "rb", "php", "pl",
    "pm", "lua", "sh", "bash", "zsh", "ex", "exs", "erl", "hs", "ml", "mli", "clj", "cljs", "dart",
    "r", "jl", "zig", "nim", "v", "sql", "vue", "svelte", "groovy", "gradle", "el", "vim", "elm",
    "fsx", "ps1", "tf", "proto", "cmake",
];

/// Extensions of prose.
const DOC_EXT: &[&str] = &["md", "markdown", "rst", "txt", "adoc", "org", "rdoc", "tex"];

/// Directory and file-name words that mark tests, fixtures and examples.
const TEST_WORDS: &[&str] = &[
    "test",
    "tests",
    "testing",
    "spec",
    "specs",
    "__tests__",
    "testdata",
    "fixtures",
    "examples",
    "example",
    "benches",
    "bench",
    "e2e",
];

/// Directories of vendored, built or generated code: not the project's own source.
const VENDORED_DIRS: &[&str] = &[
    "vendor",
    "vendored",
    "third_party",
    "thirdparty",
    "third-party",
    "external",
    "node_modules",
    "dist",
    "build",
    "target",
    "generated",
    "__generated__",
    "gen",
];

/// File-name endings of generated code.
const GENERATED_ENDINGS: &[&str] = &[
    ".min.js",
    ".min.css",
    ".pb.go",
    "_pb2.py",
    "_pb2_grpc.py",
    ".pb.cc",
    ".pb.h",
    ".generated.cs",
    ".g.dart",
    ".designer.cs",
];

/// Words of a directory's name, after splitting it at `-`, `.`, `_` and case changes, that
/// mark it as holding tests, fixtures, examples or benchmarks when the whole name is not one
/// of [`TEST_WORDS`]: Gradle's and Kotlin Multiplatform's source sets (`commonTest`,
/// `jvmTest`, `androidTest`), a test module (`android-test`, `test-helpers`), benchmarks.
const TEST_PARTS: &[&str] = &[
    "test",
    "tests",
    "testing",
    "fixtures",
    "examples",
    "example",
    "benchmark",
    "benchmarks",
    "bench",
    "benches",
    "e2e",
];

/// Whether a directory's name (as written) marks tests: the whole name is one of
/// [`TEST_WORDS`], or one of its parts one of [`TEST_PARTS`] (`latest`, `contest` and
/// `attestation` are one part each, and no test word).
fn is_test_dir(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    TEST_WORDS.contains(&lower.as_str())
        || name
            .split(['-', '.'])
            .flat_map(tokens::split_identifier)
            .any(|p| TEST_PARTS.contains(&p.to_ascii_lowercase().as_str()))
}

/// A file over this many bytes whose lines average more than [`MINIFIED_LINE`] bytes is
/// minified (a bundler's output): no one's source to edit, whatever its name.
const MINIFIED_MIN_BYTES: usize = 1024;

/// The mean line length, in bytes, past which a file is minified (source averages 30 to 40).
const MINIFIED_LINE: usize = 200;

/// The kind of a file from its root-relative path and its text: [`kind_of`], except that
/// minified text (`website/static/prettify.js`: 31 lines of 469 bytes on average) is
/// [`Kind::Other`], as a `.min.js` is by its name.
pub fn kind_of_file(path: &str, text: &str, lines: usize) -> Kind {
    if text.len() > MINIFIED_MIN_BYTES && text.len() / lines.max(1) > MINIFIED_LINE {
        return Kind::Other;
    }
    kind_of(path)
}

/// The kind of a root-relative path.
pub fn kind_of(path: &str) -> Kind {
    let lower = path.to_ascii_lowercase();
    let name = lower.rsplit('/').next().unwrap_or(&lower);
    let (stem, ext) = name.rsplit_once('.').unwrap_or((name, ""));
    let dirs: Vec<&str> = lower.split('/').collect();
    let dirs = &dirs[..dirs.len() - 1];
    if dirs.iter().any(|d| VENDORED_DIRS.contains(d))
        || GENERATED_ENDINGS.iter().any(|e| name.ends_with(e))
    {
        return Kind::Other;
    }
    if DOC_EXT.contains(&ext) || dirs.iter().any(|d| matches!(*d, "docs" | "doc")) {
        return Kind::Doc;
    }
    let test_name = stem.starts_with("test_")
        || stem.ends_with("_test")
        || stem.ends_with("_spec")
        || stem.ends_with(".test")
        || stem.ends_with(".spec")
        || stem == "test"
        || stem == "tests"
        || stem == "conftest"
        || (path.rsplit('/').next().unwrap_or("").contains("Test") && stem.ends_with("test"))
        || stem.ends_with("tests");
    let test_dir = path.split('/').rev().skip(1).any(is_test_dir);
    if test_name || test_dir {
        return Kind::Test;
    }
    if SOURCE_EXT.contains(&ext) {
        Kind::Source
    } else {
        Kind::Other
    }
}

/// One unit of a file, with its terms.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct UnitEntry {
    /// First line, 0-based.
    pub start: u32,
    /// One past the last line.
    pub end: u32,
    /// The name it defines.
    pub name: Option<String>,
    /// The term of the defined name as a whole (see [`tokens::whole_term`]).
    pub name_term: Option<u32>,
    /// Term ids with their counts in the unit, sorted by id.
    pub terms: Vec<(u32, u32)>,
    /// The number of terms in the unit.
    pub len: u32,
}

/// One indexed file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct FileEntry {
    /// Root-relative path with `/`.
    pub path: String,
    /// Modification time (ns since the epoch) and size when read: the store's change test.
    pub mtime_ns: i64,
    /// Size in bytes.
    pub size: u64,
    /// Line count.
    pub lines: u32,
    /// What it is.
    pub kind: Kind,
    /// Term ids with their counts, sorted by id.
    pub terms: Vec<(u32, u32)>,
    /// The number of terms.
    pub len: u32,
    /// The path's term ids.
    pub path_terms: Vec<u32>,
    /// The term ids of the names it defines.
    pub def_terms: Vec<u32>,
    /// Its units.
    pub units: Vec<UnitEntry>,
}

/// The index over a set of files.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Index {
    words: Vec<String>,
    files: Vec<FileEntry>,
    #[serde(skip)]
    dict: HashMap<String, u32>,
    #[serde(skip)]
    by_path: HashMap<String, usize>,
    /// Per term: (file, count).
    #[serde(skip)]
    postings: Vec<Vec<(u32, u32)>>,
    /// Per term: (file, unit, count).
    #[serde(skip)]
    unit_postings: Vec<Vec<(u32, u32, u32)>>,
    #[serde(skip)]
    avg_len: f64,
    /// Per defined name's whole term: (file, unit) of each definition.
    #[serde(skip)]
    defs: HashMap<u32, Vec<(u32, u32)>>,
    /// While files are added: each identifier's term ids (identifiers repeat a lot, and
    /// splitting and stemming them is most of the work). Dropped by [`Index::finish`].
    #[serde(skip)]
    seen_ids: HashMap<String, Vec<u32>>,
}

fn counted(ids: impl IntoIterator<Item = u32>) -> Vec<(u32, u32)> {
    let mut v: Vec<u32> = ids.into_iter().collect();
    v.sort_unstable();
    let mut out: Vec<(u32, u32)> = Vec::new();
    for id in v {
        match out.last_mut() {
            Some((last, n)) if *last == id => *n += 1,
            _ => out.push((id, 1)),
        }
    }
    out
}

impl Index {
    /// An empty index.
    pub fn new() -> Index {
        Index::default()
    }

    fn intern(&mut self, term: String) -> u32 {
        if let Some(&id) = self.dict.get(&term) {
            return id;
        }
        let id = self.words.len() as u32;
        self.words.push(term.clone());
        self.dict.insert(term, id);
        id
    }

    /// The id of a term, if any file has it.
    pub(crate) fn term(&self, term: &str) -> Option<u32> {
        self.dict.get(term).copied()
    }

    /// The files, in index order.
    pub(crate) fn files(&self) -> &[FileEntry] {
        &self.files
    }

    /// Whether every term id the files name is one of the index's words and every unit's
    /// lines run forward: what [`Index::finish`] and the ranking index by. A loaded index
    /// whose digest is right may still be hostile (the digest is no secret), so it is
    /// checked before it is used.
    pub(crate) fn is_whole(&self) -> bool {
        let known = |t: u32| (t as usize) < self.words.len();
        self.files.iter().all(|f| {
            f.terms.iter().all(|&(t, _)| known(t))
                && f.path_terms.iter().all(|&t| known(t))
                && f.def_terms.iter().all(|&t| known(t))
                && f.units.iter().all(|u| {
                    // Within the file (a unit may end on the line after its last break).
                    u.start <= u.end
                        && u.end < u32::MAX
                        && u.end <= f.lines.saturating_add(1)
                        && u.name_term.is_none_or(known)
                        && u.terms.iter().all(|&(t, _)| known(t))
                })
        })
    }

    /// The files, to damage in tests.
    #[cfg(test)]
    pub(crate) fn files_mut(&mut self) -> &mut Vec<FileEntry> {
        &mut self.files
    }

    /// The number of files.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// Whether no file is indexed.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// The entry of a path.
    pub(crate) fn file(&self, path: &str) -> Option<&FileEntry> {
        self.position(path).map(|i| &self.files[i])
    }

    /// The file's modification time and size as indexed.
    pub fn stamp(&self, path: &str) -> Option<(i64, u64)> {
        self.file(path).map(|f| (f.mtime_ns, f.size))
    }

    /// The indexed paths.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.files.iter().map(|f| f.path.as_str())
    }

    /// Index (or re-index) one file's text. Call [`Index::finish`] after a batch.
    pub fn add(&mut self, path: &str, mtime_ns: i64, size: u64, text: &str) {
        let lines: Vec<&str> = text.lines().collect();
        let line_terms: Vec<Vec<u32>> = lines.iter().map(|l| self.line_terms(l)).collect();
        let mut unit_entries = Vec::new();
        let mut def_terms = Vec::new();
        for u in units::units(path, text, &lines) {
            let ids = line_terms[u.start..u.end].iter().flatten().copied();
            let terms = counted(ids);
            let len = terms.iter().map(|(_, n)| n).sum();
            let mut name_term = None;
            if let Some(name) = &u.name {
                let mut t = Vec::new();
                tokens::identifier_terms(name, &mut t);
                def_terms.extend(t.into_iter().map(|t| self.intern(t)));
                name_term = Some(self.intern(tokens::whole_term(name)));
            }
            unit_entries.push(UnitEntry {
                start: u.start as u32,
                end: u.end as u32,
                name: u.name,
                name_term,
                terms,
                len,
            });
        }
        def_terms.sort_unstable();
        def_terms.dedup();
        let mut path_terms: Vec<u32> = tokens::path_terms(path)
            .into_iter()
            .map(|t| self.intern(t))
            .collect();
        path_terms.sort_unstable();
        let terms = counted(line_terms.into_iter().flatten());
        let entry = FileEntry {
            path: path.to_string(),
            mtime_ns,
            size,
            lines: lines.len() as u32,
            kind: kind_of_file(path, text, lines.len()),
            len: terms.iter().map(|(_, n)| n).sum(),
            terms,
            path_terms,
            def_terms,
            units: unit_entries,
        };
        match self.by_path.get(path) {
            Some(&i) => self.files[i] = entry,
            None => {
                self.by_path.insert(path.to_string(), self.files.len());
                self.files.push(entry);
            }
        }
    }

    /// The term ids of one line (through the identifier cache).
    fn line_terms(&mut self, line: &str) -> Vec<u32> {
        let mut out = Vec::new();
        for id in tokens::identifiers(line) {
            if let Some(ids) = self.seen_ids.get(id) {
                out.extend_from_slice(ids);
                continue;
            }
            let mut terms = Vec::new();
            tokens::identifier_terms(id, &mut terms);
            let ids: Vec<u32> = terms.into_iter().map(|t| self.intern(t)).collect();
            out.extend_from_slice(&ids);
            self.seen_ids.insert(id.to_string(), ids);
        }
        out
    }

    /// Map each path to its place in `files`.
    fn index_paths(&mut self) {
        self.by_path = self
            .files
            .iter()
            .enumerate()
            .map(|(i, f)| (f.path.clone(), i))
            .collect();
    }

    /// The place of a path in [`Index::files`].
    pub(crate) fn position(&self, path: &str) -> Option<usize> {
        self.by_path.get(path).copied()
    }

    /// Drop the files `keep` refuses. Call [`Index::finish`] after.
    pub fn retain(&mut self, mut keep: impl FnMut(&str) -> bool) {
        self.files.retain(|f| keep(&f.path));
        self.index_paths();
    }

    /// Derive the postings and statistics (after loading or changing files).
    pub fn finish(&mut self) {
        self.seen_ids = HashMap::new();
        if self.dict.len() != self.words.len() {
            self.dict = self
                .words
                .iter()
                .enumerate()
                .map(|(i, w)| (w.clone(), i as u32))
                .collect();
        }
        self.index_paths();
        let mut postings = vec![Vec::new(); self.words.len()];
        let mut unit_postings = vec![Vec::new(); self.words.len()];
        let mut total = 0u64;
        self.defs.clear();
        for (i, f) in self.files.iter().enumerate() {
            total += u64::from(f.len);
            for (k, u) in f.units.iter().enumerate() {
                if let Some(t) = u.name_term {
                    self.defs.entry(t).or_default().push((i as u32, k as u32));
                }
                for &(t, n) in &u.terms {
                    unit_postings[t as usize].push((i as u32, k as u32, n));
                }
            }
            for &(t, n) in &f.terms {
                postings[t as usize].push((i as u32, n));
            }
        }
        self.postings = postings;
        self.unit_postings = unit_postings;
        self.avg_len = if self.files.is_empty() {
            1.0
        } else {
            (total as f64 / self.files.len() as f64).max(1.0)
        };
    }

    /// The files that hold a term, with its count in each.
    pub(crate) fn postings(&self, term: u32) -> &[(u32, u32)] {
        self.postings
            .get(term as usize)
            .map_or(&[][..], Vec::as_slice)
    }

    /// The units that hold a term, with its count in each.
    pub(crate) fn unit_postings(&self, term: u32) -> &[(u32, u32, u32)] {
        self.unit_postings
            .get(term as usize)
            .map_or(&[][..], Vec::as_slice)
    }

    /// The words, by term id.
    pub(crate) fn words(&self) -> &[String] {
        &self.words
    }

    /// An index of `words` (by term id) and `files`, as a saved one is read back: check it
    /// with [`Index::is_whole`], then [`Index::finish`] it.
    pub(crate) fn from_parts(words: Vec<String>, files: Vec<FileEntry>) -> Index {
        Index {
            words,
            files,
            ..Index::default()
        }
    }

    /// The inverse document frequency of a term (BM25's, never negative).
    pub(crate) fn idf(&self, term: u32) -> f64 {
        let n = self.files.len() as f64;
        let df = self.postings(term).len() as f64;
        (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
    }

    /// The mean number of terms in a file.
    pub(crate) fn avg_len(&self) -> f64 {
        self.avg_len
    }

    /// Where a name (by its whole term) is defined: (file, unit) pairs.
    pub(crate) fn definitions(&self, name_term: u32) -> &[(u32, u32)] {
        self.defs.get(&name_term).map_or(&[][..], Vec::as_slice)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_by_path() {
        assert_eq!(kind_of("src/flask/app.py"), Kind::Source);
        assert_eq!(kind_of("context_test.go"), Kind::Test);
        assert_eq!(kind_of("tests/test_basic.py"), Kind::Test);
        assert_eq!(kind_of("src/App.test.tsx"), Kind::Test);
        assert_eq!(kind_of("src/test/java/FooTest.java"), Kind::Test);
        assert_eq!(kind_of("docs/api.rst"), Kind::Doc);
        assert_eq!(kind_of("README.md"), Kind::Doc);
        assert_eq!(kind_of("pyproject.toml"), Kind::Other);
        assert_eq!(kind_of("src/latest.rs"), Kind::Source);
        assert_eq!(kind_of("vendor/github.com/x/y.go"), Kind::Other);
        assert_eq!(kind_of("static/app.min.js"), Kind::Other);
        assert_eq!(kind_of("api/v1/service.pb.go"), Kind::Other);
    }

    /// A directory named for tests in parts (a Gradle or Kotlin Multiplatform source set, a
    /// test module, benchmarks) holds tests; a name that only contains `test` does not.
    #[test]
    fn test_directories_are_told_by_their_names_parts() {
        for test in [
            "okio/src/commonTest/kotlin/okio/Util.kt",
            "core/src/jvmTest/kotlin/Fakes.kt",
            "retrofit/test-helpers/src/main/java/retrofit2/helpers/ToStringConverterFactory.java",
            "retrofit/android-test/build.gradle",
            "packages/zod/src/v3/benchmarks/realworld.ts",
            "integration_tests/client.py",
        ] {
            assert_eq!(kind_of(test), Kind::Test, "{test}");
        }
        for source in [
            "src/latest/app.rs",
            "contest/judge.go",
            "Sources/Attestation/Verifier.swift",
            "lib/testament.rb",
        ] {
            assert_eq!(kind_of(source), Kind::Source, "{source}");
        }
    }

    /// Minified text is other, whatever its name; source with a few long lines is not.
    #[test]
    fn minified_text_is_other() {
        let minified = format!("var a={};\n", "x:1,".repeat(150)).repeat(8);
        let mut ix = Index::new();
        ix.add(
            "website/static/prettify.js",
            1,
            minified.len() as u64,
            &minified,
        );
        let source = format!(
            "{}\n",
            "const s = \"long\";\nfunction f() { return s; }\n".repeat(60)
        );
        ix.add("src/app.js", 1, source.len() as u64, &source);
        ix.finish();
        assert_eq!(
            ix.file("website/static/prettify.js").unwrap().kind,
            Kind::Other
        );
        assert_eq!(ix.file("src/app.js").unwrap().kind, Kind::Source);
        assert_eq!(kind_of_file("a.js", "x", 1), Kind::Source);
    }

    #[test]
    fn reindexing_a_file_replaces_it_and_postings_follow() {
        let mut ix = Index::new();
        ix.add("a.go", 1, 10, "func Alpha() {}\n");
        ix.add("b.go", 1, 10, "func Beta() {}\n");
        ix.finish();
        let alpha = ix.term("alpha").unwrap();
        assert_eq!(ix.postings(alpha), [(0, 1)]);
        ix.add("a.go", 2, 10, "func Gamma() {}\n");
        ix.retain(|p| p != "b.go");
        ix.finish();
        assert_eq!(ix.len(), 1);
        assert!(ix.postings(alpha).is_empty());
        assert_eq!(ix.stamp("a.go"), Some((2, 10)));
        let gamma = ix.term("gamma").unwrap();
        assert_eq!(ix.file("a.go").unwrap().def_terms, [gamma]);
    }
}
