//! Operations on flat natural-parameter vectors (the engine's working representation), delegated
//! to `expfam`'s [`NaturalParameters`] algebra on `DVector<f64>`.
//!
//! A model lays out the natural parameters of its whole approximating family (a product of
//! Gaussians, diagonal or full, and possibly Gamma factors) as one `Vec<f64>`; DP-SEP clips and
//! noises that vector as a whole, so its L2 norm is the norm the sensitivity bound of 002 Prop. 1
//! is stated in.

use expfam::NaturalParameters;
use nalgebra::DVector;

/// Euclidean norm of `v` (overflow-safe; `expfam::NaturalParameters::l2_norm`).
///
/// # Example
/// ```
/// assert_eq!(dp_sep::natural::l2_norm(&[3.0, 4.0]), 5.0);
/// ```
pub fn l2_norm(v: &[f64]) -> f64 {
    DVector::from_column_slice(v).l2_norm()
}

/// Scales `v` onto the L2 ball of radius `c` if it lies outside (`v <- v * min(1, c/||v||)`,
/// `expfam::NaturalParameters::clip_to_norm`). Returns `true` if `v` was clipped. A non-finite
/// vector is replaced by zeros (and counts as clipped), so `||v|| <= c` holds whatever came in;
/// so does an invalid bound (`c` not finite and positive), which also zeroes `v`.
///
/// # Example
/// ```
/// let mut v = vec![3.0, 4.0];
/// assert!(dp_sep::natural::clip_l2(&mut v, 1.0));
/// assert!((dp_sep::natural::l2_norm(&v) - 1.0).abs() < 1e-12);
/// ```
pub fn clip_l2(v: &mut [f64], c: f64) -> bool {
    match DVector::from_column_slice(v).clip_to_norm(c) {
        Ok(clipped) => {
            v.copy_from_slice(clipped.value.as_slice());
            clipped.was_clipped
        }
        Err(_) => {
            v.iter_mut().for_each(|x| *x = 0.0);
            true
        }
    }
}

/// `out = a * x + b * y`, elementwise.
pub(crate) fn lin2(out: &mut [f64], a: f64, x: &[f64], b: f64, y: &[f64]) {
    for ((o, xi), yi) in out.iter_mut().zip(x).zip(y) {
        *o = a * xi + b * yi;
    }
}

/// The whitening of a change `(dh, dk)` of a univariate Gaussian's natural parameters
/// `(m / v, -1 / (2 v))` at mean `m`, variance `v` and `sd = sqrt(v)` (passed in so that a caller
/// whitening many vectors at one point computes it once): `L^T (dh, dk)` with `L L^T` the Fisher
/// information `[[v, 2 m v], [2 m v, 2 v^2 + 4 m^2 v]]`, i.e. `(sd (dh + 2 m dk), sqrt(2) v dk)`
/// (PBP's weights, the diagonal mixture's coordinates).
pub(crate) fn whiten_gaussian_1d(m: f64, v: f64, sd: f64, dh: f64, dk: f64) -> (f64, f64) {
    (sd * (dh + 2.0 * m * dk), std::f64::consts::SQRT_2 * v * dk)
}

/// The inverse of [`whiten_gaussian_1d`] at the same `(m, v, sd)`.
pub(crate) fn unwhiten_gaussian_1d(m: f64, v: f64, sd: f64, w1: f64, w2: f64) -> (f64, f64) {
    let dk = w2 / (std::f64::consts::SQRT_2 * v);
    (w1 / sd - 2.0 * m * dk, dk)
}

/// `d^2/dt^2 f(at + t v)` at `t = 0` by central differences with step `t` (tests of the
/// whitening against a log-partition's Hessian).
#[cfg(test)]
pub(crate) fn second_derivative_along(
    f: impl Fn(&[f64]) -> f64,
    at: &[f64],
    v: &[f64],
    t: f64,
) -> f64 {
    let shifted = |s: f64| -> Vec<f64> { at.iter().zip(v).map(|(a, b)| a + s * b).collect() };
    (f(&shifted(t)) - 2.0 * f(at) + f(&shifted(-t))) / (t * t)
}
