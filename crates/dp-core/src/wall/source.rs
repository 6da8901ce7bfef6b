//! Records the wall reads by index instead of holding them: [`RecordSource`].
//!
//! A wall built with [`super::PrivacyWall::from_source`] holds no record. Each release draws
//! its batch of record **indices** with the wall's sampler (the same draws, from the same
//! stream, as a wall holding a `Vec` of the same length), asks the source for exactly those
//! records ([`RecordSource::read_batch`]), sums their clipped statistics as the in-memory wall
//! does (the same additions in the same order, so a seeded release is bit-identical to the
//! in-memory one) and drops them. Memory is the batch plus the release, not the corpus.
//!
//! The file format of a source on disk lives above dp-core (`vips_models::store`); dp-core does
//! no file I/O itself.

use std::path::PathBuf;

use thiserror::Error;

/// Why one record could not be read from a [`RecordSource`].
///
/// # Privacy
/// Neither variant carries a value derived from a record (no index, no content): the texts are
/// fixed or name the file.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum SourceError {
    /// The record's bytes could not be read (the operating system's error kind; the file is
    /// named). The wall aborts the release: nothing is released, and a private release is
    /// charged anyway (see [`super::PrivacyWall::from_source`]).
    #[error("record source `{}`: read failed ({kind})", file.display())]
    Io {
        /// The file read from.
        file: PathBuf,
        /// What the operating system reported.
        kind: std::io::ErrorKind,
    },
    /// The record's bytes were read but do not decode to a valid record (a corrupt payload, a
    /// value outside the declared ranges) or its per-record transform failed. Treated as a
    /// malformed contribution: replaced by zero in a private release (counted), an error in a
    /// non-private one.
    #[error("record source: unusable record: {reason}")]
    Record {
        /// What was wrong (a fixed text).
        reason: &'static str,
    },
}

/// Records readable by index: what a wall built with [`super::PrivacyWall::from_source`]
/// draws its batches from.
///
/// # Privacy
/// [`Self::len`] is the realised record count: private under add/remove-one (Poisson sampling),
/// exactly as [`super::PrivacyWall::population`]. Declare the public `N` on the builder
/// ([`super::WallBuilder::public_population_size`]). `read` must return a function of the
/// stored record alone (a per-record transform), never of other records or of the index's
/// neighbourhood, for the wall's neighbouring relation to carry over from the stored records.
///
/// # Example
/// ```
/// use dp_core::{RecordSource, SourceError};
/// /// The squares of 0..n, computed on demand.
/// struct Squares(usize);
/// impl RecordSource for Squares {
///     type Record = f64;
///     fn len(&self) -> usize { self.0 }
///     fn read(&self, index: usize) -> Result<f64, SourceError> { Ok((index * index) as f64) }
/// }
/// let mut out = Vec::new();
/// Squares(10).read_batch(&[1, 3], &mut out);
/// assert_eq!(out, vec![Ok(1.0), Ok(9.0)]);
/// ```
pub trait RecordSource: Send + Sync {
    /// The record type handed to the statistic.
    type Record;

    /// Number of records (indices `0..len()`).
    fn len(&self) -> usize;

    /// Whether there is no record.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Record `index` (`index < len()`).
    ///
    /// # Errors
    /// [`SourceError::Io`] when its bytes cannot be read, [`SourceError::Record`] when they do
    /// not make a valid record.
    fn read(&self, index: usize) -> Result<Self::Record, SourceError>;

    /// Reads `indices` (increasing) into `out`, one result per index, in order (`out` is
    /// cleared first). The default reads one after the other; a source whose records cost
    /// work to decode or transform may read in parallel, keeping the order.
    fn read_batch(&self, indices: &[usize], out: &mut Vec<Result<Self::Record, SourceError>>) {
        out.clear();
        out.extend(indices.iter().map(|&i| self.read(i)));
    }
}

/// A `Vec` is a source of its own elements (cloned). The wall's in-memory path does not go
/// through this: it reads the records it holds in place.
impl<R: Clone + Send + Sync> RecordSource for Vec<R> {
    type Record = R;

    fn len(&self) -> usize {
        <[R]>::len(self)
    }

    fn read(&self, index: usize) -> Result<R, SourceError> {
        self.get(index).cloned().ok_or(SourceError::Record {
            reason: "index past the end of the records",
        })
    }
}

/// The wall's records: held, or read per batch from a source.
pub(super) enum Records<R> {
    /// Every record in memory.
    Memory(Vec<R>),
    /// Read per batch, a slice at a time; a slice's records live only while it is summed.
    Source(SourcedBatch<R>),
}

impl<R> Records<R> {
    pub(super) fn len(&self) -> usize {
        match self {
            Self::Memory(v) => v.len(),
            Self::Source(s) => s.source.len(),
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A source and the memory of the batch read from it.
pub(super) struct SourcedBatch<R> {
    source: Box<dyn RecordSource<Record = R>>,
    /// The current slice's records (`None`: unusable, replaced by zero), in batch order.
    fetched: Vec<Option<R>>,
    /// `0..fetched.len()`: the batch's positions in `fetched`.
    positions: Vec<usize>,
    /// The results of the last `read_batch`.
    results: Vec<Result<R, SourceError>>,
}

impl<R> SourcedBatch<R> {
    pub(super) fn new(source: Box<dyn RecordSource<Record = R>>) -> Self {
        Self {
            source,
            fetched: Vec::new(),
            positions: Vec::new(),
            results: Vec::new(),
        }
    }

    /// Reads the records of `batch` (record indices) in order. An unusable record is kept as
    /// `None` (the statistic rejects it); a failed read fails the whole batch.
    ///
    /// # Errors
    /// The first [`SourceError::Io`].
    pub(super) fn fetch(
        &mut self,
        batch: &[usize],
    ) -> Result<(&[Option<R>], &[usize]), SourceError> {
        self.fetched.clear();
        self.source.read_batch(batch, &mut self.results);
        if self.results.len() != batch.len() {
            self.results.clear();
            return Err(SourceError::Record {
                reason: "the source returned a batch of the wrong length",
            });
        }
        for r in self.results.drain(..) {
            match r {
                Ok(record) => self.fetched.push(Some(record)),
                Err(SourceError::Record { .. }) => self.fetched.push(None),
                // Dropping the drain empties `results`.
                Err(e) => return Err(e),
            }
        }
        if self.positions.len() != self.fetched.len() {
            self.positions.clear();
            self.positions.extend(0..self.fetched.len());
        }
        Ok((&self.fetched, &self.positions))
    }

    /// Drops the batch's records (their memory is kept for the next batch).
    pub(super) fn clear(&mut self) {
        self.fetched.clear();
    }
}

/// The reason a record the source could not decode is replaced by zero.
pub(super) const UNREADABLE: &str = "the record source could not decode the record";
