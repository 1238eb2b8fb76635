//! The evidence a lazy merge rests on, as data, and the one decision made of it (docs/DESIGN.md
//! §5.1 6b, "sure or refuse"): every aligned segment says how it is anchored and what it
//! deletes, the licence check how many lost lines only a block among new lines licenses, and
//! the reading check whether the result parses as the file did; one function of that
//! evidence, with its weights in [`MarginWeights`] (part of `costs::Weights`), gives the merge
//! a margin, and a merge below the threshold is refused `NEEDS_MORE_CONTEXT`, naming its
//! weakest evidence and what to send.

use std::collections::HashSet;

use super::emptied::{self, Emptied};
use super::joins::{self, Joined};
use crate::edit::lazy::align::{Edit, Op};
use crate::edit::lazy::index::FileIndex;
use crate::edit::lazy::prepare::{Kind, SLine};
use crate::edit::{Error, ErrorCode, Result};

/// How a placed segment is tied to the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Anchor {
    /// At least one of its lines is a non-trivial line the file holds once, kept where it is.
    Unique {
        /// How many such lines.
        lines: usize,
    },
    /// Its file lines are all ones the file holds more than once, or trivial ones (closers,
    /// blank-ish lines): it floats wherever such lines stand.
    Repeated,
    /// No line of it is the file's: placed by its neighbours, the instruction or the file's
    /// outline.
    Position,
}

/// What the reading check found in the result's syntax.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Syntax {
    /// No parse error the file did not have (or no grammar to tell).
    #[default]
    Clean,
    /// A new parse error on a line of code whose text has an error in the snippet read alone
    /// too: the snippet's own broken code (at this 1-based result line). It costs the margin
    /// nothing: the review's syntax hold shows it to a person.
    Own(usize),
    /// A new parse error on a closer or another line that says little (`);`, `}`, `end`): a
    /// piece most likely placed where it does not fit (at this 1-based result line).
    Misfit(usize),
}

/// One aligned segment's evidence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Segment {
    /// Its first non-blank snippet line (1-based, as the agent wrote it).
    pub(crate) at: usize,
    /// How it is tied to the file.
    pub(crate) anchor: Anchor,
    /// The non-blank file lines it deletes or replaces.
    pub(crate) drops: usize,
    /// Non-blank file lines it keeps between two of its own lines (1-based, the first of them,
    /// and how many): the snippet writes those two one after the other, the merge leaves the
    /// file's lines between them — one reading of two (they go, or the snippet skipped them).
    pub(crate) kept_between: Option<(usize, usize)>,
}

impl Segment {
    fn weight(&self, w: &MarginWeights) -> f32 {
        self.anchor.weight(w)
    }
}

/// The evidence of one merge.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Evidence {
    /// Per aligned segment: where it is and how it holds.
    pub(crate) anchors: Vec<Segment>,
    /// The result's syntax.
    pub(crate) syntax: Syntax,
    /// File lines the result lost that only a block among new lines licenses (the licence
    /// check's `AmongNew` ground): the new code may merely repeat the file's lines there.
    pub(crate) among_new: Vec<usize>,
    /// A line the file holds once that the merge changes into another snippet line while the
    /// snippet writes it verbatim as new code elsewhere: (that snippet line, 1-based as
    /// written; the file line, 1-based). Two readings of one line (rule `changed-copy`).
    pub(crate) changed_copy: Option<(usize, usize)>,
    /// A segment's first line, right under a placeholder, that the merge writes as new code
    /// though the file has it where the segment goes (rule `head-as-new`): two readings.
    pub(crate) head_as_new: Option<HeadAsNew>,
    /// A deletion between two kept lines that joins the block above it to the one below
    /// (rule `joined-blocks`): two readings.
    pub(crate) joined: Option<Joined>,
    /// A new chain line (`} else if (…) {`) right under an unshown file header at its depth,
    /// leaving that header's block empty (rule `emptied-block`): two readings.
    pub(crate) emptied: Option<Emptied>,
    /// Whether the edits write or delete a line of code (not only blank lines).
    pub(crate) writes_code: Code,
}

/// Whether a merge's edits touch a line of code, or blank lines only.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Code {
    /// A new, changed or deleted line of code.
    #[default]
    Written,
    /// Blank lines added or deleted, nothing else.
    BlankOnly,
}

/// A segment's first line under a placeholder read as new code ([`Evidence::head_as_new`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HeadAsNew {
    /// That snippet line, 1-based as written.
    pub(crate) at: usize,
    /// The file line the new code goes before, 1-based.
    pub(crate) before: usize,
    /// The file's line with its text, 1-based: one the edit keeps after `before` if one is,
    /// else the nearest the edit does not delete.
    pub(crate) copy: usize,
    /// What the new code does in front of the kept line.
    pub(crate) ahead: Ahead,
}

/// What a first line read as new code does in front of the file line kept first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ahead {
    /// It heads new code that takes the file lines after it into itself (closes a block it
    /// did not open), or the edit also changes or deletes file lines there.
    Takes,
    /// It is the only new line there: context copied from another place as much as new code.
    Alone,
}

/// The weights of the decision, each with the reason for its value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MarginWeights {
    /// A segment held by one unique line; each more unique line adds [`Self::per_unique`] up
    /// to [`Self::unique_cap`].
    pub unique: f32,
    /// What each further unique line adds.
    pub per_unique: f32,
    /// The most a segment's unique lines give.
    pub unique_cap: f32,
    /// A segment held only by repeated or trivial lines. (Weighing one that deletes lower
    /// was measured with `eval --curve`: below the threshold it refused 5 right merges of
    /// git-history and 12 of git-history-wide for no harmful one.)
    pub repeated: f32,
    /// A segment of new code placed by its neighbours: as sure as those neighbours, whose own
    /// anchors count; its place was checked by the rules that chose it.
    pub position: f32,
    /// A merge deleting at least [`Self::among_new_min_lines`] lines that only a block among
    /// new lines licenses.
    pub among_new_deletion: f32,
    /// The fewest such lines that weigh.
    pub among_new_min_lines: usize,
    /// A new parse error on a closer-like line ([`Syntax::Misfit`]): a piece put where it
    /// does not fit.
    pub misfit_syntax: f32,
    /// A segment keeping file lines between two lines it writes one after the other
    /// ([`Segment::kept_between`]): the snippet says nothing stands there, the merge keeps
    /// what does; whether those lines go or were skipped, the snippet does not say.
    pub kept_between: f32,
    /// A merge changing a line the file has once into another snippet line while adding that
    /// line's text verbatim elsewhere ([`Evidence::changed_copy`]).
    pub changed_copy: f32,
    /// A merge writing a segment's first line, right under a placeholder, as new code though
    /// the file has it where the segment goes ([`Evidence::head_as_new`]).
    pub head_as_new: f32,
    /// A deletion joining the block above it to the one below ([`Evidence::joined`]).
    pub joined_blocks: f32,
    /// New code that leaves a file header's block empty ([`Evidence::emptied`]).
    pub emptied_block: f32,
    /// Merges with a margin below this are refused.
    pub threshold: f32,
}

/// The weights the merge uses (they live with every other tuning number, in `costs.rs`).
pub const MARGIN: MarginWeights = crate::edit::lazy::costs::WEIGHTS.margin;

/// The margin of a merge: how sure it is, and the evidence that makes it least sure.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Margin {
    /// The margin (above the threshold: merged; below: refused).
    pub value: f32,
    /// The weakest evidence, in words, for the refusal.
    pub weakest: String,
}

impl Anchor {
    /// How an aligned segment's edit ties it to `file`: by the file lines it keeps where they
    /// are (a changed line replaces one, it does not hold the place).
    pub(crate) fn of(file: &FileIndex<'_>, ops: &[Op]) -> Anchor {
        let kept: Vec<usize> = ops
            .iter()
            .filter_map(|op| match *op {
                Op::Same { j, .. } if !file.is_blank(j) => Some(j),
                _ => None,
            })
            .collect();
        let unique = kept
            .iter()
            .filter(|&&j| !file.is_trivial(j) && file.count(file.key(j)) == 1)
            .count();
        match (unique, kept.is_empty()) {
            (0, true) => Anchor::Position,
            (0, false) => Anchor::Repeated,
            (n, _) => Anchor::Unique { lines: n },
        }
    }

    fn weight(self, w: &MarginWeights) -> f32 {
        match self {
            Anchor::Unique { lines } => {
                (w.unique + w.per_unique * (lines - 1) as f32).min(w.unique_cap)
            }
            Anchor::Repeated => w.repeated,
            Anchor::Position => w.position,
        }
    }
}

impl Evidence {
    /// The anchors of the aligned segments' edits.
    pub(crate) fn of(file: &FileIndex<'_>, lines: &[SLine], edits: &[Edit]) -> Evidence {
        let anchors = edits
            .iter()
            .map(|e| {
                let first = e.ops.iter().find_map(|op| match *op {
                    Op::Same { i, .. } | Op::Change { i, .. } | Op::Add(i) if !lines[i].blank => {
                        Some(lines[i].at)
                    }
                    _ => None,
                });
                let drops = e
                    .ops
                    .iter()
                    .filter(|op| match **op {
                        Op::Drop(j) | Op::Change { j, .. } => !file.is_blank(j),
                        _ => false,
                    })
                    .count();
                Segment {
                    // A segment of blank lines only: its place in the file names it.
                    at: first.unwrap_or(1),
                    anchor: Anchor::of(file, &e.ops),
                    drops,
                    kept_between: kept_between(file, lines, &e.ops),
                }
            })
            .collect();
        Evidence {
            anchors,
            syntax: Syntax::Clean,
            among_new: Vec::new(),
            changed_copy: changed_copy(file, lines, edits),
            head_as_new: edits.iter().find_map(|e| head_as_new(file, lines, e)),
            joined: joins::joined(file, lines, edits),
            emptied: emptied::emptied(file, lines, edits),
            writes_code: writes_code(file, lines, edits),
        }
    }

    /// The margin under `w`: the weakest segment's anchor, less what the syntax costs.
    pub(crate) fn margin(&self, w: &MarginWeights) -> Margin {
        let mut m = self.anchored(w);
        if let Some((at, j)) = self.changed_copy
            && w.changed_copy < m.value
        {
            m.value = w.changed_copy;
            m.weakest = format!(
                "snippet line {at} is file line {j} as it stands (the file has it once), yet \
                 this reading adds it as new code and changes file line {j} into another \
                 snippet line: either that line stays where it is and the snippet's lines \
                 around it go there, or it moves. Show one or two unchanged lines next to \
                 the new code, or mark what goes with `-` lines"
            );
        }
        if let Some((at, n)) = self.anchors.iter().find_map(|s| s.kept_between)
            && w.kept_between < m.value
        {
            m.value = w.kept_between;
            m.weakest = format!(
                "the snippet writes two lines one after the other where the file has {n} \
                 line(s) between them (from line {at}), which it neither shows nor deletes: \
                 they may go, or the snippet may have skipped them. Show them as they are to \
                 be, mark them with `-` lines, or put a placeholder between the two lines"
            );
        }
        if let Some(c) = self.head_as_new
            && w.head_as_new < m.value
        {
            m.value = w.head_as_new;
            m.weakest = c.why();
        }
        if let Some(j) = &self.joined
            && w.joined_blocks < m.value
        {
            m.value = w.joined_blocks;
            m.weakest = j.why();
        }
        if let Some(e) = &self.emptied
            && w.emptied_block < m.value
        {
            m.value = w.emptied_block;
            m.weakest = e.why();
        }
        m
    }

    /// The margin of the anchors, the deletions among new lines and the syntax.
    fn anchored(&self, w: &MarginWeights) -> Margin {
        let weakest = self
            .anchors
            .iter()
            .min_by(|a, b| a.weight(w).total_cmp(&b.weight(w)));
        let (mut value, mut why) = match weakest {
            Some(s) => (s.weight(w), describe(s)),
            None => (w.unique_cap, "the snippet only removes".to_string()),
        };
        let mut advice = ANCHOR_ADVICE;
        if let Some(&first) = self.among_new.iter().min()
            && self.among_new.len() >= w.among_new_min_lines
            && w.among_new_deletion < value
        {
            value = w.among_new_deletion;
            advice = "";
            why = format!(
                "it deletes {} file line(s) from line {} that only snippet lines standing among \
                 new code place (the new code may merely repeat the file's lines there): to \
                 delete them, mark them with `-` lines or say `remove NAME`; to keep them, put \
                 a placeholder where they stand",
                self.among_new.len(),
                first + 1
            );
        }
        if let Syntax::Misfit(line) = self.syntax {
            value -= w.misfit_syntax;
            why = format!(
                "{why}; merged so, the file gets a syntax error at line {line} it did not have"
            );
        }
        why.push_str(advice);
        Margin {
            value,
            weakest: why,
        }
    }
}

/// What to send when a segment's anchor is the weakest evidence.
const ANCHOR_ADVICE: &str = ". Show one or two unchanged lines that occur once in the file next \
                             to that segment (or say where it goes in the instruction)";

/// The first non-blank file line an edit keeps between two non-blank snippet lines that
/// stand one after the other in the snippet (blank lines aside; a placeholder between them
/// keeps what lies there), 1-based, and how many such lines it keeps there.
fn kept_between(file: &FileIndex<'_>, lines: &[SLine], ops: &[Op]) -> Option<(usize, usize)> {
    let mut last: Option<usize> = None;
    let mut kept: Vec<usize> = Vec::new();
    let mut found: Option<(usize, usize)> = None;
    for op in ops {
        match *op {
            Op::Same { i, .. } | Op::Change { i, .. } | Op::Add(i) if !lines[i].blank => {
                // Asked last, and only when lines were kept: `floats_down` walks back over a
                // run of closers, and asked at each of thousands it was quadratic.
                let together =
                    || last.is_some_and(|p| adjacent(lines, p, i) && !floats_down(lines, p));
                if found.is_none() && !kept.is_empty() && together() {
                    found = Some((kept[0] + 1, kept.len()));
                }
                kept.clear();
                last = Some(i);
            }
            Op::Keep(j) if !file.is_blank(j) => kept.push(j),
            _ => {}
        }
    }
    found
}

/// The first line the file holds once (non-trivial) that an edit replaces by other snippet
/// lines (changes, or deletes where it adds other lines) while some edit adds, as the outermost
/// line of a segment (next to a placeholder or the snippet's start or end: where snippets put
/// their context), a snippet line with exactly its text: (that snippet line as written, the
/// file line 1-based). Not when the copy's nearest kept neighbour in its segment is a line the
/// file holds once: a sure anchor placed it there, and the line moved (a statement moved to a
/// block's end); nor a copy written as a `+` line. A deletion with nothing added beside it is
/// a move, not a replacement.
fn changed_copy(file: &FileIndex<'_>, lines: &[SLine], edits: &[Edit]) -> Option<(usize, usize)> {
    let mut added: Vec<usize> = edits
        .iter()
        .flat_map(|e| &e.ops)
        .filter_map(|op| match *op {
            Op::Add(i)
                if lines[i].kind == Kind::Plain
                    && !lines[i].blank
                    && !lines[i].trivial
                    && lines[i].count == 1
                    && outermost(lines, i) =>
            {
                Some(i)
            }
            _ => None,
        })
        .collect();
    if added.is_empty() {
        return None;
    }
    // (Most merges stop above: the lines kept in place are gathered only past it.)
    let kept: HashSet<usize> = edits
        .iter()
        .flat_map(|e| &e.ops)
        .filter_map(|op| match *op {
            Op::Same { i, .. } => Some(i),
            _ => None,
        })
        .collect();
    added.retain(|&i| !beside_unique(lines, &kept, i));
    if added.is_empty() {
        return None;
    }
    let copy_of = |j: usize| added.iter().find(|&&i| lines[i].key == file.key(j));
    edits.iter().find_map(|e| {
        // The edit's hunks: its operations between lines it keeps.
        e.ops
            .split(|op| matches!(op, Op::Same { .. } | Op::Keep(_)))
            .find_map(|hunk| replaced_copy(file, lines, hunk, &copy_of))
    })
}

/// In one hunk of an edit, the first file line it changes, or deletes where it adds other
/// lines, whose text `copy_of` finds added outside the hunk: (that copy as written, the file
/// line 1-based).
fn replaced_copy<'a>(
    file: &FileIndex<'_>,
    lines: &[SLine],
    hunk: &[Op],
    copy_of: &dyn Fn(usize) -> Option<&'a usize>,
) -> Option<(usize, usize)> {
    // The keys of the lines the hunk writes (two distinct ones tell that any line has an
    // other beside it), and the lines it adds: a copy added here stays where the line stood.
    let mut written: Vec<u64> = Vec::with_capacity(2);
    let mut adds: HashSet<usize> = HashSet::new();
    for op in hunk {
        if let Op::Add(i) | Op::Change { i, .. } = *op {
            if matches!(op, Op::Add(_)) {
                adds.insert(i);
            }
            if !lines[i].blank && written.len() < 2 && !written.contains(&lines[i].key) {
                written.push(lines[i].key);
            }
        }
    }
    let adds_other = |j: usize| written.iter().any(|&k| k != file.key(j));
    let far_copy = |j: usize| {
        copy_of(j)
            .filter(|&&i| !adds.contains(&i))
            .map(|&i| (lines[i].at, j + 1))
    };
    hunk.iter().find_map(|op| match *op {
        Op::Change { j, .. } => far_copy(j),
        Op::Drop(j) if adds_other(j) => far_copy(j),
        _ => None,
    })
}

/// Whether the nearest snippet line the merge keeps in place on either side of line `i`,
/// within its segment, is a line the file holds once (non-trivial).
fn beside_unique(lines: &[SLine], kept: &HashSet<usize>, i: usize) -> bool {
    let cut = |a: usize, b: usize| !written_together(lines, a, b);
    let sure = |k: usize| kept.contains(&k) && lines[k].count == 1 && !lines[k].trivial;
    let mut up = i;
    while up > 0 && !cut(up - 1, up) {
        up -= 1;
        if kept.contains(&up) {
            if sure(up) {
                return true;
            }
            break;
        }
    }
    let mut down = i;
    while down + 1 < lines.len() && !cut(down, down + 1) {
        down += 1;
        if kept.contains(&down) {
            return sure(down);
        }
    }
    false
}

/// Whether snippet line `i` is the first or last non-blank line of its segment: only blank
/// lines stand between it and a placeholder (a line the snippet has that is no code line) or
/// the snippet's start or end.
fn outermost(lines: &[SLine], i: usize) -> bool {
    let cut = |a: usize, b: usize| !written_together(lines, a, b);
    let up = (0..i).rev().find(|&k| !lines[k].blank);
    let down = (i + 1..lines.len()).find(|&k| !lines[k].blank);
    let first = match up {
        None => true,
        Some(k) => cut(k, i),
    };
    let last = match down {
        None => true,
        Some(k) => cut(i, k),
    };
    first || last
}

/// Whether snippet lines `a` and `b` (`a` before `b`) stand with no placeholder or other
/// non-code line between them as the agent wrote them (their line numbers as far apart as
/// their places among the code lines).
fn written_together(lines: &[SLine], a: usize, b: usize) -> bool {
    lines[b].at == lines[a].at + (b - a)
}

/// Whether snippet lines `p` and `i` (`p` before `i`) stand one after the other as the agent
/// wrote them, blank lines between them aside: no placeholder or other line between.
fn adjacent(lines: &[SLine], p: usize, i: usize) -> bool {
    i > p && written_together(lines, p, i) && lines[p + 1..i].iter().all(|l| l.blank)
}

/// Whether snippet line `p` is a closer (or another line that says nothing) in a run of such
/// lines that starts right under a placeholder or the snippet's start: it may be any of the
/// file's like closers further down, and the lines it seems to skip stand under that
/// placeholder.
fn floats_down(lines: &[SLine], p: usize) -> bool {
    let mut k = p;
    loop {
        if !(lines[k].trivial || lines[k].blank) {
            return false;
        }
        if k == 0 || !written_together(lines, k - 1, k) {
            return true;
        }
        k -= 1;
    }
}

/// The first line of a segment that stands right under a placeholder (or first in the
/// snippet), where snippets show the file's own lines, when the edit writes it as new code in
/// front of the file line it keeps first, and the file has that line too: one the edit keeps
/// from there on when the new lines close a block they did not open (they take lines of the
/// file that stand after them into it), or, when the edit also changes or
/// deletes file lines before that kept line, one anywhere that the edit does not delete or
/// change (a copy it deletes is a line the snippet moved). Not when only new lines come
/// before a kept line with that very text: keeping the first line there and writing its like
/// after the new code gives the same text (a function appended after the file's last `}`).
/// Not for diff-style `+` lines (written as new).
fn head_as_new(file: &FileIndex<'_>, lines: &[SLine], e: &Edit) -> Option<HeadAsNew> {
    let first = e.ops.iter().find(|op| match **op {
        Op::Same { i, .. } | Op::Change { i, .. } | Op::Add(i) => !lines[i].blank,
        _ => false,
    })?;
    let &Op::Add(i) = first else { return None };
    let line = &lines[i];
    let under_placeholder = !(0..i)
        .rev()
        .find(|&k| !lines[k].blank)
        .is_some_and(|k| written_together(lines, k, i));
    if line.kind != Kind::Plain || !under_placeholder || !file.contains(line.key) {
        return None;
    }
    let kept = |op: &Op| matches!(*op, Op::Same { j, .. } if !file.is_blank(j));
    let at = e.ops.iter().position(kept)?;
    let Op::Same { j: before, .. } = e.ops[at] else {
        return None;
    };
    let only_new = e.ops[..at]
        .iter()
        .all(|op| matches!(op, Op::Add(_) | Op::Sep | Op::Same { .. }));
    // A lone new line before the kept one, and a line the file has elsewhere: the snippet's
    // context from another place as much as one new line here.
    let solid_added = |op: &&Op| matches!(**op, Op::Add(k) if !lines[k].blank);
    let lone = e.ops[..at].iter().filter(solid_added).count() == 1;
    // With only new lines before the kept one, the new code takes file lines into itself only
    // when it closes a block it did not open (a balanced new item above a commented sibling
    // takes none), and not when the kept line is the first line's like (the same text).
    let takes = closes_unopened(lines, &e.ops[..at]);
    if only_new && (file.key(before) == line.key || !(takes || lone)) {
        return None;
    }
    // A copy the edit deletes or changes is a line the snippet moved, not a second reading.
    // Both sets once: the line's text may stand thousands of times in a long segment.
    let (kept_here, gone) = kept_and_gone(e);
    let positions = file.positions(line.key);
    let in_span = positions
        .iter()
        .map(|&j| j as usize)
        .find(|&j| j >= before && kept_here.contains(&j));
    if only_new && takes && in_span.is_none() {
        return None;
    }
    let copy = in_span.or_else(|| {
        positions
            .iter()
            .map(|&j| j as usize)
            .filter(|j| !gone.contains(j))
            .min_by_key(|&j| j.abs_diff(before))
    })?;
    let ahead = if only_new && !takes {
        Ahead::Alone
    } else {
        Ahead::Takes
    };
    Some(HeadAsNew {
        at: line.at,
        before: before + 1,
        copy: copy + 1,
        ahead,
    })
}

/// Whether `edits` write or delete a line of code.
fn writes_code(file: &FileIndex<'_>, lines: &[SLine], edits: &[Edit]) -> Code {
    let code = edits.iter().flat_map(|e| &e.ops).any(|op| match *op {
        Op::Add(i) => !lines[i].blank,
        Op::Change { .. } => true,
        Op::Drop(j) => !file.is_blank(j),
        _ => false,
    });
    if code { Code::Written } else { Code::BlankOnly }
}

/// The file lines an edit keeps as the snippet shows them, and those it deletes or changes.
fn kept_and_gone(e: &Edit) -> (HashSet<usize>, HashSet<usize>) {
    let (mut kept, mut gone) = (HashSet::new(), HashSet::new());
    for op in &e.ops {
        match *op {
            Op::Same { j, .. } => {
                kept.insert(j);
            }
            Op::Drop(j) | Op::Change { j, .. } => {
                gone.insert(j);
            }
            _ => {}
        }
    }
    (kept, gone)
}

/// Whether the snippet lines `ops` add close a block they did not open: the first is a
/// closer (`}`, `end`), or their brackets, counted in order, close more than they opened.
fn closes_unopened(lines: &[SLine], ops: &[Op]) -> bool {
    let mut depth = 0i64;
    let mut first = true;
    for op in ops {
        let Op::Add(i) = *op else { continue };
        let text = &lines[i].text;
        if first && !lines[i].blank && crate::edit::lazy::lines::is_closer(text) {
            return true;
        }
        first &= lines[i].blank;
        for c in text.chars() {
            depth += match c {
                '{' | '(' | '[' => 1,
                '}' | ')' | ']' => -1,
                _ => 0,
            };
            if depth < 0 {
                return true;
            }
        }
    }
    false
}

impl HeadAsNew {
    /// The refusal's words: both readings, and what to send.
    fn why(&self) -> String {
        let Self {
            at,
            before,
            copy,
            ahead,
        } = *self;
        let reading = match ahead {
            Ahead::Takes => format!(
                "writes it as new code before file line {before}, and the file lines after it \
                 go to the new code; it may be the file's own line {copy}, with the new code \
                 after it"
            ),
            Ahead::Alone => format!(
                "writes it as the one new line before file line {before}; it may be the \
                 file's own line {copy}, the lines after it then new code there"
            ),
        };
        format!(
            "snippet line {at} stands right under a placeholder, where snippets show the \
             file's own lines, yet this reading {reading}. Show one or two unchanged lines \
             above it, or mark the lines that go with `-` lines"
        )
    }
}

fn describe(s: &Segment) -> String {
    let at = s.at;
    let deleting = if s.drops > 0 {
        format!(" and deletes {} file line(s) there", s.drops)
    } else {
        String::new()
    };
    match s.anchor {
        Anchor::Unique { lines } => {
            format!(
                "the segment at snippet line {at} is held by {lines} line(s) unique in the file"
            )
        }
        Anchor::Repeated => format!(
            "the segment at snippet line {at} is held only by lines the file has more than once \
             (or closers){deleting}, so it could stand at any of their places"
        ),
        Anchor::Position => {
            format!("the segment at snippet line {at} holds no line of the file")
        }
    }
}

/// Refuse a merge whose margin is below `w.threshold`.
pub(crate) fn decide(margin: &Margin, w: &MarginWeights) -> Result<()> {
    if margin.value >= w.threshold {
        return Ok(());
    }
    Err(Error::new(
        ErrorCode::NeedsMoreContext,
        format!(
            "not sure enough of this reading to write it: {}",
            margin.weakest
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edit::Merged;
    use crate::edit::lazy::{MARGIN, decide, weigh};

    const FILE: [&str; 7] = [
        "fn a() {",
        "    one();",
        "}",
        "",
        "fn b() {",
        "    one();",
        "}",
    ];

    fn segment(anchor: Anchor) -> Segment {
        Segment {
            at: 2,
            anchor,
            drops: 0,
            kept_between: None,
        }
    }

    #[test]
    fn a_segment_keeping_a_line_the_file_holds_once_is_anchored_by_it() {
        let file = FileIndex::new(&FILE);
        let ops = [Op::Same { i: 0, j: 0 }, Op::Add(1), Op::Same { i: 2, j: 2 }];
        assert_eq!(Anchor::of(&file, &ops), Anchor::Unique { lines: 1 });
    }

    #[test]
    fn a_segment_keeping_only_repeated_lines_or_closers_floats() {
        let file = FileIndex::new(&FILE);
        // `one();` stands twice in the file, `}` is a closer: either place would do.
        let ops = [Op::Same { i: 0, j: 1 }, Op::Add(1), Op::Same { i: 2, j: 2 }];
        assert_eq!(Anchor::of(&file, &ops), Anchor::Repeated);
        // A changed line replaces a file line: it holds no place.
        let ops = [Op::Change { i: 0, j: 0 }, Op::Add(1)];
        assert_eq!(Anchor::of(&file, &ops), Anchor::Position);
    }

    #[test]
    fn the_margin_is_the_weakest_segment_less_what_a_new_syntax_error_costs() {
        let w = MARGIN;
        let mut e = Evidence {
            anchors: vec![
                segment(Anchor::Unique { lines: 3 }),
                segment(Anchor::Repeated),
            ],
            syntax: Syntax::Clean,
            among_new: Vec::new(),
            changed_copy: None,
            head_as_new: None,
            joined: None,
            emptied: None,
            writes_code: Code::Written,
        };
        assert_eq!(e.margin(&w).value, w.repeated);
        assert!(e.margin(&w).weakest.contains("more than once"));
        e.syntax = Syntax::Misfit(9);
        let m = e.margin(&w);
        assert_eq!(m.value, w.repeated - w.misfit_syntax);
        assert!(
            m.weakest.contains("syntax error at line 9"),
            "{}",
            m.weakest
        );
        // Two unique lines outweigh the syntax error; one does not.
        e.anchors = vec![segment(Anchor::Unique { lines: 2 })];
        assert!(decide_margin(&e).is_ok());
        e.anchors = vec![segment(Anchor::Unique { lines: 1 })];
        assert!(decide_margin(&e).is_err());
        // The snippet's own broken code costs nothing: the review's syntax hold shows it.
        e.syntax = Syntax::Own(9);
        assert!(decide_margin(&e).is_ok());
        // Without the syntax error, a floating segment alone still merges.
        e.syntax = Syntax::Clean;
        e.anchors = vec![segment(Anchor::Repeated)];
        assert!(decide_margin(&e).is_ok());
    }

    #[test]
    fn a_deletion_licensed_only_among_new_lines_is_refused_naming_its_lines() {
        let w = MARGIN;
        let mut e = Evidence {
            anchors: vec![segment(Anchor::Unique { lines: 4 })],
            syntax: Syntax::Clean,
            among_new: (20..26).collect(),
            changed_copy: None,
            head_as_new: None,
            joined: None,
            emptied: None,
            writes_code: Code::Written,
        };
        let m = e.margin(&w);
        assert_eq!(m.value, w.among_new_deletion);
        assert!(
            m.weakest.contains("deletes 6 file line(s) from line 21"),
            "{}",
            m.weakest
        );
        assert!(m.weakest.contains("`-` lines"), "{}", m.weakest);
        assert!(decide_margin(&e).is_err());
        e.among_new.clear();
        assert!(decide_margin(&e).is_ok());
    }

    /// Two like calls; the snippet rewrites the second's first argument, but the lines it
    /// shows around it stand in both, so the reading that keeps the old argument beside the
    /// new one (the snippet writes `&other,` and `120,` together) is refused, naming the line
    /// (that reading is what the merge wrote before this evidence: `&other,` then `&state,`).
    #[test]
    fn a_segment_keeping_a_file_line_between_two_lines_it_writes_together_is_refused() {
        let file = "fn a() {\n    let t = start(\n        &state,\n        120,\n        30,\n    );\n}\n\nfn b() {\n    let t = start(\n        &state,\n        120,\n        30,\n    );\n}\n";
        let snippet = "// ... existing code ...\nfn b() {\n    let other = 1;\n    let t = start(\n        &other,\n        120,\n        30,\n// ... existing code ...\n";
        let hints = crate::edit::Hints {
            path: Some("x.rs"),
            instruction: None,
        };
        let e = crate::edit::lazy::merge(file, snippet, &hints).unwrap_err();
        assert_eq!(e.code, ErrorCode::NeedsMoreContext);
        assert!(
            e.message.contains("1 line(s) between them (from line 11)"),
            "{}",
            e.message
        );
    }

    /// A new branch written after a sibling that ends alike, the snippet's first line the
    /// sibling's `end`: read as new code, that `end` would close the sibling before its
    /// `return` and the new branch take the sibling's ending; the merge names both readings.
    #[test]
    fn a_first_line_under_a_placeholder_read_as_new_code_is_refused() {
        let file = "def area(s)\n  if s.w < 0\n    warn \"negative width\"\n    return 0\n  end\n  s.w * s.h\nend\n";
        let snippet = "# ... existing code ...\n  end\n  if s.h < 0\n    warn \"negative height\"\n    return 0\n  end\n  s.w * s.h\n# ... existing code ...\n";
        let hints = crate::edit::Hints {
            path: Some("area.rb"),
            instruction: None,
        };
        let e = crate::edit::lazy::merge(file, snippet, &hints).unwrap_err();
        assert_eq!(e.code, ErrorCode::NeedsMoreContext);
        assert!(
            e.message
                .contains("snippet line 2 stands right under a placeholder")
                && e.message.contains("own line 5"),
            "{}",
            e.message
        );
    }

    /// A closer right under a placeholder may be any of the file's like closers further down:
    /// what it seems to skip stands under the placeholder, and the merge keeps it.
    #[test]
    fn a_closer_under_a_placeholder_does_not_count_as_written_together_with_the_next_line() {
        let file = "fn f() {\n    if a {\n        one();\n    }\n    if b {\n        two();\n    }\n    last();\n}\n";
        let snippet = "fn f() {\n    if a {\n        // ...\n    }\n    last();\n    more();\n}\n";
        let hints = crate::edit::Hints {
            path: Some("x.rs"),
            instruction: None,
        };
        let m = crate::edit::lazy::merge(file, snippet, &hints).unwrap();
        assert_eq!(
            m.content,
            file.replace("    last();\n", "    last();\n    more();\n")
        );
    }

    mod properties {
        //! For random files: a merge that deletes file lines whose only anchor is a line
        //! standing among new lines (the new code may merely repeat it) is refused, or keeps
        //! them.

        use crate::edit::Hints;
        use proptest::prelude::*;

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(200))]

            #[test]
            fn a_deletion_anchored_only_among_new_lines_is_refused(
                n in 12usize..50,
                at in 0.0f64..1.0,
                gap in 1usize..6,
                added in 1usize..4,
            ) {
                let body: Vec<String> = (0..n).map(|k| format!("    let v{k} = f({k});")).collect();
                let a = 1 + ((n - gap - 4) as f64 * at) as usize;
                let c = a + gap + 1;
                let file = format!("fn main() {{\n{}\n}}\n", body.join("\n"));
                let new = |tag: &str| {
                    (0..added)
                        .map(|k| format!("    println!(\"{tag} {k}\");"))
                        .collect::<Vec<_>>()
                        .join("\n")
                };
                // New lines, the file's line `a` among them, more new lines, then `c`, which
                // a placeholder grounds: read so, the lines between `a` and `c` go.
                let snippet = format!(
                    "// ...\n{}\n{}\n{}\n{}\n// ...\n",
                    new("before"),
                    body[a],
                    new("after"),
                    body[c]
                );
                let hints = Hints { path: Some("x.rs"), instruction: None };
                if let Ok(m) = crate::edit::lazy::merge(&file, &snippet, &hints) {
                    for line in &body[a + 1..c] {
                        prop_assert!(
                            m.content.contains(line.as_str()),
                            "{line:?} deleted:\n{}",
                            m.content
                        );
                    }
                }
            }
        }
    }

    fn decide_margin(e: &Evidence) -> Result<()> {
        super::decide(&e.margin(&MARGIN), &MARGIN)
    }

    /// Through the syntax stage: a result with a new parse error on the snippet's own broken
    /// lines (a fragment's `);` and `}`), merged by a segment held only by such lines, is
    /// refused, naming both; held by two unique lines it stands.
    #[test]
    fn a_floating_segment_that_leaves_a_new_parse_error_is_refused() {
        let content = "fn a() {\n    one(\n        1,\n    );\n}\n";
        let result = "fn a() {\n    one(\n        1,\n    );\n}\n    );\n}\n\nfn c() {}\n";
        let snippet = "    );\n}\n\nfn c() {}\n";
        let hints = crate::edit::Hints {
            path: Some("x.rs"),
            instruction: None,
        };
        let merged = |anchor| Merged {
            content: result.to_string(),
            evidence: Some(Evidence {
                anchors: vec![segment(anchor)],
                syntax: Syntax::Clean,
                among_new: Vec::new(),
                changed_copy: None,
                head_as_new: None,
                joined: None,
                emptied: None,
                writes_code: Code::Written,
            }),
            ..Merged::default()
        };
        let weighed = weigh(content, snippet, &hints, merged(Anchor::Repeated), &MARGIN).unwrap();
        let e = decide(weighed, &MARGIN).unwrap_err();
        assert_eq!(e.code, ErrorCode::NeedsMoreContext);
        assert!(e.message.contains("more than once"), "{}", e.message);
        assert!(e.message.contains("syntax error at line"), "{}", e.message);
        let sure = merged(Anchor::Unique { lines: 2 });
        let weighed = weigh(content, snippet, &hints, sure, &MARGIN).unwrap();
        assert!(decide(weighed, &MARGIN).is_ok());
    }
}
