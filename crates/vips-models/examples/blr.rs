//! Private Bayesian logistic regression on a CSV or LIBSVM file, with a stratified held-out split.
//!
//! ```text
//! cargo run --release -p vips-models --example blr -- \
//!     --csv ../shared/data/breast_cancer/breast_cancer.csv --label target --epsilon 1 --delta 1e-5 --json
//! ```
//! Without `--epsilon` the run is non-private (same code path, no noise). Feature scaling is
//! public: `--ranges FILE` (CSV `name,lower,upper`, one line per feature column), the published
//! WDBC ranges when the header is the WDBC header, or `--no-scaling` for rows already in the unit
//! ball. Nothing is fitted to the rows.
//!
//! A private run needs `--population N`, a public figure for the number of training records (the
//! run uses it in `q = S / N` and in the M-step; the count of the private rows is never used or
//! printed), and for a LIBSVM file the public dimension `--dim`. Wrong-dimension rows are refused
//! when the file is loaded, naming the file and line. Data-dependent numbers that are not noised
//! (timings, clip counts, the realised record counts) are printed only with `--diagnostics`, in a
//! `"diagnostics": {"private": false, ...}` object.

use std::time::Instant;

use clap::Parser;
use vips_models::blr::{
    self, Blr, BlrConfig, BlrError, CsvOptions, FeatureMap, Hyperprior, LibsvmOptions, Loaded,
    evaluate, stratified_split,
};
use vips_models::engine::{EngineError, Privacy, StepSize, Stop, SviConfig};

#[derive(Parser, Debug)]
#[command(about = "Private Bayesian logistic regression (VIPS, Pólya-Gamma augmentation)")]
struct Args {
    /// CSV file with a header.
    #[arg(long, conflicts_with = "libsvm")]
    csv: Option<String>,
    /// LIBSVM file (sparse); see --dim and --radius.
    #[arg(long)]
    libsvm: Option<String>,
    /// Label column of the CSV.
    #[arg(long, default_value = "target")]
    label: String,
    /// Public per-feature ranges, CSV lines `name,lower,upper`.
    #[arg(long)]
    ranges: Option<String>,
    /// Rows are already in the unit ball (clipped and counted if not).
    #[arg(long)]
    no_scaling: bool,
    /// Do not append a constant intercept feature (CSV with ranges only).
    #[arg(long)]
    no_intercept: bool,
    /// Public dimension of a LIBSVM file (required for private runs; ids above it are refused
    /// with the file and line).
    #[arg(long)]
    dim: Option<usize>,
    /// Public radius LIBSVM rows are divided by before clipping.
    #[arg(long, default_value_t = 1.0)]
    radius: f64,
    /// Total epsilon (omit for a non-private run).
    #[arg(long)]
    epsilon: Option<f64>,
    /// Total delta.
    #[arg(long, default_value_t = 1e-5)]
    delta: f64,
    /// Iterations (releases); default 1 when private (one release: all the budget on one noisy
    /// statistic), 30 when not.
    #[arg(long)]
    iterations: Option<u64>,
    /// Expected batch size for stochastic VI (default: all training rows = batch VB).
    #[arg(long)]
    batch_size: Option<f64>,
    /// SVI delay tau0 (with --batch-size).
    #[arg(long, default_value_t = 1.0)]
    tau0: f64,
    /// SVI forgetting rate kappa (with --batch-size).
    #[arg(long, default_value_t = 0.7)]
    kappa: f64,
    /// Held-out fraction of each class.
    #[arg(long, default_value_t = 0.2)]
    test_fraction: f64,
    /// Seed of the split (public randomness).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Seed the noise on purpose (reproducible, no privacy against whoever knows it); default:
    /// ChaCha20 from OS entropy.
    #[arg(long)]
    noise_seed: Option<u64>,
    /// Shape `a0` of the Gamma hyperprior on the prior precision.
    #[arg(long, default_value_t = 1.0)]
    a0: f64,
    /// Rate `b0` of the Gamma hyperprior on the prior precision.
    #[arg(long, default_value_t = 1.0)]
    b0: f64,
    /// Public population size N of the training set (used in q = S / N and the M-step; batch VB
    /// uses S = N). Required for private runs: a public figure, never the count of the rows.
    #[arg(long)]
    population: Option<usize>,
    /// Add the non-private diagnostics (timings, clip counts, realised counts) as a
    /// "diagnostics" object marked "private": false. Do not publish them.
    #[arg(long)]
    diagnostics: bool,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

fn read_ranges(path: &str) -> Result<(Vec<f64>, Vec<f64>), Box<dyn std::error::Error>> {
    let text = std::fs::read_to_string(path)?;
    let (mut lo, mut hi) = (Vec::new(), Vec::new());
    for (i, line) in text.lines().enumerate() {
        let f: Vec<&str> = line.trim().split(',').collect();
        if line.trim().is_empty() {
            continue;
        }
        if f.len() != 3 {
            return Err(format!("{path} line {}: expected name,lower,upper", i + 1).into());
        }
        lo.push(f[1].trim().parse()?);
        hi.push(f[2].trim().parse()?);
    }
    Ok((lo, hi))
}

fn load(args: &Args) -> Result<(Loaded, String), Box<dyn std::error::Error>> {
    if let Some(path) = &args.libsvm {
        if args.epsilon.is_some() && args.dim.is_none() {
            return Err(BlrError::Undeclared {
                what: "LIBSVM dimension",
                flag: "--dim",
                reason: "the largest feature id of the file is a property of the private data",
            }
            .into());
        }
        let loaded = blr::load_libsvm(
            path,
            LibsvmOptions {
                dim: args.dim,
                radius: args.radius,
            },
        )?;
        return Ok((
            loaded,
            format!("x / {} then clip to the unit ball", args.radius),
        ));
    }
    let path = args.csv.as_ref().ok_or("give --csv or --libsvm")?;
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))?;
    let header: Vec<String> = text
        .lines()
        .next()
        .unwrap_or("")
        .trim_end_matches('\r')
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| *s != args.label)
        .collect();
    let (map, described) = if args.no_scaling {
        (
            None,
            "none (rows assumed in the unit ball; clipped if not)".to_string(),
        )
    } else if let Some(r) = &args.ranges {
        let (lo, hi) = read_ranges(r)?;
        (
            Some(FeatureMap::from_ranges(&lo, &hi, !args.no_intercept)?),
            format!("public ranges from {r} onto [-1,1], intercept, / sqrt(d)"),
        )
    } else if blr::is_wdbc_header(&header) {
        let map = if args.no_intercept {
            let lo: Vec<f64> = blr::WDBC_PUBLISHED_RANGES.iter().map(|r| r.1).collect();
            let hi: Vec<f64> = blr::WDBC_PUBLISHED_RANGES.iter().map(|r| r.2).collect();
            FeatureMap::from_ranges(&lo, &hi, false)?
        } else {
            blr::wdbc_feature_map()
        };
        (
            Some(map),
            "published WDBC ranges onto [-1,1], intercept, / sqrt(d) (public, not fitted)".into(),
        )
    } else {
        return Err("no public scaling: pass --ranges FILE or --no-scaling".into());
    };
    let loaded = blr::parse_csv(
        &text,
        &CsvOptions {
            label: args.label.clone(),
            map,
        },
    )
    .map_err(|e| BlrError::InFile {
        path: path.clone(),
        source: Box::new(e),
    })?;
    Ok((loaded, described))
}

fn main() {
    let args = Args::parse();
    if let Err(e) = run(&args) {
        eprintln!("error: {e}");
        std::process::exit(2);
    }
}

fn run(args: &Args) -> Result<(), Box<dyn std::error::Error>> {
    let (loaded, map_description) = load(args)?;
    let dim = loaded.report.dim;
    let clipped_fraction = loaded.report.clipped_fraction();
    let (train, test) = stratified_split(loaded.records, args.test_fraction, args.seed)?;
    let realised_train = train.len();
    let population = match (args.population, args.epsilon) {
        (Some(n), _) => n,
        (None, None) => realised_train,
        (None, Some(_)) => return Err(EngineError::PopulationNotDeclared.into()),
    };
    let privacy = match args.epsilon {
        Some(epsilon) => Privacy::Target {
            epsilon,
            delta: args.delta,
        },
        None => Privacy::NonPrivate,
    };
    let iterations = args
        .iterations
        .unwrap_or(if args.epsilon.is_some() { 1 } else { 30 });
    let svi = match args.batch_size {
        None => blr::batch_config(population, iterations, privacy, args.noise_seed)?,
        Some(s) => SviConfig::builder()
            .expected_batch_size(s)
            .step(StepSize::robbins_monro(args.tau0, args.kappa)?)
            .stop(Stop::Iterations { iterations })
            .privacy(privacy)
            .noise_seed(args.noise_seed)
            .population(Some(population))
            .build()?,
    };
    let model = Blr::new(BlrConfig::new(dim)?.hyperprior(Hyperprior::Gamma {
        shape: args.a0,
        rate: args.b0,
    })?);
    let start = Instant::now();
    let fit = blr::fit(&model, train, &svi)?;
    let seconds = start.elapsed().as_secs_f64();
    let (fitted, diagnostics) = (fit.result, fit.diagnostics);
    let metrics = evaluate(fitted.global.posterior(), &test).ok_or("empty test set")?;
    let mut out = serde_json::json!({
        "epsilon": args.epsilon.map_or(serde_json::json!("inf"), |e| serde_json::json!(e)),
        "delta": args.epsilon.map(|_| args.delta),
        "epsilon_spent": fitted.privacy.epsilon.map_or(serde_json::json!("inf"), |e| serde_json::json!(e)),
        "auc": metrics.auc,
        "accuracy": metrics.accuracy,
        "log_loss": metrics.log_loss,
        "population": fitted.privacy.public_population,
        "population_declared": fitted.privacy.population_declared,
        "n_test": test.len(),
        "dim": dim,
        "iterations": fitted.iterations,
        "expected_batch_size": fitted.privacy.expected_batch_size,
        "noise_multiplier": fitted.privacy.noise_multiplier.unwrap_or(0.0),
        "neighbouring": fitted.privacy.neighbouring,
        "rng": fitted.privacy.rng,
        "split_seed": args.seed,
        "test_fraction": args.test_fraction,
        "feature_map": map_description,
        "alpha_mean": fitted.global.alpha_mean(),
        "eigenvalues_raised_last_release": fitted.global.eigenvalues_raised(),
    });
    if args.epsilon.is_none() {
        out["epsilon_reason"] = serde_json::json!("non-private run: no noise");
    }
    if args.diagnostics {
        out["diagnostics"] = serde_json::json!({
            "private": false,
            "seconds": seconds,
            "fit_seconds": diagnostics.seconds,
            "clipped_fraction": clipped_fraction,
            "wall_clipped_records": diagnostics.records_clipped,
            "n_train": realised_train,
            "realised_population": diagnostics.realised_population,
        });
    }
    if args.json {
        println!("{out}");
    } else {
        println!("{}", serde_json::to_string_pretty(&out)?);
    }
    Ok(())
}
