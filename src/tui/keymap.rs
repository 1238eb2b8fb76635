//! Keys to actions (docs/DESIGN.md §6), and the help text that lists them. Overlays with a text input
//! (note, editor, command line, search) take keys themselves; this map is for the panes.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// What a key asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Next item, or one row down.
    Down,
    /// Previous item, or one row up.
    Up,
    /// Switch focus between the queue and the diff.
    Focus,
    /// Next hunk.
    NextHunk,
    /// Previous hunk.
    PrevHunk,
    /// Include or exclude the hunk under the cursor.
    ToggleHunk,
    /// Accept the selected review (its included hunks).
    Accept,
    /// Write a note for the agent, then accept what is selected with it.
    AcceptWithNote,
    /// Accept every pending review whole.
    AcceptAll,
    /// Reject the selected review, with a note.
    Reject,
    /// Edit the proposal in place.
    Edit,
    /// Edit the proposal in `$EDITOR`.
    ExternalEdit,
    /// Commit the selected dry-run.
    Commit,
    /// Open the `:` command line.
    Command,
    /// Undo the selected applied review (asks first).
    Undo,
    /// Write a patch's hunks that do not apply to `FILE.rej` files (`patchgate apply`).
    WriteRejects,
    /// Make a rule from the selected review's paths (the rule chooser).
    Rule,
    /// Unified ↔ side by side.
    ToggleMode,
    /// Hide or show whitespace-only changes.
    ToggleWhitespace,
    /// A revision's interdiff in place of its diff, or the diff again.
    Interdiff,
    /// Search the diff.
    Search,
    /// First row / first item.
    Top,
    /// Last row / last item.
    Bottom,
    /// A page up.
    PageUp,
    /// A page down.
    PageDown,
    /// The help overlay.
    Help,
    /// Cycle the queue's filter (all, open, decided).
    Filter,
    /// Line mode on or off: single changed lines are taken or left out.
    LineMode,
    /// Scroll the diff to the left.
    ScrollLeft,
    /// Scroll the diff to the right.
    ScrollRight,
    /// Quit.
    Quit,
    /// Close an overlay, clear the message.
    Escape,
}

/// The action of a key in the panes.
pub fn action(key: &KeyEvent) -> Option<Action> {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    Some(match key.code {
        KeyCode::Char('c') if ctrl => Action::Quit,
        KeyCode::Char('d') if ctrl => Action::PageDown,
        KeyCode::Char('u') if ctrl => Action::PageUp,
        KeyCode::Char('f') if ctrl => Action::PageDown,
        KeyCode::Char('b') if ctrl => Action::PageUp,
        _ if ctrl => return None,
        KeyCode::Char('j') | KeyCode::Down => Action::Down,
        KeyCode::Char('k') | KeyCode::Up => Action::Up,
        KeyCode::Enter | KeyCode::Tab | KeyCode::BackTab => Action::Focus,
        KeyCode::Char('n') | KeyCode::Char(']') => Action::NextHunk,
        KeyCode::Char('N') | KeyCode::Char('[') => Action::PrevHunk,
        KeyCode::Char(' ') => Action::ToggleHunk,
        KeyCode::Char('a') => Action::Accept,
        KeyCode::Char('m') => Action::AcceptWithNote,
        KeyCode::Char('A') => Action::AcceptAll,
        KeyCode::Char('r') => Action::Reject,
        KeyCode::Char('e') => Action::Edit,
        KeyCode::Char('E') => Action::ExternalEdit,
        KeyCode::Char('c') => Action::Commit,
        KeyCode::Char(':') => Action::Command,
        KeyCode::Char('u') => Action::Undo,
        KeyCode::Char('W') => Action::WriteRejects,
        KeyCode::Char('R') => Action::Rule,
        KeyCode::Char('s') => Action::ToggleMode,
        KeyCode::Char('w') => Action::ToggleWhitespace,
        KeyCode::Char('i') => Action::Interdiff,
        KeyCode::Char('/') => Action::Search,
        KeyCode::Char('g') | KeyCode::Home => Action::Top,
        KeyCode::Char('G') | KeyCode::End => Action::Bottom,
        KeyCode::PageUp => Action::PageUp,
        KeyCode::PageDown => Action::PageDown,
        KeyCode::Char('?') | KeyCode::F(1) => Action::Help,
        KeyCode::Char('f') => Action::Filter,
        KeyCode::Char('v') => Action::LineMode,
        KeyCode::Char('h') | KeyCode::Left => Action::ScrollLeft,
        KeyCode::Char('l') | KeyCode::Right => Action::ScrollRight,
        KeyCode::Char('q') => Action::Quit,
        KeyCode::Esc => Action::Escape,
        _ => return None,
    })
}

/// The help overlay: (keys, what they do), in sections.
pub(crate) const HELP: &[(&str, &[(&str, &str)])] = &[
    (
        "Move",
        &[
            (
                "j / k  ↓ / ↑",
                "next / previous review (queue) or line (diff)",
            ),
            ("Enter / Tab", "switch focus between queue and diff"),
            (
                "n / N   ] / [",
                "next / previous hunk (match, while searching)",
            ),
            ("g / G", "top / bottom"),
            ("PgUp / PgDn", "page up / down (also Ctrl+U / Ctrl+D)"),
            ("h / l  ← / →", "scroll long lines left / right"),
            ("/", "search: matches lit, n / N step, Esc ends"),
            ("mouse", "wheel scrolls, click selects"),
        ],
    ),
    (
        "Decide (the selected review, whichever pane has focus)",
        &[
            ("space", "include / exclude the hunk under the cursor"),
            (
                "v",
                "line mode: j / k changed lines, space takes / leaves one",
            ),
            ("a", "accept (only the included hunks and lines)"),
            ("m", "a note for the agent, then accept as a does"),
            ("A", "accept every pending review whole (asks first)"),
            ("r", "reject with a note for the agent"),
            ("e", "edit the proposed content here (Ctrl+S accepts it)"),
            ("E", "edit it in $EDITOR, then accept"),
            ("c   :commit RUN_ID", "commit a dry-run"),
            ("u", "undo the selected applied review"),
            ("R", "remember as a rule (file, folder, extension)"),
            (":rules", "every rule and where it comes from"),
            (":rewind [RUN_ID]", "undo it and every later run"),
            (
                ":session [RUN_ID]",
                "what the applied runs changed, as one diff",
            ),
        ],
    ),
    (
        "View",
        &[
            ("s", "unified / side by side"),
            ("w", "hide / show whitespace-only changes"),
            ("i", "interdiff of a revision (vN) / its diff"),
            ("f", "queue shows all / open / decided reviews"),
            ("?", "this help"),
            ("q", "quit (asks when reviews are pending)"),
        ],
    ),
];

/// What the TUI reviews: agents' edits, or a patch file (`patchgate apply`), where no agent
/// reads a note and the hunks that do not apply can go to `.rej` files (docs/DESIGN.md §6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reviewing {
    /// Agents' edits.
    Agents,
    /// A patch file.
    Patch,
}

/// A help entry as it reads when reviewing `what`: a patch has no agent to note, and has
/// `.rej` files.
fn entries(
    reviewing: Reviewing,
    key: &'static str,
    what: &'static str,
) -> Vec<(&'static str, &'static str)> {
    match (reviewing, key) {
        (Reviewing::Patch, "m") => Vec::new(),
        (Reviewing::Patch, "r") => vec![
            ("r", "reject: the file's change is dropped"),
            (
                "W",
                "write the hunks that do not apply to FILE.rej files (as apply --reject)",
            ),
        ],
        _ => vec![(key, what)],
    }
}

/// The help's lines as text: each section's title, its keys, a blank line.
pub(crate) fn help_text(reviewing: Reviewing) -> Vec<(String, Option<String>)> {
    let mut out = Vec::new();
    for (section, keys) in HELP {
        out.push((format!(" {section}"), None));
        for (k, what) in keys.iter().flat_map(|(k, w)| entries(reviewing, k, w)) {
            out.push((format!("   {k:<20}"), Some(what.to_string())));
        }
        out.push((String::new(), None));
    }
    out
}

/// The help's rows inside a box `width` columns wide: a description too long for its row
/// goes on under itself (indented past the keys), not at the box's left edge.
pub(crate) fn help_lines(width: usize, reviewing: Reviewing) -> Vec<(String, Option<String>)> {
    let mut out = Vec::new();
    for (head, what) in help_text(reviewing) {
        let Some(what) = what else {
            out.push((head, None));
            continue;
        };
        let indent = head.chars().count();
        let room = width.saturating_sub(indent).max(16);
        let mut first = true;
        for chunk in wrap_words(&what, room) {
            let lead = if first {
                head.clone()
            } else {
                " ".repeat(indent)
            };
            out.push((lead, Some(chunk)));
            first = false;
        }
    }
    out
}

/// `text` in lines of at most `width` characters, broken at spaces (a word longer than a
/// line is cut).
fn wrap_words(text: &str, width: usize) -> Vec<String> {
    let mut lines = vec![String::new()];
    for word in text.split(' ') {
        let last = lines.last_mut().expect("one line at least");
        let len = last.chars().count();
        if len > 0 && len + 1 + word.chars().count() > width {
            lines.push(String::new());
        }
        let last = lines.last_mut().expect("one line at least");
        if !last.is_empty() {
            last.push(' ');
        }
        last.push_str(word);
    }
    lines
}

/// Rows the help takes inside a box `width` columns wide.
pub(crate) fn help_rows(width: usize, reviewing: Reviewing) -> usize {
    help_lines(width.max(1), reviewing).len()
}

/// The key-hint line.
pub(crate) const HINTS: &str = "j/k move  n/N hunk  space toggle  a accept  m accept+note  r reject  e edit  c commit  s side-by-side  ? help  q quit";

/// The key-hint line reviewing a patch file: no agent's note, no dry runs; `.rej` files.
pub(crate) const PATCH_HINTS: &str = "j/k move  n/N hunk  space toggle  a accept  r reject  W write .rej  e edit  s side-by-side  ? help  q quit";

/// The key-hint line when reviewing `what`.
pub(crate) fn hints(reviewing: Reviewing) -> &'static str {
    match reviewing {
        Reviewing::Agents => HINTS,
        Reviewing::Patch => PATCH_HINTS,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(c: char) -> KeyEvent {
        KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)
    }

    #[test]
    fn a_long_help_line_goes_on_under_itself_not_at_the_edge() {
        let lines = help_lines(60, Reviewing::Agents);
        assert_eq!(help_rows(60, Reviewing::Agents), lines.len());
        let mut continued = 0;
        for (lead, what) in &lines {
            let Some(what) = what else { continue };
            assert!(
                lead.chars().count() + what.chars().count() <= 60,
                "{lead}{what}"
            );
            if lead.trim().is_empty() {
                continued += 1;
                assert_eq!(lead.chars().count(), 23, "{lead:?}");
            }
        }
        assert!(continued > 0, "nothing wrapped at 60 columns");
    }

    #[test]
    fn the_design_keys_map_to_their_actions() {
        for (c, a) in [
            ('j', Action::Down),
            ('k', Action::Up),
            ('n', Action::NextHunk),
            ('N', Action::PrevHunk),
            (']', Action::NextHunk),
            ('[', Action::PrevHunk),
            (' ', Action::ToggleHunk),
            ('a', Action::Accept),
            ('m', Action::AcceptWithNote),
            ('A', Action::AcceptAll),
            ('r', Action::Reject),
            ('e', Action::Edit),
            ('E', Action::ExternalEdit),
            ('c', Action::Commit),
            (':', Action::Command),
            ('u', Action::Undo),
            ('W', Action::WriteRejects),
            ('R', Action::Rule),
            ('s', Action::ToggleMode),
            ('w', Action::ToggleWhitespace),
            ('i', Action::Interdiff),
            ('/', Action::Search),
            ('g', Action::Top),
            ('G', Action::Bottom),
            ('?', Action::Help),
            ('f', Action::Filter),
            ('v', Action::LineMode),
            ('h', Action::ScrollLeft),
            ('l', Action::ScrollRight),
            ('q', Action::Quit),
        ] {
            assert_eq!(action(&key(c)), Some(a), "{c}");
        }
        assert_eq!(
            action(&KeyEvent::new(KeyCode::Tab, KeyModifiers::NONE)),
            Some(Action::Focus)
        );
        assert_eq!(
            action(&KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL)),
            Some(Action::Quit)
        );
        assert_eq!(action(&key('x')), None);
    }

    #[test]
    fn reviewing_a_patch_the_help_has_no_note_for_an_agent_and_names_w() {
        let text = |r| {
            help_text(r)
                .into_iter()
                .map(|(k, w)| format!("{k}{}\n", w.unwrap_or_default()))
                .collect::<String>()
        };
        let (agents, patch) = (text(Reviewing::Agents), text(Reviewing::Patch));
        assert!(agents.contains("a note for the agent"), "{agents}");
        assert!(!agents.contains(".rej"), "{agents}");
        assert!(!patch.contains("agent"), "{patch}");
        assert!(patch.contains("FILE.rej"), "{patch}");
        assert!(!hints(Reviewing::Patch).contains("note"));
        assert!(hints(Reviewing::Patch).contains("W write .rej"));
    }
}
