//! Fitting entry points: [`fit`] through the VIPS engine, and a batch-VB configuration helper.

use crate::engine::{self, Fit, Privacy, StepSize, Stop, SviConfig};

use super::{Blr, BlrError, BlrGlobal, BlrRecord};

/// Fits BLR through the VIPS engine ([`crate::engine::fit`]): Poisson sampling, both statistics
/// in one release per iteration, M-step and hyperprior update, SVI damping.
///
/// # Privacy
/// As [`crate::engine::fit`]: under add/remove-one neighbouring the result is
/// `(epsilon, delta)`-DP with the ledger's epsilon. Records are already clipped to the unit ball
/// by [`BlrRecord::new`]; the wall clips each block again to its bound.
///
/// # Errors
/// [`BlrError::Empty`] / [`BlrError::DimensionMismatch`] for bad records; [`BlrError::Engine`] from the
/// engine (bad configuration, budget).
pub fn fit(
    model: &Blr,
    records: Vec<BlrRecord>,
    svi: &SviConfig,
) -> Result<Fit<BlrGlobal>, BlrError> {
    model.check_records(&records)?;
    Ok(engine::fit(model, records, svi, |_, _| {})?)
}

/// Batch VB (Poisson rate `q = 1`, `rho = 1`) for a declared public population of `n` records
/// and `iterations` releases (`S = N = n`).
///
/// # Privacy
/// `n` is the public population size of [`crate::engine::SviConfigBuilder::population`]: pass
/// a public figure, not the count of the private records (for a private run the engine uses `n`
/// and never the count).
///
/// # Errors
/// [`BlrError::Engine`] for a bad privacy setting or zero iterations.
///
/// # Example
/// ```
/// use vips_models::blr::batch_config;
/// use vips_models::engine::Privacy;
/// let cfg = batch_config(455, 5, Privacy::Target { epsilon: 1.0, delta: 1e-5 }, Some(1))?;
/// assert_eq!(cfg.sampling_rate(455)?, 1.0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn batch_config(
    n: usize,
    iterations: u64,
    privacy: Privacy,
    noise_seed: Option<u64>,
) -> Result<SviConfig, BlrError> {
    Ok(SviConfig::builder()
        .expected_batch_size(n as f64)
        .population(Some(n))
        .step(StepSize::Constant { rho: 1.0 })
        .stop(Stop::Iterations { iterations })
        .privacy(privacy)
        .noise_seed(noise_seed)
        .build()?)
}
