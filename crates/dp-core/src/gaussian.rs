//! The Gaussian mechanism: calibration (classic and analytic) and in-place noise.
//!
//! A query `f` with L2 sensitivity `D` (under a stated [`Neighbouring`] relation) is released as
//! `f(x) + N(0, s^2 I)`. Three ways to choose `s`:
//! - [`classic_gaussian_std`]: `s = D sqrt(2 ln(1.25/delta)) / eps`, proven only for `eps < 1`
//!   (Dwork & Roth 2014, Thm A.1); refused above;
//! - [`analytic_gaussian_std`]: the smallest `s` with
//!   `Phi(D/(2s) - eps s/D) - e^eps Phi(-D/(2s) - eps s/D) <= delta` (Balle & Wang 2018, Thm 8 and
//!   Alg. 1), evaluated in log space, valid for every `eps > 0`;
//! - a noise multiplier `sigma` chosen by the accountant for a whole run: `s = sigma D`.

use rand::rngs::ChaCha20Rng;
use rand::{Rng, RngExt, SeedableRng};
use rand_distr::StandardNormal;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use dp_accountant::{Neighbouring, PrivacyEvent};

use crate::error::{CoreError, check_delta, check_positive};

/// Relative safety margin on delta used by [`analytic_gaussian_std`]: the search targets
/// `delta (1 - 1e-10)`, which covers the evaluation error of [`analytic_gaussian_delta`]
/// (below `1e-12` relative on the reference grid) so the returned std provably does not exceed the
/// target delta, while staying within `1e-9` relative of it.
const DELTA_SAFETY_MARGIN: f64 = 1e-10;

/// Noise std of the classic Gaussian mechanism: `s = D sqrt(2 ln(1.25/delta)) / eps`.
///
/// # Privacy
/// `(eps, delta)`-DP for a query of L2 sensitivity `sensitivity` **only for `0 < eps < 1`**
/// (Dwork & Roth 2014, Thm A.1). Larger `eps` is refused rather than silently under-noised;
/// prefer [`analytic_gaussian_std`], which is smaller and valid for every `eps`.
///
/// # Errors
/// [`CoreError::ClassicGaussianOutOfRange`] for `eps >= 1`; [`CoreError::InvalidParameter`] for
/// `eps <= 0` or non-finite, `delta` outside `(0, 1)`, or a non-positive sensitivity.
///
/// # Example
/// ```
/// let s = dp_core::classic_gaussian_std(0.5, 1e-5, 1.0)?;
/// assert!((s - (2.0 * (1.25f64 / 1e-5).ln()).sqrt() / 0.5).abs() < 1e-12);
/// assert!(dp_core::classic_gaussian_std(1.0, 1e-5, 1.0).is_err());
/// # Ok::<(), dp_core::CoreError>(())
/// ```
pub fn classic_gaussian_std(epsilon: f64, delta: f64, sensitivity: f64) -> Result<f64, CoreError> {
    check_positive("epsilon", epsilon)?;
    check_delta("delta", delta)?;
    check_positive("sensitivity", sensitivity)?;
    if epsilon >= 1.0 {
        return Err(CoreError::ClassicGaussianOutOfRange { epsilon });
    }
    Ok(sensitivity * (2.0 * (1.25 / delta).ln()).sqrt() / epsilon)
}

/// The exact `delta` of the Gaussian mechanism with noise std `std` at privacy level `epsilon`:
/// `delta = Phi(D/(2s) - eps s/D) - e^eps Phi(-D/(2s) - eps s/D)` (Balle & Wang 2018, Thm 8).
///
/// Evaluated in log space (`ln Phi` from `erfc` and its asymptotic series), so it neither
/// underflows nor loses the difference for tiny `delta` or large `eps`.
///
/// # Errors
/// [`CoreError::InvalidParameter`] unless `epsilon`, `std` and `sensitivity` are finite and `> 0`.
///
/// # Example
/// ```
/// let d = dp_core::analytic_gaussian_delta(1.0, 4.0, 1.0)?;
/// assert!(d > 0.0 && d < 1e-4);
/// # Ok::<(), dp_core::CoreError>(())
/// ```
pub fn analytic_gaussian_delta(epsilon: f64, std: f64, sensitivity: f64) -> Result<f64, CoreError> {
    check_positive("epsilon", epsilon)?;
    check_positive("std", std)?;
    check_positive("sensitivity", sensitivity)?;
    Ok(delta_unchecked(epsilon, std / sensitivity))
}

/// `delta(eps)` for noise multiplier `m = s / D` (no checks): the accountant's exact profile.
fn delta_unchecked(epsilon: f64, m: f64) -> f64 {
    dp_accountant::pld::gaussian_delta(m, epsilon)
}

/// The smallest noise std for which the Gaussian mechanism is `(eps, delta)`-DP
/// (the analytic Gaussian mechanism of Balle & Wang 2018, Alg. 1), for every `eps > 0`.
///
/// Bisection on `ln s` until the bracket is narrower than `1e-15` relative; the upper end of the
/// bracket is returned, with the target delta tightened by `1e-10` relative to absorb evaluation
/// error. The result's `delta` lies in `[delta (1 - 1e-9), delta]`.
///
/// # Privacy
/// `(eps, delta)`-DP for a query of L2 sensitivity `sensitivity` under whichever neighbouring
/// relation the sensitivity was computed for.
///
/// # Errors
/// [`CoreError::InvalidParameter`] for `eps <= 0` or non-finite, `delta` outside `(0, 1)`, or a
/// non-positive sensitivity.
///
/// # Example
/// ```
/// let s = dp_core::analytic_gaussian_std(1.0, 1e-5, 1.0)?;
/// let d = dp_core::analytic_gaussian_delta(1.0, s, 1.0)?;
/// assert!(d <= 1e-5 && d > 1e-5 * (1.0 - 1e-9));
/// // tighter than the classic formula wherever that one is valid
/// assert!(s < dp_core::classic_gaussian_std(0.999, 1e-5, 1.0)?);
/// # Ok::<(), dp_core::CoreError>(())
/// ```
pub fn analytic_gaussian_std(epsilon: f64, delta: f64, sensitivity: f64) -> Result<f64, CoreError> {
    check_positive("epsilon", epsilon)?;
    check_delta("delta", delta)?;
    check_positive("sensitivity", sensitivity)?;
    let target = delta * (1.0 - DELTA_SAFETY_MARGIN);
    // Bracket the noise multiplier m = s / D: delta(m) is strictly decreasing in m.
    let mut hi = 1.0;
    while delta_unchecked(epsilon, hi) > target {
        hi *= 2.0;
        if !hi.is_finite() {
            return Err(CoreError::InvalidParameter {
                name: "delta",
                value: delta,
                reason: "no finite noise reaches this delta",
            });
        }
    }
    let mut lo = hi / 2.0;
    while delta_unchecked(epsilon, lo) <= target {
        hi = lo;
        lo /= 2.0;
        if lo < f64::MIN_POSITIVE {
            return Ok(hi * sensitivity);
        }
    }
    for _ in 0..200 {
        if hi - lo <= 1e-15 * hi {
            break;
        }
        let mid = (lo * hi).sqrt();
        let mid = if mid > lo && mid < hi {
            mid
        } else {
            0.5 * (lo + hi)
        };
        if mid <= lo || mid >= hi {
            break;
        }
        if delta_unchecked(epsilon, mid) > target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(hi * sensitivity)
}

/// Fills `out` with iid standard normal draws.
pub(crate) fn fill_standard_normal<R: Rng + ?Sized>(out: &mut [f64], rng: &mut R) {
    for v in out {
        *v = rng.sample(StandardNormal);
    }
}

/// Entries per noise stream of a large release ([`NoiseStreams`]). Part of the layout of the
/// draws: changing it changes every seeded release above [`SERIAL_NOISE_ENTRIES`]. It is not the
/// thread count, which never affects a draw.
pub(crate) const NOISE_SPAN: usize = 1 << 15;

/// Releases (all blocks together) of at most this many entries draw their noise in order from
/// one generator; larger ones from per-span streams ([`NoiseStreams`]), in parallel.
pub(crate) const SERIAL_NOISE_ENTRIES: usize = NOISE_SPAN;

/// Counter-based noise streams of one large release: ChaCha20 under a fresh 256-bit key drawn
/// from the caller's noise generator (the wall's CSPRNG stream). The release's entries are cut
/// into spans of [`NOISE_SPAN`], block by block in spec order (each block starts a new span),
/// numbered from 0; span `i` is drawn, in order, from ChaCha20 stream `i` under the key, with the
/// same standard normal sampler as a serial draw. So every span can be filled on its own thread
/// and the values do not depend on the number of threads.
///
/// # Privacy
/// Each entry is one standard normal draw from the sampler the accountant assumes, exactly as
/// from one serial stream; the streams differ by ChaCha20's 64-bit stream id under a key that
/// is itself CSPRNG output, so no two spans (nor two releases, each with its own key) share a
/// keystream. A seeded wall replays them from its seed, as before.
#[derive(Clone)]
pub(crate) struct NoiseStreams {
    key: [u8; 32],
}

impl std::fmt::Debug for NoiseStreams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("NoiseStreams { .. }")
    }
}

impl NoiseStreams {
    /// A fresh key: 32 bytes from `rng`.
    pub(crate) fn draw<R: Rng + ?Sized>(rng: &mut R) -> Self {
        let mut key = [0u8; 32];
        rng.fill_bytes(&mut key);
        Self { key }
    }

    /// The generator of span `index`.
    fn span(&self, index: u64) -> ChaCha20Rng {
        let mut rng = ChaCha20Rng::from_seed(self.key);
        rng.set_stream(index);
        rng
    }

    /// `out = std z`, `z` the standard normal draws of span `first_span + i` for its `i`-th
    /// [`NOISE_SPAN`] entries (the same draws as [`NoiseSource::noised_normalised`] makes for
    /// those spans), in parallel on the current rayon pool. `std = 1` gives the draws themselves.
    pub(crate) fn fill_scaled(&self, out: &mut [f64], first_span: u64, std: f64) {
        out.par_chunks_mut(NOISE_SPAN)
            .enumerate()
            .for_each(|(i, span)| {
                let mut rng = self.span(first_span + i as u64);
                for o in span {
                    let z: f64 = rng.sample(StandardNormal);
                    *o = std * z;
                }
            });
    }
}

/// Number of [`NOISE_SPAN`] spans of a block of `len` entries.
pub(crate) fn spans_of(len: usize) -> u64 {
    len.div_ceil(NOISE_SPAN) as u64
}

/// Where the noise of one release comes from.
#[derive(Debug)]
pub(crate) enum NoiseSource<'a> {
    /// In order from one generator (releases of at most [`SERIAL_NOISE_ENTRIES`] entries).
    Serial(&'a mut ChaCha20Rng),
    /// Per-span streams (larger releases).
    Streams(NoiseStreams),
}

impl<'a> NoiseSource<'a> {
    /// The source of a release of `entries` entries in all: `rng` itself for a small one, a key
    /// drawn from it for a large one.
    pub(crate) fn for_release(rng: &'a mut ChaCha20Rng, entries: usize) -> Self {
        if entries <= SERIAL_NOISE_ENTRIES {
            Self::Serial(rng)
        } else {
            Self::Streams(NoiseStreams::draw(rng))
        }
    }

    /// `dst = (src + std z) / expected` entry by entry, `z` the block's standard normal draws (none
    /// drawn when `std` is `0`: `z = 0`), `src` the block's sum (`None`: read from `dst`, in
    /// place). The block's spans are numbered from `first_span` ([`NoiseStreams`]); with
    /// streams, and without noise, the spans are computed in parallel.
    pub(crate) fn noised_normalised(
        &mut self,
        dst: &mut [f64],
        src: Option<&[f64]>,
        first_span: u64,
        std: f64,
        expected: f64,
    ) {
        let one = |d: &mut [f64], s: Option<&[f64]>, rng: Option<&mut ChaCha20Rng>| match rng {
            Some(rng) => {
                for (k, o) in d.iter_mut().enumerate() {
                    let z: f64 = rng.sample(StandardNormal);
                    let v = s.map_or(*o, |s| s[k]);
                    *o = (v + std * z) / expected;
                }
            }
            None => {
                for (k, o) in d.iter_mut().enumerate() {
                    let v = s.map_or(*o, |s| s[k]);
                    *o = (v + std * 0.0) / expected;
                }
            }
        };
        match self {
            Self::Serial(rng) if std > 0.0 => one(dst, src, Some(rng)),
            Self::Streams(streams) if std > 0.0 && dst.len() > NOISE_SPAN => {
                let task = |(i, (d, s)): (usize, (&mut [f64], Option<&[f64]>))| {
                    one(d, s, Some(&mut streams.span(first_span + i as u64)));
                };
                match src {
                    Some(src) => dst
                        .par_chunks_mut(NOISE_SPAN)
                        .zip(src.par_chunks(NOISE_SPAN))
                        .enumerate()
                        .for_each(|(i, (d, s))| task((i, (d, Some(s))))),
                    None => dst
                        .par_chunks_mut(NOISE_SPAN)
                        .enumerate()
                        .for_each(|(i, d)| task((i, (d, None)))),
                }
            }
            Self::Streams(streams) if std > 0.0 => {
                one(dst, src, Some(&mut streams.span(first_span)));
            }
            _ if dst.len() > NOISE_SPAN => match src {
                Some(src) => dst
                    .par_chunks_mut(NOISE_SPAN)
                    .zip(src.par_chunks(NOISE_SPAN))
                    .for_each(|(d, s)| one(d, Some(s), None)),
                None => dst
                    .par_chunks_mut(NOISE_SPAN)
                    .for_each(|d| one(d, None, None)),
            },
            _ => one(dst, src, None),
        }
    }
}

/// A calibrated Gaussian mechanism: noise std `std` for a query of L2 sensitivity `sensitivity`.
///
/// Public for calibration only (the std, the multiplier, the accountant event): adding the
/// noise is crate-private, because private records are released only through the privacy wall
/// ([`crate::PrivacyWall::release`], [`crate::wall::partition::select_partitions`]).
///
/// # Example
/// ```
/// use dp_accountant::Neighbouring;
/// use dp_core::GaussianMechanism;
/// let mech = GaussianMechanism::analytic(1.0, 1e-5, 0.5)?;
/// assert!(mech.noise_multiplier() > 3.0);
/// let _event = mech.event(Neighbouring::AddRemoveOne)?;
/// # Ok::<(), dp_core::CoreError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct GaussianMechanism {
    std: f64,
    sensitivity: f64,
}

impl GaussianMechanism {
    /// A mechanism with an explicit noise std.
    ///
    /// # Errors
    /// [`CoreError::InvalidParameter`] unless both are finite and `> 0`.
    pub fn from_std(std: f64, sensitivity: f64) -> Result<Self, CoreError> {
        Ok(Self {
            std: check_positive("std", std)?,
            sensitivity: check_positive("sensitivity", sensitivity)?,
        })
    }

    /// `std = noise_multiplier * sensitivity` (a multiplier chosen by the accountant).
    ///
    /// # Errors
    /// [`CoreError::InvalidParameter`] unless both are finite and `> 0`.
    pub fn from_noise_multiplier(
        noise_multiplier: f64,
        sensitivity: f64,
    ) -> Result<Self, CoreError> {
        check_positive("noise_multiplier", noise_multiplier)?;
        Self::from_std(noise_multiplier * sensitivity, sensitivity)
    }

    /// Classic calibration ([`classic_gaussian_std`]; refuses `eps >= 1`).
    ///
    /// # Errors
    /// As [`classic_gaussian_std`].
    pub fn classic(epsilon: f64, delta: f64, sensitivity: f64) -> Result<Self, CoreError> {
        Self::from_std(
            classic_gaussian_std(epsilon, delta, sensitivity)?,
            sensitivity,
        )
    }

    /// Analytic calibration ([`analytic_gaussian_std`]).
    ///
    /// # Errors
    /// As [`analytic_gaussian_std`].
    pub fn analytic(epsilon: f64, delta: f64, sensitivity: f64) -> Result<Self, CoreError> {
        Self::from_std(
            analytic_gaussian_std(epsilon, delta, sensitivity)?,
            sensitivity,
        )
    }

    /// The noise standard deviation.
    pub fn std(&self) -> f64 {
        self.std
    }

    /// The L2 sensitivity the noise is calibrated to.
    pub fn sensitivity(&self) -> f64 {
        self.sensitivity
    }

    /// `std / sensitivity`.
    pub fn noise_multiplier(&self) -> f64 {
        self.std / self.sensitivity
    }

    /// The accountant event of one application on the full dataset, with the sensitivity stated
    /// under `neighbouring`.
    ///
    /// # Errors
    /// Never for a constructed mechanism; the accountant's validation error otherwise.
    pub fn event(&self, neighbouring: Neighbouring) -> Result<PrivacyEvent, CoreError> {
        Ok(PrivacyEvent::gaussian(
            self.noise_multiplier(),
            neighbouring,
        )?)
    }

    /// Adds iid `N(0, std^2)` noise to every entry of `values`, in place (crate-private: the
    /// wall's partition selection draws its noise through it).
    ///
    /// # Privacy
    /// `values` must be a query answer whose L2 sensitivity is at most [`Self::sensitivity`];
    /// the caller owns that claim (the wall enforces it by bounding contributions). Use a
    /// CSPRNG (e.g. `ChaCha20Rng` from OS entropy) unless reproducibility is wanted on purpose.
    ///
    /// # Errors
    /// [`CoreError::NonFinite`] if `values` holds NaN or an infinity (nothing is changed).
    pub(crate) fn add_noise<R: Rng + ?Sized>(
        &self,
        values: &mut [f64],
        rng: &mut R,
    ) -> Result<(), CoreError> {
        crate::error::check_finite("values to noise", values)?;
        for v in values.iter_mut() {
            let z: f64 = rng.sample(StandardNormal);
            *v += self.std * z;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classic_refuses_large_epsilon_with_reason() {
        let err = classic_gaussian_std(1.0, 1e-5, 1.0).unwrap_err();
        assert!(err.to_string().contains("only proven for"));
        assert!(matches!(
            classic_gaussian_std(3.0, 1e-5, 1.0),
            Err(CoreError::ClassicGaussianOutOfRange { .. })
        ));
        assert!(classic_gaussian_std(0.0, 1e-5, 1.0).is_err());
        assert!(classic_gaussian_std(f64::NAN, 1e-5, 1.0).is_err());
        assert!(classic_gaussian_std(0.5, 1.0, 1.0).is_err());
        assert!(classic_gaussian_std(0.5, 0.0, 1.0).is_err());
        assert!(classic_gaussian_std(0.5, 1e-5, -1.0).is_err());
    }

    #[test]
    fn analytic_rejects_bad_input() {
        assert!(analytic_gaussian_std(0.0, 1e-5, 1.0).is_err());
        assert!(analytic_gaussian_std(f64::INFINITY, 1e-5, 1.0).is_err());
        assert!(analytic_gaussian_std(1.0, f64::NAN, 1.0).is_err());
        assert!(analytic_gaussian_std(1.0, 1e-5, 0.0).is_err());
        assert!(analytic_gaussian_delta(1.0, 0.0, 1.0).is_err());
    }

    #[test]
    fn analytic_is_below_classic_where_classic_is_valid() {
        for &eps in &[0.05, 0.3, 0.9] {
            for &delta in &[1e-3, 1e-6, 1e-10] {
                let a = analytic_gaussian_std(eps, delta, 1.0).unwrap();
                let c = classic_gaussian_std(eps, delta, 1.0).unwrap();
                assert!(a < c, "eps {eps} delta {delta}: {a} vs {c}");
            }
        }
    }

    #[test]
    fn add_noise_refuses_non_finite_input() {
        use rand::SeedableRng;
        let mech = GaussianMechanism::from_std(1.0, 1.0).unwrap();
        let mut rng = rand::rngs::ChaCha20Rng::seed_from_u64(1);
        let mut v = [1.0, f64::NAN];
        assert!(mech.add_noise(&mut v, &mut rng).is_err());
        assert_eq!(v[0], 1.0);
    }
}
