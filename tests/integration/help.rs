//! What the binary says about itself matches what it does: the help texts (policy defaults,
//! Codex's file, undo, `merge --json`'s object, defaults shown once), the man pages (one per
//! command, each with EXIT STATUS and ENVIRONMENT, a SEE ALSO naming only pages that exist),
//! and the wording of `apply`'s and the engines' messages.

use std::collections::BTreeSet;

use crate::support::{bin, run};

/// `patchgate ARGS` with an empty stdin: exit code, stdout, stderr.
fn output(args: &[&str]) -> (i32, String, String) {
    let out = run(args, "");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `patchgate ARGS --help` as printed.
fn raw_help(args: &[&str]) -> String {
    let mut all = args.to_vec();
    all.push("--help");
    let (code, out, err) = output(&all);
    assert_eq!(code, 0, "{all:?}: {err}");
    out
}

/// Text with its words joined by single spaces (clap wraps at the terminal's width).
fn words(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `patchgate ARGS --help`, its words joined by single spaces.
fn help(args: &[&str]) -> String {
    words(&raw_help(args))
}

/// The help of one option of `patchgate ARGS`: from its line to the next option's line.
fn option_help(args: &[&str], option: &str) -> String {
    let help = raw_help(args);
    let is_option = |l: &str| {
        let t = l.trim_start();
        l.len() - t.len() <= 6 && t.starts_with('-')
    };
    let mut lines = help
        .lines()
        .skip_while(|l| !(is_option(l) && l.trim_start().starts_with(&format!("{option} "))));
    let first = lines.next().unwrap_or_else(|| panic!("{option} in {help}"));
    let rest: Vec<&str> = lines.take_while(|l| !is_option(l)).collect();
    words(&format!("{first}\n{}", rest.join("\n")))
}

/// The commands `patchgate --help` lists, but `help`.
fn commands() -> Vec<String> {
    let (_, out, _) = output(&["--help"]);
    let listed = out
        .split("Commands:\n")
        .nth(1)
        .and_then(|rest| rest.split("\n\n").next())
        .expect("a Commands: section");
    listed
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect()
}

#[test]
fn the_policy_default_is_the_users_config_then_the_commands_and_a_repository_only_tightens() {
    for (args, fallback) in [
        (&[][..], "else gate"),
        (&["review"], "else gate"),
        (&["serve"], "else dry-run for --stdio and gate for --listen"),
    ] {
        let text = option_help(args, "--policy");
        assert!(
            text.contains("default: `policy` in your own patchgate config")
                && text.contains(fallback),
            "{args:?}: {text}"
        );
        assert!(
            text.contains("A repository's .patchgate.toml can only make it stricter"),
            "{args:?}: {text}"
        );
    }
}

#[test]
fn config_names_codexs_own_file_whatever_the_scope() {
    let text = help(&["config"]);
    assert!(
        text.contains("Codex CLI: always the user's `~/.codex/config.toml`"),
        "{text}"
    );
    assert!(!text.contains("Codex CLI: `.codex/config.toml`"), "{text}");
}

#[test]
fn undo_says_it_takes_back_only_the_runs_change_and_its_exit_status() {
    let text = help(&["undo"]);
    assert!(
        text.contains("only the run's own change taken back, by a three-way merge"),
        "{text}"
    );
    assert!(
        !text.contains("when the files still hold what it wrote"),
        "{text}"
    );
    assert!(
        text.contains("Exit status: 0 undone; 1 not undone")
            && text.contains("RUN_NOT_FOUND")
            && text.contains("FILE_CHANGED")
            && text.contains("2 usage error"),
        "{text}"
    );
}

#[test]
fn merge_help_lists_the_json_objects_keys_refusal_included() {
    let text = help(&["merge"]);
    for key in [
        "\"status\": \"ok\"",
        "\"applied\"",
        "\"warnings\"",
        "\"diff\"",
        "\"content\"",
    ] {
        assert!(text.contains(key), "{key}: {text}");
    }
    assert!(
        text.contains("{\"status\": \"error\", \"code\"") && text.contains("\"message\""),
        "{text}"
    );
    // And the object is what it says.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.txt");
    std::fs::write(&file, "one\ntwo\n").unwrap();
    let f = file.to_str().unwrap();
    let ok = run(
        &["merge", "udiff", f, "--json"],
        "@@ -1,2 +1,2 @@\n one\n-two\n+three\n",
    );
    let v: serde_json::Value = serde_json::from_slice(&ok.stdout).unwrap();
    let keys: BTreeSet<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        BTreeSet::from(["status", "applied", "warnings", "diff", "content"])
    );
    let refused = run(
        &["merge", "udiff", f, "--json"],
        "@@ -1,1 +1,1 @@\n-nine\n+ten\n",
    );
    assert_eq!(refused.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&refused.stdout).unwrap();
    let keys: BTreeSet<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, BTreeSet::from(["status", "code", "message"]));
}

#[test]
fn a_default_is_shown_once_and_the_review_timeouts_is_shown() {
    for command in commands() {
        let text = help(&[&command]);
        if !text.contains("--root ") {
            continue;
        }
        let root = option_help(&[&command], "--root");
        assert_eq!(root.matches("default").count(), 1, "{command}: {root}");
    }
    for args in [&["review"][..], &["serve"]] {
        let text = option_help(args, "--review-timeout");
        assert!(
            text.contains("(default: `.patchgate.toml`'s review_timeout_s, at most 600, else 600)"),
            "{args:?}: {text}"
        );
    }
}

/// The `.SH` sections of a roff page, and its SEE ALSO references.
fn sections(page: &str) -> Vec<String> {
    page.lines()
        .filter_map(|l| l.strip_prefix(".SH "))
        .map(|s| s.trim_matches('"').to_string())
        .collect()
}

fn see_also(page: &str) -> BTreeSet<String> {
    let body = page
        .split(".SH \"SEE ALSO\"\n")
        .nth(1)
        .expect("a SEE ALSO section");
    let body = body.split("\n.SH").next().unwrap_or(body);
    body.split(", ")
        .map(|r| {
            r.trim()
                .replace("\\fB", "")
                .replace("\\fR", "")
                .replace("\\-", "-")
                .trim_end_matches("(1)")
                .to_string()
        })
        .collect()
}

#[test]
fn every_command_has_a_man_page_with_exit_status_and_environment() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("man1");
    let (code, listed, err) = output(&["man", "--dir", out_dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let written: BTreeSet<String> = std::fs::read_dir(&out_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(listed.lines().count(), written.len(), "{listed}");
    let commands = commands();
    assert!(commands.len() >= 14, "{commands:?}");
    let mut expected: BTreeSet<String> = commands
        .iter()
        .map(|c| format!("patchgate-{c}.1"))
        .collect();
    expected.insert("patchgate.1".into());
    assert_eq!(written, expected);
    for name in &written {
        let page = std::fs::read_to_string(out_dir.join(name)).unwrap();
        let have = sections(&page);
        for wanted in ["NAME", "SYNOPSIS", "EXIT STATUS", "ENVIRONMENT", "SEE ALSO"] {
            assert!(
                have.iter().any(|s| s == wanted),
                "{name} lacks {wanted}: {have:?}"
            );
        }
        // Every page it refers to exists.
        for page_ref in see_also(&page) {
            assert!(
                written.contains(&format!("{page_ref}.1")),
                "{name} refers to {page_ref}(1), which is not generated"
            );
        }
    }
    // The program's page names exactly the others, in SEE ALSO and as its commands.
    let main = std::fs::read_to_string(out_dir.join("patchgate.1")).unwrap();
    let others: BTreeSet<String> = written
        .iter()
        .filter(|n| *n != "patchgate.1")
        .map(|n| n.trim_end_matches(".1").to_string())
        .collect();
    assert_eq!(see_also(&main), others);
    assert!(!main.contains("patchgate\\-help(1)"), "no page for help");
    // `patchgate man COMMAND` prints the page written for it.
    let (code, apply, _) = output(&["man", "apply"]);
    assert_eq!(code, 0);
    assert_eq!(
        apply,
        std::fs::read_to_string(out_dir.join("patchgate-apply.1")).unwrap()
    );
    let (code, _, err) = output(&["man", "nonesuch"]);
    assert_eq!(code, 2);
    assert!(err.contains("patchgate-apply"), "{err}");
}

#[test]
fn every_pages_synopsis_names_every_option_and_its_environment_what_the_code_reads() {
    let dir = tempfile::tempdir().unwrap();
    let out = bin()
        .args(["man", "--dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    for command in commands() {
        let page =
            std::fs::read_to_string(dir.path().join(format!("patchgate-{command}.1"))).unwrap();
        let synopsis = page
            .split(".SH SYNOPSIS\n")
            .nth(1)
            .and_then(|s| s.split("\n.SH").next())
            .unwrap()
            .replace("\\-", "-");
        for word in help(&[&command]).split_whitespace() {
            let option = word.trim_end_matches(',');
            if option.starts_with("--")
                && option.len() > 2
                && option
                    .chars()
                    .skip(2)
                    .all(|c| c.is_ascii_lowercase() || c == '-')
            {
                assert!(
                    synopsis.contains(&format!("\\fB{option}\\fR")),
                    "{command}: {option} missing from {synopsis}"
                );
            }
        }
    }
    let page = |name: &str| std::fs::read_to_string(dir.path().join(name)).unwrap();
    // With their values, and a required choice as one.
    let serve = page("patchgate-serve.1").replace("\\-", "-");
    assert!(
        serve.contains(
            "(\\fB--stdio\\fR | \\fB--listen\\fR \\fIADDR\\fR) [\\fB--root\\fR \\fIDIR\\fR]"
        ),
        "{serve}"
    );
    assert!(
        serve.contains("[\\fB--token-file\\fR \\fIFILE\\fR] [\\fB--no-token\\fR]")
            && serve.contains("[\\fB--allow-host\\fR \\fIHOST\\fR...]"),
        "{serve}"
    );
    for (name, vars) in [
        (
            "patchgate-review.1",
            &[
                "PATCHGATE_STATE_DIR",
                "XDG_STATE_HOME",
                "PATCHGATE_CONFIG",
                "XDG_CONFIG_HOME",
                "PATCHGATE_TOKEN",
                "PATCHGATE_LOG",
                "PATCHGATE_LOG_LEVEL",
                "NO_COLOR",
            ][..],
        ),
        (
            "patchgate-serve.1",
            &["PATCHGATE_STATE_DIR", "PATCHGATE_TOKEN", "PATCHGATE_LOG"],
        ),
        ("patchgate-config.1", &["CODEX_HOME", "XDG_CONFIG_HOME"]),
        (
            "patchgate-undo.1",
            &["PATCHGATE_STATE_DIR", "XDG_STATE_HOME"],
        ),
    ] {
        let env = page(name)
            .split(".SH ENVIRONMENT\n")
            .nth(1)
            .and_then(|s| s.split("\n.SH").next())
            .unwrap()
            .replace("\\-", "-");
        for var in vars {
            assert!(
                env.contains(&format!("\\fB{var}\\fR")),
                "{name}: {var} in {env}"
            );
        }
    }
}

#[test]
fn apply_says_applies_of_one_file_and_apply_of_several() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "one\ntwo\n").unwrap();
    std::fs::write(dir.path().join("b.txt"), "x\n").unwrap();
    let root = dir.path().to_str().unwrap();
    let state = tempfile::tempdir().unwrap();
    let apply = |args: &[&str], patch: &str| {
        let mut cmd = bin();
        cmd.args(["apply", "--root", root])
            .args(args)
            .env("PATCHGATE_STATE_DIR", state.path());
        let out = crate::support::run_cmd(cmd, patch);
        (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let good = "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+three\n";
    let bad = "--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-nine\n+ten\n";
    let (out, _) = apply(&["--check"], good);
    assert!(out.contains(": 1 of 1 file applies"), "{out}");
    let (out, _) = apply(&["--check"], &format!("{good}{bad}"));
    assert!(out.contains(": 1 of 2 files applies"), "{out}");
    let (_, err) = apply(&["--yes"], bad);
    assert!(err.contains("1 of 1 file in stdin does not apply"), "{err}");
}

#[test]
fn an_ambiguous_search_names_each_place_once() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("f.rs");
    let mut text: String = (1..=10).map(|n| format!("line{n}\n")).collect();
    text.push_str("let x = x + x;\n");
    std::fs::write(&file, text).unwrap();
    let out = run(
        &["merge", "replace", file.to_str().unwrap()],
        r#"{"search_content": "x", "replace_content": "y"}"#,
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("AMBIGUOUS_MATCH"), "{err}");
    assert!(
        err.contains("occurs 3 times: line 11 (columns 5, 9, 13)."),
        "{err}"
    );
    assert!(!err.contains("line 11, line 11"), "{err}");
}

#[test]
fn a_refusal_of_one_line_speaks_of_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.rs");
    std::fs::write(
        &file,
        "fn a() {\n    one();\n}\n\nfn b() {\n    two();\n}\n",
    )
    .unwrap();
    let f = file.to_str().unwrap();
    // A lazy snippet of one line the file does not have.
    let out = run(&["merge", "lazy", f], "brand_new();\n");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(
            "snippet line 1 (`brand_new();`) is not a line of the file, so nothing says where it goes"
        ),
        "{err}"
    );
    assert!(err.contains("\"at the end of the file\""), "{err}");
    // A hunk of one old line that is not there.
    let out = run(
        &["merge", "udiff", f],
        "@@ -1 +1 @@\n-fn z() {\n+fn y() {\n",
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("its 1 old line is not at line 1"), "{err}");
}
