//! The review TUI in a real terminal (tmux): the gate and the TUI in one process, the official
//! Python SDK as the agent over HTTP, a person's keys through send-keys.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::mcp::Project;
use crate::mcp_python::{python, script};
use crate::tmux::Tmux;

const STORY: &str = "The title.\n\nThe first line.\n\
    a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n\
    The middle line.\n\
    k\nl\nm\nn\no\np\nq\nr\ns\nt\n\
    The last line.\n";

/// Wait for the discovery file the gate writes once it listens: (mcp_url, token).
fn discovery(state: &Path, tmux: &Tmux) -> (String, String) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(bytes) = std::fs::read(state.join("reviewer.json"))
            && let Ok(v) = serde_json::from_slice::<Value>(&bytes)
        {
            return (
                v["mcp_url"].as_str().unwrap().to_string(),
                v["token"].as_str().unwrap().to_string(),
            );
        }
        assert!(
            Instant::now() < deadline,
            "no discovery file after 30 s; the screen:\n{}",
            tmux.screen()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The agent's tool results, line by line, as they arrive.
struct Agent {
    child: Child,
    results: mpsc::Receiver<Value>,
}

impl Agent {
    fn start(mcp_url: &str, token: &str, root: &Path) -> Agent {
        let mut child = Command::new(python())
            .arg(script())
            .args(["review", mcp_url, token])
            .arg(root)
            .stdout(Stdio::piped())
            .spawn()
            .expect("run python");
        let stdout = child.stdout.take().unwrap();
        let (tx, results) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Some(json) = line.strip_prefix("RESULT ") {
                    let _ = tx.send(serde_json::from_str(json).expect("a JSON envelope"));
                }
            }
        });
        Agent { child, results }
    }

    fn next(&self, tmux: &Tmux) -> Value {
        self.results
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("no tool result in 60 s; the screen:\n{}", tmux.screen()))
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_person_accepts_two_of_three_hunks_then_rejects_with_a_note() {
    let p = Project::new();
    p.write("story.md", STORY);
    let state = p.state.display().to_string();
    let log = p.state.join("patchgate.log").display().to_string();
    let root = p.root.display().to_string();
    let tmux = Tmux::start(
        &p.state,
        140,
        40,
        &[("PATCHGATE_STATE_DIR", &state), ("PATCHGATE_LOG", &log)],
        Path::new(env!("CARGO_BIN_EXE_patchgate")),
        &["--listen", "127.0.0.1:0", "--root", &root],
    );
    let (mcp_url, token) = discovery(&p.state, &tmux);
    tmux.wait_for("the empty queue", 30, |s| s.contains("Waiting for agents"));

    let agent = Agent::start(&mcp_url, &token, &p.root);

    // The three-hunk FileWriteOrEdit shows up with its diff loaded.
    let screen = tmux.wait_for("the FileWriteOrEdit review", 60, |s| {
        s.contains("FileWriteOrEdit") && s.contains("hunk 1/3") && s.contains("The last line")
    });
    assert!(screen.contains("story.md"), "{screen}");
    assert!(screen.contains("1 pending"), "{screen}");
    // Hunk 1, hunk 2, exclude hunk 3, accept.
    tmux.keys(&["n", "n", "Space"]);
    tmux.wait_for("hunk 3 excluded", 10, |s| s.contains("2 of 3 included"));
    tmux.keys(&["a"]);

    let r = agent.next(&tmux);
    assert_eq!(r["status"], "ok", "{r}");
    assert_eq!(r["review"]["decision"], "accept", "{r}");
    assert_eq!(r["review"]["hunks_accepted"], 2, "{r}");
    assert_eq!(r["review"]["hunks_total"], 3, "{r}");
    let expected = STORY
        .replace("The first line.", "The first line, edited.")
        .replace("The middle line.", "The middle line, edited.");
    assert_eq!(p.read("story.md"), expected);

    // The patch_file that follows is rejected with a note.
    tmux.wait_for("the patch_file review", 60, |s| {
        s.contains("patch_file ·") && s.contains("A new title.")
    });
    tmux.keys(&["r"]);
    tmux.wait_for("the note editor", 10, |s| {
        s.contains("a note for the agent")
    });
    tmux.type_text("keep the title; the docs link to it");
    tmux.keys(&["Enter"]);

    let r = agent.next(&tmux);
    assert_eq!(r["status"], "rejected", "{r}");
    assert_eq!(r["review"]["decision"], "reject", "{r}");
    assert_eq!(
        r["review"]["note"], "keep the title; the docs link to it",
        "{r}"
    );
    assert_eq!(
        p.read("story.md"),
        expected,
        "a rejected edit writes nothing"
    );

    // Nothing pending: q quits at once and the terminal is given back.
    tmux.wait_for("the queue to settle", 10, |s| s.contains("0 pending"));
    tmux.keys(&["q"]);
    let deadline = Instant::now() + Duration::from_secs(10);
    while !tmux.exited() {
        assert!(
            Instant::now() < deadline,
            "q did not quit; the screen:\n{}",
            tmux.screen()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
