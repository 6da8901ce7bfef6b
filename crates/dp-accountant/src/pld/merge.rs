//! Optimistic discretisation by **merging outputs** (post-processing), with `O(h^2)` error.
//!
//! Partition the loss axis into cells `(tau_{j-1/2}, tau_{j+1/2}]` and report, instead of the
//! mechanism's output `x`, only the cell of `L(x)`. This is a deterministic map of the output,
//! i.e. post-processing, so the merged pair `(P', Q')` (cell masses) is dominated by `(P, Q)`:
//! `H_a(P' || Q') <= H_a(P || Q)` for every `a` (data processing), and compositions of
//! dominated pairs are dominated (Zhu, Dong & Wang 2022, Thm 10). Each merged output has loss
//! exactly `ln(P(cell) / Q(cell))`.
//!
//! The thresholds are chosen one after the other so that each merged loss *is* a grid point:
//! with `a = e^{g_j}`, `F(tau) = P(tau_lo, tau] - a Q(tau_lo, tau]` decreases while
//! `L < g_j` and increases after, so it has one root above `g_j`, found by Newton steps in `x`
//! (or else regula falsi, Illinois), started at the mirror image `2 g_j - tau_lo` plus the last
//! correction of a cell of the same parity (bracketed up to `g_j + 64 h`: where
//! the loss density falls steeply, as at the pile-up near `ln(1-q)`, one cell spans several grid
//! steps). The thresholds settle near the half-grid points. Geometrically the merged hockey-stick curve is the envelope of the true
//! curve's tangents at `e^{tau}` (it touches the true curve there, and its kinks are at the grid
//! points), so its error is second order in `h`, like connect-the-dots on the other side
//! (Doroshenko et al. 2022), instead of the `h/2`-per-run drift of rounding down.
//!
//! **Numerical safety.** `F` is a small difference of masses, so a threshold is accepted only
//! if `F` exceeds a bound on its evaluation error (the merged loss is then `>= g_j` in exact
//! arithmetic, and placing it at `g_j` rounds it down). Where no such threshold is found within
//! 64 grid steps (tails, underflow, or a bulk of mass just below a grid point, as for small `q`
//! near loss 0), the cell `(tau_lo, g_j + h/2]` is split by *randomised* post-processing: its
//! part above `g_j` (surplus `S = P - a Q > 0`) with a random fraction `f = S / D` of its part
//! below (deficit `D`) forms one output with loss `>= g_j`, placed at `g_j`; the rest (losses
//! above `tau_lo`) is rounded down to the grid point below `tau_lo`. Rounding a loss down is valid for every
//! composition by a monotone coupling (`(1 - e^{eps - l})_+` is non-decreasing in `l`).

use super::loss::{Direction, SubsampledGaussian};
use crate::normal::Tails;

/// A threshold on the loss axis with both normal tails at its preimage.
struct Cut {
    loss: f64,
    x: f64,
    n0: Tails,
    n1: Tails,
}

/// `(P, Q)` mass of a loss cell and a bound on the absolute evaluation error of `P - a Q`.
struct CellMass {
    p: f64,
    q: f64,
    err_p: f64,
    err_q: f64,
}

/// Relative error allowed per tail value (erfc within a few ulps, one subtraction); generous.
const TAIL_ERR: f64 = 32.0 * f64::EPSILON;

impl SubsampledGaussian {
    fn cut(&self, direction: Direction, loss: f64) -> Cut {
        let x = match direction {
            Direction::Remove => self.remove_x(loss),
            Direction::Add => self.remove_x(-loss),
        };
        let x = if x.is_nan() { f64::NEG_INFINITY } else { x };
        self.cut_with(loss, x)
    }

    /// The threshold at the preimage `x` (its loss computed from `x`).
    fn cut_at_x(&self, direction: Direction, x: f64) -> Cut {
        let loss = match direction {
            Direction::Remove => self.remove_loss(x),
            Direction::Add => -self.remove_loss(x),
        };
        self.cut_with(loss, x)
    }

    /// The cut of loss `loss` at preimage `x`, with both normal tails there.
    fn cut_with(&self, loss: f64, x: f64) -> Cut {
        Cut {
            loss,
            x,
            n0: Tails::at(x / self.sigma),
            n1: Tails::at((x - 1.0) / self.sigma),
        }
    }

    /// `d(P - a Q)(lo, cut] / dx` at the cut's preimage `x` (the cell grows with `x` for Remove,
    /// shrinks for Add): densities of `N(0, s^2)` and `N(1, s^2)`.
    fn surplus_slope(&self, direction: Direction, x: f64, a: f64) -> f64 {
        let s = self.sigma;
        let c = 1.0 / (s * (2.0 * std::f64::consts::PI).sqrt());
        let f0 = c * (-0.5 * (x / s).powi(2)).exp();
        let f1 = c * (-0.5 * ((x - 1.0) / s).powi(2)).exp();
        let mixed = (1.0 - self.q) * f0 + self.q * f1;
        match direction {
            Direction::Remove => mixed - a * f0,
            Direction::Add => -(f0 - a * mixed),
        }
    }

    /// Masses of the loss cell `(a.loss, b.loss]`, `a.loss < b.loss`.
    fn cell(&self, direction: Direction, a: &Cut, b: &Cut) -> CellMass {
        let small = |t: &Tails| t.lower.min(t.upper);
        // x-interval: increasing in the loss for Remove, decreasing for Add
        let (l, r) = match direction {
            Direction::Remove => (a, b),
            Direction::Add => (b, a),
        };
        let m0 = l.n0.mass_to(&r.n0);
        let m1 = l.n1.mass_to(&r.n1);
        let e0 = TAIL_ERR * (small(&l.n0) + small(&r.n0)) + 4.0 * f64::EPSILON * m0;
        let e1 = TAIL_ERR * (small(&l.n1) + small(&r.n1)) + 4.0 * f64::EPSILON * m1;
        let q = self.q;
        let (mixed, e_mixed) = ((1.0 - q) * m0 + q * m1, (1.0 - q) * e0 + q * e1);
        match direction {
            Direction::Remove => CellMass {
                p: mixed,
                q: m0,
                err_p: e_mixed,
                err_q: e0,
            },
            Direction::Add => CellMass {
                p: m0,
                q: mixed,
                err_p: e0,
                err_q: e_mixed,
            },
        }
    }
}

impl CellMass {
    /// `P - a Q` minus its error bound: `> 0` proves the merged loss is `>= ln a`.
    fn surplus(&self, a: f64) -> f64 {
        let v = self.p - a * self.q - (self.err_p + a * self.err_q);
        if v.is_nan() { f64::NEG_INFINITY } else { v }
    }
}

/// Optimistic masses on the grid `g_i = (first + i) h`, `i < len`: every loss above `g_0`
/// is kept (the lower tail `L <= g_0` is dropped; the caller chose `g_0` so that it is tiny).
pub(crate) fn merged_masses(
    mechanism: &SubsampledGaussian,
    direction: Direction,
    first: i64,
    len: usize,
    h: f64,
) -> Vec<f64> {
    let grid = Merger {
        mechanism,
        direction,
        first,
        len,
        h,
    };
    let g = |i: usize| grid.g(i);
    let mut mass = vec![0.0; len];
    // first cell (g_0, g_0 + h/2]: all its losses exceed g_0
    let mut lo = grid.at(g(0));
    let half = grid.at(g(0) + 0.5 * h);
    mass[0] += grid.cell(&lo, &half).p;
    lo = half;
    let mut j = 1;
    let mut last_offset = [0.0_f64; 2];
    while j + 1 < len {
        if g(j) <= lo.loss {
            j += 1;
            continue;
        }
        let a = g(j).exp();
        // mirror image, corrected by the last offset of a cell of the same parity (the
        // offsets alternate and vary slowly, so this is usually accepted at once)
        let mirror = 2.0 * g(j) - lo.loss;
        let guess = mirror + last_offset[j % 2];
        match grid
            .newton(&lo, j, a, guess)
            .or_else(|| grid.regula_falsi(&lo, j, a, guess))
        {
            Some((m, c)) => {
                mass[j] += m.p;
                last_offset[j % 2] = c.loss - mirror;
                lo = c;
            }
            None => {
                lo = grid.randomised_split(&lo, j, a, &mut mass);
                last_offset = [0.0; 2];
            }
        }
        j += 1;
    }
    // the rest (lo, inf): at the last grid point if its merged loss provably reaches it
    let m = grid.cell(&lo, &grid.at(f64::INFINITY));
    let last = len - 1;
    let idx = if lo.loss < g(last) && m.surplus(g(last).exp()) > 0.0 {
        last
    } else {
        grid.floor_index(lo.loss)
    };
    mass[idx] += m.p;
    mass
}

/// One mechanism, one direction and the grid `g_i = (first + i) h`, `i < len`, being merged.
struct Merger<'a> {
    mechanism: &'a SubsampledGaussian,
    direction: Direction,
    first: i64,
    len: usize,
    h: f64,
}

impl Merger<'_> {
    fn g(&self, i: usize) -> f64 {
        (self.first + i as i64) as f64 * self.h
    }

    fn at(&self, loss: f64) -> Cut {
        self.mechanism.cut(self.direction, loss)
    }

    fn cell(&self, lo: &Cut, hi: &Cut) -> CellMass {
        self.mechanism.cell(self.direction, lo, hi)
    }

    /// Index of the grid point at or below a loss (clamped to the grid).
    fn floor_index(&self, loss: f64) -> usize {
        ((loss / self.h).floor() as i64 - self.first).clamp(0, self.len as i64 - 1) as usize
    }

    /// Whether a cell with surplus root near `ln a` is accepted: its merged loss provably
    /// reaches `ln a` and exceeds it by at most `max(h^2 / 32, evaluation error)`.
    fn accept(&self, m: &CellMass, a: f64) -> bool {
        let s = m.surplus(a);
        s > 0.0 && s <= (a * m.q * self.tolerance()).max(m.err_p + a * m.err_q)
    }

    fn tolerance(&self) -> f64 {
        self.h * self.h / 32.0
    }

    /// Newton steps in `x` from `guess`, aiming inside the accepted range (the surplus is
    /// convex near its root, so they approach it from above; usually 1-2 steps).
    fn newton(&self, lo: &Cut, j: usize, a: f64, guess: f64) -> Option<(CellMass, Cut)> {
        let gj = self.g(j);
        let mut c = self.at(guess);
        for _ in 0..3 {
            let m = self.cell(lo, &c);
            if c.loss > gj && self.accept(&m, a) {
                return Some((m, c));
            }
            let aim = (m.err_p + a * m.err_q) + 0.5 * a * m.q * self.tolerance();
            let slope = self.mechanism.surplus_slope(self.direction, c.x, a);
            let x = c.x + (aim - (m.p - a * m.q)) / slope;
            if !(slope.is_finite() && slope != 0.0 && x.is_finite()) {
                return None;
            }
            c = self.mechanism.cut_at_x(self.direction, x);
            if !(c.loss > gj && c.loss < gj + 2.0 * self.h) {
                return None;
            }
        }
        None
    }

    /// Brackets the root of the surplus on `(g_j, g_j + 64 h]` and refines it by Illinois
    /// regula falsi, keeping a point with positive surplus; `None` if no bracket is found.
    fn regula_falsi(&self, lo: &Cut, j: usize, a: f64, guess: f64) -> Option<(CellMass, Cut)> {
        let (gj, h) = (self.g(j), self.h);
        let mut b_lo = (gj, f64::NEG_INFINITY);
        let mut b_hi: Option<(f64, f64, CellMass, Cut)> = None;
        // (where the loss density falls steeply above g_j, e.g. at the pile-up near
        // ln(1 - q), the root can lie several steps up: the cell then spans them)
        let far = (1..=6).map(|k| gj + f64::from(1 << k) * h);
        for t in [guess - h / 8.0, guess + h / 8.0].into_iter().chain(far) {
            if t <= b_lo.0 {
                continue;
            }
            let c = self.at(t);
            let m = self.cell(lo, &c);
            let s = m.surplus(a);
            if s > 0.0 {
                b_hi = Some((t, s, m, c));
                break;
            }
            b_lo = (t, s);
        }
        let (mut t_hi, mut s_hi, mut m_hi, mut c_hi) = b_hi?;
        let (mut t_lo, mut s_lo) = b_lo;
        let mut side = 0i8;
        for _ in 0..40 {
            if self.accept(&m_hi, a) || t_hi - t_lo <= 1e-15 * (1.0 + t_hi.abs()) {
                break;
            }
            let t = if s_lo.is_finite() {
                let r = t_hi - s_hi * (t_hi - t_lo) / (s_hi - s_lo);
                if r > t_lo && r < t_hi {
                    r
                } else {
                    0.5 * (t_lo + t_hi)
                }
            } else {
                0.5 * (t_lo + t_hi)
            };
            let c = self.at(t);
            let m = self.cell(lo, &c);
            let s = m.surplus(a);
            if s > 0.0 {
                (t_hi, s_hi, m_hi, c_hi) = (t, s, m, c);
                if side == 1 {
                    s_lo *= 0.5;
                }
                side = 1;
            } else {
                (t_lo, s_lo) = (t, s);
                if side == -1 {
                    s_hi *= 0.5;
                }
                side = -1;
            }
        }
        Some((m_hi, c_hi))
    }

    /// No provable balance within reach: splits the cell `(lo, g_j + h/2]` by randomised
    /// post-processing. Its part above `g_j` ("up", surplus `S > 0`) together with a random
    /// fraction `f = S / D` of its part below ("down", deficit `D`) is one output with loss
    /// `>= g_j`; the rest of "down" (losses `> lo`) is rounded down. Returns the cell's end.
    fn randomised_split(&self, lo: &Cut, j: usize, a: f64, mass: &mut [f64]) -> Cut {
        let mid = self.at(self.g(j));
        let c = self.at(self.g(j) + 0.5 * self.h);
        let down = self.cell(lo, &mid);
        let up = self.cell(&mid, &c);
        let surplus = up.surplus(a).max(0.0);
        let deficit = a * down.q - down.p + down.err_p + a * down.err_q;
        let f = if deficit > 0.0 {
            (surplus / deficit).min(1.0)
        } else {
            0.0
        };
        mass[j] += up.p + f * down.p;
        mass[self.floor_index(lo.loss)] += (1.0 - f) * down.p;
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pld::analytic::gaussian_delta;
    use crate::pld::discrete::Bound;
    use crate::pld::discretise::discretise;
    use crate::pld::loss::Mechanism;

    #[test]
    fn merged_gaussian_is_below_the_exact_curve_by_order_h_squared() {
        for sigma in [0.5, 1.0, 4.0] {
            let m = SubsampledGaussian { sigma, q: 1.0 };
            for step in [0.02, 0.005] {
                for dir in [Direction::Remove, Direction::Add] {
                    let opt = discretise(&Mechanism::Poisson(m), dir, step, Bound::Optimistic, 0.0);
                    let total: f64 = opt.mass.iter().sum();
                    assert!((total - 1.0).abs() < 1e-12, "{total}");
                    for i in 0..200 {
                        let eps = i as f64 * 0.013;
                        let exact = gaussian_delta(sigma, eps);
                        let d = opt.delta(eps);
                        assert!(d <= exact + 1e-15, "{sigma} {step} {eps}: {d} > {exact}");
                        // tangent envelope: off by O(h^2) in e^eps, relative to the slope
                        assert!(
                            exact - d <= step * step * (0.2 + exact),
                            "{sigma} {step} {eps}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn merged_subsampled_is_below_connect_the_dots_and_close() {
        // Largest relative gap (hi - lo) / (hi + 1e-9) allowed, remove and add direction:
        // measured x 1.5. Add, q = 1e-3: the whole loss range (<= -ln(1-q) = 1e-3) lies within
        // one grid step, so delta(eps) for 0 < eps < 1e-3 is lost at this spacing (as before).
        let cases = [
            (0.5, 1e-3, [0.06, 1.0]),
            (1.0, 0.01, [0.02, 0.025]),
            (2.0, 0.1, [1e-3, 0.16]),
            (0.8, 0.5, [2e-5, 0.13]),
        ];
        for &(sigma, q, max_rel) in &cases {
            let m = SubsampledGaussian { sigma, q };
            let step = 2e-3;
            for (dir, max_rel) in [Direction::Remove, Direction::Add].into_iter().zip(max_rel) {
                let mut worst = 0.0_f64;
                let opt = discretise(&Mechanism::Poisson(m), dir, step, Bound::Optimistic, 0.0);
                let pess = discretise(&Mechanism::Poisson(m), dir, step, Bound::Pessimistic, 0.0);
                let total: f64 = opt.mass.iter().sum();
                assert!((total - 1.0).abs() < 1e-12, "{sigma} {q} {dir:?} {total}");
                for i in 0..300 {
                    let eps = i as f64 * 0.011;
                    let (lo, hi) = (opt.delta(eps), pess.delta(eps));
                    assert!(lo <= hi + 1e-15, "{sigma} {q} {dir:?} {eps}");
                    worst = worst.max((hi - lo) / (hi + 1e-9));
                }
                println!("{sigma} {q} {dir:?}: largest relative gap {worst:.2e}");
                assert!(worst <= max_rel, "{sigma} {q} {dir:?}: {worst}");
            }
        }
    }
}
