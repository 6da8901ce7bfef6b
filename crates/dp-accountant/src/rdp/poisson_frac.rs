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
//! The tail terms are formed as running products of their steps `T_j / T_(j-1)` (a rational
//! binomial ratio times a cached `exp` of normal-CDF log differences, shared by all orders of one
//! `(q, sigma)` and, for the second series, of one fractional part), and the accumulated error
//! bound of those products widens the enclosure.
//!
//! For `q <= 1/2` and small `A_a - 1` the first series is rewritten with
//! `sum_i C(a,i) (1-q)^(a-i) q^i = 1` (absolutely convergent for `q <= 1/2`) so that `A_a - 1`
//! is summed directly, without the cancellation of `A_a - 1`:
//! `A_a - 1 = sum_i C(a,i)(1-q)^(a-i) q^i [expm1(c_i) Phi(u_i) - Phi(-u_i)] + (second series)`.
//! On that path the head terms are running products of cached step ratios too (module
//! [`products`]), with the log-space sum below as the fallback outside its range.

use crate::normal::ln_normal_cdf;
use crate::numeric::{LogSignedSum, ln_expm1, log1p_exp};
use std::f64::consts::LN_2;

mod products;

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
    /// Series-1 tail step `I_i / I_(i-1)` of the integral factors `I_i = exp(c_i) Phi((z0 -
    /// i)/sigma)` by `i`, with its relative error bound in ulps (NaN = not yet computed).
    r1: Vec<(f64, f64)>,
    /// Per fractional part `f` of the order (its bits): a [`MCell`] for `m = a - i`, indexed
    /// by `floor(a) - i + CELL_SHIFT`. `a - i` is the correctly rounded
    /// `(floor(a) - i) + f`, so it depends on `(floor(a) - i, f)` only.
    by_frac: Vec<FracSlot>,
    /// `(ln q, ln(1 - q))` (NaN = not yet computed).
    ln_q_1mq: (f64, f64),
    /// Head steps of the series-1 parts `N_i` and `P_i` by `i` (see [`products`]).
    head_steps: Vec<[products::HeadStep; 2]>,
    /// Scratch buffer for `ln |C(a, i)|` (reused across orders).
    binoms: Vec<f64>,
}

/// Values that depend on `m = a - i` only (each NaN until computed).
#[derive(Clone, Copy)]
struct MCell {
    /// `ln Phi((m - z0)/sigma)`.
    ln_phi: f64,
    /// `ln |m|`.
    ln_abs: f64,
    /// Series-2 tail step `J_m / J_(m+1)`, `J_m = exp(c_m) Phi((m - z0)/sigma)`.
    step: f64,
    /// Relative error bound of `step` in ulps.
    step_ulps: f64,
    /// The part of `step_ulps` that does not telescope along a running product: the rounding
    /// of `dc`, of the difference of the two cached logarithms, of their sum and of `exp`.
    step_round: f64,
}

const EMPTY_CELL: MCell = MCell {
    ln_phi: f64::NAN,
    ln_abs: f64::NAN,
    step: f64::NAN,
    step_ulps: f64::NAN,
    step_round: f64::NAN,
};

/// The [`MCell`]s of one fractional part: cell `j` holds `floor(a) - i = j - CELL_SHIFT`
/// (so orders with a larger integer part only append cells).
struct FracSlot {
    key: u64,
    cells: Vec<MCell>,
}

/// Largest `i - floor(a)` an order touches: the heads end by `ceil(a) + MAX_EXTRA_HEAD`, the
/// tails run at most `MAX_TAIL_TERMS` steps after them.
const CELL_SHIFT: usize = MAX_EXTRA_HEAD + MAX_TAIL_TERMS + 2;

impl FracCache {
    /// An empty cache (for one `(q, sigma)` pair).
    pub(crate) fn new() -> Self {
        Self {
            s1_pos: Vec::new(),
            s1_neg: Vec::new(),
            expm1: Vec::new(),
            ln_next: Vec::new(),
            r1: Vec::new(),
            by_frac: Vec::new(),
            ln_q_1mq: (f64::NAN, f64::NAN),
            head_steps: Vec::new(),
            binoms: Vec::new(),
        }
    }
}

/// `k` as `f64` (exact: indices stay far below `2^53`), by the signed conversion, which is a
/// single instruction on x86-64 (the unsigned one is not).
#[inline]
fn index_f64(k: usize) -> f64 {
    k as i64 as f64
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

/// `ln(3 + sqrt 8)` (= 2 asinh 1), the convergence rate of the acceleration per term; a
/// constant so that no logarithm is taken per tail. It only chooses `n`: the enclosure uses
/// the actual truncation bound `2 / (3 + sqrt 8)^n`.
const CVZ_LN_RATE: f64 = 1.762_747_174_039_086;

/// Most terms an accelerated tail uses (`2 * 5.83^-30 < 1e-22` of its first term).
const MAX_TAIL_TERMS: usize = 30;
/// Absolute accuracy asked of each tail, relative to the sum of the heads.
const LN_TAIL_TOLERANCE: f64 = -32.0; // e^-32 = 1.3e-14
/// At most this many terms past `ceil(a)` are summed exactly before the tails start.
const MAX_EXTRA_HEAD: usize = 48;

/// Encloses the alternating tail `sum_{j>=0} (-1)^j T_j` of a completely monotone sequence
/// (`T_j = int x^j dmu(x)` on `[0, 1]`), given `ln T_0` and the steps `T_j / T_(j-1)` lazily
/// (each with a relative error bound in ulps), to an absolute accuracy of about
/// `exp(ln_target)`. Returns `(ln lower, ln upper)`.
///
/// Uses the Cohen-Villegas-Zagier (2000) acceleration (their Algorithm 1): with `n` terms the
/// error is at most `2 S / (3 + sqrt 8)^n <= 2 T_0 / 5.83^n` for such sequences; `n` is chosen
/// from `T_0` and the target (at most [`MAX_TAIL_TERMS`]), and the interval is widened by that
/// bound, by the rounding of the weighted sum and by the accumulated error of the running
/// product `T_j / T_0` (the sum of its steps' error bounds plus one ulp per multiplication).
fn alternating_tail(
    ln_t0: f64,
    step: impl FnMut(usize) -> (f64, f64),
    ln_target: f64,
) -> (f64, f64) {
    if ln_t0 == f64::NEG_INFINITY {
        return (f64::NEG_INFINITY, f64::NEG_INFINITY);
    }
    let (value, bound) = cvz_tail(tail_terms(LN_4 + ln_t0 - ln_target), 0.0, step);
    let lower = (value - bound).max(0.0);
    let upper = value + bound;
    let ln_lower = if lower > 0.0 {
        ln_t0 + lower.ln()
    } else {
        f64::NEG_INFINITY
    };
    (ln_lower, ln_t0 + upper.ln())
}

/// [`alternating_tail`] in linear form: `t0 = T_0` (any common scale) with its own relative
/// error bound `t0_ulps`, the target as an absolute accuracy on that scale. Returns
/// `(lower, upper)` on the same scale.
fn alternating_tail_linear(
    t0: f64,
    t0_ulps: f64,
    step: impl FnMut(usize) -> (f64, f64),
    target: f64,
) -> (f64, f64) {
    if t0 == 0.0 {
        return (0.0, 0.0);
    }
    // ln(t0 / target) from the binary exponent, rounded up (more terms is only more accurate)
    let ratio = t0 / target;
    let ln_ratio = if ratio.is_normal() {
        (((ratio.to_bits() >> 52) & 0x7ff) as f64 - 1022.0) * LN_2
    } else {
        f64::INFINITY
    };
    let (value, bound) = cvz_tail(tail_terms(LN_4 + ln_ratio), t0_ulps, step);
    let lower = (value - bound).max(0.0) * t0 * (1.0 - 2.0 * f64::EPSILON);
    let upper = (value + bound) * t0 * (1.0 + 2.0 * f64::EPSILON);
    (lower, upper)
}

/// Number of accelerated terms for `ln(4 T_0 / target)`.
fn tail_terms(ln_ratio: f64) -> usize {
    let wanted = (ln_ratio / CVZ_LN_RATE).ceil();
    if wanted.is_finite() {
        (wanted.max(1.0) as usize).min(MAX_TAIL_TERMS)
    } else {
        MAX_TAIL_TERMS
    }
}

/// The CVZ-weighted sum of `n` terms relative to `T_0`, and a bound on its distance from the
/// tail `/ T_0`: the truncation bound, the rounding of the weighted sum and the error of the
/// running products (`t0_ulps` of `T_0` itself included).
fn cvz_tail(n: usize, t0_ulps: f64, mut step: impl FnMut(usize) -> (f64, f64)) -> (f64, f64) {
    let nf = n as f64;
    let d = CVZ.d[n];
    let mut sum = 0.0;
    let mut abs_sum = 0.0;
    let mut err_sum = 0.0;
    // T_k / T_0 as the running product of the steps, with its error bound in ulps
    let mut a = 1.0_f64;
    let mut a_ulps = t0_ulps;
    let mut flushed = 0.0;
    for (k, &c) in CVZ.c[n][..n].iter().enumerate() {
        if k > 0 && a != 0.0 {
            let (r, u) = step(k);
            a *= r;
            a_ulps += u + 1.0;
            if a < 1e-250 {
                // negligible (and kept out of the subnormal range): bounded instead
                a = 0.0;
                flushed = 1e-250;
            }
        }
        sum += c * a;
        abs_sum += (c * a).abs();
        err_sum += (c * a).abs() * a_ulps;
    }
    let value = sum / d;
    // the truncation bound is relative to the exact T_0
    let truncation = CVZ.truncation[n] * (1.0 + 2.0 * f64::EPSILON * t0_ulps);
    // |c_k| <= d, so each flushed term moves the weighted sum by at most `flushed`
    let rounding = 4.0 * (nf + 2.0) * f64::EPSILON * (abs_sum / d + 1.0)
        + 2.0 * f64::EPSILON * err_sum / d
        + nf * flushed;
    (value, truncation + rounding)
}

/// `3 + sqrt 8` as `f64` (`3.0 + 8f64.sqrt()`, both operations correctly rounded).
const CVZ_BASE: f64 = 5.828_427_124_746_19;

/// The weights of the CVZ acceleration by number of terms `n` (their Algorithm 1, computed in
/// `f64` at compile time exactly as the loop would at run time): `c[n][k]`, the normaliser
/// `d[n] = ((3 + sqrt 8)^n + (3 + sqrt 8)^-n) / 2` and the truncation bound `2 / (3 + sqrt 8)^n`.
struct CvzWeights {
    c: [[f64; MAX_TAIL_TERMS]; MAX_TAIL_TERMS + 1],
    d: [f64; MAX_TAIL_TERMS + 1],
    truncation: [f64; MAX_TAIL_TERMS + 1],
}

static CVZ: CvzWeights = cvz_weights();

const fn cvz_weights() -> CvzWeights {
    let mut w = CvzWeights {
        c: [[0.0; MAX_TAIL_TERMS]; MAX_TAIL_TERMS + 1],
        d: [1.0; MAX_TAIL_TERMS + 1],
        truncation: [2.0; MAX_TAIL_TERMS + 1],
    };
    let mut n = 1;
    while n <= MAX_TAIL_TERMS {
        // (3 + sqrt 8)^n by binary powering
        let (mut base, mut e, mut p) = (CVZ_BASE, n, 1.0);
        while e > 0 {
            if e % 2 == 1 {
                p *= base;
            }
            base *= base;
            e /= 2;
        }
        let d = 0.5 * (p + 1.0 / p);
        let nf = n as f64;
        let mut b = -1.0;
        let mut c = -d;
        let mut k = 0;
        while k < n {
            let kf = k as f64;
            c = b - c;
            w.c[n][k] = c;
            b = (kf + nf) * (kf - nf) * b / ((kf + 0.5) * (kf + 1.0));
            k += 1;
        }
        w.d[n] = d;
        w.truncation[n] = 2.0 / p;
        n += 1;
    }
    w
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
    /// `q / (1 - q)`.
    rho: f64,
    /// `(1 - q) / q`.
    inv_rho: f64,
    z0: f64,
    inv_two_var: f64,
    /// `ceil(alpha)`: first index of the alternating tail.
    n0: u64,
    /// This order's entry of [`FracCache::by_frac`].
    slot: usize,
    /// Index of this order's `i = 0` in the slot's cells (`i` counts down from there).
    base: usize,
    /// The slot's cells, moved out of the cache while this order runs ([`Setup::finish`]
    /// returns them): one bounds check per access instead of two and a pointer chase.
    cells: Vec<MCell>,
    cache: &'c mut FracCache,
}

impl<'c> Setup<'c> {
    fn new(q: f64, sigma: f64, alpha: f64, cache: &'c mut FracCache) -> Self {
        if cache.ln_q_1mq.0.is_nan() {
            cache.ln_q_1mq = (q.ln(), (-q).ln_1p());
        }
        let (ln_q, ln_1mq) = cache.ln_q_1mq;
        let floor = alpha.floor();
        let key = (alpha - floor).to_bits();
        let slot = match cache.by_frac.iter().position(|f| f.key == key) {
            Some(slot) => slot,
            None => {
                cache.by_frac.push(FracSlot {
                    key,
                    cells: Vec::with_capacity(128),
                });
                cache.by_frac.len() - 1
            }
        };
        // Room for every index this order can touch (see `CELL_SHIFT`).
        let base = floor as usize + CELL_SHIFT;
        let mut cells = std::mem::take(&mut cache.by_frac[slot].cells);
        if cells.len() <= base {
            cells.resize(base + 1, EMPTY_CELL);
        }
        Self {
            cells,
            slot,
            base,
            alpha,
            sigma,
            ln_q,
            ln_1mq,
            rho: q / (1.0 - q),
            inv_rho: (1.0 - q) / q,
            z0: sigma * sigma * (ln_1mq - ln_q) + 0.5,
            inv_two_var: 1.0 / (2.0 * sigma * sigma),
            n0: alpha.ceil() as u64,
            cache,
        }
    }

    /// Returns the cells to the cache.
    fn finish(self) {
        self.cache.by_frac[self.slot].cells = self.cells;
    }

    /// This order's [`MCell`] for `m = alpha - i`.
    #[inline]
    fn cell(&mut self, i: usize) -> &mut MCell {
        &mut self.cells[self.base - i]
    }

    /// `ln Phi((m - z0)/sigma)` for `m = alpha - i` (cached by the bits of `m`).
    fn ln_phi_m(&mut self, i: usize) -> f64 {
        let (alpha, z0, sigma) = (self.alpha, self.z0, self.sigma);
        let cell = self.cell(i);
        if cell.ln_phi.is_nan() {
            cell.ln_phi = ln_normal_cdf((alpha - index_f64(i) - z0) / sigma);
        }
        cell.ln_phi
    }

    /// `ln |m|` for `m = alpha - i` (cached by the bits of `m`).
    fn ln_abs_m(&mut self, i: usize) -> f64 {
        let alpha = self.alpha;
        let cell = self.cell(i);
        if cell.ln_abs.is_nan() {
            cell.ln_abs = (alpha - i as f64).abs().ln();
        }
        cell.ln_abs
    }

    /// Step `|C(a,k)| / |C(a,k-1)| = |a - k + 1| / k` times `q / (1 - q)`: the ratio of
    /// consecutive binomial weights `|C(a,k)| (1-q)^(a-k) q^k` (at most 6 ulps off).
    #[inline]
    fn w_step(&self, k: usize) -> f64 {
        (self.alpha - index_f64(k - 1)).abs() / index_f64(k) * self.rho
    }

    /// Series-1 tail step from index `k - 1` to `k` with its error bound in ulps.
    #[inline]
    fn t1_step(&mut self, k: usize) -> (f64, f64) {
        let (r, u) = match self.cache.r1.get(k) {
            Some(&(r, u)) if !r.is_nan() => (r, u),
            _ => self.t1_ratio(k),
        };
        (self.w_step(k) * r, u + 7.0)
    }

    /// Computes and caches `I_k / I_(k-1)` with its error bound in ulps.
    #[inline(never)]
    fn t1_ratio(&mut self, k: usize) -> (f64, f64) {
        if self.cache.r1.len() <= k {
            self.cache.r1.resize(k + 1, (f64::NAN, f64::NAN));
        }
        // I_k / I_(k-1) = exp((k - 1)/sigma^2) Phi((z0 - k)/sigma) / Phi((z0 - k + 1)/sigma)
        let dc = index_f64(k - 1) * 2.0 * self.inv_two_var;
        let (p1, p0) = (self.ln_phi1(k), self.ln_phi1(k - 1));
        let x = dc + p1 - p0;
        let ulps = 8.0 + 4.0 * (dc.abs() + p1.abs() + p0.abs()) + x.abs();
        self.cache.r1[k] = (x.exp(), ulps);
        self.cache.r1[k]
    }

    /// Series-2 tail step from index `k - 1` to `k` (`m = a - k`) with its error bound in ulps:
    /// `|a-k+1|/k * (1-q)/q * J_m / J_(m+1)`.
    #[inline]
    fn s2_step(&mut self, k: usize) -> (f64, f64) {
        let cell = *self.cell(k);
        let (r, u) = if cell.step.is_nan() {
            self.s2_ratio(k)
        } else {
            (cell.step, cell.step_ulps)
        };
        let w = (self.alpha - index_f64(k - 1)).abs() / index_f64(k) * self.inv_rho;
        (w * r, u + 7.0)
    }

    /// Computes and caches `J_m / J_(m+1)` for `m = a - k` with its error bound in ulps.
    #[inline(never)]
    fn s2_ratio(&mut self, k: usize) -> (f64, f64) {
        // J_m / J_(m+1) = exp(-m/sigma^2) Phi((m - z0)/sigma) / Phi((m + 1 - z0)/sigma)
        let m = self.alpha - index_f64(k);
        let dc = -m * 2.0 * self.inv_two_var;
        let (p1, p0) = (self.ln_phi_m(k), self.ln_phi_m(k - 1));
        let x = dc + (p1 - p0);
        let ulps = 8.0 + 4.0 * (dc.abs() + p1.abs() + p0.abs()) + x.abs();
        let r = x.exp();
        let cell = self.cell(k);
        cell.step = r;
        cell.step_ulps = ulps;
        cell.step_round = 2.0 + 3.0 * dc.abs() + (p1 - p0).abs() + x.abs();
        (r, ulps)
    }

    /// `ln (i + 1)` (cached).
    fn ln_next(&mut self, i: usize) -> f64 {
        memo(&mut self.cache.ln_next, i, || ((i + 1) as f64).ln())
    }

    /// `ln Phi((z0 - i)/sigma)` (cached).
    fn ln_phi1(&mut self, i: usize) -> f64 {
        let (z0, sigma) = (self.z0, self.sigma);
        memo(&mut self.cache.s1_pos, i, || {
            ln_normal_cdf((z0 - i as f64) / sigma)
        })
    }

    /// `ln Phi(-(z0 - i)/sigma)` (cached).
    fn ln_phi1_neg(&mut self, i: usize) -> f64 {
        let (z0, sigma) = (self.z0, self.sigma);
        memo(&mut self.cache.s1_neg, i, || {
            ln_normal_cdf(-((z0 - i as f64) / sigma))
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
            let next = v[i] + self.ln_abs_m(i) - self.ln_next(i);
            v.push(next);
        }
    }

    /// Fills `out` with `ln |C(alpha, i)|` for `i < len`.
    fn ln_abs_binoms(&mut self, out: &mut Vec<f64>, len: usize) {
        out.clear();
        out.push(0.0);
        self.grow_binoms(out, len);
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
        [
            i * self.ln_1mq,
            m * self.ln_q,
            self.c(m),
            self.ln_phi_m(i as usize),
        ]
    }
}

/// Upper bound on `ln A_a` for fractional `a > 1` and `0 < q < 1`, sharing `cache` with the
/// other orders of the same `(q, sigma)` (the cache must not be used with another pair).
pub(crate) fn ln_a_upper_cached(q: f64, sigma: f64, alpha: f64, cache: &mut FracCache) -> f64 {
    let mut binoms = std::mem::take(&mut cache.binoms);
    let mut s = Setup::new(q, sigma, alpha, cache);
    let fast = match q <= 0.5 {
        true => products::ln_a_via_products(&mut s),
        false => None,
    };
    let out = fast.unwrap_or_else(|| ln_a_upper_logs(q, &mut s, &mut binoms));
    s.finish();
    cache.binoms = binoms;
    out
}

/// [`ln_a_upper_cached`] with every term summed in log space (no range limits).
fn ln_a_upper_logs(q: f64, s: &mut Setup, binoms: &mut Vec<f64>) -> f64 {
    s.ln_abs_binoms(binoms, s.n0 as usize + 1);
    match q <= 0.5 {
        true => ln_a_via_a_minus_one(s, binoms),
        false => None,
    }
    .unwrap_or_else(|| ln_a_direct(s, binoms))
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
    let ln_t0 = binoms[n0] + s.ln_s2(n0 as f64);
    alternating_tail(ln_t0, |j| s.s2_step(n0 + j), ln_target).1
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
        s.grow_binoms(binoms, i + 1);
        let fi = i as f64;
        let lw = binoms[i] + s.ln_w1(fi);
        if i >= n0 && (i >= n0 + MAX_EXTRA_HEAD || lw < total.approx_ln_abs()) {
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
    let ln_b0 = binoms[i] + s.ln_w1(i as f64);
    let ln_t1_0 = ln_b0 + s.ln_i1(i);
    let (t1_lo, t1_hi) = alternating_tail(ln_t1_0, |j| s.t1_step(i + j), ln_target);
    let (b_lo, b_hi) = alternating_tail(ln_b0, |j| (s.w_step(i + j), 6.0), ln_target);
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
    let ln_t0 = binoms[n0] + s.ln_w1(n0 as f64) + s.ln_i1(n0);
    total.add(
        alternating_tail(ln_t0, |j| s.t1_step(n0 + j), ln_target).1,
        true,
    );
    let rounding = total.ln_rounding_bound();
    total.add(rounding, true);
    total.value().0.max(0.0)
}
