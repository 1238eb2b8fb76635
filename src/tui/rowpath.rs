//! The paths a queue row shows within its room (docs/DESIGN.md §6): one file by its name
//! whole, its directories cut on the left (`…/src/printer.rs`); a batch by its files' paths
//! when they all fit, else by their names as far as room allows, the rest counted as files.

use super::columns::{cols, fit};
use crate::inert::inert_line;

/// What stands for the directories left out on the left.
const CUT_LEFT: &str = "…/";

/// Between a batch's names.
const SEPARATOR: &str = ", ";

/// The columns a batch's first name keeps however little room there is.
const LEAST_NAME: usize = 4;

/// `s` in at most `width` columns, ending in `…` when some was left out.
pub(crate) fn truncate(s: &str, width: usize) -> String {
    if !fit(s, width).1 {
        return s.to_string();
    }
    let mut out = fit(s, width.saturating_sub(1)).0.to_string();
    out.push('…');
    out
}

/// A path's file name (its last component).
fn name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// One path in `room` columns: whole when it fits; else its name whole with as many of its
/// last directories as fit, after `…/`; else its name cut at its end.
pub(crate) fn one_path(path: &str, room: usize) -> String {
    let path = inert_line(path);
    if cols(&path) <= room {
        return path.into_owned();
    }
    let name = name(&path);
    if cols(name) + cols(CUT_LEFT) > room {
        return truncate(name, room);
    }
    // The longest tail of whole components that fits after the mark.
    let mut tail = name;
    for (at, _) in path.rmatch_indices('/') {
        let longer = &path[at + 1..];
        if cols(longer) + cols(CUT_LEFT) > room {
            break;
        }
        tail = longer;
    }
    format!("{CUT_LEFT}{tail}")
}

/// How many more files there are, said as files (a bare `+1` would read as a count of lines
/// beside the row's counts), in few columns: a queue row is narrow.
fn more(n: usize) -> String {
    format!(" +{n} file{}", if n == 1 { "" } else { "s" })
}

/// A row's paths within `room` columns (see the module's header).
pub(crate) fn row_path(paths: &[String], room: usize) -> String {
    match paths {
        [] => String::new(),
        [one] => one_path(one, room),
        many => {
            let whole = inert_line(&many.join(SEPARATOR)).into_owned();
            if cols(&whole) <= room {
                return whole;
            }
            let names: Vec<String> = many
                .iter()
                .map(|p| inert_line(name(p)).into_owned())
                .collect();
            let all = names.join(SEPARATOR);
            if cols(&all) <= room {
                return all;
            }
            // As many names as fit beside the count of the others.
            let mut shown = String::new();
            for (k, n) in names.iter().enumerate() {
                let next = if shown.is_empty() {
                    n.clone()
                } else {
                    format!("{shown}{SEPARATOR}{n}")
                };
                if cols(&next) + cols(&more(names.len() - k - 1)) > room {
                    break;
                }
                shown = next;
            }
            if shown.is_empty() {
                let rest = more(names.len() - 1);
                let first = truncate(&names[0], room.saturating_sub(cols(&rest)).max(LEAST_NAME));
                return format!("{first}{rest}");
            }
            let left = names.len() - shown.split(SEPARATOR).count();
            format!("{shown}{}", more(left))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_path_keeps_its_name_whole_and_cuts_directories_on_the_left() {
        let p = "src/very/long/directory/printer.rs";
        assert_eq!(one_path(p, 80), p);
        assert_eq!(one_path(p, 22), "…/directory/printer.rs");
        assert_eq!(one_path(p, 21), "…/printer.rs");
        assert_eq!(one_path(p, 12), "…/printer.rs");
        assert_eq!(one_path(p, 11), "printer.rs");
        assert_eq!(one_path(p, 6), "print…");
    }

    #[test]
    fn a_batch_shows_paths_then_names_as_far_as_room_allows() {
        let paths = |n: usize| {
            (0..n)
                .map(|i| format!("src/module_{i}/file_{i}.rs"))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            row_path(&paths(2), 60),
            "src/module_0/file_0.rs, src/module_1/file_1.rs"
        );
        assert_eq!(row_path(&paths(2), 30), "file_0.rs, file_1.rs");
        assert_eq!(row_path(&paths(4), 32), "file_0.rs, file_1.rs +2 files");
        assert_eq!(row_path(&paths(3), 18), "file_0.rs +2 files");
        assert_eq!(row_path(&paths(3), 12), "fil… +2 files");
        for w in [10, 20, 30, 40, 60] {
            assert!(
                cols(&row_path(&paths(5), w)) <= w.max(LEAST_NAME + 9),
                "{w}"
            );
        }
    }
}
