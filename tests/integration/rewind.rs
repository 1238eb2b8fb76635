//! The session at a glance and rewind (issue 39 item 2), through the real gate and the real
//! commands: three runs applied under `--policy auto` with a hand edit between them;
//! `log --diff [--since RUN]` shows the runs' changes and not the hand edit; `rewind RUN`
//! takes back RUN and the later runs and keeps the hand edit; a rewind that meets a later
//! change of a run's lines is refused and writes nothing; the TUI's `:session` shows the same
//! diff and its `:rewind` does the same. All or nothing (issue 39, review of item 2): a
//! rewind or undo whose second write fails puts the first file back and journals nothing; a
//! run committed while rewind waits for the locks is rewound too; `log --diff` leaves out a
//! run whose stored copy is gone and shows the rest.

use std::process::Output;

use serde_json::json;

use crate::mcp::{Gate, Project, cli};
use crate::tui::{call_tool, gate_in_tmux_with};

/// The file the runs edit: thirty numbered lines.
fn original() -> String {
    (1..=30).map(|i| format!("line {i}\n")).collect()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Run `line N` → `LINE N` through the gate (applied at once): its run id.
fn run(gate: &Gate, n: usize) -> String {
    run_at(&gate.mcp_url, &gate.token, n)
}

/// [`run`] through the gate at `mcp_url`.
fn run_at(mcp_url: &str, token: &str, n: usize) -> String {
    let answer = call_tool(
        mcp_url,
        token,
        "patch_file",
        json!({"target_file": "a.txt", "search_content": format!("line {n}\n"),
               "replace_content": format!("LINE {n}\n")}),
    );
    assert_eq!(answer["status"], "ok", "{answer}");
    answer["run_id"].as_str().unwrap().to_string()
}

/// Three runs (lines 2, 8 and 14) with a hand edit of line 25 between the first two.
fn three_runs() -> (Project, [String; 3]) {
    let p = Project::new();
    p.write("a.txt", &original());
    let gate = Gate::start(&p, &["--policy", "auto"]);
    let first = run(&gate, 2);
    p.write(
        "a.txt",
        &p.read("a.txt").replace("line 25\n", "by hand 25\n"),
    );
    let second = run(&gate, 8);
    let third = run(&gate, 14);
    drop(gate);
    (p, [first, second, third])
}

#[test]
fn log_diff_shows_what_the_runs_changed_and_not_the_hand_edit_between_them() {
    let (p, [_, second, _]) = three_runs();
    let all = cli(&p, &["log", "--diff"]);
    assert!(all.status.success(), "{}", stderr(&all));
    let text = stdout(&all);
    for change in [
        "-line 2", "+LINE 2", "-line 8", "+LINE 8", "-line 14", "+LINE 14",
    ] {
        assert!(text.contains(change), "{change} in:\n{text}");
    }
    assert!(!text.contains("by hand"), "{text}");
    assert_eq!(text.matches("+++ b/a.txt").count(), 1, "{text}");
    let since = cli(&p, &["log", "--diff", "--since", &second]);
    assert!(since.status.success(), "{}", stderr(&since));
    let text = stdout(&since);
    assert!(
        text.contains("+LINE 8") && text.contains("+LINE 14"),
        "{text}"
    );
    assert!(!text.contains("LINE 2\n"), "{text}");
    assert!(!text.contains("by hand"), "{text}");
    let unknown = cli(&p, &["log", "--diff", "--since", "nosuchrun"]);
    assert_eq!(unknown.status.code(), Some(1), "{}", stderr(&unknown));
}

#[test]
fn rewind_takes_back_a_run_and_every_later_one_and_keeps_the_hand_edit() {
    let (p, [first, second, third]) = three_runs();
    let out = cli(&p, &["rewind", &first]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        p.read("a.txt"),
        original().replace("line 25\n", "by hand 25\n")
    );
    // Newest first, each journaled as undone.
    let said = stdout(&out);
    let at = |r: &str| said.find(r).unwrap_or_else(|| panic!("{r} in {said}"));
    assert!(
        at(&third) < at(&second) && at(&second) < at(&first),
        "{said}"
    );
    let log = stdout(&cli(&p, &["log"]));
    assert_eq!(log.matches("undone").count(), 3, "{log}");
    // Nothing is left to rewind.
    let again = cli(&p, &["rewind", &first]);
    assert_eq!(again.status.code(), Some(1), "{}", stderr(&again));
}

#[test]
fn a_rewind_that_meets_a_later_change_of_a_runs_lines_writes_nothing() {
    let (p, [first, second, _]) = three_runs();
    let touched = p.read("a.txt").replace("LINE 8\n", "by hand 8\n");
    p.write("a.txt", &touched);
    let out = cli(&p, &["rewind", &first]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let why = stderr(&out);
    assert!(why.contains(&format!("run {second}")), "{why}");
    assert!(why.contains("by hand 8") && why.contains("LINE 8"), "{why}");
    assert!(
        why.lines().last().unwrap().contains("FILE_CHANGED"),
        "{why}"
    );
    assert_eq!(p.read("a.txt"), touched);
    let log = stdout(&cli(&p, &["log"]));
    assert!(!log.contains("undone"), "{log}");
}

/// The TUI's `:rewind` on the selected (first) run, asked first (`n` takes nothing back):
/// refused, with an overlay naming the run,
/// while a hand edit sits on a later run's lines; once that is put back, every run is taken
/// back, the hand edit elsewhere kept, and the rows show them undone.
#[test]
fn the_tuis_rewind_takes_back_the_selected_run_and_the_later_ones() {
    let p = Project::new();
    p.write("a.txt", &original());
    let (tmux, mcp_url, token) = gate_in_tmux_with(&p, (140, 40), &["--policy", "auto"]);
    let first = run_at(&mcp_url, &token, 2);
    p.write(
        "a.txt",
        &p.read("a.txt").replace("line 25\n", "by hand 25\n"),
    );
    let second = run_at(&mcp_url, &token, 8);
    run_at(&mcp_url, &token, 14);
    tmux.wait_for("three applied rows", 30, |s| s.matches('✓').count() >= 3);
    let applied = p.read("a.txt");
    p.write("a.txt", &applied.replace("LINE 8\n", "by hand 8\n"));
    tmux.keys(&["g"]);
    tmux.command("rewind");
    // Asked first, as an undo is.
    tmux.wait_for("the question", 30, |s| {
        s.contains("and every later applied run?")
    });
    tmux.keys(&["y"]);
    let screen = tmux.wait_for("the refusal", 30, |s| s.contains("rewind refused"));
    assert!(screen.contains(&format!("run {second}")), "{screen}");
    assert_eq!(p.read("a.txt"), applied.replace("LINE 8\n", "by hand 8\n"));
    tmux.keys(&["Escape"]);
    tmux.wait_for("the overlay closed", 10, |s| {
        !s.contains("╭ rewind refused")
    });
    p.write("a.txt", &applied);
    // `n` takes nothing back.
    tmux.command(&format!("rewind {first}"));
    tmux.wait_for("the question", 30, |s| {
        s.contains(&format!("Take back {first} and"))
    });
    tmux.keys(&["n"]);
    tmux.wait_for("nothing taken back", 30, |s| s.contains("nothing undone"));
    assert_eq!(p.read("a.txt"), applied);
    tmux.command(&format!("rewind {first}"));
    tmux.wait_for("the question", 30, |s| {
        s.contains(&format!("Take back {first} and"))
    });
    tmux.keys(&["y"]);
    tmux.wait_for("the rewind", 30, |s| s.contains("rewound: undid"));
    assert_eq!(
        p.read("a.txt"),
        original().replace("line 25\n", "by hand 25\n")
    );
    tmux.wait_for("three undone rows", 30, |s| s.matches('↶').count() >= 3);
}

/// The TUI's `:session` shows the session's diff: the runs' changes, not the hand edit made
/// between them; `:session RUN` from that run on. Any other key than a scroll closes it.
#[test]
fn the_tuis_session_view_shows_what_the_runs_changed() {
    let p = Project::new();
    p.write("a.txt", &original());
    let (tmux, mcp_url, token) = gate_in_tmux_with(&p, (140, 40), &["--policy", "auto"]);
    run_at(&mcp_url, &token, 2);
    p.write(
        "a.txt",
        &p.read("a.txt").replace("line 25\n", "by hand 25\n"),
    );
    let second = run_at(&mcp_url, &token, 8);
    run_at(&mcp_url, &token, 14);
    tmux.wait_for("three applied rows", 30, |s| s.matches('✓').count() >= 3);
    tmux.command("session");
    let screen = tmux.wait_for("the session's diff", 30, |s| {
        s.contains("the session: what the applied runs changed")
    });
    for change in ["+LINE 2", "+LINE 8", "+LINE 14", "-line 14"] {
        assert!(screen.contains(change), "{change} in:\n{screen}");
    }
    assert!(!screen.contains("by hand"), "{screen}");
    tmux.keys(&["Escape"]);
    tmux.wait_for("the view closed", 10, |s| !s.contains("the session"));
    tmux.command(&format!("session {second}"));
    let screen = tmux.wait_for("the session from the second run", 30, |s| {
        s.contains(&format!("the session from run {second}"))
    });
    assert!(
        screen.contains("+LINE 8") && screen.contains("+LINE 14"),
        "{screen}"
    );
    assert!(!screen.contains("+LINE 2"), "{screen}");
}

/// `patch_file` through the gate (applied at once): `search` → `replace` in `file`, its run id.
fn patch(gate: &Gate, file: &str, search: &str, replace: &str) -> String {
    let answer = call_tool(
        &gate.mcp_url,
        &gate.token,
        "patch_file",
        json!({"target_file": file, "search_content": search, "replace_content": replace}),
    );
    assert_eq!(answer["status"], "ok", "{answer}");
    answer["run_id"].as_str().unwrap().to_string()
}

/// The journal file in the project's state directory (`*.jsonl`, wherever it sits).
fn journal_file(p: &Project) -> std::path::PathBuf {
    fn find(dir: &std::path::Path) -> Option<std::path::PathBuf> {
        for e in std::fs::read_dir(dir).ok()?.flatten() {
            let path = e.path();
            if path.is_dir() {
                if let Some(found) = find(&path) {
                    return Some(found);
                }
            } else if path.extension().is_some_and(|x| x == "jsonl") {
                return Some(path);
            }
        }
        None
    }
    find(&p.state).expect("a journal in the state directory")
}

/// Blocks of 512 bytes the rewinding process may write to one file (`ulimit -f`): the small
/// file's restore fits, the big one's does not (EFBIG, a write refused even to root).
const FSIZE_BLOCKS: usize = 8;

/// [`cli`] with the process's file size limit at [`FSIZE_BLOCKS`] and SIGXFSZ ignored (kept
/// across exec), so a write past the limit fails with EFBIG instead of killing it.
fn cli_limited(p: &Project, args: &[&str]) -> Output {
    std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "trap '' XFSZ; ulimit -f {FSIZE_BLOCKS} && exec \"$0\" \"$@\""
        ))
        .arg(env!("CARGO_BIN_EXE_patchgate"))
        .args(args)
        .arg("--root")
        .arg(&p.root)
        .env(
            "PATCHGATE_CONFIG",
            "/nonexistent/patchgate-test-config.toml",
        )
        .env("PATCHGATE_STATE_DIR", &p.state)
        .output()
        .unwrap()
}

/// A file too big to write under [`FSIZE_BLOCKS`].
fn big() -> String {
    let text: String = (1..=400)
        .map(|i| format!("big line {i:04} {}\n", "x".repeat(40)))
        .collect();
    assert!(text.len() > FSIZE_BLOCKS * 512 * 2);
    text
}

/// A rewind over two files whose second write fails (here over the process's file size
/// limit, as a full disk would) puts the first file back to its exact bytes and mode, writes
/// no `undone` entry and says nothing changed.
#[test]
fn a_rewind_whose_second_write_fails_puts_the_first_file_back() {
    let p = Project::new();
    p.write("a.txt", &original());
    p.write("b.txt", &big());
    let gate = Gate::start(&p, &["--policy", "auto"]);
    let first = patch(&gate, "a.txt", "line 2\n", "LINE 2\n");
    patch(&gate, "b.txt", "big line 0002", "BIG LINE 0002");
    drop(gate);
    a_failed_second_write_puts_the_first_file_back(&p, &["rewind", &first]);
}

/// `log --diff` when the store's cap dropped one run's copy: the other runs' changes, and a
/// note naming the run left out.
#[test]
fn log_diff_leaves_out_a_run_whose_stored_copy_is_gone() {
    let (p, [_, second, _]) = three_runs();
    let journal = journal_file(&p);
    let line = std::fs::read_to_string(&journal)
        .unwrap()
        .lines()
        .find(|l| l.contains(&second))
        .unwrap()
        .to_string();
    let entry: serde_json::Value = serde_json::from_str(&line).unwrap();
    let blob = entry["files"][0]["before_blob"].as_str().unwrap();
    std::fs::remove_file(journal.with_extension("preimages").join(blob)).unwrap();
    let out = cli(&p, &["log", "--diff"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("+LINE 2") && text.contains("+LINE 14"),
        "{text}"
    );
    assert!(!text.contains("+LINE 8"), "{text}");
    let why = stderr(&out);
    assert!(why.contains(&format!("run {second} left out")), "{why}");
}

/// Undo of one run over two files whose second write fails: the first file is put back to its
/// exact bytes and mode and no `undone` entry is written.
#[test]
fn an_undo_whose_second_write_fails_puts_the_first_file_back() {
    let p = Project::new();
    p.write("a.txt", &original());
    p.write("b.txt", &big());
    let gate = Gate::start(&p, &["--policy", "auto"]);
    let answer = call_tool(
        &gate.mcp_url,
        &gate.token,
        "batch_patch_files",
        json!({"patches": [
            {"target_file": "a.txt", "search_content": "line 2\n", "replace_content": "LINE 2\n"},
            {"target_file": "b.txt", "search_content": "big line 0002", "replace_content": "BIG LINE 0002"}
        ]}),
    );
    assert_eq!(answer["status"], "ok", "{answer}");
    let run_id = answer["run_id"].as_str().unwrap().to_string();
    drop(gate);
    a_failed_second_write_puts_the_first_file_back(&p, &["undo", &run_id]);
}

/// `patchgate ARGS` (undo or rewind of runs that wrote `a.txt` and then the big `b.txt`) under
/// a file-size limit that fails the second write: `a.txt` is put back, bytes and mode,
/// `b.txt` and the journal are untouched, and the refusal says nothing changed.
fn a_failed_second_write_puts_the_first_file_back(p: &Project, args: &[&str]) {
    use std::os::unix::fs::PermissionsExt;
    let a = p.root.join("a.txt");
    std::fs::set_permissions(&a, std::fs::Permissions::from_mode(0o600)).unwrap();
    let (a_before, b_before) = (p.read("a.txt"), p.read("b.txt"));
    let journal = std::fs::read(journal_file(p)).unwrap();
    let out = cli_limited(p, args);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let why = stderr(&out);
    assert_eq!(p.read("a.txt"), a_before, "{why}");
    let mode = std::fs::metadata(&a).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "{why}");
    assert_eq!(p.read("b.txt"), b_before);
    assert_eq!(std::fs::read(journal_file(p)).unwrap(), journal);
    assert!(
        why.contains("`b.txt`") && why.contains("nothing changed"),
        "{why}"
    );
}

/// Wait (at most [`WAIT_SECS`]) until process `pid` is blocked on a file lock (`/proc/locks`
/// lists a waiter as `->`).
fn wait_blocked_on_lock(pid: u32) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(WAIT_SECS);
    while std::time::Instant::now() < deadline {
        let locks = std::fs::read_to_string("/proc/locks").unwrap_or_default();
        if locks
            .lines()
            .any(|l| l.contains("->") && l.split_whitespace().any(|w| w == pid.to_string()))
        {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    panic!("process {pid} never waited for the lock");
}

/// How long a test waits for a process to reach a lock.
const WAIT_SECS: u64 = 30;

/// A run committed between rewind's first read of the journal and its locks is one of the runs
/// it takes back, not a hand edit: the journal is read again under the locks. The commit is
/// staged: the second run's journal line is held back while the rewind waits for the file's
/// cross-process lock (held here), then appended before the lock is let go.
#[test]
fn a_run_committed_while_rewind_waits_for_the_locks_is_rewound_too() {
    let p = Project::new();
    p.write("a.txt", &original());
    let gate = Gate::start(&p, &["--policy", "auto"]);
    let first = run(&gate, 2);
    let second = run(&gate, 8);
    drop(gate);
    let journal = journal_file(&p);
    let text = std::fs::read_to_string(&journal).unwrap();
    let (kept, held): (Vec<&str>, Vec<&str>) = text.lines().partition(|l| !l.contains(&second));
    assert_eq!(held.len(), 1, "{text}");
    std::fs::write(
        &journal,
        kept.iter().map(|l| format!("{l}\n")).collect::<String>(),
    )
    .unwrap();
    // The only file edited has the only lock file.
    let lock_path = std::fs::read_dir(p.state.join("locks"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|x| x.extension().is_some_and(|e| e == "lock"))
        .expect("a.txt's lock file");
    let lock = std::fs::OpenOptions::new()
        .write(true)
        .open(&lock_path)
        .unwrap();
    lock.lock().unwrap();
    let child = crate::support::bin()
        .args(["rewind", &first, "--root"])
        .arg(&p.root)
        .env("PATCHGATE_STATE_DIR", &p.state)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_blocked_on_lock(child.id());
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&journal)
        .unwrap();
    std::io::Write::write_all(&mut f, format!("{}\n", held[0]).as_bytes()).unwrap();
    drop(f);
    lock.unlock().unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(p.read("a.txt"), original(), "{}", stdout(&out));
    let said = stdout(&out);
    assert!(said.contains(&second) && said.contains(&first), "{said}");
}
