//! Density, derivative and CDF of `PG(b, z)` by Fourier series on a window `[A, A + P)`
//! (used for `b >= 6`, where the alternating series cancels catastrophically: polyagamma's
//! CDF gives 2516.8 at `b = 100, z = 0`).
//!
//! With `omega_k = 2 pi k / P` and the characteristic function
//! `phi(w) = [cosh(z/2) / cosh(sqrt(z^2/4 - i w / 2))]^b`, a law with `P(X not in [A, A+P))`
//! negligible satisfies, for `x` in the window,
//! `f(x) = (1/P) [1 + 2 sum_{k>=1} Re(phi(omega_k) e^{-i omega_k x})]` up to the aliasing
//! `sum_{j != 0} f(x + jP)`, and
//! `F(x) = (x - A)/P + (2/P) sum_{k>=1} Re[(e^{-i omega_k A} - e^{-i omega_k x}) phi(omega_k) / (i omega_k)]`
//! up to `P(X not in [A, A+P))`.
//!
//! **Window.** Chernoff bounds `P(X >= y) <= M(s) e^{-s y}` and `P(X <= y) <= L(s) e^{s y}`
//! (`M`, `L` the moment and Laplace transforms) with `s ~ 10 / sd`, and the same bounds times
//! `s e` for the density beyond the mode (`PG` is self-decomposable, hence unimodal), put the
//! window where all neglected quantities are below `e^{-45}`. Its width is ~20 sd whatever
//! `b`, so the number of terms stays O(1) in `b`.
//!
//! **Stable exponent.** `ln phi(w) = -b D(w)` with `D = ln cosh(v) - ln cosh(z/2)`,
//! `v = sqrt(z^2/4 - i w/2)`, is evaluated as `D = d + ln1p((1 - tanh(z/2))/2 expm1(-2d))`,
//! `d = v - z/2 = (-i w / 2) / (v + z/2)`, so nothing of size `b z` is ever subtracted.
//! `|phi(w)| = prod_k (1 + w^2/d_k^2)^{-b/2}` decreases in `w`, so the sum stops at the first
//! `k` with `|phi(omega_k)| < 1e-19`; it is capped at 2 million terms.

use crate::complex::Complex;
use crate::special_fn::ln_cosh;

/// Cap on Fourier terms.
const MAX_TERMS: u64 = 2_000_000;

/// `ln E[e^{s X}]` for `s < d_1 = pi^2/2 + z^2/2` (negative `s`: the Laplace transform).
fn ln_mgf(b: f64, z: f64, s: f64) -> f64 {
    let quarter_z2 = 0.25 * z * z;
    let inner = if 0.5 * s <= quarter_z2 {
        ln_cosh((quarter_z2 - 0.5 * s).sqrt())
    } else {
        (0.5 * s - quarter_z2).sqrt().cos().ln()
    };
    b * (ln_cosh(0.5 * z) - inner)
}

/// Fourier evaluator for one `(b, z)`.
#[derive(Debug, Clone)]
pub(crate) struct Fourier {
    b: f64,
    half_z: f64,
    quarter_z2: f64,
    /// `(1 - tanh(z/2)) / 2`.
    half_one_minus_t: f64,
    /// Window start `A >= 0`.
    start: f64,
    /// Window width `P`.
    width: f64,
    /// Exact mean `b tanh(z/2) / (2z)`, used to remove the linear phase for `z >= 1`.
    mean: f64,
}

impl Fourier {
    /// Window from the mean `mean`, standard deviation `sd` and Chernoff bounds.
    pub(crate) fn new(b: f64, z: f64, mean: f64, sd: f64) -> Self {
        let d1 = 0.5 * core::f64::consts::PI * core::f64::consts::PI + 0.5 * z * z;
        let slack = 46.0;
        let s_hi = (0.5 * d1).min(10.0 / sd);
        let hi = (ln_mgf(b, z, s_hi) + slack + (s_hi * core::f64::consts::E).ln().max(0.0)) / s_hi;
        let s_lo = 10.0 / sd;
        let lo =
            -(ln_mgf(b, z, -s_lo) + slack + (s_lo * core::f64::consts::E).ln().max(0.0)) / s_lo;
        let start = lo.max(0.0).min(mean);
        let hi = hi.max(mean);
        let e = (-z).exp();
        Fourier {
            b,
            half_z: 0.5 * z,
            quarter_z2: 0.25 * z * z,
            half_one_minus_t: e / (1.0 + e),
            start,
            width: hi - start,
            mean,
        }
    }

    /// Window `[A, A + P)`.
    pub(crate) fn window(&self) -> (f64, f64) {
        (self.start, self.start + self.width)
    }

    /// `ln phi(omega) - i omega A` (phase measured from the window start).
    fn ln_phi_shifted(&self, omega: f64) -> Complex {
        let v = Complex::new(self.quarter_z2, -0.5 * omega).sqrt();
        // d = (-i w/2) / (v + z/2)
        let den = Complex::new(v.re + self.half_z, v.im);
        let n2 = den.re * den.re + den.im * den.im;
        let num = Complex::new(0.0, -0.5 * omega);
        let d = Complex::new(
            (num.re * den.re + num.im * den.im) / n2,
            (num.im * den.re - num.re * den.im) / n2,
        );
        // expm1(-2d) without cancellation
        let a = -2.0 * d.re;
        let bb = -2.0 * d.im;
        let (sb, cb) = bb.sin_cos();
        let half_b_sin = (0.5 * bb).sin();
        let em1 = Complex::new(
            a.exp_m1() * cb - 2.0 * half_b_sin * half_b_sin,
            a.exp() * sb,
        );
        let w = em1.scale(self.half_one_minus_t);
        let l1p = Complex::new(
            0.5 * (2.0 * w.re + w.re * w.re + w.im * w.im).ln_1p(),
            w.im.atan2(1.0 + w.re),
        );
        if self.half_z >= 0.5 {
            // Remove the linear term D'(0) w = -i w tanh(z/2) / (2z) analytically, so the phase
            // w * mean (up to ~w mean ~ 10 mean / sd) is never formed and then cancelled:
            // D - D_lin = (i w/2) d / (z (v + z/2)) - i w (1 - t) / (2z) + ln1p(w').
            let z = 2.0 * self.half_z;
            let q = Complex::new(0.0, 0.5 * omega).mul(d);
            let den2 = Complex::new(z * den.re, z * den.im);
            let n2b = den2.re * den2.re + den2.im * den2.im;
            let first = Complex::new(
                (q.re * den2.re + q.im * den2.im) / n2b,
                (q.im * den2.re - q.re * den2.im) / n2b,
            );
            let middle_im = -omega * self.half_one_minus_t / z;
            let dd = Complex::new(first.re + l1p.re, first.im + middle_im + l1p.im);
            return Complex::new(
                -self.b * dd.re,
                -self.b * dd.im + omega * (self.mean - self.start),
            );
        }
        let dd = Complex::new(d.re + l1p.re, d.im + l1p.im);
        Complex::new(-self.b * dd.re, -self.b * dd.im - omega * self.start)
    }

    /// Density and its derivative at `x` (0 outside the window, where both are below e^{-45}).
    pub(crate) fn density_and_slope(&self, x: f64) -> (f64, f64) {
        let (a, e) = self.window();
        if x < a || x >= e {
            return (0.0, 0.0);
        }
        let p = self.width;
        let step = 2.0 * core::f64::consts::PI / p;
        let y = x - self.start;
        let mut sum = 0.5;
        let mut dsum = 0.0;
        for k in 1..MAX_TERMS {
            let om = step * k as f64;
            let lp = self.ln_phi_shifted(om);
            if lp.re < -44.0 {
                break;
            }
            let t = Complex::new(lp.re, lp.im - om * y).exp();
            sum += t.re;
            // d/dx of Re(phi e^{-i w x}) = Re(-i w phi e^{-i w x}) = w Im(.)
            dsum += om * t.im;
        }
        (2.0 * sum / p, 2.0 * dsum / p)
    }

    pub(crate) fn density(&self, x: f64) -> f64 {
        self.density_and_slope(x).0.max(0.0)
    }

    pub(crate) fn cdf(&self, x: f64) -> f64 {
        let (a, e) = self.window();
        if x < a {
            return 0.0;
        }
        if x >= e {
            return 1.0;
        }
        let p = self.width;
        let step = 2.0 * core::f64::consts::PI / p;
        let y = x - self.start;
        let mut sum = 0.0;
        for k in 1..MAX_TERMS {
            let om = step * k as f64;
            let lp = self.ln_phi_shifted(om);
            if lp.re < -44.0 - om.max(1.0).ln() {
                break;
            }
            // (e^{-i w A} - e^{-i w x}) phi = phi_shifted (1 - e^{-i w (x - A)}); / (i w) -> Im / w
            let ph = Complex::new(lp.re, lp.im).exp();
            let rot = Complex::new(0.0, -om * y).exp();
            let t = ph.mul(Complex::new(1.0 - rot.re, -rot.im));
            sum += t.im / om;
        }
        (y / p + 2.0 * sum / p).clamp(0.0, 1.0)
    }
}

/// Most terms a [`FourierTable`] holds (the large-shape window, b >= 24, needs 30 to 110).
pub(crate) const TABLE_TERMS: usize = 128;
/// The rotation `e^{-i omega_k y}` is recomputed exactly every this many terms (in between it
/// is advanced by one complex multiplication, adding ~1 ulp of phase error per step).
const REANCHOR: usize = 8;

/// The `x`-independent part of [`Fourier::density_and_slope`], `phi(omega_k) e^{-i omega_k A}`
/// for every needed `k`, precomputed so that each density evaluation costs a few `sin_cos`
/// and ~5 multiplications per term instead of a complex `ln`, `sqrt`, `exp` and `atan2` per
/// term. Same series, same truncation, same window: the values agree with
/// [`Fourier::density_and_slope`] to a few ulp of the largest term.
#[derive(Debug, Clone)]
pub(crate) struct FourierTable {
    terms: [Complex; TABLE_TERMS],
    len: usize,
    step: f64,
    start: f64,
    end: f64,
    width: f64,
}

impl Fourier {
    /// The precomputed table, or `None` when the series needs more than [`TABLE_TERMS`] terms.
    pub(crate) fn table(&self) -> Option<FourierTable> {
        let p = self.width;
        let step = 2.0 * core::f64::consts::PI / p;
        let mut terms = [Complex::new(0.0, 0.0); TABLE_TERMS];
        for k in 1..=TABLE_TERMS + 1 {
            let lp = self.ln_phi_shifted(step * k as f64);
            if lp.re < -44.0 {
                let (start, end) = self.window();
                return Some(FourierTable {
                    terms,
                    len: k - 1,
                    step,
                    start,
                    end,
                    width: p,
                });
            }
            if k > TABLE_TERMS || lp.re.is_nan() || lp.im.is_nan() {
                return None;
            }
            terms[k - 1] = lp.exp();
        }
        None
    }
}

impl FourierTable {
    /// Density and its derivative at `x` (0 outside the window), as
    /// [`Fourier::density_and_slope`].
    pub(crate) fn density_and_slope(&self, x: f64) -> (f64, f64) {
        if x < self.start || x >= self.end {
            return (0.0, 0.0);
        }
        let y = x - self.start;
        let one = Complex::new(0.0, -self.step * y).exp();
        let mut sum = 0.5;
        let mut dsum = 0.0;
        let mut rot = one;
        for (i, phi) in self.terms[..self.len].iter().enumerate() {
            let k = i + 1;
            if k % REANCHOR == 0 {
                rot = Complex::new(0.0, -self.step * k as f64 * y).exp();
            }
            let t = phi.mul(rot);
            sum += t.re;
            dsum += self.step * k as f64 * t.im;
            rot = rot.mul(one);
        }
        (2.0 * sum / self.width, 2.0 * dsum / self.width)
    }

    /// Density at `x`, clamped at 0.
    pub(crate) fn density(&self, x: f64) -> f64 {
        self.density_and_slope(x).0.max(0.0)
    }
}

#[cfg(test)]
mod table_tests {
    use super::*;
    use crate::moments::{mean_unchecked, variance_unchecked};

    #[test]
    fn table_matches_direct_series() {
        for &(b, z) in &[
            (24.0, 0.0),
            (100.0, 2.0),
            (1000.0, 1000.0),
            (50.0, 177.5),
            (24.0, 5.0),
        ] {
            let (m, sd) = (mean_unchecked(b, z), variance_unchecked(b, z).sqrt());
            let f = Fourier::new(b, z, m, sd);
            let t = f.table().expect("large-shape windows fit the table");
            let mut peak: f64 = 0.0;
            for i in -80..=160 {
                peak = peak.max(f.density(m + sd * 0.05 * i as f64));
            }
            for i in -80..=160 {
                let x = m + sd * 0.05 * i as f64;
                let (d0, s0) = f.density_and_slope(x);
                let (d1, s1) = t.density_and_slope(x);
                assert!(
                    (d0 - d1).abs() <= 1e-14 * peak,
                    "b={b} z={z} x={x}: {d0} vs {d1}"
                );
                assert!(
                    (s0 - s1).abs() <= 1e-13 * peak / sd,
                    "b={b} z={z} x={x}: slope {s0} vs {s1}"
                );
            }
        }
    }
}
