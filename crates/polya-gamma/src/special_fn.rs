//! Small special functions in log space: log normal CDF, log regularised upper incomplete
//! gamma, log-add-exp, log cosh.
//!
//! These stay private to this crate on purpose: `polya-gamma` is a leaf sampler crate whose only
//! numeric dependency is `special`, and taking `expfam` (nalgebra, rayon, serde) for a two-line
//! `log_add_exp` would be the wrong way round. Within the crate each function has one home here.

use special::Error as _;

/// `ln Gamma(x)` for `x > 0`.
pub(crate) fn ln_gamma(x: f64) -> f64 {
    special::Gamma::ln_gamma(x).0
}

/// `Phi(x)`, the standard normal CDF (full relative accuracy in the lower tail).
#[inline]
pub(crate) fn norm_cdf(x: f64) -> f64 {
    0.5 * (-x * core::f64::consts::FRAC_1_SQRT_2).compl_error()
}

/// `ln Phi(x)`, the log of the standard normal CDF, accurate in both tails.
pub(crate) fn ln_norm_cdf(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    if x > 0.0 {
        // Phi(x) = 1 - erfc(x / sqrt 2) / 2, use ln_1p for accuracy.
        (-0.5 * (x * core::f64::consts::FRAC_1_SQRT_2).compl_error()).ln_1p()
    } else if x > -37.0 {
        // libm erfc keeps full relative accuracy down to ~1e-300.
        (0.5 * (-x * core::f64::consts::FRAC_1_SQRT_2).compl_error()).ln()
    } else {
        // Asymptotic series; relative error below 945 / x^10 < 2e-13 here, and below
        // 1e-16 once |x| > 50. Used only for terms that are exponentially negligible
        // next to their partner in a log-sum-exp.
        let x2 = x * x;
        let inv = 1.0 / x2;
        let series = 1.0 - inv * (1.0 - 3.0 * inv * (1.0 - 5.0 * inv * (1.0 - 7.0 * inv)));
        -0.5 * x2 - (-x).ln() - 0.5 * (2.0 * core::f64::consts::PI).ln() + series.ln()
    }
}

/// `ln(e^a + e^b)` without overflow; `-inf` inputs are handled.
pub(crate) fn log_add_exp(a: f64, b: f64) -> f64 {
    let (hi, lo) = if a >= b { (a, b) } else { (b, a) };
    if hi == f64::NEG_INFINITY {
        return f64::NEG_INFINITY;
    }
    hi + (lo - hi).exp().ln_1p()
}

/// `ln cosh(u)` for `u >= 0` without overflow: `u + ln(1 + e^{-2u}) - ln 2`.
#[inline]
pub(crate) fn ln_cosh(u: f64) -> f64 {
    u + (-2.0 * u).exp().ln_1p() - core::f64::consts::LN_2
}

/// `ln Q(a, y)`, the log of the regularised upper incomplete gamma function, `a > 0`, `y >= 0`.
///
/// Series for the lower function when `y < a + 1` (then `Q = 1 - P` has no cancellation
/// problem worth worrying about because `P < ~0.8`), Legendre continued fraction (modified
/// Lentz) otherwise; both loops are capped at 500 iterations, far beyond the ~`sqrt(a)`
/// terms they need for `a <= 4` (the only shapes used here).
pub(crate) fn ln_upper_gamma_q(a: f64, y: f64) -> f64 {
    if y <= 0.0 {
        return 0.0;
    }
    if y.is_infinite() {
        return f64::NEG_INFINITY;
    }
    let log_prefactor = a * y.ln() - y - ln_gamma(a);
    if y < a + 1.0 {
        let mut ap = a;
        let mut del = 1.0 / a;
        let mut sum = del;
        for _ in 0..500 {
            ap += 1.0;
            del *= y / ap;
            sum += del;
            if del.abs() < sum.abs() * 1e-17 {
                break;
            }
        }
        let p = sum * log_prefactor.exp();
        (-p).ln_1p()
    } else {
        let tiny = 1e-300;
        let mut bb = y + 1.0 - a;
        let mut c = 1.0 / tiny;
        let mut d = 1.0 / bb;
        let mut h = d;
        for i in 1..500 {
            let fi = f64::from(i);
            let an = -fi * (fi - a);
            bb += 2.0;
            d = an * d + bb;
            if d.abs() < tiny {
                d = tiny;
            }
            c = bb + an / c;
            if c.abs() < tiny {
                c = tiny;
            }
            d = 1.0 / d;
            let del = d * c;
            h *= del;
            if (del - 1.0).abs() < 1e-16 {
                break;
            }
        }
        log_prefactor + h.ln()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn norm_cdf_values() {
        assert!((ln_norm_cdf(0.0) - 0.5f64.ln()).abs() < 1e-16);
        // Phi(-40) = 3.655893540915e-350 -> ln = -804.6084420137538
        assert!((ln_norm_cdf(-40.0) + 804.608_442_013_753_8).abs() < 1e-10);
        // continuity at the switch
        let a = ln_norm_cdf(-36.999_999_999);
        let b = ln_norm_cdf(-37.000_000_001);
        assert!((a - b).abs() < 1e-6);
    }

    #[test]
    fn ln_cosh_values() {
        for &u in &[0.0, 1e-3, 0.5, 3.0, 20.0] {
            let want = f64::cosh(u).ln();
            assert!((ln_cosh(u) - want).abs() <= 1e-15 * want.max(1.0), "u={u}");
        }
        // cosh(800) overflows; ln cosh(800) = 800 - ln 2 to working precision.
        assert_eq!(ln_cosh(800.0), 800.0 - core::f64::consts::LN_2);
    }

    #[test]
    fn log_add_exp_values() {
        assert!((log_add_exp(0.0, 0.0) - 2f64.ln()).abs() < 1e-16);
        assert_eq!(log_add_exp(f64::NEG_INFINITY, 3.0), 3.0);
        assert_eq!(
            log_add_exp(f64::NEG_INFINITY, f64::NEG_INFINITY),
            f64::NEG_INFINITY
        );
        assert!((log_add_exp(1000.0, 999.0) - (1000.0 + (-1f64).exp().ln_1p())).abs() < 1e-12);
    }

    #[test]
    fn upper_gamma_values() {
        // Q(1, y) = e^{-y}
        for &y in &[0.1, 1.0, 3.0, 50.0, 700.0] {
            assert!(
                (ln_upper_gamma_q(1.0, y) + y).abs() < 1e-13 * y.max(1.0),
                "y={y}"
            );
        }
        // Q(2, y) = (1 + y) e^{-y}
        for &y in &[0.5, 2.5, 10.0] {
            let want = (1.0f64 + y).ln() - y;
            assert!((ln_upper_gamma_q(2.0, y) - want).abs() < 1e-14, "y={y}");
        }
    }
}
