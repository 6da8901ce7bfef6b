//! Choosing the noise multiplier of a run from its budget, sampler and number of releases.

use dp_accountant::{AccountantConfig, Budget};

use crate::error::CoreError;
use crate::sampling::SamplingScheme;

/// The smallest noise multiplier `sigma` (to the accountant's `1e-9` relative tolerance, rounded
/// up) such that `planned_releases` releases of `scheme` over `population` records spend at most
/// `budget.epsilon()` at `budget.delta()`, according to the accountant with `config`
/// (any [`dp_accountant::AccountantKind`]: the multiplier is the smallest that accountant
/// certifies, so PLD gives the least noise).
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

#[cfg(test)]
mod tests {
    use dp_accountant::{AccountantKind, epsilon_for_event};

    use super::*;

    #[test]
    fn every_accountant_calibrates_a_run_that_it_certifies() {
        let budget = Budget::new(1.0, 1e-5).unwrap();
        let scheme = SamplingScheme::poisson(0.05).unwrap();
        let mut sigmas = Vec::new();
        for kind in AccountantKind::ALL {
            let config = AccountantConfig::default().with_accountant(kind);
            let sigma = calibrate_noise_multiplier(&budget, &scheme, 2000, 200, &config).unwrap();
            let run = scheme.run_event(sigma, 2000, 200).unwrap();
            let eps = epsilon_for_event(&run, 1e-5, &config).unwrap().epsilon;
            assert!(eps <= 1.0, "{kind}: {eps}");
            let less = scheme.run_event(sigma * (1.0 - 1e-3), 2000, 200).unwrap();
            let over = epsilon_for_event(&less, 1e-5, &config).unwrap().epsilon;
            assert!(over > 1.0, "{kind}: {over}");
            sigmas.push(sigma);
        }
        // PLD needs the least noise; every other accountant more than RDP here
        assert!(sigmas[1] < sigmas[0]);
        assert!(sigmas[2..].iter().all(|&s| s > sigmas[0]), "{sigmas:?}");
    }
}
