//! Inert output: text from agents, patches and journals (notes, paths, client names) shown
//! on a terminal with its control characters written out (`\u{1b}`), so no escape sequence,
//! carriage return or bidirectional override in it can act on the terminal or hide what it
//! says.

use std::borrow::Cow;

/// Whether `c` must not reach a terminal as itself: C0 and C1 controls and DEL, and the
/// invisible format characters that reorder or hide text (bidi controls, zero-width ones).
fn acts(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{200b}'..='\u{200f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2060}'..='\u{2069}'
            | '\u{feff}')
}

fn escape(s: &str, keep: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !s.chars().any(|c| acts(c) && !keep(c)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if acts(c) && !keep(c) {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `s` for one line of a terminal: every control character written out, line breaks too.
pub fn inert_line(s: &str) -> Cow<'_, str> {
    escape(s, |_| false)
}

/// `s` for a terminal, keeping its line breaks and tabs (a multi-line note).
pub fn inert(s: &str) -> Cow<'_, str> {
    escape(s, |c| c == '\n' || c == '\t')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_are_written_out() {
        assert_eq!(
            inert_line("ok\u{1b}]0;pwned\u{7}\u{1b}[2J\r"),
            "ok\\u{1b}]0;pwned\\u{7}\\u{1b}[2J\\u{d}"
        );
        assert_eq!(inert_line("a\nb"), "a\\u{a}b");
        assert_eq!(inert("a\nb\tc\u{9b}31m"), "a\nb\tc\\u{9b}31m");
        // A right-to-left override would show `txt.exe` as something else.
        assert_eq!(inert_line("a\u{202e}txt.exe"), "a\\u{202e}txt.exe");
    }

    #[test]
    fn plain_text_is_borrowed_unchanged() {
        assert!(matches!(
            inert_line("src/main.rs — ünïcode"),
            Cow::Borrowed(_)
        ));
    }
}
