//! Stage 3, place: a jump in a segment's sure pins read a second way. Two lines the snippet
//! writes one after the other, pinned to file lines far apart, delete the file's lines
//! between them. When the lines on one side of the jump also pair, in order, with the file's
//! lines just beside the other side — one of them as its changed version — the snippet may
//! as well show one block there with that line changed, deleting next to nothing: the
//! segment has two readings (rule `jump-lookalike`). A statement the snippet breaks over new
//! lines pairs as one line (a header given one more parameter, the file's header on one).

use super::{Candidate, Context, Pin, outline, units};
use crate::edit::lazy::costs::WEIGHTS;
use crate::edit::lazy::lines;
use crate::edit::lazy::prepare::{Kind, SLine};

/// Which way from the jump's far side the near side's lines are paired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Way {
    /// Up from the far side's first pin (the near side is above the jump).
    Up,
    /// Down from the near side's last pin (the far side is below the jump).
    Down,
}

/// The second reading of sure `pins` (ascending), if a jump has one.
pub(crate) fn second_reading(ctx: &Context<'_>, pins: &[Pin]) -> Option<Candidate> {
    let lines = ctx.lines();
    let file = ctx.file;
    for w in 0..pins.len().saturating_sub(1) {
        let (p, q) = (pins[w], pins[w + 1]);
        if !(p.i + 1..q.i).all(|i| lines[i].blank) || p.replace || q.replace {
            continue;
        }
        // Enough lines between to be a deletion worth a second reading, looked for among
        // the first few lines past the near side only (the work stays bounded per jump).
        let between = (p.j + 1..q.j)
            .take(WEIGHTS.jump_scan_lines)
            .filter(|&j| !file.is_blank(j))
            .take(WEIGHTS.jump_min_lines)
            .count();
        if between < WEIGHTS.jump_min_lines {
            continue;
        }
        let inside = p.j + 1..q.j;
        let near_at_far = repin(ctx, pins[..=w].iter().rev(), q.j, Way::Up, &inside);
        if let Some(moved) = near_at_far {
            let mut out: Vec<Pin> = moved.into_iter().rev().collect();
            out.extend_from_slice(&pins[w + 1..]);
            return Some(Candidate {
                pins: out,
                score: 1.0,
            });
        }
        if let Some(moved) = repin(ctx, pins[w + 1..].iter(), p.j, Way::Down, &inside) {
            let mut out = pins[..=w].to_vec();
            out.extend(moved);
            return Some(Candidate {
                pins: out,
                score: 1.0,
            });
        }
    }
    None
}

/// `side`'s pins (in order away from the jump) paired with the file's lines from `from`
/// (exclusive) on, the `way` given, within `inside`: each with the first of the next few
/// non-blank lines that is it or (for a line that says something) its changed version. None
/// unless every pin pairs and at least one as a changed line.
fn repin<'p>(
    ctx: &Context<'_>,
    side: impl Iterator<Item = &'p Pin>,
    from: usize,
    way: Way,
    inside: &std::ops::Range<usize>,
) -> Option<Vec<Pin>> {
    let lines = ctx.lines();
    let file = ctx.file;
    let step = |j: usize| match way {
        Way::Up => j.checked_sub(1),
        Way::Down => Some(j + 1),
    };
    let mut at = from;
    let mut out = Vec::new();
    let mut changed = false;
    // Every pin of the side pairs within the first lines past the other side: the work per
    // jump is bounded, whatever the segment's length.
    let mut stepped = 0;
    for pin in side {
        let l = &lines[pin.i];
        let mut tried = 0;
        let found = loop {
            at = step(at).filter(|j| inside.contains(j))?;
            stepped += 1;
            if stepped > WEIGHTS.jump_scan_lines {
                return None;
            }
            if file.is_blank(at) {
                continue;
            }
            if file.key(at) == l.key {
                break Pin { j: at, ..*pin };
            }
            // (A definition's header the file has already is no changed version of another
            // line: so read, the result would define that name twice.)
            let kept_header = l.count > 0 && units::header_name(&l.text).is_some();
            let alike = !l.trivial
                && !file.is_trivial(at)
                && !kept_header
                && l.text.trim().len() >= WEIGHTS.placing_change_min_chars
                && lines::similarity(
                    lines::compared(l.text.trim()),
                    lines::compared(file.lines[at].trim()),
                ) >= WEIGHTS.jump_similarity;
            if alike || reflowed(ctx, pin.i, at, way) {
                changed = true;
                break Pin {
                    j: at,
                    replace: true,
                    ..*pin
                };
            }
            tried += 1;
            if tried > WEIGHTS.jump_look {
                return None;
            }
        };
        out.push(found);
    }
    changed.then_some(out)
}

/// Whether snippet line `i` ends (`Way::Up`: closes brackets the lines above it opened) or
/// starts (`Way::Down`: opens brackets the lines below close) a statement the snippet breaks
/// over several new lines, and that statement is file line `at`'s changed version written on
/// one (much alike, or a definition's header of the same name): `) -> Theme:` under
/// `def read(` and its parameters, where the file has `def read(cls, path) -> Theme:`.
fn reflowed(ctx: &Context<'_>, i: usize, at: usize, way: Way) -> bool {
    let Some((a, b)) = statement(ctx.lines(), i, way) else {
        return false;
    };
    let statement = joined(ctx.lines()[a..=b].iter().map(|l| l.text.trim()));
    let old = ctx.file.lines[at].trim();
    // (A definition's header broken over lines to take more parameters is its old one-line
    // header's new version: the same name.)
    let same_header =
        units::header_name(&statement).is_some_and(|name| units::header_name(old) == Some(name));
    statement.len() >= WEIGHTS.placing_change_min_chars
        && !ctx.file.is_trivial(at)
        && (same_header
            || lines::similarity(lines::compared(&statement), lines::compared(old))
                >= WEIGHTS.jump_similarity)
}

/// The snippet lines (first, last) of the statement line `i` ends (`Way::Up`) or starts
/// (`Way::Down`), when it spans new lines only, within a few lines.
fn statement(lines: &[SLine], i: usize, way: Way) -> Option<(usize, usize)> {
    let (mut open, mut k) = match way {
        // Brackets the line closes that it did not open.
        Way::Up => (-lowest(&lines[i].text), i),
        // Brackets the line leaves open.
        Way::Down => (units::depth_change(&lines[i].text).0, i),
    };
    if open <= 0 {
        return None;
    }
    for _ in 0..WEIGHTS.jump_statement_lines {
        k = match way {
            Way::Up => k.checked_sub(1)?,
            Way::Down => Some(k + 1).filter(|&k| k < lines.len())?,
        };
        let l = &lines[k];
        // New code lines written one after the other: no placeholder (or anything else the
        // snippet's lines leave out) between, no diff-style line.
        let next_to = lines[k]
            .at
            .abs_diff(lines[if way == Way::Up { k + 1 } else { k - 1 }].at)
            == 1;
        if l.blank || l.count > 0 || l.kind != Kind::Plain || !next_to {
            return None;
        }
        match way {
            Way::Up => {
                open -= units::depth_change(&l.text).0;
                if open == 0 {
                    return Some((k, i));
                }
                if open < 0 {
                    return None;
                }
            }
            Way::Down => {
                if open + lowest(&l.text) <= 0 {
                    return Some((i, k));
                }
                open += units::depth_change(&l.text).0;
            }
        }
    }
    None
}

/// The lowest bracket depth a line reaches, from 0 at its start (closing brackets it did not
/// open make it negative).
fn lowest(line: &str) -> i64 {
    let mut depth = 0i64;
    let mut low = 0i64;
    for c in outline::code_chars(line) {
        match c {
            '{' | '(' | '[' => depth += 1,
            '}' | ')' | ']' => {
                depth -= 1;
                low = low.min(depth);
            }
            _ => {}
        }
    }
    low
}

/// A statement's lines written on one: no space after an opening bracket or before a closing
/// one, one space elsewhere.
fn joined<'a>(parts: impl Iterator<Item = &'a str>) -> String {
    let mut out = String::new();
    for part in parts {
        let tight = out.ends_with(['(', '[', '{']) || part.starts_with([')', ']', '}']);
        if !out.is_empty() && !tight {
            out.push(' ');
        }
        out.push_str(part);
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::edit::lazy::{Hints, merge};

    fn merged(file: &str, snippet: &str) -> crate::error::Result<String> {
        let hints = Hints {
            path: Some("V.java"),
            instruction: None,
        };
        merge(file, snippet, &hints).map(|m| m.content)
    }

    /// The refusal of a merge that must not be made (a Python file `path`).
    fn refusal(path: &str, file: &str, snippet: &str) -> crate::error::Error {
        let hints = Hints {
            path: Some(path),
            instruction: None,
        };
        merge(file, snippet, &hints).unwrap_err()
    }

    /// A method deleted between a comment and the next method, whose header looks like the
    /// next one's: read as that header changed, the file would define the next method twice,
    /// so that is no second reading and the deletion stands.
    #[test]
    fn a_header_the_file_keeps_is_no_changed_version_of_its_lookalike() {
        let file = "class V {\n  // the other methods are on the object visitor\n  // instead.\n\n  public void endVisiting(Object node) {\n    throw new UnsupportedOperationException();\n  }\n\n  public void startVisiting(Object node) {\n    throw new UnsupportedOperationException();\n  }\n}\n";
        let snippet = "  // ...\n  // instead.\n\n  public void startVisiting(Object node) {\n    throw new UnsupportedOperationException();\n  // ...\n";
        assert_eq!(
            merged(file, snippet).unwrap(),
            "class V {\n  // the other methods are on the object visitor\n  // instead.\n\n  public void startVisiting(Object node) {\n    throw new UnsupportedOperationException();\n  }\n}\n"
        );
    }

    /// The same jump over a table's changed line: the second reading (one table, a line
    /// changed) is named beside the first (the head of another table, all between deleted).
    #[test]
    fn a_jump_whose_near_side_fits_beside_its_far_side_is_refused_naming_both() {
        let file = "def test_a(self):\n    expected = {\n        (self.name, first + 1): 1,\n        (self.name, first + 2): 11,\n    }\n    check(expected)\n\n\ndef test_b(self):\n    expected = {\n        (self.name, first + 1): 1,\n        # counted twice before\n        (self.name, first + 2): 12,\n        (self.name, called + 1): 10,\n    }\n    check(expected)\n";
        let snippet = "# ...\n    expected = {\n        (self.name, first + 1): 1,\n        (self.name, first + 2): 11,\n        (self.name, called + 1): 10,\n    }\n# ...\n";
        let e = refusal("t.py", file, snippet);
        assert_eq!(e.code, crate::error::ErrorCode::NeedsMoreContext);
        assert!(e.message.contains("two ways"), "{}", e.message);
        assert!(e.message.contains("deleting 7 line(s)"), "{}", e.message);
        assert!(e.message.contains("changing line(s) 13"), "{}", e.message);
    }

    /// The mirror: the far side's first line is a changed version of a line just below the
    /// near side (the snippet may edit one table there), so the jump into the other test's
    /// table is not the only reading.
    #[test]
    fn a_jump_whose_far_side_fits_below_its_near_side_is_refused() {
        let file = "def test_a(self):\n    expected = {\n        (self.filename, first + 1): 1,\n        (self.filename, first + 2): 11,\n        (self.filename, first + 3): 5,\n    }\n    check(expected)\n\n\ndef test_b(self):\n    expected = {\n        \"unrelated\": compute(),\n        (self.filename, first + 3): 10,\n    }\n    check(expected)\n";
        let snippet = "# ... existing code ...\n        (self.filename, first + 1): 1,\n        (self.filename, first + 2): 11,\n        (self.filename, first + 3): 10,\n    }\n# ... existing code ...\n";
        let e = refusal("t.py", file, snippet);
        assert!(e.message.contains("two ways"), "{}", e.message);
    }

    /// A header broken over lines to take one more parameter: its last line (`) -> "Palette":`)
    /// is also the last line of another definition's broken header above, which would pin
    /// the segment there and delete everything between. Written on one line the snippet's
    /// header is the file's old one-line header changed: a second reading, so the merge asks.
    #[test]
    fn a_header_broken_over_lines_is_read_as_its_one_line_old_version_too() {
        let file = "class Palette:\n    @classmethod\n    def from_stream(\n        cls, stream: IO[str], name: Optional[str] = None\n    ) -> \"Palette\":\n        \"\"\"Load a palette from an open stream.\"\"\"\n        colors = [parse_color(line) for line in stream]\n        return cls(colors, name=name)\n\n    @classmethod\n    def load(cls, path: str) -> \"Palette\":\n        \"\"\"Load a palette from a path.\"\"\"\n        with open(path) as stream:\n            return cls.from_stream(stream, name=path)\n";
        let snippet = "# ...\n    @classmethod\n    def load(\n        cls, path: str, encoding: Optional[str] = None\n    ) -> \"Palette\":\n        \"\"\"Load a palette from a path.\"\"\"\n        with open(path, encoding=encoding) as stream:\n# ...\n";
        let err = refusal("p.py", file, snippet);
        assert_eq!(err.code, crate::error::ErrorCode::NeedsMoreContext);
        assert!(err.message.contains("read two ways"), "{}", err.message);
        assert!(
            err.message.contains("changing line(s) 11"),
            "{}",
            err.message
        );
    }
}
