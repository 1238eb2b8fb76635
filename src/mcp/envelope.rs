//! The one answer every tool gives (docs/DESIGN.md §3): `{status, code?, message, path | paths,
//! run_id?, expires_in?, dry_run, diff?, review?, warnings?}`, built from the gate's
//! [`Outcome`] or an [`Error`]. The message always says what happened and what to send next.

use serde::{Deserialize, Serialize};

use crate::error::{Error, ErrorCode};
use crate::review::account::{self, LeftOut};
use crate::review::proposal::{Review, Verdict};
use crate::review::queue::{Outcome, Summary};

/// Where a call stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Written, or a dry-run computed.
    Ok,
    /// Waiting for a person.
    Pending,
    /// A person said no.
    Rejected,
    /// Nothing was written; `code` says why.
    Error,
}

/// The review record as the agent sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReviewInfo {
    /// `accept` or `reject`.
    pub decision: Verdict,
    /// The reviewer's note.
    pub note: String,
    /// The reviewer changed the content before accepting.
    pub edited_by_reviewer: bool,
    /// Hunks accepted.
    pub hunks_accepted: usize,
    /// Hunks proposed.
    pub hunks_total: usize,
}

impl From<&Review> for ReviewInfo {
    fn from(r: &Review) -> ReviewInfo {
        ReviewInfo {
            decision: r.decision,
            note: r.note.clone(),
            edited_by_reviewer: r.edited_by_reviewer,
            hunks_accepted: r.hunks_accepted,
            hunks_total: r.hunks_total,
        }
    }
}

/// A tool result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Envelope {
    /// Where the call stands.
    pub status: Status,
    /// The error code (status `error`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<ErrorCode>,
    /// What happened and what to do next.
    pub message: String,
    /// The file (single-file calls).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The files (batches).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paths: Option<Vec<String>>,
    /// The run id (dry-runs, pending reviews, decided runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// Seconds a dry-run stays committable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_in: Option<u64>,
    /// Whether nothing was meant to be written.
    pub dry_run: bool,
    /// The unified diff of what was (or would be) written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    /// A person's decision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review: Option<ReviewInfo>,
    /// What the engines tolerated (re-indented, matched ignoring whitespace, …).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// What the reviewer left out of an accepted edit, hunks and lines with their text
    /// (docs/DESIGN.md §4); `diff` is then what was written.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<LeftOut>,
    /// News of this client's earlier runs since its last call: `run X was undone by the
    /// reviewer: re-read FILE` (docs/DESIGN.md §3); the message says it too.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notices: Vec<String>,
}

/// `path` for one file, `paths` for several.
fn place(paths: Vec<String>) -> (Option<String>, Option<Vec<String>>) {
    match paths.len() {
        0 => (None, None),
        1 => (paths.into_iter().next(), None),
        _ => (None, Some(paths)),
    }
}

fn counts(s: &Summary) -> String {
    format!(
        "+{} -{}, {} hunk{}",
        s.added,
        s.removed,
        s.hunks,
        if s.hunks == 1 { "" } else { "s" }
    )
}

/// What the agent hears of an undone run: `run X was undone by the reviewer: re-read FILE`.
pub fn undone_notice(run_id: &str, paths: &[String]) -> String {
    format!(
        "run {run_id} was undone by the reviewer: re-read {} before the next edit",
        paths.join(", ")
    )
}

fn names(s: &Summary) -> String {
    s.paths.join(", ")
}

impl Envelope {
    fn from_summary(status: Status, s: &Summary, message: String, dry_run: bool) -> Envelope {
        let (path, paths) = place(s.paths.clone());
        Envelope {
            status,
            code: None,
            message,
            path,
            paths,
            run_id: Some(s.run_id.clone()),
            expires_in: None,
            dry_run,
            diff: (!s.diff.is_empty()).then(|| s.diff.clone()),
            review: s.review.as_ref().map(ReviewInfo::from),
            warnings: s.warnings.clone(),
            left_out: s.left_out.clone(),
            notices: Vec::new(),
        }
    }

    /// Add `notices` (news of earlier runs) to the result and its message, each once.
    pub(crate) fn add_notices(&mut self, notices: Vec<String>) {
        for n in notices {
            if !self.message.contains(&n) {
                self.message.push_str(&format!(" Also: {n}."));
            }
            if !self.notices.contains(&n) {
                self.notices.push(n);
            }
        }
    }

    /// The envelope of an outcome; `call_paths` and `dry_run` come from the call (for
    /// failures that happened before a proposal existed).
    pub(crate) fn from_outcome(
        outcome: &Outcome,
        call_paths: &[String],
        dry_run: bool,
    ) -> Envelope {
        match outcome {
            Outcome::Applied(s) => {
                let mut message = format!("Applied to {} ({}).", names(s), counts(s));
                if let Some(r) = &s.review {
                    if let Some(m) = account::message(r.edited_by_reviewer, &s.left_out) {
                        message.push(' ');
                        message.push_str(&m);
                    }
                    if !r.note.is_empty() {
                        message.push_str(&format!(" Reviewer's note: {}", r.note));
                    }
                }
                if s.undone {
                    message.push_str(&format!(" Then {}.", undone_notice(&s.run_id, &s.paths)));
                }
                Envelope::from_summary(Status::Ok, s, message, false)
            }
            Outcome::DryRun(s) => {
                let left = s.expires_in.unwrap_or(0);
                let message = format!(
                    "Dry run of {} ({}): nothing was written. To write it unchanged, call apply_last_dry_run with run_id \"{}\" within {left} s.",
                    names(s),
                    counts(s),
                    s.run_id
                );
                let mut e = Envelope::from_summary(Status::Ok, s, message, true);
                e.expires_in = Some(left);
                e
            }
            Outcome::Pending(s) => {
                let message = format!(
                    "Waiting for a person to review the edit of {} ({}); nothing is written yet. Call await_review with run_id \"{}\" to keep waiting for the decision; do not send the edit again.",
                    names(s),
                    counts(s),
                    s.run_id
                );
                Envelope::from_summary(Status::Pending, s, message, dry_run)
            }
            Outcome::Rejected(s) => {
                let note = s
                    .review
                    .as_ref()
                    .map(|r| r.note.trim())
                    .filter(|n| !n.is_empty());
                let message = match note {
                    Some(n) => format!(
                        "The reviewer rejected the edit of {}; nothing was written. Reason: {n}",
                        names(s)
                    ),
                    None => format!(
                        "The reviewer rejected the edit of {}; nothing was written (no reason given). Ask before trying a different change.",
                        names(s)
                    ),
                };
                Envelope::from_summary(Status::Rejected, s, message, dry_run)
            }
            Outcome::Failed(s, e) => {
                let mut env = Envelope::error(e, call_paths, dry_run);
                if let Some(s) = s {
                    let (path, paths) = place(s.paths.clone());
                    env.path = path;
                    env.paths = paths;
                    env.run_id = Some(s.run_id.clone());
                }
                env
            }
        }
    }

    /// The envelope of an error: nothing was written.
    pub fn error(e: &Error, call_paths: &[String], dry_run: bool) -> Envelope {
        let (path, paths) = place(call_paths.to_vec());
        Envelope {
            status: Status::Error,
            code: Some(e.code),
            message: e.message.clone(),
            path,
            paths,
            run_id: None,
            expires_in: None,
            dry_run,
            diff: None,
            review: None,
            warnings: Vec::new(),
            left_out: Vec::new(),
            notices: Vec::new(),
        }
    }

    /// Whether this is an error result (`isError: true`).
    pub fn is_error(&self) -> bool {
        self.status == Status::Error
    }

    /// As JSON.
    pub(crate) fn to_value(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_else(|_| serde_json::json!({"status": "error"}))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;
    use crate::review::proposal::State;

    fn summary(paths: &[&str]) -> Summary {
        Summary {
            run_id: "abc".into(),
            tool: "patch_file".into(),
            client: None,
            paths: paths.iter().map(std::string::ToString::to_string).collect(),
            state: State::DryRun,
            added: 1,
            removed: 1,
            hunks: 1,
            created: 0,
            expires_in: Some(299),
            diff: "--- a/x\n+++ b/x\n".into(),
            warnings: vec![],
            syntax: vec![],
            unseen_deletions: 0,
            unseen_hunks: vec![],
            review: None,
            left_out: vec![],
            undone: false,
            failure: None,
            revision_of: None,
            revision: None,
            previous_note: None,
            interdiff: None,
            agent: None,
        }
    }

    #[test]
    fn dry_run_envelope_names_the_run_and_its_lifetime() {
        let e = Envelope::from_outcome(&Outcome::DryRun(summary(&["x"])), &[], true);
        let v = e.to_value();
        assert_eq!(v["status"], "ok");
        assert_eq!(v["dry_run"], true);
        assert_eq!(v["run_id"], "abc");
        assert_eq!(v["expires_in"], 299);
        assert_eq!(v["path"], "x");
        assert!(v.get("paths").is_none());
        assert!(e.message.contains("apply_last_dry_run"));
        assert!(!e.is_error());
    }

    #[test]
    fn batches_use_paths_and_errors_carry_the_code() {
        let e = Envelope::from_outcome(&Outcome::Pending(summary(&["a", "b"])), &[], false);
        assert_eq!(e.paths, Some(vec!["a".to_string(), "b".to_string()]));
        assert_eq!(e.status, Status::Pending);
        let err = Error::new(ErrorCode::NoMatch, "nothing like it");
        let e = Envelope::error(&err, &["src/x.rs".to_string()], false);
        let v = e.to_value();
        assert_eq!(v["status"], "error");
        assert_eq!(v["code"], "NO_MATCH");
        assert_eq!(v["path"], "src/x.rs");
        assert!(e.is_error());
    }

    #[test]
    fn rejection_carries_the_reason() {
        let mut s = summary(&["x"]);
        s.review = Some(Review {
            decision: Verdict::Reject,
            note: "use the helper".into(),
            edited_by_reviewer: false,
            hunks_accepted: 0,
            hunks_total: 1,
        });
        let e = Envelope::from_outcome(&Outcome::Rejected(s), &[], false);
        assert_eq!(e.status, Status::Rejected);
        assert!(e.message.contains("use the helper"));
        assert_eq!(e.review.unwrap().note, "use the helper");
    }
}
