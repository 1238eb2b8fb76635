//! SEARCH/REPLACE blocks (docs/DESIGN.md §5.2), the format of wcgw's `FileWriteOrEdit` and aider:
//!
//! ```text
//! <<<<<<< SEARCH
//! lines copied from the file
//! =======
//! the lines that replace them
//! >>>>>>> REPLACE
//! ```
//!
//! Each block is placed with the tolerance ladder of [`matching::Level`] (first rung that
//! matches wins), searched after the previous block first and then anywhere; a block that
//! matches twice is `AMBIGUOUS_MATCH` with every location, one that matches nowhere is
//! `NO_MATCH` with the closest region of the file. Any failing block fails the whole edit.

use std::borrow::Cow;

use super::matching::{self, Level, Match, Reindent};
use super::text::{Indent, Text, join_lines, normalize_newlines, split_lines};
use super::{Error, ErrorCode, Merged, Result};

/// One parsed block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// The lines to find.
    pub search: Vec<String>,
    /// The lines to put in their place.
    pub replace: Vec<String>,
    /// The 1-based line of the edit text where the block starts.
    pub line: usize,
    /// The last text line before the block outside any block (aider writes the file name
    /// there), if any.
    pub path_hint: Option<String>,
}

fn marker(line: &str, ch: char, word: &str) -> bool {
    let line = line.trim_end();
    let n = line.chars().take_while(|&c| c == ch).count();
    (5..=9).contains(&n) && line[n..].trim_start() == word
}

/// `<<<<<<< SEARCH`
pub(crate) fn is_search_marker(line: &str) -> bool {
    marker(line, '<', "SEARCH")
}

/// `=======`
pub(crate) fn is_divider(line: &str) -> bool {
    marker(line, '=', "")
}

/// `>>>>>>> REPLACE`
pub(crate) fn is_replace_marker(line: &str) -> bool {
    marker(line, '>', "REPLACE")
}

fn syntax(message: String) -> Error {
    Error::new(
        ErrorCode::InvalidInput,
        format!(
            "{message}. Each block is `<<<<<<< SEARCH`, the lines to find, `=======`, the new \
             lines, `>>>>>>> REPLACE`, each marker on its own line."
        ),
    )
}

/// Parse SEARCH/REPLACE blocks. Syntax errors (empty SEARCH, unclosed block, stray marker)
/// name the line. Text outside blocks is ignored (with a warning unless it is a code fence or
/// a file name).
pub fn parse(edit: &str) -> Result<(Vec<Block>, Vec<String>)> {
    let edit = normalize_newlines(edit);
    let lines: Vec<&str> = edit.lines().collect();
    let mut blocks = Vec::new();
    let mut warnings = Vec::new();
    let mut hint: Option<String> = None;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if is_search_marker(line) {
            let start = i + 1;
            let mut search = Vec::new();
            i += 1;
            loop {
                let Some(&l) = lines.get(i) else {
                    return Err(syntax(format!(
                        "line {start}: unclosed block: the SEARCH started here has no `=======`"
                    )));
                };
                if is_divider(l) {
                    break;
                }
                if is_search_marker(l) {
                    return Err(syntax(format!(
                        "line {}: stray `<<<<<<< SEARCH` inside the SEARCH part of the block \
                         started at line {start}",
                        i + 1
                    )));
                }
                if is_replace_marker(l) {
                    return Err(syntax(format!(
                        "line {}: `>>>>>>> REPLACE` before `=======` in the block started at line {start}",
                        i + 1
                    )));
                }
                search.push(l.to_string());
                i += 1;
            }
            if search.iter().all(|l| l.trim().is_empty()) {
                return Err(syntax(format!(
                    "line {start}: empty SEARCH: the block started here has nothing to find; copy \
                     the lines to change (or the line after which to insert) into SEARCH"
                )));
            }
            i += 1;
            let mut replace = Vec::new();
            loop {
                let Some(&l) = lines.get(i) else {
                    return Err(syntax(format!(
                        "line {start}: unclosed block: the block started here has no `>>>>>>> REPLACE`"
                    )));
                };
                if is_replace_marker(l) {
                    break;
                }
                if is_search_marker(l) || is_divider(l) {
                    return Err(syntax(format!(
                        "line {}: stray `{}` inside the REPLACE part of the block started at line {start}",
                        i + 1,
                        l.trim_end()
                    )));
                }
                replace.push(l.to_string());
                i += 1;
            }
            blocks.push(Block {
                search,
                replace,
                line: start,
                path_hint: hint.take(),
            });
            i += 1;
            continue;
        }
        if is_divider(line) || is_replace_marker(line) {
            return Err(syntax(format!(
                "line {}: stray `{}` outside a block",
                i + 1,
                line.trim_end()
            )));
        }
        let t = line.trim();
        if t.starts_with("```") || t.is_empty() {
            // fences around blocks are normal
        } else if looks_like_path(t) {
            hint = Some(t.to_string());
        } else {
            warnings.push(format!(
                "line {}: text outside any block was ignored",
                i + 1
            ));
        }
        i += 1;
    }
    if blocks.is_empty() {
        return Err(syntax("no SEARCH/REPLACE block found".to_string()));
    }
    Ok((blocks, warnings))
}

fn looks_like_path(t: &str) -> bool {
    !t.contains(' ') && (t.contains('.') || t.contains('/')) && t.len() < 300
}

/// Apply SEARCH/REPLACE blocks to a decoded file.
pub fn merge(text: &Text, edit: &str) -> Result<Merged> {
    apply(text.content(), text.indent(), edit)
}

/// Apply SEARCH/REPLACE blocks to LF-normalised `content` whose indentation unit is `indent`.
pub fn apply(content: &str, indent: Indent, edit: &str) -> Result<Merged> {
    let (blocks, warnings) = parse(edit)?;
    apply_blocks(content, indent, &blocks, warnings)
}

/// Apply parsed blocks, in order, all or nothing.
pub(crate) fn apply_blocks(
    content: &str,
    indent: Indent,
    blocks: &[Block],
    mut warnings: Vec<String>,
) -> Result<Merged> {
    let (file_lines, final_newline) = split_lines(content);
    let mut lines: Vec<Cow<'_, str>> = file_lines.into_iter().map(Cow::Borrowed).collect();
    let mut cursor = 0usize;
    let total = blocks.len();
    for (bi, block) in blocks.iter().enumerate() {
        let name = block_name(bi, total, block);
        // This block and the identical ones after it.
        let twins = blocks[bi..]
            .iter()
            .filter(|b| b.search == block.search && b.replace == block.replace)
            .count();
        let placed = locate(&lines, block, twins, cursor, &name)?;
        let new_lines: Vec<String> =
            if placed.level == Level::Exact {
                placed.replace.into_owned()
            } else {
                let edit_lines: Vec<&str> = placed
                    .search
                    .iter()
                    .chain(placed.replace.iter())
                    .map(String::as_str)
                    .collect();
                let pairs =
                    placed.m.map.iter().enumerate().filter_map(|(k, f)| {
                        f.map(|f| (placed.search[k].as_str(), lines[f].as_ref()))
                    });
                let reindent = Reindent::plan(pairs, &edit_lines, indent);
                warnings.push(format!(
                    "{name} matched {} {}",
                    placed.m.lines_label(),
                    placed.level.describe()
                ));
                matching::render_replacement(
                    &lines,
                    &placed.m,
                    &placed.search,
                    &placed.replace,
                    placed.level,
                    &reindent,
                )
            };
        if block.search == block.replace {
            warnings.push(format!(
                "{name} changes nothing (SEARCH and REPLACE are identical)"
            ));
        }
        let new_len = new_lines.len();
        let start = placed.m.start;
        lines.splice(start..placed.m.end, new_lines.into_iter().map(Cow::Owned));
        cursor = start + new_len;
    }
    Ok(Merged {
        content: join_lines(&lines, final_newline),
        warnings,
        applied: total,
        ..Default::default()
    })
}

fn block_name(index: usize, total: usize, block: &Block) -> String {
    let first = block
        .search
        .iter()
        .find(|l| !l.trim().is_empty())
        .map(|l| l.trim())
        .unwrap_or("");
    let first: String = if first.chars().count() > 60 {
        first.chars().take(60).chain(std::iter::once('…')).collect()
    } else {
        first.to_string()
    };
    format!(
        "block {} of {total} (edit line {}, SEARCH starting `{first}`)",
        index + 1,
        block.line
    )
}

struct Placed<'b> {
    level: Level,
    m: Match,
    search: Cow<'b, [String]>,
    replace: Cow<'b, [String]>,
}

fn locate<'b>(
    lines: &[Cow<'_, str>],
    block: &'b Block,
    twins: usize,
    cursor: usize,
    name: &str,
) -> Result<Placed<'b>> {
    for level in Level::LADDER {
        let (search, replace): (Cow<'b, [String]>, Cow<'b, [String]>) =
            if level == Level::LineNumbers {
                match matching::strip_line_numbers(&block.search) {
                    Some(s) => (
                        Cow::Owned(s),
                        Cow::Owned(matching::strip_line_numbers_where_present(&block.replace)),
                    ),
                    None => continue,
                }
            } else {
                (Cow::Borrowed(&block.search), Cow::Borrowed(&block.replace))
            };
        let mut candidates = matching::find_matches(lines, &search, level);
        if candidates.is_empty() {
            continue;
        }
        let after: Vec<usize> = (0..candidates.len())
            .filter(|&i| candidates[i].start >= cursor)
            .collect();
        let chosen = match (after.as_slice(), candidates.len()) {
            ([one], _) => *one,
            ([], 1) => 0,
            // k identical blocks for k identical places: the blocks are interchangeable, so
            // each takes the next place in order.
            (after, n) if after.len() == n && twins == n => after[0],
            _ => return Err(ambiguous(name, &candidates, level)),
        };
        let m = candidates.swap_remove(chosen);
        return Ok(Placed {
            level,
            m,
            search,
            replace,
        });
    }
    Err(no_match(lines, block, name))
}

fn ambiguous(name: &str, candidates: &[Match], level: Level) -> Error {
    let shown: Vec<String> = candidates.iter().take(20).map(Match::lines_label).collect();
    let more = if candidates.len() > 20 {
        format!(" and {} more", candidates.len() - 20)
    } else {
        String::new()
    };
    let how = if level == Level::Exact {
        String::new()
    } else {
        format!(" ({})", level.describe())
    };
    Error::new(
        ErrorCode::AmbiguousMatch,
        format!(
            "{name} matches {} places{how}: {}{more}. Add one or two neighbouring lines to SEARCH \
             so that it matches exactly one place.",
            candidates.len(),
            shown.join(", ")
        ),
    )
}

fn no_match(lines: &[Cow<'_, str>], block: &Block, name: &str) -> Error {
    let mut message = format!(
        "{name} matches nothing in the file, even ignoring whitespace, blank lines, look-alike \
         characters and line numbers."
    );
    if let Some((start, end)) = matching::closest_region(lines, &block.search) {
        message.push_str(&format!(
            " The closest region is lines {}-{}:\n{}",
            start + 1,
            end,
            matching::quote_lines(lines, start, end, 15)
        ));
        if let Some((k, f)) = matching::first_difference(lines, start, &block.search) {
            let file_line = lines
                .get(f)
                .map(std::convert::AsRef::as_ref)
                .unwrap_or("<end of file>");
            message.push_str(&format!(
                "SEARCH line {} `{}` differs from line {} of the file `{}`.",
                k + 1,
                block.search[k].trim(),
                f + 1,
                file_line.trim()
            ));
        }
    }
    message.push_str(" Copy the lines exactly from the current file and send the edit again.");
    Error::new(ErrorCode::NoMatch, message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edit::text::Text;

    fn block(search: &str, replace: &str) -> String {
        format!("<<<<<<< SEARCH\n{search}\n=======\n{replace}\n>>>>>>> REPLACE\n")
    }

    fn merge_bytes(file: &[u8], edit: &str) -> Result<Vec<u8>> {
        let text = Text::decode(file)?;
        let merged = merge(&text, edit)?;
        text.encode(&merged.content)
    }

    #[test]
    fn crlf_file_edited_with_lf_blocks_stays_crlf_byte_for_byte() {
        let file = b"fn main() {\r\n    println!(\"a\");\r\n}\r\n";
        let out =
            merge_bytes(file, &block("    println!(\"a\");", "    println!(\"b\");")).unwrap();
        assert_eq!(
            out,
            b"fn main() {\r\n    println!(\"b\");\r\n}\r\n".to_vec()
        );
    }

    #[test]
    fn bom_is_kept() {
        let out = merge_bytes(b"\xEF\xBB\xBFa = 1\nb = 2\n", &block("b = 2", "b = 3")).unwrap();
        assert_eq!(out, b"\xEF\xBB\xBFa = 1\nb = 3\n".to_vec());
    }

    #[test]
    fn no_final_newline_stays_without() {
        let out = merge_bytes(b"a = 1\nb = 2", &block("b = 2", "b = 3\nc = 4")).unwrap();
        assert_eq!(out, b"a = 1\nb = 3\nc = 4".to_vec());
    }

    #[test]
    fn tab_indented_file_matched_by_space_indented_search_gets_tab_indented_replacement() {
        let file = "func f() {\n\tif x {\n\t\treturn 1\n\t}\n}\n";
        let edit = block(
            "    if x {\n        return 1\n    }",
            "    if x {\n        log()\n        return 2\n    }",
        );
        let merged = apply(file, Text::from_content(file).indent(), &edit).unwrap();
        assert_eq!(
            merged.content,
            "func f() {\n\tif x {\n\t\tlog()\n\t\treturn 2\n\t}\n}\n"
        );
        assert!(merged.warnings.iter().any(|w| w.contains("indentation")));
    }

    #[test]
    fn smart_quotes_in_search_match() {
        let file = "msg = \"don't\"\nx = 1\n";
        let edit = block("msg = \u{201C}don\u{2019}t\u{201D}", "msg = \"do\"");
        let merged = apply(file, Indent::Spaces(4), &edit).unwrap();
        assert_eq!(merged.content, "msg = \"do\"\nx = 1\n");
        assert!(merged.warnings.iter().any(|w| w.contains("look-alikes")));
    }

    #[test]
    fn search_lines_with_leading_line_numbers_match_and_numbers_are_stripped_from_replace() {
        let file = "def f():\n    a = 1\n    return a\n";
        let edit = block(
            "2:     a = 1\n3:     return a",
            "2:     a = 2\n3:     return a",
        );
        let merged = apply(file, Indent::Spaces(4), &edit).unwrap();
        assert_eq!(merged.content, "def f():\n    a = 2\n    return a\n");
        let arrows = block("     2→    a = 1", "     2→    a = 5");
        let merged = apply(file, Indent::Spaces(4), &arrows).unwrap();
        assert_eq!(merged.content, "def f():\n    a = 5\n    return a\n");
    }

    #[test]
    fn a_duplicate_match_gives_ambiguous_match_with_both_line_ranges() {
        let file = "a\nx = 1\ny = 2\nb\nx = 1\ny = 2\n";
        let e = apply(
            file,
            Indent::Spaces(4),
            &block("x = 1\ny = 2", "x = 3\ny = 2"),
        )
        .unwrap_err();
        assert_eq!(e.code, ErrorCode::AmbiguousMatch);
        assert!(e.message.contains("lines 2-3"), "{}", e.message);
        assert!(e.message.contains("lines 5-6"), "{}", e.message);
    }

    #[test]
    fn earlier_blocks_ground_later_duplicate_matches() {
        let file = "x = 1\nstart\nmiddle\nx = 1\nend\n";
        let edit = format!("{}{}", block("middle", "MIDDLE"), block("x = 1", "x = 2"));
        let merged = apply(file, Indent::Spaces(4), &edit).unwrap();
        assert_eq!(merged.content, "x = 1\nstart\nMIDDLE\nx = 2\nend\n");
    }

    #[test]
    fn identical_blocks_for_identical_places_apply_in_order() {
        let file = "x = 1\na\nx = 1\n";
        let edit = format!("{}{}", block("x = 1", "x = 2"), block("x = 1", "x = 2"));
        let merged = apply(file, Indent::Spaces(4), &edit).unwrap();
        assert_eq!(merged.content, "x = 2\na\nx = 2\n");
        let one = apply(file, Indent::Spaces(4), &block("x = 1", "x = 2")).unwrap_err();
        assert_eq!(one.code, ErrorCode::AmbiguousMatch);
    }

    #[test]
    fn unordered_blocks_both_apply() {
        let file = "one\ntwo\nthree\nfour\n";
        let edit = format!("{}{}", block("four", "FOUR"), block("one", "ONE"));
        let merged = apply(file, Indent::Spaces(4), &edit).unwrap();
        assert_eq!(merged.content, "ONE\ntwo\nthree\nFOUR\n");
        assert_eq!(merged.applied, 2);
    }

    #[test]
    fn one_failing_block_of_three_changes_nothing_and_the_message_names_it() {
        let file = "alpha\nbeta\ngamma\n";
        let edit = format!(
            "{}{}{}",
            block("alpha", "ALPHA"),
            block("delta", "DELTA"),
            block("gamma", "GAMMA")
        );
        let e = apply(file, Indent::Spaces(4), &edit).unwrap_err();
        assert_eq!(e.code, ErrorCode::NoMatch);
        assert!(e.message.starts_with("block 2 of 3"), "{}", e.message);
        assert!(e.message.contains("`delta`"), "{}", e.message);
    }

    #[test]
    fn empty_search_is_a_syntax_error_with_its_line_number() {
        let edit = "intro\n<<<<<<< SEARCH\n=======\nnew\n>>>>>>> REPLACE\n";
        let e = parse(edit).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidInput);
        assert!(
            e.message.starts_with("line 2: empty SEARCH"),
            "{}",
            e.message
        );
    }

    #[test]
    fn unclosed_block_is_a_syntax_error_with_its_line_number() {
        let edit = "<<<<<<< SEARCH\na\n=======\nb\n\n<<<<<<< SEARCH\nc\n";
        let e = parse(edit).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidInput);
        assert!(e.message.starts_with("line 6:"), "{}", e.message);
        let e = parse("<<<<<<< SEARCH\na\n=======\nb\n").unwrap_err();
        assert!(
            e.message.starts_with("line 1: unclosed block"),
            "{}",
            e.message
        );
    }

    #[test]
    fn stray_marker_outside_a_block_is_a_syntax_error() {
        let e = parse("a\n>>>>>>> REPLACE\n").unwrap_err();
        assert!(e.message.starts_with("line 2: stray"), "{}", e.message);
    }

    #[test]
    fn a_binary_file_gives_binary_file() {
        let e = merge_bytes(b"\x7fELF\0\0\x01", &block("a", "b")).unwrap_err();
        assert_eq!(e.code, ErrorCode::BinaryFile);
    }

    #[test]
    fn trailing_whitespace_in_the_file_is_kept_on_unchanged_lines() {
        let file = "a = 1   \nb = 2\n";
        let merged = apply(
            file,
            Indent::Spaces(4),
            &block("a = 1\nb = 2", "a = 1\nb = 3"),
        )
        .unwrap();
        assert_eq!(merged.content, "a = 1   \nb = 3\n");
    }

    #[test]
    fn blank_lines_missing_from_search_are_tolerated_and_kept() {
        let file = "def a():\n    pass\n\n\ndef b():\n    pass\n";
        let edit = block(
            "def a():\n    pass\ndef b():",
            "def a():\n    return 1\ndef b():",
        );
        let merged = apply(file, Indent::Spaces(4), &edit).unwrap();
        assert_eq!(
            merged.content,
            "def a():\n    return 1\n\n\ndef b():\n    pass\n"
        );
    }

    #[test]
    fn no_match_quotes_the_closest_region() {
        let file = "fn a() {\n    one();\n}\nfn b() {\n    three();\n}\n";
        let e = apply(
            file,
            Indent::Spaces(4),
            &block("fn b() {\n    thre();\n}", "x"),
        )
        .unwrap_err();
        assert!(e.message.contains("lines 4-6"), "{}", e.message);
        assert!(e.message.contains("`thre();`"), "{}", e.message);
    }

    #[test]
    fn text_outside_blocks_gives_a_warning_and_file_names_are_kept_as_hints() {
        let edit = format!("src/x.py\n```python\n{}```\nthanks!\n", block("a", "b"));
        let (blocks, warnings) = parse(&edit).unwrap();
        assert_eq!(blocks[0].path_hint.as_deref(), Some("src/x.py"));
        assert_eq!(warnings.len(), 1);
    }
}

#[cfg(test)]
mod proptests {
    //! For random files and edits, SEARCH/REPLACE blocks generated from (before, after) apply
    //! back to exactly `after`, for LF and CRLF files, with and without a final newline.

    use super::*;
    use crate::diff::FileDiff;
    use crate::edit::text::Text;
    use proptest::prelude::*;

    fn count(hay: &[String], needle: &[String]) -> usize {
        if needle.is_empty() || needle.len() > hay.len() {
            return 0;
        }
        (0..=hay.len() - needle.len())
            .filter(|&i| hay[i..i + needle.len()] == *needle)
            .count()
    }

    /// Blocks that turn `before` into `after`, each SEARCH unique in the text it applies to;
    /// `None` when a change can only be anchored on blank lines (blocks cannot express it).
    fn blocks_for(before: &[String], after: &[String]) -> Option<String> {
        let old = before.iter().map(|l| format!("{l}\n")).collect::<String>();
        let new = after.iter().map(|l| format!("{l}\n")).collect::<String>();
        let diff = FileDiff::compute(&old, &new, 0);
        let mut current: Vec<String> = before.to_vec();
        let mut growth: isize = 0;
        let mut out = String::new();
        for change in diff.hunks.iter().flat_map(|h| h.changes.iter()) {
            let start = (change.old.start as isize + growth) as usize;
            let end = start + change.old.len();
            let inserted: Vec<String> = after[change.new.clone()].to_vec();
            let (mut lo, mut hi) = (start, end);
            if lo == hi {
                lo = lo.saturating_sub(1);
                hi = (hi + 1).min(current.len());
            }
            while (count(&current, &current[lo..hi]) != 1
                || current[lo..hi].iter().all(|l| l.trim().is_empty()))
                && (lo > 0 || hi < current.len())
            {
                lo = lo.saturating_sub(1);
                hi = (hi + 1).min(current.len());
            }
            let search = current[lo..hi].to_vec();
            if search.iter().all(|l| l.trim().is_empty()) {
                return None;
            }
            let mut replace = current[lo..start].to_vec();
            replace.extend(inserted.iter().cloned());
            replace.extend(current[end..hi].iter().cloned());
            out.push_str("<<<<<<< SEARCH\n");
            for l in &search {
                out.push_str(l);
                out.push('\n');
            }
            out.push_str("=======\n");
            for l in &replace {
                out.push_str(l);
                out.push('\n');
            }
            out.push_str(">>>>>>> REPLACE\n");
            current.splice(start..end, inserted.iter().cloned());
            growth += inserted.len() as isize - change.old.len() as isize;
        }
        Some(out)
    }

    fn line() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => "(    |\t)?[a-z]{1,6}( [a-z=();]{1,8}){0,3}",
            1 => Just(String::new()),
            1 => Just("}".to_string()),
        ]
    }

    fn edit_script() -> impl Strategy<Value = (Vec<String>, Vec<String>)> {
        proptest::collection::vec(line(), 1..40)
            .prop_flat_map(|before| {
                let n = before.len();
                let ops = proptest::collection::vec(
                    (0..n, 0..3u8, proptest::collection::vec(line(), 0..4)),
                    1..5,
                );
                (Just(before), ops)
            })
            .prop_map(|(before, ops)| {
                let mut after = before.clone();
                for (pos, kind, new) in ops {
                    let pos = pos.min(after.len());
                    match kind {
                        0 => {
                            after.splice(pos..pos, new);
                        }
                        1 if pos < after.len() => {
                            after.remove(pos);
                        }
                        _ if pos < after.len() => {
                            after.splice(pos..pos + 1, new);
                        }
                        _ => {}
                    }
                }
                (before, after)
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn generated_blocks_apply_back_to_after(
            (before, after) in edit_script(),
            crlf in any::<bool>(),
            final_newline in any::<bool>(),
        ) {
            prop_assume!(before != after && !after.is_empty());
            prop_assume!(before.iter().any(|l| !l.trim().is_empty()));
            // Without a final newline a trailing empty line would not exist.
            prop_assume!(final_newline || (!before[before.len() - 1].is_empty() && !after[after.len() - 1].is_empty()));
            let eol = if crlf { "\r\n" } else { "\n" };
            let render = |lines: &[String]| {
                let mut s = lines.join(eol);
                if final_newline { s.push_str(eol); }
                s
            };
            let edit = blocks_for(&before, &after);
            prop_assume!(edit.is_some());
            let edit = edit.unwrap();
            let text = Text::decode(render(&before).as_bytes()).unwrap();
            let merged = merge(&text, &edit).unwrap();
            let bytes = text.encode(&merged.content).unwrap();
            let mut expected = render(&after);
            if !text.content().contains('\n') {
                // A file without a line break has no ending style; new lines get LF.
                expected = expected.replace("\r\n", "\n");
            }
            prop_assert_eq!(String::from_utf8(bytes).unwrap(), expected);
        }
    }
}
