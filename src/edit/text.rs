//! The text model (docs/DESIGN.md §5.4): decode a file's bytes into LF-normalised text that the engines
//! work on, remember everything the normalisation hid (line endings, a UTF-8 BOM, the encoding,
//! the indentation style), and encode an engine's result back so that every byte the edit did
//! not touch is kept.

use crate::error::{Error, ErrorCode, Result};

/// How a file ends its lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LineEnding {
    /// `\n` only (also files without any line break).
    Lf,
    /// `\r\n` only.
    Crlf,
    /// Both; each line keeps its own.
    Mixed,
}

/// The file's indentation unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Indent {
    /// One tab per level.
    Tabs,
    /// This many spaces per level.
    Spaces(usize),
}

/// The byte encoding the file is kept in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Encoding {
    /// UTF-8 (with or without a BOM).
    Utf8,
    /// A legacy single-byte file read as Latin-1: every byte maps to one char and back.
    Latin1,
}

/// A decoded text file: the normalised content plus what is needed to write it back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Text {
    content: String,
    bom: bool,
    encoding: Encoding,
    ending: LineEnding,
    /// For `Mixed` files: whether line `i` ended with `\r\n`.
    crlf_lines: Vec<bool>,
    /// Detected on first use (most edits never re-indent).
    indent: std::sync::OnceLock<Indent>,
}

/// Largest share of bytes >= 0x80 that a file read as Latin-1 may have: beyond it the file is
/// more likely in a multi-byte encoding that patchgate cannot edit safely.
const LATIN1_MAX_HIGH_SHARE: f64 = 0.25;

impl Text {
    /// Decode a file's bytes. Refuses binary files (`BINARY_FILE`) and text that cannot be kept
    /// byte for byte (`ENCODING_ERROR`).
    pub fn decode(bytes: &[u8]) -> Result<Text> {
        if bytes.starts_with(&[0xFF, 0xFE]) || bytes.starts_with(&[0xFE, 0xFF]) {
            return Err(Error::new(
                ErrorCode::EncodingError,
                "the file is UTF-16 (it starts with a UTF-16 byte-order mark); only UTF-8 and \
                 Latin-1 files can be edited",
            ));
        }
        let binary = |pos: usize| {
            Error::new(
                ErrorCode::BinaryFile,
                format!(
                    "the file is binary (NUL byte at offset {pos}); binary files cannot be edited"
                ),
            )
        };
        let (bom, body) = match bytes.strip_prefix(&[0xEF, 0xBB, 0xBF]) {
            Some(rest) => (true, rest),
            None => (false, bytes),
        };
        let (raw, encoding) = match std::str::from_utf8(body) {
            Ok(s) => {
                // `str::find` on a char is a fast memchr.
                if let Some(pos) = s.find('\0') {
                    return Err(binary(pos + 3 * usize::from(bom)));
                }
                (s.to_string(), Encoding::Utf8)
            }
            Err(e) => {
                if let Some(pos) = bytes.iter().position(|&b| b == 0) {
                    return Err(binary(pos));
                }
                (latin1_decode(body, e.valid_up_to(), bom)?, Encoding::Latin1)
            }
        };
        Ok(Text::from_raw(raw, bom, encoding))
    }

    /// A text made from a string (a new file, or a test): endings and indentation are detected.
    pub fn from_content(s: &str) -> Text {
        let (bom, body) = match s.strip_prefix('\u{feff}') {
            Some(rest) => (true, rest),
            None => (false, s),
        };
        Text::from_raw(body.to_string(), bom, Encoding::Utf8)
    }

    fn from_raw(raw: String, bom: bool, encoding: Encoding) -> Text {
        let (mut crlf, mut lf) = (0usize, 0usize);
        let bytes = raw.as_bytes();
        let mut prev_cr = false;
        // Most files hold no CR at all: then nothing needs counting or rewriting.
        let scan: &[u8] = if raw.contains('\r') { bytes } else { &[] };
        for &b in scan {
            if b == b'\n' {
                if prev_cr {
                    crlf += 1;
                } else {
                    lf += 1;
                }
            }
            prev_cr = b == b'\r';
        }
        let ending = match (crlf, lf) {
            (0, _) => LineEnding::Lf,
            (_, 0) => LineEnding::Crlf,
            _ => LineEnding::Mixed,
        };
        let (content, crlf_lines) = if crlf == 0 {
            (raw, Vec::new())
        } else {
            let mut flags = Vec::new();
            let mut out = String::with_capacity(raw.len());
            for line in raw.split_inclusive('\n') {
                if let Some(body) = line.strip_suffix("\r\n") {
                    out.push_str(body);
                    out.push('\n');
                    flags.push(true);
                } else {
                    out.push_str(line);
                    flags.push(false);
                }
            }
            if ending == LineEnding::Mixed {
                (out, flags)
            } else {
                (out, Vec::new())
            }
        };
        let indent = std::sync::OnceLock::new();
        Text {
            content,
            bom,
            encoding,
            ending,
            crlf_lines,
            indent,
        }
    }

    /// The LF-normalised content, without a BOM.
    pub fn content(&self) -> &str {
        &self.content
    }

    /// The file's indentation unit (spaces of width 4 when it has no indented lines).
    pub(crate) fn indent(&self) -> Indent {
        *self.indent.get_or_init(|| detect_indent(&self.content))
    }

    /// Encode `new_content` (LF-normalised, as an engine returns it) the way this file is
    /// stored: same BOM, same encoding, same line endings; in a mixed file unchanged lines keep
    /// their own ending and new lines take the ending of the line before them.
    pub fn encode(&self, new_content: &str) -> Result<Vec<u8>> {
        let body = match self.ending {
            LineEnding::Lf => std::borrow::Cow::Borrowed(new_content),
            LineEnding::Crlf => std::borrow::Cow::Owned(new_content.replace('\n', "\r\n")),
            LineEnding::Mixed => std::borrow::Cow::Owned(self.encode_mixed(new_content)),
        };
        let mut out = Vec::with_capacity(body.len() + 3);
        if self.bom {
            out.extend_from_slice(&[0xEF, 0xBB, 0xBF]);
        }
        match self.encoding {
            Encoding::Utf8 => out.extend_from_slice(body.as_bytes()),
            Encoding::Latin1 => latin1_encode(&body, &mut out)?,
        }
        Ok(out)
    }

    fn encode_mixed(&self, new_content: &str) -> String {
        let old: Vec<&str> = self.content.split_inclusive('\n').collect();
        let new: Vec<&str> = new_content.split_inclusive('\n').collect();
        let ops = similar::capture_diff_slices(similar::Algorithm::Myers, &old, &new);
        let majority_crlf =
            self.crlf_lines.iter().filter(|&&c| c).count() * 2 >= self.crlf_lines.len();
        let mut flags = vec![majority_crlf; new.len()];
        for op in ops {
            let (tag, old_range, new_range) = op.as_tag_tuple();
            if tag == similar::DiffTag::Equal {
                for (o, n) in old_range.zip(new_range) {
                    flags[n] = self.crlf_lines[o];
                }
            } else if !new_range.is_empty() {
                // New lines take the ending of the old line just before the change (or the one
                // they replace when the change is at the top).
                let near = old_range
                    .start
                    .checked_sub(1)
                    .or(if old_range.is_empty() {
                        None
                    } else {
                        Some(old_range.start)
                    })
                    .and_then(|i| self.crlf_lines.get(i).copied())
                    .unwrap_or(majority_crlf);
                for n in new_range {
                    flags[n] = near;
                }
            }
        }
        let mut out = String::with_capacity(new_content.len() + new.len());
        for (line, crlf) in new.iter().zip(flags) {
            match line.strip_suffix('\n') {
                Some(body) if crlf => {
                    out.push_str(body);
                    out.push_str("\r\n");
                }
                _ => out.push_str(line),
            }
        }
        out
    }
}

fn latin1_decode(body: &[u8], valid_up_to: usize, bom: bool) -> Result<String> {
    let refuse = |why: String| {
        Error::new(
            ErrorCode::EncodingError,
            format!(
                "the file is not valid UTF-8 (first invalid byte at offset {valid_up_to}) {why}"
            ),
        )
    };
    if bom {
        return Err(refuse(
            "although it starts with a UTF-8 byte-order mark".into(),
        ));
    }
    if let Some(pos) = body
        .iter()
        .position(|&b| b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r' | 0x0C | 0x1B))
    {
        return Err(refuse(format!(
            "and holds a control byte 0x{:02x} at offset {pos}; it does not look like text",
            body[pos]
        )));
    }
    let high = body.iter().filter(|&&b| b >= 0x80).count();
    if high as f64 > body.len() as f64 * LATIN1_MAX_HIGH_SHARE {
        return Err(refuse(
            "and too many of its bytes are non-ASCII for a single-byte encoding; convert it to \
             UTF-8 first"
                .into(),
        ));
    }
    Ok(body.iter().map(|&b| b as char).collect())
}

fn latin1_encode(s: &str, out: &mut Vec<u8>) -> Result<()> {
    for (line_no, line) in s.split('\n').enumerate() {
        if line_no > 0 {
            out.push(b'\n');
        }
        for c in line.chars() {
            match u8::try_from(u32::from(c)) {
                Ok(b) => out.push(b),
                Err(_) => {
                    return Err(Error::new(
                        ErrorCode::EncodingError,
                        format!(
                            "line {} of the result holds {c:?}, which the file's single-byte \
                             (Latin-1) encoding cannot store; use only Latin-1 characters in this file",
                            line_no + 1
                        ),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// How many lines indentation detection looks at.
const INDENT_SAMPLE_LINES: usize = 2000;

/// Tabs when more indented lines start with a tab than with a space; otherwise spaces with the
/// most common step between consecutive indentation levels.
pub(crate) fn detect_indent(content: &str) -> Indent {
    let (mut tabs, mut spaces) = (0usize, 0usize);
    let mut steps = [0usize; 9];
    let mut prev = 0usize;
    // The first few thousand lines settle the style; big files need not be read through.
    for line in lf_lines(content).take(INDENT_SAMPLE_LINES) {
        let bytes = line.as_bytes();
        let width = bytes.iter().take_while(|&&b| b == b' ').count();
        match bytes.get(width) {
            // blank or whitespace-only lines say nothing, nor does a block comment's ` *` line
            None | Some(b'\r') => continue,
            Some(b'*') if width > 0 => continue,
            Some(b'\t') if width == 0 => {
                tabs += 1;
                prev = 0;
            }
            Some(b'\t') => spaces += 1,
            Some(_) if width == 0 => prev = 0,
            Some(_) => {
                spaces += 1;
                let step = width.abs_diff(prev);
                if (1..=8).contains(&step) {
                    steps[step] += 1;
                }
                prev = width;
            }
        }
    }
    if tabs > spaces {
        return Indent::Tabs;
    }
    // Steps of one space are mostly alignment (doc comments), not indentation.
    let best = (2..=8).max_by_key(|&w| (steps[w], w == 4)).unwrap_or(4);
    if steps[best] == 0 {
        Indent::Spaces(4)
    } else {
        Indent::Spaces(best)
    }
}

/// Split LF-normalised text into lines without terminators, and whether the last line was
/// terminated. An empty text has no lines and counts as terminated.
pub(crate) fn split_lines(content: &str) -> (Vec<&str>, bool) {
    if content.is_empty() {
        return (Vec::new(), true);
    }
    let final_newline = content.ends_with('\n');
    let body = if final_newline {
        &content[..content.len() - 1]
    } else {
        content
    };
    let mut lines = Vec::with_capacity(body.len() / 32 + 1);
    lines.extend(lf_lines(body));
    (lines, final_newline)
}

/// The pieces of `text` between LF bytes (as `str::split('\n')`, but cheaper on short lines:
/// a word-at-a-time scan instead of a vectorised search set up afresh for every line).
fn lf_lines(text: &str) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    let mut start = 0usize;
    let mut done = false;
    std::iter::from_fn(move || {
        if done {
            return None;
        }
        match find_lf(bytes, start) {
            Some(k) => {
                let line = &text[start..k];
                start = k + 1;
                Some(line)
            }
            None => {
                done = true;
                Some(&text[start..])
            }
        }
    })
}

/// The index of the first LF at or after `from`, eight bytes at a time.
#[inline]
fn find_lf(bytes: &[u8], from: usize) -> Option<usize> {
    const LF: u64 = 0x0a0a_0a0a_0a0a_0a0a;
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let mut i = from;
    while i + 8 <= bytes.len() {
        let mut word = [0u8; 8];
        word.copy_from_slice(&bytes[i..i + 8]);
        let v = u64::from_le_bytes(word) ^ LF;
        // The lowest flagged byte is exact (only bytes above a zero byte can be flagged
        // falsely).
        let zero = v.wrapping_sub(LO) & !v & HI;
        if zero != 0 {
            return Some(i + (zero.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    bytes[i..].iter().position(|&b| b == b'\n').map(|k| i + k)
}

/// The inverse of [`split_lines`].
pub(crate) fn join_lines<S: AsRef<str>>(lines: &[S], final_newline: bool) -> String {
    let len: usize = lines.iter().map(|l| l.as_ref().len() + 1).sum();
    let mut out = String::with_capacity(len);
    for (i, line) in lines.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(line.as_ref());
    }
    if final_newline && !lines.is_empty() {
        out.push('\n');
    }
    out
}

/// Normalise an edit's own line endings (`\r\n` → `\n`), as agents on Windows send them.
pub(crate) fn normalize_newlines(s: &str) -> std::borrow::Cow<'_, str> {
    if s.contains('\r') {
        std::borrow::Cow::Owned(s.replace("\r\n", "\n"))
    } else {
        std::borrow::Cow::Borrowed(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_splitting_agrees_with_str_split_for_every_line_length() {
        // Lines of 0..=20 bytes (around the 8-byte word boundary), some with multi-byte
        // characters and bytes just below and above LF.
        let pieces = [
            "",
            "a",
            "\t\x0b\x0c",
            "ü€",
            "0123456",
            "01234567",
            "012345678",
        ];
        let mut text = String::new();
        let expected = |s: &str| -> (Vec<String>, bool) {
            match s.strip_suffix('\n') {
                Some(body) => (body.split('\n').map(String::from).collect(), true),
                None => (s.split('\n').map(String::from).collect(), false),
            }
        };
        for n in 0..60 {
            text.push_str(pieces[n % pieces.len()]);
            text.push_str(&"x".repeat(n % 21));
            for s in [&text[..], text.strip_suffix('\n').unwrap_or(&text)] {
                if s.is_empty() {
                    continue; // an empty file has no lines (tested elsewhere)
                }
                let (lines, final_newline) = split_lines(s);
                let lines: Vec<String> = lines.into_iter().map(String::from).collect();
                assert_eq!((lines, final_newline), expected(s), "{s:?}");
            }
            text.push('\n');
        }
    }

    #[test]
    fn lf_file_round_trips() {
        let t = Text::decode(b"a\nb\n").unwrap();
        assert_eq!(t.ending, LineEnding::Lf);
        assert_eq!(t.encode(t.content()).unwrap(), b"a\nb\n");
    }

    #[test]
    fn crlf_file_is_normalised_and_written_back_with_crlf() {
        let t = Text::decode(b"a\r\nb\r\n").unwrap();
        assert_eq!(t.content(), "a\nb\n");
        assert_eq!(t.ending, LineEnding::Crlf);
        assert_eq!(t.encode("a\nx\nb\n").unwrap(), b"a\r\nx\r\nb\r\n");
    }

    #[test]
    fn mixed_endings_keep_each_unchanged_line_ending() {
        let t = Text::decode(b"one\r\ntwo\nthree\r\nfour\n").unwrap();
        assert_eq!(t.ending, LineEnding::Mixed);
        let out = t.encode("one\ntwo\nTHREE\nnew\nfour\n").unwrap();
        assert_eq!(out, b"one\r\ntwo\nTHREE\nnew\nfour\n".to_vec());
        let out = t.encode("zero\none\ntwo\nthree\nfour\n").unwrap();
        assert_eq!(out, b"zero\r\none\r\ntwo\nthree\r\nfour\n".to_vec());
    }

    #[test]
    fn bom_is_kept() {
        let t = Text::decode(b"\xEF\xBB\xBFx = 1\n").unwrap();
        assert!(t.bom);
        assert_eq!(t.content(), "x = 1\n");
        assert_eq!(t.encode("x = 2\n").unwrap(), b"\xEF\xBB\xBFx = 2\n");
    }

    #[test]
    fn nul_byte_is_binary() {
        let e = Text::decode(b"abc\0def").unwrap_err();
        assert_eq!(e.code, ErrorCode::BinaryFile);
    }

    #[test]
    fn utf16_is_an_encoding_error() {
        let e = Text::decode(b"\xFF\xFEa\0b\0").unwrap_err();
        assert_eq!(e.code, ErrorCode::EncodingError);
    }

    #[test]
    fn latin1_file_round_trips_byte_for_byte() {
        let bytes = b"caf\xe9 = 1\nna\xefve = 2\n";
        let t = Text::decode(bytes).unwrap();
        assert_eq!(t.encoding, Encoding::Latin1);
        assert_eq!(t.content(), "café = 1\nnaïve = 2\n");
        assert_eq!(t.encode(t.content()).unwrap(), bytes.to_vec());
        assert_eq!(t.encode("café = 3\n").unwrap(), b"caf\xe9 = 3\n".to_vec());
        let e = t.encode("caf\u{20ac}\n").unwrap_err();
        assert_eq!(e.code, ErrorCode::EncodingError);
    }

    #[test]
    fn mostly_high_bytes_are_an_encoding_error() {
        let e = Text::decode(b"\x82\xa0\x82\xa2\x82\xa4\n").unwrap_err();
        assert_eq!(e.code, ErrorCode::EncodingError);
    }

    #[test]
    fn control_bytes_in_invalid_utf8_are_an_encoding_error() {
        let e = Text::decode(b"ab\x01\xff\n").unwrap_err();
        assert_eq!(e.code, ErrorCode::EncodingError);
    }

    #[test]
    fn indentation_style_is_detected() {
        assert_eq!(Text::from_content("a\n\tb\n\t\tc\n").indent(), Indent::Tabs);
        assert_eq!(
            Text::from_content("a\n  b\n    c\n  d\n").indent(),
            Indent::Spaces(2)
        );
        assert_eq!(
            Text::from_content("a\n    b\n        c\n").indent(),
            Indent::Spaces(4)
        );
        assert_eq!(Text::from_content("a\nb\n").indent(), Indent::Spaces(4));
    }

    /// A C file indented with tabs whose block comments outnumber its code lines: the
    /// comments' ` *` lines are no indentation, and new code is written with tabs.
    #[test]
    fn block_comment_lines_do_not_make_a_tab_file_spaces() {
        let comment = "/*\n * One.\n * Two.\n * Three.\n */\n";
        let file = format!("{comment}#define ERRNOS \\\n\tEPIPE: \\\n\tcase ETIMEDOUT\n{comment}");
        assert_eq!(Text::from_content(&file).indent(), Indent::Tabs);
    }

    #[test]
    fn split_and_join_are_inverse() {
        for s in ["", "a", "a\n", "a\nb", "\n", "\n\n", "a\n\nb\n"] {
            let (lines, nl) = split_lines(s);
            assert_eq!(join_lines(&lines, nl), s, "{s:?}");
        }
    }
}
