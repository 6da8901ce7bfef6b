//! Poisson-subsampled Gaussian at fractional orders: the two-series erfc form of Mironov, Talwar &
//! Zhang (2019), Sec. 3.3, summed with a rigorous bound on the truncated tails.
//!
//! With `z0 = sigma^2 ln(1/q - 1) + 1/2` (where the two mixture components cross),
//!
//! ```text
//! A_a = sum_{i>=0} C(a,i) (1-q)^(a-i) q^i       exp((i^2-i)/(2 sigma^2)) Phi((z0 - i)/sigma)
//!     + sum_{i>=0} C(a,i) (1-q)^i     q^(a-i)   exp(((a-i)^2-(a-i))/(2 sigma^2)) Phi((a - i - z0)/sigma)
//! ```
//!
//! (`Phi(x) = erfc(-x/sqrt 2)/2`). For `i >= ceil(a)` the coefficients `C(a,i)` alternate in sign
//! and both series' term magnitudes form *completely monotone* sequences in `i` (a product of
//! the moment sequence `|C(a,i)| = (|sin(pi a)|/pi) B(i-a, a+1)` with a moment sequence of a
//! likelihood ratio bounded by 1 on its half-line). An alternating completely monotone tail
//! `sum_j (-1)^j T_{n+j}` is summed with the Cohen-Villegas-Zagier (2000) acceleration, whose
//! error after `m` terms is at most `2 T_n / (3 + sqrt 8)^m` for such sequences. So each tail
//! is enclosed in an interval `[L, U]`, and the crate takes the side that over-estimates `A_a`:
//! the result is never below the exact value (up to the explicit rounding margin added on top).
//!
//! For `q <= 1/2` and small `A_a - 1` the first series is rewritten with
//! `sum_i C(a,i) (1-q)^(a-i) q^i = 1` (absolutely convergent for `q <= 1/2`) so that `A_a - 1`
//! is summed directly, without the cancellation of `A_a - 1`:
//! `A_a - 1 = sum_i C(a,i)(1-q)^(a-i) q^i [expm1(c_i) Phi(u_i) - Phi(-u_i)] + (second series)`.

use crate::numeric::{LogSignedSum, ln_expm1, ln_ndtr, log1p_exp};
use std::f64::consts::LN_2;

/// Values shared by every fractional order of one `(q, sigma)`: the series-1 normal-CDF factors
/// depend on the index only, the series-2 ones on `m = a - i`, which repeats across orders with
/// the same fractional part. Filled lazily; every entry is the
/// value the uncached code computes from the same `f64` argument, so results are bit-identical.
pub(crate) struct FracCache {
    /// `ln Phi((z0 - i)/sigma)` by `i` (NaN = not yet computed).
    s1_pos: Vec<f64>,
    /// `ln Phi(-(z0 - i)/sigma)` by `i`.
    s1_neg: Vec<f64>,
    /// `ln expm1(c_i)` by `i`.
    expm1: Vec<f64>,
    /// `ln(i + 1)` by `i`.
    ln_next: Vec<f64>,
    /// Per fractional part `f` of the order (its bits): `(ln Phi((m - z0)/sigma), ln |m|)` for
    /// `m = a - i`, indexed by `i - floor(a) + FRAC_OFFSET`. `a - i` is the correctly rounded
    /// `(floor(a) - i) + f`, so it depends on `(floor(a) - i, f)` only.
    by_frac: Vec<(u64, Vec<(f64, f64)>)>,
}

/// Index offset of [`FracCache::by_frac`] (orders with series are at most 256).
const FRAC_OFFSET: i64 = 257;

impl FracCache {
    /// An empty cache (for one `(q, sigma)` pair).
    pub(crate) fn new() -> Self {
        Self {
            s1_pos: Vec::new(),
            s1_neg: Vec::new(),
            expm1: Vec::new(),
            ln_next: Vec::new(),
            by_frac: Vec::new(),
        }
    }
}

fn memo(v: &mut Vec<f64>, i: usize, f: impl FnOnce() -> f64) -> f64 {
    if v.len() <= i {
        v.resize(i + 1, f64::NAN);
    }
    if v[i].is_nan() {
        v[i] = f();
    }
    v[i]
}

const LN_4: f64 = 2.0 * LN_2;

/// Most terms an accelerated tail uses (`2 * 5.83^-30 < 1e-22` of its first term).
const MAX_TAIL_TERMS: usize = 30;
/// Absolute accuracy asked of each tail, relative to the sum of the heads.
const LN_TAIL_TOLERANCE: f64 = -32.0; // e^-32 = 1.3e-14
/// At most this many terms past `ceil(a)` are summed exactly before the tails start.
const MAX_EXTRA_HEAD: usize = 48;

/// Encloses the alternating tail `sum_{j>=0} (-1)^j T_j` of a completely monotone sequence
/// (`T_j = int x^j dmu(x)` on `[0, 1]`), given `ln T_j` lazily, to an absolute accuracy of about
/// `exp(ln_target)`. Returns `(ln lower, ln upper)`.
///
/// Uses the Cohen-Villegas-Zagier (2000) acceleration (their Algorithm 1): with `n` terms the
/// error is at most `2 S / (3 + sqrt 8)^n <= 2 T_0 / 5.83^n` for such sequences; `n` is chosen
/// from `T_0` and the target (at most [`MAX_TAIL_TERMS`]), and the interval is widened by that
/// bound and by the rounding of the weighted sum.
fn alternating_tail(ln_t: &mut dyn FnMut(usize) -> f64, ln_target: f64) -> (f64, f64) {
    let ln_t0 = ln_t(0);
    if ln_t0 == f64::NEG_INFINITY {
        return (f64::NEG_INFINITY, f64::NEG_INFINITY);
    }
    let rate = (3.0 + 8f64.sqrt()).ln();
    let wanted = ((LN_4 + ln_t0 - ln_target) / rate).ceil();
    let n = if wanted.is_finite() {
        (wanted.max(1.0) as usize).min(MAX_TAIL_TERMS)
    } else {
        MAX_TAIL_TERMS
    };
    let nf = n as f64;
    let mut d = (3.0 + 8f64.sqrt()).powi(n as i32);
    d = 0.5 * (d + 1.0 / d);
    let mut b = -1.0;
    let mut c = -d;
    let mut sum = 0.0;
    let mut abs_sum = 0.0;
    for k in 0..n {
        let kf = k as f64;
        c = b - c;
        let a = (ln_t(k) - ln_t0).exp();
        sum += c * a;
        abs_sum += (c * a).abs();
        b = (kf + nf) * (kf - nf) * b / ((kf + 0.5) * (kf + 1.0));
    }
    let value = sum / d;
    let truncation = 2.0 / (3.0 + 8f64.sqrt()).powi(n as i32);
    let rounding = 4.0 * (nf + 2.0) * f64::EPSILON * (abs_sum / d + 1.0);
    let lower = (value - truncation - rounding).max(0.0);
    let upper = value + truncation + rounding;
    let ln_lower = if lower > 0.0 {
        ln_t0 + lower.ln()
    } else {
        f64::NEG_INFINITY
    };
    (ln_lower, ln_t0 + upper.ln())
}

/// Relative error (in ulps) of a term `exp(sum of logs)`: each log component carries an
/// absolute error of a few ulps of its magnitude, the running binomial `i` accumulated steps.
fn term_ulps(i: usize, components: &[f64]) -> f64 {
    8.0 + 4.0 * i as f64 + 4.0 * components.iter().map(|c| c.abs()).sum::<f64>()
}

/// Parameters shared by the term evaluations, and the cache of the `(q, sigma)` pair.
struct Setup<'c> {
    alpha: f64,
    sigma: f64,
    ln_q: f64,
    ln_1mq: f64,
    z0: f64,
    inv_two_var: f64,
    /// `ceil(alpha)`: first index of the alternating tail.
    n0: u64,
    /// `floor(alpha)`.
    floor: i64,
    /// This order's entry of [`FracCache::by_frac`].
    slot: usize,
    cache: &'c mut FracCache,
}

impl<'c> Setup<'c> {
    fn new(q: f64, sigma: f64, alpha: f64, cache: &'c mut FracCache) -> Self {
        let ln_q = q.ln();
        let ln_1mq = (-q).ln_1p();
        let floor = alpha.floor();
        let key = (alpha - floor).to_bits();
        let slot = match cache.by_frac.iter().position(|(k, _)| *k == key) {
            Some(slot) => slot,
            None => {
                cache.by_frac.push((key, Vec::new()));
                cache.by_frac.len() - 1
            }
        };
        Self {
            floor: floor as i64,
            slot,
            alpha,
            sigma,
            ln_q,
            ln_1mq,
            z0: sigma * sigma * (ln_1mq - ln_q) + 0.5,
            inv_two_var: 1.0 / (2.0 * sigma * sigma),
            n0: alpha.ceil() as u64,
            cache,
        }
    }

    /// `(ln Phi((m - z0)/sigma), ln |m|)` for `m = alpha - i` (cached by the bits of `m`).
    fn by_m(&mut self, i: f64) -> (f64, f64) {
        let idx = (i as i64 - self.floor + FRAC_OFFSET) as usize;
        let v = &mut self.cache.by_frac[self.slot].1;
        if v.len() <= idx {
            v.resize(idx + 1, (f64::NAN, f64::NAN));
        }
        if v[idx].0.is_nan() {
            let m = self.alpha - i;
            v[idx] = (ln_ndtr((m - self.z0) / self.sigma), m.abs().ln());
        }
        v[idx]
    }

    /// `ln (i + 1)` (cached).
    fn ln_next(&mut self, i: usize) -> f64 {
        memo(&mut self.cache.ln_next, i, || ((i + 1) as f64).ln())
    }

    /// `ln Phi((z0 - i)/sigma)` (cached).
    fn ln_phi1(&mut self, i: usize) -> f64 {
        let (z0, sigma) = (self.z0, self.sigma);
        memo(&mut self.cache.s1_pos, i, || {
            ln_ndtr((z0 - i as f64) / sigma)
        })
    }

    /// `ln Phi(-(z0 - i)/sigma)` (cached).
    fn ln_phi1_neg(&mut self, i: usize) -> f64 {
        let (z0, sigma) = (self.z0, self.sigma);
        memo(&mut self.cache.s1_neg, i, || {
            ln_ndtr(-((z0 - i as f64) / sigma))
        })
    }

    /// `ln expm1(c_i)` (cached).
    fn ln_expm1_c(&mut self, i: usize) -> f64 {
        let c = self.c(i as f64);
        memo(&mut self.cache.expm1, i, || ln_expm1(c))
    }

    /// Extends `ln |C(alpha, i)|` to length `len`.
    fn grow_binoms(&mut self, v: &mut Vec<f64>, len: usize) {
        while v.len() < len {
            let i = v.len() - 1;
            let next = v[i] + self.by_m(i as f64).1 - self.ln_next(i);
            v.push(next);
        }
    }

    /// `ln |C(alpha, i)|` for `i = 0..=n`.
    fn ln_abs_binoms(&mut self, n: usize) -> Vec<f64> {
        let mut out = Vec::with_capacity(n + 1);
        let mut acc = 0.0;
        out.push(acc);
        for i in 0..n {
            acc += self.by_m(i as f64).1 - self.ln_next(i);
            out.push(acc);
        }
        out
    }

    /// `ln [ |C| (1-q)^(a-i) q^i ]` without the binomial: the weight of term `i` of series 1.
    fn ln_w1(&self, i: f64) -> f64 {
        (self.alpha - i) * self.ln_1mq + i * self.ln_q
    }

    /// `c_i = (i^2 - i) / (2 sigma^2)`.
    fn c(&self, i: f64) -> f64 {
        (i * i - i) * self.inv_two_var
    }

    /// `ln` of the series-1 integral factor `exp(c_i) Phi((z0 - i)/sigma)`.
    fn ln_i1(&mut self, i: usize) -> f64 {
        self.c(i as f64) + self.ln_phi1(i)
    }

    /// `ln` of the full series-2 term magnitude divided by `|C(a,i)|`.
    fn ln_s2(&mut self, i: f64) -> f64 {
        self.s2_components(i).iter().sum()
    }

    /// The log components of [`Setup::ln_s2`] (for the error model).
    fn s2_components(&mut self, i: f64) -> [f64; 4] {
        let m = self.alpha - i;
        [i * self.ln_1mq, m * self.ln_q, self.c(m), self.by_m(i).0]
    }
}

/// Upper bound on `ln A_a` for fractional `a > 1` and `0 < q < 1`, sharing `cache` with the
/// other orders of the same `(q, sigma)` (the cache must not be used with another pair).
pub(crate) fn ln_a_upper_cached(q: f64, sigma: f64, alpha: f64, cache: &mut FracCache) -> f64 {
    let mut s = Setup::new(q, sigma, alpha, cache);
    let mut binoms = s.ln_abs_binoms(s.n0 as usize + MAX_TAIL_TERMS + 1);
    if q <= 0.5
        && let Some(v) = ln_a_via_a_minus_one(&mut s, &mut binoms)
    {
        return v;
    }
    ln_a_direct(&mut s, &binoms)
}

/// Adds the head of the second series (`i < ceil(a)`, all terms positive).
fn add_second_series_head(s: &mut Setup, binoms: &[f64], total: &mut LogSignedSum) {
    for (i, lb) in binoms.iter().enumerate().take(s.n0 as usize) {
        let parts = s.s2_components(i as f64);
        let l2: f64 = parts.iter().sum();
        let ulps = term_ulps(i, &[*lb, parts[0], parts[1], parts[2], parts[3]]);
        total.add_with_ulps(lb + l2, true, ulps);
    }
}

/// Upper end of the second series' tail (from `ceil(a)`; its first term is positive).
fn second_series_tail_upper(s: &mut Setup, binoms: &[f64], ln_target: f64) -> f64 {
    let n0 = s.n0 as usize;
    alternating_tail(
        &mut |j| binoms[n0 + j] + s.ln_s2((n0 + j) as f64),
        ln_target,
    )
    .1
}

/// `ln A` summed as `A - 1` (for `q <= 1/2`), or `None` if rounding left no positive value.
///
/// The head runs past `ceil(a)` (with alternating signs) until the binomial weights fall below
/// the running sum, so that the two accelerated tails, which nearly cancel when `A - 1` is
/// tiny, are small against it.
fn ln_a_via_a_minus_one(s: &mut Setup, binoms: &mut Vec<f64>) -> Option<f64> {
    let n0 = s.n0 as usize;
    let mut total = LogSignedSum::new();
    add_second_series_head(s, binoms, &mut total);
    let mut i = 0;
    loop {
        s.grow_binoms(binoms, i + MAX_TAIL_TERMS + 1);
        let fi = i as f64;
        let lw = binoms[i] + s.ln_w1(fi);
        if i >= n0 && (i >= n0 + MAX_EXTRA_HEAD || lw < total.value().0) {
            break;
        }
        // sign of C(a, i): + below ceil(a), then alternating
        let positive = i < n0 || (i - n0).is_multiple_of(2);
        let c = s.c(fi);
        let ulps = term_ulps(
            i,
            &[binoms[i], fi * s.ln_q, (s.alpha - fi) * s.ln_1mq, c, 1.0],
        );
        if c > 0.0 {
            let t = lw + s.ln_expm1_c(i) + s.ln_phi1(i);
            total.add_with_ulps(t, positive, ulps);
        }
        total.add_with_ulps(lw + s.ln_phi1_neg(i), !positive, ulps);
        i += 1;
    }
    let binoms: &[f64] = binoms;
    let ln_target = total.value().0 + LN_TAIL_TOLERANCE;
    total.add(second_series_tail_upper(s, binoms, ln_target), true);
    // Tail from i: sign (-1)^(i - n0) times sum_j (-1)^j [T1_j - B_j].
    let tail_positive = (i - n0).is_multiple_of(2);
    let (t1_lo, t1_hi) = alternating_tail(
        &mut |j| {
            let k = i + j;
            binoms[k] + s.ln_w1(k as f64) + s.ln_i1(k)
        },
        ln_target,
    );
    let (b_lo, b_hi) =
        alternating_tail(&mut |j| binoms[i + j] + s.ln_w1((i + j) as f64), ln_target);
    if tail_positive {
        total.add(t1_hi, true);
        total.add(b_lo, false);
    } else {
        total.add(t1_lo, false);
        total.add(b_hi, true);
    }
    let rounding = total.ln_rounding_bound();
    total.add(rounding, true);
    match total.value() {
        (ln_am1, true) if ln_am1.is_finite() => Some(log1p_exp(ln_am1)),
        _ => None,
    }
}

/// `ln A` summed directly (both series with positive heads and accelerated tails).
fn ln_a_direct(s: &mut Setup, binoms: &[f64]) -> f64 {
    let n0 = s.n0 as usize;
    let mut total = LogSignedSum::new();
    add_second_series_head(s, binoms, &mut total);
    for (i, lb) in binoms.iter().enumerate().take(n0) {
        let fi = i as f64;
        let (w, i1) = (s.ln_w1(fi), s.ln_i1(i));
        let ulps = term_ulps(i, &[*lb, fi * s.ln_q, (s.alpha - fi) * s.ln_1mq, i1]);
        total.add_with_ulps(lb + w + i1, true, ulps);
    }
    let ln_target = total.value().0 + LN_TAIL_TOLERANCE;
    total.add(second_series_tail_upper(s, binoms, ln_target), true);
    let t1 = &mut |j: usize| {
        let k = n0 + j;
        binoms[k] + s.ln_w1(k as f64) + s.ln_i1(k)
    };
    total.add(alternating_tail(t1, ln_target).1, true);
    let rounding = total.ln_rounding_bound();
    total.add(rounding, true);
    total.value().0.max(0.0)
}
