//! The crate's one error type.

use thiserror::Error;

/// Everything that can go wrong in the accountant. Every public function that can fail returns
/// `Result<_, AccountantError>`; nothing panics on bad input.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum AccountantError {
    /// A parameter is NaN, infinite where a finite value is needed, or outside its domain.
    #[error("invalid parameter `{name}` = {value}: {reason}")]
    InvalidParameter {
        /// Parameter name as it appears in the API.
        name: &'static str,
        /// The offending value.
        value: f64,
        /// Why it was rejected (the valid domain).
        reason: &'static str,
    },
    /// Events stated under different neighbouring relations cannot be composed.
    #[error(
        "cannot compose events under different neighbouring relations: {first:?} and {second:?}"
    )]
    MixedNeighbouring {
        /// Relation of the first event.
        first: crate::Neighbouring,
        /// Relation of the conflicting event.
        second: crate::Neighbouring,
    },
    /// A fixed-size sample cannot be larger than its population (or empty).
    #[error("invalid fixed-size sample: sample size {sample_size} of population {population}")]
    InvalidSampleSize {
        /// Batch size `m`.
        sample_size: u64,
        /// Population size `n`.
        population: u64,
    },
    /// A composition of no events was asked for where one is needed (e.g. an empty ledger).
    #[error("empty composition: {0}")]
    Empty(&'static str),
    /// Anything else with a reason (corrupt ledger file, budget exceeded, ...).
    #[error("{0}")]
    Other(String),
}

/// Checks `value` is finite and `> 0`.
pub(crate) fn check_positive(name: &'static str, value: f64) -> Result<f64, AccountantError> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(AccountantError::InvalidParameter {
            name,
            value,
            reason: "must be finite and > 0",
        })
    }
}

/// Checks `value` lies in `(0, 1]`.
pub(crate) fn check_rate(name: &'static str, value: f64) -> Result<f64, AccountantError> {
    if value > 0.0 && value <= 1.0 {
        Ok(value)
    } else {
        Err(AccountantError::InvalidParameter {
            name,
            value,
            reason: "must lie in (0, 1]",
        })
    }
}
