//! Units: definitions (functions, methods, classes, keyed blocks) seen by their header line.
//! A unit the snippet shows whole — from its header to the line that closes it, with no
//! placeholder inside — replaces the file's definition of that name whole (docs/DESIGN.md §5.1,
//! step 4); a header whose name the file defines once places its segment even when its
//! signature changed.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use super::depths;
use crate::edit::lazy::index::FileIndex;
use crate::edit::lazy::outline;
use crate::edit::lazy::prepare::SLine;
use crate::edit::lazy::segments::Follows;
use crate::syntax::Def;

/// Words that start a statement, never a definition.
const CONTROL_WORDS: &[&str] = &[
    "if", "for", "foreach", "while", "switch", "return", "else", "elif", "elsif", "catch", "match",
    "when", "with", "new", "await", "throw", "case", "assert", "print", "yield", "using", "lock",
    "do", "try", "unless", "until", "and", "or", "not", "in", "is", "typeof", "sizeof", "delete",
    "go", "defer", "select", "raise", "puts", "require", "include", "import", "from", "super",
    "this", "self",
];

pub(crate) fn identifiers(line: &str) -> impl Iterator<Item = &str> {
    line.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
        .filter(|w| !w.is_empty())
}

/// The last part of a dotted or colon path (`M.head` → `head`, `Range:matches` → `matches`).
fn last_part(path: &str) -> &str {
    path.rsplit(['.', ':']).next().unwrap_or(path)
}

/// Kinds of definitions (the grammar's tags) with a body of code, whose names a scope holds
/// once; keys, rules and constants are values.
pub(crate) const BODY_KINDS: [&str; 7] = [
    "function",
    "method",
    "class",
    "struct",
    "interface",
    "enum",
    "trait",
];

/// The name a header line defines, if it is one: `def name(`, `func (r T) Name(`,
/// `function M.head(file)`, `public async Task Name(…)`, `name = function(…)`,
/// `class Name`, `fun Type.name(): T =`. Comments, calls and control statements define
/// nothing.
pub(crate) fn header_name(line: &str) -> Option<&str> {
    let t = strip_annotations(line.trim());
    if t.is_empty()
        || t.starts_with("//")
        || t.starts_with('#')
        || t.starts_with('*')
        || t.starts_with("--")
        || t.starts_with("/*")
        || t.starts_with('@')
        || t.starts_with('[')
    {
        return None;
    }
    let first = identifiers(t).next()?;
    if CONTROL_WORDS.contains(&first) {
        return None;
    }
    if let Some(name) = keyword_header(t) {
        return Some(name);
    }
    // `name = function(…)`, `M.name = function (…)`, `exports.name = (…) =>`.
    if let Some((lhs, rhs)) = t.split_once('=')
        && !rhs.starts_with('=')
        && !lhs.contains('(')
        && {
            let r = rhs.trim_start();
            r.starts_with("function") || (r.starts_with('(') && r.contains("=>"))
        }
    {
        let name = last_part(
            lhs.trim()
                .trim_start_matches("var ")
                .trim_start_matches("const "),
        );
        return (!name.is_empty() && identifiers(name).count() == 1).then_some(name);
    }
    typed_signature(t)
        .or_else(|| call_block_name(t))
        .or_else(|| key_opener(t))
        .or_else(|| selector(t.strip_suffix('{')?))
}

/// A definition's header as the key of the definition in its scope: the trimmed line, its
/// annotations and its body's opener (`{`, `{}`, `:`) left off, when it declares a definition
/// with a body by keyword or typed signature (not a call block, a key, a selector or a
/// variable), closes its parameter list on the line (a header spanning lines names too little:
/// overloads may share its first line), and is not a Rust inherent `impl` (several may stand).
pub(crate) fn definition_key(line: &str) -> Option<&str> {
    header_name(line)?;
    let t = strip_annotations(line.trim());
    if keyword_header(t).is_none() && typed_signature(t).is_none() {
        return None;
    }
    if t.matches('(').count() != t.matches(')').count() {
        return None;
    }
    let key = t.trim_end_matches(|c: char| matches!(c, '{' | '}' | ':') || c.is_whitespace());
    // A body follows: a brace, or a Python `def` / `class` colon (not a variable's type).
    let body = t.ends_with('{')
        || t.ends_with("{}")
        || (t.ends_with(':') && identifiers(t).any(|w| matches!(w, "def" | "class")));
    // Rust's inherent `impl Type` blocks may stand several times; a trait's for a type once.
    let inherent = t.starts_with("impl") && !identifiers(t).any(|w| w == "for");
    (body && !inherent).then_some(key)
}

/// A CSS-style selector naming a rule: `.badge`, `#main`, `.list > li:hover` (a class or id
/// selector, so that code blocks are not taken for rules).
fn selector(t: &str) -> Option<&str> {
    let sel = t.trim();
    let ok = sel.starts_with(['.', '#'])
        && sel.len() >= 2
        && sel
            .chars()
            .all(|c| c.is_alphanumeric() || " _-.#:>*+~[]=\"'".contains(c));
    ok.then_some(sel)
}

/// The names of a header that spans lines, as a selector list does (`.a,` / `.b {`): each
/// line's selector, and the line that opens the body. `None` unless there are several.
pub(crate) fn header_group(lines: &[SLine], i: usize, end: usize) -> Option<(Vec<&str>, usize)> {
    let mut names = Vec::new();
    for (k, l) in lines.iter().enumerate().take(end).skip(i) {
        let t = l.text.trim();
        if let Some(first) = t.strip_suffix(',') {
            names.push(selector(first)?);
        } else {
            names.push(selector(t.strip_suffix('{')?)?);
            return (names.len() >= 2).then_some((names, k));
        }
    }
    None
}

/// A key that opens a value spanning lines: `name: (state) => {`, `name: function (x) {`,
/// `"name": {`, `name = {`, `name: [`. The name is the key.
fn key_opener(t: &str) -> Option<&str> {
    let quoted = t.starts_with(['"', '\'']);
    let body = t.trim_start_matches(['"', '\'']);
    let end = body.find(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '$' | '-')))?;
    let name = &body[..end];
    let mut rest = &body[end..];
    if quoted {
        rest = rest.strip_prefix(['"', '\''])?;
    }
    let rest = rest.trim_start();
    let value = rest
        .strip_prefix(':')
        .or_else(|| rest.strip_prefix('=').filter(|r| !r.starts_with('=')))?;
    let value = value.trim();
    let opens = matches!(value, "{" | "[" | "(")
        || value.starts_with("function")
        || value.starts_with("async")
        || (value.starts_with('(') && value.ends_with('{') && value.contains("=>"));
    (!name.is_empty() && opens && !CONTROL_WORDS.contains(&name)).then_some(name)
}

/// A call that opens a block and names it with a string literal — a test or route in most
/// DSLs: `it('does x', function () {`, `describe "thing" do`, `t.Run("case", func(t *T) {`,
/// `app.get('/path', (req, res) => {`. The name is the literal's text.
fn call_block_name(t: &str) -> Option<&str> {
    let opens = t.ends_with('{')
        || t.ends_with(" do")
        || (t.contains(" do |") && t.ends_with('|'))
        || t.ends_with("=> {");
    if !opens {
        return None;
    }
    let q = t.find(['\'', '"', '`'])?;
    let before = &t[..q];
    // The literal is the call's first argument: `name(` or `name ` right before it.
    let call = before.trim_end().ends_with('(') || before.ends_with(' ') && !before.contains('(');
    if !call || before.contains('=') {
        return None;
    }
    let quote = t[q..].chars().next()?;
    let rest = &t[q + 1..];
    let close = rest.find(quote)?;
    let name = &rest[..close];
    (!name.trim().is_empty() && name.len() <= 120).then_some(name)
}

/// A line without the annotations that start it (`@Test fun f() {` → `fun f() {`): the rest
/// of the line is the header. A line of annotations only stays as it is.
fn strip_annotations(t: &str) -> &str {
    let mut rest = t;
    while let Some(after) = rest.strip_prefix('@') {
        let name_len = after
            .find(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '.' | ':')))
            .unwrap_or(after.len());
        let mut next = &after[name_len..];
        if next.starts_with('(') {
            let Some(close) = next.find(')') else {
                return t;
            };
            next = &next[close + 1..];
        }
        if !next.starts_with(char::is_whitespace) {
            return t;
        }
        rest = next.trim_start();
    }
    if rest.is_empty() { t } else { rest }
}

/// A header that starts with declaring keywords (`def`, `fn`, `function`, `class` …),
/// reading a dotted name whole.
fn keyword_header(t: &str) -> Option<&str> {
    let name = outline::declared_name(t)?;
    let at = t.find(name)?;
    let path_end = t[at..]
        .find(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '$' | '.' | ':')))
        .map_or(t.len(), |k| at + k);
    let path = t[at..path_end].trim_end_matches([':', '.']);
    let name = last_part(path);
    (!name.is_empty() && !CONTROL_WORDS.contains(&name)).then_some(name)
}

/// `Type name(params) {`, `public async Task Name(…)`, `private fun Char.name(): T =`:
/// the identifier right before the first `(`, when words (types, modifiers) come before it
/// and the line opens a body or ends the signature.
fn typed_signature(t: &str) -> Option<&str> {
    let paren = t.find('(')?;
    let before = t[..paren].trim_end();
    if before.contains('=') || before.contains('"') || before.contains('\'') {
        return None;
    }
    let name_start = before
        .rfind(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
        .map_or(0, |k| k + 1);
    // `Type name(`, not `obj.method(` or `ptr->call(` (calls).
    if name_start > 0 && !before[..name_start].ends_with(|c: char| c.is_whitespace() || c == '*') {
        return None;
    }
    let name = &before[name_start..];
    let words_before = identifiers(&before[..name_start]).count();
    let ends = t.trim_end();
    if ends.ends_with(';') {
        return None;
    }
    let opens = ends.ends_with('{')
        || ends.ends_with(')')
        || ends.ends_with("=>")
        || ends.ends_with('=')
        || ends.ends_with(':')
        || ends.ends_with(',')
        || ends.ends_with('(');
    // With no word before the name, a method shorthand (`clear() {`, `size(): number {`):
    // the parameters are followed by the body's brace, or a return type and the brace.
    let shorthand = || {
        // The parenthesis that closes the parameter list.
        let mut depth = 0i32;
        let close = t[paren..].char_indices().find_map(|(k, c)| {
            depth += match c {
                '(' => 1,
                ')' => -1,
                _ => 0,
            };
            (depth == 0).then_some(paren + k)
        })?;
        let rest = t[close + 1..].trim();
        (ends.ends_with('{') && (rest == "{" || (rest.starts_with(':') && !rest.contains('='))))
            .then_some(())
    };
    (!name.is_empty()
        && (words_before >= 1 || shorthand().is_some())
        && opens
        && !name.chars().next().is_some_and(|c| c.is_ascii_digit())
        && !CONTROL_WORDS.contains(&name))
    .then_some(name)
}

/// The file's definitions by name: the header lines of each name asked for, found on first
/// asking. Where the file's grammar gives its definitions (tags), a definition it finds is a
/// header whatever the line looks like, and a line where it finds only other names is not
/// one; the hand reading of lines (a byte search for the name, then [`header_name`]) finds the
/// rest (keyed blocks, test blocks, languages with no grammar).
pub(crate) struct FileDefs<'a> {
    file: &'a FileIndex<'a>,
    by_name: RefCell<HashMap<String, Rc<[usize]>>>,
}

impl<'a> FileDefs<'a> {
    /// Definitions of the file whose index is `file`.
    pub(crate) fn new(file: &'a FileIndex<'a>) -> FileDefs<'a> {
        FileDefs {
            file,
            by_name: RefCell::new(HashMap::new()),
        }
    }

    /// The header lines defining `name`, ascending.
    pub(crate) fn headers(&self, name: &str) -> Rc<[usize]> {
        if let Some(found) = self.by_name.borrow().get(name) {
            return Rc::clone(found);
        }
        let finder = memchr::memmem::Finder::new(name.as_bytes());
        let read = self
            .file
            .lines
            .iter()
            .enumerate()
            .filter(|(_, l)| finder.find(l.as_bytes()).is_some())
            .filter(|(_, l)| header_name(l) == Some(name))
            .map(|(j, _)| j);
        let found: Rc<[usize]> = match self.file.tags() {
            None => read.collect(),
            Some(outline) => {
                let mut all: Vec<usize> =
                    read.filter(|j| !outline.by_line.contains_key(j)).collect();
                all.extend(
                    outline
                        .defs
                        .iter()
                        .filter(|d| d.name == name)
                        .map(|d| d.name_line),
                );
                all.sort_unstable();
                all.dedup();
                all.into()
            }
        };
        self.by_name
            .borrow_mut()
            .insert(name.to_string(), Rc::clone(&found));
        found
    }
}

/// The file lines (half-open) of the definition whose header is line `h`, from its header
/// (attached comments and decorators excluded) to its last line: where the grammar's tags
/// name a definition on that line, its node's last line, else the closing bracket or the end
/// of the indented block.
pub(crate) fn file_extent(file: &FileIndex<'_>, h: usize) -> (usize, usize) {
    let end = grammar_def(file, h, None)
        .map(|d| d.extent.1)
        .unwrap_or_else(|| outline::block_extent(file.lines, h).1);
    (h, end.max(h + 1))
}

/// The definition the grammar names on line `h` (of `name`, when given); `None` when it names
/// none there, or several that differ (`"a": { "b": 1,` in JSON), and it cannot say which.
fn grammar_def<'f>(file: &'f FileIndex<'_>, h: usize, name: Option<&str>) -> Option<&'f Def> {
    let mut on = file
        .tags()?
        .on_line(h)
        .filter(|d| name.is_none_or(|n| d.name == n));
    let first = on.next()?;
    on.all(|d| d.name == first.name).then_some(first)
}

/// Another name the grammar finds defined on line `h` besides `name` (`"scripts": { "build":`
/// in JSON): deleting `name`'s lines would take that one's too.
pub(crate) fn shares_line<'f>(file: &'f FileIndex<'_>, h: usize, name: &str) -> Option<&'f str> {
    file.tags()?
        .on_line(h)
        .find(|d| d.name != name)
        .map(|d| d.name.as_str())
}

/// The file lines of the definition of `name` whose header is line `h`, from the doc
/// comments, decorators and attributes attached above it (or where the grammar starts it:
/// a C return type on the line above) to its last line.
pub(crate) fn file_extent_attached(file: &FileIndex<'_>, h: usize, name: &str) -> (usize, usize) {
    let above = outline::attached_above(file.lines, h);
    match grammar_def(file, h, Some(name)) {
        Some(d) => (above.min(d.header), d.extent.1.max(h + 1)),
        None => (above, file_extent(file, h).1),
    }
}

/// Net bracket depth change of a line (brackets in strings and `//` comments ignored), and
/// whether it leaves a brace open.
pub(crate) fn depth_change(line: &str) -> (i64, bool) {
    let mut depth = 0i64;
    let mut braces = 0i64;
    for c in outline::code_chars(line) {
        match c {
            '{' | '(' | '[' => {
                depth += 1;
                braces += i64::from(c == '{');
            }
            '}' | ')' | ']' => {
                depth -= 1;
                braces -= i64::from(c == '}');
            }
            _ => {}
        }
    }
    // A brace opened and closed on the line (`options={}`) opens no body.
    (depth, braces > 0)
}

/// Whether a line closes an indentation block by keyword (`end` in Ruby and Lua).
fn is_end_keyword(line: &str) -> bool {
    let t = line.trim();
    t == "end" || t == "end;" || t == "end)" || t == "end," || t.starts_with("end ")
}

/// How far a unit the snippet shows reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UnitEnd {
    /// Shown whole, through this line.
    Whole(usize),
    /// A placeholder inside it keeps the rest of its body.
    Open,
}

/// The extent of the unit whose header is segment line `h`: whole through the bracket that
/// closes the header's body, or (for indented bodies) through its last deeper line, which
/// needs a line at most as deep as the header to follow, or the segment to end at a
/// placeholder no deeper than the header after a blank line; open when a placeholder inside
/// keeps the rest (one right under the body's last line does).
/// `None` when the header opens no body at all. `gap_after` is the indentation of the
/// placeholder after the segment (`None` at the snippet's end); `follows` whether it is one
/// (not a `remove` directive or a cut).
pub(crate) fn snippet_unit(
    lines: &[SLine],
    h: usize,
    seg_end: usize,
    gap_after: Option<u32>,
    follows: Follows,
) -> Option<UnitEnd> {
    let k = match signature(lines, h, seg_end) {
        Ok(end) => return Some(end),
        Err(k) => k,
    };
    let base = lines[h].indent;
    // An indented body: the lines deeper than the header.
    let mut last = None;
    for (at, l) in lines.iter().enumerate().take(seg_end).skip(k + 1) {
        if l.blank {
            continue;
        }
        if l.indent > base {
            last = Some(at);
            continue;
        }
        if l.indent == base && is_end_keyword(&l.text) {
            return Some(UnitEnd::Whole(at));
        }
        // `ensure`, `rescue`, `else` at the header's depth continue its body (Ruby, Lua).
        if l.indent == base && outline::is_continuation_keyword(&l.text) {
            last = Some(at);
            continue;
        }
        return last.map(UnitEnd::Whole);
    }
    // The segment ends inside the body (or right after the header). A placeholder deeper
    // than the header keeps the rest of the body; so does one right under the body's last
    // line, however deep (models write placeholders at the margin): only a blank line
    // between says the body ended there.
    match gap_after {
        Some(g) if g > base || (follows == Follows::Placeholder && last == Some(seg_end - 1)) => {
            Some(UnitEnd::Open)
        }
        _ => last.map(UnitEnd::Whole),
    }
}

/// The header's signature from segment line `h`: until its brackets balance and a body
/// opens. `Ok` when that decides the unit (a braced body, closed or left open, or the
/// segment's end inside the signature); `Err(k)` when the signature ends at line `k` with
/// no brace, and an indented body may follow.
fn signature(lines: &[SLine], h: usize, seg_end: usize) -> Result<UnitEnd, usize> {
    let mut depth = 0i64;
    let mut k = h;
    while k < seg_end {
        depth += lines[k].brackets.change;
        if lines[k].brackets.brace {
            // The body ends where the depth falls back (linked lines: a few jumps).
            if depth <= 0 {
                return Ok(UnitEnd::Whole(k));
            }
            let closer = depths::closer_after(lines, k, depth, seg_end);
            return Ok(closer.map_or(UnitEnd::Open, UnitEnd::Whole));
        }
        if depth > 0 {
            // Inside the signature's brackets nothing is decided until a line opens a brace
            // or the brackets close: go to the first such line.
            let brace_at = depths::next_brace(lines, k).min(seg_end);
            match depths::closer_after(lines, k, depth, brace_at) {
                Some(m) => {
                    depth += depths::between(lines, k, m);
                    k = m;
                }
                None if brace_at >= seg_end => return Ok(UnitEnd::Open),
                None => {
                    depth += depths::between(lines, k, brace_at - 1);
                    k = brace_at;
                    continue;
                }
            }
        }
        // The body's brace on a line of its own, or ending a continued signature
        // (`implements Foo {` under `class Bar`).
        let next = lines[k + 1..seg_end].iter().find(|l| !l.blank);
        let brace_next = next.is_some_and(|l| {
            let t = l.text.trim();
            t.starts_with('{')
                || (l.indent > lines[k].indent
                    && t.ends_with('{')
                    && depth_change(t).0 == 1
                    && !lines[k].text.trim_end().ends_with([':', ';', '{', '}']))
        });
        if depth <= 0 && !brace_next {
            return Err(k);
        }
        k += 1;
    }
    Ok(UnitEnd::Open)
}

/// The last line of the unit whose header is segment line `h`, when the segment shows it
/// whole (see [`snippet_unit`]).
pub(crate) fn snippet_unit_end(
    lines: &[SLine],
    h: usize,
    seg_end: usize,
    gap_after: Option<u32>,
    follows: Follows,
) -> Option<usize> {
    match snippet_unit(lines, h, seg_end, gap_after, follows)? {
        UnitEnd::Whole(e) => Some(e),
        UnitEnd::Open => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_names_across_languages() {
        for (line, name) in [
            (
                "def get_adapter(self, url: str) -> BaseAdapter:",
                "get_adapter",
            ),
            (
                "func (c *Command) RegisterFlagCompletionFunc(flagName string) error {",
                "RegisterFlagCompletionFunc",
            ),
            ("function M.head(file)", "head"),
            ("function Range:matches(version)", "matches"),
            (
                "    public async Task IsolateAsync(CancellationToken cancellationToken = default)",
                "IsolateAsync",
            ),
            (
                "private fun Char.isBase64Whitespace(): Boolean =",
                "isBase64Whitespace",
            ),
            ("res.status = function status(code) {", "status"),
            ("exports.compileTrust = function(val) {", "compileTrust"),
            (
                "  fun generateGradient(width: Int = 1920, height: Int = 1080): Bitmap {",
                "generateGradient",
            ),
            ("class Base", "Base"),
            ("export function myersDiffStats(", "myersDiffStats"),
            (
                "    closeOtherTabs: (state, action: PayloadAction<string>) => {",
                "closeOtherTabs",
            ),
            ("  git = {", "git"),
            ("  \"devDependencies\": {", "devDependencies"),
            (".mention {", ".mention"),
            (
                "  @Test fun intersectWithRestoresTimeout() {",
                "intersectWithRestoresTimeout",
            ),
            ("@Override public String toString() {", "toString"),
            (
                "    def with_stream_params(temp_params)",
                "with_stream_params",
            ),
            (
                "  it('should expose app.locals', function(){",
                "should expose app.locals",
            ),
            ("  it \"sets status and body\" do", "sets status and body"),
            (
                "app.get('/whoami', restrict, function(req, res){",
                "/whoami",
            ),
            ("\tt.Run(\"empty\", func(t *testing.T) {", "empty"),
            ("  clear() {", "clear"),
            ("  size(): number {", "size"),
        ] {
            assert_eq!(header_name(line), Some(name), "{line}");
        }
        for line in [
            "if (x) {",
            "if (x === 'foo') {",
            "app.get('/whoami', restrict);",
            "return foo(bar);",
            "// def old(x):",
            "foo(bar)",
            "x = compute(a, b)",
        ] {
            assert_eq!(header_name(line), None, "{line}");
        }
    }

    mod signature_jumps {
        //! Over linked lines the signature jumps to the lines that decide it; it must find
        //! what a step a line finds (and does step a line over lines not linked).

        use super::*;
        use crate::edit::lazy::place::depths;
        use crate::edit::lazy::prepare;
        use proptest::prelude::*;

        /// The signature as read before the lines were linked: one step a line.
        fn stepped(lines: &[SLine], h: usize, seg_end: usize) -> Result<UnitEnd, usize> {
            let mut depth = 0i64;
            let mut braced = false;
            let mut k = h;
            while k < seg_end {
                let (d, brace) = depth_change(&lines[k].text);
                depth += d;
                braced |= brace;
                if braced && depth <= 0 {
                    return Ok(UnitEnd::Whole(k));
                }
                let next = lines[k + 1..seg_end].iter().find(|l| !l.blank);
                let brace_next = next.is_some_and(|l| {
                    let t = l.text.trim();
                    t.starts_with('{')
                        || (l.indent > lines[k].indent
                            && t.ends_with('{')
                            && depth_change(t).0 == 1
                            && !lines[k].text.trim_end().ends_with([':', ';', '{', '}']))
                });
                if !braced && depth <= 0 && !brace_next {
                    break;
                }
                k += 1;
            }
            if braced || k >= seg_end {
                return Ok(UnitEnd::Open);
            }
            Err(k)
        }

        const PIECES: [&str; 26] = [
            "fn a() {",
            "fn b(",
            "x,",
            ")",
            ") {",
            "{",
            "}",
            "{}",
            "",
            "y = [",
            "]",
            "def f():",
            "pass",
            "end",
            "class C",
            "impl D {",
            "(",
            "g({",
            "})",
            "} else {",
            "s = \"{\"",
            ")) {",
            "((",
            "c = '('",
            "}}",
            "f(x) // {",
        ];

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(400))]

            #[test]
            fn jumps_find_what_steps_find(
                picks in prop::collection::vec((0..PIECES.len(), 0usize..3), 1..40),
            ) {
                let text: String = picks
                    .iter()
                    .map(|&(p, indent)| format!("{}{}\n", "    ".repeat(indent), PIECES[p]))
                    .collect();
                let file = ["unrelated();"];
                let index = FileIndex::new(&file);
                let unlinked: Vec<SLine> = prepare::read(&text, &index)
                    .pieces
                    .into_iter()
                    .filter_map(|p| match p {
                        prepare::Piece::Line(l) => Some(l),
                        _ => None,
                    })
                    .collect();
                let mut linked = unlinked.clone();
                depths::link(&mut linked);
                for h in 0..linked.len() {
                    for end in h + 1..=linked.len() {
                        let want = stepped(&unlinked, h, end);
                        prop_assert_eq!(signature(&linked, h, end), want, "{} {} {:?}", h, end, text);
                        prop_assert_eq!(signature(&unlinked, h, end), want, "{} {} {:?}", h, end, text);
                    }
                }
            }
        }
    }
}
