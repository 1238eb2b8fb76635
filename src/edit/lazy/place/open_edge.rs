//! Rule `open-edge-versions` (place): new code that no file line places, bound for the file's
//! start or end only because the snippet shows no placeholder there, while one of its lines
//! is as like a file line as a changed line must be to place itself. Two readings — new code
//! at the file's edge, or a new version of that line where it stands (a snippet may omit the
//! placeholder at an edge though the file continues) — so the merge asks.

use super::{Context, Signature, lines};
use crate::edit::lazy::costs::WEIGHTS;
use crate::edit::lazy::prepare::Kind;
use crate::edit::lazy::segments::Segment;
use crate::error::{Error, ErrorCode, Result};

/// Which edge of the file the segment would go to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FileEdge {
    Start,
    End,
}

/// Refuse `seg`, bound for the file's `edge`, when one of its new lines is a likely new
/// version of file lines (the first such line is named, with up to
/// `WEIGHTS.open_edge_versions_listed` of those file lines).
pub(crate) fn check(ctx: &Context<'_>, seg: &Segment, edge: FileEdge) -> Result<()> {
    let Some((i, found)) = versioned_line(ctx, seg) else {
        return Ok(());
    };
    let l = &ctx.lines()[i];
    let at: Vec<String> = found.iter().map(|j| (j + 1).to_string()).collect();
    let (place, before) = match edge {
        FileEdge::Start => ("start", "start the snippet with a placeholder"),
        FileEdge::End => ("end", "end the snippet with a placeholder"),
    };
    Err(Error::new(
        ErrorCode::NeedsMoreContext,
        format!(
            "snippet line {} `{}` holds no line of the file, and with no placeholder before \
             the file's {place} it would go there as new code, but it is much like file \
             line(s) {}: is it new code at the {place}, or a new version of that line where \
             it stands? To change the line, show an unchanged line next to it and {before}; \
             to add it at the {place}, say so in the instruction (\"at the top\", \"at the end \
             of the file\")",
            l.at,
            l.text.trim(),
            at.join(", ")
        ),
    ))
}

/// The first of the segment's new lines (of the first `WEIGHTS.open_edge_versions_tried`
/// long enough to judge) as like some file lines as a changed line must be to place
/// itself, with those lines.
fn versioned_line(ctx: &Context<'_>, seg: &Segment) -> Option<(usize, Vec<usize>)> {
    let lines = ctx.lines();
    let floor = WEIGHTS.placing_change_similarity;
    let judged = |i: &usize| {
        let l = &lines[*i];
        let chars = l.text.chars().filter(|c| !c.is_whitespace()).count();
        l.kind == Kind::Plain
            && l.count == 0
            && !l.trivial
            && chars >= WEIGHTS.placing_change_min_chars
    };
    seg.lines
        .clone()
        .filter(judged)
        .take(WEIGHTS.open_edge_versions_tried)
        .find_map(|i| {
            let sig = Signature::of(&lines[i].text);
            let found: Vec<usize> = ctx
                .sigs()
                .iter()
                .enumerate()
                .filter(|&(j, s)| !ctx.file.is_trivial(j) && sig.may_reach(s, floor))
                .filter(|&(j, _)| lines::similarity(&lines[i].text, ctx.file.lines[j]) >= floor)
                .map(|(j, _)| j)
                .take(WEIGHTS.open_edge_versions_listed)
                .collect();
            (!found.is_empty()).then_some((i, found))
        })
}

#[cfg(test)]
mod tests {
    use crate::edit::Hints;
    use crate::edit::lazy::merge;
    use crate::error::ErrorCode;

    const FILE: &str = "\"\"\"Tools.\n\nSee the guide:\n\n__ https://example.org/docs/latest/tools.html\n\"\"\"\n\nimport os\n\nHELP = \"\"\"\n    https://example.org/docs/latest/tools.html#usage\n\"\"\"\n\n\ndef run(path):\n    return os.stat(path)\n";

    fn lazy(snippet: &str, instruction: Option<&str>) -> crate::error::Result<String> {
        let hints = Hints {
            path: Some("tools.py"),
            instruction,
        };
        merge(FILE, snippet, &hints).map(|m| m.content)
    }

    #[test]
    fn an_open_start_line_like_a_file_line_asks_whether_it_is_new_or_that_lines_new_version() {
        // The snippet opens (no placeholder) with a new version of the link inside the
        // docstring (two file lines are like it, so neither places it): at the file's start
        // it would break the file.
        let snippet =
            "__ https://example.org/docs/latest/deprecated/tools.html\n\n# ... existing code ...\n";
        let err = lazy(snippet, None).unwrap_err();
        assert_eq!(err.code, ErrorCode::NeedsMoreContext);
        assert!(
            err.message.contains("file line(s) 5, 11"),
            "{}",
            err.message
        );
    }

    #[test]
    fn new_code_at_an_open_edge_unlike_any_file_line_still_goes_there() {
        let snippet = "# ... existing code ...\n\n\ndef main():\n    print(run(\"/\"))\n";
        let out = lazy(snippet, None).unwrap();
        assert!(
            out.ends_with("    return os.stat(path)\n\n\ndef main():\n    print(run(\"/\"))\n"),
            "{out}"
        );
    }
}
