//! Errors of the sigmoid belief network.

use thiserror::Error;

use crate::engine::EngineError;

/// Errors of the SBN model, its data loaders and its evaluation.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum SbnError {
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
    /// No images.
    #[error("empty input: {0}")]
    Empty(&'static str),
    /// An image has the wrong number of pixels.
    #[error("image {index} has {found} pixels, the model expects {expected}")]
    DimensionMismatch {
        /// Index of the image.
        index: usize,
        /// The model's `J`.
        expected: usize,
        /// The image's length.
        found: usize,
    },
    /// A pixel is not 0 or 1.
    #[error("image {index} has a non-binary pixel value {value}")]
    NotBinary {
        /// Index of the image.
        index: usize,
        /// The offending value.
        value: u8,
    },
    /// An IDX file is missing, truncated or malformed.
    #[error("IDX file {path}: {reason}")]
    Idx {
        /// The file.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// An IDX file could not be opened or read (`context` says which: `"cannot read: "`,
    /// `"bad gzip stream: "`, or empty when the file cannot be opened).
    #[error("IDX file {path}: {context}{source}")]
    IdxIo {
        /// The file.
        path: String,
        /// What was being read.
        context: &'static str,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// An IDX file's header implies more memory than the machine has.
    #[error("IDX file {path}: {source}")]
    IdxLimit {
        /// The file.
        path: String,
        /// The limit that refused it.
        #[source]
        source: crate::limits::LimitError,
    },
    /// The engine refused the fit.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// A size over a documented limit (see [`crate::limits`]).
    #[error(transparent)]
    Limit(#[from] crate::limits::LimitError),
    /// A record store that cannot be read or does not fit the model.
    #[error(transparent)]
    Store(Box<crate::store::StoreError>),
}

impl SbnError {
    pub(crate) fn invalid(name: &'static str, value: f64, reason: &'static str) -> Self {
        Self::InvalidParameter {
            name,
            value,
            reason,
        }
    }
}
