//! Errors of the sigmoid belief network.

use thiserror::Error;

use crate::engine::EngineError;

/// Errors of the SBN model, its data loaders and its evaluation.
#[derive(Debug, Error)]
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
    #[error("image {index} has {len} pixels, the model expects {expected}")]
    WrongDimension {
        /// Index of the image.
        index: usize,
        /// Its length.
        len: usize,
        /// The model's `J`.
        expected: usize,
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
    /// The engine refused the fit.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// A size over a documented limit (see [`crate::limits`]).
    #[error(transparent)]
    Limit(#[from] crate::limits::LimitError),
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
