//! PBP regression on a UCI folder with SEP / clipped SEP / DP-SEP (or ADF, EP).
//!
//! ```text
//! cargo run --release -p dp-sep --example pbp -- --uci ../shared/data/uci/wine-quality-red \
//!     --split 0 --epsilon 1 --delta 1e-5 --population 1439 --json
//! ```
//! Omitting `--epsilon` runs non-private SEP (clipped if `--clip` is given). Prints one JSON object.
//! The run itself is the library's: the flags become a `dp_sep::pbp::uci::UciPbpRequest`, run by
//! `run_uci_pbp` (as `cargo xtask bench` and `dp-bayes fit pbp` do), printed by `UciPbpRun::to_json`.
//! A private run uses minibatch DP-SEP with the recommended batch size, damping and clip
//! (`dp_sep::recommended::private_pbp_for`, chosen once on synthetic data per budget and
//! population band; the population is `--population`) unless the flags say
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
use dp_sep::data::PublicRange;
use dp_sep::pbp::uci::{
    DEFAULT_DELTA, RangeDeclaration, UciInput, UciPbpError, UciPbpRequest, committed_ranges_dir,
    run_uci_pbp, scheme_name,
};
use dp_sep::pbp::{Method, PbpConfig, run_pbp_observed};
use dp_sep::{Clipping, SamplingScheme, SepError, limits};

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
    /// Clip norm C of the factor's natural parameters (with whitened clipping: in the
    /// posterior's metric, scaled by N). Default with --epsilon: the recommended C for the run's
    /// epsilon and population (`dp_sep::recommended::private_pbp_for`, chosen on synthetic data;
    /// with whitened clipping `dp_sep::recommended::whitened_clip` from the budget); none without.
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
    /// What DP-SEP's wall clips: `value` (each record's factor, 002's), `innovation` (each
    /// record's factor minus the current shared factor) or `whitened` (that innovation in the
    /// posterior's metric, the clip from the budget unless --clip is given; see docs/dp-sep.md).
    /// Only with --epsilon; not with --one-record. Default: the recommendation's (whitened from
    /// --population 1200 on).
    #[arg(long)]
    clipping: Option<String>,
    /// Iterate averaging: report the average of DP-SEP's shared factor over the last fraction
    /// F of the steps (0 < F <= 1) instead of the last iterate. Post-processing of the
    /// releases: no privacy cost. Only with --epsilon. Default: none (the last iterate).
    #[arg(long, value_name = "F")]
    average_tail: Option<f64>,
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
            needs(args.average_tail.is_some(), "--average-tail", "--epsilon")?;
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
    // --compare-sep's noise mapping assumes noise isotropic in the natural parameters; whitened
    // clipping (given, or the recommendation for this budget and population) puts it in the
    // posterior's metric instead. Refused before any record is read or any budget spent.
    if let (true, Some(epsilon), Some(n), false) = (
        args.compare_sep,
        args.epsilon,
        args.population,
        args.one_record,
    ) {
        let clipping = match args.clipping.as_deref() {
            Some(c) => parse_clipping(c)?,
            None => dp_sep::recommended::private_pbp_for(epsilon, n).clipping,
        };
        if clipping == Clipping::Whitened {
            return Err(ExampleError::usage(
                "--compare-sep",
                "its noise mapping assumes noise isotropic in the natural parameters; with \
                 whitened clipping (given or recommended for this epsilon and --population) \
                 pass --clipping innovation or value to compare",
            ));
        }
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
            "must be value, innovation or whitened",
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

/// The declared public ranges: the flags, else `--ranges`, else the committed file.
fn range_declaration(args: &Args) -> Result<RangeDeclaration, ExampleError> {
    match (&args.feature_range, &args.target_range, &args.ranges) {
        (Some(f), Some(t), _) => Ok(RangeDeclaration::Uniform {
            feature: parse_range("--feature-range", f)?,
            target: parse_range("--target-range", t)?,
        }),
        (None, None, Some(path)) => Ok(RangeDeclaration::File(path.clone())),
        (None, None, None) => Ok(RangeDeclaration::CommittedIn(committed_ranges_dir())),
        _ => Err(SepError::MissingPublicInput {
            input: "feature and target ranges (both)",
            flag: "--feature-range and --target-range together",
        }
        .into()),
    }
}

/// The flags as the library's request (after [`check`]).
fn request(args: &Args) -> Result<UciPbpRequest, ExampleError> {
    Ok(UciPbpRequest {
        uci: args.uci.clone(),
        split: args.split,
        epsilon: args.epsilon,
        delta: args.delta,
        clip: args.clip,
        gamma: args.gamma,
        method: match args.method.as_str() {
            "adf" => Method::Adf,
            "ep" => Method::Ep,
            _ => Method::Sep,
        },
        epochs: args.epochs,
        hidden: args.hidden,
        seed: args.seed,
        noise_seed: args.noise_seed,
        sampling: match args.sampling.as_deref() {
            Some("uniform") => Some(SamplingScheme::UniformSingle),
            Some(_) => Some(SamplingScheme::ShuffledEpoch),
            None => None,
        },
        batch_size: args.batch_size,
        one_record: args.one_record,
        clipping: args.clipping.as_deref().map(parse_clipping).transpose()?,
        average_tail: args.average_tail,
        accountant: args
            .accountant
            .as_deref()
            .map(parse_accountant)
            .transpose()?,
        population: args.population,
        ranges: range_declaration(args)?,
        allow_long_run: args.allow_long_run,
    })
}

/// The library's error, attributed to the flag it came from.
fn attributed(args: &Args, e: UciPbpError) -> ExampleError {
    let flag = match e.input {
        UciInput::Folder => "--uci".to_string(),
        UciInput::Split => format!("--split {}", args.split),
        UciInput::Hidden(h) => format!("--hidden {h}"),
        UciInput::Settings => "--batch-size / --population / --epochs".into(),
        UciInput::Privacy => "--epsilon / --delta / --population".into(),
        UciInput::Ranges => "--ranges".into(),
        UciInput::Accountant => "--accountant".into(),
        _ => return ExampleError::Sep(e.source),
    };
    flagged(flag)(e.source)
}

fn run(args: &Args) -> Result<serde_json::Value, ExampleError> {
    check(args)?;
    if !args.uci.exists() {
        return Err(ExampleError::usage(
            format!("--uci {}", args.uci.display()),
            "the data folder is absent (the UCI sets live in ../shared/data/uci)",
        ));
    }
    let request = request(args)?;
    let bar = common::progress(0);
    common::stop_on_ctrl_c()?;
    let run = run_uci_pbp(&request, &mut |done, planned| {
        bar.set_length(planned as u64);
        bar.set_position(done as u64);
        common::keep_going()
    })
    .map_err(|e| attributed(args, e))?;
    bar.finish_and_clear();
    // Publishable: public settings, the accounting, and held-out metrics.
    let mut json = run.to_json();
    if args.diagnostics {
        json["diagnostics"] = run.diagnostics_json();
    }
    if args.compare_sep
        && let Some(report) = run.outcome.privacy.as_ref()
    {
        // Non-private clipped SEP with the private run's public settings, one record per step.
        let c = &run.config;
        let mut sep = PbpConfig::builder()
            .method(c.method())
            .hidden(c.hidden().to_vec())
            .epochs(c.epochs())
            .sampling(c.sampling())
            .seed(c.seed())
            .scaling(c.scaling().clone());
        if let Some(gamma) = c.gamma() {
            sep = sep.gamma(gamma);
        }
        if let Some(clip) = c.clip() {
            sep = sep.clip(clip);
        }
        let sep_config = sep.build().map_err(flagged("--compare-sep"))?;
        let fields = compare_sep(
            &run.train,
            &run.test,
            &sep_config,
            &run.outcome.posterior,
            report,
        )?;
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
