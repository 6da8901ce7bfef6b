//! The crate's one error type.

use dp_accountant::AccountantError;
use thiserror::Error;

/// Everything that can go wrong in `dp-core`. Every fallible public function returns
/// `Result<_, CoreError>`; bad input never panics, hangs or produces a NaN.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum CoreError {
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
    /// The classic Gaussian calibration was asked for `epsilon >= 1`, where it is not proven.
    #[error(
        "the classic Gaussian calibration s = D sqrt(2 ln(1.25/delta)) / eps is only proven for \
         0 < eps < 1 (Dwork & Roth 2014, Thm A.1), got eps = {epsilon}; use \
         `analytic_gaussian_std`, which is valid (and tighter) for every eps > 0"
    )]
    ClassicGaussianOutOfRange {
        /// The refused epsilon.
        epsilon: f64,
    },
    /// Two sizes that must agree do not.
    #[error("dimension mismatch in {what}: expected {expected}, found {found}")]
    DimensionMismatch {
        /// What was being checked.
        what: &'static str,
        /// The size required.
        expected: usize,
        /// The size given.
        found: usize,
    },
    /// An input contains NaN or an infinity.
    #[error("non-finite value (NaN or infinity) in {0}")]
    NonFinite(&'static str),
    /// A matrix that must be symmetric is not.
    #[error("matrix is not symmetric: |A - A^T| max entry {asymmetry} (tolerance {tolerance})")]
    NotSymmetric {
        /// Largest absolute difference `|a_ij - a_ji|`.
        asymmetry: f64,
        /// The tolerance it exceeded.
        tolerance: f64,
    },
    /// An operation needs at least one record / element.
    #[error("empty input: {0}")]
    Empty(&'static str),
    /// A per-record contribution wrote outside its block or wrote a non-finite value.
    #[error("invalid contribution to block `{block}`: {reason}")]
    InvalidContribution {
        /// The block's name.
        block: String,
        /// What was wrong.
        reason: String,
    },
    /// A block handle that does not name a block of this spec or release: a
    /// handle from another spec, or a name that is not there.
    #[error("unknown block: {reason}")]
    UnknownBlock {
        /// What was wrong (a fixed text).
        reason: &'static str,
    },
    /// The release would take the spent budget past the total; nothing was released and the
    /// ledger is unchanged.
    #[error(
        "privacy budget exhausted: this release would exceed the total budget \
         (epsilon {total_epsilon}, delta {total_delta}); nothing was released"
    )]
    BudgetExhausted {
        /// The wall's total epsilon.
        total_epsilon: f64,
        /// The wall's total delta.
        total_delta: f64,
    },
    /// A builder was not given something it needs, or was given contradictory settings.
    #[error("privacy wall misconfigured: {0}")]
    Misconfigured(&'static str),
    /// The operating system could not supply entropy to seed the noise RNG.
    #[error("could not seed the noise RNG from the operating system")]
    Entropy(#[source] rand::rngs::SysError),
    /// The accountant refused or failed.
    #[error("accountant: {0}")]
    Accountant(#[from] AccountantError),
    /// A record source could not read a sampled batch (the wall's records are read from a
    /// [`crate::RecordSource`]); the release was aborted.
    #[error("{0}")]
    Source(#[from] crate::wall::SourceError),
    /// A batching name ([`crate::Batching`]'s `FromStr`) that is not `one_record`, `poisson` or
    /// `fixed` / `fixed_size`.
    #[error("unknown batching `{given}`: expected `one_record`, `poisson` or `fixed` (fixed_size)")]
    UnknownBatching {
        /// The name given (at most 64 characters of it).
        given: String,
    },
}

/// Checks `value` is finite and `> 0`.
pub(crate) fn check_positive(name: &'static str, value: f64) -> Result<f64, CoreError> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(CoreError::InvalidParameter {
            name,
            value,
            reason: "must be finite and > 0",
        })
    }
}

/// Checks `value` lies in the open interval `(0, 1)`.
pub(crate) fn check_delta(name: &'static str, value: f64) -> Result<f64, CoreError> {
    if value > 0.0 && value < 1.0 {
        Ok(value)
    } else {
        Err(CoreError::InvalidParameter {
            name,
            value,
            reason: "must lie in the open interval (0, 1)",
        })
    }
}

/// Checks every value of a slice is finite.
pub(crate) fn check_finite(what: &'static str, values: &[f64]) -> Result<(), CoreError> {
    if values.iter().all(|v| v.is_finite()) {
        Ok(())
    } else {
        Err(CoreError::NonFinite(what))
    }
}
