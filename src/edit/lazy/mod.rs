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
mod scratch;
pub mod snippet;

use std::borrow::Cow;

use self::align::{Facts, FileIndex, Op, Pinning};
use self::outline::Hint;
use self::snippet::{Item, Snippet};
use super::matching::{Reindent, leading_ws};
use super::text::{join_lines, normalize_newlines, split_lines};
use super::{Error, ErrorCode, Hints, Merged, Result};

/// How an alignment was solved: strict edges, and pinning.
type Mode = (bool, Pinning);

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
    merge_indented(
        content,
        &|| super::text::detect_indent(content),
        snippet_text,
        hints,
    )
}

/// [`merge`] for a file whose indentation style is known already.
pub fn merge_indented(
    content: &str,
    indent: &dyn Fn() -> super::text::Indent,
    snippet_text: &str,
    hints: &Hints<'_>,
) -> Result<Merged> {
    if snippet_text.trim().is_empty() {
        return Err(Error::invalid_input("edit_snippet is empty"));
    }
    if content.is_empty() {
        return create(snippet_text, hints);
    }
    let body = prepare(snippet_text, hints);
    let (lines, final_newline) = split_lines(content);
    let file_keys = FileIndex::new(&lines);
    let parsed = pin_closers(snippet::parse(&body, &file_keys), &lines, &file_keys);
    if parsed.code_lines().all(|l| l.trim().is_empty()) && parsed.removals().next().is_none() {
        let defs = outline::top_level(&lines);
        let listing = if defs.is_empty() {
            String::new()
        } else {
            format!(
                " The file's top-level definitions:\n{}",
                defs.iter().take(40).cloned().collect::<Vec<_>>().join("\n")
            )
        };
        return Err(Error::new(
            ErrorCode::NeedsMoreContext,
            format!(
                "the snippet holds only placeholders, so there is nothing to place; include the \
                 changed lines with 1-3 unchanged lines from the file above and below them.{listing}"
            ),
        ));
    }
    let hint = hints
        .instruction
        .and_then(|i| outline::read_hint(i, &lines));
    if let Some(merged) = place_by_hint(&lines, final_newline, &parsed, &file_keys, hint) {
        return finish(content, &lines, merged, &parsed, &file_keys, Vec::new(), 0);
    }
    let result = match (
        merge_lines(&lines, &file_keys, &parsed, &file_keys, indent),
        hint,
    ) {
        // The snippet fits several places: the definition the instruction names decides,
        // merging inside it while the rest of the file stays as it is. (Only then: a
        // snippet that reaches beyond the named definition must see the whole file.)
        (Err(e), Some(Hint::Within(a, b))) if e.code == ErrorCode::NeedsMoreContext => {
            let inside = FileIndex::new(&lines[a..b]);
            merge_lines(&lines[a..b], &inside, &parsed, &file_keys, indent)
                .map(|mut inner| {
                    let mut all: Vec<Cow<str>> =
                        lines[..a].iter().map(|&s| Cow::Borrowed(s)).collect();
                    all.append(&mut inner.out);
                    all.extend(lines[b..].iter().map(|&s| Cow::Borrowed(s)));
                    inner.out = all;
                    inner
                })
                .map_err(|_| e)
        }
        (result, _) => result,
    };
    let LinesMerge {
        out,
        warnings,
        changed_old,
    } = result?;
    let merged = join_lines(&out, final_newline || out.is_empty());
    finish(
        content,
        &lines,
        merged,
        &parsed,
        &file_keys,
        warnings,
        changed_old,
    )
}

fn squash(line: &str) -> String {
    line.chars().filter(|c| !c.is_whitespace()).collect()
}

/// A placeholder inside a block followed by the block's closing line (`}`) says "keep the rest
/// of the body": the closer belongs to the block whose opening line the snippet shows, not to
/// any later `}` of the file. When that opener occurs once in the file, the file's own last
/// lines of the block are added before the closer (they are the lines the placeholder keeps
/// anyway), so the closer can only be placed at the block's end.
fn pin_closers(mut parsed: Snippet, lines: &[&str], index: &FileIndex) -> Snippet {
    let indent = |l: &str| l.len() - l.trim_start().len();
    let mut idx = 2;
    while idx < parsed.items.len() {
        let Item::Code(closer) = &parsed.items[idx] else {
            idx += 1;
            continue;
        };
        if !closer.trim_start().starts_with(['}', ')', ']']) {
            idx += 1;
            continue;
        }
        let closer_key = squash(closer);
        let is_closer = !closer_key.is_empty()
            && closer_key
                .trim_start_matches(['}', ')', ']'])
                .chars()
                .all(|c| matches!(c, ';' | ',' | ')'))
            && closer_key.starts_with(['}', ')', ']']);
        // The placeholder, directly above the closer or above a few last lines of the body.
        let ph = (idx.saturating_sub(1 + MAX_SHOWN_TAIL)..idx)
            .rev()
            .take_while(|&k| match &parsed.items[k] {
                Item::Code(c) => indent(c) > indent(closer) || c.trim().is_empty(),
                Item::Placeholder {
                    implicit: false, ..
                } => true,
                _ => false,
            })
            .find(|&k| matches!(parsed.items[k], Item::Placeholder { .. }));
        let Some(ph) = ph.filter(|&ph| ph >= 1 && is_closer) else {
            idx += 1;
            continue;
        };
        // The snippet's opener: the nearest code line above at the closer's indentation.
        let above: Vec<(usize, &str)> = parsed.items[..ph]
            .iter()
            .enumerate()
            .rev()
            .take_while(|(_, it)| matches!(it, Item::Code(_)))
            .filter_map(|(k, it)| match it {
                Item::Code(c) if !c.trim().is_empty() => Some((k, c.as_str())),
                _ => None,
            })
            .collect();
        let Some(&(opener_at, opener)) = above.iter().find(|(_, c)| indent(c) <= indent(closer))
        else {
            idx += 1;
            continue;
        };
        let opens =
            opener.trim_end().ends_with(['{', '(', '[']) && indent(opener) == indent(closer);
        let opener_key = snippet::key(opener);
        if !opens || align::is_trivial(opener) || index.count(opener_key) != 1 {
            idx += 1;
            continue;
        }
        let opener_id = index.id_of(opener_key);
        let Some(o) = (0..lines.len()).find(|&j| Some(index.line_id(j)) == opener_id) else {
            idx += 1;
            continue;
        };
        let (_, end) = outline::block_extent(lines, o);
        if end == 0 || end <= o + 1 || squash(lines[end - 1]) != closer_key {
            idx += 1;
            continue;
        }
        // The body lines the snippet shows after the placeholder must be the block's last
        // lines; the kept tail ends where they begin.
        let shown: Vec<String> = parsed.items[ph + 1..idx]
            .iter()
            .filter_map(|it| match it {
                Item::Code(c) if !c.trim().is_empty() => Some(squash(c)),
                _ => None,
            })
            .collect();
        let mut e = end - 1;
        let mut tail_fits = true;
        for key in shown.iter().rev() {
            let Some(j) = (o + 1..e).rev().find(|&j| !lines[j].trim().is_empty()) else {
                tail_fits = false;
                break;
            };
            if squash(lines[j]) != *key {
                tail_fits = false;
                break;
            }
            e = j;
        }
        if !tail_fits {
            idx += 1;
            continue;
        }
        // The last snippet line of the body that is a file line, and the snippet lines after
        // it (changed ones): the kept tail must lie past what they can cover.
        let body: Vec<&str> = parsed.items[opener_at + 1..ph]
            .iter()
            .filter_map(|it| match it {
                Item::Code(c) if !c.trim().is_empty() => Some(c.as_str()),
                _ => None,
            })
            .collect();
        let mut last = o;
        let mut after = body.len();
        for (k, c) in body.iter().enumerate().rev() {
            let key = squash(c);
            if let Some(j) = (o + 1..e).rev().find(|&j| squash(lines[j]) == key) {
                last = j;
                after = body.len() - k - 1;
                break;
            }
        }
        // Lines the snippet shows elsewhere may be copied in only where the file has them
        // more than once (they pin nothing); the first copied line must be the block's own.
        let snippet_keys: std::collections::HashSet<String> =
            parsed.code_lines().map(squash).collect();
        let in_snippet = |j: usize| snippet_keys.contains(&squash(lines[j]));
        let repeated = |j: usize| index.count(snippet::key(lines[j])) > 1;
        let Some(first_kept) = (last + 1 + after..e)
            .rev()
            .take(4)
            .find(|&j| !align::is_trivial(lines[j]) && !in_snippet(j))
        else {
            idx += 1;
            continue;
        };
        let mut tail: Vec<&str> = lines[first_kept..e].to_vec();
        // The snippet's own blank lines after the placeholder stand for the tail's last ones.
        let shown_blanks = parsed.items[ph + 1..idx]
            .iter()
            .take_while(|it| matches!(it, Item::Code(c) if c.trim().is_empty()))
            .count();
        for _ in 0..shown_blanks {
            if tail.last().is_some_and(|l| l.trim().is_empty()) {
                tail.pop();
            }
        }
        if (first_kept..e).any(|j| in_snippet(j) && !repeated(j)) {
            idx += 1;
            continue;
        }
        let n = tail.len();
        for (k, l) in tail.into_iter().enumerate() {
            parsed.items.insert(ph + 1 + k, Item::Code(l.to_string()));
        }
        idx += n + 1;
    }
    parsed
}

/// How many last lines of a block a snippet may show between a placeholder and the block's
/// closing line for the closer to still be read as that block's.
const MAX_SHOWN_TAIL: usize = 4;

/// A snippet of new code only, placed where the instruction says ("at the end", "after
/// imports", "at the top").
fn place_by_hint(
    lines: &[&str],
    final_newline: bool,
    parsed: &Snippet,
    file_keys: &FileIndex,
    hint: Option<Hint>,
) -> Option<String> {
    let at = match hint? {
        Hint::End => lines.len(),
        Hint::Top => 0,
        Hint::AfterImports(k) => k,
        Hint::Within(..) => return None,
    };
    let code: Vec<&str> = parsed.code_lines().collect();
    if parsed.removals().next().is_some()
        || code
            .iter()
            .any(|l| !l.trim().is_empty() && file_keys.contains(&snippet::key(l)))
    {
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
                // Take the blank lines that separated it from what follows along, so the gap
                // before it separates its neighbours instead of leaving a double gap.
                let blank_before = a == 0 || lines[a - 1].trim().is_empty();
                while blank_before && b < lines.len() && lines[b].trim().is_empty() {
                    b += 1;
                }
                forced[a..b].iter_mut().for_each(|f| *f = true);
            }
            many => {
                let ranges: Vec<String> = many
                    .iter()
                    .map(|(a, b)| format!("lines {}-{}", a + 1, b))
                    .collect();
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
    substs: Vec<(usize, usize)>,
    span: Option<(usize, usize)>,
    /// Placed against the file's start or end by an implicit edge placeholder that kept
    /// nothing (the strict reading), which fixes its position.
    strict: bool,
}

fn merge_lines<'l>(
    lines: &[&'l str],
    index: &FileIndex,
    parsed: &Snippet,
    file_keys: &FileIndex,
    indent: &dyn Fn() -> super::text::Indent,
) -> Result<LinesMerge<'l>> {
    let forced = forced_deletions(lines, parsed)?;
    let items = &parsed.items;
    let facts = Facts::new(lines, index, items);
    let m = lines.len();
    let mut keep_bans: Vec<(usize, (usize, usize))> = Vec::new();
    let insert_only: std::cell::Cell<Option<(usize, usize)>> = std::cell::Cell::new(None);
    let problem = |(strict_edges, pinning): Mode,
                   edge_keep: (usize, usize),
                   keep_bans: &[(usize, (usize, usize))]| {
        align::Problem {
            items,
            file: lines,
            facts: &facts,
            forced: &forced,
            strict_edges,
            edge_keep,
            pinning,
            keep_bans: keep_bans.to_vec(),
            insert_only: insert_only.get(),
        }
    };
    // Strict edges first; when pinned lines contradict them (new code repeating unique lines
    // of the file elsewhere), strict edges without pins; then loose edges.
    let run = |edge_keep: (usize, usize), keep_bans: &[(usize, (usize, usize))]| {
        [
            (true, Pinning::Pinned),
            (true, Pinning::Unpinned),
            (false, Pinning::Pinned),
        ]
        .into_iter()
        .find_map(|mode| align::solve(&problem(mode, edge_keep, keep_bans)).map(|s| (s, mode)))
        .ok_or_else(|| {
            Error::new(
                ErrorCode::NeedsMoreContext,
                "the snippet could not be aligned with the file",
            )
        })
    };
    let mut edge_keep = (m, 0);
    let mut solved = run(edge_keep, &keep_bans)?;
    // An open edge (no placeholder there) is a region boundary only when the snippet's edge
    // line anchors it; otherwise the snippet reaches the file's start or end. Reading one
    // edge strictly can leave the other edge's lines to its placeholder: look again after
    // each change.
    let mut block_region = false;
    for _ in 0..3 {
        let reading = open_edge_reading(lines, parsed, &facts, &solved.0.ops);
        block_region = reading.block_end.is_some();
        let want = (
            if reading.strict.0 { 0 } else { edge_keep.0 },
            match (reading.strict.1, reading.block_end) {
                (true, _) => m,
                (false, Some(end)) => end.max(edge_keep.1),
                (false, None) => edge_keep.1,
            },
        );
        if want == edge_keep {
            break;
        }
        edge_keep = want;
        solved = run(edge_keep, &keep_bans)?;
    }
    keep_bans = shallow_tails(lines, parsed, &facts, &solved.0.ops);
    if !keep_bans.is_empty()
        && let Ok(again) = run(edge_keep, &keep_bans)
    {
        solved = again;
    } else {
        keep_bans.clear();
    }
    // New code at an open edge whose only matches are blank and closing lines is added
    // there, not a rewrite of the file's first or last lines that deletes code the snippet
    // never shows.
    if let Some(range) = new_code_at_edge(lines, parsed, &facts, &solved.0.ops) {
        insert_only.set(Some(range));
        match run(edge_keep, &keep_bans) {
            Ok(again) => solved = again,
            Err(_) => insert_only.set(None),
        }
    }
    if edge_keep.0 == 0 {
        check_dropped_header(lines, parsed, &facts, &solved.0.ops)?;
    }
    let (solution, mode) = solved;
    let ops: &[Op] = &solution.ops;

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
    for op in ops {
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
                segments[seg_of[i]].substs.push((i, j));
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
                (
                    items
                        .get(state)
                        .and_then(|_| seg_of.get(state))
                        .copied()
                        .filter(|&s| s != usize::MAX),
                    Some(j),
                )
            }
            Op::Keep(j) => {
                let counts = usize::from(!lines[j].trim().is_empty());
                if state == 0 {
                    kept_at_start += counts;
                }
                if state + 1 == items.len() {
                    kept_at_end += counts;
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
    open_edges(
        lines,
        parsed,
        &segments,
        kept_at_start,
        kept_at_end,
        block_region,
    )?;
    check_ambiguity(lines, parsed, &facts, &segments)?;
    check_moved_code(lines, parsed, &facts, ops)?;
    check_alternatives(
        &problem(mode, edge_keep, &keep_bans),
        &solution,
        &segments,
        lines,
    )?;

    // Re-indentation per segment, learnt from its matched lines.
    let file_indent = std::cell::OnceCell::new();
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
                Reindent::plan_uniform(pairs, &edit_lines(seg), || *file_indent.get_or_init(indent))
            })
        })
        .collect();
    let fallback = plans
        .iter()
        .flatten()
        .next()
        .cloned()
        .unwrap_or_else(Reindent::identity);
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

    let changed_old = ops
        .iter()
        .filter(|op| matches!(op, Op::Subst(..) | Op::Delete(_)))
        .count()
        - forced.iter().filter(|&&f| f).count();
    let mut out: Vec<Cow<str>> = Vec::with_capacity(lines.len() + items.len());
    let plan_for = |i: usize| plans[seg_of[i]].as_ref().unwrap_or(&fallback);
    for op in ops {
        match *op {
            Op::Keep(j) => out.push(Cow::Borrowed(lines[j])),
            Op::Match(i, j) => match &items[i] {
                // A matched line keeps the file's bytes unless the snippet changed it: spacing
                // inside the line (alignment, re-spaced operators) or at its end, or
                // indentation that differs from the segment's own offset against the file. A
                // blank line keeps the file's whitespace.
                Item::Code(s) if !facts.soft[i] => {
                    let placed = plan_for(i).apply(s);
                    if same_but_indentation(s, lines[j])
                        && leading_ws(&placed) == leading_ws(lines[j])
                    {
                        out.push(Cow::Borrowed(lines[j]));
                    } else {
                        out.push(Cow::Owned(placed));
                    }
                }
                _ => out.push(Cow::Borrowed(lines[j])),
            },
            Op::Subst(i, _) | Op::Insert(i) => {
                if let Item::Code(s) = &items[i] {
                    out.push(Cow::Owned(plan_for(i).apply(s)));
                }
            }
            Op::Delete(_) | Op::Leave(_) => {}
        }
    }
    // Inserted lines that look like placeholders the reader did not take.
    for op in ops {
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
    Ok(LinesMerge {
        out,
        warnings,
        changed_old,
    })
}

/// An indented placeholder stands for lines at its depth: the rest of the block it sits in.
/// When the next anchor is shallower, file lines after that block's last deep line that are
/// back at the anchor's depth or above (a definition or statement between the block and the
/// anchor, not the block's closer) are not what the placeholder elides: they were deleted.
/// Returns, per explicit placeholder, the file lines it may not keep.
fn shallow_tails(
    lines: &[&str],
    parsed: &Snippet,
    facts: &Facts,
    ops: &[Op],
) -> Vec<(usize, (usize, usize))> {
    let items = &parsed.items;
    let mut bans = Vec::new();
    // Where each placeholder's kept run starts, and where each item matched.
    let mut kept_from: Vec<Option<usize>> = vec![None; items.len()];
    let mut matched: Vec<Option<usize>> = vec![None; items.len()];
    let mut state = 0usize;
    for op in ops {
        match *op {
            Op::Keep(j) if state < items.len() => {
                kept_from[state].get_or_insert(j);
            }
            Op::Match(i, j) => {
                matched[i] = Some(j);
                state = i + 1;
            }
            Op::Subst(i, _) | Op::Insert(i) | Op::Leave(i) => state = i + 1,
            _ => {}
        }
    }
    for (c, item) in items.iter().enumerate() {
        let Item::Placeholder {
            implicit: false,
            indent,
        } = *item
        else {
            continue;
        };
        let Some(from) = kept_from[c] else { continue };
        // The next code line with text, matched to the file.
        let Some(a) = (c + 1..items.len())
            .take_while(|&a| matches!(items[a], Item::Code(_)))
            .find(|&a| !facts.items[a].blank)
        else {
            continue;
        };
        let Some(anchor) = matched[a] else { continue };
        let q_snip = facts.items[a].indent;
        let p_snip = indent as i32;
        if p_snip <= q_snip || anchor <= from {
            continue;
        }
        let delta = facts.file[anchor].indent - q_snip;
        let (p, q) = (p_snip + delta, facts.file[anchor].indent);
        let Some(last_deep) = (from..anchor)
            .rev()
            .find(|&j| !facts.file[j].blank && facts.file[j].indent >= p)
        else {
            continue;
        };
        let Some(first_shallow) =
            (last_deep + 1..anchor).find(|&j| !facts.file[j].blank && facts.file[j].indent <= q)
        else {
            continue;
        };
        if lines[first_shallow]
            .trim_start()
            .starts_with(['}', ')', ']'])
            || lines[first_shallow].trim_start().starts_with("end")
        {
            continue;
        }
        // The snippet's blank lines before the anchor stand for the file's separators.
        let separated = items[c + 1..a]
            .iter()
            .any(|it| matches!(it, Item::Code(s) if s.trim().is_empty()));
        let mut start = first_shallow;
        if separated {
            while start > last_deep + 1 && facts.file[start - 1].blank {
                start -= 1;
            }
        }
        bans.push((c, (start, anchor)));
    }
    bans
}

/// New lines that repeat most of a definition a placeholder keeps, in an edit that removes the
/// last use of that definition's name, read as a move (the old definition goes) as well as a
/// copy (it stays): decline and ask the agent to say which.
fn check_moved_code(lines: &[&str], parsed: &Snippet, facts: &Facts, ops: &[Op]) -> Result<()> {
    let items = &parsed.items;
    let m = lines.len();
    let mut kept = vec![false; m];
    let mut gone = vec![false; m];
    let mut new_items: Vec<usize> = Vec::new();
    let mut state = 0usize;
    for op in ops {
        match *op {
            Op::Keep(j) => {
                kept[j] = matches!(
                    items.get(state),
                    Some(Item::Placeholder {
                        implicit: false,
                        ..
                    })
                );
            }
            Op::Subst(i, j) => {
                gone[j] = true;
                new_items.push(i);
                state = i + 1;
            }
            Op::Delete(j) => gone[j] = true,
            Op::Insert(i) => {
                new_items.push(i);
                state = i + 1;
            }
            Op::Match(i, _) | Op::Leave(i) => state = i + 1,
        }
    }
    // Kept definitions (top level, header kept) that new lines repeat, with the repeats.
    let mut repeats: Vec<(usize, usize)> = Vec::new(); // (definition line, new item)
    for &i in &new_items {
        let f = &facts.items[i];
        if f.trivial {
            continue;
        }
        for &j in facts.lines_with(f.id) {
            let j = j as usize;
            if !kept[j] {
                continue;
            }
            let Some(o) = (0..=j).rev().find(|&o| {
                facts.file[o].indent == 0 && !facts.file[o].blank && {
                    let t = lines[o].trim_start();
                    !t.starts_with(['}', ')', ']', '#', '/', '*', '@'])
                }
            }) else {
                continue;
            };
            if o < j && kept[o] && outline::declared_name(lines[o]).is_some() {
                repeats.push((o, i));
            }
        }
    }
    repeats.sort_unstable();
    repeats.dedup();
    let mut k = 0;
    while k < repeats.len() {
        let o = repeats[k].0;
        let same: Vec<usize> = repeats[k..]
            .iter()
            .take_while(|r| r.0 == o)
            .map(|r| r.1)
            .collect();
        k += same.len();
        let (start, end) = outline::block_extent(lines, o);
        let body = (o + 1..end).filter(|&j| !facts.file[j].trivial).count();
        if same.len() < 4 || same.len() * 3 < body {
            continue;
        }
        let Some(name) = outline::declared_name(lines[o]) else {
            continue;
        };
        // Its uses outside itself: all of them removed by the edit, none in new lines.
        let uses: Vec<usize> = (0..m)
            .filter(|&j| (j < start || j >= end) && outline::mentions(lines[j], name))
            .collect();
        let new_uses = new_items.iter().any(|&i| match &items[i] {
            Item::Code(s) => outline::mentions(s, name),
            _ => false,
        });
        if uses.is_empty() || new_uses || !uses.iter().all(|&j| gone[j]) {
            continue;
        }
        let first = same.iter().min().copied().unwrap_or(0);
        let last = same.iter().max().copied().unwrap_or(0);
        let shift = usize::from(!parsed.explicit_start);
        return Err(Error::new(
            ErrorCode::NeedsMoreContext,
            format!(
                "snippet lines {}-{} repeat `{name}` (lines {}-{}), which a placeholder keeps, \
                 and the edit removes its last use: if the code moved, delete the old \
                 definition with a `remove {name}` comment; if it stays, show its first line",
                first + 1 - shift,
                last + 1 - shift,
                start + 1,
                end
            ),
        ));
    }
    Ok(())
}

/// The merged lines of a file (or of the part an instruction named).
struct LinesMerge<'a> {
    /// The merged lines: the file's own lines borrowed, new and re-indented ones owned.
    out: Vec<Cow<'a, str>>,
    warnings: Vec<String>,
    /// File lines the merge deleted or replaced (not counting `remove` directives).
    changed_old: usize,
}

/// Equal but for indentation and look-alike characters. Trailing whitespace counts: a
/// snippet line that drops (or adds) it is the line as the edit wants it.
fn same_but_indentation(a: &str, b: &str) -> bool {
    use super::matching::fold_confusables;
    a.trim_start() == b.trim_start()
        || fold_confusables(a).trim_start() == fold_confusables(b).trim_start()
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

/// How to read the snippet's open edges.
struct EdgeReading {
    /// Read the start (end) strictly: the snippet reaches the file's start (end).
    strict: (bool, bool),
    /// The snippet starts on a block opener and stays inside that block: the end of that
    /// block (one whole function) is where the snippet's region ends.
    block_end: Option<usize>,
}

/// Whether each open edge of the snippet must be read strictly (reaching the file's start or
/// end): when the implicit placeholder there kept file lines although the snippet's edge line
/// is not a non-trivial anchor, and, at the end, does not close a block the snippet opened.
fn open_edge_reading(lines: &[&str], parsed: &Snippet, facts: &Facts, ops: &[Op]) -> EdgeReading {
    let items = &parsed.items;
    let code_nonblank = |i: usize| matches!(&items[i], Item::Code(s) if !s.trim().is_empty());
    // Where an item stands in the file: matched, or replacing its old version.
    let matched_at = |i: usize| {
        ops.iter().find_map(|op| match *op {
            Op::Match(mi, j) | Op::Subst(mi, j) if mi == i => Some(j),
            _ => None,
        })
    };
    let kept = |state: usize| {
        let mut st = 0usize;
        let mut count = 0usize;
        for op in ops {
            match *op {
                Op::Match(i, _) | Op::Subst(i, _) | Op::Insert(i) | Op::Leave(i) => st = i + 1,
                Op::Keep(j) if st == state && !lines[j].trim().is_empty() => count += 1,
                _ => {}
            }
        }
        count
    };
    let anchors = |i: usize| !facts.items[i].trivial && matched_at(i).is_some();
    let mut strict = (false, false);
    if !parsed.explicit_start
        && let Some(first) = (0..items.len()).find(|&i| code_nonblank(i))
        && !anchors(first)
        && kept(0) > 0
    {
        strict.0 = true;
    }
    if !parsed.explicit_end
        && let Some(last) = (0..items.len()).rev().find(|&i| code_nonblank(i))
        && !anchors(last)
        && kept(items.len() - 1) > 0
    {
        // A snippet that starts on a block opener (a whole function or method) ends where
        // that block ends, however its last line changed.
        let first = (0..items.len()).find(|&i| code_nonblank(i));
        let block_end = first.and_then(matched_at).and_then(|a| {
            let (_, end) = super::lazy::outline::block_extent(lines, a);
            let last_at = ops
                .iter()
                .filter_map(|op| match *op {
                    Op::Match(_, j) | Op::Subst(_, j) | Op::Delete(j) => Some(j),
                    _ => None,
                })
                .max()
                .unwrap_or(a);
            (end > a + 1 && last_at < end).then_some(end)
        });
        strict.1 = block_end.is_none();
        return EdgeReading { strict, block_end };
    }
    EdgeReading {
        strict,
        block_end: None,
    }
}

/// The items of an edge segment (after the last explicit placeholder with the snippet's end
/// open, or before the first with its start open) that hold new code, match no line but
/// blank and trivial ones, and yet have the alignment delete non-blank file lines between
/// their matches: new code added at that edge, read as a rewrite of the file's last (or
/// first) lines. Closing lines that end the segment without closing a block the segment
/// opens (the end of the class a method is added to) are left out: they still match.
fn new_code_at_edge(
    lines: &[&str],
    parsed: &Snippet,
    facts: &Facts,
    ops: &[Op],
) -> Option<(usize, usize)> {
    let items = &parsed.items;
    let explicit = |i: usize| {
        matches!(
            items[i],
            Item::Placeholder {
                implicit: false,
                ..
            } | Item::Remove(_)
        )
    };
    let mut ranges = Vec::new();
    if !parsed.explicit_end
        && let Some(p) = (0..items.len()).rev().find(|&i| explicit(i))
    {
        let end = (p + 1..items.len())
            .find(|&i| !matches!(items[i], Item::Code(_)))
            .unwrap_or(items.len());
        ranges.push((p + 1, end, false));
    }
    if !parsed.explicit_start
        && let Some(p) = (0..items.len()).find(|&i| explicit(i))
    {
        let start = (0..p)
            .rev()
            .find(|&i| !matches!(items[i], Item::Code(_)))
            .map_or(0, |i| i + 1);
        ranges.push((start, p, true));
    }
    ranges.into_iter().find_map(|(a, mut b, at_start)| {
        while b > a
            && facts.items[b - 1].trivial
            && items[b - 1]
                .text()
                .trim_start()
                .starts_with(['}', ')', ']'])
            && facts.opener_item(b - 1).is_none_or(|o| o < a)
        {
            b -= 1;
        }
        let inside = |i: usize| (a..b).contains(&i);
        let new_code = (a..b).any(|i| {
            let f = &facts.items[i];
            !f.blank && !f.trivial && facts.count_of_item(i) == 0
        });
        let mut state = 0usize;
        let mut deletes = false;
        for op in ops {
            match *op {
                Op::Match(i, _) if inside(i) && !facts.items[i].trivial => return None,
                // Between the segment's lines, or before them at the start (where nothing
                // the segment anchors says the file's first lines go).
                Op::Delete(j)
                    if (state > a || at_start) && state < b && !lines[j].trim().is_empty() =>
                {
                    deletes = true;
                }
                _ => {}
            }
            if let Op::Match(i, _) | Op::Subst(i, _) | Op::Insert(i) | Op::Leave(i) = *op {
                state = i + 1;
            }
        }
        (new_code && deletes).then_some((a, b))
    })
}

/// A strictly read open start must not silently drop a comment header (a license, a module
/// docstring) that the snippet does not replace with comments of its own.
fn check_dropped_header(lines: &[&str], parsed: &Snippet, facts: &Facts, ops: &[Op]) -> Result<()> {
    if parsed.explicit_start {
        return Ok(());
    }
    let first_match = ops.iter().find_map(|op| match *op {
        Op::Match(_, j) => Some(j),
        _ => None,
    });
    let dropped: Vec<usize> = ops
        .iter()
        .filter_map(|op| match *op {
            Op::Delete(j) if first_match.is_none_or(|f| j < f) => Some(j),
            _ => None,
        })
        .collect();
    let is_comment = |l: &str| {
        let t = l.trim_start();
        t.starts_with("//")
            || t.starts_with('#')
            || t.starts_with("/*")
            || t.starts_with('*')
            || t.starts_with("--")
            || t.starts_with("\"\"\"")
            || t.starts_with("<!--")
    };
    let header = !dropped.is_empty()
        && dropped
            .iter()
            .all(|&j| lines[j].trim().is_empty() || is_comment(lines[j]))
        && dropped.iter().any(|&j| !lines[j].trim().is_empty());
    let snippet_comments = parsed
        .items
        .iter()
        .take_while(|it| !matches!(it, Item::Code(s) if facts.is_file_line(s)))
        .any(|it| matches!(it, Item::Code(s) if is_comment(s)));
    if header && !snippet_comments {
        return Err(Error::new(
            ErrorCode::NeedsMoreContext,
            format!(
                "the snippet starts with new lines and no placeholder, which would drop the \
                 comment header in lines {}-{}; start the snippet with a placeholder to keep it",
                dropped[0] + 1,
                dropped[dropped.len() - 1] + 1
            ),
        ));
    }
    Ok(())
}

/// A snippet without a placeholder at an edge whose first (last) line is new: the lines of the
/// file before (after) its first (last) anchor may be meant as replaced or as kept. Decline
/// instead of guessing when that would matter.
fn open_edges(
    lines: &[&str],
    parsed: &Snippet,
    segments: &[Segment],
    kept_at_start: usize,
    kept_at_end: usize,
    block_region: bool,
) -> Result<()> {
    let items = &parsed.items;
    let kept_at_end = if block_region { 0 } else { kept_at_end };
    let nonblank = |seg: &Segment| -> Vec<usize> {
        (seg.items.0..seg.items.1)
            .filter(|&i| matches!(&items[i], Item::Code(s) if !s.trim().is_empty()))
            .collect()
    };
    // Matched, or a declaration's new version (same name) replacing the old one.
    let matched = |seg: &Segment, i: usize| {
        seg.matches.iter().any(|&(mi, _)| mi == i)
            || seg.substs.iter().any(|&(si, j)| {
                si == i
                    && matches!(&items[i], Item::Code(s) if outline::declared_name(s)
                        .is_some_and(|n| outline::declared_name(lines[j]) == Some(n)))
            })
    };
    let decline = |what: &str, range: String| {
        Error::new(
            ErrorCode::NeedsMoreContext,
            format!(
                "the snippet {what} and has no placeholder there, so it is unclear whether \
                 {range} of the file are replaced or kept; start (or end) the snippet with a \
                 placeholder to keep them, or with the unchanged line next to the change"
            ),
        )
    };
    if !parsed.explicit_start
        && kept_at_start > 0
        && let Some(seg) = segments.first()
        && let Some(&first) = nonblank(seg).first()
        && !matched(seg, first)
    {
        let end = seg.span.map_or(0, |s| s.0).max(1);
        return Err(decline("starts with new lines", format!("lines 1-{end}")));
    }
    if !parsed.explicit_end
        && kept_at_end > 0
        && let Some(seg) = segments.last()
        && let Some(&last) = nonblank(seg).last()
        && !matched(seg, last)
    {
        let start = seg.span.map_or(lines.len(), |s| s.1) + 1;
        return Err(decline(
            "ends with new lines",
            format!("lines {start}-{}", lines.len()),
        ));
    }
    // An open end on a trivial line (`}`, `)`) is only a region end when the snippet's first
    // line opens the block that this line closes; otherwise the file's tail may be meant as
    // replaced just as well.
    if !parsed.explicit_end
        && kept_at_end > 0
        && let Some(seg) = segments.last()
        && let Some(&last) = nonblank(seg).last()
        && let Some(&(_, last_at)) = seg.matches.iter().find(|&&(i, _)| i == last)
        && super::lazy::align::is_trivial(match &items[last] {
            Item::Code(s) => s,
            _ => "",
        })
    {
        let first_at = segments.first().and_then(|f| {
            let first = *nonblank(f).first()?;
            f.matches
                .iter()
                .find(|&&(i, _)| i == first)
                .map(|&(_, j)| j)
        });
        let closed = first_at.is_some_and(|a| outline::block_extent(lines, a).1 == last_at + 1);
        if !closed {
            return Err(decline(
                "ends on a line that occurs all over the file",
                format!("lines {}-{}", last_at + 2, lines.len()),
            ));
        }
    }
    Ok(())
}

/// Decline segments that have nothing to anchor them, or that fit elsewhere as well.
fn check_ambiguity(
    lines: &[&str],
    parsed: &Snippet,
    facts: &Facts,
    segments: &[Segment],
) -> Result<()> {
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
        let shape = Shape::of(facts, items, lines, seg);
        let pattern = &shape.pattern;
        let anchored = seg.matches.iter().any(|&(i, _)| !facts.items[i].trivial)
            || pattern.iter().any(|p| matches!(p.1, Want::Like(_)));
        let lo = if k == 0 {
            0
        } else {
            segments[..k]
                .iter()
                .rev()
                .find_map(|s| s.span)
                .map_or(0, |s| s.1)
        };
        let hi = segments[k + 1..]
            .iter()
            .find_map(|s| s.span)
            .map_or(lines.len(), |s| s.0);
        let (j0, span) = (shape.j0, shape.span);
        let fits = |p: usize| shape.fit(p) == Some(Fit::AsWell);
        let places = |alternatives: &[usize]| {
            let mut places: Vec<String> = vec![format!("lines {}-{}", j0 + 1, j0 + span)];
            places.extend(
                alternatives
                    .iter()
                    .take(10)
                    .map(|p| format!("lines {}-{}", p + 1, p + span)),
            );
            places
        };
        if !(anchored || at_start || at_end) {
            if seg.matches.is_empty() {
                return Err(Error::new(
                    ErrorCode::NeedsMoreContext,
                    format!(
                        "{} contain no line from the file; add 1-3 unchanged lines from just \
                         above and below the change so it can be placed",
                        label(seg)
                    ),
                ));
            }
            let alternatives: Vec<usize> = if hi >= lo + span {
                (lo..=hi - span).filter(|&p| p != j0 && fits(p)).collect()
            } else {
                Vec::new()
            };
            // Closing lines in a row that occur together only here between the neighbouring
            // segments (`}),` then `);`) place the segment after all.
            if pattern.len() >= 2 && alternatives.is_empty() {
                continue;
            }
            return Err(Error::new(
                ErrorCode::NeedsMoreContext,
                format!(
                    "{} match only lines that occur all over the file (braces, blank lines, \
                     `return`), which fit {}; add 1-3 unchanged lines from just above and below \
                     the change so it can be placed",
                    label(seg),
                    places(&alternatives).join(", ")
                ),
            ));
        }
        if seg.strict || pattern.is_empty() {
            continue;
        }
        let mut alternatives: Vec<usize> = Vec::new();
        if hi >= lo + span {
            alternatives.extend((lo..=hi - span).filter(|&p| p != j0 && fits(p)));
        }
        if !alternatives.is_empty() {
            let places = places(&alternatives);
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

/// A second placement of a segment that scores about as well as the chosen one (the best
/// whole alignment that matches the segment's first anchor elsewhere) means the snippet is
/// ambiguous.
fn check_alternatives(
    problem: &align::Problem<'_>,
    solution: &align::Solution,
    segments: &[Segment],
    lines: &[&str],
) -> Result<()> {
    // The first matched line of each segment.
    let firsts: Vec<(usize, usize, &Segment)> = segments
        .iter()
        .filter_map(|seg| seg.matches.first().map(|&(i, j)| (i, j, seg)))
        .collect();
    if firsts.is_empty() {
        return Ok(());
    }
    // Only lines the file holds elsewhere too can place a segment elsewhere.
    let facts = problem.facts;
    let firsts: Vec<(usize, usize, &Segment)> = firsts
        .into_iter()
        .filter(|&(i, j, seg)| {
            let (lo, hi) = seg.span.unwrap_or((j, j + 1));
            facts
                .lines_with(facts.items[i].id)
                .iter()
                .any(|&k| (k as usize) < lo || k as usize >= hi)
        })
        .collect();
    if firsts.is_empty() {
        return Ok(());
    }
    let wanted: Vec<usize> = firsts.iter().map(|f| f.0).collect();
    let (best, profiles) = align::match_profile(problem, solution, &wanted);
    for &(i, j, seg) in &firsts {
        let (lo, hi) = seg.span.unwrap_or((j, j + 1));
        // A long changed line with one old version in the whole file goes there: placing the
        // segment elsewhere would leave that old version as it is.
        if seg.substs.iter().any(|&(s, o)| {
            facts.shared_chars(s, o) >= UNIQUE_OLD_VERSION_CHARS && facts.old_versions(s) == 1
        }) {
            continue;
        }
        // The same shape shifted, with changed lines further from the old lines there, is a
        // worse place whatever the scores say.
        let shape = Shape::of(problem.facts, problem.items, lines, seg);
        let worse_shift = |k: usize| {
            (shape.j0 + k)
                .checked_sub(j)
                .is_some_and(|p| shape.fit(p) == Some(Fit::Worse))
        };
        // A brace or keyword line at another depth is another line (as in `Shape::fit`).
        let other_depth = |k: usize| {
            facts.items[i].trivial && facts.indent_offset(i, k) != facts.indent_offset(i, j)
        };
        let alt = profiles[&i]
            .iter()
            .enumerate()
            .filter(|&(k, _)| (k < lo || k >= hi) && !other_depth(k))
            .filter_map(|(k, v)| v.map(|v| (k, v)))
            .filter(|&(k, v)| best - v >= ALTERNATIVE_MARGIN || !worse_shift(k))
            .max_by(|a, b| a.1.total_cmp(&b.1));
        if let Some((k, score)) = alt
            && best - score < ALTERNATIVE_MARGIN
        {
            let line = match &problem.items[i] {
                Item::Code(s) => s.trim(),
                _ => "",
            };
            return Err(Error::new(
                ErrorCode::NeedsMoreContext,
                format!(
                    "the snippet fits two places about equally well: its line `{}` matches line {} \
                     (chosen, the edit spanning lines {}-{}) and line {}; add 1-3 unchanged lines \
                     from the file that occur only around the intended place",
                    line.chars().take(80).collect::<String>(),
                    j + 1,
                    lo + 1,
                    hi,
                    k + 1
                ),
            ));
        }
    }
    Ok(())
}

/// How many characters a changed line must share with its only old version to place its
/// segment by itself.
const UNIQUE_OLD_VERSION_CHARS: f32 = 40.0;

/// How much worse (in alignment score) the best alignment that places a segment elsewhere
/// may be before the snippet counts as unambiguous.
const ALTERNATIVE_MARGIN: f32 = 0.25;

/// How much less close (in summed word similarity) other old versions of a segment's changed
/// lines may be and still fit as well.
const LIKE_MARGIN: f32 = 0.05;

/// Dice similarity of the words (identifiers and numbers) of two lines, with repeats.
fn word_similarity(a: &str, b: &str) -> f32 {
    fn words(s: &str) -> Vec<&str> {
        let mut w: Vec<&str> = s
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
            .collect();
        w.sort_unstable();
        w
    }
    align::dice(&words(a), &words(b))
}

/// What pins a segment down where the alignment put it: its non-blank matches, and its changed
/// lines paired with their old versions.
struct Shape<'a> {
    pattern: Vec<(usize, Want)>,
    /// The first line of the pattern and how many lines it spans.
    j0: usize,
    span: usize,
    /// How close the changed lines are to their chosen old versions, word for word.
    closeness: f32,
    facts: &'a Facts<'a>,
    items: &'a [Item],
    lines: &'a [&'a str],
}

/// How a segment's shape fits at another place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fit {
    /// As well as where it is.
    AsWell,
    /// The same lines, but the changed lines are further from the old lines there.
    Worse,
}

impl<'a> Shape<'a> {
    fn of(
        facts: &'a Facts<'a>,
        items: &'a [Item],
        lines: &'a [&'a str],
        seg: &Segment,
    ) -> Shape<'a> {
        let mut pattern: Vec<(usize, Want)> = seg
            .matches
            .iter()
            .map(|&(i, j)| (j, Want::Same(i)))
            .chain(
                seg.substs
                    .iter()
                    .filter(|&&(i, _)| !facts.items[i].trivial)
                    .map(|&(i, j)| (j, Want::Like(i))),
            )
            .collect();
        pattern.sort_by_key(|p| p.0);
        let j0 = pattern.first().map_or(0, |p| p.0);
        let span = pattern.last().map_or(1, |p| p.0 - j0 + 1);
        let mut shape = Shape {
            pattern,
            j0,
            span,
            closeness: 0.0,
            facts,
            items,
            lines,
        };
        shape.closeness = shape
            .pattern
            .iter()
            .map(|&(j, ref want)| match *want {
                Want::Like(i) => word_similarity(shape.item_text(i), lines[j]),
                Want::Same(_) => 0.0,
            })
            .sum();
        shape
    }

    fn item_text(&self, i: usize) -> &'a str {
        self.items[i].text()
    }

    /// How the shape fits with its first line at file line `p` (`None`: it does not).
    /// Another old version of a changed line fits when it sits at the same indentation; it
    /// fits as well when it is about as close to the new line.
    fn fit(&self, p: usize) -> Option<Fit> {
        if p + self.span > self.lines.len() {
            return None;
        }
        let facts = self.facts;
        let fits = self.pattern.iter().all(|&(j, ref want)| {
            let f = p + (j - self.j0);
            match *want {
                // A brace or keyword line at another depth is another line.
                Want::Same(i) => {
                    facts.file[f].id == facts.items[i].id
                        && (!facts.items[i].trivial
                            || facts.indent_offset(i, f) == facts.indent_offset(i, j))
                }
                Want::Like(i) => {
                    facts.file[f].id == facts.items[i].id
                        || (facts.similar(i, f).is_some()
                            && facts.indent_offset(i, f) == facts.indent_offset(i, j))
                }
            }
        });
        if !fits {
            return None;
        }
        let closeness: f32 = self
            .pattern
            .iter()
            .map(|&(j, ref want)| match *want {
                Want::Like(i) => word_similarity(self.item_text(i), self.lines[p + (j - self.j0)]),
                Want::Same(_) => 0.0,
            })
            .sum();
        Some(if closeness >= self.closeness - LIKE_MARGIN {
            Fit::AsWell
        } else {
            Fit::Worse
        })
    }
}

/// What a position of the file must hold for a segment to fit there.
enum Want {
    /// The same line as this snippet item (by key id).
    Same(usize),
    /// A line similar to this snippet item.
    Like(usize),
}

/// The guards on a merge computed elsewhere (a model's answer): the same checks as the
/// deterministic merge's result, plus placeholder text that the file did not have.
pub fn check_external(
    original: &str,
    snippet_text: &str,
    hints: &Hints<'_>,
    merged: &str,
) -> Result<Merged> {
    let body = prepare(snippet_text, hints);
    let (lines, _) = split_lines(original);
    let file_keys = FileIndex::new(&lines);
    let parsed = snippet::parse(&body, &file_keys);
    if let Some(line) = merged
        .lines()
        .find(|l| snippet::looks_like_marker(l) && !file_keys.contains(&snippet::key(l)))
    {
        return Err(Error::new(
            ErrorCode::MarkerLeakage,
            format!(
                "the merged file holds the placeholder `{}`, which the file did not have; the \
                 elided code was not restored",
                line.trim()
            ),
        ));
    }
    let (new_lines, _) = split_lines(merged);
    let changed_old = super::matching::changed_old_lines(&lines, &new_lines);
    let mut result = finish(
        original,
        &lines,
        merged.to_string(),
        &parsed,
        &file_keys,
        Vec::new(),
        changed_old,
    )?;
    result
        .warnings
        .push("merged by the fallback model".to_string());
    Ok(result)
}

/// The guards on a merged result.
/// How many lines [`split_lines`] would make of `text`.
fn line_count(text: &str) -> usize {
    if text.is_empty() {
        return 0;
    }
    text.bytes().filter(|&b| b == b'\n').count() + usize::from(!text.ends_with('\n'))
}

fn finish(
    original: &str,
    lines: &[&str],
    merged: String,
    parsed: &Snippet,
    file_keys: &FileIndex,
    warnings: Vec<String>,
    changed_old: usize,
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
    if !has_removals && lines.len() >= GUARD_MIN_LINES {
        let chars_lost = 1.0 - merged.len() as f64 / original.len().max(1) as f64;
        // (Lines are counted only when enough characters are lost.)
        let new_lines = || line_count(&merged);
        if chars_lost > TRUNCATION_CHARS
            && 1.0 - new_lines() as f64 / lines.len() as f64 > TRUNCATION_LINES
        {
            return Err(Error::new(
                ErrorCode::TruncationDetected,
                format!(
                    "the merge would shrink the file from {} to {} lines; elide unchanged code \
                     with `... existing code ...` placeholders, or delete explicitly with \
                     `remove NAME`",
                    lines.len(),
                    new_lines()
                ),
            ));
        }
    }
    if lines.len() >= GUARD_MIN_LINES {
        let diff = changed_old;
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
