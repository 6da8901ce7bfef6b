//! Self-composition by repeated squaring and composition of different mechanisms, under a hard
//! cap on the FFT length (the grid coarsens automatically when the cap would be exceeded).

use super::convolve::Convolver;
use super::discrete::{Bound, DiscretePld};
use super::discretise::discretise;
use super::loss::{Direction, SubsampledGaussian};

/// Builds the composed PLD of `(mechanism, count)` parts in one direction and bound.
pub(crate) struct Composer {
    conv: Convolver,
    /// Longest FFT allowed (the memory cap).
    max_fft_len: usize,
    /// Mass truncated per convolution (into `+inf` when pessimistic).
    tail_mass: f64,
    /// Current grid spacing (only ever doubles).
    step: f64,
    /// Window length above which a self-composition coarsens its grid (`<= max_fft_len`):
    /// below the hard cap when the spacing was chosen automatically, trading a little accuracy
    /// in wide, heavy-tailed cases for speed.
    soft_len: usize,
}

impl Composer {
    /// A composer starting at grid spacing `step`.
    pub(crate) fn new(step: f64, max_fft_len: usize, soft_len: usize, tail_mass: f64) -> Self {
        Self {
            conv: Convolver::new(),
            max_fft_len,
            tail_mass,
            step,
            soft_len: soft_len.min(max_fft_len),
        }
    }

    fn fits(&self, la: usize, lb: usize) -> bool {
        Convolver::len_for(la, lb) <= self.max_fft_len
    }

    /// Brings both PLDs to the same (coarsest) grid and coarsens both until their convolution
    /// fits under the cap.
    fn align(&mut self, a: &mut DiscretePld, b: &mut DiscretePld) {
        while a.step < b.step {
            a.coarsen();
        }
        while b.step < a.step {
            b.coarsen();
        }
        while !self.fits(a.mass.len(), b.mass.len()) {
            a.coarsen();
            b.coarsen();
        }
        self.step = self.step.max(a.step);
    }

    /// The PLD of `count` independent runs of `mechanism`.
    pub(crate) fn self_composed(
        &mut self,
        mechanism: &SubsampledGaussian,
        direction: Direction,
        bound: Bound,
        count: u64,
    ) -> DiscretePld {
        let (lo, hi) = mechanism.loss_range(direction);
        // The single-step grid must itself leave room for one convolution.
        while (hi - lo) / self.step + 3.0 > (self.max_fft_len / 2) as f64 {
            self.step *= 2.0;
        }
        let mut base = discretise(mechanism, direction, self.step, bound);
        base.truncate(self.tail_mass);
        if count == 1 {
            return base;
        }
        loop {
            let (k_lo, k_hi) = window(&base, count, self.tail_mass);
            let span = (k_hi - k_lo + 1) as f64;
            if span.max(base.mass.len() as f64) > self.soft_len as f64 {
                base.coarsen();
                self.step = self.step.max(base.step);
                continue;
            }
            let len = (k_hi - k_lo + 1) as usize;
            let n = len.max(base.mass.len()).next_power_of_two();
            let (cyclic, err) = self.conv.power(&base.mass, count, n);
            // Cyclic position m holds the losses k = count * offset + m (mod n); place each in
            // the window [k_lo, k_lo + n).
            let shift = (i128::from(count) * i128::from(base.offset) - i128::from(k_lo))
                .rem_euclid(n as i128) as usize;
            let mut mass = vec![0.0; len];
            let mut above = 0.0;
            for (m, &v) in cyclic.iter().enumerate() {
                let k = (m + shift) % n;
                if k < len {
                    mass[k] += v;
                } else {
                    above += v;
                }
            }
            let t = count as f64;
            let inf = -(t * (-base.inf_mass).ln_1p()).exp_m1();
            let mut out = DiscretePld {
                offset: k_lo,
                step: base.step,
                mass,
                inf_mass: inf,
                slack: base.slack * t + err,
                bound,
            };
            // Mass above the window, and the at most `tail_mass` that wrapped around the period
            // from outside the window (Chernoff bound), in the safe direction.
            match bound {
                Bound::Pessimistic => out.inf_mass += above + self.tail_mass,
                Bound::Optimistic => {
                    let last = out.mass.len() - 1;
                    out.mass[last] += above;
                    out.slack += self.tail_mass;
                }
            }
            out.truncate(self.tail_mass);
            return out;
        }
    }

    /// The composition of all `parts` (each a mechanism run `count` times).
    pub(crate) fn composed(
        &mut self,
        parts: &[(SubsampledGaussian, u64)],
        direction: Direction,
        bound: Bound,
    ) -> DiscretePld {
        let mut acc: Option<DiscretePld> = None;
        for (mechanism, count) in parts {
            let mut p = self.self_composed(mechanism, direction, bound, *count);
            acc = Some(match acc {
                None => p,
                Some(mut a) => {
                    self.align(&mut a, &mut p);
                    self.conv.compose(&a, &p, self.tail_mass)
                }
            });
        }
        acc.unwrap_or_else(|| DiscretePld::identity(self.step, bound))
    }
}

/// Grid-index window `[k_lo, k_hi]` outside which the `count`-fold composition of `p` has at
/// most `tail_mass / 2` on each side, by the Chernoff bound
/// `P(S >= x) <= e^{-t x} M(t)^count` (`t > 0`, and `t < 0` for the lower side) with
/// `M(t) = sum_j p_j e^{t l_j}`, minimised over `t = 2^k`.
fn window(p: &DiscretePld, count: u64, tail_mass: f64) -> (i64, i64) {
    let h = p.step;
    let pts: Vec<(f64, f64)> = p
        .mass
        .iter()
        .enumerate()
        .filter(|(_, m)| **m > 0.0)
        .map(|(j, m)| (m.ln(), (p.offset + j as i64) as f64 * h))
        .collect();
    let t_count = count as f64;
    let l_min = pts.first().map_or(0.0, |x| x.1);
    let l_max = pts.last().map_or(0.0, |x| x.1);
    let mut x_hi = t_count * l_max;
    let mut x_lo = t_count * l_min;
    let log_tail = (0.5 * tail_mass).ln();
    if log_tail.is_finite() && pts.len() > 1 {
        let ln_mgf = |t: f64| {
            let top = pts
                .iter()
                .map(|(lm, l)| lm + t * l)
                .fold(f64::NEG_INFINITY, f64::max);
            // exp of anything below -746 is exactly 0: skip it (the underflowing `exp` calls
            // take libm's slow path and dominated many-step runs)
            top + pts
                .iter()
                .map(|(lm, l)| lm + t * l - top)
                .map(|d| if d < -746.0 { 0.0 } else { d.exp() })
                .sum::<f64>()
                .ln()
        };
        // Each side's bound is quasi-convex in t (the derivative of its numerator is
        // count * t * K''(t) >= 0 for the cumulant generating function K), so along t = 2^k it
        // falls and then rises: a side stops being scanned after two consecutive values that do
        // not improve on the best it has seen (any t gives a valid bound; this only saves the
        // MGF evaluations past the optimum).
        let (mut best_up, mut best_down) = (f64::INFINITY, f64::NEG_INFINITY);
        let (mut up_misses, mut down_misses) = (0, 0);
        for k in -10..=22 {
            if up_misses >= 2 && down_misses >= 2 {
                break;
            }
            let t = (k as f64).exp2();
            if up_misses < 2 {
                let up = (t_count * ln_mgf(t) - log_tail) / t;
                if up.is_finite() {
                    if up < best_up {
                        best_up = up;
                        up_misses = 0;
                    } else {
                        up_misses += 1;
                    }
                }
            }
            if down_misses < 2 {
                let down = (log_tail - t_count * ln_mgf(-t)) / t;
                if down.is_finite() {
                    if down > best_down {
                        best_down = down;
                        down_misses = 0;
                    } else {
                        down_misses += 1;
                    }
                }
            }
        }
        x_hi = x_hi.min(best_up);
        x_lo = x_lo.max(best_down);
    }
    let k_lo = (x_lo / h).floor() as i64;
    let k_hi = ((x_hi / h).ceil() as i64).max(k_lo);
    (k_lo, k_hi)
}
