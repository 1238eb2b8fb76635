//! Syntax highlighting of whole files (syntect with two-face's syntaxes and themes, pure-Rust
//! regex) on a background thread, mapped to ratatui styles by [`to_style`]. The UI never
//! waits: it draws what is highlighted so far and plain text for the rest. The lines on
//! screen come first: when the view stands far ahead of the sequential pass, that stretch is
//! highlighted at once from a fresh state, then replaced by the exact result. A line is
//! highlighted over its first [`LINE_HEAD`] bytes only and shown plain past them, so one
//! huge line (a minified file, a 5 MB blob) cannot stall the worker.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};

use ratatui::style::{Color, Modifier, Style};
use syntect::easy::HighlightLines;
use syntect::highlighting::{FontStyle, Style as SynStyle, Theme};
use syntect::parsing::SyntaxSet;

/// Styled byte ranges of one line (the line break excluded).
pub(crate) type Spans = Vec<(Style, Range<usize>)>;

/// Which version of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Side {
    /// Before the edit.
    Old,
    /// After the edit.
    New,
}

/// What a highlighted file is known by.
pub type Key = (String, usize, Side);

#[derive(Default)]
struct FileSpans {
    lines: Vec<Option<Spans>>,
    /// Lines before this one are exact (the sequential pass got there).
    exact: usize,
    /// No syntax for this file: nothing to do.
    plain: bool,
    /// The sequential pass is complete.
    finished: bool,
}

#[derive(Default)]
struct Shared {
    files: HashMap<Key, FileSpans>,
    /// The first line on screen, per file.
    wants: HashMap<Key, usize>,
}

struct Job {
    key: Key,
    path: String,
    text: Arc<str>,
}

/// The highlighter: a cache the UI reads and a worker that fills it.
#[derive(Clone)]
pub struct Highlighter {
    shared: Arc<Mutex<Shared>>,
    jobs: Sender<Job>,
}

/// Map a syntect style to a ratatui style (foreground and font style; the diff owns the
/// background).
pub(crate) fn to_style(s: SynStyle) -> Style {
    let mut style = Style::default().fg(Color::Rgb(s.foreground.r, s.foreground.g, s.foreground.b));
    if s.font_style.contains(FontStyle::BOLD) {
        style = style.add_modifier(Modifier::BOLD);
    }
    if s.font_style.contains(FontStyle::ITALIC) {
        style = style.add_modifier(Modifier::ITALIC);
    }
    if s.font_style.contains(FontStyle::UNDERLINE) {
        style = style.add_modifier(Modifier::UNDERLINED);
    }
    style
}

/// How many lines the worker highlights between publishing.
const CHUNK: usize = 128;
/// How far ahead of the sequential pass the view must be for a quick pass there.
const AHEAD: usize = 2 * CHUNK;
/// Lines a quick pass covers.
const WINDOW: usize = 160;

impl Highlighter {
    /// Start the worker; `notify` is called (from the worker) when new lines are ready.
    pub fn new(notify: impl Fn() + Send + 'static) -> Highlighter {
        let shared = Arc::new(Mutex::new(Shared::default()));
        let (jobs, rx) = channel();
        let worker_shared = shared.clone();
        std::thread::Builder::new()
            .name("highlight".into())
            .spawn(move || worker(rx, worker_shared, notify))
            .ok();
        Highlighter { shared, jobs }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Shared> {
        self.shared
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Highlight `text` (the file `path`) under `key`, once.
    pub fn request(&self, key: Key, path: &str, text: Arc<str>) {
        {
            let mut s = self.lock();
            if s.files.contains_key(&key) {
                return;
            }
            s.files.insert(key.clone(), FileSpans::default());
        }
        let _ = self.jobs.send(Job {
            key,
            path: path.to_string(),
            text,
        });
    }

    /// The view shows `key` from `line` on.
    pub fn want(&self, key: &Key, line: usize) {
        self.lock().wants.insert(key.clone(), line);
    }

    /// The spans of a line, if highlighted yet.
    pub fn line(&self, key: &Key, line: usize) -> Option<Spans> {
        let s = self.lock();
        s.files.get(key)?.lines.get(line)?.clone()
    }

    /// Whether every line of `key` is exactly highlighted (or it has no syntax).
    pub fn done(&self, key: &Key) -> bool {
        self.lock()
            .files
            .get(key)
            .is_some_and(|f| f.plain || f.finished)
    }

    /// Forget the files of reviews not in `keep`.
    pub(crate) fn retain(&self, keep: &[String]) {
        let mut s = self.lock();
        s.files.retain(|k, _| keep.contains(&k.0));
        s.wants.retain(|k, _| keep.contains(&k.0));
    }
}

fn syntax_for<'a>(
    ss: &'a SyntaxSet,
    path: &str,
    first_line: &str,
) -> Option<&'a syntect::parsing::SyntaxReference> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let ext = name.rsplit_once('.').map(|(_, e)| e).unwrap_or(name);
    ss.find_syntax_by_extension(ext)
        .or_else(|| ss.find_syntax_by_extension(name))
        .or_else(|| ss.find_syntax_by_first_line(first_line))
        .filter(|s| s.name != "Plain Text")
}

/// The bytes of a line that are highlighted; the rest of it is shown plain.
const LINE_HEAD: usize = 4 << 10;

/// The spans of `line`, highlighting at most its first [`LINE_HEAD`] bytes (cut at a character
/// boundary and ended as a line, so the next line starts from a sane state).
fn highlight_line(hl: &mut HighlightLines<'_>, line: &str, ss: &SyntaxSet) -> Spans {
    let head;
    let line = if line.len() > LINE_HEAD {
        let mut cut = LINE_HEAD;
        while !line.is_char_boundary(cut) {
            cut -= 1;
        }
        head = format!("{}\n", &line[..cut]);
        head.as_str()
    } else {
        line
    };
    hl.highlight_line(line, ss)
        .map(|r| spans_of(&r))
        .unwrap_or_default()
}

fn spans_of(ranges: &[(SynStyle, &str)]) -> Spans {
    let mut out = Vec::with_capacity(ranges.len());
    let mut pos = 0;
    for (style, text) in ranges {
        let t = text.trim_end_matches(['\n', '\r']);
        if !t.is_empty() {
            out.push((to_style(*style), pos..pos + t.len()));
        }
        pos += text.len();
    }
    out
}

/// Highlight the window at line `w` on its own (an approximation: no state from above),
/// where nothing is highlighted yet. Returns whether it did.
fn quick_window(
    shared: &Mutex<Shared>,
    key: &Key,
    w: usize,
    lines: &[&str],
    (syntax, theme, ss): (&syntect::parsing::SyntaxReference, &Theme, &SyntaxSet),
) -> bool {
    let lock = || {
        shared
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    };
    let missing = lock()
        .files
        .get(key)
        .is_some_and(|f| f.lines.get(w).is_some_and(Option::is_none));
    if !missing {
        return false;
    }
    let mut quick = HighlightLines::new(syntax, theme);
    let end = (w + WINDOW).min(lines.len());
    let spans: Vec<Spans> = lines[w..end]
        .iter()
        .map(|l| highlight_line(&mut quick, l, ss))
        .collect();
    if let Some(f) = lock().files.get_mut(key) {
        for (k, sp) in spans.into_iter().enumerate() {
            if f.lines[w + k].is_none() {
                f.lines[w + k] = Some(sp);
            }
        }
    }
    true
}

fn worker(rx: Receiver<Job>, shared: Arc<Mutex<Shared>>, notify: impl Fn()) {
    let mut syntaxes: Option<SyntaxSet> = None;
    let theme: Theme = two_face::theme::extra()
        .get(two_face::theme::EmbeddedThemeName::OneHalfDark)
        .clone();
    let mut pending: Vec<Job> = Vec::new();
    loop {
        // Newest first: the review the person just selected.
        while let Ok(j) = rx.try_recv() {
            pending.push(j);
        }
        let job = match pending.pop() {
            Some(j) => j,
            None => match rx.recv() {
                Ok(j) => j,
                Err(_) => return,
            },
        };
        let ss = syntaxes.get_or_insert_with(two_face::syntax::extra_newlines);
        let lines: Vec<&str> = job.text.split_inclusive('\n').collect();
        let lock = || {
            shared
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        };
        let Some(syntax) = syntax_for(ss, &job.path, lines.first().copied().unwrap_or("")) else {
            if let Some(f) = lock().files.get_mut(&job.key) {
                f.plain = true;
            }
            continue;
        };
        {
            let mut s = lock();
            match s.files.get_mut(&job.key) {
                Some(f) => f.lines = vec![None; lines.len()],
                None => continue,
            }
        }
        let mut hl = HighlightLines::new(syntax, &theme);
        let mut batch: Vec<Spans> = Vec::with_capacity(CHUNK);
        let mut start = 0;
        let mut i = 0;
        while i < lines.len() {
            let spans = highlight_line(&mut hl, lines[i], ss);
            batch.push(spans);
            i += 1;
            if batch.len() == CHUNK || i == lines.len() {
                let want = {
                    let mut s = lock();
                    let want = s.wants.get(&job.key).copied();
                    let Some(f) = s.files.get_mut(&job.key) else {
                        break;
                    };
                    for (k, sp) in batch.drain(..).enumerate() {
                        f.lines[start + k] = Some(sp);
                    }
                    f.exact = i;
                    want
                };
                start = i;
                notify();
                // The view is far ahead: give it an approximate highlight now.
                if let Some(w) = want
                    && w > i + AHEAD
                    && w < lines.len()
                    && quick_window(&shared, &job.key, w, &lines, (syntax, &theme, ss))
                {
                    notify();
                }
            }
        }
        if let Some(f) = lock().files.get_mut(&job.key) {
            f.finished = f.exact >= f.lines.len();
        }
        notify();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn styles_map_colour_and_font() {
        let s = SynStyle {
            foreground: syntect::highlighting::Color {
                r: 1,
                g: 2,
                b: 3,
                a: 255,
            },
            background: syntect::highlighting::Color::BLACK,
            font_style: FontStyle::BOLD | FontStyle::ITALIC,
        };
        let st = to_style(s);
        assert_eq!(st.fg, Some(Color::Rgb(1, 2, 3)));
        assert!(st.add_modifier.contains(Modifier::BOLD | Modifier::ITALIC));
        assert_eq!(st.bg, None);
    }

    #[test]
    fn a_rust_file_is_highlighted_in_the_background() {
        let (tx, rx) = channel();
        let h = Highlighter::new(move || {
            let _ = tx.send(());
        });
        let text: Arc<str> = Arc::from("fn main() {\n    let x = \"s\";\n}\n");
        let key = ("run".to_string(), 0, Side::New);
        h.request(key.clone(), "src/main.rs", text.clone());
        let deadline = Instant::now() + Duration::from_secs(20);
        while !h.done(&key) {
            let _ = rx.recv_timeout(Duration::from_millis(100));
            assert!(Instant::now() < deadline, "not highlighted in time");
        }
        let spans = h.line(&key, 0).unwrap();
        assert!(spans.len() >= 3, "{spans:?}");
        // `fn` has a different colour than `main`.
        assert_ne!(spans[0].0.fg, spans.last().unwrap().0.fg);
        // A file without a known syntax is left plain.
        let plain = ("run".to_string(), 1, Side::New);
        h.request(plain.clone(), "notes.unknownext", Arc::from("just words\n"));
        while !h.done(&plain) {
            let _ = rx.recv_timeout(Duration::from_millis(100));
            assert!(Instant::now() < deadline);
        }
        assert!(h.line(&plain, 0).is_none());
    }

    /// A 5 MB line is highlighted over its first bytes only, the rest left plain, in well
    /// under the time a whole highlight of it takes (minutes in a debug build), and the line
    /// after it is highlighted too.
    #[test]
    fn a_five_megabyte_line_is_highlighted_over_its_head_only() {
        let (tx, rx) = channel();
        let h = Highlighter::new(move || {
            let _ = tx.send(());
        });
        let long = "let x = \"s\"; ".repeat(5_000_000 / 14);
        let text: Arc<str> = Arc::from(format!("{long}\nfn main() {{}}\n"));
        let key = ("run".to_string(), 0, Side::New);
        let start = Instant::now();
        h.request(key.clone(), "src/main.rs", text);
        while !h.done(&key) {
            let _ = rx.recv_timeout(Duration::from_millis(100));
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "a 5 MB line stalled the highlighter"
            );
        }
        let spans = h.line(&key, 0).unwrap();
        assert!(
            spans.len() > 100,
            "the head is highlighted: {}",
            spans.len()
        );
        let end = spans.iter().map(|(_, r)| r.end).max().unwrap();
        assert!((LINE_HEAD - 16..=LINE_HEAD).contains(&end), "{end}");
        assert!(h.line(&key, 1).unwrap().len() >= 3);
    }
}
