//! Which wrong merges are harmful (`../shared/corpus/README.md`, "Scores"): a wrong merge is
//! *loose* — counted right — when its only fault is keeping lines the commit deleted where the
//! snippet does not show them (under a placeholder or past its open edge). Such a merge did
//! what the snippet said and its diff shows every line it kept. Every other wrong merge is
//! harmful: it loses or moves a line, adds one the commit never had, or keeps a deleted line
//! between two lines the snippet writes one after the other (or one the snippet quotes).

use similar::{Algorithm, DiffOp, capture_diff_slices};

use crate::edit::unseen::Shown;

fn trimmed(text: &str) -> Vec<&str> {
    text.lines().map(str::trim_end).collect()
}

/// Whether `output` differs from `after` only by runs of `before`'s lines that the commit
/// deleted, each kept where `shown` (what the snippet shows) does not write the lines around
/// it together. A kept run must be one of `before`'s blocks (its non-blank lines contiguous
/// there) of which the commit deleted a copy and the output holds no more copies than
/// `before` did: a line the file never had, a block copied, a line lost or changed is harm.
pub fn loose(before: &str, after: &str, output: &str, shown: &Shown) -> bool {
    let (before, after, output) = (trimmed(before), trimmed(after), trimmed(output));
    let ops = capture_diff_slices(Algorithm::Myers, &after, &output);
    let in_place = kept_in_place(&before, &output);
    let (before_code, after_code, output_code) = (code(&before), code(&after), code(&output));
    let mut kept_any = false;
    for (k, op) in ops.iter().enumerate() {
        match *op {
            DiffOp::Equal { .. } => {}
            DiffOp::Insert {
                old_index,
                new_index,
                new_len,
            } => {
                if code(&output[new_index..new_index + new_len]).is_empty() {
                    continue;
                }
                // The diff puts an inserted run at one of the places it could slide to
                // through equal lines (`}` / blank / `#[test]` above it equal to its own last
                // lines): it is kept where the file had it if it is at any of them.
                let (up, down) = slide_room(&ops, k, &output, new_index, new_len);
                let kept_right = (0..=up + down).any(|s| {
                    let (old_at, new_at) = (old_index + s - up, new_index + s - up);
                    let kept = code(&output[new_at..new_at + new_len]);
                    // Kept where the file had them, not moved elsewhere.
                    let moved =
                        (new_at..new_at + new_len).any(|k| !output[k].is_empty() && !in_place[k]);
                    let had = copies(&before_code, &kept);
                    !(moved
                        || between_shown(&after, old_at, shown)
                        || kept.iter().any(|l| shown.quotes(l))
                        || had == 0
                        || copies(&after_code, &kept) >= had
                        || copies(&output_code, &kept) > had)
                });
                if !kept_right {
                    return false;
                }
                kept_any = true;
            }
            // A line of the expected result is missing or changed: not only kept lines.
            DiffOp::Delete { .. } | DiffOp::Replace { .. } => return false,
        }
    }
    kept_any
}

/// How far the insertion `ops[k]` (`output[at..at + len]`) can slide up and down through the
/// equal runs around it with the same result: up while the line above it equals its last
/// line, down while the line below it equals its first.
fn slide_room(ops: &[DiffOp], k: usize, output: &[&str], at: usize, len: usize) -> (usize, usize) {
    let equal_len = |op: Option<&DiffOp>| match op {
        Some(DiffOp::Equal { len, .. }) => *len,
        _ => 0,
    };
    let (above, below) = (
        equal_len(k.checked_sub(1).and_then(|p| ops.get(p))),
        equal_len(ops.get(k + 1)),
    );
    let up = (1..=above.min(at))
        .take_while(|&d| output[at - d] == output[at + len - d])
        .count();
    let down = (0..below)
        .take_while(|&d| at + len + d < output.len() && output[at + len + d] == output[at + d])
        .count();
    (up, down)
}

/// For each line of `output`, whether it is one of `before`'s lines left where it was (in the
/// line diff of the two).
fn kept_in_place(before: &[&str], output: &[&str]) -> Vec<bool> {
    let mut kept = vec![false; output.len()];
    for op in capture_diff_slices(Algorithm::Myers, before, output) {
        if let DiffOp::Equal { new_index, len, .. } = op {
            kept[new_index..new_index + len].fill(true);
        }
    }
    kept
}

/// The non-blank lines of `lines`.
fn code<'a>(lines: &[&'a str]) -> Vec<&'a str> {
    lines.iter().copied().filter(|l| !l.is_empty()).collect()
}

/// How many times `block` occurs contiguously in `lines`.
fn copies(lines: &[&str], block: &[&str]) -> usize {
    if block.is_empty() || block.len() > lines.len() {
        return 0;
    }
    lines.windows(block.len()).filter(|w| *w == block).count()
}

/// Whether the point before `after[at]` lies between two non-blank lines the snippet writes
/// one after the other.
fn between_shown(after: &[&str], at: usize, shown: &Shown) -> bool {
    let above = after[..at].iter().rev().find(|l| !l.is_empty());
    let below = after[at..].iter().find(|l| !l.is_empty());
    match (above, below) {
        (Some(a), Some(b)) => shown.adjacent(a, b),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BEFORE: &str =
        "fn a() {\n    one();\n}\n\nfn old() {\n    gone();\n}\n\nfn b() {\n    two();\n}\n";
    const AFTER: &str = "fn a() {\n    one();\n    three();\n}\n\nfn b() {\n    two();\n}\n";

    fn shown(stretches: &[&str]) -> Shown {
        let mut s = Shown::default();
        for st in stretches {
            s.stretch(st.lines());
        }
        s
    }

    #[test]
    fn keeping_a_deleted_definition_under_a_placeholder_is_loose() {
        // The snippet shows `a` changed and a placeholder for the rest: `old` kept is what it said.
        let out = "fn a() {\n    one();\n    three();\n}\n\nfn old() {\n    gone();\n}\n\nfn b() {\n    two();\n}\n";
        let s = shown(&["fn a() {\n    one();\n    three();\n}\n"]);
        assert!(loose(BEFORE, AFTER, out, &s));
    }

    #[test]
    fn keeping_a_replaced_block_past_the_open_edge_is_loose_though_its_lines_recur() {
        // The commit rewrote the head of the file; the snippet starts at the new head with no
        // placeholder. The old head kept above it shares lines (`}`) with the new code.
        let before = "if x {\n    old();\n}\n\nfn keep() {\n}\n";
        let after = "if y {\n    new();\n}\n\nfn keep() {\n}\n";
        let out = "if x {\n    old();\n}\nif y {\n    new();\n}\n\nfn keep() {\n}\n";
        let s = shown(&["if y {\n    new();\n}\n"]);
        assert!(loose(before, after, out, &s));
    }

    #[test]
    fn a_kept_definition_the_diff_puts_between_shown_lines_that_it_can_slide_off_is_loose() {
        // The commit deleted `old`; the snippet starts at `b`'s attribute and header. Kept
        // where the file had it, `old` with its own `#[test]` above `b`'s: the line diff puts
        // the kept run after the first `#[test]` (between the two lines the snippet writes
        // together), but it is the same text as the run before it.
        let before = "#[test]\nfn old() {\n    gone();\n}\n\n#[test]\nfn b() {\n    two();\n}\n";
        let after = "#[test]\nfn b() {\n    two();\n    three();\n}\n";
        let out = "#[test]\nfn old() {\n    gone();\n}\n\n#[test]\nfn b() {\n    two();\n    three();\n}\n";
        let s = shown(&["#[test]\nfn b() {\n    two();\n    three();\n}\n"]);
        assert!(loose(before, after, out, &s));
        // Between the same two lines with no other place to be, it is harm.
        let out = "#[test]\nfn old() {\n    gone();\n}\n\nfn b() {\n    two();\n    three();\n}\n";
        assert!(!loose(before, after, out, &s));
    }

    #[test]
    fn a_block_the_commit_kept_written_twice_is_harmful() {
        let out = "fn a() {\n    one();\n    three();\n}\n\nfn b() {\n    two();\n}\n\nfn b() {\n    two();\n}\n";
        let s = shown(&["fn a() {\n    one();\n    three();\n}\n"]);
        assert!(!loose(BEFORE, AFTER, out, &s));
    }

    #[test]
    fn a_deleted_block_kept_elsewhere_than_where_the_file_had_it_is_harmful() {
        // `old` moved below `b`: its lines are the file's, but not where the file had them.
        let out = "fn a() {\n    one();\n    three();\n}\n\nfn b() {\n    two();\n}\n\nfn old() {\n    gone();\n}\n";
        let s = shown(&["fn a() {\n    one();\n    three();\n}\n"]);
        assert!(!loose(BEFORE, AFTER, out, &s));
    }

    #[test]
    fn each_guard_refuses_its_own_case() {
        let s = shown(&["fn a() {\n    one();\n    three();\n}\n"]);
        // A kept block the file never had as a block (`gone();` twice): no copy in `before`.
        let twice = "fn a() {\n    one();\n    three();\n}\n\nfn old() {\n    gone();\n    gone();\n}\n\nfn b() {\n    two();\n}\n";
        assert!(!loose(BEFORE, AFTER, twice, &s));
        // A block the commit did not delete (after still holds every copy before had).
        let before = "x();\nfn a() {\n    one();\n}\n";
        let after = "x();\nfn a() {\n    one();\n    three();\n}\n";
        let out = "x();\nx();\nfn a() {\n    one();\n    three();\n}\n";
        assert!(!loose(before, after, out, &shown(&["fn a() {\n"])));
        // More copies in the output than the file had (the commit deleted one of two).
        let before = "x();\nfn a() {\n}\nx();\n";
        let after = "fn a() {\n}\nx();\n";
        let out = "x();\nx();\nfn a() {\n}\nx();\n";
        assert!(!loose(before, after, out, &shown(&["fn a() {\n"])));
        // A changed line (the diff's replace), though every other line is kept.
        let out = "fn a() {\n    one();\n    four();\n}\n\nfn b() {\n    two();\n}\n";
        assert!(!loose(BEFORE, AFTER, out, &s));
    }

    #[test]
    fn keeping_it_between_lines_the_snippet_writes_together_is_harmful() {
        let out = "fn a() {\n    one();\n    three();\n}\n\nfn old() {\n    gone();\n}\n\nfn b() {\n    two();\n}\n";
        let s = shown(&["fn a() {\n    one();\n    three();\n}\n\nfn b() {\n"]);
        assert!(!loose(BEFORE, AFTER, out, &s));
    }

    #[test]
    fn a_lost_or_added_or_quoted_line_is_harmful() {
        let s = shown(&["fn a() {\n    one();\n    three();\n}\n"]);
        // Lost `two();`.
        let out = "fn a() {\n    one();\n    three();\n}\n\nfn b() {\n}\n";
        assert!(!loose(BEFORE, AFTER, out, &s));
        // A line neither before nor after has.
        let out = "fn a() {\n    one();\n    three();\n}\n\nfn b() {\n    two();\n    four();\n}\n";
        assert!(!loose(BEFORE, AFTER, out, &s));
        // A deleted block kept twice where the file had it once.
        let out = "fn a() {\n    one();\n    three();\n}\n\nfn old() {\n    gone();\n    gone();\n}\n\nfn b() {\n    two();\n}\n";
        assert!(!loose(BEFORE, AFTER, out, &s));
        // A deleted line the snippet quotes as one it removes.
        let mut q = shown(&["fn a() {\n    one();\n    three();\n}\n"]);
        q.quote("    gone();");
        let out = "fn a() {\n    one();\n    three();\n}\n\nfn old() {\n    gone();\n}\n\nfn b() {\n    two();\n}\n";
        assert!(!loose(BEFORE, AFTER, out, &q));
    }
}
