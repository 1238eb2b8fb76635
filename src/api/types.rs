//! The review API's bodies: `GET /api/info` ([`Info`]) and the decision a reviewer posts
//! ([`DecisionBody`]), with the conversion to and from the gate's [`Decision`].

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::review::proposal::{Decision, FileContent};
use crate::review::queue::Summary;

/// `GET /api/info`: what a gate says of itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Info {
    /// `patchgate`.
    pub name: String,
    /// The gate's version.
    pub version: String,
    /// Its root.
    pub root: PathBuf,
    /// Its default policy (`gate`, `dry-run`, `auto`).
    pub policy: String,
    /// How long a tool call waits for a person.
    pub review_timeout_s: u64,
    /// How long a dry-run stays committable.
    pub dry_run_ttl_s: u64,
    /// The MCP endpoint's path.
    pub mcp: String,
    /// Clients heard from recently.
    #[serde(default)]
    pub clients: usize,
    /// Reviews waiting for a person.
    #[serde(default)]
    pub pending: usize,
    /// The globs of the `deny` rules a reviewer added while the gate runs (relative to its
    /// root): a forwarding stdio server's search obeys them too (docs/DESIGN.md §7).
    #[serde(default)]
    pub deny: Vec<String>,
}

/// `GET /api/reviews/{run_id}/files`: both versions of every file of a review.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Files {
    /// The review.
    pub run_id: String,
    /// Its files.
    pub files: Vec<FileContent>,
}

/// The data of a `new`, `updated` or `decided` event on `GET /api/events`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ReviewEvent {
    /// The review.
    pub run_id: String,
    /// Where it stands (`None` once the gate forgot it).
    pub review: Option<Summary>,
}

/// `POST /api/tools/{name}`: a tool call for the gate.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ToolCallBody {
    /// The tool's arguments.
    #[serde(default)]
    pub arguments: Map<String, Value>,
    /// The calling client's name.
    #[serde(default)]
    pub client: Option<String>,
    /// The agent link it comes over (`GET /api/agents/link`): its review is withdrawn when
    /// the link ends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<u64>,
}

/// The first event of `GET /api/agents/link`: the link's number, for the tool calls that come
/// over it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct AgentLinkEvent {
    /// The link's number.
    pub id: u64,
}

/// `POST /api/reviews/{run_id}/wait`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct WaitBody {
    /// How long to wait, in seconds (default: the gate's review timeout).
    #[serde(default)]
    pub timeout_s: Option<f64>,
}

/// `POST /api/undo`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct UndoBody {
    /// The run to undo (default: the latest applied one).
    #[serde(default)]
    pub run_id: Option<String>,
}

/// `POST /api/session`: the session's diff (`{diff, notes}`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SessionBody {
    /// From this run on (it included); every applied run when absent.
    #[serde(default)]
    pub since: Option<String>,
}

/// `POST /api/rewind`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RewindBody {
    /// The first run to take back; every later applied run goes too.
    pub run_id: String,
}

/// `POST /api/reviews/{run_id}/decision`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct DecisionBody {
    /// `accept` or `reject`.
    pub decision: String,
    /// The hunks accepted (indices over all files' hunks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hunks: Option<Vec<usize>>,
    /// Changed lines left out of the accepted hunks: `[hunk, line]` pairs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skip_lines: Option<Vec<(usize, usize)>>,
    /// The content accepted instead (single-file proposals).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// A note for the agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl DecisionBody {
    /// The body that asks for `decision`, with a `note` for an acceptance.
    pub(crate) fn of(decision: &Decision, note: Option<&str>) -> DecisionBody {
        let note = note.map(str::to_string);
        let accept = |b: DecisionBody| DecisionBody {
            decision: "accept".into(),
            note: note.clone(),
            ..b
        };
        match decision {
            Decision::Accept => accept(DecisionBody::default()),
            Decision::AcceptHunks(h) => accept(DecisionBody {
                hunks: Some(h.clone()),
                ..DecisionBody::default()
            }),
            Decision::AcceptLines { hunks, skip } => accept(DecisionBody {
                hunks: hunks.clone(),
                skip_lines: Some(skip.clone()),
                ..DecisionBody::default()
            }),
            Decision::AcceptEdited(c) => accept(DecisionBody {
                content: Some(c.clone()),
                ..DecisionBody::default()
            }),
            Decision::Reject(n) => DecisionBody {
                decision: "reject".into(),
                note: Some(n.clone()),
                ..DecisionBody::default()
            },
        }
    }

    /// The decision the body asks for, and the note of an acceptance.
    pub(crate) fn into_decision(self) -> Result<(Decision, Option<String>)> {
        match self.decision.as_str() {
            "accept" => {
                let parts = self.hunks.is_some() || self.skip_lines.is_some();
                let d = match (self.content, self.skip_lines) {
                    (Some(_), _) if parts => {
                        return Err(Error::invalid_input(
                            "give `hunks`/`skip_lines` or `content`, not both",
                        ));
                    }
                    (Some(c), _) => Decision::AcceptEdited(c),
                    (None, Some(skip)) => Decision::AcceptLines {
                        hunks: self.hunks,
                        skip,
                    },
                    (None, None) => match self.hunks {
                        Some(h) => Decision::AcceptHunks(h),
                        None => Decision::Accept,
                    },
                };
                Ok((d, self.note))
            }
            "reject" => {
                if self.hunks.is_some() || self.skip_lines.is_some() || self.content.is_some() {
                    return Err(Error::invalid_input("a rejection takes only a `note`"));
                }
                Ok((Decision::Reject(self.note.unwrap_or_default()), None))
            }
            other => Err(Error::invalid_input(format!(
                "`decision` must be `accept` or `reject`, not `{other}`"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn body(v: serde_json::Value) -> DecisionBody {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn decision_bodies_read_and_write_the_same_decisions() {
        assert!(matches!(
            body(json!({"decision": "accept"}))
                .into_decision()
                .unwrap()
                .0,
            Decision::Accept
        ));
        assert!(matches!(
            body(json!({"decision": "accept", "hunks": [0, 2]})).into_decision().unwrap().0,
            Decision::AcceptHunks(h) if h == vec![0, 2]
        ));
        assert!(matches!(
            body(json!({"decision": "accept", "skip_lines": [[0, 3]]})).into_decision().unwrap().0,
            Decision::AcceptLines { hunks: None, skip } if skip == vec![(0, 3)]
        ));
        assert!(matches!(
            body(json!({"decision": "reject", "note": "no"})).into_decision().unwrap().0,
            Decision::Reject(n) if n == "no"
        ));
        assert!(body(json!({"decision": "maybe"})).into_decision().is_err());
        assert!(
            body(json!({"decision": "accept", "hunks": [0], "content": "x"}))
                .into_decision()
                .is_err()
        );
        assert!(
            body(json!({"decision": "reject", "skip_lines": []}))
                .into_decision()
                .is_err()
        );
        // Every decision survives the way there and back.
        for d in [
            Decision::Accept,
            Decision::AcceptHunks(vec![1]),
            Decision::AcceptLines {
                hunks: Some(vec![0]),
                skip: vec![(0, 2)],
            },
            Decision::AcceptEdited("x\n".into()),
            Decision::Reject("why".into()),
        ] {
            let wire = serde_json::to_value(DecisionBody::of(&d, None)).unwrap();
            let back = body(wire).into_decision().unwrap().0;
            assert_eq!(back, d);
        }
    }
}
