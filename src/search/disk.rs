//! The saved index's layout, written from an [`Index`] and read back two ways: whole (to
//! bring it up to date) or on demand ([`Lazy`], for a query on a fresh index: the head
//! whole, then only the dictionary pages of the query's terms and the units of the hits).
//!
//! The file: [`MAGIC`], the format (u32, little-endian), the head's length (u64) and its
//! SHA-256 (with the format's), the head, then the blocks, end to end: the dictionary's
//! pages (words sorted, each with its term id, its files and its units), then each file's
//! units (lines and names), each block its values (postcard) and their SHA-256. The head
//! (postcard) is laid out in columns, so that reading it makes a few dozen values, not one
//! per file: the root; the files' paths end to end, stamps, kinds, lengths, path and
//! definition terms and unit sizes; the skipped files; the other paths the walk gave; each
//! page's first word; where each block ends; and the walk's record, its files by number
//! into the paths ([`listing::Saved`]). Every offset is checked against the file's length
//! and every id against what it indexes before it is used; each block ends after the one
//! before, the last at the file's end (no two share a byte, so reading them all costs at
//! most the file), holds its values and nothing after them, and every count is bounded by
//! the bytes that back it; anything wrong is [`Damaged`] and the index is rebuilt. The
//! digests are no secret: they catch damage, the checks catch forgery.

use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::index::{FileEntry, Index, Kind, UnitEntry};
use super::listing::{self, Listing};
use super::source::{Damaged, Posted, Source, Span};

/// The first bytes of a saved index.
const MAGIC: &[u8; 4] = b"PGSI";
/// Magic, format, head length and head digest.
const PREFIX_BYTES: u64 = 4 + 4 + 8 + 32;
/// A block's digest, after its values.
const DIGEST_BYTES: u64 = 32;
/// A dictionary page is closed once it holds this many bytes (a term's postings are never
/// split: a common term's page is larger).
const PAGE_BYTES: usize = 4096;
/// The fewest bytes a page entry takes: its word's end, its id and its two postings' ends,
/// each at least one byte.
const MIN_ENTRY_BYTES: u64 = 4;

/// Values end to end and each one's length, as saved (its length a small number where its
/// end would grow with the values before it).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Lengths<T> {
    values: T,
    lens: Vec<u32>,
}

/// The ends of `lens` one after another, when they add up to `total`.
fn ends_of(lens: &[u32], total: usize) -> Result<Vec<u32>, Uneven> {
    let mut end = 0u32;
    let ends = lens
        .iter()
        .map(|&len| {
            end = end.checked_add(len).ok_or(Uneven)?;
            Ok(end)
        })
        .collect::<Result<Vec<u32>, Uneven>>()?;
    if end as usize == total {
        Ok(ends)
    } else {
        Err(Uneven)
    }
}

/// Saved lengths that do not add up to their values, or cut a character.
#[derive(Debug)]
struct Uneven;

impl std::fmt::Display for Uneven {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("lengths that do not add up to their values")
    }
}

/// Strings end to end: the `k`th is `text[ends[k - 1]..ends[k]]` (saved with their lengths;
/// read back only when they add up to the text and each ends between characters).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(try_from = "Lengths<String>", into = "Lengths<String>")]
struct Texts {
    text: String,
    ends: Vec<u32>,
}

impl TryFrom<Lengths<String>> for Texts {
    type Error = Uneven;
    fn try_from(saved: Lengths<String>) -> Result<Texts, Uneven> {
        let ends = ends_of(&saved.lens, saved.values.len())?;
        if !ends
            .iter()
            .all(|&e| saved.values.is_char_boundary(e as usize))
        {
            return Err(Uneven);
        }
        Ok(Texts {
            text: saved.values,
            ends,
        })
    }
}

impl From<Texts> for Lengths<String> {
    fn from(texts: Texts) -> Lengths<String> {
        let lens = lengths(&texts.ends);
        Lengths {
            values: texts.text,
            lens,
        }
    }
}

/// The lengths between `ends`.
fn lengths(ends: &[u32]) -> Vec<u32> {
    let mut last = 0;
    ends.iter()
        .map(|&e| {
            let len = e - last;
            last = e;
            len
        })
        .collect()
}

impl Texts {
    fn push(&mut self, s: &str) {
        self.text.push_str(s);
        self.ends.push(self.text.len() as u32);
    }

    fn len(&self) -> usize {
        self.ends.len()
    }

    /// The `k`th string; `None` past the last.
    fn get(&self, k: usize) -> Option<&str> {
        let start = match k {
            0 => 0,
            _ => *self.ends.get(k - 1)? as usize,
        };
        self.text.get(start..*self.ends.get(k)? as usize)
    }
}

/// Lists end to end: the `k`th is `values[ends[k - 1]..ends[k]]` (saved with their
/// lengths; read back only when they add up to the values).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(
    try_from = "Lengths<Vec<T>>",
    into = "Lengths<Vec<T>>",
    bound(
        serialize = "T: Serialize + Clone",
        deserialize = "T: Deserialize<'de>"
    )
)]
struct Runs<T> {
    values: Vec<T>,
    ends: Vec<u32>,
}

impl<T> TryFrom<Lengths<Vec<T>>> for Runs<T> {
    type Error = Uneven;
    fn try_from(saved: Lengths<Vec<T>>) -> Result<Runs<T>, Uneven> {
        let ends = ends_of(&saved.lens, saved.values.len())?;
        Ok(Runs {
            values: saved.values,
            ends,
        })
    }
}

impl<T> From<Runs<T>> for Lengths<Vec<T>> {
    fn from(runs: Runs<T>) -> Lengths<Vec<T>> {
        let lens = lengths(&runs.ends);
        Lengths {
            values: runs.values,
            lens,
        }
    }
}

impl<T> Default for Runs<T> {
    fn default() -> Self {
        Runs {
            values: Vec::new(),
            ends: Vec::new(),
        }
    }
}

impl<T: Clone> Runs<T> {
    fn push(&mut self, run: &[T]) {
        self.values.extend_from_slice(run);
        self.ends.push(self.values.len() as u32);
    }

    fn len(&self) -> usize {
        self.ends.len()
    }

    /// The `k`th list (empty past the last).
    fn get(&self, k: usize) -> &[T] {
        let start = match k {
            0 => 0,
            _ => self.ends.get(k - 1).map_or(0, |&e| e as usize),
        };
        let end = self.ends.get(k).map_or(0, |&e| e as usize);
        self.values.get(start..end).unwrap_or_default()
    }
}

/// One dictionary page, in columns: its words (sorted), their term ids, files and units.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Page {
    words: Texts,
    ids: Vec<u32>,
    files: Runs<(u32, u32)>,
    units: Runs<(u32, u32, u32)>,
}

/// One unit as saved (its terms are in the pages).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct SavedUnit {
    start: u32,
    end: u32,
    name: Option<String>,
    name_term: Option<u32>,
}

/// The files' heads, in columns: all a query needs of them but their units' lines.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Files {
    paths: Texts,
    mtime_ns: Vec<i64>,
    size: Vec<u64>,
    lines: Vec<u32>,
    kind: Vec<Kind>,
    len: Vec<u32>,
    path_terms: Runs<u32>,
    def_terms: Runs<u32>,
    unit_lens: Runs<u32>,
}

impl Files {
    fn count(&self) -> usize {
        self.paths.len()
    }

    /// Whether every column has one value a file, every list is whole and every term is
    /// one of `words`.
    fn holds(&self, words: u32) -> bool {
        let n = self.count();
        let known = |t: &u32| *t < words;
        [
            self.mtime_ns.len(),
            self.size.len(),
            self.lines.len(),
            self.kind.len(),
            self.len.len(),
            self.path_terms.len(),
            self.def_terms.len(),
            self.unit_lens.len(),
        ]
        .iter()
        .all(|&len| len == n)
            && self.path_terms.values.iter().all(known)
            && self.def_terms.values.iter().all(known)
    }

    fn path(&self, f: usize) -> &str {
        self.paths.get(f).unwrap_or_default()
    }
}

/// The head of the file.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Head {
    root: PathBuf,
    words: u32,
    avg_len: f64,
    files: Files,
    /// Files seen and not indexed, with their stamps, sorted by path.
    skipped: Vec<(String, i64, u64)>,
    /// The paths the walk gave that no indexed file has (the skipped files, those the
    /// filter hides, those too large), sorted: the record's paths past the files'.
    others: Texts,
    /// Each dictionary page's first word.
    firsts: Texts,
    /// Where each block ends in the body: the pages', then each file's units'.
    ends: Vec<u64>,
    /// The walk's record, its files by number: a file's, or past the files one of `others`.
    record: listing::Saved,
}

impl Head {
    /// The path numbered `p` in the record.
    fn record_path(&self, p: u32) -> Option<&str> {
        let n = self.files.count();
        match (p as usize).checked_sub(n) {
            None => self.files.paths.get(p as usize),
            Some(k) => self.others.get(k),
        }
    }

    /// The `k`th block's place in the body: its start and its values' length (the digest
    /// follows them).
    fn block(&self, k: usize) -> Option<(u64, u64)> {
        let start = match k {
            0 => 0,
            _ => *self.ends.get(k - 1)?,
        };
        let len = self
            .ends
            .get(k)?
            .checked_sub(start)?
            .checked_sub(DIGEST_BYTES)?;
        Some((start, len))
    }
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

/// Append `bytes` to `body` as a block (its values, then their digest); where it ends.
fn push_block(body: &mut Vec<u8>, bytes: &[u8]) -> u64 {
    body.extend_from_slice(bytes);
    body.extend_from_slice(&Sha256::digest(bytes));
    body.len() as u64
}

/// The pages of `index`'s dictionary, appended to `body`: each page's first word, and
/// where each ends pushed to `ends`.
fn write_pages(index: &Index, body: &mut Vec<u8>, ends: &mut Vec<u64>) -> Texts {
    let words = index.words();
    let mut ids: Vec<u32> = (0..words.len() as u32).collect();
    ids.sort_by(|&a, &b| words[a as usize].cmp(&words[b as usize]));
    let mut firsts = Texts::default();
    let mut page = Page::default();
    let mut bytes = 0;
    let mut close = |page: &mut Page, body: &mut Vec<u8>| {
        if let Some(first) = page.words.get(0) {
            firsts.push(first);
            ends.push(push_block(body, &postcard_bytes(page)));
            *page = Page::default();
        }
    };
    for id in ids {
        let (files, units) = (index.postings(id), index.unit_postings(id));
        page.words.push(&words[id as usize]);
        page.ids.push(id);
        page.files.push(files);
        page.units.push(units);
        bytes += words[id as usize].len() + 5 * (files.len() + units.len());
        if bytes >= PAGE_BYTES {
            close(&mut page, body);
            bytes = 0;
        }
    }
    close(&mut page, body);
    firsts
}

/// `index`'s files in columns, each one's units appended to `body` as a block, where each
/// ends pushed to `ends`.
fn write_files(index: &Index, body: &mut Vec<u8>, ends: &mut Vec<u64>) -> Files {
    let mut files = Files::default();
    for f in index.files() {
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
        ends.push(push_block(body, &postcard_bytes(&units)));
        let unit_lens: Vec<u32> = f.units.iter().map(|u| u.len).collect();
        files.paths.push(&f.path);
        files.mtime_ns.push(f.mtime_ns);
        files.size.push(f.size);
        files.lines.push(f.lines);
        files.kind.push(f.kind);
        files.len.push(f.len);
        files.path_terms.push(&f.path_terms);
        files.def_terms.push(&f.def_terms);
        files.unit_lens.push(&unit_lens);
    }
    files
}

/// The walk's record with its files by number (see [`Head::record`]), and the paths past
/// the files'.
fn write_record(index: &Index, listing: &Listing) -> (listing::Saved, Texts) {
    let n = index.files().len();
    let mut at: HashMap<&str, u32> = index
        .files()
        .iter()
        .enumerate()
        .map(|(k, f)| (f.path.as_str(), k as u32))
        .collect();
    let mut others = Texts::default();
    for f in listing.files() {
        if !at.contains_key(f.rel.as_str()) {
            at.insert(&f.rel, (n + others.len()) as u32);
            others.push(&f.rel);
        }
    }
    let record = listing.saved(&|rel| at.get(rel).copied().unwrap_or(u32::MAX));
    (record, others)
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
    let mut ends = Vec::new();
    let firsts = write_pages(index, &mut body, &mut ends);
    let files = write_files(index, &mut body, &mut ends);
    let mut skipped: Vec<(String, i64, u64)> = skipped
        .iter()
        .map(|(p, &(m, s))| (p.clone(), m, s))
        .collect();
    skipped.sort();
    let (record, others) = write_record(index, listing);
    let head = Head {
        root: root.to_path_buf(),
        words: index.words().len() as u32,
        avg_len: index.avg_len(),
        files,
        skipped,
        others,
        firsts,
        ends,
        record,
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

/// Whether `head` is consistent in itself, its body `body_len` bytes long: its columns
/// whole, a block for each page and file, each ending after the one before with room for
/// its digest, the last at the body's end; no more words than the pages' bytes can hold;
/// every path and definition term a word; the other paths whole.
fn head_holds(head: &Head, body_len: u64) -> bool {
    let blocks = head.firsts.len() + head.files.count();
    let mut last = 0u64;
    let ordered = head.ends.iter().all(|&end| {
        let ok = last.checked_add(DIGEST_BYTES).is_some_and(|min| end >= min);
        last = end;
        ok
    });
    let pages_end = match head.firsts.len() {
        0 => 0,
        k => head.ends.get(k - 1).copied().unwrap_or(u64::MAX),
    };
    let page_bytes = pages_end.saturating_sub(head.firsts.len() as u64 * DIGEST_BYTES);
    ordered
        && head.ends.len() == blocks
        && last == body_len
        && u64::from(head.words) <= page_bytes / MIN_ENTRY_BYTES
        && head.files.holds(head.words)
        && head.avg_len.is_finite()
        && head.avg_len >= 1.0
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
        if !head_holds(&head, size - base) {
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

    /// The `k`th block's values, checked against its digest.
    fn block(&self, k: usize) -> Result<Vec<u8>, Damaged> {
        let (at, len) = self.head.block(k).ok_or(Damaged)?;
        let at = self.base.checked_add(at).ok_or(Damaged)?;
        let mut bytes =
            self.bytes
                .read(at, len.checked_add(DIGEST_BYTES).ok_or(Damaged)?, self.size)?;
        let digest = bytes.split_off(bytes.len() - DIGEST_BYTES as usize);
        if Sha256::digest(&bytes).as_slice() != digest {
            return Err(Damaged);
        }
        Ok(bytes)
    }

    /// The `k`th page, whole: each word's id within the dictionary and each posting within
    /// the files and their units.
    fn page(&self, k: usize) -> Result<Page, Damaged> {
        let page: Page = exact(&self.block(k)?)?;
        let files = &self.head.files;
        let unit_ok =
            |&(f, u, _): &(u32, u32, u32)| (u as usize) < files.unit_lens.get(f as usize).len();
        let n = page.words.len();
        let whole = page.ids.len() == n
            && page.files.len() == n
            && page.units.len() == n
            && page.ids.iter().all(|&id| id < self.head.words)
            && page
                .files
                .values
                .iter()
                .all(|&(f, _)| (f as usize) < files.count())
            && page.units.values.iter().all(unit_ok);
        if whole { Ok(page) } else { Err(Damaged) }
    }

    /// A file's units, as many as its head says, each running forward within the file.
    fn units(&self, f: usize) -> Result<Vec<SavedUnit>, Damaged> {
        let files = &self.head.files;
        let lines = *files.lines.get(f).ok_or(Damaged)?;
        let units: Vec<SavedUnit> = exact(&self.block(self.head.firsts.len() + f)?)?;
        // Within the file, as [`Index::is_whole`] has them (a unit may end on the line after
        // its last break): a line past the last could overflow a range.
        let words = self.head.words;
        let forward = units.iter().all(|u| {
            u.start <= u.end
                && u.end < u32::MAX
                && u.end <= lines.saturating_add(1)
                && u.name_term.is_none_or(|t| t < words)
        });
        if units.len() != files.unit_lens.get(f).len() || !forward {
            return Err(Damaged);
        }
        Ok(units)
    }
    /// The whole index, its files' and units' terms gathered from the pages (as many words
    /// as the head says, a number [`head_holds`] bounds by the pages' bytes).
    fn whole(self) -> Result<Whole, Damaged> {
        let head = &self.head;
        let n = head.files.count();
        let mut words: Vec<Option<String>> = vec![None; head.words as usize];
        let mut file_terms: Vec<Vec<(u32, u32)>> = vec![Vec::new(); n];
        let mut unit_terms: Vec<Vec<Vec<(u32, u32)>>> = (0..n)
            .map(|f| vec![Vec::new(); head.files.unit_lens.get(f).len()])
            .collect();
        for k in 0..head.firsts.len() {
            let page = self.page(k)?;
            for (e, &id) in page.ids.iter().enumerate() {
                let slot = words.get_mut(id as usize).ok_or(Damaged)?;
                let word = page.words.get(e).ok_or(Damaged)?;
                if slot.replace(word.to_string()).is_some() {
                    return Err(Damaged);
                }
                for &(f, c) in page.files.get(e) {
                    file_terms[f as usize].push((id, c));
                }
                for &(f, u, c) in page.units.get(e) {
                    unit_terms[f as usize][u as usize].push((id, c));
                }
            }
        }
        let words: Option<Vec<String>> = words.into_iter().collect();
        let words = words.ok_or(Damaged)?;
        let mut files = Vec::with_capacity(n);
        for (f, mut terms) in file_terms.into_iter().enumerate() {
            terms.sort_unstable();
            files.push(self.file_entry(f, terms, std::mem::take(&mut unit_terms[f]))?);
        }
        let skipped = head
            .skipped
            .iter()
            .map(|(p, m, s)| (p.clone(), (*m, *s)))
            .collect();
        let listing = head
            .record
            .listing(&|p| head.record_path(p))
            .ok_or(Damaged)?;
        Ok(Whole {
            format: self.format,
            root: head.root.clone(),
            index: Index::from_parts(words, files),
            skipped,
            listing,
        })
    }

    /// File `f` whole, with its `terms` and its units' (read from its block).
    fn file_entry(
        &self,
        f: usize,
        terms: Vec<(u32, u32)>,
        unit_terms: Vec<Vec<(u32, u32)>>,
    ) -> Result<FileEntry, Damaged> {
        let h = &self.head.files;
        let units = self
            .units(f)?
            .into_iter()
            .zip(unit_terms)
            .zip(h.unit_lens.get(f))
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
        Ok(FileEntry {
            path: h.path(f).to_string(),
            mtime_ns: h.mtime_ns[f],
            size: h.size[f],
            lines: h.lines[f],
            kind: h.kind[f],
            terms,
            len: h.len[f],
            path_terms: h.path_terms.get(f).to_vec(),
            def_terms: h.def_terms.get(f).to_vec(),
            units,
        })
    }
}

/// What [`encode`] wrote, read back whole, when every check holds.
pub(crate) fn decode(bytes: &[u8]) -> Option<Whole> {
    Opened::open(Bytes::Memory(bytes), bytes.len() as u64)
        .and_then(Opened::whole)
        .ok()
}

/// A saved index read on demand: its head in memory, its pages and units read when asked
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

    /// Whether the index is fresh: the walk it recorded still holds by stats alone
    /// ([`listing::Saved::replays`]), and the files of it `visible` shows (by path and size)
    /// are exactly the files indexed or skipped, each once, with the stamps they were read
    /// at.
    pub(crate) fn is_fresh(&self, root: &Path, visible: &dyn Fn(&str, u64) -> bool) -> bool {
        let head = &self.opened.head;
        let path = |p: u32| head.record_path(p);
        let files = &head.files;
        let mut indexed = vec![false; files.count()];
        let mut skipped = vec![false; head.skipped.len()];
        let shown_once = head.record.files().iter().all(|&(p, stamp)| {
            let Some(rel) = path(p) else { return false };
            let shown = visible(rel, stamp.size);
            let stamps = (stamp.mtime_ns, stamp.size);
            let f = p as usize;
            if f < files.count() {
                let was = std::mem::replace(&mut indexed[f], true);
                shown && !was && (files.mtime_ns[f], files.size[f]) == stamps
            } else if shown {
                let at = head
                    .skipped
                    .binary_search_by(|(q, _, _)| q.as_str().cmp(rel));
                at.is_ok_and(|k| {
                    let (_, m, s) = head.skipped[k];
                    !std::mem::replace(&mut skipped[k], true) && (m, s) == stamps
                })
            } else {
                true
            }
        });
        shown_once
            && indexed.iter().all(|&x| x)
            && skipped.iter().all(|&x| x)
            && head.record.replays(root, &path)
    }
}

impl Source for Lazy {
    fn file_count(&self) -> usize {
        self.opened.head.files.count()
    }
    fn avg_len(&self) -> f64 {
        self.opened.head.avg_len
    }
    fn path(&self, f: usize) -> &str {
        self.opened.head.files.path(f)
    }
    fn kind(&self, f: usize) -> Kind {
        self.opened.head.files.kind[f]
    }
    fn terms_len(&self, f: usize) -> u32 {
        self.opened.head.files.len[f]
    }
    fn lines(&self, f: usize) -> u32 {
        self.opened.head.files.lines[f]
    }
    fn path_terms(&self, f: usize) -> &[u32] {
        self.opened.head.files.path_terms.get(f)
    }
    fn def_terms(&self, f: usize) -> &[u32] {
        self.opened.head.files.def_terms.get(f)
    }
    fn unit_len(&self, f: usize, u: usize) -> u32 {
        self.opened.head.files.unit_lens.get(f)[u]
    }
    fn posted(&self, term: &str) -> Result<Option<Posted>, Damaged> {
        let firsts = &self.opened.head.firsts;
        let at = partition(firsts.len(), |k| firsts.get(k).unwrap_or_default() <= term);
        let Some(k) = at.checked_sub(1) else {
            return Ok(None);
        };
        let page = self.opened.page(k)?;
        let words = &page.words;
        let e = partition(words.len(), |e| words.get(e).unwrap_or_default() < term);
        if words.get(e) != Some(term) {
            return Ok(None);
        }
        Ok(Some(Posted {
            id: page.ids[e],
            files: page.files.get(e).to_vec(),
            units: page.units.get(e).to_vec(),
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

/// The first of `0..n` for which `before` is false, `before` true for a start of them and
/// false after (a binary search).
fn partition(n: usize, before: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if before(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
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
        reheaded(bytes, |head, _| {
            let terms = &mut head.files.path_terms;
            terms.values.insert(0, head.words);
            for end in &mut terms.ends {
                *end += 1;
            }
        })
    }

    /// `pages` more pages, all on the last page's block: their blocks end where it does
    /// (each would be read again, as long as it).
    pub(crate) fn pages_on_one_block(bytes: &[u8], pages: usize) -> Vec<u8> {
        reheaded(bytes, |head, _| {
            let last = head.firsts.len() - 1;
            let end = head.ends[last];
            for _ in 0..pages {
                head.firsts.push("\u{10ffff}");
            }
            let at = last + 1;
            head.ends.splice(at..at, std::iter::repeat_n(end, pages));
        })
    }

    /// A zero byte after the values of the last block, its digest right.
    pub(crate) fn byte_after_last_block(bytes: &[u8]) -> Vec<u8> {
        reheaded(bytes, |head, body| {
            let last = head.ends.len() - 1;
            let (at, len) = head.block(last).unwrap();
            let mut values = body[at as usize..(at + len) as usize].to_vec();
            values.push(0);
            body.truncate(at as usize);
            head.ends[last] = push_block(body, &values);
        })
    }

    /// The number of the path `rel` in the record.
    fn number(head: &Head, rel: &str) -> u32 {
        let all = head.files.count() + head.others.len();
        (0..all as u32)
            .find(|&p| head.record_path(p) == Some(rel))
            .unwrap()
    }

    /// The walk's record with the file at `from` grouped with the one at `to`, with its
    /// stamps, and the index holding those stamps for `from`: a replay stats `to` for it.
    pub(crate) fn record_file_posing_as(bytes: &[u8], from: &str, to: &str) -> Vec<u8> {
        reheaded(bytes, |head, _| {
            let (from, to) = (number(head, from), number(head, to));
            head.record.pose_as(from, to);
            let stamp = head.record.stamp(to);
            head.files.mtime_ns[from as usize] = stamp.mtime_ns;
            head.files.size[from as usize] = stamp.size;
        })
    }

    /// The walk's record without the file at `rel`.
    pub(crate) fn record_without(bytes: &[u8], rel: &str) -> Vec<u8> {
        reheaded(bytes, |head, _| head.record.drop_file(number(head, rel)))
    }

    /// The walk's record naming the file at `rel` twice, in place of the one at `instead`.
    pub(crate) fn record_twice(bytes: &[u8], rel: &str, instead: &str) -> Vec<u8> {
        reheaded(bytes, |head, _| {
            let (p, q) = (number(head, rel), number(head, instead));
            head.record.twice(p, q);
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
        assert!(lazy.opened.head.firsts.len() > 3, "several pages");
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
            ("pages on one block", forge::pages_on_one_block(&good, 3)),
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

    /// A root with files in two directories (two of one name and size), a binary and a
    /// file the filter hides, walked once its stamps are settled; its index (the binary
    /// skipped, the hidden file left out) and skipped files, and the walk's record.
    fn saved_root() -> (tempfile::TempDir, Index, Skipped, Listing) {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let files: [(&str, &[u8]); 5] = [
            ("a/x.py", b"def alpha():\n    pass\n"),
            ("b/x.py", b"def bravo():\n    pass\n"),
            ("main.go", b"package main\n"),
            ("logo.png", b"\x89PNG\0\0binary"),
            ("hidden.py", b"def hidden():\n    pass\n"),
        ];
        for (rel, text) in files {
            std::fs::create_dir_all(d.join(rel).parent().unwrap()).unwrap();
            std::fs::write(d.join(rel), text).unwrap();
        }
        // Past the record's margin for a stamp too close to its walk.
        std::thread::sleep(std::time::Duration::from_millis(120));
        let listing = listing::walk(d);
        let mut ix = Index::new();
        let mut skipped = Skipped::new();
        for f in listing.files().iter().filter(|f| f.rel != "hidden.py") {
            let text = std::fs::read(d.join(&f.rel)).unwrap();
            let (mtime, size) = (f.stamp.mtime_ns, f.stamp.size);
            match std::str::from_utf8(&text)
                .ok()
                .filter(|t| !t.contains('\0'))
            {
                Some(text) => ix.add(&f.rel, mtime, size, text),
                None => drop(skipped.insert(f.rel.clone(), (mtime, size))),
            }
        }
        ix.finish();
        (dir, ix, skipped, listing)
    }

    /// Fresh is: the walk's record holds by stats, and the files of it a search shows are
    /// exactly those indexed or skipped, each once, with the stamps they were read at. A
    /// record forged to leave a file out, to name one twice in place of another, or to
    /// group a file with another of its name elsewhere (stating that one for it), is not.
    #[test]
    fn fresh_means_the_record_holds_and_shows_the_files_indexed() {
        let (dir, ix, skipped, listing) = saved_root();
        let root = dir.path();
        let state = tempfile::tempdir().unwrap();
        let file = state.path().join("ix.index");
        let fresh = |bytes: &[u8], shown: &dyn Fn(&str, u64) -> bool| {
            std::fs::write(&file, bytes).unwrap();
            Lazy::open(&file, 7, root).unwrap().is_fresh(root, shown)
        };
        let hides = |rel: &str, _: u64| rel != "hidden.py";
        let good = encode(7, root, &ix, &skipped, &listing);
        assert!(fresh(&good, &hides));
        assert!(
            !fresh(&good, &|_, _| true),
            "a file hidden when indexed, shown"
        );
        let hidden_too =
            |also: &'static str| move |rel: &str, _: u64| rel != "hidden.py" && rel != also;
        assert!(
            !fresh(&good, &hidden_too("main.go")),
            "an indexed file hidden"
        );
        assert!(
            !fresh(&good, &hidden_too("logo.png")),
            "a skipped file hidden"
        );
        let unskipped = encode(7, root, &ix, &Skipped::new(), &listing);
        assert!(!fresh(&unskipped, &hides), "a skipped file not skipped");
        let mut other = decode(&good).unwrap().index;
        other.files_mut()[0].mtime_ns += 1;
        other.finish();
        let restamped = encode(7, root, &other, &skipped, &listing);
        assert!(!fresh(&restamped, &hides), "an index of other stamps");
        for (what, bytes) in [
            ("a file left out", forge::record_without(&good, "main.go")),
            (
                "a file twice",
                forge::record_twice(&good, "logo.png", "main.go"),
            ),
            (
                "a file grouped with another",
                forge::record_file_posing_as(&good, "a/x.py", "b/x.py"),
            ),
        ] {
            assert!(!fresh(&bytes, &hides), "{what}");
        }
    }
}
