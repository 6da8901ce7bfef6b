//! Per-record bounds of BLR's two statistics and their add/remove sensitivities.
//!
//! With `||x_n||_2 <= 1` (enforced by [`crate::blr::BlrRecord::new`]) and `y_n` in `{0, 1}`:
//!
//! - `s1(D) = sum_n (y_n - 1/2) x_n`: one record contributes `||(y_n - 1/2) x_n||_2 =
//!   ||x_n||_2 / 2 <= 1/2` ([`S1_BOUND`]).
//! - `s2(D) = sum_n <xi_n> x_n x_n^T` with `<xi_n> = E[PG(1, c_n)] = tanh(c_n/2) / (2 c_n)`, which
//!   is decreasing in `c_n >= 0` with maximum `1/4` at `c_n = 0` (000 Fig. 4). One record
//!   contributes `||<xi_n> x_n x_n^T||_F = <xi_n> ||x_n||_2^2 <= 1/4` ([`S2_BOUND`]), because the
//!   Frobenius norm of a rank-one `x x^T` is `||x||^2`.
//!
//! **Add/remove-one** neighbours (`D' = D` plus or minus one record): `<xi_n>` depends only on
//! record `n` and the *released* `q(m)` of the previous iteration, so the other records'
//! contributions are identical on `D` and `D'` and the sums move by exactly one record's
//! contribution: `Delta s1 = 1/2` (L2) and `Delta s2 = 1/4` (Frobenius). This is the relation of
//! the Poisson-subsampled RDP bound the engine's accountant uses.
//!
//! **Replace-one** (000 Eq. 44, 46) changes one contribution into another: the bounds double to
//! `1` and `1/2`; divided by `N` they are the papers' `1/N` and `1/(2N)` bounds of the *means*
//! `s_bar`. VIPS releases the sums and divides by the public expected batch size `qN` afterwards
//! (DESIGN Sec. 3), which is why the add/remove bounds here are those of the sums.
//!
//! Both blocks go out in **one** release per iteration (003 Eq. 63): each block divided by its
//! bound has norm `<= 1`, the concatenation has sensitivity `sqrt(2)`, one noise multiplier
//! `sigma` gives noise std `sqrt(2) sigma B_j` on block `j` and one accountant event.
//! `s1` gets iid Gaussian noise; `s2` gets Analyze-Gauss noise (upper triangle including the
//! diagonal, mirrored: 000 Eq. 45) whose `d(d+1)/2` free entries have L2 sensitivity at most the
//! Frobenius one, and is then projected onto `{A : lambda_min(A) >= floor}` (post-processing).

use super::BlrRecord;

/// Per-record L2 bound of `(y - 1/2) x` (and add/remove sensitivity of `s1`).
pub const S1_BOUND: f64 = 0.5;

/// Per-record Frobenius bound of `<xi> x x^T` (and add/remove sensitivity of `s2`).
pub const S2_BOUND: f64 = 0.25;

/// `<xi_n> = E[PG(1, c)]` with `c = sqrt((x^T mu)^2 + x^T Sigma x)` (000 Eq. 36), from
/// `polya_gamma::mean`; in `(0, 1/4]` for every `c >= 0` (`0` at `c = +inf`).
///
/// The one PG(1, c) mean of the models: the SBN's E-step (000 Eq. 53) uses it too. A NaN `c`
/// (a bug upstream) gives NaN, which the wall refuses as a non-finite contribution, rather than a
/// plausible value that would hide the bug.
///
/// # Example
/// ```
/// assert_eq!(vips_models::blr::expected_xi(0.0), 0.25);
/// assert!(vips_models::blr::expected_xi(10.0) < 0.05);
/// ```
pub fn expected_xi(c: f64) -> f64 {
    // c is finite and >= 0 for a proper q(m); a NaN would be a bug upstream, and the wall
    // refuses non-finite contributions, so map the error to NaN rather than panic.
    polya_gamma::mean(1.0, c).unwrap_or(f64::NAN)
}

/// The record's `s1` contribution `(y - 1/2) x` as a dense vector of length `d`.
pub fn record_s1(record: &BlrRecord, d: usize) -> Vec<f64> {
    let mut v = record.features().to_dense(d);
    let c = record.centred_label();
    v.iter_mut().for_each(|x| *x *= c);
    v
}

/// The record's `s2` contribution `<xi> x x^T` as a dense column-major `d x d` matrix, for a
/// given `<xi>`.
pub fn record_s2(record: &BlrRecord, d: usize, xi: f64) -> Vec<f64> {
    let x = record.features().to_dense(d);
    let mut m = vec![0.0; d * d];
    for j in 0..d {
        for i in 0..d {
            m[j * d + i] = xi * x[i] * x[j];
        }
    }
    m
}
