//! Stage 3, place: new code bound for the file's end, when the file ends with its entry guard
//! (rule `entry-guard`). Code after a top-level `if __name__ == "__main__":` (Python) or `if
//! __FILE__ == $0` (Ruby) is defined only once the program has run, so "before the guard" is
//! a second reading of the snippet's open end, and the merge asks.

use crate::edit::lazy::index::FileIndex;
use crate::edit::lazy::lines;
use crate::error::{Error, ErrorCode, Result};
use crate::syntax::Lang;

/// Refuses new code bound for the file's end when the file (Python or Ruby) ends with its
/// entry guard, naming both readings. Called when the code would go at the file's end.
pub(crate) fn check_at_file_end(file: &FileIndex<'_>) -> Result<()> {
    let Some(lang) = file
        .named_language()
        .filter(|l| matches!(l, Lang::Python | Lang::Ruby))
    else {
        return Ok(());
    };
    // The file's last top-level line that is code, not a comment or a closer (Ruby's guard
    // ends with `end`).
    let Some(j) = (0..file.len()).rev().find(|&j| {
        let t = file.lines[j].trim();
        !file.is_blank(j) && file.indent(j) == 0 && !t.starts_with('#') && t != "end"
    }) else {
        return Ok(());
    };
    let line = file.lines[j].trim_end();
    if !is_entry_guard(lang, lines::without_trailing_comment(line).unwrap_or(line)) {
        return Ok(());
    }
    Err(Error::new(
        ErrorCode::NeedsMoreContext,
        format!(
            "the snippet ends with new code after a placeholder, which reads as the end of the \
             file, but the file ends with its entry guard `{line}` (line {}): code after it is \
             defined only after the program has run; to add it before the guard, show the \
             guard's line after the new code; to add it after, show the guard's last line \
             before it",
            j + 1
        ),
    ))
}

/// Whether a top-level line (its trailing comment cut) opens the block that runs the file
/// as a program.
fn is_entry_guard(lang: Lang, line: &str) -> bool {
    let compact: String = line.chars().filter(|c| !c.is_whitespace()).collect();
    match lang {
        Lang::Python => ["__name__=='__main__'", "__name__==\"__main__\""]
            .iter()
            .any(|g| compact == format!("if{g}:") || compact == format!("if({g}):")),
        Lang::Ruby => ["$0", "$PROGRAM_NAME"].iter().any(|g| {
            compact == format!("if__FILE__=={g}") || compact == format!("if{g}==__FILE__")
        }),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(path: &str, text: &str) -> bool {
        let lines: Vec<&str> = text.lines().collect();
        let file = FileIndex::new(&lines).with_source(Some(path), text);
        check_at_file_end(&file).is_err()
    }

    #[test]
    fn the_guard_is_found_past_its_comment_and_comments_after_it() {
        let body = "\n\nif __name__ == \"__main__\":  # pragma: no cover\n    main()\n";
        assert!(refused(
            "tool.py",
            &format!("def main():\n    pass\n{body}")
        ));
        assert!(refused(
            "tool.py",
            &format!("def main():\n    pass\n{body}\n# vim: set ts=4:\n")
        ));
        assert!(refused(
            "tool.rb",
            "def main\nend\n\nif $PROGRAM_NAME == __FILE__\n  main\nend\n"
        ));
    }

    #[test]
    fn only_a_python_or_ruby_file_ending_with_its_guard_is_refused() {
        let guard = "if __name__ == \"__main__\":\n    main()\n";
        assert!(!refused("notes.md", guard));
        assert!(!refused(
            "tool.py",
            &format!("{guard}\n\ndef later():\n    pass\n")
        ));
        assert!(!refused(
            "tool.py",
            "def main():\n    if __name__ == \"__main__\":\n        run()\n"
        ));
        assert!(!refused(
            "tool.rb",
            "if __FILE__ == $0\n  main\nend\n\nclass Later\nend\n"
        ));
    }
}
