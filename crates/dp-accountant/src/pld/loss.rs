//! The privacy loss of the Poisson-subsampled Gaussian mechanism, in both directions.
//!
//! With noise multiplier `sigma` and sampling rate `q` (add/remove-one neighbours, sensitivity 1
//! after scaling), the output distributions on a pair of neighbouring datasets reduce to one
//! dimension (Mironov, Talwar & Zhang 2019; Koskela, Jälkö & Honkela 2020, Sec. 6):
//! `mu_0 = N(0, sigma^2)` and `mu_q = (1-q) N(0, sigma^2) + q N(1, sigma^2)`.
//!
//! - **Remove** direction (`D` has the extra record): `P = mu_q`, `Q = mu_0`, loss
//!   `L(x) = ln(1 - q + q e^{(2x-1)/(2 sigma^2)})`, increasing in `x`, bounded below by `ln(1-q)`.
//! - **Add** direction (`D'` has the extra record): `P = mu_0`, `Q = mu_q`, loss `-L(x)`,
//!   decreasing in `x`, bounded above by `-ln(1-q)`.
//!
//! The privacy loss distribution (PLD) of a pair `(P, Q)` is the law of `L(X)`, `X ~ P`
//! (Meiser & Mohammadi 2018; Sommer, Meiser & Mohammadi 2019). For `q = 1` both directions are
//! the Gaussian pair `N(1, sigma^2)` vs `N(0, sigma^2)`. Because `L` is monotone, the `P`- and
//! `Q`-probabilities of a loss interval are differences of normal distribution functions at the
//! interval's preimage; both are computed from the tail that keeps relative precision.

use crate::normal::{Tails, normal_sf};

/// The `z` with `P(Z > z) = p` for a standard normal `Z` (bisection to `1e-12`; `+inf` for
/// `p <= 0`, `0` for `p >= 1/2`). Only used to choose grid ranges, which need no precision.
pub(crate) fn upper_quantile(p: f64) -> f64 {
    if p.is_nan() || p <= 0.0 {
        return f64::INFINITY;
    }
    if p >= 0.5 {
        return 0.0;
    }
    let (mut lo, mut hi) = (0.0_f64, 40.0_f64);
    if normal_sf(hi) > p {
        return hi;
    }
    while hi - lo > 1e-12 {
        let mid = 0.5 * (lo + hi);
        if normal_sf(mid) > p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    hi
}

/// Which of the two neighbouring orders the pair `(P, Q)` describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Direction {
    /// `P` is the output on the dataset with the extra record.
    Remove,
    /// `P` is the output on the dataset without it.
    Add,
}

/// The Poisson-subsampled Gaussian mechanism (`q = 1`: the plain Gaussian mechanism).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct SubsampledGaussian {
    /// Noise standard deviation / L2 sensitivity.
    pub sigma: f64,
    /// Sampling rate in `(0, 1]`.
    pub q: f64,
}

/// Standard-normal quantile beyond which a tail is cut when choosing the support of the
/// single-step grid: `P(Z > 9) = 1.1e-19`. The cut mass is *not* lost: the discretisations
/// keep it (see `discretise.rs`).
pub(crate) const TAIL_Z: f64 = 9.0;

impl SubsampledGaussian {
    /// Remove-direction loss at `x`: `ln(1 + q expm1(t))`, `t = (2x - 1) / (2 sigma^2)`.
    pub(crate) fn remove_loss(&self, x: f64) -> f64 {
        let t = (2.0 * x - 1.0) / (2.0 * self.sigma * self.sigma);
        if self.q == 1.0 {
            t
        } else if t > 0.0 {
            // ln(q e^t + 1 - q) = t + ln q + ln1p((1-q) e^{-t} / q)
            t + self.q.ln() + ((1.0 - self.q) * (-t).exp() / self.q).ln_1p()
        } else {
            (self.q * t.exp_m1()).ln_1p()
        }
    }

    /// The `x` at which the remove-direction loss equals `eps` (`-inf` at or below `ln(1-q)`).
    pub(crate) fn remove_x(&self, eps: f64) -> f64 {
        let t = if eps == f64::INFINITY {
            f64::INFINITY
        } else if eps > 1.0 {
            // q e^t + 1 - q = e^eps  =>  t = eps - ln q + ln1p(-(1-q) e^{-eps})
            eps - self.q.ln() + (-(1.0 - self.q) * (-eps).exp()).ln_1p()
        } else {
            let v = eps.exp_m1() / self.q;
            if v <= -1.0 {
                f64::NEG_INFINITY
            } else {
                v.ln_1p()
            }
        };
        self.sigma * self.sigma * t + 0.5
    }

    /// Loss range `[lo, hi]` holding all but `~2e-19` of the `P`-mass in `direction`.
    #[cfg(test)]
    pub(crate) fn loss_range(&self, direction: Direction) -> (f64, f64) {
        self.loss_range_within(direction, 0.0)
    }

    /// Loss range `[lo, hi]` outside which each side holds at most `max(cut, ~1e-19)` of the
    /// `P`-mass in `direction` (never wider than the normal quantiles at `+-9`). In the remove
    /// direction the upper tail is mostly the `q`-weighted `N(1, sigma^2)` component, so for
    /// small `q` the range ends well before `1 + 9 sigma`:
    /// `x_hi = max(sigma z(cut/2), 1 + sigma z(cut/(2q)))` with `P(Z > z(p)) = p`.
    pub(crate) fn loss_range_within(&self, direction: Direction, cut: f64) -> (f64, f64) {
        let s = self.sigma;
        let z = |p: f64| upper_quantile(p).min(TAIL_Z);
        match direction {
            // X ~ mu_q: below -z sigma lies at most P(Z > z); above x_hi at most
            // (1-q) P(Z > x_hi/sigma) + q P(Z > (x_hi-1)/sigma) <= cut/2 + cut/2.
            Direction::Remove => {
                let x_hi = (s * z(0.5 * cut))
                    .max(1.0 + s * z(0.5 * cut / self.q))
                    .min(1.0 + TAIL_Z * s);
                (self.remove_loss(-z(cut) * s), self.remove_loss(x_hi))
            }
            // X ~ N(0, sigma^2), loss decreasing in x.
            Direction::Add => (
                -self.remove_loss(z(cut) * s),
                -self.remove_loss(-z(cut) * s),
            ),
        }
    }

    /// Variance of the privacy loss under `P` in `direction` (trapezoid rule on
    /// `[-12 sigma, 1 + 12 sigma]`, 1000 panels; the integrand is smooth and Gaussian-weighted).
    #[cfg(test)]
    pub(crate) fn loss_variance(&self, direction: Direction) -> f64 {
        let (remove, add) = self.loss_variances();
        match direction {
            Direction::Remove => remove,
            Direction::Add => add,
        }
    }

    /// Variances of the privacy loss under `P`, `(remove, add)`, by the trapezoid rule on
    /// `[-12 sigma, 1 + 12 sigma]` (1000 panels; the integrand is smooth and Gaussian-weighted;
    /// it only chooses the grid spacing, so a relative error of a few percent would be harmless),
    /// both from one pass over the quadrature points.
    pub(crate) fn loss_variances(&self) -> (f64, f64) {
        let s = self.sigma;
        let (lo, hi) = (-12.0 * s, 1.0 + 12.0 * s);
        let n = 1000;
        let dx = (hi - lo) / n as f64;
        // (remove weight, add weight, remove loss)
        let points: Vec<(f64, f64, f64)> = (0..=n)
            .map(|i| {
                let x = lo + i as f64 * dx;
                let w = if i == 0 || i == n { 0.5 } else { 1.0 };
                let phi0 = (-0.5 * (x / s).powi(2)).exp();
                let phi1 = (-0.5 * ((x - 1.0) / s).powi(2)).exp();
                let l = self.remove_loss(x);
                (w * ((1.0 - self.q) * phi0 + self.q * phi1), w * phi0, l)
            })
            .collect();
        // (weight, loss) of each point for one direction
        fn variance(pts: impl Iterator<Item = (f64, f64)> + Clone) -> f64 {
            let total: f64 = pts.clone().map(|p| p.0).sum();
            let mean = pts.clone().map(|p| p.0 * p.1).sum::<f64>() / total;
            pts.map(|p| p.0 * (p.1 - mean).powi(2)).sum::<f64>() / total
        }
        (
            variance(points.iter().map(|p| (p.0, p.2))),
            variance(points.iter().map(|p| (p.1, -p.2))),
        )
    }

    /// `(P, Q)` masses of consecutive loss cells for grid points `g_0 < ... < g_k`:
    /// entry 0 is `(-inf, g_0]`, entry `i` in `1..=k` is `(g_{i-1}, g_i]`, entry `k+1` is
    /// `(g_k, inf)`.
    pub(crate) fn cell_masses(&self, direction: Direction, grid: &[f64]) -> Vec<(f64, f64)> {
        let s = self.sigma;
        let q = self.q;
        // Preimages of the grid points in x, and both normal tails there for N(0,s^2), N(1,s^2).
        let tails: Vec<(Tails, Tails)> = grid
            .iter()
            .map(|&g| {
                let x = match direction {
                    Direction::Remove => self.remove_x(g),
                    Direction::Add => self.remove_x(-g),
                };
                (Tails::at(x / s), Tails::at((x - 1.0) / s))
            })
            .collect();
        let neg_inf = (Tails::at(f64::NEG_INFINITY), Tails::at(f64::NEG_INFINITY));
        let pos_inf = (Tails::at(f64::INFINITY), Tails::at(f64::INFINITY));
        let mut out = Vec::with_capacity(grid.len() + 1);
        let k = grid.len();
        for i in 0..=k {
            // x-interval of loss cell i: for Remove x is increasing in the loss, for Add decreasing.
            let (left, right) = match direction {
                Direction::Remove => (
                    if i == 0 { &neg_inf } else { &tails[i - 1] },
                    if i == k { &pos_inf } else { &tails[i] },
                ),
                Direction::Add => (
                    if i == k { &neg_inf } else { &tails[i] },
                    if i == 0 { &pos_inf } else { &tails[i - 1] },
                ),
            };
            let m0 = left.0.mass_to(&right.0);
            let m1 = left.1.mass_to(&right.1);
            let mixed = (1.0 - q) * m0 + q * m1;
            out.push(match direction {
                Direction::Remove => (mixed, m0),
                Direction::Add => (m0, mixed),
            });
        }
        out
    }
}

/// A mechanism the PLD accountant composes: the pair it discretises.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Mechanism {
    /// The Poisson-subsampled Gaussian, add/remove (`q = 1`: the plain Gaussian, whose pair is
    /// the same under either relation): the remove and add pairs of the module documentation.
    Poisson(SubsampledGaussian),
    /// The Gaussian on a batch of `m` of `n` records drawn without replacement, replace-one
    /// neighbours, with `q = m/n` in the inner mechanism: the **symmetrised** remove pair of
    /// `docs/pld.md`, section 9 (Dong, Roth & Su 2022, Thm 4.2: the mechanism is
    /// `C_q(f)`-DP, `f = G_{1/sigma}`, `C_q(f) = min(f_q, f_q^-1)**`). Its PLD equals the
    /// remove pair's for positive losses, mirrored (`omega(-l) = e^{-l} omega(l)`) below zero, with
    /// an atom `1 - P(L > 0) - Q(L > 0)` at zero; the same in both directions.
    WithoutReplacement(SubsampledGaussian),
}

impl Mechanism {
    /// The subsampled Gaussian inside (for a fixed-size mechanism: the Poisson pair at its rate).
    pub(crate) fn gaussian(&self) -> &SubsampledGaussian {
        match self {
            Self::Poisson(g) | Self::WithoutReplacement(g) => g,
        }
    }

    /// Loss range `[lo, hi]` outside which each side holds at most `max(cut, ~1e-19)` of the
    /// `P`-mass in `direction` (for the symmetrised pair: `P_s(L < -hi) = Q(L > hi) <=
    /// P(L > hi)`, so the remove pair's upper end serves both sides).
    pub(crate) fn loss_range_within(&self, direction: Direction, cut: f64) -> (f64, f64) {
        match self {
            Self::Poisson(g) => g.loss_range_within(direction, cut),
            Self::WithoutReplacement(g) => {
                let hi = g.loss_range_within(Direction::Remove, cut).1.max(0.0);
                (-hi, hi)
            }
        }
    }

    /// Variances of the privacy loss, `(remove, add)`, for the grid spacing only (the
    /// symmetrised pair takes the larger of its remove pair's two: an accuracy choice, not a
    /// validity one).
    pub(crate) fn loss_variances(&self) -> (f64, f64) {
        match self {
            Self::Poisson(g) => g.loss_variances(),
            Self::WithoutReplacement(g) => {
                let (r, a) = g.loss_variances();
                let v = r.max(a);
                (v, v)
            }
        }
    }

    /// `(P, Q)` masses of consecutive loss cells, as [`SubsampledGaussian::cell_masses`].
    pub(crate) fn cell_masses(&self, direction: Direction, grid: &[f64]) -> Vec<(f64, f64)> {
        match self {
            Self::Poisson(g) => g.cell_masses(direction, grid),
            Self::WithoutReplacement(g) => symmetrised_cells(g, grid),
        }
    }
}

/// `(P_s, Q_s)` masses of the loss cells of `grid` (as [`SubsampledGaussian::cell_masses`]) for
/// the symmetrised remove pair of `g`: a cell's part above zero has the remove pair's masses,
/// its part below zero the masses of the mirrored interval with `P` and `Q` swapped, and the
/// cell `(a, b]` with `a < 0 <= b` also holds the atom at zero (`P_s = Q_s = 1 - P(L > 0) -
/// Q(L > 0)`). Every piece is a sum of the remove pair's cells on the sorted absolute grid
/// values (each computed from its own normal tails: no differences of cumulative sums).
fn symmetrised_cells(g: &SubsampledGaussian, grid: &[f64]) -> Vec<(f64, f64)> {
    // Sorted distinct |grid| values with 0 first: the remove pair's cells on them.
    let mut abs: Vec<f64> = std::iter::once(0.0)
        .chain(grid.iter().map(|v| v.abs()))
        .collect();
    abs.sort_by(f64::total_cmp);
    abs.dedup();
    // cells[i] = masses of (abs[i-1], abs[i]] for i >= 1, cells[abs.len()] = (abs[last], inf).
    let cells = g.cell_masses(Direction::Remove, &abs);
    let index = |v: f64| -> usize {
        // `+ 0.0` turns -0.0 (from negating 0) into 0.0 for `total_cmp`.
        let v = v + 0.0;
        if v == f64::INFINITY {
            abs.len()
        } else {
            abs.binary_search_by(|a| a.total_cmp(&v))
                .expect("every |grid| value is in the absolute grid")
        }
    };
    // Remove-pair masses of (u, v] for 0 <= u <= v, both in the absolute grid or +inf.
    let interval = |u: f64, v: f64| -> (f64, f64) {
        let (i, j) = (index(u), index(v));
        let mut p = 0.0;
        let mut q = 0.0;
        // cells (abs[k-1], abs[k]] for k in i+1..=j; k = abs.len() is the open tail.
        for c in &cells[i + 1..=j] {
            p += c.0;
            q += c.1;
        }
        (p, q)
    };
    let (p_pos, q_pos) = interval(0.0, f64::INFINITY);
    let atom = (1.0 - p_pos - q_pos).max(0.0);
    let k = grid.len();
    let mut out = Vec::with_capacity(k + 1);
    for i in 0..=k {
        let a = if i == 0 {
            f64::NEG_INFINITY
        } else {
            grid[i - 1]
        };
        let b = if i == k { f64::INFINITY } else { grid[i] };
        let (mut p, mut q) = (0.0, 0.0);
        if b > 0.0 {
            let (pp, qq) = interval(a.max(0.0), b);
            p += pp;
            q += qq;
        }
        if a < 0.0 {
            // (a, min(b, 0)] mirrors to [-min(b, 0), -a): P and Q swap.
            let (pp, qq) = interval(-(b.min(0.0)), -a);
            p += qq;
            q += pp;
            if b >= 0.0 {
                p += atom;
                q += atom;
            }
        }
        out.push((p, q));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaussian_loss_variance_is_one_over_sigma_squared() {
        let m = SubsampledGaussian { sigma: 0.7, q: 1.0 };
        for dir in [Direction::Remove, Direction::Add] {
            let v = m.loss_variance(dir);
            assert!((v - 1.0 / 0.49).abs() < 1e-9, "{v}");
        }
    }

    #[test]
    fn narrowed_range_leaves_at_most_the_cut_outside() {
        assert_eq!(upper_quantile(0.0), f64::INFINITY);
        assert!((normal_sf(upper_quantile(1e-12)) / 1e-12 - 1.0).abs() < 1e-9);
        for &(sigma, q) in &[(1.0, 1e-4), (0.5, 0.01), (5.0, 0.1), (2.0, 1.0)] {
            let m = SubsampledGaussian { sigma, q };
            for dir in [Direction::Remove, Direction::Add] {
                let (wide_lo, wide_hi) = m.loss_range(dir);
                let (lo, hi) = m.loss_range_within(dir, 1e-15);
                assert!(
                    wide_lo <= lo && hi <= wide_hi && lo < hi,
                    "{sigma} {q} {dir:?}"
                );
                // P-mass of the cells below lo and above hi
                let cells = m.cell_masses(dir, &[lo, hi]);
                assert!(
                    cells[0].0 <= 1e-15 * (1.0 + 1e-9) && cells[2].0 <= 1e-15 * (1.0 + 1e-9),
                    "{sigma} {q} {dir:?}"
                );
            }
        }
    }

    #[test]
    fn inverse_is_consistent() {
        for &(sigma, q) in &[(0.5, 0.01), (1.0, 1.0), (3.0, 1e-4), (0.8, 0.5)] {
            let m = SubsampledGaussian { sigma, q };
            for &x in &[-3.0, -0.2, 0.4, 1.7, 6.0] {
                let l = m.remove_loss(x);
                assert!(
                    (m.remove_x(l) - x).abs() < 1e-6 * (1.0 + x.abs()),
                    "{sigma} {q} {x}"
                );
            }
        }
    }

    #[test]
    fn cell_masses_sum_to_one_and_respect_loss_bounds() {
        let m = SubsampledGaussian {
            sigma: 0.7,
            q: 0.05,
        };
        let grid: Vec<f64> = (-20..=60).map(|i| i as f64 * 0.1).collect();
        for dir in [Direction::Remove, Direction::Add] {
            let cells = m.cell_masses(dir, &grid);
            let (p, qq): (f64, f64) = cells
                .iter()
                .fold((0.0, 0.0), |acc, c| (acc.0 + c.0, acc.1 + c.1));
            assert!((p - 1.0).abs() < 1e-12 && (qq - 1.0).abs() < 1e-12);
            // Inside each finite cell P/Q lies between e^{g_{i-1}} and e^{g_i}.
            for i in 1..grid.len() {
                let (pp, qm) = cells[i];
                if qm > 1e-200 && pp > 1e-200 {
                    let l = (pp / qm).ln();
                    assert!(
                        l >= grid[i - 1] - 1e-6 && l <= grid[i] + 1e-6,
                        "{dir:?} {i}"
                    );
                }
            }
        }
    }
}
