//! `patchgate apply`: a parsed patch file ([`crate::edit::patchfile`]) as edit requests, one
//! per file (a rename is one request: the new file and the old one's deletion), computed and
//! written through the same gate, atomic hash-guarded writes and journal as an agent's edits.

use crate::edit::patchfile::{FileEdit, PatchSet};
use crate::edit::udiff::{ChangeKind, FilePatch};
use crate::error::{Error, ErrorCode, Result};

use super::edit::{EditOp, ProposedEdit};
use super::queue::{Gate, Request};

/// The tool name patch files are reviewed under.
pub(crate) const TOOL: &str = "apply";

/// One file of the patch as a request: (the path to show, the request).
pub fn requests(set: &PatchSet) -> Vec<(String, Request)> {
    set.files
        .iter()
        .map(|f| {
            let edits = match f {
                FileEdit::Patch(fp) => patch_edits(fp),
                FileEdit::Blocks {
                    path,
                    text,
                    creates,
                } => vec![ProposedEdit {
                    path: path.clone(),
                    op: match creates {
                        Some(content) => EditOp::WriteIfMissing {
                            content: content.clone(),
                            refusal: format!(
                                "the blocks for `{path}` only add text (empty SEARCH parts), \
                                 which creates a file, but `{path}` exists"
                            ),
                        },
                        None => EditOp::Blocks(text.clone()),
                    },
                }],
                FileEdit::Lazy {
                    path,
                    snippet,
                    instruction,
                } => vec![ProposedEdit {
                    path: path.clone(),
                    op: EditOp::Lazy {
                        snippet: snippet.clone(),
                        instruction: instruction.clone(),
                    },
                }],
            };
            let label = match f {
                FileEdit::Patch(fp) if matches!(fp.kind, ChangeKind::Rename | ChangeKind::Copy) => {
                    format!(
                        "{} → {}",
                        fp.old_path.as_deref().unwrap_or("?"),
                        fp.display_path()
                    )
                }
                _ => f.path().to_string(),
            };
            (
                label,
                Request {
                    tool: TOOL.into(),
                    client: None,
                    edits,
                    dry_run: false,
                    keep_failure: false,
                },
            )
        })
        .collect()
}

fn patch_edits(fp: &FilePatch) -> Vec<ProposedEdit> {
    let target = fp.display_path().to_string();
    let mut edits = vec![ProposedEdit {
        path: target.clone(),
        op: EditOp::Patch(fp.clone()),
    }];
    if fp.kind == ChangeKind::Rename
        && let Some(from) = fp.old_path.as_deref().filter(|&from| from != target)
    {
        edits.push(ProposedEdit {
            path: from.to_string(),
            op: EditOp::Patch(FilePatch {
                old_path: Some(from.to_string()),
                new_path: None,
                kind: ChangeKind::Delete,
                old_mode: None,
                new_mode: None,
                hunks: Vec::new(),
                binary: false,
                git: fp.git,
                line: fp.line,
            }),
        });
    }
    edits
}

/// What happened to one file of the patch when it was checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    /// The file.
    pub path: String,
    /// Hunks (or blocks) in its change, or why it does not apply.
    pub result: std::result::Result<CheckedOk, String>,
}

/// A file that applies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedOk {
    /// Lines added and removed.
    pub added: usize,
    /// Lines removed.
    pub removed: usize,
    /// Warnings (offsets, fuzz).
    pub warnings: Vec<String>,
}

/// Compute every file's change without writing anything.
pub async fn check(gate: &Gate, set: &PatchSet) -> Vec<Checked> {
    let ws = gate.workspace();
    let mut out = Vec::new();
    for (path, req) in requests(set) {
        let mut ok = CheckedOk {
            added: 0,
            removed: 0,
            warnings: Vec::new(),
        };
        let mut failed = None;
        for edit in &req.edits {
            let computed = match edit.compute(ws, None).await {
                Ok(mut c) => tokio::task::spawn_blocking(move || {
                    c.check_syntax();
                    c
                })
                .await
                .map_err(|e| {
                    Error::new(ErrorCode::FsError, format!("the syntax check failed: {e}"))
                }),
                Err(e) => Err(e),
            };
            match computed {
                Ok(c) => {
                    ok.added += c.diff.added;
                    ok.removed += c.diff.removed;
                    ok.warnings.extend(c.warnings);
                }
                Err(e) => {
                    failed = Some(format!("{}: {}", e.code.as_str(), e.message));
                    break;
                }
            }
        }
        out.push(Checked {
            path,
            result: failed.map_or(Ok(ok), Err),
        });
    }
    out
}

/// Apply the whole patch at once (the gate's policy should be `auto`): every file is computed
/// first, and nothing is written unless all of them apply.
pub async fn apply_all(gate: &Gate, set: &PatchSet) -> Result<super::queue::Outcome> {
    let edits = requests(set)
        .into_iter()
        .flat_map(|(_, r)| r.edits)
        .collect();
    gate.submit(Request {
        tool: TOOL.into(),
        client: None,
        edits,
        dry_run: false,
        keep_failure: false,
    })
    .await
}
