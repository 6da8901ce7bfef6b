//! Composition of discrete PLDs by FFT convolution (rustfft), with a floating-point error bound.
//!
//! The PLD of an adaptive composition is the convolution of the PLDs (Sommer et al. 2019,
//! Thm 1; Koskela et al. 2020, Sec. 5). Two real sequences are packed into one complex FFT
//! (`z = a + i b`, `A_k = (Z_k + conj Z_{N-k})/2`, `B_k = (Z_k - conj Z_{N-k})/(2i)`), so a
//! convolution costs one forward and one inverse complex FFT and one buffer of `N` complex
//! numbers; self-convolution squares the spectrum directly.
//!
//! Rounding error: every output entry carries FFT noise. Its level is *measured* on each
//! convolution: true masses are `>= 0`, so the most negative output is pure noise, and (capped
//! by Higham's worst case `||err||_inf <= 15 u log2(N) ||a||_1 ||b||_2`, Higham 2002, Thm 24.2)
//! it sets the threshold below which outputs are zeroed (otherwise the noise keeps every tail
//! alive and truncation stops working). The l1 error estimate added to the PLD's `slack` is
//! `sum |zeroed values| + 2 * noise * (number of kept entries)`. This is an *estimate* of the
//! rounding error, not a proof (dp_accounting and the PRV accountant ignore it altogether); it is
//! applied in the safe direction for both bounds and propagates through compositions as l1
//! errors do (`s_ab <= s_a + s_b`).

use std::cell::RefCell;
use std::sync::Arc;

use rustfft::num_complex::Complex;
use rustfft::{Fft, FftPlanner};

use super::discrete::DiscretePld;

thread_local! {
    /// FFT plans are cached per thread across accounting runs (rustfft's planner keeps them):
    /// planning a new length costs far more than running it.
    static PLANNER: RefCell<FftPlanner<f64>> = RefCell::new(FftPlanner::new());
}

/// Forward and inverse plans of length `n`.
fn plans(n: usize) -> (Arc<dyn Fft<f64>>, Arc<dyn Fft<f64>>) {
    PLANNER.with(|p| {
        let mut p = p.borrow_mut();
        (p.plan_fft_forward(n), p.plan_fft_inverse(n))
    })
}

/// Unit roundoff.
const U: f64 = f64::EPSILON / 2.0;

/// Scales the inverse-FFT output, zeroes entries at the noise level and estimates the l1 error.
///
/// The noise level is measured: true values are `>= 0`, so the most negative output is noise
/// (floored at `u * max|output|`, capped at the worst case `cap`).
fn clean(buf: &[Complex<f64>], scale: f64, cap: f64) -> (Vec<f64>, f64) {
    let max_out = buf
        .iter()
        .map(|z| z.re.abs() * scale)
        .fold(0.0_f64, f64::max);
    let noise = buf
        .iter()
        .map(|z| -z.re * scale)
        .fold(U * max_out, f64::max)
        .min(cap);
    let threshold = 2.0 * noise;
    let mut zeroed_sum = 0.0;
    let mut kept = 0usize;
    let out: Vec<f64> = buf
        .iter()
        .map(|z| {
            let v = z.re * scale;
            if v > threshold {
                kept += 1;
                v
            } else {
                zeroed_sum += v.abs();
                0.0
            }
        })
        .collect();
    (out, zeroed_sum + 2.0 * noise * kept as f64)
}

/// Convolution of PLDs by FFT, with an error estimate.
pub(crate) struct Convolver;

impl Convolver {
    /// A convolver.
    pub(crate) fn new() -> Self {
        Self
    }

    /// FFT length needed to compose PLDs of lengths `la` and `lb` (a power of two: few
    /// distinct lengths, so plans are reused, and the fastest rustfft kernels).
    pub(crate) fn len_for(la: usize, lb: usize) -> usize {
        (la + lb - 1).next_power_of_two()
    }

    /// Linear convolution of two non-negative sequences; returns it with an `l1` error bound.
    pub(crate) fn convolve(&mut self, a: &[f64], b: &[f64]) -> (Vec<f64>, f64) {
        let out_len = a.len() + b.len() - 1;
        if a.len().min(b.len()) <= 32 || out_len <= 64 {
            // Direct sum: exact up to rounding of positive terms (relative u * len).
            let mut out = vec![0.0; out_len];
            for (i, &x) in a.iter().enumerate() {
                if x == 0.0 {
                    continue;
                }
                for (o, &y) in out[i..].iter_mut().zip(b) {
                    *o += x * y;
                }
            }
            return (out, 0.0);
        }
        let same = std::ptr::eq(a, b);
        let n = Self::len_for(a.len(), b.len());
        let (fwd, inv) = plans(n);
        let mut buf = vec![Complex::new(0.0, 0.0); n];
        for (z, &x) in buf.iter_mut().zip(a) {
            z.re = x;
        }
        if !same {
            for (z, &y) in buf.iter_mut().zip(b) {
                z.im = y;
            }
        }
        fwd.process(&mut buf);
        if same {
            for z in buf.iter_mut() {
                *z = *z * *z;
            }
        } else {
            let quarter_i = Complex::new(0.0, -0.25);
            for k in 0..=n / 2 {
                let j = (n - k) % n;
                let zk = buf[k];
                let zj = buf[j].conj();
                // A_k B_k = (Z_k + conj Z_j)(Z_k - conj Z_j) / (4i)
                let c = (zk + zj) * (zk - zj) * quarter_i;
                buf[k] = c;
                buf[j] = c.conj();
            }
        }
        inv.process(&mut buf);
        let l1 = |v: &[f64]| v.iter().sum::<f64>();
        let l2 = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>().sqrt();
        let eta = 3.0 * 5.0 * U * (n as f64).log2() + U;
        // ||err||_inf <= ||err||_2 <= eta ||a||_1 ||b||_2 (and symmetrically).
        let per_entry = eta * (l1(a) * l2(b)).min(l2(a) * l1(b));
        let (out, err) = clean(&buf[..out_len], 1.0 / n as f64, per_entry);
        (out, err)
    }

    /// The `count`-fold self-convolution of `a` (length `<= n`), computed cyclically with
    /// period `n` (a power of two): one forward FFT, the spectrum raised to the power `count`
    /// by repeated squaring, one inverse FFT. Returns the cyclic result and an l1 error
    /// estimate. The caller bounds the mass that wraps around.
    pub(crate) fn power(&mut self, a: &[f64], count: u64, n: usize) -> (Vec<f64>, f64) {
        let (fwd, inv) = plans(n);
        let mut buf = vec![Complex::new(0.0, 0.0); n];
        for (j, &x) in a.iter().enumerate() {
            buf[j % n].re += x;
        }
        fwd.process(&mut buf);
        pow_in_place(&mut buf, count);
        inv.process(&mut buf);
        // Worst-case per-entry error of one forward and one inverse FFT, plus the relative
        // error count * u of the power (|z| <= 1).
        let cap = (2.0 * 5.0 * U * (n as f64).log2() + count as f64 * 4.0 * U).min(1.0);
        clean(&buf, 1.0 / n as f64, cap)
    }

    /// The composition of two PLDs on the same grid, truncated by `tail_mass`.
    pub(crate) fn compose(
        &mut self,
        a: &DiscretePld,
        b: &DiscretePld,
        tail_mass: f64,
    ) -> DiscretePld {
        debug_assert_eq!(a.step, b.step);
        let (mass, err) = if std::ptr::eq(a, b) {
            self.convolve(&a.mass, &a.mass)
        } else {
            self.convolve(&a.mass, &b.mass)
        };
        let mut out = DiscretePld {
            offset: a.offset + b.offset,
            step: a.step,
            mass,
            inf_mass: a.inf_mass + b.inf_mass - a.inf_mass * b.inf_mass,
            slack: a.slack + b.slack + err,
            bound: a.bound,
        };
        out.truncate(tail_mass);
        out
    }
}

/// Every entry raised to the power `k`: the very operations of [`complex_pow`] (so bit-identical
/// results), but run block by block across entries, so that the independent entries' products
/// overlap in the pipeline instead of waiting on one entry's chain of squarings.
fn pow_in_place(buf: &mut [Complex<f64>], k: u64) {
    const BLOCK: usize = 512;
    let mut base = [Complex::new(0.0, 0.0); BLOCK];
    for chunk in buf.chunks_mut(BLOCK) {
        let base = &mut base[..chunk.len()];
        base.copy_from_slice(chunk);
        chunk.fill(Complex::new(1.0, 0.0));
        let mut k = k;
        while k > 0 {
            if k & 1 == 1 {
                for (r, b) in chunk.iter_mut().zip(base.iter()) {
                    *r *= *b;
                }
            }
            k >>= 1;
            if k > 0 {
                for b in base.iter_mut() {
                    *b = *b * *b;
                }
            }
        }
    }
}

/// `z^k` by repeated squaring.
#[cfg_attr(not(test), allow(dead_code))]
fn complex_pow(z: Complex<f64>, k: u64) -> Complex<f64> {
    let mut result = Complex::new(1.0, 0.0);
    let mut base = z;
    let mut k = k;
    while k > 0 {
        if k & 1 == 1 {
            result *= base;
        }
        k >>= 1;
        if k > 0 {
            base = base * base;
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocked_power_is_bit_identical_to_complex_pow() {
        let mut buf: Vec<Complex<f64>> = (0..1300)
            .map(|j| {
                let t = j as f64 * 0.01;
                Complex::new(t.cos() * 0.999, t.sin() * 0.5)
            })
            .collect();
        for k in [0u64, 1, 2, 7, 10_000, 123_457] {
            let mut got = buf.clone();
            pow_in_place(&mut got, k);
            for (g, z) in got.iter().zip(&buf) {
                let want = complex_pow(*z, k);
                assert_eq!(g.re.to_bits(), want.re.to_bits(), "k {k}");
                assert_eq!(g.im.to_bits(), want.im.to_bits(), "k {k}");
            }
        }
        buf.truncate(3);
        pow_in_place(&mut buf, 3);
    }

    #[test]
    fn fft_matches_direct_convolution() {
        let a: Vec<f64> = (0..300).map(|i| ((i * 7919) % 101) as f64 / 1e4).collect();
        let b: Vec<f64> = (0..211)
            .map(|i| ((i * 104_729) % 89) as f64 / 1e4)
            .collect();
        let mut c = Convolver::new();
        let (fast, err) = c.convolve(&a, &b);
        let mut direct = vec![0.0; a.len() + b.len() - 1];
        for (i, x) in a.iter().enumerate() {
            for (j, y) in b.iter().enumerate() {
                direct[i + j] += x * y;
            }
        }
        let l1: f64 = fast.iter().zip(&direct).map(|(x, y)| (x - y).abs()).sum();
        // The error estimate is a measured noise level, not a proof: check it is not wildly low.
        assert!(l1 <= 2.0 * err && err < 1e-13, "{l1} vs {err}");
        let (sq, _) = c.convolve(&a, &a);
        let mut direct_sq = vec![0.0; 2 * a.len() - 1];
        for (i, x) in a.iter().enumerate() {
            for (j, y) in a.iter().enumerate() {
                direct_sq[i + j] += x * y;
            }
        }
        for (x, y) in sq.iter().zip(&direct_sq) {
            assert!((x - y).abs() < 1e-14);
        }
    }
}
