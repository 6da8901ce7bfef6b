//! One PBP experiment on a train/test split: scale features and target (declared public ranges
//! for private runs; the training split's mean and std allowed only for non-private runs), fit
//! with the chosen method, evaluate in original units.

use std::time::Instant;

use dp_accountant::AccountantKind;
use dp_core::SamplingScheme;
use rand::SeedableRng;
use rand::rngs::ChaCha20Rng;
use serde::{Deserialize, Serialize};

use super::evaluate::{Metrics, evaluate};
use super::model::{Labelled, PbpModel, records};
use crate::data::{BoxClipCounts, Dataset, PublicRanges, Standardizer};
use crate::dpsep::{Averaging, Batching, Clipping, DpSepConfig, DpSepReport, run_dp_sep_observed};
use crate::ep::{EpState, run_adf, run_ep};
use crate::error::{SepError, check_positive};
use crate::factor::{FactorWall, WallPlan};
use crate::sep::SepState;
use crate::sep::{SepConfig, StepCounts, run_sep_observed};

/// The inference method.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Assumed density filtering (PBP as published).
    Adf,
    /// EP with one factor per training point.
    Ep,
    /// Stochastic EP (002 Algorithm 2), optionally clipped.
    Sep,
}

/// Settings of one PBP run; build with [`PbpConfig::builder`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PbpConfig {
    method: Method,
    hidden: Vec<usize>,
    epochs: usize,
    gamma: Option<f64>,
    clip: Option<f64>,
    sampling: SamplingScheme,
    seed: u64,
    privacy: Option<PbpPrivacy>,
    scaling: Scaling,
    batching: Batching,
    clipping: Clipping,
    averaging: Averaging,
}

/// Unchecked [`PbpConfig`].
#[derive(Clone, Debug)]
pub struct PbpConfigBuilder {
    cfg: PbpConfig,
}

/// How features and target are scaled before fitting (and how predictions are mapped back).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scaling {
    /// The training split's mean and standard deviation (the PBP protocol). **Non-private runs
    /// only**: a private run with this setting is refused with
    /// [`SepError::MissingPublicInput`].
    #[default]
    FitOnTraining,
    /// Declared public ranges: every record clipped into the box, then a fixed affine map.
    Declared(PublicRanges),
}

/// What makes a PBP run a DP-SEP run: the budget of the whole run, the declared public
/// population, the accountant and the RNG of the privacy wall. (vips-models' `engine::Privacy` is the
/// corresponding setting of its SVI driver.) Build with [`PbpPrivacy::builder`], which checks
/// every field; [`PbpConfigBuilder::build`] checks how it combines with the rest of the run.
///
/// # Privacy
/// Every field is public: none is computed from the training records.
///
/// # Example
/// ```
/// use dp_core::RngPolicy;
/// use dp_sep::pbp::PbpPrivacy;
/// let privacy = PbpPrivacy::builder()
///     .budget(1.0, 1e-5)
///     .population(1439)
///     .rng(RngPolicy::OsEntropy)
///     .build()?;
/// assert_eq!(privacy.population(), 1439);
/// assert_eq!(privacy.accountant(), dp_accountant::AccountantKind::Rdp); // the default
/// // delta must lie in (0, 1); the population has no default.
/// assert!(PbpPrivacy::builder().budget(1.0, 1.0).population(10).build().is_err());
/// assert!(PbpPrivacy::builder().budget(1.0, 1e-5).build().is_err());
/// # Ok::<(), dp_sep::SepError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct PbpPrivacy {
    epsilon: f64,
    delta: f64,
    population: usize,
    noise_rng: dp_core::RngPolicy,
    #[serde(skip_serializing_if = "AccountantKind::is_rdp")]
    accountant: AccountantKind,
}

/// Unchecked [`PbpPrivacy`]: the budget and the population are required, the RNG defaults to
/// [`dp_core::RngPolicy::OsEntropy`], the accountant to RDP.
#[derive(Clone, Copy, Debug)]
pub struct PbpPrivacyBuilder {
    budget: Option<(f64, f64)>,
    population: Option<usize>,
    noise_rng: dp_core::RngPolicy,
    accountant: AccountantKind,
}

impl PbpPrivacy {
    /// A builder with no budget, no population, OS-entropy noise and the RDP accountant.
    pub fn builder() -> PbpPrivacyBuilder {
        PbpPrivacyBuilder {
            budget: None,
            population: None,
            noise_rng: dp_core::RngPolicy::OsEntropy,
            accountant: AccountantKind::Rdp,
        }
    }
    /// Epsilon of the whole run, in `[dp_sep::limits::MIN_EPSILON, inf)`.
    pub fn epsilon(&self) -> f64 {
        self.epsilon
    }
    /// Delta of the whole run, in `(0, 1)`.
    pub fn delta(&self) -> f64 {
        self.delta
    }
    /// Declared public population size `N` of the training data (the example's
    /// `--population`): used for `q = 1/N`, SEP's `N` copies of the factor, the `epochs * N`
    /// steps and the default `gamma`. Never the realised number of records.
    pub fn population(&self) -> usize {
        self.population
    }
    /// RNG of the wall's record draws and noise.
    pub fn noise_rng(&self) -> dp_core::RngPolicy {
        self.noise_rng
    }
    /// The accountant that calibrates the noise and accounts the run (default RDP).
    pub fn accountant(&self) -> AccountantKind {
        self.accountant
    }
}

impl PbpPrivacyBuilder {
    /// The whole run's budget `(epsilon, delta)` (required).
    pub fn budget(mut self, epsilon: f64, delta: f64) -> Self {
        self.budget = Some((epsilon, delta));
        self
    }
    /// Declared public population size `N` (required): a public figure, never the count of the
    /// private records.
    pub fn population(mut self, population: usize) -> Self {
        self.population = Some(population);
        self
    }
    /// RNG of the wall's record draws and noise (default [`dp_core::RngPolicy::OsEntropy`]; a
    /// seed only for reproducible experiments).
    pub fn rng(mut self, noise_rng: dp_core::RngPolicy) -> Self {
        self.noise_rng = noise_rng;
        self
    }
    /// The accountant of the wall (default RDP; see [`crate::WallPlanBuilder::accountant`]).
    /// Every accountant covers every sampler (PLD's fixed-size pair: `docs/pld.md`, section 9);
    /// one that could not would be refused by [`PbpConfigBuilder::build`]
    /// ([`SepError::AccountantUnsupported`]).
    ///
    /// # Privacy
    /// Every accountant's calibration meets the budget (on the safe side); they differ in the
    /// noise it costs (PLD the least).
    pub fn accountant(mut self, accountant: AccountantKind) -> Self {
        self.accountant = accountant;
        self
    }

    /// Validates the settings.
    ///
    /// # Errors
    /// [`SepError::InvalidParameter`] for a missing budget or population, an epsilon below
    /// [`crate::limits::MIN_EPSILON`] or not finite, a delta outside `(0, 1)` or a zero
    /// population.
    pub fn build(self) -> Result<PbpPrivacy, SepError> {
        let missing = |name| SepError::InvalidParameter {
            name,
            value: f64::NAN,
            reason: "must be given (PbpPrivacy::builder has no default for it)",
        };
        let (epsilon, delta) = self.budget.ok_or(missing("epsilon"))?;
        let population = self.population.ok_or(missing("population"))?;
        crate::factor::check_epsilon(epsilon)?;
        if !(delta > 0.0 && delta < 1.0) {
            return Err(SepError::InvalidParameter {
                name: "delta",
                value: delta,
                reason: "must be in (0, 1)",
            });
        }
        if population == 0 {
            return Err(SepError::InvalidParameter {
                name: "population",
                value: 0.0,
                reason: "must be >= 1",
            });
        }
        Ok(PbpPrivacy {
            epsilon,
            delta,
            population,
            noise_rng: self.noise_rng,
            accountant: self.accountant,
        })
    }
}

impl PbpConfig {
    /// A builder with: SEP, one hidden layer of 50 units, 40 epochs, `gamma = N`, no clipping,
    /// shuffled epochs, seed 0, non-private, scaling fitted on the training split.
    ///
    /// # Example
    /// ```
    /// use dp_core::RngPolicy;
    /// use dp_sep::SamplingScheme;
    /// use dp_sep::pbp::{PbpConfig, PbpPrivacy};
    /// let config = PbpConfig::builder()
    ///     .epochs(10)
    ///     .clip(1.0)
    ///     .gamma(1.0)
    ///     .sampling(SamplingScheme::uniform_single())
    ///     .privacy(PbpPrivacy::builder().budget(1.0, 1e-5).population(1439)
    ///         .rng(RngPolicy::OsEntropy).build()?)
    ///     .build()?;
    /// assert_eq!(config.privacy().map(|p| p.population()), Some(1439));
    /// // DP-SEP needs a clip norm.
    /// assert!(PbpConfig::builder().privacy(config.privacy().unwrap()).build().is_err());
    /// # Ok::<(), dp_sep::SepError>(())
    /// ```
    pub fn builder() -> PbpConfigBuilder {
        PbpConfigBuilder {
            cfg: PbpConfig {
                method: Method::Sep,
                hidden: vec![50],
                epochs: 40,
                gamma: None,
                clip: None,
                sampling: SamplingScheme::ShuffledEpoch,
                seed: 0,
                privacy: None,
                scaling: Scaling::FitOnTraining,
                batching: Batching::OneRecord,
                clipping: Clipping::Value,
                averaging: Averaging::None,
            },
        }
    }

    /// Inference method.
    pub fn method(&self) -> Method {
        self.method
    }
    /// Hidden layer sizes.
    pub fn hidden(&self) -> &[usize] {
        &self.hidden
    }
    /// Passes over the data.
    pub fn epochs(&self) -> usize {
        self.epochs
    }
    /// `gamma` of 002 Eq. 4; `None` means `N` (Li et al.'s damping `1/N`).
    pub fn gamma(&self) -> Option<f64> {
        self.gamma
    }
    /// Clip norm `C` for SEP (`None`: unclipped).
    pub fn clip(&self) -> Option<f64> {
        self.clip
    }
    /// Visiting order (for a private run, the wall's sampler and accountant event).
    pub fn sampling(&self) -> SamplingScheme {
        self.sampling
    }
    /// Seed of the (public) initialisation and of the non-private visiting order.
    pub fn seed(&self) -> u64 {
        self.seed
    }
    /// The privacy settings of a DP-SEP run (`None`: non-private).
    pub fn privacy(&self) -> Option<PbpPrivacy> {
        self.privacy
    }
    /// How features and target are scaled.
    pub fn scaling(&self) -> &Scaling {
        &self.scaling
    }
    /// DP-SEP's batching: one record per step (default; the sampler is [`Self::sampling`]), a
    /// Poisson batch (the sampler is then Poisson with rate `S / N`) or a fixed-size batch (the
    /// sampler is then fixed-size, `m = S`).
    pub fn batching(&self) -> Batching {
        self.batching
    }
    /// What DP-SEP's wall clips: each record's factor (default, 002's) or its innovation
    /// against the shared factor ([`Clipping`]).
    pub fn clipping(&self) -> Clipping {
        self.clipping
    }
    /// DP-SEP's iterate averaging of the final factor ([`Averaging`]; default none).
    pub fn averaging(&self) -> Averaging {
        self.averaging
    }
}

impl PbpConfigBuilder {
    /// Inference method (default SEP).
    pub fn method(mut self, method: Method) -> Self {
        self.cfg.method = method;
        self
    }
    /// Hidden layer sizes (default `[50]`; `[100]` for protein).
    pub fn hidden(mut self, hidden: Vec<usize>) -> Self {
        self.cfg.hidden = hidden;
        self
    }
    /// Passes over the data (default 40).
    pub fn epochs(mut self, epochs: usize) -> Self {
        self.cfg.epochs = epochs;
        self
    }
    /// `gamma` of 002 Eq. 4 (default `N`).
    pub fn gamma(mut self, gamma: f64) -> Self {
        self.cfg.gamma = Some(gamma);
        self
    }
    /// Clip norm `C` of SEP's factors (required for DP-SEP).
    pub fn clip(mut self, clip: f64) -> Self {
        self.cfg.clip = Some(clip);
        self
    }
    /// Visiting order (default [`SamplingScheme::ShuffledEpoch`]).
    pub fn sampling(mut self, sampling: SamplingScheme) -> Self {
        self.cfg.sampling = sampling;
        self
    }
    /// Seed of the public initialisation and the non-private visiting order (default 0).
    pub fn seed(mut self, seed: u64) -> Self {
        self.cfg.seed = seed;
        self
    }
    /// Makes the run DP-SEP (requires [`Method::Sep`] and a clip norm).
    pub fn privacy(mut self, privacy: PbpPrivacy) -> Self {
        self.cfg.privacy = Some(privacy);
        self
    }
    /// How features and target are scaled (default [`Scaling::FitOnTraining`], non-private
    /// runs only).
    pub fn scaling(mut self, scaling: Scaling) -> Self {
        self.cfg.scaling = scaling;
        self
    }
    /// DP-SEP's batching (default [`Batching::OneRecord`]); a Poisson or fixed-size batch only
    /// for a private run, and it replaces [`Self::sampling`] as the wall's sampler.
    pub fn batching(mut self, batching: Batching) -> Self {
        self.cfg.batching = batching;
        self
    }
    /// What DP-SEP's wall clips (default [`Clipping::Value`]); only for a private run.
    pub fn clipping(mut self, clipping: Clipping) -> Self {
        self.cfg.clipping = clipping;
        self
    }
    /// DP-SEP's iterate averaging of the final factor (default [`Averaging::None`]; only for a
    /// private run; post-processing, no privacy cost).
    pub fn averaging(mut self, averaging: Averaging) -> Self {
        self.cfg.averaging = averaging;
        self
    }

    /// Validates the settings (those that need the data, such as the width of declared ranges
    /// and the network's size, are checked by [`prepare`]).
    ///
    /// # Errors
    /// [`SepError::InvalidParameter`] for zero epochs, a `gamma` or `clip` not finite and
    /// `> 0`, a private run with a method other than SEP or without a clip norm (the privacy
    /// settings themselves are checked by [`PbpPrivacyBuilder::build`]), a Poisson or fixed-size batch for a non-private run or of (expected) size `0` or above the
    /// declared population, innovation clipping or iterate averaging for a non-private run, a tail fraction outside
    /// `(0, 1]`;
    /// [`SepError::UnsupportedSampling`] for a batch scheme as the visiting order;
    /// [`SepError::AccountantUnsupported`] for a private run whose accountant cannot account its
    /// sampler (none of today's accountants: kept for accountants that cannot).
    pub fn build(self) -> Result<PbpConfig, SepError> {
        let c = self.cfg;
        if c.batching != Batching::OneRecord {
            match c.privacy {
                Some(p) => {
                    crate::dpsep::sampling_for(c.batching, p.population())?;
                }
                None => {
                    return Err(SepError::InvalidParameter {
                        name: "batching",
                        value: c.batching.expected_batch_size() as f64,
                        reason: "a Poisson or fixed-size batch is only available for a private run (DP-SEP)",
                    });
                }
            }
        }
        if c.clipping != Clipping::Value && c.privacy.is_none() {
            return Err(SepError::InvalidParameter {
                name: "clipping",
                value: f64::NAN,
                reason: "innovation clipping is only available for a private run (DP-SEP)",
            });
        }
        if c.averaging != Averaging::None {
            if c.privacy.is_none() {
                return Err(SepError::InvalidParameter {
                    name: "average_tail",
                    value: f64::NAN,
                    reason: "iterate averaging is only available for a private run (DP-SEP)",
                });
            }
            c.averaging.check()?;
        }
        if c.epochs == 0 {
            return Err(SepError::InvalidParameter {
                name: "epochs",
                value: 0.0,
                reason: "must be >= 1",
            });
        }
        if let Some(g) = c.gamma {
            check_positive("gamma", g)?;
        }
        if let Some(clip) = c.clip {
            check_positive("clip", clip)?;
        }
        crate::sep::check_scheme(c.sampling)?;
        if c.privacy.is_some() {
            if c.method != Method::Sep {
                return Err(SepError::InvalidParameter {
                    name: "method",
                    value: f64::NAN,
                    reason: "privacy is only available with Method::Sep",
                });
            }
            if c.clip.is_none() {
                return Err(SepError::InvalidParameter {
                    name: "clip",
                    value: f64::NAN,
                    reason: "DP-SEP needs a clip norm C",
                });
            }
        }
        if let Some(p) = c.privacy {
            let sampling = match c.batching {
                Batching::OneRecord => c.sampling,
                batch => crate::dpsep::sampling_for(batch, p.population())?,
            };
            crate::factor::check_accountant_covers(
                p.accountant(),
                sampling,
                p.population(),
                p.delta(),
            )?;
        }
        Ok(c)
    }
}

/// The publishable result of one run.
///
/// # Privacy
/// For a private run: the posterior is the wall's output post-processed; the test metrics are
/// computed on the held-out split with the declared public transform; the report holds public
/// settings and the accounting. Nothing here is computed from the training records otherwise.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PbpOutcome {
    /// Held-out test metrics in original units.
    pub metrics: Metrics,
    /// The fitted posterior natural parameters.
    pub posterior: Vec<f64>,
    /// DP-SEP's report (private runs only).
    pub privacy: Option<DpSepReport>,
}

/// The data owner's report of one run: data-dependent, **not** noised, not covered by the
/// guarantee (the example prints it only with `--diagnostics`, marked `"private": false`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PbpDiagnostics {
    /// Wall-clock seconds of training (excluding loading and evaluation).
    pub seconds: f64,
    /// Step counters (SEP only): clips, failed contributions, repaired cavities.
    pub counts: StepCounts,
    /// Training records clipped into the declared box.
    pub box_clipped: BoxClipCounts,
    /// The realised number of training records.
    pub n_train: usize,
}

/// The training records as the fit sees them, with the model, its public initial state and the
/// transform: the preprocessing half of [`run_pbp`].
#[derive(Debug)]
pub struct Prepared {
    /// The network.
    pub model: PbpModel,
    /// The public, data-independent initial SEP state.
    pub state: SepState,
    /// The transformed training records (what the privacy wall protects).
    pub records: Vec<Labelled>,
    /// The feature / target transform (public for private runs).
    pub scaler: Standardizer,
    /// Records clipped into the declared box (a diagnostic, not noised).
    pub box_clipped: BoxClipCounts,
    /// The public RNG (initialisation done; used next for the non-private visiting order).
    pub rng: ChaCha20Rng,
}

/// Preprocessing of [`run_pbp`]: scaling of `train` and the public initial state.
///
/// # Privacy
/// For a private run (`config.privacy` set) the transform must be declared
/// ([`Scaling::Declared`]): each record is clipped into the declared box and mapped by a fixed
/// affine map, so a record's transformed value depends on that record and public numbers only.
/// The initial state depends only on `config.seed`, the architecture and (private runs) the
/// declared population.
///
/// # Errors
/// [`SepError::MissingPublicInput`] for a private run without declared ranges;
/// [`SepError::DimensionMismatch`] for ranges of the wrong width; [`SepError::InvalidParameter`]
/// for a hidden layer of 0 units; [`SepError::TooLarge`] for a network above
/// [`crate::limits::MAX_MODEL_BYTES`].
pub fn prepare(train: &Dataset, config: &PbpConfig) -> Result<Prepared, SepError> {
    let scaler = match (&config.scaling, config.privacy) {
        (Scaling::FitOnTraining, Some(_)) => {
            return Err(SepError::MissingPublicInput {
                input: "feature and target ranges",
                flag: "--ranges (or --feature-range and --target-range)",
            });
        }
        (Scaling::FitOnTraining, None) => Standardizer::fit(train),
        (Scaling::Declared(ranges), _) => {
            if ranges.features().len() != train.dim() {
                return Err(SepError::DimensionMismatch {
                    what: "declared feature ranges vs features",
                    expected: train.dim(),
                    found: ranges.features().len(),
                });
            }
            Standardizer::from_public_ranges(ranges)
        }
    };
    let model = PbpModel::try_new(train.dim(), &config.hidden)?;
    let (scaled, box_clipped) = scaler.transform_counted(train);
    let records = records(&scaled);
    let mut rng = ChaCha20Rng::seed_from_u64(config.seed);
    // SEP's N: the declared population for a private run, the realised count otherwise.
    let n = config.privacy.map_or(records.len(), |p| p.population());
    let state = model.initial_state(n, &mut rng)?;
    Ok(Prepared {
        model,
        state,
        records,
        scaler,
        box_clipped,
        rng,
    })
}

/// Fits PBP on `train` and evaluates on `test` (both raw units). Returns the publishable result
/// and, separately, the data owner's diagnostics.
///
/// # Errors
/// Data and configuration errors; [`SepError::InvalidNaturalParameters`] if the fit ended with an
/// improper posterior.
pub fn run_pbp(
    train: &Dataset,
    test: &Dataset,
    config: &PbpConfig,
) -> Result<(PbpOutcome, PbpDiagnostics), SepError> {
    run_pbp_observed(train, test, config, &mut |_, _| true)
}

/// [`run_pbp`] calling `observer` after each SEP / DP-SEP epoch with `(epochs done, epochs
/// planned)` (progress bars, cancellation; ADF and EP call it once at the end).
///
/// # Errors
/// As [`run_pbp`]; [`SepError::Interrupted`] when `observer` returns `false`;
/// [`SepError::TooLarge`] if `epochs x N` overflows.
pub fn run_pbp_observed(
    train: &Dataset,
    test: &Dataset,
    config: &PbpConfig,
    observer: &mut crate::sep::EpochObserver<'_>,
) -> Result<(PbpOutcome, PbpDiagnostics), SepError> {
    run_pbp_accounted(train, test, config, observer).map(|(o, d, _)| (o, d))
}

/// [`run_pbp_observed`], also returning the privacy wall's ledger of a private run (`None`
/// otherwise): what a caller saves to replay the run's epsilon (the `dp-bayes fit pbp`
/// command's `ledger.json`).
///
/// # Privacy
/// The ledger holds public settings and the accounting only (one entry per release).
///
/// # Errors
/// As [`run_pbp_observed`].
pub fn run_pbp_accounted(
    train: &Dataset,
    test: &Dataset,
    config: &PbpConfig,
    observer: &mut crate::sep::EpochObserver<'_>,
) -> Result<
    (
        PbpOutcome,
        PbpDiagnostics,
        Option<dp_accountant::Accountant>,
    ),
    SepError,
> {
    if train.dim() != test.dim() {
        return Err(SepError::DimensionMismatch {
            what: "train vs test features",
            expected: train.dim(),
            found: test.dim(),
        });
    }
    let start = Instant::now();
    let Prepared {
        mut model,
        state: state0,
        records: recs,
        scaler,
        box_clipped,
        mut rng,
    } = prepare(train, config)?;
    // Declared population for private runs (see `prepare`), realised count otherwise.
    let n = state0.n();
    let mut counts = StepCounts::default();
    let mut report = None;
    let mut ledger = None;
    let posterior = match (config.method, config.privacy) {
        (Method::Sep, Some(privacy)) => {
            let clip = config.clip.ok_or(SepError::InvalidParameter {
                name: "clip",
                value: f64::NAN,
                reason: "DP-SEP needs a clip norm C",
            })?;
            let dp = DpSepConfig::builder()
                .gamma(config.gamma.unwrap_or(n as f64))
                .epochs(config.epochs)
                .batching(config.batching)
                .clipping(config.clipping)
                .averaging(config.averaging)
                .build()?;
            let sampling = match config.batching {
                Batching::OneRecord => config.sampling,
                batch => crate::dpsep::sampling_for(batch, n)?,
            };
            let plan = WallPlan::builder()
                .population(n)
                .dim(crate::SepModel::dim(&model))
                .budget(privacy.epsilon(), privacy.delta())
                .clip(clip)
                .steps(crate::dpsep::planned_steps(
                    config.batching,
                    config.epochs,
                    n,
                    true,
                )?)
                .sampling(sampling)
                .rng(privacy.noise_rng())
                .accountant(privacy.accountant())
                .build()?;
            let mut wall = FactorWall::new(recs, &plan)?;
            let mut state = state0;
            let (r, diagnostics) =
                run_dp_sep_observed(&mut model, &mut state, &mut wall, &dp, observer)?;
            counts = diagnostics.counts;
            report = Some(r);
            ledger = Some(wall.core().ledger().clone());
            let mut post = state.posterior();
            if !crate::SepModel::is_valid(&model, &post) {
                crate::SepModel::repair(&model, &mut post);
            }
            post
        }
        (_, Some(_)) => {
            return Err(SepError::InvalidParameter {
                name: "method",
                value: f64::NAN,
                reason: "privacy is only available with Method::Sep",
            });
        }
        (Method::Sep, None) => {
            let sep = SepConfig::builder()
                .gamma(config.gamma.unwrap_or(n as f64))
                .clip_norm(config.clip)
                .build()?;
            let mut state = state0;
            counts = run_sep_observed(
                &mut model,
                &mut state,
                &recs,
                &sep,
                config.epochs,
                config.sampling,
                &mut rng,
                observer,
            )?;
            state.posterior()
        }
        (Method::Adf, None) => {
            let mut prior = state0.prior().to_vec();
            let mut post = state0.posterior();
            run_adf(
                &mut model,
                &mut prior,
                &mut post,
                &recs,
                config.epochs,
                &mut rng,
            )?;
            observer(config.epochs, config.epochs);
            post
        }
        (Method::Ep, None) => {
            let mut ep = EpState::with_factor(state0.prior().to_vec(), state0.factor(), n)?;
            run_ep(&mut model, &mut ep, &recs, config.epochs, 1.0, &mut rng)?;
            observer(config.epochs, config.epochs);
            ep.posterior().to_vec()
        }
    };
    let seconds = start.elapsed().as_secs_f64();
    let metrics = evaluate(&model, &posterior, &scaler, test)?;
    Ok((
        PbpOutcome {
            metrics,
            posterior,
            privacy: report,
        },
        PbpDiagnostics {
            seconds,
            counts,
            box_clipped,
            n_train: train.len(),
        },
        ledger,
    ))
}
