//! The modified Bessel function of the second kind `K_nu(x)`, its order derivative and ratios.
//!
//! # Method
//! For real order `nu` and `x > 0`,
//! `K_nu(x) = int_0^inf exp(-x cosh t) cosh(nu t) dt` (DLMF 10.32.9). The integrand is an even,
//! entire function of `t` that decays double-exponentially, so the trapezoidal rule on the whole
//! line converges geometrically in `1/h` (Trefethen & Weideman 2014, "The exponentially convergent
//! trapezoidal rule", SIAM Review 56(3), Sec. 5). We
//!
//! 1. locate the maximiser `t*` of `psi(t) = -x cosh t + ln cosh(nu t)` (unimodal on `t >= 0`),
//! 2. centre the grid `t_k = t* + k h` on it with `h = min(0.1, 0.5 / (x^2 + (|nu|+1)^2)^(1/4))`,
//!    fine enough for the peak's width and for the strip of analyticity,
//! 3. sum `exp(psi(|t_k|) - psi(t*))` outwards until terms fall below `e^-46` of the peak (through
//!    the mirror image at `-t*` when the integrand at `t = 0` is not negligible), with
//!    every exponent formed as a *difference* (`cosh a - cosh b = 2 sinh((a+b)/2) sinh((a-b)/2)`)
//!    so nothing cancels.
//!
//! The same sums with weights `cosh((nu +- 1) t) / cosh(nu t)` and `t tanh(nu t)` give the ratios
//! `K_{nu+-1}(x) / K_nu(x)` and `d/dnu ln K_nu(x)` *directly*, without dividing two separately
//! rounded Bessel values; all results are in log or ratio form, so nothing overflows for small `x`
//! or large order, or underflows for large `x`. The cost is a few dozen to a few hundred
//! exponentials (more only for `x` below about `1e-100`).
//!
//! **Order zero at `x <= 2`** (the only case [`Gig`](crate::Gig) meets in the SBN's shrinkage
//! prior, tens of thousands of times per iteration) uses the power series of `K_0` and `K_1`
//! instead (Abramowitz & Stegun 9.6.13 and 9.6.11 with `n = 1`: about 20 terms of products
//! instead of hundreds of exponentials), with `d/dnu ln K_0 = 0` and `K_{-1} = K_1`. Tested
//! against the quadrature and against mpmath's table.
//!
//! Crate-private since issue 18 (its only user is [`Gig`](crate::Gig); the public `bessel_k`,
//! `bessel_k_scaled`, `ln_bessel_k`, `bessel_k_ratio` and `bessel_k_values`, which no other crate
//! used, were removed or hidden).
//!
//! Accuracy (checked against mpmath's table in `tests/data/reference.json` by this module's unit
//! tests): relative error about `1e-14`
//! for the ratios and the order derivative, and for `ln K_nu` an absolute error of a few ulps of
//! `|ln K_nu|` (the conditioning of `K_nu` itself at large order).

use crate::check;
use crate::error::{ExpFamError, Result};

/// Terms below `exp(-CUTOFF)` times the peak are dropped.
const CUTOFF: f64 = 46.0;
/// Largest grid step (small `x`, small order).
const H_MAX: f64 = 0.1;
/// Step relative to the peak width `(x^2 + nu^2)^(-1/4)`.
const H_PEAK: f64 = 0.5;
/// Smallest supported argument (below it the grid walk would reach the limits of f64).
const MIN_X: f64 = 1e-300;
/// Hard bound on grid points (not reached for `x >= 1e-300`, `|nu| <= 1e8`).
const MAX_TERMS: usize = 4_000_000;
/// Order zero at `x <= SERIES_MAX_X` takes the power series ([`order_zero_series`]).
const SERIES_MAX_X: f64 = 2.0;
/// Terms of the power series: at `x = 2` the `k`-th is below `1 / (k!)^2`, under `1e-36` at 20.
const SERIES_TERMS: u32 = 24;
/// Euler's constant `gamma`.
const EULER_GAMMA: f64 = 0.577_215_664_901_532_9;

/// `K_nu(x)` and its companions from one quadrature.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct BesselKValues {
    /// `ln(e^x K_nu(x))` (the exponentially scaled function, in logs).
    pub ln_scaled: f64,
    /// `K_{nu+1}(x) / K_nu(x)`.
    pub ratio_up: f64,
    /// `K_{nu-1}(x) / K_nu(x)`.
    pub ratio_down: f64,
    /// `d/dnu ln K_nu(x)` (zero at `nu = 0`, odd in `nu`).
    pub d_ln_dnu: f64,
}

impl BesselKValues {
    /// `ln K_nu(x)`.
    pub(crate) fn ln_k(&self, x: f64) -> f64 {
        self.ln_scaled - x
    }
}

/// `ln cosh(a u) - ln cosh(b u)` for `a, b, u >= 0`, without overflow.
#[inline]
fn lncosh_diff(a: f64, b: f64, u: f64) -> f64 {
    (a - b) * u + (-2.0 * a * u).exp().ln_1p() - (-2.0 * b * u).exp().ln_1p()
}

/// The maximiser of `psi(t) = -x cosh t + ln cosh(nu t)` on `t >= 0` (`nu >= 0`).
fn peak(nu: f64, x: f64) -> f64 {
    // psi'(t) = nu tanh(nu t) - x sinh t is concave with psi'(0) = 0 and psi''(0) = nu^2 - x.
    if nu * nu <= x {
        return 0.0;
    }
    let g = |t: f64| nu * (nu * t).tanh() - x * t.sinh();
    let mut lo = 0.0_f64;
    let mut hi = (nu / x).asinh();
    // g(hi) <= 0 since tanh < 1; g > 0 just right of 0.
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if g(mid) > 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// All of [`BesselKValues`] for order `nu` and argument `x`.
///
/// # Errors
/// [`ExpFamError::NonFinite`](crate::ExpFamError::NonFinite) for NaN/infinite `nu` or `x`,
/// [`ExpFamError::OutOfDomain`](crate::ExpFamError::OutOfDomain) for `x <= 0` and for
/// `0 < x < 1e-300` (outside the supported range).
pub(crate) fn bessel_k_values(nu: f64, x: f64) -> Result<BesselKValues> {
    check::finite("order nu", nu)?;
    check::positive("argument x", x)?;
    if x < MIN_X {
        return Err(ExpFamError::OutOfDomain {
            name: "Bessel K argument x",
            value: x,
            requirement: ">= 1e-300 (the supported range)",
        });
    }
    if nu == 0.0 && x <= SERIES_MAX_X {
        return Ok(order_zero_series(x));
    }
    quadrature(nu, x)
}

/// [`BesselKValues`] of order zero at `x` in `[1e-300, 2]` from the power series
///
/// `K_0(x) = -(ln(x/2) + gamma) I_0(x) + sum_{k>=1} H_k y^k / (k!)^2` (A&S 9.6.13),
/// `K_1(x) = 1/x + ln(x/2) I_1(x) - (x/4) sum_{k>=0} (psi(k+1) + psi(k+2)) y^k / (k! (k+1)!)`
/// (A&S 9.6.11, `n = 1`),
///
/// with `y = x^2 / 4`, `H_k` the harmonic numbers and `psi(k+1) = H_k - gamma`. Every term is
/// positive except `-(ln(x/2) + gamma) I_0`, which at `x = 2` cancels about one digit.
fn order_zero_series(x: f64) -> BesselKValues {
    let y = 0.25 * x * x;
    let ln_half = (0.5 * x).ln();
    // t = y^k / (k!)^2, u = y^k / (k! (k+1)!), h = H_k, h_next = H_{k+1}.
    let (mut t, mut u, mut h, mut h_next) = (1.0_f64, 1.0_f64, 0.0_f64, 1.0_f64);
    let (mut i0, mut s0, mut i1, mut s1) = (0.0_f64, 0.0_f64, 0.0_f64, 0.0_f64);
    for k in 1..=SERIES_TERMS {
        i0 += t;
        s0 += h * t;
        i1 += u;
        s1 += (h + h_next - 2.0 * EULER_GAMMA) * u;
        let kf = f64::from(k);
        t *= y / (kf * kf);
        u *= y / (kf * (kf + 1.0));
        h = h_next;
        h_next += 1.0 / (kf + 1.0);
    }
    let k0 = -(ln_half + EULER_GAMMA) * i0 + s0;
    let k1 = 1.0 / x + ln_half * 0.5 * x * i1 - 0.25 * x * s1;
    let ratio = k1 / k0;
    BesselKValues {
        ln_scaled: x + k0.ln(),
        ratio_up: ratio,
        ratio_down: ratio,
        d_ln_dnu: 0.0,
    }
}

/// [`BesselKValues`] by the trapezoidal rule (the module's method), for checked `nu` and `x`.
fn quadrature(nu: f64, x: f64) -> Result<BesselKValues> {
    let sign = if nu < 0.0 { -1.0 } else { 1.0 };
    let nu = nu.abs();
    let nu_up = nu + 1.0;
    let nu_dn = (nu - 1.0).abs();
    let h = H_MAX.min(H_PEAK / x.hypot(nu_up).sqrt());
    let ts = peak(nu, x);
    // Ingredients at the peak.
    let e_ts = (-2.0 * nu * ts).exp().ln_1p();
    let psi_peak = -2.0 * x * (0.5 * ts).sinh().powi(2) + crate::special_fn::ln_cosh(nu * ts);

    let mut s0 = 0.0;
    let mut s_up = 0.0;
    let mut s_dn = 0.0;
    let mut s_d = 0.0;
    let mut add = |k: i64| -> (f64, f64, f64) {
        let kh = k as f64 * h;
        let t = ts + kh;
        let u = t.abs();
        // u - ts, exactly formed from the grid offset.
        let du = if t >= 0.0 { kh } else { -2.0 * ts - kh };
        let d_cosh = 2.0 * (0.5 * (u + ts)).sinh() * (0.5 * du).sinh();
        let d0 = -x * d_cosh + nu * du + (-2.0 * nu * u).exp().ln_1p() - e_ts;
        let up = d0 + lncosh_diff(nu_up, nu, u);
        let dn = d0 + lncosh_diff(nu_dn, nu, u);
        let w0 = d0.exp();
        s0 += w0;
        s_up += up.exp();
        s_dn += dn.exp();
        s_d += w0 * u * (nu * u).tanh();
        (d0, up, dn)
    };
    // Walk right from the peak (k = 0, 1, ...), then left (k = -1, -2, ...).
    let mut max_up = f64::NEG_INFINITY;
    let mut max_dn = f64::NEG_INFINITY;
    let mut k = 0_i64;
    let mut terms = 0_usize;
    loop {
        let (d0, up, dn) = add(k);
        max_up = max_up.max(up);
        max_dn = max_dn.max(dn);
        terms += 1;
        if (d0 < -CUTOFF && up < max_up - CUTOFF && dn < max_dn - CUTOFF) || terms > MAX_TERMS {
            break;
        }
        k += 1;
    }
    k = -1;
    let mut crossed_zero = false;
    loop {
        crossed_zero |= ts + k as f64 * h < 0.0;
        let (d0, up, dn) = add(k);
        max_up = max_up.max(up);
        max_dn = max_dn.max(dn);
        terms += 1;
        if (d0 < -CUTOFF && up < max_up - CUTOFF && dn < max_dn - CUTOFF) || terms > 2 * MAX_TERMS {
            break;
        }
        k -= 1;
    }
    // If the walk crossed t = 0 it summed the even integrand over the whole line (peak and
    // mirror image): halve. Otherwise the integrand is negligible near 0, the mirror image is a
    // separate, equal peak, and the sum over the right-hand peak alone is the half-line integral.
    let weight = if crossed_zero { 0.5 * h } else { h };
    let ln_scaled = psi_peak + (weight * s0).ln();
    let finite = ln_scaled.is_finite()
        && s_up.is_finite()
        && s_dn.is_finite()
        && s_d.is_finite()
        && s0 > 0.0
        && terms <= 2 * MAX_TERMS;
    if !finite {
        // Only reached at the edges of f64 (x below ~1e-300 with large order and the like).
        return Err(ExpFamError::OutOfDomain {
            name: "Bessel K argument x",
            value: x,
            requirement: "such that the quadrature stays within f64",
        });
    }
    Ok(BesselKValues {
        ln_scaled,
        ratio_up: s_up / s0,
        ratio_down: s_dn / s0,
        d_ln_dnu: sign * s_d / s0,
    })
    .map(|mut v| {
        // For negative order, K_{nu+1} = K_{|nu|-1}: swap the ratios back.
        if sign < 0.0 {
            std::mem::swap(&mut v.ratio_up, &mut v.ratio_down);
        }
        v
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn half_order(x: f64) -> f64 {
        (std::f64::consts::PI / (2.0 * x)).sqrt().ln() - x
    }

    #[test]
    fn closed_form_half_integer_orders() {
        for &x in &[1e-8, 1e-3, 0.1, 1.0, 5.0, 40.0, 700.0, 1e4, 1e8] {
            let v = bessel_k_values(0.5, x).unwrap();
            let want = half_order(x);
            assert!(
                (v.ln_k(x) - want).abs() <= 4e-16 * want.abs().max(1.0),
                "x={x}: {} vs {want}",
                v.ln_k(x)
            );
            assert!(
                ((v.ratio_up - (1.0 + 1.0 / x)) / (1.0 + 1.0 / x)).abs() < 2e-15,
                "x={x}"
            );
            assert!((v.ratio_down - 1.0).abs() < 2e-15, "x={x}");
            let m = bessel_k_values(-0.5, x).unwrap();
            assert!((m.ratio_down - v.ratio_up).abs() <= 2e-15 * v.ratio_up);
            assert!((m.d_ln_dnu + v.d_ln_dnu).abs() <= 1e-15 * v.d_ln_dnu.abs());
        }
    }

    #[test]
    fn order_zero_derivative_vanishes() {
        assert_eq!(bessel_k_values(0.0, 3.0).unwrap().d_ln_dnu, 0.0);
        assert_eq!(bessel_k_values(0.0, 0.5).unwrap().d_ln_dnu, 0.0);
    }

    /// The order-zero series against the quadrature on a log grid of `x` from `1e-300` to the
    /// switch at 2 (and just above it, where the quadrature takes over): relative error of the
    /// ratio and absolute error of `ln(e^x K_0)` below `1e-13` times `max(1, |ln K_0|)`.
    #[test]
    fn order_zero_series_agrees_with_the_quadrature() {
        let mut x = 1e-300_f64;
        let mut checked = 0;
        while x <= 2.0 {
            let s = order_zero_series(x);
            let q = quadrature(0.0, x).unwrap();
            let tol = 1e-13 * q.ln_scaled.abs().max(1.0);
            assert!((s.ln_scaled - q.ln_scaled).abs() <= tol, "x={x:e}: ln K");
            assert!(
                ((s.ratio_up - q.ratio_up) / q.ratio_up).abs() <= 1e-13,
                "x={x:e}: ratio {} vs {}",
                s.ratio_up,
                q.ratio_up
            );
            assert_eq!(s.ratio_up, s.ratio_down);
            checked += 1;
            x *= 1.37;
        }
        assert!(checked > 2000);
        // The switch itself: both sides within the same tolerance.
        let (s, q) = (order_zero_series(2.0), quadrature(0.0, 2.0).unwrap());
        assert!(((s.ratio_up - q.ratio_up) / q.ratio_up).abs() <= 1e-13);
        assert!((s.ln_scaled - q.ln_scaled).abs() <= 1e-13);
        // K_1(1) / K_0(1) and K_0(1) from A&S Table 9.8 (e^x K_0(1) = 1.1444630798).
        let v = bessel_k_values(0.0, 1.0).unwrap();
        assert!((v.ln_scaled.exp() - 1.144_463_079_8).abs() < 1e-10);
        assert!((v.ratio_up - 0.601_907_230_197_234_6 / 0.421_024_438_240_708_3).abs() < 1e-12);
    }

    #[test]
    fn extreme_arguments_and_orders() {
        // Large x: e^x K_0(x) -> sqrt(pi / (2x)).
        let v = bessel_k_values(0.0, 1e300).unwrap();
        assert!((v.ln_scaled - 0.5 * (std::f64::consts::PI / 2e300).ln()).abs() < 1e-13);
        // Large order: K_{nu+1}/K_nu ~ (nu + sqrt(nu^2 + x^2)) / x at nu = x.
        let v = bessel_k_values(1e6, 1e6).unwrap();
        assert!((v.ratio_up - (1.0 + 2f64.sqrt())).abs() < 1e-5);
        // Tiny x, large order: K_{nu+1}/K_nu ~ 2 nu / x.
        let v = bessel_k_values(1e3, 1e-300).unwrap();
        assert!((v.ratio_up / 2e303 - 1.0).abs() < 1e-10);
        assert!(bessel_k_values(0.0, 1e-301).is_err());
    }

    /// The mpmath table of `tests/data/reference.json` (`tests/data/reference.py`): relative error
    /// `<= 1e-12` of `K`, both ratios and the order derivative; where `|ln K| > ~700` (`K` not
    /// representable) a relative error `<= 1e-14` of `ln K`.
    #[test]
    fn matches_mpmath_table() {
        const TOL: f64 = 1e-12;
        let text = include_str!("../tests/data/reference.json");
        let r: serde_json::Value = serde_json::from_str(text).expect("reference.json parses");
        let num = |v: &serde_json::Value| -> f64 { v.as_str().unwrap().parse().unwrap() };
        let rel = |got: f64, want: f64| (got - want).abs() / want.abs().max(1e-300);
        let rows = r["bessel_k"].as_array().unwrap();
        assert!(rows.len() >= 100);
        for row in rows {
            let (nu, x) = (num(&row["nu"]), num(&row["x"]));
            let v = bessel_k_values(nu, x).unwrap();
            let (ln_k, want_ln_k) = (v.ln_k(x), num(&row["ln_k"]));
            if want_ln_k.abs() < 700.0 {
                assert!(
                    (ln_k - want_ln_k).abs() <= TOL,
                    "nu={nu} x={x}: ln K {ln_k}"
                );
                assert!(
                    rel(ln_k.exp(), want_ln_k.exp()) <= 2.0 * TOL,
                    "nu={nu} x={x}: K"
                );
            } else {
                assert!(rel(ln_k, want_ln_k) <= 1e-14, "nu={nu} x={x}: ln K {ln_k}");
            }
            assert!(
                rel(v.ratio_up, num(&row["ratio_up"])) <= TOL,
                "nu={nu} x={x}: up"
            );
            assert!(
                rel(v.ratio_down, num(&row["ratio_down"])) <= TOL,
                "nu={nu} x={x}: down"
            );
            let want_d = num(&row["d_ln_dnu"]);
            let e_d = if want_d == 0.0 {
                v.d_ln_dnu.abs()
            } else {
                rel(v.d_ln_dnu, want_d)
            };
            assert!(e_d <= TOL, "nu={nu} x={x}: d/dnu {e_d:e}");
        }
    }

    #[test]
    fn rejects_bad_arguments() {
        assert!(bessel_k_values(0.0, 0.0).is_err());
        assert!(bessel_k_values(0.0, -1.0).is_err());
        assert!(bessel_k_values(f64::NAN, 1.0).is_err());
        assert!(bessel_k_values(0.0, f64::INFINITY).is_err());
        assert!(bessel_k_values(f64::INFINITY, 1.0).is_err());
    }
}
