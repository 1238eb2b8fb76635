//! Text to search terms: identifiers are split at `snake_case` and `camelCase` boundaries,
//! lowercased and stemmed (English Snowball), so `SaveUploadedFile`, `save_uploaded_file` and
//! "saving uploaded files" share terms; an identifier of several parts also yields itself
//! whole, so an exact name in a query outweighs its common parts.

use std::sync::OnceLock;

use rust_stemmers::{Algorithm, Stemmer};

/// English words that carry no meaning for a code search.
const STOPWORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "been", "by", "can", "do", "does", "for", "from",
    "has", "have", "how", "i", "if", "in", "into", "is", "it", "its", "me", "my", "of", "on", "or",
    "so", "that", "the", "their", "them", "then", "there", "these", "this", "those", "to", "was",
    "we", "were", "what", "when", "where", "which", "who", "why", "will", "with", "you", "your",
    "should", "would", "could", "than", "too", "very", "via", "s", "t",
];

fn stemmer() -> &'static Stemmer {
    static STEMMER: OnceLock<Stemmer> = OnceLock::new();
    STEMMER.get_or_init(|| Stemmer::create(Algorithm::English))
}

/// Whether a lowercased word is an English stopword.
pub(crate) fn is_stopword(word: &str) -> bool {
    STOPWORDS.contains(&word)
}

/// The raw identifiers of a text (runs of letters, digits and `_`), with their byte offsets.
pub(crate) fn identifiers(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
}

/// The parts of one identifier: split at `_`, at a lower-to-upper change (`fooBar`), before
/// the last capital of a run of capitals followed by a lowercase letter (`HTTPServer` →
/// `HTTP`, `Server`) and between letters and digits only where a digit run ends (`utf8` stays).
pub(crate) fn split_identifier(id: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    for piece in id.split('_').filter(|p| !p.is_empty()) {
        let chars: Vec<(usize, char)> = piece.char_indices().collect();
        let mut start = 0;
        for k in 1..chars.len() {
            let (at, c) = chars[k];
            let prev = chars[k - 1].1;
            let next = chars.get(k + 1).map(|&(_, n)| n);
            let boundary = (prev.is_lowercase() && c.is_uppercase())
                || (prev.is_uppercase()
                    && c.is_uppercase()
                    && next.is_some_and(char::is_lowercase))
                || (prev.is_ascii_digit() && c.is_alphabetic());
            if boundary {
                parts.push(&piece[start..at]);
                start = at;
            }
        }
        parts.push(&piece[start..]);
    }
    parts
}

/// The stem of one lowercased word.
pub(crate) fn stem(word: &str) -> String {
    stemmer().stem(word).into_owned()
}

/// Whether a part is worth a term: two characters or more, not only digits under three.
fn keeps(part: &str) -> bool {
    let n = part.chars().count();
    n >= 2 && !(n < 3 && part.chars().all(|c| c.is_ascii_digit()))
}

/// The terms of one identifier: its stemmed parts, and the whole identifier lowercased when
/// it has several parts (prefixed with `=` so it never equals a plain word's term).
pub(crate) fn identifier_terms(id: &str, out: &mut Vec<String>) {
    let parts = split_identifier(id);
    for p in &parts {
        let lower = p.to_lowercase();
        if keeps(&lower) {
            out.push(stem(&lower));
        }
    }
    if parts.len() > 1 {
        out.push(whole_term(id));
    }
}

/// The term of an identifier as a whole.
pub(crate) fn whole_term(id: &str) -> String {
    let mut t = String::with_capacity(id.len() + 1);
    t.push('=');
    t.extend(
        id.chars()
            .filter(|c| *c != '_')
            .flat_map(char::to_lowercase),
    );
    t
}

/// The terms of a text, in order.
#[cfg(test)]
pub(crate) fn terms(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for id in identifiers(text) {
        identifier_terms(id, &mut out);
    }
    out
}

/// The terms of a path: its directories, file stem and extension words.
pub(crate) fn path_terms(path: &str) -> Vec<String> {
    let mut out = Vec::new();
    for id in identifiers(path) {
        identifier_terms(id, &mut out);
    }
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_split_at_case_and_underscores() {
        assert_eq!(
            split_identifier("SaveUploadedFile"),
            ["Save", "Uploaded", "File"]
        );
        assert_eq!(split_identifier("HTTPServer"), ["HTTP", "Server"]);
        assert_eq!(
            split_identifier("select_jinja_autoescape"),
            ["select", "jinja", "autoescape"]
        );
        assert_eq!(split_identifier("utf8Decode"), ["utf8", "Decode"]);
        assert_eq!(split_identifier("__init__"), ["init"]);
    }

    #[test]
    fn the_same_words_in_code_and_prose_share_terms() {
        let code = terms("func (c *Context) SaveUploadedFile(file *FileHeader)");
        let prose = terms("saving uploaded files");
        for t in &prose {
            assert!(code.contains(t), "{t} missing from {code:?}");
        }
        assert!(code.contains(&"=saveuploadedfile".to_string()));
        assert!(!prose.contains(&"=saveuploadedfile".to_string()));
        assert_eq!(
            terms("save_uploaded_file").last(),
            terms("SaveUploadedFile").last()
        );
    }

    #[test]
    fn short_numbers_and_single_letters_make_no_term() {
        assert_eq!(terms("a 1 42 303 x"), ["303"]);
    }
}
