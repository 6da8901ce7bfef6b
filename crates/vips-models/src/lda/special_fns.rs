//! Special functions for the LDA hot loops.
//!
//! Every `f64` digamma is `expfam`'s: `ln_gamma` and the non-hot `digamma` calls go through its
//! guarded functions, and the `f64` hot paths call [`expfam::digamma_fast`] (a few ulps of
//! `expfam::digamma`, NaN outside the domain). What lives here is different in kind: `f32`,
//! branch-free kernels ([`exp32`], [`digamma32`]) that vectorise inside the `pulp` SIMD loops of the
//! E-step and topic matrix, accurate to about `1e-5` (below the `f32` rounding those loops work
//! at), and tested against `expfam`'s `f64` functions.

/// `digamma(x)` via `expfam`'s guarded function (NaN outside the domain instead of an error).
#[inline]
pub(crate) fn digamma(x: f64) -> f64 {
    expfam::digamma(x).unwrap_or(f64::NAN)
}

/// `ln Gamma(x)` for `x > 0` via `expfam`'s guarded function (NaN outside the domain).
#[inline]
pub(crate) fn ln_gamma(x: f64) -> f64 {
    expfam::ln_gamma(x).unwrap_or(f64::NAN)
}

/// `exp(x)` in `f32` by Cody-Waite range reduction and a degree-6 polynomial, branch-free so that
/// loops over slices vectorise. Relative error below 3e-7 on `[-87, 88]`; inputs below -87
/// return `exp(-87)` (about 1.6e-38, effectively zero next to any probability mass in LDA),
/// inputs above 88 return `exp(88)`; NaN propagates.
#[inline(always)]
pub(crate) fn exp32(x: f32) -> f32 {
    const LOG2E: f32 = std::f32::consts::LOG2_E;
    const LN2_HI: f32 = 0.693_145_75;
    const LN2_LO: f32 = 1.428_606_8e-6;
    let x = x.clamp(-87.0, 88.0);
    // Round to nearest with the 1.5 * 2^23 trick (no SSE4.1 `round` needed, so it vectorises).
    const MAGIC: f32 = 12_582_912.0;
    let shifted = x * LOG2E + MAGIC;
    let n = shifted - MAGIC;
    let r = (x - n * LN2_HI) - n * LN2_LO;
    // exp(r) on |r| <= ln2/2: Taylor coefficients to degree 6.
    let p = 1.0
        + r * (1.0
            + r * (0.5
                + r * (1.0 / 6.0 + r * (1.0 / 24.0 + r * (1.0 / 120.0 + r * (1.0 / 720.0))))));
    // 2^n from the integer bits of the shifted value (its low mantissa bits hold n + 2^22):
    // integer arithmetic only, unlike a saturating `n as i32`, so the loop stays vector code.
    // NaN input gives an arbitrary finite scale here, and `p` (NaN) propagates.
    let bits = shifted
        .to_bits()
        .wrapping_sub(MAGIC.to_bits())
        .wrapping_add(127)
        << 23;
    p * f32::from_bits(bits)
}

#[cfg(test)]
mod exp_tests {
    use super::exp32;

    #[test]
    fn exp32_is_accurate() {
        let mut x = -87.0f32;
        while x <= 88.0 {
            let a = exp32(x) as f64;
            let b = (x as f64).exp();
            assert!(((a - b) / b).abs() < 3e-7, "x = {x}: {a} vs {b}");
            x += 0.0137;
        }
        assert!(exp32(-1000.0) > 0.0 && exp32(-1000.0) < 1e-37);
        assert!(exp32(f32::NAN).is_nan());
    }
}

/// Natural log in `f32` for positive normal inputs, branch-free (vectorisable): exponent from
/// the bits, mantissa folded into `[sqrt(1/2), sqrt(2))`, then `2 atanh(s)` to `s^9`.
/// Relative error about 1e-7; only called on arguments `>= 6`.
#[inline(always)]
fn ln32(y: f32) -> f32 {
    let bits = y.to_bits();
    let mut e = ((bits >> 23) & 0xff) as i32 - 127;
    let mut m = f32::from_bits((bits & 0x007f_ffff) | 0x3f80_0000);
    let big = m > std::f32::consts::SQRT_2;
    m = if big { m * 0.5 } else { m };
    e += i32::from(big);
    let s = (m - 1.0) / (m + 1.0);
    let s2 = s * s;
    let atanh =
        s * (1.0 + s2 * (1.0 / 3.0 + s2 * (1.0 / 5.0 + s2 * (1.0 / 7.0 + s2 * (1.0 / 9.0)))));
    e as f32 * std::f32::consts::LN_2 + 2.0 * atanh
}

/// `digamma(x)` in `f32` for `0 < x <= 1e5`, branch-free (vectorisable): not a copy of
/// [`expfam::digamma_fast`] but an `f32` kernel for the SIMD loops (fewer series terms, a shift by 6,
/// an `f32` logarithm), tested against `expfam::digamma` below. Always
/// `psi(x) = psi(x + 6) - P'(x)/P(x)` with `P = prod_{i<6} (x + i)`, then the asymptotic series at
/// `x + 6`. Absolute error below 1e-5 on `(1e-6, 1e5]` (tested); the E-step's `gamma` values
/// lie in `[alpha, alpha + N_d]`, and documents longer than `1e5` tokens use the `f64` path.
#[inline(always)]
pub(crate) fn digamma32(x: f32) -> f32 {
    let (mut p, mut dp, mut xi) = (1.0f32, 0.0f32, x);
    for _ in 0..6 {
        dp = dp * xi + p;
        p *= xi;
        xi += 1.0;
    }
    let y = x + 6.0;
    let q = 1.0 / y;
    let q2 = q * q;
    let series = q2 * (1.0 / 12.0 - q2 * (1.0 / 120.0 - q2 * (1.0 / 252.0)));
    ln32(y) - 0.5 * q - series - dp / p
}

#[cfg(test)]
mod digamma32_tests {
    use super::{digamma, digamma32};

    #[test]
    fn digamma32_is_accurate() {
        let mut x = 1e-6f64;
        while x <= 1e5 {
            let a = f64::from(digamma32(x as f32));
            let b = digamma(f64::from(x as f32));
            // Relative to the scale of psi near the pole (~1/x), absolute elsewhere.
            let tol = 2e-5 * b.abs().max(1.0);
            assert!((a - b).abs() <= tol, "x = {x}: {a} vs {b}");
            x *= 1.09;
        }
    }
}
