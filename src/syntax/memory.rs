//! The parse memory: the trees of the texts parsed lately, with their errors, kept for the
//! next edits of the same file (its result is parsed from the original's tree, and a result
//! that is written is the next edit's original), bounded in bytes by estimated size, not by
//! a file-size cut. A text's definitions are kept with it once read (a tags query costs about
//! half a parse), and its top-level nodes once asked for (`local`). A result judged clean from
//! its edit's window alone (`local`) is kept without a tree: its tree is made only when asked
//! for, from the tree of the text it was edited from. An edit's original whose result parsed
//! clean at its first sight is kept unread (`check`): with the result's tree, to judge or parse
//! it from when it is asked for. A text is found by the text itself, compared whole (no hash to
//! compute over a large text, none to collide), among the few kept.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use tree_sitter::Tree;

use super::local::Tops;
use super::parse::{Skipped, SyntaxError};
use super::{Def, Lang};

/// How many texts' parses are remembered (the least recently used goes first).
pub(crate) const ENTRIES: usize = 16;

/// The remembered parses take at most this many bytes together, by their estimated size: a
/// text's bytes, and its tree's nodes at [`NODE_BYTES`] each. A text whose parse alone is
/// larger keeps nothing.
pub(crate) const BYTES: usize = 64 << 20;

/// The memory a tree takes per node, as estimated (measured: 168 bytes a node for a JSON
/// array of numbers, whose tree takes 168 bytes a byte of text): a tree counts as its node
/// count times this, so a text of many small nodes keeps fewer parses than plain code does.
pub(crate) const NODE_BYTES: usize = 192;

/// The memory a definition takes, as estimated, besides its name.
const DEF_BYTES: usize = std::mem::size_of::<Def>();

/// A text's tree (or its sketch) and errors, or why it was not parsed.
pub(crate) type Parsed = Result<(Made, Vec<SyntaxError>), Skipped>;

/// What a remembered text has of its parse.
#[derive(Clone)]
pub(crate) enum Made {
    /// Its tree.
    Tree(Tree),
    /// No tree yet: it was judged clean from its edit's window alone (`local`).
    Sketch(Arc<Sketch>),
    /// Not read yet: the original of an edit whose result parsed clean at first sight. Its
    /// errors are not known (the list beside it is empty and says nothing): `check` reads it
    /// before anything is told of it.
    Unread(Arc<Unread>),
}

/// A text not read yet, and the clean text it was edited into, with that text's tree, to
/// judge it from (`local`, as an edit of that text) or to parse it whole when it is asked for.
pub(crate) struct Unread {
    /// The clean text it was edited into.
    pub(crate) base: Arc<str>,
    /// That text's tree.
    pub(crate) tree: Tree,
}

/// A text judged clean without its tree: its top-level nodes, and the nearest tree to make
/// its own from (tree-sitter's incremental parse) when it is asked for.
pub(crate) struct Sketch {
    /// Its top-level nodes.
    pub(crate) tops: Arc<Tops>,
    /// The text the tree is of, and the tree (shared: every edit of a chain of sketches
    /// keeps the tree of the text the chain started from).
    pub(crate) base: Arc<str>,
    /// That text's tree.
    pub(crate) tree: Tree,
}

/// A text's definitions, once read (`None`: they could not be, past the query's match limit
/// or the most definitions read; one past its deadline is not remembered).
pub(crate) type Defs = Option<Arc<Vec<Def>>>;

/// One remembered text.
struct Entry {
    lang: Lang,
    text: Box<str>,
    parsed: Parsed,
    /// Its definitions, once read.
    defs: Option<Defs>,
    /// Its top-level nodes, once asked for.
    tops: Option<Arc<Tops>>,
    /// Its estimated size ([`size_of`], and its definitions').
    size: usize,
}

/// Parses by text, the most recently used last.
#[derive(Default)]
pub(crate) struct Memory {
    entries: VecDeque<Entry>,
    pub(crate) bytes: usize,
}

/// The estimated bytes a remembered parse of a text of `len` bytes takes; a sketch (or an
/// unread text) counts the tree and text it keeps to make its own from (shared with other
/// entries or not).
pub(crate) fn size_of(parsed: &Parsed, len: usize) -> usize {
    let (nodes, more) = match parsed {
        Ok((Made::Tree(tree), _)) => (tree.root_node().descendant_count(), 0),
        Ok((Made::Sketch(s), _)) => (
            s.tree.root_node().descendant_count(),
            s.base.len().saturating_add(tops_size(&s.tops)),
        ),
        Ok((Made::Unread(u), _)) => (u.tree.root_node().descendant_count(), u.base.len()),
        Err(_) => (0, 0),
    };
    len.saturating_add(more)
        .saturating_add(nodes.saturating_mul(NODE_BYTES))
}

/// The estimated bytes of a text's top-level nodes.
fn tops_size(tops: &Tops) -> usize {
    tops.len()
        .saturating_mul(std::mem::size_of::<(usize, usize)>())
}

impl Memory {
    /// The parse of `text` as `lang`, if remembered (made the most recently used).
    pub(crate) fn get(&mut self, lang: Lang, text: &str) -> Option<Parsed> {
        let at = self.find(lang, text)?;
        let entry = self.entries.remove(at)?;
        let found = entry.parsed.clone();
        self.entries.push_back(entry);
        Some(found)
    }

    /// Remember the parse of `text`; whether it was kept. Only a tree, or a language without
    /// a grammar, is: not a parse past its deadline nor given up for the budget (one slow
    /// moment under load; it may well finish the next time), nor a text too large (found
    /// again by its length alone, with no copy of it kept), nor one that alone is over
    /// [`BYTES`].
    pub(crate) fn put(&mut self, lang: Lang, text: &str, parsed: Parsed) -> bool {
        if !matches!(parsed, Ok(_) | Err(Skipped::NoGrammar)) {
            return false;
        }
        let size = size_of(&parsed, text.len());
        if size > BYTES {
            return false;
        }
        if let Some(at) = self
            .entries
            .iter()
            .position(|e| e.lang == lang && *e.text == *text)
            && let Some(old) = self.entries.remove(at)
        {
            self.bytes -= old.size;
        }
        self.entries.push_back(Entry {
            lang,
            text: text.into(),
            tops: match &parsed {
                Ok((Made::Sketch(s), _)) => Some(s.tops.clone()),
                _ => None,
            },
            parsed,
            defs: None,
            size,
        });
        self.bytes += size;
        self.evict();
        true
    }

    /// Forget what is remembered of `text` as `lang`.
    pub(crate) fn forget(&mut self, lang: Lang, text: &str) {
        if let Some(at) = self.find(lang, text)
            && let Some(old) = self.entries.remove(at)
        {
            self.bytes -= old.size;
        }
    }

    /// Let the least recently used go while over [`ENTRIES`] or [`BYTES`].
    fn evict(&mut self) {
        while self.entries.len() > ENTRIES || self.bytes > BYTES {
            let Some(old) = self.entries.pop_front() else {
                break;
            };
            self.bytes -= old.size;
        }
    }

    /// Where `text` as `lang` is remembered.
    fn find(&self, lang: Lang, text: &str) -> Option<usize> {
        self.entries
            .iter()
            .rposition(|e| e.lang == lang && e.text.len() == text.len() && *e.text == *text)
    }

    /// The definitions of `text` as `lang`, if remembered (the outer `None`: not read yet).
    pub(crate) fn defs(&self, lang: Lang, text: &str) -> Option<Defs> {
        self.entries.get(self.find(lang, text)?)?.defs.clone()
    }

    /// Remember the definitions of `text` as `lang`, a text whose parse is remembered.
    pub(crate) fn put_defs(&mut self, lang: Lang, text: &str, defs: Defs) {
        let Some(entry) = self
            .find(lang, text)
            .and_then(|at| self.entries.get_mut(at))
        else {
            return;
        };
        let size = defs.as_ref().map_or(0, |d| {
            d.iter()
                .map(|d| DEF_BYTES.saturating_add(d.name.len()))
                .fold(0usize, usize::saturating_add)
        });
        entry.defs = Some(defs);
        entry.size = entry.size.saturating_add(size);
        self.bytes = self.bytes.saturating_add(size);
        self.evict();
    }

    /// The top-level nodes of `text` as `lang`, if remembered (the outer `None`: the text is
    /// not, or they were not asked for yet).
    pub(crate) fn tops(&self, lang: Lang, text: &str) -> Option<Arc<Tops>> {
        self.entries.get(self.find(lang, text)?)?.tops.clone()
    }

    /// Remember the top-level nodes of `text` as `lang`, a text whose parse is remembered.
    pub(crate) fn put_tops(&mut self, lang: Lang, text: &str, tops: Arc<Tops>) {
        let Some(entry) = self
            .find(lang, text)
            .and_then(|at| self.entries.get_mut(at))
        else {
            return;
        };
        let size = tops_size(&tops);
        entry.tops = Some(tops);
        entry.size = entry.size.saturating_add(size);
        self.bytes = self.bytes.saturating_add(size);
        self.evict();
    }

    /// How many texts are remembered.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }
}

/// The process's parse memory.
pub(crate) fn memory() -> std::sync::MutexGuard<'static, Memory> {
    static MEMORY: OnceLock<Mutex<Memory>> = OnceLock::new();
    MEMORY
        .get_or_init(|| Mutex::new(Memory::default()))
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
}

/// Forget every remembered parse (for timing a check from scratch).
pub fn forget_parses() {
    *memory() = Memory::default();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::parse::parse;

    #[test]
    fn the_memory_keeps_the_most_recently_used_parses() {
        let mut m = Memory::default();
        let t = |n: usize| format!("text {n}");
        let slow = || Err(Skipped::NoGrammar);
        for n in 0..ENTRIES {
            assert!(m.put(Lang::Json, &t(n), slow()));
        }
        // Using the first keeps it when the next one comes.
        assert!(m.get(Lang::Json, &t(0)).is_some());
        m.put(Lang::Json, &t(200), slow());
        assert!(m.get(Lang::Json, &t(0)).is_some());
        assert!(m.get(Lang::Json, &t(1)).is_none());
        assert_eq!(m.len(), ENTRIES);
        // Found by the whole text and its language, not by its length.
        assert!(m.get(Lang::Json, "text 9x").is_none());
        assert!(m.get(Lang::Rust, &t(0)).is_none());
        // Bytes are bounded too: a large text pushes the least recently used out.
        let large = "x".repeat(BYTES - 50);
        assert!(m.put(Lang::Json, &large, slow()));
        assert!(m.bytes <= BYTES, "{}", m.bytes);
        assert!(m.get(Lang::Json, &large).is_some());
        // A text over the budget is not kept at all, nor a parse given up for the budget.
        let over = "x".repeat(BYTES + 1);
        assert!(!m.put(Lang::Json, &over, slow()));
        assert!(m.get(Lang::Json, &over).is_none());
        assert!(!m.put(Lang::Json, "busy", Err(Skipped::Busy)));
        assert!(m.get(Lang::Json, "busy").is_none());
    }

    /// One slow moment does not stick to a text: a parse past its deadline is not served
    /// from memory the next time (the text is parsed again), nor is a text too large kept.
    #[test]
    fn a_parse_that_timed_out_is_not_remembered() {
        let mut m = Memory::default();
        m.put(Lang::Rust, "fn a() {}", Err(Skipped::TooSlow));
        assert!(m.get(Lang::Rust, "fn a() {}").is_none());
        m.put(Lang::Rust, "fn b() {}", Err(Skipped::TooLarge));
        assert!(m.get(Lang::Rust, "fn b() {}").is_none());
        assert_eq!((m.len(), m.bytes), (0, 0));
        // A language without a grammar stays so: remembered.
        assert!(m.put(Lang::Rust, "fn c() {}", Err(Skipped::NoGrammar)));
        assert!(matches!(
            m.get(Lang::Rust, "fn c() {}"),
            Some(Err(Skipped::NoGrammar))
        ));
    }

    /// A tree counts by its nodes: a text of many small nodes takes far more than its bytes,
    /// and the memory holds fewer of them.
    #[test]
    fn the_memory_counts_a_tree_by_its_nodes() {
        let text = "[1,2,3,4,5,6,7,8,9,0],".repeat(2_000);
        let text = format!("[{}0]", text);
        let tree = parse(Lang::Json, &text, None).unwrap();
        let nodes = tree.root_node().descendant_count();
        assert!(nodes > text.len() / 2, "{nodes} nodes");
        let mut m = Memory::default();
        assert!(m.put(
            Lang::Json,
            &text,
            Ok((Made::Tree((*tree).clone()), Vec::new()))
        ));
        assert_eq!(m.bytes, text.len() + nodes * NODE_BYTES);
        assert!(m.bytes > 50 * text.len(), "{}", m.bytes);
    }

    #[test]
    fn definitions_are_kept_with_their_text_and_counted() {
        let text = "fn a() {}\n";
        let tree = parse(Lang::Rust, text, None).unwrap();
        let mut m = Memory::default();
        // Not for a text not remembered.
        m.put_defs(Lang::Rust, text, None);
        assert!(m.defs(Lang::Rust, text).is_none());
        assert!(m.put(
            Lang::Rust,
            text,
            Ok((Made::Tree((*tree).clone()), Vec::new()))
        ));
        assert!(m.defs(Lang::Rust, text).is_none(), "not read yet");
        let before = m.bytes;
        let def = Def {
            name: "a".into(),
            kind: "function",
            header: 0,
            name_line: 0,
            extent: (0, 1),
            body: true,
        };
        m.put_defs(Lang::Rust, text, Some(Arc::new(vec![def.clone()])));
        assert_eq!(m.defs(Lang::Rust, text), Some(Some(Arc::new(vec![def]))));
        assert_eq!(m.bytes, before + DEF_BYTES + 1);
        // Parsed again (a new tree): read again.
        assert!(m.put(
            Lang::Rust,
            text,
            Ok((Made::Tree((*tree).clone()), Vec::new()))
        ));
        assert!(m.defs(Lang::Rust, text).is_none());
    }

    /// Not a file-size cut: a source over 256 KiB (where trees were not kept before) keeps
    /// its tree, for the next edit to parse from. (One long comment: it parses fast in a
    /// debug build.)
    #[test]
    fn a_large_source_keeps_its_tree() {
        let text = format!("/* {} */\nfn a() {{}}\n", "x".repeat(300 << 10));
        let tree = parse(Lang::Rust, &text, None).unwrap();
        let mut m = Memory::default();
        assert!(m.put(
            Lang::Rust,
            &text,
            Ok((Made::Tree((*tree).clone()), Vec::new()))
        ));
        assert!(m.get(Lang::Rust, &text).is_some_and(|p| p.is_ok()));
    }
}
