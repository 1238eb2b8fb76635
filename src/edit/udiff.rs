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

    /// The `.rej` file `git apply --reject` writes for the hunks `rejected` (indices into
    /// `hunks`): its path (the new path's, `-p` stripped) and its text, a `diff` line naming
    /// the file then each hunk as the patch wrote it.
    pub fn reject_file(&self, rejected: &[usize]) -> (String, String) {
        let path = self.display_path();
        let mut text = format!("diff a/{path} b/{path}\t(rejected hunks)\n");
        for &i in rejected {
            if let Some(h) = self.hunks.get(i) {
                text.push_str(&h.patch_text());
            }
        }
        (format!("{path}.rej"), text)
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
    /// The hunk as the patch wrote it, header included (LF line ends), for the `.rej` file
    /// of `apply --reject`; empty for hunks that did not come from a unified diff.
    pub raw: String,
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
            raw: String::new(),
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

    /// Where `git apply` insists the hunk match: (at the file's start, at its end). A hunk
    /// that says it starts at line 1 goes at the start, and one with no context after its
    /// change at the end (git writes fewer context lines only where the file ends them).
    fn git_edges(&self) -> (bool, bool) {
        let numbered =
            self.old_start.is_some() && self.lines.iter().any(|l| l.kind != LineKind::Add);
        let trailing = self
            .lines
            .iter()
            .rev()
            .take_while(|l| l.kind == LineKind::Context)
            .count();
        (
            numbered && self.old_start.is_some_and(|s| s <= 1),
            numbered && trailing == 0,
        )
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
            // `git apply -R --reject` writes the hunk as the patch has it, not reversed.
            raw: self.raw.clone(),
        }
    }

    /// The hunk as a patch file holds it (what `git apply --reject` writes to `FILE.rej`):
    /// its own text when it came from a unified diff, else written out in that form.
    pub fn patch_text(&self) -> String {
        if !self.raw.is_empty() {
            return self.raw.clone();
        }
        let mut out = match self.old_start {
            Some(_) => self.header(),
            None => match self.anchors.last().filter(|_| self.section.is_empty()) {
                Some(anchor) => format!("@@ {anchor}"),
                None if self.section.is_empty() => "@@".to_string(),
                None => format!("@@ {}", self.section),
            },
        };
        out.push('\n');
        let last_old = self.lines.iter().rposition(|l| l.kind != LineKind::Add);
        let last_new = self.lines.iter().rposition(|l| l.kind != LineKind::Remove);
        for (k, l) in self.lines.iter().enumerate() {
            let sign = match l.kind {
                LineKind::Context => ' ',
                LineKind::Remove => '-',
                LineKind::Add => '+',
            };
            out.push(sign);
            out.push_str(&l.text);
            out.push('\n');
            if (self.old_no_newline && last_old == Some(k))
                || (self.new_no_newline && last_new == Some(k))
            {
                out.push_str("\\ No newline at end of file\n");
            }
        }
        out
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
        raw: String::new(),
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
            hunk.raw = lines[at - 1..i].join("\n") + "\n";
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

/// Apply hunks in order to LF-normalised `content`, all or nothing, each found near where its
/// numbers say (an agent's diff, whose numbers are rough).
pub(crate) fn apply_hunks(content: &str, hunks: &[Hunk]) -> Result<Merged> {
    let partial = apply_partial(content, hunks, false, true);
    match partial.rejected.into_iter().next() {
        Some(first) => Err(first.error),
        None => Ok(partial.merged),
    }
}

/// One file's hunks applied where they apply, as `git apply --reject` does.
#[derive(Debug, Clone)]
pub struct Partial {
    /// The content with every hunk that applies (`applied` counts them).
    pub merged: Merged,
    /// The hunks left out, in order.
    pub rejected: Vec<Rejected>,
}

/// A hunk that does not apply.
#[derive(Debug, Clone)]
pub struct Rejected {
    /// Its 0-based index among the file's hunks.
    pub index: usize,
    /// Why (`NO_MATCH`, naming the hunk and the nearest candidate in the file).
    pub error: Error,
}

/// Apply hunks in order to LF-normalised `content`, leaving out each hunk that does not apply
/// (the later ones are placed as if it were not in the patch). With `git_edges`, a hunk goes
/// where `git apply` would let it ([`Hunk::git_edges`]: a patch file, made by a diff tool);
/// without, anywhere near its numbers.
pub(crate) fn apply_hunks_rejecting(content: &str, hunks: &[Hunk], git_edges: bool) -> Partial {
    apply_partial(content, hunks, git_edges, false)
}

/// Rejected hunks whose message names the nearest candidate in the file: finding it reads the
/// whole file, so a patch of hundreds of failing hunks gets it for the first few only.
const NEAREST_NAMED: usize = 8;

/// [`apply_hunks_rejecting`]; with `stop_first`, no hunk is tried after one that fails.
fn apply_partial(content: &str, hunks: &[Hunk], git_edges: bool, stop_first: bool) -> Partial {
    let (file_lines, final_newline) = split_lines(content);
    let mut run = Applier {
        git_edges,
        lines: file_lines.iter().copied().map(Cow::Borrowed).collect(),
        original: &file_lines,
        final_newline,
        warnings: Vec::new(),
        cursor: 0,
        growth: 0,
        drift: 0,
        total: hunks.len(),
    };
    let mut rejected = Vec::new();
    for (index, hunk) in hunks.iter().enumerate() {
        if let Err(error) = run.apply(index, hunk, rejected.len() < NEAREST_NAMED) {
            rejected.push(Rejected { index, error });
            if stop_first {
                break;
            }
        }
    }
    if run.lines.is_empty() {
        run.final_newline = true;
    }
    Partial {
        merged: Merged {
            content: join_lines(&run.lines, run.final_newline),
            warnings: run.warnings,
            applied: hunks.len() - rejected.len(),
            ..Default::default()
        },
        rejected,
    }
}

/// The file as the hunks so far left it, and where the next hunk may go.
struct Applier<'a> {
    /// Hunks cut by the file's start or end must match there, as with `git apply`.
    git_edges: bool,
    lines: Vec<Cow<'a, str>>,
    /// The file before any hunk: messages give its line numbers, the ones on disk.
    original: &'a [&'a str],
    final_newline: bool,
    warnings: Vec<String>,
    /// Hunks may not overlap or go backwards: the first line after the last hunk applied.
    cursor: usize,
    /// Net lines added by the hunks applied so far.
    growth: i64,
    /// How far the previous hunk landed from its stated position.
    drift: i64,
    total: usize,
}

impl Applier<'_> {
    /// Apply hunk `hi`, or say why it does not apply (nothing changes then; with `nearest`,
    /// naming the nearest candidate).
    fn apply(&mut self, hi: usize, hunk: &Hunk, nearest: bool) -> Result<()> {
        let total = self.total;
        let old = hunk.old_lines();
        // Where the header says the hunk starts, in the file as edited so far.
        let stated = hunk.old_start.map(|s| {
            let after_line = hunk.old_len == 0 && s > 0;
            (s.max(1) - 1) as i64 + i64::from(after_line) + self.growth
        });
        let expected = stated.map(|s| (s + self.drift).max(0) as usize);
        let edges = if self.git_edges {
            let (start, end) = hunk.git_edges();
            (start, end || hunk.at_eof)
        } else {
            (false, hunk.at_eof)
        };
        let at = Position {
            cursor: self.cursor,
            expected,
            at_start: edges.0,
            at_end: edges.1,
        };
        let original = if nearest { self.original } else { &[] };
        let placed = place(&self.lines, original, hunk, &old, &at).map_err(|e| {
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
            self.warnings.push(format!(
                "hunk {} of {total} `{}` matched {}",
                hi + 1,
                hunk.header(),
                placed.level.describe()
            ));
        }
        if let Some(stated) = stated {
            let offset = placed.start as i64 - stated;
            if offset != 0 && !old.is_empty() {
                // After the cursor the file is the one on disk shifted by `growth`.
                self.warnings.push(format!(
                    "hunk {} of {total} `{}` applied at line {} (offset {offset:+})",
                    hi + 1,
                    hunk.header(),
                    placed.start as i64 - self.growth + 1
                ));
            }
            self.drift = offset;
        }
        self.splice(hi, hunk, placed.start, old.len());
        Ok(())
    }

    /// Replace the `old_len` lines at `start` with the hunk's new side.
    fn splice(&mut self, hi: usize, hunk: &Hunk, start: usize, old_len: usize) {
        let end = start + old_len;
        let reaches_eof = end == self.lines.len();
        // Context lines keep the file's own bytes.
        let mut new_region = Vec::with_capacity(hunk.new_len);
        let mut k = start;
        for l in &hunk.lines {
            match l.kind {
                LineKind::Context => {
                    new_region.push(self.lines[k].clone());
                    k += 1;
                }
                LineKind::Remove => k += 1,
                LineKind::Add => new_region.push(Cow::Owned(l.text.clone())),
            }
        }
        let new_len = new_region.len();
        self.lines.splice(start..end, new_region);
        if reaches_eof && (hunk.old_no_newline || hunk.new_no_newline) {
            if hunk.old_no_newline == self.final_newline {
                self.warnings.push(format!(
                    "hunk {} of {}: the patch and the file disagree about the final line break",
                    hi + 1,
                    self.total
                ));
            }
            self.final_newline = !hunk.new_no_newline;
        }
        self.cursor = start + new_len;
        self.growth += new_len as i64 - old_len as i64;
    }
}

/// Where a hunk may go.
struct Position {
    /// Hunks may not overlap or go backwards: the first line it may start at.
    cursor: usize,
    /// Where its numbers say it starts, in the file as edited so far.
    expected: Option<usize>,
    /// It must match at the file's start.
    at_start: bool,
    /// It must match at the file's end.
    at_end: bool,
}

struct Placed {
    start: usize,
    level: Level,
}

/// Where `hunk` (its old side `old`) goes in `lines`: at or after `cursor`, near `expected`
/// when the hunk has line numbers. When it is nowhere, the message quotes `original`, the
/// file on disk, so its line numbers are the ones an editor shows.
fn place(
    lines: &[Cow<'_, str>],
    original: &[&str],
    hunk: &Hunk,
    old: &[String],
    at: &Position,
) -> Result<Placed> {
    let (cursor, expected) = (at.cursor, at.expected);
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
            && (!at.at_start || start == 0)
            && (!at.at_end || start + old.len() == lines.len())
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
    Err(not_found(original, hunk, old, at))
}

fn not_found(lines: &[&str], hunk: &Hunk, old: &[String], at: &Position) -> Error {
    // `its 1 old line is`, `its 3 old lines are`.
    let lines_are = match old.len() {
        1 => "1 old line is".to_string(),
        n => format!("{n} old lines are"),
    };
    let mut message = match hunk.old_start {
        Some(_) if at.at_start => format!(
            "does not apply: a hunk at line 1 must match at the start of the file (as with \
             `git apply`), and its {lines_are} not there."
        ),
        Some(_) if at.at_end => format!(
            "does not apply: a hunk with no context after its change must match at the end of \
             the file (as with `git apply`), and its {lines_are} not there."
        ),
        Some(s) => format!(
            "does not apply: its {lines_are} not at line {s} nor within {MAX_OFFSET} lines of it."
        ),
        None => format!("does not apply: its {lines_are} not in the file."),
    };
    if let Some((start, end)) = matching::closest_region(lines, old) {
        message.push_str(&format!(
            "\nNearest candidate, lines {}-{}:\n{}",
            start + 1,
            end,
            matching::quote_lines(lines, start, end, 15)
        ));
        if let Some((k, f)) = matching::first_difference(lines, start, old) {
            let file_line = lines.get(f).copied().unwrap_or("<end of file>");
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

    /// A file of `n` lines `l1` … `ln`.
    fn numbered(n: usize) -> String {
        (1..=n).map(|i| format!("l{i}\n")).collect()
    }

    #[test]
    fn a_failing_hunk_after_a_growing_one_names_the_lines_on_disk() {
        // Hunk 1 adds a line above; hunk 2's target, `l17`, is line 17 on disk (18 in the
        // file as hunk 1 left it, which is what the message used to say).
        let diff =
            "@@ -2,2 +2,3 @@\n l2\n+new\n l3\n@@ -16,3 +17,3 @@\n l16\n-l17 WRONG\n+L17\n l18\n";
        let e = merge(&numbered(30), diff).unwrap_err();
        assert!(e.message.contains("hunk 2 of 2"), "{}", e.message);
        assert!(
            e.message.contains("Nearest candidate, lines 16-18:"),
            "{}",
            e.message
        );
        assert!(e.message.contains("   17| l17\n"), "{}", e.message);
        assert!(
            e.message.contains("where line 17 has `l17`"),
            "{}",
            e.message
        );
        // The first line of the message is a sentence of its own.
        assert!(
            e.message
                .lines()
                .next()
                .unwrap()
                .ends_with("within 1000 lines of it."),
            "{}",
            e.message
        );
    }

    #[test]
    fn an_offset_hunk_after_a_growing_one_names_the_line_on_disk() {
        // `l20` is line 20 on disk; the patch says 18.
        let diff = "@@ -2,2 +2,3 @@\n l2\n+new\n l3\n@@ -17,3 +18,3 @@\n l19\n-l20\n+L20\n l21\n";
        let m = merge(&numbered(30), diff).unwrap();
        assert!(
            m.warnings
                .iter()
                .any(|w| w.contains("applied at line 19 (offset +2)")),
            "{:?}",
            m.warnings
        );
    }

    #[test]
    fn only_the_first_failing_hunks_are_searched_for_and_an_agents_diff_stops_at_one() {
        // Finding the nearest candidate reads the whole file: twelve failing hunks get it for
        // the first NEAREST_NAMED only, and the all-or-nothing path stops at the first.
        let diff: String = (0..12)
            .map(|k| format!("@@ -{n},1 +{n},1 @@\n-l{n} WRONG\n+L{n}\n", n = 10 * k + 5))
            .collect();
        let fp = parse_single(&diff).unwrap();
        let p = apply_hunks_rejecting(&numbered(130), &fp.hunks, true);
        assert_eq!(p.rejected.len(), 12);
        let named = |r: &Rejected| r.error.message.contains("Nearest candidate");
        assert!(p.rejected[..NEAREST_NAMED].iter().all(named));
        assert!(!p.rejected[NEAREST_NAMED..].iter().any(named));
        let e = apply_hunks(&numbered(130), &fp.hunks).unwrap_err();
        assert!(e.message.starts_with("hunk 1 of 12"), "{}", e.message);
    }

    #[test]
    fn rejecting_leaves_out_only_the_hunks_that_do_not_apply() {
        let diff = "@@ -2,2 +2,3 @@\n l2\n+new\n l3\n@@ -10,2 +11,2 @@\n-l10 WRONG\n+L10\n l11\n\
            @@ -20,2 +21,2 @@\n-l20\n+L20\n l21\n";
        let fp = parse_single(diff).unwrap();
        let p = apply_hunks_rejecting(&numbered(22), &fp.hunks, true);
        assert_eq!(p.merged.applied, 2);
        assert_eq!(p.rejected.len(), 1);
        assert_eq!(p.rejected[0].index, 1);
        assert_eq!(p.rejected[0].error.code, ErrorCode::NoMatch);
        assert!(
            p.rejected[0]
                .error
                .message
                .starts_with("hunk 2 of 3 `@@ -10,2 +11,2 @@`"),
            "{}",
            p.rejected[0].error.message
        );
        let expected = numbered(22)
            .replace("l2\n", "l2\nnew\n")
            .replace("l20\n", "L20\n");
        assert_eq!(p.merged.content, expected);
        assert!(p.merged.warnings.is_empty(), "{:?}", p.merged.warnings);
        // All or nothing still says why the first one failed.
        let e = apply_hunks(&numbered(22), &fp.hunks).unwrap_err();
        assert_eq!(e.message, p.rejected[0].error.message);
    }

    #[test]
    fn hunks_cut_by_the_files_edges_stay_there_as_with_git() {
        // Line 1 of the patch is line 2 of the file now: git will not move the hunk down.
        let at_start = parse_single("@@ -1,3 +1,3 @@\n-l1\n+L1\n l2\n l3\n").unwrap();
        let moved = format!("header\n{}", numbered(6));
        let p = apply_hunks_rejecting(&moved, &at_start.hunks, true);
        assert_eq!(p.rejected.len(), 1, "{:?}", p.merged);
        let why = &p.rejected[0].error.message;
        assert!(why.contains("must match at the start of the file"), "{why}");
        assert!(why.contains("Nearest candidate, lines 2-4:"), "{why}");
        // An agent's diff (rough numbers) is found where it is.
        assert_eq!(
            apply_hunks(&moved, &at_start.hunks).unwrap().content,
            moved.replace("l1\n", "L1\n")
        );
        // No context after the change: the end of the file, for git.
        let at_end = parse_single("@@ -4,3 +4,3 @@\n l4\n l5\n-l6\n+L6\n").unwrap();
        let longer = format!("{}trailer\n", numbered(6));
        let p = apply_hunks_rejecting(&longer, &at_end.hunks, true);
        assert_eq!(p.rejected.len(), 1, "{:?}", p.merged);
        assert!(
            p.rejected[0]
                .error
                .message
                .contains("must match at the end of the file"),
            "{}",
            p.rejected[0].error.message
        );
        assert!(apply_hunks(&longer, &at_end.hunks).is_ok());
        // Where the edges are the file's, both apply.
        let p = apply_hunks_rejecting(&numbered(6), &at_start.hunks, true);
        assert!(p.rejected.is_empty());
        let p = apply_hunks_rejecting(&numbered(6), &at_end.hunks, true);
        assert_eq!(p.merged.content, numbered(6).replace("l6\n", "L6\n"));
    }

    #[test]
    fn a_hunk_keeps_its_text_as_the_patch_wrote_it() {
        let diff = "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@ fn main\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n@@ -9 +9 @@\n-x\n+y\n";
        let fp = parse_single(diff).unwrap();
        assert_eq!(
            fp.hunks[0].patch_text(),
            "@@ -1,2 +1,2 @@ fn main\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"
        );
        assert_eq!(fp.hunks[1].patch_text(), "@@ -9 +9 @@\n-x\n+y\n");
        // Reversed, it is still the patch's own text (as `git apply -R --reject` writes it).
        assert_eq!(fp.reversed().hunks[1].patch_text(), "@@ -9 +9 @@\n-x\n+y\n");
        // A hunk with no text of its own (a Codex patch's) is written out.
        let mut h = fp.hunks[0].clone();
        h.raw.clear();
        assert_eq!(h.patch_text(), fp.hunks[0].raw);
        h.old_start = None;
        h.section.clear();
        h.anchors = vec!["def f():".into()];
        assert!(
            h.patch_text().starts_with("@@ def f():\n a\n"),
            "{}",
            h.patch_text()
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
