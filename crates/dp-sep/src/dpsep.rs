//! DP-SEP (002 Algorithm 3): SEP whose posterior update is released through a
//! [`FactorWall`] (`dp_core`'s privacy wall) and **written back**: the noised `theta_new` becomes the new factor
//! `(theta_new - theta_0) / N` (clipped), so the noise reaches every later cavity and the final
//! posterior. (The authors' PBP code computed the noised parameters and discarded them.)
//!
//! One step, with cavity `theta_c` computed from the (already released) state and
//! `S` the wall's public expected batch size (`1` for 002's one record per step, [`Batching::OneRecord`];
//! `qN` for a Poisson batch, [`Batching::Poisson`]; `S` for a fixed-size batch,
//! [`Batching::FixedSize`]):
//! `theta_fn(x) = proj[q_c p(x | .)] - theta_c` (the statistic, clipped to `C` by the wall);
//! `m~ = (sum_{x in batch} clip_C(theta_fn(x)) + z) / S` (the wall's release);
//! `theta~_new = theta_0 + (N - S gamma/N) theta_f + (S gamma/N) m~`;
//! `theta_f <- clip_C((theta~_new - theta_0) / N)`.
//! With one record (`S = 1`, replace-one) `z ~ N(0, (2 C sigma)^2 I)`: noise
//! `N(0, sigma^2 (2 gamma C / N)^2 I)` on `theta_new` (002 Eq. 4, Prop. 1). With a Poisson batch
//! (add/remove-one) `z ~ N(0, (C sigma)^2 I)`: noise `N(0, sigma^2 (gamma C / N)^2 I)` on
//! `theta_new`. With a fixed-size batch (replace-one) `z ~ N(0, (2 C sigma)^2 I)`: noise
//! `N(0, sigma^2 (2 gamma C / N)^2 I)` on `theta_new`. The batch update is Li et al.'s (2015) minibatch SEP, `f <- f^(1 - S eps) prod_n
//! f_n^eps` with `eps = gamma / N^2`: one epoch of `N / S` batch steps damps the factor as much as
//! `N` one-record steps.
//!
//! With [`Clipping::Innovation`] (issue 19) the wall clips each record's innovation
//! `theta_fn(x) - theta_f` against the current (public) factor instead:
//! `m~ = (sum_{x in batch} clip_C(theta_fn(x) - theta_f) + z) / S`,
//! `theta~_new = theta_0 + N theta_f + (S gamma / N) m~` (Eq. 4 with `m~ + theta_f` as the
//! intermediate factor), `theta_f <- (theta~_new - theta_0) / N`, not clipped. The noise and the
//! sensitivities are the same as above.
//!
//! # Privacy
//! `theta~_new` is post-processing of the wall's release (a fixed affine map with public
//! coefficients of the released vector and of the previous, already private, state). The cavity,
//! the factor refresh, the clipping, the repair of an improper posterior and PBP's prior
//! refinement all depend on the data only through earlier releases. The guarantee is therefore the
//! wall's: `(epsilon, delta)`-DP for the whole run, with the sampler the accountant assumed, under
//! replace-one neighbours of the declared `N` slots ([`Batching::OneRecord`],
//! [`Batching::FixedSize`]) or add/remove-one neighbours ([`Batching::Poisson`]).

use dp_accountant::AccountantKind;
use dp_core::{ContributionBuffer, SamplingScheme};
use serde::{Deserialize, Serialize};

use crate::error::{SepError, check_positive};
use crate::factor::FactorWall;
use crate::model::SepModel;
use crate::sep::{
    SepState, StepCounts, check_fit, end_of_epoch, posterior_update, refresh_factor, usable_cavity,
};

/// How many records a DP-SEP step reads: dp-core's one vocabulary, [`dp_core::Batching`].
/// 002's one record per step is the default; a Poisson or a fixed-size batch reads `S` records
/// (in expectation for Poisson) per step.
///
/// # Privacy
/// [`Batching::OneRecord`]: the wall draws one of the `N` declared slots per step (or one per
/// step of a shuffled epoch); replace-one neighbours, release sensitivity `2C`.
/// [`Batching::Poisson`]: the wall includes each record independently with probability
/// `q = S / N` (`N` declared, public), sums the clipped factors and adds noise once; add/remove-one
/// neighbours, sensitivity `C` of the sum, `C / S` of the released average (the wall divides by
/// the public `S`, never by the realised batch size). Each step is charged as one
/// `PoissonSubsampledGaussian` event with rate `q`.
/// [`Batching::FixedSize`]: the wall draws exactly `S` of the `N` declared slots without
/// replacement; replace-one neighbours, sensitivity `2C` of the sum, `2C / S` of the released
/// average; the run is charged up front (planned accounting) as `T` `FixedSizeSubsampledGaussian`
/// events (`m = S` of `N`).
///
/// # Example
/// ```
/// use dp_sep::{Batching, SamplingScheme};
/// let b = Batching::poisson(32)?;
/// assert_eq!(b.sampling_for(1280)?, SamplingScheme::poisson(32.0 / 1280.0)?);
/// assert_eq!(dp_sep::planned_steps(b, 2, 1280, false)?, 80);
/// assert_eq!(Batching::fixed_size(32)?.sampling_for(1280)?, SamplingScheme::fixed_size(32)?);
/// assert_eq!(Batching::OneRecord.steps_per_epoch(1280)?, 1280);
/// # Ok::<(), dp_sep::SepError>(())
/// ```
pub use dp_core::Batching;

/// [`Batching::poisson`] with dp-sep's error.
pub(crate) fn poisson(s: usize) -> Result<Batching, SepError> {
    Batching::poisson(s).map_err(|_| SepError::InvalidParameter {
        name: "expected_batch_size",
        value: 0.0,
        reason: "must be >= 1",
    })
}

/// What the wall clips in each record's contribution to a DP-SEP step.
///
/// - [`Clipping::Value`] (002's, the default): the record's intermediate factor
///   `theta_fn = proj[q_c p(x | .)] - theta_c` itself; the refreshed factor is clipped to `C` too.
///   When most records are clipped the batch average is shrunk towards zero, so the clipped run
///   settles at a biased fixed point even without noise.
/// - [`Clipping::Innovation`] (issue 19): the record's innovation `d_n = theta_fn - theta_f`
///   against the current shared factor `theta_f` (public: post-processing of earlier releases);
///   the step adds the released average of the clipped innovations to the factor, which is not
///   clipped. At SEP's fixed point `E[theta_fn] = theta_f` the innovations are centred, so
///   clipping shrinks their spread instead of moving the fixed point towards zero (the DP-SGD
///   analogue: clip the gradient, not the parameter).
/// - [`Clipping::Whitened`] (issue 19, session 14): the innovation measured in the model's
///   metric at the step's public cavity, `w_n = N L^T d_n` ([`SepModel::metric`], `L L^T` the
///   Fisher information there), so `C` is a distance in units of the posterior's own spread
///   (for a Gaussian weight: a mean change in posterior standard deviations, a precision
///   change relative to the precision). The released average is mapped back,
///   `d~ = L^-T m~ / N`, and added to the factor as with innovation clipping. The noise then
///   falls on each coordinate in proportion to the posterior's uncertainty there: a precision
///   gets noise relative to its size instead of the same absolute noise as every other
///   coordinate. Only for models with a metric ([`SepModel::has_metric`]; PBP and the mixture).
///
/// # Privacy
/// The same sensitivity every way: each record's clipped vector has norm `<= C` whatever the
/// record, and `theta_f` and the cavity (hence the metric) are fixed before the step's release
/// (public), so the sum
/// over a batch moves by at most `C` under add/remove-one (Poisson) and `2C` under replace-one
/// (one record, fixed-size batch); see docs/dp-sep.md, "Innovation clipping".
///
/// # Example
/// ```
/// use dp_sep::{Clipping, DpSepConfig};
/// let config = DpSepConfig::builder().clipping(Clipping::Innovation).build()?;
/// assert_eq!(config.clipping(), Clipping::Innovation);
/// assert_eq!(DpSepConfig::builder().build()?.clipping(), Clipping::Value);
/// assert_eq!("innovation".parse::<Clipping>()?, Clipping::Innovation);
/// # Ok::<(), dp_sep::SepError>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Clipping {
    /// Clip each record's intermediate factor (002 Algorithm 3), and the refreshed factor.
    #[default]
    Value,
    /// Clip each record's innovation `theta_fn - theta_f`; the factor is not clipped.
    Innovation,
    /// Clip each record's innovation in the model's metric at the public cavity, scaled by
    /// `N`; the factor is not clipped.
    Whitened,
}

impl Clipping {
    /// The name the examples print and parse (`value`, `innovation`).
    pub fn name(self) -> &'static str {
        match self {
            Clipping::Value => "value",
            Clipping::Innovation => "innovation",
            Clipping::Whitened => "whitened",
        }
    }
}

impl std::str::FromStr for Clipping {
    type Err = SepError;

    /// `value`, `innovation` or `whitened`.
    ///
    /// # Errors
    /// [`SepError::InvalidParameter`] (`clipping`) for anything else.
    fn from_str(s: &str) -> Result<Self, SepError> {
        match s {
            "value" => Ok(Clipping::Value),
            "innovation" => Ok(Clipping::Innovation),
            "whitened" => Ok(Clipping::Whitened),
            _ => Err(SepError::InvalidParameter {
                name: "clipping",
                value: f64::NAN,
                reason: "must be value, innovation or whitened",
            }),
        }
    }
}

/// Post-processing of the released iterates: what a DP-SEP run leaves as its final shared factor.
///
/// - [`Averaging::None`] (the default): the last iterate, as 002.
/// - [`Averaging::Tail`] (issue 19): the plain (Polyak-Ruppert) average of the shared factor
///   `theta_f` after each of the last `ceil(fraction x T)` of the run's `T` steps, so the final
///   posterior is `theta_0 + N mean(theta_f)` (`theta_0` the prior after the last epoch's
///   refinement, which is then recomputed from the averaged posterior). The run itself is
///   unchanged: every step's cavity is computed from the last iterate, as without averaging;
///   only the factor left in the state at the end is replaced by the average.
///
/// # Privacy
/// Free: each iterate `theta_f` is a function of the wall's releases and public settings only
/// (the step's affine map of the released vector, the refresh and the repair are
/// post-processing; see the module documentation), so any function of the iterates, their
/// average included, is post-processing of releases. Nothing more is released and the
/// accountant charges exactly the same steps (the ledger is identical with and without
/// averaging; `tests` in this module check it).
///
/// # Example
/// ```
/// use dp_sep::{Averaging, DpSepConfig};
/// let config = DpSepConfig::builder().averaging(Averaging::tail(0.5)?).build()?;
/// assert_eq!(config.averaging(), Averaging::Tail { fraction: 0.5 });
/// // The last ceil(0.5 x 320) = 160 of 320 steps are averaged; the default averages nothing.
/// assert_eq!(config.averaging().tail_steps(320), 160);
/// assert_eq!(DpSepConfig::builder().build()?.averaging(), Averaging::None);
/// assert!(Averaging::tail(0.0).is_err() && Averaging::tail(1.5).is_err());
/// # Ok::<(), dp_sep::SepError>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Averaging {
    /// The last iterate (002's, the default).
    #[default]
    None,
    /// The average of the factor over the last `fraction` of the steps, `0 < fraction <= 1`.
    Tail {
        /// The share of the run's steps whose iterates are averaged.
        fraction: f64,
    },
}

impl Averaging {
    /// [`Averaging::Tail`] over the last `fraction` of the steps.
    ///
    /// # Errors
    /// [`SepError::InvalidParameter`] (`average_tail`) unless `0 < fraction <= 1`.
    pub fn tail(fraction: f64) -> Result<Self, SepError> {
        let a = Averaging::Tail { fraction };
        a.check()?;
        Ok(a)
    }

    /// `Ok` unless a tail fraction is outside `(0, 1]` (`average_tail`).
    pub(crate) fn check(self) -> Result<(), SepError> {
        match self {
            Averaging::Tail { fraction } if !(fraction > 0.0 && fraction <= 1.0) => {
                Err(SepError::InvalidParameter {
                    name: "average_tail",
                    value: fraction,
                    reason: "must be in (0, 1]",
                })
            }
            _ => Ok(()),
        }
    }

    /// How many of a run's `steps` are averaged: `0` for [`Averaging::None`],
    /// `ceil(fraction x steps)` (at least 1, at most `steps`) for [`Averaging::Tail`].
    pub fn tail_steps(self, steps: u64) -> u64 {
        match self {
            Averaging::None => 0,
            Averaging::Tail { fraction } => {
                ((fraction * steps as f64).ceil() as u64).clamp(1, steps.max(1))
            }
        }
    }
}

/// `batching`'s wall sampler over the declared population `n`, with dp-sep's errors
/// ([`Batching::sampling_for`]).
///
/// # Errors
/// [`SepError::InvalidParameter`] (`expected_batch_size`) for `S == 0` or `S > n`
/// (`population`) for `n == 0`.
pub fn sampling_for(batching: Batching, n: usize) -> Result<SamplingScheme, SepError> {
    batching.sampling_for(n).map_err(|e| match e {
        dp_core::CoreError::InvalidParameter { value, reason, .. } => SepError::InvalidParameter {
            name: "expected_batch_size",
            value,
            reason,
        },
        dp_core::CoreError::Empty(_) => SepError::InvalidParameter {
            name: "population",
            value: 0.0,
            reason: "must be >= 1",
        },
        e => e.into(),
    })
}

/// The planned number of releases of a DP-SEP run, `epochs x steps_per_epoch(n)` (`n` steps
/// per epoch with one record, `ceil(n / S)` with a batch).
///
/// # Errors
/// As [`sampling_for`]; [`SepError::TooLarge`] above [`crate::limits::MAX_STEPS`] unless
/// `allow_long_run` (see [`crate::limits::check_steps`]).
pub fn planned_steps(
    batching: Batching,
    epochs: usize,
    n: usize,
    allow_long_run: bool,
) -> Result<u64, SepError> {
    sampling_for(batching, n)?;
    crate::limits::check_steps(
        "epochs",
        epochs,
        n.div_ceil(batching.expected_batch_size()),
        allow_long_run,
    )
}

/// Step size, length and batching of a DP-SEP run; build with [`DpSepConfig::builder`]. The clip
/// norm `C` is the wall's ([`crate::WallPlan::clip`], [`FactorWall::clip`]): one number, so the
/// clip of the release and of the refreshed factor cannot disagree.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct DpSepConfig {
    gamma: Option<f64>,
    epochs: usize,
    batching: Batching,
    clipping: Clipping,
    averaging: Averaging,
}

/// Unchecked [`DpSepConfig`].
#[derive(Clone, Copy, Debug)]
pub struct DpSepConfigBuilder {
    cfg: DpSepConfig,
}

impl DpSepConfig {
    /// A builder with: `gamma = N` (sensitivity `2C`); one epoch; one record per step
    /// ([`Batching::OneRecord`]).
    ///
    /// # Example
    /// ```
    /// use dp_sep::DpSepConfig;
    /// // 002's stated setting gamma = 1: noise std sigma * 2C / N on theta_new.
    /// let config = DpSepConfig::builder().gamma(1.0).epochs(20).build()?;
    /// assert_eq!((config.gamma_for(1000), config.epochs()), (1.0, 20));
    /// assert!(DpSepConfig::builder().epochs(0).build().is_err());
    /// // A Poisson batch of expected size 32 per step.
    /// use dp_sep::Batching;
    /// let batched = DpSepConfig::builder().batching(Batching::poisson(32)?).build()?;
    /// assert_eq!(batched.batching().expected_batch_size(), 32);
    /// # Ok::<(), dp_sep::SepError>(())
    /// ```
    pub fn builder() -> DpSepConfigBuilder {
        DpSepConfigBuilder {
            cfg: DpSepConfig {
                gamma: None,
                epochs: 1,
                batching: Batching::OneRecord,
                clipping: Clipping::Value,
                averaging: Averaging::None,
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

    /// Epochs of `N` steps each with one record, `ceil(N / S)` with a batch (the wall
    /// must be planned for [`planned_steps`] releases).
    pub fn epochs(&self) -> usize {
        self.epochs
    }

    /// One record per step (002) or a Poisson or fixed-size batch.
    pub fn batching(&self) -> Batching {
        self.batching
    }

    /// What the wall clips: each record's factor (002, the default) or its innovation.
    pub fn clipping(&self) -> Clipping {
        self.clipping
    }

    /// What the run leaves as its final factor: the last iterate (the default) or an average
    /// of the last iterates ([`Averaging`], post-processing).
    pub fn averaging(&self) -> Averaging {
        self.averaging
    }
}

impl DpSepConfigBuilder {
    /// `gamma` of 002 Eq. 4 (default `N`): the noise std on `theta_new` is
    /// `sigma * 2 gamma C / N`.
    pub fn gamma(mut self, gamma: f64) -> Self {
        self.cfg.gamma = Some(gamma);
        self
    }

    /// Epochs (default 1): `N` steps each with one record, `ceil(N / S)` with a batch.
    pub fn epochs(mut self, epochs: usize) -> Self {
        self.cfg.epochs = epochs;
        self
    }

    /// One record per step (default, 002) or a Poisson or fixed-size batch of (expected) size `S`.
    pub fn batching(mut self, batching: Batching) -> Self {
        self.cfg.batching = batching;
        self
    }

    /// What the wall clips (default [`Clipping::Value`], 002's).
    pub fn clipping(mut self, clipping: Clipping) -> Self {
        self.cfg.clipping = clipping;
        self
    }

    /// Iterate averaging of the final factor (default [`Averaging::None`]; post-processing,
    /// no privacy cost).
    pub fn averaging(mut self, averaging: Averaging) -> Self {
        self.cfg.averaging = averaging;
        self
    }

    /// Validates the settings (`S gamma <= N^2` and `S <= N` are checked by the run, which knows
    /// `N`).
    ///
    /// # Errors
    /// [`SepError::InvalidParameter`] for a `gamma` that is not finite and `> 0`, zero epochs,
    /// a zero expected batch size or a tail fraction outside `(0, 1]` (`average_tail`).
    pub fn build(self) -> Result<DpSepConfig, SepError> {
        self.cfg.averaging.check()?;
        if let Err(dp_core::CoreError::InvalidParameter { value, reason, .. }) = self
            .cfg
            .batching
            .with_batch_size(self.cfg.batching.expected_batch_size())
        {
            return Err(SepError::InvalidParameter {
                name: "expected_batch_size",
                value,
                reason,
            });
        }
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
    /// Noise std on each coordinate of `theta_new`: `sigma * 2 gamma C / N` with one record per
    /// step or a fixed-size batch (replace-one), `sigma * gamma C / N` with a Poisson batch
    /// (add/remove-one). With [`Clipping::Whitened`] the coordinates are those of
    /// `N L^T theta_new` in the step's cavity metric, not the natural parameters.
    pub theta_noise_std: f64,
    /// Epsilon of the accounted run.
    pub epsilon: f64,
    /// Releases made (the planned number; a run never stops early).
    pub releases: u64,
    /// The declared population `N`.
    pub population: usize,
    /// The public expected batch size `S` of a step (`1`: one record per step).
    #[serde(default = "one")]
    pub expected_batch_size: f64,
    /// The accountant that calibrated `noise_multiplier` and computed `epsilon` (the wall's,
    /// [`crate::WallPlanBuilder::accountant`]; absent in the JSON = RDP, the default).
    #[serde(default, skip_serializing_if = "AccountantKind::is_rdp")]
    pub accountant: AccountantKind,
}

fn one() -> f64 {
    1.0
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

/// One DP-SEP step through `wall`: one record ([`Batching::OneRecord`]) or a batch
/// ([`Batching::Poisson`]), whichever sampler the wall was built with; the update weight is
/// `S gamma / N` with `S` the wall's public expected batch size ([`FactorWall::expected_batch_size`]).
///
/// # Privacy
/// Each record's intermediate factor `proj[q_c p(x | .)] - theta_c` is computed inside the wall
/// from the public cavity; when the moment match fails the statistic rejects the record
/// ([`dp_core::ContributionBuffer::reject_record`], a fixed reason) and when it is non-finite
/// the wall catches it: either way the record contributes zero (counted in
/// `counts.failed_tilted`, a diagnostic) and the step is released and charged as any other. A
/// failure never aborts, retries or skips a release, and no error carries a record-derived
/// value. Rejection changes a release only as removing the record would, which the noise
/// covers; for records whose factor can be computed nothing changes.
///
/// # Errors
/// The wall's errors ([`dp_core::CoreError::BudgetExhausted`] after the planned releases); a
/// wall whose statistic length is not the state's; [`SepError::InvalidParameter`] for
/// `S gamma > N^2`.
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
            what: "released factor length",
            expected: state.prior().len(),
            found: wall.dim(),
        });
    }
    // S gamma: the weight of the released average in theta_new is S gamma / N (gamma / N for one
    // record), so the factor damping is S gamma / N^2 <= 1.
    let weight = config.gamma_for(state.n()) * wall.expected_batch_size();
    crate::sep::check_gamma(weight, state.n())?;
    let cavity = usable_cavity(model, state, counts);
    let factor = wall.factor();
    // What each record's statistic is measured from: the cavity (value clipping: the
    // intermediate factor theta_t - theta_c) or the cavity plus the current shared factor
    // (innovation clipping: theta_t - theta_c - theta_f). Both are public: functions of earlier
    // releases only.
    let origin: Vec<f64> = match config.clipping {
        Clipping::Value => cavity.clone(),
        Clipping::Innovation | Clipping::Whitened => cavity
            .iter()
            .zip(state.factor())
            .map(|(c, f)| c + f)
            .collect(),
    };
    // Each drawn record's statistic, written through the wall's handle into its zeroed block
    // (the wall clips it and sums over the batch). A record whose tilted moments cannot be
    // computed is rejected (a fixed reason, no record value) and a non-finite one is caught by
    // the wall: either way it contributes zero, is counted in the release's
    // `replaced_records`, and the release goes ahead and was accounted; nothing about the
    // record leaves this closure but the block.
    let whitened = config.clipping == Clipping::Whitened;
    let n = state.n() as f64;
    // The metric at the public cavity, computed once for the step's records.
    let metric = whitened.then(|| model.metric(&cavity));
    let statistic = |record: &M::Record, buf: &mut ContributionBuffer| {
        let out = buf.dense(factor);
        if model.tilted(&cavity, record, out) {
            out.iter_mut().zip(&origin).for_each(|(t, o)| *t -= o);
            if let Some(metric) = &metric {
                // w = N L^T d: the record's innovation in the posterior's metric.
                metric.whiten(out);
                out.iter_mut().for_each(|v| *v *= n);
            }
        } else {
            buf.reject_record("the tilted distribution's moments could not be computed");
        }
    };
    let clip = wall.clip();
    let (noised, diagnostics) = wall.release(statistic)?;
    counts.failed_tilted += diagnostics.replaced_records;
    counts.clipped_intermediate += diagnostics.clipped_records;
    match config.clipping {
        Clipping::Value => {
            let theta_new = posterior_update(state, noised, weight);
            if refresh_factor(state, &theta_new, Some(clip)) {
                counts.clipped_factor += 1;
            }
        }
        Clipping::Innovation | Clipping::Whitened => {
            // Whitened: the released average maps back to an innovation, d~ = L^-T m~ / N
            // (post-processing with the public cavity).
            let mut innovation = noised.to_vec();
            if let Some(metric) = &metric {
                metric.unwhiten(&mut innovation);
                innovation.iter_mut().for_each(|v| *v /= n);
            }
            // The released average innovation plus the public factor estimates the batch's
            // average intermediate factor: Eq. 4 with it is theta_0 + N theta_f + (S gamma / N) m~,
            // i.e. theta_f <- theta_f + (S gamma / N^2) m~. The factor is not clipped (its norm
            // enters no sensitivity).
            let estimate: Vec<f64> = innovation
                .iter()
                .zip(state.factor())
                .map(|(m, f)| m + f)
                .collect();
            let theta_new = posterior_update(state, &estimate, weight);
            refresh_factor(state, &theta_new, None);
        }
    }
    counts.steps += 1;
    Ok(())
}

/// Runs DP-SEP for `config.epochs` epochs through `wall` (`N` steps each with one record,
/// `ceil(N / S)` with a batch), with the model's end-of-epoch prior refinement
/// (post-processing). Returns the publishable report and, separately, the data owner's
/// diagnostics.
///
/// # Errors
/// [`SepError::InvalidParameter`] for `gamma` or `clip` out of range, `S > N`, or a wall whose
/// sampler does not match `config.batching()` (a Poisson wall of rate `S / N` for
/// [`Batching::Poisson`], a fixed-size wall of `S` for [`Batching::FixedSize`], a one-record
/// wall for [`Batching::OneRecord`]); dimension errors; the wall's errors (e.g.
/// planned for fewer releases).
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
            what: "declared population: wall vs SepState::n",
            expected: n,
            found: wall.population(),
        });
    }
    let clip = check_positive("clip", wall.clip())?;
    let gamma = config.gamma_for(n);
    sampling_for(config.batching, n)?;
    let steps_per_epoch = n.div_ceil(config.batching.expected_batch_size());
    check_batching(config.batching, wall)?;
    if config.clipping == Clipping::Whitened && !model.has_metric() {
        return Err(SepError::InvalidParameter {
            name: "clipping",
            value: 0.0,
            reason: "whitened clipping needs a model with a metric (SepModel::has_metric)",
        });
    }
    let s = wall.expected_batch_size();
    crate::sep::check_gamma(gamma * s, n)?;
    let mut counts = StepCounts::default();
    // Iterate averaging (post-processing of the releases): the sum of the factor after each of
    // the last `tail` steps, put in place of the last iterate before the last epoch's refinement.
    let total = config.epochs as u64 * steps_per_epoch as u64;
    let tail = config.averaging.tail_steps(total);
    let mut sum = vec![0.0; state.factor().len()];
    let mut step = 0u64;
    for epoch in 0..config.epochs {
        for _ in 0..steps_per_epoch {
            dp_sep_step(&*model, state, wall, config, &mut counts)?;
            step += 1;
            if step + tail > total {
                sum.iter_mut()
                    .zip(state.factor())
                    .for_each(|(s, f)| *s += f);
            }
        }
        if tail > 0 && epoch + 1 == config.epochs {
            let k = tail as f64;
            state
                .factor_mut()
                .iter_mut()
                .zip(&sum)
                .for_each(|(f, s)| *f = s / k);
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
    // Noise std on the released average: sigma f C / S (f = 2 replace-one, 1 add/remove-one),
    // entering theta_new with weight S gamma / N.
    let f = wall.relation_factor();
    Ok((
        DpSepReport {
            noise_multiplier: sigma,
            theta_noise_std: sigma * f * gamma * clip / n as f64,
            epsilon: wall.epsilon_spent()?,
            releases: wall.releases(),
            population: n,
            expected_batch_size: s,
            accountant: wall.accountant(),
        },
        DpSepDiagnostics { counts },
    ))
}

/// Refuses a wall whose sampler is not the one `batching` asks for: a Poisson wall whose
/// expected batch size is `S` for [`Batching::Poisson`], a one-record wall for
/// [`Batching::OneRecord`].
fn check_batching<R>(batching: Batching, wall: &FactorWall<R>) -> Result<(), SepError> {
    let ok = match (batching, wall.sampling()) {
        (Batching::OneRecord, SamplingScheme::UniformSingle | SamplingScheme::ShuffledEpoch) => {
            true
        }
        (
            Batching::Poisson {
                expected_batch_size: s,
            },
            SamplingScheme::Poisson { .. },
        ) => (wall.expected_batch_size() - s as f64).abs() <= 1e-9 * s as f64,
        (Batching::FixedSize { batch_size }, SamplingScheme::FixedSize { sample_size }) => {
            batch_size == sample_size
        }
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(SepError::InvalidParameter {
            name: "batching",
            value: batching.expected_batch_size() as f64,
            reason: "the wall's sampler does not match DpSepConfig::batching (one record: \
                     uniform_single or shuffled_epoch; Poisson batch of S: poisson(S / N); \
                     fixed-size batch of S: fixed_size(S))",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::factor::WallPlan;
    use dp_core::RngPolicy;

    /// Every record's tilted distribution is the cavity plus `target` (so every intermediate
    /// factor is `target`); a record `false` has no tilted moments.
    struct Constant {
        target: Vec<f64>,
        /// A diagonal metric `v_i <- m_i (1 + |at_i|) v_i` (for whitened clipping), or none.
        metric: Option<Vec<f64>>,
    }

    impl SepModel for Constant {
        type Record = bool;
        fn dim(&self) -> usize {
            self.target.len()
        }
        fn tilted(&self, cavity: &[f64], record: &bool, out: &mut [f64]) -> bool {
            for ((o, c), t) in out.iter_mut().zip(cavity).zip(&self.target) {
                *o = c + t;
            }
            *record
        }
        fn is_valid(&self, _: &[f64]) -> bool {
            true
        }
        fn repair(&self, _: &mut [f64]) {}
        fn has_metric(&self) -> bool {
            self.metric.is_some()
        }
        fn metric<'a>(&'a self, at: &'a [f64]) -> crate::model::Metric<'a> {
            let m = self.metric.as_ref().unwrap();
            let scale: Vec<f64> = m.iter().zip(at).map(|(w, a)| w * (1.0 + a.abs())).collect();
            let back = scale.clone();
            crate::model::Metric::new(
                move |v: &mut [f64]| v.iter_mut().zip(&scale).for_each(|(x, s)| *x *= s),
                move |v: &mut [f64]| v.iter_mut().zip(&back).for_each(|(x, s)| *x /= s),
            )
        }
    }

    /// `steps` noise-free Poisson-batch steps (`S = 10` of `N = 100`, `gamma = N^2 / S`: each
    /// step moves the factor by the released average) from a zero factor.
    fn run(
        records: Vec<bool>,
        target: &[f64],
        clip: f64,
        clipping: Clipping,
        steps: u64,
    ) -> Vec<f64> {
        run_metric(records, target, None, clip, clipping, steps)
    }

    fn run_metric(
        records: Vec<bool>,
        target: &[f64],
        metric: Option<Vec<f64>>,
        clip: f64,
        clipping: Clipping,
        steps: u64,
    ) -> Vec<f64> {
        let n = 100;
        let model = Constant {
            target: target.to_vec(),
            metric,
        };
        let batching = Batching::poisson(10).unwrap();
        let plan = WallPlan::builder()
            .population(n)
            .dim(target.len())
            .budget(1.0, 1e-5)
            .clip(clip)
            .steps(steps)
            .sampling(batching.sampling_for(n).unwrap())
            .rng(RngPolicy::Seeded { seed: 3 })
            .build()
            .unwrap();
        let mut wall = FactorWall::noise_free(records, &plan).unwrap();
        let config = DpSepConfig::builder()
            .gamma(1000.0)
            .batching(batching)
            .clipping(clipping)
            .build()
            .unwrap();
        let mut state = SepState::new(vec![0.0; target.len()], vec![0.0; target.len()], n).unwrap();
        let mut counts = StepCounts::default();
        for _ in 0..steps {
            dp_sep_step(&model, &mut state, &mut wall, &config, &mut counts).unwrap();
        }
        state.factor().to_vec()
    }

    fn dist(a: &[f64], b: &[f64]) -> f64 {
        crate::natural::l2_norm(&a.iter().zip(b).map(|(x, y)| x - y).collect::<Vec<_>>())
    }

    /// Every record agrees (`theta_fn = target`, norm 5 > C = 1): value clipping settles at
    /// `clip_C(target)` (norm 1, distance 4 from the target); innovation clipping reaches the
    /// target itself, the clip only limiting each record's step.
    #[test]
    fn innovation_clipping_reaches_the_fixed_point_value_clipping_shrinks_it() {
        let target = [3.0, -4.0];
        let records = vec![true; 100];
        let value = run(records.clone(), &target, 1.0, Clipping::Value, 200);
        let innovation = run(records, &target, 1.0, Clipping::Innovation, 200);
        assert!(
            (crate::natural::l2_norm(&value) - 1.0).abs() < 1e-6,
            "{value:?}"
        );
        assert!(dist(&value, &target) > 3.9, "{value:?}");
        assert!(dist(&innovation, &target) < 1e-6, "{innovation:?}");
    }

    /// Whitened clipping maps each innovation into the metric and the release back: with a clip
    /// no record reaches and no noise it is innovation clipping exactly (the maps compose to the
    /// identity, at the cavity each step uses); with a binding clip the clip acts in the metric
    /// (the heavily weighted coordinate is held back more than under innovation clipping).
    #[test]
    fn whitened_clipping_is_innovation_clipping_in_the_metric() {
        let target = [3.0, -4.0];
        let metric = Some(vec![10.0, 0.1]);
        let records = vec![true; 100];
        let innovation = run(records.clone(), &target, 1e9, Clipping::Innovation, 7);
        let whitened = run_metric(
            records.clone(),
            &target,
            metric.clone(),
            1e9,
            Clipping::Whitened,
            7,
        );
        assert!(
            dist(&innovation, &whitened) < 1e-9,
            "{innovation:?} vs {whitened:?}"
        );
        assert!(dist(&innovation, &target) < 1e-9);
        // Binding clip, first step (cavity 0, so the metric is diag(10, 0.1)): each record's
        // whitened innovation N L^T d has norm 100 sqrt(30^2 + 0.4^2), its innovation norm 5, so
        // with the same batch the whitened step is the innovation step times 5 / that norm.
        let one_innovation = run(records.clone(), &target, 1.0, Clipping::Innovation, 1);
        let one = run_metric(records, &target, metric, 1.0, Clipping::Whitened, 1);
        let ratio = 5.0 / (100.0 * (30.0f64.powi(2) + 0.4f64.powi(2)).sqrt());
        for (w, i) in one.iter().zip(&one_innovation) {
            assert!(
                (w - i * ratio).abs() <= 1e-12 * i.abs(),
                "{one:?} vs {one_innovation:?}"
            );
        }
        assert!(one[0] != 0.0);
    }

    /// A record without tilted moments contributes zero: under innovation clipping that is "no
    /// change" (the factor stays where it is), under value clipping a pull towards zero.
    #[test]
    fn rejected_records_leave_the_factor_alone_under_innovation_clipping() {
        let target = [0.3, 0.4];
        let innovation = run(vec![false; 100], &target, 1.0, Clipping::Innovation, 20);
        assert_eq!(innovation, vec![0.0, 0.0]);
        // Half the records rejected: innovation clipping still reaches the target (each step's
        // average innovation is about half the gap), value clipping halves it.
        let half: Vec<bool> = (0..100).map(|i| i % 2 == 0).collect();
        let innovation = run(half.clone(), &target, 1.0, Clipping::Innovation, 200);
        let value = run(half, &target, 1.0, Clipping::Value, 200);
        assert!(dist(&innovation, &target) < 1e-3, "{innovation:?}");
        assert!(dist(&value, &target) > 0.15, "{value:?}");
    }

    /// A noised Poisson-batch wall (`S = 10` of `N = 100`, `steps` releases, noise seed 5) over
    /// records that alternate between having and lacking tilted moments, so the factor moves.
    fn noised_wall(steps: u64) -> FactorWall<bool> {
        let n = 100;
        let plan = WallPlan::builder()
            .population(n)
            .dim(2)
            .budget(1.0, 1e-5)
            .clip(1.0)
            .steps(steps)
            .sampling(Batching::poisson(10).unwrap().sampling_for(n).unwrap())
            .rng(RngPolicy::Seeded { seed: 5 })
            .build()
            .unwrap();
        FactorWall::new((0..n).map(|i| i % 3 != 0).collect(), &plan).unwrap()
    }

    fn averaging_config(averaging: Averaging) -> DpSepConfig {
        DpSepConfig::builder()
            .gamma(300.0)
            .epochs(2)
            .batching(Batching::poisson(10).unwrap())
            .clipping(Clipping::Innovation)
            .averaging(averaging)
            .build()
            .unwrap()
    }

    fn averaging_state() -> SepState {
        SepState::new(vec![0.0, 0.0], vec![0.0, 0.0], 100).unwrap()
    }

    /// Tail averaging over the last `ceil(0.3 x 20) = 6` of 20 noised steps leaves exactly the
    /// mean of the factors after steps 15-20 (recorded by hand from a twin run with the same
    /// noise seed), and changes nothing else: the trajectory is the last-iterate run's.
    #[test]
    fn tail_averaging_leaves_the_hand_computed_average() {
        let model = Constant {
            target: vec![0.8, -0.6],
            metric: None,
        };
        let steps = 20;
        // By hand: the same steps, recording the factor after each.
        let mut wall = noised_wall(steps);
        let mut state = averaging_state();
        let config = averaging_config(Averaging::None);
        let mut counts = StepCounts::default();
        let mut iterates = Vec::new();
        for _ in 0..steps {
            dp_sep_step(&model, &mut state, &mut wall, &config, &mut counts).unwrap();
            iterates.push(state.factor().to_vec());
        }
        let tail = &iterates[14..];
        assert_eq!(Averaging::tail(0.3).unwrap().tail_steps(steps), 6);
        let by_hand: Vec<f64> = (0..2)
            .map(|j| tail.iter().map(|f| f[j]).sum::<f64>() / 6.0)
            .collect();
        // The iterates differ (the noise moves them), so the average is not the last iterate.
        assert!(dist(&by_hand, &iterates[19]) > 1e-6, "{iterates:?}");

        let mut model = model;
        let mut averaged = averaging_state();
        let config = averaging_config(Averaging::tail(0.3).unwrap());
        run_dp_sep(&mut model, &mut averaged, &mut noised_wall(steps), &config).unwrap();
        assert!(
            dist(averaged.factor(), &by_hand) < 1e-12,
            "{averaged:?} vs {by_hand:?}"
        );

        let mut last = averaging_state();
        let config = averaging_config(Averaging::None);
        run_dp_sep(&mut model, &mut last, &mut noised_wall(steps), &config).unwrap();
        assert_eq!(last.factor(), iterates[19].as_slice());
    }

    /// Averaging is post-processing: the ledger (every release's event) and the report are
    /// identical with and without it.
    #[test]
    fn averaging_leaves_the_privacy_ledger_unchanged() {
        let mut model = Constant {
            target: vec![0.8, -0.6],
            metric: None,
        };
        let mut ledgers = Vec::new();
        let mut reports = Vec::new();
        for averaging in [
            Averaging::None,
            Averaging::tail(0.5).unwrap(),
            Averaging::tail(1.0).unwrap(),
        ] {
            let mut wall = noised_wall(20);
            let mut state = averaging_state();
            let (report, _) = run_dp_sep(
                &mut model,
                &mut state,
                &mut wall,
                &averaging_config(averaging),
            )
            .unwrap();
            ledgers.push(wall.core().ledger().clone());
            reports.push(report);
        }
        assert_eq!(ledgers[0].entries().len(), 20);
        assert!(ledgers.iter().all(|l| *l == ledgers[0]));
        assert!(reports.iter().all(|r| *r == reports[0]));
    }

    #[test]
    fn a_tail_fraction_outside_zero_one_is_a_typed_error() {
        for bad in [0.0, -0.1, 1.01, f64::NAN, f64::INFINITY] {
            for result in [
                Averaging::tail(bad).map(|_| ()),
                DpSepConfig::builder()
                    .averaging(Averaging::Tail { fraction: bad })
                    .build()
                    .map(|_| ()),
            ] {
                assert!(
                    matches!(
                        result,
                        Err(SepError::InvalidParameter {
                            name: "average_tail",
                            ..
                        })
                    ),
                    "{bad}: {result:?}"
                );
            }
        }
        assert_eq!(Averaging::tail(1e-9).unwrap().tail_steps(320), 1);
        assert_eq!(Averaging::tail(1.0).unwrap().tail_steps(320), 320);
    }
}
