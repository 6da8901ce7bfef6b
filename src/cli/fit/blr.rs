//! `dp-bayes fit blr`: private Bayesian logistic regression on a CSV file with a label column
//! and public feature ranges, or on a sparse LIBSVM file of a declared public dimension, scored
//! on a seeded stratified held-out split.

use std::path::PathBuf;
use std::time::Instant;

use serde_json::json;
use vips_models::blr::{
    self, Blr, BlrConfig, BlrError, CsvOptions, Hyperprior, LibsvmOptions, Loaded, SavedBlr,
    SavedScaling, evaluate, stratified_split,
};
use vips_models::engine::{StepSize, Stop, SviConfig};

use super::{Common, Fitted, positive};
use crate::cli::error::{CliError, usage};
use crate::cli::io::num;

/// Arguments of `fit blr`.
#[derive(clap::Args, Debug)]
#[command(allow_negative_numbers = true)]
#[command(group(clap::ArgGroup::new("input").required(true).args(["csv", "libsvm"])))]
pub struct Args {
    /// CSV file with a header; every column but the label is a numeric feature.
    #[arg(long)]
    csv: Option<PathBuf>,
    /// LIBSVM file (`label id:value ...`, ids 1-based; labels 0/1 or -1/+1), stored sparse;
    /// see --dim and --radius. Not with --csv.
    #[arg(long)]
    libsvm: Option<PathBuf>,
    /// Public dimension of --libsvm (required for a private fit: the largest feature id of the
    /// file is a property of the private data). An id above it is refused, naming the line.
    #[arg(long, conflicts_with = "csv", value_parser = super::count)]
    dim: Option<usize>,
    /// Public radius --libsvm rows are divided by before the unit-ball clip (default 1; e.g.
    /// the square root of a public bound on the number of active binary features).
    #[arg(long, conflicts_with = "csv", value_parser = positive)]
    radius: Option<f64>,
    /// Label column of --csv (values 0/1 or -1/1).
    #[arg(long, default_value = "target", conflicts_with = "libsvm")]
    label: String,
    /// Public per-feature ranges of --csv, CSV lines `name,lower,upper` matched to the header by
    /// name (every feature listed once). Default: the published WDBC ranges when the header is
    /// the WDBC header.
    #[arg(long, conflicts_with_all = ["no_scaling", "libsvm"])]
    ranges: Option<PathBuf>,
    /// Rows of --csv are already in the unit ball (clipped if not): no scaling, no intercept.
    #[arg(long, conflicts_with = "libsvm")]
    no_scaling: bool,
    /// Do not append a constant intercept feature (--csv).
    #[arg(long, conflicts_with_all = ["no_scaling", "libsvm"])]
    no_intercept: bool,
    /// Held-out fraction of each class (0: fit on every row, no held-out metrics).
    #[arg(long, default_value_t = 0.2)]
    test_fraction: f64,
    /// Seed of the stratified split (public randomness).
    #[arg(long, default_value_t = 0)]
    split_seed: u64,
    #[command(flatten)]
    model: ModelArgs,
    #[command(flatten)]
    pub common: Common,
}

/// The flags of BLR's model and of its batch-VB run, shared by `fit blr` and `fit blr-store`.
#[derive(clap::Args, Debug)]
pub struct ModelArgs {
    /// Iterations (releases); default 1 when private (all the budget on one release), 30 when
    /// not.
    #[arg(long, value_parser = super::count)]
    iterations: Option<usize>,
    /// Shape of the Gamma hyperprior on the prior precision.
    #[arg(long, default_value_t = 1.0, value_parser = positive)]
    a0: f64,
    /// Rate of the Gamma hyperprior on the prior precision.
    #[arg(long, default_value_t = 1.0, value_parser = positive)]
    b0: f64,
    /// Ridge `k x 2 sqrt(d) x noise std` on every private release's likelihood precision (default
    /// 0: none). Keeps runs of several private releases from collapsing (docs/vips-models.md,
    /// "BLR: the noise ridge"); 0.1 is a measured choice. Private runs only.
    #[arg(long)]
    noise_ridge: Option<f64>,
    #[command(flatten)]
    batching: super::SamplingArg,
}

impl ModelArgs {
    /// The model of dimension `dim` and the engine's batch-VB configuration (`S = N`, the
    /// declared `population`, else `realised` for a non-private fit without one).
    ///
    /// # Errors
    /// Usage errors for a flag with no effect (`--noise-ridge` without `--epsilon`,
    /// `--sampling` in a non-private full-batch fit); the model's and the engine's errors.
    pub(crate) fn model_and_config(
        &self,
        c: &Common,
        privacy: vips_models::engine::Privacy,
        population: Option<usize>,
        realised: usize,
        dim: usize,
    ) -> Result<(Blr, SviConfig), CliError> {
        let private = population.is_some() && c.epsilon.is_some();
        let iterations = self.iterations.unwrap_or(if private { 1 } else { 30 }) as u64;
        let n = population.unwrap_or(realised);
        let cancel = super::ctrl_c_token()?;
        let svi = self
            .batching
            .apply(
                SviConfig::builder(),
                private,
                n as f64,
                n as f64,
                "--population",
            )?
            .population(population)
            .step(StepSize::Constant { rho: 1.0 })
            .stop(Stop::Iterations { iterations })
            .privacy(privacy)
            .accountant(c.accountant.unwrap_or_default())
            .noise_seed(c.noise_seed)
            .progress_bar(true)
            .cancel(cancel)
            .build()?;
        if self.noise_ridge.is_some() && !private {
            return Err(usage(
                "--noise-ridge",
                "has no effect in a non-private run (there is no noise to ridge against)",
            ));
        }
        let model = Blr::new(
            BlrConfig::builder(dim)
                .hyperprior(Hyperprior::Gamma {
                    shape: self.a0,
                    rate: self.b0,
                })
                .noise_ridge(self.noise_ridge.unwrap_or(0.0))
                .build()?,
        );
        Ok((model, svi))
    }

    /// The settings of result.json these flags and the fit give (the same keys for `fit blr`
    /// and `fit blr-store`).
    pub(crate) fn settings(&self, global: &vips_models::blr::BlrGlobal) -> serde_json::Value {
        json!({
            "hyperprior_shape": self.a0,
            "hyperprior_rate": self.b0,
            "noise_ridge": self.noise_ridge.unwrap_or(0.0),
            "alpha_mean": num(global.alpha_mean()),
            "eigenvalues_raised_last_release": global.eigenvalues_raised(),
        })
    }
}

/// The public scaling of a CSV file's `features`: the declared ranges file (`ranges`,
/// `name,lower,upper`), the published WDBC ranges for the WDBC header, or none (`no_scaling`:
/// rows assumed in the unit ball). One home for `fit blr --csv` and `convert csv`. Returns the
/// scaling and a public description of its source.
///
/// # Errors
/// The ranges file's errors (file and line, a feature without a range); a usage error on
/// `--ranges` when no public scaling is declared for a header other than WDBC's.
pub(crate) fn csv_scaling(
    ranges: Option<&std::path::Path>,
    no_scaling: bool,
    no_intercept: bool,
    features: &[String],
) -> Result<(SavedScaling, String), CliError> {
    if no_scaling {
        return Ok((
            SavedScaling::Identity {
                dim: features.len(),
            },
            "none (rows assumed in the unit ball; clipped if not)".into(),
        ));
    }
    let intercept = !no_intercept;
    let (lower, upper, source) = if let Some(path) = ranges {
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

/// The loaded rows with the public facts of the input they go with.
struct Input {
    loaded: Loaded,
    /// The label's name in the saved model.
    label: String,
    /// Feature names in the saved model (the CSV's, or `f1..fD` for LIBSVM ids).
    features: Vec<String>,
    scaling: SavedScaling,
    /// How the rows were mapped (result.json `settings.feature_map`).
    source: String,
    /// The input's public description (result.json `settings.input`).
    settings: serde_json::Value,
}

/// A CSV file with a label column and public scaling.
fn csv_input(args: &Args, csv: &std::path::Path) -> Result<Input, CliError> {
    let features = blr::read_csv_header(csv, &args.label)?;
    let (scaling, source) = csv_scaling(
        args.ranges.as_deref(),
        args.no_scaling,
        args.no_intercept,
        &features,
    )?;
    let map = scaling.feature_map()?;
    let loaded = blr::load_csv(
        csv,
        &CsvOptions {
            label: args.label.clone(),
            map: Some(map),
        },
    )?;
    Ok(Input {
        loaded,
        label: args.label.clone(),
        features,
        scaling,
        source,
        settings: json!({ "csv": csv.display().to_string(), "label": args.label }),
    })
}

/// The saved scaling of LIBSVM rows divided by `radius`: the identity for radius 1, else ranges
/// `[-1, 1]` (centre 0, scale 1) without intercept divided by `radius`, which maps a raw value
/// `x` to `x / radius` exactly as the LIBSVM loader does.
pub fn libsvm_scaling(dim: usize, radius: f64) -> SavedScaling {
    if radius == 1.0 {
        SavedScaling::Identity { dim }
    } else {
        SavedScaling::Ranges {
            lower: vec![-1.0; dim],
            upper: vec![1.0; dim],
            intercept: false,
            radius: Some(radius),
        }
    }
}

/// The feature names of a LIBSVM model: `f1..fD` (the file's 1-based ids).
pub fn libsvm_names(dim: usize) -> Vec<String> {
    (1..=dim).map(|j| format!("f{j}")).collect()
}

/// A LIBSVM file of a declared dimension (`--dim`, required when private).
fn libsvm_input(args: &Args, path: &std::path::Path, private: bool) -> Result<Input, CliError> {
    if private && args.dim.is_none() {
        return Err(BlrError::Undeclared {
            what: "LIBSVM dimension",
            flag: "--dim",
            reason: "the largest feature id of the file is a property of the private data",
        }
        .into());
    }
    let radius = args.radius.unwrap_or(1.0);
    let loaded = blr::load_libsvm(
        path,
        LibsvmOptions {
            dim: args.dim,
            radius,
        },
    )?;
    let dim = loaded.report.dim;
    Ok(Input {
        loaded,
        label: "label".into(),
        features: libsvm_names(dim),
        scaling: libsvm_scaling(dim, radius),
        source: format!("x / {radius} then clip to the unit ball (public radius)"),
        settings: json!({
            "libsvm": path.display().to_string(),
            "dim": dim,
            "dim_declared": args.dim.is_some(),
            "radius": radius,
        }),
    })
}

/// Adds the keys of `more` (an object) to `into` (an object).
pub(crate) fn merge(into: &mut serde_json::Value, more: serde_json::Value) {
    if let (Some(into), serde_json::Value::Object(more)) = (into.as_object_mut(), more) {
        into.extend(more);
    }
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
    let start = Instant::now();
    let input = match (&args.csv, &args.libsvm) {
        (Some(csv), None) => csv_input(args, csv)?,
        (None, Some(libsvm)) => libsvm_input(args, libsvm, c.epsilon.is_some())?,
        _ => {
            return Err(usage(
                "--csv",
                "give exactly one of --csv FILE and --libsvm FILE",
            ));
        }
    };
    let Input {
        loaded,
        label,
        features,
        scaling,
        source,
        settings: input_settings,
    } = input;
    let map = scaling.feature_map()?;
    let dim = map.output_dim();
    let (train, test) = if args.test_fraction > 0.0 {
        stratified_split(loaded.records, args.test_fraction, args.split_seed)?
    } else {
        (loaded.records, Vec::new())
    };
    let realised = train.len();
    let (model, svi) = args
        .model
        .model_and_config(c, privacy, population, realised, dim)?;
    let fit = blr::fit(&model, train, &svi)?;
    let (fitted, diag) = (fit.result, fit.diagnostics);
    let saved = SavedBlr::from_fit(&label, features, scaling, model.config().prior(), &fitted)?;
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
        sampling: Some(fitted.sampling.name()),
        model: "blr",
        model_json: saved.to_json()?,
        iterations: fitted.iterations,
        dim,
        heldout,
        settings: {
            let mut settings = json!({
                "input": input_settings,
                "feature_map": source,
                "intercept": args.csv.is_some() && !args.no_scaling && !args.no_intercept,
                "radius": map.radius(),
            });
            merge(&mut settings, args.model.settings(&fitted.global));
            settings
        },
        diagnostics: super::with_timings(
            json!({
                "n_train": realised,
                "n_test": test.len(),
                "rows": loaded.report.rows,
                "rows_clipped_to_unit_ball": loaded.report.clipped,
                "realised_population": diag.realised_population,
                "wall_clipped_records": diag.records_clipped,
                "wall_replaced_records": diag.records_replaced,
            }),
            &diag,
            start,
        ),
        privacy: fitted.privacy,
    })
}
