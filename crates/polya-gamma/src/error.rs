//! Typed errors for invalid Pólya-Gamma parameters.

/// Why a Pólya-Gamma parameter, evaluation point or request was rejected.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The shape `b` must be a finite number strictly greater than zero.
    #[error("shape b must be finite and > 0, got {0}")]
    InvalidShape(f64),
    /// The tilt `z` must not be NaN (±infinity is allowed and gives the limit 0).
    #[error("tilt z must not be NaN")]
    NanTilt,
    /// The evaluation point `x` of a density or CDF must not be NaN.
    #[error("evaluation point x must not be NaN")]
    NanPoint,
    /// The cumulant order must be in `1..=MAX_CUMULANT_ORDER`.
    #[error("cumulant order must be in 1..={max}, got {order}")]
    InvalidOrder {
        /// The order that was asked for.
        order: u32,
        /// The largest supported order.
        max: u32,
    },
    /// Batch input and output slices have different lengths.
    #[error("dimension mismatch in {what}: expected {expected}, found {found}")]
    DimensionMismatch {
        /// What was compared (the output slots against the tilts).
        what: &'static str,
        /// The expected length (the number of tilts supplied).
        expected: usize,
        /// The length found (the number of output slots supplied).
        found: usize,
    },
}

/// Checks the shape `b`: finite and strictly positive (`!(b > 0)` also rejects NaN).
pub(crate) fn check_shape(b: f64) -> Result<f64, Error> {
    if b.is_nan() || b <= 0.0 || b.is_infinite() {
        return Err(Error::InvalidShape(b));
    }
    Ok(b)
}

/// Checks the tilt `z`: anything but NaN; returns `|z|` because `PG(b, z)` is even in `z`.
pub(crate) fn check_tilt(z: f64) -> Result<f64, Error> {
    if z.is_nan() {
        return Err(Error::NanTilt);
    }
    Ok(z.abs())
}
