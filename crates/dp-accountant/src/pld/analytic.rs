//! The exact privacy profile of the Gaussian mechanism (Balle & Wang 2018, Thm 8).
//!
//! For noise multiplier `s` (noise std / L2 sensitivity) the tight `delta` at `epsilon` is
//! `delta(eps) = Phi(-eps*s + 1/(2s)) - e^eps * Phi(-eps*s - 1/(2s))`,
//! the same under add/remove and replace-one (the mechanism is symmetric). `T` Gaussian
//! mechanisms with multipliers `s_i` compose exactly to one with
//! `s = (sum_i s_i^-2)^(-1/2)` (Dong, Roth & Su 2022, Cor. 3.3: `mu`-GDP adds in squares).

use crate::normal::ln_normal_cdf;

/// The tight `delta(epsilon)` of a Gaussian mechanism with noise multiplier `s` (noise std / L2
/// sensitivity), Balle & Wang 2018, Thm 8: the one implementation in the workspace (dp-core's
/// analytic Gaussian mechanism calls it). No checks: `s > 0` and `eps >= 0` finite are the
/// caller's; the answer is in `[0, 1]`, computed in log space so that neither term underflows
/// or overflows first.
///
/// # Example
/// ```
/// let d = dp_accountant::pld::gaussian_delta(1.0, 1.0);
/// assert!((d - 0.126_936_737_506_644).abs() < 1e-14); // mpmath, 30 digits
/// ```
pub fn gaussian_delta(s: f64, eps: f64) -> f64 {
    let a = -eps * s + 0.5 / s;
    let b = -eps * s - 0.5 / s;
    let a_log = ln_normal_cdf(a);
    // ln(e^eps Phi(b)), in log space: Phi underflows before e^eps overflows. For large eps,
    // `eps + ln Phi(b)` is a difference of two huge numbers (b^2 / 2 ~ eps); the identity
    // `eps - b^2/2 = -a^2/2` gives it as `-a^2/2 + (ln Phi(b) + b^2/2)` without that cancellation.
    let b_log = if eps > LARGE_EPSILON {
        -0.5 * a * a + ln_mills(b)
    } else {
        eps + ln_normal_cdf(b)
    };
    let a = a_log.exp();
    // a - b = a (1 - e^{b_log - a_log}), without cancellation trouble when both are tiny.
    if !b_log.is_finite() {
        return a;
    }
    (-a * (b_log - a_log).exp_m1()).max(0.0)
}

/// Above this `eps`, [`gaussian_delta`] forms `ln(e^eps Phi(b))` through [`ln_mills`] (below it
/// the direct sum loses at most `1e-12` absolute in the log).
const LARGE_EPSILON: f64 = 1e4;

/// `ln Phi(b) + b^2 / 2` for `b <= 0` (the log of `sqrt(2 pi)` times Mills' ratio at `-b`), without
/// forming `b^2`: the asymptotic series `-ln(-b) - ln(2 pi)/2 + ln(1 - 1/b^2 + 3/b^4 - ...)` below
/// `b = -30` (ten terms: error below `1e-25` there), the direct sum above.
fn ln_mills(b: f64) -> f64 {
    if b > -30.0 {
        return ln_normal_cdf(b) + 0.5 * b * b;
    }
    let inv = 1.0 / (b * b);
    let (mut term, mut sum) = (1.0, 0.0);
    for k in 1..=10 {
        term *= -((2 * k - 1) as f64) * inv;
        sum += term;
    }
    -(-b).ln() - 0.5 * (2.0 * std::f64::consts::PI).ln() + sum.ln_1p()
}

/// Relative nudge of `epsilon` that covers the rounding of `1/(2s) - eps s`: when the two terms
/// nearly cancel (tiny `s`, `eps` near `1/(2 s^2)`), an ulp of the larger term moves `a` as much
/// as two or three ulps of `eps` do, so a profile evaluated at the rounded `eps` can be off by
/// that many ulps of `eps`. Eight ulps is the margin.
const EPSILON_NUDGE: f64 = 8.0 * f64::EPSILON;

/// [`gaussian_delta`] evaluated at `eps` lowered by [`EPSILON_NUDGE`]: never below the exact
/// profile at `eps` (delta decreases in `eps`), also where the terms of `a` cancel.
pub(crate) fn gaussian_delta_upper(s: f64, eps: f64) -> f64 {
    gaussian_delta(s, eps * (1.0 - EPSILON_NUDGE))
}

/// The tight `epsilon(delta)` of a Gaussian mechanism with noise multiplier `s`, as a bracket
/// `[lower, upper]` with `upper - lower <= 1e-12 * max(1, upper)`; `delta(upper) <= target`.
pub(crate) fn gaussian_epsilon(s: f64, delta: f64) -> (f64, f64) {
    if gaussian_delta(s, 0.0) <= delta {
        return (0.0, 0.0);
    }
    // delta(eps) is decreasing; find an upper end.
    let mut hi = 1.0_f64;
    while gaussian_delta(s, hi) > delta {
        hi *= 2.0;
        if !hi.is_finite() {
            return (f64::INFINITY, f64::INFINITY);
        }
    }
    let mut lo = 0.0_f64;
    // Bisection: delta(lo) > target >= delta(hi) throughout.
    while hi - lo > 1e-12 * hi.max(1.0) {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if gaussian_delta(s, mid) > delta {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    // The bisection's `hi` is exact up to the rounding of the profile's arguments; the nudge
    // keeps the upper end above the exact epsilon where those arguments cancel.
    (lo, hi * (1.0 + EPSILON_NUDGE))
}

/// Noise multiplier of the composition of Gaussian mechanisms given as `(multiplier, count)`.
pub(crate) fn composed_multiplier(parts: &[(f64, u64)]) -> f64 {
    let inv_sq: f64 = parts.iter().map(|&(s, n)| n as f64 / (s * s)).sum();
    1.0 / inv_sq.sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The CI property test's case (never_low, seed 20261121): sigma 8.41e-50 over 73,293 full
    /// steps, delta 0.999. The exact epsilon is `1/(2 s^2) - 3.09/s = 5.17781092439e102` to
    /// twelve digits (mpmath); the old sum `eps + ln Phi(b)` cancelled to garbage there and the
    /// answer was 2.5e-8 relative too low.
    #[test]
    fn huge_epsilon_is_not_low() {
        let s = composed_multiplier(&[(8.412_850_233_921_329e-50, 73_293)]);
        let (_, upper) = gaussian_epsilon(s, 0.999);
        let exact = 5.177_810_924_394_307e102;
        assert!(upper >= exact * (1.0 - 1e-15), "{upper:e} < {exact:e}");
        assert!(upper <= exact * (1.0 + 1e-11), "{upper:e}");
    }

    /// Both forms of `ln(e^eps Phi(b))` agree where [`gaussian_delta`] switches between them, and
    /// the Mills series meets the direct sum at its own switch.
    #[test]
    fn switches_are_continuous() {
        // s near 1/sqrt(2 eps), where delta(1e4) is neither 0 nor 1.
        for s in [0.0069, 0.00707, 0.0072] {
            let below = gaussian_delta(s, LARGE_EPSILON * (1.0 - 1e-12));
            let above = gaussian_delta(s, LARGE_EPSILON * (1.0 + 1e-12));
            assert!(below > 1e-6 && below < 1.0, "{s}: {below}");
            assert!(
                (below - above).abs() <= 1e-9 * below,
                "{s}: {below} {above}"
            );
        }
        let direct = ln_normal_cdf(-30.0 + 1e-9) + 0.5 * (30.0f64 - 1e-9).powi(2);
        let series = ln_mills(-30.0 - 1e-9);
        assert!((direct - series).abs() < 1e-10, "{direct} {series}");
    }

    #[test]
    fn epsilon_inverts_delta() {
        for &s in &[0.3, 1.0, 4.0] {
            for &d in &[1e-3, 1e-6, 1e-10] {
                let (lo, hi) = gaussian_epsilon(s, d);
                assert!(gaussian_delta(s, hi) <= d);
                assert!(gaussian_delta(s, lo) > d || lo == 0.0);
                assert!(hi - lo < 1e-11 * hi.max(1.0));
            }
        }
    }

    #[test]
    fn composition_adds_inverse_squares() {
        let s = composed_multiplier(&[(2.0, 4)]);
        assert!((s - 1.0).abs() < 1e-15);
    }
}
