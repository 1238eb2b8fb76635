//! Exact replacement, with `patch_file`'s semantics: `search_content` → `replace_content`
//! (LF-normalised, matched as an exact substring), a `replacements` list applied in order,
//! `allow_multiple`, a `start_line`/`end_line` scope, and `insert_line` + `insert_content`.
//!
//! More than one occurrence without `allow_multiple` is `AMBIGUOUS_MATCH` with the line range of
//! every occurrence; none is `NO_MATCH` with the closest region of the file.

use serde::Deserialize;

use super::matching::{self, Level};
use super::text::{join_lines, normalize_newlines, split_lines};
use super::{Error, ErrorCode, Merged, Result};

/// One search/replace pair.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Replacement {
    /// The exact text to find.
    pub search_content: String,
    /// The text to put in its place.
    pub replace_content: String,
}

/// The `patch_file` edit fields as they arrive (JSON), before validation.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawReplaceEdit {
    /// Text to find.
    pub search_content: Option<String>,
    /// Text to put in its place.
    pub replace_content: Option<String>,
    /// Several pairs, applied in order.
    pub replacements: Option<Vec<Replacement>>,
    /// 1-based line to insert at (-1 = end of file).
    pub insert_line: Option<i64>,
    /// The text to insert.
    pub insert_content: Option<String>,
    /// Restrict matching to lines from here (1-based, inclusive).
    pub start_line: Option<usize>,
    /// Restrict matching to lines up to here (1-based, inclusive).
    pub end_line: Option<usize>,
    /// Replace every occurrence instead of requiring exactly one.
    #[serde(default)]
    pub allow_multiple: bool,
}

/// Where to insert.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InsertAt {
    /// Before this 1-based line (the inserted text becomes line N).
    Line(usize),
    /// After the last line.
    End,
}

/// A validated exact-replace edit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplaceEdit {
    /// Replace each pair in order.
    Replace {
        /// The pairs (at least one, none with an empty search).
        pairs: Vec<Replacement>,
        /// Replace every occurrence.
        allow_multiple: bool,
        /// 1-based inclusive line scope.
        scope: Option<(usize, usize)>,
    },
    /// Insert text at a line.
    Insert {
        /// Where.
        at: InsertAt,
        /// What (LF-normalised).
        content: String,
    },
}

impl RawReplaceEdit {
    /// Validate into a [`ReplaceEdit`]: exactly one of the three forms, no empty search.
    pub(crate) fn validate(self) -> Result<ReplaceEdit> {
        let single = self.search_content.is_some() || self.replace_content.is_some();
        let list = self.replacements.is_some();
        let insert = self.insert_line.is_some() || self.insert_content.is_some();
        match (single, list, insert) {
            (true, false, false) => {
                let (Some(search), Some(replace)) = (self.search_content, self.replace_content)
                else {
                    return Err(Error::invalid_input(
                        "search_content and replace_content must be given together",
                    ));
                };
                let pairs = vec![Replacement {
                    search_content: search,
                    replace_content: replace,
                }];
                Self::replace(pairs, self.allow_multiple, self.start_line, self.end_line)
            }
            (false, true, false) => {
                let pairs = self.replacements.unwrap_or_default();
                if pairs.is_empty() {
                    return Err(Error::invalid_input("replacements is empty"));
                }
                Self::replace(pairs, self.allow_multiple, self.start_line, self.end_line)
            }
            (false, false, true) => {
                let (Some(line), Some(content)) = (self.insert_line, self.insert_content) else {
                    return Err(Error::invalid_input(
                        "insert_line and insert_content must be given together",
                    ));
                };
                let at = match line {
                    -1 => InsertAt::End,
                    n if n >= 1 => InsertAt::Line(n as usize),
                    n => {
                        return Err(Error::invalid_input(format!(
                            "insert_line must be a 1-based line number or -1 for the end, not {n}"
                        )));
                    }
                };
                if content.is_empty() {
                    return Err(Error::invalid_input("insert_content is empty"));
                }
                Ok(ReplaceEdit::Insert {
                    at,
                    content: normalize_newlines(&content).into_owned(),
                })
            }
            (false, false, false) => Err(Error::invalid_input(
                "nothing to do: give search_content + replace_content, replacements, or \
                 insert_line + insert_content",
            )),
            _ => Err(Error::invalid_input(
                "give only one of: search_content + replace_content, replacements, or \
                 insert_line + insert_content",
            )),
        }
    }

    fn replace(
        pairs: Vec<Replacement>,
        allow_multiple: bool,
        start: Option<usize>,
        end: Option<usize>,
    ) -> Result<ReplaceEdit> {
        let mut normalized = Vec::with_capacity(pairs.len());
        for (i, p) in pairs.into_iter().enumerate() {
            if p.search_content.is_empty() {
                return Err(Error::invalid_input(format!(
                    "replacement {}: search_content is empty; give the exact text to replace",
                    i + 1
                )));
            }
            normalized.push(Replacement {
                search_content: normalize_newlines(&p.search_content).into_owned(),
                replace_content: normalize_newlines(&p.replace_content).into_owned(),
            });
        }
        let scope = match (start, end) {
            (None, None) => None,
            (s, e) => {
                let s = s.unwrap_or(1).max(1);
                let e = e.unwrap_or(usize::MAX);
                if e < s {
                    return Err(Error::invalid_input(format!(
                        "end_line {e} is before start_line {s}"
                    )));
                }
                Some((s, e))
            }
        };
        Ok(ReplaceEdit::Replace {
            pairs: normalized,
            allow_multiple,
            scope,
        })
    }
}

/// Parse the JSON form used by `patchgate merge replace` (the `patch_file` fields).
pub fn parse_json(json: &str) -> Result<ReplaceEdit> {
    let raw: RawReplaceEdit = serde_json::from_str(json)
        .map_err(|e| Error::invalid_input(format!("the replace edit is not valid JSON: {e}")))?;
    raw.validate()
}

/// Apply a validated edit to LF-normalised content.
pub fn apply(content: &str, edit: &ReplaceEdit) -> Result<Merged> {
    match edit {
        ReplaceEdit::Insert { at, content: new } => insert(content, *at, new),
        ReplaceEdit::Replace {
            pairs,
            allow_multiple,
            scope,
        } => {
            let mut current = content.to_string();
            let mut applied = 0;
            let mut warnings = Vec::new();
            for (i, pair) in pairs.iter().enumerate() {
                let label = if pairs.len() == 1 {
                    "search_content".to_string()
                } else {
                    format!("replacement {} of {}", i + 1, pairs.len())
                };
                let n = replace_one(&mut current, pair, *allow_multiple, *scope, &label)?;
                if n > 1 {
                    warnings.push(format!("{label}: replaced {n} occurrences"));
                }
                applied += n;
            }
            Ok(Merged {
                content: current,
                warnings,
                applied,
                ..Default::default()
            })
        }
    }
}

fn insert(content: &str, at: InsertAt, new: &str) -> Result<Merged> {
    let (mut lines, final_newline) = split_lines(content);
    let (new_lines, _) = split_lines(new);
    let index = match at {
        InsertAt::End => lines.len(),
        InsertAt::Line(n) if n <= lines.len() + 1 => n - 1,
        InsertAt::Line(n) => {
            return Err(Error::invalid_input(format!(
                "insert_line {n} is past the end of the file, which has {} lines (use -1 to append)",
                lines.len()
            )));
        }
    };
    lines.splice(index..index, new_lines);
    Ok(Merged {
        content: join_lines(&lines, final_newline),
        warnings: Vec::new(),
        applied: 1,
        ..Default::default()
    })
}

/// Byte offset of the start of each line (plus the end of the content).
fn line_starts(content: &str) -> Vec<usize> {
    let mut starts = vec![0];
    starts.extend(content.match_indices('\n').map(|(i, _)| i + 1));
    starts
}

fn line_of(starts: &[usize], offset: usize) -> usize {
    match starts.binary_search(&offset) {
        Ok(i) => i + 1,
        Err(i) => i,
    }
}

fn replace_one(
    current: &mut String,
    pair: &Replacement,
    allow_multiple: bool,
    scope: Option<(usize, usize)>,
    label: &str,
) -> Result<usize> {
    let (lo, hi) = match scope {
        None => (0, current.len()),
        Some((s, e)) => {
            let starts = line_starts(current);
            let lo = starts.get(s - 1).copied().unwrap_or(current.len());
            let hi = starts.get(e).copied().unwrap_or(current.len());
            (lo, hi)
        }
    };
    let search = pair.search_content.as_str();
    let hits: Vec<usize> = current[lo..hi]
        .match_indices(search)
        .map(|(i, _)| lo + i)
        .collect();
    if hits.is_empty() {
        return Err(no_match(current, search, scope, label));
    }
    if hits.len() > 1 && !allow_multiple {
        return Err(Error::new(
            ErrorCode::AmbiguousMatch,
            format!(
                "{label} occurs {} times: {}. Include more surrounding text so it occurs once, \
                 narrow it with start_line/end_line, or set allow_multiple to replace all.",
                hits.len(),
                places(current, search, &hits)
            ),
        ));
    }
    let mut out = String::with_capacity(current.len() + pair.replace_content.len() * hits.len());
    let mut last = 0;
    for &h in &hits {
        out.push_str(&current[last..h]);
        out.push_str(&pair.replace_content);
        last = h + search.len();
    }
    out.push_str(&current[last..]);
    *current = out;
    Ok(hits.len())
}

/// At most this many of an ambiguous search's occurrences are named.
const PLACES_NAMED: usize = 20;

/// Where `search` occurs (`hits`, byte offsets in `content`), for a refusal: each line range
/// once, with the columns of the occurrences it holds when it holds several (`line 11
/// (columns 5, 9, 13)`), since a search text may occur more than once on one line.
fn places(content: &str, search: &str, hits: &[usize]) -> String {
    let starts = line_starts(content);
    let range_of = |off: usize| {
        let first = line_of(&starts, off);
        let last = line_of(&starts, off + search.len().saturating_sub(1));
        let label = if first == last {
            format!("line {first}")
        } else {
            format!("lines {first}-{last}")
        };
        let column = content[starts[first - 1]..off].chars().count() + 1;
        (label, column)
    };
    let mut groups: Vec<(String, Vec<usize>)> = Vec::new();
    for &hit in hits.iter().take(PLACES_NAMED) {
        let (label, column) = range_of(hit);
        match groups.last_mut() {
            Some((last, columns)) if *last == label => columns.push(column),
            _ => groups.push((label, vec![column])),
        }
    }
    let named: Vec<String> = groups
        .into_iter()
        .map(|(label, columns)| match columns.as_slice() {
            [_] => label,
            _ => {
                let columns: Vec<String> = columns.iter().map(usize::to_string).collect();
                format!("{label} (columns {})", columns.join(", "))
            }
        })
        .collect();
    let more = hits.len().saturating_sub(PLACES_NAMED);
    if more > 0 {
        format!("{} and {more} more", named.join(", "))
    } else {
        named.join(", ")
    }
}

fn no_match(current: &str, search: &str, scope: Option<(usize, usize)>, label: &str) -> Error {
    let (lines, _) = split_lines(current);
    let (needle, _) = split_lines(search);
    let needle: Vec<String> = needle.into_iter().map(str::to_string).collect();
    let where_ = match scope {
        Some((s, e)) if e == usize::MAX => format!(" in lines {s}-end"),
        Some((s, e)) => format!(" in lines {s}-{e}"),
        None => String::new(),
    };
    let mut message =
        format!("{label} was not found{where_} (it must match exactly, whitespace included).");
    let loose = matching::find_matches(&lines, &needle, Level::BlankLines);
    if let Some(m) = loose.first() {
        message.push_str(&format!(
            " It matches {} when whitespace is ignored; copy those lines exactly:\n{}",
            m.lines_label(),
            matching::quote_lines(&lines, m.start, m.end, 15)
        ));
    } else if let Some((start, end)) = matching::closest_region(&lines, &needle) {
        message.push_str(&format!(
            " The closest region is lines {}-{}:\n{}",
            start + 1,
            end,
            matching::quote_lines(&lines, start, end, 15)
        ));
    }
    Error::new(ErrorCode::NoMatch, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(json: serde_json::Value) -> ReplaceEdit {
        serde_json::from_value::<RawReplaceEdit>(json)
            .unwrap()
            .validate()
            .unwrap()
    }

    #[test]
    fn single_replacement_counts_one() {
        let e = edit(serde_json::json!({"search_content": "b = 2", "replace_content": "b = 3"}));
        let m = apply("a = 1\nb = 2\n", &e).unwrap();
        assert_eq!(m.content, "a = 1\nb = 3\n");
        assert_eq!(m.applied, 1);
    }

    #[test]
    fn two_occurrences_are_ambiguous_with_line_ranges() {
        let e = edit(serde_json::json!({"search_content": "x\ny", "replace_content": "z"}));
        let err = apply("x\ny\nq\nx\ny\n", &e).unwrap_err();
        assert_eq!(err.code, ErrorCode::AmbiguousMatch);
        assert!(
            err.message.contains("lines 1-2") && err.message.contains("lines 4-5"),
            "{}",
            err.message
        );
    }

    #[test]
    fn occurrences_on_one_line_are_named_by_column_not_listed_as_the_same_line() {
        // `x` three times on line 2: once "line 2, line 2, line 2", which names no place.
        let e = edit(serde_json::json!({"search_content": "x", "replace_content": "y"}));
        let err = apply("a\nlet x = x + x;\nx\n", &e).unwrap_err();
        assert_eq!(err.code, ErrorCode::AmbiguousMatch);
        assert!(
            err.message
                .contains("occurs 4 times: line 2 (columns 5, 9, 13), line 3."),
            "{}",
            err.message
        );
    }

    #[test]
    fn allow_multiple_replaces_all_and_counts_them() {
        let e = edit(
            serde_json::json!({"search_content": "foo", "replace_content": "bar", "allow_multiple": true}),
        );
        let m = apply("foo foo\nfoo\n", &e).unwrap();
        assert_eq!(m.content, "bar bar\nbar\n");
        assert_eq!(m.applied, 3);
    }

    #[test]
    fn scope_restricts_the_search() {
        let e = edit(
            serde_json::json!({"search_content": "x", "replace_content": "y", "start_line": 3, "end_line": 3}),
        );
        let m = apply("x\nx\nx\n", &e).unwrap();
        assert_eq!(m.content, "x\nx\ny\n");
    }

    #[test]
    fn replacements_apply_in_order_and_all_or_nothing() {
        let e = edit(serde_json::json!({"replacements": [
            {"search_content": "a", "replace_content": "b"},
            {"search_content": "b", "replace_content": "c"}]}));
        assert_eq!(apply("a\n", &e).unwrap().content, "c\n");
        let bad = edit(serde_json::json!({"replacements": [
            {"search_content": "a", "replace_content": "b"},
            {"search_content": "zzz", "replace_content": "c"}]}));
        let err = apply("a\n", &bad).unwrap_err();
        assert_eq!(err.code, ErrorCode::NoMatch);
        assert!(err.message.starts_with("replacement 2 of 2"));
    }

    #[test]
    fn crlf_search_is_normalised() {
        let e = edit(serde_json::json!({"search_content": "a\r\nb", "replace_content": "c\r\nd"}));
        assert_eq!(apply("a\nb\n", &e).unwrap().content, "c\nd\n");
    }

    #[test]
    fn insert_at_a_line_and_at_the_end() {
        let e = edit(serde_json::json!({"insert_line": 2, "insert_content": "new\n"}));
        assert_eq!(apply("a\nb\n", &e).unwrap().content, "a\nnew\nb\n");
        let e = edit(serde_json::json!({"insert_line": -1, "insert_content": "z"}));
        assert_eq!(apply("a\nb\n", &e).unwrap().content, "a\nb\nz\n");
        let e = edit(serde_json::json!({"insert_line": 9, "insert_content": "z"}));
        assert_eq!(apply("a\n", &e).unwrap_err().code, ErrorCode::InvalidInput);
    }

    #[test]
    fn whitespace_only_difference_is_pointed_out() {
        let e = edit(serde_json::json!({"search_content": "if x:\n  y()", "replace_content": "z"}));
        let err = apply("if x:\n    y()\n", &e).unwrap_err();
        assert_eq!(err.code, ErrorCode::NoMatch);
        assert!(
            err.message.contains("whitespace is ignored"),
            "{}",
            err.message
        );
    }

    #[test]
    fn bad_combinations_are_invalid_input() {
        for json in [
            serde_json::json!({}),
            serde_json::json!({"search_content": ""}),
            serde_json::json!({"search_content": "", "replace_content": "x"}),
            serde_json::json!({"search_content": "a", "replace_content": "b", "insert_line": 1, "insert_content": "x"}),
            serde_json::json!({"insert_line": 0, "insert_content": "x"}),
        ] {
            let raw: RawReplaceEdit = serde_json::from_value(json.clone()).unwrap();
            assert_eq!(
                raw.validate().unwrap_err().code,
                ErrorCode::InvalidInput,
                "{json}"
            );
        }
    }
}
