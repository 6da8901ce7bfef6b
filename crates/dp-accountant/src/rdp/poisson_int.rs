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
//! a sum of positive terms; `RDP(a) = log1p(A_a - 1)/(a - 1)`. No term cancels, so the
//! relative error is a few ulps times the number of terms.
//!
//! **Early stop, on the safe side.** The terms are summed from `k = a` downwards. Because
//! `c_j <= c_k` for `2 <= j <= k` and the binomial weights sum to at most one,
//! `sum_{j=2}^{k} C(a,j) q^j (1-q)^(a-j) expm1(c_j) <= expm1(c_k)`. So once `ln expm1(c_k)` is
//! [`PRUNE_NATS`] below the largest term already summed, the remaining terms are replaced by
//! that bound (added, so the result can only go up, by less than `e^-40` relative). For the
//! large orders of a typical curve (dominated by `k` near `a`) this leaves a handful of terms.
//!
//! **Running products.** The terms are formed relative to the `k = a` term as running products
//! of their ratios `term_(k-1) / term_k = k / (a - k + 1) * (1-q)/q * exp(L_(k-1) - L_k)`
//! (`L_k = ln expm1(c_k)`; the `exp` of the difference is cached by `k` and shared by all
//! orders), so no logarithm or exponential is taken per term; the errors of the cached `L_k`
//! telescope. The sum is rescaled to its largest term, evaluated directly in log space, and a
//! rounding margin is added (see [`ln_a_minus_one_products`]). If a product leaves
//! `[1e-250, 1e250]` (large orders dominated by `k = a`, extreme `q` or `sigma`) or the order is
//! above 1000, the order is summed in log space instead, one `exp` per term.

use crate::numeric::{ln_binom_int, ln_expm1, log1p_exp};
use std::f64::consts::LN_2;

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
    /// [`Step`]s by `k` (NaN = not yet computed).
    steps: Vec<Step>,
    /// `(ln q, ln(1 - q))` (NaN = not yet computed).
    ln_q_1mq: (f64, f64),
    terms: Vec<(f64, f64)>,
}

impl IntCache {
    /// An empty cache (for one `(q, sigma)` pair).
    pub(crate) fn new() -> Self {
        Self {
            ln_expm1_c: Vec::new(),
            steps: Vec::new(),
            ln_q_1mq: (f64::NAN, f64::NAN),
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

    /// `(ln q, ln(1 - q))`.
    fn ln_q_1mq(&mut self, q: f64) -> (f64, f64) {
        if self.ln_q_1mq.0.is_nan() {
            self.ln_q_1mq = (q.ln(), (-q).ln_1p());
        }
        self.ln_q_1mq
    }

    /// The step from `k` down to `k - 1`, `k >= 3`.
    fn step(&mut self, k: u64, inv_two_var: f64) -> Step {
        let i = k as usize;
        if self.steps.len() <= i {
            self.steps.resize(
                i + 1,
                Step {
                    ratio: f64::NAN,
                    ln_diff_err: f64::NAN,
                    ln_next: f64::NAN,
                },
            );
        }
        if self.steps[i].ratio.is_nan() {
            let ln_next = self.ln_expm1_c(k - 1, inv_two_var);
            let ln_k = self.ln_expm1_c(k, inv_two_var);
            let d = ln_next - ln_k;
            let exact = (ln_next >= 0.0) == (ln_k >= 0.0)
                && ln_next.abs() <= 2.0 * ln_k.abs()
                && ln_k.abs() <= 2.0 * ln_next.abs();
            self.steps[i] = Step {
                ratio: d.exp(),
                ln_diff_err: if exact { 0.0 } else { d.abs() },
                ln_next,
            };
        }
        self.steps[i]
    }
}

/// The ratio `expm1(c_(k-1)) / expm1(c_k)` of a running product, cached by `k`.
#[derive(Clone, Copy)]
struct Step {
    /// `exp(L_(k-1) - L_k)`.
    ratio: f64,
    /// Error bound (ulps) of `exp(L_(k-1) - L_k)` from the subtraction: 0 when it is exact
    /// (Sterbenz: same sign, within a factor 2), else `|L_(k-1) - L_k|`.
    ln_diff_err: f64,
    /// `L_(k-1)`.
    ln_next: f64,
}

/// Orders above this are summed in log space (`ln_binom_int` is an exact product up to 1000).
const PRODUCTS_MAX_ORDER: u64 = 1000;

/// Smallest and largest running product (relative to the `k = a` term) kept in linear form.
const TINY: f64 = 1e-250;
const HUGE: f64 = 1e250;

/// `ln(A_a - 1)` (an upper bound, see the module documentation) for integer order `a >= 2`,
/// `0 < q < 1`; `cache` belongs to this `(q, sigma)`.
///
/// By running products where they stay in range ([`ln_a_minus_one_products`]), else in log
/// space ([`ln_a_minus_one_logs`]).
pub(crate) fn ln_a_minus_one(q: f64, sigma: f64, order: u64, cache: &mut IntCache) -> f64 {
    ln_a_minus_one_products(q, sigma, order, cache)
        .unwrap_or_else(|| ln_a_minus_one_logs(q, sigma, order, cache))
}

/// [`ln_a_minus_one`] by running products relative to the `k = a` term, or `None` if a
/// product leaves the linear range or the order is above [`PRODUCTS_MAX_ORDER`].
///
/// The sum is then rescaled to its largest term `k*`, evaluated directly in log space, so the
/// large logarithms of the `k = a` term (`a ln q`, `c_a`) do not enter the result. Margin for
/// rounding: term `k` is within `|R_k - R_k*| + 4 |L_k| + E*` ulps of its exact value relative
/// to term `k*` (`R` the accumulated rounding of the ratios, `6 + |L_(k-1) - L_k|` ulps per step
/// or 6 when the difference of the cached logs is exact; the errors of the cached `L_j`
/// telescope to the ends; `E*` the direct evaluation's error, `8 + 2 min(k*, a-k*) +
/// 3 (|ln C| + |k* ln q| + |(a-k*) ln(1-q)|) + 2 (|L_k*| + c_k*)`), and the sum within `2 n`
/// ulps of the sum of the terms.
fn ln_a_minus_one_products(q: f64, sigma: f64, order: u64, cache: &mut IntCache) -> Option<f64> {
    if order > PRODUCTS_MAX_ORDER {
        return None;
    }
    let inv_two_var = 1.0 / (2.0 * sigma * sigma);
    let inv_rho = (1.0 - q) / q;
    // (signed conversions: one instruction on x86-64, exact below 2^53)
    let order_i = order as i64;
    let ln_e_top = cache.ln_expm1_c(order, inv_two_var);
    // ln of the k = a term C(a, a) q^a expm1(c_a), only for the stopping bound
    let ln_top = order_i as f64 * q.ln() + ln_e_top;
    // Sums over the terms (relative to the k = a term) of t, t R and t 4 |L_k|, and the first
    // two as they were just before the largest term (so that sum t |R - R*| is exact).
    let (mut sum_t, mut sum_tr, mut sum_te) = (1.0_f64, 0.0, 4.0 * ln_e_top.abs());
    let (mut before_t, mut before_tr) = (0.0, 0.0);
    let (mut term, mut round) = (1.0_f64, 0.0);
    let (mut max, mut k_max, mut round_max) = (1.0_f64, order, 0.0);
    let mut n = 1.0;
    let mut bound = 0.0;
    let mut k = order;
    while k > 2 {
        let step = cache.step(k, inv_two_var);
        let ki = k as i64;
        term *= (ki as f64 / (order_i - ki + 1) as f64) * inv_rho * step.ratio;
        round += 6.0 + step.ln_diff_err;
        k -= 1;
        let ln_e = step.ln_next;
        // ln max from its binary exponent (at most ln 2 below): the stop is only a choice
        let ln_max = (((max.to_bits() >> 52) & 0x7ff) as f64 - 1023.0) * LN_2;
        if ln_e - ln_top < ln_max - PRUNE_NATS {
            // bound on sum_{j=2}^{k} of the terms (safe side, doubled for its own rounding)
            bound = 2.0 * (ln_e - ln_top).exp();
            break;
        }
        if !(TINY..=HUGE).contains(&term) {
            return None;
        }
        if term > max {
            (max, k_max, round_max) = (term, k, round);
            (before_t, before_tr) = (sum_t, sum_tr);
        }
        sum_t += term;
        sum_tr += term * round;
        sum_te += term * 4.0 * ln_e.abs();
        n += 1.0;
    }
    // sum t |R - R*|: R grows along the chain, so R* - R before the largest term, R - R* after
    let spread = (round_max * before_t - before_tr).max(0.0)
        + ((sum_tr - before_tr) - round_max * (sum_t - before_t)).max(0.0);
    // term k* directly: C(a, k*) q^k* (1-q)^(a-k*) expm1(c_k*)
    let (ln_q, ln_1mq) = cache.ln_q_1mq(q);
    let ln_b = ln_binom_int(order, k_max);
    let (lq, l1q) = (k_max as f64 * ln_q, (order - k_max) as f64 * ln_1mq);
    let ln_e = cache.ln_expm1_c(k_max, inv_two_var);
    let ln_anchor = ln_b + lq + l1q + ln_e;
    // the product for C (2 ulps a factor) and ln (half an ulp of |ln C|); ln q, ln(1-q) one ulp
    // each and the products half; c 1.5 ulps, so ln expm1(c) within 1.5 c + 2.5 + |L| / 2;
    // three additions, half an ulp of at most the sum of the magnitudes each
    let kf = k_max as f64;
    let c = (kf * kf - kf) * inv_two_var;
    let anchor_ulps = 8.0
        + 2.0 * k_max.min(order - k_max) as f64
        + 3.0 * (ln_b.abs() + lq.abs() + l1q.abs())
        + 2.0 * (ln_e.abs() + c);
    let scaled = (sum_t + bound) / max;
    // (the end error of the largest term itself is in `anchor_ulps`; the error bounds are
    // themselves computed to a few ulps: an eighth more)
    let ends = (sum_te - max * 4.0 * ln_e.abs()).max(0.0);
    let err = 1.125 * (spread + ends) / max;
    let margin = f64::EPSILON * (err + scaled * (anchor_ulps + 2.0 * n + 2.0));
    Some(ln_anchor + (scaled + margin).ln())
}

/// [`ln_a_minus_one`] with every term in log space (no range limit): the log-terms are
/// computed first and then summed relative to the largest one (one `exp` per term; all terms
/// are positive, so plain summation has relative error at most `n` ulps). The terms' error
/// bounds (the same per-operation model as [`ln_a_minus_one_products`]), weighted by the terms,
/// and the summation's are added in log space.
fn ln_a_minus_one_logs(q: f64, sigma: f64, order: u64, cache: &mut IntCache) -> f64 {
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
    // largest absolute error (ulps) of a log-term, as in `ln_a_minus_one_products`; ln Gamma
    // values (orders above 1024) within a few ulps of their magnitude, at most (a+1) ln(a+1)
    let gamma_ulps = if running {
        0.0
    } else {
        12.0 * (af + 1.0) * (af + 1.0).ln()
    };
    let mut k = order;
    while k >= 2 {
        let kf = k as f64;
        let ln_e = cache.ln_expm1_c(k, inv_two_var);
        let c = (kf * kf - kf) * inv_two_var;
        let e_ulps = 2.0 * (ln_e.abs() + c) + 8.0;
        if ln_e < max - PRUNE_NATS {
            // bound on sum_{j=2}^{k} of the terms (safe side)
            terms.push((ln_e, e_ulps));
            break;
        }
        let ln_binom = if running {
            binom.ln()
        } else {
            ln_binom_int(order, k)
        };
        let (lq, l1q) = (kf * ln_q, (order - k) as f64 * ln_1mq);
        let term = ln_binom + lq + l1q + ln_e;
        let binom_ulps = if running {
            2.0 * (order - k) as f64
        } else {
            gamma_ulps
        };
        let ulps = e_ulps + binom_ulps + 2.0 * ln_binom.abs() + 3.0 * (lq.abs() + l1q.abs());
        max = max.max(term);
        terms.push((term, ulps));
        if running {
            // C(a, k-1) = C(a, k) k / (a - k + 1); divide first against overflow
            binom = binom / (af - kf + 1.0) * kf;
        }
        k -= 1;
    }
    let out = if max == f64::NEG_INFINITY {
        max
    } else {
        let (mut sum, mut err) = (0.0, 0.0);
        for &(t, ulps) in terms.iter().filter(|&&(t, _)| t - max > -746.0) {
            let v = (t - max).exp();
            sum += v;
            err += v * ulps;
        }
        let ln_am1 = max + sum.ln();
        // margin in log space: the terms' errors (weighted by the terms), the sum's (and the
        // terms left out below e^-746) and the last roundings
        let n = terms.len() as f64;
        ln_am1 + f64::EPSILON * (1.125 * err / sum + 2.0 * n + 4.0 + 2.0 * ln_am1.abs())
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The running products and the log-space sum (two upper bounds, each with its rounding
    /// margin) agree to 1e-12 (in `ln(A - 1)`, relative beyond magnitude 1), and the products
    /// serve the benchmark's integer orders up to 63.
    #[test]
    fn products_agree_with_log_space_sum() {
        for (sigma, q) in [
            (1.1f64, 0.01f64),
            (0.5, 1e-4),
            (10.0, 0.2),
            (0.8, 0.7),
            (3.0, 0.05),
            (1.5, 1e-3),
        ] {
            for a in [2u64, 3, 5, 11, 32, 63, 128, 256, 512, 1000] {
                let logs = ln_a_minus_one_logs(q, sigma, a, &mut IntCache::new());
                let Some(fast) = ln_a_minus_one_products(q, sigma, a, &mut IntCache::new()) else {
                    assert!(!(sigma == 1.1 && a <= 63), "fell back at order {a}");
                    continue;
                };
                let tol = 1e-12 * logs.abs().max(1.0);
                assert!(
                    (fast - logs).abs() <= tol,
                    "sigma {sigma} q {q} order {a}: products {fast} logs {logs}"
                );
            }
        }
    }
}
