//! One PBP experiment on a train/test split: scale features and target (declared public ranges
//! for private runs; the training split's mean and std allowed only for non-private runs), fit
//! with the chosen method, evaluate in original units.

use std::time::Instant;

use dp_core::SamplingScheme;
use rand::SeedableRng;
use rand::rngs::ChaCha20Rng;
use serde::{Deserialize, Serialize};

use super::evaluate::{Metrics, evaluate};
use super::model::{Labelled, PbpModel, records};
use crate::data::{BoxClipCounts, Dataset, PublicRanges, Standardizer};
use crate::dpsep::{DpSepConfig, DpSepReport, run_dp_sep_observed};
use crate::ep::{EpState, run_adf, run_ep};
use crate::error::SepError;
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

/// Settings of one PBP run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PbpConfig {
    /// Inference method.
    pub method: Method,
    /// Hidden layer sizes (`[50]`, or `[100]` for protein).
    pub hidden: Vec<usize>,
    /// Passes over the data.
    pub epochs: usize,
    /// `gamma` of 002 Eq. 4; `None` means `N` (Li et al.'s damping `1/N`).
    pub gamma: Option<f64>,
    /// Clip norm `C` for SEP (`None`: unclipped).
    pub clip: Option<f64>,
    /// Visiting order: [`SamplingScheme::ShuffledEpoch`] or [`SamplingScheme::UniformSingle`]
    /// (for a private run, the wall's sampler and accountant event).
    pub sampling: SamplingScheme,
    /// Seed of the (public) initialisation and visiting order.
    pub seed: u64,
    /// `Some` for DP-SEP (requires `method = Sep` and `clip`).
    pub privacy: Option<Privacy>,
    /// How features and target are scaled.
    pub scaling: Scaling,
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

/// The privacy settings of a DP-SEP run.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Privacy {
    /// Target epsilon.
    pub epsilon: f64,
    /// Target delta.
    pub delta: f64,
    /// Noise RNG (OS entropy by default; a seed only for reproducible experiments).
    pub rng: dp_core::RngPolicy,
    /// Declared public population size `N` of the training data (the example's
    /// `--population`): used for `q = 1/N`, SEP's `N` copies of the factor, the `epochs * N`
    /// steps and the default `gamma`. Never the realised number of records.
    pub population: usize,
}

impl Default for PbpConfig {
    fn default() -> Self {
        Self {
            method: Method::Sep,
            hidden: vec![50],
            epochs: 40,
            gamma: None,
            clip: None,
            sampling: SamplingScheme::ShuffledEpoch,
            seed: 0,
            privacy: None,
            scaling: Scaling::FitOnTraining,
        }
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
/// for zero epochs, a zero population or a hidden layer of 0 units; [`SepError::TooLarge`] for a
/// network above [`crate::limits::MAX_MODEL_BYTES`].
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
                    context: "declared feature ranges vs features",
                    expected: train.dim(),
                    got: ranges.features().len(),
                });
            }
            Standardizer::from_public_ranges(ranges)
        }
    };
    let model = PbpModel::try_new(train.dim(), &config.hidden)?;
    if config.epochs == 0 {
        return Err(SepError::InvalidParameter {
            name: "epochs",
            value: 0.0,
            reason: "must be >= 1",
        });
    }
    if let Some(p) = config.privacy
        && p.population == 0
    {
        return Err(SepError::InvalidParameter {
            name: "population",
            value: 0.0,
            reason: "must be >= 1",
        });
    }
    let (scaled, box_clipped) = scaler.transform_counted(train);
    let records = records(&scaled);
    let mut rng = ChaCha20Rng::seed_from_u64(config.seed);
    // SEP's N: the declared population for a private run, the realised count otherwise.
    let n = config.privacy.map_or(records.len(), |p| p.population);
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
    if train.dim() != test.dim() {
        return Err(SepError::DimensionMismatch {
            context: "train vs test features",
            expected: train.dim(),
            got: test.dim(),
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
    let posterior = match (config.method, config.privacy) {
        (Method::Sep, Some(privacy)) => {
            let clip = config.clip.ok_or(SepError::InvalidParameter {
                name: "clip",
                value: f64::NAN,
                reason: "DP-SEP needs a clip norm C",
            })?;
            let dp = DpSepConfig {
                gamma: config.gamma.unwrap_or(n as f64),
                epochs: config.epochs,
            };
            let plan = WallPlan {
                population: n,
                dim: crate::SepModel::dim(&model),
                epsilon: privacy.epsilon,
                delta: privacy.delta,
                clip,
                steps: crate::limits::check_steps("epochs", config.epochs, n, true)?,
                sampling: config.sampling,
                rng: privacy.rng,
            };
            let mut wall = FactorWall::new(recs, &plan)?;
            let mut state = state0;
            let (r, diagnostics) =
                run_dp_sep_observed(&mut model, &mut state, &mut wall, &dp, observer)?;
            counts = diagnostics.counts;
            report = Some(r);
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
            let sep = SepConfig {
                gamma: config.gamma.unwrap_or(n as f64),
                clip: config.clip,
            };
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
    ))
}
