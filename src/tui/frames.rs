//! Snapshots of whole frames drawn on a `TestBackend` (text only: colours are covered by the
//! view's own tests and the screenshots).

use crossterm::event::{KeyCode, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use super::backend::StatusInfo;
use super::model::Model;
use super::update::tests::{code, key, loaded};
use super::update::{Msg, update};
use super::view::{Plain, draw};

fn frame(m: &Model) -> String {
    let mut t = Terminal::new(TestBackend::new(m.size.width, m.size.height)).unwrap();
    t.draw(|f| draw(f, m, &Plain)).unwrap();
    t.backend().to_string()
}

fn info(m: &mut Model) {
    update(
        m,
        Msg::Info(StatusInfo {
            address: "127.0.0.1:8787".into(),
            policy: "gate".into(),
            clients: 1,
            patch: None,
        }),
    );
}

#[test]
fn empty_queue() {
    let mut m = Model::new(100, 24, false);
    info(&mut m);
    insta::assert_snapshot!(frame(&m));
}

#[test]
fn a_pending_fast_apply() {
    let mut m = loaded();
    info(&mut m);
    insta::assert_snapshot!(frame(&m));
}

#[test]
fn side_by_side_with_the_third_hunk_excluded() {
    let mut m = loaded();
    info(&mut m);
    for k in ['s', 'n', 'n', ' '] {
        update(&mut m, key(k));
    }
    insta::assert_snapshot!(frame(&m));
}

#[test]
fn help() {
    let mut m = loaded();
    info(&mut m);
    update(&mut m, key('?'));
    insta::assert_snapshot!(frame(&m));
}

#[test]
fn the_reject_note_editor() {
    let mut m = loaded();
    info(&mut m);
    update(&mut m, key('r'));
    for c in "keep the old name".chars() {
        update(&mut m, key(c));
    }
    update(&mut m, code(KeyCode::Enter, KeyModifiers::ALT));
    for c in "callers use it".chars() {
        update(&mut m, key(c));
    }
    insta::assert_snapshot!(frame(&m));
}

/// A review whose summary carries a syntax mark: `⚠` on its row and above the hunk that
/// holds the line. Text that only looks like one (a warning, a path) marks nothing.
#[test]
fn the_syntax_mark_comes_from_the_check_not_from_warning_text() {
    use super::update::tests::summary;
    use crate::review::proposal::State;
    use crate::review::queue::SyntaxMark;
    use crate::tui::Change;
    let mut s = summary("run1", State::Pending, &["src/x.rs"]);
    s.warnings = vec!["src/x.rs: syntax: 20:1: missing \"}\"".into()];
    let mut m = loaded();
    update(&mut m, Msg::Change(Change::upsert(s.clone())));
    let plain = frame(&m);
    assert!(!plain.lines().any(|l| l.contains("-1 ⚠")), "{plain}");
    assert!(!plain.contains(" ⚠ syntax: "), "{plain}");
    s.syntax = vec![SyntaxMark {
        path: "src/x.rs".into(),
        line: 20,
        warning: "syntax: 20:1: missing \"}\"".into(),
    }];
    update(&mut m, Msg::Change(Change::upsert(s)));
    let marked = frame(&m);
    assert!(marked.lines().any(|l| l.contains("-1 ⚠")), "{marked}");
    assert!(marked.contains("⚠ syntax: 20:1"), "{marked}");
}

/// A revision: `v2` and the note it answers on its row and above the diff; `i` shows the
/// interdiff, and the title says so. In a small terminal too.
#[test]
fn a_revision_and_its_interdiff() {
    use super::update::tests::revision;
    let mut m = revision();
    info(&mut m);
    let diff = frame(&m);
    assert!(diff.contains("v2: name it two …"), "{diff}");
    assert!(diff.contains("answers: name it two"), "{diff}");
    assert!(diff.contains("pending · v2 diff · "), "{diff}");
    assert!(
        diff.contains(" i shows the interdiff · hunk 1/3 "),
        "{diff}"
    );
    update(&mut m, key('i'));
    insta::assert_snapshot!(frame(&m));
    update(&mut m, Msg::Resize(60, 16));
    insta::assert_snapshot!("a_revision_and_its_interdiff_small", frame(&m));
    // At its end, its last line is in sight below the note (in the focused pane: heavy).
    update(&mut m, code(KeyCode::Tab, KeyModifiers::NONE));
    update(&mut m, key('G'));
    let end = frame(&m);
    assert!(
        end.contains("┃+new y") && end.contains("answers: "),
        "{end}"
    );
}

/// Risk in sight: a review that deletes lines the edit does not show and adds a parse error
/// says so on its row and on the line above each hunk concerned; in a small terminal too,
/// where going to the hunk brings its risk line into view with it.
#[test]
fn risk_marks_on_the_row_and_above_their_hunks() {
    use super::update::tests::summary;
    use crate::review::proposal::State;
    use crate::review::queue::SyntaxMark;
    use crate::tui::Change;
    let mut s = summary("run1", State::Pending, &["src/x.rs"]);
    s.unseen_deletions = 4;
    s.unseen_hunks = vec![0, 1, 3];
    s.syntax = vec![SyntaxMark {
        path: "src/x.rs".into(),
        line: 20,
        warning: "syntax: 20:5: missing \"}\"".into(),
    }];
    let mut m = loaded();
    info(&mut m);
    update(&mut m, Msg::Change(Change::upsert(s)));
    let full = frame(&m);
    let above = |screen: &str, hunk: &str| {
        let lines: Vec<&str> = screen.lines().collect();
        let at = lines.iter().position(|l| l.contains(hunk)).unwrap();
        lines[at - 1].to_string()
    };
    assert!(
        above(&full, "hunk 2/3").contains(
            "⚠ unseen: 1 line deleted that the edit does not show · syntax: 20:5: missing"
        ),
        "{full}"
    );
    assert!(
        above(&full, "hunk 3/3").contains("⚠ unseen: 3 lines deleted that the edit does not show"),
        "{full}"
    );
    assert!(!above(&full, "hunk 1/3").contains('⚠'), "{full}");
    assert!(full.contains("+3 -1 ⚠ syntax · 4 unseen"), "{full}");
    insta::assert_snapshot!(full);
    update(&mut m, Msg::Resize(60, 16));
    update(&mut m, key('n'));
    update(&mut m, key('n'));
    let small = frame(&m);
    assert!(
        above(&small, "hunk 3/3").contains("⚠ unseen: 3 lines deleted that the edit"),
        "{small}"
    );
    insta::assert_snapshot!("risk_marks_on_the_row_and_above_their_hunks_small", small);
}

/// Side by side, a line longer than its half of the pane ends in a dim `→` in its last
/// column, on either side; a wide character that would cross the edge is left out whole (a
/// blank column before the mark); a line that fits has no mark.
#[test]
fn side_by_side_marks_a_line_cut_at_its_half() {
    use super::update::tests::summary;
    use crate::review::proposal::{FileContent, State};
    use crate::tui::Change;
    use ratatui::style::Modifier;
    let long = format!("let long = \"{}\";", "x".repeat(60));
    let wide = format!("let wid = \"{}\";", "名".repeat(30));
    let old = format!("fn f() {{\n    {long}\n    short();\n}}\n");
    let new = format!("fn f() {{\n    {long}\n    short_too();\n    {wide}\n}}\n");
    let mut m = Model::new(120, 12, false);
    info(&mut m);
    update(
        &mut m,
        Msg::Change(Change::upsert(summary(
            "run1",
            State::Pending,
            &["src/x.rs"],
        ))),
    );
    update(
        &mut m,
        Msg::Files {
            run_id: "run1".into(),
            result: Ok(vec![FileContent {
                path: "src/x.rs".into(),
                old,
                new,
                created: false,
                deleted: false,
                mode_change: None,
            }]),
        },
    );
    update(&mut m, key('s'));
    let text = frame(&m);
    insta::assert_snapshot!(text);
    let row = |needle: &str| text.lines().find(|l| l.contains(needle)).unwrap();
    assert_eq!(row("let long").matches('→').count(), 2, "{text}");
    assert!(row("let wid ").contains("名 →│"), "{text}");
    assert!(!row("short").contains('→'), "{text}");
    assert!(!row("fn f()").contains('→'), "{text}");
    // The mark is dim.
    let mut t = Terminal::new(TestBackend::new(120, 12)).unwrap();
    t.draw(|f| draw(f, &m, &Plain)).unwrap();
    let marks: Vec<_> = t
        .backend()
        .buffer()
        .content()
        .iter()
        .filter(|c| c.symbol() == "→")
        .collect();
    assert_eq!(marks.len(), 3);
    assert!(marks.iter().all(|c| c.modifier.contains(Modifier::DIM)));
}
