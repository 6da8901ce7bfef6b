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
    /// Recording the event would take the spent privacy past the total budget; the ledger is
    /// unchanged.
    #[error(
        "budget exceeded: recording `{label}` would spend epsilon {would_spend} > budget {budget_epsilon} at delta {delta}"
    )]
    BudgetExceeded {
        /// Label of the refused event.
        label: String,
        /// Epsilon the ledger would reach (at `delta`) with the event recorded.
        would_spend: f64,
        /// The total epsilon allowed.
        budget_epsilon: f64,
        /// The delta of the budget.
        delta: f64,
    },
    /// A serialised ledger could not be read back: bad JSON, wrong hash, invalid events.
    #[error("corrupt ledger: {0}")]
    CorruptLedger(String),
    /// A search (calibration, order optimisation) found no admissible answer in its range.
    #[error("no admissible value: {0}")]
    Unreachable(String),
    /// The request would need more memory or work than the accountant allows; nothing was
    /// allocated. Names the flag or parameter responsible and the size it implies, e.g. PLD
    /// accounting of `10^12` steps (use RDP), a moments-accountant grid above 1024, or an
    /// optimal composition of more than `2^20` mechanisms.
    #[error("`{parameter}` = {value} is too large: {reason}")]
    ResourceLimit {
        /// The flag or parameter responsible (e.g. `steps`).
        parameter: &'static str,
        /// Its value (as given).
        value: String,
        /// The size it implies and the limit.
        reason: String,
    },
    /// The configured accountant does not cover this event (e.g. the PLD accountant and a
    /// fixed-size, replace-one subsampled Gaussian: use RDP).
    #[error("{0}")]
    Unsupported(&'static str),
    /// A command-line usage error: a combination of flags that has no meaning.
    #[error("{0}")]
    Usage(String),
    /// A ledger could not be written as JSON (the serialiser's message).
    #[error("cannot serialise ledger: {0}")]
    Serialise(String),
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

/// Checks `value` lies in the open interval `(0, 1)` (a delta).
pub(crate) fn check_delta(name: &'static str, value: f64) -> Result<f64, AccountantError> {
    if value > 0.0 && value < 1.0 {
        Ok(value)
    } else {
        Err(AccountantError::InvalidParameter {
            name,
            value,
            reason: "must lie in (0, 1)",
        })
    }
}

/// Checks `value` is a Rényi order: finite and `> 1`.
pub(crate) fn check_order(value: f64) -> Result<f64, AccountantError> {
    if value.is_finite() && value > 1.0 {
        Ok(value)
    } else {
        Err(AccountantError::InvalidParameter {
            name: "order",
            value,
            reason: "a Rényi order must be finite and > 1",
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
