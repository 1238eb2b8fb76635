//! Rules a reviewer adds while the gate runs (docs/DESIGN.md §4): `POST /api/rules` and the
//! TUI's `R` both come here. The glob is checked, a `user` rule is written into the user's
//! config file first (nothing is added when that fails), the rule joins the policy before
//! every other trusted rule, and the pending reviews it names are decided again under it.

use serde::{Deserialize, Serialize};

use super::policy::{Policy, RuleInfo, RuleScope, check_glob};
use super::queue::{Gate, Outcome};
use crate::error::{Error, ErrorCode, Result};
use crate::workspace::config::{RuleAction, RuleConfig};

/// A rule to add.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewRule {
    /// A glob over root-relative paths (`**` crosses directories).
    pub glob: String,
    /// What it does to the paths it names.
    pub action: RuleAction,
    /// Where it is kept.
    pub scope: RuleScope,
}

/// A pending review the new rule decided.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DecidedByRule {
    /// The review.
    pub run_id: String,
    /// `applied`, `rejected`, or why it could not be decided (`error`, with `message`).
    pub state: String,
    /// What stood in the way, when it could not be decided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// What adding a rule did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleAdded {
    /// The rule as listed.
    pub rule: RuleInfo,
    /// The user's config file it was written to (a `user` rule).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<std::path::PathBuf>,
    /// The pending reviews it decided.
    pub decided: Vec<DecidedByRule>,
}

/// Every rule, as `GET /api/rules` and the TUI's `:rules` give them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RulesList {
    /// The default policy.
    pub policy: String,
    /// The user's config file (where a `user` rule goes), when there is a place for one.
    pub config: Option<std::path::PathBuf>,
    /// The rules in the order they are consulted ([`Policy::rules`]).
    pub rules: Vec<RuleInfo>,
}

impl RulesList {
    /// One line a rule, `SOURCE ACTION GLOB`, under the policy and the config's place.
    pub fn text(&self) -> String {
        let mut out = format!("policy: {}", self.policy);
        if let Some(file) = &self.config {
            out.push_str(&format!(" · your config: {}", file.display()));
        }
        out.push_str(
            "\nfirst match wins; a deny anywhere refuses; the repository only tightens\n\n",
        );
        for r in &self.rules {
            out.push_str(&format!(
                "{:<11}{:<6}{}",
                r.source.as_str(),
                r.action.as_str(),
                r.glob
            ));
            if let Some(why) = &r.ignored {
                out.push_str(&format!("   (ignored: {why})"));
            }
            out.push('\n');
        }
        out
    }
}

impl Gate {
    /// Every rule with where it comes from, the policy, and the user's config file.
    pub fn rules_list(&self) -> RulesList {
        let policy = self.policy();
        RulesList {
            policy: policy.default.as_str().to_string(),
            config: crate::workspace::userconfig::path(),
            rules: policy.rules(),
        }
    }

    /// Add `rule` (docs/DESIGN.md §4): checked, room for it made sure of; a `user` rule written to the user's config
    /// first; then part of this gate's policy, and every pending review it names decided
    /// again ([`Gate::decide_by_rules`]).
    pub fn add_rule(&self, rule: &NewRule) -> Result<RuleAdded> {
        check_glob(&rule.glob)?;
        // Refused before the user's config is written, so a refusal adds nothing anywhere.
        if !self.policy().has_room(&rule.glob) {
            return Err(Policy::no_room());
        }
        let config_rule = RuleConfig {
            glob: rule.glob.clone(),
            action: rule.action,
        };
        let config = match rule.scope {
            RuleScope::Session => None,
            RuleScope::User => {
                Some(crate::workspace::userrules::add(&config_rule).map_err(|e| {
                    Error::new(
                        ErrorCode::FsError,
                        format!(
                            "the rule was not added: {}: {}",
                            e.path.display(),
                            e.message
                        ),
                    )
                })?)
            }
        };
        let source = rule.scope.source();
        self.policy().add(&config_rule, source)?;
        tracing::info!("rule added ({source:?}): `{}` {:?}", rule.glob, rule.action);
        let covers = Policy::matcher(&rule.glob);
        let decided = self
            .pending()
            .into_iter()
            .filter_map(|run_id| {
                let outcome = self.decide_by_rules(&run_id, &covers)?;
                Some(decided(run_id, outcome))
            })
            .collect();
        Ok(RuleAdded {
            rule: RuleInfo {
                glob: rule.glob.clone(),
                action: rule.action,
                source,
                ignored: None,
            },
            config,
            decided,
        })
    }
}

/// How a pending review the rule decided ended.
fn decided(run_id: String, outcome: Result<Outcome>) -> DecidedByRule {
    let (state, message) = match outcome {
        Ok(Outcome::Applied(_)) => ("applied", None),
        Ok(Outcome::Rejected(_)) => ("rejected", None),
        Ok(Outcome::Pending(_) | Outcome::DryRun(_)) => ("pending", None),
        Ok(Outcome::Failed(_, e)) | Err(e) => ("error", Some(format!("{}: {}", e.code, e.message))),
    };
    DecidedByRule {
        run_id,
        state: state.to_string(),
        message,
    }
}
