//! Lazy snippets (`fast_apply`, docs/DESIGN.md §5.1): the edited region of a file with unchanged
//! stretches elided by placeholder comments, merged deterministically — no model call.
//!
//! The stages, one job per file:
//! 1. [`prepare`]: fence, byte-order mark, line endings; each line classified (code,
//!    placeholder, `remove NAME`, diff-style `+`/`-`).
//! 2. [`segments`]: the runs of code between placeholders; open edges are placeholders too.
//! 3. [`place`] and [`plan`]: each segment placed on its own by its unique anchors ([`runs`]),
//!    by the definitions it shows whole ([`units`]), by the instruction ([`hints`]); two
//!    readings are refused naming both.
//! 4. [`align`]: the segment against the file around its anchors; a file line the snippet
//!    does not show is deleted only where the snippet licenses it. [`ground`] then checks
//!    every deletion's anchors: lines among new code license nothing by chance; [`rename`]
//!    every definition given another name: only the name may change.
//! 5. [`render`]: the merged lines, re-indented in the file's style; then [`licence`], the
//!    independent licence check: from the file, the snippet and the result alone (no
//!    placement code) every file line the result lost must hold a licence, or the merge is
//!    refused naming the lines.
//! 6. [`guards`]: `APPLY_NOOP`, `MARKER_LEAKAGE`, `TRUNCATION_DETECTED`,
//!    `BLAST_RADIUS_EXCEEDED`; [`parses`]: a reading that breaks the file's syntax where the
//!    snippet's own text parses is `NEEDS_MORE_CONTEXT`.
//!
//! The numbers that tune all this live in [`costs`]. Time and memory are bounded: the file
//! is indexed once (linear), each segment is aligned only against the file lines around its
//! anchors, with quadratic work only inside bounded windows.

use std::collections::{HashMap, HashSet};

mod align;
mod check;
mod costs;
mod index;
mod lines;
mod place;
mod read;
mod retyped;
pub mod rules;

use self::align::{depth, render, slide};
use self::check::{copies, doubled, evidence, ground, guards, licence, parses, rename};
pub use self::place::outline;
use self::place::{plan, runs, units};
use self::read::{hints, impls, placeholder, prepare, segments, shown};

pub(crate) use self::costs::{DEFAULT_MAX_FILE_BYTES, DEFAULT_MAX_SNIPPET_BYTES};
pub(crate) use self::evidence::{Code, Evidence};
pub use self::evidence::{MARGIN, Margin, MarginWeights};
pub use self::index::forget_indexes;
pub(crate) use self::placeholder::{is_markdown, strip_fence};
pub use self::rules::{Rule, RuleInfo, RuleSet, Stage};
pub(crate) use self::shown::shown;

use self::align::{Aligner, Edit, Op};
use self::hints::Instruction;
use self::index::FileIndex;
use self::place::{Context, Pin};
use self::plan::{Planned, Where};
use self::segments::Snippet;
use super::text::{Indent, join_lines, split_lines};
use super::{Error, ErrorCode, Hints, Merged, Result};

/// Extensions of text that is not code: brackets there need not balance.
const PROSE: [&str; 5] = ["txt", "rst", "adoc", "org", "tex"];

fn extension(hints: &Hints<'_>) -> Option<String> {
    let path = hints.path?;
    let name = path.rsplit(['/', '\\']).next()?;
    name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase())
}

fn body(snippet: &str, hints: &Hints<'_>) -> String {
    let fence = if is_markdown(extension(hints).as_deref()) {
        prepare::Fence::Content
    } else {
        prepare::Fence::Wrapper
    };
    prepare::body(snippet, fence)
}

/// The content of a new file written from a snippet: as given, but placeholders are refused
/// (there is nothing for them to keep).
pub fn create(snippet: &str, hints: &Hints<'_>) -> Result<Merged> {
    let body = body(snippet, hints);
    if body.trim().is_empty() {
        return Err(Error::invalid_input("edit_snippet is empty"));
    }
    if let Some((n, line)) = body.lines().enumerate().find(|(_, l)| {
        placeholder::is_placeholder(l, placeholder::Presence::Absent)
            || placeholder::remove_directive(l).is_some()
    }) {
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
        ..Default::default()
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

fn check_sizes(content: &str, snippet_text: &str) -> Result<()> {
    if snippet_text.len() > DEFAULT_MAX_SNIPPET_BYTES {
        return Err(Error::new(
            ErrorCode::FileTooLarge,
            format!(
                "the snippet is {} bytes, over the {} byte limit for lazy snippets; send the \
                 changed regions only, or the whole file with a full-content tool",
                snippet_text.len(),
                DEFAULT_MAX_SNIPPET_BYTES
            ),
        ));
    }
    if content.len() > DEFAULT_MAX_FILE_BYTES {
        return Err(Error::new(
            ErrorCode::FileTooLarge,
            format!(
                "the file is {} bytes, over the {} byte limit for lazy snippets; use exact \
                 replacements (patch_file) instead",
                content.len(),
                DEFAULT_MAX_FILE_BYTES
            ),
        ));
    }
    Ok(())
}

/// [`merge`] with the rules `rules` switches on (every rule's fixture).
#[cfg(test)]
pub(crate) fn merge_with(
    content: &str,
    snippet_text: &str,
    hints: &Hints<'_>,
    rules: RuleSet,
) -> Result<Merged> {
    let indent = || super::text::detect_indent(content);
    let merged = merge_unverified_with(content, &indent, snippet_text, hints, rules)?;
    verify(content, snippet_text, hints, merged)
}

/// [`merge`] for a file whose indentation style is known already.
pub(crate) fn merge_indented(
    content: &str,
    indent: &dyn Fn() -> Indent,
    snippet_text: &str,
    hints: &Hints<'_>,
) -> Result<Merged> {
    let merged = merge_unverified(content, indent, snippet_text, hints)?;
    verify(content, snippet_text, hints, merged)
}

/// The last stages, apart because they parse (and `eval` times parsing apart): [`weigh`],
/// then [`decide`].
pub(crate) fn verify(
    content: &str,
    snippet_text: &str,
    hints: &Hints<'_>,
    merged: Merged,
) -> Result<Merged> {
    decide(
        weigh(content, snippet_text, hints, merged, &MARGIN)?,
        &MARGIN,
    )
}

/// The syntax stage: a merge whose result breaks the file's syntax where the snippet's own
/// text does not is refused; otherwise the result's syntax joins the merge's evidence and the
/// merge gets its margin ([`Merged::margin`]).
pub(crate) fn weigh(
    content: &str,
    snippet_text: &str,
    hints: &Hints<'_>,
    mut merged: Merged,
    weights: &MarginWeights,
) -> Result<Merged> {
    let syntax = if content.is_empty() {
        evidence::Syntax::Clean
    } else {
        parses::check(
            hints.path,
            content,
            &merged.content,
            &body(snippet_text, hints),
        )?
    };
    if let Some(mut e) = merged.evidence.take() {
        e.syntax = syntax;
        merged.margin = Some(e.margin(weights));
    }
    Ok(merged)
}

/// The refusal `margin` gets under `w`, if any.
pub fn evidence_refusal(margin: &Margin, w: &MarginWeights) -> Option<Error> {
    evidence::decide(margin, w).err()
}

/// The decision: a merge whose margin is below `w`'s threshold is refused
/// `NEEDS_MORE_CONTEXT`, naming its weakest evidence.
pub(crate) fn decide(merged: Merged, w: &MarginWeights) -> Result<Merged> {
    if let Some(m) = &merged.margin {
        evidence::decide(m, w)?;
    }
    Ok(merged)
}

/// [`merge_indented`] but the syntax stage ([`verify`]).
pub(crate) fn merge_unverified(
    content: &str,
    indent: &dyn Fn() -> Indent,
    snippet_text: &str,
    hints: &Hints<'_>,
) -> Result<Merged> {
    merge_unverified_with(content, indent, snippet_text, hints, RuleSet::ALL_ON)
}

/// [`merge_unverified`] with the rules `rules` switches on. A snippet is sent to change
/// something: when reading its retyped lines as the file's (rule `retyped-context`) leaves it
/// changing nothing, or nothing but blank lines, those lines are its change, and it is merged
/// with them read as changes — each in its file line's place: a reading that adds or drops
/// lines of code (a retyped comment kept and written again beside itself) is no such change,
/// and the first reading stands.
pub(crate) fn merge_unverified_with(
    content: &str,
    indent: &dyn Fn() -> Indent,
    snippet_text: &str,
    hints: &Hints<'_>,
    rules: RuleSet,
) -> Result<Merged> {
    let as_changes = || {
        if rules.on(Rule::RetypedContext) {
            let off = rules.without(Rule::RetypedContext);
            merge_once(content, indent, snippet_text, hints, off)
                .ok()
                .filter(|m| solid_lines(&m.content).count() == solid_lines(content).count())
        } else {
            None
        }
    };
    match merge_once(content, indent, snippet_text, hints, rules) {
        Err(e) if e.code == ErrorCode::ApplyNoop => as_changes().ok_or(e),
        Ok(m)
            if m.evidence
                .as_ref()
                .is_some_and(|e| e.writes_code == Code::BlankOnly) =>
        {
            Ok(as_changes().unwrap_or(m))
        }
        merged => merged,
    }
}

/// A text's lines that are not blank.
fn solid_lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines().filter(|l| !l.trim().is_empty())
}

/// One reading of the snippet under `rules`, from its lines to the checked result.
fn merge_once(
    content: &str,
    indent: &dyn Fn() -> Indent,
    snippet_text: &str,
    hints: &Hints<'_>,
    rules: RuleSet,
) -> Result<Merged> {
    if snippet_text.trim().is_empty() {
        return Err(Error::invalid_input("edit_snippet is empty"));
    }
    check_sizes(content, snippet_text)?;
    if content.is_empty() {
        return create(snippet_text, hints);
    }
    let body = body(snippet_text, hints);
    let (lines, final_newline) = split_lines(content);
    let file = FileIndex::of_text(&lines, content).with_source(hints.path, content);
    let snippet = Snippet::cut(prepare::read(&body, &file));
    if snippet.segments.is_empty() && snippet.removals.is_empty() {
        return Err(only_placeholders(&lines));
    }
    let ctx = Context::new(&file, &snippet).with_rules(rules);
    let instruction = hints
        .instruction
        .map(|i| hints::read(i, &file, ctx.defs()))
        .unwrap_or_default();
    let instruction = instruction.under(rules);
    ctx.set_renames(instruction.renames.clone());
    let planned = plan::plan(&ctx, &instruction)?;
    let (edits, shifts) = align_all(&ctx, &planned)?;
    let mut merged = check_stage(
        &ctx,
        &instruction,
        edits,
        hints,
        (content, final_newline),
        indent,
    )?;
    merged
        .warnings
        .extend(reindented(&planned, &shifts, &snippet.lines));
    Ok(merged)
}

/// The check stage (docs/DESIGN.md §5.1): grounding and rename checks on each aligned edit,
/// the evidence, the instruction's removals, the bracket balance, the rendering, the
/// independent licence check and its among-new refusal, and the guards on the result, each
/// under the rules `ctx.rules` switches on; `content` is the file's text, `final_newline`
/// whether it ends in a newline.
fn check_stage(
    ctx: &Context<'_>,
    instruction: &Instruction,
    edits: Vec<Edit>,
    hints: &Hints<'_>,
    (content, final_newline): (&str, bool),
    indent: &dyn Fn() -> Indent,
) -> Result<Merged> {
    let (file, snippet, rules) = (ctx.file, ctx.snippet, ctx.rules);
    for e in &edits {
        // (A diff-style snippet's deletions are its `-` lines, each licensed by itself.)
        if !snippet.diff_style && rules.on(Rule::Ground) {
            ground::check(ctx, e)?;
        }
        if rules.on(Rule::RenameCheck) {
            rename::check(file, &snippet.lines, e, ctx.renames())?;
        }
        if rules.on(Rule::DeletedCopy) {
            copies::check(file, &snippet.lines, e)?;
        }
    }
    let mut evidence = Evidence::of(file, &snippet.lines, &edits);
    if !rules.on(Rule::KeptBetween) {
        for s in &mut evidence.anchors {
            s.kept_between = None;
        }
    }
    if !rules.on(Rule::ChangedCopy) {
        evidence.changed_copy = None;
    }
    if !rules.on(Rule::HeadAsNew) {
        evidence.head_as_new = None;
    }
    if !rules.on(Rule::JoinedBlocks) {
        evidence.joined = None;
    }
    if !rules.on(Rule::EmptiedBlock) {
        evidence.emptied = None;
    }
    let mut edits = edits;
    let deletes = removal_edits(ctx, instruction, &mut edits)?;
    if deletes {
        evidence.writes_code = Code::Written;
    }
    let changed = edits
        .iter()
        .flat_map(|e| &e.ops)
        .filter(|op| matches!(op, Op::Drop(_) | Op::Change { .. }))
        .count();
    if rules.on(Rule::Balance) {
        guards::check_balance(file, &snippet.lines, &edits, text_kind(hints))?;
    }
    let written: HashSet<usize> = edits
        .iter()
        .flat_map(|e| &e.ops)
        .filter_map(|op| match *op {
            Op::Add(i) | Op::Change { i, .. } => Some(i),
            _ => None,
        })
        .collect();
    let out = render::render(file, &snippet.lines, edits, indent())?;
    let among_new = if rules.on(Rule::Licence) {
        licence::check(file, snippet, ctx.defs(), &instruction.removes, &out)?
    } else {
        Vec::new()
    };
    let among_new = if rules.on(Rule::AmongNew) {
        among_new
    } else {
        Vec::new()
    };
    if rules.on(Rule::DoubledDefinition) {
        doubled::check(file, &snippet.lines, &written, &out)?;
    }
    let merged = join_lines(&out, final_newline || out.is_empty());
    let new_lines: Vec<&str> = snippet
        .lines
        .iter()
        .filter(|l| l.count == 0 && !l.blank)
        .map(|l| l.text.as_str())
        .collect();
    let mut merged = guards::check(
        content,
        file,
        merged,
        if deletes {
            guards::Removals::Asked
        } else {
            guards::Removals::None
        },
        Some(&new_lines),
        Some(changed),
    )
    .map_err(|e| noop_hint(e, file, &snippet.lines))?;
    merged.evidence = Some(Evidence {
        among_new,
        ..evidence
    });
    Ok(merged)
}

/// A merge that changes nothing, whose snippet shows a file line without its trailing
/// comment: that reads as context (the line kept, comment and all), which the writer may
/// have meant as the comment's deletion. Say so, and how to delete it.
fn noop_hint(e: Error, file: &FileIndex<'_>, lines: &[prepare::SLine]) -> Error {
    if e.code != ErrorCode::ApplyNoop {
        return e;
    }
    // The file's lines by the key of their code without the trailing comment (first kept).
    let mut bare: HashMap<u64, usize> = HashMap::new();
    for (j, l) in file.lines.iter().enumerate() {
        if let Some(code) = lines::without_trailing_comment(l) {
            bare.entry(lines::key(code)).or_insert(j);
        }
    }
    let shortened = lines
        .iter()
        .filter(|l| l.is_old() && !l.blank)
        .find_map(|l| bare.get(&l.key).map(|&j| (l.at, j + 1)));
    match shortened {
        Some((at, j)) => Error::new(
            ErrorCode::ApplyNoop,
            format!(
                "{}. Snippet line {at} is file line {j} without its trailing comment, which \
                 reads as that line shown short (kept as it is): to delete the comment, send \
                 the old line as a `-` line and the new one as a `+` line",
                e.message
            ),
        ),
        None => e,
    }
}

/// Whether the file is prose (Markdown and the like) or code, as the bracket balance reads it.
fn text_kind(hints: &Hints<'_>) -> guards::Text {
    if is_markdown(extension(hints).as_deref())
        || extension(hints).is_some_and(|e| PROSE.contains(&e.as_str()))
    {
        guards::Text::Prose
    } else {
        guards::Text::Code
    }
}

/// Warnings for the segments written at another depth than the file's: their lines were
/// re-indented (by `shifts`, one per planned segment).
fn reindented(planned: &[Planned], shifts: &[i64], lines: &[prepare::SLine]) -> Vec<String> {
    planned
        .iter()
        .zip(shifts)
        .filter(|&(_, &shift)| shift != 0)
        .filter_map(|(p, &shift)| {
            let mut code = p.seg.lines.clone().filter(|&i| !lines[i].blank);
            let first = code.next()?;
            let last = code.next_back().unwrap_or(first);
            let (deeper, n) = if shift > 0 {
                ("deeper", shift)
            } else {
                ("shallower", -shift)
            };
            Some(format!(
                "snippet lines {}-{} were re-indented {n} columns {deeper}, to the file's depth",
                lines[first].at, lines[last].at
            ))
        })
        .collect()
}

/// The first file line a planned segment is tied to.
fn start_of(p: &Planned) -> usize {
    match &p.at {
        Where::Pins(pins) => pins.first().map_or(0, |p| p.j),
        Where::Insert { at, .. } => *at,
    }
}

/// The edits of all planned segments, aligned in file order so that each segment's edges
/// stop where its neighbours' begin; and each planned segment's re-indentation.
fn align_all(ctx: &Context<'_>, planned: &[Planned]) -> Result<(Vec<Edit>, Vec<i64>)> {
    // A segment with no unchanged line of its own sits at the snippet's usual offset.
    let all_pins: Vec<Pin> = planned
        .iter()
        .filter_map(|p| match &p.at {
            Where::Pins(pins) => Some(pins.iter().copied()),
            Where::Insert { .. } => None,
        })
        .flatten()
        .collect();
    let usual = shift_of(ctx, &all_pins).unwrap_or(0);
    let moved = if ctx.rules.on(Rule::MovedLines) {
        moved_keys(ctx.lines())
    } else {
        HashSet::new()
    };
    let mut order: Vec<usize> = (0..planned.len()).collect();
    order.sort_by_key(|&k| start_of(&planned[k]));
    let mut edits = Vec::with_capacity(planned.len());
    let mut shifts = vec![0; planned.len()];
    let mut lo = 0;
    for (n, &k) in order.iter().enumerate() {
        let hi = order
            .get(n + 1)
            .map_or(ctx.file.len(), |&next| start_of(&planned[next]));
        let mut e = edit_of(ctx, &planned[k], lo..hi, usual, &moved)?;
        if matches!(planned[k].at, Where::Pins(_)) && ctx.rules.on(Rule::Slide) {
            balance_gaps(ctx, planned, k, &mut e);
        }
        // A segment cut from the next at its blank line keeps that line, unless the file
        // line after it is blank already.
        if planned[k].seg.cut_after
            && (e.span.end >= ctx.file.len() || ctx.file.is_blank(e.span.end))
            && matches!(e.ops.last(), Some(Op::Add(i)) if ctx.lines()[*i].blank)
        {
            e.ops.pop();
        }
        lo = lo.max(e.span.end);
        if matches!(planned[k].at, Where::Pins(_)) {
            shifts[k] = e.shift;
        }
        edits.push(e);
    }
    if ctx.rules.on(Rule::MovedLines) {
        take_moved_at_open_edges(ctx, planned, &order, &mut edits, &moved);
    }
    Ok((edits, shifts))
}

/// Rule `moved-lines` at the snippet's open edges: a segment that opens (ends) the snippet
/// with no placeholder, and comes first (last) in the file, stands for the file from its top
/// (to its end). When every file line above its first line (below its last) is blank or the
/// old copy of a line the merge adds elsewhere — each added copy answering for one old line,
/// less those a deletion already answered for, and none of the line's copies kept in place
/// by the snippet (then the old one may be a line of its own) — those lines go with the
/// edge. One line the snippet does not add again keeps them all: the snippet may only have
/// left its placeholder out. A diff-style snippet deletes only its `-` lines.
fn take_moved_at_open_edges(
    ctx: &Context<'_>,
    planned: &[Planned],
    order: &[usize],
    edits: &mut [Edit],
    moved: &HashSet<u64>,
) {
    if moved.is_empty() || ctx.snippet.diff_style || edits.is_empty() {
        return;
    }
    let lines = ctx.lines();
    let file = ctx.file;
    let (first, n) = (&planned[order[0]], edits.len() - 1);
    let last = &planned[order[n]];
    let pinned = |p: &Planned| matches!(p.at, Where::Pins(_));
    // Only the segment first (last) in the file, opening (ending) the snippet with no
    // placeholder and not reaching the file's top (end) already, has lines beyond it to weigh.
    let head = pinned(first)
        && first.seg.gap_before.is_none()
        && !first.seg.cut_before
        && first.seg.lines.start == 0
        && edits[0].span.start > 0;
    let tail = pinned(last)
        && last.seg.gap_after.is_none()
        && !last.seg.cut_after
        && last.seg.lines.end == lines.len()
        && edits[n].span.end < file.len();
    if !head && !tail {
        return;
    }
    let mut added = added_again(lines, file, edits, moved);
    let mut all_moved = |r: std::ops::Range<usize>| {
        let mut taken = added.clone();
        let ok = r.clone().any(|j| !file.is_blank(j))
            && r.into_iter().all(|j| {
                file.is_blank(j)
                    || taken.get_mut(&file.key(j)).is_some_and(|n| {
                        let had = *n > 0;
                        *n = n.saturating_sub(1);
                        had
                    })
            });
        if ok {
            added = taken;
        }
        ok
    };
    if head && all_moved(0..edits[0].span.start) {
        let above = 0..edits[0].span.start;
        edits[0].ops.splice(0..0, above.map(Op::Drop));
        edits[0].span.start = 0;
    }
    if tail && all_moved(edits[n].span.end..file.len()) {
        let below = edits[n].span.end..file.len();
        edits[n].ops.extend(below.map(Op::Drop));
        edits[n].span.end = file.len();
    }
}

/// How many times the merge adds each moved line anew, less the old copies its deletions
/// already took; a line of which the snippet keeps a copy in place is not counted.
fn added_again(
    lines: &[prepare::SLine],
    file: &FileIndex<'_>,
    edits: &[Edit],
    moved: &HashSet<u64>,
) -> HashMap<u64, usize> {
    let ops = || edits.iter().flat_map(|e| e.ops.iter().copied());
    let kept: HashSet<u64> = ops()
        .filter_map(|op| match op {
            Op::Same { i, .. } | Op::Change { i, .. } => Some(lines[i].key),
            _ => None,
        })
        .collect();
    let mut added: HashMap<u64, usize> = HashMap::new();
    for op in ops() {
        if let Op::Add(i) = op
            && moved.contains(&lines[i].key)
            && !kept.contains(&lines[i].key)
        {
            *added.entry(lines[i].key).or_default() += 1;
        }
    }
    for op in ops() {
        if let Op::Drop(j) = op
            && let Some(n) = added.get_mut(&file.key(j))
        {
            *n = n.saturating_sub(1);
        }
    }
    added
}

/// Keys of the snippet's non-trivial file lines of which it shows every copy the file has:
/// a file line with such a key that an edge passes over was moved by the snippet (into
/// another part of it, or within one) and may go.
fn moved_keys(lines: &[prepare::SLine]) -> HashSet<u64> {
    let mut copies: HashMap<u64, usize> = HashMap::new();
    for l in lines {
        *copies.entry(l.key).or_default() += 1;
    }
    lines
        .iter()
        .filter(|l| !l.trivial && l.count > 0 && l.is_old() && copies[&l.key] >= l.count)
        .map(|l| l.key)
        .collect()
}

/// New code cut off by a placeholder that leaves a block open (closes one at the head) is
/// slid to balance — unless the neighbouring segment across the placeholder closes (opens)
/// that block itself: then the placeholder stands for the wrapped lines.
fn balance_gaps(ctx: &Context<'_>, planned: &[Planned], k: usize, e: &mut Edit) {
    let lines = ctx.lines();
    let seg = &planned[k].seg;
    let solid = |r: std::ops::Range<usize>| r.filter(|&i| !lines[i].blank).collect::<Vec<_>>();
    if seg.gap_after.is_some() {
        let next_closes = planned.get(k + 1).is_some_and(|n| {
            solid(n.seg.lines.clone())
                .first()
                .is_some_and(|&i| units::depth_change(&lines[i].text).0 < 0)
        });
        if !next_closes {
            slide::balance_at_gap(e, lines, slide::Edge::Tail);
        }
    }
    if seg.gap_before.is_some() {
        let prev_opens = k > 0
            && solid(planned[k - 1].seg.lines.clone())
                .last()
                .is_some_and(|&i| units::depth_change(&lines[i].text).0 > 0);
        if !prev_opens {
            slide::balance_at_gap(e, lines, slide::Edge::Head);
        }
    }
}

/// The edit of one planned segment, its edges within `bounds`.
fn edit_of(
    ctx: &Context<'_>,
    p: &Planned,
    bounds: std::ops::Range<usize>,
    usual: i64,
    moved: &HashSet<u64>,
) -> Result<Edit> {
    let lines = ctx.lines();
    match &p.at {
        Where::Pins(pins) => {
            if pins
                .windows(2)
                .any(|w| w[0].i >= w[1].i || w[0].j >= w[1].j)
            {
                // Anchors out of order: the snippet's parts do not fit the file in one way.
                return Err(Error::new(
                    ErrorCode::NeedsMoreContext,
                    format!(
                        "snippet lines {}-{} match file lines out of order; put a placeholder \
                         between the parts that belong to different places",
                        lines[pins[0].i].at,
                        lines[pins[pins.len() - 1].i].at
                    ),
                ));
            }
            let aligner = Aligner {
                lines,
                file: ctx.file,
                diff_style: ctx.snippet.diff_style,
                shift: shift_of(ctx, pins).unwrap_or(usual),
                moved,
                fresh: ctx.fresh_lines(&p.seg),
                cut: (p.seg.cut_before, p.seg.cut_after),
                open_start: p.seg.gap_before.is_none()
                    && !p.seg.cut_before
                    && p.seg.lines.start == 0,
                rules: ctx.rules,
            };
            aligner.align(p.seg.lines.clone(), pins, bounds)
        }
        Where::Insert {
            at,
            gap_above,
            gap_below,
            depth,
        } => {
            let core: Vec<usize> = {
                let r = p.seg.lines.clone();
                let first = r.clone().find(|&i| !lines[i].blank).unwrap_or(r.start);
                let last = r.clone().rev().find(|&i| !lines[i].blank).unwrap_or(first);
                (first..=last).collect()
            };
            // Separating blank lines: as many as the snippet shows there, at least one.
            let r = p.seg.lines.clone();
            let above = r.clone().take_while(|&i| lines[i].blank).count().max(1);
            let below = r.rev().take_while(|&i| lines[i].blank).count().max(1);
            let mut ops = Vec::with_capacity(core.len() + above + below);
            if *gap_above {
                ops.extend(std::iter::repeat_n(Op::Sep, above));
            }
            ops.extend(core.into_iter().map(Op::Add));
            if *gap_below {
                ops.extend(std::iter::repeat_n(Op::Sep, below));
            }
            let first = p.seg.lines.clone().find(|&i| !lines[i].blank);
            let shift = match (depth, first) {
                (Some(d), Some(i)) => i64::from(*d) - i64::from(lines[i].indent),
                _ => 0,
            };
            Ok(Edit {
                span: *at..*at,
                ops,
                shift,
                style: None,
            })
        }
    }
}

/// Columns a segment's lines sit deeper in the file than in the snippet: the offset of its
/// outermost non-trivial unchanged lines (those the snippet indents least), which a snippet
/// written at another depth as a whole moves with everything else, and a deliberate
/// re-indent inside the segment (a block wrapped in a new `if`) leaves alone. A segment with
/// a non-trivial unchanged line indented at its file line's own depth is written at the
/// file's depth (the lines that differ are re-indented on purpose: a block taken out of an
/// `if`): 0. (A line at column 0 proves nothing: a C label, a commented-out line or a string's
/// text sits there in any body, and a snippet pasted at column 0 matches it.) `None` when the
/// pins hold no such line.
fn shift_of(ctx: &Context<'_>, pins: &[Pin]) -> Option<i64> {
    let lines = ctx.lines();
    let solid: Vec<&Pin> = pins
        .iter()
        .filter(|p| !p.replace && !lines[p.i].trivial)
        .collect();
    let in_place = |p: &&&Pin| lines[p.i].indent > 0 && ctx.file.indent(p.j) == lines[p.i].indent;
    if solid.iter().any(|p| in_place(&p)) {
        return Some(0);
    }
    shift_of_outermost(ctx, &solid)
}

/// The offset most of a segment's outermost solid pins sit at (ties: the smallest).
fn shift_of_outermost(ctx: &Context<'_>, solid: &[&Pin]) -> Option<i64> {
    let lines = ctx.lines();
    let outer = solid.iter().map(|p| lines[p.i].indent).min()?;
    let mut counts: Vec<(i64, usize)> = Vec::new();
    for p in solid.iter().filter(|p| lines[p.i].indent == outer) {
        let d = i64::from(ctx.file.indent(p.j)) - i64::from(lines[p.i].indent);
        match counts.iter_mut().find(|(k, _)| *k == d) {
            Some((_, c)) => *c += 1,
            None => counts.push((d, 1)),
        }
    }
    counts
        .into_iter()
        .max_by_key(|&(d, c)| (c, -d.abs()))
        .map(|(d, _)| d)
}

/// Edits deleting the definitions `remove NAME` directives and the instruction name. A
/// directive whose name the file does not define once is refused; an instruction's removal
/// only applies to a definition no segment shows or touches.
fn removal_edits(
    ctx: &Context<'_>,
    instruction: &Instruction,
    edits: &mut Vec<Edit>,
) -> Result<bool> {
    let mut any = false;
    let shown = |name: &str| {
        ctx.lines()
            .iter()
            .any(|l| units::header_name(&l.text) == Some(name))
    };
    let directives = ctx.snippet.removals.iter().map(|n| (n, true));
    let spoken = instruction.removes.iter().map(|n| (n, false));
    for (name, directive) in directives.chain(spoken) {
        let headers = ctx.defs().headers(name);
        let [h] = *headers else {
            if directive {
                return Err(Error::new(
                    ErrorCode::NeedsMoreContext,
                    format!(
                        "`remove {name}`: the file defines `{name}` {} times, not once; show the \
                         definition's lines around a placeholder instead",
                        headers.len()
                    ),
                ));
            }
            continue;
        };
        if let Some(other) = units::shares_line(ctx.file, h, name) {
            return Err(Error::new(
                ErrorCode::NeedsMoreContext,
                format!(
                    "`remove {name}`: line {} also defines `{other}`, so removing the lines of \
                     `{name}` would take it too; show those lines as they should be instead",
                    h + 1
                ),
            ));
        }
        let (a, mut b) = units::file_extent_attached(ctx.file, h, name);
        while b < ctx.file.len() && ctx.file.is_blank(b) && (a == 0 || ctx.file.is_blank(a - 1)) {
            b += 1;
            if b < ctx.file.len() && !ctx.file.is_blank(b) {
                break;
            }
        }
        let overlaps = edits.iter().any(|e| e.span.start < b && a < e.span.end);
        if !directive && (overlaps || shown(name)) {
            continue;
        }
        if overlaps {
            return Err(Error::new(
                ErrorCode::NeedsMoreContext,
                format!(
                    "`remove {name}` deletes lines {}-{}, which the snippet also edits",
                    a + 1,
                    b
                ),
            ));
        }
        edits.push(Edit {
            span: a..b,
            ops: (a..b).map(Op::Drop).collect(),
            shift: 0,
            style: None,
        });
        any = true;
    }
    Ok(any)
}

fn only_placeholders(lines: &[&str]) -> Error {
    let defs = outline::top_level(lines);
    let listing = if defs.is_empty() {
        String::new()
    } else {
        format!(
            " The file's top-level definitions:\n{}",
            defs.iter()
                .take(costs::DEFS_LISTED)
                .cloned()
                .collect::<Vec<_>>()
                .join("\n")
        )
    };
    Error::new(
        ErrorCode::NeedsMoreContext,
        format!(
            "the snippet holds only placeholders, so there is nothing to place; include the \
             changed lines with 1-3 unchanged lines from the file above and below them.{listing}"
        ),
    )
}

/// The guards on a merge computed elsewhere (a model's answer): the same checks as the
/// deterministic merge's result, plus placeholder text that the file did not have.
pub(crate) fn check_external(
    original: &str,
    snippet_text: &str,
    hints: &Hints<'_>,
    merged: &str,
) -> Result<Merged> {
    let body = body(snippet_text, hints);
    let (lines, _) = split_lines(original);
    let file = FileIndex::new(&lines);
    let snippet = Snippet::cut(prepare::read(&body, &file));
    let mut result = guards::check(
        original,
        &file,
        merged.to_string(),
        if snippet.removals.is_empty() {
            guards::Removals::None
        } else {
            guards::Removals::Asked
        },
        None,
        None,
    )?;
    result
        .warnings
        .push("merged by the fallback model".to_string());
    Ok(result)
}

#[cfg(test)]
mod tests;
