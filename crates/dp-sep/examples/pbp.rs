//! PBP regression on a UCI folder with SEP / clipped SEP / DP-SEP (or ADF, EP).
//!
//! ```text
//! cargo run --release -p dp-sep --example pbp -- --uci ../shared/data/uci/wine-quality-red \
//!     --split 0 --epsilon 1 --delta 1e-5 --population 1439 --json
//! ```
//! Omitting `--epsilon` runs non-private SEP (clipped if `--clip` is given). Prints one JSON object.
//! A private run uses minibatch DP-SEP with the recommended batch size, damping and clip
//! (`dp_sep::recommended::private_pbp`, chosen once on synthetic data per budget band) unless the flags say
//! otherwise; `--one-record` runs 002's one-record-per-step algorithm.
//!
//! Private runs scale features and target with declared public ranges, never with statistics of
//! the training data: `--ranges FILE` (a ranges file matched by column name, see
//! `dp_sep::data::ranges`), or `--feature-range LO:HI` with `--target-range LO:HI`. Without either,
//! the committed file `crates/dp-sep/ranges/<data set>.json` is used when there is one. Non-private
//! runs without declared ranges standardise with the training split's mean and std (the PBP
//! protocol).
//!
//! Bad input is refused up front with exit status 2 and a message naming the flag or the file
//! and line: see `docs/dp-sep.md` ("Bad input and limits"). Flags with no effect are refused
//! (`--delta`, `--noise-seed`, `--population` without `--epsilon`; `--ranges` together with
//! `--feature-range`); more than `dp_sep::limits::MAX_STEPS` steps need `--allow-long-run`.

#[path = "common/mod.rs"]
mod common;

use std::path::PathBuf;
use std::process::ExitCode;

use common::{ExampleError, at_least_one, finite, flagged, needs, positive};

use clap::Parser;
use dp_accountant::AccountantKind;
use dp_core::RngPolicy;
use dp_sep::SepError;
use dp_sep::data::split_folder::SplitFolder;
use dp_sep::data::{PublicRange, PublicRanges};
use dp_sep::limits;
use dp_sep::pbp::{Method, PbpConfig, PbpModel, PbpPrivacy, Scaling, run_pbp_observed};
use dp_sep::recommended::{Overrides, Resolved, private_pbp};
use dp_sep::{Batching, Clipping, SamplingScheme};

#[derive(Parser, Debug)]
#[command(
    about = "PBP Bayesian neural network regression with (DP-)SEP",
    allow_negative_numbers = true
)]
struct Args {
    /// Split folder of the UCI regression benchmark (data.txt plus split index files, e.g.
    /// ../shared/data/uci/wine-quality-red).
    #[arg(long)]
    uci: PathBuf,
    /// Standard split (0-based).
    #[arg(long, default_value_t = 0)]
    split: usize,
    /// Privacy budget epsilon; omit for non-private SEP.
    #[arg(long)]
    epsilon: Option<f64>,
    /// Privacy parameter delta (only with --epsilon; default 1e-5).
    #[arg(long)]
    delta: Option<f64>,
    /// Clip norm C of the factor's natural parameters. Default with --epsilon: the recommended
    /// C for the run's epsilon (`dp_sep::recommended::private_pbp`, chosen on synthetic data);
    /// none without.
    #[arg(long)]
    clip: Option<f64>,
    /// gamma of 002 Eq. 4. Default: N without --epsilon (SEP damping 1/N, as in the published
    /// SEP runs); with --epsilon the recommended `P N / E` (P factor refreshes over E epochs,
    /// capped at N^2 / S), or 1 with --one-record (002's stated setting; see docs/dp-sep.md).
    #[arg(long)]
    gamma: Option<f64>,
    /// Method for non-private runs: sep, adf, ep.
    #[arg(long, default_value = "sep")]
    method: String,
    /// Epochs (default: the folder's n_epochs).
    #[arg(long)]
    epochs: Option<usize>,
    /// Hidden units (default: the folder's n_hidden).
    #[arg(long)]
    hidden: Option<usize>,
    /// Seed for the public initialisation and the non-private visiting order.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Seed the privacy noise and the private record draws (reproducible experiments only;
    /// default: ChaCha20 from OS entropy).
    #[arg(long)]
    noise_seed: Option<u64>,
    /// Visiting order: `uniform` (`SamplingScheme::UniformSingle`, an independent draw per step;
    /// default with --epsilon) or `shuffled` (`SamplingScheme::ShuffledEpoch`, a permutation per
    /// epoch; default without; accounted without amplification).
    #[arg(long)]
    sampling: Option<String>,
    /// DP-SEP with a Poisson batch of expected size S per step (rate S/N, ceil(N/S) steps per
    /// epoch, per-step accounting). Only with --epsilon; not with --sampling (the batch is the
    /// sampler). Default with --epsilon: the recommended S, capped at N/2.
    #[arg(long)]
    batch_size: Option<usize>,
    /// 002's DP-SEP algorithm: one record per step (replace-one neighbours, default gamma 1)
    /// instead of the recommended Poisson minibatch. Only with --epsilon; not with --batch-size.
    #[arg(long)]
    one_record: bool,
    /// What DP-SEP's wall clips: `value` (each record's factor, 002's) or `innovation` (each
    /// record's factor minus the current shared factor; see docs/dp-sep.md). Only with
    /// --epsilon; not with --one-record. Default: the recommendation's.
    #[arg(long)]
    clipping: Option<String>,
    /// The accountant that calibrates the noise and accounts the run: rdp (default), pld (the
    /// least noise; Poisson batches and shuffled epochs only, refused with --one-record's
    /// uniform draws), moments, zcdp, advanced or linear (docs/accountant.md, section 11). Only
    /// with --epsilon.
    #[arg(long)]
    accountant: Option<String>,
    /// Declared public population size N of the training data (required with --epsilon): used
    /// for the sampling probability 1/N, SEP's N, the epochs * N steps and the default gamma.
    #[arg(long)]
    population: Option<usize>,
    /// Ranges file declaring each column's public range (JSON; see `dp_sep::data::ranges`).
    /// Default: `crates/dp-sep/ranges/<data set>.json` when it exists.
    #[arg(long)]
    ranges: Option<PathBuf>,
    /// One declared public range `LO:HI` for every feature (with --target-range; a negative
    /// `LO` is read as a value: `--feature-range -2:2`).
    #[arg(long, allow_hyphen_values = true)]
    feature_range: Option<String>,
    /// Declared public range `LO:HI` of the target (with --feature-range).
    #[arg(long, allow_hyphen_values = true)]
    target_range: Option<String>,
    /// Also print the data owner's diagnostics (training-record count, timings, clip counts):
    /// data-dependent, not noised, marked `"private": false`.
    #[arg(long)]
    diagnostics: bool,
    /// Print one JSON object (always on; kept for the documented command line).
    #[arg(long)]
    json: bool,
    /// Run even if epochs x N exceeds dp_sep::limits::MAX_STEPS (10^8 steps).
    #[arg(long)]
    allow_long_run: bool,
    /// After the private run, also run NON-private clipped SEP with the same public seed,
    /// scaling, C, gamma and epochs (one record per step, no noise) and report under
    /// "diagnostics" (`"private": false`) the measured KL[q_SEP || p_DPSEP] over the weights
    /// (factorised Gaussians), the effective noise levels s1, s2 of 002's Thm. 4.1 and its bound
    /// (corrected and as printed). The comparison reads the data without noise: for the data
    /// owner / experimenter only, not for publication. Only with --epsilon.
    #[arg(long)]
    compare_sep: bool,
}

/// Default `--delta`.
const DEFAULT_DELTA: f64 = 1e-5;

fn main() -> ExitCode {
    let args = Args::parse();
    common::finish(run(&args))
}

/// The flags that can be checked before reading any file.
fn check(args: &Args) -> Result<(), ExampleError> {
    match args.epsilon {
        Some(epsilon) => {
            common::privacy_flags(epsilon, args.delta.unwrap_or(DEFAULT_DELTA))?;
            if args.one_record && args.batch_size.is_some() {
                return Err(ExampleError::usage(
                    "--one-record",
                    "cannot be combined with --batch-size: choose one record or a batch per step",
                ));
            }
            if args.one_record && args.clipping.is_some() {
                return Err(ExampleError::usage(
                    "--clipping",
                    "cannot be combined with --one-record (002's algorithm clips each record's factor)",
                ));
            }
            if args.sampling.is_some() && !args.one_record {
                return Err(ExampleError::usage(
                    "--sampling",
                    "a private run draws Poisson batches unless --one-record is given: \
                     --sampling has no effect without it",
                ));
            }
            if args.method != "sep" {
                return Err(ExampleError::usage(
                    format!("--method {}", limits::excerpt(&args.method)),
                    "a private run (--epsilon) is only available with --method sep",
                ));
            }
            match args.population {
                Some(p) => {
                    at_least_one("--population", p)?;
                }
                None => {
                    return Err(SepError::MissingPublicInput {
                        input: "population size N",
                        flag: "--population",
                    }
                    .into());
                }
            }
        }
        None => {
            needs(args.batch_size.is_some(), "--batch-size", "--epsilon")?;
            needs(args.one_record, "--one-record", "--epsilon")?;
            needs(args.clipping.is_some(), "--clipping", "--epsilon")?;
            needs(args.accountant.is_some(), "--accountant", "--epsilon")?;
            needs(args.delta.is_some(), "--delta", "--epsilon")?;
            needs(args.noise_seed.is_some(), "--noise-seed", "--epsilon")?;
            needs(args.population.is_some(), "--population", "--epsilon")?;
            needs(args.compare_sep, "--compare-sep", "--epsilon")?;
        }
    }
    if args.ranges.is_some() && (args.feature_range.is_some() || args.target_range.is_some()) {
        return Err(ExampleError::usage(
            "--ranges",
            "cannot be combined with --feature-range / --target-range: declare the ranges one way",
        ));
    }
    if let Some(c) = args.clip {
        positive("--clip", c)?;
    }
    if let Some(g) = args.gamma {
        positive("--gamma", g)?;
    }
    if let Some(e) = args.epochs {
        at_least_one("--epochs", e)?;
    }
    if let Some(h) = args.hidden {
        at_least_one("--hidden", h)?;
    }
    if !matches!(args.method.as_str(), "sep" | "adf" | "ep") {
        return Err(ExampleError::usage(
            format!("--method {}", limits::excerpt(&args.method)),
            "must be sep, adf or ep",
        ));
    }
    if args.method != "sep" && args.clip.is_some() {
        return Err(ExampleError::usage(
            "--clip",
            "has no effect with --method adf or ep",
        ));
    }
    if let Some(b) = args.batch_size {
        at_least_one("--batch-size", b)?;
        if let Some(p) = args.population
            && b > p
        {
            return Err(ExampleError::usage(
                format!("--batch-size {b}"),
                "must be <= --population (the Poisson rate S/N must be <= 1)",
            ));
        }
        if args.sampling.is_some() {
            return Err(ExampleError::usage(
                "--sampling",
                "has no effect with --batch-size (each step draws a Poisson batch)",
            ));
        }
    }
    if let Some(c) = args.clipping.as_deref() {
        parse_clipping(c)?;
    }
    if let Some(a) = args.accountant.as_deref() {
        parse_accountant(a)?;
    }
    if let Some(s) = args.sampling.as_deref()
        && !matches!(s, "uniform" | "shuffled")
    {
        return Err(ExampleError::usage(
            format!("--sampling {}", limits::excerpt(s)),
            "must be uniform or shuffled",
        ));
    }
    Ok(())
}

/// Parses `--clipping`.
fn parse_clipping(text: &str) -> Result<Clipping, ExampleError> {
    text.parse::<Clipping>().map_err(|_| {
        ExampleError::usage(
            format!("--clipping {}", limits::excerpt(text)),
            "must be value or innovation",
        )
    })
}

/// Parses `--accountant` (`rdp`, `pld`, `moments`, `zcdp`, `advanced`, `linear`).
fn parse_accountant(text: &str) -> Result<AccountantKind, ExampleError> {
    text.trim().parse::<AccountantKind>().map_err(|_| {
        ExampleError::usage(
            format!("--accountant {}", limits::excerpt(text)),
            "must be rdp, pld, moments, zcdp, advanced or linear",
        )
    })
}

/// Parses `LO:HI` of `flag`.
fn parse_range(flag: &'static str, text: &str) -> Result<PublicRange, ExampleError> {
    let bad = || {
        ExampleError::usage(
            format!("{flag} {}", limits::excerpt(text)),
            "expected LO:HI with finite LO < HI",
        )
    };
    text.parse::<PublicRange>().map_err(|_| bad())
}

/// The declared public ranges, if any: flags, then `--ranges`, then the committed file.
fn declared_ranges(args: &Args, data: &SplitFolder) -> Result<Option<PublicRanges>, ExampleError> {
    match (&args.feature_range, &args.target_range) {
        (Some(f), Some(t)) => {
            return Ok(Some(PublicRanges::uniform(
                data.all().dim(),
                parse_range("--feature-range", f)?,
                parse_range("--target-range", t)?,
            )));
        }
        (None, None) => {}
        _ => {
            return Err(SepError::MissingPublicInput {
                input: "feature and target ranges (both)",
                flag: "--feature-range and --target-range together",
            }
            .into());
        }
    }
    let committed = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("ranges")
        .join(format!("{}.json", data.name()));
    match &args.ranges {
        Some(path) => Ok(Some(data.public_ranges(path).map_err(flagged("--ranges"))?)),
        None if committed.exists() => Ok(Some(data.public_ranges(&committed)?)),
        None => Ok(None),
    }
}

/// The scheme's name in dp-core's vocabulary (`uniform_single`, `shuffled_epoch`).
fn scheme_name(scheme: SamplingScheme) -> serde_json::Value {
    serde_json::to_value(scheme)
        .ok()
        .and_then(|v| v.get("scheme").cloned())
        .unwrap_or_default()
}

fn run(args: &Args) -> Result<serde_json::Value, ExampleError> {
    check(args)?;
    if !args.uci.exists() {
        return Err(ExampleError::usage(
            format!("--uci {}", args.uci.display()),
            "the data folder is absent (the UCI sets live in ../shared/data/uci)",
        ));
    }
    let data = SplitFolder::load(&args.uci).map_err(flagged("--uci"))?;
    let (train, test) = data
        .split(args.split)
        .map_err(flagged(format!("--split {}", args.split)))?;
    let hidden = args.hidden.unwrap_or(data.n_hidden());
    let epochs = args.epochs.unwrap_or(data.n_epochs());
    at_least_one("--hidden (or n_hidden.txt)", hidden)?;
    at_least_one("--epochs (or n_epochs.txt)", epochs)?;
    // Sizes before anything is allocated: the network and the number of steps.
    PbpModel::try_new(train.dim(), &[hidden]).map_err(flagged(format!("--hidden {hidden}")))?;
    let private = private_settings(args, epochs)?;
    let batching = private.map_or(Batching::OneRecord, |p| p.batching);
    dp_sep::planned_steps(
        batching,
        epochs,
        args.population.unwrap_or(train.len()),
        args.allow_long_run,
    )?;
    let method = match args.method.as_str() {
        "adf" => Method::Adf,
        "ep" => Method::Ep,
        _ => Method::Sep,
    };
    let sampling = match (args.sampling.as_deref(), args.epsilon) {
        (Some("uniform"), _) | (None, Some(_)) => SamplingScheme::UniformSingle,
        _ => SamplingScheme::ShuffledEpoch,
    };
    let privacy = match args.epsilon {
        None => None,
        Some(epsilon) => Some(
            PbpPrivacy::builder()
                .budget(epsilon, args.delta.unwrap_or(DEFAULT_DELTA))
                .rng(
                    args.noise_seed
                        .map_or(RngPolicy::OsEntropy, |seed| RngPolicy::Seeded { seed }),
                )
                .population(args.population.ok_or(SepError::MissingPublicInput {
                    input: "population size N",
                    flag: "--population",
                })?)
                .accountant(
                    args.accountant
                        .as_deref()
                        .map(parse_accountant)
                        .transpose()?
                        .unwrap_or_default(),
                )
                .build()
                .map_err(flagged("--epsilon / --delta / --population"))?,
        ),
    };
    let ranges = declared_ranges(args, &data)?;
    let ranges_source = ranges.as_ref().map(|r| r.source().to_string());
    let scaling = ranges.map_or(Scaling::FitOnTraining, Scaling::Declared);
    // The public settings; --compare-sep's non-private run uses them without privacy and with
    // one record per step.
    let settings = |scaling: Scaling| {
        let mut builder = PbpConfig::builder()
            .method(method)
            .hidden(vec![hidden])
            .epochs(epochs)
            .sampling(sampling)
            .seed(args.seed)
            .scaling(scaling);
        if let Some(gamma) = private.map_or(args.gamma, |p| Some(p.gamma)) {
            builder = builder.gamma(gamma);
        }
        if let Some(clip) = private.map_or(args.clip, |p| Some(p.clip)) {
            builder = builder.clip(clip);
        }
        builder
    };
    let sep_config = args
        .compare_sep
        .then(|| settings(scaling.clone()).build())
        .transpose()
        .map_err(flagged("--compare-sep"))?;
    let mut builder = settings(scaling)
        .batching(batching)
        .clipping(private.map_or(Clipping::Value, |p| p.clipping));
    if let Some(privacy) = privacy {
        builder = builder.privacy(privacy);
    }
    let config = builder.build().map_err(|e| match e {
        e @ SepError::AccountantUnsupported { .. } => flagged("--accountant")(e),
        e => e.into(),
    })?;
    let bar = common::progress(epochs);
    common::stop_on_ctrl_c()?;
    let (out, diagnostics) = run_pbp_observed(&train, &test, &config, &mut |done, _| {
        bar.set_position(done as u64);
        common::keep_going()
    })?;
    bar.finish_and_clear();
    // Publishable: public settings, the accounting, and held-out metrics computed with the
    // (for private runs, declared public) transform.
    let mut json = serde_json::json!({
        "dataset": data.name(),
        "split": args.split,
        "method": args.method,
        "epsilon": args.epsilon.map_or(serde_json::Value::from("inf"), serde_json::Value::from),
        "clip": config.clip().map_or(serde_json::Value::from("none"), finite),
        "gamma": config.gamma().unwrap_or(train.len() as f64),
        "epochs": config.epochs(),
        "hidden": config.hidden(),
        "test_rmse": finite(out.metrics.rmse),
        "test_log_likelihood": finite(out.metrics.log_likelihood),
        // The wall's sampler: Poisson with --batch-size (the one-record visiting order otherwise).
        "sampling": scheme_name(match (config.batching(), config.privacy()) {
            (Batching::OneRecord, _) | (_, None) => sampling,
            (batch, Some(p)) => dp_sep::sampling_for(batch, p.population())?,
        }),
        "batch_size": match config.batching() {
            Batching::OneRecord => serde_json::Value::from("one record"),
            batch => serde_json::Value::from(batch.expected_batch_size()),
        },
        "clipping": config.clipping().name(),
        "scaling": ranges_source.map_or("training mean and std (non-private)".to_string(), |s| format!("declared public ranges: {s}")),
    });
    if let (Some(p), Some(report)) = (privacy, out.privacy.as_ref()) {
        json["delta"] = p.delta().into();
        json["population"] = report.population.into();
        json["noise_multiplier"] = finite(report.noise_multiplier);
        json["theta_noise_std"] = finite(report.theta_noise_std);
        json["epsilon_accounted"] = finite(report.epsilon);
        json["accountant"] = report.accountant.name().into();
        json["noise_rng"] = p.noise_rng().describe().into();
        if let Some(settings) = private {
            json["recommended_settings"] = settings.note("private_pbp").into();
        }
    }
    if args.diagnostics {
        json["diagnostics"] = serde_json::json!({
            "private": false,
            "note": "data-dependent and not noised: for the data owner, not for publication",
            "n_train": diagnostics.n_train,
            "seconds": diagnostics.seconds,
            "counts": diagnostics.counts,
            "box_clipped": diagnostics.box_clipped,
        });
    }
    if let (Some(sep_config), Some(report)) = (sep_config, out.privacy.as_ref()) {
        let fields = compare_sep(&train, &test, &sep_config, &out.posterior, report)?;
        common::add_diagnostics(&mut json, fields);
    }
    Ok(json)
}

/// A factorised Gaussian over the weights: means and variances from PBP's natural parameters
/// (`(h, k)` per weight, then the noise Gamma's two).
fn weights(posterior: &[f64]) -> Result<(Vec<f64>, Vec<f64>), SepError> {
    if posterior.len() < 2 || !posterior.len().is_multiple_of(2) {
        return Err(SepError::DimensionMismatch {
            what: "PBP posterior (2 per weight plus 2)",
            expected: 2,
            found: posterior.len(),
        });
    }
    let w = posterior.len() / 2 - 1;
    Ok(posterior[..2 * w]
        .chunks_exact(2)
        .map(|hk| {
            let v = -0.5 / hk[1];
            (hk[0] * v, v)
        })
        .unzip())
}

/// `--compare-sep`: non-private clipped SEP with the private run's public settings, and the
/// measured KL over the weights beside 002's Thm. 4.1 (`O(d)` diagonal forms: the posterior is
/// factorised, `Sigma_q` diagonal).
///
/// # Privacy
/// Reads the training records without noise: the result goes only into the non-private
/// diagnostics.
fn compare_sep(
    train: &dp_sep::data::Dataset,
    test: &dp_sep::data::Dataset,
    config: &PbpConfig,
    private: &[f64],
    report: &dp_sep::DpSepReport,
) -> Result<serde_json::Value, ExampleError> {
    use dp_sep::kl_bound as kb;
    let flag = || flagged("--compare-sep");
    let (sep, diagnostics) =
        run_pbp_observed(train, test, config, &mut |_, _| common::keep_going()).map_err(flag())?;
    let (mu_q, var_q) = weights(&sep.posterior).map_err(flag())?;
    let (mu_p, var_p) = weights(private).map_err(flag())?;
    let kl = kb::gaussian_kl_diagonal(&mu_q, &var_q, &mu_p, &var_p).map_err(flag())?;
    let gamma = config.gamma().unwrap_or(report.population as f64);
    let n = report.population as f64;
    let theta_std = kb::posterior_noise_std(
        report.theta_noise_std,
        (report.expected_batch_size * gamma / (n * n)).min(1.0),
        report.releases,
    )
    .map_err(flag())?;
    let levels = kb::delta_method_noise_diagonal(&mu_q, &var_q, theta_std).map_err(flag())?;
    let x = var_p
        .iter()
        .zip(&var_q)
        .map(|(p, q)| p / q)
        .fold(f64::INFINITY, f64::min);
    let bound = common::kl_bound_json(
        kl,
        x,
        |a| kb::kl_tail_bound_diagonal(levels.s1, levels.s2, &var_q, a),
        |a, tau, upper| {
            kb::theorem_4_1_as_printed_diagonal(levels.s1, levels.s2, &var_q, a, tau, upper)
        },
    );
    Ok(serde_json::json!({
        "kl_dpsep_to_sep": finite(kl),
        "kl_over": format!("the {} weights' factorised Gaussians (q = clipped SEP, p = DP-SEP); the noise Gamma is left out", mu_q.len()),
        "s1": finite(levels.s1),
        "s2": finite(levels.s2),
        "kl_first_order_expected": finite(levels.first_order_kl),
        "theta_noise_std_posterior": finite(theta_std),
        "noise_mapping": "first-order (delta-method) approximation: s1, s2 match E[e^T P e] and E||P^1/2 E P^1/2||_F^2 of DP-SEP's accumulated natural-parameter noise (dp_sep::kl_bound::delta_method_noise_diagonal); clipping and repair ignored",
        "kl_bound": bound,
        "sep_run": {
            "method": "sep-clipped",
            "clip": config.clip().map_or(serde_json::Value::from("none"), finite),
            "gamma": gamma,
            "n": diagnostics.n_train,
            "epochs": config.epochs(),
            "sampling": scheme_name(config.sampling()),
            "test_rmse": finite(sep.metrics.rmse),
            "test_log_likelihood": finite(sep.metrics.log_likelihood),
            "seconds": diagnostics.seconds,
            "counts": diagnostics.counts,
        },
    }))
}

/// The effective private settings (`None` for a non-private run): the caller's flags where given,
/// the recommendation for the run's epsilon (`dp_sep::recommended::private_pbp`) otherwise.
fn private_settings(args: &Args, epochs: usize) -> Result<Option<Resolved>, ExampleError> {
    let (Some(epsilon), Some(n)) = (args.epsilon, args.population) else {
        return Ok(None);
    };
    let overrides = Overrides {
        batch_size: args.batch_size,
        gamma: args.gamma,
        clip: args.clip,
        one_record: args.one_record,
    };
    let clipping = args.clipping.as_deref().map(parse_clipping).transpose()?;
    private_pbp(epsilon)
        .resolve(n, epochs, &overrides)
        .map(|r| Some(r.with_clipping(clipping)))
        .map_err(flagged("--batch-size / --population / --epochs"))
}
