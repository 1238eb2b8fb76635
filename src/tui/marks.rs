//! The `syntax:` warnings of a review (a parse error the edit adds, docs/DESIGN.md §5.5) read
//! back into places, so the queue row can flag the review and the hunk that holds the error
//! can say so in its header.

/// One new parse error of a review: the file (none: the review's only file), the 1-based line
/// in the new content, and the warning as the gate wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxMark {
    /// The file, for a review of several files (`PATH: syntax: …`).
    pub path: Option<String>,
    /// The 1-based line of the error in the proposed content.
    pub line: usize,
    /// The warning (`syntax: LINE:COL: what`).
    pub text: String,
}

/// The syntax marks among `warnings`.
pub fn syntax_marks(warnings: &[String]) -> Vec<SyntaxMark> {
    warnings
        .iter()
        .filter_map(|w| {
            let (path, rest) = match w.find("syntax: ") {
                Some(0) => (None, w.as_str()),
                Some(at) => (
                    Some(w[..at].trim_end_matches([' ', ':']).to_string()),
                    &w[at..],
                ),
                None => return None,
            };
            let line = rest["syntax: ".len()..]
                .split(':')
                .next()?
                .trim()
                .parse()
                .ok()?;
            Some(SyntaxMark {
                path,
                line,
                text: rest.to_string(),
            })
        })
        .collect()
}

/// Which of `hunks` (each the 0-based new-line range it shows, inclusive) shows the mark's
/// line; else the nearest one.
pub fn hunk_of(line: usize, hunks: &[(usize, usize)]) -> Option<usize> {
    let at = line.saturating_sub(1);
    hunks
        .iter()
        .enumerate()
        .min_by_key(|(_, (lo, hi))| {
            if at < *lo {
                lo - at
            } else {
                at.saturating_sub(*hi)
            }
        })
        .map(|(k, _)| k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_are_read_with_their_file_and_line() {
        let w = vec![
            "trailing whitespace was tolerated".to_string(),
            "syntax: 12:5: missing \"}\"".to_string(),
            "src/b.rs: syntax: 3:1: unexpected \")\"".to_string(),
        ];
        let m = syntax_marks(&w);
        assert_eq!(m.len(), 2);
        assert_eq!((m[0].path.as_deref(), m[0].line), (None, 12));
        assert_eq!((m[1].path.as_deref(), m[1].line), (Some("src/b.rs"), 3));
        assert!(m[1].text.starts_with("syntax: 3:1"));
    }

    #[test]
    fn the_hunk_that_shows_the_line_else_the_nearest() {
        let hunks = [(0, 5), (20, 30)];
        assert_eq!(hunk_of(3, &hunks), Some(0));
        assert_eq!(hunk_of(25, &hunks), Some(1));
        assert_eq!(hunk_of(40, &hunks), Some(1));
        assert_eq!(hunk_of(9, &[]), None);
    }
}
