//! The crate's one error type.

use std::sync::Arc;

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
    /// A serialised ledger could not be read back: bad JSON, wrong hash, invalid configuration
    /// or events, or (reading a file) an unreadable, oversized or non-UTF-8 file.
    #[error("corrupt ledger: {}{fault}", file_prefix(.file))]
    CorruptLedger {
        /// The file (or other source) the ledger was read from, when known.
        file: Option<String>,
        /// What is wrong with it.
        #[source]
        fault: LedgerFault,
    },
    /// A search (calibration, composition) found no admissible answer in its range.
    #[error("no admissible value: {0}")]
    Unreachable(#[source] Unreachable),
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
    /// An accountant name that is none of [`crate::AccountantKind::ALL`].
    #[error(
        "unknown accountant `{given}`: expected one of rdp, pld, moments, zcdp, advanced, linear"
    )]
    UnknownAccountant {
        /// The name given (user input, kept as data).
        given: String,
    },
    /// A combination of command-line flags that has no meaning (the message names the flags).
    #[error("{0}")]
    InconsistentFlags(&'static str),
    /// Flags that configure the RDP accountant, given with an accountant that ignores them.
    #[error(
        "{flags} have no effect with --accountant {accountant} (they configure the RDP accountant)"
    )]
    IgnoredFlags {
        /// The flags, e.g. `"--orders and --classic"`.
        flags: &'static str,
        /// The accountant chosen.
        accountant: crate::AccountantKind,
    },
    /// A ledger could not be written as JSON.
    #[error("cannot serialise ledger: {0}")]
    Serialise(#[source] SharedError<serde_json::Error>),
}

fn file_prefix(file: &Option<String>) -> String {
    file.as_ref().map(|f| format!("{f}: ")).unwrap_or_default()
}

/// What is wrong with a serialised ledger ([`AccountantError::CorruptLedger`]).
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum LedgerFault {
    /// The text is not JSON of the ledger's shape.
    #[error("not a ledger: {0}")]
    NotJson(#[source] SharedError<serde_json::Error>),
    /// The `format` field names a format this crate does not read.
    #[error("unknown format {found:?}")]
    UnknownFormat {
        /// The format the file states.
        found: String,
    },
    /// The content does not hash to the stated `content_hash`.
    #[error("content hash mismatch: file says {stated}, content is {computed}")]
    HashMismatch {
        /// The hash the file states.
        stated: String,
        /// The hash of the content.
        computed: String,
    },
    /// The configuration (orders) is invalid.
    #[error("configuration: {0}")]
    InvalidConfig(#[source] Box<AccountantError>),
    /// An entry's event is invalid or cannot be recorded (e.g. a mixed relation).
    #[error("entry {index}: {error}")]
    InvalidEntry {
        /// Position of the entry (from 0).
        index: usize,
        /// Why it was refused.
        #[source]
        error: Box<AccountantError>,
    },
    /// The file could not be read.
    #[error("cannot read: {0}")]
    Unreadable(#[source] SharedError<std::io::Error>),
    /// The file is larger than a ledger may be.
    #[error("{bytes} bytes is more than a ledger may hold ({limit})")]
    TooLarge {
        /// Size of the file.
        bytes: u64,
        /// The largest size read.
        limit: u64,
    },
    /// The file is not UTF-8 text.
    #[error("not UTF-8 text (byte {valid_up_to})")]
    NotUtf8 {
        /// Length of the valid UTF-8 prefix.
        valid_up_to: usize,
    },
    /// An entry's note of privacy outside its event does not start with a finite number >= 0
    /// (or the entries' total is not below 1 for a delta).
    #[error("entry {index}: note `{note}` must start with a finite number >= 0: {text:?}")]
    BadExtraNote {
        /// Position of the entry (from 0).
        index: usize,
        /// The note's name.
        note: &'static str,
        /// The note's text.
        text: Box<str>,
    },
}

/// What a search could not reach ([`AccountantError::Unreachable`]).
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum Unreachable {
    /// Calibration: no noise multiplier in range reaches the target.
    #[error(
        "no noise multiplier up to {max_noise_multiplier:e} reaches epsilon = {epsilon:e} at delta = {delta:e} within {steps} steps"
    )]
    NoiseMultiplier {
        /// The largest noise multiplier searched.
        max_noise_multiplier: f64,
        /// The target epsilon.
        epsilon: f64,
        /// The target delta.
        delta: f64,
        /// The number of steps.
        steps: u64,
    },
    /// Optimal composition: the total delta is below what `k` mechanisms need at any epsilon.
    #[error("delta_total {delta_total} is below 1 - (1 - delta)^k (delta = {delta}, k = {k})")]
    CompositionDelta {
        /// The total delta asked for.
        delta_total: f64,
        /// Each mechanism's delta.
        delta: f64,
        /// The number of mechanisms.
        k: u64,
    },
}

/// An error of another library shared behind an [`Arc`], so that [`AccountantError`] stays
/// `Clone` and `PartialEq` (two values are equal when they are the same error or print the
/// same). The original is available through [`SharedError::get`] and as the
/// [`std::error::Error::source`] chain.
#[derive(Debug)]
pub struct SharedError<E>(Arc<E>);

impl<E> SharedError<E> {
    /// The original error.
    pub fn get(&self) -> &E {
        &self.0
    }
}

impl<E> From<E> for SharedError<E> {
    fn from(e: E) -> Self {
        Self(Arc::new(e))
    }
}

impl<E> Clone for SharedError<E> {
    fn clone(&self) -> Self {
        Self(Arc::clone(&self.0))
    }
}

impl<E: std::fmt::Display> PartialEq for SharedError<E> {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.0.to_string() == other.0.to_string()
    }
}

impl<E: std::fmt::Display> std::fmt::Display for SharedError<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl<E: std::error::Error> std::error::Error for SharedError<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

impl AccountantError {
    /// A [`AccountantError::CorruptLedger`] with no file named.
    pub(crate) fn corrupt(fault: LedgerFault) -> Self {
        Self::CorruptLedger { file: None, fault }
    }

    /// The same error with `file` named, if it is a [`AccountantError::CorruptLedger`] that
    /// names none yet.
    pub fn in_file(self, file: impl Into<String>) -> Self {
        match self {
            Self::CorruptLedger { file: None, fault } => Self::CorruptLedger {
                file: Some(file.into()),
                fault,
            },
            other => other,
        }
    }
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
