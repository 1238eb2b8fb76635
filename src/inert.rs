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

/// The longest client name kept, in bytes (its control characters written out first).
pub const MAX_CLIENT_NAME: usize = 128;

/// A client's self-declared name as the gate keeps it (docs/DESIGN.md §7): trimmed, its
/// control characters written out as [`inert_line`] does, cut at [`MAX_CLIENT_NAME`] bytes on
/// a character's boundary (`…` then marks the cut). `None` when nothing is left. Reads at
/// most the characters it keeps, so a name of any size costs the same.
pub fn client_name(raw: &str) -> Option<String> {
    let raw = raw.trim();
    let mut out = String::with_capacity(raw.len().min(MAX_CLIENT_NAME));
    let mut buf = [0u8; 4];
    for c in raw.chars() {
        let piece: Cow<'_, str> = if acts(c) {
            Cow::Owned(format!("\\u{{{:x}}}", u32::from(c)))
        } else {
            Cow::Borrowed(c.encode_utf8(&mut buf))
        };
        if out.len() + piece.len() > MAX_CLIENT_NAME {
            out.push('…');
            break;
        }
        out.push_str(&piece);
    }
    (!out.is_empty()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_name_is_cut_and_made_inert() {
        assert_eq!(
            client_name("  claude-code 2.1 ").as_deref(),
            Some("claude-code 2.1")
        );
        assert_eq!(client_name(" \t "), None);
        let long = "x".repeat(8 << 20);
        let cut = client_name(&long).unwrap();
        assert_eq!(cut.len(), MAX_CLIENT_NAME + '…'.len_utf8());
        assert!(cut.ends_with('…'));
        assert_eq!(client_name("a\u{1b}[2Jb").as_deref(), Some("a\\u{1b}[2Jb"));
        // A character is never split.
        let wide = "é".repeat(100);
        let cut = client_name(&wide).unwrap();
        assert_eq!(cut.chars().filter(|&c| c == 'é').count(), 64);
    }

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
