//! A queue a person can read (issue 39 item 5), in a real terminal (tmux): rows that show
//! each file's name whole at 80 and 200 columns, failed rows with root-relative paths and no
//! counts, the focus marker, the selection of a newly pending review, line mode ending with a
//! decision, and a note editor that wraps.

use serde_json::{Value, json};

use crate::mcp::Project;
use crate::tmux::Tmux;
use crate::tui::{call_tool, gate_in_tmux, gate_in_tmux_sized};

/// A directory deep enough that its path never fits a queue row.
const DEEP: &str = "src/very/long/directory/structure/for/testing";

/// The queue pane's rows: the screen's lines cut at the queue's right border.
fn queue_rows(screen: &str) -> Vec<String> {
    screen
        .lines()
        .map(|l| {
            let cells: Vec<char> = l.chars().collect();
            let end = cells
                .iter()
                .skip(1)
                .position(|&c| c == '│' || c == '┃')
                .map_or(cells.len(), |k| k + 1);
            cells[..end].iter().collect()
        })
        .collect()
}

/// The queue row (second line of an item) that shows `needle`.
fn row_with(screen: &str, needle: &str) -> String {
    queue_rows(screen)
        .into_iter()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no queue row shows {needle:?}; the screen:\n{screen}"))
}

/// Three rows: a pending edit of a deeply placed file, a pending batch of two, and a failed
/// call that named its file by its absolute path.
fn three_rows(p: &Project, mcp_url: &str, token: &str) {
    for f in ["printer.rs", "lib.rs", "main.rs"] {
        p.write(&format!("{DEEP}/{f}"), "fn a() {}\nfn b() {}\n");
    }
    p.write("notes.txt", "alpha\n");
    let one = call_tool(
        mcp_url,
        token,
        "patch_file",
        json!({"target_file": format!("{DEEP}/printer.rs"),
               "search_content": "fn a() {}", "replace_content": "fn a() { 1 }"}),
    );
    assert_eq!(one["status"], "pending", "{one}");
    let patches: Vec<Value> = ["lib.rs", "main.rs"]
        .iter()
        .map(|f| {
            json!({"target_file": format!("{DEEP}/{f}"),
                   "search_content": "fn b() {}", "replace_content": "fn b() { 2 }"})
        })
        .collect();
    let batch = call_tool(
        mcp_url,
        token,
        "batch_patch_files",
        json!({ "patches": patches }),
    );
    assert_eq!(batch["status"], "pending", "{batch}");
    let failed = call_tool(
        mcp_url,
        token,
        "patch_file",
        json!({"target_file": p.root.join("notes.txt").display().to_string(),
               "search_content": "no such line", "replace_content": "x"}),
    );
    assert_eq!(failed["code"], "NO_MATCH", "{failed}");
}

/// The rows at 80 and at 200 columns: a file's name is whole and its path cut on the left,
/// a batch names its files, a failed call's path is relative to the root and it shows no
/// counts, in its row or under its diff pane.
#[test]
fn queue_rows_show_each_file_name_whole_at_80_and_200_columns() {
    for (width, height) in [(80u16, 24u16), (200, 40)] {
        let p = Project::new();
        let (tmux, mcp_url, token) = gate_in_tmux_sized(&p, width, height);
        three_rows(&p, &mcp_url, &token);
        let screen = tmux.wait_for("three rows", 30, |s| {
            ["printer.rs +1 -1", "+2 -2", "notes.txt"]
                .iter()
                .all(|row| queue_rows(s).iter().any(|l| l.contains(row)))
        });
        let one = row_with(&screen, "printer.rs");
        assert!(one.contains("…/"), "{width}: {one}\n{screen}");
        assert!(
            one.contains("…/printer.rs +1 -1") || one.contains("/testing/printer.rs +1 -1"),
            "{width}: {one}"
        );
        if width >= 200 {
            assert!(one.contains("/testing/printer.rs +1 -1"), "{one}");
        }
        let batch = row_with(&screen, "lib.rs");
        assert!(
            batch.contains("lib.rs, main.rs +2 -2") || batch.contains("lib.rs +1 file +2 -2"),
            "{width}: {batch}"
        );
        if width >= 200 {
            assert!(batch.contains("lib.rs, main.rs"), "{batch}");
        }
        let failed = row_with(&screen, "notes.txt");
        assert!(!failed.contains(&p.root.display().to_string()), "{failed}");
        assert!(
            failed
                .trim_start_matches(['│', '┃', ' '])
                .starts_with("notes.txt"),
            "{failed}"
        );
        assert!(!failed.contains("+0 -0"), "{width}: {failed}");
        // Its diff pane: the failure, and no hunk to count under it.
        tmux.keys(&["G"]);
        let shown = tmux.wait_for("the failed call's message", 10, |s| {
            s.contains("This call failed")
        });
        assert!(!shown.contains("hunk 0/0"), "{shown}");
        assert!(!shown.contains("0 of 0"), "{shown}");
        tmux.keys(&["q"]);
    }
}

/// The pane keys go to says so without colour: a heavy border and `▶` before its title;
/// Tab moves both to the other pane.
#[test]
fn the_pane_keys_go_to_is_marked_and_tab_moves_the_mark() {
    let p = Project::new();
    p.write("a.txt", "alpha\n");
    let (tmux, mcp_url, token) = gate_in_tmux(&p);
    start_edit(&mcp_url, &token, "a.txt", "alpha", "beta");
    let screen = tmux.wait_for("the review", 30, |s| s.contains("a.txt +1 -1"));
    assert!(screen.contains("┏▶ Queue"), "{screen}");
    assert!(!screen.contains("▶ patch_file ·"), "{screen}");
    tmux.keys(&["Tab"]);
    let screen = tmux.wait_for("the diff pane focused", 10, |s| {
        s.contains("┏▶ patch_file ·")
    });
    assert!(!screen.contains("▶ Queue"), "{screen}");
    assert!(screen.contains("╭ Queue"), "{screen}");
}

/// `patch_file` on `file` replacing `from` by `to`, started over the tool route: its envelope.
fn start_edit(mcp_url: &str, token: &str, file: &str, from: &str, to: &str) -> Value {
    call_tool(
        mcp_url,
        token,
        "patch_file",
        json!({"target_file": file, "search_content": from, "replace_content": to}),
    )
}

/// The diff pane's title line (the screen's first line, past the queue).
fn diff_title(tmux: &Tmux) -> String {
    title_of(&tmux.screen())
}

/// The title line of `screen`.
fn title_of(screen: &str) -> String {
    screen.lines().next().unwrap_or_default().to_string()
}

/// A dry run the agent commits becomes pending: while the person reads a decided review
/// (there is no other pending one) it is selected.
#[test]
fn a_newly_pending_review_is_selected_while_the_person_reads_a_decided_one() {
    let p = Project::new();
    p.write("a.txt", "alpha\n");
    p.write("b.txt", "bravo\n");
    let (tmux, mcp_url, token) = gate_in_tmux(&p);
    let first = start_edit(&mcp_url, &token, "a.txt", "alpha", "beta");
    let first_id = first["run_id"].as_str().unwrap().to_string();
    tmux.wait_for("the first review", 30, |s| s.contains("a.txt +1 -1"));
    tmux.keys(&["a"]);
    tmux.wait_for("it applied, in view", 30, |s| {
        title_of(s).contains(&format!("{first_id} · applied"))
    });
    let dry = call_tool(
        &mcp_url,
        &token,
        "patch_file",
        json!({"target_file": "b.txt", "search_content": "bravo", "replace_content": "charlie",
               "dry_run": true}),
    );
    let dry_id = dry["run_id"].as_str().unwrap().to_string();
    tmux.wait_for("the dry run's row", 30, |s| s.contains("b.txt +1 -1"));
    // The person still reads the applied one.
    assert!(diff_title(&tmux).contains(&first_id), "{}", tmux.screen());
    let committed = call_tool(
        &mcp_url,
        &token,
        "apply_last_dry_run",
        json!({ "run_id": dry_id }),
    );
    assert_eq!(committed["status"], "pending", "{committed}");
    tmux.wait_for("the committed dry run selected", 30, |s| {
        title_of(s).contains(&format!("{dry_id} · pending"))
    });
}

/// Line mode ends with a decision: the decided review stays in view without it.
#[test]
fn a_decision_ends_line_mode() {
    let p = Project::new();
    p.write("a.txt", "alpha\nbravo\n");
    let (tmux, mcp_url, token) = gate_in_tmux(&p);
    start_edit(&mcp_url, &token, "a.txt", "alpha", "ALPHA");
    tmux.wait_for("the review", 30, |s| s.contains("a.txt +1 -1"));
    tmux.keys(&["v"]);
    tmux.wait_for("line mode", 10, |s| s.contains("LINE MODE"));
    tmux.keys(&["a"]);
    // The screen the wait saw: the one that shows the decision.
    let screen = tmux.wait_for("the acceptance", 30, |s| title_of(s).contains("applied"));
    assert!(!screen.contains("LINE MODE"), "{screen}");
    assert_eq!(p.read("a.txt"), "ALPHA\nbravo\n");
}

/// The note editor wraps a long note at its edge instead of scrolling it out of sight.
#[test]
fn the_note_editor_wraps_a_long_note() {
    let p = Project::new();
    p.write("a.txt", "alpha\n");
    let (tmux, mcp_url, token) = gate_in_tmux_sized(&p, 100, 30);
    start_edit(&mcp_url, &token, "a.txt", "alpha", "beta");
    tmux.wait_for("the review", 30, |s| s.contains("a.txt +1 -1"));
    tmux.keys(&["r"]);
    tmux.wait_for("the note editor", 10, |s| {
        s.contains("a note for the agent")
    });
    let words: Vec<String> = (1..=30).map(|i| format!("word{i:02}")).collect();
    tmux.type_text(&words.join(" "));
    // Every word in sight, the first and the last on different lines.
    let screen = tmux.wait_for("the whole note", 10, |s| {
        words.iter().all(|w| s.contains(w.as_str()))
    });
    let line_of = |w: &str| screen.lines().position(|l| l.contains(w));
    assert!(line_of("word01") < line_of("word30"), "{screen}");
}
