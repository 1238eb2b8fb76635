//! `patchgate apply` in the TUI (a real terminal, tmux) with a file that does not apply: it
//! is a row that says why, `W` writes its `.rej` file as `apply --yes --reject` does, and no
//! key asks for a note for an agent (there is none).

use crate::mcp::Project;
use crate::tui::apply_then_its_status;

/// Old and new a.txt: the file that applies.
const A: (&str, &str) = ("alpha 1\nalpha 2\nalpha 3\n", "alpha 1\nALPHA 2\nalpha 3\n");

/// b.txt on disk; the patch expects other lines, so its one hunk does not apply.
const B: &str = "bravo 1\nbravo 2\nbravo 3\n";

const PATCH: &str = "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n alpha 1\n-alpha 2\n+ALPHA 2\n alpha 3\n\
    --- a/b.txt\n+++ b/b.txt\n@@ -1,3 +1,3 @@\n charlie 1\n-charlie 2\n+CHARLIE 2\n charlie 3\n";

/// The `.rej` file `apply --yes --reject` writes for [`PATCH`] on a fresh project.
fn rej_of_the_command_line() -> String {
    let p = Project::new();
    p.write("a.txt", A.0);
    p.write("b.txt", B);
    let patch = p.state.join("fix.patch");
    std::fs::write(&patch, PATCH).unwrap();
    let out = crate::support::bin()
        .args(["apply", "--yes", "--reject", "--root"])
        .arg(&p.root)
        .arg(&patch)
        .env("PATCHGATE_STATE_DIR", &p.state)
        .env("PATCHGATE_LOG", p.state.join("log"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    std::fs::read_to_string(p.root.join("b.txt.rej")).unwrap()
}

#[test]
fn a_file_that_does_not_apply_is_a_row_that_says_why_and_w_writes_its_rej() {
    let p = Project::new();
    p.write("a.txt", A.0);
    p.write("b.txt", B);
    let tmux = apply_then_its_status(&p, &p.state, "fix.patch", PATCH, (140, 36));
    let screen = tmux.wait_for("a.txt's review and b.txt's row", 30, |s| {
        s.contains("1 pending") && s.contains("ALPHA 2") && s.contains("does not apply:")
    });
    // Its row names it and says why; the key hints speak of .rej files, not of notes.
    let row = screen
        .lines()
        .position(|l| l.contains("does not apply:"))
        .unwrap();
    let under = screen.lines().nth(row + 1).unwrap_or_default();
    assert!(under.contains("b.txt"), "{screen}");
    assert!(
        screen.contains("b.txt does not apply (its row says why)"),
        "{screen}"
    );
    // Selected, its pane says why in whole; the key hints (back once a key is pressed) speak
    // of .rej files, not of notes. (Waited for together: a frame may be caught half drawn.)
    tmux.keys(&["j"]);
    let screen = tmux.wait_for("why b.txt does not apply, and the key hints", 10, |s| {
        s.contains("This file of the patch does not apply")
            && s.contains("hunk 1 of 1")
            && s.contains("W write .rej")
    });
    assert!(screen.contains("hunk 1 of 1 `@@ -1,3 +1,3 @@`"), "{screen}");
    assert!(!screen.contains("failed"), "{screen}");
    assert!(!screen.contains("note"), "{screen}");
    tmux.keys(&["W"]);
    tmux.wait_for("the .rej written", 10, |s| s.contains("wrote b.txt.rej"));
    assert_eq!(
        std::fs::read_to_string(p.root.join("b.txt.rej")).unwrap(),
        rej_of_the_command_line()
    );
    assert_eq!(p.read("b.txt"), B);
    // Back on a.txt: no note for an agent, with `m` or `r`; `r` drops the change at once.
    tmux.keys(&["g", "m"]);
    tmux.wait_for("m offers no note", 10, |s| s.contains("a accepts"));
    tmux.keys(&["r"]);
    let screen = tmux.wait_for("a.txt rejected", 10, |s| s.contains("0 pending"));
    assert!(!screen.contains("a note for the agent"), "{screen}");
    assert!(!screen.contains("the agent reads"), "{screen}");
    tmux.keys(&["q"]);
    let screen = tmux.wait_for("the summary", 10, |s| s.contains("EXIT="));
    for line in [
        "a.txt: rejected",
        "b.txt: not applied (does not apply)",
        "wrote  b.txt.rej",
        "0 of 2 files applied",
        "EXIT=1",
    ] {
        assert!(screen.contains(line), "no {line:?}:\n{screen}");
    }
    assert_eq!(p.read("a.txt"), A.0);
}
