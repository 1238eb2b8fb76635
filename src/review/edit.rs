//! The validated form of an edit request (`ProposedEdit`), parsed once at the edge (MCP
//! arguments, patch files), and computing what it would change: resolve the path, read the
//! file under the size cap, decode it, run the engine, and build the [`FileChange`].

use std::sync::Arc;

use crate::edit::text::Text;
use crate::edit::udiff::{self, ChangeKind, FilePatch};
use crate::edit::{Hints, Merged, blocks, replace};
use crate::error::{Error, ErrorCode, Result};
use crate::workspace::Workspace;
use crate::workspace::fs;
use crate::workspace::paths::SafePath;

use super::fallback::{Fallback, merge_lazy};
use super::proposal::FileChange;
use crate::edit::unseen::Shown;

/// What to do to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditOp {
    /// A lazy snippet (`fast_apply`).
    Lazy {
        /// The snippet.
        snippet: String,
        /// The agent's placement hint.
        instruction: Option<String>,
    },
    /// SEARCH/REPLACE blocks.
    Blocks(String),
    /// Exact replacements or an insertion (`patch_file`).
    Replace(replace::ReplaceEdit),
    /// A unified diff of this one file (`patch_file`'s `patch_content`).
    Udiff(String),
    /// The complete new content.
    Write(String),
    /// The complete content of a file that must not exist yet; an existing file gets
    /// `INVALID_INPUT` with `refusal` (wcgw's low-percentage text that holds no blocks).
    WriteIfMissing {
        /// The content.
        content: String,
        /// The message when the file exists.
        refusal: String,
    },
    /// One file of a parsed patch (hunks, and whether it adds or deletes the file), its hunks
    /// placed as `git apply` places them.
    Patch(FilePatch),
    /// The same, leaving out the hunks that do not apply, as `git apply --reject` does: each
    /// is named in a warning and in the change's `rejected`. Only what fails the file whole
    /// fails it (a missing file, one that exists already, a deletion that does not apply).
    PatchRejecting(FilePatch),
}

/// One file's edit, with the path as the agent or the patch named it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProposedEdit {
    /// The path, relative to the root or absolute.
    pub path: String,
    /// What to do.
    pub op: EditOp,
}

impl EditOp {
    /// What its text shows of the file whose content is `old` (docs/DESIGN.md §4): a lazy
    /// snippet as its merge reads it; blocks, replacements and diffs quote what they hold; a
    /// whole content is one stretch.
    fn shown(&self, old: &str, path: &str) -> Shown {
        match self {
            EditOp::Lazy {
                snippet,
                instruction,
            } => {
                let hints = Hints {
                    path: Some(path),
                    instruction: instruction.as_deref(),
                };
                crate::edit::lazy::shown(old, snippet, &hints)
            }
            EditOp::Blocks(text) | EditOp::Udiff(text) => Shown::quoting([text.as_str()]),
            EditOp::Write(text) => Shown::whole(text),
            EditOp::WriteIfMissing { content, .. } => Shown::whole(content),
            EditOp::Replace(replace::ReplaceEdit::Replace { pairs, .. }) => Shown::quoting(
                pairs
                    .iter()
                    .flat_map(|p| [p.search_content.as_str(), p.replace_content.as_str()]),
            ),
            EditOp::Replace(replace::ReplaceEdit::Insert { content, .. }) => {
                Shown::quoting([content.as_str()])
            }
            // A deletion the patch names without hunks (a rename's source) deletes the file
            // whole, by name: every line of it is shown.
            EditOp::Patch(fp) | EditOp::PatchRejecting(fp)
                if fp.kind == ChangeKind::Delete && fp.hunks.is_empty() =>
            {
                Shown::quoting([old])
            }
            EditOp::Patch(fp) | EditOp::PatchRejecting(fp) => Shown::quoting(
                fp.hunks
                    .iter()
                    .flat_map(|h| h.anchors.iter().chain(h.lines.iter().map(|l| &l.text)))
                    .map(String::as_str),
            ),
        }
    }
}

impl ProposedEdit {
    /// Compute the change this edit would make (nothing is written), with what its text
    /// showed of the file.
    pub async fn compute(&self, ws: &Workspace, fallback: Option<&Fallback>) -> Result<FileChange> {
        let path = ws.root.resolve(&self.path)?;
        self.compute_at(path, ws, fallback).await
    }

    /// [`ProposedEdit::compute`] with the edit's path already resolved (`ws.root.resolve`
    /// of [`ProposedEdit::path`], once per request: its rules were read on it, and the file is
    /// still read and written beneath the root, following no link: docs/DESIGN.md §7).
    pub(crate) async fn compute_at(
        &self,
        path: SafePath,
        ws: &Workspace,
        fallback: Option<&Fallback>,
    ) -> Result<FileChange> {
        let mut change = self.compute_unmeasured(path, ws, fallback).await?;
        // What the edit shows, and the lines it deletes unseen: parses and diffs, off the
        // async runtime like the merge.
        let op = self.op.clone();
        tokio::task::spawn_blocking(move || {
            measure(&op, &mut change);
            change
        })
        .await
        .map_err(|e| {
            Error::new(
                ErrorCode::FsError,
                format!("the unseen-deletion measure failed: {e}"),
            )
        })
    }

    /// [`ProposedEdit::compute_at`] without the measure of what it deletes unseen: the
    /// caller [`measure`]s it off the async runtime (with the syntax check, in one hop).
    pub(crate) async fn compute_unmeasured(
        &self,
        path: SafePath,
        ws: &Workspace,
        fallback: Option<&Fallback>,
    ) -> Result<FileChange> {
        self.compute_change(path, ws, fallback).await
    }

    async fn compute_change(
        &self,
        path: SafePath,
        ws: &Workspace,
        fallback: Option<&Fallback>,
    ) -> Result<FileChange> {
        let before = fs::read(&path, ws.config.max_file_bytes)?;
        let text = match &before {
            Some(bytes) => Text::decode(bytes)
                .map_err(|e| Error::new(e.code, format!("`{}`: {}", path.rel, e.message)))?,
            None => Text::from_content(""),
        };
        let hints = Hints {
            path: Some(&path.rel),
            instruction: match &self.op {
                EditOp::Lazy { instruction, .. } => instruction.as_deref(),
                _ => None,
            },
        };
        let missing = |what: &str| {
            Error::new(
                ErrorCode::NoMatch,
                format!(
                    "`{}` does not exist, so {what} has nothing to apply to; create it with the full content",
                    path.rel
                ),
            )
        };
        let (new, warnings, delete, mode) = match &self.op {
            EditOp::Lazy { snippet, .. } => {
                let m = merge_lazy(fallback, text.content(), snippet, &hints).await?;
                (m.content, m.warnings, false, None)
            }
            EditOp::Blocks(blocks_text) => {
                if before.is_none() {
                    return Err(missing("a SEARCH/REPLACE edit"));
                }
                let m = blocks::merge(&text, blocks_text)?;
                (m.content, m.warnings, false, None)
            }
            EditOp::Replace(edit) => {
                if before.is_none() {
                    return Err(missing("a replacement"));
                }
                let m = replace::apply(text.content(), edit)?;
                (m.content, m.warnings, false, None)
            }
            EditOp::Udiff(diff) => {
                let fp = udiff::parse_single(diff)?;
                return compute_patch(&self.path, path.clone(), before, ws, (&fp, Hunks::Near));
            }
            EditOp::Write(content) => (
                crate::edit::text::normalize_newlines(content).into_owned(),
                Vec::new(),
                false,
                None,
            ),
            EditOp::WriteIfMissing { content, refusal } => {
                if before.is_some() {
                    return Err(Error::invalid_input(refusal.clone()));
                }
                (
                    crate::edit::text::normalize_newlines(content).into_owned(),
                    Vec::new(),
                    false,
                    None,
                )
            }
            EditOp::Patch(fp) => {
                return compute_patch(&self.path, path, before, ws, (fp, Hunks::Git));
            }
            EditOp::PatchRejecting(fp) => {
                return compute_patch(&self.path, path, before, ws, (fp, Hunks::Reject));
            }
        };
        let text = if before.is_some() {
            text
        } else {
            Text::from_content(&new)
        };
        let mut change = FileChange::new(path, before, text, new, warnings);
        change.delete = delete;
        change.mode = mode;
        Ok(change)
    }
}

/// Measure what `change` (computed from `op`) shows and the lines it deletes unseen
/// ([`FileChange::measure_unseen`]): parses and diffs, for a blocking thread.
pub(crate) fn measure(op: &EditOp, change: &mut FileChange) {
    let shown = op.shown(change.old(), &change.path.rel);
    change.measure_unseen(Arc::new(shown));
}

/// How a patch's hunks are placed, and what a hunk that does not apply does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Hunks {
    /// Each near where its numbers say, all or nothing (an agent's diff: rough numbers).
    Near,
    /// Where `git apply` would place it, all or nothing (a patch file, made by a diff tool).
    Git,
    /// Where `git apply` would, each one that does not apply left out (`--reject`).
    Reject,
}

/// The change one file of a parsed patch makes (adds, deletes and mode changes included),
/// its hunks placed as `hunks` says.
/// `path` is `user_path` resolved once by the caller (under the request's locks) and
/// `before` its bytes read there: nothing here resolves the target again.
pub(crate) fn compute_patch(
    user_path: &str,
    path: crate::workspace::paths::SafePath,
    before: Option<Vec<u8>>,
    ws: &Workspace,
    (fp, hunks): (&FilePatch, Hunks),
) -> Result<FileChange> {
    if fp.binary {
        return Err(Error::invalid_input(format!(
            "the patch for `{user_path}` is binary, which cannot be applied as text"
        )));
    }
    if matches!(fp.kind, ChangeKind::Rename | ChangeKind::Copy)
        && let Some(from) = fp.old_path.as_deref().filter(|&from| from != user_path)
    {
        return compute_moved(from, path, before, ws, (fp, hunks));
    }
    match (fp.kind, &before) {
        (ChangeKind::Add, Some(_)) => {
            return Err(Error::new(
                ErrorCode::FileChanged,
                format!("the patch creates `{}`, which already exists", path.rel),
            ));
        }
        // Deleting a file that is not there fails too, as with `git apply`.
        (ChangeKind::Modify | ChangeKind::Delete | ChangeKind::Rename | ChangeKind::Copy, None) => {
            let what = if fp.kind == ChangeKind::Delete {
                "deletes"
            } else {
                "changes"
            };
            return Err(Error::new(
                ErrorCode::NoMatch,
                format!("the patch {what} `{}`, which does not exist", path.rel),
            ));
        }
        _ => {}
    }
    let text = match &before {
        Some(bytes) => Text::decode(bytes)
            .map_err(|e| Error::new(e.code, format!("`{}`: {}", path.rel, e.message)))?,
        None => Text::from_content(""),
    };
    let (merged, rejected) = patch_hunks(&path.rel, text.content(), fp, hunks)?;
    let delete = fp.kind == ChangeKind::Delete;
    if delete && !merged.content.is_empty() && !fp.hunks.is_empty() {
        return Err(Error::new(
            ErrorCode::NoMatch,
            format!(
                "the patch deletes `{}`, but the file holds more than the patch removes",
                path.rel
            ),
        ));
    }
    let new = if delete {
        String::new()
    } else {
        merged.content
    };
    let text = if before.is_some() {
        text
    } else {
        Text::from_content(&new)
    };
    let mut change = FileChange::new(path, before, text, new, merged.warnings);
    change.delete = delete;
    change.mode = patch_mode(fp)?;
    change.rejected = rejected;
    Ok(change)
}

/// `fp`'s hunks on `content` (of the file `rel`), placed as `hunks` says; with
/// [`Hunks::Reject`] each one left out is named in a warning. A deletion applies whole
/// or not at all, as with `git apply --reject`.
fn patch_hunks(
    rel: &str,
    content: &str,
    fp: &FilePatch,
    hunks: Hunks,
) -> Result<(Merged, Vec<udiff::Rejected>)> {
    let mut partial = udiff::apply_hunks_rejecting(content, &fp.hunks, hunks != Hunks::Near);
    if hunks != Hunks::Reject || fp.kind == ChangeKind::Delete {
        if let Some(first) = partial.rejected.into_iter().next() {
            let e = first.error;
            return Err(Error::new(e.code, format!("`{rel}`: {}", e.message)));
        }
        return Ok((partial.merged, Vec::new()));
    }
    for r in &partial.rejected {
        let why = r.error.message.lines().next().unwrap_or_default();
        partial.merged.warnings.push(format!("left out: {why}"));
    }
    Ok((partial.merged, partial.rejected))
}

/// The mode a patch gives its file: a new file's, or a changed one's (an unchanged mode in an
/// `index` line leaves the file's own permissions alone, as `git apply` does). Only git's
/// two modes of a regular file, 100644 and 100755, are applied: setuid, setgid, sticky,
/// world-writable or other modes, and symlinks or submodules, are refused.
fn patch_mode(fp: &FilePatch) -> Result<Option<u32>> {
    let Some(new) = fp.new_mode else {
        return Ok(None);
    };
    let changed = fp.kind == ChangeKind::Add || fp.old_mode.is_some_and(|old| old != new);
    if !changed {
        return Ok(None);
    }
    match new {
        0o100644 | 0o644 => Ok(Some(0o644)),
        0o100755 | 0o755 => Ok(Some(0o755)),
        _ => Err(Error::new(
            ErrorCode::InvalidInput,
            format!(
                "the patch gives `{}` mode {new:o}: only 100644 and 100755 are applied (no \
                 setuid, setgid, sticky or world-writable bits, no symlinks or submodules)",
                fp.new_path
                    .as_deref()
                    .or(fp.old_path.as_deref())
                    .unwrap_or("?")
            ),
        )),
    }
}

/// The new file of a rename or copy: the source's content with the hunks applied, created at
/// `path` (the source's deletion, for a rename, is a separate change).
fn compute_moved(
    from: &str,
    path: crate::workspace::paths::SafePath,
    before: Option<Vec<u8>>,
    ws: &Workspace,
    (fp, hunks): (&FilePatch, Hunks),
) -> Result<FileChange> {
    if before.is_some() {
        return Err(Error::new(
            ErrorCode::FileChanged,
            format!(
                "the patch moves `{from}` to `{}`, which already exists",
                path.rel
            ),
        ));
    }
    let source = ws.root.resolve(from)?;
    let Some(bytes) = fs::read(&source, ws.config.max_file_bytes)? else {
        return Err(Error::new(
            ErrorCode::NoMatch,
            format!("the patch moves `{}`, which does not exist", source.rel),
        ));
    };
    let text = Text::decode(&bytes)
        .map_err(|e| Error::new(e.code, format!("`{}`: {}", source.rel, e.message)))?;
    let (merged, rejected) = patch_hunks(&source.rel, text.content(), fp, hunks)?;
    let mut change = FileChange::new(path, None, text, merged.content, merged.warnings);
    change.mode = patch_mode(fp)?.or_else(|| fs::mode(&source.abs).map(|m| m & 0o7777));
    change.rejected = rejected;
    change.source = Some(source.rel);
    Ok(change)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::config::Config;

    fn ws() -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::new(dir.path(), Config::default()).unwrap();
        (dir, ws)
    }

    fn run<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(f)
    }

    #[test]
    fn blocks_on_a_missing_file_are_no_match() {
        let (_d, ws) = ws();
        let edit = ProposedEdit {
            path: "nope.txt".into(),
            op: EditOp::Blocks("<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n".into()),
        };
        assert_eq!(
            run(edit.compute(&ws, None)).unwrap_err().code,
            ErrorCode::NoMatch
        );
    }

    #[test]
    fn a_full_write_of_a_new_file_makes_a_creating_change() {
        let (_d, ws) = ws();
        let edit = ProposedEdit {
            path: "new/file.txt".into(),
            op: EditOp::Write("hello\r\n".into()),
        };
        let c = run(edit.compute(&ws, None)).unwrap();
        assert!(c.before.is_none());
        assert_eq!(c.new, "hello\n");
        assert_eq!(c.diff.added, 1);
    }

    /// Regression (a reader's finding): a unified diff resolved its path again inside the
    /// computation, so the rules were checked on one file and the content read from another
    /// when a link was swapped between. Every patch form reads the file resolved once.
    #[test]
    fn a_patch_reads_the_file_its_caller_resolved_not_its_path_again() {
        let (dir, ws) = ws();
        std::fs::write(dir.path().join("asked.txt"), "asked\n").unwrap();
        std::fs::write(dir.path().join("resolved.txt"), "resolved\n").unwrap();
        let diff = "@@ -1 +1 @@\n-resolved\n+changed\n";
        let fp = crate::edit::udiff::parse_single(diff).unwrap();
        for op in [
            EditOp::Udiff(diff.into()),
            EditOp::Patch(fp.clone()),
            EditOp::PatchRejecting(fp),
        ] {
            let edit = ProposedEdit {
                path: "asked.txt".into(),
                op,
            };
            let at = ws.root.resolve("resolved.txt").unwrap();
            let c = run(edit.compute_at(at, &ws, None)).unwrap();
            assert_eq!(c.path.rel, "resolved.txt");
            assert_eq!(c.new, "changed\n");
        }
    }

    const ALPHA: &str = "fn alpha() {\n    let a = 1;\n    step_one();\n    step_two();\n    \
                         step_three();\n    finish_alpha();\n}\n\nfn beta() {\n    let b = 2;\n}\n";

    /// The lines `op` deletes from [`ALPHA`] that its text never showed, per hunk.
    fn unseen_of(op: EditOp) -> Vec<usize> {
        let (dir, ws) = ws();
        std::fs::write(dir.path().join("a.rs"), ALPHA).unwrap();
        let edit = ProposedEdit {
            path: "a.rs".into(),
            op,
        };
        let c = run(edit.compute(&ws, None)).unwrap();
        assert_eq!(c.diff.removed, 3, "{}", c.new);
        c.unseen()
    }

    #[test]
    fn a_deletion_the_edit_pins_between_its_anchors_is_seen_a_dropped_tail_is_not() {
        // Shown adjacent, two unique lines pin down what goes between them.
        let snippet = "// ... existing code ...\nfn alpha() {\n    let a = 1;\n    \
                       finish_alpha();\n}\n// ... existing code ...\n";
        let unseen = unseen_of(EditOp::Lazy {
            snippet: snippet.into(),
            instruction: None,
        });
        assert_eq!(unseen, vec![0]);
        // A whole-file write that drops lines between lines it keeps shows where they went.
        let content = ALPHA.replace("    step_one();\n    step_two();\n    step_three();\n", "");
        assert_eq!(unseen_of(EditOp::Write(content)), vec![0]);
        // One that ends early drops the file's tail without showing it.
        let (dir, ws) = ws();
        std::fs::write(dir.path().join("a.rs"), ALPHA).unwrap();
        let edit = ProposedEdit {
            path: "a.rs".into(),
            op: EditOp::Write("fn alpha() {\n    let a = 1;\n".into()),
        };
        let c = run(edit.compute(&ws, None)).unwrap();
        assert_eq!(c.unseen().iter().sum::<usize>(), 8, "{:?}", c.unseen_lines);
        let w = c.unseen_warning().unwrap();
        assert_eq!(
            w,
            "unseen: 8 lines deleted that the edit does not show (3–11)"
        );
    }

    #[test]
    fn edits_that_name_every_line_they_delete_count_none() {
        let gone = "    step_one();\n    step_two();\n    step_three();\n";
        let blocks = format!("<<<<<<< SEARCH\n{gone}=======\n>>>>>>> REPLACE\n");
        assert_eq!(unseen_of(EditOp::Blocks(blocks)), vec![0]);
        let pair = replace::Replacement {
            search_content: gone.into(),
            replace_content: String::new(),
        };
        let exact = replace::ReplaceEdit::Replace {
            pairs: vec![pair],
            allow_multiple: false,
            scope: None,
        };
        assert_eq!(unseen_of(EditOp::Replace(exact)), vec![0]);
        let diff = "--- a/a.rs\n+++ b/a.rs\n@@ -2,5 +2,2 @@\n     let a = 1;\n-    step_one();\n\
                    -    step_two();\n-    step_three();\n     finish_alpha();\n";
        assert_eq!(unseen_of(EditOp::Udiff(diff.into())), vec![0]);
        // A snippet in diff form names them with its `-` lines.
        let snippet = "fn alpha() {\n     let a = 1;\n-    step_one();\n-    step_two();\n\
                       -    step_three();\n     finish_alpha();\n }\n// ... existing code ...\n";
        let lazy = EditOp::Lazy {
            snippet: snippet.into(),
            instruction: None,
        };
        assert_eq!(unseen_of(lazy), vec![0]);
    }

    #[test]
    fn a_binary_file_is_refused() {
        let (dir, ws) = ws();
        std::fs::write(dir.path().join("b.bin"), b"\0\x01").unwrap();
        let edit = ProposedEdit {
            path: "b.bin".into(),
            op: EditOp::Write("x".into()),
        };
        assert_eq!(
            run(edit.compute(&ws, None)).unwrap_err().code,
            ErrorCode::BinaryFile
        );
    }
}
