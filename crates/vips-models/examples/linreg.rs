//! Private Bayesian linear regression on a UCI regression folder with its standard splits.
//!
//! ```text
//! cargo run --release -p vips-models --example linreg -- \
//!     --uci ../shared/data/uci/wine-quality-red --split 0 --population 1439 \
//!     --epsilon 1 --delta 1e-5 --json
//! ```
//! Without `--epsilon` the run is non-private (same code path, no noise). A private run is
//! calibrated and accounted by the PLD accountant unless `--accountant` names another. Features and target
//! are mapped by declared public ranges: `--ranges FILE` (default: the committed
//! `crates/dp-sep/ranges/<folder>.json` when there is one) or `--feature-range LO:HI
//! --target-range LO:HI` for every feature and the target. The radius rows are divided by is
//! released privately from the rows (5% of the budget, charged in the same ledger) unless
//! `--radius R` declares one; nothing else is taken from the rows before the release. The
//! fit and its evaluation are `vips_models::linreg::fit_mapped` (as in `cargo xtask bench` and
//! `dp-bayes fit linreg`).
//!
//! A private run needs `--population N`, a public figure for the number of training records.
//! Data-dependent numbers that are not noised (clip counts, timings, realised counts) are printed
//! only with `--diagnostics`, in a `"diagnostics": {"private": false, ...}` object. Exit codes:
//! 0 success (also when stdout is closed), 2 usage and input errors, 1 output errors.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::str::FromStr;
use std::time::Instant;

use clap::Parser;
use common::{accountant, count_usize as count, non_negative, open_unit, positive};
use dp_sep::SepError;
use dp_sep::data::split_folder::SplitFolder;
use dp_sep::data::{PublicRange, PublicRanges, Standardizer};
use thiserror::Error;
use vips_models::engine::{EngineError, Privacy};
use vips_models::linreg::{
    DEFAULT_ACCOUNTANT, LinregError, LinregOptions, RadiusChoice, TargetMap, batch_config_with,
    fit_mapped,
};

// The flag parsers are the other examples' (one typed `ValueError`).
mod common;

#[derive(Parser, Debug)]
#[command(
    about = "Private Bayesian linear regression (VIPS, one release of X^T X, X^T y, y^T y)",
    allow_negative_numbers = true
)]
struct Args {
    /// UCI folder (`uci/<name>` or `uci/<name>/data`).
    #[arg(long)]
    uci: PathBuf,
    /// Standard split (0-based).
    #[arg(long, default_value_t = 0)]
    split: usize,
    /// Public ranges file (JSON, as crates/dp-sep/ranges/wine-quality-red.json).
    #[arg(long, conflicts_with_all = ["feature_range", "target_range"])]
    ranges: Option<PathBuf>,
    /// One public range LO:HI for every feature (with --target-range).
    #[arg(long, requires = "target_range", value_parser = PublicRange::from_str, allow_hyphen_values = true)]
    feature_range: Option<PublicRange>,
    /// Public range LO:HI of the target (with --feature-range).
    #[arg(long, requires = "feature_range", value_parser = PublicRange::from_str, allow_hyphen_values = true)]
    target_range: Option<PublicRange>,
    /// Total epsilon (omit for a non-private run).
    #[arg(long, value_parser = positive)]
    epsilon: Option<f64>,
    /// Total delta (private runs; default 1e-5).
    #[arg(long, value_parser = open_unit)]
    delta: Option<f64>,
    /// Public population size N of the training split (required for private runs).
    #[arg(long, value_parser = count)]
    population: Option<usize>,
    /// Seed the noise on purpose (reproducible, no privacy against whoever knows it).
    #[arg(long)]
    noise_seed: Option<u64>,
    /// Prior precision of the weights relative to the noise (ridge), in mapped units.
    #[arg(long, value_parser = positive)]
    prior_precision: Option<f64>,
    /// Shape of the Gamma prior on the noise precision.
    #[arg(long, value_parser = positive)]
    prior_noise_shape: Option<f64>,
    /// Rate of the Gamma prior on the noise precision.
    #[arg(long, value_parser = positive)]
    prior_noise_rate: Option<f64>,
    /// kappa of the noise-scaled eigenvalue floor kappa * s * sqrt(dim) (private runs).
    #[arg(long, value_parser = non_negative)]
    floor_scale: Option<f64>,
    /// Radius rows (z, 1) are divided by: `released` (default: the rows' root-mean-square
    /// norm, released privately with 5% of the budget) or a declared public number
    /// (sqrt(d + 1) rescales no row).
    #[arg(long)]
    radius: Option<RadiusChoice>,
    /// The accountant that calibrates the noise and accounts the fit: pld (default for this
    /// one-release model: the least noise), rdp, moments, zcdp, advanced, linear. Private runs only.
    #[arg(long, value_parser = accountant)]
    accountant: Option<dp_accountant::AccountantKind>,
    /// Add the non-private diagnostics (clip counts, timings) marked "private": false.
    #[arg(long)]
    diagnostics: bool,
    /// Print one compact JSON object.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Error)]
#[non_exhaustive]
enum CliError {
    #[error("{flag}: {reason}")]
    Usage { flag: &'static str, reason: String },
    #[error(transparent)]
    Data(#[from] SepError),
    #[error(transparent)]
    Linreg(#[from] LinregError),
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error("the result's `{key}` is not finite; nothing printed")]
    NonFinite { key: String },
    #[error("cannot write the result to stdout: {0}")]
    Output(std::io::Error),
}

fn usage(flag: &'static str, reason: impl Into<String>) -> CliError {
    CliError::Usage {
        flag,
        reason: reason.into(),
    }
}

/// The committed ranges file of a UCI folder, if any.
fn committed_ranges(name: &str) -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../dp-sep/ranges")
        .join(format!("{name}.json"));
    p.exists().then_some(p)
}

fn finite(v: f64, key: &str) -> Result<serde_json::Value, CliError> {
    if v.is_finite() {
        Ok(serde_json::json!(v))
    } else {
        Err(CliError::NonFinite { key: key.into() })
    }
}

fn main() -> ExitCode {
    match run(&Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "error: {e}");
            ExitCode::from(match e {
                CliError::NonFinite { .. } | CliError::Output(_) => 1,
                _ => 2,
            })
        }
    }
}

fn run(args: &Args) -> Result<(), CliError> {
    if args.epsilon.is_none() && args.delta.is_some() {
        return Err(usage("--delta", "has no effect without --epsilon"));
    }
    if args.epsilon.is_none() && args.noise_seed.is_some() {
        return Err(usage("--noise-seed", "has no effect in a non-private run"));
    }
    if args.epsilon.is_none() && args.accountant.is_some() {
        return Err(usage("--accountant", "has no effect in a non-private run"));
    }
    if args.epsilon.is_some() && args.population.is_none() {
        return Err(usage(
            "--population",
            "a private run needs the public population size of the training split \
             (a declared figure, never the count of the private rows)",
        ));
    }
    let start = Instant::now();
    let data = SplitFolder::load(&args.uci)?;
    let ranges = match (&args.ranges, args.feature_range, args.target_range) {
        (Some(p), _, _) => data.public_ranges(p)?,
        (None, Some(feature), Some(target)) => {
            PublicRanges::uniform(data.all().dim(), feature, target)
        }
        _ => match committed_ranges(data.name()) {
            Some(p) => data.public_ranges(p)?,
            None => {
                return Err(usage(
                    "--ranges",
                    "no committed public ranges for this folder: pass --ranges FILE or \
                     --feature-range LO:HI --target-range LO:HI",
                ));
            }
        },
    };
    let (train, test) = data.split(args.split)?;
    let map = Standardizer::from_public_ranges(&ranges);
    let (train_z, box_clips) = map.transform_counted(&train);
    let test_z = map.transform(&test);
    let target = TargetMap {
        centre: ranges.target().centre(),
        scale: ranges.target().scale(),
    };
    let population = args.population.unwrap_or(train_z.len());
    let privacy = match args.epsilon {
        Some(epsilon) => Privacy::Target {
            epsilon,
            delta: args.delta.unwrap_or(1e-5),
        },
        None => Privacy::NonPrivate,
    };
    let options = LinregOptions {
        radius: args.radius.and_then(RadiusChoice::declared),
        prior_precision: args.prior_precision,
        prior_noise_shape: args.prior_noise_shape,
        prior_noise_rate: args.prior_noise_rate,
        floor_scale: args.floor_scale,
    };
    let svi = batch_config_with(
        population,
        privacy,
        args.noise_seed,
        args.accountant.unwrap_or(DEFAULT_ACCOUNTANT),
    )?;
    let out = fit_mapped(
        train.dim(),
        (0..train_z.len()).map(|i| (train_z.row(i), train_z.target(i))),
        (0..test_z.len()).map(|i| test_z.row(i)),
        test.targets(),
        target,
        &options,
        &svi,
    )?;
    let (fitted, diag) = (out.fit.result, out.fit.diagnostics);
    let (model, rows, realised, rescaled, radius_sigma) = (
        out.model,
        out.rows,
        out.n_train,
        out.rows_clamped_or_rescaled,
        out.radius_noise_multiplier,
    );
    let metrics = out
        .metrics
        .ok_or_else(|| usage("--split", "the test split is empty"))?;
    let inf = serde_json::json!("inf");
    let mut out = serde_json::json!({
        "model": "linreg",
        "dataset": data.name(),
        "split": args.split,
        "test_rmse": finite(metrics.rmse, "test_rmse")?,
        "test_log_likelihood": finite(metrics.log_likelihood, "test_log_likelihood")?,
        "epsilon": args.epsilon.map_or(inf.clone(), |e| serde_json::json!(e)),
        "epsilon_spent": fitted.privacy.epsilon.map_or(inf, |e| serde_json::json!(e)),
        "delta": fitted.privacy.delta.unwrap_or(0.0),
        "noise_multiplier": fitted.privacy.noise_multiplier.unwrap_or(0.0),
        "accountant": if fitted.privacy.noise_multiplier.is_some() { fitted.privacy.accountant.name() } else { "none" },
        "population": fitted.privacy.public_population,
        "population_declared": fitted.privacy.population_declared,
        "neighbouring": fitted.privacy.neighbouring,
        "rng": fitted.privacy.rng,
        "releases": fitted.iterations + u64::from(radius_sigma.is_some()),
        "n_test": test.len(),
        "dim": rows.dim(),
        "radius": rows.radius(),
        "radius_source": if radius_sigma.is_some() { "released" } else { "declared" },
        "radius_noise_multiplier": radius_sigma.unwrap_or(0.0),
        "ranges": ranges.source(),
        "prior_precision": model.config().prior_precision(),
        "prior_noise_shape": model.config().noise_prior().0,
        "prior_noise_rate": model.config().noise_prior().1,
        "floor_scale": model.config().floor_scale(),
        "eigenvalue_floor": fitted.global.eigenvalue_floor(),
        "eigenvalues_raised": fitted.global.eigenvalues_raised(),
    });
    if args.diagnostics {
        out["diagnostics"] = serde_json::json!({
            "private": false,
            "n_train": realised,
            "realised_population": diag.realised_population,
            "records_with_clipped_features": box_clips.records_with_clipped_features,
            "records_with_clipped_target": box_clips.records_with_clipped_target,
            "rows_clamped_or_rescaled": rescaled,
            "wall_clipped_records": diag.records_clipped,
            "wall_replaced_records": diag.records_replaced,
            "fit_seconds": diag.seconds,
            "seconds": start.elapsed().as_secs_f64(),
        });
    }
    let text = if args.json {
        out.to_string()
    } else {
        serde_json::to_string_pretty(&out).map_err(|e| CliError::Output(e.into()))?
    };
    let mut stdout = std::io::stdout().lock();
    match writeln!(stdout, "{text}").and_then(|()| stdout.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(CliError::Output(e)),
    }
}
