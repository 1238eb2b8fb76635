//! The index of one root, on disk: the files are walked with the `ignore` crate (so
//! `.gitignore`, `.ignore` and git's excludes hold, even outside a git checkout; hidden files
//! and symlinks are not followed), files over [`MAX_FILE_BYTES`] and binaries are skipped,
//! secrets (`.env*`, keys, credential stores, `.git`) are never indexed whatever the ignore
//! files whitelist, and only files whose modification time or size changed are read again.
//! The walk is recorded ([`listing`]): while its record still holds by stats alone, no walk
//! is done again. The index is kept in the state directory in the layout of [`disk`], written atomically, so a killed process
//! leaves the last whole index; a process answering one query reads a fresh one on demand
//! ([`Store::answer_saved`]).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::disk::{self, Lazy};
use super::index::Index;
use super::listing::{self, Listing};
use super::rank::{self, Hit};
use crate::error::Result;
use crate::workspace::fs;
use crate::workspace::io_error::io_error;
use crate::workspace::paths::Root;
use crate::workspace::state;

/// Files larger than this are not indexed.
pub const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// Bump when the index's format or analysis changes: an older file is rebuilt.
const FORMAT: u32 = 7;

/// A file the walk found.
#[derive(Debug, Clone)]
struct Found {
    rel: String,
    mtime_ns: i64,
    size: u64,
}

/// What the store keeps on disk (laid out by [`disk`]).
#[derive(Default)]
struct Saved {
    format: u32,
    root: PathBuf,
    index: Index,
    /// Files seen and not indexed (binary, unreadable), with their stamps, so they are not
    /// read again until they change.
    skipped: HashMap<String, (i64, u64)>,
    /// What the last walk saw, so a query can tell by stats alone that nothing changed.
    listing: Listing,
}

/// What a refresh did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Refresh {
    /// Files in the index after it.
    pub files: usize,
    /// Files read (new or changed).
    pub read: usize,
    /// Files dropped (gone, now ignored or denied).
    pub removed: usize,
    /// Time it took.
    pub elapsed: Duration,
}

/// Progress of a build: files done, files in all.
pub type Progress<'a> = &'a mut dyn FnMut(usize, usize);

/// The index of one root, kept up to date on demand.
pub struct Store {
    root: Root,
    file: Option<PathBuf>,
    saved: Saved,
    /// Whether the kept index was read (on the first refresh, off the async threads).
    loaded: bool,
}

/// Where the index of `root` is kept.
fn index_file(root: &Path) -> PathBuf {
    state::state_dir()
        .join("search")
        .join(format!("{}.index", state::root_key(root)))
}

/// Whether a search may see a file the walk gave (`keep`, and not over [`MAX_FILE_BYTES`]).
fn shows(keep: &dyn Fn(&str) -> bool, rel: &str, size: u64) -> bool {
    size <= MAX_FILE_BYTES && keep(rel)
}

/// The files of a walk's `listing` a search may see ([`shows`]), sorted by path.
fn visible(listing: &[listing::Found], keep: &dyn Fn(&str) -> bool) -> Vec<Found> {
    listing
        .iter()
        .filter(|f| shows(keep, &f.rel, f.stamp.size))
        .map(|f| Found {
            rel: f.rel.clone(),
            mtime_ns: f.stamp.mtime_ns,
            size: f.stamp.size,
        })
        .collect()
}

/// The files under `root` a search may see, sorted by path, and the walk's record.
fn walk(root: &Path, keep: &dyn Fn(&str) -> bool) -> (Vec<Found>, Listing) {
    let listing = listing::walk(root);
    (visible(listing.files(), keep), listing)
}

/// A file's text when it is text: no NUL byte in its first 8 KiB, decoded lossily.
fn text_of(bytes: &[u8]) -> Option<String> {
    let head = &bytes[..bytes.len().min(8192)];
    if memchr::memchr(0, head).is_some() {
        return None;
    }
    Some(String::from_utf8_lossy(bytes).into_owned())
}

/// The bytes kept on disk for `saved` (see [`disk`]: each block with its SHA-256, so a
/// damaged file, a flipped byte or a torn write, is noticed and rebuilt, never trusted).
fn encode(saved: &Saved) -> Vec<u8> {
    disk::encode(
        saved.format,
        &saved.root,
        &saved.index,
        &saved.skipped,
        &saved.listing,
    )
}

/// What [`encode`] wrote, when it is whole.
fn decode(bytes: &[u8]) -> Option<Saved> {
    let whole = disk::decode(bytes)?;
    Some(Saved {
        format: whole.format,
        root: whole.root,
        index: whole.index,
        skipped: whole.skipped,
        listing: whole.listing,
    })
}

fn load(file: &Path, root: &Path) -> Option<Saved> {
    let bytes = std::fs::read(file).ok()?;
    let mut saved = decode(&bytes)?;
    if saved.format != FORMAT || saved.root != root || !saved.index.is_whole() {
        return None;
    }
    saved.index.finish();
    Some(saved)
}

impl Store {
    /// The store of `root`, kept in the state directory; the kept index is read by the
    /// first refresh.
    pub fn open(root: &Root) -> Store {
        Store {
            file: Some(index_file(root.path())),
            loaded: false,
            ..Store::in_memory(root)
        }
    }

    /// A store that lives in memory only (for the corpus evaluation and tests).
    pub fn in_memory(root: &Root) -> Store {
        Store {
            root: root.clone(),
            file: None,
            saved: Saved {
                format: FORMAT,
                root: root.path().to_path_buf(),
                ..Saved::default()
            },
            loaded: true,
        }
    }

    /// The root.
    pub fn root(&self) -> &Root {
        &self.root
    }

    /// Whether the kept index was read (by a refresh; [`Store::answer_saved`] reads it on
    /// demand only).
    pub fn is_loaded(&self) -> bool {
        self.loaded
    }

    /// The index (as of the last refresh).
    pub fn index(&self) -> &Index {
        &self.saved.index
    }

    /// The hits for `query` straight from the saved index, read on demand, when this store
    /// has not read it yet and it is fresh: the walk it recorded still holds by stats alone
    /// (no directory, file or ignore file changed since) and its files `keep` allows are
    /// exactly the files the index holds, with their stamps; `None` when it must be read
    /// whole and brought up to date first (also when a block of it is damaged: the refresh
    /// then rebuilds it). With the number of files indexed.
    pub fn answer_saved(
        &mut self,
        keep: &dyn Fn(&str) -> bool,
        query: &str,
        limit: usize,
    ) -> Option<(Vec<Hit>, usize)> {
        if self.loaded {
            return None;
        }
        let file = self.file.as_deref()?;
        let lazy = Lazy::open(file, FORMAT, self.root.path())?;
        if !lazy.is_fresh(self.root.path(), &|rel, size| shows(keep, rel, size)) {
            return None;
        }
        let hits = rank::rank_in(&lazy, query, limit, keep).ok()?;
        touch(file);
        Some((hits, super::source::Source::file_count(&lazy)))
    }

    /// Bring the index up to date with the files `keep` allows: read new and changed files,
    /// drop gone ones, and save when anything changed. `progress` hears of each file read.
    pub fn refresh(&mut self, keep: &dyn Fn(&str) -> bool, progress: Progress<'_>) -> Refresh {
        let started = Instant::now();
        if !self.loaded {
            self.loaded = true;
            if let Some(f) = self.file.as_deref()
                && let Some(saved) = load(f, self.root.path())
            {
                self.saved = saved;
                touch(f);
            }
        }
        // The last walk, when it still holds by stats alone, spares the walk.
        let (found, listing) = match self.saved.listing.replay(self.root.path()) {
            Some(files) => (visible(files, keep), None),
            None => {
                let (found, listing) = walk(self.root.path(), keep);
                (found, Some(listing))
            }
        };
        let stale: Vec<&Found> = found
            .iter()
            .filter(|f| {
                let now = Some((f.mtime_ns, f.size));
                self.saved.index.stamp(&f.rel) != now
                    && self.saved.skipped.get(&f.rel).copied() != now
            })
            .collect();
        let seen: HashSet<&str> = found.iter().map(|f| f.rel.as_str()).collect();
        let before = self.saved.index.len();
        self.saved.index.retain(|p| seen.contains(p));
        self.saved.skipped.retain(|p, _| seen.contains(p.as_str()));
        let removed = before - self.saved.index.len();
        // Progress counts the files the index holds after it, as `Refresh::files` (what a
        // search's summary says) does: those it holds unchanged are done at once, and a file
        // read that is not text leaves the count.
        let unchanged = found
            .iter()
            .filter(|f| self.saved.index.stamp(&f.rel) == Some((f.mtime_ns, f.size)))
            .count();
        let read = stale.len();
        let (mut done, mut total) = (unchanged, unchanged + read);
        for f in &stale {
            progress(done, total);
            if self.read_one(f) {
                done += 1;
            } else {
                total -= 1;
            }
        }
        // A new record is kept when the walk saw other stamps (a directory's, an ignore
        // file's) or the last one was too fresh to trust and this one is not.
        let relisted = listing.is_some_and(|listing| {
            let other = !listing.same_as(&self.saved.listing)
                || listing.is_settled() != self.saved.listing.is_settled();
            self.saved.listing = listing;
            other
        });
        if read > 0 || removed > 0 {
            progress(done, total);
            self.saved.index.finish();
        }
        if read > 0 || removed > 0 || relisted {
            self.save();
        }
        Refresh {
            files: self.saved.index.len(),
            read,
            removed,
            elapsed: started.elapsed(),
        }
    }

    /// Read one file into the index; whether it went in (a file that is not text does not).
    fn read_one(&mut self, f: &Found) -> bool {
        let text = self
            .root
            .resolve(&f.rel)
            .and_then(|p| fs::read(&p, MAX_FILE_BYTES))
            .ok()
            .flatten()
            .and_then(|b| text_of(&b));
        match text {
            Some(text) => {
                self.saved.skipped.remove(&f.rel);
                self.saved.index.add(&f.rel, f.mtime_ns, f.size, &text);
                true
            }
            None => {
                self.saved.index.retain(|p| p != f.rel);
                self.saved
                    .skipped
                    .insert(f.rel.clone(), (f.mtime_ns, f.size));
                false
            }
        }
    }

    /// Write the index to the state directory (atomically; a failure is logged, the index
    /// in memory stays good).
    fn save(&self) {
        let Some(file) = &self.file else { return };
        let written = (|| -> Result<()> {
            let bytes = encode(&self.saved);
            if let Some(dir) = file.parent() {
                std::fs::create_dir_all(dir).map_err(|e| io_error("search", "create", &e))?;
            }
            fs::write_private(file, &bytes).map_err(|e| io_error("search", "write", &e))
        })();
        if let Err(e) = written {
            tracing::warn!("the search index was not saved to {}: {e}", file.display());
        }
        if let Some(dir) = file.parent() {
            prune(dir, UNUSED_FOR);
        }
    }
}

/// Mark the index in `file` in use: not for pruning, even when nothing changes.
fn touch(file: &Path) {
    let _ = std::fs::File::options()
        .write(true)
        .open(file)
        .and_then(|f| f.set_modified(std::time::SystemTime::now()));
}

/// How long an index nobody used lives on (its root is probably gone).
const UNUSED_FOR: Duration = Duration::from_secs(30 * 24 * 3600);

/// Remove the indexes in `dir` not written or read for `age` (a root searched once, long
/// ago).
fn prune(dir: &Path, age: Duration) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|e| e > age);
        if old && path.extension().is_some_and(|e| e == "index") {
            let _ = std::fs::remove_file(&path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::{Digest, Sha256};

    fn write(dir: &Path, rel: &str, text: &[u8]) {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    /// The progress counts the files the index holds, as `Refresh::files` (the summary a
    /// search prints) does: a file read that is not text leaves the count, and files
    /// unchanged since the last refresh are done from the start.
    #[test]
    fn progress_counts_the_files_the_index_holds_as_the_summary_does() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        for f in ["a.rs", "b.rs", "c.rs"] {
            write(d, f, b"fn main() {}\n");
        }
        write(d, "logo.png", b"\x89PNG\0\0\0binary");
        let root = Root::new(d).unwrap();
        let mut store = Store::in_memory(&root);
        let mut calls = Vec::new();
        let r = store.refresh(&|_| true, &mut |done, total| calls.push((done, total)));
        assert_eq!(r.files, 3);
        assert_eq!(calls.last(), Some(&(3, 3)), "{calls:?}");
        assert!(
            calls.iter().all(|&(done, total)| done <= total),
            "{calls:?}"
        );
        write(d, "b.rs", b"fn main() { run(); }\n");
        calls.clear();
        let r = store.refresh(&|_| true, &mut |done, total| calls.push((done, total)));
        assert_eq!((r.files, r.read), (3, 1));
        assert_eq!(calls, [(2, 3), (3, 3)]);
    }

    #[test]
    fn gitignored_binary_large_and_refused_files_stay_out() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        write(d, ".gitignore", b"build/\n*.log\n");
        write(d, "src/main.go", b"package main\nfunc main() {}\n");
        write(d, "build/out.go", b"package out\n");
        write(d, "debug.log", b"trace\n");
        write(d, "logo.png", b"\x89PNG\0\0\0binary");
        write(d, ".env", b"SECRET=1\n");
        write(d, "secret/key.go", b"package key\n");
        write(d, "big.txt", &vec![b'a'; (MAX_FILE_BYTES + 1) as usize]);
        let root = Root::new(d).unwrap();
        let mut store = Store::in_memory(&root);
        let r = store.refresh(&|p| !p.starts_with("secret/"), &mut |_, _| {});
        let paths: Vec<&str> = store.index().paths().collect();
        assert_eq!(paths, ["src/main.go"]);
        assert_eq!(r.read, 2, "the binary is read once and remembered");
        let again = store.refresh(&|p| !p.starts_with("secret/"), &mut |_, _| {});
        assert_eq!(again.read, 0);
    }

    #[test]
    fn every_flipped_byte_of_an_encoding_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        write(d, "a.py", b"def alpha():\n    return beta()\n");
        let root = Root::new(d).unwrap();
        let mut store = Store::in_memory(&root);
        store.refresh(&|_| true, &mut |_, _| {});
        let bytes = encode(&store.saved);
        assert!(decode(&bytes).is_some());
        for at in 0..bytes.len() {
            let mut flipped = bytes.clone();
            flipped[at] ^= 0x5a;
            assert!(
                decode(&flipped).is_none(),
                "a flip at byte {at} was trusted"
            );
        }
        assert!(decode(&bytes[..bytes.len() - 1]).is_none());
        assert!(decode(&[]).is_none());
    }

    /// A saved index whose prefix and head `head` are right (format and digest) and whose
    /// body is empty.
    fn with_head(format: u32, head: &[u8]) -> Vec<u8> {
        let mut h = Sha256::new();
        h.update(format.to_le_bytes());
        h.update(head);
        let mut out = b"PGSI".to_vec();
        out.extend_from_slice(&format.to_le_bytes());
        out.extend_from_slice(&(head.len() as u64).to_le_bytes());
        out.extend_from_slice(&h.finalize());
        out.extend_from_slice(head);
        out
    }

    /// Ways the kept index file is found damaged or forged: torn, flipped, of another format
    /// or root, with a length field of 2^64 - 1, naming words it does not have or units a
    /// file does not have. The other formats and root hold a lie (other text under the real
    /// files' stamps) with right digests: only the checks after the digests keep it out.
    fn damaged_files(good: &[u8], root: &Path) -> Vec<(&'static str, Vec<u8>)> {
        let (found, _) = walk(root, &|_| true);
        let lie = |format: u32, root: PathBuf| {
            let mut index = Index::new();
            for f in &found {
                index.add(&f.rel, f.mtime_ns, f.size, "def zeta_lie():\n    pass\n");
            }
            index.finish();
            disk::encode(format, &root, &index, &HashMap::new(), &Listing::default())
        };
        let forged = |damage: &dyn Fn(&mut Index)| {
            let mut saved = decode(good).unwrap();
            saved.index.finish();
            damage(&mut saved.index);
            encode(&saved)
        };
        let mut huge = postcard::to_stdvec(&(root, 1u8, 1.0f64, 0u8)).unwrap();
        huge.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]);
        huge.extend_from_slice(b"alpha");
        let mut huge_head = with_head(FORMAT, b"alpha");
        huge_head[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
        let mut flipped_head = good.to_vec();
        flipped_head[0] ^= 0x01;
        let mut flipped_format = good.to_vec();
        flipped_format[4] ^= 0x01;
        let mut flipped_middle = good.to_vec();
        flipped_middle[good.len() / 2] ^= 0x40;
        let mut flipped_last = good.to_vec();
        flipped_last[good.len() - 1] ^= 0x80;
        let other_root = root.join("elsewhere");
        vec![
            ("empty", Vec::new()),
            ("torn in half", good[..good.len() / 2].to_vec()),
            ("one byte short", good[..good.len() - 1].to_vec()),
            ("one byte long", [good, b"x"].concat()),
            ("a flipped first byte", flipped_head),
            ("a flipped format byte", flipped_format),
            ("a flipped middle byte", flipped_middle),
            ("a flipped last byte", flipped_last),
            ("an older format", lie(FORMAT - 1, root.to_path_buf())),
            ("a newer format", lie(FORMAT + 1, root.to_path_buf())),
            ("another root", lie(FORMAT, other_root)),
            ("a 2^64 head length", huge_head),
            ("a 2^64 vector length", with_head(FORMAT, &huge)),
            (
                "a word past the words",
                forged(&|ix| ix.files_mut()[0].path_terms.push(u32::MAX)),
            ),
            (
                "a unit past the units",
                forged(&|ix| ix.files_mut()[0].units.clear()),
            ),
            ("2^32 - 1 words", disk::forge::words(good, u32::MAX)),
            (
                "a page read 100 times",
                disk::forge::pages_on_one_block(good, 100),
            ),
            (
                "a byte after a block's values",
                disk::forge::byte_after_last_block(good),
            ),
            (
                "a unit on line 2^32 - 1",
                forged(&|ix| {
                    for u in &mut ix.files_mut()[0].units {
                        (u.start, u.end) = (u32::MAX, u32::MAX);
                    }
                }),
            ),
        ]
    }

    /// The kept index file on disk damaged every way: each time the search answers from the
    /// files (all read again), and the file is written again whole.
    #[test]
    fn a_damaged_index_file_is_rebuilt_never_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let state = tempfile::tempdir().unwrap();
        let d = dir.path();
        write(d, "a.py", b"def alpha():\n    return beta()\n");
        write(
            d,
            "b.go",
            b"package b\n\nfunc Beta() int {\n\treturn 1\n}\n",
        );
        let root = Root::new(d).unwrap();
        let file = state.path().join("ix.index");
        let open = || Store {
            file: Some(file.clone()),
            loaded: false,
            ..Store::in_memory(&root)
        };
        open().refresh(&|_| true, &mut |_, _| {});
        let good = std::fs::read(&file).unwrap();
        let cases = damaged_files(&good, root.path());
        let older = &cases
            .iter()
            .find(|(what, _)| *what == "an older format")
            .unwrap()
            .1;
        assert!(decode(older).is_some(), "the lie's digests are right");
        for (what, bytes) in cases {
            std::fs::write(&file, &bytes).unwrap();
            // Read on demand, the file answers right or not at all.
            let lazy = open().answer_saved(&|_| true, "alpha zeta_lie", 5);
            // A head that lies is refused when opened, before a page is read.
            let lying_head = [
                "a word past the words",
                "2^32 - 1 words",
                "a page read 100 times",
            ];
            assert!(
                !lying_head.contains(&what) || lazy.is_none(),
                "{what}: answered read on demand"
            );
            if let Some((hits, _)) = lazy {
                let paths: Vec<&str> = hits.iter().map(|h| h.path.as_str()).collect();
                assert_eq!(paths, ["a.py"], "{what}: answered from a damaged file");
            }
            let mut store = open();
            let r = store.refresh(&|_| true, &mut |_, _| {});
            assert_eq!((r.files, r.read), (2, 2), "{what}: not rebuilt");
            let hits = crate::search::rank::rank(store.index(), "alpha", 5, &|_| true);
            let paths: Vec<&str> = hits.iter().map(|h| h.path.as_str()).collect();
            assert_eq!(paths, ["a.py"], "{what}");
            let lie = crate::search::rank::rank(store.index(), "zeta_lie", 5, &|_| true);
            assert!(lie.is_empty(), "{what}: the lie answered");
            let again = load(&file, root.path()).unwrap_or_else(|| panic!("{what}: not rewritten"));
            assert_eq!(again.index.paths().collect::<Vec<_>>(), ["a.py", "b.go"]);
            assert!(again.index.term("alpha").is_some(), "{what}");
        }
    }

    /// A fresh saved index answers without being read whole; a changed file, or a file the
    /// filter now refuses, sends the query to the refresh.
    #[test]
    fn a_fresh_saved_index_answers_read_on_demand() {
        let dir = tempfile::tempdir().unwrap();
        let state = tempfile::tempdir().unwrap();
        let d = dir.path();
        write(d, "a.py", b"def alpha():\n    return beta()\n");
        write(d, "b.py", b"def beta():\n    pass\n");
        let root = Root::new(d).unwrap();
        let file = state.path().join("ix.index");
        let open = || Store {
            file: Some(file.clone()),
            loaded: false,
            ..Store::in_memory(&root)
        };
        assert!(
            open().answer_saved(&|_| true, "alpha", 5).is_none(),
            "none saved"
        );
        // A walk just after the files were written is not trusted (`listing`): past it.
        std::thread::sleep(std::time::Duration::from_millis(120));
        let mut first = open();
        first.refresh(&|_| true, &mut |_, _| {});
        let want = rank::rank(first.index(), "alpha beta", 5, &|_| true);
        let mut lazy = open();
        let (hits, indexed) = lazy.answer_saved(&|_| true, "alpha beta", 5).unwrap();
        assert!(!lazy.is_loaded(), "read whole");
        assert_eq!(indexed, 2);
        let paths = |h: &[Hit]| h.iter().map(|h| h.path.clone()).collect::<Vec<_>>();
        assert_eq!(paths(&hits), paths(&want));
        assert_eq!(hits[0].ranges, want[0].ranges);
        assert!(open().answer_saved(&|p| p != "b.py", "beta", 5).is_none());
        write(d, "b.py", b"def beta_changed():\n    pass\n");
        assert!(
            open().answer_saved(&|_| true, "beta", 5).is_none(),
            "b.py changed"
        );
    }

    /// Read on demand, the saved index with any one byte flipped answers as the whole one
    /// did, or not at all (the refresh then rebuilds it): the head's digest covers the head
    /// and its format, each block's its values, and a damaged block not read changes nothing.
    #[test]
    fn every_flipped_byte_read_on_demand_answers_right_or_not_at_all() {
        let dir = tempfile::tempdir().unwrap();
        let state = tempfile::tempdir().unwrap();
        let d = dir.path();
        write(d, "a.py", b"def alpha():\n    return beta()\n");
        write(
            d,
            "lib/b.py",
            b"def beta():\n    alpha()\n\ndef gamma():\n    pass\n",
        );
        let root = Root::new(d).unwrap();
        let file = state.path().join("ix.index");
        let open = || Store {
            file: Some(file.clone()),
            loaded: false,
            ..Store::in_memory(&root)
        };
        std::thread::sleep(std::time::Duration::from_millis(120));
        open().refresh(&|_| true, &mut |_, _| {});
        let good = std::fs::read(&file).unwrap();
        let answer = |store: &mut Store| {
            let (hits, n) = store.answer_saved(&|_| true, "alpha beta gamma", 5)?;
            let hits: Vec<_> = hits
                .into_iter()
                .map(|h| (h.path, h.ranges, h.names, h.score.to_bits()))
                .collect();
            Some((hits, n))
        };
        let want = answer(&mut open()).expect("the good index answers");
        for at in 0..good.len() {
            let mut flipped = good.clone();
            flipped[at] ^= 0x10;
            std::fs::write(&file, &flipped).unwrap();
            if let Some(got) = answer(&mut open()) {
                assert_eq!(got, want, "a flip at byte {at} answered otherwise");
            }
        }
    }

    #[test]
    fn secrets_stay_out_whatever_the_ignore_files_say() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        // The repository whitelists its secrets: `!` lines override the hidden-file rule.
        write(d, ".gitignore", b"!.env\n!.env.local\n!.netrc\n");
        write(d, ".env", b"TOKEN=abc123\n");
        write(d, ".env.local", b"TOKEN=abc123\n");
        write(d, ".netrc", b"password abc123\n");
        write(d, "certs/server.key", b"-----BEGIN PRIVATE KEY-----\n");
        write(d, "src/app.py", b"import os\nTOKEN = os.environ['TOKEN']\n");
        let root = Root::new(d).unwrap();
        let mut store = Store::in_memory(&root);
        store.refresh(&|_| true, &mut |_, _| {});
        let paths: Vec<&str> = store.index().paths().collect();
        assert_eq!(paths, ["src/app.py"]);
    }

    #[test]
    fn only_changed_files_are_read_again_and_the_index_survives_a_restart() {
        let dir = tempfile::tempdir().unwrap();
        let state = tempfile::tempdir().unwrap();
        let d = dir.path();
        write(d, "a.py", b"def alpha():\n    pass\n");
        write(d, "b.py", b"def beta():\n    pass\n");
        let root = Root::new(d).unwrap();
        let file = state.path().join("ix.index");
        let mut store = Store::in_memory(&root);
        store.file = Some(file.clone());
        let mut calls = Vec::new();
        let first = store.refresh(&|_| true, &mut |done, total| calls.push((done, total)));
        assert_eq!((first.files, first.read), (2, 2));
        assert_eq!(calls.last(), Some(&(2, 2)));
        write(d, "b.py", b"def gamma_changed():\n    pass\n\n");
        std::fs::remove_file(d.join("a.py")).unwrap();
        assert!(load(&file, root.path()).is_some(), "the saved index loads");
        let mut reopened = Store {
            file: Some(file.clone()),
            loaded: false,
            ..Store::in_memory(&root)
        };
        let second = reopened.refresh(&|_| true, &mut |_, _| {});
        assert_eq!((second.files, second.read, second.removed), (1, 1, 1));
        assert!(reopened.index().term("gamma").is_some());
        assert!(crate::search::rank::rank(reopened.index(), "alpha", 5, &|_| true).is_empty());
    }
}
