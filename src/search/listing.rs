//! The walk of a root, and its record: what the walk saw (every directory and file with its
//! stamps, and the stamps of every ignore file that shaped it), so that a later query can
//! tell by stats alone, without listing a directory or reading an ignore file, whether a walk
//! now would see the same files ([`Listing::replay`]).
//!
//! Why stats suffice: a file added, removed or renamed changes its directory's stamp; a file
//! changed changes its own; an ignore rule changed changes its file's stamp (or, for one
//! added or removed in a walked directory, the directory's). The stamp is the status-change
//! time on Unix (set by the kernel on every change, never by `touch`), with the modification
//! time and size. A stamp too close to the walk's start (a change in the same clock tick
//! could leave it as it was) is not trusted: the record is then unsettled, and a query walks.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use serde::{Deserialize, Serialize};

use crate::workspace::fs;
use crate::workspace::secrets::is_secret;

/// A stamp this close before the walk's start is not trusted, on a file system that keeps
/// sub-second times (the kernel's clock for file times lags by a tick, 10 ms at most).
const FINE_MARGIN_NS: i64 = 50_000_000;
/// The same, on one that keeps whole seconds or two (a stamp with no sub-second part).
const COARSE_MARGIN_NS: i64 = 2_000_000_000;
/// The files in a directory whose stamps decide what the walk ignores there (`.git`: its
/// excludes).
const IGNORE_FILES: &[&str] = &[".gitignore", ".ignore", ".git"];
/// The most of a `.git` file or a `commondir` read for its first line.
const MAX_GIT_LINE_BYTES: u64 = 4096;

/// A file's or directory's stamps.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Stamp {
    /// Modification time, ns since the epoch.
    pub mtime_ns: i64,
    /// Status-change time, ns since the epoch.
    pub ctime_ns: i64,
    /// Size in bytes.
    pub size: u64,
}

/// Nanoseconds since the epoch of a time in seconds and nanoseconds.
fn ns(secs: i64, nsec: i64) -> i64 {
    secs.saturating_mul(1_000_000_000).saturating_add(nsec)
}

impl Stamp {
    fn of(meta: &std::fs::Metadata) -> Stamp {
        use std::os::unix::fs::MetadataExt;
        Stamp {
            mtime_ns: ns(meta.mtime(), meta.mtime_nsec()),
            ctime_ns: ns(meta.ctime(), meta.ctime_nsec()),
            size: meta.len(),
        }
    }

    // The field types differ from one architecture to another.
    #[allow(clippy::unnecessary_cast)]
    fn of_stat(st: &rustix::fs::Stat) -> Stamp {
        Stamp {
            mtime_ns: ns(st.st_mtime as i64, st.st_mtime_nsec as i64),
            ctime_ns: ns(st.st_ctime as i64, st.st_ctime_nsec as i64),
            size: u64::try_from(st.st_size).unwrap_or(u64::MAX),
        }
    }

    /// Whether a change after `start` could have left this stamp as it is. A modification
    /// time after `start` is not the file's latest change but one set by hand (`touch -d`):
    /// the status-change time, which only the kernel sets (to now, on every change, setting
    /// the modification time included), then judges alone.
    fn is_racy(&self, start: i64) -> bool {
        let latest = if self.mtime_ns > start {
            self.ctime_ns
        } else {
            self.mtime_ns.max(self.ctime_ns)
        };
        let margin = if latest % 1_000_000_000 == 0 {
            COARSE_MARGIN_NS
        } else {
            FINE_MARGIN_NS
        };
        latest >= start.saturating_sub(margin)
    }
}

/// The stamps of `path` itself (a link is not followed), when it is there.
fn stamp_of(path: &Path) -> Option<Stamp> {
    std::fs::symlink_metadata(path).ok().map(|m| Stamp::of(&m))
}

/// A file the walk found: its root-relative path and stamps.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Found {
    /// Root-relative, `/`-separated.
    pub rel: String,
    /// Its stamps.
    pub stamp: Stamp,
}

/// A directory the walk listed, with the ignore files in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Dir {
    /// Root-relative, `/`-separated (the root is `""`).
    rel: String,
    stamp: Stamp,
    /// Its ignore files there ([`IGNORE_FILES`]), by name, with their stamps (one added or
    /// removed changes the directory's stamp).
    ignores: Vec<(String, Stamp)>,
}

/// What a walk saw.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Listing {
    /// When the walk started, ns since the epoch.
    started_ns: i64,
    /// Every directory walked.
    dirs: Vec<Dir>,
    /// Every file the walk gave (hidden files, links, secrets and temporary files left out),
    /// sorted by path.
    files: Vec<Found>,
    /// The other files that shaped the walk, by absolute path, with their stamps (`None`:
    /// not there): the ignore files above the root, git's excludes of every checkout met,
    /// git's global configs and default excludes file.
    others: Vec<(String, Option<Stamp>)>,
    /// The global excludes file git's configs named when the walk was done.
    excludes: Option<(String, Option<Stamp>)>,
}

fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
}

/// `rel` as a root-relative `/`-separated path.
fn rel_of(root: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?;
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    Some(parts.join("/"))
}

/// `root` joined with a root-relative path.
fn under(root: &Path, rel: &str) -> PathBuf {
    if rel.is_empty() {
        root.to_path_buf()
    } else {
        root.join(rel)
    }
}

/// Whether a root-relative directory path is one the walk can list: plain (no empty, `.` or
/// `..` component) and below the root, with no hidden component.
fn lists(rel: &str) -> bool {
    rel.split('/')
        .all(|c| !c.is_empty() && c != ".." && !c.starts_with('.'))
}

/// Whether a root-relative file path is one the walk can give: listed ([`lists`]), and
/// neither a secret nor a temporary file. A record naming any other (a forged one) is refused.
fn gives(rel: &str) -> bool {
    lists(rel) && !fs::is_temp_name(rel) && !is_secret(rel)
}

/// Walk `root` with the `ignore` crate (`.gitignore`, `.ignore` and git's excludes hold even
/// outside a git checkout; hidden files and links are not followed): its record.
pub(crate) fn walk(root: &Path) -> Listing {
    let started_ns = now_ns();
    let mut listing = Listing {
        started_ns,
        ..Listing::default()
    };
    let walker = ignore::WalkBuilder::new(root)
        .hidden(true)
        .follow_links(false)
        .require_git(false)
        .build();
    for entry in walker.flatten() {
        let Some(rel) = rel_of(root, entry.path()) else {
            continue;
        };
        let Some(kind) = entry.file_type() else {
            continue;
        };
        let Ok(meta) = entry.metadata() else { continue };
        let stamp = Stamp::of(&meta);
        if kind.is_dir() {
            let dir = under(root, &rel);
            let ignores = IGNORE_FILES
                .iter()
                .filter_map(|n| Some((n.to_string(), stamp_of(&dir.join(n))?)))
                .collect();
            listing.dirs.push(Dir {
                rel,
                stamp,
                ignores,
            });
        } else if kind.is_file() && gives(&rel) {
            listing.files.push(Found { rel, stamp });
        }
    }
    listing.files.sort_by(|a, b| a.rel.cmp(&b.rel));
    listing.others = others(root, &listing.dirs);
    listing.excludes = ignore::gitignore::gitconfig_excludes_path().map(|p| {
        let stamp = stamp_of(&p);
        (p.to_string_lossy().into_owned(), stamp)
    });
    listing
}

/// The files other than a walked directory's own ignore files that shape a walk of `root`
/// (see [`Listing::others`]).
fn others(root: &Path, dirs: &[Dir]) -> Vec<(String, Option<Stamp>)> {
    let mut out = Vec::new();
    let mut add = |path: PathBuf| {
        let stamp = stamp_of(&path);
        out.push((path.to_string_lossy().into_owned(), stamp));
    };
    let absolute = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    for dir in absolute.ancestors().skip(1) {
        for name in IGNORE_FILES {
            add(dir.join(name));
        }
        git_excludes(dir, &mut add);
    }
    for d in dirs
        .iter()
        .filter(|d| d.ignores.iter().any(|(n, _)| n == ".git"))
    {
        git_excludes(&under(root, &d.rel), &mut add);
    }
    for p in global_files() {
        add(p);
    }
    out
}

/// The files that decide git's excludes of the checkout at `dir`, when `.git` is there: its
/// `info/exclude`, or for a linked checkout (`.git` a file naming its git directory) that
/// directory's `commondir` and the common directory's `info/exclude`.
fn git_excludes(dir: &Path, add: &mut dyn FnMut(PathBuf)) {
    let dot_git = dir.join(".git");
    if std::fs::metadata(&dot_git).is_ok_and(|m| m.is_dir()) {
        add(dot_git.join("info/exclude"));
        return;
    }
    let Some(text) = first_line(&dot_git) else {
        return;
    };
    let Some(git_dir) = text.strip_prefix("gitdir: ") else {
        return;
    };
    let git_dir = PathBuf::from(git_dir);
    add(git_dir.join("commondir"));
    if let Some(line) = first_line(&git_dir.join("commondir")) {
        let common = if line.starts_with('.') {
            git_dir.join(line)
        } else {
            PathBuf::from(line)
        };
        add(common.join("info/exclude"));
    }
}

/// The first line of `path` when it is a regular file (a link followed), read through a
/// bounded reader: a FIFO or device (opened without blocking, then refused) or a huge file
/// is never read through.
fn first_line(path: &Path) -> Option<String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    if !std::fs::metadata(path).ok()?.is_file() {
        return None;
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut head = Vec::new();
    file.take(MAX_GIT_LINE_BYTES).read_to_end(&mut head).ok()?;
    let text = String::from_utf8_lossy(&head);
    text.lines().next().map(str::to_owned)
}

/// Git's global configs (which may name an excludes file) and its default excludes file.
fn global_files() -> Vec<PathBuf> {
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let home = env("HOME");
    let xdg = env("XDG_CONFIG_HOME").or_else(|| home.as_ref().map(|h| h.join(".config")));
    let mut out = Vec::new();
    out.extend(env("GIT_CONFIG_GLOBAL"));
    out.extend(home.map(|h| h.join(".gitconfig")));
    if let Some(git) = xdg.map(|x| x.join("git")) {
        out.extend([git.join("config"), git.join("ignore")]);
    }
    out.push(env("GIT_CONFIG_SYSTEM").unwrap_or_else(|| PathBuf::from("/etc/gitconfig")));
    out
}

/// A directory opened to stat its entries by name (no link followed, `root`-relative
/// `rel`), with its own stamps.
fn open_dir(root: &Path, rel: &str) -> Option<(rustix::fd::OwnedFd, Stamp)> {
    use rustix::fs::{Mode, OFlags};
    let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = rustix::fs::open(under(root, rel), flags, Mode::empty()).ok()?;
    let stamp = Stamp::of_stat(&rustix::fs::fstat(&fd).ok()?);
    Some((fd, stamp))
}

/// Whether `name` in the directory `dir` has `stamp` (a link is not followed).
fn same_at(dir: &rustix::fd::OwnedFd, name: &str, stamp: &Stamp) -> bool {
    rustix::fs::statat(dir, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW)
        .is_ok_and(|st| Stamp::of_stat(&st) == *stamp)
}

/// Whether the directories `dirs` (the root first, each plain below it) still have their
/// stamps and ignore files, and each its files: `files(k)` gives the `k`th directory's
/// (name, stamp) pairs, `None` when the record cannot say (then it does not hold). Each
/// directory is opened once, its entries stated by name in it.
fn dirs_hold<'a, I>(root: &Path, dirs: &'a [Dir], mut files: impl FnMut(usize) -> Option<I>) -> bool
where
    I: Iterator<Item = (&'a str, &'a Stamp)>,
{
    // A walk records the root at least: an empty record is no walk's; and it records only
    // the paths it can list (a forged record could name any: out of the root, hidden).
    let root_first = dirs.first().is_some_and(|d| d.rel.is_empty());
    if !root_first || !dirs[1..].iter().all(|d| lists(&d.rel)) {
        return false;
    }
    dirs.iter().enumerate().all(|(k, d)| {
        let Some((fd, stamp)) = open_dir(root, &d.rel) else {
            return false;
        };
        let Some(files) = files(k) else { return false };
        let ignores = d.ignores.iter().map(|(n, s)| (n.as_str(), s));
        stamp == d.stamp && files.chain(ignores).all(|(n, s)| same_at(&fd, n, s))
    })
}

/// Whether the files beside the directories that shape a walk of `root` (see
/// [`Listing::others`]) are as recorded.
fn others_hold(
    root: &Path,
    dirs: &[Dir],
    recorded: &[(String, Option<Stamp>)],
    excludes: Option<&(String, Option<Stamp>)>,
) -> bool {
    let excludes_same =
        |(path, stamp): &(String, Option<Stamp>)| stamp_of(Path::new(path)) == *stamp;
    others(root, dirs) == recorded && excludes.is_none_or(excludes_same)
}

/// Whether no stamp of `stamps` (a record's, started at `started_ns`) came too close to its
/// walk to be trusted.
fn settled<'a>(
    started_ns: i64,
    files: impl Iterator<Item = &'a Stamp>,
    dirs: &[Dir],
    others: &[(String, Option<Stamp>)],
    excludes: Option<&(String, Option<Stamp>)>,
) -> bool {
    let racy = |s: &Stamp| s.is_racy(started_ns);
    let mut files = files;
    !files.any(racy)
        && !dirs
            .iter()
            .any(|d| racy(&d.stamp) || d.ignores.iter().any(|(_, s)| racy(s)))
        && !others
            .iter()
            .chain(excludes)
            .any(|(_, s)| s.as_ref().is_some_and(racy))
}

/// A path's directory and name (the root's files: `""`).
fn split(rel: &str) -> (&str, &str) {
    rel.rsplit_once('/').unwrap_or(("", rel))
}

impl Listing {
    /// The files the walk gave.
    pub(crate) fn files(&self) -> &[Found] {
        &self.files
    }

    /// Whether every stamp in it was taken long enough after the change it shows for a later
    /// change to alter it.
    pub(crate) fn is_settled(&self) -> bool {
        settled(
            self.started_ns,
            self.files.iter().map(|f| &f.stamp),
            &self.dirs,
            &self.others,
            self.excludes.as_ref(),
        )
    }

    /// Whether `other` saw the same directories, files and ignore files with the same stamps
    /// (when it started aside).
    pub(crate) fn same_as(&self, other: &Listing) -> bool {
        self.dirs == other.dirs
            && self.files == other.files
            && self.others == other.others
            && self.excludes == other.excludes
    }

    /// The files a walk of `root` would give now, found by stats alone: `None` when the record
    /// is unsettled or any stamp differs (a directory's, a file's or an ignore file's: the
    /// walk must then be done).
    pub(crate) fn replay(&self, root: &Path) -> Option<&[Found]> {
        if !self.files.iter().all(|f| gives(&f.rel)) || !self.is_settled() {
            return None;
        }
        let mut by_dir: HashMap<&str, Vec<(&str, &Stamp)>> = HashMap::new();
        for f in &self.files {
            let (dir, name) = split(&f.rel);
            by_dir.entry(dir).or_default().push((name, &f.stamp));
        }
        let dirs = &self.dirs;
        let held = dirs_hold(root, dirs, |k| {
            Some(
                by_dir
                    .remove(dirs[k].rel.as_str())
                    .unwrap_or_default()
                    .into_iter(),
            )
        });
        // A file in no recorded directory is no walk's.
        let unchanged = held
            && by_dir.is_empty()
            && others_hold(root, dirs, &self.others, self.excludes.as_ref());
        unchanged.then_some(self.files.as_slice())
    }

    /// The record as an index file keeps it ([`Saved`]): each file by the number `number`
    /// gives its path, grouped by directory. A file in no recorded directory (no walk's
    /// record has one) leaves a record that never replays.
    pub(crate) fn saved(&self, number: &dyn Fn(&str) -> u32) -> Saved {
        let at: HashMap<&str, usize> = self
            .dirs
            .iter()
            .enumerate()
            .map(|(k, d)| (d.rel.as_str(), k))
            .collect();
        let mut grouped: Vec<(usize, &Found)> = Vec::with_capacity(self.files.len());
        for f in &self.files {
            match at.get(split(&f.rel).0) {
                Some(&k) => grouped.push((k, f)),
                None => return Saved::default(),
            }
        }
        grouped.sort_by_key(|&(k, _)| k);
        let mut counts = vec![0u32; self.dirs.len()];
        for &(k, _) in &grouped {
            counts[k] += 1;
        }
        Saved {
            started_ns: self.started_ns,
            dirs: self.dirs.clone(),
            counts,
            files: grouped
                .into_iter()
                .map(|(_, f)| (number(&f.rel), f.stamp))
                .collect(),
            others: self.others.clone(),
            excludes: self.excludes.clone(),
        }
    }
}

/// A walk's record as an index file keeps it: its files by number into a table of paths the
/// index holds (its files' paths, then the others the walk gave), grouped by directory in
/// the order of the directories, so a query reads no path twice and groups nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Saved {
    started_ns: i64,
    dirs: Vec<Dir>,
    /// How many of the files lie in each directory, in the directories' order.
    counts: Vec<u32>,
    /// Each file: its path's number and its stamps.
    files: Vec<(u32, Stamp)>,
    others: Vec<(String, Option<Stamp>)>,
    excludes: Option<(String, Option<Stamp>)>,
}

impl Saved {
    /// The files, as (path number, stamps).
    pub(crate) fn files(&self) -> &[(u32, Stamp)] {
        &self.files
    }

    /// Whether each directory's count of files is right: as many as the directories, adding
    /// up to the files.
    fn counted(&self) -> bool {
        let sum = self
            .counts
            .iter()
            .try_fold(0usize, |n, &c| n.checked_add(c as usize));
        self.counts.len() == self.dirs.len() && sum == Some(self.files.len())
    }

    /// The record in memory, each path by its number through `path`; `None` when a number
    /// names no path.
    pub(crate) fn listing<'p>(&self, path: &dyn Fn(u32) -> Option<&'p str>) -> Option<Listing> {
        let mut files = self
            .files
            .iter()
            .map(|&(p, stamp)| {
                let rel = path(p)?.to_string();
                Some(Found { rel, stamp })
            })
            .collect::<Option<Vec<Found>>>()?;
        files.sort_by(|a, b| a.rel.cmp(&b.rel));
        Some(Listing {
            started_ns: self.started_ns,
            dirs: self.dirs.clone(),
            files,
            others: self.others.clone(),
            excludes: self.excludes.clone(),
        })
    }

    /// Whether a walk of `root` would give exactly these files now, by stats alone, as
    /// [`Listing::replay`] tells it (each path by its number through `path`): also `false`
    /// when a number names no path, or a file is grouped under a directory not its own (its
    /// stat would check another file).
    pub(crate) fn replays<'p>(&self, root: &Path, path: &dyn Fn(u32) -> Option<&'p str>) -> bool {
        let stamps = self.files.iter().map(|(_, s)| s);
        if !self.counted()
            || !settled(
                self.started_ns,
                stamps,
                &self.dirs,
                &self.others,
                self.excludes.as_ref(),
            )
        {
            return false;
        }
        let mut files = self.files.iter();
        let dirs = &self.dirs;
        let held = dirs_hold(root, dirs, |k| {
            let mine = files.by_ref().take(self.counts[k] as usize);
            let named = mine.map(|(p, stamp)| {
                let rel = path(*p).filter(|rel| gives(rel))?;
                let (dir, name) = split(rel);
                (dir == dirs[k].rel).then_some((name, stamp))
            });
            named.collect::<Option<Vec<_>>>().map(Vec::into_iter)
        });
        held && others_hold(root, dirs, &self.others, self.excludes.as_ref())
    }
}

/// Forged records, every stamp true, for the tests.
#[cfg(test)]
impl Saved {
    /// The directory the `i`th file is grouped under.
    fn dir_of(&self, i: usize) -> usize {
        let mut seen = 0;
        self.counts
            .iter()
            .position(|&c| {
                seen += c as usize;
                i < seen
            })
            .unwrap()
    }

    /// The file numbered `from` grouped with the file numbered `to`, with its stamps: its
    /// stat checks the other file.
    pub(crate) fn pose_as(&mut self, from: u32, to: u32) {
        let i = self.files.iter().position(|f| f.0 == from).unwrap();
        let d = self.dir_of(i);
        self.counts[d] -= 1;
        self.files.remove(i);
        let j = self.files.iter().position(|f| f.0 == to).unwrap();
        let e = self.dir_of(j);
        self.counts[e] += 1;
        self.files.insert(j + 1, (from, self.files[j].1));
    }

    /// The stamps of the file numbered `p`.
    pub(crate) fn stamp(&self, p: u32) -> Stamp {
        self.files.iter().find(|f| f.0 == p).unwrap().1
    }

    /// The record without the file numbered `p`.
    pub(crate) fn drop_file(&mut self, p: u32) {
        let i = self.files.iter().position(|f| f.0 == p).unwrap();
        let d = self.dir_of(i);
        self.counts[d] -= 1;
        self.files.remove(i);
    }

    /// The record naming the file numbered `p` twice, the second time in place of the file
    /// numbered `instead` (of the same directory).
    pub(crate) fn twice(&mut self, p: u32, instead: u32) {
        let f = *self.files.iter().find(|f| f.0 == p).unwrap();
        let i = self.files.iter().position(|f| f.0 == instead).unwrap();
        self.files[i] = f;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Past the fine margin, with room: a record made after it is settled.
    const SETTLE: std::time::Duration = std::time::Duration::from_millis(120);

    fn write(dir: &Path, rel: &str, text: &str) {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    /// A root with files in two levels, walked once its stamps are settled.
    fn settled() -> (tempfile::TempDir, Listing) {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        write(d, ".gitignore", "build/\n");
        write(d, "a.rs", "fn a() {}\n");
        write(d, "src/b.rs", "fn b() {}\n");
        write(d, "build/out.rs", "fn out() {}\n");
        std::thread::sleep(SETTLE);
        let listing = walk(d);
        assert!(listing.is_settled());
        (dir, listing)
    }

    /// A change made to a root, named.
    type Change<'a> = (&'a str, &'a dyn Fn(&Path));

    fn rels(files: &[Found]) -> Vec<&str> {
        files.iter().map(|f| f.rel.as_str()).collect()
    }

    #[test]
    fn an_unchanged_root_replays_as_its_walk() {
        let (dir, listing) = settled();
        let replayed = listing.replay(dir.path()).expect("nothing changed");
        assert_eq!(rels(replayed), ["a.rs", "src/b.rs"]);
        assert_eq!(replayed, walk(dir.path()).files());
    }

    #[test]
    fn a_file_added_changed_or_removed_is_seen() {
        let changes: [Change; 6] = [
            ("added beside", &|d| write(d, "c.rs", "fn c() {}\n")),
            ("added below", &|d| write(d, "src/c.rs", "fn c() {}\n")),
            ("added in a new directory", &|d| {
                write(d, "src/x/y/c.rs", "")
            }),
            ("changed, same size", &|d| {
                write(d, "src/b.rs", "fn z() {}\n")
            }),
            ("removed", &|d| {
                std::fs::remove_file(d.join("src/b.rs")).unwrap()
            }),
            ("renamed", &|d| {
                std::fs::rename(d.join("src/b.rs"), d.join("src/c.rs")).unwrap()
            }),
        ];
        for (what, change) in changes {
            let (dir, listing) = settled();
            change(dir.path());
            assert!(listing.replay(dir.path()).is_none(), "{what}");
        }
    }

    #[test]
    fn an_ignore_file_changed_here_or_above_is_seen() {
        let changes: [Change; 4] = [
            ("edited", &|d| write(d, ".gitignore", "built/\n")),
            ("added below", &|d| write(d, "src/.gitignore", "b.rs\n")),
            ("added above", &|d| {
                write(d.parent().unwrap(), ".ignore", "*.rs\n")
            }),
            ("git's excludes", &|d| {
                write(d, ".git/info/exclude", "a.rs\n")
            }),
        ];
        for (what, change) in changes {
            let outer = tempfile::tempdir().unwrap();
            let d = outer.path().join("root");
            write(&d, ".gitignore", "build/\n");
            write(&d, "a.rs", "fn a() {}\n");
            write(&d, "src/b.rs", "fn b() {}\n");
            std::fs::create_dir_all(d.join(".git/info")).unwrap();
            std::thread::sleep(SETTLE);
            let listing = walk(&d);
            assert!(listing.replay(&d).is_some(), "{what}: unchanged");
            change(&d);
            assert!(listing.replay(&d).is_none(), "{what}");
        }
    }

    #[test]
    fn a_record_made_just_after_a_change_is_not_trusted() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "a.rs", "fn a() {}\n");
        let listing = walk(dir.path());
        assert!(!listing.is_settled());
        assert!(listing.replay(dir.path()).is_none());
        assert!(Listing::default().replay(dir.path()).is_none(), "no walk's");
    }

    /// A forged record naming the root's parent and the root again through it, or a file the
    /// walk never gives (a secret, a hidden file, one in a hidden directory), every stamp true:
    /// it would replay (the stats all match) but for the check of its paths.
    #[test]
    fn a_record_naming_paths_out_of_the_root_is_refused() {
        let outer = tempfile::tempdir().unwrap();
        let root = outer.path().join("root");
        write(&root, "a.rs", "fn a() {}\n");
        write(&root, ".env", "KEY=secret\n");
        write(&root, "id_rsa", "PRIVATE KEY\n");
        write(&root, ".hidden/x", "hidden\n");
        std::thread::sleep(SETTLE);
        let listing = walk(&root);
        assert_eq!(rels(listing.replay(&root).expect("unchanged")), ["a.rs"]);
        let dir = |rel: &str, path: &Path| Dir {
            rel: rel.into(),
            stamp: stamp_of(path).unwrap(),
            ignores: Vec::new(),
        };
        let file = |rel: &str| Found {
            rel: rel.into(),
            stamp: stamp_of(&root.join(rel)).unwrap(),
        };
        let mut out = listing.clone();
        out.dirs.push(dir("..", outer.path()));
        out.dirs.push(dir("../root", &root));
        out.files.push(file("../root/a.rs"));
        let mut hidden_below = listing.clone();
        hidden_below
            .dirs
            .push(dir(".hidden", &root.join(".hidden")));
        hidden_below.files.push(file(".hidden/x"));
        let forged = [
            ("out of the root", out),
            (
                ".env",
                Listing {
                    files: vec![file(".env"), file("a.rs")],
                    ..listing.clone()
                },
            ),
            (
                "id_rsa",
                Listing {
                    files: vec![file("a.rs"), file("id_rsa")],
                    ..listing.clone()
                },
            ),
            (".hidden/x", hidden_below),
        ];
        let replayed: Vec<&str> = forged
            .iter()
            .filter(|(_, f)| f.replay(&root).is_some())
            .map(|(what, _)| *what)
            .collect();
        assert!(replayed.is_empty(), "replayed: {replayed:?}");
    }

    /// A `.git` at `at` that is a FIFO or a link to an endless device.
    fn endless_git(at: &Path, fifo: bool) {
        let git = at.join(".git");
        if fifo {
            let made = std::process::Command::new("mkfifo").arg(&git).status();
            assert!(made.unwrap().success());
        } else {
            std::os::unix::fs::symlink("/dev/zero", &git).unwrap();
        }
    }

    /// A `.git` that is a FIFO or a link to `/dev/zero`, in the tree or above the root: the
    /// walk and the replay answer promptly (the work runs aside, and must end within
    /// [`PROMPT`]).
    #[test]
    fn a_git_that_is_a_fifo_or_a_device_is_not_read() {
        const PROMPT: std::time::Duration = std::time::Duration::from_secs(10);
        for fifo in [true, false] {
            for above in [false, true] {
                let outer = tempfile::tempdir().unwrap();
                let root = outer.path().join("root");
                write(&root, "a.rs", "fn a() {}\n");
                std::fs::create_dir_all(root.join("sub")).unwrap();
                endless_git(
                    &if above {
                        outer.path().to_path_buf()
                    } else {
                        root.join("sub")
                    },
                    fifo,
                );
                let (tx, rx) = std::sync::mpsc::channel();
                let aside = root.clone();
                std::thread::spawn(move || {
                    std::thread::sleep(SETTLE);
                    let listing = walk(&aside);
                    let replayed = listing.replay(&aside).is_some();
                    let _ = tx.send((rels(listing.files()).join(","), replayed));
                });
                let what = format!("fifo {fifo}, above the root {above}");
                let (files, replayed) = rx.recv_timeout(PROMPT).expect(&what);
                assert_eq!(files, "a.rs", "{what}");
                assert!(replayed, "{what}");
            }
        }
    }

    /// A file whose modification time was set in the future (`touch -d 2030`) lets the record
    /// settle; a change to it at the same size, that time set back, is still seen.
    #[test]
    fn a_modification_time_in_the_future_does_not_unsettle_the_record() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        write(d, "a.rs", "fn a() {}\n");
        let future = UNIX_EPOCH + std::time::Duration::from_secs(1_900_000_000);
        let set_future = || {
            let file = std::fs::File::options().write(true).open(d.join("a.rs"));
            file.unwrap().set_modified(future).unwrap();
        };
        set_future();
        std::thread::sleep(SETTLE);
        let listing = walk(d);
        assert!(listing.is_settled());
        assert!(listing.replay(d).is_some(), "unchanged");
        write(d, "a.rs", "fn z() {}\n");
        set_future();
        assert!(
            listing.replay(d).is_none(),
            "changed at the same size and time"
        );
    }

    #[test]
    fn a_stamp_is_racy_within_its_file_systems_margin() {
        let start = 10_000_000_000_000;
        let fine = |ns| Stamp {
            mtime_ns: 0,
            ctime_ns: ns,
            size: 1,
        };
        assert!(fine(start - FINE_MARGIN_NS + 1).is_racy(start));
        assert!(!fine(start - FINE_MARGIN_NS - 1).is_racy(start));
        // Whole seconds: the file system may keep no finer time.
        let coarse = fine(start - 1_000_000_000);
        assert!(coarse.is_racy(start));
        assert!(!fine(start - 3_000_000_000).is_racy(start));
        // A modification time set in the future: the status-change time judges.
        let future = Stamp {
            mtime_ns: start + 1_000_000_000_000,
            ..fine(start - FINE_MARGIN_NS - 1)
        };
        assert!(!future.is_racy(start));
        assert!(
            Stamp {
                ctime_ns: start,
                ..future
            }
            .is_racy(start)
        );
    }
}
