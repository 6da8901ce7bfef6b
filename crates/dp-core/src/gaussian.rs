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

use rand::{Rng, RngExt};
use rand_distr::StandardNormal;
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
