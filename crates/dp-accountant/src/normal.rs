//! The standard normal distribution function, accurate in both tails: the workspace's one home
//! for `Phi`, `1 - Phi` and `ln Phi`.
//!
//! - `erfc` is [`libm`]'s (the Rust port of Sun's fdlibm / musl `s_erf.c`: piecewise rational
//!   minimax approximations, with `exp(-x^2)` split so that the *relative* error stays near one
//!   ulp deep into the upper tail). The `special` crate's `Error::compl_error`, which the other
//!   crates of the workspace depend on, is the same function (it calls `libm::erfc`).
//! - `Phi(z) = erfc(-z/sqrt 2)/2` and `1 - Phi(z) = erfc(z/sqrt 2)/2` keep full relative accuracy
//!   in their small tail, down to the smallest normal `f64` (`z` about `-37.5`).
//! - `ln Phi(z)` is `ln_1p(-erfc(z/sqrt 2)/2)` for `z > 0` (no `ln(1 - tiny)` loss), `ln` of the
//!   tail for moderate negative `z`, and the asymptotic series of `ln erfc` once `erfc` would
//!   come near underflow (`z < -26 sqrt 2`, about `-36.77`): finite for every finite `z`.
//!
//! The accountant has no dependency that could provide this (it is kept free of linear algebra
//! and random numbers), so the functions live here and are public: `dp-core` (Gaussian-mechanism
//! calibration, audits) and `dp-sep` (rectified-Gaussian moments) use them. The only other copy
//! is `polya-gamma`'s private `ln_norm_cdf`, the same algorithm on the same `erfc`, tested against
//! the same reference table (that leaf crate must not depend on the accountant).
//!
//! Accuracy against mpmath (`tests/data/normal_reference.py`, values in `normal_reference.rs`,
//! tested with margin): `libm::erfc` within `2.4e-16` relative on both signs wherever the value is
//! a normal `f64`; `ln Phi(z)` within `4.6e-16` relative for every `z <= 0`, from `0` down to
//! `-1e8`; `Phi` and `1 - Phi` in their small tail within `0.6 eps (1 + z^2)` relative, which is
//! the conditioning of rounding `z / sqrt 2` before `erfc` (so `1e-15` at `|z| = 3`, `4e-15` at
//! 10, `1.6e-13` at 37); `ln Phi(z)` for `z > 0` as `1 - Phi(z)`. NaN propagates (NaN in, NaN
//! out); infinities give the limits.

use std::f64::consts::{FRAC_1_SQRT_2, PI};

/// `y = -z / sqrt 2` from which [`ln_normal_cdf`] uses the asymptotic series of `ln erfc(y)`
/// (`erfc(26)` is about `5.7e-296`, still a normal `f64` with full relative accuracy).
const SERIES_FROM: f64 = 26.0;

/// `ln(erfc(y) / 2)` for `y >= SERIES_FROM` (or `+inf`), from the asymptotic series
/// `erfc(y) = exp(-y^2) / (y sqrt(pi)) * sum_n (-1)^n (2n-1)!! / (2y^2)^n`, eleven terms, whose
/// alternating-series truncation error is below `1e-20` there.
fn ln_half_erfc_series(y: f64) -> f64 {
    if y == f64::INFINITY {
        return f64::NEG_INFINITY;
    }
    let t = 1.0 / (2.0 * y * y);
    let mut term = 1.0;
    let mut sum = 1.0;
    for n in 1..12 {
        term *= -f64::from(2 * n - 1) * t;
        sum += term;
    }
    -y * y - (2.0 * y * PI.sqrt()).ln() + sum.ln()
}

/// `1 - Phi(z) = P(Z > z)` for a standard normal `Z`, with full relative accuracy in the upper
/// tail (down to the smallest normal `f64`, at `z` about `37.5`; `0` beyond).
///
/// Infallible: NaN propagates, `normal_sf(-inf) = 1`, `normal_sf(inf) = 0`.
///
/// # Example
/// ```
/// use dp_accountant::normal::normal_sf;
/// assert_eq!(normal_sf(0.0), 0.5);
/// // mpmath: 1 - Phi(10) = 7.61985302416052606597e-24
/// assert!((normal_sf(10.0) / 7.619_853_024_160_526e-24 - 1.0).abs() < 1e-14);
/// ```
pub fn normal_sf(z: f64) -> f64 {
    0.5 * libm::erfc(z * FRAC_1_SQRT_2)
}

/// `Phi(z) = P(Z <= z)` for a standard normal `Z`, with full relative accuracy in the lower tail
/// (down to the smallest normal `f64`, at `z` about `-37.5`; use [`ln_normal_cdf`] beyond).
///
/// Infallible: NaN propagates, `normal_cdf(-inf) = 0`, `normal_cdf(inf) = 1`.
///
/// # Example
/// ```
/// use dp_accountant::normal::normal_cdf;
/// assert_eq!(normal_cdf(0.0), 0.5);
/// assert!((normal_cdf(-1.959_963_984_540_054) - 0.025).abs() < 1e-17);
/// ```
pub fn normal_cdf(z: f64) -> f64 {
    0.5 * libm::erfc(-z * FRAC_1_SQRT_2)
}

/// `ln Phi(z)`, the log of the standard normal CDF, accurate in both tails and finite for every
/// finite `z` (where `Phi(z)` itself underflows, below `z` about `-37.5`, too).
///
/// `ln_1p(-(1 - Phi(z)))` for `z > 0`; `ln(erfc(-z/sqrt 2) / 2)` otherwise (one rounding after
/// `erfc`), with the asymptotic series of `ln erfc` below `z` about `-36.77` (see the module
/// documentation).
/// Infallible: NaN propagates, `ln_normal_cdf(-inf) = -inf`, `ln_normal_cdf(inf) = 0`.
///
/// # Example
/// ```
/// use dp_accountant::normal::ln_normal_cdf;
/// assert_eq!(ln_normal_cdf(0.0), -std::f64::consts::LN_2);
/// // mpmath: ln Phi(-40) = -804.608442013753796..., far below where Phi underflows
/// assert!((ln_normal_cdf(-40.0) / -804.608_442_013_753_8 - 1.0).abs() < 1e-15);
/// // and ln Phi(10) = -7.62e-24 rather than 0
/// assert!((ln_normal_cdf(10.0) / -7.619_853_024_160_526e-24 - 1.0).abs() < 1e-14);
/// ```
pub fn ln_normal_cdf(z: f64) -> f64 {
    if z > 0.0 {
        return (-normal_sf(z)).ln_1p();
    }
    let y = -z * FRAC_1_SQRT_2;
    if y < SERIES_FROM || y.is_nan() {
        (0.5 * libm::erfc(y)).ln()
    } else {
        ln_half_erfc_series(y)
    }
}

/// `P(z1 < Z <= z2)` for `z1 <= z2`, computed from whichever tail keeps the relative error small.
#[cfg(test)]
pub(crate) fn normal_mass(z1: f64, z2: f64) -> f64 {
    if z1 >= z2 {
        0.0
    } else if z1 >= 0.0 {
        (normal_sf(z1) - normal_sf(z2)).max(0.0)
    } else if z2 <= 0.0 {
        (normal_cdf(z2) - normal_cdf(z1)).max(0.0)
    } else {
        (1.0 - normal_cdf(z1) - normal_sf(z2)).max(0.0)
    }
}

/// One side of a normal distribution function evaluated at a point: both tails, each computed
/// directly (the small one keeps its relative precision).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Tails {
    /// `P(Z <= z)`.
    pub lower: f64,
    /// `P(Z > z)`.
    pub upper: f64,
    /// The point.
    pub z: f64,
}

impl Tails {
    /// Both tails at `z` (one `erfc` call).
    pub(crate) fn at(z: f64) -> Self {
        if z >= 0.0 {
            let upper = normal_sf(z);
            Self {
                lower: 1.0 - upper,
                upper,
                z,
            }
        } else {
            let lower = normal_cdf(z);
            Self {
                lower,
                upper: 1.0 - lower,
                z,
            }
        }
    }

    /// `P(self.z < Z <= other.z)` from the tail that keeps the relative error small.
    pub(crate) fn mass_to(&self, other: &Tails) -> f64 {
        if self.z >= other.z {
            0.0
        } else if self.z >= 0.0 {
            (self.upper - other.upper).max(0.0)
        } else if other.z <= 0.0 {
            (other.lower - self.lower).max(0.0)
        } else {
            (1.0 - self.lower - other.upper).max(0.0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    include!("normal_reference.rs");

    fn rel(got: f64, want: f64) -> f64 {
        if got == want {
            0.0
        } else {
            ((got - want) / want).abs()
        }
    }

    /// Relative error allowed for `Phi(z)` and `1 - Phi(z)`: a few ulps plus the conditioning of
    /// the argument `z / sqrt 2`, which is rounded before `erfc` sees it (`d ln Phi / d ln z` is
    /// about `z^2` in the tail; mpmath's values are for the exact `f64` argument).
    fn tail_tol(z: f64) -> f64 {
        f64::EPSILON * (4.0 + 2.0 * z * z)
    }

    /// `libm::erfc` against mpmath, both signs, every piece of the fdlibm approximation.
    #[test]
    fn erfc_matches_mpmath() {
        for &(x, want) in ERFC {
            if want.is_nan() {
                continue; // subnormal, not tabulated
            }
            let got = libm::erfc(x);
            assert!(
                rel(got, want) <= 4.0 * f64::EPSILON,
                "erfc({x}) = {got} vs {want}"
            );
        }
    }

    #[test]
    fn cdf_and_sf_match_mpmath() {
        for &(z, phi, sf, _) in NORMAL {
            // NaN: below the normal range, not tabulated.
            if !phi.is_nan() {
                let got = normal_cdf(z);
                assert!(rel(got, phi) <= tail_tol(z), "Phi({z}) = {got} vs {phi}");
            }
            if !sf.is_nan() {
                let got = normal_sf(z);
                assert!(rel(got, sf) <= tail_tol(z), "1 - Phi({z}) = {got} vs {sf}");
            }
        }
    }

    #[test]
    fn ln_cdf_matches_mpmath_in_both_tails() {
        let mut tested = 0;
        for &(z, _, _, want) in NORMAL {
            if want.is_nan() {
                continue;
            }
            let got = ln_normal_cdf(z);
            // For z <= 0 a few ulps (down to z = -1e8, far past where Phi underflows); for
            // z > 0, ln Phi(z) ~ -(1 - Phi(z)) inherits the tail's argument conditioning.
            let tol = if z <= 0.0 {
                4.0 * f64::EPSILON
            } else {
                tail_tol(z)
            };
            assert!(
                rel(got, want) <= tol,
                "ln Phi({z}) = {got} vs {want} (rel {:e})",
                rel(got, want)
            );
            tested += 1;
        }
        assert!(tested > 50);
        // ln Phi(-1e300) = -5e599 overflows to -inf, the correctly rounded value
        assert_eq!(ln_normal_cdf(-1e300), f64::NEG_INFINITY);
        assert_eq!(ln_normal_cdf(f64::NEG_INFINITY), f64::NEG_INFINITY);
        assert_eq!(ln_normal_cdf(f64::INFINITY), 0.0);
        assert!(ln_normal_cdf(f64::NAN).is_nan());
        assert_eq!(normal_cdf(f64::NEG_INFINITY), 0.0);
        assert_eq!(normal_sf(f64::NEG_INFINITY), 1.0);
    }

    #[test]
    fn ln_cdf_is_monotone_and_continuous_at_the_series_switch() {
        let z_switch = -SERIES_FROM * std::f64::consts::SQRT_2;
        let h = 1e-9;
        let mut prev = f64::NEG_INFINITY;
        let mut z = z_switch - 50.0 * h;
        while z < z_switch + 50.0 * h {
            let v = ln_normal_cdf(z);
            assert!(v >= prev, "not monotone at {z}");
            prev = v;
            z += h;
        }
        // Across the switch the slope is d ln Phi / dz = phi / Phi ~ -z, about 36.77.
        let slope = (ln_normal_cdf(z_switch + h) - ln_normal_cdf(z_switch - h)) / (2.0 * h);
        assert!((slope + z_switch).abs() < 0.05, "{slope}");
    }

    #[test]
    fn tails_are_consistent() {
        for &z in &[-40.0, -8.0, -1.0, 0.0, 0.3, 2.0, 9.0, 38.0] {
            let t = Tails::at(z);
            assert!((t.lower + t.upper - 1.0).abs() < 1e-15);
        }
        assert!((normal_mass(-1.0, 1.0) - 0.682_689_492_137_085_9).abs() < 1e-15);
        let m = Tails::at(8.0).mass_to(&Tails::at(9.0));
        assert!(((m - normal_mass(8.0, 9.0)) / m).abs() < 1e-12);
    }
}
