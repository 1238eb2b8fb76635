//! Rule `doubled-definition` (check): a merge that leaves one definition twice in one scope —
//! the same header (`static void flush(Scanner *s) {`, `impl Error for ParseError`) under the
//! same parent line — where neither the file nor the snippet has it twice, wrote the snippet's
//! definition beside the file's instead of in its place: a moved function written at its new
//! place and kept at its old one, a block shortened to one line (`impl Error for E {}`) added
//! beside its old body. Legal text to a syntax check, a compile error or a silent shadow to
//! the program; the merge asks. Overloads differ in their parameters, and methods of one name
//! in two classes have two parents, so neither counts; a header that spans several lines
//! (its parameters unclosed) names too little to count.

use std::collections::{BTreeSet, HashMap, HashSet};

use crate::edit::lazy::index::FileIndex;
use crate::edit::lazy::prepare::SLine;
use crate::edit::lazy::units;
use crate::error::{Error, ErrorCode, Result};

/// Refuse `out`, the merge's result, when it holds a definition twice in one scope that the
/// file and the snippet (`lines`) each hold at most once there; `written` are the snippet
/// lines the merge writes as new or changed lines.
pub(crate) fn check<S: AsRef<str>>(
    file: &FileIndex<'_>,
    lines: &[SLine],
    written: &HashSet<usize>,
    out: &[S],
) -> Result<()> {
    let mut shown: HashMap<&str, usize> = HashMap::new();
    let mut wrote: HashSet<&str> = HashSet::new();
    for (i, l) in lines.iter().enumerate().filter(|(_, l)| !l.blank) {
        if let Some(key) = units::definition_key(&l.text) {
            *shown.entry(key).or_default() += 1;
            if written.contains(&i) {
                wrote.insert(key);
            }
        }
    }
    // Only a header the merge writes (new or changed) can stand more often in the result than
    // in the file: a merge that writes none is not read through.
    shown.retain(|key, _| wrote.contains(key));
    if shown.is_empty() {
        return Ok(());
    }
    let before = scoped(file.lines.iter().copied(), &shown);
    let after = scoped(out.iter().map(AsRef::as_ref), &shown);
    let had = |scope: &(String, &str)| before.get(scope).map_or(0, Vec::len);
    let Some((scope, at)) = after
        .iter()
        .find(|(scope, at)| at.len() > shown[scope.1] && at.len() > had(scope))
    else {
        return Ok(());
    };
    let key = scope.1;
    Err(Error::new(
        ErrorCode::NeedsMoreContext,
        format!(
            "this reading would leave `{key}` defined {} times in one scope (result lines {}), \
             where the file has it {} there and the snippet shows it {}: the snippet's definition \
             was written beside the file's, not in its place. If it moves or replaces the old \
             one, show the old one's lines as `-` lines (or say `remove NAME`); else show 1-3 \
             unchanged lines around the intended place",
            at.len(),
            listed(at),
            times(had(scope)),
            times(shown[key]),
        ),
    ))
}

/// Each definition header of `text` whose key the snippet shows, by (its scope — the lines
/// above it that it stands under, each indented less than the one after it, trimmed and
/// joined, empty at the top; the preprocessor branch it stands in; the attributes and
/// decorators right above it or in front of it — and its key), with the 1-based lines it
/// stands at. Alternatives the language keeps apart (`#[cfg(unix)]` and `#[cfg(windows)]`,
/// `@property` and `@size.deleter`, an `#ifdef` and its `#else`) are two scopes.
fn scoped<'a>(
    text: impl Iterator<Item = &'a str>,
    shown: &HashMap<&str, usize>,
) -> HashMap<(String, &'a str), Vec<usize>> {
    let mut out: HashMap<(String, &str), Vec<usize>> = HashMap::new();
    // The lines a later line may stand under: indentation strictly growing.
    let mut open: Vec<(usize, &str)> = Vec::new();
    let mut branches = Branches::default();
    // The attribute lines right above the next line.
    let mut marks: Vec<&str> = Vec::new();
    let lengths: BTreeSet<usize> = shown.keys().map(|k| k.len()).collect();
    for (n, line) in text.enumerate() {
        let t = line.trim();
        if t.is_empty() || branches.read(t) {
            continue;
        }
        let indent = width(line);
        while open.last().is_some_and(|&(w, _)| w >= indent) {
            open.pop();
        }
        let key = may_hold(t, shown, &lengths)
            .then(|| units::definition_key(line))
            .flatten()
            .filter(|k| shown.contains_key(k));
        if let Some(key) = key {
            let path: Vec<&str> = open.iter().map(|&(_, p)| p).collect();
            let inline = stem(t).strip_suffix(key).unwrap_or("");
            let scope = format!(
                "{}\0{:?}\0{}\0{inline}",
                path.join("\n"),
                branches.open,
                marks.join("\n")
            );
            out.entry((scope, key)).or_default().push(n + 1);
        }
        if is_attribute(t) {
            marks.push(t);
        } else {
            marks.clear();
        }
        open.push((indent, t));
    }
    out
}

/// Whether trimmed line `t` may hold one of the `shown` keys, before its header is read (a
/// long file has few): a key is the line's end, its body's opener left off.
fn may_hold(t: &str, shown: &HashMap<&str, usize>, lengths: &BTreeSet<usize>) -> bool {
    let stem = stem(t);
    lengths.iter().any(|&l| {
        l <= stem.len()
            && stem.is_char_boundary(stem.len() - l)
            && shown.contains_key(&stem[stem.len() - l..])
    })
}

/// A trimmed line without its body's opener (`{`, `{}`, `:`): a definition's key ends it.
fn stem(t: &str) -> &str {
    t.trim_end_matches(|c: char| matches!(c, '{' | '}' | ':') || c.is_whitespace())
}

/// Whether a line is an attribute or decorator of the line under it: `#[cfg(unix)]`,
/// `@size.deleter`, `[Conditional("DEBUG")]`.
fn is_attribute(t: &str) -> bool {
    t.starts_with("#[") || t.starts_with('@') || (t.starts_with('[') && t.ends_with(']'))
}

/// The preprocessor branches (`#if` … `#elif` … `#else` … `#endif`) a line stands in: each
/// conditional's opening line with the line of the branch it is in, so that the alternatives
/// of one conditional differ.
#[derive(Default)]
struct Branches<'a> {
    open: Vec<(&'a str, &'a str)>,
}

impl<'a> Branches<'a> {
    /// Read line `t` (trimmed): whether it is a conditional's directive.
    fn read(&mut self, t: &'a str) -> bool {
        match t.split_whitespace().next().unwrap_or("") {
            "#if" | "#ifdef" | "#ifndef" => self.open.push((t, t)),
            "#elif" | "#else" => {
                if let Some(top) = self.open.last_mut() {
                    top.1 = t;
                }
            }
            "#endif" => {
                self.open.pop();
            }
            _ => return false,
        }
        true
    }
}

/// A line's indentation, a tab counting as four spaces.
fn width(line: &str) -> usize {
    line.chars()
        .take_while(|c| c.is_whitespace())
        .map(|c| if c == '\t' { 4 } else { 1 })
        .sum()
}

fn listed(at: &[usize]) -> String {
    at.iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

fn times(n: usize) -> String {
    match n {
        0 => "nowhere".to_string(),
        1 => "once".to_string(),
        n => format!("{n} times"),
    }
}
