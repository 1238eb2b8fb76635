//! The journal's pre-images (docs/DESIGN.md §7): the bytes an edit replaced, stored once per content
//! hash (so thirty edits of one 4 MB file keep one copy per distinct version), compressed,
//! private (0600), beside the journal. Their total is capped: past the cap the least recently
//! stored go first, and the edits that needed them can no longer be undone (undo says so).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use flate2::Compression;
use flate2::read::ZlibDecoder;
use flate2::write::ZlibEncoder;

use crate::workspace::digest;
use crate::workspace::fs;

/// The default cap on the pre-images' total size.
pub(crate) const DEFAULT_CAP: u64 = 256 << 20;

/// The pre-image store of one journal.
#[derive(Debug, Clone)]
pub(crate) struct Preimages {
    dir: PathBuf,
    cap: u64,
}

impl Preimages {
    /// The store beside the journal at `journal` (`NAME.preimages/`), capped at `cap` bytes.
    pub(crate) fn beside(journal: &Path, cap: u64) -> Preimages {
        Preimages {
            dir: journal.with_extension("preimages"),
            cap,
        }
    }

    fn path_of(&self, hash: &str) -> Option<PathBuf> {
        // A hash from the journal names a file here, nothing else.
        (hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_hexdigit()))
            .then(|| self.dir.join(hash))
    }

    /// Store `bytes`; returns their hash (the key to [`Preimages::get`] them back).
    pub(crate) fn put(&self, bytes: &[u8]) -> std::io::Result<String> {
        let hash = digest::hash(bytes);
        let path = self
            .path_of(&hash)
            .ok_or_else(|| std::io::Error::other("unexpected hash"))?;
        if !self.dir.is_dir() {
            // The store's directory is named in its parent only once that is synced.
            std::fs::create_dir_all(&self.dir)?;
            if let Some(parent) = self.dir.parent() {
                fs::sync_dir_now(parent)?;
            }
        }
        // Seen and touched under the store's lock, so that no trim lists it before the touch
        // and deletes it after: a pre-image reported stored stays until it is the oldest.
        let seen = {
            let _store = store_lock();
            std::fs::File::options()
                .append(true)
                .open(&path)
                .map(|f| f.set_modified(std::time::SystemTime::now()))
        };
        if seen.is_ok() {
            // Already here: it is the most recent now, and the total did not grow (no trim,
            // which reads the whole store). Another writer may have renamed it in a moment
            // ago and not yet synced the directory: a journal line naming it must not be
            // durable before it is.
            fs::sync_dir_now(&self.dir)?;
        } else {
            let mut z = ZlibEncoder::new(Vec::new(), Compression::fast());
            z.write_all(bytes)?;
            fs::write_private(&path, &z.finish()?)?;
            self.trim(&hash);
        }
        Ok(hash)
    }

    /// The bytes stored as `hash`; `None` when they were dropped (or never stored).
    pub(crate) fn get(&self, hash: &str) -> Option<Vec<u8>> {
        let compressed = std::fs::read(self.path_of(hash)?).ok()?;
        let mut out = Vec::new();
        ZlibDecoder::new(compressed.as_slice())
            .read_to_end(&mut out)
            .ok()?;
        (digest::hash(&out) == hash).then_some(out)
    }

    /// Drop the least recently stored pre-images (never `keep`) until the total fits the cap.
    fn trim(&self, keep: &str) {
        let _store = store_lock();
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return;
        };
        let mut files: Vec<(std::time::SystemTime, u64, PathBuf)> = entries
            .flatten()
            .filter_map(|e| {
                let m = e.metadata().ok()?;
                Some((m.modified().ok()?, m.len(), e.path()))
            })
            .collect();
        let mut total: u64 = files.iter().map(|f| f.1).sum();
        if total <= self.cap {
            return;
        }
        files.sort();
        for (_, len, path) in files {
            if total <= self.cap {
                break;
            }
            if path.file_name().is_some_and(|n| n == keep) {
                continue;
            }
            if std::fs::remove_file(&path).is_ok() {
                total -= len;
            }
        }
    }
}

/// The lock of this process's pre-image stores: a trim's listing and deletions on one side, a
/// stored pre-image's check and touch on the other.
fn store_lock() -> std::sync::MutexGuard<'static, ()> {
    static STORE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    STORE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noise(seed: u64, len: usize) -> Vec<u8> {
        let mut x = seed | 1;
        (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect()
    }

    #[test]
    fn one_copy_per_content_compressed_and_private() {
        let dir = tempfile::tempdir().unwrap();
        let store = Preimages::beside(&dir.path().join("j.jsonl"), DEFAULT_CAP);
        let text = "a line of a large source file\n"
            .repeat(40_000)
            .into_bytes();
        let hashes: Vec<String> = (0..30).map(|_| store.put(&text).unwrap()).collect();
        assert!(hashes.iter().all(|h| *h == hashes[0]));
        let files: Vec<_> = std::fs::read_dir(dir.path().join("j.preimages"))
            .unwrap()
            .flatten()
            .collect();
        assert_eq!(files.len(), 1);
        let meta = files[0].metadata().unwrap();
        assert!(meta.len() < text.len() as u64 / 10, "{} bytes", meta.len());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        }
        assert_eq!(store.get(&hashes[0]).unwrap(), text);
        assert_eq!(store.get("../../etc/passwd"), None);
    }

    /// Threads storing the same content at once each store it whole and get its hash.
    /// Regression: they shared one temp name (`HASH.PID.tmp`), so one removed or renamed
    /// another's half-written file: a store failed, or left a damaged pre-image.
    #[test]
    fn threads_storing_one_content_at_once_never_share_a_temp_file() {
        const THREADS: usize = 8;
        const ROUNDS: u64 = 12;
        let dir = tempfile::tempdir().unwrap();
        let store = Preimages::beside(&dir.path().join("j.jsonl"), DEFAULT_CAP);
        for round in 0..ROUNDS {
            let bytes = noise(round + 1, 512 << 10);
            let start = std::sync::Barrier::new(THREADS);
            let hashes: Vec<std::io::Result<String>> = std::thread::scope(|s| {
                let threads: Vec<_> = (0..THREADS)
                    .map(|_| {
                        s.spawn(|| {
                            start.wait();
                            store.put(&bytes)
                        })
                    })
                    .collect();
                threads.into_iter().map(|t| t.join().unwrap()).collect()
            });
            for h in &hashes {
                let h = h.as_ref().expect("a store failed");
                assert_eq!(
                    store.get(h).as_deref(),
                    Some(bytes.as_slice()),
                    "round {round}"
                );
            }
        }
        let left: Vec<_> = std::fs::read_dir(dir.path().join("j.preimages"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .filter(|n| n.len() != 64)
            .collect();
        assert!(left.is_empty(), "temp files left: {left:?}");
    }

    #[test]
    fn past_the_cap_the_oldest_go() {
        let dir = tempfile::tempdir().unwrap();
        let store = Preimages::beside(&dir.path().join("j.jsonl"), 1 << 20);
        let hashes: Vec<String> = (0..3)
            .map(|k| {
                let h = store.put(&noise(k + 1, 600 << 10)).unwrap();
                std::thread::sleep(std::time::Duration::from_millis(20));
                h
            })
            .collect();
        assert_eq!(store.get(&hashes[0]), None, "the oldest was dropped");
        assert!(store.get(&hashes[2]).is_some(), "the newest is kept");
        let total: u64 = std::fs::read_dir(dir.path().join("j.preimages"))
            .unwrap()
            .flatten()
            .map(|e| e.metadata().unwrap().len())
            .sum();
        assert!(total <= 1 << 20, "{total}");
    }
}
