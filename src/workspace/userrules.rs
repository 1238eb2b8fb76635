//! Adding a path rule to the user's own config file (`[[rules]]`, docs/DESIGN.md §2, §4):
//! the rule a reviewer asks to remember for every project (`POST /api/rules` with
//! `scope: "user"`, the TUI's `R`). The file is edited through `toml_edit`, so every other
//! key and every comment stay as they were; the new rule goes first (first match wins, so it
//! decides the paths it names), replacing an older one of the same glob; the result must
//! read back as a valid user config before it is written, crash-safely
//! ([`super::fs::write_user_file`]), under a lock shared by every patchgate process.

use std::path::{Path, PathBuf};

use super::config::{ConfigError, RuleConfig};
use super::userconfig::{self, UserConfig};

/// Add `rule` to the user's config file (`$PATCHGATE_CONFIG`, else the usual place; made
/// when it is not there yet): the file written.
pub fn add(rule: &RuleConfig) -> Result<PathBuf, ConfigError> {
    let Some(path) = userconfig::path() else {
        return Err(ConfigError {
            path: PathBuf::from("~/.config/patchgate/config.toml"),
            message: "there is no user config to write: set PATCHGATE_CONFIG, XDG_CONFIG_HOME \
                      or HOME"
                .into(),
        });
    };
    add_to(&path, rule)?;
    Ok(path)
}

/// [`add`] to the file at `path` (a symlink is followed: a dotfiles repository's file is
/// changed where it lives).
pub fn add_to(path: &Path, rule: &RuleConfig) -> Result<(), ConfigError> {
    let file = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let fail = |message: String| ConfigError {
        path: path.to_path_buf(),
        message,
    };
    // One writer at a time, in this process and across processes: two rules added at once
    // both end up in the file.
    let lock = super::fs::lock_for(&file);
    let _guard = lock
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let _process_lock = super::fs::ProcessLock::acquire(&file);
    let old = match super::config::read_bounded(&file) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(fail(format!("cannot read it: {e}"))),
    };
    let new = with_rule(old.as_deref(), rule).map_err(fail)?;
    super::fs::write_user_file(&file, new.as_bytes())
        .map_err(|e| fail(format!("cannot write it: {e}")))
}

/// The config text `old` (none: no file yet) with `rule` first among its `[[rules]]`, every
/// other key and comment kept; an older rule of the same glob goes. Refused when `old` is not
/// a valid user config (nothing of the user's is overwritten then) or `rules` is no list of
/// tables.
pub fn with_rule(old: Option<&str>, rule: &RuleConfig) -> Result<String, String> {
    let text = old.unwrap_or_default();
    UserConfig::parse(text)
        .map_err(|e| format!("it is not a valid patchgate config, so it is left as it is: {e}"))?;
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e| format!("it is not TOML, so it is left as it is: {e}"))?;
    let mut table = toml_edit::Table::new();
    table.insert("glob", toml_edit::value(rule.glob.as_str()));
    table.insert("action", toml_edit::value(rule.action.as_str()));
    match doc.get_mut("rules") {
        None => {
            // Comments after the last key stay above the rule, not below it.
            let trailing = doc.trailing().as_str().unwrap_or_default().to_string();
            if !trailing.trim().is_empty() {
                table.decor_mut().set_prefix(format!("{trailing}\n"));
                doc.set_trailing("");
            }
            let mut rules = toml_edit::ArrayOfTables::new();
            rules.push(table);
            doc.insert("rules", toml_edit::Item::ArrayOfTables(rules));
        }
        Some(toml_edit::Item::ArrayOfTables(rules)) => {
            rules.retain(|t| t.get("glob").and_then(|g| g.as_str()) != Some(rule.glob.as_str()));
            // Printed where the first rule was (tables print in the order of their places).
            table.set_position(rules.get(0).and_then(toml_edit::Table::position));
            if rules.is_empty() {
                rules.push(table);
            } else {
                rules.insert(0, table);
            }
        }
        Some(toml_edit::Item::Value(toml_edit::Value::Array(rules))) => {
            rules.retain(|v| {
                v.as_inline_table()
                    .and_then(|t| t.get("glob"))
                    .and_then(|g| g.as_str())
                    != Some(rule.glob.as_str())
            });
            rules.insert(0, table.into_inline_table());
        }
        Some(_) => return Err("its `rules` is not a list of tables".into()),
    }
    let new = doc.to_string();
    // What is written reads back, with the rule first.
    let back = UserConfig::parse(&new).map_err(|e| format!("the rule would not read back: {e}"))?;
    if back.rules.first() != Some(rule) {
        return Err("the rule would not read back first".into());
    }
    Ok(new)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::config::RuleAction;

    fn rule(glob: &str, action: RuleAction) -> RuleConfig {
        RuleConfig {
            glob: glob.into(),
            action,
        }
    }

    #[test]
    fn a_rule_goes_first_and_every_other_key_and_comment_stays() {
        let old = "# my patchgate settings\npolicy = \"gate\" # ask me\n\n[search]\nmax_turns = 3\n\n# docs are safe\n[[rules]]\nglob = \"docs/**\"\naction = \"auto\"\n\n[fallback]\nendpoint = \"http://x/v1\"\nmodel = \"m\"\n";
        let new = with_rule(Some(old), &rule("src/**", RuleAction::Deny)).unwrap();
        assert!(
            new.starts_with("# my patchgate settings\npolicy = \"gate\" # ask me\n"),
            "{new}"
        );
        assert!(
            new.contains("# docs are safe\n[[rules]]\nglob = \"docs/**\""),
            "{new}"
        );
        let c = UserConfig::parse(&new).unwrap();
        assert_eq!(
            c.rules,
            vec![
                rule("src/**", RuleAction::Deny),
                rule("docs/**", RuleAction::Auto)
            ]
        );
        assert_eq!(c.search.unwrap().max_turns, 3);
        assert_eq!(c.fallback.unwrap().model, "m");
        // The new rule is printed before the old one, after [search].
        let (first, second) = (new.find("src/**").unwrap(), new.find("docs/**").unwrap());
        assert!(
            new.find("max_turns").unwrap() < first && first < second,
            "{new}"
        );
    }

    #[test]
    fn a_rule_of_the_same_glob_is_replaced_and_a_new_file_is_made() {
        let new = with_rule(None, &rule("a.txt", RuleAction::Auto)).unwrap();
        let again = with_rule(Some(&new), &rule("a.txt", RuleAction::Gate)).unwrap();
        assert_eq!(
            UserConfig::parse(&again).unwrap().rules,
            vec![rule("a.txt", RuleAction::Gate)]
        );
        let inline = "rules = [{ glob = \"x\", action = \"deny\" }]\n";
        let c =
            UserConfig::parse(&with_rule(Some(inline), &rule("y/**", RuleAction::Auto)).unwrap())
                .unwrap();
        assert_eq!(
            c.rules,
            vec![rule("y/**", RuleAction::Auto), rule("x", RuleAction::Deny)]
        );
    }

    #[test]
    fn a_file_that_is_no_valid_config_is_left_alone() {
        for bad in ["polcy = \"auto\"\n", "rules = 3\n", "[[rules]\n"] {
            let e = with_rule(Some(bad), &rule("a", RuleAction::Auto)).unwrap_err();
            assert!(e.contains("left as it is"), "{bad}: {e}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn add_to_writes_through_a_symlink_and_keeps_the_mode() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.toml");
        std::fs::write(&real, "# mine\n").unwrap();
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o640)).unwrap();
        let link = dir.path().join("config.toml");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        add_to(&link, &rule("docs/**", RuleAction::Auto)).unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        let text = std::fs::read_to_string(&real).unwrap();
        assert!(
            text.starts_with("# mine\n") && text.contains("docs/**"),
            "{text}"
        );
        let mode = std::fs::metadata(&real).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
        // A new file is the user's only.
        let fresh = dir.path().join("sub/new.toml");
        add_to(&fresh, &rule("a", RuleAction::Deny)).unwrap();
        let mode = std::fs::metadata(&fresh).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
}
