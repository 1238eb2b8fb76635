//! Stage 3b, doc comments as anchors: a comment block documents the definition right below
//! it. Pinned to a file comment that documents another definition, whole definitions
//! away from the segment's next anchor, it was copied (doc text is often reused), not
//! shown in place: it gives up its pins rather than license deleting those definitions.

use crate::edit::lazy::index::FileIndex;
use crate::edit::lazy::place::Pin;
use crate::edit::lazy::placeholder::comment_body;
use crate::edit::lazy::prepare::SLine;
use crate::edit::lazy::units::header_name;

/// Drops the pins of comment lines whose file comment documents a definition other than the
/// one the snippet's comment documents, when a further definition header stands between
/// that definition and the segment's next pin (the deletion would take it whole).
pub(crate) fn drop_stray_doc_pins(lines: &[SLine], file: &FileIndex<'_>, pins: &mut Vec<Pin>) {
    let is_comment = |t: &str| !t.trim().is_empty() && comment_body(t).1;
    let mut stray = vec![false; pins.len()];
    for k in 0..pins.len().saturating_sub(1) {
        let (p, q) = (pins[k], pins[k + 1]);
        if !is_comment(&lines[p.i].text) || q.i <= p.i + 1 {
            continue;
        }
        // The definitions the two comments document: the first line below each that is not
        // a comment.
        let Some(s) = (p.i + 1..q.i).find(|&i| !is_comment(&lines[i].text)) else {
            continue;
        };
        let Some(h) = (p.j + 1..q.j).find(|&j| !is_comment(file.lines[j])) else {
            continue;
        };
        let (Some(ours), Some(theirs)) = (header_name(&lines[s].text), header_name(file.lines[h]))
        else {
            continue;
        };
        if ours != theirs && (h + 1..q.j).any(|j| header_name(file.lines[j]).is_some()) {
            stray[k] = true;
        }
    }
    // The whole comment block goes with the line found stray.
    for k in (0..pins.len()).rev() {
        if stray[k] {
            let mut a = k;
            while a > 0 && pins[a - 1].i + 1 == pins[a].i && is_comment(&lines[pins[a - 1].i].text)
            {
                a -= 1;
                stray[a] = true;
            }
        }
    }
    let mut k = 0;
    pins.retain(|_| {
        k += 1;
        !stray[k - 1]
    });
}
