//! The TUI's state (the Model of Model / Message / update / view): the queue, the selected
//! review's diff with its hunk cursor and choices, the overlays (help, note editor, content
//! editor, command line, search, quit confirmation), the status line and the screen layout.

use ratatui::layout::Rect;
use ratatui_textarea::TextArea;

use super::backend::StatusInfo;
use super::keymap::Reviewing;
use super::marks::{self, HunkRisk};
use super::rows::{self, DiffMode, FileView, Row};
use crate::review::proposal::State;
use crate::review::queue::Summary;

/// Which pane has the keyboard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    /// The queue on the left.
    Queue,
    /// The diff on the right.
    Diff,
}

/// A review's diff, once its files are loaded.
#[derive(Debug, Clone)]
pub struct DiffView {
    /// The files.
    pub files: Vec<FileView>,
    /// Whether each hunk (global index) is included in an acceptance.
    pub included: Vec<bool>,
    /// The hunk under the cursor (global index).
    pub cursor: usize,
    /// The first row on screen.
    pub scroll: usize,
    /// The rows for `rows_for`.
    pub rows: Vec<Row>,
    /// The mode and whitespace setting `rows` were built for.
    pub rows_for: (DiffMode, bool),
    /// The row of each hunk's header.
    pub hunk_rows: Vec<usize>,
    /// Changed lines left out of an acceptance: (global hunk, line in the hunk).
    pub skipped: std::collections::BTreeSet<(usize, usize)>,
    /// Line mode (`v`): the row of the changed line under the cursor.
    pub line_cursor: Option<usize>,
    /// What each hunk (global index) risks, from the review's summary.
    pub risks: Vec<HunkRisk>,
}

impl DiffView {
    /// A view of `files` with every hunk included and the cursor on the first, marked with
    /// what `s` says its hunks risk.
    pub fn new(files: Vec<FileView>, mode: DiffMode, ignore_ws: bool, s: &Summary) -> DiffView {
        let total = files.iter().map(|f| f.diff.hunks.len()).sum();
        let risks = marks::hunk_risks(s, &files);
        let mut v = DiffView {
            files,
            included: vec![true; total],
            cursor: 0,
            scroll: 0,
            rows: Vec::new(),
            rows_for: (mode, !ignore_ws),
            hunk_rows: Vec::new(),
            skipped: std::collections::BTreeSet::new(),
            line_cursor: None,
            risks,
        };
        v.rebuild(mode, ignore_ws);
        v
    }

    /// Rebuild the rows if the mode or whitespace setting changed, keeping the cursor's
    /// hunk on screen.
    pub(crate) fn ensure_rows(&mut self, mode: DiffMode, ignore_ws: bool) {
        if self.rows_for != (mode, ignore_ws) {
            self.rebuild(mode, ignore_ws);
        }
    }

    /// Mark the hunks with what `s` (the review's summary, maybe newer) says they risk.
    pub(crate) fn mark(&mut self, s: &Summary) {
        let risks = marks::hunk_risks(s, &self.files);
        if risks != self.risks {
            self.risks = risks;
            let (mode, ignore_ws) = self.rows_for;
            self.rebuild(mode, ignore_ws);
        }
    }

    fn rebuild(&mut self, mode: DiffMode, ignore_ws: bool) {
        let risky: Vec<bool> = self.risks.iter().map(|r| !r.is_empty()).collect();
        self.rows = rows::build(&self.files, mode, ignore_ws, &risky);
        self.hunk_rows = rows::hunk_rows(&self.rows, &self.files);
        self.rows_for = (mode, ignore_ws);
        // Rows moved: line mode starts again from the hunk.
        self.line_cursor = None;
        self.scroll = self.hunk_top(self.cursor).saturating_sub(1);
    }

    /// The first row of global hunk `h`: its risk line, else its header.
    pub(crate) fn hunk_top(&self, h: usize) -> usize {
        let Some(&row) = self.hunk_rows.get(h) else {
            return 0;
        };
        match row.checked_sub(1).and_then(|r| self.rows.get(r)) {
            Some(Row::Risk { .. }) => row - 1,
            _ => row,
        }
    }

    /// The changed lines row `r` shows, as (global hunk, line in the hunk): none for a
    /// header, context, or a whitespace-only pair shown once.
    pub(crate) fn row_lines(&self, r: usize) -> Vec<(usize, usize)> {
        let changed = |file: usize, hunk: usize, line: usize| {
            let l = &self.files[file].diff.hunks[hunk].lines[line];
            (l.tag != crate::diff::Tag::Equal).then_some((self.files[file].first_hunk + hunk, line))
        };
        match self.rows.get(r) {
            Some(&Row::Line {
                file, hunk, line, ..
            }) => changed(file, hunk, line).into_iter().collect(),
            Some(&Row::Pair {
                file,
                hunk,
                old,
                new,
            }) => [old, new]
                .into_iter()
                .flatten()
                .filter_map(|l| changed(file, hunk, l))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// The changed lines of global hunk `h` (indices in its lines).
    pub(crate) fn changed_lines_of(&self, h: usize) -> Vec<usize> {
        let Some((file, hunk)) = self.locate(h) else {
            return Vec::new();
        };
        let lines = &self.files[file].diff.hunks[hunk].lines;
        (0..lines.len())
            .filter(|&k| lines[k].tag != crate::diff::Tag::Equal)
            .collect()
    }

    /// The next row after (before, when `back`) `from` that shows a changed line.
    pub(crate) fn next_change_row(&self, from: usize, back: bool) -> Option<usize> {
        if back {
            (0..from).rev().find(|&r| !self.row_lines(r).is_empty())
        } else {
            (from + 1..self.rows.len()).find(|&r| !self.row_lines(r).is_empty())
        }
    }

    /// Hunks in all files.
    pub(crate) fn hunk_total(&self) -> usize {
        self.included.len()
    }

    /// The (file, hunk) of a global hunk index.
    pub(crate) fn locate(&self, global: usize) -> Option<(usize, usize)> {
        self.files.iter().enumerate().find_map(|(fi, f)| {
            (global >= f.first_hunk && global < f.first_hunk + f.diff.hunks.len())
                .then(|| (fi, global - f.first_hunk))
        })
    }
}

/// A review in the queue.
#[derive(Debug, Clone)]
pub struct Item {
    /// What the gate says of it.
    pub summary: Summary,
    /// Its diff, once loaded.
    pub view: Option<DiffView>,
    /// Its files are being fetched.
    pub loading: bool,
    /// A revision's interdiff is shown in place of its diff, from this line (`i`).
    pub interdiff: Option<usize>,
}

impl Item {
    /// A queue item for `summary`.
    pub fn new(summary: Summary) -> Item {
        Item {
            summary,
            view: None,
            loading: false,
            interdiff: None,
        }
    }

    /// Whether a person can still decide it.
    pub(crate) fn is_open(&self) -> bool {
        matches!(self.summary.state, State::Pending | State::DryRun)
    }

    /// The interdiff when it is shown in place of the diff: its first line on screen and its
    /// text.
    pub(crate) fn interdiff_shown(&self) -> Option<(usize, &str)> {
        Some((self.interdiff?, self.summary.interdiff.as_deref()?))
    }
}

/// A floating input or panel.
#[derive(Debug, Clone, Default)]
pub enum Overlay {
    /// Nothing.
    #[default]
    None,
    /// The key help.
    Help,
    /// The note editor for a review: a rejection's reason, or the note of an acceptance.
    Note {
        /// The review.
        run_id: String,
        /// The acceptance the note goes with (`None`: the note rejects the review).
        accept: Option<crate::review::proposal::Decision>,
        /// The note.
        input: TextArea<'static>,
    },
    /// The proposal's content, edited in place.
    Edit {
        /// The review.
        run_id: String,
        /// The file.
        path: String,
        /// The content.
        input: TextArea<'static>,
    },
    /// `:` command line.
    Command(TextArea<'static>),
    /// `/` search input.
    Search(TextArea<'static>),
    /// "Reviews are pending: quit?"
    ConfirmQuit,
    /// "Accept every pending review whole?"
    ConfirmAcceptAll,
    /// "Undo this applied review?"
    ConfirmUndo {
        /// The review.
        run_id: String,
        /// The files it restores.
        paths: Vec<String>,
    },
    /// `R`: a rule made from the selected review's paths.
    Rule(super::rulechoice::RuleChoice),
    /// "Rewind to before this run?"
    ConfirmRewind {
        /// The first run taken back (every later applied run goes too).
        run_id: String,
    },
    /// A message too long for the status line (any key closes it).
    Message {
        /// Its title.
        title: String,
        /// Its text.
        text: String,
    },
    /// The session at a glance (`:session [RUN]`): one diff of what the applied runs
    /// changed, scrolled by `j`/`k`, `PgUp`/`PgDn`, `g`/`G`; any other key closes it.
    Session {
        /// Its title.
        title: String,
        /// The diff (and notes above it).
        text: String,
        /// The first line shown.
        scroll: usize,
    },
}

/// How a status message reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// Neutral.
    Info,
    /// Something worked.
    Good,
    /// Something failed.
    Bad,
}

/// The screen's regions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Areas {
    /// The queue pane (with its border).
    pub queue: Rect,
    /// The diff pane (with its border).
    pub diff: Rect,
    /// The status bar.
    pub status: Rect,
    /// The key-hint line.
    pub hints: Rect,
}

/// Which reviews the queue shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Filter {
    /// Every review.
    #[default]
    All,
    /// Those a person can still decide (pending, dry-runs).
    Open,
    /// Those decided or closed.
    Decided,
}

impl Filter {
    /// The next filter (`f` cycles).
    pub fn next(self) -> Filter {
        match self {
            Filter::All => Filter::Open,
            Filter::Open => Filter::Decided,
            Filter::Decided => Filter::All,
        }
    }

    /// How the queue's title names it.
    pub fn name(self) -> &'static str {
        match self {
            Filter::All => "all",
            Filter::Open => "open",
            Filter::Decided => "decided",
        }
    }

    /// Whether `item` shows.
    pub(crate) fn admits(self, item: &Item) -> bool {
        match self {
            Filter::All => true,
            Filter::Open => item.is_open(),
            Filter::Decided => !item.is_open(),
        }
    }
}

/// Below this width the queue stands above the diff instead of beside it.
pub(crate) const STACK_BELOW: u16 = 80;

/// Lines each queue item takes.
pub(crate) const ITEM_HEIGHT: u16 = 2;

/// Split the screen; `message_rows` lines at the bottom hold the message (or the key hints).
pub(crate) fn areas(size: Rect, message_rows: u16) -> Areas {
    let h = size.height;
    let bottom = 1 + message_rows.max(1);
    let body_h = h.saturating_sub(bottom);
    let (queue, diff) = if size.width < STACK_BELOW {
        // Narrow: the queue above (a third of the height), the diff below at full width.
        let queue_h = (body_h / 3).max((2 + 2 * ITEM_HEIGHT).min(body_h));
        (
            Rect::new(size.x, size.y, size.width, queue_h),
            Rect::new(size.x, size.y + queue_h, size.width, body_h - queue_h),
        )
    } else {
        let queue_w = (size.width / 3).clamp(24, 52);
        (
            Rect::new(size.x, size.y, queue_w, body_h),
            Rect::new(size.x + queue_w, size.y, size.width - queue_w, body_h),
        )
    };
    Areas {
        queue,
        diff,
        status: Rect::new(size.x, size.y + body_h, size.width, h.min(1)),
        hints: Rect::new(
            size.x,
            size.y + body_h + 1,
            size.width,
            h.saturating_sub(body_h + 1).min(bottom - 1),
        ),
    }
}

/// The most lines the message area takes.
pub(crate) const MESSAGE_ROWS_MAX: u16 = 3;

/// The whole TUI state.
#[derive(Debug, Clone)]
pub struct Model {
    /// Reviews, oldest first.
    pub items: Vec<Item>,
    /// The selected item.
    pub selected: usize,
    /// The first queue item on screen.
    pub queue_scroll: usize,
    /// Which reviews the queue shows.
    pub filter: Filter,
    /// Columns the diff is scrolled to the right.
    pub hscroll: usize,
    /// The help's first line on screen.
    pub help_scroll: usize,
    /// Which pane has the keyboard.
    pub focus: Focus,
    /// Unified or side by side.
    pub mode: DiffMode,
    /// Hide whitespace-only changes.
    pub ignore_ws: bool,
    /// The floating panel.
    pub overlay: Overlay,
    /// The status message.
    pub status: Option<(String, Tone)>,
    /// The gate's facts for the status bar.
    pub info: StatusInfo,
    /// The terminal size.
    pub size: Rect,
    /// The search in progress (until Esc): n / N step through its matches.
    pub search: Option<String>,
    /// The row of the current match.
    pub search_row: Option<usize>,
    /// Seconds since the epoch (for ages).
    pub now: u64,
    /// Colours allowed (`NO_COLOR` unset).
    pub color: bool,
    /// Quit requested and confirmed.
    pub quit: bool,
    /// The remote gate refused this TUI's token: why, and what to do (shown again whenever
    /// the status line is free; nothing more is heard from the gate).
    pub refused: Option<String>,
}

impl Model {
    /// An empty model for a terminal of `width` × `height`.
    pub fn new(width: u16, height: u16, color: bool) -> Model {
        Model {
            items: Vec::new(),
            selected: 0,
            queue_scroll: 0,
            filter: Filter::All,
            hscroll: 0,
            help_scroll: 0,
            focus: Focus::Queue,
            mode: DiffMode::Unified,
            ignore_ws: false,
            overlay: Overlay::None,
            status: None,
            info: StatusInfo::default(),
            size: Rect::new(0, 0, width, height),
            search: None,
            search_row: None,
            now: 0,
            color,
            quit: false,
            refused: None,
        }
    }

    /// What this TUI reviews: a patch file when the status bar names one.
    pub(crate) fn reviewing(&self) -> Reviewing {
        match self.info.patch {
            Some(_) => Reviewing::Patch,
            None => Reviewing::Agents,
        }
    }

    /// The selected item.
    pub fn current(&self) -> Option<&Item> {
        self.items.get(self.selected)
    }

    /// The selected item, mutably.
    pub(crate) fn current_mut(&mut self) -> Option<&mut Item> {
        self.items.get_mut(self.selected)
    }

    /// Pending reviews.
    pub(crate) fn pending_count(&self) -> usize {
        self.items
            .iter()
            .filter(|i| i.summary.state == State::Pending)
            .count()
    }

    /// The screen regions.
    pub(crate) fn areas(&self) -> Areas {
        areas(self.size, self.message_rows())
    }

    /// Lines the status message needs at the bottom (wrapped, at most three).
    pub(crate) fn message_rows(&self) -> u16 {
        let Some((text, _)) = &self.status else {
            return 1;
        };
        let w = usize::from(self.size.width.max(1));
        let rows: usize = text
            .lines()
            .map(|l| l.chars().count().max(1).div_ceil(w))
            .sum();
        u16::try_from(rows)
            .unwrap_or(u16::MAX)
            .clamp(1, MESSAGE_ROWS_MAX)
    }

    /// The indices of the items the filter shows, in order.
    pub(crate) fn visible(&self) -> Vec<usize> {
        (0..self.items.len())
            .filter(|&i| self.filter.admits(&self.items[i]))
            .collect()
    }

    /// Rows of the diff pane inside its border.
    pub(crate) fn diff_height(&self) -> usize {
        self.areas().diff.height.saturating_sub(2) as usize
    }

    /// Queue items that fit inside its border.
    pub(crate) fn queue_capacity(&self) -> usize {
        (self.areas().queue.height.saturating_sub(2) / ITEM_HEIGHT).max(1) as usize
    }
}
