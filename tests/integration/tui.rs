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

/// The gate with its TUI in a 140×40 terminal over `p`, listening, with no review yet: the
/// terminal, the MCP endpoint and the agents' token.
pub(crate) fn gate_in_tmux(p: &Project) -> (Tmux, String, String) {
    gate_in_tmux_sized(p, 140, 40)
}

/// [`gate_in_tmux`] in a `width` × `height` terminal.
pub(crate) fn gate_in_tmux_sized(p: &Project, width: u16, height: u16) -> (Tmux, String, String) {
    gate_in_tmux_with(p, (width, height), &[])
}

/// [`gate_in_tmux`] in a terminal of `size` with more arguments (`--policy auto`).
pub(crate) fn gate_in_tmux_with(
    p: &Project,
    (width, height): (u16, u16),
    more: &[&str],
) -> (Tmux, String, String) {
    let state = p.state.display().to_string();
    let log = p.state.join("patchgate.log").display().to_string();
    let root = p.root.display().to_string();
    let tmux = Tmux::start(
        &p.state,
        width,
        height,
        &[("PATCHGATE_STATE_DIR", &state), ("PATCHGATE_LOG", &log)],
        Path::new(env!("CARGO_BIN_EXE_patchgate")),
        &[&["--listen", "127.0.0.1:0", "--root", &root][..], more].concat(),
    );
    let (mcp_url, token) = discovery(&p.state, &tmux);
    tmux.wait_for("the empty queue", 30, |s| s.contains("Waiting for agents"));
    (tmux, mcp_url, token)
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
    let (tmux, mcp_url, token) = gate_in_tmux(&p);

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
    // A note of two lines (Alt+Enter starts the second).
    tmux.type_shown("keep the title");
    tmux.keys(&["M-Enter"]);
    tmux.type_shown("the docs link to it");
    tmux.keys(&["Enter"]);

    let r = agent.next(&tmux);
    assert_eq!(r["status"], "rejected", "{r}");
    assert_eq!(r["review"]["decision"], "reject", "{r}");
    assert_eq!(
        r["review"]["note"], "keep the title\nthe docs link to it",
        "{r}"
    );
    // The same agent's next edit of story.md (20 lines below the first edit's first change)
    // answers the rejection and is selected as it arrives; the rejected review is one up.
    tmux.wait_for("the second edit", 60, |s| {
        s.contains("v2 diff") && s.contains("A line added later.")
    });
    tmux.keys(&["k"]);
    // The TUI shows the note's lines as lines, and so does the journal's log.
    tmux.wait_for("the note's two lines", 10, |s| {
        s.contains("note: keep the title") && s.contains("       the docs link to it")
    });
    let log = crate::support::bin()
        .args(["log", "--root", &p.root.display().to_string()])
        .env("PATCHGATE_STATE_DIR", &p.state)
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&log.stdout);
    assert!(
        log.contains("— keep the title\n      the docs link to it"),
        "{log}"
    );
    assert_eq!(
        p.read("story.md"),
        expected,
        "a rejected edit writes nothing"
    );

    // Back to the second edit: it is accepted.
    tmux.keys(&["j"]);
    tmux.wait_for("the second edit again", 10, |s| {
        s.contains("v2 diff") && s.contains("A line added later.")
    });
    tmux.keys(&["a"]);
    let r = agent.next(&tmux);
    assert_eq!(r["status"], "ok", "{r}");
    let both = format!("{expected}A line added later.\n");
    assert_eq!(p.read("story.md"), both);

    // Undo acts on the selected review, and only on an applied one.
    tmux.wait_for("the queue to settle", 10, |s| s.contains("0 pending"));
    tmux.keys(&["k", "u"]);
    tmux.wait_for("a rejected review is not undone", 10, |s| {
        s.contains("only an applied review can be undone")
    });
    // The first of the two applied edits of story.md, under the second.
    tmux.keys(&["k", "u"]);
    tmux.wait_for("the undo question", 10, |s| {
        s.contains("Undo ") && s.contains("story.md")
    });
    tmux.keys(&["n"]);
    tmux.wait_for("nothing undone", 10, |s| s.contains("nothing undone"));
    assert_eq!(p.read("story.md"), both);
    // A later change of a line the run changed: the refusal shows those lines, nothing moves.
    let clash = both.replace("The first line, edited.", "The first line, edited twice.");
    p.write("story.md", &clash);
    tmux.keys(&["u", "y"]);
    // Waited for whole: a screen caught mid-draw may hold the title and not yet the lines.
    tmux.wait_for("the conflicting lines", 10, |s| {
        s.contains("undo refused")
            && s.contains("The lines both changed")
            && s.contains("+ The first line, edited.")
            && s.contains("The first line, edited twice.")
    });
    tmux.keys(&["Escape"]);
    // Closed before the next key: an Escape followed at once by `u` reads as Alt-u.
    tmux.wait_for("the refusal closed", 10, |s| {
        !s.contains("The lines both changed")
    });
    assert_eq!(p.read("story.md"), clash);
    // Back to what the two edits wrote: the first run's changes are taken back, the second's
    // line stays.
    p.write("story.md", &both);
    tmux.keys(&["u", "y"]);
    tmux.wait_for("the undo and its row", 10, |s| {
        s.contains("undid") && s.contains("undone")
    });
    assert_eq!(p.read("story.md"), format!("{STORY}A line added later.\n"));

    // Nothing pending: q quits at once and the terminal is given back.
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

/// `patchgate apply PATCH --root ROOT EXTRA…` in a tmux of `size` whose socket lives in
/// `dir`, with the project's state directory and log and `env` besides.
fn apply_in_tmux(
    p: &Project,
    dir: &Path,
    patch: &str,
    size: (u16, u16),
    env: &[(&str, &str)],
    extra: &[&str],
) -> Tmux {
    let patch_file = dir.join("apply.patch");
    std::fs::write(&patch_file, patch).unwrap();
    let state = p.state.display().to_string();
    let log = p.state.join("patchgate.log").display().to_string();
    let mut envs = vec![
        ("PATCHGATE_STATE_DIR", state.as_str()),
        ("PATCHGATE_LOG", log.as_str()),
    ];
    envs.extend_from_slice(env);
    let (root, patch_arg) = (
        p.root.display().to_string(),
        patch_file.display().to_string(),
    );
    let mut args = vec!["apply", patch_arg.as_str(), "--root", root.as_str()];
    args.extend_from_slice(extra);
    Tmux::start(
        dir,
        size.0,
        size.1,
        &envs,
        Path::new(env!("CARGO_BIN_EXE_patchgate")),
        &args,
    )
}

#[test]
fn apply_reviews_a_two_file_patch_and_applies_all_but_one_rejected_hunk() {
    let p = Project::new();
    let old_a: String = (1..=30).map(|i| format!("alpha {i}\n")).collect();
    p.write("a.txt", &old_a);
    p.write("b.txt", "bravo 1\nbravo 2\nbravo 3\n");
    let patch = "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n\
        @@ -1,4 +1,4 @@\n-alpha 1\n+ALPHA 1\n alpha 2\n alpha 3\n alpha 4\n\
        @@ -27,4 +27,4 @@\n alpha 27\n alpha 28\n alpha 29\n-alpha 30\n+ALPHA 30\n\
        diff --git a/b.txt b/b.txt\n--- a/b.txt\n+++ b/b.txt\n\
        @@ -1,3 +1,3 @@\n bravo 1\n-bravo 2\n+BRAVO 2\n bravo 3\n";
    let tmux = apply_in_tmux(&p, &p.state, patch, (120, 36), &[], &[]);
    // One review per file; the first (a.txt, two hunks) is selected.
    tmux.wait_for("both reviews", 30, |s| {
        s.contains("2 pending") && s.contains("hunk 1/2") && s.contains("ALPHA 1")
    });
    // Exclude a.txt's second hunk and accept the rest of it.
    tmux.keys(&["n", "Space"]);
    tmux.wait_for("hunk 2 excluded", 10, |s| s.contains("1 of 2 included"));
    tmux.keys(&["a"]);
    // b.txt is selected next; accept it whole.
    tmux.wait_for("the b.txt review", 10, |s| {
        s.contains("1 pending") && s.contains("BRAVO 2") && s.contains("hunk 1/1")
    });
    tmux.keys(&["a"]);
    tmux.wait_for("nothing pending", 10, |s| s.contains("0 pending"));
    tmux.keys(&["q"]);
    let screen = tmux.wait_for("the summary", 10, |s| s.contains("2 of 2 files applied"));
    assert!(screen.contains("a.txt: applied 1 of 2 hunks"), "{screen}");
    assert!(screen.contains("b.txt: applied"), "{screen}");
    assert_eq!(p.read("a.txt"), old_a.replace("alpha 1\n", "ALPHA 1\n"));
    assert_eq!(p.read("b.txt"), "bravo 1\nBRAVO 2\nbravo 3\n");
}

/// [`apply_in_tmux`] through a shell, so that the screen says `EXIT=<status>` after it exits;
/// the patch is written to the state directory as `name`, the tmux socket lives in `dir`.
pub(crate) fn apply_then_its_status(
    p: &Project,
    dir: &Path,
    name: &str,
    patch: &str,
    (cols, rows): (u16, u16),
) -> Tmux {
    let patch_file = p.state.join(name);
    std::fs::write(&patch_file, patch).unwrap();
    let script = format!(
        "PATCHGATE_STATE_DIR={} {} apply {} --root {}; echo EXIT=$?; sleep 30",
        p.state.display(),
        env!("CARGO_BIN_EXE_patchgate"),
        patch_file.display(),
        p.root.display()
    );
    Tmux::start(dir, cols, rows, &[], Path::new("/bin/sh"), &["-c", &script])
}

#[test]
fn control_characters_in_file_names_are_written_out_not_sent_to_the_terminal() {
    let p = Project::new();
    let evil = "e\u{1b}[7mvil.txt";
    p.write(evil, "old\n");
    let patch = format!("--- a/{evil}\n+++ b/{evil}\n@@ -1 +1 @@\n-old\n+new\n");
    let tmux = apply_in_tmux(&p, &p.state, &patch, (120, 30), &[], &[]);
    // The queue row and the file header show the escape written out.
    // (The file header comes once the diff has loaded.)
    tmux.wait_for("the review and its diff", 30, |s| {
        s.contains("1 pending") && s.matches("e\\u{1b}[7mvil.txt").count() >= 2
    });
    tmux.keys(&["a"]);
    tmux.wait_for("nothing pending", 10, |s| s.contains("0 pending"));
    tmux.keys(&["q"]);
    // So does the summary printed after the TUI.
    let screen = tmux.wait_for("the summary", 10, |s| s.contains("1 of 1 file applied"));
    assert!(screen.contains("e\\u{1b}[7mvil.txt: applied"), "{screen}");
    assert_eq!(p.read(evil), "new\n");
}

#[test]
fn apply_reports_every_file_and_exits_1_unless_all_were_applied() {
    let p = Project::new();
    p.write("a.txt", "alpha\n");
    p.write("b.txt", "bravo\n");
    // b.txt's hunk does not match the file: a row says why, but no review is pending.
    let patch = "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-alpha\n+ALPHA\n\
        --- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-charlie\n+CHARLIE\n";
    let tmux = apply_then_its_status(&p, &p.state, "two.patch", patch, (120, 30));
    tmux.wait_for("a.txt's review", 30, |s| {
        s.contains("1 pending") && s.contains("ALPHA")
    });
    tmux.keys(&["a"]);
    tmux.wait_for("nothing pending", 10, |s| s.contains("0 pending"));
    tmux.keys(&["q"]);
    let screen = tmux.wait_for("the report", 10, |s| s.contains("EXIT="));
    assert!(screen.contains("a.txt: applied"), "{screen}");
    assert!(
        screen.contains("b.txt: not applied (does not apply"),
        "{screen}"
    );
    assert!(screen.contains("1 of 2 files applied"), "{screen}");
    assert!(screen.contains("EXIT=1"), "{screen}");
    assert_eq!(p.read("a.txt"), "ALPHA\n");
    drop(tmux);

    // Everything rejected: nothing applied is a failure too.
    // A tmux server of its own (the first one's socket may still be closing).
    let second = p.state.join("second");
    std::fs::create_dir_all(&second).unwrap();
    let tmux = apply_then_its_status(
        &p,
        &second,
        "two.patch",
        "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-ALPHA\n+alpha\n",
        (120, 30),
    );
    tmux.wait_for("the review", 30, |s| {
        s.contains("1 pending") && s.contains("alpha")
    });
    // No agent to write a note to: `r` rejects at once.
    tmux.keys(&["r"]);
    tmux.wait_for("nothing pending", 10, |s| s.contains("0 pending"));
    tmux.keys(&["q"]);
    let screen = tmux.wait_for("the report", 10, |s| s.contains("EXIT="));
    assert!(
        screen.contains("a.txt: rejected") && screen.contains("0 of 1 file applied"),
        "{screen}"
    );
    assert!(screen.contains("EXIT=1"), "{screen}");
}

/// A patch whose first file has a hunk that conflicts, a second file left undecided and a
/// third that is missing: the TUI offers the first file's other hunk and names the one left
/// out; the status bar names the patch, not a policy or clients; the quit question and the
/// summary speak of files, not agents ("not decided", not "failed"); the failing hunk's lines
/// are the file's on disk; every error is printed once.
#[test]
fn apply_offers_the_hunks_that_apply_and_speaks_of_the_patch_not_agents() {
    let p = Project::new();
    let old_a: String = (1..=30).map(|i| format!("alpha {i}\n")).collect();
    p.write("a.txt", &old_a);
    p.write("b.txt", "bravo 1\nbravo 2\nbravo 3\n");
    // Hunk 1 adds a line above hunk 2, whose `alpha 17` (line 17 on disk) is not what it
    // expects; c.txt does not exist.
    let patch = "--- a/a.txt\n+++ b/a.txt\n@@ -2,2 +2,3 @@\n alpha 2\n+added\n alpha 3\n\
        @@ -16,3 +17,3 @@\n alpha 16\n-alpha 17 (old)\n+ALPHA 17\n alpha 18\n\
        --- a/b.txt\n+++ b/b.txt\n@@ -1,3 +1,3 @@\n bravo 1\n-bravo 2\n+BRAVO 2\n bravo 3\n\
        --- a/c.txt\n+++ b/c.txt\n@@ -1 +1 @@\n-charlie\n+CHARLIE\n";
    let tmux = apply_then_its_status(&p, &p.state, "three.patch", patch, (140, 40));
    let screen = tmux.wait_for("a.txt's review with the hunk that applies", 30, |s| {
        s.contains("2 pending") && s.contains("hunk 1/1") && s.contains("added")
    });
    assert!(
        screen.contains("left out: hunk 2 of 2 `@@ -16,3 +17,3 @@` does not apply"),
        "{screen}"
    );
    let status = screen
        .lines()
        .find(|l| l.contains("patchgate │"))
        .unwrap_or_else(|| panic!("no status bar:\n{screen}"));
    assert!(status.contains("│ apply "), "{status}");
    assert!(status.contains("three.patch"), "{status}");
    assert!(
        !status.contains("policy") && !status.contains("client"),
        "{status}"
    );
    tmux.keys(&["a"]);
    tmux.wait_for("b.txt's review", 10, |s| {
        s.contains("1 pending") && s.contains("BRAVO 2")
    });
    tmux.keys(&["q"]);
    let screen = tmux.wait_for("the quit question", 10, |s| s.contains("not decided yet"));
    assert!(screen.contains("1 file is not decided yet."), "{screen}");
    assert!(
        screen.contains("Quit and leave it unapplied? (y/n)"),
        "{screen}"
    );
    assert!(!screen.contains("agents"), "{screen}");
    tmux.keys(&["y"]);
    let screen = tmux.wait_for("the summary", 10, |s| s.contains("EXIT="));
    for line in [
        "a.txt: applied",
        "left out: hunk 2 of 2 `@@ -16,3 +17,3 @@` does not apply",
        "Nearest candidate, lines 16-18:",
        "where line 17 has `alpha 17`",
        "b.txt: not decided",
        "c.txt: not applied (does not apply)",
        "1 of 3 files applied, 1 hunk left out",
        "EXIT=1",
    ] {
        assert!(screen.contains(line), "no {line:?}:\n{screen}");
    }
    assert_eq!(
        screen.matches("its 3 old lines are not at line 16").count(),
        1,
        "{screen}"
    );
    assert_eq!(
        screen.matches("which does not exist").count(),
        1,
        "{screen}"
    );
    assert!(!screen.contains("failed"), "{screen}");
    assert_eq!(
        p.read("a.txt"),
        old_a.replace("alpha 2\n", "alpha 2\nadded\n")
    );
    assert_eq!(p.read("b.txt"), "bravo 1\nbravo 2\nbravo 3\n");
}

#[test]
fn search_lights_its_matches_and_n_steps_through_them() {
    let p = Project::new();
    let old: String = (1..=60).map(|i| format!("line {i}\n")).collect();
    p.write("a.txt", &old);
    let patch = "--- a/a.txt\n+++ b/a.txt\n@@ -2,3 +2,3 @@\n line 2\n-line 3\n+line three\n line 4\n\
        @@ -50,3 +50,3 @@\n line 50\n-line 51\n+line fifty-three\n line 52\n";
    let tmux = apply_in_tmux(&p, &p.state, patch, (140, 24), &[], &[]);
    tmux.wait_for("the review", 30, |s| {
        s.contains("1 pending") && s.contains("hunk 1/2")
    });
    tmux.search("three");
    tmux.wait_for("the first match", 10, |s| {
        s.contains("/three: match 1 of 2")
    });
    tmux.keys(&["n"]);
    tmux.wait_for("the second match", 10, |s| {
        s.contains("/three: match 2 of 2") && s.contains("hunk 2/2")
    });
    tmux.keys(&["N"]);
    tmux.wait_for("back to the first", 10, |s| {
        s.contains("/three: match 1 of 2") && s.contains("hunk 1/2")
    });
    // Esc ends the search: n moves by hunk again.
    // (Esc alone first: Esc and n together read as Alt+n.)
    tmux.keys(&["Escape"]);
    tmux.wait_for("the search ended", 10, |s| !s.contains("/three"));
    tmux.keys(&["n"]);
    tmux.wait_for("the next hunk", 10, |s| s.contains("hunk 2/2"));
}

#[test]
fn the_external_editor_gets_every_key_and_the_screen_is_redrawn_after() {
    let p = Project::new();
    p.write("a.txt", "old\n");
    // An "editor" that reads one line from the terminal and writes what it got.
    let editor = p.state.join("editor.sh");
    std::fs::write(
        &editor,
        "#!/bin/sh\nprintf 'type here: '\nread line\nif [ \"$line\" = ZZTYPED ]; then echo 'typed ok' > \"$1\"; else echo \"typed: $line\" > \"$1\"; fi\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&editor, std::fs::Permissions::from_mode(0o755)).unwrap();
    let editor_arg = editor.display().to_string();
    let tmux = apply_in_tmux(
        &p,
        &p.state,
        "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-old\n+new\n",
        (100, 24),
        &[("EDITOR", &editor_arg), ("VISUAL", &editor_arg)],
        &[],
    );
    tmux.wait_for("the review", 30, |s| {
        s.contains("1 pending") && s.contains("new")
    });
    tmux.keys(&["E"]);
    tmux.wait_for("the editor", 10, |s| s.contains("type here:"));
    tmux.type_shown("ZZTYPED");
    tmux.keys(&["Enter"]);
    // Back in the TUI: every key went to the editor, and no trace of it is left on screen.
    let screen = tmux.wait_for("the decision", 10, |s| s.contains("0 pending"));
    assert!(
        !screen.contains("ZZTYPED") && !screen.contains("type here"),
        "{screen}"
    );
    assert_eq!(p.read("a.txt"), "typed ok\n");
}

#[test]
fn color_always_and_never_are_obeyed() {
    let p = Project::new();
    p.write("a.txt", "old\n");
    let patch = "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-old\n+new\n";
    let mut seen = Vec::new();
    for (k, choice) in ["always", "never"].iter().enumerate() {
        let dir = p.state.join(format!("t{k}"));
        std::fs::create_dir_all(&dir).unwrap();
        // NO_COLOR is set: `always` wins over it, `never` needs no help.
        let tmux = apply_in_tmux(
            &p,
            &dir,
            patch,
            (100, 24),
            &[("NO_COLOR", "1")],
            &["--color", choice],
        );
        tmux.wait_for("the review", 30, |s| {
            s.contains("1 pending") && s.contains("new")
        });
        let styled = tmux.screen_styled();
        // A foreground or background colour: SGR 30-38, 40-48, 90-97, 100-107 (not the
        // resets 39 and 49).
        let colored = styled
            .split('\u{1b}')
            .filter_map(|seq| seq.strip_prefix('['))
            .filter_map(|seq| seq.split_once('m').map(|(codes, _)| codes))
            .flat_map(|codes| codes.split(';'))
            .any(|c| {
                matches!(
                    c.parse::<u32>(),
                    Ok(30..=38 | 40..=48 | 90..=97 | 100..=107)
                )
            });
        seen.push(colored);
        tmux.keys(&["q"]);
    }
    assert_eq!(seen, [true, false]);
}

#[test]
fn a_small_terminal_stacks_the_panes_and_the_help_scrolls() {
    let p = Project::new();
    let long = format!("let x = {}; // FAR_END", "1 + ".repeat(30));
    p.write("a.rs", "fn main() {\n    let x = 1;\n}\n");
    let patch = format!(
        "--- a/a.rs\n+++ b/a.rs\n@@ -1,3 +1,3 @@\n fn main() {{\n-    let x = 1;\n+    {long}\n }}\n"
    );
    let tmux = apply_in_tmux(&p, &p.state, &patch, (60, 20), &[], &[]);
    let screen = tmux.wait_for("the review", 30, |s| s.contains("1 pending"));
    // 60 columns: the queue stands above the diff, both the full width.
    let lines: Vec<&str> = screen.lines().collect();
    assert!(
        lines[0].starts_with("┏▶ Queue") && lines[0].ends_with('┓'),
        "{screen}"
    );
    assert!(
        !lines[1].contains("┃│"),
        "side by side at 60 columns:\n{screen}"
    );
    assert!(
        lines
            .iter()
            .skip(1)
            .any(|l| l.starts_with("╭ ") && l.contains("pending")),
        "{screen}"
    );
    // A long line scrolls into view with l.
    assert!(!screen.contains("FAR_END"), "{screen}");
    tmux.keys(&["l"; 14]);
    tmux.wait_for("the line's end", 10, |s| s.contains("FAR_END"));
    tmux.keys(&["h"; 14]);
    tmux.wait_for("the line's start", 10, |s| !s.contains("FAR_END"));
    // The queue's filter.
    tmux.keys(&["f"]);
    tmux.wait_for("open reviews", 10, |s| {
        s.contains("queue: open reviews (1 shown)")
    });
    tmux.keys(&["f"]);
    tmux.wait_for("no decided review", 10, |s| {
        s.contains("no decided reviews")
    });
    tmux.keys(&["f"]);
    tmux.wait_for("all again", 10, |s| s.contains("queue: all reviews"));
    // The help is taller than 20 rows: it scrolls to its last line.
    tmux.keys(&["?"]);
    tmux.wait_for("the help", 10, |s| s.contains("j/k scroll"));
    tmux.keys(&["G"]);
    tmux.wait_for("the help's end", 10, |s| {
        s.contains("this help") && s.contains("quit (asks when")
    });
    tmux.keys(&["Escape"]);
    tmux.wait_for("the help closed", 10, |s| !s.contains("j/k scroll"));
}

#[test]
fn line_mode_takes_single_lines_of_a_hunk() {
    let p = Project::new();
    p.write("a.txt", "a\nb\nc\nd\ne\n");
    let patch = "--- a/a.txt\n+++ b/a.txt\n@@ -1,5 +1,5 @@\n a\n-b\n+B\n c\n-d\n+D\n e\n";
    let tmux = apply_in_tmux(&p, &p.state, patch, (120, 30), &[], &[]);
    tmux.wait_for("the review", 30, |s| {
        s.contains("1 pending") && s.contains("hunk 1/1")
    });
    // Line mode from the hunk's first changed line: leave out `-b` and `+B`.
    tmux.keys(&["v"]);
    tmux.wait_for("line mode", 10, |s| s.contains("LINE MODE"));
    tmux.keys(&["Space", "j", "Space"]);
    tmux.wait_for("two lines left out", 10, |s| s.contains("2 lines left out"));
    // Taken back and left out again: a line toggles.
    tmux.keys(&["Space"]);
    tmux.wait_for("one line left out", 10, |s| s.contains("1 line left out"));
    tmux.keys(&["Space"]);
    tmux.wait_for("two lines left out", 10, |s| s.contains("2 lines left out"));
    tmux.keys(&["a"]);
    tmux.wait_for("nothing pending", 10, |s| s.contains("0 pending"));
    tmux.keys(&["q"]);
    tmux.wait_for("the summary", 10, |s| s.contains("1 of 1 file applied"));
    assert_eq!(p.read("a.txt"), "a\nb\nc\nD\ne\n");
}

/// The `--token` paragraph of a help text, its whitespace collapsed (clap wraps lines).
fn token_help(help: &str) -> String {
    let start = help.find("--token <").expect("a --token option");
    let end = help[start..]
        .find("--token-file")
        .expect("--token-file after it")
        + start;
    help[start..end]
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn the_token_help_says_what_happens_to_the_agents_token() {
    for args in [&["serve", "--help"][..], &["review", "--help"], &["--help"]] {
        let out = crate::support::bin().args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}");
        let text = token_help(&String::from_utf8_lossy(&out.stdout));
        assert!(!text.contains("random one per start"), "{args:?}: {text}");
        assert!(
            text.contains("kept for this root") && text.contains("tokens/ of the state directory"),
            "{args:?}: {text}"
        );
        assert!(
            text.contains("the same after every restart"),
            "{args:?}: {text}"
        );
        assert!(
            text.contains("its own reviewer token, new at each start"),
            "{args:?}: {text}"
        );
    }
    // And so it is: two starts of a gate for one root give its agents the same token, the one
    // in tokens/ of the state directory, and the reviewers a new one each time.
    let p = Project::new();
    let mut first = crate::mcp::Gate::start(&p, &[]);
    let (token, review_token) = (first.token.clone(), first.review_token.clone());
    first.interrupt();
    drop(first);
    let second = crate::mcp::Gate::start(&p, &[]);
    assert_eq!(second.token, token);
    assert_ne!(second.review_token, review_token);
    let kept: Vec<String> = std::fs::read_dir(p.state.join("tokens"))
        .unwrap()
        .map(|e| {
            std::fs::read_to_string(e.unwrap().path())
                .unwrap()
                .trim()
                .to_string()
        })
        .collect();
    assert_eq!(kept, [token]);
}

/// Every file under `dir` (relative), sorted; none when it does not exist.
fn files_under(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p.clone());
            }
            out.push(p.strip_prefix(dir).unwrap().display().to_string());
        }
    }
    out.sort();
    out
}

#[test]
fn the_demo_leaves_nothing_outside_its_temporary_directory() {
    let dir = tempfile::tempdir().unwrap();
    let (home, xdg, tmp) = (
        dir.path().join("home"),
        dir.path().join("xdg-state"),
        dir.path().join("tmp"),
    );
    for d in [&home, &xdg, &tmp] {
        std::fs::create_dir_all(d).unwrap();
    }
    // The user's own state directory is XDG_STATE_HOME/patchgate (PATCHGATE_STATE_DIR and
    // PATCHGATE_LOG unset); TMPDIR holds the demo's temporary directory.
    let script = format!(
        "unset PATCHGATE_STATE_DIR PATCHGATE_LOG PATCHGATE_TOKEN; \
         HOME={} XDG_STATE_HOME={} TMPDIR={} PATCHGATE_CONFIG=/nonexistent/config.toml \
         {} demo --pace 50; echo EXIT=$?; sleep 30",
        home.display(),
        xdg.display(),
        tmp.display(),
        env!("CARGO_BIN_EXE_patchgate")
    );
    let tmux = Tmux::start(
        dir.path(),
        140,
        40,
        &[],
        Path::new("/bin/sh"),
        &["-c", &script],
    );
    // The first review with its diff; accept it (the journal and a pre-image are written).
    tmux.wait_for("the first review", 60, |s| {
        s.contains("pending") && s.contains("hunk 1/")
    });
    tmux.keys(&["a"]);
    // While it runs, everything it keeps is in its temporary directory: the journal too.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let during = files_under(&tmp);
        if during
            .iter()
            .any(|f| f.contains("/journal/") && f.ends_with(".jsonl"))
        {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no journal in the demo's directory: {during:?}; the screen:\n{}",
            tmux.screen()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    tmux.keys(&["q"]);
    tmux.wait_for("the quit question", 10, |s| {
        s.contains("REVIEWER_GONE? (y/n)")
    });
    tmux.keys(&["y"]);
    let screen = tmux.wait_for("the demo's end", 30, |s| s.contains("EXIT="));
    assert!(screen.contains("EXIT=0"), "{screen}");
    assert_eq!(files_under(&xdg), Vec::<String>::new(), "the user's state");
    assert_eq!(
        files_under(&home),
        Vec::<String>::new(),
        "the home directory"
    );
    assert_eq!(
        files_under(&tmp),
        Vec::<String>::new(),
        "the temporary directory"
    );
}

#[test]
fn the_agents_token_is_refused_at_once_with_where_the_review_token_is() {
    let p = Project::new();
    let gate = crate::mcp::Gate::start(&p, &[]);
    let script = format!(
        "PATCHGATE_STATE_DIR={} PATCHGATE_LOG={} {} review --connect {} --token {}; \
         echo EXIT=$?; sleep 30",
        p.state.display(),
        p.state.join("patchgate.log").display(),
        env!("CARGO_BIN_EXE_patchgate"),
        gate.url,
        gate.token
    );
    let tmux = Tmux::start(
        &p.state,
        200,
        30,
        &[],
        Path::new("/bin/sh"),
        &["-c", &script],
    );
    let screen = tmux.wait_for("the refusal and the exit", 20, |s| s.contains("EXIT="));
    // The terminal wraps the message: read it as one line.
    let text = screen.replace('\n', "");
    assert!(text.contains("EXIT=2"), "{screen}");
    assert!(text.contains("403 Forbidden"), "{screen}");
    assert!(text.contains("this gate's REVIEW token"), "{screen}");
    assert!(
        text.contains("`review_token` in the gate's discovery file"),
        "{screen}"
    );
    assert!(!text.contains("retrying"), "{screen}");
}

#[test]
fn an_attached_tui_follows_its_gate_to_a_new_port() {
    let p = Project::new();
    p.write("a.txt", "hello\n");
    let first = crate::mcp::Gate::start(&p, &[]);
    // No --token: the reviewer token comes from the gate's discovery file.
    let (tmux, old_addr) = attach_without_token(&p, &first.url);
    // The gate dies (SIGKILL: its discovery entry is left behind, stale) and another starts
    // for the same root on another port, with new tokens.
    drop(first);
    tmux.wait_for("the loss", 30, |s| s.contains("connection lost"));
    let second = crate::mcp::Gate::start(&p, &[]);
    let new_addr = second.url.trim_start_matches("http://").to_string();
    assert_ne!(new_addr, old_addr);
    // An agent's edit through the new gate.
    let rt = tokio::runtime::Runtime::new().unwrap();
    let v: Value = rt.block_on(async {
        crate::mcp::http_client()
            .post(format!("{}/api/tools/patch_file", second.url))
            .bearer_auth(&second.token)
            .json(&serde_json::json!({"arguments": {"target_file": "a.txt",
                "search_content": "hello", "replace_content": "HELLO"}}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    });
    assert_eq!(v["status"], "pending", "{v}");
    let run = v["run_id"].as_str().unwrap().to_string();
    let screen = tmux.wait_for("the new gate's review", 30, |s| {
        s.contains(&new_addr) && s.contains("1 pending") && s.contains(&run)
    });
    assert!(screen.contains("a.txt"), "{screen}");
    // And the TUI decides there: the new gate writes the file.
    tmux.keys(&["a"]);
    let deadline = Instant::now() + Duration::from_secs(30);
    while p.read("a.txt") != "HELLO\n" {
        assert!(
            Instant::now() < deadline,
            "not applied; the screen:\n{}",
            tmux.screen()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `review --connect URL` with no token finds that gate's reviewer token among all the live
/// gates of the state directory, not only the newest (which it took before, and then refused
/// to attach to any other).
#[test]
fn connect_without_a_token_finds_any_live_gate_not_only_the_newest() {
    let p = Project::new();
    let first = crate::mcp::Gate::start(&p, &[]);
    // A second gate, for another root, in the same state directory: now the newest.
    let mut q = Project::new();
    q.state = p.state.clone();
    let _second = crate::mcp::Gate::start(&q, &[]);
    attach_without_token(&p, &first.url);
}

/// `patchgate review --connect URL` in tmux with no `--token`, in `p`'s state directory,
/// once it shows the gate's address and its empty queue; with that address.
fn attach_without_token(p: &Project, url: &str) -> (Tmux, String) {
    let state = p.state.display().to_string();
    let log = p.state.join("patchgate.log").display().to_string();
    let tmux = Tmux::start(
        &p.state,
        140,
        30,
        &[("PATCHGATE_STATE_DIR", &state), ("PATCHGATE_LOG", &log)],
        Path::new(env!("CARGO_BIN_EXE_patchgate")),
        &["review", "--connect", url],
    );
    let addr = url.trim_start_matches("http://").to_string();
    tmux.wait_for("the TUI attached", 30, |s| {
        s.contains(&addr) && s.contains("0 pending")
    });
    (tmux, addr)
}

/// A review whose result has a new parse error: the queue row shows `⚠`, and the line above
/// the hunk that holds the error (not the other one) shows the `syntax:` warning.
#[test]
fn a_new_syntax_error_is_flagged_on_the_row_and_above_its_hunk() {
    let p = Project::new();
    let dir = tempfile::tempdir().unwrap();
    let fns: Vec<String> = (0..6)
        .map(|k| format!("fn f{k}() -> u32 {{\n    let x = {k};\n    x + 1\n}}\n"))
        .collect();
    let old = fns.join("\n");
    // Hunk 1 changes a value (fine); hunk 2 drops the closing brace of the last function.
    let new = old.replacen("let x = 0;", "let x = 10;", 1);
    let at = new.rfind("    x + 1\n}\n").unwrap();
    let new = format!("{}    x + 2\n", &new[..at]);
    p.write("lib.rs", &old);
    let patch = similar::TextDiff::from_lines(old.as_str(), new.as_str())
        .unified_diff()
        .header("a/lib.rs", "b/lib.rs")
        .to_string();
    let tmux = apply_in_tmux(&p, dir.path(), &patch, (160, 40), &[], &[]);
    let screen = tmux.wait_for("the review with its hunks", 30, |s| {
        s.contains("hunk 2/2") && s.contains("syntax: ")
    });
    assert!(
        above(&screen, "hunk 2/2").contains("⚠ syntax: "),
        "{screen}"
    );
    assert!(!above(&screen, "hunk 1/2").contains("syntax"), "{screen}");
    // The queue row: the path line with its counts and the mark.
    assert!(line_with(&screen, "lib.rs +").contains('⚠'), "{screen}");
}

/// The first line of the screen that holds `needle`.
fn line_with(screen: &str, needle: &str) -> String {
    screen
        .lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?}:\n{screen}"))
        .to_string()
}

/// In the diff pane (right of the queue), the line above the first that holds `needle`.
fn above(screen: &str, needle: &str) -> String {
    let lines: Vec<&str> = screen
        .lines()
        .map(|l| {
            l.split_once("┃│")
                .or_else(|| l.split_once("│┃"))
                .or_else(|| l.split_once("││"))
                .map_or(l, |(_, diff)| diff)
        })
        .collect();
    let at = lines
        .iter()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?}:\n{screen}"));
    lines[at.saturating_sub(1)].to_string()
}

/// Risk in sight: an agent's lazy snippet that writes a new function over one whose name it
/// never writes deletes six lines it does not show, and says so on its queue row and on the
/// line above its hunk; its next edit, which leaves a parse error, says `⚠ syntax` on its
/// row and the warning above the hunk that holds it.
#[test]
fn unseen_deletions_and_syntax_errors_show_on_the_row_and_above_their_hunks() {
    let p = Project::new();
    let mut lib = "fn head() -> u8 {\n    1\n}\n\nfn print(x: u32) -> u32 {\n    let a = x;\n    \
                   step_one(a);\n    step_two(a);\n    step_three(a);\n    finish_alpha(a)\n}\n"
        .to_string();
    for k in 0..6 {
        lib += &format!("\nfn helper_{k}() -> u32 {{\n    let x = {k};\n    x + 1\n}}\n");
    }
    p.write("src/lib.rs", &lib);
    let (tmux, mcp_url, token) = gate_in_tmux(&p);
    let snippet = "fn head() -> u8 {\n    1\n}\n\nfn println(x: u32) -> u32 {\n    let b = x;\n    \
                   run_all(b);\n    finish_line(b)\n}\n\nfn helper_0() -> u32 {\n\
                   // ... existing code ...\n";
    let v = call_tool(
        &mcp_url,
        &token,
        "fast_apply",
        serde_json::json!({"path": "src/lib.rs", "edit_snippet": snippet}),
    );
    assert_eq!(v["status"], "pending", "{v}");
    assert!(
        v["warnings"]
            .to_string()
            .contains("unseen: 6 lines deleted that the edit does not show (5–10)"),
        "{v}"
    );
    let screen = tmux.wait_for("the lazy edit's review", 30, |s| {
        s.contains("hunk 1/1") && s.contains("step_three")
    });
    let row = above(&screen, "hunk 1/1");
    assert!(
        row.contains("⚠ unseen: 6 lines deleted that the edit does not show"),
        "{screen}"
    );
    assert!(
        line_with(&screen, "src/lib.rs +4 -6").contains("⚠ 6 unseen"),
        "{screen}"
    );

    // The next edit names what it deletes, and drops the last function's closing brace.
    let v = start_tool(
        &mcp_url,
        &token,
        serde_json::json!({
            "target_file": "src/lib.rs",
            "search_content": "    x + 1\n}\n",
            "replace_content": "    x + 2\n",
            "start_line": 38
        }),
    );
    assert_eq!(v["status"], "pending", "{v}");
    // (The queue draws the new row on its next refresh: a key sent before it moves nothing.)
    tmux.wait_for("the broken edit's row", 30, |s| {
        s.contains("Queue · 2 pending")
    });
    tmux.keys(&["j"]);
    let screen = tmux.wait_for("the broken edit's review", 30, |s| {
        s.contains("patch_file ·") && s.contains("x + 2")
    });
    assert!(
        above(&screen, "hunk 1/1").contains("⚠ syntax: "),
        "{screen}"
    );
    let row = line_with(&screen, "src/lib.rs +1 -2");
    assert!(
        row.contains("⚠ syntax") && !row.contains("unseen"),
        "{screen}"
    );
    assert_eq!(p.read("src/lib.rs"), lib);
}

/// A partly accepted review stays in view, showing what was written (not "select to load"
/// until the next key).
#[test]
fn a_partly_accepted_review_stays_in_view_with_what_was_written() {
    let p = Project::new();
    let dir = tempfile::tempdir().unwrap();
    let old: String = (1..=40).map(|i| format!("line {i}\n")).collect();
    let new = old
        .replace("line 2\n", "line two\n")
        .replace("line 20\n", "line twenty\n")
        .replace("line 38\n", "line thirty-eight\n");
    p.write("a.txt", &old);
    let patch = similar::TextDiff::from_lines(old.as_str(), new.as_str())
        .unified_diff()
        .header("a/a.txt", "b/a.txt")
        .to_string();
    let tmux = apply_in_tmux(&p, dir.path(), &patch, (140, 40), &[], &[]);
    tmux.wait_for("the three hunks", 30, |s| s.contains("hunk 3/3"));
    tmux.keys(&["n", "n", "Space"]);
    tmux.wait_for("hunk 3 excluded", 10, |s| s.contains("2 of 3 included"));
    tmux.keys(&["a"]);
    let screen = tmux.wait_for("the decided review, still in view", 10, |s| {
        s.contains("applied") && s.contains("hunk 2/2")
    });
    assert!(!screen.contains("select to load"), "{screen}");
    assert!(screen.contains("line twenty"), "{screen}");
    assert!(!screen.contains("thirty-eight"), "{screen}");
    assert_eq!(
        p.read("a.txt"),
        new.replace("line thirty-eight\n", "line 38\n")
    );
}

/// An agent's call that fails is a failed row with the whole answer the agent got, which the
/// "open" filter hides.
#[test]
fn a_failed_agent_call_is_a_failed_row_with_its_whole_message() {
    let p = Project::new();
    p.write("a.txt", "alpha\nbeta\ngamma\n");
    let (tmux, mcp_url, token) = gate_in_tmux(&p);
    let answer = start_tool(
        &mcp_url,
        &token,
        serde_json::json!({
            "target_file": "a.txt",
            "search_content": "delta epsilon",
            "replace_content": "zeta"
        }),
    );
    assert_eq!(answer["code"], "NO_MATCH", "{answer}");
    let screen = tmux.wait_for("the failed row and its message", 30, |s| {
        s.contains("patch_file") && s.contains("This call failed") && s.contains("NO_MATCH:")
    });
    assert!(screen.contains("failed"), "{screen}");
    assert!(screen.contains("a.txt"), "{screen}");
    // The "open" filter hides it.
    tmux.keys(&["f"]);
    tmux.wait_for("the open filter", 10, |s| s.contains("no open reviews"));
    assert_eq!(p.read("a.txt"), "alpha\nbeta\ngamma\n");
}

/// `POST /api/tools/patch_file` with `arguments` as the client `script` (the agents' token of
/// the gate whose MCP endpoint is `mcp_url`): the envelope, at once.
fn start_tool(mcp_url: &str, token: &str, arguments: Value) -> Value {
    call_tool(mcp_url, token, "patch_file", arguments)
}

/// `POST /api/tools/TOOL` as [`start_tool`] does.
pub(crate) fn call_tool(mcp_url: &str, token: &str, tool: &str, arguments: Value) -> Value {
    let base = mcp_url.trim_end_matches("/mcp").to_string();
    let _ = rustls::crypto::ring::default_provider().install_default();
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async {
            reqwest::Client::new()
                .post(format!("{base}/api/tools/{tool}"))
                .bearer_auth(token)
                .json(&serde_json::json!({"arguments": arguments, "client": "script"}))
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap()
        })
}

/// A revision: the person rejects an edit with a note, the same client sends another; its
/// row says `v2` and the note it answers, and `i` shows the interdiff (from what the rejected
/// edit proposed) in place of the diff (from the file), then the diff again.
#[test]
fn a_revision_shows_v2_and_its_note_and_i_toggles_its_interdiff() {
    let p = Project::new();
    let main = "fn main() {\n    let total = compute();\n    println!(\"{total}\");\n}\n";
    p.write("src/main.rs", main);
    let (tmux, mcp_url, token) = gate_in_tmux(&p);
    let edit = |to: &str| {
        let v = start_tool(
            &mcp_url,
            &token,
            serde_json::json!({
                "target_file": "src/main.rs",
                "search_content": "let total = compute();",
                "replace_content": to
            }),
        );
        assert_eq!(v["status"], "pending", "{v}");
    };
    edit("let total = helper_one();");
    tmux.wait_for("the first edit", 30, |s| {
        s.contains("helper_one") && s.contains("hunk 1/1")
    });
    tmux.keys(&["r"]);
    tmux.wait_for("the note editor", 10, |s| {
        s.contains("a note for the agent")
    });
    tmux.type_shown("use helper_two");
    tmux.keys(&["Enter"]);
    tmux.wait_for("the rejection", 10, |s| {
        s.contains("0 pending") && s.contains("note: use helper_two")
    });

    edit("let total = helper_two();");
    let screen = tmux.wait_for("the revision", 30, |s| {
        s.contains("v2: use helper_two") && s.contains("helper_two()") && s.contains("v2 diff")
    });
    // Its diff starts from the file: the rejected proposal's line is not in it.
    assert!(!screen.contains("helper_one"), "{screen}");
    assert!(screen.contains("answers: use helper_two"), "{screen}");
    tmux.keys(&["i"]);
    tmux.wait_for("the interdiff", 10, |s| {
        s.contains("v2 interdiff")
            && s.contains("-    let total = helper_one();")
            && s.contains("+    let total = helper_two();")
            && !s.contains("compute()")
    });
    tmux.keys(&["i"]);
    tmux.wait_for("the diff again", 10, |s| {
        s.contains("v2 diff") && s.contains("compute()") && !s.contains("helper_one")
    });
    assert_eq!(p.read("src/main.rs"), main);
}

/// Thirty numbered lines, and the patch_file that changes `line 03`, deletes `line 05` and
/// changes `line 25` (two hunks).
fn numbered_and_edit() -> (String, Value) {
    let old: String = (1..=30).map(|i| format!("line {i:02}\n")).collect();
    let edit = serde_json::json!({"target_file": "a.txt", "replacements": [
        {"search_content": "line 03", "replace_content": "line three"},
        {"search_content": "line 04\nline 05\n", "replace_content": "line 04\n"},
        {"search_content": "line 25", "replace_content": "line twenty-five"},
    ]});
    (old, edit)
}

/// `patchgate ARGS --root ROOT` beside the gate (its state directory).
fn cli(p: &Project, args: &[&str]) -> String {
    let out = crate::support::bin()
        .args(args)
        .arg("--root")
        .arg(&p.root)
        .env("PATCHGATE_STATE_DIR", &p.state)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A line left out in line mode: the agent, the review API's row and `patchgate log` are told
/// the diff that was written and the line left out (not the proposal); then an undo from
/// another process (`patchgate undo RUN`) shows on the row.
#[test]
fn a_line_left_out_in_line_mode_is_told_as_written_and_an_undo_elsewhere_shows_on_the_row() {
    let p = Project::new();
    let (old, edit) = numbered_and_edit();
    p.write("a.txt", &old);
    let (tmux, mcp_url, token) = gate_in_tmux(&p);
    let started = start_tool(&mcp_url, &token, edit);
    assert_eq!(started["status"], "pending", "{started}");
    let run = started["run_id"].as_str().unwrap().to_string();
    tmux.wait_for("the review", 30, |s| {
        s.contains("hunk 1/2") && s.contains("a.txt +2 -3")
    });
    // Line mode: `-line 03`, `+line three`, then `-line 05` is left out.
    tmux.keys(&["v"]);
    tmux.wait_for("line mode", 10, |s| s.contains("LINE MODE"));
    tmux.keys(&["j", "j", "Space"]);
    tmux.wait_for("one line left out", 10, |s| s.contains("1 line left out"));
    tmux.keys(&["a"]);
    tmux.wait_for("the decided review", 10, |s| {
        s.contains("0 pending") && s.contains("+2 -2")
    });
    let written = old
        .replace("line 03\n", "line three\n")
        .replace("line 25\n", "line twenty-five\n");
    assert_eq!(p.read("a.txt"), written);

    let r = call_tool(
        &mcp_url,
        &token,
        "await_review",
        serde_json::json!({"run_id": run}),
    );
    assert_eq!(r["status"], "ok", "{r}");
    let diff = r["diff"].as_str().unwrap();
    assert!(
        diff.contains("-line 03\n+line three\n line 04\n line 05\n"),
        "{r}"
    );
    assert!(!diff.contains("-line 05"), "{r}");
    let left_out =
        serde_json::json!([{"path": "a.txt", "hunk": 0, "whole": false, "lines": ["-line 05"]}]);
    assert_eq!(r["left_out"], left_out, "{r}");
    let message = r["message"].as_str().unwrap();
    assert!(
        message.starts_with("Applied to a.txt (+2 -2, 2 hunks)."),
        "{message}"
    );
    assert!(
        message.contains("Re-read the file before the next edit."),
        "{message}"
    );
    let log = cli(&p, &["log"]);
    assert!(log.contains(" a.txt +2 -2"), "{log}");
    assert!(
        log.contains("left out: part of hunk 1 of a.txt\n        -line 05"),
        "{log}"
    );

    // Undone from the command line, by another process: the row follows.
    cli(&p, &["undo", &run]);
    assert_eq!(p.read("a.txt"), old);
    tmux.wait_for("the row undone", 10, |s| {
        s.contains('↶') && s.contains(&format!("{run} · undone"))
    });
}

/// `m` opens the note editor and accepts what is selected with the note: the agent gets the
/// note with the hunk it was given, and what was left out.
#[test]
fn m_accepts_the_included_hunks_with_a_note_for_the_agent() {
    let p = Project::new();
    let (old, edit) = numbered_and_edit();
    p.write("a.txt", &old);
    let (tmux, mcp_url, token) = gate_in_tmux(&p);
    let started = start_tool(&mcp_url, &token, edit);
    let run = started["run_id"].as_str().unwrap().to_string();
    tmux.wait_for("the review", 30, |s| s.contains("hunk 1/2"));
    tmux.keys(&["Space"]);
    tmux.wait_for("hunk 1 excluded", 10, |s| s.contains("1 of 2 included"));
    tmux.keys(&["m"]);
    tmux.wait_for("the note editor of an acceptance", 10, |s| {
        s.contains(&format!("accept {run} (1 hunk): a note for the agent"))
    });
    tmux.type_shown("the first hunk breaks the parser");
    tmux.keys(&["Enter"]);
    tmux.wait_for("the decided review", 10, |s| s.contains("0 pending"));
    assert_eq!(
        p.read("a.txt"),
        old.replace("line 25\n", "line twenty-five\n")
    );

    let r = call_tool(
        &mcp_url,
        &token,
        "await_review",
        serde_json::json!({"run_id": run}),
    );
    assert_eq!(r["status"], "ok", "{r}");
    assert_eq!(
        r["review"]["note"], "the first hunk breaks the parser",
        "{r}"
    );
    assert_eq!(r["review"]["hunks_accepted"], 1, "{r}");
    assert_eq!(
        r["left_out"],
        serde_json::json!([{"path": "a.txt", "hunk": 0, "whole": true,
            "lines": ["-line 03", "+line three", "-line 05"]}]),
        "{r}"
    );
    let message = r["message"].as_str().unwrap();
    assert!(
        message.contains("Reviewer's note: the first hunk breaks the parser"),
        "{message}"
    );
}

/// The tmux driver reads a screen only once it is drawn whole: a frame that reaches the
/// terminal in pieces (the TUI's 1 KiB writes, each a moment apart on a loaded machine) is not
/// read at its first piece, though that piece already shows what is waited for (it once showed
/// the session view's title over the old frame's lines).
#[test]
fn a_wait_reads_the_screen_only_once_it_is_drawn_whole() {
    const PIECES: &str = "import time\n\
        print('TITLE', flush=True)\n\
        for i in range(50):\n    time.sleep(0.02)\n    print(f'row {i}', flush=True)\n\
        print('DRAWN WHOLE', flush=True)\n\
        time.sleep(120)\n";
    let dir = tempfile::tempdir().unwrap();
    let tmux = Tmux::start(
        dir.path(),
        40,
        60,
        &[],
        Path::new("python3"),
        &["-c", PIECES],
    );
    let screen = tmux.wait_for("the title", 30, |s| s.contains("TITLE"));
    assert!(screen.contains("DRAWN WHOLE"), "{screen}");
}
