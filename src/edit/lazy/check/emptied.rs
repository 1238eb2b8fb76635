//! Evidence for rule `emptied-block` (check): a new line that closes a block and opens the
//! next (`} else if (…) {`, `} catch (…) {`, or a branch keyword whose empty body is legal:
//! Ruby's `elsif`, Lua's `elseif`), written right under a file line the snippet does
//! not show that opens a block at the same depth (`} else if (old) {`), takes that line's body
//! as its own and leaves the file's line with an empty block — legal code, so no syntax check
//! sees it. A writer adding a branch puts it before or after the old one, not between a header
//! and its body: the new line is most likely the old one rewritten past the similarity a
//! changed line needs (comment lines written above it do not hide it). Two readings, one
//! destructive: the merge asks.

use crate::edit::lazy::align::{Edit, Op};
use crate::edit::lazy::index::FileIndex;
use crate::edit::lazy::lines;
use crate::edit::lazy::prepare::SLine;

/// A file header left with an empty block by new code under it ([`emptied`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Emptied {
    /// The new line, 1-based as written in the snippet.
    pub(crate) at: usize,
    /// The file's header, 1-based, and its text as quoted.
    pub(crate) header: usize,
    pub(crate) text: String,
}

impl Emptied {
    /// Why the merge asks, with both readings and what to send.
    pub(crate) fn why(&self) -> String {
        format!(
            "snippet line {} goes right under file line {} `{}`, which it would leave with an \
             empty block: either it replaces that line (then show the line above it, or mark \
             the old line with a `-` line), or it is a new branch (then show where it goes \
             with the lines around it)",
            self.at, self.header, self.text
        )
    }
}

/// The first new chain line of `edits` that empties a file header's block, if any.
pub(crate) fn emptied(file: &FileIndex<'_>, lines: &[SLine], edits: &[Edit]) -> Option<Emptied> {
    edits.iter().find_map(|e| in_edit(file, lines, e))
}

fn in_edit(file: &FileIndex<'_>, lines: &[SLine], e: &Edit) -> Option<Emptied> {
    // The file line the result holds right above the next op: before the edit, the last
    // non-blank line above its span; then each kept line the snippet does not show.
    let mut above = (0..e.span.start).rev().find(|&j| !file.is_blank(j));
    for op in &e.ops {
        match *op {
            Op::Keep(j) if !file.is_blank(j) => above = Some(j),
            // A comment written above the new line (`// any line end`) stands in its place.
            Op::Add(i) if !lines[i].blank && lines::comment_like(&lines[i].text) => {}
            Op::Add(i) if !lines[i].blank => {
                if let Some(j) = above
                    && chain_line(&lines[i].text)
                    && i64::from(lines[i].indent) + e.shift == i64::from(file.indent(j))
                    && opens_body(file, j)
                {
                    return Some(Emptied {
                        at: lines[i].at,
                        header: j + 1,
                        text: lines::quoted(file.lines[j]),
                    });
                }
                return None;
            }
            Op::Same { i, .. } | Op::Change { i, .. } if !lines[i].blank => return None,
            Op::Drop(j) if !file.is_blank(j) => return None,
            _ => {}
        }
    }
    None
}

/// A line that closes a block and opens the next: `} else {`, `} catch (e) {`, or a branch
/// keyword of a language without braces (`elsif x`, `elseif x then`, `when :a`; see
/// [`keyword_branch`]).
fn chain_line(text: &str) -> bool {
    let t = text.trim();
    (t.starts_with('}') && t.ends_with('{') && t.len() > 2) || keyword_branch(t)
}

/// A branch line that needs no brace and whose empty body is legal code: Ruby's `elsif` and
/// `when` (`case`), Lua's `elseif … then`, the shell's `elif …; then`. (Python's `elif x:` with
/// an empty body is a syntax error the reading check sees; a line ending in `{` is the brace
/// form, Kotlin's `when (x) {` opening a block of its own.)
fn keyword_branch(t: &str) -> bool {
    let word = t.split([' ', '\t', '(']).next().unwrap_or("");
    matches!(word, "elsif" | "elseif" | "elif" | "when")
        && t.len() > word.len()
        && !t.ends_with('{')
}

/// Whether file line `j` opens a block (a `{` at its end, or a keyword branch) whose body holds
/// a line (its next non-blank line is deeper and no closer).
fn opens_body(file: &FileIndex<'_>, j: usize) -> bool {
    (file.lines[j].trim_end().ends_with('{') || keyword_branch(file.lines[j].trim()))
        && (j + 1..file.len())
            .find(|&k| !file.is_blank(k))
            .is_some_and(|k| !lines::is_closer(file.lines[k]) && file.indent(k) > file.indent(j))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chain_line_closes_and_opens() {
        assert!(chain_line("    } else if (x) {"));
        assert!(chain_line("} catch (e) {"));
        assert!(!chain_line("}"));
        assert!(!chain_line("if (x) {"));
        assert!(!chain_line("{"));
        assert!(chain_line("  elsif x > 2"));
        assert!(chain_line("elseif n == 0 then"));
        assert!(chain_line("when :json"));
        assert!(!chain_line("when (x) {"));
        assert!(!chain_line("elsif"));
        assert!(!chain_line("whenever(x)"));
    }

    #[test]
    fn a_keyword_branch_with_a_body_opens_one() {
        let f = ["if a", "  x", "elsif b", "  y", "elsif c", "end"];
        let file = FileIndex::new(&f);
        assert!(opens_body(&file, 2));
        assert!(!opens_body(&file, 4));
    }

    #[test]
    fn a_header_with_a_body_opens_one_and_an_empty_one_does_not() {
        let f = ["if (a) {", "    x();", "} else {", "}", "y();"];
        let file = FileIndex::new(&f);
        assert!(opens_body(&file, 0));
        assert!(!opens_body(&file, 2));
        assert!(!opens_body(&file, 4));
    }
}
