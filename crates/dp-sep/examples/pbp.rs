//! PBP regression on a UCI folder with SEP / clipped SEP / DP-SEP (or ADF, EP).
//!
//! ```text
//! cargo run --release -p dp-sep --example pbp -- --uci ../shared/data/uci/wine-quality-red \
//!     --split 0 --epsilon 1 --delta 1e-5 --clip 1 --population 1439 --json
//! ```
//! Omitting `--epsilon` runs non-private SEP (clipped if `--clip` is given). Prints one JSON object.
//!
//! Private runs scale features and target with declared public ranges, never with statistics of
//! the training data: `--ranges FILE` (a ranges file matched by column name, see
//! `dp_sep::data::ranges`), or `--feature-range LO:HI` with `--target-range LO:HI`. Without either,
//! the committed file `crates/dp-sep/ranges/<data set>.json` is used when there is one. Non-private
//! runs without declared ranges standardise with the training split's mean and std (the PBP
//! protocol).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use dp_core::RngPolicy;
use dp_sep::Sampling;
use dp_sep::SepError;
use dp_sep::data::uci::UciDataset;
use dp_sep::data::{PublicRange, PublicRanges};
use dp_sep::pbp::{Method, PbpConfig, Privacy, Scaling, run_pbp};

#[derive(Parser, Debug)]
#[command(about = "PBP Bayesian neural network regression with (DP-)SEP")]
struct Args {
    /// UCI folder (e.g. ../shared/data/uci/wine-quality-red).
    #[arg(long)]
    uci: PathBuf,
    /// Standard split (0-based).
    #[arg(long, default_value_t = 0)]
    split: usize,
    /// Privacy budget epsilon; omit for non-private SEP.
    #[arg(long)]
    epsilon: Option<f64>,
    /// Privacy parameter delta (with --epsilon).
    #[arg(long, default_value_t = 1e-5)]
    delta: f64,
    /// Clip norm C of the factor's natural parameters (required with --epsilon).
    #[arg(long)]
    clip: Option<f64>,
    /// gamma of 002 Eq. 4. Default: N without --epsilon (SEP damping 1/N, as in the published
    /// SEP runs); 1 with --epsilon (002's stated DP-SEP setting; see docs/dp-sep.md).
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
    /// Visiting order: `uniform` (independent draw per step; default with --epsilon) or
    /// `shuffled` (permutation per epoch; default without; accounted without amplification).
    #[arg(long)]
    sampling: Option<String>,
    /// Declared public population size N of the training data (required with --epsilon): used
    /// for the sampling probability 1/N, SEP's N, the epochs * N steps and the default gamma.
    #[arg(long)]
    population: Option<usize>,
    /// Ranges file declaring each column's public range (JSON; see `dp_sep::data::ranges`).
    /// Default: `crates/dp-sep/ranges/<data set>.json` when it exists.
    #[arg(long)]
    ranges: Option<PathBuf>,
    /// One declared public range `LO:HI` for every feature (with --target-range).
    #[arg(long)]
    feature_range: Option<String>,
    /// Declared public range `LO:HI` of the target (with --feature-range).
    #[arg(long)]
    target_range: Option<String>,
    /// Also print the data owner's diagnostics (training-record count, timings, clip counts):
    /// data-dependent, not noised, marked `"private": false`.
    #[arg(long)]
    diagnostics: bool,
    /// Print one JSON object (always on; kept for the documented command line).
    #[arg(long)]
    json: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(json) => {
            println!("{json}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Parses `LO:HI` of `flag`.
fn parse_range(flag: &'static str, text: &str) -> Result<PublicRange, SepError> {
    let bad = || SepError::InvalidParameter {
        name: flag,
        value: f64::NAN,
        reason: "expected LO:HI with finite LO < HI",
    };
    let (lo, hi) = text.split_once(':').ok_or_else(bad)?;
    let lo: f64 = lo.trim().parse().map_err(|_| bad())?;
    let hi: f64 = hi.trim().parse().map_err(|_| bad())?;
    PublicRange::new(lo, hi).map_err(|_| bad())
}

/// The declared public ranges, if any: flags, then `--ranges`, then the committed file.
fn declared_ranges(args: &Args, data: &UciDataset) -> Result<Option<PublicRanges>, SepError> {
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
            });
        }
    }
    let committed = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("ranges")
        .join(format!("{}.json", data.name()));
    match &args.ranges {
        Some(path) => Ok(Some(data.public_ranges(path)?)),
        None if committed.exists() => Ok(Some(data.public_ranges(&committed)?)),
        None => Ok(None),
    }
}

fn run(args: &Args) -> Result<serde_json::Value, Box<dyn std::error::Error>> {
    if !args.uci.exists() {
        return Err(format!(
            "data folder {} is absent (the UCI sets live in ../shared/data/uci)",
            args.uci.display()
        )
        .into());
    }
    let data = UciDataset::load(&args.uci)?;
    let (train, test) = data.split(args.split)?;
    let method = match args.method.as_str() {
        "sep" => Method::Sep,
        "adf" => Method::Adf,
        "ep" => Method::Ep,
        other => return Err(format!("unknown method {other:?} (sep, adf, ep)").into()),
    };
    let sampling = match (args.sampling.as_deref(), args.epsilon) {
        (Some("uniform"), _) | (None, Some(_)) => Sampling::IndependentUniform,
        (Some("shuffled"), _) | (None, None) => Sampling::ShuffledEpoch,
        (Some(other), _) => return Err(format!("unknown sampling {other:?}").into()),
    };
    let privacy = match args.epsilon {
        None => None,
        Some(epsilon) => Some(Privacy {
            epsilon,
            delta: args.delta,
            rng: args
                .noise_seed
                .map_or(RngPolicy::OsEntropy, |seed| RngPolicy::Seeded { seed }),
            population: args.population.ok_or(SepError::MissingPublicInput {
                input: "population size N",
                flag: "--population",
            })?,
        }),
    };
    let ranges = declared_ranges(args, &data)?;
    let ranges_source = ranges.as_ref().map(|r| r.source().to_string());
    let config = PbpConfig {
        method,
        hidden: vec![args.hidden.unwrap_or(data.n_hidden())],
        epochs: args.epochs.unwrap_or(data.n_epochs()),
        gamma: args.gamma.or(args.epsilon.map(|_| 1.0)),
        clip: args.clip,
        sampling,
        seed: args.seed,
        privacy,
        scaling: ranges.map_or(Scaling::FitOnTraining, Scaling::Declared),
    };
    let (out, diagnostics) = run_pbp(&train, &test, &config)?;
    // Publishable: public settings, the accounting, and held-out metrics computed with the
    // (for private runs, declared public) transform.
    let mut json = serde_json::json!({
        "dataset": data.name(),
        "split": args.split,
        "method": args.method,
        "epsilon": args.epsilon.map_or(serde_json::Value::from("inf"), serde_json::Value::from),
        "clip": args.clip,
        "gamma": config.gamma.unwrap_or(train.len() as f64),
        "epochs": config.epochs,
        "hidden": config.hidden,
        "test_rmse": finite(out.metrics.rmse),
        "test_log_likelihood": finite(out.metrics.log_likelihood),
        "sampling": sampling,
        "scaling": ranges_source.map_or("training mean and std (non-private)".to_string(), |s| format!("declared public ranges: {s}")),
    });
    if let (Some(p), Some(report)) = (privacy, out.privacy.as_ref()) {
        json["delta"] = args.delta.into();
        json["population"] = report.population.into();
        json["noise_multiplier"] = report.noise_multiplier.into();
        json["theta_noise_std"] = report.theta_noise_std.into();
        json["epsilon_accounted"] = finite(report.epsilon);
        json["noise_rng"] = p.rng.describe().into();
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
    Ok(json)
}

/// A finite number as itself; a non-finite one as a string (never `null`).
fn finite(x: f64) -> serde_json::Value {
    if x.is_finite() {
        x.into()
    } else if x == f64::INFINITY {
        "inf".into()
    } else {
        format!("non-finite ({x})").into()
    }
}
