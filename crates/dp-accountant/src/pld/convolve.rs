//! Composition of discrete PLDs by FFT convolution (rustfft, and realfft for the real-to-complex
//! transforms of the self-composition), with a floating-point error bound.
//!
//! The PLD of an adaptive composition is the convolution of the PLDs (Sommer et al. 2019,
//! Thm 1; Koskela et al. 2020, Sec. 5). Two real sequences are packed into one complex FFT
//! (`z = a + i b`, `A_k = (Z_k + conj Z_{N-k})/2`, `B_k = (Z_k - conj Z_{N-k})/(2i)`), so a
//! convolution costs one forward and one inverse complex FFT and one buffer of `N` complex
//! numbers. A `count`-fold self-composition takes one real-to-complex FFT of the final length
//! (half the work of a complex one: `N/2 + 1` spectrum entries), raises the spectrum to the
//! power `count` and transforms back once.
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

use realfft::{ComplexToReal, RealFftPlanner, RealToComplex};
use rustfft::num_complex::Complex;
use rustfft::{Fft, FftPlanner};

use super::discrete::DiscretePld;

thread_local! {
    /// FFT plans are cached per thread across accounting runs (rustfft's planner keeps them):
    /// planning a new length costs far more than running it.
    static PLANNER: RefCell<FftPlanner<f64>> = RefCell::new(FftPlanner::new());
    /// The same for the real-to-complex plans of the self-composition.
    static REAL_PLANNER: RefCell<RealFftPlanner<f64>> = RefCell::new(RealFftPlanner::new());
    /// Spectrum and scratch buffer of [`Convolver::power`], kept between calls when at most
    /// [`MAX_RETAINED_SPECTRUM`] entries long.
    static SPECTRUM_BUF: RefCell<Vec<Complex<f64>>> = const { RefCell::new(Vec::new()) };
}

/// Largest spectrum buffer kept per thread between accountings (`2^18` complex numbers, 4 MiB);
/// longer ones, up to the memory cap, are freed after use.
const MAX_RETAINED_SPECTRUM: usize = 1 << 18;

/// Forward and inverse plans of length `n`.
fn plans(n: usize) -> (Arc<dyn Fft<f64>>, Arc<dyn Fft<f64>>) {
    PLANNER.with(|p| {
        let mut p = p.borrow_mut();
        (p.plan_fft_forward(n), p.plan_fft_inverse(n))
    })
}

/// Real-to-complex and complex-to-real plans of (even) length `n`.
fn real_plans(n: usize) -> (Arc<dyn RealToComplex<f64>>, Arc<dyn ComplexToReal<f64>>) {
    REAL_PLANNER.with(|p| {
        let mut p = p.borrow_mut();
        (p.plan_fft_forward(n), p.plan_fft_inverse(n))
    })
}

/// Unit roundoff.
const U: f64 = f64::EPSILON / 2.0;

/// Scales the inverse-FFT output in place, zeroes entries at the noise level and estimates the
/// l1 error.
///
/// The noise level is measured: true values are `>= 0`, so the most negative output is noise
/// (floored at `u * max|output|`, capped at the worst case `cap`).
fn clean(mut values: Vec<f64>, scale: f64, cap: f64) -> (Vec<f64>, f64) {
    let max_out = values
        .iter()
        .map(|v| v.abs() * scale)
        .fold(0.0_f64, f64::max);
    let noise = values
        .iter()
        .map(|v| -v * scale)
        .fold(U * max_out, f64::max)
        .min(cap);
    let threshold = 2.0 * noise;
    let mut zeroed_sum = 0.0;
    let mut kept = 0usize;
    for v in values.iter_mut() {
        let x = *v * scale;
        if x > threshold {
            kept += 1;
            *v = x;
        } else {
            zeroed_sum += x.abs();
            *v = 0.0;
        }
    }
    (values, zeroed_sum + 2.0 * noise * kept as f64)
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
        let real: Vec<f64> = buf[..out_len].iter().map(|z| z.re).collect();
        clean(real, 1.0 / n as f64, per_entry)
    }

    /// The `count`-fold self-convolution of `a` (length `<= n`), computed cyclically with
    /// period `n` (a power of two, at least 2): one real-to-complex FFT, the `n/2 + 1` spectrum
    /// entries raised to the power `count`, one complex-to-real FFT. Returns the cyclic result
    /// and an l1 error estimate. The caller bounds the mass that wraps around.
    pub(crate) fn power(&mut self, a: &[f64], count: u64, n: usize) -> (Vec<f64>, f64) {
        debug_assert!(n >= 2 && n.is_power_of_two());
        let (fwd, inv) = real_plans(n);
        let mut signal = vec![0.0; n];
        for (j, &x) in a.iter().enumerate() {
            signal[j % n] += x;
        }
        // The spectrum and one scratch buffer for both transforms live in a per-thread buffer
        // reused across calls (allocating and zeroing them per call cost ~10% of many-step
        // runs); their old contents are overwritten before being read.
        let spectrum_len = n / 2 + 1;
        let need = spectrum_len + fwd.get_scratch_len().max(inv.get_scratch_len());
        let mut buf = SPECTRUM_BUF.with(|b| b.take());
        if buf.len() < need {
            buf.resize(need, Complex::new(0.0, 0.0));
        }
        let (spectrum, scratch) = buf[..need].split_at_mut(spectrum_len);
        fwd.process_with_scratch(&mut signal, spectrum, scratch)
            .expect("buffer lengths come from the plan");
        pow_in_place(spectrum, count);
        // The spectrum of a real sequence is real at frequencies 0 and n/2, and so are its
        // powers; the inverse transform requires exact zeros there.
        spectrum[0].im = 0.0;
        spectrum[n / 2].im = 0.0;
        inv.process_with_scratch(spectrum, &mut signal, scratch)
            .expect("buffer lengths come from the plan");
        if buf.len() <= MAX_RETAINED_SPECTRUM {
            SPECTRUM_BUF.with(|b| b.replace(buf));
        }
        // Worst-case per-entry error of one forward and one inverse FFT (one more level for the
        // real-to-complex pre- and post-processing), plus the relative error count * u of the
        // power (|z| <= 1).
        let cap = (2.0 * 5.0 * U * ((n as f64).log2() + 1.0) + count as f64 * 4.0 * U).min(1.0);
        clean(signal, 1.0 / n as f64, cap)
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
/// results), but run block by block across entries with real and imaginary parts in separate
/// arrays, so that the independent entries' products overlap in the pipeline (and vectorise)
/// instead of waiting on one entry's chain of squarings.
///
/// Entries with `|z|^k < 2^-1000` (`|z|^2 < e^{-1386/k}`) are set to zero without computing the
/// power: the exact power is below `1e-301`, far under the rounding noise of the transforms that
/// [`clean`] measures. For many compositions of a smooth PLD this is most of the spectrum.
fn pow_in_place(buf: &mut [Complex<f64>], k: u64) {
    const BLOCK: usize = 256;
    let live_above = if k == 0 {
        -1.0
    } else {
        (-1386.0 / k as f64).exp()
    };
    let live: Vec<usize> = (0..buf.len())
        .filter(|&j| buf[j].norm_sqr() >= live_above)
        .collect();
    let mut dead_from = 0;
    for &j in &live {
        buf[dead_from..j].fill(Complex::new(0.0, 0.0));
        dead_from = j + 1;
    }
    buf[dead_from..].fill(Complex::new(0.0, 0.0));
    let (mut base_re, mut base_im) = ([0.0; BLOCK], [0.0; BLOCK]);
    let (mut res_re, mut res_im) = ([0.0; BLOCK], [0.0; BLOCK]);
    for idx in live.chunks(BLOCK) {
        let m = idx.len();
        let (br, bi) = (&mut base_re[..m], &mut base_im[..m]);
        let (rr, ri) = (&mut res_re[..m], &mut res_im[..m]);
        for (l, &j) in idx.iter().enumerate() {
            br[l] = buf[j].re;
            bi[l] = buf[j].im;
        }
        rr.fill(1.0);
        ri.fill(0.0);
        let mut k = k;
        while k > 0 {
            if k & 1 == 1 {
                // r *= b, as num_complex's Mul: (a c - b d, a d + b c)
                for (((r, i), &c), &d) in rr.iter_mut().zip(ri.iter_mut()).zip(&*br).zip(&*bi) {
                    let (a, b) = (*r, *i);
                    *r = a * c - b * d;
                    *i = a * d + b * c;
                }
            }
            k >>= 1;
            if k > 0 {
                for (c, d) in br.iter_mut().zip(bi.iter_mut()) {
                    let (x, y) = (*c, *d);
                    *c = x * x - y * y;
                    *d = x * y + y * x;
                }
            }
        }
        for (l, &j) in idx.iter().enumerate() {
            buf[j] = Complex::new(rr[l], ri[l]);
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
                if k > 0 && z.norm_sqr() < (-1386.0 / k as f64).exp() {
                    // skipped: set to zero, the exact power is below 2^-1000
                    assert!(g.norm() == 0.0 && want.norm() < 1e-300, "k {k}");
                    continue;
                }
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
