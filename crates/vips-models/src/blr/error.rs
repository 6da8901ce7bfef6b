use thiserror::Error;

use crate::engine::EngineError;

/// Errors of Bayesian logistic regression: settings, records, files, fitting.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum BlrError {
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
    /// No records, no features, or a split that leaves a side empty.
    #[error("empty input: {0}")]
    Empty(&'static str),
    /// A ranges file that declares no range for some feature columns.
    #[error("empty input: no range for the feature column(s) {columns}")]
    MissingRanges {
        /// The columns without a range (names from the public header, shortened).
        columns: String,
    },
    /// A record or a scaling does not match the model's dimension.
    #[error("dimension mismatch in {what}: expected {expected}, found {found}")]
    DimensionMismatch {
        /// What was compared.
        what: &'static str,
        /// The expected length.
        expected: usize,
        /// The length found.
        found: usize,
    },
    /// A value that is NaN or infinite.
    #[error("non-finite value in {0}")]
    NonFinite(&'static str),
    /// A feature that is not finite after the public scaling (its value is too large for its
    /// declared range).
    #[error(
        "non-finite value in feature {feature} after the public scaling (value too large for its range)"
    )]
    NonFiniteFeature {
        /// The feature's 1-based position.
        feature: usize,
    },
    /// A model that is not valid (a posterior that is not finite).
    #[error("invalid model: {0}")]
    Invalid(#[from] crate::saved::InvalidModel),
    /// A malformed line of an input file (1-based line number).
    #[error("line {line}: {reason}")]
    Parse {
        /// 1-based line number in the file.
        line: usize,
        /// What is wrong with it.
        reason: String,
    },
    /// A file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The path.
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// An error while loading a file, with the file's path (the inner error names the line).
    #[error("{path}: {source}")]
    InFile {
        /// The path.
        path: String,
        /// What went wrong (usually [`BlrError::Parse`] with the line).
        #[source]
        source: Box<BlrError>,
    },
    /// A private run needs a public setting that was not declared.
    #[error("a private run needs the {what} declared as a public figure ({flag}): {reason}")]
    Undeclared {
        /// What is missing.
        what: &'static str,
        /// The option that declares it.
        flag: &'static str,
        /// Why it cannot come from the data.
        reason: &'static str,
    },
    /// A posterior computation of `expfam` refused its input (a precision that is not positive
    /// definite, a non-finite parameter).
    #[error("posterior: {0}")]
    Posterior(#[from] expfam::ExpFamError),
    /// A precision matrix of the Gibbs sampler is not positive definite (or its Cholesky factor
    /// is singular).
    #[error("posterior: {0}")]
    NotPositiveDefinite(&'static str),
    /// The Pólya-Gamma sampler refused its parameters.
    #[error("posterior: {0}")]
    PolyaGamma(#[from] polya_gamma::Error),
    /// Clipping a record into the unit ball failed (a non-finite feature).
    #[error("non-finite value in {0}")]
    Clip(#[source] dp_core::CoreError),
    /// The VIPS engine refused or failed.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// A size over a documented limit (see [`crate::limits`]).
    #[error(transparent)]
    Limit(#[from] crate::limits::LimitError),
    /// The labels leave one class empty: nothing to learn, and a held-out score would be
    /// meaningless (an accuracy of 1 for predicting the constant).
    #[error("degenerate labels: {0}")]
    DegenerateLabels(String),
    /// A record store that cannot be read or does not fit the model.
    #[error(transparent)]
    Store(Box<crate::store::StoreError>),
}

impl BlrError {
    pub(crate) fn invalid(name: &'static str, value: f64, reason: &'static str) -> Self {
        Self::InvalidParameter {
            name,
            value,
            reason,
        }
    }

    pub(crate) fn parse(line: usize, reason: impl Into<String>) -> Self {
        Self::Parse {
            line,
            reason: reason.into(),
        }
    }
}
