//! Pure diffing of two versions of a file: hunks with context, unified-diff text, counts, and
//! applying a chosen subset of hunks (what a reviewer accepts). Lines are compared with their
//! line breaks, so a change of the final line break is a change like any other and renders as
//! `\ No newline at end of file`.

use similar::{Algorithm, DiffTag, capture_diff_slices};

/// Default context lines around a change.
pub(crate) const CONTEXT: usize = 3;

/// What a diff line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tag {
    /// Unchanged.
    Equal,
    /// Only in the old version.
    Delete,
    /// Only in the new version.
    Insert,
}

/// One displayed line of a hunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffLine {
    /// Unchanged, removed or added.
    pub tag: Tag,
    /// The text without its line break.
    pub text: String,
    /// Whether the line has no line break (last line of a file without a final newline).
    pub no_newline: bool,
    /// 0-based line in the old version.
    pub old_index: Option<usize>,
    /// 0-based line in the new version.
    pub new_index: Option<usize>,
}

/// One contiguous change between the versions (no context).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// Old lines replaced (0-based, half-open).
    pub old: std::ops::Range<usize>,
    /// New lines that replace them.
    pub new: std::ops::Range<usize>,
}

/// A hunk: one or more changes with the context around them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffHunk {
    /// 0-based first old line shown.
    pub old_start: usize,
    /// Old lines shown.
    pub old_len: usize,
    /// 0-based first new line shown.
    pub new_start: usize,
    /// New lines shown.
    pub new_len: usize,
    /// The changes inside this hunk.
    pub changes: Vec<Change>,
    /// The lines to display.
    pub lines: Vec<DiffLine>,
}

impl DiffHunk {
    /// `@@ -a,b +c,d @@` as unified diffs write it.
    pub(crate) fn header(&self) -> String {
        fn range(start: usize, len: usize) -> String {
            match len {
                0 => format!("{start},0"),
                1 => format!("{}", start + 1),
                _ => format!("{},{len}", start + 1),
            }
        }
        format!(
            "@@ -{} +{} @@",
            range(self.old_start, self.old_len),
            range(self.new_start, self.new_len)
        )
    }

    /// Lines added and removed in this hunk.
    pub(crate) fn counts(&self) -> (usize, usize) {
        self.changes
            .iter()
            .fold((0, 0), |(a, r), c| (a + c.new.len(), r + c.old.len()))
    }
}

/// The difference between two versions of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiff {
    /// The hunks, in order.
    pub hunks: Vec<DiffHunk>,
    /// Lines added.
    pub added: usize,
    /// Lines removed.
    pub removed: usize,
}

impl FileDiff {
    /// About how many bytes its hunks hold (their lines' text and bookkeeping).
    pub(crate) fn held_bytes(&self) -> usize {
        self.hunks
            .iter()
            .flat_map(|h| &h.lines)
            .map(|l| l.text.len() + std::mem::size_of::<DiffLine>())
            .sum()
    }
}

fn split_keep(s: &str) -> Vec<&str> {
    s.split_inclusive('\n').collect()
}

impl FileDiff {
    /// Diff `old` and `new` with `context` lines around each change.
    pub fn compute(old: &str, new: &str, context: usize) -> FileDiff {
        let a = split_keep(old);
        let b = split_keep(new);
        let ops = capture_diff_slices(Algorithm::Myers, &a, &b);
        let mut changes: Vec<Change> = Vec::new();
        for op in &ops {
            let (tag, o, n) = op.as_tag_tuple();
            if tag == DiffTag::Equal {
                continue;
            }
            // Merge adjacent delete+insert into one change.
            if let Some(last) = changes.last_mut()
                && last.old.end == o.start
                && last.new.end == n.start
            {
                last.old.end = o.end;
                last.new.end = n.end;
                continue;
            }
            changes.push(Change { old: o, new: n });
        }
        let added = changes.iter().map(|c| c.new.len()).sum();
        let removed = changes.iter().map(|c| c.old.len()).sum();
        // Group changes whose context would touch.
        let mut groups: Vec<Vec<Change>> = Vec::new();
        for c in changes {
            match groups.last_mut() {
                Some(g) if c.old.start <= g.last().map_or(0, |l| l.old.end) + 2 * context => {
                    g.push(c)
                }
                _ => groups.push(vec![c]),
            }
        }
        let line = |tag, s: &str, oi, ni| DiffLine {
            tag,
            text: s.strip_suffix('\n').unwrap_or(s).to_string(),
            no_newline: !s.ends_with('\n'),
            old_index: oi,
            new_index: ni,
        };
        let hunks = groups
            .into_iter()
            .map(|g| {
                let first = &g[0];
                let last = &g[g.len() - 1];
                let lead = first.old.start.min(context);
                let old_start = first.old.start - lead;
                let new_start = first.new.start - lead;
                let old_end = (last.old.end + context).min(a.len());
                let trail = old_end - last.old.end;
                let new_end = last.new.end + trail;
                let mut lines = Vec::new();
                let (mut o, mut n) = (old_start, new_start);
                for c in &g {
                    while o < c.old.start {
                        lines.push(line(Tag::Equal, a[o], Some(o), Some(n)));
                        o += 1;
                        n += 1;
                    }
                    for k in c.old.clone() {
                        lines.push(line(Tag::Delete, a[k], Some(k), None));
                    }
                    for k in c.new.clone() {
                        lines.push(line(Tag::Insert, b[k], None, Some(k)));
                    }
                    o = c.old.end;
                    n = c.new.end;
                }
                while o < old_end {
                    lines.push(line(Tag::Equal, a[o], Some(o), Some(n)));
                    o += 1;
                    n += 1;
                }
                DiffHunk {
                    old_start,
                    old_len: old_end - old_start,
                    new_start,
                    new_len: new_end - new_start,
                    changes: g,
                    lines,
                }
            })
            .collect();
        FileDiff {
            hunks,
            added,
            removed,
        }
    }

    /// Whether the versions are identical.
    pub fn is_empty(&self) -> bool {
        self.hunks.is_empty()
    }

    /// The unified diff text, with `--- old_name` / `+++ new_name` headers (none when both are
    /// empty).
    pub fn unified(&self, old_name: &str, new_name: &str) -> String {
        let mut out = String::new();
        if self.hunks.is_empty() {
            return out;
        }
        if !old_name.is_empty() || !new_name.is_empty() {
            out.push_str(&format!("--- {old_name}\n+++ {new_name}\n"));
        }
        for h in &self.hunks {
            out.push_str(&h.header());
            out.push('\n');
            for l in &h.lines {
                out.push(match l.tag {
                    Tag::Equal => ' ',
                    Tag::Delete => '-',
                    Tag::Insert => '+',
                });
                out.push_str(&l.text);
                out.push('\n');
                if l.no_newline {
                    out.push_str("\\ No newline at end of file\n");
                }
            }
        }
        out
    }
}

impl FileDiff {
    /// The old version with the changes line by line: `take[h][k]` says whether changed line
    /// `k` of hunk `h` (an index into its `lines`) is taken — a removed line taken goes, an
    /// added line taken comes; a line not taken leaves the old text as it was there. Missing
    /// entries are not taken.
    pub(crate) fn apply_lines(&self, old: &str, new: &str, take: &[Vec<bool>]) -> String {
        let a = split_keep(old);
        let b = split_keep(new);
        let mut out = String::with_capacity(old.len().max(new.len()));
        let mut o = 0;
        for (h, hunk) in self.hunks.iter().enumerate() {
            let mask = take.get(h).map(Vec::as_slice).unwrap_or(&[]);
            for line in &a[o..hunk.old_start.min(a.len())] {
                out.push_str(line);
            }
            for (k, l) in hunk.lines.iter().enumerate() {
                let taken = mask.get(k).copied().unwrap_or(false);
                match (l.tag, l.old_index, l.new_index) {
                    (Tag::Equal, Some(i), _) => out.push_str(a[i]),
                    (Tag::Delete, Some(i), _) if !taken => out.push_str(a[i]),
                    (Tag::Insert, _, Some(j)) if taken => out.push_str(b[j]),
                    _ => {}
                }
            }
            o = (hunk.old_start + hunk.old_len).min(a.len());
        }
        for line in &a[o..] {
            out.push_str(line);
        }
        out
    }
}

/// A unified diff of two versions under `a/PATH` and `b/PATH` headers, as tools return it.
pub fn unified_diff(path: &str, old: &str, new: &str) -> String {
    FileDiff::compute(old, new, CONTEXT).unified(&format!("a/{path}"), &format!("b/{path}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The old version with only the accepted hunks taken whole (through `apply_lines`).
    pub(super) fn subset(d: &FileDiff, old: &str, new: &str, accepted: &[bool]) -> String {
        let masks: Vec<Vec<bool>> = d
            .hunks
            .iter()
            .enumerate()
            .map(|(h, hunk)| {
                let on = accepted.get(h).copied().unwrap_or(false);
                hunk.lines.iter().map(|_| on).collect()
            })
            .collect();
        d.apply_lines(old, new, &masks)
    }

    #[test]
    fn unified_text_has_headers_hunks_and_no_newline_markers() {
        let d = FileDiff::compute("a\nb\nc", "a\nB\nc\n", 3);
        let text = d.unified("a/f", "b/f");
        assert_eq!(
            text,
            "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n-c\n\\ No newline at end of file\n+B\n+c\n"
        );
        assert_eq!((d.added, d.removed), (2, 2));
    }

    fn numbers(edit: &[(usize, &str)]) -> String {
        (0..30)
            .map(|i| match edit.iter().find(|(k, _)| *k == i) {
                Some((_, s)) => format!("{s}\n"),
                None => format!("{i}\n"),
            })
            .collect()
    }

    #[test]
    fn distant_changes_make_separate_hunks() {
        let old = numbers(&[]);
        let new = numbers(&[(3, "three"), (25, "twenty-five")]);
        let d = FileDiff::compute(&old, &new, 3);
        assert_eq!(d.hunks.len(), 2);
        assert_eq!(d.hunks[0].header(), "@@ -1,7 +1,7 @@");
    }

    #[test]
    fn subset_of_hunks_applies_only_those() {
        let old = numbers(&[]);
        let new = numbers(&[(3, "three"), (25, "twenty-five")]);
        let d = FileDiff::compute(&old, &new, 3);
        assert_eq!(subset(&d, &old, &new, &[true, true]), new);
        assert_eq!(subset(&d, &old, &new, &[false, false]), old);
        assert_eq!(
            subset(&d, &old, &new, &[false, true]),
            numbers(&[(25, "twenty-five")])
        );
    }

    #[test]
    fn insertion_at_the_top_has_a_zero_length_old_range() {
        let d = FileDiff::compute("a\n", "new\na\n", 0);
        assert_eq!(d.hunks[0].header(), "@@ -0,0 +1 @@");
    }
}

#[cfg(test)]
mod proptests {
    //! Accepting every hunk gives the proposal, accepting none gives the original, and any
    //! subset applies cleanly and holds exactly its hunks: the chosen hunks, as a patch,
    //! turn the original into the result, and the other hunks turn the result into the
    //! proposal.

    use super::*;
    use crate::edit::udiff;
    use proptest::prelude::*;

    use super::tests::subset;

    fn lines() -> impl Strategy<Value = Vec<String>> {
        proptest::collection::vec(
            prop_oneof![
                3 => "[a-e]{1,3}",
                1 => Just(String::new()),
                1 => Just("}".to_string()),
            ],
            0..60,
        )
    }

    fn text(lines: &[String], final_newline: bool) -> String {
        let mut s = lines.join("\n");
        if final_newline && !lines.is_empty() {
            s.push('\n');
        }
        s
    }

    fn as_patch(hunks: Vec<DiffHunk>) -> String {
        FileDiff {
            hunks,
            added: 0,
            removed: 0,
        }
        .unified("a/f", "b/f")
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn any_subset_of_hunks_applies_cleanly_and_holds_exactly_its_hunks(
            a in lines(),
            b in lines(),
            nl_a in any::<bool>(),
            nl_b in any::<bool>(),
            mask_bits in any::<u64>(),
        ) {
            let (old, new) = (text(&a, nl_a), text(&b, nl_b));
            let d = FileDiff::compute(&old, &new, 3);
            let n = d.hunks.len();
            prop_assert_eq!(subset(&d, &old, &new, &vec![true; n]), new.clone());
            prop_assert_eq!(subset(&d, &old, &new, &vec![false; n]), old.clone());
            let mask: Vec<bool> = (0..n).map(|i| mask_bits >> (i % 64) & 1 == 1).collect();
            let result = subset(&d, &old, &new, &mask);
            let (chosen, rest): (Vec<_>, Vec<_>) = d.hunks.iter().cloned().zip(&mask).partition(|(_, m)| **m);
            let chosen: Vec<DiffHunk> = chosen.into_iter().map(|(h, _)| h).collect();
            let rest: Vec<DiffHunk> = rest.into_iter().map(|(h, _)| h).collect();
            if !chosen.is_empty() {
                let applied = udiff::merge(&old, &as_patch(chosen)).unwrap();
                prop_assert_eq!(&applied.content, &result);
            }
            if !rest.is_empty() {
                let applied = udiff::merge(&result, &as_patch(rest)).unwrap();
                prop_assert_eq!(&applied.content, &new);
            }
        }
    }

    #[test]
    fn single_lines_of_a_hunk_are_taken_or_left() {
        let old = "a\nb\nc\nd\n";
        let new = "a\nB\nc\nD\nE\n";
        let d = FileDiff::compute(old, new, 3);
        assert_eq!(d.hunks.len(), 1);
        let lines = &d.hunks[0].lines;
        let mask =
            |pick: &dyn Fn(&DiffLine) -> bool| -> Vec<bool> { lines.iter().map(pick).collect() };
        // Everything taken is the new version; nothing taken the old one.
        assert_eq!(d.apply_lines(old, new, &[mask(&|_| true)]), new);
        assert_eq!(d.apply_lines(old, new, &[mask(&|_| false)]), old);
        // Only the removal of `b` and the added `E`: `b` goes, `B` does not come.
        let m = mask(&|l| l.text == "b" || l.text == "E");
        assert_eq!(d.apply_lines(old, new, &[m]), "a\nc\nd\nE\n");
        // `d` replaced by `D` only as a pair.
        let m = mask(&|l| l.text == "d" || l.text == "D");
        assert_eq!(d.apply_lines(old, new, &[m]), "a\nb\nc\nD\n");
    }
}
