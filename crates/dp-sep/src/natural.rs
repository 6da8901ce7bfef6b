//! Small operations on flat natural-parameter vectors (the engine's working representation).
//!
//! A model lays out the natural parameters of its whole approximating family (a product of
//! Gaussians, diagonal or full, and possibly Gamma factors) as one `Vec<f64>`; DP-SEP clips and
//! noises that vector as a whole, so its L2 norm is the norm the sensitivity bound of 002 Prop. 1
//! is stated in.

/// Euclidean norm of `v`.
///
/// # Example
/// ```
/// assert_eq!(dp_sep::natural::l2_norm(&[3.0, 4.0]), 5.0);
/// ```
pub fn l2_norm(v: &[f64]) -> f64 {
    // Scaled to avoid overflow for very large entries.
    let scale = v.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
    if scale == 0.0 || !scale.is_finite() {
        return scale;
    }
    scale
        * v.iter()
            .map(|x| (x / scale) * (x / scale))
            .sum::<f64>()
            .sqrt()
}

/// Scales `v` onto the L2 ball of radius `c` if it lies outside (`v <- v * min(1, c/||v||)`).
/// Returns `true` if `v` was clipped. A non-finite vector is replaced by zeros (and counts as
/// clipped), so the bound `||v|| <= c` holds whatever came in.
///
/// # Example
/// ```
/// let mut v = vec![3.0, 4.0];
/// assert!(dp_sep::natural::clip_l2(&mut v, 1.0));
/// assert!((dp_sep::natural::l2_norm(&v) - 1.0).abs() < 1e-12);
/// ```
pub fn clip_l2(v: &mut [f64], c: f64) -> bool {
    let norm = l2_norm(v);
    if !norm.is_finite() {
        v.iter_mut().for_each(|x| *x = 0.0);
        return true;
    }
    if norm > c {
        let s = c / norm;
        v.iter_mut().for_each(|x| *x *= s);
        true
    } else {
        false
    }
}

/// `out = a * x + b * y`, elementwise.
pub(crate) fn lin2(out: &mut [f64], a: f64, x: &[f64], b: f64, y: &[f64]) {
    for ((o, xi), yi) in out.iter_mut().zip(x).zip(y) {
        *o = a * xi + b * yi;
    }
}
