//! `dp-bayes fit blr`: private Bayesian logistic regression on a CSV file with a label column
//! and public feature ranges, scored on a seeded stratified held-out split.

use std::path::PathBuf;
use std::time::Instant;

use serde_json::json;
use vips_models::blr::{
    self, Blr, BlrConfig, CsvOptions, Hyperprior, SavedBlr, SavedScaling, evaluate,
    stratified_split,
};
use vips_models::engine::{StepSize, Stop, SviConfig};

use super::{Common, Fitted, positive};
use crate::cli::error::{CliError, usage};
use crate::cli::io::num;

/// Arguments of `fit blr`.
#[derive(clap::Args, Debug)]
#[command(allow_negative_numbers = true)]
pub struct Args {
    /// CSV file with a header; every column but the label is a numeric feature.
    #[arg(long)]
    csv: PathBuf,
    /// Label column (values 0/1 or -1/1).
    #[arg(long, default_value = "target")]
    label: String,
    /// Public per-feature ranges, CSV lines `name,lower,upper` matched to the header by name
    /// (every feature listed once). Default: the published WDBC ranges when the header is the
    /// WDBC header.
    #[arg(long, conflicts_with = "no_scaling")]
    ranges: Option<PathBuf>,
    /// Rows are already in the unit ball (clipped if not): no scaling, no intercept.
    #[arg(long)]
    no_scaling: bool,
    /// Do not append a constant intercept feature.
    #[arg(long, conflicts_with = "no_scaling")]
    no_intercept: bool,
    /// Iterations (releases); default 1 when private (all the budget on one release), 30 when
    /// not.
    #[arg(long, value_parser = super::count)]
    iterations: Option<usize>,
    /// Held-out fraction of each class (0: fit on every row, no held-out metrics).
    #[arg(long, default_value_t = 0.2)]
    test_fraction: f64,
    /// Seed of the stratified split (public randomness).
    #[arg(long, default_value_t = 0)]
    split_seed: u64,
    /// Shape of the Gamma hyperprior on the prior precision.
    #[arg(long, default_value_t = 1.0, value_parser = positive)]
    a0: f64,
    /// Rate of the Gamma hyperprior on the prior precision.
    #[arg(long, default_value_t = 1.0, value_parser = positive)]
    b0: f64,
    #[command(flatten)]
    pub common: Common,
}

/// The public scaling: declared ranges, the WDBC ranges for the WDBC header, or none.
fn scaling(args: &Args, features: &[String]) -> Result<(SavedScaling, String), CliError> {
    if args.no_scaling {
        return Ok((
            SavedScaling::Identity {
                dim: features.len(),
            },
            "none (rows assumed in the unit ball; clipped if not)".into(),
        ));
    }
    let intercept = !args.no_intercept;
    let (lower, upper, source) = if let Some(path) = &args.ranges {
        let (lo, hi) = blr::read_ranges_csv(path, features)?;
        (lo, hi, path.display().to_string())
    } else if blr::is_wdbc_header(features) {
        (
            blr::WDBC_PUBLISHED_RANGES.iter().map(|r| r.1).collect(),
            blr::WDBC_PUBLISHED_RANGES.iter().map(|r| r.2).collect(),
            "published WDBC ranges".to_string(),
        )
    } else {
        return Err(usage(
            "--ranges",
            "no public scaling for this header: pass --ranges FILE (name,lower,upper) or \
             --no-scaling",
        ));
    };
    Ok((
        SavedScaling::Ranges {
            lower,
            upper,
            intercept,
            radius: None,
        },
        source,
    ))
}

/// Fits and returns the saved model and the summary parts.
pub fn fit(args: &Args) -> Result<Fitted, CliError> {
    let c = &args.common;
    let (privacy, population) = c.privacy()?;
    if !(args.test_fraction >= 0.0 && args.test_fraction < 1.0) {
        return Err(usage(
            "--test-fraction",
            format!("must be in [0, 1), got {}", args.test_fraction),
        ));
    }
    if args.test_fraction == 0.0 && args.split_seed != 0 {
        return Err(usage(
            "--split-seed",
            "has no effect with --test-fraction 0 (no split)",
        ));
    }
    let cancel = super::ctrl_c_token()?;
    let start = Instant::now();
    let features = blr::read_csv_header(&args.csv, &args.label)?;
    let (scaling, source) = scaling(args, &features)?;
    let map = scaling.feature_map()?;
    let loaded = blr::load_csv(
        &args.csv,
        &CsvOptions {
            label: args.label.clone(),
            map: Some(map.clone()),
        },
    )?;
    let dim = map.output_dim();
    let (train, test) = if args.test_fraction > 0.0 {
        stratified_split(loaded.records, args.test_fraction, args.split_seed)?
    } else {
        (loaded.records, Vec::new())
    };
    let realised = train.len();
    let private = population.is_some() && c.epsilon.is_some();
    let iterations = args.iterations.unwrap_or(if private { 1 } else { 30 }) as u64;
    let n = population.unwrap_or(realised);
    let svi = SviConfig::builder()
        .expected_batch_size(n as f64)
        .population(population)
        .step(StepSize::Constant { rho: 1.0 })
        .stop(Stop::Iterations { iterations })
        .privacy(privacy)
        .accountant(c.accountant.unwrap_or_default())
        .noise_seed(c.noise_seed)
        .progress_bar(true)
        .cancel(cancel)
        .build()?;
    let hyperprior = Hyperprior::Gamma {
        shape: args.a0,
        rate: args.b0,
    };
    let model = Blr::new(BlrConfig::builder(dim).hyperprior(hyperprior).build()?);
    let fit = blr::fit(&model, train, &svi)?;
    let (fitted, diag) = (fit.result, fit.diagnostics);
    let saved = SavedBlr::from_fit(
        &args.label,
        features,
        scaling,
        model.config().prior(),
        &fitted,
    )?;
    let heldout = match (test.is_empty(), evaluate(fitted.global.posterior(), &test)) {
        (false, Some(m)) if m.auc.is_finite() => json!({
            "test_fraction": args.test_fraction,
            "split_seed": args.split_seed,
            "auc": num(m.auc),
            "accuracy": num(m.accuracy),
            "log_loss": num(m.log_loss),
        }),
        (true, _) => {
            json!({ "test_fraction": 0.0, "note": "no held-out rows (--test-fraction 0)" })
        }
        _ => json!({
            "test_fraction": args.test_fraction,
            "note": "the held-out rows cannot be scored (one class only)",
        }),
    };
    Ok(Fitted {
        model: "blr",
        model_json: saved.to_json()?,
        iterations: fitted.iterations,
        dim,
        heldout,
        settings: json!({
            "csv": args.csv.display().to_string(),
            "label": args.label,
            "feature_map": source,
            "intercept": !args.no_scaling && !args.no_intercept,
            "radius": map.radius(),
            "hyperprior_shape": args.a0,
            "hyperprior_rate": args.b0,
            "alpha_mean": num(fitted.global.alpha_mean()),
            "eigenvalues_raised_last_release": fitted.global.eigenvalues_raised(),
        }),
        diagnostics: json!({
            "n_train": realised,
            "n_test": test.len(),
            "rows": loaded.report.rows,
            "rows_clipped_to_unit_ball": loaded.report.clipped,
            "realised_population": diag.realised_population,
            "wall_clipped_records": diag.records_clipped,
            "wall_replaced_records": diag.records_replaced,
            "fit_seconds": num(diag.seconds),
            "seconds": num(start.elapsed().as_secs_f64()),
        }),
        privacy: fitted.privacy,
    })
}
