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
