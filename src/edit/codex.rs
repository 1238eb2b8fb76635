//! The Codex `*** Begin Patch` envelope, parsed into the same [`udiff::Patch`] model as
//! unified diffs:
//!
//! ```text
//! *** Begin Patch
//! *** Update File: src/app.py
//! @@ def main():
//! -    print("hi")
//! +    print("hello")
//! *** Add File: notes.txt
//! +first line
//! *** Delete File: old.txt
//! *** End Patch
//! ```
//!
//! Hunks carry no line numbers: they are placed by content after their `@@` anchors, in order.

use super::text::normalize_newlines;
use super::udiff::{ChangeKind, FilePatch, Hunk, HunkLine, LineKind, Patch};
use super::{Error, Result};

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";

/// Whether `text` holds a Codex envelope.
pub(crate) fn is_envelope(text: &str) -> bool {
    text.lines().any(|l| l.trim() == BEGIN)
}

fn bad(line: usize, what: impl std::fmt::Display) -> Error {
    Error::invalid_input(format!("line {line} of the patch: {what}"))
}

fn file_patch(line: usize, kind: ChangeKind, old: Option<&str>, new: Option<&str>) -> FilePatch {
    FilePatch {
        old_path: old.map(str::to_string),
        new_path: new.map(str::to_string),
        kind,
        old_mode: None,
        new_mode: None,
        hunks: Vec::new(),
        binary: false,
        git: false,
        line,
    }
}

fn finish_hunk(fp: &mut FilePatch, hunk: Option<Hunk>) {
    if let Some(mut h) = hunk {
        if h.lines.is_empty() && h.anchors.is_empty() {
            return;
        }
        h.old_len = h.lines.iter().filter(|l| l.kind != LineKind::Add).count();
        h.new_len = h
            .lines
            .iter()
            .filter(|l| l.kind != LineKind::Remove)
            .count();
        fp.hunks.push(h);
    }
}

/// Parse a Codex envelope.
pub fn parse(text: &str) -> Result<Patch> {
    let text = normalize_newlines(text);
    let lines: Vec<&str> = text.lines().collect();
    let Some(begin) = lines.iter().position(|l| l.trim() == BEGIN) else {
        return Err(Error::invalid_input(format!("no `{BEGIN}` line found")));
    };
    let mut patch = Patch::default();
    let mut i = begin + 1;
    let mut ended = false;
    while i < lines.len() {
        let line = lines[i].trim_end();
        let at = i + 1;
        if line.trim() == END {
            ended = true;
            break;
        }
        if let Some(path) = line.strip_prefix("*** Add File: ") {
            let (fp, next) = added_file(&lines, i, path.trim())?;
            patch.files.push(fp);
            i = next;
        } else if let Some(path) = line.strip_prefix("*** Delete File: ") {
            patch
                .files
                .push(file_patch(at, ChangeKind::Delete, Some(path.trim()), None));
            i += 1;
        } else if let Some(path) = line.strip_prefix("*** Update File: ") {
            let (fp, next) = updated_file(&lines, i, path.trim())?;
            patch.files.push(fp);
            i = next;
        } else if line.trim().is_empty() {
            i += 1;
        } else {
            return Err(bad(
                at,
                format!(
                    "expected `*** Add File:`, `*** Update File:`, `*** Delete File:` or `{END}`, found `{line}`"
                ),
            ));
        }
    }
    if !ended {
        return Err(Error::invalid_input(format!(
            "the patch has no `{END}` line"
        )));
    }
    if patch.files.is_empty() {
        return Err(Error::invalid_input("the patch changes no file"));
    }
    Ok(patch)
}

/// `*** Add File: PATH` at line `i`: every line after it starts with `+`. Returns the file
/// and the index of the line after it.
fn added_file(lines: &[&str], mut i: usize, path: &str) -> Result<(FilePatch, usize)> {
    let mut fp = file_patch(i + 1, ChangeKind::Add, None, Some(path));
    let mut hunk = Hunk::unnumbered(i + 1);
    i += 1;
    while i < lines.len() && !lines[i].starts_with("*** ") {
        let Some(t) = lines[i].strip_prefix('+') else {
            return Err(bad(
                i + 1,
                format!(
                    "every line of an added file starts with `+`, found `{}`",
                    lines[i]
                ),
            ));
        };
        hunk.lines.push(HunkLine {
            kind: LineKind::Add,
            text: t.to_string(),
        });
        i += 1;
    }
    hunk.old_start = Some(0);
    hunk.new_start = Some(1);
    finish_hunk(&mut fp, Some(hunk));
    Ok((fp, i))
}

/// `*** Update File: PATH` at line `i`, an optional `*** Move to:`, then hunks opened by `@@`
/// lines. Returns the file and the index of the line after it.
fn updated_file(lines: &[&str], mut i: usize, path: &str) -> Result<(FilePatch, usize)> {
    let at = i + 1;
    let mut fp = file_patch(at, ChangeKind::Modify, Some(path), Some(path));
    i += 1;
    if let Some(dest) = lines.get(i).and_then(|l| l.strip_prefix("*** Move to: ")) {
        fp.kind = ChangeKind::Rename;
        fp.new_path = Some(dest.trim().to_string());
        i += 1;
    }
    let mut hunk: Option<Hunk> = None;
    while i < lines.len() {
        let l = lines[i];
        i += 1;
        if l.trim_end() == "*** End of File" {
            hunk.get_or_insert_with(|| Hunk::unnumbered(i)).at_eof = true;
            continue;
        }
        if l.starts_with("*** ") {
            i -= 1;
            break;
        }
        if let Some(rest) = l.strip_prefix("@@") {
            // A run of `@@` lines before any change line nests anchors.
            let continuing = hunk.as_ref().is_some_and(|h| h.lines.is_empty());
            if !continuing {
                finish_hunk(&mut fp, hunk.take());
                hunk = Some(Hunk::unnumbered(i));
            }
            let anchor = rest.trim();
            if !anchor.is_empty()
                && let Some(h) = hunk.as_mut()
            {
                h.anchors.push(anchor.to_string());
            }
            continue;
        }
        let (kind, t) = match l.as_bytes().first() {
            Some(b' ') => (LineKind::Context, &l[1..]),
            Some(b'-') => (LineKind::Remove, &l[1..]),
            Some(b'+') => (LineKind::Add, &l[1..]),
            None => (LineKind::Context, ""),
            _ => {
                return Err(bad(
                    i,
                    format!(
                        "in an update, each line starts with ` `, `-`, `+` or `@@`; found `{l}`"
                    ),
                ));
            }
        };
        hunk.get_or_insert_with(|| Hunk::unnumbered(i))
            .lines
            .push(HunkLine {
                kind,
                text: t.to_string(),
            });
    }
    finish_hunk(&mut fp, hunk);
    if fp.hunks.is_empty() && fp.kind == ChangeKind::Modify {
        return Err(bad(at, format!("`*** Update File: {path}` has no changes")));
    }
    Ok((fp, i))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edit::udiff::apply_hunks;

    #[test]
    fn envelope_parses_into_the_patch_model_and_applies() {
        let text = "*** Begin Patch\n*** Update File: app.py\n@@ def main():\n-    print(\"hi\")\n+    print(\"hello\")\n*** Add File: notes.txt\n+one\n+two\n*** Delete File: old.txt\n*** End Patch\n";
        let p = parse(text).unwrap();
        assert_eq!(p.files.len(), 3);
        assert_eq!(p.files[0].kind, ChangeKind::Modify);
        assert_eq!(p.files[0].hunks[0].anchors, vec!["def main():".to_string()]);
        let file = "def other():\n    print(\"hi\")\n\ndef main():\n    print(\"hi\")\n";
        let m = apply_hunks(file, &p.files[0].hunks).unwrap();
        assert_eq!(
            m.content,
            "def other():\n    print(\"hi\")\n\ndef main():\n    print(\"hello\")\n"
        );
        assert_eq!(p.files[1].kind, ChangeKind::Add);
        assert_eq!(
            apply_hunks("", &p.files[1].hunks).unwrap().content,
            "one\ntwo\n"
        );
        assert_eq!(p.files[2].kind, ChangeKind::Delete);
    }

    #[test]
    fn move_to_makes_a_rename() {
        let p = parse("*** Begin Patch\n*** Update File: a.txt\n*** Move to: b.txt\n@@\n-x\n+y\n*** End Patch").unwrap();
        assert_eq!(p.files[0].kind, ChangeKind::Rename);
        assert_eq!(p.files[0].new_path.as_deref(), Some("b.txt"));
    }

    #[test]
    fn end_of_file_pins_the_hunk_to_the_end() {
        let p = parse(
            "*** Begin Patch\n*** Update File: a\n@@\n x\n+y\n*** End of File\n*** End Patch\n",
        )
        .unwrap();
        let m = apply_hunks("x\nq\nx\n", &p.files[0].hunks).unwrap();
        assert_eq!(m.content, "x\nq\nx\ny\n");
    }

    #[test]
    fn missing_end_is_an_error() {
        assert!(parse("*** Begin Patch\n*** Delete File: a\n").is_err());
    }
}
