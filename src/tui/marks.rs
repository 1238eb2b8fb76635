//! Where a review's syntax mark goes (a parse error the edit adds, docs/DESIGN.md §5.5, given
//! in `Summary::syntax`): the hunk that holds its line says so in its header.

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
    fn the_hunk_that_shows_the_line_else_the_nearest() {
        let hunks = [(0, 5), (20, 30)];
        assert_eq!(hunk_of(3, &hunks), Some(0));
        assert_eq!(hunk_of(25, &hunks), Some(1));
        assert_eq!(hunk_of(40, &hunks), Some(1));
        assert_eq!(hunk_of(9, &[]), None);
    }
}
