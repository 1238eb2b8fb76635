//! Policy (docs/DESIGN.md §2, §4, §7): what happens to an edit of a path — a person decides (`gate`),
//! it is applied at once (`auto`), it waits for a commit by run_id (`dry-run`), or a path rule
//! refuses it (`DENIED_BY_RULE`). The command line and the user's own configuration are
//! trusted; a repository's `.patchgate.toml` can only tighten what they say. Edits of
//! `.patchgate.toml` and `.env*` files always wait for a person. `.git/` never gets this far
//! (paths).

use globset::{Glob, GlobMatcher};

use crate::error::{Error, ErrorCode, Result};
use crate::workspace::config::{Config, PolicyName, RuleAction, RuleConfig};
use crate::workspace::userconfig::UserConfig;

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

/// A compiled path rule.
#[derive(Debug, Clone)]
struct Rule {
    glob: String,
    matcher: GlobMatcher,
    action: RuleAction,
    /// Where it was written, for messages.
    source: &'static str,
}

/// The policy and the path rules.
#[derive(Debug, Clone)]
pub struct Policy {
    /// The default for paths no rule names.
    pub default: PolicyName,
    /// Rules that may loosen (the user's own), first match wins.
    trusted: Vec<Rule>,
    /// Rules that may only tighten (the repository's), first match wins.
    repo: Vec<Rule>,
}

/// How strict a policy is: a repository may move it up, never down. A dry-run is looser than
/// a gate, since the agent itself may commit it.
fn strictness(p: PolicyName) -> u8 {
    match p {
        PolicyName::Auto => 0,
        PolicyName::DryRun => 1,
        PolicyName::Gate => 2,
    }
}

fn compile(rules: &[RuleConfig], source: &'static str) -> Result<Vec<Rule>> {
    rules
        .iter()
        .map(|rule| {
            let glob = Glob::new(&rule.glob).map_err(|e| {
                Error::invalid_input(format!(
                    "rule glob `{}` in {source} is invalid: {e}",
                    rule.glob
                ))
            })?;
            Ok(Rule {
                glob: rule.glob.clone(),
                matcher: glob.compile_matcher(),
                action: rule.action,
                source,
            })
        })
        .collect()
}

/// Whether an edit of `rel` always waits for a person: the gate's own configuration and
/// environment files, which an agent could use to loosen the gate or leak secrets.
pub(crate) fn is_protected(rel: &str) -> bool {
    crate::workspace::secrets::is_gate_or_env_file(rel)
}

impl Policy {
    /// The policy from one trusted configuration, with `override_name` (the command line)
    /// winning.
    pub fn from_config(
        config: &Config,
        override_name: Option<PolicyName>,
        fallback: PolicyName,
    ) -> Result<Policy> {
        Ok(Policy {
            default: override_name.or(config.policy).unwrap_or(fallback),
            trusted: compile(&config.rules, ".patchgate.toml")?,
            repo: Vec::new(),
        })
    }

    /// The policy a gate runs: the command line's (`cli`), else the user's, else the
    /// command's default; the user's rules may loosen it; the repository's policy and rules
    /// (`repo`) only count where they are stricter (an `auto` there is ignored, logged).
    pub fn layered(
        user: &UserConfig,
        repo: &Config,
        cli: Option<PolicyName>,
        command_default: PolicyName,
    ) -> Result<Policy> {
        let base = cli.or(user.policy).unwrap_or(command_default);
        let default = match repo.policy {
            Some(p) if strictness(p) > strictness(base) => p,
            Some(p) if p != base => {
                tracing::warn!(
                    ".patchgate.toml asks for policy {} but cannot loosen {}: ignored",
                    p.as_str(),
                    base.as_str()
                );
                base
            }
            _ => base,
        };
        let repo_rules: Vec<RuleConfig> = repo
            .rules
            .iter()
            .filter(|r| {
                let loosens = r.action == RuleAction::Auto;
                if loosens {
                    tracing::warn!(
                        ".patchgate.toml rule `{}` = auto cannot loosen the gate: ignored (put it \
                         in your own config to use it)",
                        r.glob
                    );
                }
                !loosens
            })
            .cloned()
            .collect();
        Ok(Policy {
            default,
            trusted: compile(&user.rules, "your patchgate config")?,
            repo: compile(&repo_rules, ".patchgate.toml")?,
        })
    }

    /// A policy without rules.
    pub fn simple(default: PolicyName) -> Policy {
        Policy {
            default,
            trusted: Vec::new(),
            repo: Vec::new(),
        }
    }

    /// The action for a root-relative path: the trusted rules' (or the default), tightened
    /// by the repository's rules; a `deny` anywhere refuses. A `dry-run` policy keeps every
    /// edit a dry-run whatever the rules say; protected files always wait for a person.
    pub fn action(&self, rel: &str) -> Result<Action> {
        let trusted = self.trusted.iter().find(|r| r.matcher.is_match(rel));
        let repo = self.repo.iter().find(|r| r.matcher.is_match(rel));
        for r in [trusted, repo].into_iter().flatten() {
            if r.action == RuleAction::Deny {
                return Err(Error::new(
                    ErrorCode::DeniedByRule,
                    format!(
                        "`{rel}` may not be edited: the rule `{}` in {} denies it",
                        r.glob, r.source
                    ),
                ));
            }
        }
        if is_protected(rel) {
            return Ok(Action::Gate);
        }
        if self.default == PolicyName::DryRun {
            return Ok(Action::DryRun);
        }
        let mut action = match trusted.map(|r| r.action) {
            Some(RuleAction::Auto) => Action::Auto,
            Some(RuleAction::Gate) => Action::Gate,
            _ => match self.default {
                PolicyName::Gate => Action::Gate,
                PolicyName::Auto => Action::Auto,
                PolicyName::DryRun => Action::DryRun,
            },
        };
        if repo.is_some_and(|r| r.action == RuleAction::Gate) {
            action = Action::Gate;
        }
        Ok(action)
    }

    /// Whether an edit of `rel` waits for a person whatever the trusted side says (the user's
    /// rules, the policy hook): a protected file, or one a repository's `gate` rule names.
    pub fn held_for_a_person(&self, rel: &str) -> bool {
        is_protected(rel)
            || self
                .repo
                .iter()
                .find(|r| r.matcher.is_match(rel))
                .is_some_and(|r| r.action == RuleAction::Gate)
    }

    /// Whether a read-only tool (the code search) may show a root-relative path: every path
    /// no `deny` rule names.
    pub fn may_read(&self, rel: &str) -> bool {
        self.action(rel).is_ok()
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
        let denied = p.action(".env").unwrap_err();
        assert_eq!(denied.code, ErrorCode::DeniedByRule, "{denied:?}");
        assert!(denied.message.contains("`**/.env*`"), "{denied:?}");
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
        let denied = p.action_for_all(["docs/a.md", ".env"]).unwrap_err();
        assert_eq!(denied.code, ErrorCode::DeniedByRule, "{denied:?}");
        assert!(denied.message.contains("`.env`"), "{denied:?}");
    }

    #[test]
    fn a_bad_glob_is_invalid_input() {
        let config = Config::parse("[[rules]]\nglob = \"a[\"\naction = \"auto\"\n").unwrap();
        let bad = Policy::from_config(&config, None, PolicyName::Gate).unwrap_err();
        assert_eq!(bad.code, ErrorCode::InvalidInput, "{bad:?}");
        assert!(bad.message.contains("`a[`"), "{bad:?}");
    }

    #[test]
    fn a_repository_only_tightens_and_protected_files_wait_for_a_person() {
        let repo = Config::parse(
            "policy = \"auto\"\n[[rules]]\nglob = \"**\"\naction = \"auto\"\n[[rules]]\nglob = \"src/secret.rs\"\naction = \"gate\"\n",
        )
        .unwrap();
        let user = UserConfig::default();
        // `--policy gate`: neither the repository's policy nor its auto rule loosens it.
        let p = Policy::layered(&user, &repo, Some(PolicyName::Gate), PolicyName::Gate).unwrap();
        assert_eq!(p.default, PolicyName::Gate);
        assert_eq!(p.action("src/main.rs").unwrap(), Action::Gate);
        // Nor the command's own default, nor a dry-run one.
        let p = Policy::layered(&user, &repo, None, PolicyName::DryRun).unwrap();
        assert_eq!(p.action("src/main.rs").unwrap(), Action::DryRun);
        // It does tighten: under `--policy auto` its gate rule holds.
        let p = Policy::layered(&user, &repo, Some(PolicyName::Auto), PolicyName::Gate).unwrap();
        assert_eq!(p.action("src/main.rs").unwrap(), Action::Auto);
        assert_eq!(p.action("src/secret.rs").unwrap(), Action::Gate);
        // A stricter policy of the repository's own holds over a looser command line.
        let strict = Config::parse("policy = \"gate\"\n").unwrap();
        let p = Policy::layered(&user, &strict, Some(PolicyName::Auto), PolicyName::Auto).unwrap();
        assert_eq!(p.default, PolicyName::Gate);
        assert_eq!(p.action("src/main.rs").unwrap(), Action::Gate);
        let strict = Config::parse("policy = \"dry-run\"\n").unwrap();
        let p = Policy::layered(&user, &strict, Some(PolicyName::Auto), PolicyName::Auto).unwrap();
        assert_eq!(p.action("src/main.rs").unwrap(), Action::DryRun);
        // The user's own rules may loosen.
        let user = UserConfig::parse("[[rules]]\nglob = \"docs/**\"\naction = \"auto\"\n").unwrap();
        let p = Policy::layered(&user, &Config::default(), None, PolicyName::Gate).unwrap();
        assert_eq!(p.action("docs/a.md").unwrap(), Action::Auto);
        // Whatever any rule says, the gate's config and env files wait for a person.
        let user = UserConfig::parse("[[rules]]\nglob = \"**\"\naction = \"auto\"\n").unwrap();
        for policy in [PolicyName::Auto, PolicyName::DryRun] {
            let p = Policy::layered(&user, &Config::default(), Some(policy), policy).unwrap();
            for rel in [
                ".patchgate.toml",
                "sub/.patchgate.toml",
                ".env",
                "app/.env.local",
            ] {
                assert_eq!(p.action(rel).unwrap(), Action::Gate, "{rel}");
            }
        }
    }
}
