//! Terminal columns (docs/DESIGN.md §6): how many a character takes — a tab up to the next
//! stop, a wide (East Asian) character two, a control character or a combining mark none —
//! and text cut to a number of columns without splitting a wide character. The view's one
//! width-aware cut: whatever it fits to a width goes through [`fit`] or [`clip`].

use ratatui::text::Span;
use unicode_width::UnicodeWidthChar;

/// Tab stops every this many columns.
pub(crate) const TAB_STOP: usize = 4;

/// The columns `c` takes when it starts at column `col`.
pub(crate) fn char_cols(c: char, col: usize) -> usize {
    match c {
        '\t' => TAB_STOP - col % TAB_STOP,
        c if c.is_control() => 0,
        c => c.width().unwrap_or(0),
    }
}

/// The columns `s` takes.
pub(crate) fn cols(s: &str) -> usize {
    s.chars().fold(0, |col, c| col + char_cols(c, col))
}

/// The longest start of `s` that fits in `width` columns (a wide character that would cross
/// the edge is left out whole), and whether anything was left out.
pub(crate) fn fit(s: &str, width: usize) -> (&str, bool) {
    let mut col = 0;
    for (k, c) in s.char_indices() {
        let n = char_cols(c, col);
        if col + n > width {
            return (&s[..k], true);
        }
        col += n;
    }
    (s, false)
}

/// `spans` cut to `width` columns (see [`fit`]), and the columns they then take.
pub(crate) fn clip(spans: Vec<Span<'static>>, width: usize) -> (Vec<Span<'static>>, usize) {
    let mut out = Vec::with_capacity(spans.len());
    let mut used = 0;
    for s in spans {
        let (kept, cut) = fit(&s.content, width - used);
        if cut {
            used += cols(kept);
            if !kept.is_empty() {
                out.push(Span::styled(kept.to_string(), s.style));
            }
            break;
        }
        used += cols(&s.content);
        out.push(s);
    }
    (out, used)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wide_characters_take_two_columns_and_are_never_split() {
        assert_eq!(cols("ab"), 2);
        assert_eq!(cols("名前"), 4);
        assert_eq!(cols("e\u{301}"), 1, "a combining mark takes none");
        assert_eq!(cols("\tx"), TAB_STOP + 1);
        assert_eq!(fit("名前", 3), ("名", true));
        assert_eq!(fit("名前", 4), ("名前", false));
        assert_eq!(fit("ab名", 3), ("ab", true));
        assert_eq!(fit("", 0), ("", false));
    }

    #[test]
    fn clip_cuts_across_spans_at_the_width() {
        let spans = vec![Span::raw("ab"), Span::raw("名前"), Span::raw("c")];
        let (out, used) = clip(spans.clone(), 5);
        let text: String = out.iter().map(|s| s.content.as_ref()).collect();
        assert_eq!((text.as_str(), used), ("ab名", 4));
        let (out, used) = clip(spans, 9);
        assert_eq!((out.len(), used), (3, 7));
    }
}
