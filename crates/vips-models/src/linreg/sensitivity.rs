//! Per-record bounds of the three statistics and their add/remove sensitivities.
//!
//! With `||x_n||_2 <= 1` and `|y_n| <= 1` (enforced by [`super::LinregRecord::new`]):
//!
//! - `A = sum_n x_n x_n^T` (symmetric): `||x x^T||_F = ||x||^2 <= 1` ([`XX_BOUND`]);
//! - `b = sum_n y_n x_n` (vector): `||y x||_2 = |y| ||x|| <= 1` ([`XY_BOUND`]);
//! - `c = sum_n y_n^2` (scalar): `y^2 <= 1` ([`YY_BOUND`]).
//!
//! Each bound is attained (by `||x|| = |y| = 1`), all three at the same record, so none can be
//! declared smaller without clipping records that the map produces, and a larger one only adds
//! noise. Under **add/remove-one** neighbouring the statistic of every other record is unchanged
//! (nothing here depends on the model's current parameters), so each sum moves by exactly one
//! record's contribution: the sensitivities are the bounds. Replace-one doubles them.
//!
//! The three blocks go out in **one** release (003 Eq. 63): each divided by its bound has norm
//! at most one, the concatenation has L2 sensitivity `sqrt(3)` (tight, at `||x|| = |y| = 1`), so
//! one noise multiplier `sigma` gives noise std `sqrt(3) sigma` on every free entry of each
//! block, in its own units, and one accountant event. Analyze-Gauss noise on `A` is added to the
//! upper triangle including the diagonal and mirrored; the `d(d+1)/2` free entries of `x x^T`
//! have L2 norm at most `||x x^T||_F`, so the Frobenius bound covers them.
//!
//! **Why equal bounds are the best split this engine can express.** Rescale-noise-rescale gives
//! block `j` noise `sqrt(k) sigma B_j` against a signal that scales with `B_j` when the records
//! are rescaled, so each block's signal-to-noise ratio is `1 / (sqrt(k) sigma)` whatever bounds
//! are declared, as long as they are tight; a loose bound only adds noise, a tight-but-smaller one
//! clips. An unequal split (weights `w_j`, sensitivity `sqrt(sum w_j^2)`, noise on block `j`
//! proportional to `sqrt(sum w^2) / w_j`) needs a release whose sensitivity is computed from
//! per-block *weights* separately from per-block *clip bounds*, which `dp_core::ReleaseSpec`
//! (sensitivity always `sqrt(k)`) does not offer; see `docs/linreg.md`.

/// Per-record Frobenius bound of `x x^T` (and add/remove sensitivity of `A`).
pub const XX_BOUND: f64 = 1.0;

/// Per-record L2 bound of `y x` (and add/remove sensitivity of `b`).
pub const XY_BOUND: f64 = 1.0;

/// Per-record bound of `y^2` (and add/remove sensitivity of `c`).
pub const YY_BOUND: f64 = 1.0;

/// L2 sensitivity of the joint release (the three blocks each divided by its bound):
/// `sqrt(3)`.
pub const JOINT_RESCALED_SENSITIVITY: f64 = 1.732_050_807_568_877_2;
