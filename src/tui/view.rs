//! `view`: draw the model. Only the rows on screen are formatted; syntax colours come from the
//! highlighter's cache (plain text until they are ready); word emphasis is computed per
//! visible changed line. With `NO_COLOR` only bold, dim, underline and reverse are used.

use std::ops::Range;

use ratatui::Frame;
use ratatui::layout::{Alignment, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph, Wrap};

use super::columns::{char_cols, clip, cols};
use super::highlight::{Key, Side, Spans};
use super::keymap::Reviewing;
use super::marks::{HunkRisk, row_marks};
use super::model::{DiffView, Filter, Focus, ITEM_HEIGHT, Item, Model, Overlay, Tone};
use super::rowpath::{row_path, truncate};
use super::rows::{DiffMode, Row, emphasis};
use super::rulechoice::RuleChoice;
use crate::diff::{DiffLine, Tag};
use crate::inert::{inert, inert_line};
use crate::review::proposal::State;

/// Where syntax colours come from.
pub trait Styler {
    /// The spans of one line of one version of a file, if known.
    fn line(&self, key: &Key, line: usize) -> Option<Spans>;
}

/// No syntax colours (tests, `NO_COLOR`).
pub(crate) struct Plain;

impl Styler for Plain {
    fn line(&self, _: &Key, _: usize) -> Option<Spans> {
        None
    }
}

impl Styler for super::highlight::Highlighter {
    fn line(&self, key: &Key, line: usize) -> Option<Spans> {
        super::highlight::Highlighter::line(self, key, line)
    }
}

struct Palette {
    color: bool,
}

impl Palette {
    /// A search match: yellow, or reversed without colour.
    fn search_match(&self) -> Style {
        if self.color {
            Style::default()
                .bg(Color::Yellow)
                .fg(Color::Black)
                .add_modifier(Modifier::BOLD)
        } else {
            Style::default().add_modifier(Modifier::REVERSED)
        }
    }

    fn fg(&self, c: Color) -> Style {
        if self.color {
            Style::default().fg(c)
        } else {
            Style::default()
        }
    }
    fn bg(&self, tag: Tag, emph: bool) -> Style {
        if !self.color {
            return match (tag, emph) {
                (Tag::Equal, _) => Style::default(),
                (_, true) => Style::default().add_modifier(Modifier::UNDERLINED | Modifier::BOLD),
                (Tag::Insert, false) => Style::default().add_modifier(Modifier::BOLD),
                (Tag::Delete, false) => Style::default(),
            };
        }
        match (tag, emph) {
            (Tag::Equal, _) => Style::default(),
            (Tag::Insert, false) => Style::default().bg(Color::Rgb(22, 52, 32)),
            (Tag::Insert, true) => Style::default().bg(Color::Rgb(36, 104, 58)),
            (Tag::Delete, false) => Style::default().bg(Color::Rgb(62, 26, 30)),
            (Tag::Delete, true) => Style::default().bg(Color::Rgb(128, 40, 48)),
        }
    }
    fn sign(&self, tag: Tag) -> Style {
        match tag {
            Tag::Equal => self.dim(),
            Tag::Insert => self.fg(Color::Green).add_modifier(Modifier::BOLD),
            Tag::Delete => self.fg(Color::Red).add_modifier(Modifier::BOLD),
        }
    }
    fn dim(&self) -> Style {
        if self.color {
            Style::default().fg(Color::DarkGray)
        } else {
            Style::default().add_modifier(Modifier::DIM)
        }
    }
    fn accent(&self) -> Style {
        self.fg(Color::Cyan)
    }
    fn selected(&self) -> Style {
        if self.color {
            Style::default().bg(Color::Rgb(45, 55, 75))
        } else {
            Style::default().add_modifier(Modifier::REVERSED)
        }
    }
}

fn state_icon(state: State, p: &Palette) -> (&'static str, Style) {
    match state {
        State::Pending => ("●", p.fg(Color::Yellow).add_modifier(Modifier::BOLD)),
        State::DryRun => ("◆", p.fg(Color::Blue)),
        State::Applied => ("✓", p.fg(Color::Green)),
        State::Rejected => ("✗", p.fg(Color::Red)),
        State::Expired => ("⌛", p.dim()),
        State::Failed => ("!", p.fg(Color::Red)),
    }
}

fn age(now: u64, created: u64) -> String {
    let s = now.saturating_sub(created);
    match s {
        _ if now == 0 => String::new(),
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m", s / 60),
        3600..86_400 => format!("{}h", s / 3600),
        _ => format!("{}d", s / 86_400),
    }
}

/// Draw everything.
pub fn draw(f: &mut Frame, m: &Model, hl: &dyn Styler) {
    let p = Palette { color: m.color };
    let a = m.areas();
    draw_queue(f, m, a.queue, &p);
    match &m.overlay {
        Overlay::Edit { path, input, .. } => {
            let mut t = input.clone();
            t.set_block(
                Block::default()
                    .borders(Borders::ALL)
                    .border_type(BorderType::Rounded)
                    .title(format!(
                        " editing {} — Ctrl+S accepts this content, Esc cancels ",
                        inert_line(path)
                    )),
            );
            f.render_widget(&t, a.diff);
        }
        _ => draw_diff(f, m, a.diff, hl, &p),
    }
    draw_status(f, m, a.status, &p);
    draw_hints(f, m, a.hints, &p);
    match &m.overlay {
        Overlay::Help => draw_help(f, m, &p),
        Overlay::Note {
            run_id,
            accept,
            input,
        } => {
            let area = popup(a.diff, a.diff.width.saturating_sub(6).min(80), 8);
            f.render_widget(Clear, area);
            let mut t = input.clone();
            let (title, colour, send) = match accept {
                None => (
                    format!(" reject {run_id}: a note for the agent "),
                    Color::Red,
                    "sends",
                ),
                Some(d) => (
                    format!(" accept {run_id} ({}): a note for the agent ", accepting(d)),
                    Color::Green,
                    "accepts",
                ),
            };
            t.set_block(
                Block::default()
                    .borders(Borders::ALL)
                    .border_type(BorderType::Rounded)
                    .border_style(p.fg(colour))
                    .title(title)
                    .title_bottom(format!(" Enter {send} · Alt+Enter new line · Esc cancels ")),
            );
            f.render_widget(&t, area);
        }
        Overlay::ConfirmAcceptAll => {
            let n = m.pending_count();
            let question = format!(
                "Accept all {n} pending review{} whole? (y/n)",
                if n == 1 { "" } else { "s" }
            );
            confirm(f, &p, " accept all? ", vec![Line::from(question)]);
        }
        Overlay::ConfirmUndo { run_id, paths } => {
            let files = truncate(&inert_line(&paths.join(", ")), 56);
            let text = vec![
                Line::from(format!(
                    "Undo {run_id}? It takes back this run's own change to:"
                )),
                Line::from(files),
                Line::from("Later changes to them stay. (y/n)"),
            ];
            confirm(f, &p, " undo? ", text);
        }
        Overlay::ConfirmRewind { run_id } => {
            let text = vec![
                Line::from(format!("Take back {run_id} and every later applied run?")),
                Line::from("Newest first; changes since on other lines stay. (y/n)"),
            ];
            confirm(f, &p, " rewind? ", text);
        }
        Overlay::Message { title, text } => draw_message(f, &p, title, text),
        Overlay::Session {
            title,
            text,
            scroll,
        } => draw_session(f, &p, title, text, *scroll),
        Overlay::ConfirmQuit => confirm(f, &p, " quit? ", quit_question(m)),
        Overlay::Rule(choice) => draw_rule_choice(f, &p, choice),
        _ => {}
    }
}

/// What an acceptance takes, for the note editor's title.
fn accepting(d: &crate::review::proposal::Decision) -> String {
    use crate::review::proposal::Decision;
    match d {
        Decision::AcceptHunks(h) => {
            let n = h.len();
            format!("{n} hunk{}", if n == 1 { "" } else { "s" })
        }
        Decision::AcceptLines { skip, .. } => {
            let n = skip.len();
            format!("{n} line{} left out", if n == 1 { "" } else { "s" })
        }
        _ => "whole".to_string(),
    }
}

/// Quitting with reviews pending: agents wait for them; a patch's files are left unapplied.
fn quit_question(m: &Model) -> Vec<Line<'static>> {
    let n = m.pending_count();
    if m.info.patch.is_some() {
        let (files, them) = if n == 1 {
            ("1 file is".to_string(), "it")
        } else {
            (format!("{n} files are"), "them")
        };
        return vec![
            Line::from(format!("{files} not decided yet.")),
            Line::from(format!("Quit and leave {them} unapplied? (y/n)")),
        ];
    }
    vec![
        Line::from(format!(
            "{n} review{} still pending.",
            if n == 1 { " is" } else { "s are" }
        )),
        Line::from("Quit and answer the waiting agents REVIEWER_GONE? (y/n)"),
    ]
}

fn popup(outer: Rect, width: u16, height: u16) -> Rect {
    let w = width.min(outer.width);
    let h = height.min(outer.height);
    Rect::new(
        outer.x + (outer.width - w) / 2,
        outer.y + (outer.height - h) / 2,
        w,
        h,
    )
}

/// A pane's frame. The one keys go to says so without colour too: a heavy border, and its
/// title marked `▶` in bold (docs/DESIGN.md §6).
fn pane(title: String, focused: bool, p: &Palette) -> Block<'static> {
    let block = Block::default().borders(Borders::ALL);
    if focused {
        block
            .border_type(BorderType::Thick)
            .border_style(p.accent().add_modifier(Modifier::BOLD))
            .title(Span::styled(
                format!("{FOCUS_MARK}{title}"),
                p.accent().add_modifier(Modifier::BOLD),
            ))
    } else {
        block
            .border_type(BorderType::Rounded)
            .border_style(p.dim())
            .title(title)
    }
}

/// What starts the title of the pane keys go to.
const FOCUS_MARK: &str = "▶";

/// `s` in lines of at most `width` characters (broken at spaces where possible), at most
/// `max` of them; the last ends with `…` when text was left out.
fn wrap(s: &str, width: usize, max: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut rest: Vec<char> = s.chars().collect();
    while !rest.is_empty() && out.len() < max {
        if rest.len() <= width {
            out.push(rest.iter().collect());
            rest.clear();
            break;
        }
        let cut = rest[..=width]
            .iter()
            .rposition(|&c| c == ' ')
            .filter(|&i| i > width / 2)
            .unwrap_or(width);
        out.push(
            rest[..cut]
                .iter()
                .collect::<String>()
                .trim_end()
                .to_string(),
        );
        rest.drain(..cut);
        while rest.first() == Some(&' ') {
            rest.remove(0);
        }
    }
    if !rest.is_empty()
        && let Some(last) = out.last_mut()
    {
        *last = truncate(
            &format!("{last} {}", rest.iter().collect::<String>()),
            width,
        );
    }
    out
}

fn draw_queue(f: &mut Frame, m: &Model, area: Rect, p: &Palette) {
    let pending = m.pending_count();
    let shown = m.visible();
    let title = match m.filter {
        Filter::All => format!(" Queue · {pending} pending "),
        other => format!(
            " Queue · {pending} pending · {} {}/{} ",
            other.name(),
            shown.len(),
            m.items.len()
        ),
    };
    let block = pane(title, m.focus == Focus::Queue, p);
    let inner = block.inner(area);
    f.render_widget(block, area);
    if m.items.is_empty() {
        f.render_widget(
            Paragraph::new(vec![
                Line::from(""),
                Line::styled(" no reviews yet", p.dim()),
            ]),
            inner,
        );
        return;
    }
    let w = inner.width as usize;
    let mut lines: Vec<Line> = Vec::new();
    let cap = (inner.height / ITEM_HEIGHT) as usize;
    if shown.is_empty() {
        let text = format!(" no {} reviews (f: next filter)", m.filter.name());
        f.render_widget(Paragraph::new(Line::styled(text, p.dim())), inner);
        return;
    }
    for &k in shown.iter().skip(m.queue_scroll).take(cap) {
        let item = &m.items[k];
        let s = &item.summary;
        let (icon, icon_style) = if item.summary.undone {
            ("↶", p.dim())
        } else {
            state_icon(s.state, p)
        };
        let sel = k == m.selected;
        let base = if sel { p.selected() } else { Style::default() };
        let closed = !item.is_open();
        let text_style = if closed { base.patch(p.dim()) } else { base };
        let ago = age(m.now, s.created);
        // The tool first (the run id is in the diff's title too), the age always in sight;
        // a revision says which it is and the note it answers instead of the run id.
        let room = w.saturating_sub(2 + ago.chars().count() + 2);
        let head = truncate(
            &format!(" {} {}", inert_line(&s.tool), row_tag(s, m.reviewing())),
            room,
        );
        let pad = w.saturating_sub(head.chars().count() + 2 + ago.chars().count() + 1);
        lines.push(Line::from(vec![
            Span::styled(format!(" {icon}"), base.patch(icon_style)),
            Span::styled(head, text_style.add_modifier(Modifier::BOLD)),
            Span::styled(" ".repeat(pad), base),
            Span::styled(format!("{ago} "), base.patch(p.dim())),
        ]));

        lines.push(path_line(s, w, (base, text_style, closed), p));
    }
    f.render_widget(Paragraph::new(lines), inner);
}

/// A queue row's client: its name, after `⊘` once the agent that sent it has disconnected
/// (docs/DESIGN.md §6).
fn client_tag(s: &crate::review::queue::Summary) -> String {
    let name = inert_line(s.client.as_deref().unwrap_or_default()).into_owned();
    match s.agent.as_ref().and_then(|a| a.connected) {
        Some(false) if name.is_empty() => "⊘ gone".to_string(),
        Some(false) => format!("⊘ {name}"),
        _ => name,
    }
}

/// A queue row's second line: the path, the counts, the risk mark (a new parse error, lines
/// deleted that the edit does not show: docs/DESIGN.md §6) and the client, within `w`. The
/// path keeps 8 columns: the client goes first, then the mark shortens.
fn path_line(
    s: &crate::review::queue::Summary,
    w: usize,
    (base, text_style, closed): (Style, Style, bool),
    p: &Palette,
) -> Line<'static> {
    // A failed call changed nothing: no counts to show.
    let failed = s.state == State::Failed;
    let counts = if failed {
        0
    } else {
        format!("+{} -{}", s.added, s.removed).chars().count()
    };
    // The client only where the path keeps room enough.
    let client = if w >= 36 {
        truncate(&client_tag(s), 14)
    } else {
        String::new()
    };
    let width = |risk: &str| match risk.chars().count() {
        0 => 0,
        n => n + 1,
    };
    let room = |risk: &str, client: &str| {
        w.saturating_sub(3 + 1 + counts + width(risk) + 1 + client.chars().count())
    };
    let marks = row_marks(s);
    let (risk, client) = marks
        .iter()
        .flat_map(|r| [(r.clone(), client.clone()), (r.clone(), String::new())])
        .find(|(r, c)| room(r, c) >= 8)
        .unwrap_or_else(|| (marks.last().cloned().unwrap_or_default(), String::new()));
    let path = row_path(&s.paths, room(&risk, &client).max(8));
    let pad = w.saturating_sub(
        3 + path.chars().count() + 1 + counts + width(&risk) + 1 + client.chars().count(),
    );
    let dim = if closed { p.dim() } else { Style::default() };
    let (added, removed) = if failed {
        (String::new(), String::new())
    } else {
        (format!("+{}", s.added), format!(" -{}", s.removed))
    };
    Line::from(vec![
        Span::styled(format!("   {path} "), text_style),
        Span::styled(added, base.patch(p.fg(Color::Green)).patch(dim)),
        Span::styled(removed, base.patch(p.fg(Color::Red)).patch(dim)),
        Span::styled(
            if risk.is_empty() {
                String::new()
            } else {
                format!(" {risk}")
            },
            base.patch(p.fg(Color::Yellow)).add_modifier(Modifier::BOLD),
        ),
        Span::styled(" ".repeat(pad.max(1)), base),
        Span::styled(client, base.patch(p.dim())),
    ])
}

/// What a queue row says after the tool: the run id, for a review withdrawn without a
/// decision `withdrawn: why` (its agent went away or cancelled), for a revision `vN: the
/// note it answers` (its first line), for a patch's file that does not apply `does not
/// apply: why`.
fn row_tag(s: &crate::review::queue::Summary, reviewing: Reviewing) -> String {
    if let Some(why) = s.agent.as_ref().and_then(|a| a.withdrawn.as_deref()) {
        return format!("withdrawn: {}", inert_line(why));
    }
    if let (Reviewing::Patch, Some(failure)) = (reviewing, &s.failure) {
        let why = failure
            .split_once(": ")
            .map_or(failure.as_str(), |(_, m)| m);
        return format!(
            "does not apply: {}",
            inert_line(why.lines().next().unwrap_or_default())
        );
    }
    match (s.revision, &s.previous_note) {
        (Some(n), Some(note)) => {
            let mut lines = note.trim().lines();
            let first = inert_line(lines.next().unwrap_or_default()).into_owned();
            let more = if lines.next().is_some() { " …" } else { "" };
            format!("v{n}: {first}{more}")
        }
        _ => s.run_id.clone(),
    }
}

fn draw_diff(f: &mut Frame, m: &Model, area: Rect, hl: &dyn Styler, p: &Palette) {
    let Some(item) = m.current() else {
        draw_waiting(f, m, area, p);
        return;
    };
    let block = diff_block(m, item, p);
    let inner = block.inner(area);
    f.render_widget(block, area);
    if let Some(failure) = &item.summary.failure {
        draw_failure(f, failure, m.reviewing(), inner, p);
        return;
    }
    if let Some((at, text)) = item.interdiff_shown() {
        let lines = note_and_warnings(item, inner, p);
        draw_interdiff(f, m, (at, text), lines, inner, p);
        return;
    }
    let Some(v) = &item.view else {
        let text = if item.loading {
            "loading…"
        } else {
            "select to load"
        };
        f.render_widget(Paragraph::new(Line::styled(text, p.dim())), inner);
        return;
    };
    let mut lines = note_and_warnings(item, inner, p);
    let budget = (inner.height as usize).saturating_sub(lines.len());
    let ctx = RowCtx {
        v,
        item,
        m,
        hl,
        p,
        width: inner.width as usize,
    };
    // Every match of the search in progress stands out.
    let found = p.search_match();
    for (r, row) in v.rows.iter().enumerate().skip(v.scroll).take(budget) {
        let mut line = ctx.row(row);
        // Line mode: the line under the cursor has its numbers reversed.
        if v.line_cursor == Some(r)
            && let Some(first) = line.spans.first_mut()
        {
            first.style = first
                .style
                .add_modifier(Modifier::REVERSED | Modifier::BOLD);
        }
        lines.push(match m.search.as_deref() {
            Some(pattern) => highlight(line, pattern, found),
            None => line,
        });
    }
    f.render_widget(Paragraph::new(lines), inner);
}

/// A revision's interdiff in the diff pane, below the note it answers, from line `at`: its
/// lines coloured by what they are (agents' text made inert), scrolled like the diff.
fn draw_interdiff(
    f: &mut Frame,
    m: &Model,
    (at, text): (usize, &str),
    mut lines: Vec<Line<'static>>,
    inner: Rect,
    p: &Palette,
) {
    if text.is_empty() {
        lines.push(Line::styled(
            " The same result as the rejected proposal: nothing changed since.",
            p.fg(Color::Yellow).add_modifier(Modifier::BOLD),
        ));
    }
    let all: Vec<&str> = text.lines().collect();
    let budget = (inner.height as usize).saturating_sub(lines.len());
    let width = (inner.width as usize).min(MAX_COLS);
    for k in (at..all.len()).take(budget) {
        let l = all[k];
        // A file's header is a `---` line followed by a `+++` one (a removed line may start
        // with `--` too).
        let header = (l.starts_with("--- ")
            && all.get(k + 1).is_some_and(|n| n.starts_with("+++ ")))
            || (l.starts_with("+++ ") && k > 0 && all[k - 1].starts_with("--- "));
        let style = match l.chars().next() {
            _ if header => p.accent().add_modifier(Modifier::BOLD),
            _ if l.starts_with("@@") => p.accent(),
            Some('+') => p.bg(Tag::Insert, false),
            Some('-') => p.bg(Tag::Delete, false),
            Some(' ') | Some('\\') => Style::default(),
            _ => p.dim(),
        };
        let (spans, _) = styled(
            &inert(l),
            &[],
            &[],
            |_| style,
            m.hscroll.min(MAX_COLS),
            width,
        );
        lines.push(Line::from(pad_to(spans, width)).style(style));
    }
    f.render_widget(Paragraph::new(lines), inner);
}

/// Above why a patch's file does not apply.
const PATCH_FAILURE: &str = "This file of the patch does not apply; nothing of it is written \
     (W writes the hunks that do not apply to FILE.rej). Why:";

/// A failed agent call in the diff pane: what it named and the whole answer the agent got,
/// wrapped (agents' text made inert); for a patch's file that does not apply, why not.
fn draw_failure(f: &mut Frame, failure: &str, reviewing: Reviewing, inner: Rect, p: &Palette) {
    let width = (inner.width as usize).saturating_sub(2).max(8);
    let style = p.fg(Color::Red).add_modifier(Modifier::BOLD);
    let mut lines: Vec<Line> = match reviewing {
        Reviewing::Agents => vec![Line::styled(
            " This call failed; nothing was proposed. The agent was told:",
            style,
        )],
        Reviewing::Patch => wrap(PATCH_FAILURE, width, usize::MAX)
            .into_iter()
            .map(|chunk| Line::styled(format!(" {chunk}"), style))
            .collect(),
    };
    lines.push(Line::from(""));
    let text = inert(failure).into_owned();
    for line in text.lines() {
        for chunk in wrap(line, width, usize::MAX) {
            lines.push(Line::from(format!(" {chunk}")));
        }
    }
    f.render_widget(Paragraph::new(lines), inner);
}

/// The diff pane with no review yet: how agents connect.
fn draw_waiting(f: &mut Frame, m: &Model, area: Rect, p: &Palette) {
    let block = pane(" Diff ".into(), m.focus == Focus::Diff, p);
    let inner = block.inner(area);
    f.render_widget(block, area);
    let text = vec![
        Line::from(""),
        Line::styled(
            "Waiting for agents.",
            Style::default().add_modifier(Modifier::BOLD),
        ),
        Line::from(""),
        Line::from(format!("MCP endpoint: {}", endpoint(m))),
        Line::styled(
            "Connect a client with `patchgate config claude|codex|cursor|vscode`.",
            p.dim(),
        ),
        Line::styled(
            "Every edit an agent sends shows up here for you to accept, trim or reject.",
            p.dim(),
        ),
    ];
    f.render_widget(
        Paragraph::new(text)
            .alignment(Alignment::Center)
            .wrap(Wrap { trim: true }),
        inner,
    );
}

/// The diff pane's frame: the review in its title, where the cursor is below.
fn diff_block(m: &Model, item: &Item, p: &Palette) -> Block<'static> {
    let s = &item.summary;
    // A revision's title says which is shown, its diff or its interdiff.
    let shown = match s.revision {
        Some(n) if item.interdiff.is_some() => format!(" · v{n} interdiff"),
        Some(n) => format!(" · v{n} diff"),
        None => String::new(),
    };
    let title = format!(
        " {} · {} · {}{shown}{} ",
        inert_line(&s.tool),
        s.run_id,
        match (item.summary.undone, m.reviewing(), s.state) {
            (true, ..) => "undone",
            (_, Reviewing::Patch, State::Failed) => "does not apply",
            _ => s.state.name(),
        },
        s.client
            .as_deref()
            .map(|c| format!(" · {}", inert_line(c)))
            .unwrap_or_default()
    );
    let block = pane(title, m.focus == Focus::Diff, p);
    if let Some((at, text)) = item.interdiff_shown() {
        let total = text.lines().count();
        let of = s.revision_of.as_deref().unwrap_or_default();
        return block.title_bottom(
            Line::from(format!(
                " from {of} · i shows the diff · line {}/{total} ",
                (at + 1).min(total)
            ))
            .alignment(Alignment::Right),
        );
    }
    let Some(v) = &item.view else {
        return block;
    };
    let on = v.included.iter().filter(|b| **b).count();
    let left_out = match v.skipped.iter().filter(|&&(h, _)| v.included[h]).count() {
        0 => String::new(),
        n => format!(" · {n} line{} left out", if n == 1 { "" } else { "s" }),
    };
    let mode = if v.line_cursor.is_some() {
        " · LINE MODE"
    } else {
        ""
    };
    let total = v.hunk_total();
    // A failed call, or a review with nothing to show, has no hunks to count.
    if total == 0 {
        return block;
    }
    let key = if s.revision.is_some() {
        " i shows the interdiff ·"
    } else {
        ""
    };
    block.title_bottom(
        Line::from(format!(
            "{key} hunk {}/{total} · {on} of {total} included{left_out}{mode} ",
            (v.cursor + 1).min(total),
        ))
        .alignment(Alignment::Right),
    )
}

/// The reviewer's note and the engine's warnings above the diff (a third of it at most).
fn note_and_warnings(item: &Item, inner: Rect, p: &Palette) -> Vec<Line<'static>> {
    let mut lines: Vec<Line> = Vec::with_capacity(inner.height as usize);
    let width = inner.width as usize;
    let s = &item.summary;
    // The notes take a few rows at most, fewer in a low pane: the diff comes first.
    let rows = (inner.height as usize / 4).clamp(1, NOTE_ROWS);
    // A revision: the note it answers.
    if let Some(note) = &s.previous_note {
        lines.extend(noted(" answers: ", note, rows, width, p.fg(Color::Magenta)));
    }
    if let Some(r) = &s.review
        && !r.note.is_empty()
    {
        lines.extend(noted(" note: ", &r.note, rows, width, p.dim()));
    }
    // Warnings wrap (up to three lines each) within a third of the pane.
    'warnings: for w in &s.warnings {
        for chunk in wrap(&format!("⚠ {w}"), width.saturating_sub(2).max(8), 3) {
            if lines.len() + 1 >= inner.height as usize / 3 {
                break 'warnings;
            }
            lines.push(Line::styled(format!(" {chunk}"), p.fg(Color::Yellow)));
        }
    }
    lines
}

/// A note (made inert) after `prefix`, each of its lines on its own row, at most `rows` of
/// them (the last ending in `…` when more were left out), each cut to `width`.
fn noted(prefix: &str, note: &str, rows: usize, width: usize, style: Style) -> Vec<Line<'static>> {
    let note = inert(note.trim()).into_owned();
    let indent = " ".repeat(prefix.chars().count());
    let more = note.lines().count() > rows;
    note.lines()
        .take(rows)
        .enumerate()
        .map(|(k, text)| {
            let lead = if k == 0 { prefix } else { indent.as_str() };
            let cut = if more && k + 1 == rows { " …" } else { "" };
            Line::styled(truncate(&format!("{lead}{text}{cut}"), width), style)
        })
        .collect()
}

fn endpoint(m: &Model) -> String {
    if m.info.address.is_empty() || m.info.address == "not listening" {
        "not listening".into()
    } else {
        format!("http://{}/mcp", m.info.address)
    }
}

/// `line` with every occurrence of `pattern` (smart case) within one span in `style`.
fn highlight(line: Line<'static>, pattern: &str, style: Style) -> Line<'static> {
    if pattern.is_empty() {
        return line;
    }
    let exact = pattern.chars().any(char::is_uppercase);
    let needle: Vec<char> = if exact {
        pattern.chars().collect()
    } else {
        pattern.to_lowercase().chars().collect()
    };
    let fold = |c: char| {
        if exact {
            c
        } else {
            c.to_lowercase().next().unwrap_or(c)
        }
    };
    let mut spans = Vec::with_capacity(line.spans.len());
    for span in line.spans {
        let chars: Vec<char> = span.content.chars().collect();
        let mut start = 0;
        let mut i = 0;
        while i + needle.len() <= chars.len() {
            if chars[i..i + needle.len()]
                .iter()
                .map(|&c| fold(c))
                .eq(needle.iter().copied())
            {
                if i > start {
                    spans.push(Span::styled(
                        chars[start..i].iter().collect::<String>(),
                        span.style,
                    ));
                }
                let hit: String = chars[i..i + needle.len()].iter().collect();
                spans.push(Span::styled(hit, span.style.patch(style)));
                i += needle.len();
                start = i;
            } else {
                i += 1;
            }
        }
        if start == 0 {
            spans.push(span);
        } else if start < chars.len() {
            spans.push(Span::styled(
                chars[start..].iter().collect::<String>(),
                span.style,
            ));
        }
    }
    Line { spans, ..line }
}

/// A yes/no question in a small centred box.
/// A long message (a refused undo's three states) in a panel over most of the screen.
fn draw_message(f: &mut Frame, p: &Palette, title: &str, text: &str) {
    let full = f.area();
    let area = popup(
        full,
        full.width.saturating_sub(4),
        full.height.saturating_sub(2),
    );
    f.render_widget(Clear, area);
    let lines: Vec<Line> = text
        .lines()
        .map(|l| {
            let style = match l.chars().next() {
                Some('+') if !l.starts_with("+++") => p.fg(Color::Green),
                Some('-') if !l.starts_with("---") => p.fg(Color::Red),
                _ => Style::default(),
            };
            Line::styled(inert_line(l).into_owned(), style)
        })
        .collect();
    f.render_widget(
        Paragraph::new(lines).wrap(Wrap { trim: false }).block(
            Block::default()
                .borders(Borders::ALL)
                .border_type(BorderType::Rounded)
                .border_style(p.fg(Color::Red))
                .title(title.to_string())
                .title_bottom(" any key closes "),
        ),
        area,
    );
}

/// The session's diff over the whole screen, from line `scroll` (`:session`).
fn draw_session(f: &mut Frame, p: &Palette, title: &str, text: &str, scroll: usize) {
    let full = f.area();
    let area = popup(
        full,
        full.width.saturating_sub(2),
        full.height.saturating_sub(1),
    );
    f.render_widget(Clear, area);
    let rows = usize::from(area.height.saturating_sub(2));
    let total = text.lines().count();
    let lines: Vec<Line> = text
        .lines()
        .skip(scroll)
        .take(rows)
        .map(|l| {
            let style = match l.chars().next() {
                Some('+') if !l.starts_with("+++") => p.fg(Color::Green),
                Some('-') if !l.starts_with("---") => p.fg(Color::Red),
                Some('@') => p.accent(),
                _ => Style::default(),
            };
            Line::styled(inert_line(l).into_owned(), style)
        })
        .collect();
    f.render_widget(
        Paragraph::new(lines).block(
            Block::default()
                .borders(Borders::ALL)
                .border_type(BorderType::Rounded)
                .border_style(p.accent())
                .title(title.to_string())
                .title_bottom(format!(
                    " line {}/{total} · j/k PgUp/PgDn g/G scroll · any other key closes ",
                    (scroll + 1).min(total)
                )),
        ),
        area,
    );
}

fn confirm(f: &mut Frame, p: &Palette, title: &str, text: Vec<Line<'static>>) {
    let height = u16::try_from(text.len()).unwrap_or(1).saturating_add(2);
    let area = popup(f.area(), 64.min(f.area().width), height);
    f.render_widget(Clear, area);
    f.render_widget(
        Paragraph::new(text).alignment(Alignment::Center).block(
            Block::default()
                .borders(Borders::ALL)
                .border_type(BorderType::Rounded)
                .border_style(p.fg(Color::Yellow))
                .title(title.to_string()),
        ),
        area,
    );
}

/// The rule chooser (`R`): the globs one a line, the action and the scope on one line each;
/// the chosen one `(•)` and bold, the line the arrows change marked `▶`.
fn draw_rule_choice(f: &mut Frame, p: &Palette, c: &RuleChoice) {
    use super::rulechoice::{ACTIONS, Line as Which, SCOPES, scope_name};
    let pick = |text: String, chosen: bool| {
        let mark = if chosen { "(•) " } else { "( ) " };
        let style = if chosen {
            p.accent().add_modifier(Modifier::BOLD)
        } else {
            Style::default()
        };
        Span::styled(format!("{mark}{text}  "), style)
    };
    let head = |which: Which, label: &str| {
        let mark = if c.line == which { "▶ " } else { "  " };
        Span::styled(format!("{mark}{label:<7}"), p.accent())
    };
    let mut lines: Vec<Line<'static>> = Vec::new();
    for (i, glob) in c.globs.iter().enumerate() {
        let label = if i == 0 {
            head(Which::Glob, "glob")
        } else {
            Span::raw(" ".repeat(9))
        };
        lines.push(Line::from(vec![
            label,
            pick(inert_line(glob).into_owned(), i == c.glob),
        ]));
    }
    let mut action = vec![head(Which::Action, "action")];
    action.extend(
        ACTIONS
            .iter()
            .enumerate()
            .map(|(i, a)| pick(a.as_str().into(), i == c.action)),
    );
    lines.push(Line::from(action));
    let mut scope = vec![head(Which::Scope, "keep")];
    scope.extend(
        SCOPES
            .iter()
            .enumerate()
            .map(|(i, s)| pick(scope_name(*s).into(), i == c.scope)),
    );
    lines.push(Line::from(scope));
    lines.push(Line::from(Span::styled(
        " ↑/↓ line · ←/→ choose · Enter adds the rule · Esc cancels",
        p.dim(),
    )));
    let height = u16::try_from(lines.len())
        .unwrap_or(u16::MAX)
        .saturating_add(2);
    let area = popup(f.area(), 76.min(f.area().width), height);
    f.render_widget(Clear, area);
    f.render_widget(
        Paragraph::new(lines).block(
            Block::default()
                .borders(Borders::ALL)
                .border_type(BorderType::Rounded)
                .border_style(p.fg(Color::Yellow))
                .title(format!(" remember as a rule ({}) ", c.run_id)),
        ),
        area,
    );
}

/// The rows a reviewer's note takes above the diff at most.
const NOTE_ROWS: usize = 4;

struct RowCtx<'a> {
    v: &'a DiffView,
    item: &'a Item,
    m: &'a Model,
    hl: &'a dyn Styler,
    p: &'a Palette,
    width: usize,
}

/// The characters a line may show at most (tabs expanded), to bound the work.
const MAX_COLS: usize = 400;

impl RowCtx<'_> {
    fn included(&self, file: usize, hunk: usize) -> bool {
        self.v
            .included
            .get(self.v.files[file].first_hunk + hunk)
            .copied()
            .unwrap_or(true)
    }

    /// Whether line `line` of the hunk was left out in line mode.
    fn skipped(&self, file: usize, hunk: usize, line: usize) -> bool {
        let g = self.v.files[file].first_hunk + hunk;
        self.v.skipped.contains(&(g, line))
    }

    fn row(&self, row: &Row) -> Line<'static> {
        match *row {
            Row::File { file } => self.file_row(file),
            Row::Risk { file, hunk } => self.risk_row(file, hunk),
            Row::Hunk { file, hunk } => self.hunk_row(file, hunk),
            Row::Folded { .. } => Line::styled(
                "      ⋯ whitespace-only changes (w shows them)",
                self.p.dim(),
            ),
            Row::Line {
                file,
                hunk,
                line,
                partner,
            } => self.line_row(file, hunk, line, partner),
            Row::Same { file, hunk, line } => self.same_row(file, hunk, line),
            Row::Pair {
                file,
                hunk,
                old,
                new,
            } => self.pair_row(file, hunk, old, new),
        }
    }

    /// A file's header: its path, what happens to it, its counts.
    fn file_row(&self, file: usize) -> Line<'static> {
        let fv = &self.v.files[file];
        let what = if fv.content.created {
            " (new file)"
        } else if fv.content.deleted {
            " (deleted)"
        } else {
            ""
        };
        let mode = fv
            .content
            .mode_change
            .as_deref()
            .map(|m| format!("  mode {}", inert_line(m)))
            .unwrap_or_default();
        let text = format!(
            "━━ {}{what}{mode}  +{} -{} ",
            inert_line(&fv.content.path),
            fv.diff.added,
            fv.diff.removed
        );
        let fill = "━".repeat(self.width.saturating_sub(text.chars().count()));
        Line::styled(
            format!("{text}{fill}"),
            self.p.accent().add_modifier(Modifier::BOLD),
        )
    }

    /// A hunk's header: included or not, the cursor.
    fn hunk_row(&self, file: usize, hunk: usize) -> Line<'static> {
        let g = self.v.files[file].first_hunk + hunk;
        let cursor = g == self.v.cursor;
        let on = self.included(file, hunk);
        let h = &self.v.files[file].diff.hunks[hunk];
        let (added, removed) = h.counts();
        let mut style = if on { self.p.accent() } else { self.p.dim() };
        if cursor {
            style = style.add_modifier(Modifier::REVERSED | Modifier::BOLD);
        }
        let mark = if !self.item.is_open() {
            "   "
        } else if on {
            "[✓]"
        } else {
            "[ ]"
        };
        Line::from(vec![
            Span::styled(if cursor { "▶ " } else { "  " }, style),
            Span::styled(
                format!(
                    "{mark} {}  hunk {}/{}  +{added} -{removed} ",
                    h.header(),
                    g + 1,
                    self.v.hunk_total()
                ),
                style,
            ),
        ])
    }

    /// The line above a hunk that risks something: the lines it deletes that the agent never
    /// showed, the parse errors on its lines.
    fn risk_row(&self, file: usize, hunk: usize) -> Line<'static> {
        let g = self.v.files[file].first_hunk + hunk;
        let text = self.v.risks.get(g).map(HunkRisk::text).unwrap_or_default();
        Line::styled(
            format!("  {}", inert_line(&text)),
            self.p.fg(Color::Yellow).add_modifier(Modifier::BOLD),
        )
    }

    /// A unified line, or left out in line mode.
    fn line_row(
        &self,
        file: usize,
        hunk: usize,
        line: usize,
        partner: Option<usize>,
    ) -> Line<'static> {
        let h = &self.v.files[file].diff.hunks[hunk];
        let l = &h.lines[line];
        let left_out = self.skipped(file, hunk, line);
        let on = self.included(file, hunk) && !left_out;
        let partner = partner.map(|k| h.lines[k].text.as_str());
        let mut spans = vec![
            Span::styled(num(l.old_index), self.p.dim()),
            Span::styled(num(l.new_index), self.p.dim()),
            Span::styled(
                match l.tag {
                    _ if left_out => "· ",
                    Tag::Equal => "  ",
                    Tag::Insert => "+ ",
                    Tag::Delete => "- ",
                },
                self.p.sign(l.tag),
            ),
        ];
        spans.extend(self.content(file, l, partner, self.width.saturating_sub(12)));
        dim_if(Line::from(spans), !on, self.p)
    }

    /// A whitespace-only change shown once, as context.
    fn same_row(&self, file: usize, hunk: usize, line: usize) -> Line<'static> {
        let h = &self.v.files[file].diff.hunks[hunk];
        let l = &h.lines[line];
        let mut spans = vec![
            Span::styled("     ", self.p.dim()),
            Span::styled(num(l.new_index), self.p.dim()),
            Span::styled("~ ", self.p.dim()),
        ];
        let mut eq = l.clone();
        eq.tag = Tag::Equal;
        spans.extend(self.content(file, &eq, None, self.width.saturating_sub(12)));
        Line::from(spans)
    }

    /// Side by side: the old line and the new one.
    fn pair_row(
        &self,
        file: usize,
        hunk: usize,
        old: Option<usize>,
        new: Option<usize>,
    ) -> Line<'static> {
        let h = &self.v.files[file].diff.hunks[hunk];
        let on = self.included(file, hunk);
        // The new side takes the odd column, so that a cut line's mark is the pane's last.
        let old_w = self.width.saturating_sub(1) / 2;
        let new_w = self.width.saturating_sub(1) - old_w;
        let side = |idx: Option<usize>, other: Option<usize>, is_new: bool| {
            let half = if is_new { new_w } else { old_w };
            let mut spans: Vec<Span<'static>> = Vec::new();
            match idx {
                Some(i) => {
                    let l = &h.lines[i];
                    let n = if is_new { l.new_index } else { l.old_index };
                    spans.push(Span::styled(num(n), self.p.dim()));
                    let sign = match l.tag {
                        _ if self.skipped(file, hunk, i) => "·",
                        Tag::Equal => " ",
                        Tag::Insert => "+",
                        Tag::Delete => "-",
                    };
                    spans.push(Span::styled(sign, self.p.sign(l.tag)));
                    let partner = other
                        .filter(|_| l.tag != Tag::Equal)
                        .map(|k| h.lines[k].text.as_str());
                    spans.extend(self.content(file, l, partner, half.saturating_sub(6)));
                }
                None => spans.push(Span::styled(
                    " ".repeat(half),
                    if self.p.color {
                        Style::default().bg(Color::Rgb(30, 30, 34))
                    } else {
                        Style::default()
                    },
                )),
            }
            pad_to(spans, half)
        };
        let mut spans = side(old, new, false);
        spans.push(Span::styled("│", self.p.dim()));
        spans.extend(side(new, old, true));
        dim_if(Line::from(spans), !on, self.p)
    }

    /// A line's text with syntax colours, the diff background and word emphasis.
    fn content(
        &self,
        file: usize,
        l: &DiffLine,
        partner: Option<&str>,
        width: usize,
    ) -> Vec<Span<'static>> {
        let (side, index) = match l.tag {
            Tag::Delete => (Side::Old, l.old_index),
            _ => (Side::New, l.new_index),
        };
        let key: Key = (self.item.summary.run_id.clone(), file, side);
        let syntax = if self.m.color {
            index.and_then(|i| self.hl.line(&key, i))
        } else {
            None
        };
        let emph = match partner {
            Some(other) if l.tag != Tag::Equal => emphasis(&l.text, other, l.tag == Tag::Insert),
            _ => Vec::new(),
        };
        let (mut spans, cut) = styled(
            &l.text,
            syntax.as_deref().unwrap_or(&[]),
            &emph,
            |emph| self.p.bg(l.tag, emph),
            self.m.hscroll.min(MAX_COLS),
            width.min(MAX_COLS),
        );
        if cut {
            spans = self.cut_marked(spans, l.tag, width.min(MAX_COLS));
        } else if l.no_newline {
            spans.push(Span::styled(" ⏎̸ no newline at end", self.p.dim()));
        }
        // Fill the rest of the line with the change's background.
        let used: usize = spans.iter().map(|s| cols(&s.content)).sum();
        if l.tag != Tag::Equal && used < width {
            spans.push(Span::styled(
                " ".repeat(width - used),
                self.p.bg(l.tag, false),
            ));
        }
        spans
    }

    /// A line cut at `width` columns: its last column, dim, says that it goes on.
    fn cut_marked(&self, spans: Vec<Span<'static>>, tag: Tag, width: usize) -> Vec<Span<'static>> {
        let Some(room) = width.checked_sub(cols(CUT_MARK)) else {
            return spans;
        };
        let (mut spans, used) = clip(spans, room);
        let bg = self.p.bg(tag, false);
        if used < room {
            spans.push(Span::styled(" ".repeat(room - used), bg));
        }
        spans.push(Span::styled(CUT_MARK, bg.patch(self.p.dim())));
        spans
    }
}

/// What ends a line cut at its pane's edge (`l`/`→` scrolls to the rest).
const CUT_MARK: &str = "→";

fn num(n: Option<usize>) -> String {
    match n {
        Some(i) => format!("{:>4} ", i + 1),
        None => "     ".into(),
    }
}

/// `spans` cut or padded to exactly `width` columns.
fn pad_to(spans: Vec<Span<'static>>, width: usize) -> Vec<Span<'static>> {
    let (mut spans, used) = clip(spans, width);
    if used < width {
        spans.push(Span::raw(" ".repeat(width - used)));
    }
    spans
}

fn dim_if(line: Line<'static>, dim: bool, p: &Palette) -> Line<'static> {
    if !dim {
        return line;
    }
    let spans = line
        .spans
        .into_iter()
        .map(|s| {
            let style = if p.color {
                Style::default().fg(Color::DarkGray)
            } else {
                s.style.add_modifier(Modifier::DIM)
            };
            Span::styled(s.content, style)
        })
        .collect::<Vec<_>>();
    Line::from(spans)
}

/// A line's text as spans: syntax colours, the diff background (`bg(emphasised)`), tabs
/// expanded; the first `skip` columns left out (scrolled right), at most `width` shown, a
/// wide character that would cross either edge shown as blank columns or left out. `true`
/// with them when the line goes on past `width`.
fn styled(
    text: &str,
    syntax: &[(Style, Range<usize>)],
    emph: &[Range<usize>],
    bg: impl Fn(bool) -> Style,
    skip: usize,
    width: usize,
) -> (Vec<Span<'static>>, bool) {
    let mut cuts: Vec<usize> = vec![0, text.len()];
    for (_, r) in syntax {
        cuts.push(r.start.min(text.len()));
        cuts.push(r.end.min(text.len()));
    }
    for r in emph {
        cuts.push(r.start.min(text.len()));
        cuts.push(r.end.min(text.len()));
    }
    cuts.sort_unstable();
    cuts.dedup();
    let mut out = Vec::new();
    // `col`: the line's own column; shown are columns skip..skip + width.
    let (mut col, end) = (0, skip + width);
    for w in cuts.windows(2) {
        let (a, b) = (w[0], w[1]);
        if a >= b || !text.is_char_boundary(a) || !text.is_char_boundary(b) {
            continue;
        }
        let fg = syntax
            .iter()
            .find(|(_, r)| r.start <= a && b <= r.end)
            .map(|(s, _)| *s)
            .unwrap_or_default();
        let is_emph = emph.iter().any(|r| r.start <= a && b <= r.end);
        let style = bg(is_emph).patch(fg);
        let mut piece = String::with_capacity(b - a);
        for ch in text[a..b].chars() {
            let n = char_cols(ch, col);
            if col + n > end {
                if !piece.is_empty() {
                    out.push(Span::styled(piece, style));
                }
                return (out, true);
            }
            if ch.is_control() && ch != '\t' {
                continue;
            }
            if col >= skip && (n > 0 || col > skip) {
                // Shown whole (a combining mark with the character it follows).
                if ch == '\t' {
                    piece.extend(std::iter::repeat_n(' ', n));
                } else {
                    piece.push(ch);
                }
            } else if col + n > skip {
                // Partly scrolled out: its shown columns blank.
                piece.extend(std::iter::repeat_n(' ', col + n - skip));
            }
            col += n;
        }
        if !piece.is_empty() {
            out.push(Span::styled(piece, style));
        }
    }
    (out, false)
}

fn draw_status(f: &mut Frame, m: &Model, area: Rect, p: &Palette) {
    let mode = match m.mode {
        DiffMode::Unified => "unified",
        DiffMode::SideBySide => "side-by-side",
    };
    let ws = if m.ignore_ws { " · ws hidden" } else { "" };
    let left = match &m.info.patch {
        // A patch file: no address, policy or agents to speak of.
        Some(patch) => format!(
            " patchgate │ apply {} │ {} pending │ {mode}{ws} ",
            inert_line(patch),
            m.pending_count(),
        ),
        None => format!(
            " patchgate │ {} │ policy {} │ {} client{} │ {} pending │ {mode}{ws} ",
            if m.info.address.is_empty() {
                "—"
            } else {
                &m.info.address
            },
            if m.info.policy.is_empty() {
                "—"
            } else {
                &m.info.policy
            },
            m.info.clients,
            if m.info.clients == 1 { "" } else { "s" },
            m.pending_count(),
        ),
    };
    let bar = if m.color {
        Style::default().bg(Color::Rgb(40, 44, 52)).fg(Color::White)
    } else {
        Style::default().add_modifier(Modifier::REVERSED)
    };
    let _ = p;
    let mut spans = vec![Span::styled(truncate(&left, area.width as usize), bar)];
    let used: usize = spans.iter().map(|s| s.content.chars().count()).sum();
    spans.push(Span::styled(
        " ".repeat((area.width as usize).saturating_sub(used)),
        bar,
    ));
    f.render_widget(Paragraph::new(Line::from(spans)), area);
}

fn draw_hints(f: &mut Frame, m: &Model, area: Rect, p: &Palette) {
    match &m.overlay {
        Overlay::Command(input) | Overlay::Search(input) => {
            let prefix = if matches!(m.overlay, Overlay::Command(_)) {
                ":"
            } else {
                "/"
            };
            f.render_widget(Paragraph::new(prefix), Rect::new(area.x, area.y, 1, 1));
            let mut t = input.clone();
            t.set_cursor_line_style(Style::default());
            f.render_widget(
                &t,
                Rect::new(area.x + 1, area.y, area.width.saturating_sub(1), 1),
            );
        }
        _ => match &m.status {
            // The message area: the message in full (up to three lines), else the hints.
            Some((text, tone)) => {
                let style = match tone {
                    Tone::Info => Style::default(),
                    Tone::Good => p.fg(Color::Green),
                    Tone::Bad => p.fg(Color::Red).add_modifier(Modifier::BOLD),
                };
                let lines: Vec<Line> = text
                    .lines()
                    .map(|l| Line::styled(inert_line(l).into_owned(), style))
                    .collect();
                f.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), area);
            }
            None => {
                let hints = fit_hints(super::keymap::hints(m.reviewing()), area.width as usize);
                f.render_widget(Paragraph::new(Line::styled(hints, p.dim())), area);
            }
        },
    }
}

/// The hints that fit in `width` columns, whole: the last two (help, quit) stay, the others
/// go from the right.
fn fit_hints(all: &str, width: usize) -> String {
    let mut items: Vec<&str> = all.split("  ").collect();
    let keep = items.len().saturating_sub(2);
    let mut drop_at = keep;
    loop {
        let line = items.join("  ");
        if line.chars().count() <= width || drop_at == 0 {
            return line;
        }
        drop_at -= 1;
        items.remove(drop_at);
    }
}

fn draw_help(f: &mut Frame, m: &Model, p: &Palette) {
    let full = f.area();
    let width = 76.min(full.width);
    let rows = super::keymap::help_rows(usize::from(width.saturating_sub(2)), m.reviewing());
    // A line of the screen stays free above and below; past that the help scrolls.
    let height = u16::try_from(rows + 2)
        .unwrap_or(u16::MAX)
        .min(full.height.saturating_sub(2).max(3));
    let area = popup(full, width, height);
    let scrolls = rows + 2 > usize::from(height);
    f.render_widget(Clear, area);
    let lines: Vec<Line> =
        super::keymap::help_lines(usize::from(width.saturating_sub(2)), m.reviewing())
            .into_iter()
            .map(|(head, what)| match what {
                None => Line::styled(head, p.accent().add_modifier(Modifier::BOLD)),
                Some(what) => Line::from(vec![
                    Span::styled(head, Style::default().add_modifier(Modifier::BOLD)),
                    Span::raw(what),
                ]),
            })
            .collect();
    let bottom = if scrolls {
        format!(
            " j/k scroll · {}-{} of {rows} · any other key closes ",
            m.help_scroll + 1,
            (m.help_scroll + usize::from(height.saturating_sub(2))).min(rows)
        )
    } else {
        " any key closes ".to_string()
    };
    f.render_widget(
        Paragraph::new(lines)
            .scroll((u16::try_from(m.help_scroll).unwrap_or(0), 0))
            .wrap(Wrap { trim: false })
            .block(
                Block::default()
                    .borders(Borders::ALL)
                    .border_type(BorderType::Rounded)
                    .border_style(p.accent())
                    .title(" keys ")
                    .title_bottom(bottom),
            ),
        area,
    );
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_match_in_a_line_is_highlighted_smart_case() {
        let mark = Style::default().add_modifier(Modifier::REVERSED);
        let line = Line::from(vec![Span::raw("line Two and two"), Span::raw(" | two")]);
        let lit: Vec<String> = highlight(line.clone(), "two", mark)
            .spans
            .iter()
            .filter(|s| s.style == mark)
            .map(|s| s.content.to_string())
            .collect();
        assert_eq!(lit, ["Two", "two", "two"]);
        // A capital letter makes case matter.
        let lit = highlight(line, "Two", mark)
            .spans
            .iter()
            .filter(|s| s.style == mark)
            .count();
        assert_eq!(lit, 1);
    }

    use super::*;

    #[test]
    fn a_rows_risk_mark_shortens_and_the_client_goes_before_the_path_does() {
        use crate::review::queue::SyntaxMark;
        let mut s =
            crate::tui::update::tests::summary("r", State::Pending, &["src/module/file.rs"]);
        s.unseen_deletions = 12;
        s.syntax = vec![SyntaxMark {
            path: "src/module/file.rs".into(),
            line: 1,
            warning: "syntax: 1:1: missing \"}\"".into(),
        }];
        let p = Palette { color: false };
        let text = |w: usize| {
            let l = path_line(&s, w, (Style::default(), Style::default(), false), &p);
            let t: String = l.spans.iter().map(|s| s.content.as_ref()).collect();
            assert!(t.chars().count() <= w, "{t:?} is wider than {w}");
            t
        };
        let wide = text(70);
        assert!(wide.contains("+3 -1 ⚠ syntax · 12 unseen"), "{wide}");
        assert!(wide.contains("claude-code 2…"), "{wide}");
        let mid = text(44);
        assert!(mid.contains("⚠ syntax · 12 unseen"), "{mid}");
        assert!(!mid.contains("claude"), "{mid}");
        let narrow = text(30);
        assert!(narrow.contains("+3 -1 ⚠ syntax 12"), "{narrow}");
        let least = text(22);
        assert!(least.contains("+3 -1 ⚠12"), "{least}");
        // The file name whole before its directories.
        assert!(least.contains(" file.rs +3"), "{least}");
    }

    #[test]
    fn wrap_breaks_at_spaces_and_marks_what_it_leaves_out() {
        assert_eq!(wrap("short", 10, 3), vec!["short"]);
        assert_eq!(
            wrap("one two three four five", 10, 3),
            vec!["one two", "three four", "five"]
        );
        assert_eq!(
            wrap("one two three four five six", 10, 2),
            vec!["one two", "three fou…"]
        );
        assert_eq!(wrap("abcdefghijkl", 5, 3), vec!["abcde", "fghij", "kl"]);
    }

    #[test]
    fn hints_drop_whole_items_and_keep_help_and_quit() {
        let all = "j/k move  n/N hunk  a accept  ? help  q quit";
        assert_eq!(fit_hints(all, 80), all);
        assert_eq!(fit_hints(all, 35), "j/k move  n/N hunk  ? help  q quit");
        assert_eq!(fit_hints(all, 20), "? help  q quit");
        assert_eq!(fit_hints(all, 3), "? help  q quit");
    }

    #[test]
    fn styled_splits_at_syntax_and_emphasis_and_expands_tabs() {
        let text = "\tlet x = 1;";
        let syntax = vec![(Style::default().fg(Color::Red), 1..4)];
        let emph: Vec<std::ops::Range<usize>> = std::iter::once(9..10).collect();
        let (spans, cut) = styled(
            text,
            &syntax,
            &emph,
            |e| {
                if e {
                    Style::default().bg(Color::Blue)
                } else {
                    Style::default()
                }
            },
            0,
            80,
        );
        let joined: String = spans.iter().map(|s| s.content.as_ref()).collect();
        assert_eq!(joined, "    let x = 1;");
        assert!(!cut);
        assert_eq!(spans[1].content, "let");
        assert_eq!(spans[1].style.fg, Some(Color::Red));
        let one = spans.iter().find(|s| s.content == "1").unwrap();
        assert_eq!(one.style.bg, Some(Color::Blue));
        // The width bounds the work.
        let (cut, more) = styled("abcdefgh", &[], &[], |_| Style::default(), 0, 3);
        assert_eq!((cut[0].content.as_ref(), more), ("abc", true));
        // Scrolled right: the first columns are left out, tabs counted by their width.
        let (right, _) = styled("\tabcdefgh", &[], &[], |_| Style::default(), 5, 3);
        assert_eq!(right[0].content, "bcd");
    }

    #[test]
    fn styled_never_splits_a_wide_character() {
        let plain = |skip, width| {
            let (spans, more) = styled("ab名前cd", &[], &[], |_| Style::default(), skip, width);
            let text: String = spans.iter().map(|s| s.content.as_ref()).collect();
            (text, more)
        };
        assert_eq!(plain(0, 3), ("ab".into(), true), "名 would cross the edge");
        assert_eq!(plain(0, 4), ("ab名".into(), true));
        assert_eq!(plain(0, 8), ("ab名前cd".into(), false));
        // Scrolled into the middle of 名: its shown column is blank.
        assert_eq!(plain(3, 3), (" 前".into(), true));
    }

    #[test]
    fn ages_read_like_a_person_would_say_them() {
        assert_eq!(age(100, 95), "5s");
        assert_eq!(age(1000, 100), "15m");
        assert_eq!(age(100_000, 0), "1d");
        assert_eq!(age(0, 0), "");
    }
}
