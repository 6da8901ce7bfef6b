//! From the continuous loss of one mechanism to a discrete PLD, pessimistic or optimistic.
//!
//! **Pessimistic: connect-the-dots** (Doroshenko, Ghazi, Kamath, Kumar & Manurangsi 2022,
//! Alg. 1 / Thm 3.3). On grid points `g_0 < ... < g_k` the discrete PLD is chosen so that its
//! hockey-stick curve `delta(eps)` *equals* the true one at every grid point and is linear in
//! `e^eps` in between; since the true curve is convex in `e^eps`, the chord lies above it, and the
//! discrete PLD comes from a pair of distributions that dominates the true pair, so compositions
//! stay upper bounds (Zhu, Dong & Wang 2022, Thm 10). Equivalently, the `P`-mass of each cell
//! `(g_{i-1}, g_i]` is split between its two ends preserving `E_P[e^{-L}] = Q(cell)`:
//! `m_lo = P (e^h r - 1) / expm1(h)`, `m_hi = P - m_lo`, `r = Q e^{g_{i-1}} / P`.
//! The lower tail `L <= g_0` goes to `g_0` (upwards: safe) and the upper tail `L > g_k` is split
//! between `g_k` and `+inf` preserving `E[e^{-L}]`, so **no mass is lost and no tail bound is
//! needed**.
//!
//! **Optimistic: merging by post-processing** (see `merge.rs`): the loss axis is cut into
//! cells whose merged loss `ln(P(cell)/Q(cell))` is exactly a grid point (or is rounded down to
//! one), which gives a pair dominated by the true one with an `O(h^2)` error; the lower tail
//! (at most `cut`, see [`discretise`]) is dropped. `delta` is under-estimated for every
//! composition.

use super::discrete::{Bound, DiscretePld};
use super::loss::{Direction, Mechanism};
use super::merge::merged_masses;

/// Discretises one mechanism's PLD on the grid `step * Z`, over a loss range outside which each
/// side holds at most `max(cut, ~1e-19)` of the `P`-mass (that mass is kept in the safe
/// direction as described above, so any `cut` gives valid bounds; the caller passes a fraction
/// of the mass its truncation removes anyway).
pub(crate) fn discretise(
    mechanism: &Mechanism,
    direction: Direction,
    step: f64,
    bound: Bound,
    cut: f64,
) -> DiscretePld {
    // The optimistic bound of a fixed-size (without replacement) mechanism is the Poisson
    // pair's at the same rate, in the same direction: an achievable pair under replace-one
    // (`docs/pld.md`, section 9), so a valid lower bound.
    let poisson;
    let mechanism = match (mechanism, bound) {
        (Mechanism::WithoutReplacement(g), Bound::Optimistic) => {
            poisson = Mechanism::Poisson(*g);
            &poisson
        }
        _ => mechanism,
    };
    let (lo, hi) = mechanism.loss_range_within(direction, cut);
    let first = (lo / step).floor() as i64;
    let last = ((hi / step).ceil() as i64).max(first + 1);
    let grid: Vec<f64> = (first..=last).map(|i| i as f64 * step).collect();
    let k = grid.len();
    let mut inf_mass = 0.0;
    let mass = match bound {
        Bound::Pessimistic => {
            let mut mass = vec![0.0; k];
            let cells = mechanism.cell_masses(direction, &grid);
            mass[0] += cells[0].0;
            let em1 = step.exp_m1();
            for i in 1..k {
                let (p, q) = cells[i];
                if p <= 0.0 {
                    continue;
                }
                // r = Q e^{g_{i-1}} / P in [e^{-h}, 1]; computed in log space (no overflow).
                let r = if q > 0.0 {
                    (grid[i - 1] + q.ln() - p.ln()).exp()
                } else {
                    0.0
                };
                let frac_lo = (((1.0 + em1) * r - 1.0) / em1).clamp(0.0, 1.0);
                mass[i - 1] += p * frac_lo;
                mass[i] += p * (1.0 - frac_lo);
            }
            // Upper tail (g_k, inf): m at g_k with m e^{-g_k} = Q_tail, rest at +inf.
            let (p, q) = cells[k];
            if p > 0.0 {
                let at_top = if q > 0.0 {
                    (q.ln() + grid[k - 1]).exp().min(p)
                } else {
                    0.0
                };
                mass[k - 1] += at_top;
                inf_mass += p - at_top;
            }
            mass
        }
        Bound::Optimistic => merged_masses(mechanism.gaussian(), direction, first, k, step),
    };
    DiscretePld {
        offset: first,
        step,
        mass,
        inf_mass,
        slack: 0.0,
        bound,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pld::analytic::gaussian_delta;
    use crate::pld::loss::SubsampledGaussian;

    #[test]
    fn connect_the_dots_is_exact_on_the_grid_and_above_between() {
        let sigma = 0.8;
        let m = Mechanism::Poisson(SubsampledGaussian { sigma, q: 1.0 });
        let step = 0.05;
        for dir in [Direction::Remove, Direction::Add] {
            let pess = discretise(&m, dir, step, Bound::Pessimistic, 0.0);
            let opt = discretise(&m, dir, step, Bound::Optimistic, 0.0);
            for i in 0..40 {
                let eps = i as f64 * step;
                let exact = gaussian_delta(sigma, eps);
                assert!((pess.delta(eps) - exact).abs() < 1e-12, "{dir:?} {eps}");
                let mid = eps + 0.37 * step;
                let exact_mid = gaussian_delta(sigma, mid);
                assert!(pess.delta(mid) >= exact_mid - 1e-13);
                assert!(opt.delta(mid) <= exact_mid + 1e-13);
            }
        }
    }

    #[test]
    fn subsampled_masses_are_complete() {
        let m = Mechanism::Poisson(SubsampledGaussian {
            sigma: 0.5,
            q: 1e-3,
        });
        for dir in [Direction::Remove, Direction::Add] {
            let p = discretise(&m, dir, 1e-3, Bound::Pessimistic, 0.0);
            let total: f64 = p.mass.iter().sum::<f64>() + p.inf_mass;
            assert!((total - 1.0).abs() < 1e-12);
            // A valid PLD of a pair: E[e^{-L}] <= 1.
            let e: f64 = p
                .mass
                .iter()
                .enumerate()
                .map(|(j, &w)| w * (-((p.offset + j as i64) as f64) * p.step).exp())
                .sum();
            assert!(e <= 1.0 + 1e-9, "{dir:?} {e}");
        }
    }
}
