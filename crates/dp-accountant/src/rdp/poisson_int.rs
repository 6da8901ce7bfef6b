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
//! A_a - 1 = sum_{k=2}^{a} C(a,k) q^k (1-q)^(a-k) expm1((k^2-k)/(2 sigma^2)),
//! ```
//!
//! a sum of positive terms, evaluated in log space; `RDP(a) = log1p(A_a - 1)/(a - 1)`.
//! No term cancels, so the relative error is a few ulps times the number of terms.

use crate::numeric::{ln_binom_int, ln_expm1, log1p_exp};

/// Up to this order the binomial coefficients are carried as an exact running product
/// (relative error about `2k` ulps, no overflow: `C(1024, 512) < 5e306`).
const RUNNING_PRODUCT_MAX: u64 = 1024;

/// `ln(A_a - 1)` for integer order `a >= 2`, `0 < q < 1`.
///
/// The log-terms are computed first and then summed relative to the largest one (one `exp`
/// per term; all terms are positive, so plain summation has relative error at most `a` ulps).
pub(crate) fn ln_a_minus_one(q: f64, sigma: f64, order: u64) -> f64 {
    let ln_q = q.ln();
    let ln_1mq = (-q).ln_1p();
    let inv_two_var = 1.0 / (2.0 * sigma * sigma);
    let running = order <= RUNNING_PRODUCT_MAX;
    let af = order as f64;
    // C(a, 2) to start the running product
    let mut binom = af * (af - 1.0) / 2.0;
    let mut terms = Vec::with_capacity(order as usize - 1);
    let mut max = f64::NEG_INFINITY;
    for k in 2..=order {
        let kf = k as f64;
        let c = (kf * kf - kf) * inv_two_var;
        let ln_binom = if running {
            binom.ln()
        } else {
            ln_binom_int(order, k)
        };
        let term = ln_binom + kf * ln_q + (order - k) as f64 * ln_1mq + ln_expm1(c);
        max = max.max(term);
        terms.push(term);
        if running {
            // divide first: the product could overflow for orders near 1024
            binom = binom / (kf + 1.0) * (af - kf);
        }
    }
    if max == f64::NEG_INFINITY {
        return max;
    }
    let sum: f64 = terms
        .iter()
        .map(|&t| t - max)
        .filter(|&d| d > -746.0)
        .map(f64::exp)
        .sum();
    max + sum.ln()
}

/// `ln A_a` for integer order `a >= 2`, `0 < q < 1`.
pub(crate) fn ln_a(q: f64, sigma: f64, order: u64) -> f64 {
    log1p_exp(ln_a_minus_one(q, sigma, order))
}

/// RDP at integer order `a >= 2` for `0 < q < 1`.
pub(crate) fn rdp(q: f64, sigma: f64, order: u64) -> f64 {
    let l = ln_a_minus_one(q, sigma, order);
    let ln_a = log1p_exp(l);
    ln_a / (order - 1) as f64
}
