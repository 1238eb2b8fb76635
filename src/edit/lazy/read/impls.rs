//! Blocks an instruction names by their header's text rather than by one identifier
//! (docs/DESIGN.md §5.1, step 3): Rust's `impl` blocks. `impl<T> fmt::Display for Size<T> {`
//! is called by its header (`impl<T> fmt::Display for Size<T>`), or with or without `impl`,
//! the trait's and the type's paths cut to their last segment and their generic arguments
//! dropped (`impl Display for Size`, `Display for Size`); `impl Size {` is `impl Size`.
//! Whitespace does not matter. Each block is also one "of" its type (`Size`), which names
//! the definition of the type and all its blocks together. A refusal suggests these names
//! (`impl …` first, shortest first), each checked with the instruction reader itself.

use crate::edit::lazy::index::FileIndex;
use crate::edit::lazy::outline;

/// A block named by its header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Block {
    /// Its file lines, half-open: from the header through the closing line.
    pub(crate) lines: (usize, usize),
    /// What an instruction may call it, shortest first, each normalised (see [`norm`]).
    pub(crate) names: Vec<String>,
    /// The type it is of: its last path segment without generic arguments or references.
    of: String,
}

/// The file's `impl` blocks, in file order.
pub(crate) fn blocks(file: &FileIndex<'_>) -> Vec<Block> {
    let mut out = Vec::new();
    for (h, line) in file.lines.iter().enumerate() {
        let Some((text, of_trait, ty)) = header(line) else {
            continue;
        };
        let end = outline::block_extent(file.lines, h).1.max(h + 1);
        let types = variants(ty);
        let mut names: Vec<String> = match of_trait {
            Some(tr) => {
                let traits = variants(tr);
                let pairs = types
                    .iter()
                    .flat_map(|y| traits.iter().map(move |t| format!("{t} for {y}")));
                pairs.flat_map(|p| [format!("impl {p}"), p]).collect()
            }
            None => types.iter().map(|y| format!("impl {y}")).collect(),
        };
        names.push(text.to_string());
        let mut names: Vec<String> = names.iter().map(|n| norm(n)).collect();
        names.sort_by(|a, b| a.len().cmp(&b.len()).then_with(|| a.cmp(b)));
        names.dedup();
        let of = bare(last_segment(ty))
            .rsplit([' ', '&'])
            .next()
            .unwrap_or_default()
            .to_string();
        out.push(Block {
            lines: (h, end),
            names,
            of,
        });
    }
    out
}

impl Block {
    /// The names a message suggests, those starting `impl` first, shortest first.
    pub(crate) fn suggestions(&self) -> impl Iterator<Item = &str> {
        let with = self.names.iter().filter(|n| n.starts_with("impl"));
        let without = self.names.iter().filter(|n| !n.starts_with("impl"));
        with.chain(without).map(String::as_str)
    }
}

/// The line ranges of the blocks that `text` (the words after "in") starts by naming: the
/// blocks of the longest name it starts with. `None` when it names none.
pub(crate) fn named(blocks: &[Block], text: &str) -> Option<Vec<(usize, usize)>> {
    let t = text.trim_start();
    let t = t.strip_prefix("the ").unwrap_or(t);
    let t = norm(t.trim_start_matches(['`', '"', '\'']));
    let starts = |name: &str| {
        t.strip_prefix(name).is_some_and(|rest| {
            !rest.starts_with(|c: char| c.is_alphanumeric() || matches!(c, '_' | '<' | ':'))
        })
    };
    let longest = blocks
        .iter()
        .flat_map(|b| b.names.iter())
        .filter(|n| starts(n))
        .map(String::len)
        .max()?;
    let found = blocks
        .iter()
        .filter(|b| b.names.iter().any(|n| n.len() == longest && starts(n)))
        .map(|b| b.lines)
        .collect();
    Some(found)
}

/// The trait (if any) and the type an `impl` header line is for, each by its last path
/// segment without generic arguments or references (`impl<'a> fmt::Display for &'a Size<T>`
/// → `Display`, `Size`). `None` for another line.
pub(crate) fn for_names(line: &str) -> Option<(Option<&str>, &str)> {
    let (_, of_trait, ty) = header(line)?;
    Some((of_trait.map(path_name), path_name(ty)))
}

/// A path's last segment without generic arguments or references.
fn path_name(p: &str) -> &str {
    let b = bare(last_segment(p));
    b.rsplit([' ', '&']).next().unwrap_or(b)
}

/// The line ranges of the blocks of type `name`.
pub(crate) fn of(blocks: &[Block], name: &str) -> Vec<(usize, usize)> {
    blocks
        .iter()
        .filter(|b| b.of == name)
        .map(|b| b.lines)
        .collect()
}

/// An `impl` header: its text (up to the body or a `where` clause), its trait (`None` for an
/// inherent impl) and its type, as written.
fn header(line: &str) -> Option<(&str, Option<&str>, &str)> {
    let t = line.trim_start();
    let t = t.strip_prefix("unsafe ").unwrap_or(t).trim_start();
    if !t.starts_with("impl") {
        return None;
    }
    let text = t.split('{').next()?;
    let text = text.split(" where").next()?.trim();
    let rest = text.strip_prefix("impl")?;
    let rest = match rest.strip_prefix('<') {
        Some(generics) => &generics[closing_angle(generics)? + 1..],
        None if rest.starts_with(char::is_whitespace) => rest,
        None => return None,
    };
    let rest = rest.trim();
    let (of_trait, ty) = match split_for(rest) {
        Some((tr, ty)) => (Some(tr.trim().trim_start_matches('!')), ty.trim()),
        None => (None, rest),
    };
    let path_like = |s: &str| {
        s.chars().any(char::is_alphabetic)
            && s.chars()
                .all(|c| c.is_alphanumeric() || c.is_whitespace() || "_:<>,&'()[];*".contains(c))
    };
    (path_like(ty) && of_trait.is_none_or(path_like)).then_some((text, of_trait, ty))
}

/// The byte where the `<…>` opened just before `s` closes.
fn closing_angle(s: &str) -> Option<usize> {
    let mut depth = 1;
    for (k, c) in s.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => {
                depth -= 1;
                if depth == 0 {
                    return Some(k);
                }
            }
            _ => {}
        }
    }
    None
}

/// `Trait for Type` split at its `for` (outside generic arguments).
fn split_for(s: &str) -> Option<(&str, &str)> {
    let mut depth = 0i32;
    for (k, c) in s.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => depth -= 1,
            _ if depth == 0 && s[k..].starts_with(" for ") => return Some((&s[..k], &s[k + 5..])),
            _ => {}
        }
    }
    None
}

/// The names a path goes by: as written, its last segment, each without generic arguments.
fn variants(path: &str) -> Vec<&str> {
    let last = last_segment(path);
    let mut out = vec![path, last, bare(path), bare(last)];
    out.dedup();
    out
}

/// The last `::` segment of a path (outside generic arguments).
fn last_segment(path: &str) -> &str {
    let mut depth = 0i32;
    let mut start = 0;
    for (k, c) in path.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => depth -= 1,
            ':' if depth == 0 && path[k..].starts_with("::") => start = k + 2,
            _ => {}
        }
    }
    path[start..].trim()
}

/// A path without its generic arguments.
fn bare(path: &str) -> &str {
    path.split('<').next().unwrap_or(path).trim()
}

/// Whitespace normalised: a run of it becomes one space between two word characters and
/// nothing elsewhere (`From< Vec<T> >  for Size` → `From<Vec<T>>for Size`).
pub(crate) fn norm(s: &str) -> String {
    let word = |c: char| c.is_alphanumeric() || c == '_' || c == '\'';
    let mut out = String::with_capacity(s.len());
    for w in s.split_whitespace() {
        let joins = out.ends_with(word) && w.starts_with(word);
        if joins {
            out.push(' ');
        }
        out.push_str(w);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file_blocks(text: &str) -> Vec<Block> {
        let lines: Vec<&str> = text.lines().collect();
        blocks(&FileIndex::new(&lines))
    }

    #[test]
    fn an_impl_is_named_by_its_header_with_paths_cut_and_generics_dropped() {
        let b = file_blocks(
            "impl<T: Clone> fmt::Display for Size<T> where T: Debug {\n    x\n}\nimpl Size {\n}\n",
        );
        assert_eq!(b.len(), 2);
        assert_eq!(b[0].lines, (0, 3));
        assert_eq!(b[0].names[0], "Display for Size");
        for name in [
            "impl fmt::Display for Size<T>",
            "impl Display for Size",
            "fmt::Display for Size",
            "impl<T:Clone>fmt::Display for Size<T>",
        ] {
            assert!(b[0].names.contains(&norm(name)), "{name}: {:?}", b[0].names);
        }
        assert_eq!(b[1].names, ["impl Size"]);
        assert_eq!((b[0].of.as_str(), b[1].of.as_str()), ("Size", "Size"));
        assert_eq!(of(&b, "Size"), [(0, 3), (3, 5)]);
    }

    #[test]
    fn an_instruction_names_the_block_of_its_longest_name() {
        let b = file_blocks(
            "impl fmt::Display for Size {\n}\nimpl fmt::Debug for Size {\n}\nimpl Size {\n}\nimpl SizeHint for Size {\n}\n",
        );
        assert_eq!(
            named(&b, " impl  Display for Size, please"),
            Some(vec![(0, 2)])
        );
        assert_eq!(named(&b, "the `Debug for Size` block"), Some(vec![(2, 4)]));
        assert_eq!(named(&b, "impl Size"), Some(vec![(4, 6)]));
        assert_eq!(named(&b, "impl SizeHint for Size"), Some(vec![(6, 8)]));
        assert_eq!(named(&b, "Size"), None);
        assert_eq!(named(&b, "impl Sizes"), None);
    }

    #[test]
    fn lines_that_only_start_with_impl_are_no_blocks() {
        let b = file_blocks("implement = 1\nimpl = make()\nlet impl_x = 2;\n");
        assert!(b.is_empty(), "{b:?}");
    }
}
