//! Density and CDF of `PG(b, z)`, accurate to ~1e-13 absolute or better.
//!
//! Shapes `b < 6` use the alternating series of Windle, Polson & Scott (2014) in log space
//! (with Devroye's large-`x` series for `b = 1`); `b >= 6` uses a Fourier series of the
//! characteristic function, which does not cancel however large `b` is.

use crate::density_series::{jstar_cdf, jstar_density};
use crate::error::{Error, check_shape, check_tilt};
use crate::fourier::Fourier;
use crate::moments::{mean_unchecked, variance_unchecked};

/// Shapes at or above this use the Fourier method.
const FOURIER_MIN_SHAPE: f64 = 6.0;

fn check_point(x: f64) -> Result<f64, Error> {
    if x.is_nan() {
        return Err(Error::NanPoint);
    }
    Ok(x)
}

/// Density of `PG(b, z)` at `x`.
///
/// `0` for `x <= 0` and `x = inf`; for `z = +-inf` (a point mass at 0) the density is 0 for
/// every `x > 0`.
///
/// # Errors
/// [`Error::InvalidShape`], [`Error::NanTilt`], [`Error::NanPoint`] for invalid inputs.
///
/// # Example
/// ```
/// // PG(1, 0) at x: 4 J*(1) density at 4x.
/// let f = polya_gamma::density(1.0, 0.0, 0.25).unwrap();
/// assert!(f > 0.0 && f < 5.0);
/// ```
pub fn density(b: f64, z: f64, x: f64) -> Result<f64, Error> {
    let b = check_shape(b)?;
    let z = check_tilt(z)?;
    let x = check_point(x)?;
    Ok(density_unchecked(b, z, x))
}

pub(crate) fn density_unchecked(b: f64, z: f64, x: f64) -> f64 {
    if x <= 0.0 || x.is_infinite() || z.is_infinite() {
        return 0.0;
    }
    if b >= FOURIER_MIN_SHAPE {
        fourier_for(b, z).density(x)
    } else {
        4.0 * jstar_density(b, 0.5 * z, 4.0 * x)
    }
}

/// CDF `P(X <= x)` of `PG(b, z)`.
///
/// `0` for `x <= 0` (1 when `z = +-inf`, a point mass at 0), `1` at `x = inf`.
///
/// # Errors
/// [`Error::InvalidShape`], [`Error::NanTilt`], [`Error::NanPoint`] for invalid inputs.
///
/// # Example
/// ```
/// let f = polya_gamma::cdf(100.0, 0.0, 25.0).unwrap();
/// assert!(f > 0.4 && f < 0.6); // polyagamma 2.0.2 returns 2516.8 here
/// ```
pub fn cdf(b: f64, z: f64, x: f64) -> Result<f64, Error> {
    let b = check_shape(b)?;
    let z = check_tilt(z)?;
    let x = check_point(x)?;
    Ok(cdf_unchecked(b, z, x))
}

pub(crate) fn cdf_unchecked(b: f64, z: f64, x: f64) -> f64 {
    if z.is_infinite() {
        return if x >= 0.0 { 1.0 } else { 0.0 };
    }
    if x <= 0.0 {
        return 0.0;
    }
    if x.is_infinite() {
        return 1.0;
    }
    if b >= FOURIER_MIN_SHAPE {
        fourier_for(b, z).cdf(x)
    } else {
        jstar_cdf(b, 0.5 * z, 4.0 * x)
    }
}

/// The Fourier evaluator with its window from the exact mean and variance.
pub(crate) fn fourier_for(b: f64, z: f64) -> Fourier {
    Fourier::new(b, z, mean_unchecked(b, z), variance_unchecked(b, z).sqrt())
}
