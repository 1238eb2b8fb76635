//! Line matching shared by the engines: the tolerance ladder (exact, trailing whitespace,
//! indentation, blank lines, Unicode look-alikes, leading line numbers), finding every place a
//! run of lines occurs, re-indenting replacement lines to the file's own style, rendering a
//! replacement that keeps the file's bytes for the lines it leaves alone, and describing the
//! closest region of the file when nothing matches.

use std::borrow::Cow;
use std::collections::HashMap;

use similar::{Algorithm, DiffOp, capture_diff_slices};

use super::text::Indent;

/// One rung of the tolerance ladder; each rung also tolerates what the ones before it do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Level {
    /// Byte for byte.
    Exact,
    /// Trailing whitespace ignored.
    TrailingWs,
    /// Leading whitespace ignored; the replacement is re-indented by the same delta.
    Indent,
    /// Blank lines ignored.
    BlankLines,
    /// Smart quotes, dashes, NBSP and other look-alikes folded to ASCII.
    Confusables,
    /// Leading line numbers (`12: `, `12 | `, `  12→`, `cat -n`) stripped from the edit.
    LineNumbers,
}

impl Level {
    /// Every rung, most exact first.
    pub(crate) const LADDER: [Level; 6] = [
        Level::Exact,
        Level::TrailingWs,
        Level::Indent,
        Level::BlankLines,
        Level::Confusables,
        Level::LineNumbers,
    ];

    /// What this rung tolerated, for warnings.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Level::Exact => "exactly",
            Level::TrailingWs => "ignoring trailing whitespace",
            Level::Indent => "ignoring indentation (the replacement was re-indented to match)",
            Level::BlankLines => "ignoring indentation and blank lines",
            Level::Confusables => {
                "ignoring whitespace and Unicode look-alikes (smart quotes, dashes, non-breaking spaces)"
            }
            Level::LineNumbers => {
                "after stripping leading line numbers (also stripped from the replacement)"
            }
        }
    }

    /// Whether blank lines are skipped when matching.
    pub(crate) fn ignores_blank(self) -> bool {
        self >= Level::BlankLines
    }

    /// The comparison key of `line` on this rung.
    pub(crate) fn norm(self, line: &str) -> Cow<'_, str> {
        match self {
            Level::Exact => Cow::Borrowed(line),
            Level::TrailingWs => Cow::Borrowed(line.trim_end()),
            Level::Indent | Level::BlankLines => Cow::Borrowed(line.trim()),
            Level::Confusables | Level::LineNumbers => match fold_confusables(line) {
                Cow::Borrowed(s) => Cow::Borrowed(s.trim()),
                Cow::Owned(s) => Cow::Owned(s.trim().to_string()),
            },
        }
    }
}

/// The ASCII text a typographic look-alike stands for (curly quotes, primes, dashes and minus
/// signs, non-breaking and other wide spaces, zero-width characters, the ellipsis), or `None`
/// for a character that is kept as it is.
fn fold_char(c: char) -> Option<&'static str> {
    match c {
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' | '\u{00B4}' => Some("'"),
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' | '\u{00AB}'
        | '\u{00BB}' => Some("\""),
        '\u{2010}'..='\u{2015}' | '\u{2212}' | '\u{FE58}' | '\u{FE63}' | '\u{FF0D}' => Some("-"),
        '\u{00A0}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => Some(" "),
        '\u{200B}' | '\u{200C}' | '\u{200D}' | '\u{2060}' | '\u{FEFF}' => Some(""),
        '\u{2026}' => Some("..."),
        _ => None,
    }
}

/// Fold typographic look-alikes to the ASCII characters code uses (see `fold_char`).
pub(crate) fn fold_confusables(s: &str) -> Cow<'_, str> {
    if s.is_ascii() || !s.chars().any(|c| fold_char(c).is_some()) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match fold_char(c) {
            Some(m) => out.push_str(m),
            None => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// A 64-bit hash of a line with whitespace removed and look-alikes folded: lines equal but
/// for spacing, indentation and typography hash alike. Allocation-free.
pub(crate) fn line_key(line: &str) -> u64 {
    if line.is_ascii() {
        return line
            .bytes()
            .filter(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\x0B' | b'\x0C' | b'\r'))
            .fold(KEY_SEED, |h, b| key_step(h, u32::from(b)));
    }
    let mut h: u64 = KEY_SEED;
    let mut feed = |c: char| {
        if !c.is_whitespace() {
            h = key_step(h, u32::from(c));
        }
    };
    for c in line.chars() {
        if c.is_ascii() {
            feed(c);
        } else {
            match fold_char(c) {
                Some(m) => m.chars().for_each(&mut feed),
                None => feed(c),
            }
        }
    }
    h
}

/// The starting value of [`line_key`].
pub(crate) const KEY_SEED: u64 = 0xcbf2_9ce4_8422_2325;

/// One character step of [`line_key`].
#[inline]
pub(crate) fn key_step(h: u64, c: u32) -> u64 {
    (h.rotate_left(5) ^ u64::from(c)).wrapping_mul(0x517c_c1b7_2722_0a95)
}

/// A hasher for keys that are already hashes.
#[derive(Default, Clone, Copy)]
pub(crate) struct KeyHasher(u64);

impl std::hash::Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// Split a leading line number off `line`: `  12→code`, `    12\tcode` (`cat -n`),
/// `12: code`, `12 | code`, `L12: code`. Returns the number and the code.
pub(crate) fn split_line_number(line: &str) -> Option<(u64, &str)> {
    let rest = line.trim_start_matches(' ');
    let rest = rest.strip_prefix('L').unwrap_or(rest);
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || digits > 7 {
        return None;
    }
    let number: u64 = rest[..digits].parse().ok()?;
    let after = &rest[digits..];
    if let Some(code) = after.strip_prefix('→').or_else(|| after.strip_prefix('\t')) {
        return Some((number, code));
    }
    let after_sep = after
        .strip_prefix(':')
        .or_else(|| after.strip_prefix(" |"))
        .or_else(|| after.strip_prefix('|'))?;
    if after_sep.is_empty() {
        return Some((number, after_sep));
    }
    Some((number, after_sep.strip_prefix(' ')?))
}

/// Strip line numbers from every line when every non-blank line carries one and the numbers
/// increase; `None` when the lines are not numbered.
pub(crate) fn strip_line_numbers(lines: &[String]) -> Option<Vec<String>> {
    let mut last: Option<u64> = None;
    let mut out = Vec::with_capacity(lines.len());
    let mut numbered = 0usize;
    for line in lines {
        if line.trim().is_empty() {
            out.push(String::new());
            continue;
        }
        let (n, code) = split_line_number(line)?;
        if last.is_some_and(|l| n <= l) {
            return None;
        }
        last = Some(n);
        numbered += 1;
        out.push(code.to_string());
    }
    (numbered > 0).then_some(out)
}

/// Strip line numbers from the lines that carry one (for a replacement whose SEARCH was
/// numbered).
pub(crate) fn strip_line_numbers_where_present(lines: &[String]) -> Vec<String> {
    lines
        .iter()
        .map(|l| match split_line_number(l) {
            Some((_, code)) => code.to_string(),
            None => l.clone(),
        })
        .collect()
}

/// One place where a run of edit lines matches the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Match {
    /// First file line (0-based) of the region.
    pub start: usize,
    /// One past the last file line of the region.
    pub end: usize,
    /// For each edit line, the file line it matched (`None` for a skipped blank line).
    pub map: Vec<Option<usize>>,
}

impl Match {
    /// `start-end` as 1-based inclusive line numbers, for messages.
    pub(crate) fn lines_label(&self) -> String {
        if self.end <= self.start + 1 {
            format!("line {}", self.start + 1)
        } else {
            format!("lines {}-{}", self.start + 1, self.end)
        }
    }
}

/// Every place in `file` where `needle` matches on `level`.
pub(crate) fn find_matches<S: AsRef<str>>(
    file: &[S],
    needle: &[String],
    level: Level,
) -> Vec<Match> {
    if needle.is_empty() {
        return Vec::new();
    }
    if level.ignores_blank() {
        return find_ignoring_blank(file, needle, level);
    }
    let m = needle.len();
    if m > file.len() {
        return Vec::new();
    }
    let keys: Vec<Cow<'_, str>> = needle.iter().map(|l| level.norm(l)).collect();
    let mut out = Vec::new();
    for i in 0..=file.len() - m {
        if level.norm(file[i].as_ref()) != keys[0] {
            continue;
        }
        if (1..m).all(|k| level.norm(file[i + k].as_ref()) == keys[k]) {
            out.push(Match {
                start: i,
                end: i + m,
                map: (i..i + m).map(Some).collect(),
            });
        }
    }
    out
}

fn find_ignoring_blank<S: AsRef<str>>(file: &[S], needle: &[String], level: Level) -> Vec<Match> {
    let needle_nb: Vec<(usize, Cow<'_, str>)> = needle
        .iter()
        .enumerate()
        .map(|(i, l)| (i, level.norm(l)))
        .filter(|(_, k)| !k.is_empty())
        .collect();
    if needle_nb.is_empty() {
        return Vec::new();
    }
    let file_nb: Vec<(usize, Cow<'_, str>)> = file
        .iter()
        .enumerate()
        .map(|(i, l)| (i, level.norm(l.as_ref())))
        .filter(|(_, k)| !k.is_empty())
        .collect();
    let m = needle_nb.len();
    if m > file_nb.len() {
        return Vec::new();
    }
    let leading_blank = needle_nb[0].0;
    let trailing_blank = needle.len() - 1 - needle_nb[m - 1].0;
    let mut out = Vec::new();
    for j in 0..=file_nb.len() - m {
        if (0..m).any(|k| file_nb[j + k].1 != needle_nb[k].1) {
            continue;
        }
        let mut map = vec![None; needle.len()];
        for k in 0..m {
            map[needle_nb[k].0] = Some(file_nb[j + k].0);
        }
        let mut start = file_nb[j].0;
        let mut end = file_nb[j + m - 1].0 + 1;
        // Blank lines at the needle's edges are context too when the file has them there.
        for k in (0..leading_blank).rev() {
            if start > 0 && file[start - 1].as_ref().trim().is_empty() {
                start -= 1;
                map[k] = Some(start);
            } else {
                break;
            }
        }
        for slot in &mut map[needle.len() - trailing_blank..] {
            if end < file.len() && file[end].as_ref().trim().is_empty() {
                *slot = Some(end);
                end += 1;
            } else {
                break;
            }
        }
        out.push(Match { start, end, map });
    }
    out
}

/// How to re-indent replacement lines so that they sit in the file the way the matched lines
/// do: a linear map of indentation columns (`file = search × num / den + shift`), rendered with
/// the file's tabs or spaces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Reindent {
    identity: bool,
    num: i64,
    den: i64,
    shift: i64,
    tab_width: usize,
    style: Indent,
}

impl Reindent {
    /// A plan that leaves lines as they are.
    pub(crate) fn identity() -> Reindent {
        Reindent {
            identity: true,
            num: 1,
            den: 1,
            shift: 0,
            tab_width: 4,
            style: Indent::Spaces(4),
        }
    }

    /// Learn the map from (edit line, file line) pairs that matched, by majority. `edit_lines`
    /// are all the lines of the edit (to infer its indentation unit); `file_indent` is the
    /// file's style.
    pub(crate) fn plan<'a>(
        pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
        edit_lines: &[&str],
        file_indent: Indent,
    ) -> Reindent {
        Self::learn(pairs, edit_lines, || file_indent, false)
    }

    fn learn<'a>(
        pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
        edit_lines: &[&str],
        file_indent: impl FnOnce() -> Indent,
        uniform_only: bool,
    ) -> Reindent {
        let pairs: Vec<(&str, &str)> = pairs
            .into_iter()
            .filter(|(e, f)| !e.trim().is_empty() && !f.trim().is_empty())
            .collect();
        if pairs.iter().all(|(e, f)| leading_ws(e) == leading_ws(f)) {
            return Reindent::identity();
        }
        let file_indent = file_indent();
        let file_uses_tabs = pairs.iter().any(|(_, f)| f.starts_with('\t'));
        let file_uses_spaces = pairs.iter().any(|(_, f)| f.starts_with(' '));
        let style = match (file_uses_tabs, file_uses_spaces) {
            (true, false) => Indent::Tabs,
            (false, true) => match file_indent {
                Indent::Spaces(n) => Indent::Spaces(n),
                Indent::Tabs => Indent::Spaces(4),
            },
            _ => file_indent,
        };
        let tab_width = match style {
            Indent::Spaces(n) => n,
            Indent::Tabs => edit_space_unit(edit_lines),
        };
        let cols: Vec<(i64, i64)> = pairs
            .iter()
            .map(|(e, f)| (columns(e, tab_width) as i64, columns(f, tab_width) as i64))
            .collect();
        let mut best = (0usize, 1i64, 1i64, 0i64);
        for (num, den) in [(1i64, 1i64), (2, 1), (1, 2)] {
            let mut counts: HashMap<i64, usize> = HashMap::new();
            for &(e, f) in &cols {
                *counts.entry(f * den - e * num).or_default() += 1;
            }
            if let Some((&shift_den, &count)) =
                counts.iter().max_by_key(|(s, c)| (**c, -s.abs(), **s))
                && count > best.0
            {
                best = (count, num, den, shift_den);
            }
        }
        let (count, num, den, shift_den) = best;
        if uniform_only && count < cols.len() {
            // Some matched lines moved differently from the rest: the edit's indentation is
            // deliberate, not a uniform offset to undo.
            return Reindent::identity();
        }
        if uniform_only
            && (num, den, shift_den) == (1, 1, 0)
            && pairs
                .iter()
                .any(|(e, f)| !leading_ws(e).is_empty() && leading_ws(e) == leading_ws(f))
        {
            // No offset, and indented lines already written in the file's own whitespace:
            // other whitespace in the edit's indentation is its author's choice.
            return Reindent::identity();
        }
        Reindent {
            identity: false,
            num,
            den,
            shift: shift_den / den,
            tab_width,
            style,
        }
    }

    /// Re-indent one replacement line.
    pub(crate) fn apply(&self, line: &str) -> String {
        if self.identity {
            return line.to_string();
        }
        let code = line.trim_start_matches([' ', '\t']);
        if code.is_empty() {
            return String::new();
        }
        let cols = columns(line, self.tab_width) as i64;
        let new = (cols * self.num / self.den + self.shift).max(0) as usize;
        let mut out = match self.style {
            Indent::Tabs => {
                let mut s = "\t".repeat(new / self.tab_width.max(1));
                s.push_str(&" ".repeat(new % self.tab_width.max(1)));
                s
            }
            Indent::Spaces(_) => " ".repeat(new),
        };
        out.push_str(code);
        out
    }
}

/// The leading whitespace of a line.
pub(crate) fn leading_ws(line: &str) -> &str {
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

/// The visual width of a line's indentation with tabs every `tab_width` columns.
fn columns(line: &str, tab_width: usize) -> usize {
    let tw = tab_width.max(1);
    let mut col = 0;
    for c in leading_ws(line).chars() {
        col = if c == '\t' {
            (col / tw + 1) * tw
        } else {
            col + 1
        };
    }
    col
}

/// The indentation step of space-indented edit lines (the gcd of their widths), 4 by default.
fn edit_space_unit(lines: &[&str]) -> usize {
    fn gcd(a: usize, b: usize) -> usize {
        if b == 0 { a } else { gcd(b, a % b) }
    }
    let g = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| leading_ws(l))
        .filter(|ws| !ws.is_empty() && !ws.contains('\t'))
        .map(str::len)
        .fold(0, gcd);
    if (2..=8).contains(&g) { g } else { 4 }
}

/// Render the replacement of a tolerant match: lines the edit leaves unchanged keep the file's
/// own bytes (and the file's blank lines that the edit did not mention stay), new and changed
/// lines are re-indented with `reindent`.
pub(crate) fn render_replacement<S: AsRef<str>>(
    file: &[S],
    m: &Match,
    search: &[String],
    replace: &[String],
    level: Level,
    reindent: &Reindent,
) -> Vec<String> {
    let s_keys: Vec<Cow<'_, str>> = search.iter().map(|l| level.norm(l)).collect();
    let r_keys: Vec<Cow<'_, str>> = replace.iter().map(|l| level.norm(l)).collect();
    let ops = capture_diff_slices(Algorithm::Myers, &s_keys, &r_keys);
    let mut out: Vec<String> = Vec::with_capacity(replace.len() + 4);
    let mut cursor = m.start;
    let emit_upto = |out: &mut Vec<String>, cursor: &mut usize, f: usize| {
        while *cursor < f {
            out.push(file[*cursor].as_ref().to_string());
            *cursor += 1;
        }
    };
    for op in ops {
        match op {
            DiffOp::Equal { old_index, len, .. } => {
                for s in old_index..old_index + len {
                    if let Some(f) = m.map[s]
                        && f >= cursor
                    {
                        emit_upto(&mut out, &mut cursor, f);
                        out.push(file[f].as_ref().to_string());
                        cursor = f + 1;
                    }
                }
            }
            DiffOp::Delete {
                old_index, old_len, ..
            } => {
                for s in old_index..old_index + old_len {
                    if let Some(f) = m.map[s]
                        && f >= cursor
                    {
                        emit_upto(&mut out, &mut cursor, f);
                        cursor = f + 1;
                    }
                }
            }
            DiffOp::Insert {
                new_index, new_len, ..
            } => {
                out.extend(
                    replace[new_index..new_index + new_len]
                        .iter()
                        .map(|l| reindent.apply(l)),
                );
            }
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => {
                let mut first = true;
                for s in old_index..old_index + old_len {
                    if let Some(f) = m.map[s]
                        && f >= cursor
                    {
                        if first {
                            emit_upto(&mut out, &mut cursor, f);
                            first = false;
                        }
                        cursor = f + 1;
                    }
                }
                out.extend(
                    replace[new_index..new_index + new_len]
                        .iter()
                        .map(|l| reindent.apply(l)),
                );
            }
        }
    }
    emit_upto(&mut out, &mut cursor, m.end);
    out
}

/// How many lines of `old` a line diff to `new` removes or changes.
pub(crate) fn changed_old_lines<A: AsRef<str>, B: AsRef<str>>(old: &[A], new: &[B]) -> usize {
    let a: Vec<&str> = old.iter().map(AsRef::as_ref).collect();
    let b: Vec<&str> = new.iter().map(AsRef::as_ref).collect();
    capture_diff_slices(Algorithm::Myers, &a, &b)
        .iter()
        .map(|op| match *op {
            DiffOp::Delete { old_len, .. } | DiffOp::Replace { old_len, .. } => old_len,
            _ => 0,
        })
        .sum()
}

/// The region of `file` most like `needle`, as a 0-based half-open range, for `NO_MATCH`
/// messages. Lines that occur verbatim (ignoring whitespace and look-alikes) vote for where the
/// needle would start, weighted by rarity; without any, the line most similar to the needle's
/// first non-blank line is used.
pub(crate) fn closest_region<S: AsRef<str>>(
    file: &[S],
    needle: &[String],
) -> Option<(usize, usize)> {
    if file.is_empty() || needle.is_empty() {
        return None;
    }
    let key = |l: &str| Level::Confusables.norm(l).into_owned();
    let mut index: HashMap<String, Vec<usize>> = HashMap::new();
    for (i, l) in file.iter().enumerate() {
        let k = key(l.as_ref());
        if !k.is_empty() {
            index.entry(k).or_default().push(i);
        }
    }
    let mut votes: HashMap<i64, f64> = HashMap::new();
    for (k, l) in needle.iter().enumerate() {
        let nk = key(l);
        if nk.is_empty() {
            continue;
        }
        if let Some(hits) = index.get(&nk) {
            let weight = 1.0 / hits.len() as f64;
            for &f in hits {
                *votes.entry(f as i64 - k as i64).or_default() += weight;
            }
        }
    }
    let len = needle.len();
    let start = if let Some((&start, _)) = votes
        .iter()
        .max_by(|a, b| a.1.total_cmp(b.1).then_with(|| b.0.cmp(a.0)))
    {
        start.max(0) as usize
    } else {
        let (k, first) = needle
            .iter()
            .enumerate()
            .find(|(_, l)| !l.trim().is_empty())?;
        let first = first.trim();
        let mut best = (0.0f32, 0usize);
        for (i, l) in file.iter().enumerate().take(50_000) {
            let l = l.as_ref().trim();
            if l.is_empty() || l.len() > 400 {
                continue;
            }
            let r = similar::TextDiff::from_chars(first, l).ratio();
            if r > best.0 {
                best = (r, i);
            }
        }
        if best.0 < 0.3 {
            return None;
        }
        best.1.saturating_sub(k)
    };
    let start = start.min(file.len() - 1);
    Some((start, (start + len).min(file.len())))
}

/// Quote `file[start..end]` with 1-based line numbers (at most `max` lines, long lines cut).
pub(crate) fn quote_lines<S: AsRef<str>>(
    file: &[S],
    start: usize,
    end: usize,
    max: usize,
) -> String {
    let mut out = String::new();
    let end = end.min(file.len());
    for (i, line) in file.iter().enumerate().take(end).skip(start) {
        if i - start >= max {
            out.push_str(&format!("  … ({} more lines)\n", end - i));
            break;
        }
        let line = line.as_ref();
        let shown: String = if line.chars().count() > 160 {
            let mut s: String = line.chars().take(160).collect();
            s.push('…');
            s
        } else {
            line.to_string()
        };
        out.push_str(&format!("{:>5}| {}\n", i + 1, shown));
    }
    out
}

/// The first line of `needle` that differs from the file region starting at `start` (ignoring
/// whitespace and look-alikes): `(needle index, file line index)`.
pub(crate) fn first_difference<S: AsRef<str>>(
    file: &[S],
    start: usize,
    needle: &[String],
) -> Option<(usize, usize)> {
    needle.iter().enumerate().find_map(|(k, l)| {
        let f = start + k;
        let fl = file.get(f).map(std::convert::AsRef::as_ref).unwrap_or("");
        (Level::Confusables.norm(l) != Level::Confusables.norm(fl)).then_some((k, f))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(lines: &[&str]) -> Vec<String> {
        lines.iter().map(std::string::ToString::to_string).collect()
    }

    #[test]
    fn confusables_fold_to_ascii() {
        assert_eq!(
            fold_confusables("say \u{201C}hi\u{201D} \u{2014} it\u{2019}s"),
            "say \"hi\" - it's"
        );
        assert!(matches!(fold_confusables("plain"), Cow::Borrowed(_)));
    }

    #[test]
    fn line_numbers_in_common_formats_split() {
        assert_eq!(
            split_line_number("    12→    x = 1"),
            Some((12, "    x = 1"))
        );
        assert_eq!(split_line_number("     3\tfoo()"), Some((3, "foo()")));
        assert_eq!(split_line_number("7: bar"), Some((7, "bar")));
        assert_eq!(split_line_number("7 | bar"), Some((7, "bar")));
        assert_eq!(split_line_number("1 + 2"), None);
        assert_eq!(split_line_number("x = 1"), None);
    }

    #[test]
    fn numbered_lines_must_increase() {
        assert!(strip_line_numbers(&v(&["3: a", "4: b"])).is_some());
        assert!(strip_line_numbers(&v(&["4: a", "3: b"])).is_none());
        assert!(strip_line_numbers(&v(&["4: a", "b"])).is_none());
    }

    #[test]
    fn blank_lines_are_skipped_on_the_blank_rung() {
        let file = ["a", "", "b", "c"];
        let m = find_matches(&file, &v(&["a", "b"]), Level::BlankLines);
        assert_eq!(m.len(), 1);
        assert_eq!((m[0].start, m[0].end), (0, 3));
        assert!(find_matches(&file, &v(&["a", "b"]), Level::Indent).is_empty());
    }

    #[test]
    fn reindent_maps_spaces_to_tabs() {
        let plan = Reindent::plan(
            [("    if x:", "\tif x:"), ("        y()", "\t\ty()")],
            &["    if x:", "        y()"],
            Indent::Tabs,
        );
        assert_eq!(plan.apply("        z()"), "\t\tz()");
        assert_eq!(plan.apply("            w()"), "\t\t\tw()");
    }

    #[test]
    fn reindent_shifts_a_dedented_edit() {
        let plan = Reindent::plan([("x = 1", "        x = 1")], &["x = 1"], Indent::Spaces(4));
        assert_eq!(plan.apply("if y:"), "        if y:");
        assert_eq!(plan.apply("    z()"), "            z()");
    }

    #[test]
    fn closest_region_finds_the_near_miss() {
        let file = [
            "fn a() {",
            "    one();",
            "    two();",
            "}",
            "fn b() {",
            "    three();",
            "}",
        ];
        let needle = v(&["fn b() {", "    thre();", "}"]);
        assert_eq!(closest_region(&file, &needle), Some((4, 7)));
    }
}
