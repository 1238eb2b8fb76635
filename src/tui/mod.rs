//! The review TUI (docs/DESIGN.md §6): a queue of reviews on the left, the selected review's diff on
//! the right, decisions by key. Elm-style: [`model`] holds the state, [`update`] is a pure
//! function of the state and a message that returns effects, [`view`] draws; this module is
//! the runtime that feeds terminal input, gate changes and effect results in as messages,
//! runs the effects, and draws.

pub mod backend;
mod columns;
pub mod highlight;
pub mod keymap;
pub mod marks;
pub mod model;
mod rowpath;
pub mod rows;
pub mod rulechoice;
pub mod update;
pub mod view;

#[cfg(test)]
mod frames;

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime};

use crossterm::event::{self, DisableMouseCapture, EnableMouseCapture, Event as TermEvent};
use tokio::sync::mpsc;

use backend::{Backend, Change};
use highlight::{Highlighter, Side};
use model::Model;
use rows::Row;
use update::{Effect, Msg, update};

/// What the runtime hears.
enum Input {
    Msg(Msg),
    /// Highlighting progressed: draw again.
    Redraw,
}

/// How a TUI session ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ended {
    /// Reviews still pending when the person left.
    pub pending: usize,
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Whether colours are allowed (`NO_COLOR` unset or empty).
pub(crate) fn color_allowed() -> bool {
    match COLOR.load(Ordering::SeqCst) {
        1 => true,
        2 => false,
        _ => std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
    }
}

/// `--color`: 0 auto (unless `NO_COLOR`), 1 always, 2 never.
static COLOR: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// Choose colours: `Some(true)` always, `Some(false)` never, `None` unless `NO_COLOR` is set.
pub fn set_color(choice: Option<bool>) {
    let v = match choice {
        None => 0,
        Some(true) => 1,
        Some(false) => 2,
    };
    COLOR.store(v, Ordering::SeqCst);
    // The terminal library obeys NO_COLOR on its own; a choice overrides it there too.
    if let Some(on) = choice {
        crossterm::style::force_color_output(on);
    }
}

/// Ask the highlighter for the selected review's files, and tell it where the view stands.
fn feed_highlighter(m: &Model, hl: &Highlighter) {
    let Some(item) = m.current() else {
        return;
    };
    let Some(v) = &item.view else {
        return;
    };
    let run_id = &item.summary.run_id;
    for (fi, f) in v.files.iter().enumerate() {
        for (side, text, skip) in [
            (Side::Old, &f.content.old, f.content.created),
            (Side::New, &f.content.new, f.content.deleted),
        ] {
            if !skip {
                hl.request(
                    (run_id.clone(), fi, side),
                    &f.content.path,
                    Arc::from(text.as_str()),
                );
            }
        }
    }
    // The first line on screen of each file.
    for row in v.rows.iter().skip(v.scroll).take(m.diff_height()) {
        if let Row::Line {
            file, hunk, line, ..
        }
        | Row::Same { file, hunk, line } = *row
        {
            let l = &v.files[file].diff.hunks[hunk].lines[line];
            if let Some(n) = l.new_index {
                hl.want(&(run_id.clone(), file, Side::New), n);
            }
            if let Some(o) = l.old_index {
                hl.want(&(run_id.clone(), file, Side::Old), o);
            }
            break;
        }
    }
}

struct RemoveOnDrop(std::path::PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Write the bell and an OSC 9 desktop notification.
fn notify(text: &str) {
    let clean: String = text.chars().filter(|c| !c.is_control()).take(200).collect();
    let mut out = std::io::stdout();
    let _ = write!(out, "\x07\x1b]9;patchgate: {clean}\x07");
    let _ = out.flush();
}

/// Set while another program (an editor) has the terminal: the input thread reads nothing.
static INPUT_PAUSED: AtomicBool = AtomicBool::new(false);
/// Set by the input thread while it is paused and out of the terminal.
static INPUT_IDLE: AtomicBool = AtomicBool::new(false);
/// Set when the screen must be drawn whole again.
static REDRAW_ALL: AtomicBool = AtomicBool::new(false);

/// The input thread: terminal events to the session, polled in short steps so that it can
/// stand aside (read nothing at all) while an editor runs.
fn read_input(tx: &mpsc::UnboundedSender<Input>) {
    loop {
        if INPUT_PAUSED.load(Ordering::SeqCst) {
            INPUT_IDLE.store(true, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(10));
            continue;
        }
        INPUT_IDLE.store(false, Ordering::SeqCst);
        match event::poll(Duration::from_millis(50)) {
            Ok(true) => {}
            Ok(false) => continue,
            Err(_) => break,
        }
        let msg = match event::read() {
            Ok(TermEvent::Key(k)) if k.kind != event::KeyEventKind::Release => Msg::Key(k),
            Ok(TermEvent::Mouse(me)) => Msg::Mouse(me),
            Ok(TermEvent::Resize(w, h)) => Msg::Resize(w, h),
            Ok(_) => continue,
            Err(_) => break,
        };
        if tx.send(Input::Msg(msg)).is_err() {
            break;
        }
    }
}

/// Hand the terminal to another program: the input thread stands aside first (so no key
/// meant for the program is taken), and the screen is drawn whole once it is back.
fn with_terminal_handed_over<T>(run: impl FnOnce() -> T) -> T {
    INPUT_PAUSED.store(true, Ordering::SeqCst);
    let deadline = std::time::Instant::now() + Duration::from_millis(500);
    while !INPUT_IDLE.load(Ordering::SeqCst) && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    let _ = crossterm::execute!(std::io::stdout(), DisableMouseCapture);
    ratatui::restore();
    let out = run();
    let _ = ratatui::try_init();
    let _ = crossterm::execute!(std::io::stdout(), EnableMouseCapture);
    REDRAW_ALL.store(true, Ordering::SeqCst);
    INPUT_PAUSED.store(false, Ordering::SeqCst);
    out
}

/// Edit `content` in `$VISUAL`/`$EDITOR` (default `vi`) with the terminal handed over, at
/// line `line` (from 0) for the editors known to take `+LINE`.
fn external_edit(path: &str, content: &str, line: usize) -> Result<Option<String>, String> {
    let editor = std::env::var("VISUAL")
        .or_else(|_| std::env::var("EDITOR"))
        .unwrap_or_else(|_| "vi".into());
    let name = path.rsplit('/').next().unwrap_or("proposal");
    let file = std::env::temp_dir().join(format!(
        "patchgate-{}-{}-{name}",
        std::process::id(),
        now_secs()
    ));
    std::fs::write(&file, content).map_err(|e| e.to_string())?;
    let _cleanup = RemoveOnDrop(file.clone());
    let mut parts = editor.split_whitespace();
    let program = parts.next().unwrap_or("vi");
    let status = with_terminal_handed_over(|| {
        std::process::Command::new(program)
            .args(parts)
            .args(at_line(program, line))
            .arg(&file)
            .status()
    });
    let status = status.map_err(|e| format!("cannot run {editor}: {e}"))?;
    if !status.success() {
        return Err(format!("{editor} exited with {status}; nothing accepted"));
    }
    let edited = std::fs::read_to_string(&file).map_err(|e| e.to_string())?;
    Ok((edited != content).then_some(edited))
}

/// The argument that opens `program` at `line` (from 0): `+LINE` for the editors that take it
/// (vi and its kin, nano, emacs, micro, kakoune, joe, ne), nothing for the others.
fn at_line(program: &str, line: usize) -> Option<String> {
    const TAKE_PLUS: &[&str] = &[
        "vi",
        "vim",
        "nvim",
        "view",
        "ex",
        "nano",
        "pico",
        "emacs",
        "emacsclient",
        "micro",
        "kak",
        "joe",
        "ne",
        "mg",
        "jed",
    ];
    let name = program.rsplit(['/', '\\']).next().unwrap_or(program);
    TAKE_PLUS.contains(&name).then(|| format!("+{}", line + 1))
}

/// Run `work` with the backend off the TUI's loop; the message it ends with comes back on
/// `tx`.
fn spawn_msg<F, Fut>(backend: &Backend, tx: &mpsc::UnboundedSender<Input>, work: F)
where
    F: FnOnce(Backend) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = Msg> + Send + 'static,
{
    let (b, tx) = (backend.clone(), tx.clone());
    tokio::spawn(async move {
        let msg = work(b).await;
        let _ = tx.send(Input::Msg(msg));
    });
}

fn run_effect(
    effect: Effect,
    backend: &Backend,
    tx: &mpsc::UnboundedSender<Input>,
) -> Option<Ended> {
    let send = |m: Msg| {
        let _ = tx.send(Input::Msg(m));
    };
    match effect {
        Effect::LoadFiles(run_id) => spawn_msg(backend, tx, |b| async move {
            let result = b.files(&run_id).await;
            Msg::Files { run_id, result }
        }),
        Effect::Decide {
            run_id,
            decision,
            note,
        } => spawn_msg(backend, tx, |b| async move {
            Msg::Done(b.decide(&run_id, decision, note).await)
        }),
        Effect::Commit(run_id) => spawn_msg(backend, tx, |b| async move {
            Msg::Done(b.commit(&run_id).await)
        }),
        Effect::Undo(run_id) => {
            spawn_msg(
                backend,
                tx,
                |b| async move { Msg::Undone(b.undo(run_id).await) },
            )
        }
        Effect::SessionDiff(since) => spawn_msg(backend, tx, |b| async move {
            let r = b.session_diff(since.clone()).await;
            Msg::Session(since, r)
        }),
        Effect::Rewind(run_id) => spawn_msg(backend, tx, |b| async move {
            Msg::Rewound(b.rewind(run_id).await)
        }),
        Effect::ListRules => spawn_msg(backend, tx, |b| async move { Msg::Rules(b.rules().await) }),
        Effect::AddRule(rule) => {
            spawn_msg(
                backend,
                tx,
                |b| async move { Msg::Done(b.add_rule(rule).await) },
            );
        }
        Effect::ExternalEdit {
            run_id,
            path,
            content,
            line,
        } => match external_edit(&path, &content, line) {
            Ok(Some(edited)) => {
                run_effect(
                    Effect::Decide {
                        run_id,
                        decision: crate::review::proposal::Decision::AcceptEdited(edited),
                        note: None,
                    },
                    backend,
                    tx,
                );
            }
            Ok(None) => send(Msg::Done(Err(
                "the content is unchanged; nothing accepted".into()
            ))),
            Err(e) => send(Msg::Done(Err(e))),
        },
        Effect::WriteRejects => spawn_msg(backend, tx, |b| async move {
            Msg::Done(b.write_rejects().await)
        }),
        Effect::Notify(text) => notify(&text),
        Effect::Quit { reviewers_gone } => {
            // (A patch's reviews have no one waiting: they stay pending, not decided.)
            if reviewers_gone
                && backend.answers_agents()
                && let Some(gate) = backend.gate()
            {
                gate.reviewer_gone();
            }
            return Some(Ended { pending: 0 });
        }
    }
    None
}

/// Run the TUI until the person quits. `side` receives a sender for status messages from
/// companions (the demo agent).
pub async fn run(
    backend: Backend,
    companion: Option<Box<dyn FnOnce(mpsc::UnboundedSender<Msg>) + Send>>,
) -> std::io::Result<Ended> {
    let mut terminal = ratatui::try_init()?;
    let _ = crossterm::execute!(std::io::stdout(), EnableMouseCapture);
    let result = session(&mut terminal, backend, companion).await;
    let _ = crossterm::execute!(std::io::stdout(), DisableMouseCapture);
    ratatui::restore();
    result
}

/// What feeds the loop besides the person: terminal input (on its own thread: crossterm's
/// read blocks), the gate's changes, and the clock with the gate's facts.
fn spawn_feeds(tx: &mpsc::UnboundedSender<Input>, backend: &Backend) -> std::io::Result<()> {
    // Terminal input on its own thread (crossterm's read blocks).
    {
        let tx = tx.clone();
        std::thread::Builder::new()
            .name("input".into())
            .spawn(move || read_input(&tx))?;
    }
    // Gate changes.
    {
        let mut changes = backend.watch();
        let tx = tx.clone();
        tokio::spawn(async move {
            while let Some(c) = changes.recv().await {
                if tx.send(Input::Msg(Msg::Change(c))).is_err() {
                    break;
                }
            }
        });
    }
    // The clock and the gate's facts.
    {
        let tx = tx.clone();
        let b = backend.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(1));
            let mut n: u64 = 0;
            loop {
                tick.tick().await;
                if tx.send(Input::Msg(Msg::Tick(now_secs()))).is_err() {
                    break;
                }
                if n.is_multiple_of(3)
                    && let Ok(info) = b.info().await
                    && tx.send(Input::Msg(Msg::Info(info))).is_err()
                {
                    break;
                }
                n += 1;
            }
        });
    }
    Ok(())
}

async fn session(
    terminal: &mut ratatui::DefaultTerminal,
    backend: Backend,
    companion: Option<Box<dyn FnOnce(mpsc::UnboundedSender<Msg>) + Send>>,
) -> std::io::Result<Ended> {
    let size = terminal.size()?;
    let mut m = Model::new(size.width, size.height, color_allowed());
    m.now = now_secs();
    let (tx, mut rx) = mpsc::unbounded_channel::<Input>();

    spawn_feeds(&tx, &backend)?;
    let hl = {
        let tx = tx.clone();
        Highlighter::new(move || {
            let _ = tx.send(Input::Redraw);
        })
    };
    if let Some(start) = companion {
        let (ctx, mut crx) = mpsc::unbounded_channel::<Msg>();
        let tx = tx.clone();
        tokio::spawn(async move {
            while let Some(msg) = crx.recv().await {
                if tx.send(Input::Msg(msg)).is_err() {
                    break;
                }
            }
        });
        start(ctx);
    }

    // The first frame at once; the list arrives right after.
    terminal.draw(|f| view::draw(f, &m, &hl))?;
    match backend.list().await {
        Ok(list) => {
            for e in update(&mut m, Msg::Change(Change::Resync(list))) {
                run_effect(e, &backend, &tx);
            }
        }
        Err(e) => {
            update(&mut m, Msg::Done(Err(format!("cannot list reviews: {e}"))));
        }
    }
    if let Ok(info) = backend.info().await {
        update(&mut m, Msg::Info(info));
    }

    let mut known = m.items.len();
    loop {
        feed_highlighter(&m, &hl);
        // Another program had the screen (an editor): draw all of it again.
        if REDRAW_ALL.swap(false, Ordering::SeqCst) {
            terminal.clear()?;
        }
        if m.color {
            terminal.draw(|f| view::draw(f, &m, &hl))?;
        } else {
            terminal.draw(|f| view::draw(f, &m, &view::Plain))?;
        }
        let Some(first) = rx.recv().await else {
            break;
        };
        // Take everything queued before drawing again.
        let mut batch = vec![first];
        while let Ok(more) = rx.try_recv() {
            batch.push(more);
        }
        for input in batch {
            let Input::Msg(msg) = input else { continue };
            for effect in update(&mut m, msg) {
                if let Some(mut ended) = run_effect(effect, &backend, &tx) {
                    ended.pending = m.pending_count();
                    return Ok(ended);
                }
            }
        }
        if m.quit {
            break;
        }
        if m.items.len() < known {
            // Reviews the gate forgot: forget their highlighting too.
            let keep: Vec<String> = m.items.iter().map(|i| i.summary.run_id.clone()).collect();
            hl.retain(&keep);
        }
        known = m.items.len();
    }
    Ok(Ended {
        pending: m.pending_count(),
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn editors_that_take_a_line_get_it() {
        assert_eq!(super::at_line("vim", 19).as_deref(), Some("+20"));
        assert_eq!(super::at_line("/usr/bin/nano", 0).as_deref(), Some("+1"));
        assert_eq!(super::at_line("code", 4), None);
    }
}
