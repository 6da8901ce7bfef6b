//! The store's error type.

use std::path::PathBuf;

use thiserror::Error;

/// What can go wrong writing or reading a record store. Every variant names the file.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The operating system refused a read or a write.
    #[error("record store `{}`: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The file does not start with the store's magic bytes.
    #[error("`{}` is not a record store (no `DPBSTOR` magic)", path.display())]
    NotAStore {
        /// The file.
        path: PathBuf,
    },
    /// The file was written by a newer format version.
    #[error(
        "record store `{}` has format version {found}; this build reads up to {supported}",
        path.display()
    )]
    NewerVersion {
        /// The file.
        path: PathBuf,
        /// Its version.
        found: u32,
        /// The newest version this build reads.
        supported: u32,
    },
    /// The file is truncated, or its header, table or payloads are inconsistent.
    #[error("record store `{}` is corrupt or truncated: {reason}", path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong (a fixed text).
        reason: &'static str,
    },
    /// The store holds another kind of record than the caller reads.
    #[error("record store `{}` holds {found:?} records, expected {expected:?}", path.display())]
    WrongKind {
        /// The file.
        path: PathBuf,
        /// The kind needed.
        expected: super::RecordKind,
        /// The kind found.
        found: super::RecordKind,
    },
    /// The store's dimension does not fit the model.
    #[error(
        "record store `{}` has dimension {found}, which does not fit the model's {model}",
        path.display()
    )]
    Dimension {
        /// The file.
        path: PathBuf,
        /// The store's dimension.
        found: u64,
        /// The model's.
        model: usize,
    },
    /// A record given to the writer is invalid (the converter's input, with its line).
    #[error("record store `{}`: record {record} refused: {reason}", path.display())]
    BadRecord {
        /// The store being written.
        path: PathBuf,
        /// Zero-based record number in the input (the data owner's own input: not released).
        record: u64,
        /// What is wrong (a fixed text).
        reason: &'static str,
    },
    /// Converting the input failed (its parser's error, naming the input file and line).
    #[error(transparent)]
    Input(#[from] crate::lda::corpus::CorpusError),
    /// Converting raw text failed (the text reader's error, naming the file and line, or no
    /// document with a word of the vocabulary).
    #[error(transparent)]
    Text(#[from] crate::lda::text::TextError),
    /// Converting a BLR input failed (the LIBSVM reader's error, naming the file and line).
    #[error(transparent)]
    Blr(#[from] crate::blr::BlrError),
    /// Converting an SBN input failed (the IDX reader's error, naming the file).
    #[error(transparent)]
    Sbn(Box<crate::sbn::SbnError>),
}
