//! Unified diffs, git and plain: a parser into one patch model (many files; new, deleted,
//! renamed and copied files; mode changes; `\ No newline at end of file`) that the Codex
//! envelope ([`super::codex`]) parses into too, and an applier for one file's hunks with a
//! bounded offset search. A hunk that does not apply is reported with its header and the
//! nearest candidate region; nothing is half-applied.

use std::borrow::Cow;

use super::matching::{self, Level};
use super::text::{join_lines, normalize_newlines, split_lines};
use super::{Error, ErrorCode, Merged, Result};

/// How far (in lines) from its stated position a numbered hunk may be found.
pub(crate) const MAX_OFFSET: usize = 1000;

/// A whole patch: one entry per file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Patch {
    /// The files, in patch order.
    pub files: Vec<FilePatch>,
}

/// What happens to the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    /// Hunks edit an existing file.
    Modify,
    /// A new file.
    Add,
    /// The file is deleted.
    Delete,
    /// The file moves (and may also be edited).
    Rename,
    /// The file is copied (and the copy may be edited).
    Copy,
}

/// The changes to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilePatch {
    /// The path before (`None` for a new file), as written in the patch (prefix not stripped).
    pub old_path: Option<String>,
    /// The path after (`None` for a deleted file).
    pub new_path: Option<String>,
    /// What happens to the file.
    pub kind: ChangeKind,
    /// The mode before, if the patch says.
    pub old_mode: Option<u32>,
    /// The mode after, if the patch says.
    pub new_mode: Option<u32>,
    /// The hunks, in order.
    pub hunks: Vec<Hunk>,
    /// A binary change, which cannot be applied from text.
    pub binary: bool,
    /// Whether the paths carry git's `a/` and `b/` prefixes.
    pub git: bool,
    /// The 1-based line of the patch where this file starts.
    pub line: usize,
}

impl FilePatch {
    fn new(line: usize) -> FilePatch {
        FilePatch {
            old_path: None,
            new_path: None,
            kind: ChangeKind::Modify,
            old_mode: None,
            new_mode: None,
            hunks: Vec::new(),
            binary: false,
            git: false,
            line,
        }
    }

    /// The path to show for this file: the new one, else the old one.
    pub(crate) fn display_path(&self) -> &str {
        self.new_path
            .as_deref()
            .or(self.old_path.as_deref())
            .unwrap_or("<unnamed>")
    }

    /// The same change undone: old and new swapped, additions and removals swapped.
    pub fn reversed(&self) -> FilePatch {
        let kind = match self.kind {
            ChangeKind::Add => ChangeKind::Delete,
            ChangeKind::Delete => ChangeKind::Add,
            k => k,
        };
        FilePatch {
            old_path: self.new_path.clone(),
            new_path: self.old_path.clone(),
            kind,
            old_mode: self.new_mode,
            new_mode: self.old_mode,
            hunks: self.hunks.iter().map(Hunk::reversed).collect(),
            binary: self.binary,
            git: self.git,
            line: self.line,
        }
    }
}

/// The kind of one hunk line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    /// In both versions.
    Context,
    /// Only in the old version.
    Remove,
    /// Only in the new version.
    Add,
}

/// One line of a hunk (text without the prefix or line break).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HunkLine {
    /// Context, removal or addition.
    pub kind: LineKind,
    /// The text.
    pub text: String,
}

/// One hunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    /// 1-based first old line (`None` when the hunk carries no numbers, as in Codex patches).
    pub old_start: Option<usize>,
    /// The old line count stated in the header.
    pub old_len: usize,
    /// 1-based first new line.
    pub new_start: Option<usize>,
    /// The new line count stated in the header.
    pub new_len: usize,
    /// The text after the second `@@` (a function name, usually).
    pub section: String,
    /// Lines that must be found, in order, before the hunk (Codex `@@ def f():` anchors).
    pub anchors: Vec<String>,
    /// The lines.
    pub lines: Vec<HunkLine>,
    /// The old version's last line has no line break (it is the end of the file).
    pub old_no_newline: bool,
    /// The new version's last line has no line break.
    pub new_no_newline: bool,
    /// The hunk must match at the end of the file (Codex `*** End of File`).
    pub at_eof: bool,
    /// The 1-based line of the patch where the hunk starts.
    pub line: usize,
}

impl Hunk {
    /// A hunk without numbers (Codex style, or a header-less model diff).
    pub(crate) fn unnumbered(line: usize) -> Hunk {
        Hunk {
            old_start: None,
            old_len: 0,
            new_start: None,
            new_len: 0,
            section: String::new(),
            anchors: Vec::new(),
            lines: Vec::new(),
            old_no_newline: false,
            new_no_newline: false,
            at_eof: false,
            line,
        }
    }

    /// The header as a unified diff writes it, for messages.
    pub fn header(&self) -> String {
        let range = |start: Option<usize>, len: usize| match start {
            Some(s) if len == 1 => format!("{s}"),
            Some(s) => format!("{s},{len}"),
            None => "?".to_string(),
        };
        let mut h = format!(
            "@@ -{} +{} @@",
            range(self.old_start, self.old_len),
            range(self.new_start, self.new_len)
        );
        let section = if self.section.is_empty() {
            self.anchors.last().map(String::as_str).unwrap_or("")
        } else {
            self.section.as_str()
        };
        if !section.is_empty() {
            h.push(' ');
            h.push_str(section);
        }
        h
    }

    /// The old version of the hunk's lines.
    pub(crate) fn old_lines(&self) -> Vec<String> {
        self.lines
            .iter()
            .filter(|l| l.kind != LineKind::Add)
            .map(|l| l.text.clone())
            .collect()
    }

    fn reversed(&self) -> Hunk {
        Hunk {
            old_start: self.new_start,
            old_len: self.new_len,
            new_start: self.old_start,
            new_len: self.old_len,
            section: self.section.clone(),
            anchors: self.anchors.clone(),
            lines: self
                .lines
                .iter()
                .map(|l| HunkLine {
                    kind: match l.kind {
                        LineKind::Add => LineKind::Remove,
                        LineKind::Remove => LineKind::Add,
                        LineKind::Context => LineKind::Context,
                    },
                    text: l.text.clone(),
                })
                .collect(),
            old_no_newline: self.new_no_newline,
            new_no_newline: self.old_no_newline,
            at_eof: self.at_eof,
            line: self.line,
        }
    }
}

fn bad(line: usize, what: impl std::fmt::Display) -> Error {
    Error::invalid_input(format!("line {line} of the diff: {what}"))
}

/// Parse `@@ -a,b +c,d @@ section`. `None` if the line is a hunk header without numbers
/// (`@@` or `@@ @@`).
fn parse_hunk_header(line: &str, at: usize) -> Result<Option<Hunk>> {
    let rest = line.strip_prefix("@@").unwrap_or(line).trim_start();
    if rest.is_empty() || rest.starts_with("@@") {
        let mut h = Hunk::unnumbered(at);
        h.section = rest.trim_start_matches('@').trim().to_string();
        return Ok(Some(h));
    }
    let Some(end) = rest.find("@@") else {
        return Err(bad(at, format!("malformed hunk header `{line}`")));
    };
    let ranges = rest[..end].trim();
    let section = rest[end + 2..].trim().to_string();
    let mut parts = ranges.split_whitespace();
    let (Some(old), Some(new)) = (parts.next(), parts.next()) else {
        return Err(bad(at, format!("malformed hunk header `{line}`")));
    };
    let parse_range = |s: &str, sign: char| -> Option<(usize, usize)> {
        let s = s.strip_prefix(sign)?;
        match s.split_once(',') {
            Some((a, b)) => Some((a.parse().ok()?, b.parse().ok()?)),
            None => Some((s.parse().ok()?, 1)),
        }
    };
    let (Some((os, ol)), Some((ns, nl))) = (parse_range(old, '-'), parse_range(new, '+')) else {
        return Err(bad(at, format!("malformed hunk header `{line}`")));
    };
    Ok(Some(Hunk {
        old_start: Some(os),
        old_len: ol,
        new_start: Some(ns),
        new_len: nl,
        section,
        anchors: Vec::new(),
        lines: Vec::new(),
        old_no_newline: false,
        new_no_newline: false,
        at_eof: false,
        line: at,
    }))
}

/// A path from a `---`/`+++` line: timestamp cut, quotes undone, `/dev/null` → `None`.
fn header_path(raw: &str) -> Option<String> {
    let raw = raw.trim_end();
    let path = if raw.starts_with('"') {
        unquote(raw)
    } else {
        raw.split('\t').next().unwrap_or(raw).trim_end().to_string()
    };
    if path == "/dev/null" {
        None
    } else {
        Some(path)
    }
}

/// Undo git's C-style quoting of a path (`"a/with\ttab"`).
fn unquote(s: &str) -> String {
    let inner = s.trim_start_matches('"');
    let inner = match inner.find('"') {
        Some(end) => &inner[..end],
        None => inner,
    };
    let mut bytes = Vec::new();
    let mut chars = inner.bytes().peekable();
    while let Some(b) = chars.next() {
        if b != b'\\' {
            bytes.push(b);
            continue;
        }
        match chars.next() {
            Some(b'n') => bytes.push(b'\n'),
            Some(b't') => bytes.push(b'\t'),
            Some(b'"') => bytes.push(b'"'),
            Some(b'\\') => bytes.push(b'\\'),
            Some(d @ b'0'..=b'7') => {
                let mut v = u32::from(d - b'0');
                for _ in 0..2 {
                    if let Some(&n @ b'0'..=b'7') = chars.peek() {
                        v = v * 8 + u32::from(n - b'0');
                        chars.next();
                    }
                }
                bytes.push(v as u8);
            }
            Some(other) => bytes.push(other),
            None => {}
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Split `a/x b/x` from a `diff --git` line (exact when both sides are equal or quoted).
fn git_header_paths(rest: &str) -> (Option<String>, Option<String>) {
    let rest = rest.trim();
    if let Some(quoted) = rest.strip_prefix('"') {
        let first_end = quoted.find('"').map(|i| i + 2).unwrap_or(rest.len());
        let a = unquote(&rest[..first_end]);
        let b = rest[first_end..].trim();
        let b = if b.starts_with('"') {
            unquote(b)
        } else {
            b.to_string()
        };
        return (Some(a), Some(b));
    }
    // `a/<p> b/<p>`: find the split where both halves name the same path.
    let bytes = rest.as_bytes();
    for (i, &c) in bytes.iter().enumerate() {
        if c == b' ' {
            let (a, b) = (&rest[..i], &rest[i + 1..]);
            if a.len() > 2 && b.len() > 2 && a[2..] == b[2..] {
                return (Some(a.to_string()), Some(b.to_string()));
            }
        }
    }
    match rest.split_once(" b/") {
        Some((a, b)) => (Some(a.to_string()), Some(format!("b/{b}"))),
        None => (None, None),
    }
}

fn parse_mode(s: &str, at: usize) -> Result<u32> {
    u32::from_str_radix(s.trim(), 8).map_err(|_| bad(at, format!("bad file mode `{}`", s.trim())))
}

/// Parse a unified diff (git or plain; hunks without file headers are one unnamed file).
pub fn parse(diff: &str) -> Result<Patch> {
    let diff = normalize_newlines(diff);
    let lines: Vec<&str> = diff.split('\n').collect();
    let mut patch = Patch::default();
    let mut current: Option<FilePatch> = None;
    let mut i = 0;
    let n = if diff.ends_with('\n') {
        lines.len() - 1
    } else {
        lines.len()
    };
    let flush = |cur: &mut Option<FilePatch>, patch: &mut Patch| {
        if let Some(fp) = cur.take() {
            patch.files.push(fp);
        }
    };
    while i < n {
        let line = lines[i];
        let at = i + 1;
        if let Some(rest) = line.strip_prefix("diff --git ") {
            flush(&mut current, &mut patch);
            let mut fp = FilePatch::new(at);
            fp.git = true;
            let (a, b) = git_header_paths(rest);
            fp.old_path = a;
            fp.new_path = b;
            current = Some(fp);
            i += 1;
            continue;
        }
        if line.starts_with("--- ") && i + 1 < n && lines[i + 1].starts_with("+++ ") {
            let in_git_header = current
                .as_ref()
                .is_some_and(|fp| fp.git && fp.hunks.is_empty() && !fp.binary);
            if !in_git_header {
                flush(&mut current, &mut patch);
                current = Some(FilePatch::new(at));
            }
            let fp = current.as_mut().expect("set above");
            let old = header_path(&line[4..]);
            let new = header_path(&lines[i + 1][4..]);
            if old.is_none() {
                fp.kind = ChangeKind::Add;
            } else if new.is_none() {
                fp.kind = ChangeKind::Delete;
            }
            fp.old_path = old;
            fp.new_path = new;
            i += 2;
            continue;
        }
        if line.starts_with("@@") {
            let Some(mut hunk) = parse_hunk_header(line, at)? else {
                i += 1;
                continue;
            };
            i = read_hunk_body(&lines[..n], i + 1, &mut hunk)?;
            current
                .get_or_insert_with(|| FilePatch::new(at))
                .hunks
                .push(hunk);
            continue;
        }
        if let Some(fp) = current.as_mut().filter(|fp| fp.git && fp.hunks.is_empty()) {
            git_extended_header(fp, line, at)?;
        }
        i += 1;
    }
    flush(&mut current, &mut patch);
    if patch.files.is_empty() {
        return Err(Error::invalid_input(
            "no diff found: expected `--- old` / `+++ new` file headers or `@@ -a,b +c,d @@` hunks",
        ));
    }
    Ok(patch)
}

/// One line of git's extended header (modes, renames, copies, index, binary) into `fp`.
fn git_extended_header(fp: &mut FilePatch, line: &str, at: usize) -> Result<()> {
    let path_after =
        |p: &str, side: &str| Some(format!("{side}/{}", header_path(p).unwrap_or_default()));
    if let Some(m) = line.strip_prefix("old mode ") {
        fp.old_mode = Some(parse_mode(m, at)?);
    } else if let Some(m) = line.strip_prefix("new mode ") {
        fp.new_mode = Some(parse_mode(m, at)?);
    } else if let Some(m) = line.strip_prefix("new file mode ") {
        fp.kind = ChangeKind::Add;
        fp.new_mode = Some(parse_mode(m, at)?);
        fp.old_path = None;
    } else if let Some(m) = line.strip_prefix("deleted file mode ") {
        fp.kind = ChangeKind::Delete;
        fp.old_mode = Some(parse_mode(m, at)?);
        fp.new_path = None;
    } else if let Some(p) = line.strip_prefix("rename from ") {
        fp.kind = ChangeKind::Rename;
        fp.old_path = path_after(p, "a");
    } else if let Some(p) = line.strip_prefix("rename to ") {
        fp.kind = ChangeKind::Rename;
        fp.new_path = path_after(p, "b");
    } else if let Some(p) = line.strip_prefix("copy from ") {
        fp.kind = ChangeKind::Copy;
        fp.old_path = path_after(p, "a");
    } else if let Some(p) = line.strip_prefix("copy to ") {
        fp.kind = ChangeKind::Copy;
        fp.new_path = path_after(p, "b");
    } else if let Some(rest) = line.strip_prefix("index ") {
        if let Some((_, mode)) = rest.split_once(' ') {
            let mode = parse_mode(mode, at)?;
            fp.old_mode.get_or_insert(mode);
            fp.new_mode.get_or_insert(mode);
        }
    } else if line.starts_with("Binary files ") || line == "GIT binary patch" {
        fp.binary = true;
    }
    Ok(())
}

/// Read a hunk's lines starting at `i`; returns the index after the hunk.
fn read_hunk_body(lines: &[&str], mut i: usize, hunk: &mut Hunk) -> Result<usize> {
    let counted = hunk.old_start.is_some();
    let (mut old_left, mut new_left) = (hunk.old_len, hunk.new_len);
    let mut last_kind: Option<LineKind> = None;
    while i < lines.len() {
        let line = lines[i];
        if counted && old_left == 0 && new_left == 0 {
            if let Some(rest) = line.strip_prefix('\\') {
                mark_no_newline(hunk, last_kind, rest);
                i += 1;
            }
            break;
        }
        let (kind, text) = match line.as_bytes().first() {
            Some(b' ') => (LineKind::Context, &line[1..]),
            Some(b'-') if counted || !line.starts_with("--- ") => (LineKind::Remove, &line[1..]),
            Some(b'+') if counted || !line.starts_with("+++ ") => (LineKind::Add, &line[1..]),
            Some(b'\\') => {
                mark_no_newline(hunk, last_kind, &line[1..]);
                i += 1;
                continue;
            }
            // Editors and chat windows strip the space of empty context lines.
            None => (LineKind::Context, ""),
            _ => {
                if counted {
                    return Err(bad(
                        i + 1,
                        format!(
                            "hunk `{}` ends early: {old_left} old and {new_left} new lines were \
                             still expected, found `{line}`",
                            hunk.header()
                        ),
                    ));
                }
                break;
            }
        };
        if counted {
            match kind {
                LineKind::Context if old_left > 0 && new_left > 0 => {
                    old_left -= 1;
                    new_left -= 1;
                }
                LineKind::Remove if old_left > 0 => old_left -= 1,
                LineKind::Add if new_left > 0 => new_left -= 1,
                _ => {
                    return Err(bad(
                        i + 1,
                        format!(
                            "hunk `{}` has more lines than its header says",
                            hunk.header()
                        ),
                    ));
                }
            }
        } else if line.starts_with("@@") || line.starts_with("diff --git ") {
            break;
        }
        hunk.lines.push(HunkLine {
            kind,
            text: text.to_string(),
        });
        last_kind = Some(kind);
        i += 1;
    }
    finish_body(hunk, counted, (old_left, new_left))?;
    Ok(i)
}

/// After a hunk's lines: a counted hunk must have all its lines (a lost final empty context
/// line is put back); an uncounted one gets its lengths from its lines.
fn finish_body(hunk: &mut Hunk, counted: bool, (old_left, new_left): (usize, usize)) -> Result<()> {
    if counted && (old_left > 0 || new_left > 0) {
        // A final empty context line is often lost when a diff is pasted.
        if old_left == 1 && new_left == 1 {
            hunk.lines.push(HunkLine {
                kind: LineKind::Context,
                text: String::new(),
            });
        } else {
            return Err(bad(
                hunk.line,
                format!(
                    "hunk `{}` is truncated: {old_left} old and {new_left} new lines missing",
                    hunk.header()
                ),
            ));
        }
    }
    if !counted {
        while hunk
            .lines
            .last()
            .is_some_and(|l| l.kind == LineKind::Context && l.text.is_empty())
        {
            hunk.lines.pop();
        }
        hunk.old_len = hunk
            .lines
            .iter()
            .filter(|l| l.kind != LineKind::Add)
            .count();
        hunk.new_len = hunk
            .lines
            .iter()
            .filter(|l| l.kind != LineKind::Remove)
            .count();
    }
    Ok(())
}

fn mark_no_newline(hunk: &mut Hunk, last: Option<LineKind>, _text: &str) {
    match last {
        Some(LineKind::Context) => {
            hunk.old_no_newline = true;
            hunk.new_no_newline = true;
        }
        Some(LineKind::Remove) => hunk.old_no_newline = true,
        Some(LineKind::Add) => hunk.new_no_newline = true,
        None => {}
    }
}

/// Parse a diff that must concern one file (or be bare hunks), for `merge udiff`.
pub(crate) fn parse_single(diff: &str) -> Result<FilePatch> {
    let mut patch = parse(diff)?;
    if patch.files.len() != 1 {
        return Err(Error::invalid_input(format!(
            "the diff touches {} files ({}); give a diff for this one file",
            patch.files.len(),
            patch
                .files
                .iter()
                .map(FilePatch::display_path)
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    Ok(patch.files.remove(0))
}

/// Apply a unified diff for one file to LF-normalised `content`.
pub fn merge(content: &str, diff: &str) -> Result<Merged> {
    let fp = parse_single(diff)?;
    if fp.binary {
        return Err(Error::invalid_input(
            "the diff is a binary patch, which cannot be applied to text",
        ));
    }
    apply_hunks(content, &fp.hunks)
}

/// Apply hunks in order to LF-normalised `content`, all or nothing.
pub(crate) fn apply_hunks(content: &str, hunks: &[Hunk]) -> Result<Merged> {
    let (file_lines, mut final_newline) = split_lines(content);
    let mut lines: Vec<Cow<'_, str>> = file_lines.into_iter().map(Cow::Borrowed).collect();
    let mut warnings = Vec::new();
    let mut cursor = 0usize; // hunks may not overlap or go backwards
    let mut growth: i64 = 0; // net lines added by the hunks applied so far
    let mut drift: i64 = 0; // how far the previous hunk landed from its stated position
    let total = hunks.len();
    for (hi, hunk) in hunks.iter().enumerate() {
        let old = hunk.old_lines();
        // Where the header says the hunk starts, in the file as edited so far.
        let stated = hunk.old_start.map(|s| {
            let after_line = hunk.old_len == 0 && s > 0;
            (s.max(1) - 1) as i64 + i64::from(after_line) + growth
        });
        let expected = stated.map(|s| (s + drift).max(0) as usize);
        let placed = place(&lines, hunk, &old, cursor, expected).map_err(|e| {
            Error::new(
                e.code,
                format!(
                    "hunk {} of {total} `{}` {}",
                    hi + 1,
                    hunk.header(),
                    e.message
                ),
            )
        })?;
        if placed.level != Level::Exact {
            warnings.push(format!(
                "hunk {} of {total} `{}` matched {}",
                hi + 1,
                hunk.header(),
                placed.level.describe()
            ));
        }
        if let Some(stated) = stated {
            let offset = placed.start as i64 - stated;
            if offset != 0 && !old.is_empty() {
                warnings.push(format!(
                    "hunk {} of {total} `{}` applied at line {} (offset {offset:+})",
                    hi + 1,
                    hunk.header(),
                    placed.start + 1
                ));
            }
            drift = offset;
        }
        let end = placed.start + old.len();
        let reaches_eof = end == lines.len();
        // Context lines keep the file's own bytes.
        let mut new_region = Vec::with_capacity(hunk.new_len);
        let mut k = placed.start;
        for l in &hunk.lines {
            match l.kind {
                LineKind::Context => {
                    new_region.push(lines[k].clone());
                    k += 1;
                }
                LineKind::Remove => k += 1,
                LineKind::Add => new_region.push(Cow::Owned(l.text.clone())),
            }
        }
        let new_len = new_region.len();
        lines.splice(placed.start..end, new_region);
        if reaches_eof && (hunk.old_no_newline || hunk.new_no_newline) {
            if hunk.old_no_newline == final_newline {
                warnings.push(format!(
                    "hunk {} of {total}: the patch and the file disagree about the final line break",
                    hi + 1
                ));
            }
            final_newline = !hunk.new_no_newline;
        }
        cursor = placed.start + new_len;
        growth += new_len as i64 - old.len() as i64;
    }
    if lines.is_empty() {
        final_newline = true;
    }
    Ok(Merged {
        content: join_lines(&lines, final_newline),
        warnings,
        applied: total,
    })
}

struct Placed {
    start: usize,
    level: Level,
}

fn place(
    lines: &[Cow<'_, str>],
    hunk: &Hunk,
    old: &[String],
    cursor: usize,
    expected: Option<usize>,
) -> Result<Placed> {
    // Codex anchors: each must be found, in order, at or after the cursor.
    let mut floor = cursor;
    for anchor in &hunk.anchors {
        let key = anchor.trim();
        match (floor..lines.len()).find(|&i| lines[i].trim() == key) {
            Some(i) => floor = i + 1,
            None => {
                return Err(Error::new(
                    ErrorCode::NoMatch,
                    format!("does not apply: its context line `{key}` was not found"),
                ));
            }
        }
    }
    if old.is_empty() {
        let at = match expected {
            Some(e) => e.clamp(floor, lines.len()),
            None if hunk.at_eof || hunk.anchors.is_empty() => lines.len(),
            None => floor,
        };
        return Ok(Placed {
            start: at,
            level: Level::Exact,
        });
    }
    let levels: &[Level] = if expected.is_some() {
        &[Level::Exact, Level::TrailingWs]
    } else {
        &[
            Level::Exact,
            Level::TrailingWs,
            Level::Indent,
            Level::Confusables,
        ]
    };
    let fits = |start: usize, level: Level| -> bool {
        start >= floor
            && start + old.len() <= lines.len()
            && (!hunk.at_eof || start + old.len() == lines.len())
            && old
                .iter()
                .zip(&lines[start..start + old.len()])
                .all(|(o, f)| level.norm(o) == level.norm(f.as_ref()))
    };
    for &level in levels {
        if let Some(expected) = expected {
            for delta in 0..=MAX_OFFSET {
                if fits(expected + delta, level) {
                    return Ok(Placed {
                        start: expected + delta,
                        level,
                    });
                }
                if delta > 0 && expected >= delta && fits(expected - delta, level) {
                    return Ok(Placed {
                        start: expected - delta,
                        level,
                    });
                }
                if expected + delta > lines.len() && expected < delta {
                    break;
                }
            }
        } else {
            if let Some(start) = (floor..lines.len()).find(|&s| fits(s, level)) {
                return Ok(Placed { start, level });
            }
        }
    }
    Err(not_found(lines, hunk, old))
}

fn not_found(lines: &[Cow<'_, str>], hunk: &Hunk, old: &[String]) -> Error {
    let mut message = match hunk.old_start {
        Some(s) => format!(
            "does not apply: its {} old lines are not at line {s} nor within {MAX_OFFSET} lines of it.",
            old.len()
        ),
        None => format!(
            "does not apply: its {} old lines are not in the file.",
            old.len()
        ),
    };
    if let Some((start, end)) = matching::closest_region(lines, old) {
        message.push_str(&format!(
            " Nearest candidate, lines {}-{}:\n{}",
            start + 1,
            end,
            matching::quote_lines(lines, start, end, 15)
        ));
        if let Some((k, f)) = matching::first_difference(lines, start, old) {
            let file_line = lines
                .get(f)
                .map(std::convert::AsRef::as_ref)
                .unwrap_or("<end of file>");
            message.push_str(&format!(
                "The hunk expects `{}` where line {} has `{}`.",
                old[k].trim(),
                f + 1,
                file_line.trim()
            ));
        }
    }
    Error::new(ErrorCode::NoMatch, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_diff_with_many_files_parses_kinds_and_modes() {
        let diff = "diff --git a/x.txt b/x.txt\nindex 1111111..2222222 100644\n--- a/x.txt\n+++ b/x.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+c\ndiff --git a/new.sh b/new.sh\nnew file mode 100755\nindex 0000000..3333333\n--- /dev/null\n+++ b/new.sh\n@@ -0,0 +1 @@\n+echo hi\ndiff --git a/gone b/gone\ndeleted file mode 100644\nindex 4444444..0000000\n--- a/gone\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\ndiff --git a/old.rs b/new.rs\nsimilarity index 100%\nrename from old.rs\nrename to new.rs\ndiff --git a/run b/run\nold mode 100644\nnew mode 100755\n";
        let p = parse(diff).unwrap();
        assert_eq!(p.files.len(), 5);
        assert_eq!(p.files[0].kind, ChangeKind::Modify);
        assert_eq!(p.files[1].kind, ChangeKind::Add);
        assert_eq!(p.files[1].new_mode, Some(0o100755));
        assert_eq!(p.files[1].old_path, None);
        assert_eq!(p.files[2].kind, ChangeKind::Delete);
        assert_eq!(p.files[2].new_path, None);
        assert_eq!(p.files[3].kind, ChangeKind::Rename);
        assert_eq!(p.files[3].old_path.as_deref(), Some("a/old.rs"));
        assert_eq!(p.files[3].new_path.as_deref(), Some("b/new.rs"));
        assert_eq!(
            (p.files[4].old_mode, p.files[4].new_mode),
            (Some(0o100644), Some(0o100755))
        );
    }

    #[test]
    fn no_newline_markers_are_honoured() {
        let diff = "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n";
        let m = merge("a\nb", diff).unwrap();
        assert_eq!(m.content, "a\nb\n");
        let diff = "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n\\ No newline at end of file\n";
        assert_eq!(merge("a\nb\n", diff).unwrap().content, "a\nc");
    }

    #[test]
    fn offset_hunk_applies_with_a_warning() {
        let diff = "@@ -1,3 +1,3 @@\n x\n-y\n+Y\n z\n";
        let m = merge("pre\npre\nx\ny\nz\n", diff).unwrap();
        assert_eq!(m.content, "pre\npre\nx\nY\nz\n");
        assert!(
            m.warnings.iter().any(|w| w.contains("offset +2")),
            "{:?}",
            m.warnings
        );
    }

    #[test]
    fn failing_hunk_names_its_header_and_the_nearest_candidate() {
        let diff = "@@ -1,3 +1,3 @@ fn main\n alpha\n-beta\n+BETA\n gamma\n";
        let e = merge("alpha\nbeta2\ngamma\n", diff).unwrap_err();
        assert_eq!(e.code, ErrorCode::NoMatch);
        assert!(
            e.message.contains("@@ -1,3 +1,3 @@ fn main"),
            "{}",
            e.message
        );
        assert!(
            e.message.contains("Nearest candidate, lines 1-3"),
            "{}",
            e.message
        );
    }

    #[test]
    fn insertion_hunk_without_context() {
        let diff = "@@ -2,0 +3,1 @@\n+new\n";
        assert_eq!(merge("a\nb\nc\n", diff).unwrap().content, "a\nb\nnew\nc\n");
    }

    #[test]
    fn second_hunk_uses_the_first_hunks_growth() {
        let diff = "@@ -1,2 +1,4 @@\n a\n+x\n+y\n b\n@@ -5,2 +7,2 @@\n e\n-f\n+F\n";
        let m = merge("a\nb\nc\nd\ne\nf\n", diff).unwrap();
        assert_eq!(m.content, "a\nx\ny\nb\nc\nd\ne\nF\n");
        assert!(m.warnings.is_empty(), "{:?}", m.warnings);
    }

    #[test]
    fn bare_hunks_without_numbers_apply_by_content() {
        let diff = "@@ @@\n def f():\n-    return 1\n+    return 2\n";
        let m = merge("x = 0\n\ndef f():\n    return 1\n", diff).unwrap();
        assert_eq!(m.content, "x = 0\n\ndef f():\n    return 2\n");
    }

    #[test]
    fn miscounted_header_is_reported() {
        let diff = "@@ -1,5 +1,5 @@\n a\n-b\n+c\nnot a hunk line\n";
        assert_eq!(parse(diff).unwrap_err().code, ErrorCode::InvalidInput);
    }

    #[test]
    fn quoted_paths_are_unquoted() {
        let diff = "--- \"a/with\\ttab\"\n+++ \"b/with\\ttab\"\n@@ -1 +1 @@\n-a\n+b\n";
        let p = parse(diff).unwrap();
        assert_eq!(p.files[0].new_path.as_deref(), Some("b/with\ttab"));
    }

    #[test]
    fn reversed_patch_undoes() {
        let diff = "@@ -1,2 +1,2 @@\n a\n-b\n+c\n";
        let fp = parse_single(diff).unwrap();
        let fwd = apply_hunks("a\nb\n", &fp.hunks).unwrap().content;
        let back = apply_hunks(&fwd, &fp.reversed().hunks).unwrap().content;
        assert_eq!(back, "a\nb\n");
    }
}

#[cfg(test)]
mod proptests {
    //! For random files and edits, the unified diff of (before, after) applies back to exactly
    //! `after`, for LF and CRLF files, including a change of the final line break.

    use super::*;
    use crate::diff::unified_diff;
    use crate::edit::text::Text;
    use proptest::prelude::*;

    fn line() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => "(    |\t)?[a-z]{1,6}( [a-z=();]{1,8}){0,3}",
            1 => Just(String::new()),
            1 => Just("}".to_string()),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn generated_unified_diff_applies_back_to_after(
            before in proptest::collection::vec(line(), 0..40),
            after in proptest::collection::vec(line(), 0..40),
            crlf in any::<bool>(),
            nl_before in any::<bool>(),
            nl_after in any::<bool>(),
        ) {
            let eol = if crlf { "\r\n" } else { "\n" };
            let render = |lines: &[String], nl: bool| {
                let mut s = lines.join(eol);
                if nl && !lines.is_empty() { s.push_str(eol); }
                s
            };
            let (b, a) = (render(&before, nl_before), render(&after, nl_after));
            let text = Text::decode(b.as_bytes()).unwrap();
            let after_norm = a.replace("\r\n", "\n");
            prop_assume!(text.content() != after_norm);
            let diff = unified_diff("f.txt", text.content(), &after_norm);
            let merged = merge(text.content(), &diff).unwrap();
            prop_assert_eq!(&merged.content, &after_norm);
            let bytes = text.encode(&merged.content).unwrap();
            // An empty or break-less file has no line-ending style of its own to restore.
            if text.content().contains('\n') {
                prop_assert_eq!(String::from_utf8(bytes).unwrap(), a);
            }
        }
    }
}
