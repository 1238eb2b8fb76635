//! What ranking reads of an index, wherever it is: the index in memory ([`Index`]), or the
//! saved one read on demand ([`super::disk::Lazy`]: its file heads whole, a query term's
//! postings and a hit's units only when asked for).

use super::index::{Index, Kind};

/// A block of a saved index that failed its checks (digest, bounds): the index is rebuilt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Damaged;

/// A term's postings: the files that hold it and the units that do.
#[derive(Debug, Clone, Default)]
pub(crate) struct Posted {
    /// The term id.
    pub id: u32,
    /// (file, count), by file.
    pub files: Vec<(u32, u32)>,
    /// (file, unit, count), by file then unit.
    pub units: Vec<(u32, u32, u32)>,
}

/// A unit's lines and the name it defines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Span {
    /// First line, 0-based.
    pub start: u32,
    /// One past the last line.
    pub end: u32,
    /// The name it defines.
    pub name: Option<String>,
}

/// An index as ranking reads it. File numbers and unit numbers a source hands out (in
/// [`Posted`]) are within its files and their units.
pub(crate) trait Source {
    /// The number of files.
    fn file_count(&self) -> usize;
    /// The mean number of terms in a file.
    fn avg_len(&self) -> f64;
    /// A file's root-relative path.
    fn path(&self, f: usize) -> &str;
    /// What a file is.
    fn kind(&self, f: usize) -> Kind;
    /// A file's number of terms.
    fn terms_len(&self, f: usize) -> u32;
    /// A file's number of lines.
    fn lines(&self, f: usize) -> u32;
    /// A file's path's term ids, sorted.
    fn path_terms(&self, f: usize) -> &[u32];
    /// The term ids of the names a file defines, sorted.
    fn def_terms(&self, f: usize) -> &[u32];
    /// The number of terms in a unit of a file.
    fn unit_len(&self, f: usize, u: usize) -> u32;
    /// A term's postings, when any file holds it.
    fn posted(&self, term: &str) -> Result<Option<Posted>, Damaged>;
    /// A file's units.
    fn spans(&self, f: usize) -> Result<Vec<Span>, Damaged>;
}

impl Source for Index {
    fn file_count(&self) -> usize {
        self.len()
    }
    fn avg_len(&self) -> f64 {
        Index::avg_len(self)
    }
    fn path(&self, f: usize) -> &str {
        &self.files()[f].path
    }
    fn kind(&self, f: usize) -> Kind {
        self.files()[f].kind
    }
    fn terms_len(&self, f: usize) -> u32 {
        self.files()[f].len
    }
    fn lines(&self, f: usize) -> u32 {
        self.files()[f].lines
    }
    fn path_terms(&self, f: usize) -> &[u32] {
        &self.files()[f].path_terms
    }
    fn def_terms(&self, f: usize) -> &[u32] {
        &self.files()[f].def_terms
    }
    fn unit_len(&self, f: usize, u: usize) -> u32 {
        self.files()[f].units[u].len
    }
    fn posted(&self, term: &str) -> Result<Option<Posted>, Damaged> {
        Ok(self.term(term).map(|id| Posted {
            id,
            files: self.postings(id).to_vec(),
            units: self.unit_postings(id).to_vec(),
        }))
    }
    fn spans(&self, f: usize) -> Result<Vec<Span>, Damaged> {
        Ok(self.files()[f]
            .units
            .iter()
            .map(|u| Span {
                start: u.start,
                end: u.end,
                name: u.name.clone(),
            })
            .collect())
    }
}
