//! Density and CDF of `J*(h, z) = 4 PG(h, 2z)` from the alternating series (small shapes).
//!
//! Density: `f(y) = cosh^h(z) e^{-z^2 y / 2} sum_n (-1)^n a_n(y)` with the `a_n` of
//! [`crate::series`]. CDF: integrating term by term,
//! `F(y) = cosh^h(z) sum_n (-1)^n c_n [e^{-cz} Phi((zy - c)/sqrt y) + e^{cz} Phi(-(zy + c)/sqrt y)]`,
//! `c = 2n + h`, `c_n = 2^h Gamma(n+h) / (Gamma(h) n!)` (the bracket is the inverse-Gaussian
//! CDF, Windle et al. 2014, Sec. 4). All terms are formed in log space. For `h = 1` and
//! `y > 1` Devroye's large-`y` series is used instead (no cancellation there):
//! `f(y) = cosh(z) e^{-z^2 y/2} pi sum (-1)^n (n + 1/2) e^{-(n+1/2)^2 pi^2 y / 2}` and
//! `1 - F(y) = cosh(z) pi sum (-1)^n (n + 1/2) e^{-l_n y} / l_n`, `l_n = (n+1/2)^2 pi^2/2 + z^2/2`.

use crate::series::{HALF_LN_2PI, MAX_TERMS};
use crate::special_fn::{ln_cosh, ln_gamma, ln_norm_cdf, log_add_exp};

const PI: f64 = core::f64::consts::PI;

/// `ln P(n)` certificate (see [`crate::series`]): `a_m` decreases for all `m >= n` at every
/// point `<= y` once `ln P(n) < 2 (2n+1+h) / y`.
fn certified(h: f64, n: u32, y: f64) -> bool {
    let nf = f64::from(n);
    let lp = if n == 0 {
        (2.0 + h).ln()
    } else if h >= 1.0 {
        ((nf + h) * (2.0 * nf + 2.0 + h) / ((nf + 1.0) * (2.0 * nf + h))).ln()
    } else {
        (2.0 / (2.0 * nf + h)).ln_1p()
    };
    lp < 2.0 * (2.0 * nf + 1.0 + h) / y
}

/// Density of `J*(h, z)` at `y > 0`.
pub(crate) fn jstar_density(h: f64, z: f64, y: f64) -> f64 {
    let ln_tilt = h * ln_cosh(z) - 0.5 * z * z * y;
    if h == 1.0 && y > 1.0 {
        let mut s = 0.0;
        for n in 0..64u32 {
            let k = f64::from(n) + 0.5;
            let term = k * (ln_tilt - 0.5 * k * k * PI * PI * y).exp();
            s += if n % 2 == 0 { term } else { -term };
            if term < 1e-18 * s.abs() {
                break;
            }
        }
        return (PI * s).max(0.0);
    }
    let ln_y = y.ln();
    let ln_a0 = h * core::f64::consts::LN_2 + h.ln() - HALF_LN_2PI - 1.5 * ln_y - 0.5 * h * h / y;
    let mut weight = 1.0;
    let mut sum = 1.0;
    let mut cert = certified(h, 0, y);
    for n in 1..MAX_TERMS {
        let nf = f64::from(n);
        weight *= (nf - 1.0 + h) / nf;
        let term = weight * ((2.0 * nf + h) / h) * (-2.0 * nf * (nf + h) / y).exp();
        sum += if n % 2 == 1 { -term } else { term };
        if !cert {
            cert = certified(h, n, y);
        }
        if cert && term < 1e-18 * sum.abs().max(1e-300) {
            break;
        }
    }
    ((ln_tilt + ln_a0).exp() * sum).max(0.0)
}

/// CDF of `J*(h, z)` at `y > 0`.
pub(crate) fn jstar_cdf(h: f64, z: f64, y: f64) -> f64 {
    let ln_ch = h * ln_cosh(z);
    if h == 1.0 && y > 1.0 {
        let mut s = 0.0;
        for n in 0..64u32 {
            let k = f64::from(n) + 0.5;
            let l = 0.5 * k * k * PI * PI + 0.5 * z * z;
            let term = k * (ln_ch - l * y - l.ln()).exp();
            s += if n % 2 == 0 { term } else { -term };
            if term < 1e-18 {
                break;
            }
        }
        return (1.0 - PI * s).clamp(0.0, 1.0);
    }
    let sqrt_y = y.sqrt();
    let ln_gh = ln_gamma(h);
    let mut sum = 0.0;
    let mut cert = certified(h, 0, y);
    for n in 0..MAX_TERMS {
        let nf = f64::from(n);
        let c = 2.0 * nf + h;
        let ln_cn = h * core::f64::consts::LN_2 + ln_gamma(nf + h) - ln_gh - ln_gamma(nf + 1.0);
        let ln_ig = log_add_exp(
            -c * z + ln_norm_cdf((z * y - c) / sqrt_y),
            c * z + ln_norm_cdf(-(z * y + c) / sqrt_y),
        );
        let term = (ln_ch + ln_cn + ln_ig).exp();
        sum += if n % 2 == 0 { term } else { -term };
        if n > 0 && !cert {
            cert = certified(h, n, y);
        }
        if cert && term < 1e-18 {
            break;
        }
    }
    sum.clamp(0.0, 1.0)
}
