//! The typed error every fallible function of this crate returns.

use thiserror::Error;

/// Why an exponential-family operation was refused.
///
/// Every constructor and conversion validates its input and returns one of these instead of
/// panicking or producing NaN.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum ExpFamError {
    /// A value was NaN or infinite.
    #[error("`{name}` is not finite (got {value})")]
    NonFinite {
        /// Which parameter or input.
        name: &'static str,
        /// The offending value.
        value: f64,
    },
    /// A finite value lies outside the parameter domain (e.g. a non-positive concentration).
    #[error("`{name}` = {value} is out of domain: must be {requirement}")]
    OutOfDomain {
        /// Which parameter or input.
        name: &'static str,
        /// The offending value.
        value: f64,
        /// The domain, in words (e.g. "> 0").
        requirement: &'static str,
    },
    /// Two inputs that must agree in dimension do not.
    #[error("dimension mismatch in `{what}`: expected {expected}, found {found}")]
    DimensionMismatch {
        /// Which parameter or input.
        what: &'static str,
        /// The dimension required.
        expected: usize,
        /// The dimension given.
        found: usize,
    },
    /// An input that must be non-empty (or have at least `min` entries) is too short.
    #[error("`{name}` has {got} entries, needs at least {min}")]
    TooShort {
        /// Which parameter or input.
        name: &'static str,
        /// Entries given.
        got: usize,
        /// Entries needed.
        min: usize,
    },
    /// A matrix that must be symmetric positive definite is not (its Cholesky factorisation failed).
    #[error("`{name}` is not symmetric positive definite")]
    NotPositiveDefinite {
        /// Which matrix.
        name: &'static str,
    },
    /// A matrix that must be symmetric is not (beyond a relative tolerance).
    #[error("`{name}` is not symmetric (max relative asymmetry {asymmetry:e})")]
    NotSymmetric {
        /// Which matrix.
        name: &'static str,
        /// `max |A_ij - A_ji| / max |A_ij|`.
        asymmetry: f64,
    },
    /// An input to a special function lies at a pole or outside its domain.
    #[error("{function}({value}) is undefined (pole or outside the domain)")]
    SpecialFunctionDomain {
        /// The function name (`digamma`, ...).
        function: &'static str,
        /// The argument.
        value: f64,
    },
    /// An iterative inversion (mean -> natural parameters) did not reach its tolerance.
    #[error("{what} did not converge in {iterations} iterations (residual {residual:e})")]
    NoConvergence {
        /// What was being solved.
        what: &'static str,
        /// Iterations spent.
        iterations: usize,
        /// Final residual.
        residual: f64,
    },
}

/// Shorthand for `Result<T, ExpFamError>`.
pub type Result<T> = std::result::Result<T, ExpFamError>;
