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
///
/// With [`ln_norm_cdf`], a private copy of the workspace's home, `dp_accountant::normal`
/// (`normal_cdf`, `ln_normal_cdf`), kept because this leaf sampler must not depend on the
/// accountant. It is the same algorithm on the same `erfc` (`special`'s `compl_error` is
/// `libm::erfc`) and is tested against the same mpmath table (`normal_reference.rs`, written by
/// `crates/dp-accountant/tests/data/normal_reference.py` into both crates).
#[inline]
pub(crate) fn norm_cdf(x: f64) -> f64 {
    0.5 * (-x * core::f64::consts::FRAC_1_SQRT_2).compl_error()
}

/// `ln Phi(x)`, the log of the standard normal CDF, accurate in both tails and finite for every
/// finite `x`: `ln_1p(-erfc(x/sqrt 2)/2)` for `x > 0`, else `ln(erfc(y)/2)` with `y = -x/sqrt 2`,
/// from its asymptotic series (eleven terms, truncation below `1e-20`) once `y >= 26`, where
/// `erfc` nears underflow. Within 4 ulps of mpmath for `x <= 0` (tested down to `x = -1e8`).
/// NaN propagates.
pub(crate) fn ln_norm_cdf(x: f64) -> f64 {
    if x > 0.0 {
        return (-0.5 * (x * core::f64::consts::FRAC_1_SQRT_2).compl_error()).ln_1p();
    }
    let y = -x * core::f64::consts::FRAC_1_SQRT_2;
    if y < 26.0 || y.is_nan() {
        (0.5 * y.compl_error()).ln()
    } else if y == f64::INFINITY {
        f64::NEG_INFINITY
    } else {
        // erfc(y) = exp(-y^2) / (y sqrt(pi)) * sum_n (-1)^n (2n-1)!! / (2y^2)^n
        let t = 1.0 / (2.0 * y * y);
        let mut term = 1.0;
        let mut sum = 1.0;
        for n in 1..12 {
            term *= -f64::from(2 * n - 1) * t;
            sum += term;
        }
        -y * y - (2.0 * y * core::f64::consts::PI.sqrt()).ln() + sum.ln()
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

/// `ln cosh(u)` for `u >= 0` without overflow: `u + ln(1 + e^{-2u}) - ln 2`. The same formula as
/// `expfam::ln_cosh`, kept private here because a PG-sampler-only user must not pull expfam.
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

    include!("normal_reference.rs");

    fn rel(got: f64, want: f64) -> f64 {
        if got == want {
            0.0
        } else {
            ((got - want) / want).abs()
        }
    }

    /// The same table and tolerances as `dp_accountant::normal`'s tests.
    #[test]
    fn norm_cdf_matches_mpmath() {
        for &(x, want) in ERFC {
            if !want.is_nan() {
                let got = x.compl_error();
                assert!(rel(got, want) <= 4.0 * f64::EPSILON, "erfc({x}) = {got}");
            }
        }
        let mut tested = 0;
        for &(z, phi, _, ln_phi) in NORMAL {
            let tail_tol = f64::EPSILON * (4.0 + 2.0 * z * z);
            if !phi.is_nan() {
                let got = norm_cdf(z);
                assert!(rel(got, phi) <= tail_tol, "Phi({z}) = {got} vs {phi}");
            }
            if !ln_phi.is_nan() {
                let got = ln_norm_cdf(z);
                let tol = if z <= 0.0 {
                    4.0 * f64::EPSILON
                } else {
                    tail_tol
                };
                assert!(rel(got, ln_phi) <= tol, "ln Phi({z}) = {got} vs {ln_phi}");
                tested += 1;
            }
        }
        assert!(tested > 50);
        assert_eq!(ln_norm_cdf(f64::NEG_INFINITY), f64::NEG_INFINITY);
        assert_eq!(ln_norm_cdf(f64::INFINITY), 0.0);
        assert!(ln_norm_cdf(f64::NAN).is_nan());
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
