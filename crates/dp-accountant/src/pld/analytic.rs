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
    let a_log = ln_normal_cdf(-eps * s + 0.5 / s);
    let a = a_log.exp();
    // e^eps * Phi(-eps s - 1/(2s)) in log space: Phi underflows before e^eps overflows.
    let b_log = eps + ln_normal_cdf(-eps * s - 0.5 / s);
    // a - b = a (1 - e^{b_log - a_log}), without cancellation trouble when both are tiny.
    if !b_log.is_finite() {
        return a;
    }
    (-a * (b_log - a_log).exp_m1()).max(0.0)
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
    (lo, hi)
}

/// Noise multiplier of the composition of Gaussian mechanisms given as `(multiplier, count)`.
pub(crate) fn composed_multiplier(parts: &[(f64, u64)]) -> f64 {
    let inv_sq: f64 = parts.iter().map(|&(s, n)| n as f64 / (s * s)).sum();
    1.0 / inv_sq.sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

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
