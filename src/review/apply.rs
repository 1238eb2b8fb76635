//! `patchgate apply`: a parsed patch file ([`crate::edit::patchfile`]) as edit requests, one
//! per file (a rename is one request: the new file and the old one's deletion), computed and
//! written through the same gate, atomic hash-guarded writes and journal as an agent's edits;
//! hunks that do not apply left out on request, and written to `FILE.rej` as `git apply
//! --reject` writes them.

use crate::edit::patchfile::{FileEdit, PatchSet};
use crate::edit::udiff::{ChangeKind, FilePatch};
use crate::error::{Error, ErrorCode, Result};
use crate::workspace::config::PolicyName;

use super::edit::{EditOp, ProposedEdit};
use super::policy::Action;
use super::proposal::Decision;
use super::proposal::FileChange;
use super::queue::{Gate, Outcome, Request};

/// The tool name patch files are reviewed under.
pub const TOOL: &str = "apply";

/// One file of the patch as a request: (the path to show, the request). With `reject`, a
/// file's hunks that do not apply are left out ([`EditOp::PatchRejecting`]).
pub fn requests(set: &PatchSet, reject: bool) -> Vec<(String, Request)> {
    set.files
        .iter()
        .map(|f| {
            let edits = match f {
                FileEdit::Patch(fp) => patch_edits(fp, reject),
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

fn patch_edits(fp: &FilePatch, reject: bool) -> Vec<ProposedEdit> {
    let target = fp.display_path().to_string();
    let mut edits = vec![ProposedEdit {
        path: target.clone(),
        op: if reject {
            EditOp::PatchRejecting(fp.clone())
        } else {
            EditOp::Patch(fp.clone())
        },
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
    pub result: std::result::Result<CheckedOk, Error>,
    /// When checked rejecting: the hunks left out because they do not apply (their index in
    /// the file's patch, and why). A file with every hunk left out and nothing else to
    /// change does not apply (`result` says why) and still lists them.
    pub rejected: Vec<(usize, String)>,
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

/// Compute every file's change without writing anything; with `reject`, leaving out the
/// hunks that do not apply ([`requests`]).
pub async fn check(gate: &Gate, set: &PatchSet, reject: bool) -> Vec<Checked> {
    let mut out = Vec::new();
    for (path, req) in requests(set, reject) {
        let mut ok = CheckedOk {
            added: 0,
            removed: 0,
            warnings: Vec::new(),
        };
        let (mut failed, mut rejected) = (None, Vec::new());
        for edit in &req.edits {
            match check_one(gate, edit).await {
                Ok(c) => {
                    ok.added += c.diff.added;
                    ok.removed += c.diff.removed;
                    rejected.extend(
                        c.rejected
                            .iter()
                            .map(|r| (r.index, r.error.message.clone())),
                    );
                    if !c.rejected.is_empty() && changes_nothing(&c) {
                        let why: Vec<&str> = rejected.iter().map(|(_, m)| m.as_str()).collect();
                        failed = Some(Error::new(ErrorCode::NoMatch, why.join("\n")));
                    }
                    ok.warnings.extend(c.unseen_warning());
                    ok.warnings.extend(c.warnings);
                }
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        out.push(Checked {
            path,
            result: failed.map_or(Ok(ok), Err),
            rejected,
        });
    }
    out
}

/// One edit computed and checked for syntax, nothing written.
async fn check_one(gate: &Gate, edit: &ProposedEdit) -> Result<FileChange> {
    let mut c = edit.compute(gate.workspace(), None).await?;
    tokio::task::spawn_blocking(move || {
        c.check_syntax();
        c
    })
    .await
    .map_err(|e| Error::new(ErrorCode::FsError, format!("the syntax check failed: {e}")))
}

/// The change leaves the file as it is (every hunk left out, no mode change).
fn changes_nothing(c: &FileChange) -> bool {
    c.before.is_some() && !c.delete && c.mode.is_none() && c.old() == c.new
}

/// Apply, at once, every file of the patch that `checked` found applying (the gate's policy
/// should be `auto`), with `reject` each without its hunks that do not apply; nothing is
/// written unless all of those apply. `None` when no file applies.
pub async fn apply_all(
    gate: &Gate,
    set: &PatchSet,
    checked: &[Checked],
    reject: bool,
) -> Option<Result<super::queue::Outcome>> {
    let edits: Vec<ProposedEdit> = requests(set, reject)
        .into_iter()
        .zip(checked)
        .filter(|(_, c)| c.result.is_ok())
        .flat_map(|((_, r), _)| r.edits)
        .collect();
    if edits.is_empty() {
        return None;
    }
    Some(
        gate.submit(Request {
            tool: TOOL.into(),
            client: None,
            edits,
            dry_run: false,
            keep_failure: false,
        })
        .await,
    )
}

/// The `.rej` files of an apply: each written (its path) or why not, and the run that wrote
/// them (`patchgate undo RUN` takes them back).
#[derive(Debug)]
pub struct Rejects {
    /// Each `.rej` file: its path, or why it was not written.
    pub files: Vec<Result<String>>,
    /// The gate's run that wrote them, when any was.
    pub run_id: Option<String>,
}

/// Write `FILE.rej` for each file of `set` that `checked` left hunks out of, as `git apply
/// --reject` does (an older one is replaced; a symlink standing there is removed, never
/// followed, and a regular file written), through the gate as one run of their own (the same
/// atomic writes and journal as any edit). A path the rules deny or keep for a person gets
/// none.
pub async fn write_rejects(gate: &Gate, set: &PatchSet, checked: &[Checked]) -> Rejects {
    let mut files = Vec::new();
    let mut edits = Vec::new();
    for (f, c) in set.files.iter().zip(checked) {
        let FileEdit::Patch(fp) = f else { continue };
        if c.rejected.is_empty() {
            continue;
        }
        let hunks: Vec<usize> = c.rejected.iter().map(|(i, _)| *i).collect();
        let (path, text) = fp.reject_file(&hunks);
        match reject_place(gate, &path) {
            Ok(rel) => edits.push(ProposedEdit {
                path: rel,
                op: EditOp::Write(text),
            }),
            Err(e) => files.push(Err(e)),
        }
    }
    if edits.is_empty() {
        return Rejects {
            files,
            run_id: None,
        };
    }
    let paths: Vec<String> = edits.iter().map(|e| e.path.clone()).collect();
    let written = submit_rejects(gate, edits).await;
    let run_id = written.as_ref().ok().cloned();
    files.extend(paths.into_iter().map(|p| written.clone().map(|_| p)));
    Rejects { files, run_id }
}

/// Where `path` (a `.rej` file) is written, relative to the root, once a symlink standing
/// there is removed: its directory resolved (links inside the root followed, as for any
/// path), its own name never followed. Refused when the rules deny it or keep it for a person.
/// The person asked for it (`--yes --reject`, or the TUI's key): the rules are read as under
/// `auto`, whatever the gate's own default, so both write the same files.
fn reject_place(gate: &Gate, path: &str) -> Result<String> {
    let root = &gate.workspace().root;
    let place = root.resolve_name(path)?;
    let mut asked = gate.policy().clone();
    asked.default = PolicyName::Auto;
    if asked.action(&place.rel)? != Action::Auto {
        return Err(Error::new(
            ErrorCode::DeniedByRule,
            format!(
                "`{}` is kept for a person to write; it was not written",
                place.rel
            ),
        ));
    }
    crate::workspace::fs::remove_link(&place)?;
    // What the gate resolves must be the place itself, not a link planted again since.
    let resolved = root.resolve(&place.rel)?;
    if resolved.rel != place.rel {
        return Err(Error::new(
            ErrorCode::InvalidPath,
            format!("`{}` is a symlink; it was not written", place.rel),
        ));
    }
    Ok(place.rel)
}

/// Submit the `.rej` files as one run, accepted at once (the person asked for them); its
/// run id.
async fn submit_rejects(gate: &Gate, edits: Vec<ProposedEdit>) -> Result<String> {
    let outcome = gate
        .submit(Request {
            tool: TOOL.into(),
            client: None,
            edits,
            dry_run: false,
            keep_failure: false,
        })
        .await?;
    let outcome = match outcome {
        Outcome::Pending(s) => gate.decide(&s.run_id, Decision::Accept)?,
        other => other,
    };
    match outcome {
        Outcome::Applied(s) => Ok(s.run_id),
        Outcome::Failed(_, e) => Err(e),
        _ => Err(Error::new(
            ErrorCode::FsError,
            "the .rej files were not written".to_string(),
        )),
    }
}
