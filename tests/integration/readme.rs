//! The README tells the truth: every command of its shell blocks runs as written, in order, on
//! a fresh copy of the repository's `assets/` with a home of its own (the built binary is
//! `patchgate` on `PATH`), with the exit status the README gives it (`# exit N`, else 0).
//! A block that cannot run here (it installs, or starts a TUI that runs until `q`) is on
//! [`SKIP`] word for word with the reason; any other block whose commands are not all on the
//! allow-list ([`runnable`]) fails the test, so a new block cannot dodge it. The README stays
//! at most [`MAX_LINES`] lines, every figure it quotes is one that `scripts/figures.sh` wrote
//! to `docs/figures.md`, and every relative link of the README and of `docs/*.md` names a file
//! of the repository.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The README's length limit (issue 36: "at most 250 lines").
const MAX_LINES: usize = 250;

/// How long one block may run before it counts as blocked.
const BLOCK_TIMEOUT: Duration = Duration::from_secs(120);

/// The fewest commands the test must run: fewer means the README or the parser lost them.
const MIN_RUN: usize = 10;

/// Blocks that are not run: their commands (comments stripped, one per line), and why.
const SKIP: &[(&str, &str)] = &[
    (
        "cargo install --locked --path .\ncargo install --locked --path . --features lang-all",
        "installs into ~/.cargo/bin and builds for minutes",
    ),
    (
        "patchgate demo",
        "the TUI runs until `q` (tests/integration/tui.rs drives the demo in tmux)",
    ),
    (
        "cd ~/code/your-project\npatchgate",
        "the gate and its TUI run until `q` (tests/integration/tui.rs drives it in tmux)",
    ),
    ("cargo test --locked", "the test suite itself"),
];

/// Fence languages that hold shell commands.
const SHELL_LANGS: &[&str] = &["sh", "bash", "console", "shell", "zsh"];

/// `patchgate` subcommands that finish on their own, need no network and write only under
/// the working directory, `--root` or the (temporary) home.
const SAFE_SUBCOMMANDS: &[&str] = &[
    "merge",
    "log",
    "undo",
    "config",
    "doctor",
    "search",
    "man",
    "completions",
    "help",
    "--help",
    "--version",
];

/// Other programs a block may run to set up its files.
const SAFE_PROGRAMS: &[&str] = &["cp", "mkdir", "cd", "ls", "cat"];

/// One command of a shell block.
struct Cmd {
    /// The README's line number (1-based) of its first line.
    line: usize,
    /// The command, continuation lines joined, comment stripped.
    text: String,
    /// The exit status the README gives it.
    status: i32,
}

/// One fenced shell block.
struct Block {
    line: usize,
    cmds: Vec<Cmd>,
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `line` up to its first `#` outside quotes, and that comment.
fn split_comment(line: &str) -> (&str, &str) {
    let mut quote = None;
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), _) if c == q => quote = None,
            (None, '#') if i == 0 || line[..i].ends_with(char::is_whitespace) => {
                return (&line[..i], &line[i..]);
            }
            _ => {}
        }
    }
    (line, "")
}

/// The exit status a comment gives (`# exit 1: refused`), else 0.
fn expected_status(comment: &str) -> i32 {
    comment
        .split("exit ")
        .nth(1)
        .and_then(|rest| {
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            digits.parse().ok()
        })
        .unwrap_or(0)
}

/// The commands of one block's lines (`first` is the line number of `lines[0]`).
fn commands(lang: &str, lines: &[&str], first: usize) -> Vec<Cmd> {
    let mut cmds: Vec<Cmd> = Vec::new();
    let mut pending: Option<Cmd> = None;
    for (k, raw) in lines.iter().enumerate() {
        let raw = if lang == "console" {
            match raw.strip_prefix("$ ") {
                Some(c) => c,
                None if pending.is_some() => raw,
                None => continue, // output shown after a prompt
            }
        } else {
            raw
        };
        let (code, comment) = split_comment(raw);
        let code = code.trim_end();
        let (code, continues) = match code.strip_suffix('\\') {
            Some(c) => (c.trim_end(), true),
            None => (code, false),
        };
        let cmd = pending.get_or_insert_with(|| Cmd {
            line: first + k,
            text: String::new(),
            status: 0,
        });
        if !cmd.text.is_empty() && !code.trim().is_empty() {
            cmd.text.push(' ');
        }
        cmd.text.push_str(code.trim());
        cmd.status = cmd.status.max(expected_status(comment));
        if !continues {
            let done = pending.take().expect("a command in progress");
            if !done.text.is_empty() {
                cmds.push(done);
            }
        }
    }
    assert!(
        pending.is_none(),
        "README line {first}: a block ends in a continuation"
    );
    cmds
}

/// The README's shell blocks; every fence must name its language.
fn blocks(readme: &str) -> Vec<Block> {
    let lines: Vec<&str> = readme.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(lang) = lines[i].trim_start().strip_prefix("```") else {
            i += 1;
            continue;
        };
        let lang = lang.trim().to_string();
        let start = i + 1;
        let mut end = start;
        while end < lines.len() && lines[end].trim_start() != "```" {
            end += 1;
        }
        assert!(end < lines.len(), "README line {}: unclosed fence", i + 1);
        assert!(
            !lang.is_empty(),
            "README line {}: a fence without a language (say `sh`, `toml`, `text`…)",
            i + 1
        );
        if SHELL_LANGS.contains(&lang.as_str()) {
            let cmds = commands(&lang, &lines[start..end], start + 1);
            out.push(Block { line: i + 1, cmds });
        }
        i = end + 1;
    }
    out
}

/// One `&&`-joined part of a command: a `patchgate` subcommand that is safe here, a setup
/// program, or `NAME=$(mktemp -d)`.
fn part_runnable(part: &str) -> bool {
    let words: Vec<&str> = part.split_whitespace().collect();
    match words.as_slice() {
        ["patchgate", "apply", rest @ ..] => rest.iter().any(|w| *w == "--check" || *w == "--yes"),
        ["patchgate", sub, ..] => SAFE_SUBCOMMANDS.contains(sub),
        [program, ..] if SAFE_PROGRAMS.contains(program) => true,
        [assign, "-d)"] => assign.split_once('=').is_some_and(|(name, value)| {
            !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && value == "$(mktemp"
        }),
        _ => false,
    }
}

/// Whether the test may run `cmd` as written.
fn runnable(cmd: &str) -> bool {
    !cmd.contains(['|', ';', '>', '<', '`']) && cmd.split("&&").all(|p| part_runnable(p.trim()))
}

/// The sandbox: a copy of `assets/` to run in, a home, a temp directory and `patchgate` on
/// `PATH`.
struct Sandbox {
    _dir: tempfile::TempDir,
    work: PathBuf,
    home: PathBuf,
    tmp: PathBuf,
    path: String,
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

fn sandbox() -> Sandbox {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("clone");
    copy_tree(&repo().join("assets"), &work.join("assets"));
    let home = dir.path().join("home");
    let tmp = dir.path().join("tmp");
    let bin = dir.path().join("bin");
    for d in [&home, &tmp, &bin] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_patchgate"), bin.join("patchgate")).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    Sandbox {
        _dir: dir,
        work,
        home,
        tmp,
        path,
    }
}

/// A bash script that runs `block`'s commands in order and stops at the first whose exit
/// status is not the README's.
fn script(block: &Block) -> String {
    let mut s = String::from("set -u -o pipefail\n");
    for c in &block.cmds {
        s.push_str(&format!(
            "{{ {text}\n}}; rc=$?\nif [ \"$rc\" -ne {want} ]; then echo \"README line {line}: \
             exit status $rc, the README says {want}: {shown}\" >&2; exit 101; fi\n",
            text = c.text,
            want = c.status,
            line = c.line,
            shown = c.text.replace(['"', '$', '`', '\\'], "'"),
        ));
    }
    s
}

/// Run one block in the sandbox; panics with its output when a command's status is wrong
/// or it does not finish.
fn run_block(sb: &Sandbox, block: &Block) {
    let mut child = Command::new("bash")
        .arg("-c")
        .arg(script(block))
        .current_dir(&sb.work)
        .env("HOME", &sb.home)
        .env("TMPDIR", &sb.tmp)
        .env("PATH", &sb.path)
        .env("NO_COLOR", "1")
        .env_remove("PATCHGATE_CONFIG")
        .env_remove("PATCHGATE_STATE_DIR")
        .env_remove("PATCHGATE_LOG")
        .env_remove("PATCHGATE_TOKEN")
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_STATE_HOME")
        .env_remove("XDG_RUNTIME_DIR")
        .env_remove("CODEX_HOME")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run bash");
    let deadline = Instant::now() + BLOCK_TIMEOUT;
    while child.try_wait().expect("wait for bash").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "README line {}: the block did not finish in {BLOCK_TIMEOUT:?}",
                block.line
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().expect("the block's output");
    assert!(
        out.status.success(),
        "README line {}: the block failed\n--- stdout\n{}\n--- stderr\n{}",
        block.line,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn readme() -> String {
    std::fs::read_to_string(repo().join("README.md")).expect("README.md")
}

#[test]
fn the_readme_is_at_most_250_lines() {
    let n = readme().lines().count();
    assert!(
        n <= MAX_LINES,
        "README.md has {n} lines, more than {MAX_LINES}: move reference material into docs/"
    );
}

#[test]
fn every_shell_block_of_the_readme_runs_as_written_or_is_skipped_with_a_reason() {
    let text = readme();
    let sb = sandbox();
    let mut used = vec![false; SKIP.len()];
    let mut ran = 0;
    for block in blocks(&text) {
        let joined: Vec<&str> = block.cmds.iter().map(|c| c.text.as_str()).collect();
        let joined = joined.join("\n");
        if let Some(k) = SKIP.iter().position(|(cmds, _)| *cmds == joined) {
            used[k] = true;
            continue;
        }
        for c in &block.cmds {
            assert!(
                runnable(&c.text),
                "README line {}: `{}` is neither on the allow-list of commands this test runs \
                 nor in a block on its skip-list (tests/integration/readme.rs SKIP)",
                c.line,
                c.text
            );
        }
        run_block(&sb, &block);
        ran += block.cmds.len();
    }
    for (k, (cmds, why)) in SKIP.iter().enumerate() {
        assert!(
            used[k],
            "the skip-list names a block the README no longer has ({why}):\n{cmds}"
        );
    }
    assert!(ran >= MIN_RUN, "only {ran} of the README's commands ran");
}

/// The figures quoted in the README (`12.5%`, `3.40 ms`, `30.3 MB`).
fn figures(text: &str) -> Vec<String> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let starts = b[i].is_ascii_digit() && (i == 0 || !b[i - 1].is_ascii_alphanumeric());
        if !starts {
            i += 1;
            continue;
        }
        let mut j = i;
        while j < b.len() && (b[j].is_ascii_digit() || b[j] == b'.') {
            j += 1;
        }
        let number = text[i..j].trim_end_matches('.');
        let rest = &text[i + number.len()..];
        for unit in ["%", " ms", " MB"] {
            if rest.starts_with(unit) {
                out.push(format!("{number}{unit}"));
            }
        }
        i = j;
    }
    out
}

#[test]
fn every_figure_the_readme_quotes_comes_from_docs_figures() {
    let text = readme();
    let generated = std::fs::read_to_string(repo().join("docs/figures.md"))
        .expect("docs/figures.md, written by scripts/figures.sh");
    assert!(
        generated.contains("scripts/figures.sh") && generated.contains("| machine |"),
        "docs/figures.md names neither its script nor its machine"
    );
    let quoted = figures(&text);
    assert!(quoted.len() >= 5, "the README quotes only {quoted:?}");
    for f in quoted {
        assert!(
            generated.contains(&f),
            "the README quotes {f}, which docs/figures.md does not have: run \
             scripts/figures.sh and quote what it wrote"
        );
    }
}

/// The relative link targets of markdown `text`: `](target)` with no scheme, the `#anchor`
/// cut off.
fn relative_links(text: &str) -> Vec<&str> {
    text.match_indices("](")
        .filter_map(|(at, _)| {
            let rest = &text[at + 2..];
            let target = &rest[..rest.find(')')?];
            let target = target.split('#').next().unwrap_or_default();
            (!target.is_empty() && !target.contains("://")).then_some(target)
        })
        .collect()
}

#[test]
fn every_relative_link_of_the_readme_and_docs_names_a_file() {
    let root = repo();
    let mut pages = vec![root.join("README.md")];
    for e in std::fs::read_dir(root.join("docs")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "md") {
            pages.push(p);
        }
    }
    let mut checked = 0;
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap();
        let dir = page.parent().expect("a page's directory");
        for target in relative_links(&text) {
            assert!(
                dir.join(target).exists(),
                "{} links to {target}, which does not exist",
                page.strip_prefix(&root).unwrap_or(page).display()
            );
            checked += 1;
        }
    }
    assert!(checked >= 20, "only {checked} links found");
}
