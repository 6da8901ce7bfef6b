use std::path::PathBuf;

use thiserror::Error;

/// Why raw text could not be read, tokenised or turned into a bag-of-words corpus.
///
/// Every error about a file's content names the file and, where there is one, the (1-based) line.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum TextError {
    /// A file or directory could not be opened or read.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A line (or a whole-file document) that is not valid UTF-8.
    #[error("{}: line {line} is not valid UTF-8", path.display())]
    NotUtf8 {
        /// The file.
        path: PathBuf,
        /// 1-based line number (1 for a whole-file document).
        line: usize,
    },
    /// A document longer than [`TextLimits::max_document_bytes`](super::TextLimits).
    #[error("{}: line {line}: document longer than {limit} bytes (TextLimits::max_document_bytes)", path.display())]
    DocumentTooLong {
        /// The file.
        path: PathBuf,
        /// 1-based line number (1 for a whole-file document).
        line: usize,
        /// The limit in bytes.
        limit: usize,
    },
    /// The input (one file, or all files of a directory together) is larger than
    /// [`TextLimits::max_total_bytes`](super::TextLimits); checked from the file sizes before
    /// reading.
    #[error("{}: input of {size} bytes is larger than {limit} bytes (TextLimits::max_total_bytes)", path.display())]
    InputTooLarge {
        /// The file (or the directory).
        path: PathBuf,
        /// The size found (bytes).
        size: u64,
        /// The limit in bytes.
        limit: u64,
    },
    /// More documents than [`TextLimits::max_documents`](super::TextLimits).
    #[error("{}: line {line}: more than {limit} documents (TextLimits::max_documents)", path.display())]
    TooManyDocuments {
        /// The file holding the first document over the limit.
        path: PathBuf,
        /// Its 1-based line number.
        line: usize,
        /// The limit.
        limit: usize,
    },
    /// More tokens in total than [`TextLimits::max_tokens`](super::TextLimits).
    #[error("{}: line {line}: more than {limit} tokens in total (TextLimits::max_tokens)", path.display())]
    TooManyTokens {
        /// The file holding the document that crossed the limit.
        path: PathBuf,
        /// Its 1-based line number.
        line: usize,
        /// The limit.
        limit: u64,
    },
    /// No document has a single token (an empty file, blank lines only, only stop words, or a
    /// directory without `.txt` files).
    #[error("{}: empty corpus: {reason}", path.display())]
    EmptyCorpus {
        /// The file or directory.
        path: PathBuf,
        /// What was found instead.
        reason: &'static str,
    },
    /// A bag-of-words conversion over an empty vocabulary, or one that left no document with a
    /// known word.
    #[error("no document has a word of the vocabulary ({vocab_size} words)")]
    NoKnownWords {
        /// The vocabulary's size.
        vocab_size: usize,
    },
    /// Building a corpus document failed (a count over `u32::MAX`).
    #[error(transparent)]
    Corpus(#[from] crate::lda::corpus::CorpusError),
}
