//! A privacy-loss distribution on a uniform grid, its truncation, coarsening and the
//! `delta(epsilon)` / `epsilon(delta)` queries.
//!
//! Mass `mass[j]` sits at loss `(offset + j) * step`; `inf_mass` sits at `+inf`. The hockey-stick
//! divergence of the pair the PLD describes is
//! `delta(eps) = inf_mass + sum_l mass(l) (1 - e^{eps - l})_+` (Sommer et al. 2019, Thm 1;
//! Koskela et al. 2020, Eq. 4.2), which a pessimistic PLD over-estimates and an optimistic one
//! under-estimates. `slack` is the accumulated bound on floating-point error of the FFT
//! convolutions: it is added to `delta` for a pessimistic PLD and subtracted for an optimistic
//! one, so neither bound relies on exact arithmetic.

/// Whether a discrete PLD bounds the true hockey-stick curve from above or from below.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Bound {
    /// `delta` over-estimated for every `epsilon` (dominating pair).
    Pessimistic,
    /// `delta` under-estimated for every `epsilon` (dominated, or stochastically smaller loss).
    Optimistic,
}

/// A discrete privacy-loss distribution on the grid `step * Z`.
#[derive(Clone, Debug)]
pub(crate) struct DiscretePld {
    /// Grid index of `mass[0]`.
    pub offset: i64,
    /// Grid spacing (the value discretisation interval).
    pub step: f64,
    /// Finite masses.
    pub mass: Vec<f64>,
    /// Mass at `+inf` (includes truncated upper tails when pessimistic).
    pub inf_mass: f64,
    /// Bound on accumulated floating-point error in `delta`.
    pub slack: f64,
    /// Direction of every approximation made.
    pub bound: Bound,
}

impl DiscretePld {
    /// The PLD of "no mechanism": all mass at loss 0.
    pub(crate) fn identity(step: f64, bound: Bound) -> Self {
        Self {
            offset: 0,
            step,
            mass: vec![1.0],
            inf_mass: 0.0,
            slack: 0.0,
            bound,
        }
    }

    /// Drops tails of at most `tail_mass / 2` each side, in the safe direction: pessimistic
    /// moves the lower tail up onto the first kept point and the upper tail to `+inf`;
    /// optimistic drops the lower tail and moves the upper tail down onto the last kept point.
    pub(crate) fn truncate(&mut self, tail_mass: f64) {
        let budget = 0.5 * tail_mass;
        let n = self.mass.len();
        let mut lo = 0;
        let mut low_sum = 0.0;
        while lo + 1 < n && low_sum + self.mass[lo] <= budget {
            low_sum += self.mass[lo];
            lo += 1;
        }
        let mut hi = n - 1;
        let mut high_sum = 0.0;
        while hi > lo && high_sum + self.mass[hi] <= budget {
            high_sum += self.mass[hi];
            hi -= 1;
        }
        if lo == 0 && hi == n - 1 {
            return;
        }
        let mut kept: Vec<f64> = self.mass[lo..=hi].to_vec();
        match self.bound {
            Bound::Pessimistic => {
                kept[0] += low_sum;
                self.inf_mass += high_sum;
            }
            Bound::Optimistic => {
                let last = kept.len() - 1;
                kept[last] += high_sum;
            }
        }
        self.offset += lo as i64;
        self.mass = kept;
    }

    /// Doubles the grid spacing. Pessimistic: a point between two new grid points is split
    /// between them preserving `E[e^{-L}]` (connect-the-dots, Doroshenko et al. 2022, Sec. 3),
    /// which keeps a dominating pair. Optimistic: rounded down.
    pub(crate) fn coarsen(&mut self) {
        let h = self.step;
        let first = self.offset.div_euclid(2);
        let last = (self.offset + self.mass.len() as i64 - 1).div_euclid(2) + 1;
        let mut out = vec![0.0; (last - first + 1) as usize];
        // Weights of an odd point on its lower and upper new neighbours (loss l = a + h = b - h).
        let w_low = 1.0 / (h.exp() + 1.0);
        let w_high = 1.0 - w_low;
        for (j, &m) in self.mass.iter().enumerate() {
            let abs = self.offset + j as i64;
            let base = (abs.div_euclid(2) - first) as usize;
            if abs.rem_euclid(2) == 0 || self.bound == Bound::Optimistic {
                out[base] += m;
            } else {
                out[base] += w_low * m;
                out[base + 1] += w_high * m;
            }
        }
        while out.len() > 1 && out[out.len() - 1] == 0.0 {
            out.pop();
        }
        self.offset = first;
        self.step = 2.0 * h;
        self.mass = out;
    }

    /// Loss at grid index `j` of `mass`.
    fn loss(&self, j: usize) -> f64 {
        (self.offset + j as i64) as f64 * self.step
    }

    /// The hockey-stick divergence of the discrete PLD at `eps` (slack applied).
    pub(crate) fn delta(&self, eps: f64) -> f64 {
        // Walk down from the top with S_j = sum_{i>j} m_i (1 - e^{-(l_i-l_j)}) and
        // B_j = sum_{i>j} m_i e^{-(l_i - l_j)}: both recurrences add positive terms only.
        let shrink = (-self.step).exp();
        let grow = -(-self.step).exp_m1();
        let n = self.mass.len();
        let mut s = 0.0;
        let mut b = 0.0;
        let mut j = n - 1;
        let raw = loop {
            let lj = self.loss(j);
            if lj <= eps {
                // eps in [l_j, l_{j+1}): delta = S_j - expm1(eps - l_j) B_j.
                break s - (eps - lj).exp_m1() * b;
            }
            let carry = b + self.mass[j];
            s += grow * carry;
            b = shrink * carry;
            if j == 0 {
                // eps below the support: all finite mass counts, with B measured from l_0.
                let m: f64 = self.mass.iter().sum();
                let w = b / shrink; // sum_i m_i e^{-(l_i - l_0)}
                break m - (eps - self.loss(0)).exp() * w;
            }
            j -= 1;
        };
        let d = raw.max(0.0) + self.inf_mass;
        match self.bound {
            Bound::Pessimistic => (d + self.slack).min(1.0),
            Bound::Optimistic => (d - self.slack).max(0.0),
        }
    }

    /// The smallest `eps >= 0` with `delta(eps) <= target` (slack applied); `+inf` if even the
    /// mass at `+inf` exceeds the target.
    pub(crate) fn epsilon(&self, target: f64) -> f64 {
        let budget = match self.bound {
            Bound::Pessimistic => target - self.slack - self.inf_mass,
            Bound::Optimistic => target + self.slack - self.inf_mass,
        };
        if budget <= 0.0 {
            return f64::INFINITY;
        }
        let shrink = (-self.step).exp();
        let grow = -(-self.step).exp_m1();
        let n = self.mass.len();
        let (mut s, mut b) = (0.0, 0.0);
        let mut j = n - 1;
        loop {
            // Here s = S_j (finite part of delta at l_j), b = B_j.
            if s > budget {
                // Solve S_j - expm1(eps - l_j) B_j = budget on [l_j, l_{j+1}].
                let eps = self.loss(j) + ((s - budget) / b).ln_1p();
                return eps.max(0.0);
            }
            if self.loss(j) <= 0.0 {
                return 0.0;
            }
            let carry = b + self.mass[j];
            s += grow * carry;
            b = shrink * carry;
            if j == 0 {
                // Below the support: delta(eps) = M - e^{eps - l_0} W with W = b / shrink.
                let m: f64 = self.mass.iter().sum();
                let w = b / shrink;
                if m <= budget {
                    return 0.0;
                }
                return (self.loss(0) + ((m - budget) / w).ln()).max(0.0);
            }
            j -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brute_delta(p: &DiscretePld, eps: f64) -> f64 {
        p.inf_mass
            + p.mass
                .iter()
                .enumerate()
                .map(|(j, &m)| m * (1.0 - (eps - p.loss(j)).exp()).max(0.0))
                .sum::<f64>()
    }

    fn sample() -> DiscretePld {
        DiscretePld {
            offset: -7,
            step: 0.25,
            mass: vec![0.1, 0.0, 0.2, 0.3, 0.15, 0.1, 0.05, 0.04, 0.03, 0.02],
            inf_mass: 0.01,
            slack: 0.0,
            bound: Bound::Pessimistic,
        }
    }

    #[test]
    fn delta_matches_brute_force() {
        let p = sample();
        for &eps in &[0.0, 0.1, 0.25, 0.3, 0.55, 1.0, 3.0] {
            assert!((p.delta(eps) - brute_delta(&p, eps)).abs() < 1e-15, "{eps}");
        }
    }

    #[test]
    fn epsilon_inverts_delta() {
        let p = sample();
        for &d in &[0.011, 0.015, 0.02, 0.024] {
            let e = p.epsilon(d);
            assert!((p.delta(e) - d).abs() < 1e-13, "{d} {e}");
        }
        assert_eq!(p.epsilon(0.005), f64::INFINITY);
        assert_eq!(p.epsilon(0.9), 0.0);
    }

    #[test]
    fn pessimistic_coarsening_never_lowers_delta() {
        let p = sample();
        let mut c = p.clone();
        c.coarsen();
        assert!((c.mass.iter().sum::<f64>() - p.mass.iter().sum::<f64>()).abs() < 1e-15);
        for &eps in &[0.0, 0.2, 0.5, 1.0] {
            assert!(c.delta(eps) >= p.delta(eps) - 1e-15);
        }
        let mut o = p.clone();
        o.bound = Bound::Optimistic;
        let base = o.clone();
        o.coarsen();
        for &eps in &[0.0, 0.2, 0.5, 1.0] {
            assert!(o.delta(eps) <= base.delta(eps) + 1e-15);
        }
    }

    #[test]
    fn truncation_moves_mass_the_safe_way() {
        let mut p = sample();
        let before: Vec<f64> = [0.0, 0.5].iter().map(|&e| p.delta(e)).collect();
        p.truncate(0.2);
        assert!(p.delta(0.0) >= before[0] && p.delta(0.5) >= before[1]);
        let mut o = sample();
        o.bound = Bound::Optimistic;
        let before: Vec<f64> = [0.0, 0.5].iter().map(|&e| o.delta(e)).collect();
        o.truncate(0.2);
        assert!(o.delta(0.0) <= before[0] && o.delta(0.5) <= before[1]);
    }
}
