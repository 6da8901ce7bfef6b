//! Exact moments and cumulants of `PG(b, z)`.
//!
//! `PG(b, z)` is the law of `sum_k g_k / d_k` with `g_k ~ Gamma(b, 1)` independent and
//! `d_k = 2 pi^2 (k - 1/2)^2 + z^2 / 2` (Polson, Scott & Windle 2013, Eq. 1 rescaled).
//! A Gamma(b) variable has cumulants `b (n-1)!`, so the `n`-th cumulant of `PG(b, z)` is
//! `kappa_n = b (n-1)! sum_k d_k^{-n}`. The first two have closed forms
//! (Polson, Scott & Windle 2013, Sec. 3):
//! `E = b tanh(z/2) / (2 z)` and `Var = b (sinh z - z) / (4 z^3 cosh^2(z/2))`,
//! which are evaluated here without cancellation (series near `z = 0`, `exp(-|z|)` form
//! for large `|z|`). Everything is even in `z`; `z = +-inf` gives the limit 0.

use crate::error::{Error, check_shape, check_tilt};
use crate::hurwitz::scaled_hurwitz_zeta;

/// Largest cumulant order accepted by [`cumulant`].
pub const MAX_CUMULANT_ORDER: u32 = 32;

/// `2 pi^2`, the scale of the poles `d_k`.
const TWO_PI_SQ: f64 = 2.0 * core::f64::consts::PI * core::f64::consts::PI;

/// Mean of `PG(b, z)`: `b tanh(z/2) / (2 z)`, with the limit `b / 4` at `z = 0`.
///
/// Accurate to a few ulp for every `z` (even in `z`, `z = +-inf` gives 0).
///
/// # Errors
/// [`Error::InvalidShape`] unless `b` is finite and `> 0`; [`Error::NanTilt`] if `z` is NaN.
///
/// # Example
/// ```
/// let m = polya_gamma::mean(1.0, 0.0).unwrap();
/// assert_eq!(m, 0.25);
/// let m = polya_gamma::mean(2.0, 3.0).unwrap();
/// assert!((m - 2.0 * (1.5f64).tanh() / 6.0).abs() < 1e-15);
/// ```
pub fn mean(b: f64, z: f64) -> Result<f64, Error> {
    let b = check_shape(b)?;
    let z = check_tilt(z)?;
    Ok(mean_unchecked(b, z))
}

/// Mean for validated `b > 0` and `z = |z| >= 0`.
pub(crate) fn mean_unchecked(b: f64, z: f64) -> f64 {
    if z.is_infinite() {
        return 0.0;
    }
    let x = 0.5 * z;
    // tanh(x)/x: libm tanh is accurate to ~1 ulp in relative terms for every x, including
    // tiny x where tanh(x) = x exactly; only x = 0 needs the limit.
    let ratio = if x < 1e-8 {
        1.0 - x * x / 3.0
    } else {
        x.tanh() / x
    };
    0.25 * b * ratio
}

/// Variance of `PG(b, z)`: `b (sinh z - z) / (4 z^3 cosh^2(z/2))`, with the limit `b / 24`
/// at `z = 0`.
///
/// The difference `sinh z - z` is never formed by subtraction for `|z| < 2` (a positive
/// series is summed instead); for `|z| >= 2` the identity
/// `Var = b (1 - e^{-2z} - 2 z e^{-z}) / (2 z^3 (1 + e^{-z})^2)` is used.
///
/// # Errors
/// [`Error::InvalidShape`] unless `b` is finite and `> 0`; [`Error::NanTilt`] if `z` is NaN.
///
/// # Example
/// ```
/// let v = polya_gamma::variance(1.0, 0.0).unwrap();
/// assert!((v - 1.0 / 24.0).abs() < 1e-17);
/// ```
pub fn variance(b: f64, z: f64) -> Result<f64, Error> {
    let b = check_shape(b)?;
    let z = check_tilt(z)?;
    Ok(variance_unchecked(b, z))
}

/// Variance for validated `b > 0` and `z = |z| >= 0`.
pub(crate) fn variance_unchecked(b: f64, z: f64) -> f64 {
    if z.is_infinite() {
        return 0.0;
    }
    if z < 2.0 {
        // (sinh z - z) / z^3 = sum_{k>=1} z^{2k-2} / (2k+1)!, all terms positive.
        // For z < 2 the ratio of consecutive terms is z^2/((2k+2)(2k+3)) <= 4/20, so 30
        // terms reach far below one ulp; the loop stops earlier once terms stop mattering.
        let z2 = z * z;
        let mut term = 1.0 / 6.0;
        let mut sum = term;
        for k in 1..30 {
            let kf = k as f64;
            term *= z2 / ((2.0 * kf + 2.0) * (2.0 * kf + 3.0));
            sum += term;
            if term < 1e-18 * sum {
                break;
            }
        }
        let c = (0.5 * z).cosh();
        0.25 * b * sum / (c * c)
    } else {
        let e = (-z).exp();
        let num = 1.0 - e * e - 2.0 * z * e;
        let den = (1.0 + e) * (1.0 + e);
        // b / (2 z^3) evaluated as successive divisions so that z^3 cannot overflow early.
        ((0.5 * b / z) / z) / z * (num / den)
    }
}

/// The `n`-th cumulant `kappa_n = b (n-1)! sum_k d_k^{-n}` of `PG(b, z)`,
/// `d_k = 2 pi^2 (k - 1/2)^2 + z^2/2`, for `1 <= n <= MAX_CUMULANT_ORDER`.
///
/// `n = 1, 2` use the closed forms of [`mean`] and [`variance`]. For `n >= 3`:
/// for `|z| >= 60 + 2n` the Poisson-summation limit `b (2n-3)!! / (2 |z|^{2n-1})` (whose
/// neglected terms are `O(e^{-|z|} |z|^{n-1})`, below 1e-28 relative there); otherwise the
/// first `K` poles are summed directly and the tail `k > K` is expanded in powers of
/// `(z^2/2) / (2 pi^2 (K + 1/2)^2) <= 1/9` with scaled Hurwitz zeta coefficients.
///
/// # Errors
/// [`Error::InvalidOrder`] for `n` outside `1..=MAX_CUMULANT_ORDER`, plus the errors of [`mean`].
///
/// # Example
/// ```
/// // Third cumulant of PG(1, 0): 2 * sum_k (2 pi^2 (k-1/2)^2)^{-3} = 1/60.
/// let k3 = polya_gamma::cumulant(3, 1.0, 0.0).unwrap();
/// assert!((k3 - 1.0 / 60.0).abs() < 1e-16);
/// ```
pub fn cumulant(n: u32, b: f64, z: f64) -> Result<f64, Error> {
    if n == 0 || n > MAX_CUMULANT_ORDER {
        return Err(Error::InvalidOrder {
            order: n,
            max: MAX_CUMULANT_ORDER,
        });
    }
    let b = check_shape(b)?;
    let z = check_tilt(z)?;
    Ok(cumulant_unchecked(n, b, z))
}

/// Cumulant for a validated order, `b > 0` and `z = |z| >= 0`.
pub(crate) fn cumulant_unchecked(n: u32, b: f64, z: f64) -> f64 {
    match n {
        1 => return mean_unchecked(b, z),
        2 => return variance_unchecked(b, z),
        _ => {}
    }
    if z.is_infinite() {
        return 0.0;
    }
    let nf = f64::from(n);
    if z >= 60.0 + 2.0 * nf {
        // (2n-3)!! / 2, then the power of 1/z (underflows to 0 only when the true value does).
        let mut dfact = 1.0;
        let mut k = 2 * n as i32 - 3;
        while k > 1 {
            dfact *= f64::from(k);
            k -= 2;
        }
        let zinv = 1.0 / z;
        return b * (0.5 * dfact * zinv.powi(2 * n as i32 - 1));
    }
    b * factorial(n - 1) * pole_power_sum(n, z)
}

/// `sum_{k>=1} d_k^{-n}` for `n >= 2` and moderate `z` (see [`cumulant`]).
fn pole_power_sum(n: u32, z: f64) -> f64 {
    let a = 0.5 * z * z;
    let ni = n as i32;
    // K >= 3 z / (2 pi) makes r = a / (2 pi^2 (K + 1/2)^2) <= 1/9; K >= 10 keeps the
    // Hurwitz shift cheap. z < 60 + 2 * 32 bounds K by 60.
    let k_head = (10.0f64).max((3.0 * z / (2.0 * core::f64::consts::PI)).ceil()) as u32;
    let mut head = 0.0;
    for k in (1..=k_head).rev() {
        let h = f64::from(k) - 0.5;
        let d = TWO_PI_SQ * h * h + a;
        head += (1.0 / d).powi(ni);
    }
    // Tail: sum_{j>=0} (a + c (q + j)^2)^{-n}, q = K + 1/2,
    //   = (c q^2)^{-n} sum_m C(n+m-1, m) (-r)^m Z(2n + 2m),   r = a / (c q^2),
    // with Z(s) = q^s zeta(s, q). Terms shrink at least like (n+m)/(m+1) / 9; 400 terms
    // bound the loop far beyond the point where they drop below 1e-18 of the sum.
    let q = f64::from(k_head) + 0.5;
    let cq2 = TWO_PI_SQ * q * q;
    let r = a / cq2;
    let mut tail = 0.0;
    let mut binom = 1.0; // C(n+m-1, m)
    let mut rpow = 1.0;
    for m in 0..400u32 {
        if m > 0 {
            binom *= f64::from(n + m - 1) / f64::from(m);
            rpow *= -r;
        }
        let s = f64::from(2 * n + 2 * m);
        let term = binom * rpow * scaled_hurwitz_zeta(s, q);
        tail += term;
        if term.abs() < 1e-18 * tail.abs() || rpow == 0.0 {
            break;
        }
    }
    head + tail * (1.0 / cq2).powi(ni)
}

/// `n!` as a float (exact for the small orders used here).
fn factorial(n: u32) -> f64 {
    (1..=n).fold(1.0, |acc, k| acc * f64::from(k))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Brute-force sum of poles with an integral tail, for cross-checking small cases.
    fn brute(n: u32, b: f64, z: f64) -> f64 {
        let a = 0.5 * z * z;
        let mut s = 0.0;
        let kmax = 200_000;
        for k in (1..=kmax).rev() {
            let h = k as f64 - 0.5;
            s += (TWO_PI_SQ * h * h + a).powi(-(n as i32));
        }
        b * factorial(n - 1) * s
    }

    #[test]
    fn closed_forms_match_pole_sums() {
        for &z in &[0.0, 0.3, 1.0, 2.0, 5.0, 20.0] {
            let sum_var = 1.0 * factorial(1) * pole_power_sum(2, z);
            let v = variance_unchecked(1.0, z);
            assert!((sum_var - v).abs() < 1e-14 * v, "z={z}: {sum_var} vs {v}");
        }
    }

    #[test]
    fn third_cumulant_matches_brute_force() {
        for &z in &[0.0, 0.7, 3.0, 40.0] {
            let c = cumulant_unchecked(3, 1.5, z);
            let bf = brute(3, 1.5, z);
            assert!((c - bf).abs() < 1e-12 * c, "z={z}: {c} vs {bf}");
        }
    }

    #[test]
    fn asymptotic_branch_is_continuous() {
        for n in 3..=8 {
            let z0 = 60.0 + 2.0 * n as f64;
            let lo = factorial(n - 1) * pole_power_sum(n, z0);
            let hi = cumulant_unchecked(n, 1.0, z0);
            assert!((lo - hi).abs() < 1e-12 * hi, "n={n}: {lo} vs {hi}");
        }
    }

    #[test]
    fn edges() {
        assert_eq!(mean(1.0, f64::INFINITY).unwrap(), 0.0);
        assert_eq!(variance(1.0, f64::NEG_INFINITY).unwrap(), 0.0);
        assert!(mean(0.0, 1.0).is_err());
        assert!(mean(f64::NAN, 1.0).is_err());
        assert!(mean(1.0, f64::NAN).is_err());
        assert!(cumulant(0, 1.0, 1.0).is_err());
        assert_eq!(mean(3.0, -2.0).unwrap(), mean(3.0, 2.0).unwrap());
    }
}
