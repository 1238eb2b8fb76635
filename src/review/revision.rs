//! Revisions (docs/DESIGN.md §4): which rejected review a new proposal answers, and the
//! interdiff between the two. When a person rejects a review with a note and the same client
//! then sends an edit that declares it answers it (`revision_of`), or that changes the lines
//! the rejected edit changed (or lines next to them, mapped through the file's changes in
//! between), the new proposal is the next revision of the rejected one: it carries the note
//! it answers and a unified diff from the rejected proposal's result to its own ("did it do
//! what I asked?"). An unrelated edit of the same file is no revision.

use std::ops::Range;
use std::path::PathBuf;
use std::sync::Arc;

use super::proposal::{FileChange, Proposal, Revision, RunId, State};
use crate::diff::{CONTEXT, Change, FileDiff};
use crate::edit::text::Text;
use crate::error::{Error, Result};

/// The interdiff is cut past this many bytes (its text is the agents'), ending with
/// [`CUT_MARK`].
pub(crate) const INTERDIFF_BYTES: usize = 64 << 10;

/// The most earlier proposals (the client's latest touching the file) a revision is looked
/// for among, so the search (a line diff per original that changed since) stays bounded.
pub(crate) const MAX_CANDIDATES: usize = 64;

/// The last line of an interdiff cut at [`INTERDIFF_BYTES`].
pub(crate) const CUT_MARK: &str = "… interdiff cut at 64 KiB\n";

/// What the revision search needs of an earlier proposal, taken under the queue's lock
/// without copying any content: its state, whether a person rejected it with a note, and
/// per file the original (shared) and the lines it changed.
pub(crate) struct Earlier {
    run_id: RunId,
    state: State,
    noted: bool,
    files: Vec<Lines>,
}

/// A file of a proposal: where, its original when it existed, and the spans of the
/// original it changes (0-based, half-open; an insertion is empty at its place).
struct Lines {
    abs: PathBuf,
    original: Option<Arc<Text>>,
    changed: Vec<Range<usize>>,
}

impl Lines {
    fn of(f: &FileChange) -> Lines {
        Lines {
            abs: f.path.abs.clone(),
            original: f.before.is_some().then(|| Arc::clone(&f.text)),
            changed: changed(&f.diff),
        }
    }

    fn text(&self) -> &str {
        self.original.as_ref().map_or("", |t| t.content())
    }
}

/// The spans of the original a diff changes.
fn changed(diff: &FileDiff) -> Vec<Range<usize>> {
    diff.hunks
        .iter()
        .flat_map(|h| h.changes.iter().map(|c| c.old.clone()))
        .collect()
}

/// Whether a proposal is its client's answer to look at: the same (named) client, decided
/// on by a person or still open (expired, withdrawn and failed ones are passed over), and
/// touching a file `new` touches.
fn same_thread(p: &Proposal, client: &str, new: &Proposal) -> bool {
    p.client.as_deref() == Some(client)
        && same_caller(p, new)
        && !matches!(p.state, State::Expired | State::Failed)
        && p.files.iter().any(|f| in_files(&new.files, f).is_some())
}

/// Whether two proposals come from the same caller as far as the gate knows it, not only by
/// the name it claims (docs/DESIGN.md §4): over the same agent link (an MCP session, a
/// forwarding stdio server's link) when either came over one; two proposals that came over
/// none (a script calling the review API's tool route) only by their names.
fn same_caller(a: &Proposal, b: &Proposal) -> bool {
    match (&a.agent, &b.agent) {
        (Some(x), Some(y)) => x.id() == y.id(),
        (None, None) => true,
        _ => false,
    }
}

/// The earlier proposals a revision of `new` may answer, newest first (`earlier` is newest
/// first): the same client's latest [`MAX_CANDIDATES`] that touch any of its files, up to
/// the oldest of them a person rejected with a note. None for a client with no name (two
/// unnamed clients are not known to be the same), and none when no rejection with a note is
/// among them: [`answered`] finds nothing past the last such rejection, so the lines of
/// the proposals after it are never compared (each comparison diffs two originals). Cheap:
/// content is shared, not copied.
pub(crate) fn candidates<'a>(
    earlier: impl IntoIterator<Item = &'a Proposal>,
    new: &Proposal,
) -> Vec<Earlier> {
    let Some(client) = new.client.as_deref().filter(|c| !c.is_empty()) else {
        return Vec::new();
    };
    let mut found: Vec<&Proposal> = earlier
        .into_iter()
        .filter(|p| same_thread(p, client, new))
        .take(MAX_CANDIDATES)
        .collect();
    let keep = found
        .iter()
        .rposition(|p| answerable(p))
        .map_or(0, |i| i + 1);
    found.truncate(keep);
    found
        .into_iter()
        .map(|p| Earlier {
            run_id: p.run_id.clone(),
            state: p.state,
            noted: noted(p),
            files: p.files.iter().map(Lines::of).collect(),
        })
        .collect()
}

/// Whether a revision may answer `p`: a person rejected it with a note.
pub(crate) fn answerable(p: &Proposal) -> bool {
    p.state == State::Rejected && noted(p)
}

/// Whether a person rejected `p` with a note.
fn noted(p: &Proposal) -> bool {
    p.review.as_ref().is_some_and(|r| !r.note.trim().is_empty())
}

/// The rejected review `new` answers without declaring one, among its [`candidates`]: the
/// latest whose changed lines `new` touches (overlapping or adjacent, in the same file) is
/// the one, when a person rejected it with a note; any other (open, accepted, rejected
/// without a note) ends the search, so a rejection is answered once. Earlier proposals whose
/// lines `new` does not touch are passed over: an unrelated edit of the same file answers
/// nothing, and does not hide the rejection a later edit answers.
pub(crate) fn answered<'a>(candidates: &'a [Earlier], new: &Proposal) -> Option<&'a RunId> {
    let latest = candidates.iter().find(|e| touches(e, new))?;
    (latest.state == State::Rejected && latest.noted).then_some(&latest.run_id)
}

/// Whether `new` changes lines `e` changed, or lines next to them, in a file both touch.
fn touches(e: &Earlier, new: &Proposal) -> bool {
    e.files.iter().any(|old| {
        let Some(f) = new.files.iter().find(|f| f.path.abs == old.abs) else {
            return false;
        };
        let mine = changed(&f.diff);
        let theirs = on_original(old, f);
        theirs
            .iter()
            .any(|t| mine.iter().any(|m| m.start <= t.end && t.start <= m.end))
    })
}

/// `old`'s changed spans on the original `f` starts from: the same when both start from
/// the same content, else mapped through the changes between the two originals.
fn on_original(old: &Lines, f: &FileChange) -> Vec<Range<usize>> {
    let now = if f.before.is_some() { f.old() } else { "" };
    if old.text() == now {
        return old.changed.clone();
    }
    let between: Vec<Change> = FileDiff::compute(old.text(), now, 0)
        .hunks
        .into_iter()
        .flat_map(|h| h.changes)
        .collect();
    old.changed
        .iter()
        .map(|r| map_line(r.start, &between, false)..map_line(r.end, &between, true))
        .collect()
}

/// Where the place before line `at` of an original lies in a later one, given the changes
/// between them: shifted past earlier changes, and widened to the whole replacement when it
/// falls inside a changed span (its start for a span's start, its end for a span's end).
fn map_line(at: usize, between: &[Change], end: bool) -> usize {
    let mut shift: isize = 0;
    for c in between {
        if c.old.start >= at {
            break;
        }
        if c.old.end > at {
            return if end { c.new.end } else { c.new.start };
        }
        shift = c.new.end as isize - c.old.end as isize;
    }
    at.saturating_add_signed(shift)
}

/// Check the rejected review `new` declares it answers (`revision_of` = `id`, which the gate
/// knows as `declared`): a review a person rejected, of the same client, touching a file
/// `new` touches. Anything else is `INVALID_INPUT`, saying which.
pub(crate) fn check_declared(declared: Option<&Proposal>, id: &str, new: &Proposal) -> Result<()> {
    let Some(prev) = declared else {
        return Err(Error::invalid_input(format!(
            "revision_of: no review with run id `{id}` (decided reviews are remembered while their gate runs, not across a restart); \
             leave revision_of out to send the edit on its own"
        )));
    };
    let why = if prev.state != State::Rejected {
        Some(format!("was not rejected (it is {})", prev.state.name()))
    } else if new.client.as_deref().is_none_or(str::is_empty)
        || prev.client != new.client
        || !same_caller(prev, new)
    {
        Some("was proposed by another client".to_string())
    } else if !prev.files.iter().any(|f| in_files(&new.files, f).is_some()) {
        Some(format!(
            "touched none of this edit's files (it touched {})",
            prev.paths().join(", ")
        ))
    } else {
        None
    };
    match why {
        Some(why) => Err(Error::invalid_input(format!(
            "revision_of: run {id} {why}; a revision answers a review a person rejected, \
             of the same client and file — leave revision_of out to send the edit on its own"
        ))),
        None => Ok(()),
    }
}

/// What `new` keeps as the next revision of `prev` (the review it answers).
pub(crate) fn revise(prev: &Proposal, new: &Proposal) -> Revision {
    Revision {
        of: prev.run_id.clone(),
        number: prev
            .revision
            .as_ref()
            .map_or(1, |r| r.number)
            .saturating_add(1),
        note: prev
            .review
            .as_ref()
            .map(|r| r.note.trim().to_string())
            .unwrap_or_default(),
        interdiff: interdiff(&prev.files, &new.files),
    }
}

/// The file of `files` at `f`'s place.
fn in_files<'a>(files: &'a [FileChange], f: &FileChange) -> Option<&'a FileChange> {
    files.iter().find(|g| g.path.abs == f.path.abs)
}

/// A file's content after its proposal (`None`: deleted).
fn result(f: &FileChange) -> Option<&str> {
    (!f.delete).then_some(f.new.as_str())
}

/// A file's content when proposed (`None`: it did not exist).
fn original(f: &FileChange) -> Option<&str> {
    f.before.is_some().then(|| f.old())
}

/// The unified diff from the files as `before` (the rejected proposal) leaves them to the
/// files as `after` (its revision) leaves them, file by file in `after`'s order then
/// `before`'s. A file only one of them changes stands on the other side as it was when
/// proposed: a file the revision no longer touches shows its change taken back, one it
/// newly touches shows its whole change. Files left the same are left out; the text is cut
/// at [`INTERDIFF_BYTES`].
pub(crate) fn interdiff(before: &[FileChange], after: &[FileChange]) -> String {
    let mut out = String::new();
    let newly = after.iter().map(|a| {
        (
            in_files(before, a).map_or_else(|| original(a), result),
            result(a),
            a,
        )
    });
    let dropped = before
        .iter()
        .filter(|b| in_files(after, b).is_none())
        .map(|b| (result(b), original(b), b));
    for (old, new, f) in newly.chain(dropped) {
        if old == new {
            continue;
        }
        let name = |side: Option<&str>, prefix: &str| match side {
            Some(_) => format!("{prefix}/{}", f.path.rel),
            None => "/dev/null".to_string(),
        };
        let diff = FileDiff::compute(old.unwrap_or(""), new.unwrap_or(""), CONTEXT);
        out.push_str(&diff.unified(&name(old, "a"), &name(new, "b")));
        if out.len() > INTERDIFF_BYTES {
            let mut at = INTERDIFF_BYTES;
            while !out.is_char_boundary(at) {
                at -= 1;
            }
            out.truncate(out[..at].rfind('\n').map_or(0, |i| i + 1));
            out.push_str(CUT_MARK);
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edit::text::Text;
    use crate::review::proposal::{Review, Verdict};
    use crate::workspace::paths::Root;

    fn change(root: &Root, rel: &str, before: Option<&str>, after: &str) -> FileChange {
        FileChange::new(
            root.resolve(rel).unwrap(),
            before.map(|b| b.as_bytes().to_vec()),
            Text::decode(before.unwrap_or("").as_bytes()).unwrap(),
            after.to_string(),
            vec![],
        )
    }

    fn proposal(client: Option<&str>, files: Vec<FileChange>) -> Proposal {
        Proposal::new("patch_file", client.map(str::to_string), files).unwrap()
    }

    /// `p` rejected with `note`.
    fn rejected(mut p: Proposal, note: &str) -> Proposal {
        p.state = State::Rejected;
        p.review = Some(Review {
            decision: Verdict::Reject,
            note: note.into(),
            edited_by_reviewer: false,
            hunks_accepted: 0,
            hunks_total: p.hunk_count(),
        });
        p
    }

    /// The run id of the review `new` answers among `earlier` (oldest first, as the queue
    /// keeps them), without declaring one.
    fn answers(earlier: &[Proposal], new: &Proposal) -> Option<String> {
        answered(&candidates(earlier.iter().rev(), new), new).cloned()
    }

    #[test]
    fn the_same_clients_next_edit_of_a_path_answers_a_rejection_with_a_note() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path()).unwrap();
        let edit = |client: Option<&str>, rel: &str, to: &str| {
            proposal(client, vec![change(&root, rel, Some("a\n"), to)])
        };
        let first = rejected(edit(Some("x"), "f.rs", "b\n"), "use c");
        let id = Some(first.run_id.clone());
        let earlier = vec![first];
        assert_eq!(answers(&earlier, &edit(Some("x"), "f.rs", "c\n")), id);
        // Another client, no client, another path: no revision.
        assert_eq!(answers(&earlier, &edit(Some("y"), "f.rs", "c\n")), None);
        assert_eq!(answers(&earlier, &edit(None, "f.rs", "c\n")), None);
        assert_eq!(answers(&earlier, &edit(Some(""), "f.rs", "c\n")), None);
        assert_eq!(answers(&earlier, &edit(Some("x"), "g.rs", "c\n")), None);
        // One common path of several is enough.
        let both = proposal(
            Some("x"),
            vec![
                change(&root, "g.rs", Some("a\n"), "c\n"),
                change(&root, "f.rs", Some("a\n"), "c\n"),
            ],
        );
        assert_eq!(answers(&earlier, &both), id);
        // A rejection without a note (or with blanks only) asks for nothing.
        for note in ["", "  \n"] {
            let quiet = vec![rejected(edit(Some("x"), "f.rs", "b\n"), note)];
            assert_eq!(answers(&quiet, &edit(Some("x"), "f.rs", "c\n")), None);
        }
    }

    #[test]
    fn a_rejection_is_answered_once_and_undecided_proposals_do_not_count() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path()).unwrap();
        let edit = |client: &str, rel: &str| {
            proposal(Some(client), vec![change(&root, rel, Some("a\n"), "b\n")])
        };
        let first = rejected(edit("x", "f.rs"), "use c");
        let id = Some(first.run_id.clone());
        // Expired, failed, other clients' and other paths' proposals since change nothing.
        let mut expired = edit("x", "f.rs");
        expired.state = State::Expired;
        let mut failed = edit("x", "f.rs");
        failed.state = State::Failed;
        let earlier = vec![first, expired, failed, edit("y", "f.rs"), edit("x", "g.rs")];
        assert_eq!(answers(&earlier, &edit("x", "f.rs")), id);
        // Its answer (open, accepted or rejected without a note) ends the chain.
        for state in [State::Pending, State::DryRun, State::Applied] {
            let mut answer = edit("x", "f.rs");
            answer.state = state;
            let mut chain = earlier.clone();
            chain.push(answer);
            assert_eq!(answers(&chain, &edit("x", "f.rs")), None, "{state:?}");
        }
    }

    #[test]
    fn no_earlier_edit_is_compared_past_the_oldest_rejection_with_a_note() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path()).unwrap();
        let edit = |to: &str| proposal(Some("x"), vec![change(&root, "f.rs", Some("a\n"), to)]);
        let ids = |earlier: &[Proposal]| -> Vec<String> {
            candidates(earlier.iter().rev(), &edit("z\n"))
                .into_iter()
                .map(|e| e.run_id)
                .collect()
        };
        // Applied edits only (an agent's edits under `auto`): nothing to answer, nothing
        // compared.
        let mut applied = edit("b\n");
        applied.state = State::Applied;
        assert!(ids(&[applied.clone(), applied.clone()]).is_empty());
        // Those older than the oldest rejection with a note are left out; those after it
        // stay (one of them may end the search before it).
        let quiet = rejected(edit("c\n"), "");
        let noted = rejected(edit("d\n"), "use e");
        let earlier = [
            applied.clone(),
            noted.clone(),
            quiet.clone(),
            applied.clone(),
        ];
        let want = vec![
            applied.run_id.clone(),
            quiet.run_id.clone(),
            noted.run_id.clone(),
        ];
        assert_eq!(ids(&earlier), want);
        assert_eq!(answers(&earlier, &edit("z\n")), None);
    }

    /// Twenty numbered lines, `line k` at 0-based index k, with `prefix` lines before them.
    fn numbered(prefix: usize) -> String {
        let head: String = (0..prefix).map(|i| format!("new {i}\n")).collect();
        head + &(0..20).map(|k| format!("line {k}\n")).collect::<String>()
    }

    #[test]
    fn a_revision_touches_the_rejected_lines_or_lines_next_to_them() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path()).unwrap();
        let old = numbered(0);
        let edit = |k: usize, to: &str| {
            let after = old.replace(&format!("line {k}\n"), to);
            proposal(Some("x"), vec![change(&root, "f.rs", Some(&old), &after)])
        };
        let first = rejected(edit(10, "ten\n"), "not like that");
        let id = Some(first.run_id.clone());
        let earlier = vec![first];
        // The same line, the lines just before and after, an insertion beside it: linked.
        for k in [9, 10, 11] {
            assert_eq!(answers(&earlier, &edit(k, "other\n")), id, "line {k}");
        }
        assert_eq!(answers(&earlier, &edit(10, "line 10\nmore\n")), id);
        assert_eq!(answers(&earlier, &edit(9, "line 9\nmore\n")), id);
        assert_eq!(answers(&earlier, &edit(11, "line 11\nmore\n")), None);
        // Lines further away: an unrelated edit of the same file.
        for k in [0, 8, 12, 19] {
            assert_eq!(answers(&earlier, &edit(k, "other\n")), None, "line {k}");
        }
        // An unrelated edit since (open) does not hide the rejection from its answer.
        let mut chain = earlier.clone();
        chain.push(edit(2, "two\n"));
        assert_eq!(answers(&chain, &edit(10, "TEN\n")), id);
    }

    #[test]
    fn the_rejected_lines_are_mapped_onto_a_file_that_changed_since() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path()).unwrap();
        let (was, now) = (numbered(0), numbered(5));
        let on = |original: &str, k: usize| {
            let after = original.replace(&format!("line {k}\n"), "changed\n");
            proposal(
                Some("x"),
                vec![change(&root, "f.rs", Some(original), &after)],
            )
        };
        let first = rejected(on(&was, 10), "again");
        let id = Some(first.run_id.clone());
        let earlier = vec![first];
        // Five lines were added above since: `line 10` is now at index 15.
        assert_eq!(answers(&earlier, &on(&now, 10)), id);
        assert_eq!(answers(&earlier, &on(&now, 5)), None);
        // Rewritten since, all of it: the rejected lines are in the rewritten span.
        let rewritten: String = (0..20).map(|k| format!("row {k}\n")).collect();
        let after = rewritten.replace("row 3\n", "x\n");
        let edit = proposal(
            Some("x"),
            vec![change(&root, "f.rs", Some(&rewritten), &after)],
        );
        assert_eq!(answers(&earlier, &edit), id);
    }

    #[test]
    fn a_declared_revision_must_be_the_same_clients_rejection_of_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path()).unwrap();
        let edit = |client: &str, rel: &str| {
            proposal(Some(client), vec![change(&root, rel, Some("a\n"), "b\n")])
        };
        let prev = rejected(edit("x", "f.rs"), "");
        let id = prev.run_id.clone();
        assert!(check_declared(Some(&prev), &id, &edit("x", "f.rs")).is_ok());
        let refused = |known: Option<&Proposal>, new: &Proposal| {
            let e = check_declared(known, &id, new).unwrap_err();
            assert_eq!(e.code, crate::error::ErrorCode::InvalidInput);
            e.message
        };
        assert!(refused(None, &edit("x", "f.rs")).contains("no review"));
        assert!(refused(Some(&prev), &edit("y", "f.rs")).contains("another client"));
        assert!(refused(Some(&prev), &edit("x", "g.rs")).contains("f.rs"));
        let open = edit("x", "f.rs");
        let e = check_declared(Some(&open), &open.run_id, &edit("x", "f.rs")).unwrap_err();
        assert!(
            e.message.contains("was not rejected (it is pending)"),
            "{e:?}"
        );
        let unnamed = proposal(None, vec![change(&root, "f.rs", Some("a\n"), "b\n")]);
        assert!(refused(Some(&prev), &unnamed).contains("another client"));
    }

    #[test]
    fn revisions_count_along_the_chain_and_keep_the_note_they_answer() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path()).unwrap();
        let edit = |to: &str| proposal(Some("x"), vec![change(&root, "f.rs", Some("a\n"), to)]);
        let v1 = rejected(edit("b\n"), " use c \n");
        let mut v2 = edit("c\n");
        v2.revision = Some(revise(&v1, &v2));
        let r2 = v2.revision.clone().unwrap();
        assert_eq!((r2.of.as_str(), r2.number), (v1.run_id.as_str(), 2));
        assert_eq!(r2.note, "use c");
        let v2 = rejected(v2, "and d");
        let earlier = [v1, v2.clone()];
        let v3 = edit("d\n");
        let id = answers(&earlier, &v3).unwrap();
        let prev = earlier.iter().find(|p| p.run_id == id).unwrap();
        let r3 = revise(prev, &v3);
        assert_eq!((r3.of, r3.number, r3.note), (v2.run_id, 3, "and d".into()));
        assert_eq!(
            r3.interdiff,
            "--- a/f.rs\n+++ b/f.rs\n@@ -1 +1 @@\n-c\n+d\n"
        );
    }

    #[test]
    fn the_interdiff_goes_from_the_rejected_result_to_the_new_one() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path()).unwrap();
        let old: String = (1..=20).map(|i| format!("line {i}\n")).collect();
        let rejected_result = old.replace("line 5\n", "five\n");
        let revised = old.replace("line 5\n", "FIVE\n");
        let before = vec![
            change(&root, "f.rs", Some(&old), &rejected_result),
            change(&root, "dropped.rs", Some("keep\n"), "changed\n"),
            change(&root, "same.rs", Some("s\n"), "S\n"),
        ];
        let after = vec![
            change(&root, "same.rs", Some("s\n"), "S\n"),
            change(&root, "f.rs", Some(&old), &revised),
            change(&root, "new.rs", None, "fresh\n"),
        ];
        let text = interdiff(&before, &after);
        let want = "--- a/f.rs\n+++ b/f.rs\n@@ -2,7 +2,7 @@\n line 2\n line 3\n line 4\n\
                    -five\n+FIVE\n line 6\n line 7\n line 8\n\
                    --- /dev/null\n+++ b/new.rs\n@@ -0,0 +1 @@\n+fresh\n\
                    --- a/dropped.rs\n+++ b/dropped.rs\n@@ -1 +1 @@\n-changed\n+keep\n";
        assert_eq!(text, want);
        // The same result again: nothing between them.
        assert_eq!(interdiff(&before, &before), "");
    }

    #[test]
    fn a_long_interdiff_is_cut_at_a_line_with_a_mark() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path()).unwrap();
        let a: String = (0..20_000).map(|i| format!("é line {i}\n")).collect();
        let b: String = (0..20_000).map(|i| format!("ê line {i}\n")).collect();
        let text = interdiff(
            &[change(&root, "f.rs", None, &a)],
            &[change(&root, "f.rs", None, &b)],
        );
        assert!(
            text.len() <= INTERDIFF_BYTES + CUT_MARK.len(),
            "{}",
            text.len()
        );
        assert!(text.len() > INTERDIFF_BYTES / 2);
        let body = text.strip_suffix(CUT_MARK).expect("the mark ends it");
        assert!(body.ends_with('\n') && body.starts_with("--- a/f.rs\n"));
    }
}
