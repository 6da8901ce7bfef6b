//! Fixed-size subsampling without replacement of the Gaussian mechanism, replace-one neighbours:
//! Wang, Balle & Kasiviswanathan (2019, "Subsampled Rényi differential privacy and analytical
//! moments accountant"), Thm 9 with the Gaussian refinement of Thm 27.
//!
//! With sampling ratio `g = m/n` and the base mechanism's RDP `eps(x) = x/(2 sigma^2)`
//! (noise multiplier relative to the replace-one sensitivity), for integer `a >= 2`
//!
//! ```text
//! (a-1) RDP(a) <= ln( 1 + g^2 C(a,2) min{ 4 (e^{eps(2)} - 1), 2 e^{eps(2)} }
//!                       + sum_{j=3}^{a} g^j C(a,j) min{ 4 sqrt(D_{2 floor(j/2)} D_{2 ceil(j/2)}),
//!                                                        2 e^{(j-1) eps(j)} } )
//! ```
//!
//! where `D_l` is the `l`-th forward difference at 0 of `k -> e^{(k-1) eps(k)}`. For even `l`,
//! `D_l = E[(e^W - 1)^l] >= 0` with `W ~ N(-1/(2 sigma^2), 1/sigma^2)`; it is evaluated as the
//! alternating binomial sum plus an explicit bound on its rounding error, so a cancelled value
//! can only push the minimum to the (valid) second branch, never below the true bound.
//! Fractional orders use Corollary 10 of the same paper: `(a-1) RDP(a)` is interpolated linearly
//! between `floor(a)` and `ceil(a)` (with value 0 at `a = 1`).

use crate::numeric::{LogSignedSum, ln_binom_int, ln_expm1, log1p_exp};
use std::f64::consts::LN_2;

/// Orders above this use only the second branch of the minimum (Thm 9), which is valid but
/// looser; the forward differences would cost `O(a^2)`.
const MAX_DIFF_ORDER: u64 = 256;

/// Upper bound on `ln D_l` for even `l` (forward difference of `e^{c k (k-1)}` at 0), or `+inf`
/// if rounding swamps it.
fn ln_forward_diff_upper(c: f64, l: u64) -> f64 {
    let mut sum = LogSignedSum::new();
    let mut max_exponent: f64 = 0.0;
    for k in 0..=l {
        let kf = k as f64;
        let e = c * kf * (kf - 1.0);
        max_exponent = max_exponent.max(e);
        sum.add(ln_binom_int(l, k) + e, (l - k).is_multiple_of(2));
    }
    let (ln_v, positive) = sum.value();
    // Exponentials carry ~|x| ulps of relative error on top of the summation's.
    let ln_round = sum.ln_rounding_bound() + (1.0 + max_exponent).ln();
    let mut bound = LogSignedSum::new();
    if positive {
        bound.add(ln_v, true);
    }
    bound.add(ln_round, true);
    bound.value().0
}

/// `ln A` bound (that is, `(a-1) RDP(a)`) at integer order `a >= 2`, ratio `0 < g < 1`.
pub(crate) fn ln_a_int(ratio: f64, sigma: f64, order: u64) -> f64 {
    let c = 1.0 / (2.0 * sigma * sigma);
    // The largest exponent below is `c (order + 1) order` (the forward differences). Once it
    // overflows, terms would drop out as inf/NaN and leave a finite, too small `ln A`: the
    // bound is then infinite (never low).
    let order_f = order as f64;
    if !(c * (order_f + 1.0) * order_f).is_finite() {
        return f64::INFINITY;
    }
    let eps = |x: f64| x * c;
    let ln_g = ratio.ln();
    // A - 1 as a sum of positive terms (then log1p), so tiny values keep their relative accuracy.
    let mut total = LogSignedSum::new();
    // j = 2
    let t2 = (2.0 * LN_2 + ln_expm1(eps(2.0))).min(eps(2.0) + LN_2);
    total.add(2.0 * ln_g + ln_binom_int(order, 2) + t2, true);
    let diffs: Vec<f64> = if order <= MAX_DIFF_ORDER {
        // D_l for even l = 0, 2, 4, ..., order + 1
        (0..=order.div_ceil(2))
            .map(|h| ln_forward_diff_upper(c, 2 * h))
            .collect()
    } else {
        Vec::new()
    };
    for j in 3..=order {
        let jf = j as f64;
        let mut t = LN_2 + (jf - 1.0) * eps(jf);
        if !diffs.is_empty() {
            let lo = diffs[(j / 2) as usize];
            let hi = diffs[j.div_ceil(2) as usize];
            t = t.min(2.0 * LN_2 + 0.5 * (lo + hi));
        }
        total.add(jf * ln_g + ln_binom_int(order, j) + t, true);
    }
    let rounding = total.ln_rounding_bound();
    total.add(rounding, true);
    log1p_exp(total.value().0)
}

/// `(a-1) RDP(a)` bound at any order `a > 1` (Corollary 10 interpolation for fractional `a`).
pub(crate) fn ln_a(ratio: f64, sigma: f64, alpha: f64) -> f64 {
    let lo = alpha.floor();
    if lo == alpha {
        return ln_a_int(ratio, sigma, alpha as u64);
    }
    let hi = lo + 1.0;
    let t = alpha - lo;
    let f_lo = if lo < 2.0 {
        0.0
    } else {
        ln_a_int(ratio, sigma, lo as u64)
    };
    let f_hi = ln_a_int(ratio, sigma, hi as u64);
    (1.0 - t) * f_lo + t * f_hi
}
