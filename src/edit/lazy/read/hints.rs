//! The agent's `instruction`, read for deterministic hints (docs/DESIGN.md §5.1, step 3): where new
//! code goes ("after X", "before X", "at the top", "at the end", "after the imports",
//! "in function X", "in impl Display for Size"), which definition is renamed ("rename A to
//! B") and which is deleted ("remove the X function"). A hint only counts when it names one
//! place of the file; it settles placements the snippet leaves open and never overrides the
//! snippet's own anchors. A refusal's suggestion (`in NAME`) is a name this reader takes.

use std::ops::Range;

use crate::edit::lazy::costs::WEIGHTS;
use crate::edit::lazy::impls::{self, Block};
use crate::edit::lazy::index::FileIndex;
use crate::edit::lazy::rules::{Rule, RuleSet};
use crate::edit::lazy::units::{FileDefs, file_extent, header_name};

/// Where the instruction says new code goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Place {
    /// Right after the unit that ends before this file line.
    After(usize),
    /// Right before the unit that starts at this file line.
    Before(usize),
    /// Inside one of these file line ranges: a named definition, or a type's definition and
    /// its `impl` blocks.
    Within(Vec<(usize, usize)>),
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

impl Instruction {
    /// What the instruction says that `rules` lets the merge read: a placement
    /// ([`Rule::InstructionPlace`]), renames and removals.
    pub(crate) fn under(self, rules: RuleSet) -> Instruction {
        Instruction {
            place: self.place.filter(|_| rules.on(Rule::InstructionPlace)),
            renames: if rules.on(Rule::InstructionRenames) {
                self.renames
            } else {
                Vec::new()
            },
            removes: if rules.on(Rule::InstructionRemoves) {
                self.removes
            } else {
                Vec::new()
            },
        }
    }
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
    let blocks = impls::blocks(file);
    let named = Named {
        file,
        defs,
        blocks: &blocks,
    };
    // A leading space lets " in NAME" and the like match at the instruction's start.
    out.place = place(&format!(" {instruction}"), &format!(" {lower}"), &named);
    out
}

/// What an instruction may name in the file: its definitions and its `impl` blocks.
struct Named<'n, 'f> {
    file: &'n FileIndex<'f>,
    defs: &'n FileDefs<'f>,
    blocks: &'n [Block],
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
        // The name among the words before `to`: not filler or a kind word (`the Quoted
        // wrapper struct`), a name-like word before a plain one, else the last word.
        let named: Vec<&String> = rest[..to]
            .iter()
            .filter(|w| {
                let l = w.to_ascii_lowercase();
                !FILLER.contains(&l.as_str()) && !KIND_WORDS.contains(&l.as_str())
            })
            .collect();
        let name_like = |w: &&&String| {
            is_identifier_like(w) || w.chars().next().is_some_and(char::is_uppercase)
        };
        let from = named
            .iter()
            .rev()
            .find(name_like)
            .or(named.last())
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

fn place(instruction: &str, lower: &str, named: &Named<'_, '_>) -> Option<Place> {
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
            && let Some((a, b)) = named_unit(instruction, at + marker.len(), named)
        {
            return Some(Place::EndOf(a, b));
        }
    }
    for (verb, after) in [(" after ", true), (" before ", false)] {
        let Some(at) = lower.find(verb) else {
            continue;
        };
        if let Some((a, b)) = named_unit(instruction, at + verb.len(), named) {
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
        let rest = &instruction[at + marker.len()..];
        if let Some(blocks) = impls::named(named.blocks, rest) {
            return Some(Place::Within(blocks));
        }
        for w in words(rest).iter().take(WEIGHTS.instruction_words) {
            let name = last_part(w.trim_end_matches("()"));
            // A type is its definition and its `impl` blocks (whose header lines read as
            // definitions of its name by hand).
            let mut ranges = impls::of(named.blocks, name);
            let headers = named.defs.headers(name);
            let mut defined = headers
                .iter()
                .filter(|&&h| !named.blocks.iter().any(|b| b.lines.0 == h));
            if let (Some(&h), None) = (defined.next(), defined.next()) {
                ranges.insert(0, file_extent(named.file, h));
            }
            if !ranges.is_empty() {
                return Some(Place::Within(ranges));
            }
        }
    }
    None
}

fn last_part(path: &str) -> &str {
    path.rsplit(['.', ':', '#']).next().unwrap_or(path)
}

/// The unit the words after `verb` name: an `impl` block the file has once, a quoted phrase
/// that one file line holds, a definition the file has once, or a token (`/restricted`)
/// that one header-like line holds.
fn named_unit(instruction: &str, from: usize, named: &Named<'_, '_>) -> Option<(usize, usize)> {
    let (file, defs) = (named.file, named.defs);
    if let Some([block]) = impls::named(named.blocks, &instruction[from..]).as_deref() {
        return Some(*block);
    }
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

/// A name for the instruction (`in NAME`) that singles out `spans[k]` among `spans` (the
/// places a segment fits), as [`read`] takes it: of the `impl` blocks and definitions that
/// hold it, innermost first, the first whose name reads as a place holding it alone.
pub(crate) fn name_for(
    file: &FileIndex<'_>,
    defs: &FileDefs<'_>,
    spans: &[Range<usize>],
    k: usize,
) -> Option<String> {
    let target = spans.get(k)?;
    let holds = |(a, b): (usize, usize)| a <= target.start && target.end <= b;
    let blocks = impls::blocks(file);
    // (lines, name), in the order to try: innermost first, then as listed.
    let mut holders: Vec<((usize, usize), &str)> = Vec::new();
    for b in blocks.iter().filter(|b| holds(b.lines)) {
        holders.extend(b.suggestions().map(|n| (b.lines, n)));
    }
    if let Some(outline) = file.tags() {
        let held = outline.defs.iter().filter(|d| holds(d.extent));
        holders.extend(held.map(|d| (d.extent, d.name.as_str())));
    } else if target.start < file.len() {
        // By hand: the header lines above it, no deeper than its first line.
        let depth = file.indent(target.start);
        for h in (0..=target.start)
            .rev()
            .filter(|&h| file.indent(h) <= depth)
        {
            if let Some(name) = header_name(file.lines[h]) {
                let lines = file_extent(file, h);
                if holds(lines) {
                    holders.push((lines, name));
                }
            }
        }
    }
    holders.sort_by_key(|((a, b), _)| b - a);
    let named = Named {
        file,
        defs,
        blocks: &blocks,
    };
    holders.into_iter().map(|(_, n)| n).find_map(|name| {
        let text = format!(" in {name}");
        let Some(Place::Within(ranges)) = place(&text, &text.to_ascii_lowercase(), &named) else {
            return None;
        };
        let inside = |s: &Range<usize>| ranges.iter().any(|&(a, b)| a <= s.start && s.end <= b);
        (inside(target) && spans.iter().filter(|s| inside(s)).count() == 1)
            .then(|| name.to_string())
    })
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
            Some(Place::Within(vec![(3, 5)]))
        );
    }

    #[test]
    fn renames_and_removals() {
        let i = read_with("I am renaming with_params to with_stream_params", FILE);
        assert_eq!(
            i.renames,
            [("with_params".to_string(), "with_stream_params".to_string())]
        );
        // The name among descriptive words: not the kind word right before `to`.
        let i = read_with(
            "I am renaming the Quoted wrapper struct to QuotedDisplay",
            FILE,
        );
        assert_eq!(
            i.renames,
            [("Quoted".to_string(), "QuotedDisplay".to_string())]
        );
        let i = read_with("rename the parse helper to parse_all", FILE);
        assert_eq!(i.renames, [("parse".to_string(), "parse_all".to_string())]);
        let i = read_with("I'm deleting the deprecated first function", FILE);
        assert_eq!(i.removes, ["first"]);
        let i = read_with("removing the stale TODO on second", FILE);
        assert!(i.removes.is_empty());
    }

    /// Two types, an inherent impl of each with a `describe`, and three trait impls with a
    /// `fmt` each, two of them of `Display` (so that no one word names an impl).
    const SIZE: &str = "use std::fmt;\n\npub struct Size(u64);\n\npub struct Count(u64);\n\nimpl Size {\n    pub fn describe(&self) -> String {\n        format!(\"{} bytes\", self.0)\n    }\n}\n\nimpl Count {\n    pub fn describe(&self) -> String {\n        format!(\"{} items\", self.0)\n    }\n}\n\nimpl fmt::Display for Size {\n    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {\n        write!(f, \"{} bytes\", self.0)\n    }\n}\n\nimpl fmt::Debug for Size {\n    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {\n        write!(f, \"Size({})\", self.0)\n    }\n}\n\nimpl fmt::Display for Count {\n    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {\n        write!(f, \"{} items\", self.0)\n    }\n}\n";

    /// A new `fmt`, shown whole: it fits every impl.
    const FMT: &str = "    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {\n        write!(f, \"{} B\", self.0)\n    }\n";

    /// A new `describe`, shown whole: it fits both inherent impls.
    const DESCRIBE: &str =
        "    pub fn describe(&self) -> String {\n        format!(\"{} B\", self.0)\n    }\n";

    fn merge_in(snippet: &str, instruction: &str) -> crate::edit::Result<String> {
        let hints = crate::edit::Hints {
            path: Some("size.rs"),
            instruction: Some(instruction),
        };
        crate::edit::lazy::merge(SIZE, snippet, &hints).map(|m| m.content)
    }

    /// [`SIZE`] with the `n`th occurrence of `old` (from 0) replaced by `new`.
    fn size_with(old: &str, n: usize, new: &str) -> String {
        let (at, _) = SIZE.match_indices(old).nth(n).unwrap();
        format!("{}{new}{}", &SIZE[..at], &SIZE[at + old.len()..])
    }

    /// The names a refusal suggests (`instruction `in NAME``).
    fn suggested(message: &str) -> Vec<String> {
        message
            .split("instruction `")
            .skip(1)
            .filter_map(|s| s.split('`').next())
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn a_rust_impl_block_is_named_by_its_header_with_the_trait_path_shortened() {
        let display = size_with("write!(f, \"{} bytes\"", 0, "write!(f, \"{} B\"");
        for instruction in [
            "in impl fmt::Display for Size",
            "in impl Display for Size",
            "in Display for Size",
            "change fmt in  impl   Display for Size.",
            "in the `impl fmt::Display for Size` block",
        ] {
            let out = merge_in(FMT, instruction);
            assert_eq!(out.as_deref(), Ok(display.as_str()), "{instruction}");
        }
        let count = size_with("write!(f, \"{} items\"", 0, "write!(f, \"{} B\"");
        let out = merge_in(FMT, "in impl Display for Count");
        assert_eq!(out.as_deref(), Ok(count.as_str()));
    }

    #[test]
    fn a_type_with_two_impls_that_fit_is_refused_naming_each_impl_as_the_reader_takes_it() {
        let every = [
            "in impl Display for Size",
            "in impl Debug for Size",
            "in impl Display for Count",
        ];
        // "in Size" leaves two of them.
        for instruction in ["in Size", "make it shorter"] {
            let err = merge_in(FMT, instruction).unwrap_err();
            assert_eq!(err.code, crate::edit::ErrorCode::NeedsMoreContext);
            let names = suggested(&err.message);
            assert_eq!(names, every, "{}", err.message);
            // Each suggestion, given back, places the snippet in its impl.
            for name in &names {
                let out = merge_in(FMT, name).unwrap();
                let old: Vec<&str> = SIZE.lines().collect();
                let changed = old.iter().zip(out.lines()).position(|(a, b)| *a != b);
                // The changed line is the body of `fn fmt`, under the impl's header.
                let header = old[changed.unwrap() - 2].trim_end_matches(" {");
                let named = name.replace("impl ", "impl fmt::");
                assert_eq!(format!("in {header}"), named);
            }
        }
    }

    #[test]
    fn an_inherent_impl_is_named_impl_type_or_the_type_when_it_alone_holds_the_fn() {
        let lines: Vec<&str> = SIZE.lines().collect();
        let index = FileIndex::new(&lines).with_source(Some("size.rs"), SIZE);
        assert_eq!(
            read("in Size", &index, &FileDefs::new(&index)).place,
            Some(Place::Within(vec![(2, 3), (6, 11), (18, 23), (24, 29)])),
            "the struct, then its impls"
        );
        let size = size_with("format!(\"{} bytes\"", 0, "format!(\"{} B\"");
        for instruction in ["in Size", "in impl Size", "in the Size impl"] {
            let out = merge_in(DESCRIBE, instruction);
            assert_eq!(out.as_deref(), Ok(size.as_str()), "{instruction}");
        }
        let err = merge_in(DESCRIBE, "shorter").unwrap_err();
        assert_eq!(
            suggested(&err.message),
            ["in impl Size", "in impl Count"],
            "{}",
            err.message
        );
    }

    #[test]
    fn a_python_class_is_suggested_by_its_name() {
        let file = "class A:\n    def f(self):\n        return 1\n\n\nclass B:\n    def f(self):\n        return 2\n";
        let snippet = "    def f(self):\n        return 3\n";
        let merge_py = |instruction| {
            let hints = crate::edit::Hints {
                path: Some("ab.py"),
                instruction: Some(instruction),
            };
            crate::edit::lazy::merge(file, snippet, &hints).map(|m| m.content)
        };
        let err = merge_py("fix f").unwrap_err();
        assert_eq!(suggested(&err.message), ["in A", "in B"], "{}", err.message);
        assert_eq!(merge_py("in B"), Ok(file.replace("return 2", "return 3")));
    }
}
