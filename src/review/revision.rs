//! Revisions (docs/DESIGN.md §4): which rejected review a new proposal answers, and the
//! interdiff between the two. When a person rejects a review with a note and the same client
//! then sends an edit touching any of its paths, the new proposal is the next revision of the
//! rejected one: it carries the note it answers and a unified diff from the rejected
//! proposal's result to its own ("did it do what I asked?").

use super::proposal::{FileChange, Proposal, Revision, State};
use crate::diff::{CONTEXT, FileDiff};

/// The interdiff is cut past this many bytes (its text is the agents'), ending with
/// [`CUT_MARK`].
pub(crate) const INTERDIFF_BYTES: usize = 64 << 10;

/// The last line of an interdiff cut at [`INTERDIFF_BYTES`].
pub(crate) const CUT_MARK: &str = "… interdiff cut at 64 KiB\n";

/// The review `new` answers, among the proposals the gate still keeps from before it, newest
/// first (`earlier`): the latest proposal of the same client that touches any of its paths,
/// when a person rejected it with a note. Proposals no person decided on (expired, withdrawn,
/// failed, failed calls) are passed over; any other (accepted, open, rejected without a note)
/// ends the chain, so a rejection is answered once. A proposal with no client name answers
/// nothing: two unnamed clients are not known to be the same.
pub(crate) fn predecessor<'a>(
    earlier: impl IntoIterator<Item = &'a Proposal>,
    new: &Proposal,
) -> Option<&'a Proposal> {
    let client = new.client.as_deref().filter(|c| !c.is_empty())?;
    let latest = earlier.into_iter().find(|p| {
        p.client.as_deref() == Some(client)
            && !matches!(p.state, State::Expired | State::Failed)
            && p.files.iter().any(|f| in_files(&new.files, f).is_some())
    })?;
    let noted = latest
        .review
        .as_ref()
        .is_some_and(|r| !r.note.trim().is_empty());
    (latest.state == State::Rejected && noted).then_some(latest)
}

/// What `new` keeps as the next revision of `prev` (its [`predecessor`]).
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

    /// The predecessor's run id among `earlier` (oldest first, as the queue keeps them).
    fn answers(earlier: &[Proposal], new: &Proposal) -> Option<String> {
        predecessor(earlier.iter().rev(), new).map(|p| p.run_id.clone())
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
        let prev = predecessor(earlier.iter().rev(), &v3).unwrap();
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
