//! Special functions for the LDA hot loops.
//!
//! Every digamma is `expfam`'s: `ln_gamma` and the non-hot `digamma` calls go through its
//! guarded functions, the `f64` hot paths call [`expfam::digamma_fast`] (the same function, NaN
//! outside the domain) and the `f32` SIMD loops [`expfam::digamma_f32`]. What lives here is the
//! `f32`, branch-free [`exp32`] that vectorises inside the `pulp` SIMD loops of the E-step and
//! topic matrix, tested against `f64::exp`.

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
