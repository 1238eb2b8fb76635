//! Parsing with a bound: a size cap, a deadline (tree-sitter's progress callback cancels
//! the parse) and a budget of the bytes of text whose trees are alive at once across threads
//! (a tree takes up to about 300 bytes a byte of text, so the trees alive are what bounds the
//! memory: a tree holds its share until it is dropped, and a large one gives its memory back
//! to the system then), and the parse errors of a tree as `(line, column, what)`.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ops::Deref;
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tree_sitter::{InputEdit, Node, Parser, Point, Tree};

use super::Lang;

/// Files larger than this are not parsed (the check says nothing about them): a tree takes
/// many times its text.
pub const MAX_PARSE_BYTES: usize = 1 << 20;

/// A parse that takes longer than this is given up.
pub const PARSE_DEADLINE: Duration = Duration::from_millis(500);

/// Bytes of text whose trees are being made or held at once ([`Parse`]), across every
/// thread: one tree of the largest text parsed ([`MAX_PARSE_BYTES`]) at a time, several
/// smaller ones together.
pub const PARSE_BUDGET_BYTES: usize = MAX_PARSE_BYTES;

/// A dropped tree of a text at least this large gives its memory back to the system: the
/// allocator keeps what is freed for the thread that freed it, so without this every thread
/// that ever held a large tree keeps its size resident, and a burst of large parses on many
/// threads holds many trees' worth long after they are gone.
const GIVE_BACK_BYTES: usize = 256 << 10;

/// How long a parse waits for its bytes in the budget before it is given up.
pub const BUDGET_WAIT: Duration = Duration::from_secs(2);

/// At most this many errors are collected from one tree.
const MAX_ERRORS: usize = 64;

/// Why a text was not parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Skipped {
    /// Over [`MAX_PARSE_BYTES`].
    TooLarge,
    /// Past [`PARSE_DEADLINE`].
    TooSlow,
    /// The grammar is not built in, or could not be loaded (a version mismatch).
    NoGrammar,
    /// Other parses held the byte budget ([`PARSE_BUDGET_BYTES`]) past [`BUDGET_WAIT`].
    Busy,
}

impl Skipped {
    /// Why the text was not parsed, in words.
    pub fn reason(self) -> &'static str {
        match self {
            Skipped::TooLarge => "the file is too large to parse",
            Skipped::TooSlow => "its parse ran past its deadline",
            Skipped::NoGrammar => "no grammar for its language",
            Skipped::Busy => "other parses held the parse budget too long",
        }
    }
}

/// The bytes of text whose trees are being made or held now, of `total`
/// ([`PARSE_BUDGET_BYTES`] for every parse of the process).
struct Budget {
    total: usize,
    in_use: Mutex<usize>,
    freed: Condvar,
}

static BUDGET: Budget = Budget::new(PARSE_BUDGET_BYTES);

/// `bytes` of a budget, given back on drop.
struct Permit<'b>(&'b Budget, usize);

/// A tree from [`parse`], holding its text's share of the parse budget until it is dropped.
/// Derefs to the tree.
pub struct Parse {
    /// `Some` until dropped.
    tree: Option<Tree>,
    /// `None` for a tree the caller bounds itself (a remembered one).
    permit: Option<Permit<'static>>,
}

impl Parse {
    /// A tree already bounded elsewhere (kept by a cache that counts it): holds no budget.
    pub(crate) fn kept(tree: Tree) -> Parse {
        Parse {
            tree: Some(tree),
            permit: None,
        }
    }

    /// The same tree, now kept by a memory that counts it: its share of the parse budget is
    /// given back at once, and no memory to the system (the tree lives on).
    pub(crate) fn into_kept(mut self) -> Parse {
        let tree = self.tree.take();
        drop(self.permit.take());
        Parse { tree, permit: None }
    }

    /// Whether the tree is bounded by a memory that keeps it (it holds no budget).
    pub(crate) fn is_kept(&self) -> bool {
        self.permit.is_none()
    }
}

impl Deref for Parse {
    type Target = Tree;

    fn deref(&self) -> &Tree {
        self.tree
            .as_ref()
            .expect("a parse holds its tree until dropped")
    }
}

impl Drop for Parse {
    fn drop(&mut self) {
        drop(self.tree.take());
        if self.permit.as_ref().is_some_and(|p| p.1 >= GIVE_BACK_BYTES) {
            give_back_memory_soon();
        }
        // The permit goes last: the next large parse starts after the memory is back.
    }
}

/// The least time between two give-backs after large parses: one merge of a 400 KB file drops
/// several trees in a few milliseconds, and each give-back walks the allocator's free memory
/// (tens of milliseconds at that size), while concurrent 1 MiB parses take longer than this
/// each, so each still gives back what the one before it freed.
const GIVE_BACK_EVERY: Duration = Duration::from_millis(250);

/// [`give_back_memory`], unless it ran less than [`GIVE_BACK_EVERY`] ago.
fn give_back_memory_soon() {
    static LAST: Mutex<Option<Instant>> = Mutex::new(None);
    let mut last = LAST.lock().unwrap_or_else(PoisonError::into_inner);
    if last.is_some_and(|t| t.elapsed() < GIVE_BACK_EVERY) {
        return;
    }
    *last = Some(Instant::now());
    drop(last);
    give_back_memory();
}

/// Return the allocator's free memory to the system (glibc keeps it otherwise; other
/// allocators give it back themselves).
#[allow(unsafe_code)]
pub(crate) fn give_back_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `malloc_trim` takes no pointer and only releases free memory, under the
    // allocator's own locks.
    unsafe {
        libc::malloc_trim(0);
    }
}

impl Budget {
    const fn new(total: usize) -> Budget {
        Budget {
            total,
            in_use: Mutex::new(0),
            freed: Condvar::new(),
        }
    }

    /// Take `bytes` (at most the whole budget), waiting up to [`BUDGET_WAIT`] for them.
    fn take(&self, bytes: usize) -> Result<Permit<'_>, Skipped> {
        let bytes = bytes.clamp(1, self.total);
        let deadline = Instant::now() + BUDGET_WAIT;
        let mut in_use = self.in_use.lock().unwrap_or_else(PoisonError::into_inner);
        while *in_use + bytes > self.total {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Skipped::Busy);
            }
            in_use = self
                .freed
                .wait_timeout(in_use, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        *in_use += bytes;
        Ok(Permit(self, bytes))
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        let mut in_use = self.0.in_use.lock().unwrap_or_else(PoisonError::into_inner);
        *in_use = in_use.saturating_sub(self.1);
        self.0.freed.notify_all();
    }
}

/// One parse error: where (1-based line and column, in characters) and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    /// The line, from 1.
    pub line: usize,
    /// The column, from 1, in characters.
    pub column: usize,
    /// What is wrong: `missing "}"`, or `unexpected "…"`.
    pub what: String,
}

impl SyntaxError {
    /// The text of its line in `text` (the text it was found in), trimmed.
    pub fn line_in<'t>(&self, text: &'t str) -> &'t str {
        text.lines()
            .nth(self.line.saturating_sub(1))
            .unwrap_or("")
            .trim()
    }
}

impl std::fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.column, self.what)
    }
}

/// Parse `text` as `lang`, within the size cap and the deadline; with `from`, the tree of an
/// earlier text, only what changed since is parsed again (tree-sitter's incremental parse).
pub fn parse(lang: Lang, text: &str, from: Option<(&Tree, &str)>) -> Result<Parse, Skipped> {
    parse_within(&BUDGET, lang, text, from, PARSE_DEADLINE)
}

/// [`parse`] within `budget` and its own time limit.
fn parse_within(
    budget: &'static Budget,
    lang: Lang,
    text: &str,
    from: Option<(&Tree, &str)>,
    limit: Duration,
) -> Result<Parse, Skipped> {
    if text.len() > MAX_PARSE_BYTES {
        return Err(Skipped::TooLarge);
    }
    // Held while the parse runs and then by the tree it leaves, until that is dropped.
    let permit = budget.take(text.len())?;
    let old_tree = from.map(|(tree, before)| {
        let mut tree = tree.clone();
        tree.edit(&edit_between(before, text));
        tree
    });
    with_parser(lang, |parser| {
        let bytes = text.as_bytes();
        let deadline = Instant::now() + limit;
        let mut past_deadline = |_: &tree_sitter::ParseState| {
            if Instant::now() > deadline {
                std::ops::ControlFlow::Break(())
            } else {
                std::ops::ControlFlow::Continue(())
            }
        };
        let options = tree_sitter::ParseOptions::new().progress_callback(&mut past_deadline);
        let mut read = |at: usize, _: tree_sitter::Point| bytes.get(at..).unwrap_or_default();
        let tree = parser.parse_with_options(&mut read, old_tree.as_ref(), Some(options));
        if tree.is_none() {
            // A cancelled parse would otherwise resume with the next text.
            parser.reset();
            if text.len() >= GIVE_BACK_BYTES {
                give_back_memory_soon();
            }
        }
        tree.ok_or(Skipped::TooSlow)
    })
    .map(|tree| Parse {
        tree: Some(tree),
        permit: Some(permit),
    })
}

/// Run `f` with this thread's parser for `lang`: a parser keeps the buffers of its last
/// parse (its stack, its lexer), so a thread that parses again allocates little.
fn with_parser<T>(
    lang: Lang,
    f: impl FnOnce(&mut Parser) -> Result<T, Skipped>,
) -> Result<T, Skipped> {
    thread_local! {
        static PARSERS: RefCell<HashMap<Lang, Parser>> = RefCell::new(HashMap::new());
    }
    let fresh = || -> Result<Parser, Skipped> {
        let mut parser = Parser::new();
        let grammar = lang.grammar().ok_or(Skipped::NoGrammar)?;
        parser
            .set_language(&grammar)
            .map_err(|_| Skipped::NoGrammar)?;
        Ok(parser)
    };
    // Taken out while it parses, so a parse that re-enters (none does) gets a new one.
    let mut parser = match PARSERS.with(|p| p.borrow_mut().remove(&lang)) {
        Some(parser) => parser,
        None => fresh()?,
    };
    let out = f(&mut parser);
    PARSERS.with(|p| p.borrow_mut().insert(lang, parser));
    out
}

/// The one edit that turns `old` into `new`: everything between their common prefix and
/// their common suffix (whole characters), found by comparing blocks of bytes.
pub(crate) fn edit_between(old: &str, new: &str) -> InputEdit {
    let (a, b) = (old.as_bytes(), new.as_bytes());
    let mut prefix = common_prefix(a, b);
    while !(old.is_char_boundary(prefix) && new.is_char_boundary(prefix)) {
        prefix -= 1;
    }
    let max_suffix = a.len().min(b.len()) - prefix;
    let mut suffix = common_suffix(&a[prefix..], &b[prefix..]).min(max_suffix);
    while !(old.is_char_boundary(a.len() - suffix) && new.is_char_boundary(b.len() - suffix)) {
        suffix -= 1;
    }
    InputEdit {
        start_byte: prefix,
        old_end_byte: old.len() - suffix,
        new_end_byte: new.len() - suffix,
        start_position: point_at(old, prefix),
        old_end_position: point_at(old, old.len() - suffix),
        new_end_position: point_at(new, new.len() - suffix),
    }
}

/// Bytes compared at once while looking for where two texts part (a block compares at
/// memory speed; the byte is then found inside the block that differs).
const BLOCK: usize = 256;

/// The length of the common prefix of `a` and `b`, in bytes.
pub(crate) fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let mut at = 0;
    while at + BLOCK <= n && a[at..at + BLOCK] == b[at..at + BLOCK] {
        at += BLOCK;
    }
    at + a[at..n]
        .iter()
        .zip(&b[at..n])
        .take_while(|(x, y)| x == y)
        .count()
}

/// The length of the common suffix of `a` and `b`, in bytes.
pub(crate) fn common_suffix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let (mut ea, mut eb) = (a.len(), b.len());
    let mut done = 0;
    while done + BLOCK <= n && a[ea - BLOCK..ea] == b[eb - BLOCK..eb] {
        ea -= BLOCK;
        eb -= BLOCK;
        done += BLOCK;
    }
    done + a[..ea]
        .iter()
        .rev()
        .zip(b[..eb].iter().rev())
        .take_while(|(x, y)| x == y)
        .count()
        .min(n - done)
}

/// The tree-sitter point (row, byte column) of byte `at` of `text`.
fn point_at(text: &str, at: usize) -> Point {
    let before = &text.as_bytes()[..at];
    let row = memchr::memchr_iter(b'\n', before).count();
    let line_start = memchr::memrchr(b'\n', before).map_or(0, |i| i + 1);
    Point::new(row, at - line_start)
}

/// The parse errors of `tree` over `text`, in order: each ERROR node (not the ones inside it)
/// and each MISSING node.
pub fn errors(tree: &Tree, text: &str) -> Vec<SyntaxError> {
    let mut out = Vec::new();
    let mut cursor = tree.walk();
    let mut descend = true;
    loop {
        let node = cursor.node();
        if descend && node.has_error() {
            if node.is_error() || node.is_missing() {
                out.push(describe(node, text));
                if out.len() == MAX_ERRORS {
                    break;
                }
            } else if cursor.goto_first_child() {
                continue;
            }
        }
        if cursor.goto_next_sibling() {
            descend = true;
            continue;
        }
        if !cursor.goto_parent() {
            break;
        }
        descend = false;
    }
    out
}

/// The parse errors of `tree`, a parse of `text` as `lang`: [`errors`], and for Python each
/// compound statement left with an empty body (the grammar accepts one; Python does not: a
/// `def` whose body a merge dropped parses clean otherwise).
pub fn errors_as(lang: Lang, tree: &Tree, text: &str) -> Vec<SyntaxError> {
    let mut out = errors(tree, text);
    if lang == Lang::Python && out.len() < MAX_ERRORS {
        empty_bodies(tree, &mut out);
        out.sort_by_key(|e| (e.line, e.column));
        out.truncate(MAX_ERRORS);
    }
    out
}

/// Python's empty bodies: each `block` holding no statement (comments aside), named at its
/// header's line. One walk of the tree, in order.
fn empty_bodies(tree: &Tree, out: &mut Vec<SyntaxError>) {
    let mut cursor = tree.walk();
    loop {
        let node = cursor.node();
        if node.kind() == "block" && !node.has_error() {
            let mut inner = node.walk();
            let empty = node
                .named_children(&mut inner)
                .all(|n| n.kind() == "comment");
            if empty && let Some(header) = node.parent() {
                let at = header.start_position();
                out.push(SyntaxError {
                    line: at.row + 1,
                    column: at.column + 1,
                    what: "an empty body: nothing indented under this line".to_string(),
                });
                if out.len() >= MAX_ERRORS {
                    return;
                }
            }
        }
        if cursor.goto_first_child() {
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                return;
            }
        }
    }
}

/// An error node as a [`SyntaxError`].
fn describe(node: Node, text: &str) -> SyntaxError {
    let start = node.start_position();
    let line_start = node.start_byte() - start.column;
    let column = text
        .get(line_start..node.start_byte())
        .map_or(start.column, |s| s.chars().count())
        + 1;
    let what = if node.is_missing() {
        format!("missing {:?}", node.kind())
    } else {
        let found = text.get(node.byte_range()).unwrap_or_default();
        let first = found.split_whitespace().next().unwrap_or("");
        let first: String = first.chars().take(24).collect();
        let to_the_end = node.end_byte() >= text.trim_end().len();
        match (first.is_empty(), to_the_end) {
            (true, _) => "unexpected text".to_string(),
            // Error recovery swallowed the rest of the file: something opened here is not
            // closed (a dropped brace, bracket or quote).
            (false, true) => format!("{first:?} here is not closed before the end of the file"),
            (false, false) => format!("unexpected {first:?}"),
        }
    };
    SyntaxError {
        line: start.row + 1,
        column,
        what,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_python_header_left_without_a_body_is_an_error() {
        let text =
            "import os\n\ndef show(parent):\n    # gone\n\n\ndef help(parent):\n    return 1\n";
        let tree = parse(Lang::Python, text, None).unwrap();
        assert!(errors(&tree, text).is_empty(), "the grammar accepts it");
        let e = errors_as(Lang::Python, &tree, text);
        assert_eq!(e.len(), 1, "{e:?}");
        assert_eq!((e[0].line, e[0].column), (3, 1), "{e:?}");
        let whole = "def show(parent):\n    pass\n\nclass A:\n    x = 1\n";
        let tree = parse(Lang::Python, whole, None).unwrap();
        assert!(errors_as(Lang::Python, &tree, whole).is_empty());
    }

    #[test]
    fn a_missing_brace_and_stray_text_are_found_where_they_are() {
        let text = "fn main() {\n    let x = 1;\n";
        let tree = parse(Lang::Rust, text, None).unwrap();
        let e = errors(&tree, text);
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(
            e[0].what.contains('}') || e[0].what.contains("not closed"),
            "{e:?}"
        );
        let text = "def f():\n    return 1\n)\n";
        let tree = parse(Lang::Python, text, None).unwrap();
        let e = errors(&tree, text);
        assert_eq!(e[0].line, 3, "{e:?}");
        assert!(e[0].to_string().starts_with("3:1: "), "{e:?}");
    }

    #[test]
    fn clean_code_has_no_errors_and_huge_text_is_skipped() {
        let text = "fn main() {\n    println!(\"hi\");\n}\n";
        assert!(errors(&parse(Lang::Rust, text, None).unwrap(), text).is_empty());
        let huge = "x".repeat(MAX_PARSE_BYTES + 1);
        assert_eq!(
            parse(Lang::Json, &huge, None).err(),
            Some(Skipped::TooLarge)
        );
    }

    #[test]
    fn a_parse_given_up_leaves_nothing_behind_for_the_next() {
        // The thread's parser is reused: a cancelled parse must not resume with the next text.
        let long: String = (0..4000)
            .map(|i| format!("fn f{i}(x: u32) -> u32 {{ x + {i} }}\n"))
            .collect();
        assert_eq!(
            parse_within(&BUDGET, Lang::Rust, &long, None, Duration::ZERO).err(),
            Some(Skipped::TooSlow)
        );
        let text = "fn main() {\n    let y = 2;\n}\n";
        let tree = parse(Lang::Rust, text, None).unwrap();
        assert!(errors(&tree, text).is_empty());
        assert_eq!(tree.root_node().end_byte(), text.len());
        assert_eq!(tree.root_node().named_child_count(), 1);
    }

    #[test]
    fn a_parse_waits_for_its_bytes_in_the_budget_and_gives_up_past_the_wait() {
        static OWN: Budget = Budget::new(PARSE_BUDGET_BYTES);
        let held = OWN.take(PARSE_BUDGET_BYTES - 10).unwrap();
        let small = OWN.take(10).unwrap();
        let start = Instant::now();
        assert!(matches!(OWN.take(1), Err(Skipped::Busy)));
        assert!(start.elapsed() >= BUDGET_WAIT);
        drop(small);
        let waiter = std::thread::spawn(|| OWN.take(MAX_PARSE_BYTES * 4).is_ok());
        std::thread::sleep(Duration::from_millis(100));
        drop(held);
        assert!(
            waiter.join().unwrap(),
            "taken once the bytes were given back"
        );
    }

    /// A tree is most of a parse's memory: it keeps its text's bytes in the budget for as
    /// long as it lives, not only while it is built.
    #[test]
    fn a_tree_holds_its_bytes_in_the_budget_until_it_is_dropped() {
        static OWN: Budget = Budget::new(64);
        let text = "fn a() {}\nfn b() {}\nfn c() {}\nfn d() {}\n";
        let tree = parse_within(&OWN, Lang::Rust, text, None, PARSE_DEADLINE).unwrap();
        assert!(
            matches!(OWN.take(text.len()), Err(Skipped::Busy)),
            "a second tree as large fits only once the first is gone"
        );
        drop(tree);
        assert!(OWN.take(text.len()).is_ok());
    }

    /// The edit found spans exactly what differs, on whole characters, also where the texts
    /// part inside a block of bytes compared at once or inside a character.
    #[test]
    fn the_edit_between_two_texts_is_what_differs() {
        let long = "a".repeat(3 * BLOCK + 7);
        let cases = [
            ("", "x"),
            ("same", "same"),
            ("é", "è"),
            ("aéb", "aèb"),
            ("abc", "abXbc"),
            ("xxxx", "xx"),
        ];
        let mixed = [
            (format!("{long}é{long}"), format!("{long}è{long}")),
            (format!("{long}{long}"), format!("{long}\nz{long}")),
            (format!("{long}\n{long}"), long.clone()),
        ];
        for (old, new) in cases
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .chain(mixed)
        {
            let e = edit_between(&old, &new);
            assert_eq!(old[..e.start_byte], new[..e.start_byte], "{old:?} {new:?}");
            assert_eq!(
                old[e.old_end_byte..],
                new[e.new_end_byte..],
                "{old:?} {new:?}"
            );
            assert!(e.start_byte <= e.old_end_byte && e.start_byte <= e.new_end_byte);
            let changed = (e.old_end_byte - e.start_byte) + (e.new_end_byte - e.start_byte);
            assert_eq!(changed == 0, old == new, "{old:?} {new:?}");
            assert_eq!(e.new_end_position, point_at(&new, e.new_end_byte));
        }
        // Where a one-character change sits in a long text: that character and no more.
        let (old, new) = (format!("{long}é{long}"), format!("{long}è{long}"));
        let e = edit_between(&old, &new);
        assert_eq!((e.start_byte, e.old_end_byte), (long.len(), long.len() + 2));
    }

    #[test]
    fn an_incremental_parse_gives_the_tree_a_full_parse_gives() {
        let old = "fn a() {\n    1\n}\n\nfn b() -> &'static str {\n    \"é\"\n}\n";
        let tree = parse(Lang::Rust, old, None).unwrap();
        for new in [
            "fn a() {\n    1\n\nfn b() -> &'static str {\n    \"é\"\n}\n",
            "fn a() {\n    2\n}\n\nfn b() -> &'static str {\n    \"ée\"\n}\n",
            "// top\nfn a() {\n    1\n}\n\nfn b() -> &'static str {\n    \"é\"\n}\n",
            "fn a() {\n    1\n}\n",
            old,
        ] {
            let full = parse(Lang::Rust, new, None).unwrap();
            let inc = parse(Lang::Rust, new, Some((&tree, old))).unwrap();
            assert_eq!(
                inc.root_node().to_sexp(),
                full.root_node().to_sexp(),
                "{new}"
            );
        }
    }
}
