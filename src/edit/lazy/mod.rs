//! Lazy snippets (`fast_apply`, DESIGN §5.1): the edited region of a file with unchanged
//! stretches elided by placeholder comments, merged deterministically — no model call.
//!
//! 1. Strip an outer code fence (not for Markdown), normalise line endings, classify lines
//!    (see [`snippet`]).
//! 2. Align the whole snippet against the whole file in one pass (see [`align`]).
//! 3. Decline rather than guess: a run of snippet lines (a segment) with no line from the file
//!    to anchor it, or one that fits another place just as well, is `NEEDS_MORE_CONTEXT`
//!    naming the candidate line ranges.
//! 4. Guards on the result: `MARKER_LEAKAGE`, `TRUNCATION_DETECTED`, `BLAST_RADIUS_EXCEEDED`,
//!    `APPLY_NOOP`.

pub mod align;
pub mod outline;
pub mod snippet;

use std::collections::HashSet;

use self::align::{Facts, Op};
use self::outline::Hint;
use self::snippet::{Item, Snippet};
use super::matching::{Reindent, leading_ws};
use super::text::{Text, join_lines, normalize_newlines, split_lines};
use super::{Error, ErrorCode, Hints, Merged, Result};

/// Share of characters a merge may lose before it counts as truncation (with lines below).
const TRUNCATION_CHARS: f64 = 0.6;
/// Share of lines a merge may lose before it counts as truncation (with chars above).
const TRUNCATION_LINES: f64 = 0.5;
/// Share of the file's lines a snippet edit may change.
const BLAST_RADIUS: f64 = 0.8;
/// Files shorter than this are not held to the truncation and blast-radius guards.
const GUARD_MIN_LINES: usize = 10;

fn extension(hints: &Hints<'_>) -> Option<String> {
    let path = hints.path?;
    let name = path.rsplit(['/', '\\']).next()?;
    name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase())
}

fn prepare(snippet: &str, hints: &Hints<'_>) -> String {
    let s = normalize_newlines(snippet);
    if snippet::is_markdown(extension(hints).as_deref()) {
        s.into_owned()
    } else {
        snippet::strip_fence(&s).to_string()
    }
}

/// The content of a new file written from a snippet: as given, but placeholders are refused
/// (there is nothing for them to keep).
pub fn create(snippet: &str, hints: &Hints<'_>) -> Result<Merged> {
    let body = prepare(snippet, hints);
    if body.trim().is_empty() {
        return Err(Error::invalid_input("edit_snippet is empty"));
    }
    if let Some((n, line)) = body
        .lines()
        .enumerate()
        .find(|(_, l)| snippet::is_placeholder(l, false) || snippet::remove_directive(l).is_some())
    {
        return Err(Error::invalid_input(format!(
            "the file does not exist yet, so snippet line {} `{}` has nothing to keep or remove; \
             send the complete content of the new file",
            n + 1,
            line.trim()
        )));
    }
    Ok(Merged {
        content: body,
        warnings: vec!["new file".to_string()],
        applied: 1,
    })
}

/// Merge a lazy snippet into LF-normalised `content` (an empty file is written as new).
pub fn merge(content: &str, snippet_text: &str, hints: &Hints<'_>) -> Result<Merged> {
    if snippet_text.trim().is_empty() {
        return Err(Error::invalid_input("edit_snippet is empty"));
    }
    if content.is_empty() {
        return create(snippet_text, hints);
    }
    let body = prepare(snippet_text, hints);
    let (lines, final_newline) = split_lines(content);
    let file_keys: HashSet<String> = lines.iter().map(|l| snippet::key(l)).collect();
    let parsed = snippet::parse(&body, &file_keys);
    if parsed.code_lines().all(|l| l.trim().is_empty()) && parsed.removals().next().is_none() {
        let defs = outline::top_level(&lines);
        let listing = if defs.is_empty() {
            String::new()
        } else {
            format!(" The file's top-level definitions:\n{}", defs.iter().take(40).cloned().collect::<Vec<_>>().join("\n"))
        };
        return Err(Error::new(
            ErrorCode::NeedsMoreContext,
            format!(
                "the snippet holds only placeholders, so there is nothing to place; include the \
                 changed lines with 1-3 unchanged lines from the file above and below them.{listing}"
            ),
        ));
    }
    let hint = hints.instruction.and_then(|i| outline::read_hint(i, &lines));
    if let Some(merged) = place_by_hint(&lines, final_newline, &parsed, &file_keys, hint) {
        return finish(content, &lines, merged, &parsed, &file_keys, Vec::new());
    }
    let indent = Text::from_content(content).indent();
    let result = if let Some(Hint::Within(a, b)) = hint {
        // Merge inside the named definition; the rest of the file stays as it is.
        merge_lines(&lines[a..b], &parsed, &file_keys, indent)
            .map(|(mut out, warnings)| {
                let mut all: Vec<String> = lines[..a].iter().map(|s| s.to_string()).collect();
                all.append(&mut out);
                all.extend(lines[b..].iter().map(|s| s.to_string()));
                (all, warnings)
            })
            .or_else(|_| merge_lines(&lines, &parsed, &file_keys, indent))
    } else {
        merge_lines(&lines, &parsed, &file_keys, indent)
    };
    let (out, warnings) = result?;
    let merged = join_lines(&out, final_newline || out.is_empty());
    finish(content, &lines, merged, &parsed, &file_keys, warnings)
}

/// A snippet of new code only, placed where the instruction says ("at the end", "after
/// imports", "at the top").
fn place_by_hint(
    lines: &[&str],
    final_newline: bool,
    parsed: &Snippet,
    file_keys: &HashSet<String>,
    hint: Option<Hint>,
) -> Option<String> {
    let at = match hint? {
        Hint::End => lines.len(),
        Hint::Top => 0,
        Hint::AfterImports(k) => k,
        Hint::Within(..) => return None,
    };
    let code: Vec<&str> = parsed.code_lines().collect();
    if parsed.removals().next().is_some() || code.iter().any(|l| !l.trim().is_empty() && file_keys.contains(&snippet::key(l))) {
        return None;
    }
    let mut out: Vec<&str> = lines[..at].to_vec();
    out.extend(code.iter().copied());
    out.extend(lines[at..].iter().copied());
    Some(join_lines(&out, final_newline))
}

/// Lines forced out by `remove NAME` directives.
fn forced_deletions(lines: &[&str], parsed: &Snippet) -> Result<Vec<bool>> {
    let mut forced = vec![false; lines.len()];
    for name in parsed.removals() {
        let defs = outline::find_definitions(lines, name);
        match defs.as_slice() {
            [] => {
                return Err(Error::new(
                    ErrorCode::NoMatch,
                    format!("`remove {name}`: no definition of `{name}` was found in the file"),
                ));
            }
            [(a, b)] => {
                let (a, mut b) = (*a, *b);
                // Take one separating blank line along so no double gap is left.
                let blank_before = a == 0 || lines[a - 1].trim().is_empty();
                if blank_before && b < lines.len() && lines[b].trim().is_empty() {
                    b += 1;
                }
                forced[a..b].iter_mut().for_each(|f| *f = true);
            }
            many => {
                let ranges: Vec<String> = many.iter().map(|(a, b)| format!("lines {}-{}", a + 1, b)).collect();
                return Err(Error::new(
                    ErrorCode::NeedsMoreContext,
                    format!(
                        "`remove {name}`: `{name}` is defined in {} places ({}); show the lines \
                         around the one to delete instead",
                        many.len(),
                        ranges.join(", ")
                    ),
                ));
            }
        }
    }
    Ok(forced)
}

/// A maximal run of snippet code lines between placeholders.
#[derive(Debug, Default, Clone)]
struct Segment {
    items: (usize, usize),
    matches: Vec<(usize, usize)>,
    span: Option<(usize, usize)>,
    /// Placed against the file's start or end by an implicit edge placeholder that kept
    /// nothing (the strict reading), which fixes its position.
    strict: bool,
}

fn merge_lines(
    lines: &[&str],
    parsed: &Snippet,
    file_keys: &HashSet<String>,
    indent: super::text::Indent,
) -> Result<(Vec<String>, Vec<String>)> {
    let forced = forced_deletions(lines, parsed)?;
    let items = &parsed.items;
    let facts = Facts::new(lines, items);
    let ops = align::align(items, lines, &facts, &forced);
    if std::env::var_os("PG_DEBUG").is_some() {
        for op in &ops {
            let show = |i: usize| match &items[i] { Item::Code(s) => s.clone(), other => format!("{other:?}") };
            match *op {
                Op::Keep(_) => {}
                Op::Match(i, j) => eprintln!("MATCH {:>4} {}", j + 1, show(i)),
                Op::Subst(i, j) => eprintln!("SUBST {:>4} {} <- {}", j + 1, show(i), lines[j]),
                Op::Insert(i) => eprintln!("INS        {}", show(i)),
                Op::Delete(j) => eprintln!("DEL   {:>4} {}", j + 1, lines[j]),
                Op::Leave(i) => eprintln!("LEAVE      {}", show(i)),
            }
        }
    }

    // Segments and what the alignment did with them.
    let mut seg_of = vec![usize::MAX; items.len()];
    let mut segments: Vec<Segment> = Vec::new();
    let mut i = 0;
    while i < items.len() {
        if matches!(items[i], Item::Code(_)) {
            let start = i;
            while i < items.len() && matches!(items[i], Item::Code(_)) {
                seg_of[i] = segments.len();
                i += 1;
            }
            segments.push(Segment {
                items: (start, i),
                ..Segment::default()
            });
        } else {
            i += 1;
        }
    }
    let mut state = 0usize;
    let mut kept_at_start = 0usize;
    let mut kept_at_end = 0usize;
    let mut deleted: Vec<usize> = Vec::new();
    for op in &ops {
        let (seg, j) = match *op {
            Op::Match(i, j) => {
                state = i + 1;
                if !facts.file[j].blank {
                    segments[seg_of[i]].matches.push((i, j));
                }
                (Some(seg_of[i]), Some(j))
            }
            Op::Subst(i, j) => {
                state = i + 1;
                (Some(seg_of[i]), Some(j))
            }
            Op::Insert(i) | Op::Leave(i) => {
                state = i + 1;
                (None, None)
            }
            Op::Delete(j) => {
                if !forced[j] {
                    deleted.push(j);
                }
                (items.get(state).and_then(|_| seg_of.get(state)).copied().filter(|&s| s != usize::MAX), Some(j))
            }
            Op::Keep(_) => {
                if state == 0 {
                    kept_at_start += 1;
                }
                if state + 1 == items.len() {
                    kept_at_end += 1;
                }
                (None, None)
            }
        };
        if let (Some(s), Some(j)) = (seg, j) {
            let span = segments[s].span.get_or_insert((j, j + 1));
            span.0 = span.0.min(j);
            span.1 = span.1.max(j + 1);
        }
    }
    if let Some(first) = segments.first_mut() {
        first.strict |= !parsed.explicit_start && kept_at_start == 0;
    }
    if let Some(last) = segments.last_mut() {
        last.strict |= !parsed.explicit_end && kept_at_end == 0;
    }
    check_ambiguity(lines, parsed, &facts, &segments)?;

    // Re-indentation per segment, learnt from its matched lines.
    let edit_lines = |seg: &Segment| -> Vec<&str> {
        (seg.items.0..seg.items.1)
            .filter_map(|i| match &items[i] {
                Item::Code(s) => Some(s.as_str()),
                _ => None,
            })
            .collect()
    };
    let mut plans: Vec<Option<Reindent>> = segments
        .iter()
        .map(|seg| {
            (!seg.matches.is_empty()).then(|| {
                let pairs = seg.matches.iter().map(|&(i, j)| match &items[i] {
                    Item::Code(s) => (s.as_str(), lines[j]),
                    _ => ("", lines[j]),
                });
                Reindent::plan(pairs, &edit_lines(seg), indent)
            })
        })
        .collect();
    let fallback = plans.iter().flatten().next().cloned().unwrap_or_else(Reindent::identity);
    for p in plans.iter_mut() {
        if p.is_none() {
            *p = Some(fallback.clone());
        }
    }
    let mut warnings = Vec::new();
    for (k, p) in plans.iter().enumerate() {
        if let Some(p) = p
            && !p.is_identity()
        {
            let seg = &segments[k];
            let lines_changed = seg.matches.iter().filter(|&&(i, j)| match &items[i] {
                Item::Code(s) => leading_ws(s) != leading_ws(lines[j]),
                _ => false,
            });
            if lines_changed.count() > 0 {
                warnings.push(format!(
                    "snippet lines {}-{} were re-indented to match the file",
                    seg.items.0 + 1 - usize::from(!parsed.explicit_start),
                    seg.items.1 - usize::from(!parsed.explicit_start)
                ));
            }
        }
    }
    if !deleted.is_empty() {
        warnings.push(format!(
            "{} line(s) of the file between anchors that are adjacent in the snippet were deleted ({})",
            deleted.len(),
            ranges_label(&deleted)
        ));
    }

    let mut out: Vec<String> = Vec::with_capacity(lines.len() + items.len());
    let plan_for = |i: usize| plans[seg_of[i]].as_ref().unwrap_or(&fallback);
    for op in &ops {
        match *op {
            Op::Keep(j) => out.push(lines[j].to_string()),
            Op::Match(i, j) => match &items[i] {
                // A matched line keeps the file's bytes unless the snippet changed it: spacing
                // inside the line (alignment, re-spaced operators), or indentation that differs
                // from the segment's own offset against the file.
                Item::Code(s) => {
                    let placed = plan_for(i).apply(s);
                    if same_but_indentation(s, lines[j]) && leading_ws(&placed) == leading_ws(lines[j]) {
                        out.push(lines[j].to_string());
                    } else {
                        out.push(placed);
                    }
                }
                _ => out.push(lines[j].to_string()),
            },
            Op::Subst(i, _) | Op::Insert(i) => {
                if let Item::Code(s) = &items[i] {
                    out.push(plan_for(i).apply(s));
                }
            }
            Op::Delete(_) | Op::Leave(_) => {}
        }
    }
    // Inserted lines that look like placeholders the reader did not take.
    for op in &ops {
        if let Op::Subst(i, _) | Op::Insert(i) = *op
            && let Item::Code(s) = &items[i]
            && snippet::looks_like_marker(s)
            && !file_keys.contains(&snippet::key(s))
        {
            return Err(Error::new(
                ErrorCode::MarkerLeakage,
                format!(
                    "snippet line `{}` looks like a placeholder but would be written into the file \
                     as text; use `// ... existing code ...` (in the file's comment syntax) on a \
                     line of its own",
                    s.trim()
                ),
            ));
        }
    }
    Ok((out, warnings))
}

/// Equal but for indentation, trailing whitespace and look-alike characters.
fn same_but_indentation(a: &str, b: &str) -> bool {
    use super::matching::fold_confusables;
    a.trim() == b.trim() || fold_confusables(a).trim() == fold_confusables(b).trim()
}

fn ranges_label(lines: &[usize]) -> String {
    let mut sorted = lines.to_vec();
    sorted.sort_unstable();
    let mut parts: Vec<String> = Vec::new();
    let mut k = 0;
    while k < sorted.len() {
        let start = sorted[k];
        let mut end = start;
        while k + 1 < sorted.len() && sorted[k + 1] == end + 1 {
            k += 1;
            end = sorted[k];
        }
        parts.push(if start == end {
            format!("line {}", start + 1)
        } else {
            format!("lines {}-{}", start + 1, end + 1)
        });
        k += 1;
    }
    parts.join(", ")
}

/// Decline segments that have nothing to anchor them, or that fit elsewhere as well.
fn check_ambiguity(lines: &[&str], parsed: &Snippet, facts: &Facts, segments: &[Segment]) -> Result<()> {
    let items = &parsed.items;
    let offset = usize::from(!parsed.explicit_start);
    let label = |seg: &Segment| {
        let first = (seg.items.0..seg.items.1)
            .find_map(|i| match &items[i] {
                Item::Code(s) if !s.trim().is_empty() => Some(s.trim()),
                _ => None,
            })
            .unwrap_or("");
        format!(
            "snippet lines {}-{} (starting `{}`)",
            seg.items.0 + 1 - offset,
            seg.items.1 - offset,
            first.chars().take(60).collect::<String>()
        )
    };
    for (k, seg) in segments.iter().enumerate() {
        let at_start = k == 0 && !parsed.explicit_start;
        let at_end = k + 1 == segments.len() && !parsed.explicit_end;
        let anchored = seg
            .matches
            .iter()
            .any(|&(i, _)| !facts.items[i].trivial);
        if !anchored && !(at_start || at_end) {
            let new_only = seg.matches.is_empty();
            return Err(Error::new(
                ErrorCode::NeedsMoreContext,
                format!(
                    "{} {}; add 1-3 unchanged lines from just above and below the change so it \
                     can be placed",
                    label(seg),
                    if new_only {
                        "contain no line from the file".to_string()
                    } else {
                        "match only lines that occur all over the file (braces, blank lines, `return`)".to_string()
                    }
                ),
            ));
        }
        if seg.strict || seg.matches.is_empty() {
            continue;
        }
        let lo = if k == 0 { 0 } else { segments[..k].iter().rev().find_map(|s| s.span).map_or(0, |s| s.1) };
        let hi = segments[k + 1..].iter().find_map(|s| s.span).map_or(lines.len(), |s| s.0);
        let (_, j0) = seg.matches[0];
        let pattern: Vec<(usize, u32)> = seg
            .matches
            .iter()
            .map(|&(i, j)| (j - j0, facts.items[i].id))
            .collect();
        let span = pattern.last().map_or(1, |p| p.0 + 1);
        let mut alternatives: Vec<usize> = Vec::new();
        if hi >= lo + span {
            for p in lo..=hi - span {
                if p != j0 && pattern.iter().all(|&(off, id)| facts.file[p + off].id == id) {
                    alternatives.push(p);
                }
            }
        }
        if !alternatives.is_empty() {
            let mut places: Vec<String> = vec![format!("lines {}-{}", j0 + 1, j0 + span)];
            places.extend(alternatives.iter().take(10).map(|p| format!("lines {}-{}", p + 1, p + span)));
            return Err(Error::new(
                ErrorCode::NeedsMoreContext,
                format!(
                    "{} fit {} places equally well: {}; add 1-3 unchanged lines from the file that \
                     occur only around the intended place",
                    label(seg),
                    alternatives.len() + 1,
                    places.join(", ")
                ),
            ));
        }
    }
    Ok(())
}

/// The guards on a merged result.
fn finish(
    original: &str,
    lines: &[&str],
    merged: String,
    parsed: &Snippet,
    file_keys: &HashSet<String>,
    warnings: Vec<String>,
) -> Result<Merged> {
    let has_removals = parsed.removals().next().is_some();
    let new_lines = parsed
        .code_lines()
        .filter(|l| !l.trim().is_empty() && !file_keys.contains(&snippet::key(l)))
        .count();
    if merged == original {
        if new_lines > 0 || has_removals {
            return Err(Error::new(
                ErrorCode::ApplyNoop,
                "the merge left the file unchanged although the snippet has new lines or a \
                 remove directive; check that the anchor lines are copied exactly from the \
                 current file",
            ));
        }
        return Ok(Merged {
            content: merged,
            warnings: vec!["the snippet matches the file: nothing to change".to_string()],
            applied: 0,
        });
    }
    let (new_split, _) = split_lines(&merged);
    if !has_removals && lines.len() >= GUARD_MIN_LINES {
        let chars_lost = 1.0 - merged.len() as f64 / original.len().max(1) as f64;
        let lines_lost = 1.0 - new_split.len() as f64 / lines.len() as f64;
        if chars_lost > TRUNCATION_CHARS && lines_lost > TRUNCATION_LINES {
            return Err(Error::new(
                ErrorCode::TruncationDetected,
                format!(
                    "the merge would shrink the file from {} to {} lines; elide unchanged code \
                     with `... existing code ...` placeholders, or delete explicitly with \
                     `remove NAME`",
                    lines.len(),
                    new_split.len()
                ),
            ));
        }
    }
    if lines.len() >= GUARD_MIN_LINES {
        let diff = crate::edit::matching::changed_old_lines(lines, &new_split);
        if diff as f64 > BLAST_RADIUS * lines.len() as f64 {
            return Err(Error::new(
                ErrorCode::BlastRadiusExceeded,
                format!(
                    "the edit would change {diff} of the file's {} lines; split it into smaller \
                     edits, or write the whole file with a full-content tool",
                    lines.len()
                ),
            ));
        }
    }
    Ok(Merged {
        content: merged,
        warnings,
        applied: 1,
    })
}

#[cfg(test)]
mod tests;
