//! Stochastic expectation propagation (002 Algorithm 2; Li, Hernández-Lobato & Turner 2015) with
//! optional clipping of the factor's natural parameters, written as the pure steps DP-SEP
//! (002 Algorithm 3) reuses.
//!
//! State: the prior's natural parameters `theta_0` and one shared factor `theta_f`; the posterior is
//! `theta_0 + N theta_f` (002 Eq. 2) and the cavity `theta_0 + (N - 1) theta_f` (Eq. 3). One step
//! on record `x_n`:
//! 1. cavity `theta_c = theta_0 + (N - 1) theta_f`;
//! 2. tilted moments, moment matching: `theta_t = proj[q_c p(x_n | .)]` (the model);
//! 3. intermediate factor `theta_fn = theta_t - theta_c`, clipped to `||theta_fn|| <= C`;
//! 4. posterior update, 002 Eq. 4: `theta_new = theta_0 + (N - gamma/N) theta_f + (gamma/N) theta_fn`;
//! 5. (DP-SEP only: `theta_new += n`, `n ~ N(0, sigma^2 (2 gamma C / N)^2 I)`);
//! 6. refreshed factor `theta_f = (theta_new - theta_0) / N`, clipped to `||theta_f|| <= C`.
//!
//! In terms of the factor, steps 4 and 6 are `theta_f <- (1 - gamma/N^2) theta_f + (gamma/N^2) theta_fn`:
//! the SEP damping of Li et al. (2015), `f <- f^(1-eps) f_n^eps`, with `eps = gamma / N^2`. Li et al.'s
//! usual `eps = 1/N` is `gamma = N` (then the sensitivity `2 gamma C / N` is `2C`); 002's "gamma = 1"
//! is `eps = 1/N^2`. See `docs/dp-sep.md`.

use dp_core::SamplingScheme;
use rand::Rng;
use rand::RngExt;
use rand::seq::SliceRandom;
use serde::{Deserialize, Serialize};

use crate::error::{SepError, check_positive};
use crate::model::SepModel;
use crate::natural::{clip_l2, lin2};

/// The SEP state: prior natural parameters and the one shared factor, for `N` records.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SepState {
    prior: Vec<f64>,
    factor: Vec<f64>,
    n: usize,
}

impl SepState {
    /// A state with prior `prior`, initial factor `factor` and `n` records.
    ///
    /// # Errors
    /// [`SepError::DimensionMismatch`] if the lengths differ, [`SepError::Empty`] for
    /// `n == 0`, [`SepError::InvalidNaturalParameters`] for non-finite entries.
    ///
    /// # Example
    /// ```
    /// use dp_sep::SepState;
    /// // One scalar Gaussian: natural parameters (mean * precision, -precision / 2).
    /// let s = SepState::new(vec![0.0, -0.5], vec![0.1, -0.05], 10)?;
    /// assert_eq!(s.posterior(), vec![1.0, -1.0]);
    /// # Ok::<(), dp_sep::SepError>(())
    /// ```
    pub fn new(prior: Vec<f64>, factor: Vec<f64>, n: usize) -> Result<Self, SepError> {
        if prior.len() != factor.len() {
            return Err(SepError::DimensionMismatch {
                what: "SepState::new (prior vs factor)",
                expected: prior.len(),
                found: factor.len(),
            });
        }
        if n == 0 {
            return Err(SepError::Empty("SEP needs at least one record"));
        }
        if prior.iter().chain(&factor).any(|v| !v.is_finite()) {
            return Err(SepError::InvalidNaturalParameters(
                "non-finite prior or factor",
            ));
        }
        Ok(Self { prior, factor, n })
    }

    /// Prior natural parameters `theta_0`.
    pub fn prior(&self) -> &[f64] {
        &self.prior
    }

    /// The shared factor's natural parameters `theta_f`.
    pub fn factor(&self) -> &[f64] {
        &self.factor
    }

    /// Number of records `N`.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Posterior natural parameters `theta_0 + N theta_f` (002 Eq. 2).
    pub fn posterior(&self) -> Vec<f64> {
        let mut out = vec![0.0; self.prior.len()];
        lin2(&mut out, 1.0, &self.prior, self.n as f64, &self.factor);
        out
    }

    /// Cavity natural parameters `theta_0 + (N - 1) theta_f` (002 Eq. 3).
    pub fn cavity(&self) -> Vec<f64> {
        let mut out = vec![0.0; self.prior.len()];
        lin2(
            &mut out,
            1.0,
            &self.prior,
            self.n as f64 - 1.0,
            &self.factor,
        );
        out
    }

    pub(crate) fn prior_mut(&mut self) -> &mut Vec<f64> {
        &mut self.prior
    }

    /// The shared factor, for post-processing of released iterates (DP-SEP's averaging).
    pub(crate) fn factor_mut(&mut self) -> &mut [f64] {
        &mut self.factor
    }
}

/// Step size and clipping of non-private (clipped) SEP; build with [`SepConfig::builder`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct SepConfig {
    gamma: Option<f64>,
    clip: Option<f64>,
}

/// Unchecked [`SepConfig`].
#[derive(Clone, Copy, Debug)]
pub struct SepConfigBuilder {
    cfg: SepConfig,
}

impl SepConfig {
    /// A builder with: `gamma = N` (Li et al.'s damping `1/N`), no clipping (plain SEP).
    ///
    /// # Example
    /// ```
    /// use dp_sep::SepConfig;
    /// let plain = SepConfig::builder().build()?;
    /// assert_eq!(plain.gamma_for(100), 100.0);
    /// let clipped = SepConfig::builder().gamma(1.0).clip(2.0).build()?;
    /// assert_eq!((clipped.gamma_for(100), clipped.clip()), (1.0, Some(2.0)));
    /// assert!(SepConfig::builder().clip(-1.0).build().is_err());
    /// # Ok::<(), dp_sep::SepError>(())
    /// ```
    pub fn builder() -> SepConfigBuilder {
        SepConfigBuilder {
            cfg: SepConfig {
                gamma: None,
                clip: None,
            },
        }
    }

    /// The declared `gamma` of 002 Eq. 4 (`None`: `N`).
    pub fn gamma(&self) -> Option<f64> {
        self.gamma
    }

    /// `gamma` for `n` records: the declared value, or `N`.
    pub fn gamma_for(&self, n: usize) -> f64 {
        self.gamma.unwrap_or(n as f64)
    }

    /// Clip norm `C` of the intermediate and the refreshed factor (`None`: plain SEP).
    pub fn clip(&self) -> Option<f64> {
        self.clip
    }

    /// Checks `gamma <= N^2` for `n` records (the factor damping `gamma / N^2` must not
    /// exceed 1); everything else was checked by [`SepConfigBuilder::build`].
    ///
    /// # Errors
    /// [`SepError::InvalidParameter`] otherwise.
    pub fn validate(&self, n: usize) -> Result<(), SepError> {
        check_gamma(self.gamma_for(n), n)
    }
}

/// `gamma` in `(0, N^2]`.
pub(crate) fn check_gamma(gamma: f64, n: usize) -> Result<(), SepError> {
    check_positive("gamma", gamma)?;
    if gamma > (n as f64) * (n as f64) {
        return Err(SepError::InvalidParameter {
            name: "gamma",
            value: gamma,
            reason: "must be <= N^2 (the factor damping gamma/N^2 must not exceed 1)",
        });
    }
    Ok(())
}

impl SepConfigBuilder {
    /// `gamma` of 002 Eq. 4: the intermediate factor enters the posterior with weight
    /// `gamma/N` (default `N`).
    pub fn gamma(mut self, gamma: f64) -> Self {
        self.cfg.gamma = Some(gamma);
        self
    }

    /// Clip norm `C` of the intermediate and the refreshed factor (clipped SEP).
    pub fn clip(mut self, clip: f64) -> Self {
        self.cfg.clip = Some(clip);
        self
    }

    /// Clip norm `C`, or `None` for plain SEP (the default).
    pub fn clip_norm(mut self, clip: Option<f64>) -> Self {
        self.cfg.clip = clip;
        self
    }

    /// Validates the settings.
    ///
    /// # Errors
    /// [`SepError::InvalidParameter`] for a `gamma` or `clip` that is not finite and `> 0`.
    pub fn build(self) -> Result<SepConfig, SepError> {
        if let Some(g) = self.cfg.gamma {
            check_positive("gamma", g)?;
        }
        if let Some(c) = self.cfg.clip {
            check_positive("clip", c)?;
        }
        Ok(self.cfg)
    }
}

/// Counters of one run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepCounts {
    /// Steps taken.
    pub steps: u64,
    /// Intermediate factors that were clipped.
    pub clipped_intermediate: u64,
    /// Refreshed factors that were clipped.
    pub clipped_factor: u64,
    /// Steps whose tilted moments failed: non-private SEP keeps the current factor, DP-SEP
    /// rejects the record inside the wall, which releases a zero contribution (a diagnostic;
    /// under DP-SEP it also counts non-finite factors the wall replaced).
    pub failed_tilted: u64,
    /// Steps whose cavity was improper and had to be repaired (post-processing).
    pub repaired_cavity: u64,
}

impl StepCounts {
    /// Adds `other` into `self`.
    pub fn add(&mut self, other: &StepCounts) {
        self.steps += other.steps;
        self.clipped_intermediate += other.clipped_intermediate;
        self.clipped_factor += other.clipped_factor;
        self.failed_tilted += other.failed_tilted;
        self.repaired_cavity += other.repaired_cavity;
    }
}

/// The cavity of `state`, repaired by the model if improper (post-processing of the state).
pub(crate) fn usable_cavity<M: SepModel>(
    model: &M,
    state: &SepState,
    counts: &mut StepCounts,
) -> Vec<f64> {
    let mut cavity = state.cavity();
    if !model.is_valid(&cavity) {
        model.repair(&mut cavity);
        counts.repaired_cavity += 1;
    }
    cavity
}

/// Steps 2-3: the intermediate factor `proj[tilted] - cavity` for `record`, clipped to `clip`.
/// On a failed projection the current factor is used instead (still a bounded function of the
/// record once clipped).
///
/// # Privacy
/// With `clip = Some(C)` the result has L2 norm `<= C` for every record, so two records give
/// intermediate factors at most `2C` apart (002 Prop. 1).
pub fn intermediate_factor<M: SepModel>(
    model: &M,
    cavity: &[f64],
    factor: &[f64],
    record: &M::Record,
    clip: Option<f64>,
    counts: &mut StepCounts,
) -> Vec<f64> {
    let mut tilted = vec![0.0; cavity.len()];
    let mut out =
        if model.tilted(cavity, record, &mut tilted) && tilted.iter().all(|v| v.is_finite()) {
            tilted.iter().zip(cavity).map(|(t, c)| t - c).collect()
        } else {
            counts.failed_tilted += 1;
            factor.to_vec()
        };
    if let Some(c) = clip
        && clip_l2(&mut out, c)
    {
        counts.clipped_intermediate += 1;
    }
    out
}

/// Step 4, 002 Eq. 4: `theta_new = theta_0 + (N - gamma/N) theta_f + (gamma/N) theta_fn`.
pub fn posterior_update(state: &SepState, intermediate: &[f64], gamma: f64) -> Vec<f64> {
    let n = state.n as f64;
    let w = gamma / n;
    state
        .prior
        .iter()
        .zip(&state.factor)
        .zip(intermediate)
        .map(|((p, f), g)| p + (n - w) * f + w * g)
        .collect()
}

/// Step 6: `theta_f = (theta_new - theta_0) / N`, clipped to `clip`. Returns whether it clipped.
pub fn refresh_factor(state: &mut SepState, theta_new: &[f64], clip: Option<f64>) -> bool {
    let n = state.n as f64;
    let mut f: Vec<f64> = theta_new
        .iter()
        .zip(&state.prior)
        .map(|(t, p)| (t - p) / n)
        .collect();
    let clipped = clip.is_some_and(|c| clip_l2(&mut f, c));
    state.factor = f;
    clipped
}

/// One non-private SEP step on `record` (002 Algorithm 2; clipped SEP if `config.clip` is set).
pub fn sep_step<M: SepModel>(
    model: &M,
    state: &mut SepState,
    record: &M::Record,
    config: &SepConfig,
    counts: &mut StepCounts,
) {
    let cavity = usable_cavity(model, state, counts);
    let fnew = intermediate_factor(model, &cavity, &state.factor, record, config.clip, counts);
    let theta_new = posterior_update(state, &fnew, config.gamma_for(state.n));
    if refresh_factor(state, &theta_new, config.clip) {
        counts.clipped_factor += 1;
    }
    counts.steps += 1;
}

/// Runs `epochs` epochs of non-private (clipped) SEP over `records`, calling the model's
/// end-of-epoch prior refinement after each.
///
/// # Errors
/// [`SepError::DimensionMismatch`] / [`SepError::InvalidParameter`] for a state or config that
/// does not fit the model and data.
pub fn run_sep<M: SepModel, R: Rng + ?Sized>(
    model: &mut M,
    state: &mut SepState,
    records: &[M::Record],
    config: &SepConfig,
    epochs: usize,
    sampling: SamplingScheme,
    rng: &mut R,
) -> Result<StepCounts, SepError> {
    run_sep_observed(
        model,
        state,
        records,
        config,
        epochs,
        sampling,
        rng,
        &mut |_, _| true,
    )
}

/// A callback after each epoch: `(epochs done, epochs planned)`; returning `false` stops the run
/// with [`SepError::Interrupted`] (e.g. on Ctrl-C). Used for progress bars.
pub type EpochObserver<'a> = dyn FnMut(usize, usize) -> bool + 'a;

/// [`run_sep`] calling `observer` after each epoch (progress, cancellation).
///
/// # Errors
/// As [`run_sep`]; [`SepError::Interrupted`] when `observer` returns `false`.
#[allow(clippy::too_many_arguments)]
pub fn run_sep_observed<M: SepModel, R: Rng + ?Sized>(
    model: &mut M,
    state: &mut SepState,
    records: &[M::Record],
    config: &SepConfig,
    epochs: usize,
    sampling: SamplingScheme,
    rng: &mut R,
    observer: &mut EpochObserver<'_>,
) -> Result<StepCounts, SepError> {
    check_fit(&*model, state, records.len())?;
    config.validate(state.n)?;
    check_scheme(sampling)?;
    let mut counts = StepCounts::default();
    for epoch in 0..epochs {
        for i in epoch_indices(sampling, records.len(), rng)? {
            sep_step(&*model, state, &records[i], config, &mut counts);
        }
        end_of_epoch(model, state);
        if !observer(epoch + 1, epochs) {
            return Err(SepError::Interrupted {
                epochs_done: epoch + 1,
                epochs,
            });
        }
    }
    Ok(counts)
}

/// Refuses a scheme that does not visit one record per step: (DP-)SEP updates the factor from
/// exactly one record at a time, so only [`SamplingScheme::UniformSingle`] and
/// [`SamplingScheme::ShuffledEpoch`] apply.
pub(crate) fn check_scheme(scheme: SamplingScheme) -> Result<(), SepError> {
    match scheme {
        SamplingScheme::UniformSingle | SamplingScheme::ShuffledEpoch => Ok(()),
        _ => Err(SepError::UnsupportedSampling { scheme }),
    }
}

/// A fresh uniformly random permutation of `0..n` (one shuffled epoch).
pub(crate) fn shuffled_epoch<R: Rng + ?Sized>(n: usize, rng: &mut R) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..n).collect();
    idx.shuffle(rng);
    idx
}

/// The record indices of one epoch of `n` steps of the non-private baselines under `scheme`:
/// `n` independent uniform draws ([`SamplingScheme::UniformSingle`]) or a permutation
/// ([`SamplingScheme::ShuffledEpoch`]). (DP-SEP's draws are made by the privacy wall.)
pub(crate) fn epoch_indices<R: Rng + ?Sized>(
    scheme: SamplingScheme,
    n: usize,
    rng: &mut R,
) -> Result<Vec<usize>, SepError> {
    match scheme {
        SamplingScheme::UniformSingle => Ok((0..n).map(|_| rng.random_range(0..n)).collect()),
        SamplingScheme::ShuffledEpoch => Ok(shuffled_epoch(n, rng)),
        _ => Err(SepError::UnsupportedSampling { scheme }),
    }
}

/// Applies the model's prior refinement to a SEP state (post-processing of the posterior).
pub(crate) fn end_of_epoch<M: SepModel>(model: &mut M, state: &mut SepState) {
    let mut posterior = state.posterior();
    if !model.is_valid(&posterior) {
        model.repair(&mut posterior);
    }
    let mut prior = state.prior.clone();
    model.refine_prior(&mut prior, &posterior);
    // Keep the posterior where it was refined to: theta_0' + N theta_f' = posterior' where the
    // refinement changed only the prior part, i.e. the factor is unchanged.
    if prior.iter().all(|v| v.is_finite()) {
        *state.prior_mut() = prior;
    }
}

pub(crate) fn check_fit<M: SepModel>(
    model: &M,
    state: &SepState,
    n_records: usize,
) -> Result<(), SepError> {
    if state.prior.len() != model.dim() {
        return Err(SepError::DimensionMismatch {
            what: "state vs model natural-parameter length",
            expected: model.dim(),
            found: state.prior.len(),
        });
    }
    if n_records == 0 {
        return Err(SepError::Empty("no records"));
    }
    if n_records != state.n {
        return Err(SepError::DimensionMismatch {
            what: "SepState::n vs number of records",
            expected: state.n,
            found: n_records,
        });
    }
    Ok(())
}
