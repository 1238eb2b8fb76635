//! Proposals (docs/DESIGN.md §4): what an edit would change, file by file, with the content hash each
//! file had when it was proposed; the decisions a person can take on it (accept, accept some
//! hunks, accept edited content, reject); and committing the decided content to disk,
//! all-or-nothing across files, under the hash guard.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde::Serialize;

use crate::diff::{CONTEXT, FileDiff, Tag};
use crate::edit::text::Text;
use crate::error::{Error, ErrorCode, Result};
use crate::syntax::{self, SyntaxError};
use crate::workspace::fs;
use crate::workspace::paths::SafePath;
use crate::workspace::random;

use super::account::{self, LeftOut};
use super::shared;
use crate::edit::unseen::{self, Shown};

/// How the warning of a new parse error begins (`syntax: LINE:COL: what`).
pub const SYNTAX_WARNING: &str = "syntax: ";

/// The identifier of a proposal: short and unguessable.
pub(crate) type RunId = String;

/// The characters of a run id, and how many it has.
const RUN_ID_ALPHABET: &[u8] = b"abcdefghijkmnpqrstuvwxyz23456789";
const RUN_ID_LEN: usize = 12;

/// A new run id: 12 characters of base-32 (60 random bits); an error when the OS random
/// source fails (an id anyone could guess would let them decide the review).
pub(crate) fn new_run_id() -> Result<RunId> {
    let bytes = random::bytes::<RUN_ID_LEN>()
        .map_err(|e| Error::new(ErrorCode::FsError, format!("cannot make a run id: {e}")))?;
    Ok(bytes
        .iter()
        .map(|b| RUN_ID_ALPHABET[(*b as usize) % RUN_ID_ALPHABET.len()] as char)
        .collect())
}

/// Whether `s` is a run id as [`new_run_id`] makes them (a stored review's name is checked).
pub(crate) fn is_run_id(s: &str) -> bool {
    s.len() == RUN_ID_LEN && s.bytes().all(|b| RUN_ID_ALPHABET.contains(&b))
}

/// One file of a proposal.
#[derive(Debug, Clone)]
pub struct FileChange {
    /// Where.
    pub path: SafePath,
    /// The bytes on disk when proposed (`None`: the file did not exist); one copy however
    /// many open proposals start from the same bytes.
    pub before: Option<Arc<[u8]>>,
    /// The text model of the file (how to encode decided content), shared like `before`.
    pub text: Arc<Text>,
    /// The LF-normalised proposed content (empty when the file is deleted).
    pub new: String,
    /// The proposal deletes the file.
    pub delete: bool,
    /// The mode to give the file (a patch's new file or mode change: 0o644 or 0o755).
    pub mode: Option<u32>,
    /// What the engine tolerated, and the `syntax:` warning of [`FileChange::check_syntax`].
    pub warnings: Vec<String>,
    /// The parse errors `new` has that `old` did not (see [`FileChange::check_syntax`]).
    pub syntax: Vec<SyntaxError>,
    /// Why the syntax check could not finish (too large, too slow, the parse budget held):
    /// under `auto` such an edit waits for a person (see [`FileChange::check_syntax`]).
    pub unchecked: Option<syntax::Skipped>,
    /// The hunks of `old` → `new`.
    pub diff: FileDiff,
    /// The patch's hunks left out of `new` because they do not apply
    /// ([`super::edit::EditOp::PatchRejecting`]).
    pub rejected: Vec<crate::edit::udiff::Rejected>,
    /// What the request's text showed (`None`: no request made it), for
    /// [`FileChange::unseen`].
    pub shown: Option<Arc<Shown>>,
    /// The lines of the original (0-based, ascending) the proposed content deletes that the
    /// request's text does not show ([`FileChange::measure_unseen`]).
    pub unseen_lines: Arc<[usize]>,
    /// The root-relative file a patch copies or renames this one from: read for it, so the
    /// deny rules and the protected files hold for it too ([`super::policy::Policy::may_copy`]).
    pub source: Option<String>,
}

impl FileChange {
    /// A change from `before` (decoded as `text`) to `new`.
    pub fn new(
        path: SafePath,
        before: Option<Vec<u8>>,
        text: Text,
        new: String,
        warnings: Vec<String>,
    ) -> FileChange {
        let (before, text) = shared::intern(before, text);
        let old = if before.is_some() { text.content() } else { "" };
        let diff = FileDiff::compute(old, &new, CONTEXT);
        FileChange {
            path,
            before,
            text,
            new,
            delete: false,
            mode: None,
            warnings,
            syntax: Vec::new(),
            unchecked: None,
            diff,
            rejected: Vec::new(),
            shown: None,
            unseen_lines: Arc::from([]),
            source: None,
        }
    }

    /// Measure the lines the proposed content deletes that `shown` does not show
    /// (docs/DESIGN.md §4, [`crate::edit::unseen`]) and keep both.
    pub fn measure_unseen(&mut self, shown: Arc<Shown>) {
        self.unseen_lines = if self.before.is_some() {
            unseen::lines(
                Some(&self.path.rel),
                self.old(),
                &self.new,
                &self.diff,
                &shown,
            )
            .into()
        } else {
            Arc::from([])
        };
        self.shown = Some(shown);
    }

    /// The lines of the original that the current diff deletes unseen (after a partial
    /// acceptance, only those it still deletes).
    fn unseen_now(&self) -> Vec<usize> {
        let deleted: std::collections::HashSet<usize> = self
            .diff
            .hunks
            .iter()
            .flat_map(|h| &h.lines)
            .filter(|l| l.tag == Tag::Delete)
            .filter_map(|l| l.old_index)
            .collect();
        self.unseen_lines
            .iter()
            .copied()
            .filter(|i| deleted.contains(i))
            .collect()
    }

    /// The `unseen: N lines deleted that the edit does not show (RANGES)` warning, if any.
    pub fn unseen_warning(&self) -> Option<String> {
        unseen::warning(self.old(), &self.unseen_now())
    }

    /// Per hunk, the lines it deletes that the request's text does not show (docs/DESIGN.md
    /// §4); none when no request's text is known.
    pub fn unseen(&self) -> Vec<usize> {
        unseen::per_hunk(&self.diff, &self.unseen_lines)
    }

    /// The LF-normalised content when proposed (empty for a new file).
    pub fn old(&self) -> &str {
        if self.before.is_some() {
            self.text.content()
        } else {
            ""
        }
    }

    /// Parse the result and the original (tree-sitter, bounded; docs/DESIGN.md §5.5) and note
    /// the errors the result adds, with a `syntax: LINE:COL: what` warning. Whatever engine
    /// made the change; a deleted file has nothing to check. Runs off the async runtime.
    pub fn check_syntax(&mut self) {
        self.warnings.retain(|w| !w.starts_with(SYNTAX_WARNING));
        let checked = if self.delete || self.new == self.old() {
            Ok(Vec::new())
        } else {
            let old = self.before.is_some().then_some(self.old());
            syntax::check(&self.path.rel, old, &self.new)
        };
        (self.syntax, self.unchecked) = match checked {
            Ok(errors) => (errors, None),
            Err(skipped) => (Vec::new(), Some(skipped)),
        };
        if let Some(w) = syntax::warning(&self.syntax) {
            self.warnings.push(w);
        }
    }

    /// The mode change this proposal makes, `(old, new)` permission bits: a mode for an
    /// existing file that differs from its mode on disk when proposed.
    pub fn mode_change(&self) -> Option<(u32, u32)> {
        let new = self.mode?;
        self.before.as_ref()?;
        let old = fs::mode(&self.path.abs)? & 0o7777;
        (old != new).then_some((old, new))
    }

    /// The unified diff under `a/PATH` and `b/PATH`, after git's `old mode`/`new mode` lines
    /// when the mode changes.
    pub fn unified(&self) -> String {
        let modes = match self.mode_change() {
            Some((old, new)) => format!("old mode 100{old:o}\nnew mode 100{new:o}\n"),
            None => String::new(),
        };
        modes + &self.unified_text()
    }

    fn unified_text(&self) -> String {
        let old_name = if self.before.is_some() {
            format!("a/{}", self.path.rel)
        } else {
            "/dev/null".into()
        };
        let new_name = if self.delete {
            "/dev/null".into()
        } else {
            format!("b/{}", self.path.rel)
        };
        self.diff.unified(&old_name, &new_name)
    }
}

/// Where a proposal stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum State {
    /// Computed, not written; can be committed by run_id until it expires.
    DryRun,
    /// Waiting for a person.
    Pending,
    /// Written.
    Applied,
    /// A person said no.
    Rejected,
    /// Its time ran out, or the agent withdrew it.
    Expired,
    /// Could not be written (the file changed, a write failed).
    Failed,
}

impl State {
    /// Whether the proposal can still be decided or committed.
    pub(crate) fn is_open(self) -> bool {
        matches!(self, State::DryRun | State::Pending)
    }

    /// Its wire name, as people read it too (`dry-run`, `applied`).
    pub fn name(self) -> &'static str {
        match self {
            State::Pending => "pending",
            State::DryRun => "dry-run",
            State::Applied => "applied",
            State::Rejected => "rejected",
            State::Expired => "expired",
            State::Failed => "failed",
        }
    }
}

/// What a person decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Everything as proposed.
    Accept,
    /// Only these hunks (indices over all files' hunks, in file order).
    AcceptHunks(Vec<usize>),
    /// Only these hunks, and of them only the changed lines not in `skip`: (hunk, line)
    /// pairs, the hunk's index over all files and the line's index in its display lines.
    AcceptLines {
        /// The hunks (`None`: all).
        hunks: Option<Vec<usize>>,
        /// The changed lines left out.
        skip: Vec<(usize, usize)>,
    },
    /// This content instead (single-file proposals).
    AcceptEdited(String),
    /// No, with a reason for the agent.
    Reject(String),
}

/// What a person said, on the wire as `accept` / `reject`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Yes (whole, in part, or edited).
    Accept,
    /// No.
    Reject,
}

impl Verdict {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Accept => "accept",
            Verdict::Reject => "reject",
        }
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<&str> for Verdict {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// The record of a decision, as the tool result reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Review {
    /// Accept or reject.
    pub decision: Verdict,
    /// The reviewer's note.
    pub note: String,
    /// The reviewer edited the content.
    pub edited_by_reviewer: bool,
    /// Hunks accepted.
    pub hunks_accepted: usize,
    /// Hunks proposed.
    pub hunks_total: usize,
}

/// An edit waiting for (or past) a decision.
#[derive(Debug, Clone)]
pub struct Proposal {
    /// Its id.
    pub run_id: RunId,
    /// The tool that proposed it (`fast_apply`, `patch_file`, `apply`, …).
    pub tool: String,
    /// The MCP client's name, if known.
    pub client: Option<String>,
    /// The files.
    pub files: Vec<FileChange>,
    /// When it was proposed.
    pub created: SystemTime,
    /// When a dry-run stops being committable.
    pub expires_at: Option<SystemTime>,
    /// Where it stands.
    pub state: State,
    /// The decision, once taken.
    pub review: Option<Review>,
    /// For an agent call that failed before anything was proposed: why, and the paths it
    /// named (it has no files).
    pub failure: Option<Failure>,
    /// The rejected review it answers, when it is a revision (docs/DESIGN.md §4).
    pub revision: Option<Revision>,
    /// What the reviewer left out of it when accepting (docs/DESIGN.md §4): then `files`
    /// hold what was written.
    pub left_out: Vec<LeftOut>,
    /// It was applied, then undone (from the TUI, the review API or `patchgate undo`).
    pub undone: bool,
    /// The connection of the agent that sent it, when it came over one (docs/DESIGN.md §4).
    pub agent: Option<super::agents::AgentRef>,
    /// Why it was withdrawn without a decision (its agent cancelled or went away).
    pub withdrawn: Option<String>,
    /// What the policy hook said of it, for a dry run's commit (docs/DESIGN.md §4).
    pub hook: Option<HookSaid>,
    /// It was taken back from the pending store when the gate started (docs/DESIGN.md §4):
    /// the agent that sent it was connected to a gate that is gone.
    pub restored: bool,
}

/// What the policy hook said of an edit it did not deny.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookSaid {
    /// Write it at once (where nothing stricter holds it).
    Auto,
    /// A person decides (the hook said so, or failed).
    Gate,
}

/// What a revision keeps of the rejected review it answers (`review/revision.rs` links them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Revision {
    /// The rejected review's run id.
    pub of: RunId,
    /// This proposal's revision number: 2 answers a first proposal, then one more each time.
    pub number: u32,
    /// The note the person rejected that review with.
    pub note: String,
    /// A unified diff from the rejected proposal's result to this one's, bounded (empty: the
    /// same result again).
    pub interdiff: String,
}

/// An agent's call that failed (`NO_MATCH`, `NEEDS_MORE_CONTEXT`, …), kept as a failed review
/// so the person sees what the agent tried and the whole answer it got.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The error's code and whole message, as the agent got it (`CODE: message`).
    pub message: String,
    /// The paths the call named, as it named them.
    pub paths: Vec<String>,
}

/// A failed call's message is kept up to this many bytes (an agent's call may fail often).
const FAILURE_BYTES: usize = 16 << 10;

/// A failed call keeps at most this many of the paths it named, each up to this many bytes.
pub(crate) const FAILURE_PATHS: usize = 32;
const FAILURE_PATH_BYTES: usize = 512;

/// Cut `s` to at most `bytes` bytes (at a character's edge), marked with `mark`, when it is
/// longer.
pub(crate) fn cut_to(s: &mut String, bytes: usize, mark: &str) {
    if s.len() > bytes {
        let cut = (0..=bytes)
            .rev()
            .find(|&i| s.is_char_boundary(i))
            .unwrap_or(0);
        s.truncate(cut);
        s.push_str(mark);
    }
}

impl Proposal {
    /// A failed call of `tool` by `client` naming `paths`, closed as it is made.
    pub fn failed(
        tool: &str,
        client: Option<String>,
        paths: Vec<String>,
        error: &Error,
    ) -> Result<Proposal> {
        let mut message = format!("{}: {}", error.code.as_str(), error.message);
        cut_to(&mut message, FAILURE_BYTES, " …");
        // An agent names what it likes: a few paths of sane length are enough to show.
        let paths = paths
            .into_iter()
            .take(FAILURE_PATHS)
            .map(|mut p| {
                cut_to(&mut p, FAILURE_PATH_BYTES, "…");
                p
            })
            .collect();
        let mut p = Proposal::new(tool, client, Vec::new())?;
        p.state = State::Failed;
        p.failure = Some(Failure { message, paths });
        Ok(p)
    }

    /// A proposal of `files` by `tool`; an error when no run id can be made (the OS random
    /// source failed).
    pub fn new(tool: &str, client: Option<String>, files: Vec<FileChange>) -> Result<Proposal> {
        Ok(Proposal {
            run_id: new_run_id()?,
            tool: tool.to_string(),
            client,
            files,
            created: SystemTime::now(),
            expires_at: None,
            state: State::Pending,
            review: None,
            failure: None,
            revision: None,
            left_out: Vec::new(),
            undone: false,
            agent: None,
            withdrawn: None,
            hook: None,
            restored: false,
        })
    }

    /// Make it a dry-run that expires after `ttl` (at once when the clock cannot hold that
    /// time: a duration past it is no reason to panic a worker).
    pub(crate) fn into_dry_run(mut self, ttl: Duration) -> Proposal {
        self.state = State::DryRun;
        self.expires_at = Some(self.created.checked_add(ttl).unwrap_or(self.created));
        self
    }

    /// Seconds until a dry-run expires (0 when past).
    pub fn expires_in(&self) -> Option<u64> {
        self.expires_at.map(|t| {
            t.duration_since(SystemTime::now())
                .map(|d| d.as_secs())
                .unwrap_or(0)
        })
    }

    /// Whether the dry-run's time ran out.
    pub(crate) fn is_expired(&self, now: SystemTime) -> bool {
        self.expires_at.is_some_and(|t| now >= t)
    }

    /// The bytes of content it holds itself: each file's proposed content, hunks and shown
    /// lines, its failure and its revision (not its originals: [`Proposal::originals`]).
    pub(crate) fn own_bytes(&self) -> usize {
        let failure = self.failure.as_ref().map_or(0, |f| {
            f.message.len() + f.paths.iter().map(String::len).sum::<usize>()
        });
        let revision = self
            .revision
            .as_ref()
            .map_or(0, |r| r.note.len() + r.interdiff.len());
        let files: usize = self
            .files
            .iter()
            .map(|f| {
                f.new.len()
                    + f.diff.held_bytes()
                    + f.shown.as_ref().map_or(0, |s| s.held_bytes())
                    + f.unseen_lines.len() * 8
            })
            .sum();
        let client = self.client.as_ref().map_or(0, String::len);
        let left_out: usize = self
            .left_out
            .iter()
            .map(|l| l.path.len() + l.lines.iter().map(String::len).sum::<usize>() + 64)
            .sum();
        failure + revision + files + client + left_out
    }

    /// The originals it holds, each shared with every proposal of the same bytes: the
    /// original's address (which copy it is) and its bytes with its decoded text.
    pub(crate) fn originals(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.files.iter().filter_map(|f| {
            let b = f.before.as_ref()?;
            Some((b.as_ptr() as usize, b.len() + f.text.content().len()))
        })
    }

    /// All hunks, over all files.
    pub(crate) fn hunk_count(&self) -> usize {
        self.files.iter().map(|f| f.diff.hunks.len()).sum()
    }

    /// Lines added and removed over all files.
    pub fn counts(&self) -> (usize, usize) {
        self.files
            .iter()
            .fold((0, 0), |(a, r), f| (a + f.diff.added, r + f.diff.removed))
    }

    /// The paths, root-relative.
    pub fn paths(&self) -> Vec<String> {
        match &self.failure {
            Some(f) if self.files.is_empty() => f.paths.clone(),
            _ => self.files.iter().map(|f| f.path.rel.clone()).collect(),
        }
    }

    /// All files' unified diffs, concatenated.
    pub fn unified(&self) -> String {
        self.files.iter().map(FileChange::unified).collect()
    }

    /// Per file, hunk and displayed line: whether it is a changed line taken when hunks
    /// `chosen` (`None`: all) are accepted less their lines in `skip`; an error for a hunk
    /// that does not exist.
    fn taken(
        &self,
        chosen: Option<&[usize]>,
        skip: &[(usize, usize)],
    ) -> Result<Vec<Vec<Vec<bool>>>> {
        let total = self.hunk_count();
        if let Some(bad) = chosen
            .into_iter()
            .flatten()
            .chain(skip.iter().map(|(h, _)| h))
            .find(|&&h| h >= total)
        {
            return Err(Error::invalid_input(format!(
                "hunk {bad} does not exist; the proposal has {total} hunks (0-{})",
                total.saturating_sub(1)
            )));
        }
        let mut offset = 0;
        let mut out = Vec::with_capacity(self.files.len());
        for f in &self.files {
            let masks: Vec<Vec<bool>> = f
                .diff
                .hunks
                .iter()
                .enumerate()
                .map(|(k, h)| {
                    let g = offset + k;
                    let on = chosen.is_none_or(|c| c.contains(&g));
                    h.lines
                        .iter()
                        .enumerate()
                        .map(|(i, l)| on && l.tag != Tag::Equal && !skip.contains(&(g, i)))
                        .collect()
                })
                .collect();
            offset += masks.len();
            out.push(masks);
        }
        Ok(out)
    }

    /// What the reviewer leaves out of the proposal under `decision` (docs/DESIGN.md §4):
    /// nothing for a whole or an edited acceptance, or a rejection.
    pub fn left_out(&self, decision: &Decision) -> Vec<LeftOut> {
        let taken = match decision {
            Decision::AcceptHunks(chosen) => self.taken(Some(chosen), &[]),
            Decision::AcceptLines { hunks, skip } => self.taken(hunks.as_deref(), skip),
            _ => return Vec::new(),
        };
        let files = self.files.iter().map(|f| account::Proposed {
            path: &f.path.rel,
            diff: &f.diff,
            delete: f.delete,
        });
        taken.map_or_else(|_| Vec::new(), |t| account::left_out(files, &t))
    }

    /// The contents with hunks `chosen` (`None`: all) taken but their changed lines in `skip`
    /// left out.
    fn accept_parts(
        &self,
        chosen: Option<&[usize]>,
        skip: &[(usize, usize)],
    ) -> Result<(Vec<Option<String>>, Review)> {
        let total = self.hunk_count();
        let taken = self.taken(chosen, skip)?;
        let mut contents = Vec::with_capacity(self.files.len());
        let mut accepted = 0;
        for (f, masks) in self.files.iter().zip(&taken) {
            let any = |m: &Vec<bool>| m.iter().any(|&b| b);
            accepted += masks.iter().filter(|m| any(m)).count();
            if f.delete {
                // A deletion is one decision: every line of it, or nothing.
                let whole = !masks.is_empty()
                    && masks.iter().zip(&f.diff.hunks).all(|(m, h)| {
                        m.iter()
                            .zip(&h.lines)
                            .all(|(&t, l)| t || l.tag == Tag::Equal)
                    });
                contents.push(if whole {
                    None
                } else {
                    Some(f.old().to_string())
                });
            } else {
                contents.push(Some(f.diff.apply_lines(f.old(), &f.new, masks)));
            }
        }
        Ok((
            contents,
            Review {
                decision: Verdict::Accept,
                note: String::new(),
                edited_by_reviewer: false,
                hunks_accepted: accepted,
                hunks_total: total,
            },
        ))
    }

    /// The content each file would get under `decision` (`None` for a deleted file), and the
    /// review record. `Reject` has no content.
    pub fn decided_contents(&self, decision: &Decision) -> Result<(Vec<Option<String>>, Review)> {
        let total = self.hunk_count();
        match decision {
            Decision::Accept => Ok((
                self.files
                    .iter()
                    .map(|f| (!f.delete).then(|| f.new.clone()))
                    .collect(),
                Review {
                    decision: Verdict::Accept,
                    note: String::new(),
                    edited_by_reviewer: false,
                    hunks_accepted: total,
                    hunks_total: total,
                },
            )),
            Decision::AcceptHunks(chosen) => self.accept_parts(Some(chosen), &[]),
            Decision::AcceptLines { hunks, skip } => self.accept_parts(hunks.as_deref(), skip),
            Decision::AcceptEdited(content) => {
                if self.files.len() != 1 {
                    return Err(Error::invalid_input(
                        "edited content can only be given for a proposal of one file",
                    ));
                }
                Ok((
                    vec![Some(
                        crate::edit::text::normalize_newlines(content).into_owned(),
                    )],
                    Review {
                        decision: Verdict::Accept,
                        note: String::new(),
                        edited_by_reviewer: true,
                        hunks_accepted: total,
                        hunks_total: total,
                    },
                ))
            }
            Decision::Reject(note) => Ok((
                Vec::new(),
                Review {
                    decision: Verdict::Reject,
                    note: note.clone(),
                    edited_by_reviewer: false,
                    hunks_accepted: 0,
                    hunks_total: total,
                },
            )),
        }
    }

    /// Check that every file still holds what it held when proposed. A file that changed
    /// gives `FILE_CHANGED` (line endings count: the bytes are compared).
    pub(crate) fn verify_unchanged(&self, max_bytes: u64) -> Result<()> {
        for f in &self.files {
            let now = fs::read(&f.path, max_bytes)?;
            let same = match (&now, &f.before) {
                (None, None) => true,
                // The bytes themselves: hashing both would read them as much, and more.
                (Some(a), Some(b)) => a[..] == b[..],
                _ => false,
            };
            if !same {
                return Err(Error::new(
                    ErrorCode::FileChanged,
                    format!(
                        "`{}` changed since the edit was proposed ({}); nothing was written — \
                         read the file again and send a new edit",
                        f.path.rel,
                        match (&now, &f.before) {
                            (None, Some(_)) => "it was deleted",
                            (Some(_), None) => "it was created",
                            _ => "its content differs",
                        }
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Each file's bytes for `contents` (in its own encoding, line endings and BOM; `None`:
    /// deleted).
    pub fn encode(&self, contents: &[Option<String>]) -> Result<Vec<Option<Vec<u8>>>> {
        self.files
            .iter()
            .zip(contents)
            .map(|(f, c)| c.as_deref().map(|t| f.text.encode(t)).transpose())
            .collect()
    }

    /// Write `contents` (from [`Proposal::decided_contents`]) to disk, all or nothing: every
    /// file's lock is held, every hash verified, then every file written; a failing write
    /// restores the files already written. Returns what was written, for the journal.
    pub fn write(&self, contents: &[Option<String>], max_bytes: u64) -> Result<Vec<Written>> {
        self.write_checked(contents, max_bytes, &mut || {})
    }

    /// [`Proposal::write`], calling `checked` once every file is verified unchanged and
    /// every content encoded within `max_bytes`, before the first byte is written (not when
    /// a check refuses the write).
    pub(crate) fn write_checked(
        &self,
        contents: &[Option<String>],
        max_bytes: u64,
        checked: &mut dyn FnMut(),
    ) -> Result<Vec<Written>> {
        if contents.len() != self.files.len() {
            return Err(Error::invalid_input(
                "internal: one content per file expected",
            ));
        }
        // Every file's lock (in one order, and across processes) while verifying and writing.
        let paths: Vec<_> = self.files.iter().map(|f| f.path.clone()).collect();
        fs::with_locks(&paths, || self.write_locked(contents, max_bytes, checked))
    }

    /// [`Proposal::write_checked`] with every file's lock held.
    fn write_locked(
        &self,
        contents: &[Option<String>],
        max_bytes: u64,
        checked: &mut dyn FnMut(),
    ) -> Result<Vec<Written>> {
        self.verify_unchanged(max_bytes)?;
        // Encode everything before touching the disk.
        let mut plans: Vec<(usize, Option<Vec<u8>>)> = Vec::with_capacity(self.files.len());
        for (i, (f, bytes)) in self.files.iter().zip(self.encode(contents)?).enumerate() {
            if let Some(b) = &bytes
                && b.len() as u64 > max_bytes
            {
                return Err(Error::new(
                    ErrorCode::FileTooLarge,
                    format!(
                        "`{}` would be {} bytes, over the {max_bytes}-byte limit",
                        f.path.rel,
                        b.len()
                    ),
                ));
            }
            plans.push((i, bytes));
        }
        checked();
        let mut done: Vec<Written> = Vec::new();
        for (i, bytes) in &plans {
            let f = &self.files[*i];
            let unchanged = match (bytes, &f.before) {
                (Some(b), Some(old)) => b[..] == old[..],
                (None, None) => true,
                _ => false,
            };
            if unchanged {
                // A mode change alone (`chmod +x` in a patch).
                if let (Some(m), Some(_)) = (f.mode, bytes)
                    && fs::mode(&f.path.abs).is_some_and(|cur| cur != m)
                {
                    fs::set_mode(&f.path, m)?;
                }
                continue;
            }
            let result = match bytes {
                Some(b) => fs::write_atomic_locked(&f.path, b, f.mode),
                None => fs::remove_locked(&f.path),
            };
            if let Err(e) = result {
                // Put back what this commit already wrote.
                for w in done.iter().rev() {
                    let _ = match &w.before {
                        Some(b) => fs::write_atomic_locked(&w.path, b, None),
                        None => fs::remove_locked(&w.path),
                    };
                }
                return Err(e);
            }
            done.push(Written {
                path: f.path.clone(),
                before: f.before.as_deref().map(<[u8]>::to_vec),
                after: bytes.clone(),
            });
        }
        Ok(done)
    }

    /// The proposal with each file's new content replaced by `contents` (`None`: deleted), as
    /// [`Proposal::decided_contents`] gives them: what a partial or edited acceptance wrote,
    /// with the syntax of each file that differs from the proposal checked again (it parses).
    pub(crate) fn with_contents(&self, contents: &[Option<String>]) -> Proposal {
        let mut p = self.clone();
        for (f, c) in p.files.iter_mut().zip(contents) {
            let (new, delete) = match c {
                Some(c) => (c.clone(), false),
                None => (String::new(), true),
            };
            f.diff = crate::diff::FileDiff::compute(f.old(), &new, CONTEXT);
            let changed = f.new != new || f.delete != delete;
            f.new = new;
            f.delete = delete;
            if changed {
                f.check_syntax();
            }
        }
        p
    }

    /// The proposal rebased on the files' current content with a three-way merge, when every
    /// changed file merges cleanly (the result must be decided again); `None` otherwise.
    pub(crate) fn rebased(&self, max_bytes: u64) -> Option<Proposal> {
        let mut files = Vec::with_capacity(self.files.len());
        for f in &self.files {
            let now = fs::read(&f.path, max_bytes).ok()?;
            let same = match (&now, &f.before) {
                (None, None) => true,
                (Some(a), Some(b)) => a[..] == b[..],
                _ => false,
            };
            if same {
                files.push(f.clone());
                continue;
            }
            let bytes = now?;
            f.before.as_ref()?;
            let text = Text::decode(&bytes).ok()?;
            if f.delete {
                return None;
            }
            // Bounded in time, however many regions (DESIGN §7, bounded merges).
            let merged =
                super::merge3::Merge::lines(f.old(), text.content(), f.new.as_str()).merged()?;
            let mut warnings = f.warnings.clone();
            warnings.push("rebased on the file's current content".to_string());
            let mut change = FileChange::new(f.path.clone(), Some(bytes), text, merged, warnings);
            change.check_syntax();
            change.mode = f.mode;
            if let Some(shown) = f.shown.clone() {
                change.measure_unseen(shown);
            }
            files.push(change);
        }
        let mut rebased = self.clone();
        rebased.files = files;
        rebased.state = State::Pending;
        rebased.review = None;
        Some(rebased)
    }
}

/// One file of a proposal as a reviewer sees it: both versions, LF-normalised.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct FileContent {
    /// Root-relative path.
    pub path: String,
    /// The content when proposed (empty for a new file).
    pub old: String,
    /// The proposed content (empty for a deleted file).
    pub new: String,
    /// The proposal creates the file.
    pub created: bool,
    /// The proposal deletes the file.
    pub deleted: bool,
    /// A mode change, as `"100644 → 100755"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode_change: Option<String>,
}

impl Proposal {
    /// Both versions of every file, for a reviewer's diff view.
    pub fn contents(&self) -> Vec<FileContent> {
        self.files
            .iter()
            .map(|f| FileContent {
                path: f.path.rel.clone(),
                old: f.old().to_string(),
                new: f.new.clone(),
                created: f.before.is_none(),
                deleted: f.delete,
                mode_change: f
                    .mode_change()
                    .map(|(old, new)| format!("100{old:o} → 100{new:o}")),
            })
            .collect()
    }
}

/// One file a commit wrote (for the journal and undo).
#[derive(Debug, Clone)]
pub struct Written {
    /// Where.
    pub path: SafePath,
    /// The bytes before (`None`: the file was created).
    pub before: Option<Vec<u8>>,
    /// The bytes after (`None`: the file was deleted).
    pub after: Option<Vec<u8>>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::paths::Root;

    fn change(root: &Root, rel: &str, before: &str, after: &str) -> FileChange {
        let p = root.resolve(rel).unwrap();
        std::fs::write(&p.abs, before).unwrap();
        FileChange::new(
            p,
            Some(before.as_bytes().to_vec()),
            Text::decode(before.as_bytes()).unwrap(),
            after.to_string(),
            vec![],
        )
    }

    #[test]
    #[cfg(unix)]
    fn a_mode_change_shows_in_the_diff_and_the_reviewers_view() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path()).unwrap();
        let mut c = change(&root, "run.sh", "echo hi\n", "echo hi\n");
        std::fs::set_permissions(&c.path.abs, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(c.mode_change(), None);
        c.mode = Some(0o755);
        assert_eq!(c.mode_change(), Some((0o644, 0o755)));
        assert!(
            c.unified()
                .starts_with("old mode 100644\nnew mode 100755\n"),
            "{}",
            c.unified()
        );
        let p = Proposal::new("apply", None, vec![c]).unwrap();
        assert_eq!(
            p.contents()[0].mode_change.as_deref(),
            Some("100644 → 100755")
        );
    }

    fn numbers(edit: &[(usize, &str)]) -> String {
        (0..40)
            .map(|i| match edit.iter().find(|(k, _)| *k == i) {
                Some((_, s)) => format!("{s}\n"),
                None => format!("line {i}\n"),
            })
            .collect()
    }

    #[test]
    fn run_ids_are_short_and_distinct() {
        let a = new_run_id().unwrap();
        assert_eq!(a.len(), 12);
        assert_ne!(a, new_run_id().unwrap());
    }

    #[test]
    fn accepting_some_hunks_writes_only_those() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path()).unwrap();
        let old = numbers(&[]);
        let new = numbers(&[(2, "two"), (20, "twenty"), (35, "thirty-five")]);
        let p = Proposal::new("test", None, vec![change(&root, "n.txt", &old, &new)]).unwrap();
        assert_eq!(p.hunk_count(), 3);
        let (contents, review) = p
            .decided_contents(&Decision::AcceptHunks(vec![0, 2]))
            .unwrap();
        assert_eq!(review.hunks_accepted, 2);
        p.write(&contents, 1 << 20).unwrap();
        let on_disk = std::fs::read_to_string(dir.path().join("n.txt")).unwrap();
        assert_eq!(on_disk, numbers(&[(2, "two"), (35, "thirty-five")]));
    }

    #[test]
    fn accepting_single_lines_of_a_hunk_leaves_the_others_as_they_were() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path()).unwrap();
        let old = numbers(&[]);
        // One hunk: line 2 and 4 replaced, 20 in a second hunk.
        let new = numbers(&[(2, "two"), (4, "four"), (20, "twenty")]);
        let p = Proposal::new("test", None, vec![change(&root, "n.txt", &old, &new)]).unwrap();
        let lines = &p.files[0].diff.hunks[0].lines;
        let at = |text: &str| lines.iter().position(|l| l.text == text).unwrap();
        // Leave out `four` coming (and so `line 4` going), take the rest of hunk 0 only.
        let skip = vec![(0, at("line 4")), (0, at("four"))];
        let d = Decision::AcceptLines {
            hunks: Some(vec![0]),
            skip,
        };
        let (contents, review) = p.decided_contents(&d).unwrap();
        assert_eq!(
            contents[0].as_deref(),
            Some(numbers(&[(2, "two")]).as_str())
        );
        assert_eq!((review.hunks_accepted, review.hunks_total), (1, 2));
        // Every hunk (None), one added line left out: its old line goes without replacement.
        let d = Decision::AcceptLines {
            hunks: None,
            skip: vec![(0, at("four"))],
        };
        let (contents, _) = p.decided_contents(&d).unwrap();
        let want: String = numbers(&[(2, "two"), (20, "twenty")]).replace("line 4\n", "");
        assert_eq!(contents[0].as_deref(), Some(want.as_str()));
        // A hunk that does not exist is refused.
        let d = Decision::AcceptLines {
            hunks: None,
            skip: vec![(7, 0)],
        };
        assert!(p.decided_contents(&d).is_err());
    }

    #[test]
    fn what_is_left_out_is_named_by_hunk_with_its_lines() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path()).unwrap();
        let old = numbers(&[]);
        let new = numbers(&[(2, "two"), (4, "four"), (20, "twenty")]);
        let p = Proposal::new("test", None, vec![change(&root, "n.txt", &old, &new)]).unwrap();
        assert!(p.left_out(&Decision::Accept).is_empty());
        assert!(p.left_out(&Decision::AcceptHunks(vec![0, 1])).is_empty());
        let whole = p.left_out(&Decision::AcceptHunks(vec![0]));
        assert_eq!(whole.len(), 1);
        assert_eq!((whole[0].hunk, whole[0].whole), (1, true));
        assert_eq!(whole[0].lines, ["-line 20", "+twenty"]);
        let at = p.files[0].diff.hunks[0]
            .lines
            .iter()
            .position(|l| l.text == "line 4")
            .unwrap();
        let part = p.left_out(&Decision::AcceptLines {
            hunks: None,
            skip: vec![(0, at)],
        });
        assert_eq!(part.len(), 1);
        assert_eq!((part[0].hunk, part[0].whole), (0, false));
        assert_eq!(part[0].lines, ["-line 4"]);
        // A deletion taken in part is not written at all: all of it is left out.
        let gone = root.resolve("gone.txt").unwrap();
        std::fs::write(&gone.abs, "a\nb\n").unwrap();
        let mut del = FileChange::new(
            gone,
            Some(b"a\nb\n".to_vec()),
            Text::decode(b"a\nb\n").unwrap(),
            String::new(),
            vec![],
        );
        del.delete = true;
        let p = Proposal::new("test", None, vec![del]).unwrap();
        let out = p.left_out(&Decision::AcceptLines {
            hunks: None,
            skip: vec![(0, 0)],
        });
        assert_eq!(out[0].lines, ["-a", "-b"]);
        assert!(out[0].whole);
    }

    #[test]
    fn a_changed_file_is_file_changed_and_nothing_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path()).unwrap();
        let a = change(&root, "a.txt", "a\n", "A\n");
        let b = change(&root, "b.txt", "b\n", "B\n");
        let p = Proposal::new("test", None, vec![a, b]).unwrap();
        std::fs::write(dir.path().join("b.txt"), "b changed\n").unwrap();
        let (contents, _) = p.decided_contents(&Decision::Accept).unwrap();
        let e = p.write(&contents, 1 << 20).unwrap_err();
        assert_eq!(e.code, ErrorCode::FileChanged);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
            "a\n"
        );
    }

    #[test]
    fn a_line_ending_only_change_is_file_changed() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path()).unwrap();
        let p = Proposal::new(
            "test",
            None,
            vec![change(&root, "a.txt", "a\nb\n", "a\nB\n")],
        )
        .unwrap();
        std::fs::write(dir.path().join("a.txt"), "a\r\nb\r\n").unwrap();
        assert_eq!(
            p.verify_unchanged(1 << 20).unwrap_err().code,
            ErrorCode::FileChanged
        );
    }

    #[test]
    fn a_stale_proposal_is_rebased_when_it_merges_cleanly() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path()).unwrap();
        let old = numbers(&[]);
        let p = Proposal::new(
            "test",
            None,
            vec![change(&root, "n.txt", &old, &numbers(&[(30, "thirty")]))],
        )
        .unwrap();
        std::fs::write(dir.path().join("n.txt"), numbers(&[(1, "one")])).unwrap();
        let rebased = p.rebased(1 << 20).unwrap();
        assert_eq!(rebased.files[0].new, numbers(&[(1, "one"), (30, "thirty")]));
        assert_eq!(rebased.state, State::Pending);
        // A conflicting change cannot be rebased.
        std::fs::write(dir.path().join("n.txt"), numbers(&[(30, "other")])).unwrap();
        assert!(p.rebased(1 << 20).is_none());
    }

    #[test]
    fn edited_content_is_accepted_for_one_file() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path()).unwrap();
        let p = Proposal::new("test", None, vec![change(&root, "a.txt", "a\n", "b\n")]).unwrap();
        let (contents, review) = p
            .decided_contents(&Decision::AcceptEdited("c\r\n".into()))
            .unwrap();
        assert_eq!(contents, vec![Some("c\n".to_string())]);
        assert!(review.edited_by_reviewer);
    }
}
