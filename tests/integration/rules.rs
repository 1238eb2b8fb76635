//! Remembering a decision as a rule (issue 39 item 1) through the real gate over HTTP:
//! `POST /api/rules` for this session or the user's config, `GET /api/rules` with where each
//! rule comes from, the next edit under an `auto` rule applied at once, the user's config
//! keeping its other keys and comments and the rule holding after a restart, the agents'
//! token refused, bad bodies refused 400, and pending reviews a new rule covers decided by
//! it (the holds for syntax errors still standing). The TUI's `R` is in `tui_rules`.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::mcp::{Gate, Project, http_client};

/// `POST /api/tools/patch_file` as the agent (`script`): the envelope, at once (a gated edit
/// answers `pending`).
pub(crate) async fn patch(gate: &Gate, file: &str, search: &str, replace: &str) -> Value {
    let base = gate.mcp_url.trim_end_matches("/mcp");
    http_client()
        .post(format!("{base}/api/tools/patch_file"))
        .bearer_auth(&gate.token)
        .json(&json!({
            "arguments": {"target_file": file, "search_content": search, "replace_content": replace},
            "client": "script",
        }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// `POST /api/rules` with the reviewer token: the status and the answer.
async fn add_rule(gate: &Gate, body: Value) -> (StatusCode, Value) {
    gate.api_status(Method::POST, "/api/rules", Some(body))
        .await
}

/// The rules `GET /api/rules` lists from `source`, as (glob, action).
async fn rules_from(gate: &Gate, source: &str) -> Vec<(String, String)> {
    let v = gate.api(Method::GET, "/api/rules", None).await;
    v["rules"]
        .as_array()
        .unwrap_or_else(|| panic!("{v}"))
        .iter()
        .filter(|r| r["source"] == source)
        .map(|r| {
            (
                r["glob"].as_str().unwrap().to_string(),
                r["action"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The user's config file the tests' gates read as theirs.
fn user_config(p: &Project) -> std::path::PathBuf {
    p.state.join("no-user-config.toml")
}

fn pair(glob: &str, action: &str) -> (String, String) {
    (glob.to_string(), action.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_rule_auto_has_the_next_edit_under_it_applied_at_once() {
    let p = Project::new();
    p.write("docs/guide.md", "old words\n");
    p.write("src/main.txt", "old code\n");
    let gate = Gate::start(&p, &["--policy", "gate"]);
    let (status, added) = add_rule(
        &gate,
        json!({"glob": "docs/**", "action": "auto", "scope": "session"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{added}");
    assert_eq!(added["rule"]["source"], "session", "{added}");
    assert!(added.get("config").is_none(), "{added}");
    assert_eq!(
        rules_from(&gate, "session").await,
        vec![pair("docs/**", "auto")]
    );
    // Under it: written at once. Beside it: a person decides, as before.
    let under = patch(&gate, "docs/guide.md", "old words", "new words").await;
    assert_eq!(under["status"], "ok", "{under}");
    assert_eq!(p.read("docs/guide.md"), "new words\n");
    let beside = patch(&gate, "src/main.txt", "old code", "new code").await;
    assert_eq!(beside["status"], "pending", "{beside}");
    assert_eq!(p.read("src/main.txt"), "old code\n");
    // The built-in rules are listed too, and nothing went to the user's config.
    let builtin = rules_from(&gate, "built-in").await;
    assert!(builtin.contains(&pair("**/.git/**", "deny")), "{builtin:?}");
    assert!(!user_config(&p).exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_rule_keeps_the_configs_other_keys_and_comments_and_holds_after_a_restart() {
    let p = Project::new();
    p.write("notes/todo.md", "one\n");
    let before = "# my own patchgate settings\npolicy = \"gate\" # ask me first\n\n[search]\n# fewer turns\nmax_turns = 3\n\n# generated files are fine\n[[rules]]\nglob = \"gen/**\"\naction = \"auto\"\n";
    std::fs::write(user_config(&p), before).unwrap();
    let gate = Gate::start(&p, &[]);
    let (status, added) = add_rule(
        &gate,
        json!({"glob": "notes/**", "action": "auto", "scope": "user"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{added}");
    assert_eq!(added["rule"]["source"], "user", "{added}");
    let after = std::fs::read_to_string(user_config(&p)).unwrap();
    for kept in [
        "# my own patchgate settings\npolicy = \"gate\" # ask me first\n",
        "[search]\n# fewer turns\nmax_turns = 3\n",
        "# generated files are fine\n[[rules]]\nglob = \"gen/**\"\naction = \"auto\"\n",
    ] {
        assert!(after.contains(kept), "lost {kept:?}:\n{after}");
    }
    let table: toml::Table = after.parse().unwrap();
    assert_eq!(
        table["rules"][0]["glob"].as_str(),
        Some("notes/**"),
        "{after}"
    );
    assert_eq!(
        table["rules"][0]["action"].as_str(),
        Some("auto"),
        "{after}"
    );
    // The running gate has it at once.
    let edit = patch(&gate, "notes/todo.md", "one", "two").await;
    assert_eq!(edit["status"], "ok", "{edit}");
    drop(gate);

    // A new gate reads it from the user's config.
    let gate = Gate::start(&p, &[]);
    assert_eq!(
        rules_from(&gate, "user").await,
        vec![pair("notes/**", "auto"), pair("gen/**", "auto")]
    );
    assert!(rules_from(&gate, "session").await.is_empty());
    let edit = patch(&gate, "notes/todo.md", "two", "three").await;
    assert_eq!(edit["status"], "ok", "{edit}");
    assert_eq!(p.read("notes/todo.md"), "three\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agents_token_cannot_add_or_list_rules() {
    let p = Project::new();
    p.write("a.txt", "alpha\n");
    let gate = Gate::start(&p, &[]);
    let url = format!("{}/api/rules", gate.url);
    let post = http_client()
        .post(&url)
        .bearer_auth(&gate.token)
        .json(&json!({"glob": "**", "action": "auto", "scope": "user"}))
        .send()
        .await
        .unwrap();
    assert_eq!(post.status(), StatusCode::FORBIDDEN);
    let get = http_client()
        .get(&url)
        .bearer_auth(&gate.token)
        .send()
        .await
        .unwrap();
    assert_eq!(get.status(), StatusCode::FORBIDDEN);
    // Nothing was added anywhere: the agent's edit still waits for a person.
    assert!(rules_from(&gate, "session").await.is_empty());
    assert!(rules_from(&gate, "user").await.is_empty());
    assert!(!user_config(&p).exists());
    let edit = patch(&gate, "a.txt", "alpha", "beta").await;
    assert_eq!(edit["status"], "pending", "{edit}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_rules_are_refused_with_400_and_say_what_is_wrong() {
    let p = Project::new();
    let gate = Gate::start(&p, &[]);
    let long = "a".repeat(5000);
    for (body, says) in [
        (
            json!({"glob": "a", "action": "auto", "scope": "session", "why": 1}),
            "unknown field `why`",
        ),
        (
            json!({"glob": "a", "action": "allow", "scope": "session"}),
            "unknown variant `allow`",
        ),
        (
            json!({"glob": "a", "action": "auto", "scope": "forever"}),
            "unknown variant `forever`",
        ),
        (
            json!({"action": "auto", "scope": "session"}),
            "missing field `glob`",
        ),
        (
            json!({"glob": "src/[a", "action": "auto", "scope": "session"}),
            "not a valid glob",
        ),
        (
            json!({"glob": long, "action": "auto", "scope": "session"}),
            "more than 1024",
        ),
        (
            json!({"glob": "../other/**", "action": "auto", "scope": "user"}),
            "relative to the root",
        ),
        (
            json!({"glob": "a\nb", "action": "deny", "scope": "session"}),
            "control character",
        ),
        (json!("docs/**"), "a rule is"),
    ] {
        let (status, v) = add_rule(&gate, body.clone()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {v}");
        assert_eq!(v["code"], "INVALID_INPUT", "{body}: {v}");
        assert!(
            v["message"].as_str().unwrap_or_default().contains(says),
            "{body}: {v}"
        );
    }
    let not_json = http_client()
        .post(format!("{}/api/rules", gate.url))
        .bearer_auth(&gate.review_token)
        .body("glob=a")
        .send()
        .await
        .unwrap();
    assert_eq!(not_json.status(), StatusCode::BAD_REQUEST);
    assert!(rules_from(&gate, "session").await.is_empty());
    assert!(!user_config(&p).exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pending_reviews_a_new_rule_covers_are_decided_by_it_but_a_syntax_error_still_waits() {
    let p = Project::new();
    p.write("src/ok.rs", "fn ok() -> u32 {\n    1\n}\n");
    p.write("src/broken.rs", "fn broken() -> u32 {\n    1\n}\n");
    p.write("lib/other.rs", "fn other() -> u32 {\n    1\n}\n");
    p.write("secret.txt", "keep\n");
    let gate = Gate::start(&p, &["--policy", "gate"]);
    let ok = patch(&gate, "src/ok.rs", "    1\n", "    2\n").await;
    let broken = patch(&gate, "src/broken.rs", "-> u32 {", "-> u32 {{").await;
    let other = patch(&gate, "lib/other.rs", "    1\n", "    3\n").await;
    let secret = patch(&gate, "secret.txt", "keep", "gone").await;
    for v in [&ok, &broken, &other, &secret] {
        assert_eq!(v["status"], "pending", "{v}");
    }
    let run = |v: &Value| v["run_id"].as_str().unwrap().to_string();
    let (status, added) = add_rule(
        &gate,
        json!({"glob": "src/**", "action": "auto", "scope": "session"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{added}");
    assert_eq!(
        added["decided"],
        json!([{"run_id": run(&ok), "state": "applied"}]),
        "{added}"
    );
    assert_eq!(p.read("src/ok.rs"), "fn ok() -> u32 {\n    2\n}\n");
    // The syntax error is not written unseen, and what the rule does not name still waits.
    assert_eq!(p.read("src/broken.rs"), "fn broken() -> u32 {\n    1\n}\n");
    let mut pending = gate.pending().await;
    pending.sort();
    let mut want = vec![run(&broken), run(&other), run(&secret)];
    want.sort();
    assert_eq!(pending, want);

    // A deny rule rejects the review it covers, and the agent hears which rule.
    let (status, added) = add_rule(
        &gate,
        json!({"glob": "secret.txt", "action": "deny", "scope": "session"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{added}");
    assert_eq!(
        added["decided"],
        json!([{"run_id": run(&secret), "state": "rejected"}]),
        "{added}"
    );
    assert_eq!(p.read("secret.txt"), "keep\n");
    let base = gate.mcp_url.trim_end_matches("/mcp");
    let heard: Value = http_client()
        .post(format!("{base}/api/reviews/{}/wait", run(&secret)))
        .bearer_auth(&gate.token)
        .json(&json!({"timeout_s": 1}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(heard["status"], "rejected", "{heard}");
    assert!(
        heard["message"]
            .as_str()
            .unwrap()
            .contains("the rule `secret.txt` in this session's rules denies it"),
        "{heard}"
    );
    // And the next edit of it is refused outright.
    let again = patch(&gate, "secret.txt", "keep", "gone").await;
    assert_eq!(again["code"], "DENIED_BY_RULE", "{again}");
}

/// Regression (review of item 1): a `user` rule past the gate's cap of added rules was
/// written to the user's config and then refused by the gate; now it is refused first and
/// the config is left as it was.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_rule_refused_for_want_of_room_leaves_the_users_config_alone() {
    let p = Project::new();
    let before = "# mine\npolicy = \"gate\"\n";
    std::fs::write(user_config(&p), before).unwrap();
    let gate = Gate::start(&p, &[]);
    for n in 0..patchgate::review::policy::MAX_ADDED_RULES {
        let (status, v) = add_rule(
            &gate,
            json!({"glob": format!("full/{n}/**"), "action": "deny", "scope": "session"}),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{n}: {v}");
    }
    let (status, v) = add_rule(
        &gate,
        json!({"glob": "late/**", "action": "auto", "scope": "user"}),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{v}");
    assert!(v.to_string().contains("added rules already"), "{v}");
    assert_eq!(std::fs::read_to_string(user_config(&p)).unwrap(), before);
    assert!(rules_from(&gate, "user").await.is_empty());
    // A glob already added still replaces its rule.
    let (status, v) = add_rule(
        &gate,
        json!({"glob": "full/0/**", "action": "gate", "scope": "session"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
}
