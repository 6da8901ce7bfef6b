//! The crate's one error type.

use thiserror::Error;

/// Everything that can go wrong in `dp-sep`. Public functions that can fail return
/// `Result<_, SepError>`; bad input never panics, hangs or yields NaN.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum SepError {
    /// A parameter is NaN, infinite, or outside its domain.
    #[error("invalid parameter `{name}` = {value}: {reason}")]
    InvalidParameter {
        /// Parameter name as it appears in the API.
        name: &'static str,
        /// The offending value.
        value: f64,
        /// The valid domain.
        reason: &'static str,
    },
    /// Vectors or matrices whose sizes do not agree.
    #[error("dimension mismatch in {what}: expected {expected}, found {found}")]
    DimensionMismatch {
        /// Where the mismatch was found.
        what: &'static str,
        /// Expected length.
        expected: usize,
        /// Actual length.
        found: usize,
    },
    /// No records (rows, features, indices) where at least one is needed; the text says which.
    #[error("empty data: {0}")]
    Empty(&'static str),
    /// A non-finite value in the input data.
    #[error("non-finite value in {context} at row {row}, column {column}")]
    NonFinite {
        /// Which input.
        context: String,
        /// 0-based row.
        row: usize,
        /// 0-based column.
        column: usize,
    },
    /// A file that could not be parsed.
    #[error("corrupt file {path}: {reason}")]
    Corrupt {
        /// The file.
        path: String,
        /// What was wrong.
        reason: String,
    },
    /// An I/O error, with the path it happened on.
    #[error("I/O error on {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A natural-parameter vector that is not a valid distribution (e.g. a precision that is
    /// not positive definite); the text is a fixed reason, never a value of the vector.
    #[error("invalid natural parameters: {0}")]
    InvalidNaturalParameters(&'static str),
    /// A public range given as text that is not `LO:HI` with finite `LO < HI`
    /// ([`crate::data::PublicRange`]'s `FromStr`).
    #[error("a public range must be LO:HI with finite LO < HI: {reason}")]
    MalformedRange {
        /// What is wrong (a fixed text, never the input).
        reason: &'static str,
    },
    /// A public input a private run needs was not declared (it is never computed from the data).
    #[error("a private run needs the public {input}: declare it with {flag}")]
    MissingPublicInput {
        /// What is missing (e.g. "feature and target ranges").
        input: &'static str,
        /// The flag or field that declares it (e.g. "--ranges").
        flag: &'static str,
    },
    /// A sampling scheme (Poisson, fixed-size batches) that does not visit one record per step:
    /// (DP-)SEP takes [`dp_core::SamplingScheme::UniformSingle`] or
    /// [`dp_core::SamplingScheme::ShuffledEpoch`].
    #[error(
        "sampling {scheme:?} is not available: (DP-)SEP visits one record per step \
         (uniform_single or shuffled_epoch)"
    )]
    UnsupportedSampling {
        /// The scheme asked for.
        scheme: dp_core::SamplingScheme,
    },
    /// The chosen accountant cannot account the run's sampler (found by asking it for the
    /// sampler's event; since PLD covers the fixed-size, replace-one subsampled Gaussian, none
    /// of today's accountants is refused). Refused before the wall is built; never a silent
    /// fallback to another accountant or sampler.
    #[error(
        "the {accountant} accountant cannot account {scheme:?} sampling (the fixed-size, \
         replace-one subsampled Gaussian); choose another accountant (rdp covers every sampler: \
         --accountant rdp) or a Poisson batch"
    )]
    AccountantUnsupported {
        /// The accountant chosen.
        accountant: dp_accountant::AccountantKind,
        /// The sampler it cannot account.
        scheme: dp_core::SamplingScheme,
    },
    /// An error from `dp_core`'s privacy wall, kept typed (e.g.
    /// [`dp_core::CoreError::BudgetExhausted`] stays matchable).
    #[error("privacy wall: {0}")]
    Wall(#[from] dp_core::CoreError),
    /// A size implied by a flag, a header or a file exceeds a documented limit
    /// ([`crate::limits`]); refused before anything is allocated.
    #[error("{what} {detail}")]
    TooLarge {
        /// What was too large: a flag with its value, a file, a file and line.
        what: String,
        /// The estimate and the limit (e.g. "would need 80.0 GB for ... (limit 2.1 GB)").
        detail: String,
    },
    /// The run was stopped by the caller (e.g. Ctrl-C) before it finished; no result.
    #[error("interrupted after {epochs_done} of {epochs} epochs; no result")]
    Interrupted {
        /// Epochs completed.
        epochs_done: usize,
        /// Epochs planned.
        epochs: usize,
    },
    /// Every step of a non-private run failed to produce a usable update: the posterior is the
    /// prior, so no result is reported as if something had been learnt. (A private run never
    /// returns it: the count is a non-private diagnostic.)
    #[error("every one of the {steps} steps failed to produce a usable update; no result")]
    NoUsableStep {
        /// Steps run.
        steps: u64,
    },
}

impl SepError {
    /// Whether the error is caused by the caller's input (flags, files, configuration) rather
    /// than by the run itself: the examples exit with status 2 for these.
    pub fn is_input_error(&self) -> bool {
        !matches!(
            self,
            Self::Interrupted { .. }
                | Self::NoUsableStep { .. }
                | Self::Wall(dp_core::CoreError::BudgetExhausted { .. })
                | Self::InvalidNaturalParameters(_)
        )
    }
}

/// Checks `value` is finite and `> 0`.
pub(crate) fn check_positive(name: &'static str, value: f64) -> Result<f64, SepError> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(SepError::InvalidParameter {
            name,
            value,
            reason: "must be finite and > 0",
        })
    }
}

/// Checks `value` is finite and `>= 0`.
pub(crate) fn check_nonnegative(name: &'static str, value: f64) -> Result<f64, SepError> {
    if value.is_finite() && value >= 0.0 {
        Ok(value)
    } else {
        Err(SepError::InvalidParameter {
            name,
            value,
            reason: "must be finite and >= 0",
        })
    }
}
