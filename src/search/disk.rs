//! The saved index's layout, written from an [`Index`] and read back two ways: whole (to
//! bring it up to date) or on demand ([`Lazy`], for a query on a fresh index: the file heads
//! whole, then only the dictionary pages of the query's terms and the units of the hits).
//!
//! The file: [`MAGIC`], the format (u32, little-endian), the head's length (u64) and its
//! SHA-256 (with the format's), the head (postcard: the root, the files' heads with their stamps, the skipped
//! files, the dictionary's pages), then the blocks the head points at, each with its own
//! SHA-256: the pages (words sorted, each with its term id, its files and its units) and
//! each file's units (lines and names). Every offset is checked against the file's length
//! and every id against what it indexes before it is used; the blocks lie end to end in
//! the order written (no two share a byte, so reading them all costs at most the file), each
//! holds its values and nothing after them, and every count is bounded by the bytes that
//! back it; anything wrong is [`Damaged`] and the index is rebuilt. The digests are no
//! secret: they catch damage, the checks catch forgery.

use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::index::{FileEntry, Index, Kind, UnitEntry};
use super::listing::Listing;
use super::source::{Damaged, Posted, Source, Span};

/// The first bytes of a saved index.
const MAGIC: &[u8; 4] = b"PGSI";
/// Magic, format, head length and head digest.
const PREFIX_BYTES: u64 = 4 + 4 + 8 + 32;
/// A dictionary page is closed once it holds this many bytes (a term's postings are never
/// split: a common term's page is larger).
const PAGE_BYTES: usize = 4096;
/// The fewest bytes a page entry takes: its word's length, its id and its two postings'
/// lengths, each at least one byte.
const MIN_ENTRY_BYTES: u64 = 4;

/// Where a block is: from the end of the head, its length and digest.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct BlockRef {
    at: u64,
    len: u64,
    digest: [u8; 32],
}

/// A dictionary page: its first word and block.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct PageRef {
    first: String,
    block: BlockRef,
}

/// One word of a page, with its postings.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Entry {
    word: String,
    id: u32,
    files: Vec<(u32, u32)>,
    units: Vec<(u32, u32, u32)>,
}

/// One unit as saved (its terms are in the pages).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct SavedUnit {
    start: u32,
    end: u32,
    name: Option<String>,
    name_term: Option<u32>,
}

/// One file's head: all a query needs of it but its units' lines.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct FileHead {
    path: String,
    mtime_ns: i64,
    size: u64,
    lines: u32,
    kind: Kind,
    len: u32,
    path_terms: Vec<u32>,
    def_terms: Vec<u32>,
    unit_lens: Vec<u32>,
    units: BlockRef,
}

/// The head of the file.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Head {
    root: PathBuf,
    words: u32,
    avg_len: f64,
    body_len: u64,
    files: Vec<FileHead>,
    skipped: Vec<(String, i64, u64)>,
    pages: Vec<PageRef>,
    listing: Listing,
}

/// Files seen and not indexed, with their stamps.
pub(crate) type Skipped = HashMap<String, (i64, u64)>;

/// A saved index read back whole.
pub(crate) struct Whole {
    /// The format it was written in.
    pub format: u32,
    /// The root it is of.
    pub root: PathBuf,
    /// The index (not finished).
    pub index: Index,
    /// The skipped files.
    pub skipped: Skipped,
    /// What the walk that made it saw.
    pub listing: Listing,
}

fn postcard_bytes<T: Serialize>(value: &T) -> Vec<u8> {
    // Vectors, strings and numbers always encode.
    postcard::to_stdvec(value).unwrap_or_default()
}

/// Append `bytes` to `body` as a block.
fn push_block(body: &mut Vec<u8>, bytes: &[u8]) -> BlockRef {
    let r = BlockRef {
        at: body.len() as u64,
        len: bytes.len() as u64,
        digest: Sha256::digest(bytes).into(),
    };
    body.extend_from_slice(bytes);
    r
}

/// The pages of `index`'s dictionary, appended to `body`.
fn write_pages(index: &Index, body: &mut Vec<u8>) -> Vec<PageRef> {
    let words = index.words();
    let mut ids: Vec<u32> = (0..words.len() as u32).collect();
    ids.sort_by(|&a, &b| words[a as usize].cmp(&words[b as usize]));
    let mut pages = Vec::new();
    let mut page: Vec<Entry> = Vec::new();
    let mut bytes = 0;
    let mut close = |page: &mut Vec<Entry>, body: &mut Vec<u8>| {
        if let Some(first) = page.first() {
            let first = first.word.clone();
            let block = push_block(body, &postcard_bytes(page));
            pages.push(PageRef { first, block });
            page.clear();
        }
    };
    for id in ids {
        let entry = Entry {
            word: words[id as usize].clone(),
            id,
            files: index.postings(id).to_vec(),
            units: index.unit_postings(id).to_vec(),
        };
        bytes += entry.word.len() + 5 * (entry.files.len() + entry.units.len());
        page.push(entry);
        if bytes >= PAGE_BYTES {
            close(&mut page, body);
            bytes = 0;
        }
    }
    close(&mut page, body);
    pages
}

/// The bytes of `index` (finished) of `root` in `format`, with the `skipped` files and what
/// the walk saw.
pub(crate) fn encode(
    format: u32,
    root: &Path,
    index: &Index,
    skipped: &Skipped,
    listing: &Listing,
) -> Vec<u8> {
    let mut body = Vec::new();
    let pages = write_pages(index, &mut body);
    let files = index
        .files()
        .iter()
        .map(|f| {
            let units: Vec<SavedUnit> = f
                .units
                .iter()
                .map(|u| SavedUnit {
                    start: u.start,
                    end: u.end,
                    name: u.name.clone(),
                    name_term: u.name_term,
                })
                .collect();
            FileHead {
                path: f.path.clone(),
                mtime_ns: f.mtime_ns,
                size: f.size,
                lines: f.lines,
                kind: f.kind,
                len: f.len,
                path_terms: f.path_terms.clone(),
                def_terms: f.def_terms.clone(),
                unit_lens: f.units.iter().map(|u| u.len).collect(),
                units: push_block(&mut body, &postcard_bytes(&units)),
            }
        })
        .collect();
    let mut skipped: Vec<(String, i64, u64)> = skipped
        .iter()
        .map(|(p, &(m, s))| (p.clone(), m, s))
        .collect();
    skipped.sort();
    let head = Head {
        root: root.to_path_buf(),
        words: index.words().len() as u32,
        avg_len: index.avg_len(),
        body_len: body.len() as u64,
        files,
        skipped,
        pages,
        listing: listing.clone(),
    };
    let head = postcard_bytes(&head);
    framed(format, &head, &body)
}

/// The file: its prefix (magic, format, the head's length and digest), the head, the body.
fn framed(format: u32, head: &[u8], body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(PREFIX_BYTES as usize + head.len() + body.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&format.to_le_bytes());
    out.extend_from_slice(&(head.len() as u64).to_le_bytes());
    out.extend_from_slice(&head_digest(format, head));
    out.extend_from_slice(head);
    out.extend_from_slice(body);
    out
}

/// The head's digest: of the format and the head, so neither changes unnoticed.
fn head_digest(format: u32, head: &[u8]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(format.to_le_bytes());
    h.update(head);
    h.finalize().into()
}

/// The value `bytes` hold, when they hold it and nothing after it.
fn exact<'b, T: Deserialize<'b>>(bytes: &'b [u8]) -> Result<T, Damaged> {
    match postcard::take_from_bytes(bytes) {
        Ok((value, [])) => Ok(value),
        _ => Err(Damaged),
    }
}

/// Whether `head` is consistent in itself: its blocks end to end in the order [`encode`]
/// writes them (the pages, then each file's units), the last ending at the body's end; no
/// more words than the pages' bytes can hold; every path and definition term a word.
fn head_holds(head: &Head) -> bool {
    let pages = head.pages.iter().map(|p| &p.block);
    let mut end = 0u64;
    for r in pages.chain(head.files.iter().map(|f| &f.units)) {
        match (r.at == end).then(|| end.checked_add(r.len)).flatten() {
            Some(next) => end = next,
            None => return false,
        }
    }
    let page_bytes: u64 = head.pages.iter().map(|p| p.block.len).sum();
    let known = |t: &u32| *t < head.words;
    end == head.body_len
        && u64::from(head.words) <= page_bytes / MIN_ENTRY_BYTES
        && head
            .files
            .iter()
            .all(|f| f.path_terms.iter().all(known) && f.def_terms.iter().all(known))
}

/// Where the bytes come from: all in memory, or a file read at offsets.
enum Bytes<'a> {
    Memory(&'a [u8]),
    File(std::fs::File),
}

impl Bytes<'_> {
    /// `len` bytes at `at`, when the source has them all.
    fn read(&self, at: u64, len: u64, size: u64) -> Result<Vec<u8>, Damaged> {
        let end = at.checked_add(len).ok_or(Damaged)?;
        if end > size {
            return Err(Damaged);
        }
        match self {
            Bytes::Memory(b) => {
                let (at, end) = (usize::try_from(at), usize::try_from(end));
                let (Ok(at), Ok(end)) = (at, end) else {
                    return Err(Damaged);
                };
                b.get(at..end).map(<[u8]>::to_vec).ok_or(Damaged)
            }
            Bytes::File(f) => {
                let mut buf = vec![0; usize::try_from(len).map_err(|_| Damaged)?];
                let mut f = f;
                f.seek(SeekFrom::Start(at)).map_err(|_| Damaged)?;
                f.read_exact(&mut buf).map_err(|_| Damaged)?;
                Ok(buf)
            }
        }
    }
}

/// An opened saved index: its head read and checked.
struct Opened<'a> {
    bytes: Bytes<'a>,
    size: u64,
    format: u32,
    base: u64,
    head: Head,
}

impl<'a> Opened<'a> {
    /// Read and check the prefix and head of `bytes`, `size` long.
    fn open(bytes: Bytes<'a>, size: u64) -> Result<Opened<'a>, Damaged> {
        let prefix = bytes.read(0, PREFIX_BYTES, size)?;
        if &prefix[..4] != MAGIC {
            return Err(Damaged);
        }
        let word = |at: usize, n: usize| prefix.get(at..at + n).ok_or(Damaged);
        let format = u32::from_le_bytes(word(4, 4)?.try_into().map_err(|_| Damaged)?);
        let head_len = u64::from_le_bytes(word(8, 8)?.try_into().map_err(|_| Damaged)?);
        let head_bytes = bytes.read(PREFIX_BYTES, head_len, size)?;
        if head_digest(format, &head_bytes).as_slice() != word(16, 32)? {
            return Err(Damaged);
        }
        let head: Head = exact(&head_bytes)?;
        let base = PREFIX_BYTES + head_len;
        if base.checked_add(head.body_len) != Some(size)
            || !head_holds(&head)
            || !head.avg_len.is_finite()
            || head.avg_len < 1.0
        {
            return Err(Damaged);
        }
        Ok(Opened {
            bytes,
            size,
            format,
            base,
            head,
        })
    }

    /// A block's bytes, checked against its digest.
    fn block(&self, r: &BlockRef) -> Result<Vec<u8>, Damaged> {
        let at = self.base.checked_add(r.at).ok_or(Damaged)?;
        let bytes = self.bytes.read(at, r.len, self.size)?;
        if Sha256::digest(&bytes).as_slice() != r.digest {
            return Err(Damaged);
        }
        Ok(bytes)
    }

    /// A page's entries, each id within the dictionary and each posting within the files
    /// and their units.
    fn page(&self, r: &PageRef) -> Result<Vec<Entry>, Damaged> {
        let entries: Vec<Entry> = exact(&self.block(&r.block)?)?;
        let files = &self.head.files;
        let unit_ok = |&(f, u, _): &(u32, u32, u32)| {
            files
                .get(f as usize)
                .is_some_and(|h| (u as usize) < h.unit_lens.len())
        };
        let whole = entries.iter().all(|e| {
            e.id < self.head.words
                && e.files.iter().all(|&(f, _)| (f as usize) < files.len())
                && e.units.iter().all(unit_ok)
        });
        if whole { Ok(entries) } else { Err(Damaged) }
    }

    /// A file's units, as many as its head says, each running forward within the file.
    fn units(&self, f: usize) -> Result<Vec<SavedUnit>, Damaged> {
        let head = self.head.files.get(f).ok_or(Damaged)?;
        let units: Vec<SavedUnit> = exact(&self.block(&head.units)?)?;
        // Within the file, as [`Index::is_whole`] has them (a unit may end on the line after
        // its last break): a line past the last could overflow a range.
        let words = self.head.words;
        let forward = units.iter().all(|u| {
            u.start <= u.end
                && u.end < u32::MAX
                && u.end <= head.lines.saturating_add(1)
                && u.name_term.is_none_or(|t| t < words)
        });
        if units.len() != head.unit_lens.len() || !forward {
            return Err(Damaged);
        }
        Ok(units)
    }

    /// The whole index, its files' and units' terms gathered from the pages (as many words
    /// as the head says, a number [`head_holds`] bounds by the pages' bytes).
    fn whole(self) -> Result<Whole, Damaged> {
        let mut words: Vec<Option<String>> = vec![None; self.head.words as usize];
        let mut file_terms: Vec<Vec<(u32, u32)>> = vec![Vec::new(); self.head.files.len()];
        let mut unit_terms: Vec<Vec<Vec<(u32, u32)>>> = self
            .head
            .files
            .iter()
            .map(|h| vec![Vec::new(); h.unit_lens.len()])
            .collect();
        for r in &self.head.pages {
            for e in self.page(r)? {
                let slot = words.get_mut(e.id as usize).ok_or(Damaged)?;
                if slot.replace(e.word).is_some() {
                    return Err(Damaged);
                }
                for (f, n) in e.files {
                    file_terms[f as usize].push((e.id, n));
                }
                for (f, u, n) in e.units {
                    unit_terms[f as usize][u as usize].push((e.id, n));
                }
            }
        }
        let words: Option<Vec<String>> = words.into_iter().collect();
        let words = words.ok_or(Damaged)?;
        let mut files = Vec::with_capacity(self.head.files.len());
        for (f, (h, mut terms)) in self.head.files.iter().zip(file_terms).enumerate() {
            terms.sort_unstable();
            let saved = self.units(f)?;
            let units = saved
                .into_iter()
                .zip(std::mem::take(&mut unit_terms[f]))
                .zip(&h.unit_lens)
                .map(|((u, mut terms), &len)| {
                    terms.sort_unstable();
                    UnitEntry {
                        start: u.start,
                        end: u.end,
                        name: u.name,
                        name_term: u.name_term,
                        terms,
                        len,
                    }
                })
                .collect();
            files.push(FileEntry {
                path: h.path.clone(),
                mtime_ns: h.mtime_ns,
                size: h.size,
                lines: h.lines,
                kind: h.kind,
                terms,
                len: h.len,
                path_terms: h.path_terms.clone(),
                def_terms: h.def_terms.clone(),
                units,
            });
        }
        let skipped = self
            .head
            .skipped
            .iter()
            .map(|(p, m, s)| (p.clone(), (*m, *s)))
            .collect();
        Ok(Whole {
            format: self.format,
            root: self.head.root.clone(),
            index: Index::from_parts(words, files),
            skipped,
            listing: self.head.listing.clone(),
        })
    }
}

/// What [`encode`] wrote, read back whole, when every check holds.
pub(crate) fn decode(bytes: &[u8]) -> Option<Whole> {
    Opened::open(Bytes::Memory(bytes), bytes.len() as u64)
        .and_then(Opened::whole)
        .ok()
}

/// A saved index read on demand: its heads in memory, its pages and units read when asked
/// for.
pub(crate) struct Lazy {
    opened: Opened<'static>,
}

impl Lazy {
    /// The saved index in `file` when it is of `format` and `root` and its head is whole.
    pub(crate) fn open(file: &Path, format: u32, root: &Path) -> Option<Lazy> {
        let f = std::fs::File::open(file).ok()?;
        let size = f.metadata().ok()?.len();
        let opened = Opened::open(Bytes::File(f), size).ok()?;
        (opened.format == format && opened.head.root == root).then_some(Lazy { opened })
    }

    /// What the walk that made the index saw.
    pub(crate) fn listing(&self) -> &Listing {
        &self.opened.head.listing
    }

    /// Whether `found` (path, modification time, size) is exactly what the index holds:
    /// every file indexed or skipped with these stamps, and no other.
    pub(crate) fn is_fresh<'p>(
        &self,
        found: impl ExactSizeIterator<Item = (&'p str, i64, u64)>,
    ) -> bool {
        let head = &self.opened.head;
        if found.len() != head.files.len() + head.skipped.len() {
            return false;
        }
        let mut stamps: HashMap<&str, (i64, u64)> = head
            .files
            .iter()
            .map(|f| (f.path.as_str(), (f.mtime_ns, f.size)))
            .collect();
        stamps.extend(head.skipped.iter().map(|(p, m, s)| (p.as_str(), (*m, *s))));
        if stamps.len() != found.len() {
            return false;
        }
        // Each found file takes its stamp out: a file found twice finds it gone.
        found
            .into_iter()
            .all(|(p, m, s)| stamps.remove(p) == Some((m, s)))
    }
}

impl Source for Lazy {
    fn file_count(&self) -> usize {
        self.opened.head.files.len()
    }
    fn avg_len(&self) -> f64 {
        self.opened.head.avg_len
    }
    fn path(&self, f: usize) -> &str {
        &self.opened.head.files[f].path
    }
    fn kind(&self, f: usize) -> Kind {
        self.opened.head.files[f].kind
    }
    fn terms_len(&self, f: usize) -> u32 {
        self.opened.head.files[f].len
    }
    fn lines(&self, f: usize) -> u32 {
        self.opened.head.files[f].lines
    }
    fn path_terms(&self, f: usize) -> &[u32] {
        &self.opened.head.files[f].path_terms
    }
    fn def_terms(&self, f: usize) -> &[u32] {
        &self.opened.head.files[f].def_terms
    }
    fn unit_len(&self, f: usize, u: usize) -> u32 {
        self.opened.head.files[f].unit_lens[u]
    }
    fn posted(&self, term: &str) -> Result<Option<Posted>, Damaged> {
        let pages = &self.opened.head.pages;
        let at = pages.partition_point(|p| p.first.as_str() <= term);
        let Some(page) = at.checked_sub(1).and_then(|k| pages.get(k)) else {
            return Ok(None);
        };
        let entry = self.opened.page(page)?.into_iter().find(|e| e.word == term);
        Ok(entry.map(|e| Posted {
            id: e.id,
            files: e.files,
            units: e.units,
        }))
    }
    fn spans(&self, f: usize) -> Result<Vec<Span>, Damaged> {
        Ok(self
            .opened
            .units(f)?
            .into_iter()
            .map(|u| Span {
                start: u.start,
                end: u.end,
                name: u.name,
            })
            .collect())
    }
}

/// Forged saved indexes, their digests right (the digests are no secret), for the tests.
#[cfg(test)]
pub(crate) mod forge {
    use super::*;

    /// `bytes` (as [`encode`] wrote them) with the head and body `edit` makes of them.
    fn reheaded(bytes: &[u8], edit: impl FnOnce(&mut Head, &mut Vec<u8>)) -> Vec<u8> {
        let format = u32::from_le_bytes(bytes[4..8].try_into().unwrap());
        let head_len = u64::from_le_bytes(bytes[8..16].try_into().unwrap()) as usize;
        let start = PREFIX_BYTES as usize;
        let mut head: Head = postcard::from_bytes(&bytes[start..start + head_len]).unwrap();
        let mut body = bytes[start + head_len..].to_vec();
        edit(&mut head, &mut body);
        framed(format, &postcard::to_stdvec(&head).unwrap(), &body)
    }

    /// The head saying there are `words` words.
    pub(crate) fn words(bytes: &[u8], words: u32) -> Vec<u8> {
        reheaded(bytes, |head, _| head.words = words)
    }

    /// The first file's path terms with a term past the words.
    pub(crate) fn path_term_past_words(bytes: &[u8]) -> Vec<u8> {
        reheaded(bytes, |head, _| head.files[0].path_terms.push(head.words))
    }

    /// `pages` more page refs, all to one new block of `len` bytes: an empty page and
    /// zeros after it.
    pub(crate) fn pages_on_one_block(bytes: &[u8], pages: usize, len: usize) -> Vec<u8> {
        reheaded(bytes, |head, body| {
            let mut block = postcard::to_stdvec(&Vec::<Entry>::new()).unwrap();
            block.resize(len, 0);
            let block = push_block(body, &block);
            let page = PageRef {
                first: "\u{10ffff}".into(),
                block,
            };
            head.pages.extend(std::iter::repeat_n(page, pages));
            head.body_len = body.len() as u64;
        })
    }

    /// A zero byte after the values of the last block, its digest right.
    pub(crate) fn byte_after_last_block(bytes: &[u8]) -> Vec<u8> {
        reheaded(bytes, |head, body| {
            body.push(0);
            let last = match head.files.last_mut() {
                Some(f) => &mut f.units,
                None => &mut head.pages.last_mut().unwrap().block,
            };
            let at = last.at as usize;
            *last = push_block(&mut Vec::new(), &body[at..]);
            last.at = at as u64;
            head.body_len = body.len() as u64;
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::rank::{self, Hit};

    /// Enough files that the dictionary takes several pages.
    fn index() -> Index {
        let mut ix = Index::new();
        for k in 0..200 {
            let text = format!(
                "package p{k}\n\n// Session{k} keeps cookies.\nfunc SaveSession{k}(c Cookie) error {{\n\treturn c.Write(\"value{k}\")\n}}\n\nfunc (s *Store) Load{k}() {{\n\ts.cookie = nil\n}}\n"
            );
            ix.add(
                &format!("pkg/session{k}/store.go"),
                k,
                text.len() as u64,
                &text,
            );
        }
        ix.add("README.md", 0, 20, "Sessions and cookies.\n");
        ix.finish();
        ix
    }

    fn same(a: &[Hit], b: &[Hit]) -> bool {
        a.len() == b.len()
            && a.iter().zip(b).all(|(x, y)| {
                (&x.path, &x.ranges, &x.names) == (&y.path, &y.ranges, &y.names)
                    && x.score.to_bits() == y.score.to_bits()
            })
    }

    /// Read on demand or whole, the saved index ranks as the index it was written from:
    /// the same files, ranges, names and scores to the bit.
    #[test]
    fn the_saved_index_ranks_as_the_index_in_memory() {
        let ix = index();
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        let file = dir.path().join("ix.index");
        let bytes = encode(7, &root, &ix, &Skipped::new(), &Listing::default());
        std::fs::write(&file, &bytes).unwrap();
        let lazy = Lazy::open(&file, 7, &root).unwrap();
        assert!(lazy.opened.head.pages.len() > 3, "several pages");
        assert!(Lazy::open(&file, 8, &root).is_none(), "another format");
        assert!(Lazy::open(&file, 7, &dir.path().join("other")).is_none());
        let mut whole = decode(&bytes).unwrap().index;
        assert!(whole.is_whole());
        whole.finish();
        for q in [
            "save session cookie",
            "SaveSession7",
            "load store 12",
            "sessions",
            "zebra",
            "value3 write",
        ] {
            let want = rank::rank(&ix, q, 10, &|_| true);
            let got = rank::rank_in(&lazy, q, 10, &|_| true).unwrap();
            assert!(
                same(&want, &got),
                "{q}: {want:?} read on demand gave {got:?}"
            );
            let got = rank::rank(&whole, q, 10, &|_| true);
            assert!(same(&want, &got), "{q}: {want:?} read whole gave {got:?}");
        }
        let want = rank::rank(&ix, "save session", 3, &|p| !p.contains("session1"));
        let got = rank::rank_in(&lazy, "save session", 3, &|p| !p.contains("session1"));
        assert!(same(&want, &got.unwrap()));
    }

    /// A head that lies (its digest right) is refused when opened, before any block is read
    /// or anything sized by it: more words than its pages could hold, a path term past the
    /// words, blocks that overlap; and a block with bytes after its values is refused read.
    #[test]
    fn a_forged_head_is_refused_when_opened() {
        let ix = index();
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("ix.index");
        let good = encode(7, dir.path(), &ix, &Skipped::new(), &Listing::default());
        let words = ix.words().len() as u32;
        assert_eq!(decode(&forge::words(&good, words)).unwrap().format, 7);
        let opened = |bytes: &[u8]| {
            std::fs::write(&file, bytes).unwrap();
            Lazy::open(&file, 7, dir.path()).is_some()
        };
        assert!(opened(&good));
        for (what, bytes) in [
            ("2^32 - 1 words", forge::words(&good, u32::MAX)),
            ("50 million words", forge::words(&good, 50_000_000)),
            (
                "a path term past the words",
                forge::path_term_past_words(&good),
            ),
            (
                "pages on one block",
                forge::pages_on_one_block(&good, 3, 64),
            ),
        ] {
            assert!(!opened(&bytes), "{what}: opened");
            assert!(decode(&bytes).is_none(), "{what}: decoded");
        }
        let trailing = forge::byte_after_last_block(&good);
        assert!(decode(&trailing).is_none(), "a byte after a block's values");
        std::fs::write(&file, &trailing).unwrap();
        let lazy = Lazy::open(&file, 7, dir.path()).unwrap();
        let last = lazy.file_count() - 1;
        assert!(lazy.spans(last).is_err(), "a byte after the last units");
    }

    #[test]
    fn fresh_means_the_same_files_with_the_same_stamps() {
        let ix = index();
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("ix.index");
        let skipped = Skipped::from([("logo.png".to_string(), (5, 6))]);
        std::fs::write(
            &file,
            encode(7, dir.path(), &ix, &skipped, &Listing::default()),
        )
        .unwrap();
        let lazy = Lazy::open(&file, 7, dir.path()).unwrap();
        let mut found: Vec<(String, i64, u64)> = ix
            .files()
            .iter()
            .map(|f| (f.path.clone(), f.mtime_ns, f.size))
            .collect();
        found.push(("logo.png".into(), 5, 6));
        fn view(v: &[(String, i64, u64)]) -> Vec<(&str, i64, u64)> {
            v.iter().map(|(p, m, s)| (p.as_str(), *m, *s)).collect()
        }
        assert!(lazy.is_fresh(view(&found).into_iter()));
        let mut touched = found.clone();
        touched[3].1 += 1;
        assert!(!lazy.is_fresh(view(&touched).into_iter()), "a new stamp");
        let mut gone = found.clone();
        gone.pop();
        assert!(!lazy.is_fresh(view(&gone).into_iter()), "a file gone");
        let mut new = found.clone();
        new.push(("new.go".into(), 1, 1));
        assert!(!lazy.is_fresh(view(&new).into_iter()), "a new file");
        let mut twice = gone.clone();
        twice.push(found[0].clone());
        assert!(!lazy.is_fresh(view(&twice).into_iter()), "one file twice");
    }
}
