//! `dp-bayes fit linreg`: private Bayesian linear regression on a UCI split folder with its
//! standard splits (the flags and keys of the vips-models example `linreg`).

use std::time::Instant;

use dp_sep::data::split_folder::SplitFolder;
use dp_sep::data::{PublicRange, Standardizer};
use serde_json::json;
use vips_models::engine::{StepSize, Stop, SviConfig};
use vips_models::linreg::{
    self, ColumnRange, Linreg, LinregConfig, RowMap, SavedLinreg, TargetMap, evaluate,
};

use super::uci::{DeclaredRanges, UciArgs, declared_ranges};
use super::{Common, Fitted, non_negative, positive};
use crate::cli::error::{CliError, usage};
use crate::cli::io::num;

/// Arguments of `fit linreg`.
#[derive(clap::Args, Debug)]
#[command(allow_negative_numbers = true)]
pub struct Args {
    #[command(flatten)]
    pub data: UciArgs,
    /// Public radius rows (z, 1) are divided by (default sqrt(1 + d/3)).
    #[arg(long, value_parser = positive)]
    radius: Option<f64>,
    /// Prior precision of the weights relative to the noise (ridge), in mapped units.
    #[arg(long, value_parser = positive)]
    prior_precision: Option<f64>,
    /// Shape of the Gamma prior on the noise precision.
    #[arg(long, value_parser = positive)]
    prior_noise_shape: Option<f64>,
    /// Rate of the Gamma prior on the noise precision.
    #[arg(long, value_parser = positive)]
    prior_noise_rate: Option<f64>,
    /// kappa of the noise-scaled eigenvalue floor kappa * s * sqrt(dim) (private fits).
    #[arg(long, value_parser = non_negative)]
    floor_scale: Option<f64>,
    #[command(flatten)]
    pub common: Common,
}

fn column_range(name: String, r: &PublicRange) -> ColumnRange {
    ColumnRange {
        name,
        lower: r.lower,
        upper: r.upper,
        centre: r.centre(),
        scale: r.scale(),
    }
}

/// Fits and returns the saved model and the summary parts.
pub fn fit(args: &Args) -> Result<Fitted, CliError> {
    let c = &args.common;
    let (privacy, population) = c.privacy()?;
    let cancel = super::ctrl_c_token()?;
    let start = Instant::now();
    let data = SplitFolder::load(&args.data.uci)?;
    let Some(DeclaredRanges {
        ranges,
        names,
        target: target_name,
    }) = declared_ranges(&data, &args.data)?
    else {
        return Err(usage(
            "--ranges",
            "no committed public ranges for this folder: pass --ranges FILE or \
             --feature-range LO:HI --target-range LO:HI",
        ));
    };
    let (train, test) = data.split(args.data.split)?;
    let map = Standardizer::from_public_ranges(&ranges);
    let (train_z, box_clips) = map.transform_counted(&train);
    let test_z = map.transform(&test);
    let rows = RowMap::new(train.dim(), args.radius)?;
    let target = TargetMap {
        centre: ranges.target().centre(),
        scale: ranges.target().scale(),
    };
    let mut rescaled = 0u64;
    let mut records = Vec::with_capacity(train_z.len());
    for i in 0..train_z.len() {
        let (r, clipped) = rows.record(train_z.row(i), train_z.target(i))?;
        rescaled += u64::from(clipped);
        records.push(r);
    }
    let test_x = (0..test_z.len())
        .map(|i| rows.features(test_z.row(i)))
        .collect::<Result<Vec<_>, _>>()?;
    let realised = records.len();
    let mut config = LinregConfig::builder(rows.dim());
    if let Some(l) = args.prior_precision {
        config = config.prior_precision(l);
    }
    let (a0, b0) = LinregConfig::builder(1).build()?.noise_prior();
    config = config.noise_prior(
        args.prior_noise_shape.unwrap_or(a0),
        args.prior_noise_rate.unwrap_or(b0),
    );
    if let Some(k) = args.floor_scale {
        config = config.floor_scale(k);
    }
    let model = Linreg::new(config.build()?);
    // Batch VB with one release (as `linreg::batch_config`), with the chosen accountant.
    let n = population.unwrap_or(realised);
    let svi = SviConfig::builder()
        .expected_batch_size(n as f64)
        .population(population)
        .step(StepSize::Constant { rho: 1.0 })
        .stop(Stop::Iterations { iterations: 1 })
        .privacy(privacy)
        .accountant(c.accountant.unwrap_or_default())
        .noise_seed(c.noise_seed)
        .cancel(cancel)
        .build()?;
    let fit = linreg::fit(&model, records, &svi)?;
    let (fitted, diag) = (fit.result, fit.diagnostics);
    let features: Vec<ColumnRange> = names
        .into_iter()
        .zip(ranges.features())
        .map(|(n, r)| column_range(n, r))
        .collect();
    let saved = SavedLinreg::from_fit(
        features,
        column_range(target_name, ranges.target()),
        &rows,
        model.config(),
        &fitted,
    )?;
    let heldout = match evaluate(fitted.global.posterior(), &test_x, test.targets(), target) {
        Some(m) => json!({
            "split": args.data.split,
            "test_rmse": num(m.rmse),
            "test_log_likelihood": num(m.log_likelihood),
        }),
        None => json!({ "split": args.data.split, "note": "the test split is empty" }),
    };
    let cfg = model.config();
    Ok(Fitted {
        model: "linreg",
        model_json: saved.to_json()?,
        iterations: fitted.iterations,
        dim: rows.dim(),
        heldout,
        settings: json!({
            "dataset": data.name(),
            "split": args.data.split,
            "ranges": ranges.source(),
            "radius": rows.radius(),
            "prior_precision": cfg.prior_precision(),
            "prior_noise_shape": cfg.noise_prior().0,
            "prior_noise_rate": cfg.noise_prior().1,
            "floor_scale": cfg.floor_scale(),
            "eigenvalue_floor": num(fitted.global.eigenvalue_floor()),
            "eigenvalues_raised": fitted.global.eigenvalues_raised(),
        }),
        diagnostics: json!({
            "n_train": realised,
            "n_test": test.len(),
            "realised_population": diag.realised_population,
            "records_with_clipped_features": box_clips.records_with_clipped_features,
            "records_with_clipped_target": box_clips.records_with_clipped_target,
            "rows_clamped_or_rescaled": rescaled,
            "wall_clipped_records": diag.records_clipped,
            "wall_replaced_records": diag.records_replaced,
            "fit_seconds": num(diag.seconds),
            "seconds": num(start.elapsed().as_secs_f64()),
        }),
        privacy: fitted.privacy,
    })
}
