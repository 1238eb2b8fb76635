//! The user's policy hook (docs/DESIGN.md §4): a program from the user's own config (never a
//! repository's) that hears of each edit — one JSON object on its stdin — and answers
//! `{"action": "auto"|"gate"|"deny", "reason": "…"}` on its stdout. It fails closed: a hook
//! that cannot start, runs past its time (it and its children are killed: it runs in a
//! process group of its own), exits non-zero, or answers anything else leaves the edit
//! waiting for a person, with a warning naming the failure. Everything is bounded: the
//! payload (a long diff is cut, and the payload says so), the answer read, the hooks running
//! at once; it runs on the async runtime (`tokio::process`), never blocking other work.

use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::Semaphore;

use crate::error::{Error, Result};
use crate::workspace::config::HookConfig;

/// The most of an edit's diff the payload carries; past it the diff is cut at a line and
/// the payload's `diff_cut` is true.
pub const MAX_DIFF_BYTES: usize = 256 << 10;

/// The most a hook may answer; more is a failure.
pub const MAX_ANSWER_BYTES: usize = 64 << 10;

/// Hooks running at once; an edit that waits past its hook's time for a turn is gated.
pub const HOOKS_AT_ONCE: usize = 8;

/// The longest time a hook may be given, whatever the config says.
pub const MAX_TIMEOUT_MS: u64 = 60_000;

/// The most of a hook's reason kept (it reaches the agent and the person).
const MAX_REASON_BYTES: usize = 4 << 10;

/// What the hook said of an edit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Write it at once (unless a deny rule, a protected path or a hold says otherwise).
    Auto(String),
    /// A person decides.
    Gate(String),
    /// Refused; the reason goes to the agent.
    Deny(String),
    /// The hook gave no answer: the edit waits for a person, and this says why.
    Failed(String),
}

/// What the hook hears of one edit.
#[derive(Debug, serde::Serialize)]
pub struct Payload<'a> {
    /// The tool the agent called.
    pub tool: &'a str,
    /// The client's name, if it gave one.
    pub client: Option<&'a str>,
    /// The files, relative to the root.
    pub paths: Vec<String>,
    /// The unified diff of the edit (cut at [`MAX_DIFF_BYTES`] when longer).
    pub diff: String,
    /// Whether the diff was cut.
    pub diff_cut: bool,
    /// The diff's whole length in bytes.
    pub diff_bytes: usize,
    /// The edit's warnings (`syntax:`, `unseen:`).
    pub warnings: Vec<String>,
    /// The edit's run id.
    pub run_id: &'a str,
}

impl Payload<'_> {
    /// Cut `diff` to [`MAX_DIFF_BYTES`] at a line's end, noting that it was.
    pub fn bounded_diff(diff: &str) -> (String, bool) {
        if diff.len() <= MAX_DIFF_BYTES {
            return (diff.to_string(), false);
        }
        let mut cut = MAX_DIFF_BYTES;
        while !diff.is_char_boundary(cut) {
            cut -= 1;
        }
        let at = diff[..cut].rfind('\n').map_or(cut, |i| i + 1);
        (diff[..at].to_string(), true)
    }
}

/// The answer a hook must give.
#[derive(Debug, Deserialize)]
struct Answer {
    action: String,
    #[serde(default)]
    reason: Option<String>,
}

/// A configured hook.
#[derive(Debug, Clone)]
pub struct Hook {
    /// The program (absolute, outside the root: [`super::hook_program`]) and its arguments.
    program: std::path::PathBuf,
    command: Vec<String>,
    /// The project root, for the hook's `PATCHGATE_ROOT`.
    root: std::path::PathBuf,
    timeout: Duration,
    turns: Arc<Semaphore>,
}

impl Hook {
    /// The hook of the user's `[hook]` for the project at `root`; an error for an empty
    /// command, or one an agent could rewrite (beneath the root, or a relative path).
    pub fn from_config(c: &HookConfig, root: &std::path::Path) -> Result<Hook> {
        if c.command.first().is_none_or(|p| p.trim().is_empty()) {
            return Err(Error::invalid_input(
                "[hook] command is empty: give the program and its arguments, \
                 command = [\"/path/to/hook\", \"arg\"]",
            ));
        }
        Ok(Hook {
            program: super::hook_program::checked(&c.command, root)?,
            command: c.command.clone(),
            root: root.to_path_buf(),
            timeout: Duration::from_millis(c.timeout_ms.clamp(1, MAX_TIMEOUT_MS)),
            turns: Arc::new(Semaphore::new(HOOKS_AT_ONCE)),
        })
    }

    /// The hook's time.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Run the hook on `payload` and read its verdict, within its time. It runs in its
    /// program's own folder (never the root, where a relative path would reach files an agent
    /// writes), with the root in `PATCHGATE_ROOT`.
    pub async fn judge(&self, payload: &Payload<'_>) -> Verdict {
        let input = match serde_json::to_vec(payload) {
            Ok(v) => v,
            Err(e) => return Verdict::Failed(format!("its input could not be written: {e}")),
        };
        let deadline = tokio::time::Instant::now() + self.timeout;
        let Ok(Ok(_turn)) = tokio::time::timeout_at(deadline, self.turns.acquire()).await else {
            return Verdict::Failed(format!(
                "{HOOKS_AT_ONCE} hooks were running and none ended within {} ms",
                self.timeout.as_millis()
            ));
        };
        let mut cmd = tokio::process::Command::new(&self.program);
        cmd.args(&self.command[1..])
            .current_dir(self.program.parent().unwrap_or(std::path::Path::new("/")))
            .env("PATCHGATE_ROOT", &self.root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        #[cfg(unix)]
        cmd.process_group(0);
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => return Verdict::Failed(format!("it could not start: {e}")),
        };
        // A call dropped while the hook runs (its agent went away) takes the hook's process
        // group with it too.
        let group = Group(child.id());
        let outcome = tokio::time::timeout_at(deadline, talk(&mut child, &input)).await;
        // Whatever happened, nothing it started outlives the verdict.
        drop(group);
        let _ = child.start_kill();
        let _ = child.wait().await;
        match outcome {
            Err(_) => Verdict::Failed(format!(
                "it did not answer within {} ms and was killed",
                self.timeout.as_millis()
            )),
            Ok(Err(why)) => Verdict::Failed(why),
            Ok(Ok(out)) => verdict_of(&out),
        }
    }
}

/// Write `input` to the child's stdin while reading its stdout (at most
/// [`MAX_ANSWER_BYTES`]), then wait for it to exit: its answer, or why there is none.
async fn talk(
    child: &mut tokio::process::Child,
    input: &[u8],
) -> std::result::Result<Vec<u8>, String> {
    let mut stdin = child.stdin.take();
    let stdout = child.stdout.take();
    let write = async {
        if let Some(mut s) = stdin.take() {
            // A hook that does not read its input may close it: that is its business.
            let _ = s.write_all(input).await;
            let _ = s.shutdown().await;
        }
    };
    let read = async {
        let mut out = Vec::new();
        if let Some(s) = stdout {
            let limit = u64::try_from(MAX_ANSWER_BYTES + 1).unwrap_or(u64::MAX);
            s.take(limit)
                .read_to_end(&mut out)
                .await
                .map_err(|e| format!("its answer could not be read: {e}"))?;
        }
        Ok::<_, String>(out)
    };
    let ((), out) = tokio::join!(write, read);
    let out = out?;
    if out.len() > MAX_ANSWER_BYTES {
        return Err(format!(
            "it answered more than {} KiB",
            MAX_ANSWER_BYTES >> 10
        ));
    }
    let status = child
        .wait()
        .await
        .map_err(|e| format!("it could not be waited for: {e}"))?;
    if !status.success() {
        return Err(format!("it exited with {status}"));
    }
    Ok(out)
}

/// The verdict in a hook's answer, or the failure it is.
fn verdict_of(out: &[u8]) -> Verdict {
    let answer: Answer = match serde_json::from_slice(out) {
        Ok(a) => a,
        Err(e) => {
            return Verdict::Failed(format!(
                "its answer is not {{\"action\": \"auto\"|\"gate\"|\"deny\", \"reason\": \"…\"}} ({e})"
            ));
        }
    };
    let mut reason = answer.reason.unwrap_or_default().trim().to_string();
    if reason.len() > MAX_REASON_BYTES {
        let mut cut = MAX_REASON_BYTES;
        while !reason.is_char_boundary(cut) {
            cut -= 1;
        }
        reason.truncate(cut);
        reason.push_str(" …");
    }
    match answer.action.as_str() {
        "auto" => Verdict::Auto(reason),
        "gate" => Verdict::Gate(reason),
        "deny" => Verdict::Deny(reason),
        other => Verdict::Failed(format!(
            "it answered the unknown action {:?} (auto, gate or deny)",
            crate::inert::inert_line(&other.chars().take(64).collect::<String>())
        )),
    }
}

/// The hook's process group, killed when dropped.
struct Group(Option<u32>);

impl Drop for Group {
    fn drop(&mut self) {
        kill_group(self.0);
    }
}

/// Kill the process group the hook leads (its children too).
fn kill_group(leader: Option<u32>) {
    #[cfg(unix)]
    if let Some(pid) = leader
        .and_then(|p| i32::try_from(p).ok())
        .and_then(rustix::process::Pid::from_raw)
    {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
    #[cfg(not(unix))]
    let _ = leader;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_read_strictly() {
        assert_eq!(
            verdict_of(br#"{"action": "deny", "reason": "no"}"#),
            Verdict::Deny("no".into())
        );
        assert_eq!(
            verdict_of(b"{\"action\": \"auto\"}\n"),
            Verdict::Auto(String::new())
        );
        assert!(matches!(verdict_of(b"yes"), Verdict::Failed(_)));
        assert!(matches!(
            verdict_of(br#"{"action": "maybe"}"#),
            Verdict::Failed(w) if w.contains("unknown action")
        ));
        assert!(matches!(verdict_of(b""), Verdict::Failed(_)));
    }

    #[test]
    fn a_long_diff_is_cut_at_a_line() {
        let line = "+ some added line of text\n";
        let diff = line.repeat(MAX_DIFF_BYTES / line.len() + 10);
        let (cut, was) = Payload::bounded_diff(&diff);
        assert!(was);
        assert!(cut.len() <= MAX_DIFF_BYTES && cut.ends_with('\n'));
        assert_eq!(Payload::bounded_diff("+a\n"), ("+a\n".to_string(), false));
    }
}
