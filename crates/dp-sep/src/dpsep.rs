//! DP-SEP (002 Algorithm 3): SEP whose posterior update is released through a
//! [`FactorWall`] (`dp_core`'s privacy wall) and **written back**: the noised `theta_new` becomes the new factor
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

use dp_core::ContributionBuffer;
use serde::{Deserialize, Serialize};

use crate::error::{SepError, check_positive};
use crate::factor::FactorWall;
use crate::model::SepModel;
use crate::sep::{
    SepState, StepCounts, check_fit, end_of_epoch, posterior_update, refresh_factor, usable_cavity,
};

/// Step size and length of a DP-SEP run; build with [`DpSepConfig::builder`]. The clip norm
/// `C` is the wall's ([`crate::WallPlan::clip`], [`FactorWall::clip`]): one number, so the clip
/// of the release and of the refreshed factor cannot disagree.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct DpSepConfig {
    gamma: Option<f64>,
    epochs: usize,
}

/// Unchecked [`DpSepConfig`].
#[derive(Clone, Copy, Debug)]
pub struct DpSepConfigBuilder {
    cfg: DpSepConfig,
}

impl DpSepConfig {
    /// A builder with: `gamma = N` (sensitivity `2C`); one epoch.
    ///
    /// # Example
    /// ```
    /// use dp_sep::DpSepConfig;
    /// // 002's stated setting gamma = 1: noise std sigma * 2C / N on theta_new.
    /// let config = DpSepConfig::builder().gamma(1.0).epochs(20).build()?;
    /// assert_eq!((config.gamma_for(1000), config.epochs()), (1.0, 20));
    /// assert!(DpSepConfig::builder().epochs(0).build().is_err());
    /// # Ok::<(), dp_sep::SepError>(())
    /// ```
    pub fn builder() -> DpSepConfigBuilder {
        DpSepConfigBuilder {
            cfg: DpSepConfig {
                gamma: None,
                epochs: 1,
            },
        }
    }

    /// The declared `gamma` of 002 Eq. 4 (`None`: `N`).
    pub fn gamma(&self) -> Option<f64> {
        self.gamma
    }

    /// `gamma` for the population `n`: the declared value, or `N`.
    pub fn gamma_for(&self, n: usize) -> f64 {
        self.gamma.unwrap_or(n as f64)
    }

    /// Epochs of `N` steps each (the wall must be planned for `epochs * N` releases).
    pub fn epochs(&self) -> usize {
        self.epochs
    }
}

impl DpSepConfigBuilder {
    /// `gamma` of 002 Eq. 4 (default `N`): the noise std on `theta_new` is
    /// `sigma * 2 gamma C / N`.
    pub fn gamma(mut self, gamma: f64) -> Self {
        self.cfg.gamma = Some(gamma);
        self
    }

    /// Epochs of `N` steps each (default 1).
    pub fn epochs(mut self, epochs: usize) -> Self {
        self.cfg.epochs = epochs;
        self
    }

    /// Validates the settings (`gamma <= N^2` is checked by the run, which knows `N`).
    ///
    /// # Errors
    /// [`SepError::InvalidParameter`] for a `gamma` that is not finite and `> 0` or zero
    /// epochs.
    pub fn build(self) -> Result<DpSepConfig, SepError> {
        if let Some(g) = self.cfg.gamma {
            check_positive("gamma", g)?;
        }
        if self.cfg.epochs == 0 {
            return Err(SepError::InvalidParameter {
                name: "epochs",
                value: 0.0,
                reason: "must be >= 1",
            });
        }
        Ok(self.cfg)
    }
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
/// when the moment match fails the statistic rejects the record
/// ([`dp_core::ContributionBuffer::reject_record`], a fixed reason) and when it is non-finite
/// the wall catches it: either way the record contributes zero (counted in
/// `counts.failed_tilted`, a diagnostic) and the step is released and charged as any other. A
/// failure never aborts, retries or skips a release, and no error carries a record-derived
/// value. Rejection changes a release only as removing the record would, which the noise
/// covers; for records whose factor can be computed nothing changes.
///
/// # Errors
/// The wall's errors ([`dp_core::CoreError::BudgetExhausted`] after the planned releases); a
/// wall whose statistic length is not the state's.
pub fn dp_sep_step<M>(
    model: &M,
    state: &mut SepState,
    wall: &mut FactorWall<M::Record>,
    config: &DpSepConfig,
    counts: &mut StepCounts,
) -> Result<(), SepError>
where
    M: SepModel,
{
    if wall.dim() != state.prior().len() {
        return Err(SepError::DimensionMismatch {
            context: "released factor length",
            expected: state.prior().len(),
            got: wall.dim(),
        });
    }
    let cavity = usable_cavity(model, state, counts);
    let factor = wall.factor();
    // One record's intermediate factor, written through the wall's handle into its zeroed
    // block (the wall clips it). A record whose tilted moments cannot be computed is rejected
    // (a fixed reason, no record value) and a non-finite one is caught by the wall: either way
    // it contributes zero, is counted in the release's `replaced_records`, and the release goes
    // ahead and was accounted; nothing about the record leaves this closure but the block.
    let statistic = |record: &M::Record, buf: &mut ContributionBuffer| {
        let out = buf.dense(factor);
        if model.tilted(&cavity, record, out) {
            out.iter_mut().zip(&cavity).for_each(|(t, c)| *t -= c);
        } else {
            buf.reject_record("the tilted distribution's moments could not be computed");
        }
    };
    let clip = wall.clip();
    let (noised, diagnostics) = wall.release(statistic)?;
    counts.failed_tilted += diagnostics.replaced_records;
    counts.clipped_intermediate += diagnostics.clipped_records;
    let theta_new = posterior_update(state, noised, config.gamma_for(state.n()));
    if refresh_factor(state, &theta_new, Some(clip)) {
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
pub fn run_dp_sep<M>(
    model: &mut M,
    state: &mut SepState,
    wall: &mut FactorWall<M::Record>,
    config: &DpSepConfig,
) -> Result<(DpSepReport, DpSepDiagnostics), SepError>
where
    M: SepModel,
{
    run_dp_sep_observed(model, state, wall, config, &mut |_, _| true)
}

/// [`run_dp_sep`] calling `observer` after each epoch with `(epochs done, epochs planned)`
/// (progress bars, cancellation). The observer sees only public counters.
///
/// # Errors
/// As [`run_dp_sep`]; [`SepError::Interrupted`] when `observer` returns `false` (the releases
/// made so far were accounted; nothing is returned).
pub fn run_dp_sep_observed<M>(
    model: &mut M,
    state: &mut SepState,
    wall: &mut FactorWall<M::Record>,
    config: &DpSepConfig,
    observer: &mut crate::sep::EpochObserver<'_>,
) -> Result<(DpSepReport, DpSepDiagnostics), SepError>
where
    M: SepModel,
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
    let clip = check_positive("clip", wall.clip())?;
    let gamma = config.gamma_for(n);
    crate::sep::check_gamma(gamma, n)?;
    let mut counts = StepCounts::default();
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
    let sigma = wall.noise_multiplier();
    Ok((
        DpSepReport {
            noise_multiplier: sigma,
            theta_noise_std: sigma * 2.0 * gamma * clip / n as f64,
            epsilon: wall.epsilon_spent()?,
            releases: wall.releases(),
            population: n,
        },
        DpSepDiagnostics { counts },
    ))
}
