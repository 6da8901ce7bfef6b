//! Minimisation of a conversion over the Rényi order: over a grid, or over all real orders.
//!
//! Continuous optimisation: a coarse geometric scan of the order axis (which stops only when a
//! rigorous lower bound shows no larger order can do better), then Brent's minimisation
//! (golden section with parabolic steps) in `t = ln(a - 1)` on the bracket around the best
//! scanned order. For the classic conversion the
//! objective is quasi-convex, because `(a-1) RDP(a)` is convex in `a` (a log-moment-generating
//! function) and the objective is the slope of a chord of it; for the improved conversion the
//! extra terms are smooth and monotone. Whatever order the search ends at, the value returned is
//! the conversion *at that order*, hence a valid bound; the search only decides how tight.

use crate::conversion::{Conversion, epsilon_unchecked, ln_delta_unchecked};

/// Largest order the continuous search considers.
pub(crate) const MAX_ORDER: f64 = 1_048_576.0;
/// Smallest order the continuous search considers.
pub(crate) const MIN_ORDER: f64 = 1.0 + 1.0 / 1024.0;
/// Absolute tolerance of the order search in `ln(a - 1)`.
const T_TOLERANCE: f64 = 1e-6;

/// The best value found and the order achieving it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Optimum {
    pub(crate) value: f64,
    pub(crate) order: f64,
}

/// The coarse scan: a few orders below 2, then ratio `sqrt 2` steps.
fn scan_orders() -> impl Iterator<Item = f64> {
    let low = [1.0 + 1.0 / 1024.0, 1.01, 1.05, 1.1, 1.25, 1.5, 1.75];
    let high = (0..=38)
        .map(|k| 2.0 * 2f64.powf(f64::from(k) / 2.0))
        .map(|a| {
            // integers where the geometric grid allows (cheaper exact formula)
            if a >= 4.0 { a.round() } else { a }
        });
    low.into_iter().chain(high).filter(|&a| a <= MAX_ORDER)
}

/// Minimises `objective(a)` over real orders; `stop(a, rdp_at_a, best)` says no order `> a`
/// can beat `best`. `objective` returns `(value, rdp)`.
fn minimise_continuous(
    objective: &dyn Fn(f64) -> (f64, f64),
    stop: &dyn Fn(f64, f64, f64) -> bool,
) -> Optimum {
    let mut scanned: Vec<(f64, f64)> = Vec::with_capacity(48);
    let mut best = Optimum {
        value: f64::INFINITY,
        order: 2.0,
    };
    let mut best_idx = 0;
    for a in scan_orders() {
        let (v, r) = objective(a);
        scanned.push((a, v));
        if v < best.value {
            best = Optimum { value: v, order: a };
            best_idx = scanned.len() - 1;
        }
        if stop(a, r, best.value) {
            break;
        }
    }
    let lo = if best_idx == 0 {
        MIN_ORDER
    } else {
        scanned[best_idx - 1].0
    };
    let hi = if best_idx + 1 < scanned.len() {
        scanned[best_idx + 1].0
    } else {
        // best at the last scanned order: search up to twice it (the scan stopped there only
        // if the bound said nothing further helps, or at MAX_ORDER)
        (scanned[best_idx].0 * 2.0).min(MAX_ORDER)
    };
    brent(objective, lo, hi, best)
}

/// Brent's minimisation (golden section with parabolic steps; Brent 1973, ch. 5) of
/// `objective` on `[lo, hi]` in `t = ln(a - 1)`, started from the best scanned point, which lies
/// strictly inside the bracket.
fn brent(objective: &dyn Fn(f64) -> (f64, f64), lo: f64, hi: f64, best: Optimum) -> Optimum {
    const CGOLD: f64 = 0.381_966_011_250_105_1;
    let to_a = |t: f64| 1.0 + t.exp();
    let f = |t: f64| objective(to_a(t)).0;
    let (mut a, mut b) = ((lo - 1.0).ln(), (hi - 1.0).ln());
    let t0 = (best.order - 1.0).ln();
    let (mut x, mut fx) = if t0 > a && t0 < b && best.value.is_finite() {
        (t0, best.value)
    } else {
        let x = a + CGOLD * (b - a);
        (x, f(x))
    };
    let (mut w, mut fw, mut v, mut fv) = (x, fx, x, fx);
    let (mut d, mut e): (f64, f64) = (0.0, 0.0);
    for _ in 0..200 {
        let xm = 0.5 * (a + b);
        let tol1 = T_TOLERANCE;
        let tol2 = 2.0 * tol1;
        if (x - xm).abs() <= tol2 - 0.5 * (b - a) {
            break;
        }
        if e.abs() > tol1 {
            let r = (x - w) * (fx - fv);
            let mut q = (x - v) * (fx - fw);
            let mut p = (x - v) * q - (x - w) * r;
            q = 2.0 * (q - r);
            if q > 0.0 {
                p = -p;
            }
            q = q.abs();
            let etemp = e;
            e = d;
            if p.abs() >= (0.5 * q * etemp).abs() || p <= q * (a - x) || p >= q * (b - x) {
                e = if x >= xm { a - x } else { b - x };
                d = CGOLD * e;
            } else {
                d = p / q;
                let u = x + d;
                if u - a < tol2 || b - u < tol2 {
                    d = tol1.copysign(xm - x);
                }
            }
        } else {
            e = if x >= xm { a - x } else { b - x };
            d = CGOLD * e;
        }
        let u = if d.abs() >= tol1 {
            x + d
        } else {
            x + tol1.copysign(d)
        };
        let fu = f(u);
        if fu <= fx {
            if u >= x {
                a = x;
            } else {
                b = x;
            }
            (v, fv, w, fw, x, fx) = (w, fw, x, fx, u, fu);
        } else {
            if u < x {
                a = u;
            } else {
                b = u;
            }
            if fu <= fw || w == x {
                (v, fv, w, fw) = (w, fw, u, fu);
            } else if fu <= fv || v == x || v == w {
                (v, fv) = (u, fu);
            }
        }
    }
    if fx < best.value {
        Optimum {
            value: fx,
            order: to_a(x),
        }
    } else {
        best
    }
}

/// Smallest `epsilon` at `delta` over all real orders, given the RDP curve as a function.
pub(crate) fn epsilon_continuous(
    rdp: &dyn Fn(f64) -> f64,
    ln_delta: f64,
    conversion: Conversion,
) -> Optimum {
    let objective = |a: f64| {
        let r = rdp(a);
        (epsilon_unchecked(a, r, ln_delta, conversion), r)
    };
    // For a' >= a: eps(a') >= rdp(a) - (1 + ln a)/(a - 1) (improved) or >= rdp(a) (classic),
    // because RDP is non-decreasing in the order.
    let stop = |a: f64, r: f64, best: f64| {
        let slack = match conversion {
            Conversion::Classic => 0.0,
            Conversion::Improved => (1.0 + a.ln()) / (a - 1.0),
        };
        r - slack >= best || r.is_infinite()
    };
    minimise_continuous(&objective, &stop)
}

/// Smallest `epsilon` at `delta` over a grid of orders (first best order on ties).
pub(crate) fn epsilon_grid(
    rdp: &[f64],
    orders: &[f64],
    ln_delta: f64,
    conversion: Conversion,
) -> Optimum {
    let (value, order) = crate::conversion::best_epsilon_on_grid(orders, rdp, ln_delta, conversion);
    Optimum { value, order }
}

/// Smallest `ln delta` at `epsilon` over all real orders.
pub(crate) fn ln_delta_continuous(
    rdp: &dyn Fn(f64) -> f64,
    epsilon: f64,
    conversion: Conversion,
) -> Optimum {
    let objective = |a: f64| {
        let r = rdp(a);
        (ln_delta_unchecked(a, r, epsilon, conversion), r)
    };
    // For a' >= a with rdp(a) >= eps + 2/(a-1): (a'-1)(rdp(a') - eps) - 1 - ln a' is increasing
    // in a' and bounds ln delta(a') from below; stop once it exceeds the best.
    let stop = |a: f64, r: f64, best: f64| {
        let kl_floor = match conversion {
            Conversion::Classic => f64::INFINITY,
            Conversion::Improved => 0.5 * (-(-r).exp()).ln_1p(),
        };
        r.is_infinite()
            || (r >= epsilon + 2.0 / (a - 1.0)
                && (a - 1.0) * (r - epsilon) - 1.0 - a.ln() >= best
                && kl_floor >= best)
    };
    minimise_continuous(&objective, &stop)
}

/// Smallest `ln delta` at `epsilon` over a grid of orders.
pub(crate) fn ln_delta_grid(
    rdp: &[f64],
    orders: &[f64],
    epsilon: f64,
    conversion: Conversion,
) -> Optimum {
    let mut best = Optimum {
        value: f64::INFINITY,
        order: orders[0],
    };
    for (&a, &r) in orders.iter().zip(rdp) {
        let v = ln_delta_unchecked(a, r, epsilon, conversion);
        if v < best.value {
            best = Optimum { value: v, order: a };
        }
    }
    best
}
