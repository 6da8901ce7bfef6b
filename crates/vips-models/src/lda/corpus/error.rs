use std::path::PathBuf;

use thiserror::Error;

/// Why a corpus could not be loaded or built.
///
/// Every error about a file's content names the (1-based) line it was found on.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum CorpusError {
    /// The file could not be opened or read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A line is not of the expected form.
    #[error("line {line}: {reason}")]
    Parse {
        /// 1-based line number.
        line: usize,
        /// What was wrong.
        reason: String,
    },
    /// A word id outside `1..=W`.
    #[error("line {line}: word id {word} outside 1..={vocab_size}")]
    WordOutOfRange {
        /// 1-based line number.
        line: usize,
        /// The offending id (as written, 1-based).
        word: i64,
        /// The declared vocabulary size.
        vocab_size: usize,
    },
    /// A document id outside `1..=D`.
    #[error("line {line}: document id {doc} outside 1..={num_docs}")]
    DocOutOfRange {
        /// 1-based line number.
        line: usize,
        /// The offending id (as written, 1-based).
        doc: i64,
        /// The declared number of documents.
        num_docs: usize,
    },
    /// A count that is zero or negative.
    #[error("line {line}: count {count} is not positive")]
    BadCount {
        /// 1-based line number.
        line: usize,
        /// The count as written.
        count: i64,
    },
    /// Entries not sorted by (document, word), or a pair that appears twice.
    #[error("line {line}: entries must be sorted by document then word without repeats")]
    Unsorted {
        /// 1-based line number.
        line: usize,
    },
    /// A document with no words.
    #[error("line {line}: document {doc} has no words")]
    EmptyDocument {
        /// The line where the gap was detected (the next document's first line, or the end).
        line: usize,
        /// The empty document's id (1-based).
        doc: usize,
    },
    /// The file ended before the number of entries its header declares.
    #[error("line {line}: file truncated: header declares {expected} entries, found {found}")]
    Truncated {
        /// The last line read.
        line: usize,
        /// Entries declared (NNZ).
        expected: usize,
        /// Entries found.
        found: usize,
    },
    /// More entries than the header declares.
    #[error("line {line}: more entries than the {expected} the header declares")]
    TooManyEntries {
        /// 1-based line number.
        line: usize,
        /// Entries declared (NNZ).
        expected: usize,
    },
    /// Two files of one corpus disagree (vocabulary sizes).
    #[error("{0}")]
    Mismatch(String),
    /// A parameter of a constructor is out of range.
    #[error("invalid {name} = {value}: {reason}")]
    InvalidParameter {
        /// Parameter name.
        name: &'static str,
        /// The value given.
        value: f64,
        /// Why it is refused.
        reason: &'static str,
    },
    /// A document given directly (not read from a file) is malformed.
    #[error("invalid document: {0}")]
    InvalidDocument(String),
    /// An error inside a named file (the inner error names the line).
    #[error("{}: {source}", path.display())]
    InFile {
        /// The file.
        path: PathBuf,
        /// What was wrong.
        #[source]
        source: Box<CorpusError>,
    },
    /// A corrupt gzip stream (reported instead of whatever the garbled text would have caused).
    #[error("{}: bad gzip stream: {source}", path.display())]
    Gzip {
        /// The file.
        path: PathBuf,
        /// The decoder's error.
        #[source]
        source: std::io::Error,
    },
    /// A size over a documented limit (see [`crate::limits`]).
    #[error(transparent)]
    Limit(#[from] crate::limits::LimitError),
    /// A setting that would have no effect (e.g. a resampling seed without a fixed document
    /// length); the caller names its flag.
    #[error("{setting} {reason}")]
    NoEffect {
        /// The setting ([`super::Preparation`]'s field name).
        setting: &'static str,
        /// Why it has no effect.
        reason: &'static str,
    },
    /// The operating system could not provide entropy for a secret key.
    #[error("no OS entropy for the resampling key: {0}")]
    Entropy(#[source] rand::rngs::SysError),
}
