//! The local judgement of an edit: whether the result of an edit of a clean file is clean,
//! told from a parse of the top-level items the edit touched and their two neighbours alone,
//! where the incremental reparse of the whole result costs more (tree-sitter-rust re-lexes
//! after every doc comment: a 400 KB file reparses in about 9 ms wherever the edit is).
//!
//! Why it is the same judgement: tree-sitter parses left to right (LR, with forks where the
//! grammar is ambiguous), and what follows a boundary between two top-level items depends on
//! what precedes it only through the parser's state there, the same at every such boundary
//! (between two items of the file's repetition), and through the one token of lookahead that
//! ended the item before it. In the result, every item before the window and after it is the
//! old, clean item, parsed from that state and ended by the same next token as before (the
//! window's first and last items are unchanged neighbours); the window itself is parsed clean
//! from that state, and its parse is checked to end the left neighbour where it ended before
//! (so the changed text's first token ends it as the old one did) and to keep the right
//! neighbour whole (so the changed text's last item ends where that neighbour starts). Where
//! the window reaches the start or the end of the file its parse has the file's own context
//! there. So the whole result parses clean, item for item, and its top-level items are the
//! ones told here. Anything else (an error in the window, items that end elsewhere, a window
//! that is not much smaller than the file) is left to the incremental reparse.

use tree_sitter::Tree;

use super::Lang;
use super::parse::{edit_between, parse};

/// The byte range of each top-level node of a text (items and comments), in order.
pub(crate) type Tops = Vec<(usize, usize)>;

/// A window is parsed on its own only when it is at most this share of the file (1/N): past
/// it the incremental reparse, which reuses the items outside the edit, costs about as much.
const MOST_OF_FILE: usize = 4;

/// Whether edits of `lang` are judged locally: where its incremental reparse was measured
/// to re-read the whole file (Rust's doc comments), and whose top level is a plain
/// repetition of items with no scanner state across them.
pub(crate) fn judged_locally(lang: Lang) -> bool {
    lang == Lang::Rust
}

/// The byte ranges of the top-level nodes of `tree`.
pub(crate) fn tops(tree: &Tree) -> Tops {
    let mut cursor = tree.walk();
    let mut out = Vec::new();
    if cursor.goto_first_child() {
        loop {
            let node = cursor.node();
            out.push((node.start_byte(), node.end_byte()));
            if !cursor.goto_next_sibling() {
                break;
            }
        }
    }
    out
}

/// The top-level nodes of `new`, an edit of `old` (clean, with top-level nodes `old_tops`),
/// when `new` is clean as told from its window alone; `None` when it cannot be told so.
pub(crate) fn clean_tops(
    lang: Lang,
    old: &str,
    new: &str,
    old_tops: &[(usize, usize)],
) -> Option<Tops> {
    let w = Window::of(old, new, old_tops)?;
    let text = new.get(w.start..w.new_end)?;
    let tree = parse(lang, text, None).ok()?;
    if tree.root_node().has_error() {
        return None;
    }
    let inner = tops(&tree);
    let shift_left = |(a, b): (usize, usize)| (a - w.start, b - w.start);
    // The neighbours the window was cut beside keep their bounds.
    if w.start > 0 && inner.first() != Some(&shift_left(old_tops[w.first])) {
        return None;
    }
    // A node after the edit, where it is in the new text (it starts past the edit's old end).
    let moved = |(a, b): (usize, usize)| (a + new.len() - old.len(), b + new.len() - old.len());
    if w.old_end < old.len() {
        let right = moved(old_tops[w.last]);
        if inner.last() != Some(&shift_left(right)) {
            return None;
        }
    }
    let mut out = Vec::with_capacity(old_tops.len() + inner.len());
    out.extend_from_slice(&old_tops[..w.first]);
    out.extend(inner.iter().map(|&(a, b)| (a + w.start, b + w.start)));
    if w.old_end < old.len() {
        out.extend(old_tops[w.last + 1..].iter().map(|&t| moved(t)));
    }
    Some(out)
}

/// Where the window of an edit lies: from the start of the item before the first item the
/// edit touches (or the file's start) to the end of the item after the last one (or the
/// file's end), in the old text and the new.
struct Window {
    /// Its first and last top-level node, in the old text's.
    first: usize,
    last: usize,
    /// Its start (the same in both texts) and its end in the old text and the new.
    start: usize,
    old_end: usize,
    new_end: usize,
}

impl Window {
    /// The window of the edit from `old` to `new`, or `None` when it is not much smaller
    /// than the file (or there are no items to cut it by).
    fn of(old: &str, new: &str, tops: &[(usize, usize)]) -> Option<Window> {
        let count = tops.len();
        if count == 0 {
            return None;
        }
        let edit = edit_between(old, new);
        // The first node ending at or after the edit's start, and how many start at or
        // before its end: the nodes touched (touching counts) lie between.
        let after_start = tops.partition_point(|t| t.1 < edit.start_byte);
        let up_to_end = tops.partition_point(|t| t.0 <= edit.old_end_byte);
        let first = after_start.saturating_sub(1);
        let last = up_to_end.min(count - 1);
        let start = if first == 0 { 0 } else { tops[first].0 };
        let old_end = if last == count - 1 {
            old.len()
        } else {
            tops[last].1
        };
        if start > edit.start_byte || old_end < edit.old_end_byte {
            return None;
        }
        if (start == 0 && old_end == old.len())
            || (old_end - start).saturating_mul(MOST_OF_FILE) > old.len()
        {
            return None;
        }
        Some(Window {
            first,
            last,
            start,
            old_end,
            new_end: old_end - edit.old_end_byte + edit.new_end_byte,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::parse::errors;

    /// Rust sources with many top-level items, to edit.
    const SOURCES: [&str; 3] = [
        include_str!("parse.rs"),
        include_str!("memory.rs"),
        include_str!("check.rs"),
    ];

    /// A small deterministic generator (no dependency, the same edits every run).
    struct Lcg(u64);

    impl Lcg {
        fn below(&mut self, n: usize) -> usize {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((self.0 >> 33) as usize) % n.max(1)
        }
    }

    /// One random edit of `text`, on whole lines: a line dropped, doubled, moved, or given a
    /// stray bracket, a new item, or a character changed.
    fn edit(text: &str, rng: &mut Lcg) -> String {
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        let at = rng.below(lines.len());
        match rng.below(7) {
            0 => {
                lines.remove(at);
            }
            1 => lines.insert(at, lines[at].clone()),
            2 => {
                let line = lines.remove(at);
                let to = (at + rng.below(5)).min(lines.len());
                lines.insert(to, line);
            }
            3 => lines.insert(
                at,
                ["}", "{", ")", "/*", "\"", "'"][rng.below(6)].to_string(),
            ),
            4 => lines.insert(at, "fn added(x: u8) -> u8 {\n    x + 1\n}\n".to_string()),
            5 => lines.insert(at, "/// A doc line.".to_string()),
            _ => {
                let line = &mut lines[at];
                if let Some((i, _)) = line.char_indices().nth(rng.below(line.chars().count())) {
                    line.replace_range(i..=i, ["x", ";", ",", "{", " "][rng.below(5)]);
                }
            }
        }
        lines.join("\n") + "\n"
    }

    /// The judgement from the window is the whole parse's: where it says clean, the result
    /// parses without an error and with the top-level nodes it told, over many random edits
    /// (and it does tell for a good share of them — over a quarter — or this would prove nothing).
    #[test]
    fn a_window_judged_clean_is_a_clean_result_with_the_same_items() {
        let mut rng = Lcg(38);
        let (mut told, mut total) = (0, 0);
        for source in SOURCES {
            let tree = parse(Lang::Rust, source, None).unwrap();
            assert!(!tree.root_node().has_error());
            let old_tops = tops(&tree);
            for _ in 0..120 {
                let new = edit(source, &mut rng);
                total += 1;
                let Some(found) = clean_tops(Lang::Rust, source, &new, &old_tops) else {
                    continue;
                };
                told += 1;
                let full = parse(Lang::Rust, &new, None).unwrap();
                assert_eq!(errors(&full, &new), Vec::new(), "judged clean:\n{new}");
                assert_eq!(found, tops(&full), "other items:\n{new}");
            }
        }
        // (The sources are this crate's own files: an edit of them moves the share a little.)
        assert!(told * 4 > total, "told {told} of {total}");
    }

    /// What the window cannot tell is left to the whole parse: an edit that breaks the file,
    /// one that makes its neighbour end elsewhere, one over most of the file.
    #[test]
    fn what_the_window_cannot_tell_is_not_told() {
        let items: String = (0..40)
            .map(|i| format!("/// Item {i}.\nfn f{i}() -> u32 {{\n    {i}\n}}\n\n"))
            .collect();
        let tree = parse(Lang::Rust, &items, None).unwrap();
        let old_tops = tops(&tree);
        let judge = |new: &str| clean_tops(Lang::Rust, &items, new, &old_tops);
        // Clean and local: told.
        let fine = items.replace("    20\n", "    20 + 1\n");
        assert!(judge(&fine).is_some());
        // A dropped brace: an error in the window.
        assert!(judge(&items.replace("    20\n}", "    20\n")).is_none());
        // An opened comment that swallows the neighbour after.
        assert!(judge(&items.replace("fn f20()", "/* fn f20()")).is_none());
        // Most of the file: the whole reparse is as cheap.
        let wide = items
            .replace("    2\n", "    2 + 1\n")
            .replace("    37\n", "    37 + 1\n");
        assert!(judge(&wide).is_none());
        // A window whose text joins its neighbour before into one item (a block, then a
        // method call on it): clean, but that neighbour no longer ends where it did.
        let joined = format!("fn a() {{}}\n\n{{}}\n\nfn b() {{}}\n\n{items}");
        let tree = parse(Lang::Rust, &joined, None).unwrap();
        assert!(!tree.root_node().has_error());
        let new = joined.replacen("fn b() {}", ".await;", 1);
        assert!(clean_tops(Lang::Rust, &joined, &new, &tops(&tree)).is_none());
        // Unchanged, and a file with no items: nothing to cut.
        assert!(clean_tops(Lang::Rust, "", "fn a() {}\n", &[]).is_none());
    }
}
