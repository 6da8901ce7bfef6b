//! Private numerical helpers: log-space arithmetic and binomial coefficients (the normal CDF is
//! in [`crate::normal`]).
//!
//! Every function here is deterministic (no threads, no FMA-dependent branches) so that replaying
//! a ledger reproduces its numbers bit for bit.

use std::f64::consts::LN_2;

/// `ln(1 + exp(x))` (softplus), accurate for every `x`.
///
/// The accountant's own copy of `expfam::softplus`, kept on purpose: this crate depends on no
/// other workspace crate (and `expfam` brings linear algebra and random numbers), and the RDP
/// results recorded in ledgers are computed with exactly this formula.
pub(crate) fn log1p_exp(x: f64) -> f64 {
    if x > 36.0 {
        x + (-x).exp()
    } else {
        x.exp().ln_1p()
    }
}

/// `ln(expm1(x))` for `x > 0`, accurate for tiny and huge `x`.
pub(crate) fn ln_expm1(x: f64) -> f64 {
    if x > 40.0 {
        // ln(1 - e^-x) is below 4.3e-18, under half an ulp of x: the sum below rounds to x
        x
    } else if x > 36.0 {
        x + (-(-x).exp()).ln_1p()
    } else {
        x.exp_m1().ln()
    }
}

/// Natural log of the binomial coefficient `C(n, k)` for integers `0 <= k <= n`.
///
/// Exact-product evaluation (relative error about `2k` ulps) while the coefficient stays in
/// range; `ln Γ` differences beyond.
pub(crate) fn ln_binom_int(n: u64, k: u64) -> f64 {
    debug_assert!(k <= n);
    let k = k.min(n - k);
    if n <= 1000 {
        let mut c = 1.0_f64;
        for j in 0..k {
            c = c * (n - j) as f64 / (j + 1) as f64;
        }
        c.ln()
    } else {
        ln_gamma(n as f64 + 1.0) - ln_gamma(k as f64 + 1.0) - ln_gamma((n - k) as f64 + 1.0)
    }
}

/// `ln Γ(x)` for `x > 0`.
pub(crate) fn ln_gamma(x: f64) -> f64 {
    libm::lgamma(x)
}

/// A compensated (Neumaier) sum on the linear scale, with the data of its rounding bound: the
/// sum of magnitudes and the sum of the terms' own evaluation errors.
#[derive(Debug, Clone)]
pub(crate) struct CompensatedSum {
    sum: f64,
    comp: f64,
    abs_sum: f64,
    /// Sum of `|term| * ulps` of the terms' own evaluation errors.
    err_sum: f64,
}

impl CompensatedSum {
    /// An empty sum.
    pub(crate) fn new() -> Self {
        Self {
            sum: 0.0,
            comp: 0.0,
            abs_sum: 0.0,
            err_sum: 0.0,
        }
    }

    /// Adds `v`, whose own relative error is at most `ulps` ulps.
    #[inline]
    pub(crate) fn add(&mut self, v: f64, ulps: f64) {
        let t = self.sum + v;
        if self.sum.abs() >= v.abs() {
            self.comp += (self.sum - t) + v;
        } else {
            self.comp += (v - t) + self.sum;
        }
        self.sum = t;
        self.abs_sum += v.abs();
        self.err_sum += v.abs() * ulps;
    }

    /// Multiplies every accumulated quantity by `f` (a change of scale).
    #[inline]
    fn rescale(&mut self, f: f64) {
        self.sum *= f;
        self.comp *= f;
        self.abs_sum *= f;
        self.err_sum *= f;
    }

    /// The compensated sum.
    #[inline]
    pub(crate) fn value(&self) -> f64 {
        self.sum + self.comp
    }

    /// The sum plus its rounding bound ([`Self::rounding_bound`]) and `extra` more
    /// `eps sum |x|` for roundings the caller does afterwards: an upper bound on the exact sum.
    #[inline]
    pub(crate) fn upper(&self, extra: f64) -> f64 {
        self.value() + f64::EPSILON * ((4.0 + extra) * self.abs_sum + self.err_sum)
    }

    /// A bound on the accumulated error: the terms' own errors plus the compensated
    /// summation's (at most `2 eps |S| + O(n eps^2) sum |x|`, bounded by `4 eps sum |x|`).
    #[inline]
    pub(crate) fn rounding_bound(&self) -> f64 {
        f64::EPSILON * (4.0 * self.abs_sum + self.err_sum)
    }
}

/// A sum of signed terms given in log form, accumulated relative to a running scale with
/// Neumaier compensation. Also tracks the sum of magnitudes (for rounding-error bounds).
#[derive(Debug, Clone)]
pub(crate) struct LogSignedSum {
    scale: f64,
    linear: CompensatedSum,
}

impl LogSignedSum {
    /// An empty sum.
    pub(crate) fn new() -> Self {
        Self {
            scale: f64::NEG_INFINITY,
            linear: CompensatedSum::new(),
        }
    }

    /// Adds `sign * exp(log_mag)`, a term computed to within a few ulps.
    pub(crate) fn add(&mut self, log_mag: f64, positive: bool) {
        self.add_with_ulps(log_mag, positive, 4.0);
    }

    /// Adds `sign * exp(log_mag)` whose own relative error is at most `ulps` ulps.
    pub(crate) fn add_with_ulps(&mut self, log_mag: f64, positive: bool, ulps: f64) {
        if log_mag == f64::NEG_INFINITY {
            return;
        }
        if log_mag > self.scale {
            if self.scale != f64::NEG_INFINITY {
                self.linear.rescale((self.scale - log_mag).exp());
            }
            self.scale = log_mag;
        }
        let v = (log_mag - self.scale).exp();
        self.linear.add(if positive { v } else { -v }, ulps);
    }

    /// `(ln |sum|, sum >= 0)`; `ln 0 = -inf`.
    pub(crate) fn value(&self) -> (f64, bool) {
        let s = self.linear.value();
        if self.scale == f64::NEG_INFINITY || s == 0.0 {
            return (f64::NEG_INFINITY, true);
        }
        (self.scale + s.abs().ln(), s >= 0.0)
    }

    /// A cheap approximation of `ln |sum|` (within `ln 2`, no transcendental call), for
    /// heuristics such as where to stop summing exactly; `-inf` for an empty or zero sum.
    pub(crate) fn approx_ln_abs(&self) -> f64 {
        let s = self.linear.value().abs();
        if self.scale == f64::NEG_INFINITY || s == 0.0 || !s.is_normal() {
            return if s == 0.0 || self.scale == f64::NEG_INFINITY {
                f64::NEG_INFINITY
            } else {
                self.scale + s.ln()
            };
        }
        let exponent = ((s.to_bits() >> 52) & 0x7ff) as i64 - 1023;
        self.scale + exponent as f64 * LN_2
    }

    /// `ln` of a bound on the accumulated error: the terms' own errors plus the compensated
    /// summation's (at most `2 eps |S| + O(n eps^2) sum |x|`, bounded by `4 eps sum |x|`).
    pub(crate) fn ln_rounding_bound(&self) -> f64 {
        if self.scale == f64::NEG_INFINITY {
            return f64::NEG_INFINITY;
        }
        self.scale + self.linear.rounding_bound().ln()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binomials() {
        assert!((ln_binom_int(10, 3) - 120f64.ln()).abs() < 1e-15);
        assert_eq!(ln_binom_int(7, 0), 0.0);
        let big = ln_binom_int(5000, 2);
        assert!((big - (5000.0f64 * 4999.0 / 2.0).ln()).abs() < 1e-9);
    }

    #[test]
    fn signed_sum_cancels() {
        let mut s = LogSignedSum::new();
        s.add(0.0, true);
        s.add((0.5f64).ln(), false);
        let (v, pos) = s.value();
        assert!(pos);
        assert!((v - (0.5f64).ln()).abs() < 1e-15);
    }
}
