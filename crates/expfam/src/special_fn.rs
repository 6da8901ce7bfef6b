//! Special functions: guarded `digamma`, `ln_gamma`; the logistic `sigmoid` and `softplus`; the
//! `f32` digamma kernel of LDA's SIMD loops; the crate-internal trigamma of the families' Newton
//! steps (the public guarded `trigamma`, which no crate used, was removed in issue 18).
//!
//! The workspace's one digamma and trigamma: every `f64` evaluation, guarded ([`digamma`]) or not
//! ([`digamma_fast`], the crate-internal `digamma_pos` / `trigamma_pos`), is
//! the `special` crate's (a recurrence up to `x > 8`, then eight terms of the asymptotic series,
//! DLMF 5.11.2); [`digamma_f32`] is a vectorisable `f32` approximation of it, tested against it.
//! Accuracy against mpmath on a grid from `1e-8` to `1e8` (`tests/data/digamma_reference.py`,
//! values in `digamma_reference.rs`, tested): digamma within `3.4e-16 * max(|psi|, 1)`, trigamma
//! within `1.6e-15` relative (positive arguments); for negative arguments digamma's reflection
//! formula rounds `pi x` first
//! (error about `|x| eps / sin^2(pi x)`, `5e-13` relative at `x = -1000.5`).
//!
//! These wrap the `special` crate (0.14) and never call it outside its domain: `special`'s
//! `digamma` recurses once per unit step towards `x > 8`, so on `-inf` or a large negative
//! argument it recurses without bound and overflows the stack. Here NaN, `-inf`, poles and
//! (for `ln_gamma`) non-positive arguments return [`ExpFamError::SpecialFunctionDomain`] or
//! [`ExpFamError::NonFinite`]; negative non-integer arguments of `digamma` go through the
//! reflection formula.

use crate::error::{ExpFamError, Result};
use special::Gamma as _;
use std::f64::consts::PI;

fn domain(function: &'static str, value: f64) -> ExpFamError {
    ExpFamError::SpecialFunctionDomain { function, value }
}

/// The digamma function `psi(x) = d/dx ln Gamma(x)` for `x > 0` without checks.
///
/// The caller guarantees `x > 0` and finite (recursion depth is then at most 9).
#[inline]
pub(crate) fn digamma_pos(x: f64) -> f64 {
    debug_assert!(x > 0.0 && x.is_finite());
    x.digamma()
}

/// The trigamma function `psi'(x)` for `x > 0` without checks (`special`'s).
#[inline]
pub(crate) fn trigamma_pos(x: f64) -> f64 {
    debug_assert!(x > 0.0);
    x.trigamma()
}

/// `ln Gamma(x)` for `x > 0` without checks.
#[inline]
pub(crate) fn ln_gamma_pos(x: f64) -> f64 {
    debug_assert!(x > 0.0);
    special::Gamma::ln_gamma(x).0
}

/// The digamma function `psi(x) = Gamma'(x) / Gamma(x)`.
///
/// Defined for every finite `x` except the poles `0, -1, -2, ...`; `psi(+inf) = +inf`.
/// Negative arguments use the reflection `psi(x) = psi(1 - x) - pi / tan(pi x)`.
///
/// # Errors
/// [`ExpFamError::NonFinite`] for NaN, [`ExpFamError::SpecialFunctionDomain`] for `-inf` and the poles.
///
/// # Example
/// ```
/// let euler = 0.577_215_664_901_532_9;
/// assert!((expfam::digamma(1.0).unwrap() + euler).abs() < 1e-15);
/// assert!(expfam::digamma(f64::NEG_INFINITY).is_err());
/// assert!(expfam::digamma(-3.0).is_err());
/// ```
pub fn digamma(x: f64) -> Result<f64> {
    if x.is_nan() {
        return Err(ExpFamError::NonFinite {
            name: "digamma argument",
            value: x,
        });
    }
    if x == f64::INFINITY {
        return Ok(f64::INFINITY);
    }
    if x > 0.0 {
        return Ok(digamma_pos(x));
    }
    if x == f64::NEG_INFINITY || x == x.floor() {
        return Err(domain("digamma", x));
    }
    let t = (PI * x).tan();
    Ok(digamma_pos(1.0 - x) - PI / t)
}

/// The trigamma function `psi'(x) = d^2/dx^2 ln Gamma(x)` for `x > 0` (`psi'(+inf) = 0`): the
/// Fisher information of a Gamma distribution's shape.
///
/// # Errors
/// [`ExpFamError::NonFinite`] for NaN, [`ExpFamError::SpecialFunctionDomain`] for `x <= 0`.
///
/// # Example
/// ```
/// let pi2_6 = std::f64::consts::PI.powi(2) / 6.0;
/// assert!((expfam::trigamma(1.0).unwrap() - pi2_6).abs() < 1e-13);
/// assert!(expfam::trigamma(0.0).is_err());
/// ```
pub fn trigamma(x: f64) -> Result<f64> {
    if x.is_nan() {
        return Err(ExpFamError::NonFinite {
            name: "trigamma argument",
            value: x,
        });
    }
    if x == f64::INFINITY {
        return Ok(0.0);
    }
    if x <= 0.0 {
        return Err(domain("trigamma", x));
    }
    Ok(trigamma_pos(x))
}

/// `ln Gamma(x)` for `x > 0` (`ln Gamma(+inf) = +inf`).
///
/// Only the positive half-line is supported: that is where every exponential-family
/// log-partition in this crate needs it.
///
/// # Errors
/// [`ExpFamError::NonFinite`] for NaN, [`ExpFamError::SpecialFunctionDomain`] for `x <= 0`.
///
/// # Example
/// ```
/// assert!((expfam::ln_gamma(5.0).unwrap() - 24f64.ln()).abs() < 1e-14);
/// assert!(expfam::ln_gamma(-0.5).is_err());
/// ```
pub fn ln_gamma(x: f64) -> Result<f64> {
    if x.is_nan() {
        return Err(ExpFamError::NonFinite {
            name: "ln_gamma argument",
            value: x,
        });
    }
    if x <= 0.0 {
        return Err(domain("ln_gamma", x));
    }
    if x == f64::INFINITY {
        return Ok(f64::INFINITY);
    }
    Ok(ln_gamma_pos(x))
}

/// The logistic function `sigmoid(z) = 1 / (1 + e^-z)`, the one implementation in the workspace.
///
/// Stable for every `z`: for `z < 0` it is evaluated as `e^z / (1 + e^z)`, so large negative
/// arguments keep full relative precision (no `1 - tiny` cancellation) and nothing overflows.
/// `sigmoid(+-inf)` is `1` / `0`; NaN propagates. Infallible, so there is no `# Errors` section.
///
/// # Example
/// ```
/// assert_eq!(expfam::sigmoid(0.0), 0.5);
/// assert!((expfam::sigmoid(-800.0)).abs() < 1e-300); // underflows to 0, never NaN
/// assert!((expfam::sigmoid(-30.0) / (-30f64).exp() - 1.0).abs() < 1e-12);
/// assert_eq!(expfam::sigmoid(f64::INFINITY), 1.0);
/// ```
#[inline]
pub fn sigmoid(z: f64) -> f64 {
    if z >= 0.0 {
        1.0 / (1.0 + (-z).exp())
    } else {
        let e = z.exp();
        e / (1.0 + e)
    }
}

/// `ln(2 cosh y) = |y| + ln(1 + e^{-2|y|})`, stable for every finite `y` (`cosh` itself
/// overflows beyond `|y| ~ 710`). The one home of the log-cosh family: [`ln_cosh`] is
/// `ln_2cosh(y) - ln 2`; the SBN's Jaakkola-Jordan bound and the Bessel-K quadrature use them.
/// (polya-gamma keeps a private copy of the same two-term formula: it must not depend on
/// expfam.) NaN propagates. Infallible, so there is no `# Errors` section.
///
/// # Example
/// ```
/// assert!((expfam::ln_2cosh(0.0) - 2f64.ln()).abs() < 1e-16);
/// assert_eq!(expfam::ln_2cosh(800.0), 800.0);
/// assert!((expfam::ln_2cosh(-1.5) - (2.0 * 1.5f64.cosh()).ln()).abs() < 1e-15);
/// ```
#[inline]
pub fn ln_2cosh(y: f64) -> f64 {
    let a = y.abs();
    a + (-2.0 * a).exp().ln_1p()
}

/// `ln cosh y`, stable for every finite `y`: [`ln_2cosh`]`(y) - ln 2`.
///
/// # Example
/// ```
/// assert_eq!(expfam::ln_cosh(0.0), 0.0);
/// assert_eq!(expfam::ln_cosh(800.0), 800.0 - std::f64::consts::LN_2);
/// ```
#[inline]
pub fn ln_cosh(y: f64) -> f64 {
    ln_2cosh(y) - std::f64::consts::LN_2
}

/// `softplus(z) = ln(1 + e^z)`, the Bernoulli log-partition, stable for every `z`
/// (`z + ln(1 + e^-z)` for `z > 0`, so large arguments neither overflow nor lose `ln_1p`'s
/// precision). NaN propagates. Infallible, so there is no `# Errors` section.
///
/// # Example
/// ```
/// assert!((expfam::softplus(0.0) - 2f64.ln()).abs() < 1e-16);
/// assert_eq!(expfam::softplus(1000.0), 1000.0);
/// assert!((expfam::softplus(-40.0) / (-40f64).exp() - 1.0).abs() < 1e-12);
/// ```
#[inline]
pub fn softplus(z: f64) -> f64 {
    if z > 0.0 {
        z + (-z).exp().ln_1p()
    } else {
        z.exp().ln_1p()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digamma_guards() {
        assert!(digamma(f64::NAN).is_err());
        assert!(digamma(f64::NEG_INFINITY).is_err());
        assert!(digamma(-1e300).is_err());
        assert!(digamma(0.0).is_err());
        assert!(digamma(-2.0).is_err());
        assert_eq!(digamma(f64::INFINITY), Ok(f64::INFINITY));
        // psi(-0.5) = psi(0.5) + 2 = -gamma - 2 ln 2 + 2
        let want = -0.577_215_664_901_532_9 - 2.0 * 2f64.ln() + 2.0;
        assert!((digamma(-0.5).unwrap() - want).abs() < 1e-13);
        // Large negative non-integers do not recurse.
        assert!(digamma(-1e6 - 0.5).unwrap().is_finite());
    }

    #[test]
    fn ln_gamma_guards() {
        assert!(ln_gamma(0.0).is_err());
        assert!(ln_gamma(f64::NAN).is_err());
        assert_eq!(ln_gamma(f64::INFINITY), Ok(f64::INFINITY));
        assert!((ln_gamma(0.5).unwrap() - PI.sqrt().ln()).abs() < 1e-15);
    }
}

/// `psi(a + delta) - psi(a)` for `a > 0`, `delta >= 0`, accurate to a few ulps of the *result* even
/// when `delta << a` (where the plain difference cancels).
///
/// Uses `psi(z + d) - psi(z) = sum_{n<N} d / ((z+n)(z+n+d)) + [psi(z+N+d) - psi(z+N)]` and, for
/// `z + N >= 10`, the asymptotic series (DLMF 5.11.2) differenced term by term with `ln_1p` / `exp_m1`.
pub(crate) fn digamma_increment(a: f64, delta: f64) -> f64 {
    debug_assert!(a > 0.0 && delta >= 0.0);
    if delta == 0.0 {
        return 0.0;
    }
    if delta >= 0.25 * a || !delta.is_finite() {
        return digamma_pos(a + delta) - digamma_pos(a);
    }
    let mut z = a;
    let mut acc = 0.0;
    while z < 10.0 {
        acc += delta / (z * (z + delta));
        z += 1.0;
    }
    // psi(z+d) - psi(z) = ln(1+d/z) - [1/(2(z+d)) - 1/(2z)] - sum_k B_2k/(2k) [(z+d)^-2k - z^-2k]
    let l = (delta / z).ln_1p();
    let mut s = l + delta / (2.0 * z * (z + delta));
    // B_2k / (2k) for k = 1..7
    const C: [f64; 7] = [
        1.0 / 12.0,
        -1.0 / 120.0,
        1.0 / 252.0,
        -1.0 / 240.0,
        1.0 / 132.0,
        -691.0 / 32760.0,
        1.0 / 12.0,
    ];
    let z2 = 1.0 / (z * z);
    let mut zk = 1.0;
    for (k, c) in C.iter().enumerate() {
        zk *= z2;
        let two_k = 2.0 * (k as f64 + 1.0);
        // (z+d)^-2k - z^-2k = z^-2k (exp(-2k ln(1 + d/z)) - 1)
        s -= c * zk * (-two_k * l).exp_m1();
    }
    acc + s
}

#[cfg(test)]
mod increment_tests {
    use super::*;

    #[test]
    fn increment_matches_difference_where_that_is_accurate() {
        for &a in &[1e-3, 0.5, 1.5, 7.0, 30.0, 1e4] {
            for &d in &[0.01, 0.1, 0.2] {
                let d = d * a;
                let want = digamma_pos(a + d) - digamma_pos(a);
                let got = digamma_increment(a, d);
                assert!(
                    (got - want).abs() <= 1e-12 * want.abs(),
                    "a={a} d={d}: {got} vs {want}"
                );
            }
        }
    }

    #[test]
    fn increment_for_tiny_delta_is_delta_times_trigamma() {
        for &a in &[0.3, 1.5, 12.0, 1e5] {
            let d = 1e-9 * a;
            let want = d * trigamma_pos(a);
            let got = digamma_increment(a, d);
            assert!((got - want).abs() <= 1e-8 * want, "a={a}: {got} vs {want}");
        }
    }
}

/// `psi(x)` without error handling, for hot loops (Dirichlet rows, the LDA E-step and topic
/// matrix): the same function as [`digamma`] (`special`'s, bit for bit) on `x > 0`, but outside
/// the domain it returns a value instead of an error: NaN for `x <= 0` and for NaN, `+inf` for
/// `+inf`. Use [`digamma`] where a bad argument must be an error.
///
/// # Example
/// ```
/// let euler = 0.577_215_664_901_532_9;
/// assert!((expfam::digamma_fast(1.0) + euler).abs() < 1e-15);
/// assert_eq!(expfam::digamma_fast(3.7), expfam::digamma(3.7).unwrap());
/// assert!(expfam::digamma_fast(0.0).is_nan());
/// assert_eq!(expfam::digamma_fast(f64::INFINITY), f64::INFINITY);
/// ```
#[inline]
pub fn digamma_fast(x: f64) -> f64 {
    if x > 0.0 && x < f64::INFINITY {
        digamma_pos(x)
    } else if x == f64::INFINITY {
        f64::INFINITY
    } else {
        f64::NAN
    }
}

/// Natural log in `f32` for positive normal inputs, branch-free (vectorisable): exponent from
/// the bits, mantissa folded into `[sqrt(1/2), sqrt(2))`, then `2 atanh(s)` to `s^9`.
/// Relative error about 1e-7; only called on arguments `>= 6`.
#[inline(always)]
fn ln32(y: f32) -> f32 {
    let bits = y.to_bits();
    let mut e = ((bits >> 23) & 0xff) as i32 - 127;
    let mut m = f32::from_bits((bits & 0x007f_ffff) | 0x3f80_0000);
    let big = m > std::f32::consts::SQRT_2;
    m = if big { m * 0.5 } else { m };
    e += i32::from(big);
    let s = (m - 1.0) / (m + 1.0);
    let s2 = s * s;
    let atanh =
        s * (1.0 + s2 * (1.0 / 3.0 + s2 * (1.0 / 5.0 + s2 * (1.0 / 7.0 + s2 * (1.0 / 9.0)))));
    e as f32 * std::f32::consts::LN_2 + 2.0 * atanh
}

/// `digamma(x)` in `f32` for `0 < x <= 1e5`, branch-free so that loops over slices vectorise
/// (LDA's `pulp` SIMD E-step and topic matrix): an approximation of [`digamma`] for `f32`
/// loops, not a second `f64` digamma. Always `psi(x) = psi(x + 6) - P'(x)/P(x)` with
/// `P = prod_{i<6} (x + i)`, then three terms of the asymptotic series at `x + 6` with an `f32`
/// logarithm. Absolute error below `2e-5 * max(|psi(x)|, 1)` on `[1e-6, 1e5]` against
/// [`digamma`] (tested); outside that range the result is not meaningful (callers use the `f64`
/// function there). NaN propagates.
///
/// # Example
/// ```
/// let d = expfam::digamma_f32(2.5);
/// assert!((f64::from(d) - expfam::digamma(f64::from(2.5f32)).unwrap()).abs() < 2e-5);
/// ```
#[inline(always)]
pub fn digamma_f32(x: f32) -> f32 {
    let (mut p, mut dp, mut xi) = (1.0f32, 0.0f32, x);
    for _ in 0..6 {
        dp = dp * xi + p;
        p *= xi;
        xi += 1.0;
    }
    let y = x + 6.0;
    let q = 1.0 / y;
    let q2 = q * q;
    let series = q2 * (1.0 / 12.0 - q2 * (1.0 / 120.0 - q2 * (1.0 / 252.0)));
    ln32(y) - 0.5 * q - series - dp / p
}

#[cfg(test)]
mod fast_tests {
    use super::*;

    include!("digamma_reference.rs");

    #[test]
    fn digamma_and_trigamma_match_mpmath() {
        let mut tested = 0;
        for &(x, psi, psi1) in DIGAMMA {
            let got = digamma(x).unwrap();
            // Near the root of digamma (x ~ 1.4616) only an absolute error is meaningful. For
            // x < 0 the reflection's pi x is rounded first: about |x| eps / sin^2(pi x).
            let tol = if x > 0.0 { 2.0 * f64::EPSILON } else { 1e-12 };
            assert!(
                (got - psi).abs() <= tol * psi.abs().max(1.0),
                "digamma({x}) = {got} vs {psi}"
            );
            if x > 0.0 {
                let got = trigamma_pos(x);
                assert!(
                    (got - psi1).abs() <= 8.0 * f64::EPSILON * psi1.abs(),
                    "trigamma({x}) = {got} vs {psi1}"
                );
                assert_eq!(digamma_fast(x).to_bits(), digamma(x).unwrap().to_bits());
            }
            tested += 1;
        }
        assert!(tested > 150);
    }

    #[test]
    fn digamma_f32_is_close_to_digamma() {
        let mut x = 1e-6f64;
        let mut worst = 0.0_f64;
        while x <= 1e5 {
            let xf = x as f32;
            let a = f64::from(digamma_f32(xf));
            let b = digamma(f64::from(xf)).unwrap();
            // Relative to the scale of psi near the pole (~1/x), absolute elsewhere.
            let err = (a - b).abs() / b.abs().max(1.0);
            assert!(err <= 2e-5, "x = {x}: {a} vs {b}");
            worst = worst.max(err);
            x *= 1.09;
        }
        assert!(worst > 1e-9, "an f32 kernel cannot be exact: {worst}");
        assert!(digamma_f32(f32::NAN).is_nan());
    }

    #[test]
    fn fast_digamma_outside_the_domain() {
        assert!(digamma_fast(0.0).is_nan());
        assert!(digamma_fast(-0.0).is_nan());
        assert!(digamma_fast(-1.5).is_nan());
        assert!(digamma_fast(f64::NEG_INFINITY).is_nan());
        assert!(digamma_fast(f64::NAN).is_nan());
        assert_eq!(digamma_fast(f64::INFINITY), f64::INFINITY);
        assert!((digamma_fast(f64::MIN_POSITIVE) - digamma_pos(f64::MIN_POSITIVE)).abs() < 1e-3);
    }
}
