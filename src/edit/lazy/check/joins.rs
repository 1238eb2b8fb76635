//! Evidence for rule `joined-blocks` (check): a segment that keeps two file lines and deletes
//! the lines between them, adding nothing at their depth, where the deleted lines step out of
//! the block the kept line above stands in and into another block the kept line below stands
//! in (they hold a definition's header shallower than both kept lines: a function's `}` and
//! the next one's `fn` line; a snippet re-indenting the lines, or control statements such as
//! `} else {` or `try:`, do not count — joining branches or unwrapping is an edit). Merged
//! so, the two blocks become one: the first's head with the second's tail. A snippet means
//! that rarely; far more often its lines from the kept line below on are new code that
//! merely repeat a look-alike block's lines further down (a new test stanza at the end of
//! one test, copied from the next test). Two readings, one destructive: the merge asks.

use crate::edit::lazy::align::{Edit, Op};
use crate::edit::lazy::index::FileIndex;
use crate::edit::lazy::lines;
use crate::edit::lazy::prepare::SLine;
use crate::edit::lazy::units;
use crate::syntax::Lang;

/// A deletion that joins two blocks ([`joined`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Joined {
    /// The snippet line kept below the deleted lines, 1-based as written.
    pub(crate) at: usize,
    /// The deleted file lines, 1-based, first and last.
    pub(crate) from: usize,
    pub(crate) to: usize,
    /// The deleted definition header, 1-based, and its text as quoted.
    pub(crate) joint: usize,
    pub(crate) text: String,
}

impl Joined {
    /// Why the merge asks, with both readings and what to send.
    pub(crate) fn why(&self) -> String {
        format!(
            "this reading deletes file lines {}-{}, which end one block and start another \
             (line {} `{}`), and joins the block above them to the one below: either snippet \
             line {} and the lines after it are new code (show the lines that close them, \
             or a placeholder after them), or those file lines go (mark them with `-` lines)",
            self.from, self.to, self.joint, self.text, self.at
        )
    }
}

/// The first deletion of `edits` that joins two blocks, if any.
pub(crate) fn joined(file: &FileIndex<'_>, lines: &[SLine], edits: &[Edit]) -> Option<Joined> {
    edits.iter().find_map(|e| in_edit(file, lines, &e.ops))
}

/// In one edit's operations: a run of deletions between two kept non-blank lines, with no
/// new or changed line among them as shallow as the joint, that joins two blocks.
fn in_edit(file: &FileIndex<'_>, lines: &[SLine], ops: &[Op]) -> Option<Joined> {
    let mut above: Option<(usize, usize)> = None;
    let mut dropped: Vec<usize> = Vec::new();
    // The new lines between, as snippet lines: a join only if none stands at the joint's depth.
    let mut added: Vec<usize> = Vec::new();
    for op in ops {
        match *op {
            Op::Same { i, j } if !lines[i].blank => {
                if let Some((ia, a)) = above
                    && same_shift(file, lines, (ia, a), (i, j))
                    && let Some(joint) = joint(file, a, &dropped, j)
                    && added.iter().all(|&k| {
                        i64::from(lines[k].indent) - i64::from(lines[i].indent)
                            > i64::from(file.indent(joint)) - i64::from(file.indent(j))
                    })
                {
                    return Some(Joined {
                        at: lines[i].at,
                        from: dropped[0] + 1,
                        to: dropped[dropped.len() - 1] + 1,
                        joint: joint + 1,
                        text: lines::quoted(file.lines[joint]),
                    });
                }
                above = Some((i, j));
                dropped.clear();
                added.clear();
            }
            Op::Drop(j) if !file.is_blank(j) => dropped.push(j),
            Op::Add(i) | Op::Change { i, .. } if !lines[i].blank => added.push(i),
            // A line kept under a placeholder: the snippet does not show what is between.
            Op::Keep(_) => {
                above = None;
                dropped.clear();
                added.clear();
            }
            _ => {}
        }
    }
    None
}

/// Whether the snippet writes kept lines `a` and `b` (snippet line, file line) at the same
/// depth relative to the file: a snippet that re-indents the lines below (a block unwrapped,
/// its header deleted) changes the depths the deletion is judged by.
fn same_shift(file: &FileIndex<'_>, lines: &[SLine], a: (usize, usize), b: (usize, usize)) -> bool {
    let shift = |(i, j): (usize, usize)| i64::from(lines[i].indent) - i64::from(file.indent(j));
    shift(a) == shift(b)
}

/// Of the lines `dropped` between kept file lines `above` and `below`, a definition's header
/// at a depth shallower than both kept lines (with the closer before it, the block above
/// ends there; with its body after it, the block below starts), when lines of a body go
/// with it. A kept line above that opens a block (a header, not a comment's `/**`: its next
/// line is deeper) stands in that block, so a header at its own depth is shallower than
/// where it stands (`fn a() {` kept, its body, `}` and `fn b() {` deleted: `a`'s header
/// over `b`'s body). Control
/// statements (`} else {`, `try:`) do not count: joining two branches is an edit; nor does
/// a bare boundary (`}`, a header) between two bodies kept whole: a body folded into the
/// definition above is one too.
fn joint(file: &FileIndex<'_>, above: usize, dropped: &[usize], below: usize) -> Option<usize> {
    let opens = !lines::comment_like(file.lines[above])
        && (above + 1..file.len())
            .find(|&k| !file.is_blank(k))
            .is_some_and(|k| file.indent(k) > file.indent(above));
    let floor = (file.indent(above) + u32::from(opens)).min(file.indent(below));
    let code: Vec<usize> = dropped
        .iter()
        .copied()
        .filter(|&j| !lines::comment_like(file.lines[j]))
        .collect();
    let m = code.iter().map(|&j| file.indent(j)).min()?;
    // Only the boundary deleted (a header, a closer), the bodies on both sides kept whole, is
    // a body folded into the definition above: an edit. Body lines deleted with it join.
    if m >= floor || code.iter().all(|&j| file.indent(j) == m) {
        return None;
    }
    code.into_iter()
        .find(|&j| file.indent(j) == m && header(file, j))
}

/// Whether file line `j` heads a definition: a header by its shape (`fn name(`, `class
/// Name`), or in YAML a bare key over deeper lines (`test:` over a job's settings).
fn header(file: &FileIndex<'_>, j: usize) -> bool {
    let t = file.lines[j].trim();
    let yaml_key = || {
        t.strip_suffix(':')
            .is_some_and(|k| !k.is_empty() && !k.contains([' ', ':']) && !k.starts_with(['-', '#']))
            && (j + 1..file.len())
                .find(|&k| !file.is_blank(k))
                .is_some_and(|k| file.indent(k) > file.indent(j))
    };
    units::header_name(t).is_some() || (file.named_language() == Some(Lang::Yaml) && yaml_key())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn idx<'a>(lines: &'a [&'a str]) -> FileIndex<'a> {
        FileIndex::new(lines)
    }

    #[test]
    fn a_closer_and_a_header_between_two_bodies_join_them() {
        let f = [
            "fn a() {",
            "    one();",
            "}",
            "",
            "fn b() {",
            "    two();",
            "    three();",
            "}",
        ];
        let file = idx(&f);
        // Kept `one();` (1) and `three();` (6), deleted `}`, `fn b() {`, `two();`.
        assert_eq!(joint(&file, 1, &[2, 4, 5], 6), Some(4));
    }

    #[test]
    fn statements_deleted_inside_one_body_or_whole_definitions_join_nothing() {
        let f = [
            "fn a() {",
            "    one();",
            "    if x {",
            "        two();",
            "    }",
            "    three();",
            "}",
            "",
            "fn b() {",
            "}",
            "",
            "fn c() {",
            "}",
        ];
        let file = idx(&f);
        // `b`'s header alone deleted, its body folded into `a`'s.
        let g = ["def a():", "    one()", "", "def b():", "    two()"];
        assert_eq!(joint(&idx(&g), 1, &[3], 4), None);
        // Inside `a`: the deleted `if` is no shallower than the kept lines.
        assert_eq!(joint(&file, 1, &[2, 3, 4], 5), None);
        // `b` deleted whole between `a`'s closer and `c`'s header.
        assert_eq!(joint(&file, 6, &[8, 9], 11), None);
    }

    #[test]
    fn comments_and_preprocessor_lines_at_the_margin_are_no_joint() {
        let f = [
            "int f(void) {",
            "    a();",
            "#ifdef X",
            "// note",
            "    b();",
            "#endif",
            "    c();",
            "}",
        ];
        let file = idx(&f);
        assert_eq!(joint(&file, 1, &[2, 3, 4, 5], 6), None);
    }

    #[test]
    fn a_branch_joined_to_the_one_before_is_no_joint() {
        let f = [
            "fn f() {",
            "    if a {",
            "        x();",
            "    } else if b {",
            "        y();",
            "    }",
            "}",
        ];
        let file = idx(&f);
        assert_eq!(joint(&file, 2, &[3], 4), None);
        let p = [
            "def f():",
            "    if a:",
            "        x()",
            "    else:",
            "        y()",
        ];
        assert_eq!(joint(&idx(&p), 2, &[3], 4), None);
    }

    #[test]
    fn a_kept_header_over_the_next_definitions_body_is_a_joint() {
        let f = [
            "fn a() {",
            "    let x = load(); // cached",
            "    use_it(x);",
            "}",
            "",
            "fn b() {",
            "    let x = load();",
            "    other(x);",
            "}",
        ];
        // Kept `fn a() {` (0) and `b`'s `let x` (6): `a`'s body, closer and `b`'s header go.
        assert_eq!(joint(&idx(&f), 0, &[1, 2, 3, 5], 6), Some(5));
        // A whole method deleted under a kept `impl` header joins nothing.
        let g = [
            "impl A {",
            "    fn old() {",
            "        x();",
            "    }",
            "",
            "    fn new() {",
            "        y();",
            "    }",
            "}",
        ];
        assert_eq!(joint(&idx(&g), 0, &[1, 2, 3], 5), None);
        // A kept `try:` whose body and `except` go: branches joined, an edit.
        let p = [
            "def f():",
            "    try:",
            "        a()",
            "    except ValueError:",
            "        b()",
            "        c()",
        ];
        assert_eq!(joint(&idx(&p), 1, &[2, 3, 4], 5), None);
        // A kept doc comment's opener is no header: a whole method deleted under it, its
        // own doc comment's lines kept below, joins nothing.
        let d = [
            "    /**",
            "     * Get router",
            "     */",
            "    public function getRouter() {",
            "        return $this->router;",
            "    }",
            "",
            "    /**",
            "     * Get middleware",
        ];
        assert_eq!(joint(&idx(&d), 0, &[1, 2, 3, 4, 5, 7], 8), None);
        // An empty definition's closer and the next header alone deleted: a fold.
        let q = ["fn a() {", "}", "fn b() {", "    two();", "}"];
        assert_eq!(joint(&idx(&q), 0, &[1, 2], 3), None);
    }

    #[test]
    fn a_yaml_key_over_deeper_lines_is_a_joint() {
        let text = "jobs:\n  build:\n    steps:\n      - run: make\n\n  test:\n    steps:\n      - run: make test\n";
        let f: Vec<&str> = text.lines().collect();
        let file = FileIndex::new(&f).with_source(Some("ci.yml"), text);
        // Kept `- run: make` (3) and `- run: make test` (7): `test:` and `steps:` go.
        assert_eq!(joint(&file, 3, &[5, 6], 7), Some(5));
        // The same lines in a file of no known language: no joint.
        assert_eq!(joint(&idx(&f), 3, &[5, 6], 7), None);
    }

    #[test]
    fn a_dedented_header_in_python_is_a_joint() {
        let f = [
            "class A:",
            "    def f(self):",
            "        return 1",
            "",
            "    def g(self):",
            "        x = 2",
            "        return x",
        ];
        let file = idx(&f);
        assert_eq!(joint(&file, 2, &[4, 5], 6), Some(4));
    }
}
