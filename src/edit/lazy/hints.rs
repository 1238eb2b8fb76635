//! The agent's `instruction`, read for deterministic hints (docs/DESIGN.md §5.1, step 3): where new
//! code goes ("after X", "before X", "at the top", "at the end", "after the imports",
//! "in function X"), which definition is renamed ("rename A to B") and which is deleted
//! ("remove the X function"). A hint only counts when it names one place of the file; it
//! settles placements the snippet leaves open and never overrides the snippet's own anchors.

use super::index::FileIndex;
use super::units::{FileDefs, file_extent};

/// Where the instruction says new code goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    /// Right after the unit that ends before this file line.
    After(usize),
    /// Right before the unit that starts at this file line.
    Before(usize),
    /// Inside these file lines (a named definition).
    Within(usize, usize),
    /// At the start of the file.
    Top,
    /// At the end of the file.
    End,
    /// At the end of the body of the definition at these file lines (before its closing line).
    EndOf(usize, usize),
}

/// What an instruction says, resolved against the file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Instruction {
    pub(crate) place: Option<Place>,
    /// `rename A to B`: (A, B).
    pub(crate) renames: Vec<(String, String)>,
    /// Definitions the instruction deletes ("remove the X function").
    pub(crate) removes: Vec<String>,
}

/// Words that describe the kind of thing named next to them.
const KIND_WORDS: &[&str] = &[
    "function",
    "method",
    "helper",
    "class",
    "field",
    "constant",
    "property",
    "variable",
    "struct",
    "type",
    "interface",
    "enum",
    "test",
    "module",
    "macro",
    "def",
    "route",
    "handler",
    "getter",
    "setter",
    "constructor",
];

/// Filler between a verb and what it names.
const FILLER: &[&str] = &[
    "the",
    "a",
    "an",
    "right",
    "directly",
    "immediately",
    "just",
    "existing",
    "current",
    "deprecated",
    "unused",
    "old",
    "private",
    "public",
    "local",
    "static",
    "stale",
];

fn is_identifier_like(w: &str) -> bool {
    let core = w.trim_end_matches("()");
    !core.is_empty()
        && core
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '$' | '.' | ':' | '#'))
        && core
            .chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
        && (core.contains('_')
            || core.contains('.')
            || core.chars().skip(1).any(char::is_uppercase)
            || w.ends_with("()"))
}

/// The words of an instruction with their punctuation trimmed (quotes kept apart).
fn words(instruction: &str) -> Vec<String> {
    instruction
        .split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| {
                matches!(c, ',' | ';' | '(' | ')' | '`' | '\'' | '"' | '.' | ':')
            })
        })
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

/// The text between the first pair of quotes after byte `from`, if any.
fn quoted_after(s: &str, from: usize) -> Option<&str> {
    let rest = &s[from..];
    let open = rest.find(['"', '`', '\''])?;
    let q = rest[open..].chars().next()?;
    let body = &rest[open + 1..];
    let close = body.find(q)?;
    let text = &body[..close];
    (text.len() >= 3).then_some(text)
}

/// Read an instruction against the file.
pub(crate) fn read(instruction: &str, file: &FileIndex<'_>, defs: &FileDefs<'_>) -> Instruction {
    let lower = instruction.to_ascii_lowercase();
    let ws = words(instruction);
    let mut out = Instruction {
        renames: renames(&ws),
        removes: removes(&ws, defs),
        ..Instruction::default()
    };
    // A leading space lets " in NAME" and the like match at the instruction's start.
    out.place = place(&format!(" {instruction}"), &format!(" {lower}"), file, defs);
    out
}

fn renames(ws: &[String]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (k, w) in ws.iter().enumerate() {
        if !w.to_ascii_lowercase().starts_with("renam") {
            continue;
        }
        let rest = &ws[k + 1..];
        let Some(to) = rest.iter().position(|w| w.eq_ignore_ascii_case("to")) else {
            continue;
        };
        let from = rest[..to]
            .iter()
            .rev()
            .find(|w| !FILLER.contains(&w.to_ascii_lowercase().as_str()))
            .map(|w| w.trim_start_matches('$').trim_end_matches("()").to_string());
        let target = rest
            .get(to + 1)
            .map(|w| w.trim_start_matches('$').trim_end_matches("()").to_string());
        if let (Some(a), Some(b)) = (from, target)
            && a != b
            && !a.is_empty()
            && !b.is_empty()
        {
            out.push((a, b));
        }
    }
    out
}

/// "remove/delete (the) [adjectives] NAME function" or "… the NAME helper": a definition the
/// file has once, named next to a kind word.
fn removes(ws: &[String], defs: &FileDefs<'_>) -> Vec<String> {
    let mut out = Vec::new();
    for (k, w) in ws.iter().enumerate() {
        let lw = w.to_ascii_lowercase();
        if !(lw.starts_with("remov") || lw.starts_with("delet") || lw.starts_with("drop")) {
            continue;
        }
        let mut at = k + 1;
        while ws
            .get(at)
            .is_some_and(|w| FILLER.contains(&w.to_ascii_lowercase().as_str()))
        {
            at += 1;
        }
        for name_at in [at, at + 1] {
            let (Some(name), kind) = (ws.get(name_at), ws.get(name_at + 1)) else {
                continue;
            };
            let name = name.trim_end_matches("()");
            let kind_next =
                kind.is_some_and(|k| KIND_WORDS.contains(&k.to_ascii_lowercase().as_str()));
            let kind_before =
                name_at > at && KIND_WORDS.contains(&ws[name_at - 1].to_ascii_lowercase().as_str());
            if (kind_next || kind_before) && defs.headers(name).len() == 1 {
                out.push(name.to_string());
                break;
            }
        }
    }
    out
}

fn place(
    instruction: &str,
    lower: &str,
    file: &FileIndex<'_>,
    defs: &FileDefs<'_>,
) -> Option<Place> {
    if lower.contains("at the top")
        || lower.contains("top of the file")
        || lower.contains("beginning of the file")
        || lower.contains("start of the file")
    {
        return Some(Place::Top);
    }
    if lower.contains("end of the file")
        || lower.contains("end of file")
        || lower.contains("at the very end")
        || lower.contains("bottom of the file")
    {
        return Some(Place::End);
    }
    for marker in ["at the end of ", "to the end of ", "at the bottom of "] {
        if let Some(at) = lower.find(marker)
            && let Some((a, b)) = named_unit(instruction, at + marker.len(), file, defs)
        {
            return Some(Place::EndOf(a, b));
        }
    }
    for (verb, after) in [(" after ", true), (" before ", false)] {
        let Some(at) = lower.find(verb) else {
            continue;
        };
        if let Some((a, b)) = named_unit(instruction, at + verb.len(), file, defs) {
            return Some(if after {
                Place::After(b)
            } else {
                Place::Before(a)
            });
        }
    }
    for marker in [" in ", " inside ", " into ", " to "] {
        let Some(at) = lower.find(marker) else {
            continue;
        };
        let rest = words(&instruction[at + marker.len()..]);
        for w in rest.iter().take(4) {
            let name = w.trim_end_matches("()");
            if let [h] = *defs.headers(last_part(name)) {
                let (a, b) = file_extent(file, h);
                return Some(Place::Within(a, b));
            }
        }
    }
    None
}

fn last_part(path: &str) -> &str {
    path.rsplit(['.', ':', '#']).next().unwrap_or(path)
}

/// The unit the words after `verb` name: a quoted phrase that one file line holds, a
/// definition the file has once, or a token (`/restricted`) that one header-like line holds.
fn named_unit(
    instruction: &str,
    from: usize,
    file: &FileIndex<'_>,
    defs: &FileDefs<'_>,
) -> Option<(usize, usize)> {
    if let Some(q) = quoted_after(instruction, from)
        && let Some(j) = unique_line_with(file, q)
    {
        return Some(file_extent(file, j));
    }
    let rest = words(&instruction[from..]);
    let mut seen = 0;
    for w in &rest {
        let lw = w.to_ascii_lowercase();
        if FILLER.contains(&lw.as_str()) || KIND_WORDS.contains(&lw.as_str()) {
            continue;
        }
        seen += 1;
        if seen > 3 {
            break;
        }
        let name = last_part(w.trim_end_matches("()"));
        if let [h] = *defs.headers(name) {
            return Some(file_extent(file, h));
        }
        if (is_identifier_like(w) || w.starts_with('/'))
            && let Some(j) = unique_line_with(file, w)
        {
            return Some(file_extent(file, j));
        }
    }
    None
}

/// The one file line holding `text` (when exactly one does).
fn unique_line_with(file: &FileIndex<'_>, text: &str) -> Option<usize> {
    let mut found = None;
    for (j, line) in file.lines.iter().enumerate() {
        if line.contains(text) {
            if found.is_some() {
                return None;
            }
            found = Some(j);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_with(instruction: &str, file: &[&str]) -> Instruction {
        let index = FileIndex::new(file);
        let defs = FileDefs::new(&index);
        read(instruction, &index, &defs)
    }

    const FILE: &[&str] = &[
        "def first():",
        "    return 1",
        "",
        "def second():",
        "    return 2",
    ];

    #[test]
    fn after_and_before_name_a_definition() {
        assert_eq!(
            read_with("I am adding a helper directly after first", FILE).place,
            Some(Place::After(2))
        );
        assert_eq!(
            read_with("add third() just before second()", FILE).place,
            Some(Place::Before(3))
        );
        assert_eq!(read_with("add a check after the loop", FILE).place, None);
    }

    #[test]
    fn top_end_and_within() {
        assert_eq!(
            read_with("add it at the top of the file", FILE).place,
            Some(Place::Top)
        );
        assert_eq!(
            read_with("append at the very end", FILE).place,
            Some(Place::End)
        );
        assert_eq!(
            read_with("add a case at the end of second", FILE).place,
            Some(Place::EndOf(3, 5))
        );
        assert_eq!(
            read_with("change the return value in second", FILE).place,
            Some(Place::Within(3, 5))
        );
    }

    #[test]
    fn renames_and_removals() {
        let i = read_with("I am renaming with_params to with_stream_params", FILE);
        assert_eq!(
            i.renames,
            [("with_params".to_string(), "with_stream_params".to_string())]
        );
        let i = read_with("I'm deleting the deprecated first function", FILE);
        assert_eq!(i.removes, ["first"]);
        let i = read_with("removing the stale TODO on second", FILE);
        assert!(i.removes.is_empty());
    }
}
