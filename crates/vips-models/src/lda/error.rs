use thiserror::Error;

use crate::lda::corpus::CorpusError;

/// Errors of the LDA model.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum LdaError {
    /// A setting is out of range.
    #[error("invalid {name} = {value}: {reason}")]
    InvalidParameter {
        /// Parameter name.
        name: &'static str,
        /// The value given.
        value: f64,
        /// Why it is refused.
        reason: &'static str,
    },
    /// No documents.
    #[error("empty input: {0}")]
    Empty(&'static str),
    /// A document uses a word outside the model's vocabulary.
    #[error("unknown word id {word} (vocabulary has {vocab_size} words)")]
    UnknownWord {
        /// The word id.
        word: u32,
        /// The model's `V`.
        vocab_size: usize,
    },
    /// A corpus error (resampling, loading).
    #[error(transparent)]
    Corpus(#[from] CorpusError),
    /// A Dirichlet computation of `expfam` refused its input (a non-positive or non-finite
    /// variational parameter).
    #[error(transparent)]
    ExpFam(#[from] expfam::ExpFamError),
    /// A record store that cannot be read or does not fit the model.
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    /// A size over a documented limit (see [`crate::limits`]).
    #[error(transparent)]
    Limit(#[from] crate::limits::LimitError),
}
