//! Choosing the noise multiplier of a run from its budget, sampler and number of releases.

use dp_accountant::{AccountantConfig, Budget};

use crate::error::CoreError;
use crate::sampling::SamplingScheme;

/// The smallest noise multiplier `sigma` (to `1e-6` relative, rounded up) such that
/// `planned_releases` releases of `scheme` over `population` records spend at most
/// `budget.epsilon()` at `budget.delta()`, according to the accountant with `config`.
///
/// Delegates to `dp_accountant::calibrate::calibrate_noise_multiplier` with the accountant
/// sampling that matches `scheme` (Poisson; fixed size `m` of `N`; a single draw is fixed size
/// `1` of `N`; a shuffled epoch is one replace-one Gaussian per epoch of `N` releases, so
/// `planned_releases` must then be whole epochs). The search returns the upper end of its bracket (errs on the private side).
///
/// # Privacy
/// With the returned `sigma`, the planned number of releases fits the budget; the wall still
/// checks every release against the ledger.
///
/// # Errors
/// [`CoreError::InvalidParameter`] for `planned_releases == 0` or a shuffled run that is not
/// whole epochs; the scheme's population errors;
/// [`CoreError::Accountant`] if the accountant fails or no multiplier up to `1e7` fits.
///
/// # Example
/// ```
/// use dp_accountant::{AccountantConfig, Budget};
/// use dp_core::{SamplingScheme, calibrate_noise_multiplier};
/// let sigma = calibrate_noise_multiplier(
///     &Budget::new(1.0, 1e-5)?,
///     &SamplingScheme::poisson(0.01)?,
///     10_000,
///     100,
///     &AccountantConfig::default(),
/// )?;
/// assert!(sigma > 0.5 && sigma < 5.0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn calibrate_noise_multiplier(
    budget: &Budget,
    scheme: &SamplingScheme,
    population: usize,
    planned_releases: u64,
    config: &AccountantConfig,
) -> Result<f64, CoreError> {
    if planned_releases == 0 {
        return Err(CoreError::InvalidParameter {
            name: "planned releases",
            value: 0.0,
            reason: "must be >= 1",
        });
    }
    let steps = scheme.accounted_steps(population, planned_releases)?;
    let calibration = dp_accountant::calibrate::calibrate_noise_multiplier(
        scheme.accountant_sampling(population),
        steps,
        budget,
        config,
    )?;
    Ok(calibration.noise_multiplier)
}
