use thiserror::Error;

use crate::engine::EngineError;

/// Errors of private Bayesian linear regression: settings, records, fitting.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum LinregError {
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
    /// No records or no features.
    #[error("empty input: {0}")]
    Empty(&'static str),
    /// A record or row does not match the model's dimension.
    #[error("dimension mismatch in {what}: expected {expected}, found {found}")]
    DimensionMismatch {
        /// What was compared.
        what: &'static str,
        /// The expected length.
        expected: usize,
        /// The length found.
        found: usize,
    },
    /// A NaN or infinite feature or target (refused when the record is built, before any
    /// release; the message carries no record value).
    #[error("non-finite value in {0}")]
    NonFinite(&'static str),
    /// The posterior precision could not be factorised (not positive definite).
    #[error("posterior: {0}")]
    NotPositiveDefinite(&'static str),
    /// A saved model that is not valid (a posterior that is not finite or not positive
    /// definite).
    #[error("invalid model: {0}")]
    Invalid(#[from] crate::saved::InvalidModel),
    /// The VIPS engine refused or failed.
    #[error(transparent)]
    Engine(#[from] EngineError),
}

impl LinregError {
    pub(crate) fn invalid(name: &'static str, value: f64, reason: &'static str) -> Self {
        Self::InvalidParameter {
            name,
            value,
            reason,
        }
    }
}
