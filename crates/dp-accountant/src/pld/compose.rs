//! Self-composition (one real FFT of the final length, the spectrum raised to the power `count`,
//! one inverse FFT) and composition of different mechanisms, under a hard cap on the FFT length
//! (the grid coarsens automatically when the cap would be exceeded).

use super::convolve::Convolver;
use super::discrete::{Bound, DiscretePld};
use super::discretise::discretise;
use super::loss::{Direction, Mechanism};

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
        mechanism: &Mechanism,
        direction: Direction,
        bound: Bound,
        count: u64,
    ) -> DiscretePld {
        // Each side of the single-step range leaves out at most a quarter of the mass that the
        // truncation right after removes anyway (kept in the safe direction by `discretise`).
        let cut = 0.25 * self.tail_mass;
        let (lo, hi) = mechanism.loss_range_within(direction, cut);
        // The single-step grid must itself leave room for one convolution.
        while (hi - lo) / self.step + 3.0 > (self.max_fft_len / 2) as f64 {
            self.step *= 2.0;
        }
        let mut base = discretise(mechanism, direction, self.step, bound, cut);
        base.truncate(self.tail_mass);
        if count == 1 {
            return base;
        }
        loop {
            let (k_lo, k_hi) = window(&base, count, self.tail_mass);
            // (in f64: for huge counts the window's ends saturate the i64 conversion)
            let span = k_hi as f64 - k_lo as f64 + 1.0;
            let excess = span.max(base.mass.len() as f64) / self.soft_len as f64;
            if excess > 1.0 {
                // The window is fixed in loss units or widens as the grid coarsens, so at least
                // ceil(log2(excess)) doublings are needed: do them at once, then check again.
                for _ in 0..(excess.log2().ceil().max(1.0) as u32) {
                    base.coarsen();
                }
                self.step = self.step.max(base.step);
                continue;
            }
            let len = (k_hi - k_lo + 1) as usize;
            let n = len.max(base.mass.len()).max(2).next_power_of_two();
            let (mut mass, err) = self.conv.power(&base.mass, count, n);
            // Cyclic position m holds the losses k = count * offset + m (mod n); place each in
            // the window [k_lo, k_lo + n): window index (m + shift) mod n, a rotation.
            let shift = (i128::from(count) * i128::from(base.offset) - i128::from(k_lo))
                .rem_euclid(n as i128) as usize;
            mass.rotate_right(shift);
            let above: f64 = mass[len..].iter().sum();
            mass.truncate(len);
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
        parts: &[(Mechanism, u64)],
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
///
/// The scan starts at the `t` that is optimal for a normal law of the same variance,
/// `t0 = sqrt(2 |ln(tail/2)| / (count var))`, and walks both ways along `t = 2^k` while the
/// bound improves (it is quasi-convex in `t`; any `t` gives a valid bound, the scan only
/// looks for a good one).
fn window(p: &DiscretePld, count: u64, tail_mass: f64) -> (i64, i64) {
    let h = p.step;
    let (first, last) = match (
        p.mass.iter().position(|m| *m > 0.0),
        p.mass.iter().rposition(|m| *m > 0.0),
    ) {
        (Some(a), Some(b)) => (a, b),
        _ => return (0, 0),
    };
    let masses = &p.mass[first..=last];
    let t_count = count as f64;
    let l_min = (p.offset + first as i64) as f64 * h;
    let l_max = (p.offset + last as i64) as f64 * h;
    let mut x_hi = t_count * l_max;
    let mut x_lo = t_count * l_min;
    let log_tail = (0.5 * tail_mass).ln();
    if log_tail.is_finite() && masses.len() > 1 {
        // ln M(t) = t l_max + ln sum_j m_j e^{-t (l_max - l_j)} for t > 0, and
        // ln M(-t) = -t l_min + ln sum_j m_j e^{-t (l_j - l_min)}: sums of terms <= m_j, no
        // overflow, computed without one `exp` per point (see `decaying_sum`).
        let ln_mgf_up = |t: f64| t * l_max + decaying_sum(masses.iter().rev(), t * h).ln();
        let ln_mgf_down = |t: f64| -t * l_min + decaying_sum(masses.iter(), t * h).ln();
        let up = |k: i32| {
            let t = f64::from(k).exp2();
            (t_count * ln_mgf_up(t) - log_tail) / t
        };
        let down = |k: i32| {
            let t = f64::from(k).exp2();
            (log_tail - t_count * ln_mgf_down(t)) / t
        };
        let (total, mean_idx) = masses
            .iter()
            .enumerate()
            .fold((0.0, 0.0), |(s, m), (j, &w)| (s + w, m + w * j as f64));
        let mean_idx = mean_idx / total;
        let var_idx = masses
            .iter()
            .enumerate()
            .map(|(j, &w)| w * (j as f64 - mean_idx).powi(2))
            .sum::<f64>()
            / total;
        let var = (var_idx * h * h).max(f64::MIN_POSITIVE);
        let t0 = (2.0 * -log_tail / (t_count * var)).sqrt();
        let k0 = if t0.is_finite() {
            (t0.log2().round() as i32).clamp(-40, 60)
        } else {
            0
        };
        x_hi = x_hi.min(scan_min(up, k0));
        x_lo = x_lo.max(-scan_min(|k| -down(k), k0));
    }
    let k_lo = (x_lo / h).floor() as i64;
    let k_hi = ((x_hi / h).ceil() as i64).max(k_lo);
    (k_lo, k_hi)
}

/// The smallest finite value of `f(k)` found by walking from `k0` down and up while `f`
/// improves (stopping two steps past the best; `f` is quasi-convex along the walk). `+inf` if
/// no finite value turns up.
fn scan_min(f: impl Fn(i32) -> f64, k0: i32) -> f64 {
    let finite = |v: f64| if v.is_finite() { v } else { f64::INFINITY };
    let mut best = finite(f(k0));
    for dir in [-1, 1] {
        let (mut k, mut misses) = (k0, 0);
        while misses < 2 && (-60..=80).contains(&(k + dir)) {
            k += dir;
            let v = finite(f(k));
            if v < best {
                best = v;
                misses = 0;
            } else {
                misses += 1;
            }
        }
    }
    best
}

/// `sum_i m_i e^{-a i}` over the masses in iteration order (`a >= 0`), rounded up.
///
/// The weights `e^{-a i}` come from running products (four interleaved chains of ratio
/// `e^{-4a}`, restarted from an exact `exp` every 256 terms), so the relative rounding error of
/// each weight stays below `300 u`; the sum is multiplied by `1 + 1e-12` to cover it (a larger
/// `M(t)` only widens the Chernoff window). Once the weights fall below `1e-300` the rest of the
/// sum (at most `weight * sum m <= weight`) is added as that bound instead of being summed.
fn decaying_sum<'a>(masses: impl Iterator<Item = &'a f64>, a: f64) -> f64 {
    const CHUNK: usize = 256;
    let r = (-a).exp();
    let r4 = r * r * r * r;
    let mut sum = [0.0_f64; 4];
    let mut buf = [0.0_f64; CHUNK];
    let mut masses = masses.peekable();
    let mut start = 0usize;
    let mut tail = 0.0;
    while masses.peek().is_some() {
        let w0 = (-a * start as f64).exp();
        if w0 < 1e-300 {
            tail = w0;
            break;
        }
        let mut len = 0;
        for (slot, &m) in buf.iter_mut().zip(masses.by_ref()) {
            *slot = m;
            len += 1;
        }
        let mut w = [w0, w0 * r, w0 * r * r, w0 * r * r * r];
        let mut quads = buf[..len].chunks_exact(4);
        for quad in quads.by_ref() {
            for l in 0..4 {
                sum[l] += quad[l] * w[l];
                w[l] *= r4;
            }
        }
        for (l, &m) in quads.remainder().iter().enumerate() {
            sum[l] += m * w[l];
        }
        start += len;
    }
    ((sum[0] + sum[1]) + (sum[2] + sum[3]) + tail) * (1.0 + 1e-12)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decaying_sum_bounds_the_direct_sum_tightly() {
        let masses: Vec<f64> = (0..3000)
            .map(|i| ((i * 7919) % 1013) as f64 * 1e-6 + if i % 97 == 0 { 0.0 } else { 1e-9 })
            .collect();
        for a in [0.0, 1e-7, 1e-3, 0.05, 1.0, 40.0, 800.0] {
            for reversed in [false, true] {
                let direct: f64 = if reversed {
                    masses
                        .iter()
                        .rev()
                        .enumerate()
                        .map(|(i, m)| m * (-a * i as f64).exp())
                        .sum()
                } else {
                    masses
                        .iter()
                        .enumerate()
                        .map(|(i, m)| m * (-a * i as f64).exp())
                        .sum()
                };
                let got = if reversed {
                    decaying_sum(masses.iter().rev(), a)
                } else {
                    decaying_sum(masses.iter(), a)
                };
                assert!(got >= direct, "a {a}: {got} < {direct}");
                assert!(
                    got <= direct * (1.0 + 1e-11) + 1e-300,
                    "a {a}: {got} vs {direct}"
                );
            }
        }
    }

    #[test]
    fn window_holds_all_but_the_tail_mass_of_the_exact_composition() {
        let p = DiscretePld {
            offset: -3,
            step: 0.1,
            mass: vec![0.05, 0.2, 0.3, 0.25, 0.1, 0.06, 0.03, 0.01],
            inf_mass: 0.0,
            slack: 0.0,
            bound: Bound::Pessimistic,
        };
        let count = 40u64;
        // exact count-fold convolution by direct sums
        let mut acc = vec![1.0];
        for _ in 0..count {
            let mut next = vec![0.0; acc.len() + p.mass.len() - 1];
            for (i, a) in acc.iter().enumerate() {
                for (j, b) in p.mass.iter().enumerate() {
                    next[i + j] += a * b;
                }
            }
            acc = next;
        }
        let first = p.offset * count as i64;
        for tail in [1e-3, 1e-8, 1e-15] {
            let (k_lo, k_hi) = window(&p, count, tail);
            let below: f64 = acc
                .iter()
                .enumerate()
                .filter(|(i, _)| first + (*i as i64) < k_lo)
                .map(|(_, m)| m)
                .sum();
            let above: f64 = acc
                .iter()
                .enumerate()
                .filter(|(i, _)| first + (*i as i64) > k_hi)
                .map(|(_, m)| m)
                .sum();
            assert!(
                below <= tail / 2.0 && above <= tail / 2.0,
                "{tail}: {below} {above}"
            );
            // and the window is not the trivial full support
            assert!(
                k_hi - k_lo < (acc.len() as i64) - 1,
                "{tail}: {k_lo} {k_hi}"
            );
        }
    }
}
