//! `update`: the TUI's state transitions. A pure function of the model and one message that
//! returns the effects to run (decisions, loads, notifications); no terminal, no runtime, so
//! every key and event is unit-tested.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::Rect;
use ratatui_textarea::TextArea;

use super::backend::{Change, StatusInfo};
use super::keymap::{self, Action, Reviewing};
use super::marks;
use super::model::{DiffView, Focus, ITEM_HEIGHT, Item, Model, Overlay, Tone};
use super::rows::{DiffMode, FileView, Row};
use super::rulechoice::{RuleChoice, Step};
use crate::review::all_or_none;
use crate::review::proposal::{Decision, FileContent, State};
use crate::review::queue::Summary;

/// Something that happened.
#[derive(Debug, Clone)]
pub enum Msg {
    /// A key.
    Key(KeyEvent),
    /// The mouse.
    Mouse(MouseEvent),
    /// The terminal's new size.
    Resize(u16, u16),
    /// The gate's queue changed.
    Change(Change),
    /// A review's files arrived.
    Files {
        /// The review.
        run_id: String,
        /// Its files, or why not.
        result: Result<Vec<FileContent>, String>,
    },
    /// An effect finished: what to tell the person.
    Done(Result<String, String>),
    /// An undo finished: the run undone and what to say, or why not.
    Undone(Result<(String, String), String>),
    /// A rewind ended: what to say, or why nothing was written.
    Rewound(Result<String, String>),
    /// The session's diff from a run (`None`: every applied run), or why there is none.
    Session(Option<String>, Result<String, String>),
    /// Every rule, as lines to read (`:rules`), or why not.
    Rules(Result<String, String>),
    /// The gate's facts.
    Info(StatusInfo),
    /// The clock (seconds since the epoch).
    Tick(u64),
}

/// Work for the runtime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Fetch a review's files.
    LoadFiles(String),
    /// Decide a review.
    Decide {
        /// The review.
        run_id: String,
        /// The decision.
        decision: Decision,
        /// A note for the agent.
        note: Option<String>,
    },
    /// Commit a dry-run.
    Commit(String),
    /// Undo an applied edit: `run_id`, or the latest one.
    Undo(Option<String>),
    /// Take back a run and every later one (docs/DESIGN.md §4).
    Rewind(String),
    /// Add a path rule (docs/DESIGN.md §4, `POST /api/rules`).
    AddRule(crate::review::rules::NewRule),
    /// Fetch every rule and where it comes from (`:rules`).
    ListRules,
    /// Fetch the session's diff from a run on (`None`: every applied run).
    SessionDiff(Option<String>),
    /// Edit content in `$EDITOR`, then accept it.
    ExternalEdit {
        /// The review.
        run_id: String,
        /// The file (for the temp file's name).
        path: String,
        /// The content to start from.
        content: String,
        /// The line (from 0) of the change to open at.
        line: usize,
    },
    /// Write the patch's hunks that do not apply to `FILE.rej` files (`patchgate apply`).
    WriteRejects,
    /// Ring the bell and send a desktop notification.
    Notify(String),
    /// Leave; `reviewers_gone` when pending reviews must be answered REVIEWER_GONE.
    Quit {
        /// Pending reviews were left.
        reviewers_gone: bool,
    },
}

fn say(m: &mut Model, text: impl Into<String>, tone: Tone) {
    m.status = Some((text.into(), tone));
}

fn input(title: &str) -> TextArea<'static> {
    let mut t = TextArea::default();
    t.set_placeholder_text(title.to_string());
    t
}

/// The note editor: an input whose long lines wrap at the popup's edge (at a word, or
/// within one too long for a line) instead of scrolling out of sight.
fn note_input(title: &str) -> TextArea<'static> {
    let mut t = input(title);
    t.set_wrap_mode(ratatui_textarea::WrapMode::WordOrGlyph);
    t
}

/// Handle one message.
pub fn update(m: &mut Model, msg: Msg) -> Vec<Effect> {
    match msg {
        Msg::Key(key) => on_key(m, key),
        Msg::Mouse(ev) => on_mouse(m, ev),
        Msg::Resize(w, h) => {
            m.size = Rect::new(0, 0, w, h);
            keep_selection_visible(m);
            Vec::new()
        }
        Msg::Change(c) => on_change(m, c),
        Msg::Files { run_id, result } => {
            let (mode, ws) = (m.mode, m.ignore_ws);
            if let Some(item) = m.items.iter_mut().find(|i| i.summary.run_id == run_id) {
                item.loading = false;
                match result {
                    Ok(files) => {
                        let files = FileView::build(files);
                        item.view = Some(DiffView::new(files, mode, ws, &item.summary));
                    }
                    Err(e) => say(m, format!("cannot load {run_id}: {e}"), Tone::Bad),
                }
            }
            Vec::new()
        }
        Msg::Done(r) => {
            match r {
                Ok(text) => say(m, text, Tone::Good),
                Err(text) => say(m, text, Tone::Bad),
            }
            Vec::new()
        }
        Msg::Undone(r) => {
            match r {
                Ok((run_id, text)) => {
                    if let Some(i) = m.items.iter_mut().find(|i| i.summary.run_id == run_id) {
                        i.summary.undone = true;
                    }
                    say(m, text, Tone::Good);
                }
                // A refusal shows the file's three states: too long for the status line. A
                // file changed since is no reason by itself (the run's own change is taken
                // back from it): the overlay says what stands in the way.
                Err(text) if text.lines().count() > 1 => {
                    say(
                        m,
                        "undo refused: the run's change cannot be taken back from the file as it \
                         is now (Esc closes)",
                        Tone::Bad,
                    );
                    m.overlay = Overlay::Message {
                        title: " undo refused ".into(),
                        text,
                    };
                }
                Err(text) => say(m, text, Tone::Bad),
            }
            Vec::new()
        }
        Msg::Rewound(r) => on_rewound(m, r),
        Msg::Session(since, r) => on_session(m, since, r),
        Msg::Rules(r) => {
            match r {
                Ok(text) => {
                    m.overlay = Overlay::Session {
                        title: " rules (j/k scroll, any other key closes) ".into(),
                        text,
                        scroll: 0,
                    };
                }
                Err(e) => say(m, format!("cannot list the rules: {e}"), Tone::Bad),
            }
            Vec::new()
        }
        Msg::Info(info) => {
            m.info = info;
            Vec::new()
        }
        Msg::Tick(now) => {
            m.now = now;
            // A refused token is the end of this session's news: keep saying so.
            if m.status.is_none()
                && let Some(why) = m.refused.clone()
            {
                say(m, format!("disconnected: {why}"), Tone::Bad);
            }
            Vec::new()
        }
    }
}

/// Select item `idx` (clamped), loading its files when needed.
pub fn select(m: &mut Model, idx: usize) -> Vec<Effect> {
    if m.items.is_empty() {
        m.selected = 0;
        return Vec::new();
    }
    m.selected = idx.min(m.items.len() - 1);
    keep_selection_visible(m);
    let (mode, ws) = (m.mode, m.ignore_ws);
    let item = &mut m.items[m.selected];
    if let Some(v) = item.view.as_mut() {
        v.ensure_rows(mode, ws);
        return Vec::new();
    }
    if item.loading {
        return Vec::new();
    }
    item.loading = true;
    vec![Effect::LoadFiles(item.summary.run_id.clone())]
}

/// Scroll the queue (counted in shown items) so the selected item is on screen.
fn keep_selection_visible(m: &mut Model) {
    let cap = m.queue_capacity();
    let vis = m.visible();
    let at = vis.iter().position(|&i| i == m.selected).unwrap_or(0);
    if at < m.queue_scroll {
        m.queue_scroll = at;
    } else if at >= m.queue_scroll + cap {
        m.queue_scroll = at + 1 - cap;
    }
    m.queue_scroll = m.queue_scroll.min(vis.len().saturating_sub(cap));
}

/// Move the selection `delta` items among those the filter shows (`isize::MIN`: the first,
/// `isize::MAX`: the last).
fn step(m: &mut Model, delta: isize) -> Vec<Effect> {
    let vis = m.visible();
    if vis.is_empty() {
        return Vec::new();
    }
    let at = match vis.iter().position(|&i| i == m.selected) {
        Some(p) => p.saturating_add_signed(delta).min(vis.len() - 1),
        // The selection is filtered out: the nearest shown item.
        None => vis
            .iter()
            .position(|&i| i > m.selected)
            .unwrap_or(vis.len() - 1),
    };
    select(m, vis[at])
}

/// `f`: the next queue filter; the selection moves to a shown item if it is hidden.
fn cycle_filter(m: &mut Model) -> Vec<Effect> {
    m.filter = m.filter.next();
    let vis = m.visible();
    say(
        m,
        format!("queue: {} reviews ({} shown)", m.filter.name(), vis.len()),
        Tone::Info,
    );
    m.queue_scroll = 0;
    if vis.contains(&m.selected) || vis.is_empty() {
        keep_selection_visible(m);
        return Vec::new();
    }
    step(m, 0)
}

/// The next pending review after `from` (wrapping), if any.
fn next_pending(m: &Model, from: usize) -> Option<usize> {
    let n = m.items.len();
    (1..=n)
        .map(|k| (from + k) % n)
        .find(|&i| m.items[i].summary.state == State::Pending)
}

fn on_change(m: &mut Model, c: Change) -> Vec<Effect> {
    match c {
        Change::Upsert(s) => upsert(m, *s),
        Change::Resync(list) => {
            let selected = m.current().map(|i| i.summary.run_id.clone());
            let mut old: Vec<Item> = std::mem::take(&mut m.items);
            m.items = list
                .into_iter()
                .map(|s| {
                    match old
                        .iter()
                        .position(|i| i.summary.run_id == s.run_id && i.summary.diff == s.diff)
                    {
                        Some(k) => {
                            let mut item = old.swap_remove(k);
                            item.summary = s;
                            if let Some(v) = item.view.as_mut() {
                                v.mark(&item.summary);
                            }
                            item
                        }
                        None => Item::new(s),
                    }
                })
                .collect();
            let idx = selected
                .and_then(|id| m.items.iter().position(|i| i.summary.run_id == id))
                .or_else(|| next_pending(m, m.items.len().saturating_sub(1)))
                .unwrap_or(0);
            select(m, idx)
        }
        Change::Lost(e) => {
            say(m, format!("connection lost: {e} (retrying)"), Tone::Bad);
            Vec::new()
        }
        Change::Moved(url) => {
            say(
                m,
                format!("the gate restarted: attached to it again at {url}"),
                Tone::Info,
            );
            Vec::new()
        }
        Change::Refused(why) => {
            say(m, format!("disconnected: {why}"), Tone::Bad);
            m.refused = Some(why);
            Vec::new()
        }
    }
}

fn upsert(m: &mut Model, s: Summary) -> Vec<Effect> {
    let mut effects = Vec::new();
    match m.items.iter().position(|i| i.summary.run_id == s.run_id) {
        Some(k) => {
            let was_open = m.items[k].is_open();
            let was_pending = m.items[k].summary.state == State::Pending;
            let item = &mut m.items[k];
            if item.summary.diff != s.diff {
                // Rebased (or what was written differs from the proposal): reload.
                item.view = None;
                item.loading = false;
            }
            item.summary = s;
            if let Some(v) = item.view.as_mut() {
                v.mark(&item.summary);
            }
            let closed_now = was_open && !m.items[k].is_open();
            if closed_now && let Some(v) = m.items[k].view.as_mut() {
                // A decision ends line mode: the lines were chosen for it.
                v.line_cursor = None;
            }
            let pending_now = !was_pending && m.items[k].summary.state == State::Pending;
            if pending_now && !looking_at_pending(m) {
                // A newly pending review (a dry run committed) is selected when the person is
                // not looking at another one.
                effects.extend(select(m, k));
            } else if k == m.selected {
                if closed_now {
                    // Selection follows the work: on to the next pending review; with none,
                    // the decided one stays in view (reloaded when what was written differs
                    // from the proposal: a partial accept, an edit).
                    let next = next_pending(m, k).unwrap_or(k);
                    effects.extend(select(m, next));
                } else {
                    effects.extend(select(m, k));
                }
            }
        }
        None => {
            let pending = s.state == State::Pending;
            let what = format!(
                "{} wants to change {}",
                s.client.as_deref().unwrap_or("an agent"),
                s.paths.join(", ")
            );
            m.items.push(Item::new(s));
            let selected_open = looking_at_pending(m) && m.items.len() > 1;
            // A patch's files are no news to the person who opened it.
            if pending && m.reviewing() == Reviewing::Agents {
                effects.push(Effect::Notify(what));
            }
            if m.items.len() == 1 || (pending && !selected_open) {
                effects.extend(select(m, m.items.len() - 1));
            }
        }
    }
    effects
}

/// Whether the selected review is a pending one (the person is reading what waits).
fn looking_at_pending(m: &Model) -> bool {
    m.current()
        .is_some_and(|i| i.summary.state == State::Pending)
}

fn scroll_by(m: &mut Model, delta: isize) {
    let height = m.diff_height();
    let Some(item) = m.current_mut() else {
        return;
    };
    if let Some((at, text)) = item.interdiff_shown() {
        // The notes above it take half the pane at most: its last line can always be seen.
        let max = text
            .lines()
            .count()
            .saturating_sub(height.div_ceil(2).max(1));
        item.interdiff = Some((at as isize).saturating_add(delta).clamp(0, max as isize) as usize);
        return;
    }
    if let Some(v) = item.view.as_mut() {
        let max = v.rows.len().saturating_sub(height.max(1));
        let s = v.scroll as isize + delta;
        v.scroll = s.clamp(0, max as isize) as usize;
    }
}

/// Put the cursor's hunk on screen.
fn reveal_cursor(m: &mut Model) {
    let height = m.diff_height().max(4);
    if let Some(v) = m.current_mut().and_then(|i| i.view.as_mut())
        && let Some(&row) = v.hunk_rows.get(v.cursor)
        && (v.hunk_top(v.cursor) < v.scroll || row + 3 > v.scroll + height)
    {
        v.scroll = v.hunk_top(v.cursor).saturating_sub(1);
    }
}

/// The hunk the view shows at the top, when the person scrolled past the cursor.
fn sync_cursor_to_scroll(v: &mut DiffView) {
    let top = v.scroll;
    if let Some(&row) = v.hunk_rows.get(v.cursor)
        && row >= top
    {
        return;
    }
    if let Some(Some((file, hunk))) = v.rows.get(top).map(Row::hunk) {
        v.cursor = v.files[file].first_hunk + hunk;
    }
}

fn move_hunk(m: &mut Model, forward: bool) {
    if let Some(item) = m.current_mut()
        && let Some((at, text)) = item.interdiff_shown()
    {
        // The interdiff's hunks: its `@@` lines.
        let heads: Vec<usize> = text
            .lines()
            .enumerate()
            .filter(|(_, l)| l.starts_with("@@"))
            .map(|(k, _)| k)
            .collect();
        let next = if forward {
            heads.iter().find(|&&k| k > at)
        } else {
            heads.iter().rev().find(|&&k| k < at)
        };
        if let Some(&k) = next {
            item.interdiff = Some(k);
        }
        return;
    }
    let Some(v) = m.current_mut().and_then(|i| i.view.as_mut()) else {
        return;
    };
    if v.hunk_total() == 0 {
        return;
    }
    v.cursor = if forward {
        (v.cursor + 1).min(v.hunk_total() - 1)
    } else {
        v.cursor.saturating_sub(1)
    };
    reveal_cursor(m);
}

/// `a`: accept what is selected of the selected review.
fn accept(m: &mut Model) -> Vec<Effect> {
    match selected_acceptance(m) {
        Some((run_id, decision)) => vec![Effect::Decide {
            run_id,
            decision,
            note: None,
        }],
        None => Vec::new(),
    }
}

/// `m`: the note editor, whose `Enter` accepts what is selected now with the note.
fn accept_with_note(m: &mut Model) {
    if let Some((run_id, decision)) = selected_acceptance(m) {
        m.overlay = Overlay::Note {
            run_id,
            accept: Some(decision),
            input: note_input(
                "a note for the agent with the acceptance (Enter accepts, Esc cancels)",
            ),
        };
    }
}

/// The acceptance of what is selected of the selected review (its included hunks, less
/// the lines left out), or `None` having said why there is none.
fn selected_acceptance(m: &mut Model) -> Option<(String, Decision)> {
    let item = m.current()?;
    if !item.is_open() {
        let state = item.summary.state;
        say(
            m,
            format!("this review is {}; nothing to accept", state.name()),
            Tone::Info,
        );
        return None;
    }
    let run_id = item.summary.run_id.clone();
    let decision = match &item.view {
        // Single lines left out of included hunks.
        Some(v) if v.skipped.iter().any(|&(h, _)| v.included[h]) => {
            let chosen: Vec<usize> = (0..v.hunk_total()).filter(|&h| v.included[h]).collect();
            let skip = v
                .skipped
                .iter()
                .copied()
                .filter(|&(h, _)| v.included[h])
                .collect();
            Decision::AcceptLines {
                hunks: Some(chosen),
                skip,
            }
        }
        Some(v) if v.included.iter().any(|b| !b) => {
            let chosen: Vec<usize> = (0..v.hunk_total()).filter(|&h| v.included[h]).collect();
            if chosen.is_empty() {
                say(
                    m,
                    "no hunk is included (space toggles one); r rejects the whole edit",
                    Tone::Bad,
                );
                return None;
            }
            Decision::AcceptHunks(chosen)
        }
        _ => Decision::Accept,
    };
    Some((run_id, decision))
}

/// The single editable file of the selected review: (run_id, path, content).
fn editable(m: &Model) -> Result<(String, String, String, usize), String> {
    let item = m.current().ok_or("no review is selected")?;
    if !item.is_open() {
        return Err("this review was already decided".into());
    }
    let v = item.view.as_ref().ok_or("the review is still loading")?;
    match v.files.as_slice() {
        [f] if !f.content.deleted => Ok((
            item.summary.run_id.clone(),
            f.content.path.clone(),
            f.content.new.clone(),
            change_line(v),
        )),
        [_] => Err("a deletion cannot be edited; accept or reject it".into()),
        _ => Err("edit reviews of one file only; accept hunks or reject this one".into()),
    }
}

/// The line (from 0, in the proposed content) of the first change of the hunk under the
/// cursor: where an editor opens.
fn change_line(v: &DiffView) -> usize {
    let Some((file, hunk)) = v.locate(v.cursor) else {
        return 0;
    };
    let h = &v.files[file].diff.hunks[hunk];
    // The first changed line's place in the new version: a removed line has none, so the
    // next line that has one (where the removed lines were).
    let first = h
        .lines
        .iter()
        .position(|l| l.tag != crate::diff::Tag::Equal)
        .unwrap_or(0);
    h.lines[first..]
        .iter()
        .find_map(|l| l.new_index)
        .unwrap_or(h.new_start + h.new_len.saturating_sub(1))
}

fn row_text(v: &DiffView, row: &Row) -> String {
    match *row {
        Row::File { file } => v.files[file].content.path.clone(),
        Row::Risk { file, hunk } => v
            .risks
            .get(v.files[file].first_hunk + hunk)
            .map(marks::HunkRisk::text)
            .unwrap_or_default(),
        Row::Hunk { file, hunk } => v.files[file].diff.hunks[hunk].header(),
        Row::Line {
            file, hunk, line, ..
        }
        | Row::Same { file, hunk, line } => v.files[file].diff.hunks[hunk].lines[line].text.clone(),
        Row::Pair {
            file,
            hunk,
            old,
            new,
        } => {
            let h = &v.files[file].diff.hunks[hunk];
            let side = |i: Option<usize>| i.map(|i| h.lines[i].text.as_str()).unwrap_or("");
            format!("{}\n{}", side(old), side(new))
        }
        Row::Folded { .. } => String::new(),
    }
}

/// Whether row text `t` holds `pattern` (smart case: case matters only when the pattern has
/// a capital letter).
pub(crate) fn matches(t: &str, pattern: &str) -> bool {
    if pattern.chars().any(char::is_uppercase) {
        t.contains(pattern)
    } else {
        t.to_lowercase().contains(&pattern.to_lowercase())
    }
}

/// Go to the first match of `pattern` from the top of the screen.
fn search(m: &mut Model, pattern: &str) {
    m.search_row = None;
    search_step(m, pattern, true);
}

/// Go to the next (previous) match after (before) the current one, wrapping around, and say
/// which of how many it is.
fn search_step(m: &mut Model, pattern: &str, forward: bool) {
    if m.current().is_some_and(|i| i.interdiff_shown().is_some()) {
        say(m, "search looks in the diff: i shows it", Tone::Info);
        return;
    }
    let current = m.search_row;
    let Some(v) = m.current_mut().and_then(|i| i.view.as_mut()) else {
        say(m, "nothing to search", Tone::Info);
        return;
    };
    let n = v.rows.len().max(1);
    let hits: Vec<usize> = (0..v.rows.len())
        .filter(|&r| matches(&row_text(v, &v.rows[r]), pattern))
        .collect();
    let found = match current {
        // A new search: the first match from the top of the screen.
        None => hits
            .iter()
            .copied()
            .min_by_key(|&r| (r + n - v.scroll.min(n)) % n),
        Some(at) if forward => hits
            .iter()
            .copied()
            .find(|&r| r > at)
            .or(hits.first().copied()),
        Some(at) => hits
            .iter()
            .copied()
            .rev()
            .find(|&r| r < at)
            .or(hits.last().copied()),
    };
    match found {
        Some(r) => {
            v.scroll = r.saturating_sub(2);
            // The hunk cursor goes to the match's hunk.
            match v.rows.get(r).map(Row::hunk) {
                Some(Some((file, hunk))) => v.cursor = v.files[file].first_hunk + hunk,
                _ => sync_cursor_to_scroll(v),
            }
            let k = hits.iter().position(|&h| h == r).unwrap_or(0) + 1;
            m.search_row = Some(r);
            let text = format!("/{pattern}: match {k} of {} (n / N, Esc ends)", hits.len());
            say(m, text, Tone::Info);
        }
        None => say(m, format!("/{pattern}: no match"), Tone::Bad),
    }
}

/// Accept every pending review whole.
fn accept_all(m: &Model) -> Vec<Effect> {
    m.items
        .iter()
        .filter(|i| i.summary.state == State::Pending)
        .map(|i| Effect::Decide {
            run_id: i.summary.run_id.clone(),
            decision: Decision::Accept,
            note: None,
        })
        .collect()
}

fn run_command(m: &mut Model, line: &str) -> Vec<Effect> {
    let mut words = line.split_whitespace();
    match (words.next(), words.next()) {
        (Some("commit" | "c"), Some(id)) => vec![Effect::Commit(id.to_string())],
        (Some("commit" | "c"), None) => match m.current() {
            Some(i) if i.summary.state == State::DryRun => {
                vec![Effect::Commit(i.summary.run_id.clone())]
            }
            _ => {
                say(m, "usage: :commit RUN_ID", Tone::Bad);
                Vec::new()
            }
        },
        (Some("q" | "quit"), _) => quit(m),
        (Some("undo" | "u"), arg) => vec![Effect::Undo(arg.map(str::to_string))],
        // The selected applied review, and every applied run after it.
        // Asked first, as an undo is: it takes back more than one run.
        (Some("rewind"), Some(id)) => confirm_rewind(m, id.to_string()),
        (Some("rewind"), None) => match m.current() {
            Some(i) if i.summary.state == State::Applied && !i.summary.undone => {
                let id = i.summary.run_id.clone();
                confirm_rewind(m, id)
            }
            _ => {
                say(
                    m,
                    "usage: :rewind [RUN_ID] (default: the selected applied review)",
                    Tone::Bad,
                );
                Vec::new()
            }
        },
        (Some("session"), since) => vec![Effect::SessionDiff(since.map(str::to_string))],
        (Some("rules"), _) => vec![Effect::ListRules],
        (Some("help"), _) => {
            m.overlay = Overlay::Help;
            Vec::new()
        }
        (None, _) => Vec::new(),
        (Some(other), _) => {
            say(
                m,
                format!(
                    "unknown command `{other}` (commands: commit RUN_ID, undo [RUN_ID], rewind [RUN_ID], session [RUN_ID], rules, quit)"
                ),
                Tone::Bad,
            );
            Vec::new()
        }
    }
}

fn quit(m: &mut Model) -> Vec<Effect> {
    if m.pending_count() > 0 {
        m.overlay = Overlay::ConfirmQuit;
        return Vec::new();
    }
    m.quit = true;
    vec![Effect::Quit {
        reviewers_gone: false,
    }]
}

fn text_of(t: &TextArea<'_>) -> String {
    t.lines().join("\n")
}

/// Columns `h` / `l` scroll the diff by, and the furthest it goes.
const HSCROLL_STEP: usize = 8;
const HSCROLL_MAX: usize = 400;

/// A key in the help: scroll keys scroll it (true); any other key closes it (false).
fn help_scroll(m: &mut Model, code: KeyCode) -> bool {
    // The help's box is the screen less a line above and below; its border takes two more.
    let shown = usize::from(m.size.height.saturating_sub(4)).max(1);
    let inner = usize::from(m.size.width.min(76).saturating_sub(2));
    let max = crate::tui::keymap::help_rows(inner, m.reviewing()).saturating_sub(shown);
    let page = shown.saturating_sub(1).max(1);
    m.help_scroll = match code {
        KeyCode::Char('j') | KeyCode::Down => m.help_scroll + 1,
        KeyCode::Char('k') | KeyCode::Up => m.help_scroll.saturating_sub(1),
        KeyCode::PageDown | KeyCode::Char(' ') => m.help_scroll + page,
        KeyCode::PageUp => m.help_scroll.saturating_sub(page),
        KeyCode::Char('g') | KeyCode::Home => 0,
        KeyCode::Char('G') | KeyCode::End => max,
        _ => return false,
    }
    .min(max);
    true
}

/// `v`: line mode on the selected open review, the cursor on the current hunk's first
/// changed line.
fn enter_line_mode(m: &mut Model) {
    if refused_in_interdiff(m) {
        return;
    }
    let open = m.current().is_some_and(Item::is_open);
    let Some(v) = m.current_mut().and_then(|i| i.view.as_mut()) else {
        return;
    };
    if !open {
        say(m, "line mode is for a review still open", Tone::Info);
        return;
    }
    let from = v.hunk_rows.get(v.cursor).copied().unwrap_or(0);
    match v.next_change_row(from, false) {
        Some(r) => {
            v.line_cursor = Some(r);
            m.focus = Focus::Diff;
            say(
                m,
                "line mode: j/k move between changed lines, space takes or leaves one, v or Esc ends",
                Tone::Info,
            );
        }
        None => say(m, "no changed line to pick", Tone::Info),
    }
}

/// Keys in line mode: j / k move between changed lines, space takes or leaves the line
/// under the cursor, v or Esc ends it; other keys act as usual (`None`).
fn on_line_mode_key(m: &mut Model, action: Action) -> Option<Vec<Effect>> {
    let height = m.diff_height().max(1);
    let v = m.current_mut().and_then(|i| i.view.as_mut())?;
    let r = v.line_cursor?;
    match action {
        Action::Down | Action::Up => {
            if let Some(next) = v.next_change_row(r, action == Action::Up) {
                v.line_cursor = Some(next);
                if let Some(Row::Line { file, hunk, .. } | Row::Pair { file, hunk, .. }) =
                    v.rows.get(next)
                {
                    v.cursor = v.files[*file].first_hunk + hunk;
                }
                if next < v.scroll {
                    v.scroll = next;
                } else if next >= v.scroll + height {
                    v.scroll = next + 1 - height;
                }
            }
        }
        Action::ToggleHunk => {
            let lines = v.row_lines(r);
            let Some(&(h, _)) = lines.first() else {
                return Some(Vec::new());
            };
            if !v.included[h] {
                // A line of an excluded hunk: the hunk comes in with this line alone.
                v.included[h] = true;
                for k in v.changed_lines_of(h) {
                    v.skipped.insert((h, k));
                }
            }
            let taken = lines.iter().any(|l| !v.skipped.contains(l));
            for l in &lines {
                if taken {
                    v.skipped.insert(*l);
                } else {
                    v.skipped.remove(l);
                }
            }
            let left = v.skipped.iter().filter(|&&(g, _)| v.included[g]).count();
            let what = if taken { "left out" } else { "taken" };
            say(
                m,
                format!("line {what}; {left} changed line(s) left out"),
                Tone::Info,
            );
        }
        Action::LineMode | Action::Escape => {
            v.line_cursor = None;
            say(m, "line mode ended", Tone::Info);
        }
        _ => return None,
    }
    Some(Vec::new())
}

/// `u`: undo the selected review, once the person confirms; only an applied one can be.
fn ask_undo(m: &mut Model) {
    let Some(i) = m.current() else {
        say(m, "no review selected", Tone::Info);
        return;
    };
    let (run_id, state, undone) = (i.summary.run_id.clone(), i.summary.state, i.summary.undone);
    if undone {
        say(m, format!("run {run_id} was already undone"), Tone::Info);
    } else if state != State::Applied {
        say(
            m,
            format!(
                "only an applied review can be undone; {run_id} is {}",
                state.name()
            ),
            Tone::Info,
        );
    } else {
        let paths = i.summary.paths.clone();
        m.overlay = Overlay::ConfirmUndo { run_id, paths };
    }
}

/// A rewind ended: what it undid, or its refusal (naming the runs and their lines) in an
/// overlay.
fn on_rewound(m: &mut Model, r: Result<String, String>) -> Vec<Effect> {
    match r {
        Ok(text) => say(m, text, Tone::Good),
        Err(text) => {
            let status = if text.contains(all_or_none::NOT_PUT_BACK) {
                "rewind failed: some files could not be put back (Esc closes)"
            } else {
                "rewind refused: nothing changed (Esc closes)"
            };
            say(m, status, Tone::Bad);
            m.overlay = Overlay::Message {
                title: " rewind refused ".into(),
                text,
            };
        }
    }
    Vec::new()
}

/// The session's diff arrived: its view, or why there is none.
fn on_session(m: &mut Model, since: Option<String>, r: Result<String, String>) -> Vec<Effect> {
    match r {
        Ok(text) if text.trim().is_empty() => {
            say(m, "no applied run changed anything", Tone::Info);
        }
        Ok(text) => {
            let title = match since {
                Some(run) => format!(" the session from run {run}: what the runs changed "),
                None => " the session: what the applied runs changed ".to_string(),
            };
            m.overlay = Overlay::Session {
                title,
                text,
                scroll: 0,
            };
        }
        Err(text) => say(m, text, Tone::Bad),
    }
    Vec::new()
}

/// The session view's first line after `code` (`None`: the key closes it).
fn session_scroll(m: &Model, text: &str, scroll: usize, code: KeyCode) -> Option<usize> {
    let page = usize::from(m.size.height.saturating_sub(4)).max(1);
    let max = text.lines().count().saturating_sub(page);
    let to = match code {
        KeyCode::Char('j') | KeyCode::Down => scroll + 1,
        KeyCode::Char('k') | KeyCode::Up => scroll.saturating_sub(1),
        KeyCode::PageDown | KeyCode::Char(' ') => scroll + page,
        KeyCode::PageUp => scroll.saturating_sub(page),
        KeyCode::Char('g') | KeyCode::Home => 0,
        KeyCode::Char('G') | KeyCode::End => max,
        _ => return None,
    };
    Some(to.min(max))
}

/// What an overlay leaves behind a key: the overlay now, and work for the runtime.
type After = (Overlay, Vec<Effect>);

fn on_overlay_key(m: &mut Model, key: KeyEvent) -> Option<Vec<Effect>> {
    let overlay = std::mem::take(&mut m.overlay);
    let (overlay, effects) = match overlay {
        Overlay::None => return None,
        Overlay::Help => match help_scroll(m, key.code) {
            true => (Overlay::Help, Vec::new()),
            false => (Overlay::None, Vec::new()),
        },
        Overlay::Message { .. } => (Overlay::None, Vec::new()),
        Overlay::Session {
            title,
            text,
            scroll,
        } => match session_scroll(m, &text, scroll, key.code) {
            Some(scroll) => (
                Overlay::Session {
                    title,
                    text,
                    scroll,
                },
                Vec::new(),
            ),
            None => (Overlay::None, Vec::new()),
        },
        o @ (Overlay::ConfirmAcceptAll
        | Overlay::ConfirmUndo { .. }
        | Overlay::ConfirmRewind { .. }
        | Overlay::ConfirmQuit) => on_confirm_key(m, o, key.code),
        Overlay::Note {
            run_id,
            accept,
            mut input,
        } => match key.code {
            KeyCode::Esc => (Overlay::None, Vec::new()),
            KeyCode::Enter if key.modifiers.contains(KeyModifiers::ALT) => {
                input.insert_newline();
                (
                    Overlay::Note {
                        run_id,
                        accept,
                        input,
                    },
                    Vec::new(),
                )
            }
            KeyCode::Enter => {
                let note = text_of(&input).trim().to_string();
                // A rejection's note is its reason; an acceptance carries it beside.
                let (decision, note) = match accept {
                    Some(d) => (d, Some(note).filter(|n| !n.is_empty())),
                    None => (Decision::Reject(note), None),
                };
                let decide = Effect::Decide {
                    run_id,
                    decision,
                    note,
                };
                (Overlay::None, vec![decide])
            }
            _ => {
                input.input(key);
                (
                    Overlay::Note {
                        run_id,
                        accept,
                        input,
                    },
                    Vec::new(),
                )
            }
        },
        Overlay::Edit {
            run_id,
            path,
            input,
        } => on_edit_key(m, run_id, path, input, key),
        Overlay::Command(mut input) => match key.code {
            KeyCode::Esc => (Overlay::None, Vec::new()),
            KeyCode::Enter => {
                let line = text_of(&input);
                let effects = run_command(m, &line);
                // A command may open an overlay itself (help, confirm quit).
                (std::mem::take(&mut m.overlay), effects)
            }
            _ => {
                input.input(key);
                (Overlay::Command(input), Vec::new())
            }
        },
        Overlay::Search(input) => on_search_key(m, input, key),
        Overlay::Rule(mut choice) => match choice.key(key.code) {
            Step::Stay => (Overlay::Rule(choice), Vec::new()),
            Step::Cancel => {
                say(m, "no rule added", Tone::Info);
                (Overlay::None, Vec::new())
            }
            Step::Add(rule) => (Overlay::None, vec![Effect::AddRule(rule)]),
        },
    };
    m.overlay = overlay;
    Some(effects)
}

/// Ask before `:rewind` takes back `run_id` and every later applied run.
fn confirm_rewind(m: &mut Model, run_id: String) -> Vec<Effect> {
    m.overlay = Overlay::ConfirmRewind { run_id };
    Vec::new()
}

/// A yes / no question: `y` goes ahead, any other key does not.
fn on_confirm_key(m: &mut Model, overlay: Overlay, code: KeyCode) -> After {
    let yes = matches!(code, KeyCode::Char('y') | KeyCode::Char('Y'));
    let effects = match (overlay, yes) {
        (Overlay::ConfirmAcceptAll, true) => accept_all(m),
        (Overlay::ConfirmUndo { run_id, .. }, true) => vec![Effect::Undo(Some(run_id))],
        (Overlay::ConfirmRewind { run_id }, true) => vec![Effect::Rewind(run_id)],
        (Overlay::ConfirmQuit, true) => {
            m.quit = true;
            vec![Effect::Quit {
                reviewers_gone: true,
            }]
        }
        (Overlay::ConfirmAcceptAll, false) => {
            say(m, "nothing accepted", Tone::Info);
            Vec::new()
        }
        (Overlay::ConfirmUndo { .. } | Overlay::ConfirmRewind { .. }, false) => {
            say(m, "nothing undone", Tone::Info);
            Vec::new()
        }
        (_, _) => {
            say(m, "still here", Tone::Info);
            Vec::new()
        }
    };
    (Overlay::None, effects)
}

/// The in-place editor: `Ctrl+S` accepts its content, `Esc` cancels.
fn on_edit_key(
    m: &mut Model,
    run_id: String,
    path: String,
    mut input: TextArea<'static>,
    key: KeyEvent,
) -> After {
    match key.code {
        KeyCode::Esc => {
            say(m, "edit cancelled", Tone::Info);
            (Overlay::None, Vec::new())
        }
        KeyCode::Char('s') if key.modifiers.contains(KeyModifiers::CONTROL) => {
            let mut content = text_of(&input);
            let original_ends = m
                .current()
                .and_then(|i| i.view.as_ref())
                .and_then(|v| v.files.first())
                .is_none_or(|f| f.content.new.ends_with('\n'));
            if original_ends && !content.ends_with('\n') {
                content.push('\n');
            }
            let decide = Effect::Decide {
                run_id,
                decision: Decision::AcceptEdited(content),
                note: None,
            };
            (Overlay::None, vec![decide])
        }
        _ => {
            input.input(key);
            let overlay = Overlay::Edit {
                run_id,
                path,
                input,
            };
            (overlay, Vec::new())
        }
    }
}

/// The search input: `Enter` searches (again: the next match), `Esc` closes.
fn on_search_key(m: &mut Model, mut input: TextArea<'static>, key: KeyEvent) -> After {
    match key.code {
        KeyCode::Esc => (Overlay::None, Vec::new()),
        KeyCode::Enter => {
            let typed = text_of(&input);
            match m.search.clone() {
                // Enter on nothing again: the next match.
                Some(pattern) if typed.is_empty() => search_step(m, &pattern, true),
                _ if !typed.is_empty() => {
                    m.search = Some(typed.clone());
                    search(m, &typed);
                }
                _ => {}
            }
            (Overlay::None, Vec::new())
        }
        _ => {
            input.input(key);
            (Overlay::Search(input), Vec::new())
        }
    }
}

fn on_key(m: &mut Model, key: KeyEvent) -> Vec<Effect> {
    if let Some(effects) = on_overlay_key(m, key) {
        return effects;
    }
    let Some(action) = keymap::action(&key) else {
        return Vec::new();
    };
    // The message has been seen: the next key gives its lines back to the key hints.
    m.status = None;
    if let Some(effects) = on_line_mode_key(m, action) {
        return effects;
    }
    if let Some(effects) = on_move(m, action) {
        return effects;
    }
    on_decide(m, action).unwrap_or_else(|| {
        on_view(m, action);
        Vec::new()
    })
}

/// Moving: through the queue, the diff's rows and hunks (`None`: not a move).
fn on_move(m: &mut Model, action: Action) -> Option<Vec<Effect>> {
    let page = m.diff_height().saturating_sub(2).max(1) as isize;
    let queue = m.focus == Focus::Queue;
    match action {
        Action::Down if queue => return Some(step(m, 1)),
        Action::Up if queue => return Some(step(m, -1)),
        Action::Top if queue => return Some(step(m, isize::MIN)),
        Action::Bottom if queue => return Some(step(m, isize::MAX)),
        Action::Down => scroll_by(m, 1),
        Action::Up => scroll_by(m, -1),
        Action::Top => scroll_by(m, isize::MIN / 2),
        Action::Bottom => scroll_by(m, isize::MAX / 2),
        Action::PageUp => scroll_by(m, -page),
        Action::PageDown => scroll_by(m, page),
        // While a search is on, n / N step through its matches.
        Action::NextHunk | Action::PrevHunk if m.search.is_some() => {
            let pattern = m.search.clone().unwrap_or_default();
            search_step(m, &pattern, action == Action::NextHunk);
            return Some(Vec::new());
        }
        Action::NextHunk => move_hunk(m, true),
        Action::PrevHunk => move_hunk(m, false),
        Action::ScrollLeft => m.hscroll = m.hscroll.saturating_sub(HSCROLL_STEP),
        Action::ScrollRight => m.hscroll = (m.hscroll + HSCROLL_STEP).min(HSCROLL_MAX),
        Action::Filter => return Some(cycle_filter(m)),
        _ => return None,
    }
    // The diff scrolled: the cursor's hunk follows what is on screen.
    let scrolled = matches!(
        action,
        Action::Down
            | Action::Up
            | Action::PageUp
            | Action::PageDown
            | Action::Top
            | Action::Bottom
    );
    if scrolled && let Some(v) = m.current_mut().and_then(|i| i.view.as_mut()) {
        sync_cursor_to_scroll(v);
    }
    Some(Vec::new())
}

/// Deciding the selected review (`None`: not a decision key).
fn on_decide(m: &mut Model, action: Action) -> Option<Vec<Effect>> {
    match action {
        Action::ToggleHunk => toggle_hunk(m),
        Action::Accept => return Some(accept(m)),
        // A patch file has no agent to read a note.
        Action::AcceptWithNote if m.reviewing() == Reviewing::Patch => {
            say(m, "no agent reads a note here: a accepts", Tone::Info);
        }
        Action::AcceptWithNote => accept_with_note(m),
        Action::WriteRejects if m.reviewing() == Reviewing::Patch => {
            return Some(vec![Effect::WriteRejects]);
        }
        Action::WriteRejects => say(
            m,
            "W writes a patch's .rej files (patchgate apply); agents' edits have none",
            Tone::Info,
        ),
        // Everything at once is asked first.
        Action::AcceptAll if m.pending_count() == 0 => say(m, "no pending review", Tone::Info),
        Action::AcceptAll => m.overlay = Overlay::ConfirmAcceptAll,
        Action::Reject => match m.current() {
            // No agent to tell why: the file's change is dropped at once.
            Some(i) if i.is_open() && m.reviewing() == Reviewing::Patch => {
                return Some(vec![Effect::Decide {
                    run_id: i.summary.run_id.clone(),
                    decision: Decision::Reject(String::new()),
                    note: None,
                }]);
            }
            Some(i) if i.is_open() => {
                m.overlay = Overlay::Note {
                    run_id: i.summary.run_id.clone(),
                    accept: None,
                    input: note_input("why? the agent reads this (Enter sends, Esc cancels)"),
                };
            }
            Some(_) => say(m, "this review was already decided", Tone::Info),
            None => {}
        },
        Action::Edit => match editable(m) {
            Ok((run_id, path, content, line)) => {
                let mut t = TextArea::new(content.lines().map(str::to_string).collect());
                t.set_placeholder_text("(empty file)".to_string());
                // At the change, not at the top of the file.
                t.move_cursor(ratatui_textarea::CursorMove::Jump(
                    u16::try_from(line).unwrap_or(u16::MAX),
                    0,
                ));
                m.overlay = Overlay::Edit {
                    run_id,
                    path,
                    input: t,
                };
            }
            Err(e) => say(m, e, Tone::Bad),
        },
        Action::ExternalEdit => match editable(m) {
            Ok((run_id, path, content, line)) => {
                return Some(vec![Effect::ExternalEdit {
                    run_id,
                    path,
                    content,
                    line,
                }]);
            }
            Err(e) => say(m, e, Tone::Bad),
        },
        Action::Commit => return Some(commit_selected(m)),
        Action::Undo => ask_undo(m),
        Action::Rule => choose_rule(m),
        Action::Quit => return Some(quit(m)),
        _ => return None,
    }
    Some(Vec::new())
}

/// `R`: the rule chooser over the selected review's paths (agents' edits only: a patch
/// file's review has no agent a rule could answer).
fn choose_rule(m: &mut Model) {
    if m.info.patch.is_some() {
        say(
            m,
            "rules are for agents' edits; a patch file has none",
            Tone::Info,
        );
        return;
    }
    let Some(item) = m.current() else {
        return;
    };
    match RuleChoice::new(&item.summary.run_id, &item.summary.paths) {
        Some(choice) => m.overlay = Overlay::Rule(choice),
        None => say(m, "this review names no path to make a rule of", Tone::Info),
    }
}

/// `space` in hunk mode: include or exclude the hunk under the cursor.
fn toggle_hunk(m: &mut Model) {
    if refused_in_interdiff(m) {
        return;
    }
    let open = m.current().is_some_and(Item::is_open);
    if let Some(v) = m.current_mut().and_then(|i| i.view.as_mut())
        && open
        && v.hunk_total() > 0
    {
        let c = v.cursor;
        v.included[c] = !v.included[c];
        let (on, total) = (v.included.iter().filter(|b| **b).count(), v.hunk_total());
        say(m, format!("{on} of {total} hunks included"), Tone::Info);
    }
}

/// Hunks and lines are chosen in the diff, not in the interdiff: says so (true) while the
/// interdiff is shown.
fn refused_in_interdiff(m: &mut Model) -> bool {
    let shown = m.current().is_some_and(|i| i.interdiff_shown().is_some());
    if shown {
        say(
            m,
            "the interdiff is for reading: i shows the diff, whose hunks and lines you choose",
            Tone::Info,
        );
    }
    shown
}

/// `i`: a revision's interdiff (from the rejected proposal's result to this one's) in place
/// of its diff, or its diff again.
fn toggle_interdiff(m: &mut Model) {
    let Some(item) = m.current_mut() else {
        return;
    };
    let Some(of) = item.summary.revision_of.clone() else {
        say(
            m,
            "i shows a revision's interdiff; this review is no revision",
            Tone::Info,
        );
        return;
    };
    let text = if item.interdiff.is_some() {
        item.interdiff = None;
        "the diff (i shows the interdiff)".to_string()
    } else {
        item.interdiff = Some(0);
        // Line mode is for the diff.
        if let Some(v) = item.view.as_mut() {
            v.line_cursor = None;
        }
        format!("the interdiff: from what {of} proposed to this revision (i shows the diff)")
    };
    say(m, text, Tone::Info);
}

/// `c`: commit the selected dry-run.
fn commit_selected(m: &mut Model) -> Vec<Effect> {
    match m.current() {
        Some(i) if i.summary.state == State::DryRun => {
            return vec![Effect::Commit(i.summary.run_id.clone())];
        }
        Some(_) => say(
            m,
            "c commits a dry-run; this review is not one (a accepts it)",
            Tone::Info,
        ),
        None => say(m, "no review is selected (:commit RUN_ID)", Tone::Info),
    }
    Vec::new()
}

/// The view: focus, modes, filter, overlays that take input.
fn on_view(m: &mut Model, action: Action) {
    match action {
        Action::Focus => {
            m.focus = match m.focus {
                Focus::Queue => Focus::Diff,
                Focus::Diff => Focus::Queue,
            }
        }
        Action::LineMode => enter_line_mode(m),
        Action::Interdiff => toggle_interdiff(m),
        Action::ToggleMode => {
            m.mode = match m.mode {
                DiffMode::Unified => DiffMode::SideBySide,
                DiffMode::SideBySide => DiffMode::Unified,
            };
            rebuild_rows(m);
        }
        Action::ToggleWhitespace => {
            m.ignore_ws = !m.ignore_ws;
            rebuild_rows(m);
            let text = if m.ignore_ws {
                "whitespace-only changes hidden (w shows them)"
            } else {
                "whitespace changes shown"
            };
            say(m, text, Tone::Info);
        }
        Action::Command => {
            m.overlay = Overlay::Command(input(
                "commit RUN_ID | undo [RUN_ID] | rewind [RUN_ID] | session [RUN_ID] | quit",
            ));
        }
        Action::Search => m.overlay = Overlay::Search(input("search the diff")),
        Action::Help => {
            m.help_scroll = 0;
            m.overlay = Overlay::Help;
        }
        Action::Escape => {
            m.status = None;
            m.search = None;
            m.search_row = None;
        }
        _ => {}
    }
}

/// The selected diff's rows for the current mode and whitespace setting.
fn rebuild_rows(m: &mut Model) {
    let (mode, ws) = (m.mode, m.ignore_ws);
    if let Some(v) = m.current_mut().and_then(|i| i.view.as_mut()) {
        v.ensure_rows(mode, ws);
    }
}

fn on_mouse(m: &mut Model, ev: MouseEvent) -> Vec<Effect> {
    if !matches!(m.overlay, Overlay::None) {
        return Vec::new();
    }
    let a = m.areas();
    let in_queue = ev.column < a.queue.x + a.queue.width && ev.row < a.queue.y + a.queue.height;
    match ev.kind {
        MouseEventKind::ScrollDown if in_queue => return step(m, 1),
        MouseEventKind::ScrollUp if in_queue => return step(m, -1),
        MouseEventKind::ScrollDown => scroll_by(m, 3),
        MouseEventKind::ScrollUp => scroll_by(m, -3),
        MouseEventKind::Down(MouseButton::Left) if in_queue => {
            m.focus = Focus::Queue;
            let inner = ev.row.saturating_sub(a.queue.y + 1);
            let at = m.queue_scroll + (inner / ITEM_HEIGHT) as usize;
            if let Some(&idx) = m.visible().get(at) {
                return select(m, idx);
            }
        }
        MouseEventKind::Down(MouseButton::Left) => m.focus = Focus::Diff,
        _ => {}
    }
    Vec::new()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crossterm::event::KeyEventState;

    pub(crate) fn summary(run_id: &str, state: State, paths: &[&str]) -> Summary {
        Summary {
            run_id: run_id.into(),
            tool: "fast_apply".into(),
            client: Some("claude-code 2.1".into()),
            paths: paths.iter().map(std::string::ToString::to_string).collect(),
            state,
            added: 3,
            removed: 1,
            hunks: 3,
            created: 0,
            expires_in: None,
            diff: format!("diff of {run_id}"),
            warnings: vec![],
            syntax: vec![],
            unseen_deletions: 0,
            unseen_hunks: vec![],
            review: None,
            left_out: vec![],
            undone: false,
            failure: None,
            revision_of: None,
            revision: None,
            previous_note: None,
            interdiff: None,
            agent: None,
        }
    }

    pub(crate) fn three_hunks() -> Vec<FileContent> {
        let old: String = (1..=40).map(|i| format!("line {i}\n")).collect();
        let new = old
            .replace("line 2\n", "line two\n")
            .replace("line 20\n", "line twenty\n")
            .replace("line 38\n", "line thirty-eight\n");
        vec![FileContent {
            path: "src/x.rs".into(),
            old,
            new,
            created: false,
            deleted: false,
            mode_change: None,
        }]
    }

    pub(crate) fn key(c: char) -> Msg {
        Msg::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE))
    }

    pub(crate) fn code(c: KeyCode, mods: KeyModifiers) -> Msg {
        Msg::Key(KeyEvent {
            code: c,
            modifiers: mods,
            kind: crossterm::event::KeyEventKind::Press,
            state: KeyEventState::NONE,
        })
    }

    /// A model with one pending review whose three-hunk diff is loaded.
    pub(crate) fn loaded() -> Model {
        let mut m = Model::new(120, 40, true);
        let fx = update(
            &mut m,
            Msg::Change(Change::upsert(summary(
                "run1",
                State::Pending,
                &["src/x.rs"],
            ))),
        );
        assert_eq!(
            fx,
            vec![
                Effect::Notify("claude-code 2.1 wants to change src/x.rs".into()),
                Effect::LoadFiles("run1".into())
            ]
        );
        update(
            &mut m,
            Msg::Files {
                run_id: "run1".into(),
                result: Ok(three_hunks()),
            },
        );
        m
    }

    /// The interdiff of [`revision`]: two files, their hunks on lines 2 and 8 (from 0).
    pub(crate) const INTERDIFF: &str = "--- a/src/x.rs\n+++ b/src/x.rs\n@@ -1,2 +1,2 @@\n line 1\n-line 2 as first proposed\n+line two\n--- a/src/y.rs\n+++ b/src/y.rs\n@@ -1 +1 @@\n-old y\n+new y\n";

    /// [`loaded`] with its review the second revision of `run0`, rejected with a note.
    pub(crate) fn revision() -> Model {
        let mut m = loaded();
        let mut s = summary("run1", State::Pending, &["src/x.rs"]);
        s.revision_of = Some("run0".into());
        s.revision = Some(2);
        s.previous_note = Some("name it two\nas the docs do".into());
        s.interdiff = Some(INTERDIFF.into());
        update(&mut m, Msg::Change(Change::upsert(s)));
        m
    }

    #[test]
    fn i_shows_a_revisions_interdiff_in_place_of_its_diff_and_back() {
        let mut m = revision();
        assert!(m.current().unwrap().view.is_some(), "the diff stays loaded");
        update(&mut m, key('i'));
        assert_eq!(m.current().unwrap().interdiff_shown(), Some((0, INTERDIFF)));
        assert!(
            m.status
                .as_ref()
                .unwrap()
                .0
                .contains("from what run0 proposed")
        );
        // Hunks are chosen in the diff: space and v say so and change nothing.
        for k in [' ', 'v'] {
            update(&mut m, key(k));
            assert!(m.status.as_ref().unwrap().0.contains("for reading"), "{k}");
            let v = m.current().unwrap().view.as_ref().unwrap();
            assert!(v.included.iter().all(|b| *b) && v.line_cursor.is_none());
        }
        // n / N go from `@@` to `@@`; scrolling stops at the last line.
        update(&mut m, key('n'));
        assert_eq!(m.current().unwrap().interdiff, Some(2));
        update(&mut m, key('n'));
        assert_eq!(m.current().unwrap().interdiff, Some(8));
        update(&mut m, key('N'));
        assert_eq!(m.current().unwrap().interdiff, Some(2));
        // In a low pane, j scrolls until the last line is in sight below the notes.
        update(&mut m, Msg::Resize(120, 12));
        update(&mut m, code(KeyCode::Tab, KeyModifiers::NONE));
        for _ in 0..50 {
            update(&mut m, key('j'));
        }
        let last = INTERDIFF
            .lines()
            .count()
            .saturating_sub(m.diff_height().div_ceil(2));
        assert_eq!(m.current().unwrap().interdiff, Some(last));
        assert!(last > 0 && last + m.diff_height() / 2 >= INTERDIFF.lines().count());
        update(&mut m, key('i'));
        assert_eq!(m.current().unwrap().interdiff_shown(), None);
        update(&mut m, key(' '));
        assert!(!m.current().unwrap().view.as_ref().unwrap().included[0]);
    }

    #[test]
    fn i_on_a_review_that_is_no_revision_says_so() {
        let mut m = loaded();
        update(&mut m, key('i'));
        assert_eq!(m.current().unwrap().interdiff, None);
        assert!(m.status.as_ref().unwrap().0.contains("no revision"));
    }

    #[test]
    fn a_new_review_opens_with_every_hunk_included_and_the_cursor_on_the_first() {
        let m = loaded();
        let v = m.current().unwrap().view.as_ref().unwrap();
        assert_eq!(v.hunk_total(), 3);
        assert_eq!(v.included, vec![true, true, true]);
        assert_eq!(v.cursor, 0);
    }

    #[test]
    fn n_n_space_a_accepts_the_first_two_hunks() {
        let mut m = loaded();
        for c in ['n', 'n', ' '] {
            assert!(update(&mut m, key(c)).is_empty());
        }
        let v = m.current().unwrap().view.as_ref().unwrap();
        assert_eq!(v.cursor, 2);
        assert_eq!(v.included, vec![true, true, false]);
        assert_eq!(
            update(&mut m, key('a')),
            vec![Effect::Decide {
                run_id: "run1".into(),
                decision: Decision::AcceptHunks(vec![0, 1]),
                note: None
            }]
        );
    }

    #[test]
    fn accepting_with_every_hunk_is_a_plain_accept_and_none_is_refused() {
        let mut m = loaded();
        assert_eq!(
            update(&mut m, key('a')),
            vec![Effect::Decide {
                run_id: "run1".into(),
                decision: Decision::Accept,
                note: None
            }]
        );
        for c in [' ', 'n', ' ', 'n', ' '] {
            update(&mut m, key(c));
        }
        assert!(update(&mut m, key('a')).is_empty());
        assert_eq!(m.status.as_ref().unwrap().1, Tone::Bad);
    }

    /// Reviewing a patch file (`patchgate apply`) no agent waits: `r` drops the change at
    /// once, `m` offers no note, `W` writes the `.rej` files; with agents `W` does nothing.
    #[test]
    fn reviewing_a_patch_r_rejects_at_once_m_has_no_note_and_w_writes_rejects() {
        let mut m = loaded();
        assert!(update(&mut m, key('W')).is_empty());
        m.info.patch = Some("fix.patch".into());
        assert_eq!(update(&mut m, key('W')), vec![Effect::WriteRejects]);
        assert!(update(&mut m, key('m')).is_empty());
        assert!(matches!(m.overlay, Overlay::None));
        assert!(m.status.as_ref().unwrap().0.contains("a accepts"));
        assert_eq!(
            update(&mut m, key('r')),
            vec![Effect::Decide {
                run_id: "run1".into(),
                decision: Decision::Reject(String::new()),
                note: None
            }]
        );
        assert!(matches!(m.overlay, Overlay::None));
    }

    #[test]
    fn r_opens_the_note_editor_and_enter_rejects_with_the_note() {
        let mut m = loaded();
        update(&mut m, key('r'));
        assert!(matches!(m.overlay, Overlay::Note { .. }));
        for c in "use the helper".chars() {
            update(&mut m, key(c));
        }
        // Alt+Enter adds a line; Enter sends.
        update(&mut m, code(KeyCode::Enter, KeyModifiers::ALT));
        for c in "thanks".chars() {
            update(&mut m, key(c));
        }
        let fx = update(&mut m, code(KeyCode::Enter, KeyModifiers::NONE));
        assert_eq!(
            fx,
            vec![Effect::Decide {
                run_id: "run1".into(),
                decision: Decision::Reject("use the helper\nthanks".into()),
                note: None
            }]
        );
        assert!(matches!(m.overlay, Overlay::None));
        // Esc cancels without a decision.
        update(&mut m, key('r'));
        assert!(update(&mut m, code(KeyCode::Esc, KeyModifiers::NONE)).is_empty());
        assert!(matches!(m.overlay, Overlay::None));
    }

    #[test]
    fn m_opens_the_note_editor_and_enter_accepts_the_included_hunks_with_the_note() {
        let mut m = loaded();
        update(&mut m, key(' '));
        assert!(update(&mut m, key('m')).is_empty());
        assert!(matches!(
            &m.overlay,
            Overlay::Note { accept: Some(Decision::AcceptHunks(h)), .. } if *h == vec![1, 2]
        ));
        for c in "hunk 1 breaks the build".chars() {
            update(&mut m, key(c));
        }
        let fx = update(&mut m, code(KeyCode::Enter, KeyModifiers::NONE));
        assert_eq!(
            fx,
            vec![Effect::Decide {
                run_id: "run1".into(),
                decision: Decision::AcceptHunks(vec![1, 2]),
                note: Some("hunk 1 breaks the build".into()),
            }]
        );
        assert!(matches!(m.overlay, Overlay::None));
        // With no note it is a plain acceptance; Esc cancels without one.
        update(&mut m, key('m'));
        assert!(update(&mut m, code(KeyCode::Esc, KeyModifiers::NONE)).is_empty());
        update(&mut m, key('m'));
        let fx = update(&mut m, code(KeyCode::Enter, KeyModifiers::NONE));
        assert!(
            matches!(&fx[..], [Effect::Decide { note: None, .. }]),
            "{fx:?}"
        );
    }

    #[test]
    fn decision_keys_work_from_the_diff_pane_too() {
        let mut m = loaded();
        update(&mut m, code(KeyCode::Tab, KeyModifiers::NONE));
        assert_eq!(m.focus, Focus::Diff);
        update(&mut m, key(' '));
        assert!(matches!(
            update(&mut m, key('a')).as_slice(),
            [Effect::Decide {
                decision: Decision::AcceptHunks(_),
                ..
            }]
        ));
    }

    #[test]
    fn a_partly_accepted_review_stays_in_view() {
        let mut m = loaded();
        // Accepted in part: what was written differs from the proposal, and no other review
        // is pending; the decided one is reloaded, not left as "select to load".
        let mut s = summary("run1", State::Applied, &["src/x.rs"]);
        s.diff = "diff of the hunks accepted".into();
        let fx = update(&mut m, Msg::Change(Change::upsert(s)));
        assert_eq!(m.selected, 0);
        assert_eq!(fx, vec![Effect::LoadFiles("run1".into())]);
    }

    #[test]
    fn selection_follows_the_work() {
        let mut m = loaded();
        // A second review arrives while the first is pending: selection stays.
        update(
            &mut m,
            Msg::Change(Change::upsert(summary("run2", State::Pending, &["b.py"]))),
        );
        assert_eq!(m.selected, 0);
        // The first is decided: the next pending one is selected and loaded.
        let mut s = summary("run1", State::Applied, &["src/x.rs"]);
        s.diff = "diff of run1".into();
        let fx = update(&mut m, Msg::Change(Change::upsert(s)));
        assert_eq!(m.selected, 1);
        assert_eq!(fx, vec![Effect::LoadFiles("run2".into())]);
        // The second is decided too; a new one arrives and is selected.
        update(
            &mut m,
            Msg::Change(Change::upsert(summary("run2", State::Rejected, &["b.py"]))),
        );
        let fx = update(
            &mut m,
            Msg::Change(Change::upsert(summary("run3", State::Pending, &["c.md"]))),
        );
        assert_eq!(m.selected, 2);
        assert!(fx.contains(&Effect::LoadFiles("run3".into())));
    }

    #[test]
    fn dry_runs_commit_with_c_and_by_command() {
        let mut m = Model::new(100, 30, true);
        update(
            &mut m,
            Msg::Change(Change::upsert(summary("dry1", State::DryRun, &["a"]))),
        );
        assert_eq!(
            update(&mut m, key('c')),
            vec![Effect::Commit("dry1".into())]
        );
        update(&mut m, key(':'));
        for c in "commit abc123".chars() {
            update(&mut m, key(c));
        }
        assert_eq!(
            update(&mut m, code(KeyCode::Enter, KeyModifiers::NONE)),
            vec![Effect::Commit("abc123".into())]
        );
    }

    #[test]
    fn quitting_with_pending_reviews_asks_first() {
        let mut m = loaded();
        assert!(update(&mut m, key('q')).is_empty());
        assert!(matches!(m.overlay, Overlay::ConfirmQuit));
        update(&mut m, key('n'));
        assert!(!m.quit);
        update(&mut m, key('q'));
        assert_eq!(
            update(&mut m, key('y')),
            vec![Effect::Quit {
                reviewers_gone: true
            }]
        );
        assert!(m.quit);
        let mut empty = Model::new(80, 24, true);
        assert_eq!(
            update(&mut empty, key('q')),
            vec![Effect::Quit {
                reviewers_gone: false
            }]
        );
    }

    #[test]
    fn edit_in_place_accepts_the_edited_content() {
        let mut m = loaded();
        update(&mut m, key('e'));
        assert!(matches!(m.overlay, Overlay::Edit { .. }));
        for c in "// top\n".chars() {
            if c == '\n' {
                update(&mut m, code(KeyCode::Enter, KeyModifiers::NONE));
            } else {
                update(&mut m, key(c));
            }
        }
        let fx = update(&mut m, code(KeyCode::Char('s'), KeyModifiers::CONTROL));
        let [
            Effect::Decide {
                decision: Decision::AcceptEdited(content),
                ..
            },
        ] = fx.as_slice()
        else {
            panic!("{fx:?}")
        };
        // The editor opened at the change under the cursor (line 2), not at line 1.
        assert!(
            content.starts_with("line 1\n// top\nline two\n"),
            "{content}"
        );
        assert!(content.ends_with("line 40\n"));
    }

    #[test]
    fn the_editors_open_at_the_change_under_the_cursor() {
        let mut m = loaded();
        update(&mut m, key('n'));
        let fx = update(&mut m, key('E'));
        let [Effect::ExternalEdit { line, .. }] = fx.as_slice() else {
            panic!("{fx:?}")
        };
        // Hunk 2 changes line 20 (from 0: 19).
        assert_eq!(*line, 19);
    }

    #[test]
    fn side_by_side_and_whitespace_toggles_rebuild_the_rows() {
        let mut m = loaded();
        let unified = m.current().unwrap().view.as_ref().unwrap().rows.len();
        update(&mut m, key('s'));
        assert_eq!(m.mode, DiffMode::SideBySide);
        let v = m.current().unwrap().view.as_ref().unwrap();
        assert!(v.rows.len() < unified);
        assert!(v.rows.iter().any(|r| matches!(r, Row::Pair { .. })));
        update(&mut m, key('w'));
        assert!(m.ignore_ws);
    }

    #[test]
    fn search_scrolls_to_the_match_and_moves_the_hunk_cursor() {
        let mut m = loaded();
        update(&mut m, key('/'));
        for c in "thirty".chars() {
            update(&mut m, key(c));
        }
        update(&mut m, code(KeyCode::Enter, KeyModifiers::NONE));
        let v = m.current().unwrap().view.as_ref().unwrap();
        assert_eq!(v.cursor, 2, "the match is in the third hunk");
        assert!(v.scroll > 0);
        assert_eq!(m.search.as_deref(), Some("thirty"));
    }

    #[test]
    fn n_and_shift_n_step_through_the_matches_until_esc() {
        let mut m = loaded();
        update(&mut m, key('/'));
        for c in "tw".chars() {
            update(&mut m, key(c));
        }
        update(&mut m, code(KeyCode::Enter, KeyModifiers::NONE));
        let first = m.search_row.expect("a match");
        let cursor = |m: &Model| m.current().unwrap().view.as_ref().unwrap().cursor;
        assert_eq!(cursor(&m), 0, "`two` is in the first hunk");
        update(&mut m, key('n'));
        let second = m.search_row.unwrap();
        assert!(second > first);
        assert_eq!(cursor(&m), 1, "`twenty` is in the second hunk");
        assert!(matches!(&m.status, Some((t, _)) if t.contains("match 2 of 2")));
        update(&mut m, key('n'));
        assert_eq!(m.search_row, Some(first), "wraps around");
        update(&mut m, key('N'));
        assert_eq!(m.search_row, Some(second));
        // Enter on an empty search line also goes on.
        update(&mut m, key('/'));
        update(&mut m, code(KeyCode::Enter, KeyModifiers::NONE));
        assert_eq!(m.search_row, Some(first));
        // Esc ends the search: n moves by hunk again.
        update(&mut m, code(KeyCode::Esc, KeyModifiers::NONE));
        assert_eq!(m.search, None);
        let before = cursor(&m);
        update(&mut m, key('n'));
        assert_eq!(cursor(&m), before + 1);
    }

    #[test]
    fn accept_all_decides_every_pending_review() {
        let mut m = loaded();
        update(
            &mut m,
            Msg::Change(Change::upsert(summary("run2", State::Pending, &["b"]))),
        );
        update(
            &mut m,
            Msg::Change(Change::upsert(summary("run3", State::DryRun, &["c"]))),
        );
        // A asks first: anything but y accepts nothing.
        assert!(update(&mut m, key('A')).is_empty());
        assert!(matches!(m.overlay, Overlay::ConfirmAcceptAll));
        assert!(update(&mut m, key('n')).is_empty());
        assert!(matches!(m.overlay, Overlay::None));
        update(&mut m, key('A'));
        let fx = update(&mut m, key('y'));
        assert_eq!(fx.len(), 2);
    }

    #[test]
    fn mouse_clicks_select_and_wheel_scrolls() {
        let mut m = loaded();
        update(
            &mut m,
            Msg::Change(Change::upsert(summary("run2", State::Pending, &["b"]))),
        );
        let click = MouseEvent {
            kind: MouseEventKind::Down(MouseButton::Left),
            column: 2,
            row: 1 + ITEM_HEIGHT,
            modifiers: KeyModifiers::NONE,
        };
        assert_eq!(
            update(&mut m, Msg::Mouse(click)),
            vec![Effect::LoadFiles("run2".into())]
        );
        assert_eq!(m.selected, 1);
    }

    #[test]
    fn a_rebased_review_reloads_its_diff() {
        let mut m = loaded();
        let mut s = summary("run1", State::Pending, &["src/x.rs"]);
        s.diff = "rebased".into();
        let fx = update(&mut m, Msg::Change(Change::upsert(s)));
        assert_eq!(fx, vec![Effect::LoadFiles("run1".into())]);
        assert!(m.current().unwrap().view.is_none());
    }

    #[test]
    fn a_refused_token_is_said_and_kept_not_retried() {
        let mut m = loaded();
        update(&mut m, Msg::Change(Change::Lost("gone".into())));
        assert!(m.status.as_ref().unwrap().0.contains("(retrying)"));
        let why = "http://127.0.0.1:1 refused the token (403 Forbidden): reviewing needs this \
                   gate's REVIEW token";
        let fx = update(&mut m, Msg::Change(Change::Refused(why.into())));
        assert!(fx.is_empty());
        let (text, tone) = m.status.clone().unwrap();
        assert!(
            text.contains("REVIEW token") && !text.contains("retrying"),
            "{text}"
        );
        assert_eq!(tone, Tone::Bad);
        // A key frees the status line; the next tick says it again.
        update(&mut m, key('j'));
        assert_eq!(m.status, None);
        update(&mut m, Msg::Tick(1));
        assert!(m.status.as_ref().unwrap().0.contains("REVIEW token"));
    }

    #[test]
    fn the_rules_command_fetches_the_rules_and_shows_them_in_a_view() {
        let mut m = loaded();
        update(&mut m, key(':'));
        for c in "rules".chars() {
            update(&mut m, key(c));
        }
        let fx = update(&mut m, code(KeyCode::Enter, KeyModifiers::NONE));
        assert_eq!(fx, vec![Effect::ListRules]);
        update(
            &mut m,
            Msg::Rules(Ok("policy: gate\nuser  auto  docs/**\n".into())),
        );
        assert!(
            matches!(&m.overlay, Overlay::Session { text, .. } if text.contains("docs/**")),
            "{:?}",
            m.overlay
        );
        update(&mut m, key('x'));
        assert!(matches!(m.overlay, Overlay::None));
        update(&mut m, Msg::Rules(Err("gone".into())));
        assert!(m.status.as_ref().is_some_and(|s| s.0.contains("gone")));
    }

    #[test]
    fn capital_r_opens_the_rule_chooser_enter_adds_the_rule_and_esc_adds_none() {
        use crate::review::policy::RuleScope;
        use crate::review::rules::NewRule;
        use crate::workspace::config::RuleAction;
        let mut m = loaded();
        assert!(update(&mut m, key('R')).is_empty());
        let Overlay::Rule(c) = &m.overlay else {
            panic!("no chooser: {:?}", m.overlay);
        };
        assert_eq!(c.globs, vec!["src/x.rs", "src/**", "**/*.rs"]);
        assert!(update(&mut m, code(KeyCode::Esc, KeyModifiers::NONE)).is_empty());
        assert!(matches!(m.overlay, Overlay::None));
        assert_eq!(
            m.status.as_ref().map(|s| s.0.as_str()),
            Some("no rule added")
        );
        update(&mut m, key('R'));
        for k in ['l', 'l', 'j', 'l', 'l'] {
            assert!(update(&mut m, key(k)).is_empty());
        }
        let fx = update(&mut m, code(KeyCode::Enter, KeyModifiers::NONE));
        assert_eq!(
            fx,
            vec![Effect::AddRule(NewRule {
                glob: "**/*.rs".into(),
                action: RuleAction::Deny,
                scope: RuleScope::Session,
            })]
        );
        assert!(matches!(m.overlay, Overlay::None));
    }

    #[test]
    fn a_refused_undo_says_what_stands_in_the_way_not_only_that_the_file_changed() {
        let mut m = loaded();
        let why = "cannot undo run run1: `a.rs` was changed later where the run changed it\n\
                   - old\n+ new";
        update(&mut m, Msg::Undone(Err(why.into())));
        let (text, tone) = m.status.clone().unwrap();
        assert_eq!(
            text,
            "undo refused: the run's change cannot be taken back from the file as it is now \
             (Esc closes)"
        );
        assert_eq!(tone, Tone::Bad);
        assert!(matches!(&m.overlay, Overlay::Message { text, .. } if text == why));
    }

    #[test]
    fn a_gate_that_moved_is_announced() {
        let mut m = loaded();
        update(
            &mut m,
            Msg::Change(Change::Moved("http://127.0.0.1:2".into())),
        );
        let (text, _) = m.status.clone().unwrap();
        assert!(text.contains("http://127.0.0.1:2"), "{text}");
        assert_eq!(m.refused, None);
        update(&mut m, key('j'));
        update(&mut m, Msg::Tick(1));
        assert_eq!(m.status, None);
    }
}
