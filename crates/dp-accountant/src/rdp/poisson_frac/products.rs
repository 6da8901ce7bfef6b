//! The `A_a - 1` form of the fractional-order series (`q <= 1/2`) with the head terms as
//! running products of cached step ratios, on the linear scale `exp(a ln(1-q))`, instead of one
//! `exp` per term in log space.
//!
//! Every term of the heads is a product that moves from index `i - 1` to `i` by a rational
//! binomial step `|a-i+1|/i * q/(1-q)` (or its inverse) times a ratio `exp(L(i) - L(i-1))` of
//! cached logarithms `L` (normal-CDF and `expm1` factors) that depends on `i` only, or for the
//! second series on `m = a - i` only, so it is shared by all orders of one `(q, sigma)` (or of
//! one fractional part). With the weights `W_i = |C(a,i)| (1-q)^(a-i) q^i`:
//!
//! ```text
//! series 1, term i:  sign_i (P_i - N_i),  P_i = W_i expm1(c_i) Phi(u_i),  N_i = W_i Phi(-u_i)
//! series 2, term i:  |C(a,i)| (1-q)^i q^(a-i) exp(c_(a-i)) Phi((a - i - z0)/sigma)
//! ```
//!
//! (`u_i = (z0 - i)/sigma`), and the accelerated tails start from `W_i`, from
//! `W_i exp(c_i) Phi(u_i) = P_i + W_i - N_i` and from the next series-2 product.
//!
//! **Error bound.** A running product of `exp(L(i) - L(i-1))` telescopes: the errors of the
//! cached logarithms cancel except at the current end, so a term carries the rounding of each
//! step (the difference of two cached logs, the sum, `exp`, the binomial step and the
//! multiplications: [`HeadStep::round`] plus 8 ulps) accumulated, plus the error of its own end
//! logarithms ([`HeadStep::end`], the same `8 + 4 |log|` model as the log-space terms). These
//! bounds, the compensated summation's and the tails' enclosures are added on the safe side,
//! and the final scaling by `exp(a ln(1-q))` and `log1p` get their own margin.
//!
//! **Range.** The products stay exact only while they are normal numbers: if a product leaves
//! `[1e-250, 1e250]` on this scale (large orders, extreme `sigma` or `q`), [`ln_a_via_products`]
//! returns `None` and the caller sums in log space instead (same bound, slower).

use super::{MAX_EXTRA_HEAD, Setup, alternating_tail_linear, term_ulps};
use crate::numeric::CompensatedSum;

/// Smallest running product kept on the linear scale.
const TINY: f64 = 1e-250;
/// Largest running product kept on the linear scale.
const HUGE: f64 = 1e250;

/// One step of a head product, cached by index: the ratio and its error bounds in ulps.
#[derive(Clone, Copy)]
pub(super) struct HeadStep {
    /// `exp(L(i) - L(i-1))` (or the first factor `exp(L(i))` at the start index).
    ratio: f64,
    /// Rounding of this step (accumulates along the product).
    round: f64,
    /// Error of the logarithms `L(i)` at this index (counted once, for the current end).
    end: f64,
}

const EMPTY_STEP: HeadStep = HeadStep {
    ratio: f64::NAN,
    round: f64::NAN,
    end: f64::NAN,
};

/// `e^LN_TAIL_TOLERANCE`: the tails' accuracy relative to the heads (checked by a test).
const TAIL_TOLERANCE: f64 = 1.266_416_554_909_417_6e-14;

/// A running product on the linear scale with its accumulated rounding (ulps).
#[derive(Clone, Copy)]
struct Product {
    value: f64,
    round: f64,
}

impl Product {
    fn in_range(&self) -> bool {
        (TINY..=HUGE).contains(&self.value)
    }
}

impl Setup<'_> {
    /// The head steps at index `i`: of `N_i / W_i = Phi(-u_i)` (at `i = 0` the factor itself)
    /// and, for `i >= 2`, of `P_i / W_i = expm1(c_i) Phi(u_i)` (at `i = 2` the factor itself).
    fn head_steps(&mut self, i: usize) -> [HeadStep; 2] {
        if self.cache.head_steps.len() <= i {
            self.cache.head_steps.resize(i + 1, [EMPTY_STEP; 2]);
        }
        if self.cache.head_steps[i][0].ratio.is_nan() {
            let n = self.n_step(i);
            let p = if i >= 2 { self.p_step(i) } else { EMPTY_STEP };
            self.cache.head_steps[i] = [n, p];
        }
        self.cache.head_steps[i]
    }

    fn n_step(&mut self, i: usize) -> HeadStep {
        let l = self.ln_phi1_neg(i);
        let (x, round) = if i == 0 {
            (l, 2.0)
        } else {
            let d = l - self.ln_phi1_neg(i - 1);
            (d, 2.0 + d.abs())
        };
        HeadStep {
            ratio: x.exp(),
            round,
            end: 8.0 + 4.0 * l.abs(),
        }
    }

    fn p_step(&mut self, i: usize) -> HeadStep {
        let (le, lp) = (self.ln_expm1_c(i), self.ln_phi1(i));
        let (x, round) = if i == 2 {
            let x = le + lp;
            (x, 2.0 + x.abs())
        } else {
            let d1 = le - self.ln_expm1_c(i - 1);
            let d2 = lp - self.ln_phi1(i - 1);
            let x = d1 + d2;
            (x, 2.0 + d1.abs() + d2.abs() + x.abs())
        };
        let c = self.c(i as f64);
        HeadStep {
            ratio: x.exp(),
            round,
            end: 8.0 + 4.0 * (c.abs() + le.abs() + lp.abs()),
        }
    }

    /// Series-2 head step from `k - 1` to `k`: the step, its non-telescoping rounding and the
    /// error of the cached `ln Phi((m - z0)/sigma)` at `m = a - k` (ulps).
    fn s2_head_step(&mut self, k: usize) -> (f64, f64, f64) {
        let (r, _) = self.s2_step(k);
        let cell = self.cell(k);
        (r, cell.step_round + 7.0, 8.0 + 4.0 * cell.ln_phi.abs())
    }
}

/// Upper bound on `ln A_a` (fractional `a`, `q <= 1/2`) from `A_a - 1` with running-product
/// heads, or `None` if a product leaves the linear range or rounding leaves no positive value
/// (the caller then sums in log space).
pub(super) fn ln_a_via_products(s: &mut Setup) -> Option<f64> {
    let n0 = s.n0 as usize;
    let anchor = s.alpha * s.ln_1mq;
    let mut total = CompensatedSum::new();

    // Second series, head (i < ceil(a), all terms positive), then the first tail term.
    let parts = s.s2_components(0.0);
    let x0 = parts.iter().sum::<f64>() - anchor;
    let mut s2 = Product {
        value: x0.exp(),
        round: term_ulps(0, &[parts[0], parts[1], parts[2], parts[3], anchor]) + x0.abs(),
    };
    let mut end = 8.0 + 4.0 * parts[3].abs();
    for k in 0..=n0 {
        if k > 0 {
            let (r, u, e) = s.s2_head_step(k);
            s2.value *= r;
            s2.round += u + 1.0;
            end = e;
        }
        if !s2.in_range() {
            return None;
        }
        if k < n0 {
            total.add(s2.value, s2.round + end);
        }
    }
    let s2_tail_ulps = s2.round + end;

    // First series, head: up to ceil(a), then on (alternating) while the weights are not
    // below the running sum, as in the log-space form.
    let mut w = Product {
        value: 1.0,
        round: 0.0,
    };
    let step = s.head_steps(0)[0];
    let mut n = Product {
        value: step.ratio,
        round: step.round,
    };
    let mut n_end = step.end;
    let mut p = Product {
        value: 0.0,
        round: 0.0,
    };
    let mut p_end = 0.0;
    let mut i = 0;
    loop {
        if i > 0 {
            let ws = s.w_step(i);
            w.value *= ws;
            w.round += 7.0;
            let [step, p_step] = s.head_steps(i);
            n.value *= ws * step.ratio;
            n.round += step.round + 8.0;
            n_end = step.end;
            if i >= 2 {
                let step = p_step;
                p = if i == 2 {
                    Product {
                        value: w.value * step.ratio,
                        round: w.round + step.round + 1.0,
                    }
                } else {
                    Product {
                        value: p.value * (ws * step.ratio),
                        round: p.round + step.round + 8.0,
                    }
                };
                p_end = step.end;
                if !p.in_range() {
                    return None;
                }
            }
        }
        if !w.in_range() || !n.in_range() {
            return None;
        }
        if i >= n0 && (i >= n0 + MAX_EXTRA_HEAD || w.value < total.value().abs()) {
            break;
        }
        // sign of C(a, i): + below ceil(a), then alternating
        let sign = if i < n0 || (i - n0).is_multiple_of(2) {
            1.0
        } else {
            -1.0
        };
        if i >= 2 {
            total.add(sign * p.value, p.round + p_end);
        }
        total.add(-sign * n.value, n.round + n_end);
        i += 1;
    }

    let target = total.value().abs() * TAIL_TOLERANCE;
    let (_, s2_hi) = alternating_tail_linear(s2.value, s2_tail_ulps, |j| s.s2_step(n0 + j), target);
    total.add(s2_hi, 0.0);
    // Tail from i (>= ceil(a) >= 2): sign (-1)^(i - n0) times sum_j (-1)^j [T1_j - B_j] with
    // T1_0 = W_i exp(c_i) Phi(u_i) = P_i + W_i - N_i and B_0 = W_i.
    let x = p.value + w.value - n.value;
    if x.is_nan() || x <= 0.0 {
        return None;
    }
    let x_err = p.value * (p.round + p_end) + w.value * w.round + n.value * (n.round + n_end);
    let x_ulps = x_err / x + 3.0;
    let (t1_lo, t1_hi) = alternating_tail_linear(x, x_ulps, |j| s.t1_step(i + j), target);
    let (b_lo, b_hi) =
        alternating_tail_linear(w.value, w.round, |j| (s.w_step(i + j), 6.0), target);
    if (i - n0).is_multiple_of(2) {
        total.add(t1_hi, 0.0);
        total.add(-b_lo, 0.0);
    } else {
        total.add(-t1_lo, 0.0);
        total.add(b_hi, 0.0);
    }
    // One more `eps sum |x|` for the rounding of the final addition.
    let a_minus_one = total.upper(1.0);
    if !(a_minus_one > 0.0 && a_minus_one.is_finite()) {
        return None;
    }
    // exp(anchor) is within (2 |anchor| + 2) ulps of (1-q)^a; the two products, log1p and the
    // margins themselves within 6 more
    let scaled = a_minus_one * anchor.exp() * (1.0 + (2.0 * anchor.abs() + 8.0) * f64::EPSILON);
    Some(scaled.ln_1p() * (1.0 + 2.0 * f64::EPSILON))
}

#[cfg(test)]
mod tests {
    use super::super::{CVZ, FracCache, LN_TAIL_TOLERANCE, MAX_TAIL_TERMS, ln_a_upper_logs};
    use super::*;

    #[test]
    fn tail_tolerance_is_exp_of_its_log() {
        let exact = LN_TAIL_TOLERANCE.exp();
        assert!((TAIL_TOLERANCE - exact).abs() <= 4.0 * f64::EPSILON * exact);
    }

    /// The compile-time CVZ weights are the run-time recurrence (Cohen, Villegas & Zagier
    /// 2000, Algorithm 1) to the last bits.
    #[test]
    fn cvz_table_matches_the_recurrence() {
        for n in 1..=MAX_TAIL_TERMS {
            let nf = n as f64;
            let p = (3.0 + 8f64.sqrt()).powi(n as i32);
            let d = 0.5 * (p + 1.0 / p);
            assert!(
                (CVZ.d[n] - d).abs() <= 4.0 * nf * f64::EPSILON * d,
                "d[{n}]"
            );
            assert!((CVZ.truncation[n] - 2.0 / p).abs() <= 4.0 * nf * f64::EPSILON * (2.0 / p));
            let (mut b, mut c) = (-1.0_f64, -d);
            for k in 0..n {
                let kf = k as f64;
                c = b - c;
                let tol = 64.0 * nf * f64::EPSILON * d;
                assert!((CVZ.c[n][k] - c).abs() <= tol, "c[{n}][{k}]");
                b = (kf + nf) * (kf - nf) * b / ((kf + 0.5) * (kf + 1.0));
            }
        }
    }

    /// `(products path, log-space path)` for one order, each with a fresh cache.
    fn both_paths(q: f64, sigma: f64, alpha: f64) -> (Option<f64>, f64) {
        let mut cache = FracCache::new();
        let mut s = Setup::new(q, sigma, alpha, &mut cache);
        let fast = ln_a_via_products(&mut s);
        s.finish();
        let mut cache = FracCache::new();
        let mut s = Setup::new(q, sigma, alpha, &mut cache);
        let logs = ln_a_upper_logs(q, &mut s, &mut Vec::new());
        s.finish();
        (fast, logs)
    }

    /// Both paths are upper bounds of the same `ln A_a` with margins of at most a few 1e-12
    /// relative; they must agree to 1e-10, and the products path must serve the benchmark case
    /// (every fractional order of dp_accounting's default list at sigma 1.1, q 0.01).
    #[test]
    fn products_path_agrees_with_log_space_path() {
        let mut served = 0;
        let mut total = 0;
        for (sigma, q) in [
            (1.1, 0.01),
            (0.5, 1e-4),
            (0.7, 0.2),
            (2.0, 0.05),
            (4.0, 0.5),
            (10.0, 0.01),
            (0.8, 0.45),
        ] {
            for alpha in [
                1.1, 1.25, 1.5, 2.5, 3.7, 7.3, 10.9, 17.5, 40.25, 100.5, 255.5,
            ] {
                let (fast, logs) = both_paths(q, sigma, alpha);
                total += 1;
                if let Some(fast) = fast {
                    served += 1;
                    let rel = (fast - logs).abs() / logs;
                    assert!(
                        rel <= 1e-10,
                        "sigma {sigma} q {q} a {alpha}: {fast} vs {logs} ({rel:e})"
                    );
                } else if sigma == 1.1 && alpha < 11.0 {
                    panic!("the benchmark case fell back to logs at order {alpha}");
                }
            }
        }
        assert!(
            served * 2 > total,
            "products path served {served} of {total}"
        );
        for x in 11..110 {
            let alpha = 1.0 + f64::from(x) / 10.0;
            if alpha.fract() != 0.0 {
                assert!(both_paths(0.01, 1.1, alpha).0.is_some(), "order {alpha}");
            }
        }
    }
}
