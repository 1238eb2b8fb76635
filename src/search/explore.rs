//! The read-only tools the search model explores with: `view_file`, `grep`, `glob` and
//! `list_dir`. They see only the files the index sees (under the root, not ignored, not
//! denied); a path outside the root or refused by a rule is an error the model reads. Every
//! answer is bounded (lines, matches, bytes), so a model cannot flood its own context.

use std::sync::Arc;

use globset::GlobBuilder;

use super::store::MAX_FILE_BYTES;
use crate::error::{Error, ErrorCode, Result};
use crate::workspace::fs;
use crate::workspace::paths::Root;

/// The most lines one `view_file` shows.
pub const MAX_VIEW_LINES: usize = 400;
/// The most matching lines one `grep` lists.
pub const MAX_GREP_MATCHES: usize = 100;
/// The most paths one `glob` or `list_dir` lists.
pub const MAX_LISTED: usize = 300;
/// The longest line shown in a `grep` answer, in characters.
const MAX_LINE_CHARS: usize = 200;
/// The longest line shown by `view_file`, in characters (minified files have huge lines).
const MAX_VIEW_LINE_CHARS: usize = 1000;

/// Which paths a search may see.
pub type Keep = Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// The exploration tools over one root's searchable files.
#[derive(Clone)]
pub struct Explorer {
    root: Root,
    /// The searchable files (root-relative, sorted).
    files: Arc<Vec<String>>,
    keep: Keep,
    /// When a grep stops looking (between files): a search whose deadline passed does not
    /// leave one running on a blocking thread.
    stop_at: Option<std::time::Instant>,
}

fn refused(message: String) -> Error {
    Error::new(ErrorCode::InvalidPath, message)
}

impl Explorer {
    /// Tools over `files` (root-relative) under `root`.
    pub fn new(root: Root, mut files: Vec<String>, keep: Keep) -> Explorer {
        files.sort();
        Explorer {
            root,
            files: Arc::new(files),
            keep,
            stop_at: None,
        }
    }

    /// The same tools, whose greps stop looking at `t`.
    pub fn until(mut self, t: std::time::Instant) -> Explorer {
        self.stop_at = Some(t);
        self
    }

    /// A searchable file's root-relative path, or why not: outside the root, denied by a
    /// rule, or not searchable (missing, ignored by `.gitignore`, hidden, binary, too large).
    pub fn resolve(&self, path: &str) -> Result<String> {
        let safe = self.root.resolve(path)?;
        if !(self.keep)(&safe.rel) {
            return Err(Error::new(
                ErrorCode::DeniedByRule,
                format!("`{}` may not be read: a rule denies it", safe.rel),
            ));
        }
        if self.files.binary_search(&safe.rel).is_err() {
            return Err(refused(format!(
                "`{}` is not a searchable file (missing, ignored, hidden, binary or over 1 MB)",
                safe.rel
            )));
        }
        Ok(safe.rel)
    }

    /// A directory's root-relative path ("" for the root), checked lexically: it only
    /// filters the searchable files, so nothing outside them is ever read.
    fn dir_rel(&self, path: &str) -> Result<String> {
        let p = path.trim().replace('\\', "/");
        let rel = match std::path::Path::new(&p).strip_prefix(self.root.path()) {
            Ok(inside) => inside.to_string_lossy().into_owned(),
            Err(_) if p.starts_with('/') || p.starts_with('~') => {
                return Err(refused(format!("`{path}` is outside the root")));
            }
            Err(_) => p,
        };
        let mut parts = Vec::new();
        for part in rel.split('/') {
            match part {
                "" | "." => {}
                ".." => return Err(refused(format!("`{path}` is outside the root"))),
                other => parts.push(other),
            }
        }
        Ok(parts.join("/"))
    }

    fn text(&self, rel: &str) -> Result<String> {
        let safe = self.root.resolve(rel)?;
        let bytes = fs::read(&safe, MAX_FILE_BYTES)?
            .ok_or_else(|| refused(format!("`{rel}` does not exist")))?;
        if memchr::memchr(0, &bytes[..bytes.len().min(8192)]).is_some() {
            return Err(refused(format!("`{rel}` is a binary file")));
        }
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// Lines `start..=end` (1-based) of a file, numbered; at most [`MAX_VIEW_LINES`].
    pub fn view_file(&self, path: &str, start: Option<u64>, end: Option<u64>) -> Result<String> {
        let rel = self.resolve(path)?;
        let text = self.text(&rel)?;
        let lines: Vec<&str> = text.lines().collect();
        let n = lines.len();
        let first = usize::try_from(start.unwrap_or(1).max(1)).unwrap_or(usize::MAX);
        if n > 0 && first > n {
            return Err(Error::invalid_input(format!(
                "`{rel}` has {n} lines; start_line {first} is past its end"
            )));
        }
        let wanted = end.map_or(first + 199, |e| usize::try_from(e).unwrap_or(usize::MAX));
        let last = wanted.max(first).min(n).min(first + MAX_VIEW_LINES - 1);
        let mut out = format!("{rel} (lines {first}-{last} of {n})\n");
        for (i, l) in lines.iter().enumerate().take(last).skip(first - 1) {
            let shown: String = l.chars().take(MAX_VIEW_LINE_CHARS).collect();
            let cut = if shown.len() < l.len() { " …" } else { "" };
            out.push_str(&format!("{:>5}  {shown}{cut}\n", i + 1));
        }
        if last < wanted.min(n) {
            out.push_str(&format!(
                "… cut at {MAX_VIEW_LINES} lines; ask for start_line {}\n",
                last + 1
            ));
        }
        Ok(out)
    }

    /// The searchable files a glob matches (`*` within a directory, `**` across).
    fn matching(&self, pattern: &str) -> Result<Vec<&str>> {
        let pattern = pattern.trim().trim_start_matches("./");
        let glob = GlobBuilder::new(pattern)
            .literal_separator(true)
            .build()
            .map_err(|e| Error::invalid_input(format!("bad glob `{pattern}`: {e}")))?
            .compile_matcher();
        let bare = !pattern.contains('/');
        Ok(self
            .files
            .iter()
            .map(String::as_str)
            .filter(|f| {
                glob.is_match(f) || (bare && glob.is_match(f.rsplit('/').next().unwrap_or(f)))
            })
            .collect())
    }

    /// Paths matching a glob (a pattern without `/` matches file names anywhere).
    pub fn glob(&self, pattern: &str) -> Result<String> {
        let found = self.matching(pattern)?;
        Ok(listing(&found, &format!("no file matches `{pattern}`")))
    }

    /// Lines matching a regular expression, as `path:line: text`, in files matching `within`
    /// (a glob, or a directory) when given.
    pub fn grep(&self, pattern: &str, within: Option<&str>, ignore_case: bool) -> Result<String> {
        let re = regex::RegexBuilder::new(pattern)
            .case_insensitive(ignore_case)
            .size_limit(1 << 20)
            .build()
            .map_err(|e| Error::invalid_input(format!("bad pattern `{pattern}`: {e}")))?;
        let files: Vec<&str> = match within.map(str::trim).filter(|w| !w.is_empty()) {
            None => self.files.iter().map(String::as_str).collect(),
            Some(w) if w.contains(['*', '?', '[', '{']) => self.matching(w)?,
            Some(w) => {
                let dir = self.dir_rel(w)?;
                let prefix = format!("{dir}/");
                self.files
                    .iter()
                    .map(String::as_str)
                    .filter(|f| *f == dir || f.starts_with(&prefix) || dir.is_empty())
                    .collect()
            }
        };
        let mut out = String::new();
        let mut count = 0;
        'files: for f in files {
            if self.stop_at.is_some_and(|t| std::time::Instant::now() >= t) {
                out.push_str("… stopped at the search's deadline before every file was read\n");
                break;
            }
            let Ok(text) = self.text(f) else { continue };
            for (i, line) in text.lines().enumerate() {
                if re.is_match(line) {
                    count += 1;
                    if count > MAX_GREP_MATCHES {
                        out.push_str(&format!(
                            "… more than {MAX_GREP_MATCHES} matches; narrow the pattern or the path\n"
                        ));
                        break 'files;
                    }
                    let shown: String = line.trim().chars().take(MAX_LINE_CHARS).collect();
                    out.push_str(&format!("{f}:{}: {shown}\n", i + 1));
                }
            }
        }
        if out.is_empty() {
            out = format!("no line matches `{pattern}`\n");
        }
        Ok(out)
    }

    /// The entries of a directory (files, and subdirectories with a trailing `/`).
    pub fn list_dir(&self, path: Option<&str>) -> Result<String> {
        let dir = match path {
            None => String::new(),
            Some(p) => self.dir_rel(p)?,
        };
        let prefix = if dir.is_empty() {
            String::new()
        } else {
            format!("{dir}/")
        };
        let mut entries: Vec<String> = Vec::new();
        for f in self.files.iter().filter(|f| f.starts_with(&prefix)) {
            let rest = &f[prefix.len()..];
            let entry = match rest.split_once('/') {
                Some((sub, _)) => format!("{prefix}{sub}/"),
                None => f.clone(),
            };
            if entries.last() != Some(&entry) {
                entries.push(entry);
            }
        }
        entries.dedup();
        let shown: Vec<&str> = entries.iter().map(String::as_str).collect();
        Ok(listing(
            &shown,
            &format!(
                "`{}` holds no searchable file",
                if dir.is_empty() { "." } else { &dir }
            ),
        ))
    }
}

fn listing(paths: &[&str], none: &str) -> String {
    if paths.is_empty() {
        return format!("{none}\n");
    }
    let mut out: String = paths
        .iter()
        .take(MAX_LISTED)
        .map(|p| format!("{p}\n"))
        .collect();
    if paths.len() > MAX_LISTED {
        out.push_str(&format!("… and {} more\n", paths.len() - MAX_LISTED));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn explorer() -> (tempfile::TempDir, Explorer) {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir_all(d.join("src/auth")).unwrap();
        std::fs::write(d.join("src/auth/login.py"), "def login():\n    check()\n").unwrap();
        std::fs::write(d.join("src/main.py"), "import auth\nLOGIN = 1\n").unwrap();
        std::fs::write(d.join("secret.py"), "KEY = 'x'\n").unwrap();
        let root = Root::new(d).unwrap();
        let files = vec!["src/auth/login.py".to_string(), "src/main.py".to_string()];
        let keep: Keep = Arc::new(|p: &str| p != "secret.py");
        (dir, Explorer::new(root, files, keep))
    }

    /// A grep whose search's deadline passed stops before the next file, and says so.
    #[test]
    fn a_grep_past_its_deadline_stops_between_files() {
        let (_d, x) = explorer();
        assert!(x.grep("login", None, true).unwrap().contains("src/main.py"));
        let late = x.until(std::time::Instant::now());
        let out = late.grep("login", None, true).unwrap();
        assert!(!out.contains("src/"), "{out}");
        assert!(out.contains("deadline"), "{out}");
    }

    #[test]
    fn tools_answer_within_the_root() {
        let (_d, x) = explorer();
        assert_eq!(
            x.view_file("src/auth/login.py", Some(2), None).unwrap(),
            "src/auth/login.py (lines 2-2 of 2)\n    2      check()\n"
        );
        assert_eq!(
            x.grep("(?i)login", None, false).unwrap(),
            "src/auth/login.py:1: def login():\nsrc/main.py:2: LOGIN = 1\n"
        );
        assert_eq!(
            x.grep("login", Some("src/auth"), false).unwrap(),
            "src/auth/login.py:1: def login():\n"
        );
        assert_eq!(x.glob("*.py").unwrap(), "src/auth/login.py\nsrc/main.py\n");
        assert_eq!(x.glob("src/*.py").unwrap(), "src/main.py\n");
        assert_eq!(x.list_dir(None).unwrap(), "src/\n");
        assert_eq!(x.list_dir(Some("src")).unwrap(), "src/auth/\nsrc/main.py\n");
    }

    #[test]
    fn outside_the_root_and_denied_files_are_refused() {
        let (_d, x) = explorer();
        let e = x.view_file("../etc/passwd", None, None).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidPath);
        let e = x.view_file("/etc/passwd", None, None).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidPath);
        let e = x.view_file("secret.py", None, None).unwrap_err();
        assert_eq!(e.code, ErrorCode::DeniedByRule);
        std::fs::write(x.root.path().join("ignored.py"), "X = 1\n").unwrap();
        let e = x.view_file("ignored.py", None, None).unwrap_err();
        assert!(e.message.contains("not a searchable file"), "{}", e.message);
        assert!(x.grep("KEY", None, false).unwrap().starts_with("no line"));
        assert!(x.list_dir(Some("../")).is_err());
        assert!(x.grep("(", None, false).is_err());
    }
}
