//! Policy (DESIGN §2, §4): what happens to an edit of a path — a person decides (`gate`), it
//! is applied at once (`auto`), it waits for a commit by run_id (`dry-run`), or a path rule in
//! `.patchgate.toml` refuses it (`DENIED_BY_RULE`). `.git/` never gets this far (paths).

use globset::{Glob, GlobMatcher};

use crate::error::{Error, ErrorCode, Result};
use crate::workspace::config::{Config, PolicyName, RuleAction};

/// What to do with an edit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Wait for a person.
    Gate,
    /// Write at once.
    Auto,
    /// Compute, keep for a commit by run_id, write nothing.
    DryRun,
}

/// The policy and the path rules.
#[derive(Debug, Clone)]
pub struct Policy {
    /// The default for paths no rule names.
    pub default: PolicyName,
    rules: Vec<(String, GlobMatcher, RuleAction)>,
}

impl Policy {
    /// The policy from the configuration, with `override_name` (the command line) winning.
    pub fn from_config(
        config: &Config,
        override_name: Option<PolicyName>,
        fallback: PolicyName,
    ) -> Result<Policy> {
        let mut rules = Vec::with_capacity(config.rules.len());
        for rule in &config.rules {
            let glob = Glob::new(&rule.glob).map_err(|e| {
                Error::invalid_input(format!(
                    "rule glob `{}` in .patchgate.toml is invalid: {e}",
                    rule.glob
                ))
            })?;
            rules.push((rule.glob.clone(), glob.compile_matcher(), rule.action));
        }
        Ok(Policy {
            default: override_name.or(config.policy).unwrap_or(fallback),
            rules,
        })
    }

    /// A policy without rules.
    pub fn simple(default: PolicyName) -> Policy {
        Policy {
            default,
            rules: Vec::new(),
        }
    }

    /// The action for a root-relative path. A `dry-run` policy keeps every edit a dry-run
    /// whatever the rules say, except that `deny` still refuses.
    pub fn action(&self, rel: &str) -> Result<Action> {
        let rule = self.rules.iter().find(|(_, m, _)| m.is_match(rel));
        if let Some((glob, _, RuleAction::Deny)) = rule {
            return Err(Error::new(
                ErrorCode::DeniedByRule,
                format!(
                    "`{rel}` may not be edited: the rule `{glob}` in .patchgate.toml denies it"
                ),
            ));
        }
        if self.default == PolicyName::DryRun {
            return Ok(Action::DryRun);
        }
        Ok(match rule.map(|r| r.2) {
            Some(RuleAction::Auto) => Action::Auto,
            Some(RuleAction::Gate) => Action::Gate,
            _ => match self.default {
                PolicyName::Gate => Action::Gate,
                PolicyName::Auto => Action::Auto,
                PolicyName::DryRun => Action::DryRun,
            },
        })
    }

    /// The action for several paths: any deny refuses, any gate gates, all auto is auto.
    pub fn action_for_all<'a>(&self, rels: impl IntoIterator<Item = &'a str>) -> Result<Action> {
        let mut result = Action::Auto;
        for rel in rels {
            match self.action(rel)? {
                Action::DryRun => return Ok(Action::DryRun),
                Action::Gate => result = Action::Gate,
                Action::Auto => {}
            }
        }
        Ok(result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(default: PolicyName) -> Policy {
        let config = Config::parse(
            "[[rules]]\nglob = \"docs/**\"\naction = \"auto\"\n[[rules]]\nglob = \"**/.env*\"\naction = \"deny\"\n[[rules]]\nglob = \"src/secret.rs\"\naction = \"gate\"\n",
        )
        .unwrap();
        Policy::from_config(&config, None, default).unwrap()
    }

    #[test]
    fn rules_pick_the_action_by_glob() {
        let p = policy(PolicyName::Gate);
        assert_eq!(p.action("docs/a/b.md").unwrap(), Action::Auto);
        assert_eq!(p.action("src/main.rs").unwrap(), Action::Gate);
        assert_eq!(
            p.action("app/.env.local").unwrap_err().code,
            ErrorCode::DeniedByRule
        );
        let auto = policy(PolicyName::Auto);
        assert_eq!(auto.action("src/secret.rs").unwrap(), Action::Gate);
        assert_eq!(auto.action("src/main.rs").unwrap(), Action::Auto);
    }

    #[test]
    fn dry_run_policy_keeps_everything_a_dry_run_but_deny_still_refuses() {
        let p = policy(PolicyName::DryRun);
        assert_eq!(p.action("docs/x.md").unwrap(), Action::DryRun);
        assert!(p.action(".env").is_err());
    }

    #[test]
    fn several_paths_take_the_strictest_action() {
        let p = policy(PolicyName::Auto);
        assert_eq!(
            p.action_for_all(["docs/a.md", "src/x.rs"]).unwrap(),
            Action::Auto
        );
        assert_eq!(
            p.action_for_all(["docs/a.md", "src/secret.rs"]).unwrap(),
            Action::Gate
        );
        assert!(p.action_for_all(["docs/a.md", ".env"]).is_err());
    }

    #[test]
    fn a_bad_glob_is_invalid_input() {
        let config = Config::parse("[[rules]]\nglob = \"a[\"\naction = \"auto\"\n").unwrap();
        assert!(Policy::from_config(&config, None, PolicyName::Gate).is_err());
    }
}
