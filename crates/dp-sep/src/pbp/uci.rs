//! One PBP run on a UCI split folder, with the settings of the `pbp` example's flags: the one
//! home of what `--epsilon` alone means (the recommendation of [`crate::recommended`]), which
//! public ranges scale the data, the visiting order, and the publishable JSON the example prints.
//! The example parses its flags into a [`UciPbpRequest`]; `cargo xtask bench` builds the same
//! request in its own process, so a cell of its tables and the example's command line give the
//! same numbers bit for bit.
//!
//! # Example
//! ```no_run
//! use dp_sep::pbp::uci::{UciPbpRequest, run_uci_pbp};
//! let mut request = UciPbpRequest::new("../shared/data/uci/wine-quality-red");
//! request.epsilon = Some(1.0);
//! request.population = Some(1439);
//! let run = run_uci_pbp(&request, &mut |_, _| true)?;
//! println!("{}", run.to_json());
//! # Ok::<(), dp_sep::pbp::uci::UciPbpError>(())
//! ```

use std::path::PathBuf;

use dp_accountant::AccountantKind;
use dp_core::{RngPolicy, SamplingScheme};
use serde_json::{Value, json};

use super::{Method, PbpConfig, PbpDiagnostics, PbpModel, PbpOutcome, PbpPrivacy, Scaling};
use crate::data::split_folder::SplitFolder;
use crate::data::{Dataset, PublicRange, PublicRanges};
use crate::dpsep::{Batching, Clipping};
use crate::error::SepError;
use crate::recommended::{Overrides, Resolved, private_pbp_for};

/// `delta` of a private run when the request leaves it unset (the example's `--delta` default).
pub const DEFAULT_DELTA: f64 = 1e-5;

/// The directory of the committed ranges files of the UCI sets (`crates/dp-sep/ranges`), used
/// when a request declares no ranges ([`RangeDeclaration::CommittedIn`]).
pub fn committed_ranges_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("ranges")
}

/// Where a run's declared public ranges come from.
#[derive(Clone, Debug, PartialEq)]
pub enum RangeDeclaration {
    /// A ranges file matched by column name (`--ranges FILE`; see [`crate::data::ranges`]).
    File(PathBuf),
    /// One range for every feature and one for the target (`--feature-range LO:HI
    /// --target-range LO:HI`).
    Uniform {
        /// Every feature's range.
        feature: PublicRange,
        /// The target's range.
        target: PublicRange,
    },
    /// The file `<dir>/<data set>.json` when it exists (no ranges flag); none otherwise, and
    /// then a non-private run standardises with the training split's mean and std.
    CommittedIn(PathBuf),
    /// Ranges the caller has read already (the `dp-bayes fit pbp` command, which also keeps
    /// the column names).
    Declared(PublicRanges),
    /// None: a non-private run standardises with the training split's mean and std (a private
    /// run is refused).
    Undeclared,
}

/// The settings of one run: the `pbp` example's flags, parsed. `None` means the example's
/// default (documented on each field).
#[derive(Clone, Debug, PartialEq)]
pub struct UciPbpRequest {
    /// The split folder (`--uci`).
    pub uci: PathBuf,
    /// The standard split, 0-based (`--split`).
    pub split: usize,
    /// The budget (`--epsilon`); `None` runs non-private `method`.
    pub epsilon: Option<f64>,
    /// `--delta` (private runs; default [`DEFAULT_DELTA`]).
    pub delta: Option<f64>,
    /// Clip norm C (`--clip`; private default: the recommendation's, non-private: unclipped).
    pub clip: Option<f64>,
    /// gamma of 002 Eq. 4 (`--gamma`; private default: the recommendation's, non-private: N).
    pub gamma: Option<f64>,
    /// `--method` (private runs: [`Method::Sep`] only).
    pub method: Method,
    /// `--epochs` (default: the folder's `n_epochs`).
    pub epochs: Option<usize>,
    /// `--hidden` (default: the folder's `n_hidden`).
    pub hidden: Option<usize>,
    /// Seed of the public initialisation and the non-private visiting order (`--seed`).
    pub seed: u64,
    /// Seed of the privacy noise (`--noise-seed`; default: ChaCha20 from OS entropy).
    pub noise_seed: Option<u64>,
    /// The visiting order of one record per step (`--sampling`; default: uniform draws when
    /// private, shuffled epochs otherwise).
    pub sampling: Option<SamplingScheme>,
    /// Expected Poisson batch size S (`--batch-size`; private default: the recommendation's).
    pub batch_size: Option<usize>,
    /// 002's one record per step (`--one-record`).
    pub one_record: bool,
    /// What the wall clips (`--clipping`; default: the recommendation's).
    pub clipping: Option<Clipping>,
    /// The accountant (`--accountant`; default RDP).
    pub accountant: Option<AccountantKind>,
    /// Iterate averaging of DP-SEP's final factor over the last fraction of the steps
    /// (`--average-tail F`; default none: the last iterate). Post-processing, no privacy cost.
    pub average_tail: Option<f64>,
    /// Declared public population N of the training split (`--population`; required when
    /// private).
    pub population: Option<usize>,
    /// The declared ranges (`--ranges`, `--feature-range` / `--target-range`, or none).
    pub ranges: RangeDeclaration,
    /// Allow more than [`crate::limits::MAX_STEPS`] steps (`--allow-long-run`).
    pub allow_long_run: bool,
}

impl UciPbpRequest {
    /// The example's defaults for the folder `uci`: split 0, non-private SEP, seed 0, the
    /// committed ranges ([`committed_ranges_dir`]) when there are some.
    pub fn new(uci: impl Into<PathBuf>) -> Self {
        Self {
            uci: uci.into(),
            split: 0,
            epsilon: None,
            delta: None,
            clip: None,
            gamma: None,
            method: Method::Sep,
            epochs: None,
            hidden: None,
            seed: 0,
            noise_seed: None,
            sampling: None,
            batch_size: None,
            one_record: false,
            clipping: None,
            accountant: None,
            average_tail: None,
            population: None,
            ranges: RangeDeclaration::CommittedIn(committed_ranges_dir()),
            allow_long_run: false,
        }
    }

    /// The effective private settings for a run of `epochs` epochs (`None` when non-private):
    /// the request's where given, the recommendation for its epsilon and declared population
    /// ([`crate::recommended::private_pbp_for`]) otherwise. With whitened clipping and no clip
    /// given, the clip comes from the budget ([`crate::recommended::whitened_clip`]).
    ///
    /// # Errors
    /// [`SepError::InvalidParameter`] for a batch size above the population or other settings
    /// the recommendation cannot resolve; an invalid budget or a failed calibration
    /// ([`SepError::Wall`]).
    pub fn private_settings(&self, epochs: usize) -> Result<Option<Resolved>, SepError> {
        let (Some(epsilon), Some(n)) = (self.epsilon, self.population) else {
            return Ok(None);
        };
        let overrides = Overrides {
            batch_size: self.batch_size,
            gamma: self.gamma,
            clip: self.clip,
            one_record: self.one_record,
        };
        let budget = dp_accountant::Budget::new(epsilon, self.delta.unwrap_or(DEFAULT_DELTA))
            .map_err(dp_core::CoreError::from)?;
        private_pbp_for(epsilon, n)
            .resolve_for_budget(
                n,
                epochs,
                &overrides,
                self.clipping,
                &budget,
                self.accountant.unwrap_or_default(),
            )
            .map(Some)
    }
}

/// Which setting of a [`UciPbpRequest`] an error came from (the example names the flag).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum UciInput {
    /// The folder (`--uci`).
    Folder,
    /// The split (`--split`).
    Split,
    /// The hidden layer's width (`--hidden` or the folder's `n_hidden.txt`), as resolved.
    Hidden(usize),
    /// Batch size, population and epochs resolved against the recommendation.
    Settings,
    /// Budget and population of the privacy settings.
    Privacy,
    /// The ranges file given (`--ranges`).
    Ranges,
    /// The accountant, for a sampler it cannot account.
    Accountant,
    /// None in particular (the run itself, a committed file, the step count).
    Run,
}

/// A failed [`run_uci_pbp`]: the library's error and the setting it came from.
#[derive(Debug, thiserror::Error)]
#[error("{source}")]
pub struct UciPbpError {
    /// The setting the error is attributed to.
    pub input: UciInput,
    /// The library's error.
    #[source]
    pub source: SepError,
}

fn at(input: UciInput) -> impl FnOnce(SepError) -> UciPbpError {
    move |source| UciPbpError { input, source }
}

impl From<SepError> for UciPbpError {
    fn from(source: SepError) -> Self {
        at(UciInput::Run)(source)
    }
}

/// A finished run: what it was given, how it was configured and what it gave.
#[derive(Debug)]
pub struct UciPbpRun {
    /// The request.
    pub request: UciPbpRequest,
    /// The folder's name (its directory name, without a trailing `data`).
    pub dataset: String,
    /// The split's training rows (raw units; private data).
    pub train: Dataset,
    /// The split's test rows (raw units).
    pub test: Dataset,
    /// The configuration that ran.
    pub config: PbpConfig,
    /// The visiting order of one record per step.
    pub visiting_order: SamplingScheme,
    /// The wall's sampler: Poisson with a batch size, the visiting order otherwise.
    pub sampling: SamplingScheme,
    /// The private settings and where they came from (`None` when non-private).
    pub resolved: Option<Resolved>,
    /// Where the declared ranges came from (`None`: training mean and std, non-private).
    pub ranges_source: Option<String>,
    /// The publishable result.
    pub outcome: PbpOutcome,
    /// The data owner's diagnostics (not noised).
    pub diagnostics: PbpDiagnostics,
    /// The privacy wall's ledger of a private run (public: settings and accounting), for
    /// replay; `None` when non-private.
    pub ledger: Option<dp_accountant::Accountant>,
}

/// The declared public ranges of `request` for `data`, if any.
fn declared_ranges(
    request: &UciPbpRequest,
    data: &SplitFolder,
) -> Result<Option<PublicRanges>, UciPbpError> {
    match &request.ranges {
        RangeDeclaration::Uniform { feature, target } => Ok(Some(PublicRanges::uniform(
            data.all().dim(),
            *feature,
            *target,
        ))),
        RangeDeclaration::File(path) => Ok(Some(
            data.public_ranges(path).map_err(at(UciInput::Ranges))?,
        )),
        RangeDeclaration::Declared(ranges) => Ok(Some(ranges.clone())),
        RangeDeclaration::Undeclared => Ok(None),
        RangeDeclaration::CommittedIn(dir) => {
            let committed = dir.join(format!("{}.json", data.name()));
            if committed.exists() {
                Ok(Some(data.public_ranges(&committed)?))
            } else {
                Ok(None)
            }
        }
    }
}

/// Runs `request`: loads the folder and split, resolves the private settings, scales with the
/// declared ranges (or, non-private only, the training mean and std) and fits with
/// [`super::run_pbp_observed`], calling `observer` after each epoch.
///
/// # Privacy
/// As [`super::run_pbp_observed`]: a private run needs a declared population and declared
/// ranges, and its posterior and test metrics are `(epsilon, delta)`-DP with the report's
/// epsilon. [`UciPbpRun::to_json`] holds public settings, the accounting and held-out metrics
/// only; [`UciPbpRun::diagnostics_json`] and the training rows are the data owner's.
///
/// # Errors
/// The library's errors, attributed to the setting they came from ([`UciInput`]).
pub fn run_uci_pbp(
    request: &UciPbpRequest,
    observer: &mut crate::sep::EpochObserver<'_>,
) -> Result<UciPbpRun, UciPbpError> {
    let data = SplitFolder::load(&request.uci).map_err(at(UciInput::Folder))?;
    run_uci_pbp_on(&data, request, observer)
}

/// [`run_uci_pbp`] on a folder the caller has loaded already (`request.uci` is then only
/// recorded).
///
/// # Privacy
/// As [`run_uci_pbp`].
///
/// # Errors
/// As [`run_uci_pbp`].
pub fn run_uci_pbp_on(
    data: &SplitFolder,
    request: &UciPbpRequest,
    observer: &mut crate::sep::EpochObserver<'_>,
) -> Result<UciPbpRun, UciPbpError> {
    let (train, test) = data.split(request.split).map_err(at(UciInput::Split))?;
    let hidden = request.hidden.unwrap_or(data.n_hidden());
    let epochs = request.epochs.unwrap_or(data.n_epochs());
    for (name, value) in [("hidden", hidden), ("epochs", epochs)] {
        if value == 0 {
            return Err(at(UciInput::Hidden(hidden))(SepError::InvalidParameter {
                name,
                value: 0.0,
                reason: "must be >= 1 (the flag, or the folder's n_hidden.txt / n_epochs.txt)",
            }));
        }
    }
    // Sizes before anything is allocated: the network and the number of steps.
    PbpModel::try_new(train.dim(), &[hidden]).map_err(at(UciInput::Hidden(hidden)))?;
    let private = request
        .private_settings(epochs)
        .map_err(at(UciInput::Settings))?;
    let batching = private.map_or(Batching::OneRecord, |p| p.batching);
    crate::dpsep::planned_steps(
        batching,
        epochs,
        request.population.unwrap_or(train.len()),
        request.allow_long_run,
    )?;
    let visiting_order = match (request.sampling, request.epsilon) {
        (Some(s), _) => s,
        (None, Some(_)) => SamplingScheme::UniformSingle,
        (None, None) => SamplingScheme::ShuffledEpoch,
    };
    let privacy = match request.epsilon {
        None => None,
        Some(epsilon) => Some(
            PbpPrivacy::builder()
                .budget(epsilon, request.delta.unwrap_or(DEFAULT_DELTA))
                .rng(
                    request
                        .noise_seed
                        .map_or(RngPolicy::OsEntropy, |seed| RngPolicy::Seeded { seed }),
                )
                .population(request.population.ok_or(SepError::MissingPublicInput {
                    input: "population size N",
                    flag: "--population",
                })?)
                .accountant(request.accountant.unwrap_or_default())
                .build()
                .map_err(at(UciInput::Privacy))?,
        ),
    };
    let ranges = declared_ranges(request, data)?;
    let ranges_source = ranges.as_ref().map(|r| r.source().to_string());
    let mut builder = PbpConfig::builder()
        .method(request.method)
        .hidden(vec![hidden])
        .epochs(epochs)
        .sampling(visiting_order)
        .seed(request.seed)
        .scaling(ranges.map_or(Scaling::FitOnTraining, Scaling::Declared));
    if let Some(gamma) = private.map_or(request.gamma, |p| Some(p.gamma)) {
        builder = builder.gamma(gamma);
    }
    if let Some(clip) = private.map_or(request.clip, |p| Some(p.clip)) {
        builder = builder.clip(clip);
    }
    builder = builder
        .batching(batching)
        .clipping(private.map_or(Clipping::Value, |p| p.clipping));
    if let Some(fraction) = request.average_tail {
        builder = builder.averaging(crate::dpsep::Averaging::tail(fraction)?);
    }
    if let Some(privacy) = privacy {
        builder = builder.privacy(privacy);
    }
    let config = builder.build().map_err(|e| match e {
        e @ SepError::AccountantUnsupported { .. } => at(UciInput::Accountant)(e),
        e => e.into(),
    })?;
    let sampling = match (config.batching(), config.privacy()) {
        (Batching::OneRecord, _) | (_, None) => visiting_order,
        (batch, Some(p)) => crate::dpsep::sampling_for(batch, p.population())?,
    };
    let (outcome, diagnostics, ledger) =
        super::run_pbp_accounted(&train, &test, &config, observer)?;
    Ok(UciPbpRun {
        request: request.clone(),
        dataset: data.name().to_string(),
        train,
        test,
        config,
        visiting_order,
        sampling,
        resolved: private,
        ranges_source,
        outcome,
        diagnostics,
        ledger,
    })
}

/// A JSON number, or for a non-finite value an explicit string (never `null`).
fn finite(x: f64) -> Value {
    if x.is_finite() {
        x.into()
    } else if x == f64::INFINITY {
        "inf".into()
    } else {
        format!("non-finite ({x})").into()
    }
}

/// The scheme's name in dp-core's vocabulary (`uniform_single`, `shuffled_epoch`, ...).
pub fn scheme_name(scheme: SamplingScheme) -> Value {
    serde_json::to_value(scheme)
        .ok()
        .and_then(|v| v.get("scheme").cloned())
        .unwrap_or_default()
}

impl UciPbpRun {
    /// The publishable JSON object the `pbp` example prints (its documented keys: `dataset`,
    /// `split`, `method`, `epsilon`, `clip`, `gamma`, `epochs`, `hidden`, `test_rmse`,
    /// `test_log_likelihood`, `sampling`, `batch_size`, `clipping`, `scaling`; `average_tail` when averaging; private runs add
    /// `delta`, `population`, `noise_multiplier`, `theta_noise_std`, `epsilon_accounted`,
    /// `accountant`, `noise_rng`, `recommended_settings`). A non-finite number is written as a
    /// string, never `null`.
    ///
    /// # Privacy
    /// Public settings, the accounting and held-out metrics computed with the (for private runs,
    /// declared public) transform.
    pub fn to_json(&self) -> Value {
        let config = &self.config;
        let mut json = json!({
            "dataset": self.dataset,
            "split": self.request.split,
            "method": serde_json::to_value(self.request.method).unwrap_or_default(),
            "epsilon": self.request.epsilon.map_or(Value::from("inf"), Value::from),
            "clip": config.clip().map_or(Value::from("none"), finite),
            "gamma": config.gamma().unwrap_or(self.train.len() as f64),
            "epochs": config.epochs(),
            "hidden": config.hidden(),
            "test_rmse": finite(self.outcome.metrics.rmse),
            "test_log_likelihood": finite(self.outcome.metrics.log_likelihood),
            "sampling": scheme_name(self.sampling),
            "batch_size": match config.batching() {
                Batching::OneRecord => Value::from("one record"),
                batch => Value::from(batch.expected_batch_size()),
            },
            "clipping": config.clipping().name(),
            "scaling": self.ranges_source.as_ref().map_or_else(
                || "training mean and std (non-private)".to_string(),
                |s| format!("declared public ranges: {s}"),
            ),
        });
        if let crate::dpsep::Averaging::Tail { fraction } = config.averaging() {
            json["average_tail"] = fraction.into();
        }
        if let (Some(p), Some(report)) = (config.privacy(), self.outcome.privacy.as_ref()) {
            json["delta"] = p.delta().into();
            json["population"] = report.population.into();
            json["noise_multiplier"] = finite(report.noise_multiplier);
            json["theta_noise_std"] = finite(report.theta_noise_std);
            json["epsilon_accounted"] = finite(report.epsilon);
            json["accountant"] = report.accountant.name().into();
            json["noise_rng"] = p.noise_rng().describe().into();
            if let Some(settings) = self.resolved {
                json["recommended_settings"] = settings.note("private_pbp_for").into();
            }
        }
        json
    }

    /// The data owner's diagnostics (training-record count, timings, clip counts), marked
    /// `"private": false`.
    ///
    /// # Privacy
    /// Data-dependent and not noised: not for publication.
    pub fn diagnostics_json(&self) -> Value {
        let d = &self.diagnostics;
        json!({
            "private": false,
            "note": "data-dependent and not noised: for the data owner, not for publication",
            "n_train": d.n_train,
            "seconds": d.seconds,
            "counts": d.counts,
            "box_clipped": d.box_clipped,
        })
    }
}
