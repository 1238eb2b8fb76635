//! Patch files as people hold them (`patchgate apply`): the format is detected — git or plain
//! unified diff, `git format-patch` mail, the Codex `*** Begin Patch` envelope, or
//! SEARCH/REPLACE blocks with file names as aider writes them — and parsed into one edit per
//! file, with paths stripped (`-p N`) and, on request, the patch reversed.

use super::blocks::{is_divider, is_replace_marker, is_search_marker};
use super::text::normalize_newlines;
use super::udiff::{self, ChangeKind, FilePatch};
use super::{Error, Result, codex};

/// A patch file's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `diff --git` headers.
    Git,
    /// `---` / `+++` headers without git's.
    Unified,
    /// `git format-patch` output (mail headers, then a git diff).
    Mail,
    /// The Codex `*** Begin Patch` envelope.
    Codex,
    /// SEARCH/REPLACE blocks, each after the name of its file.
    Blocks,
    /// A lazy snippet for one named file.
    Lazy,
}

impl Format {
    /// A short name for messages.
    pub fn name(self) -> &'static str {
        match self {
            Format::Git => "git diff",
            Format::Unified => "unified diff",
            Format::Mail => "git format-patch mail",
            Format::Codex => "Codex patch",
            Format::Blocks => "SEARCH/REPLACE blocks",
            Format::Lazy => "lazy snippet",
        }
    }
}

/// One file's part of a patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileEdit {
    /// Hunks (and adds, deletes, renames, mode changes), paths stripped.
    Patch(FilePatch),
    /// SEARCH/REPLACE blocks for one file.
    Blocks {
        /// The file.
        path: String,
        /// The blocks, as written.
        text: String,
        /// Every SEARCH part is empty: aider's way of creating a file with the REPLACE parts.
        creates: Option<String>,
    },
    /// A lazy snippet for one file.
    Lazy {
        /// The file.
        path: String,
        /// The snippet.
        snippet: String,
        /// Where it goes, in words.
        instruction: Option<String>,
    },
}

impl FileEdit {
    /// The file this edit ends up in.
    pub fn path(&self) -> &str {
        match self {
            FileEdit::Patch(fp) => fp.display_path(),
            FileEdit::Blocks { path, .. } | FileEdit::Lazy { path, .. } => path,
        }
    }
}

/// A parsed patch file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchSet {
    /// What it was.
    pub format: Format,
    /// One edit per file, in patch order.
    pub files: Vec<FileEdit>,
}

/// Detect the format of `text`.
pub(crate) fn detect(text: &str) -> Format {
    if codex::is_envelope(text) {
        return Format::Codex;
    }
    let first_diff = text
        .find("\ndiff --git ")
        .map(|i| i + 1)
        .or_else(|| text.starts_with("diff --git ").then_some(0));
    let head = &text[..first_diff.unwrap_or(text.len())];
    let mailish = head.starts_with("From ") && head.lines().any(|l| l.starts_with("Subject: "))
        || head.lines().any(|l| l.starts_with("From: "))
            && head.lines().any(|l| l.starts_with("Subject: "));
    if first_diff.is_some() {
        return if mailish { Format::Mail } else { Format::Git };
    }
    let has_blocks = text.lines().any(is_search_marker);
    let has_hunks = text.lines().any(|l| l.starts_with("@@ ") || l == "@@");
    if has_blocks && !has_hunks {
        Format::Blocks
    } else {
        Format::Unified
    }
}

/// Drop `n` leading components of `path` (`-p N`); `None` when it has too few.
fn strip_components(path: &str, n: usize) -> Option<String> {
    let mut rest = path;
    for _ in 0..n {
        let i = rest.find('/')?;
        rest = rest[i + 1..].trim_start_matches('/');
    }
    (!rest.is_empty()).then(|| rest.to_string())
}

/// The default `-p` of a diff's file: 1 for git (its `a/` `b/`) and for plain diffs whose
/// paths both carry a directory (`old/x` `new/x`), else 0.
fn default_strip(fp: &FilePatch) -> usize {
    if fp.git {
        return 1;
    }
    let has_dir = |p: &Option<String>| p.as_deref().is_none_or(|p| p.contains('/'));
    usize::from(has_dir(&fp.old_path) && has_dir(&fp.new_path))
}

fn strip_paths(fp: &mut FilePatch, strip: Option<usize>) -> Result<()> {
    let n = strip.unwrap_or_else(|| default_strip(fp));
    for p in [&mut fp.old_path, &mut fp.new_path] {
        if let Some(path) = p.as_deref() {
            *p = Some(strip_components(path, n).ok_or_else(|| {
                Error::invalid_input(format!(
                    "cannot strip {n} leading director{} from `{path}` (-p {n}); give -p with a \
                     smaller number",
                    if n == 1 { "y" } else { "ies" }
                ))
            })?);
        }
    }
    // A plain diff names a backup as the old file (`x.orig`): the change is to the new name.
    if !fp.git && fp.kind == ChangeKind::Modify && fp.old_path != fp.new_path {
        fp.old_path.clone_from(&fp.new_path);
    }
    Ok(())
}

/// Parse `text` (any format [`detect`] knows), strip `strip` leading path components (the
/// format's default when `None`; SEARCH/REPLACE and Codex paths are used as written), and
/// reverse it when asked.
pub fn parse(text: &str, strip: Option<usize>, reverse: bool) -> Result<PatchSet> {
    let format = detect(text);
    let mut files = match format {
        Format::Blocks => {
            if reverse {
                return Err(Error::invalid_input(
                    "SEARCH/REPLACE blocks cannot be reversed; swap the SEARCH and REPLACE parts",
                ));
            }
            split_blocks(text)?
        }
        Format::Codex => codex::parse(text)?
            .files
            .into_iter()
            .map(FileEdit::Patch)
            .collect(),
        // (`detect` never says lazy: a snippet comes with `lazy`.)
        Format::Git | Format::Mail | Format::Unified | Format::Lazy => {
            let patch = udiff::parse(text)?;
            let mut out = Vec::with_capacity(patch.files.len());
            for mut fp in patch.files {
                if fp.old_path.is_none() && fp.new_path.is_none() {
                    return Err(Error::invalid_input(format!(
                        "line {} of the patch: hunks without a file name; a patch for \
                         `patchgate apply` needs `--- a/PATH` / `+++ b/PATH` headers",
                        fp.line
                    )));
                }
                strip_paths(&mut fp, strip)?;
                out.push(FileEdit::Patch(fp));
            }
            out
        }
    };
    if reverse {
        for f in &mut files {
            if let FileEdit::Patch(fp) = f {
                *fp = fp.reversed();
            }
        }
    }
    Ok(PatchSet { format, files })
}

/// A lazy snippet for `path` as a patch of one file.
pub fn lazy(path: &str, snippet: &str, instruction: Option<&str>) -> PatchSet {
    PatchSet {
        format: Format::Lazy,
        files: vec![FileEdit::Lazy {
            path: path.to_string(),
            snippet: snippet.to_string(),
            instruction: instruction.map(str::to_string),
        }],
    }
}

/// A file name as aider writes it before a block: the line itself, without markdown dressing.
fn file_name(line: &str) -> Option<String> {
    let name = line
        .trim()
        .trim_matches(|c| c == '`' || c == '*' || c == '#' || c == ':')
        .trim();
    let plausible = !name.is_empty()
        && !name.contains(char::is_whitespace)
        && (name.contains('.') || name.contains('/'));
    plausible.then(|| name.to_string())
}

/// Split SEARCH/REPLACE blocks by the file name written before each (a block with no name of
/// its own belongs to the previous one's file).
fn split_blocks(text: &str) -> Result<Vec<FileEdit>> {
    let text = normalize_newlines(text);
    let lines: Vec<&str> = text.lines().collect();
    // (path, raw text, search parts all empty, replace parts)
    let mut groups: Vec<(String, String, bool, String)> = Vec::new();
    let mut candidate: Option<String> = None;
    let mut current: Option<String> = None;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if !is_search_marker(line) {
            let t = line.trim();
            if !t.is_empty() && !t.starts_with("```") {
                candidate = file_name(t);
            }
            i += 1;
            continue;
        }
        let start = i;
        let path = candidate
            .take()
            .or_else(|| current.clone())
            .ok_or_else(|| {
                Error::invalid_input(format!(
                    "line {}: a SEARCH/REPLACE block without a file name; put the file's path on \
                 the line before the block (as aider does)",
                    start + 1
                ))
            })?;
        let mut search_empty = true;
        let mut replace = String::new();
        let mut in_replace = false;
        i += 1;
        loop {
            let Some(l) = lines.get(i) else {
                return Err(Error::invalid_input(format!(
                    "line {}: the block for `{path}` has no `>>>>>>> REPLACE`",
                    start + 1
                )));
            };
            if is_replace_marker(l) {
                break;
            }
            if !in_replace && is_divider(l) {
                in_replace = true;
            } else if in_replace {
                replace.push_str(l);
                replace.push('\n');
            } else if !l.trim().is_empty() {
                search_empty = false;
            }
            i += 1;
        }
        let raw = lines[start..=i].join("\n") + "\n";
        i += 1;
        current = Some(path.clone());
        match groups.iter_mut().find(|g| g.0 == path) {
            Some(g) => {
                g.1.push_str(&raw);
                g.2 &= search_empty;
                g.3.push_str(&replace);
            }
            None => groups.push((path, raw, search_empty, replace)),
        }
    }
    if groups.is_empty() {
        return Err(Error::invalid_input("no SEARCH/REPLACE block found"));
    }
    Ok(groups
        .into_iter()
        .map(|(path, text, creates, replace)| FileEdit::Blocks {
            path,
            text,
            creates: creates.then_some(replace),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_are_detected() {
        assert_eq!(
            detect("diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"),
            Format::Git
        );
        assert_eq!(
            detect(
                "From 1234 Mon Sep 17 00:00:00 2001\nFrom: A <a@b>\nSubject: [PATCH] x\n\n---\ndiff --git a/x b/x\n"
            ),
            Format::Mail
        );
        assert_eq!(
            detect("--- x.orig\n+++ x\n@@ -1 +1 @@\n-a\n+b\n"),
            Format::Unified
        );
        assert_eq!(
            detect("*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\n"),
            Format::Codex
        );
        assert_eq!(
            detect("src/a.py\n```python\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n```\n"),
            Format::Blocks
        );
    }

    #[test]
    fn git_paths_lose_their_prefix_and_p_overrides_it() {
        let diff = "diff --git a/src/x.rs b/src/x.rs\n--- a/src/x.rs\n+++ b/src/x.rs\n@@ -1 +1 @@\n-a\n+b\n";
        let p = parse(diff, None, false).unwrap();
        assert_eq!(p.files[0].path(), "src/x.rs");
        let p = parse(diff, Some(2), false).unwrap();
        assert_eq!(p.files[0].path(), "x.rs");
        let e = parse(diff, Some(3), false).unwrap_err();
        assert!(e.message.contains("-p 3"), "{}", e.message);
    }

    #[test]
    fn a_plain_diff_against_a_backup_edits_the_new_name() {
        let p = parse(
            "--- x.txt.orig\n+++ x.txt\n@@ -1 +1 @@\n-a\n+b\n",
            None,
            false,
        )
        .unwrap();
        let FileEdit::Patch(fp) = &p.files[0] else {
            panic!()
        };
        assert_eq!(fp.old_path.as_deref(), Some("x.txt"));
        assert_eq!(fp.new_path.as_deref(), Some("x.txt"));
        let p = parse(
            "--- old/d/x.txt\n+++ new/d/x.txt\n@@ -1 +1 @@\n-a\n+b\n",
            None,
            false,
        )
        .unwrap();
        assert_eq!(p.files[0].path(), "d/x.txt");
    }

    #[test]
    fn reversing_swaps_adds_and_removes() {
        let p = parse(
            "diff --git a/n.txt b/n.txt\nnew file mode 100644\n--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+hello\n",
            None,
            true,
        )
        .unwrap();
        let FileEdit::Patch(fp) = &p.files[0] else {
            panic!()
        };
        assert_eq!(fp.kind, ChangeKind::Delete);
        assert_eq!(fp.old_path.as_deref(), Some("n.txt"));
    }

    #[test]
    fn aider_blocks_are_grouped_by_file_and_empty_searches_create() {
        let text = "Here are the changes.\n\nsrc/a.py\n```python\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE\n```\n\n\
            ```python\n<<<<<<< SEARCH\ny = 1\n=======\ny = 2\n>>>>>>> REPLACE\n```\n\n\
            **docs/new.md**\n```\n<<<<<<< SEARCH\n=======\n# New\n>>>>>>> REPLACE\n```\n";
        let p = parse(text, None, false).unwrap();
        assert_eq!(p.format, Format::Blocks);
        assert_eq!(p.files.len(), 2);
        let FileEdit::Blocks {
            path,
            text,
            creates,
        } = &p.files[0]
        else {
            panic!()
        };
        assert_eq!(path, "src/a.py");
        assert_eq!(text.matches("<<<<<<< SEARCH").count(), 2);
        assert_eq!(creates, &None);
        let FileEdit::Blocks { path, creates, .. } = &p.files[1] else {
            panic!()
        };
        assert_eq!(path, "docs/new.md");
        assert_eq!(creates.as_deref(), Some("# New\n"));
    }

    #[test]
    fn a_block_without_a_file_name_is_refused_with_its_line() {
        let e = parse(
            "<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n",
            None,
            false,
        )
        .unwrap_err();
        assert!(e.message.contains("line 1"), "{}", e.message);
    }
}
