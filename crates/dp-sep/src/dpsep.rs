//! DP-SEP (002 Algorithm 3): SEP whose posterior update is released through a
//! [`FactorRelease`] and **written back**: the noised `theta_new` becomes the new factor
//! `(theta_new - theta_0) / N` (clipped), so the noise reaches every later cavity and the final
//! posterior. (The authors' PBP code computed the noised parameters and discarded them.)
//!
//! One step, with cavity `theta_c` computed from the (already released) state:
//! `theta_fn(x) = proj[q_c p(x | .)] - theta_c` (the statistic, clipped to `C` by the wall);
//! `theta~_new = theta_0 + (N - gamma/N) theta_f + (gamma/N) (clip_C(theta_fn(x)) + z)`,
//! `z ~ N(0, (2 C sigma)^2 I)`, i.e. noise `N(0, sigma^2 (2 gamma C / N)^2 I)` on `theta_new`
//! (002 Eq. 4, Prop. 1); `theta_f <- clip_C((theta~_new - theta_0) / N)`.
//!
//! # Privacy
//! `theta~_new` is post-processing of the wall's release (a fixed affine map with public
//! coefficients of the released vector and of the previous, already private, state). The cavity,
//! the factor refresh, the clipping, the repair of an improper posterior and PBP's prior
//! refinement all depend on the data only through earlier releases. The guarantee is therefore the
//! wall's: `(epsilon, delta)`-DP under replace-one neighbours for the whole run, with the sampler
//! the accountant assumed.

use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

use crate::error::{SepError, check_positive};
use crate::model::SepModel;
use crate::sep::{
    SepState, StepCounts, check_fit, end_of_epoch, posterior_update, refresh_factor, usable_cavity,
};
use crate::wall::FactorRelease;

/// Step size, clipping and length of a DP-SEP run.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct DpSepConfig {
    /// `gamma` of 002 Eq. 4.
    pub gamma: f64,
    /// Clip norm `C` (must equal the wall's).
    pub clip: f64,
    /// Epochs of `N` steps each (the wall must be planned for `epochs * N` releases).
    pub epochs: usize,
}

/// What a DP-SEP run publishes about its privacy: public settings and the accounting only.
///
/// # Privacy
/// Every field is a function of public inputs (the budget, the declared population, `C`,
/// `gamma`, the plan); nothing here depends on the records.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DpSepReport {
    /// Noise multiplier `sigma`.
    pub noise_multiplier: f64,
    /// Noise std on each coordinate of `theta_new`: `sigma * 2 gamma C / N`.
    pub theta_noise_std: f64,
    /// Epsilon of the accounted run.
    pub epsilon: f64,
    /// Releases made (the planned number; a run never stops early).
    pub releases: u64,
    /// The declared population `N`.
    pub population: usize,
}

/// The data owner's report of a DP-SEP run: data-dependent and **not** noised.
///
/// # Privacy
/// None: not covered by the guarantee. Keep it apart from the published result (the examples
/// print it only with `--diagnostics`, marked `"private": false`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DpSepDiagnostics {
    /// Step counters: clipped intermediate factors (from the wall), clipped refreshed factors,
    /// failed contributions (released as zero), repaired cavities.
    pub counts: StepCounts,
}

/// One DP-SEP step through `wall`.
///
/// # Privacy
/// The record's intermediate factor `proj[q_c p(x | .)] - theta_c` is computed inside the wall;
/// when it fails or is non-finite it is replaced by zero (counted in `counts.failed_tilted`, a
/// diagnostic) and the step is released and charged as any other: a failure never aborts, retries
/// or skips a release, and no error carries a record-derived value.
///
/// # Errors
/// The wall's errors (budget used up); a released vector of the wrong length (a wall bug).
pub fn dp_sep_step<M, W>(
    model: &M,
    state: &mut SepState,
    wall: &mut W,
    config: &DpSepConfig,
    counts: &mut StepCounts,
) -> Result<(), SepError>
where
    M: SepModel + Sync,
    W: FactorRelease<M::Record> + ?Sized,
{
    let cavity = usable_cavity(model, state, counts);
    let failed = AtomicU64::new(0);
    let dim = cavity.len();
    // The clipped statistic of one record. A record whose tilted moments cannot be computed or
    // are non-finite contributes the zero vector (counted); the release still goes ahead and was
    // accounted, and nothing about the record leaves this closure but the vector.
    let statistic = |record: &M::Record| {
        let mut tilted = vec![0.0; dim];
        let ok = model.tilted(&cavity, record, &mut tilted);
        let f: Vec<f64> = tilted.iter().zip(&cavity).map(|(t, c)| t - c).collect();
        if ok && f.iter().all(|v| v.is_finite()) {
            f
        } else {
            failed.fetch_add(1, Ordering::Relaxed);
            vec![0.0; dim]
        }
    };
    let noised = wall.release(&statistic)?;
    if noised.len() != state.prior().len() {
        return Err(SepError::DimensionMismatch {
            context: "released factor length",
            expected: state.prior().len(),
            got: noised.len(),
        });
    }
    counts.failed_tilted += failed.load(Ordering::Relaxed);
    let theta_new = posterior_update(state, &noised, config.gamma);
    if refresh_factor(state, &theta_new, Some(config.clip)) {
        counts.clipped_factor += 1;
    }
    counts.steps += 1;
    Ok(())
}

/// Runs DP-SEP for `config.epochs * N` steps through `wall`, with the model's end-of-epoch
/// prior refinement (post-processing). Returns the publishable report and, separately, the
/// data owner's diagnostics.
///
/// # Errors
/// [`SepError::InvalidParameter`] for `gamma` or `clip` out of range; dimension errors; the
/// wall's errors (e.g. planned for fewer releases).
pub fn run_dp_sep<M, W>(
    model: &mut M,
    state: &mut SepState,
    wall: &mut W,
    config: &DpSepConfig,
) -> Result<(DpSepReport, DpSepDiagnostics), SepError>
where
    M: SepModel + Sync,
    W: FactorRelease<M::Record> + ?Sized,
{
    run_dp_sep_observed(model, state, wall, config, &mut |_, _| true)
}

/// [`run_dp_sep`] calling `observer` after each epoch with `(epochs done, epochs planned)`
/// (progress bars, cancellation). The observer sees only public counters.
///
/// # Errors
/// As [`run_dp_sep`]; [`SepError::Interrupted`] when `observer` returns `false` (the releases
/// made so far were accounted; nothing is returned).
pub fn run_dp_sep_observed<M, W>(
    model: &mut M,
    state: &mut SepState,
    wall: &mut W,
    config: &DpSepConfig,
    observer: &mut crate::sep::EpochObserver<'_>,
) -> Result<(DpSepReport, DpSepDiagnostics), SepError>
where
    M: SepModel + Sync,
    W: FactorRelease<M::Record> + ?Sized,
{
    let n = state.n();
    check_fit(&*model, state, n)?;
    if wall.population() != n {
        return Err(SepError::DimensionMismatch {
            context: "declared population: wall vs SepState::n",
            expected: n,
            got: wall.population(),
        });
    }
    check_positive("clip", config.clip)?;
    crate::sep::SepConfig {
        gamma: config.gamma,
        clip: Some(config.clip),
    }
    .validate(n)?;
    let mut counts = StepCounts::default();
    let clipped_before = wall.clipped();
    for epoch in 0..config.epochs {
        for _ in 0..n {
            dp_sep_step(&*model, state, wall, config, &mut counts)?;
        }
        end_of_epoch(model, state);
        if !observer(epoch + 1, config.epochs) {
            return Err(SepError::Interrupted {
                epochs_done: epoch + 1,
                epochs: config.epochs,
            });
        }
    }
    counts.clipped_intermediate = wall.clipped() - clipped_before;
    let sigma = wall.noise_multiplier();
    Ok((
        DpSepReport {
            noise_multiplier: sigma,
            theta_noise_std: sigma * 2.0 * config.gamma * config.clip / n as f64,
            epsilon: wall.epsilon_spent()?,
            releases: wall.releases(),
            population: n,
        },
        DpSepDiagnostics { counts },
    ))
}
