//! Poisson-subsampled Gaussian at integer orders: the binomial expansion of Mironov, Talwar &
//! Zhang (2019), Sec. 3.2, in its cancellation-free form.
//!
//! For integer `a >= 2`, with `mu0 = N(0, sigma^2)` and `mu = (1-q) mu0 + q N(1, sigma^2)`,
//!
//! ```text
//! A_a = E_{mu0}[(mu/mu0)^a] = sum_{k=0}^{a} C(a,k) q^k (1-q)^(a-k) exp((k^2-k)/(2 sigma^2)).
//! ```
//!
//! Because `sum_k C(a,k) q^k (1-q)^(a-k) = 1` and the `k = 0, 1` exponents vanish,
//!
//! ```text
//! A_a - 1 = sum_{k=2}^{a} C(a,k) q^k (1-q)^(a-k) expm1(c_k),   c_k = (k^2-k)/(2 sigma^2),
//! ```
//!
//! a sum of positive terms, evaluated in log space; `RDP(a) = log1p(A_a - 1)/(a - 1)`.
//! No term cancels, so the relative error is a few ulps times the number of terms.
//!
//! **Early stop, on the safe side.** The terms are summed from `k = a` downwards. Because
//! `c_j <= c_k` for `2 <= j <= k` and the binomial weights sum to at most one,
//! `sum_{j=2}^{k} C(a,j) q^j (1-q)^(a-j) expm1(c_j) <= expm1(c_k)`. So once `ln expm1(c_k)` is
//! [`PRUNE_NATS`] below the largest term already summed, the remaining terms are replaced by
//! that bound (added, so the result can only go up, by less than `e^-40` relative). For the
//! large orders of a typical curve (dominated by `k` near `a`) this leaves a handful of terms.

use crate::numeric::{ln_binom_int, ln_expm1, log1p_exp};

/// Up to this order the binomial coefficients are carried as an exact running product
/// (relative error about `2(a-k)` ulps, no overflow: `C(1024, 512) < 5e306`).
const RUNNING_PRODUCT_MAX: u64 = 1024;

/// The remaining terms are bounded (not summed) once their bound is this far below the largest
/// term (`e^-40 = 4.2e-18`).
const PRUNE_NATS: f64 = 40.0;

/// Work shared by the integer orders of one `(q, sigma)`: `ln expm1(c_k)` by `k` (NaN = not
/// yet computed; every entry is the value computed from the same `f64` argument, so results do
/// not depend on the cache) and a term buffer.
pub(crate) struct IntCache {
    ln_expm1_c: Vec<f64>,
    terms: Vec<f64>,
}

impl IntCache {
    /// An empty cache (for one `sigma`).
    pub(crate) fn new() -> Self {
        Self {
            ln_expm1_c: Vec::new(),
            terms: Vec::new(),
        }
    }

    /// `ln expm1(c_k)`; for `c_k > 40` this is `c_k` itself (see [`ln_expm1`]), not cached.
    fn ln_expm1_c(&mut self, k: u64, inv_two_var: f64) -> f64 {
        let kf = k as f64;
        let c = (kf * kf - kf) * inv_two_var;
        if c > 40.0 {
            return ln_expm1(c);
        }
        let i = k as usize;
        if self.ln_expm1_c.len() <= i {
            self.ln_expm1_c.resize(i + 1, f64::NAN);
        }
        if self.ln_expm1_c[i].is_nan() {
            self.ln_expm1_c[i] = ln_expm1(c);
        }
        self.ln_expm1_c[i]
    }
}

/// `ln(A_a - 1)` (an upper bound, see the module documentation) for integer order `a >= 2`,
/// `0 < q < 1`; `cache` belongs to this `sigma`.
///
/// The log-terms are computed first and then summed relative to the largest one (one `exp`
/// per term; all terms are positive, so plain summation has relative error at most `a` ulps).
pub(crate) fn ln_a_minus_one(q: f64, sigma: f64, order: u64, cache: &mut IntCache) -> f64 {
    let ln_q = q.ln();
    let ln_1mq = (-q).ln_1p();
    let inv_two_var = 1.0 / (2.0 * sigma * sigma);
    let running = order <= RUNNING_PRODUCT_MAX;
    let af = order as f64;
    let mut terms = std::mem::take(&mut cache.terms);
    terms.clear();
    // C(a, a) to start the running product downwards
    let mut binom = 1.0_f64;
    let mut max = f64::NEG_INFINITY;
    let mut k = order;
    while k >= 2 {
        let kf = k as f64;
        let ln_e = cache.ln_expm1_c(k, inv_two_var);
        if ln_e < max - PRUNE_NATS {
            // bound on sum_{j=2}^{k} of the terms (safe side)
            terms.push(ln_e);
            break;
        }
        let ln_binom = if running {
            binom.ln()
        } else {
            ln_binom_int(order, k)
        };
        let term = ln_binom + kf * ln_q + (order - k) as f64 * ln_1mq + ln_e;
        max = max.max(term);
        terms.push(term);
        if running {
            // C(a, k-1) = C(a, k) k / (a - k + 1); divide first against overflow
            binom = binom / (af - kf + 1.0) * kf;
        }
        k -= 1;
    }
    let out = if max == f64::NEG_INFINITY {
        max
    } else {
        let sum: f64 = terms
            .iter()
            .map(|&t| t - max)
            .filter(|&d| d > -746.0)
            .map(f64::exp)
            .sum();
        max + sum.ln()
    };
    cache.terms = terms;
    out
}

/// `ln A_a` for integer order `a >= 2`, `0 < q < 1`.
pub(crate) fn ln_a(q: f64, sigma: f64, order: u64, cache: &mut IntCache) -> f64 {
    log1p_exp(ln_a_minus_one(q, sigma, order, cache))
}

/// RDP at integer order `a >= 2` for `0 < q < 1`.
pub(crate) fn rdp(q: f64, sigma: f64, order: u64, cache: &mut IntCache) -> f64 {
    let l = ln_a_minus_one(q, sigma, order, cache);
    let ln_a = log1p_exp(l);
    ln_a / (order - 1) as f64
}
