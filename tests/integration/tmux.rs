//! A real terminal for the TUI tests: a private tmux server (its own socket in a temporary
//! directory), one session, capture-pane to read the screen and send-keys to type.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

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

    /// Wait until the screen satisfies `pred`; panics with the last screen after `secs`.
    pub(crate) fn wait_for(&self, what: &str, secs: u64, pred: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            let s = self.screen();
            if pred(&s) {
                return s;
            }
            assert!(
                Instant::now() < deadline,
                "waited {secs} s for {what}; the screen:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Press keys (tmux names: `Space`, `Enter`, `Escape`, `q`).
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
