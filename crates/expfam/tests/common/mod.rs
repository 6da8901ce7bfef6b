//! Shared helpers and tolerances for the expfam integration tests.
#![allow(dead_code)]

use nalgebra::DVector;

/// Tolerance for finite-difference gradients (5-point stencil, relative to `1 + |value|`).
pub const FD_TOL: f64 = 1e-7;
/// Tolerance for natural -> mean -> natural round trips (the bar).
pub const ROUND_TRIP_TOL: f64 = 1e-10;
/// Table tests against mpmath: relative error bar of the issue.
pub const TABLE_REL_TOL: f64 = 1e-12;

/// `|a - b| <= tol * (1 + |b|)`.
pub fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * (1.0 + b.abs())
}

/// Gradient of `f` at `x` by the 5-point central stencil, step `h_i = 1e-3 (1 + |x_i|)`... scaled
/// by `scale_i` so steps stay inside the domain.
pub fn fd_gradient(
    x: &DVector<f64>,
    step: &DVector<f64>,
    f: &dyn Fn(&DVector<f64>) -> f64,
) -> DVector<f64> {
    DVector::from_fn(x.len(), |i, _| {
        let h = step[i];
        let at = |k: f64| {
            let mut y = x.clone();
            y[i] += k * h;
            f(&y)
        };
        (-at(2.0) + 8.0 * at(1.0) - 8.0 * at(-1.0) + at(-2.0)) / (12.0 * h)
    })
}

/// Largest `|a_i - b_i| / (1 + |b_i|)`.
pub fn max_rel(a: &DVector<f64>, b: &DVector<f64>) -> f64 {
    a.iter()
        .zip(b.iter())
        .fold(0.0_f64, |m, (x, y)| m.max((x - y).abs() / (1.0 + y.abs())))
}
