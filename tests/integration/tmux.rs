//! A real terminal for the TUI tests: a private tmux server (its own socket in a temporary
//! directory), one session, capture-pane to read the screen and send-keys to type.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// How long a screen must stay unchanged to be read as drawn whole.
const SETTLE: Duration = Duration::from_millis(100);
/// The pause between two captures of the screen.
const POLL: Duration = Duration::from_millis(50);
/// What the command line shows while empty (its placeholder's start).
const COMMAND_HINT: &str = "commit RUN_ID | undo";
/// What the search line shows while empty.
const SEARCH_HINT: &str = "search the diff";

pub(crate) struct Tmux {
    socket: PathBuf,
}

impl Tmux {
    /// Start `program args` with `envs` in a detached `width` × `height` session.
    pub(crate) fn start(
        dir: &Path,
        width: u16,
        height: u16,
        envs: &[(&str, &str)],
        program: &Path,
        args: &[&str],
    ) -> Tmux {
        let t = Tmux {
            socket: dir.join("tmux.sock"),
        };
        let mut cmd = vec![
            "new-session".to_string(),
            "-d".into(),
            "-s".into(),
            "pg".into(),
            "-x".into(),
            width.to_string(),
            "-y".into(),
            height.to_string(),
            "--".into(),
            "env".into(),
        ];
        cmd.extend(envs.iter().map(|(k, v)| format!("{k}={v}")));
        cmd.push(program.display().to_string());
        cmd.extend(args.iter().map(std::string::ToString::to_string));
        let out = t.run(&cmd.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(
            out.status.success(),
            "tmux new-session failed (is tmux installed? .ci/run installs it): {}",
            String::from_utf8_lossy(&out.stderr)
        );
        // Keep the pane after the program exits, so a crash leaves its last screen to read.
        t.run(&["set-option", "-t", "pg", "remain-on-exit", "on"]);
        t
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .arg("-f")
            .arg("/dev/null")
            .args(args)
            .output()
            .expect("run tmux (is it installed? .ci/run installs it)")
    }

    /// The screen as text.
    pub(crate) fn screen(&self) -> String {
        let out = self.run(&["capture-pane", "-p", "-t", "pg"]);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The screen with its colours and attributes as escape sequences.
    pub(crate) fn screen_styled(&self) -> String {
        let out = self.run(&["capture-pane", "-p", "-e", "-t", "pg"]);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Wait until the screen satisfies `pred` and is drawn whole; panics with the last screen
    /// after `secs`. Drawn whole: the same on every capture for [`SETTLE`]. The TUI writes a
    /// frame to the terminal in pieces (the standard output's 1 KiB buffer), so a capture can
    /// land between two of them (a loaded machine makes it likely): a new overlay's title over
    /// the old frame's lines, a row half drawn. Such a screen changes again at once.
    pub(crate) fn wait_for(&self, what: &str, secs: u64, pred: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(secs);
        // The screen that last satisfied `pred`, and since when it has stayed so.
        let mut steady: Option<(String, Instant)> = None;
        loop {
            let s = self.screen();
            if !pred(&s) {
                steady = None;
            } else if let Some((last, since)) = &steady
                && *last == s
            {
                if since.elapsed() >= SETTLE {
                    return s;
                }
            } else {
                steady = Some((s.clone(), Instant::now()));
            }
            assert!(
                Instant::now() < deadline,
                "waited {secs} s for {what} (drawn whole); the screen:\n{s}"
            );
            std::thread::sleep(POLL);
        }
    }

    /// Press keys (tmux names: `Space`, `Enter`, `Escape`, `q`). Keys reach the TUI in order,
    /// but one that changes its state (opens a line, an overlay) is best followed by a wait for
    /// that state before the keys meant for it: see [`Tmux::command`].
    pub(crate) fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "pg"];
        args.extend_from_slice(keys);
        assert!(self.run(&args).status.success());
    }

    /// Type text literally.
    pub(crate) fn type_text(&self, text: &str) {
        assert!(
            self.run(&["send-keys", "-t", "pg", "-l", text])
                .status
                .success()
        );
    }

    /// Type `text` into the open input whose screen line starts with `prefix` (the note editor
    /// is not one line: use `type_shown`) and wait for it to show there, then press Enter.
    fn enter_line(&self, prefix: &str, text: &str) {
        self.type_text(text);
        let line = format!("{prefix}{text}");
        self.wait_for(&format!("`{line}` typed"), 10, |s| {
            s.lines().any(|l| l.starts_with(&line))
        });
        self.keys(&["Enter"]);
    }

    /// Run `text` on the TUI's command line: `:` opens it, waited for (its hint shown), the
    /// text typed and waited for (echoed after the `:`), then Enter.
    pub(crate) fn command(&self, text: &str) {
        self.keys(&[":"]);
        self.wait_for("the command line", 10, |s| s.contains(COMMAND_HINT));
        self.enter_line(":", text);
    }

    /// Search the diff for `text`: `/` opens the search line, waited for, the text typed and
    /// waited for, then Enter.
    pub(crate) fn search(&self, text: &str) {
        self.keys(&["/"]);
        self.wait_for("the search line", 10, |s| s.contains(SEARCH_HINT));
        self.enter_line("/", text);
    }

    /// Type `text` into an open editor (a note's, or a program's) and wait until it shows, on
    /// one line (a text the editor wraps is waited for word by word by its test); the keys
    /// after it then act on what was typed.
    pub(crate) fn type_shown(&self, text: &str) {
        self.type_text(text);
        self.wait_for(&format!("`{text}` typed"), 10, |s| s.contains(text));
    }

    /// Whether the program in the pane has exited.
    pub(crate) fn exited(&self) -> bool {
        let out = self.run(&["display-message", "-p", "-t", "pg", "#{pane_dead}"]);
        String::from_utf8_lossy(&out.stdout).trim() == "1"
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
    }
}
