//! The TUI's `R` in a real terminal (tmux): on a pending review, the rule chooser offers its
//! file, folder and extension; the person picks the folder, `auto` and their own config,
//! presses Enter; the rule is in the user's config and `GET /api/rules`, and the review it
//! covers is applied; `:rules` lists it. Esc closes the chooser with nothing added.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::mcp::Project;
use crate::tmux::Tmux;
use crate::tui::call_tool;

/// The gate's discovery entry once it listens.
fn discovery(p: &Project, tmux: &Tmux) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(bytes) = std::fs::read(p.state.join("reviewer.json"))
            && let Ok(v) = serde_json::from_slice::<Value>(&bytes)
        {
            return v;
        }
        assert!(
            Instant::now() < deadline,
            "no discovery file after 30 s; the screen:\n{}",
            tmux.screen()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `GET /api/rules` with the reviewer token.
fn rules(entry: &Value) -> Value {
    let _ = rustls::crypto::ring::default_provider().install_default();
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async {
            reqwest::Client::new()
                .get(format!("{}/api/rules", entry["url"].as_str().unwrap()))
                .bearer_auth(entry["review_token"].as_str().unwrap())
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap()
        })
}

#[test]
fn r_on_a_review_makes_a_rule_in_the_users_config_and_the_review_is_decided_by_it() {
    let p = Project::new();
    p.write("src/app/main.rs", "fn main() {\n    run(1);\n}\n");
    let config = p.state.join("config.toml");
    std::fs::write(&config, "# mine\npolicy = \"gate\"\n").unwrap();
    let (state, log, root, cfg) = (
        p.state.display().to_string(),
        p.state.join("patchgate.log").display().to_string(),
        p.root.display().to_string(),
        config.display().to_string(),
    );
    let tmux = Tmux::start(
        &p.state,
        140,
        40,
        &[
            ("PATCHGATE_STATE_DIR", &state),
            ("PATCHGATE_LOG", &log),
            ("PATCHGATE_CONFIG", &cfg),
        ],
        Path::new(env!("CARGO_BIN_EXE_patchgate")),
        &["--listen", "127.0.0.1:0", "--root", &root],
    );
    let entry = discovery(&p, &tmux);
    tmux.wait_for("the empty queue", 30, |s| s.contains("Waiting for agents"));
    let (mcp_url, token) = (
        entry["mcp_url"].as_str().unwrap(),
        entry["token"].as_str().unwrap(),
    );
    let edit = |from: &str, to: &str| {
        call_tool(
            mcp_url,
            token,
            "patch_file",
            json!({"target_file": "src/app/main.rs", "search_content": from, "replace_content": to}),
        )
    };
    let first = edit("run(1);", "run(2);");
    assert_eq!(first["status"], "pending", "{first}");
    tmux.wait_for("the review", 30, |s| {
        s.contains("run(2);") && s.contains("hunk 1/1")
    });

    // Esc closes the chooser and adds nothing.
    tmux.keys(&["R"]);
    tmux.wait_for("the chooser", 10, |s| {
        s.contains("remember as a rule") && s.contains("(•) src/app/main.rs")
    });
    tmux.keys(&["Escape"]);
    tmux.wait_for("the chooser closed", 10, |s| s.contains("no rule added"));

    // The folder, `auto`, the user's config.
    tmux.keys(&["R"]);
    let screen = tmux.wait_for("the chooser", 10, |s| s.contains("remember as a rule"));
    for offered in [
        "src/app/main.rs",
        "src/app/**",
        "**/*.rs",
        "auto",
        "gate",
        "deny",
    ] {
        assert!(screen.contains(offered), "{offered} not offered:\n{screen}");
    }
    tmux.keys(&["l"]);
    tmux.wait_for("the folder chosen", 10, |s| s.contains("(•) src/app/**"));
    tmux.keys(&["j", "j", "l"]);
    tmux.wait_for("the user's config chosen", 10, |s| {
        s.contains("(•) your config")
    });
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("the rule added", 30, |s| s.contains("rule added"));
    assert!(screen.contains("src/app/**"), "{screen}");
    assert!(
        screen.contains(&format!("{} applied", first["run_id"].as_str().unwrap())),
        "{screen}"
    );
    assert_eq!(p.read("src/app/main.rs"), "fn main() {\n    run(2);\n}\n");

    let written = std::fs::read_to_string(&config).unwrap();
    assert!(
        written.starts_with("# mine\npolicy = \"gate\"\n"),
        "{written}"
    );
    assert!(
        written.contains("glob = \"src/app/**\"\naction = \"auto\""),
        "{written}"
    );
    let listed = rules(&entry);
    assert!(
        listed["rules"].as_array().unwrap().iter().any(|r| {
            r["glob"] == "src/app/**" && r["action"] == "auto" && r["source"] == "user"
        }),
        "{listed}"
    );
    // `:rules` lists it in the TUI, with where it comes from.
    tmux.command("rules");
    // Waited for whole: a capture taken while the overlay is still being drawn shows its
    // header before its rows.
    let user_rule = |s: &str| {
        s.lines()
            .any(|l| l.contains("user") && l.contains("auto") && l.contains("src/app/**"))
    };
    let screen = tmux.wait_for("the rules with the user's rule", 10, |s| {
        s.contains("first match wins") && user_rule(s)
    });
    assert!(
        screen
            .lines()
            .any(|l| l.contains("built-in") && l.contains("deny") && l.contains("**/.git/**")),
        "{screen}"
    );
    tmux.keys(&["q"]);
    // The next edit under it is applied at once.
    let next = edit("run(2);", "run(3);");
    assert_eq!(next["status"], "ok", "{next}");
}
