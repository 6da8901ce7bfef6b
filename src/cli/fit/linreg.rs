//! `dp-bayes fit linreg`: private Bayesian linear regression on a UCI split folder with its
//! standard splits (the flags and keys of the vips-models example `linreg`), or on a CSV file
//! with a target column and declared public ranges (`name,lower,upper`, as `fit blr` takes them).

use std::path::PathBuf;
use std::str::FromStr;
use std::time::Instant;

use dp_sep::data::split_folder::SplitFolder;
use dp_sep::data::{Dataset, PublicRange, PublicRanges, Standardizer};
use serde_json::{Value, json};
use vips_models::engine::{StepSize, Stop, SviConfig};
use vips_models::linreg::{
    ColumnRange, DEFAULT_ACCOUNTANT, LinregOptions, RadiusChoice, SavedLinreg, TargetMap,
    fit_mapped,
};

use super::uci::{DeclaredRanges, UciArgs, declared_ranges};
use super::{Common, Fitted, non_negative, positive};
use crate::cli::error::{CliError, usage};
use crate::cli::io::num;
use crate::cli::io::read_feature_csv;

/// Arguments of `fit linreg`.
#[derive(clap::Args, Debug)]
#[command(allow_negative_numbers = true)]
#[command(group(clap::ArgGroup::new("input").required(true).args(["uci", "csv"])))]
pub struct Args {
    /// UCI split folder (`uci/<name>` or `uci/<name>/data`).
    #[arg(long)]
    uci: Option<PathBuf>,
    /// Standard split of --uci (0-based): the model is fitted on its training rows and scored
    /// on its test rows.
    #[arg(long, default_value_t = 0, conflicts_with = "csv")]
    split: usize,
    /// Public ranges. With --uci: a JSON file with `columns` and `ranges`, as
    /// crates/dp-sep/ranges/*.json (default: the committed file of the folder's name). With
    /// --csv: CSV lines `name,lower,upper` matched to the header by name, every feature and the
    /// --label column listed once (required).
    #[arg(long, conflicts_with_all = ["feature_range", "target_range"])]
    ranges: Option<PathBuf>,
    /// One public range LO:HI for every feature of --uci (with --target-range); features are
    /// then named x1..xd and the target y.
    #[arg(long, requires = "target_range", conflicts_with = "csv", value_parser = PublicRange::from_str, allow_hyphen_values = true)]
    feature_range: Option<PublicRange>,
    /// Public range LO:HI of the target of --uci (with --feature-range).
    #[arg(long, requires = "feature_range", conflicts_with = "csv", value_parser = PublicRange::from_str, allow_hyphen_values = true)]
    target_range: Option<PublicRange>,
    /// CSV file with a header; every column but --label is a numeric feature. The whole file is
    /// fitted unless --test-fraction holds rows out; score new rows with `dp-bayes predict`.
    #[arg(long)]
    csv: Option<PathBuf>,
    /// Hold out about this fraction of the --csv rows as a test set (public, seeded split:
    /// row i is held out when a ChaCha20 draw keyed by --split-seed at stream i is below F, so
    /// the assignment depends on the row's index and the seed only, never on the data).
    // `requires = "csv"` alone is not enforced when --uci satisfies the input group.
    #[arg(long, requires = "csv", conflicts_with = "uci", value_parser = super::open_unit)]
    test_fraction: Option<f64>,
    /// Seed of the --test-fraction split (public; default 0).
    #[arg(long, requires = "test_fraction")]
    split_seed: Option<u64>,
    /// Target column of --csv (default `target`).
    #[arg(long, requires = "csv", conflicts_with = "uci")]
    label: Option<String>,
    /// Radius rows (z, 1) are divided by: `released` (default: the rows' root-mean-square norm,
    /// released privately with 5% of the budget, charged in the same ledger) or a declared public
    /// number.
    #[arg(long)]
    radius: Option<RadiusChoice>,
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

/// The training rows (raw units), the held-out rows (UCI splits only) and the declared ranges.
struct Input {
    train: Dataset,
    test: Option<Dataset>,
    ranges: PublicRanges,
    /// Feature names, in the order of the feature columns.
    names: Vec<String>,
    target: String,
    /// The input's public description (result.json `settings.input`).
    source: Value,
    /// Where the ranges were declared.
    ranges_source: String,
}

/// A UCI split folder, its split and its declared ranges.
fn uci_input(args: &Args, dir: &std::path::Path) -> Result<Input, CliError> {
    let uci = UciArgs {
        uci: dir.to_path_buf(),
        split: args.split,
        ranges: args.ranges.clone(),
        feature_range: args.feature_range,
        target_range: args.target_range,
    };
    let data = SplitFolder::load(dir)?;
    let Some(DeclaredRanges {
        ranges,
        names,
        target,
    }) = declared_ranges(&data, &uci)?
    else {
        return Err(usage(
            "--ranges",
            "no committed public ranges for this folder: pass --ranges FILE or \
             --feature-range LO:HI --target-range LO:HI",
        ));
    };
    let (train, test) = data.split(args.split)?;
    Ok(Input {
        train,
        test: Some(test),
        names,
        target,
        source: json!({ "dataset": data.name(), "split": args.split }),
        ranges_source: ranges.source().to_string(),
        ranges,
    })
}

/// A CSV file with a target column and a `name,lower,upper` ranges file. The header and the
/// ranges are read by the BLR loaders of vips-models (matched by name, every column listed);
/// the rows by the reader `predict` uses, so that fit and predict read a file alike (the BLR
/// row loader takes 0/1 labels only, not a real-valued target).
fn csv_input(args: &Args, csv: &std::path::Path) -> Result<Input, CliError> {
    let label = args.label.clone().unwrap_or_else(|| "target".to_string());
    let names = vips_models::blr::read_csv_header(csv, &label)?;
    let ranges_file = args.ranges.as_ref().ok_or_else(|| {
        usage(
            "--ranges",
            "--csv needs declared public ranges: a CSV file of lines name,lower,upper for every \
             feature and the --label column (never computed from the rows)",
        )
    })?;
    let mut columns = names.clone();
    columns.push(label.clone());
    let (lower, upper) = vips_models::blr::read_ranges_csv(ranges_file, &columns)?;
    let mut declared = lower
        .iter()
        .zip(&upper)
        .map(|(&lo, &hi)| PublicRange::new(lo, hi))
        .collect::<Result<Vec<_>, _>>()?;
    let target_range = declared.pop().ok_or(CliError::File {
        path: ranges_file.display().to_string(),
        reason: "no ranges".into(),
    })?;
    let ranges = PublicRanges::new(declared, target_range)?;
    let wanted: Vec<&str> = columns.iter().map(String::as_str).collect();
    let rows = read_feature_csv(csv, &wanted, &label)?;
    let d = names.len();
    let (mut x, mut y) = (Vec::with_capacity(rows.len() * d), Vec::new());
    let (mut tx, mut ty) = (Vec::new(), Vec::new());
    let split = args
        .test_fraction
        .map(|f| HeldOut::new(f, args.split_seed.unwrap_or(0)));
    for (i, r) in rows.into_iter().enumerate() {
        let (xs, ys) = match &split {
            Some(s) if s.holds_out(i) => (&mut tx, &mut ty),
            _ => (&mut x, &mut y),
        };
        xs.extend_from_slice(&r[..d]);
        ys.push(r[d]);
    }
    let test = match split {
        None => None,
        Some(_) if ty.is_empty() || y.is_empty() => {
            return Err(usage(
                "--test-fraction",
                format!(
                    "the split of {} left {} (give a fraction that keeps rows on both sides)",
                    csv.display(),
                    if y.is_empty() {
                        "no training rows"
                    } else {
                        "no test rows"
                    }
                ),
            ));
        }
        Some(_) => Some(Dataset::new(tx, ty, d)?),
    };
    Ok(Input {
        train: Dataset::new(x, y, d)?,
        test,
        ranges,
        names,
        target: label.clone(),
        source: json!({
            "csv": csv.display().to_string(),
            "label": label,
        }),
        ranges_source: ranges_file.display().to_string(),
    })
}

/// The public held-out split of `--csv --test-fraction F --split-seed S`: row `i` is held out
/// when the first draw of ChaCha20 keyed by `S` at stream `i` (a keyed pseudorandom function
/// of the row index), as a uniform in `[0, 1)`, is below `F`.
///
/// # Privacy
/// Public randomness: the assignment depends on the row's index and the seed only, never on
/// the row's values or on any other row, so it reveals nothing about the data. The held-out
/// rows are not fitted; their metrics describe them and are not covered by the fit's
/// guarantee (as the test rows of a `--uci` split).
struct HeldOut {
    fraction: f64,
    /// The ChaCha20 key `ChaCha20Rng::seed_from_u64(seed)` expands the seed to.
    key: [u8; 32],
}

impl HeldOut {
    fn new(fraction: f64, seed: u64) -> Self {
        use rand::SeedableRng;
        Self {
            fraction,
            key: rand::rngs::ChaCha20Rng::seed_from_u64(seed).get_seed(),
        }
    }

    /// Whether row `i` (0-based, in file order) is held out.
    fn holds_out(&self, i: usize) -> bool {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand::rngs::ChaCha20Rng::from_seed(self.key);
        rng.set_stream(i as u64);
        rng.random::<f64>() < self.fraction
    }
}

/// Fits and returns the saved model and the summary parts.
pub fn fit(args: &Args) -> Result<Fitted, CliError> {
    let c = &args.common;
    let (privacy, population) = c.privacy()?;
    let cancel = super::ctrl_c_token()?;
    let start = Instant::now();
    let Input {
        train,
        test,
        ranges,
        names,
        target: target_name,
        source,
        ranges_source,
    } = match (&args.uci, &args.csv) {
        (_, Some(csv)) => csv_input(args, csv)?,
        (Some(dir), None) => uci_input(args, dir)?,
        (None, None) => return Err(usage("--uci", "give --uci DIR or --csv FILE")),
    };
    let map = Standardizer::from_public_ranges(&ranges);
    let (train_z, box_clips) = map.transform_counted(&train);
    let test_z = test.as_ref().map(|t| map.transform(t));
    let target = TargetMap {
        centre: ranges.target().centre(),
        scale: ranges.target().scale(),
    };
    let options = LinregOptions {
        radius: args.radius.and_then(RadiusChoice::declared),
        prior_precision: args.prior_precision,
        prior_noise_shape: args.prior_noise_shape,
        prior_noise_rate: args.prior_noise_rate,
        floor_scale: args.floor_scale,
    };
    // Batch VB with one release (as `linreg::batch_config`), with the chosen accountant (PLD,
    // linreg's default, unless --accountant names another).
    let n = population.unwrap_or(train_z.len());
    let svi = SviConfig::builder()
        .expected_batch_size(n as f64)
        .population(population)
        .step(StepSize::Constant { rho: 1.0 })
        .stop(Stop::Iterations { iterations: 1 })
        .privacy(privacy)
        .accountant(c.accountant.unwrap_or(DEFAULT_ACCOUNTANT))
        .noise_seed(c.noise_seed)
        .cancel(cancel)
        .build()?;
    let out = fit_mapped(
        train.dim(),
        (0..train_z.len()).map(|i| (train_z.row(i), train_z.target(i))),
        test_z
            .iter()
            .flat_map(|t| (0..t.len()).map(move |i| t.row(i))),
        test.as_ref().map_or(&[][..], Dataset::targets),
        target,
        &options,
        &svi,
    )?;
    let (fitted, diag) = (out.fit.result, out.fit.diagnostics);
    let (model, rows, realised, rescaled, metrics, radius_sigma) = (
        out.model,
        out.rows,
        out.n_train,
        out.rows_clamped_or_rescaled,
        out.metrics,
        out.radius_noise_multiplier,
    );
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
    // The split that made the test rows: the UCI folder's standard split, or the seeded
    // --test-fraction split of a CSV file.
    let split = match args.test_fraction {
        Some(f) => json!({ "test_fraction": f, "split_seed": args.split_seed.unwrap_or(0) }),
        None => json!({ "split": args.split }),
    };
    let heldout = match &test {
        None => json!({
            "note": "no held-out rows: --csv fits every row unless --test-fraction holds some out \
                     (score new rows with `dp-bayes predict`)",
        }),
        Some(_) => {
            let mut h = split;
            match metrics {
                Some(m) => {
                    h["test_rmse"] = num(m.rmse);
                    h["test_log_likelihood"] = num(m.log_likelihood);
                }
                None => h["note"] = json!("the test split is empty"),
            }
            h
        }
    };
    let cfg = model.config();
    Ok(Fitted {
        sampling: Some(fitted.sampling.name()),
        model: "linreg",
        model_json: saved.to_json()?,
        iterations: fitted.iterations,
        dim: rows.dim(),
        heldout,
        settings: json!({
            "input": source,
            "ranges": ranges_source,
            "radius": rows.radius(),
            "radius_source": if radius_sigma.is_some() { "released" } else { "declared" },
            "radius_noise_multiplier": radius_sigma.unwrap_or(0.0),
            "prior_precision": cfg.prior_precision(),
            "prior_noise_shape": cfg.noise_prior().0,
            "prior_noise_rate": cfg.noise_prior().1,
            "floor_scale": cfg.floor_scale(),
            "eigenvalue_floor": num(fitted.global.eigenvalue_floor()),
            "eigenvalues_raised": fitted.global.eigenvalues_raised(),
        }),
        diagnostics: super::with_timings(
            json!({
                "n_train": realised,
                "n_test": test.as_ref().map_or(0, Dataset::len),
                "realised_population": diag.realised_population,
                "records_with_clipped_features": box_clips.records_with_clipped_features,
                "records_with_clipped_target": box_clips.records_with_clipped_target,
                "rows_clamped_or_rescaled": rescaled,
                "wall_clipped_records": diag.records_clipped,
                "wall_replaced_records": diag.records_replaced,
            }),
            &diag,
            start,
        ),
        privacy: fitted.privacy,
    })
}
