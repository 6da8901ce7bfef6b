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
//! `"diagnostics": {"private": false, ...}` object (with the process's CPU seconds so far and its
//! peak resident memory, `VmHWM` in KiB, on Linux).
//!
//! A `--ranges` file is matched to the CSV header by name and must cover every feature column
//! (a missing or unknown name is an error naming it). Flags that would have no effect are
//! refused (`--delta` without `--epsilon`, `--tau0`/`--kappa` without `--batch-size`, `--dim`
//! or `--radius` with `--csv`, `--ranges`/`--no-intercept`/`--label` with `--libsvm`,
//! `--noise-seed` or `--sampling` in a non-private full-batch run). `--sampling fixed` draws
//! exactly `--batch-size` rows per iteration without replacement (replace-one, paper 001; the
//! full batch `N` without `--batch-size`); the JSON's `"sampling"` says which regime ran.
//! More than 10^7 iterations need
//! `--allow-long-run`. Exit codes: 0 success, 2 usage and input errors, 1 output errors, 130
//! Ctrl-C.

use std::process::ExitCode;
use std::time::Instant;

use clap::Parser;
use vips_models::blr::{
    self, Blr, BlrConfig, BlrError, CsvOptions, FeatureMap, Hyperprior, LibsvmOptions, Loaded,
    evaluate, stratified_split,
};
use vips_models::engine::{
    EngineError, Privacy, StepSize, Stop, SviConfig, process_cpu_seconds, process_peak_rss_kib,
};

mod common;
use common::{CliError, count, emit, finish, open_unit, positive, usage};

#[derive(Parser, Debug)]
#[command(
    about = "Private Bayesian logistic regression (VIPS, Pólya-Gamma augmentation)",
    allow_negative_numbers = true
)]
struct Args {
    /// CSV file with a header.
    #[arg(long, conflicts_with = "libsvm")]
    csv: Option<String>,
    /// LIBSVM file (sparse); see --dim and --radius.
    #[arg(long)]
    libsvm: Option<String>,
    /// Label column of the CSV (default `target`).
    #[arg(long, conflicts_with = "libsvm")]
    label: Option<String>,
    /// Public per-feature ranges, CSV lines `name,lower,upper`, matched to the header by name;
    /// every feature column must be listed.
    #[arg(long, conflicts_with_all = ["libsvm", "no_scaling"])]
    ranges: Option<String>,
    /// Rows are already in the unit ball (clipped and counted if not).
    #[arg(long)]
    no_scaling: bool,
    /// Do not append a constant intercept feature (CSV with ranges only).
    #[arg(long, conflicts_with_all = ["libsvm", "no_scaling"])]
    no_intercept: bool,
    /// Public dimension of a LIBSVM file (required for private runs; ids above it are refused
    /// with the file and line).
    #[arg(long, conflicts_with = "csv", value_parser = common::count_usize)]
    dim: Option<usize>,
    /// Public radius LIBSVM rows are divided by before clipping (default 1).
    #[arg(long, conflicts_with = "csv", value_parser = positive)]
    radius: Option<f64>,
    /// The accountant that calibrates the noise and accounts the run: rdp (default), pld (the
    /// least noise for the same epsilon), moments (003), zcdp (000), advanced or linear
    /// composition (docs/accountant.md, section 11). Needs a private run.
    #[arg(long, value_parser = common::accountant)]
    accountant: Option<dp_accountant::AccountantKind>,
    /// Batch sampling: poisson (default; each record with probability S / N, add/remove-one) or
    /// fixed (exactly S records without replacement, replace-one: twice the sensitivity, the
    /// fixed-size subsampled Gaussian event; paper 001; every accountant, PLD included). Refused in a
    /// non-private full-batch run, where it has no effect.
    #[arg(long, value_parser = common::sampling)]
    sampling: Option<vips_models::engine::Batching>,
    /// Total epsilon (omit for a non-private run).
    #[arg(long, value_parser = positive)]
    epsilon: Option<f64>,
    /// Total delta (private runs; default 1e-5).
    #[arg(long, value_parser = open_unit)]
    delta: Option<f64>,
    /// Iterations (releases); default 1 when private (one release: all the budget on one noisy
    /// statistic), 30 when not.
    #[arg(long, value_parser = count)]
    iterations: Option<u64>,
    /// Allow runs of more than 10^7 iterations (refused otherwise).
    #[arg(long)]
    allow_long_run: bool,
    /// Expected batch size for stochastic VI (default: all training rows = batch VB).
    #[arg(long, value_parser = positive)]
    batch_size: Option<f64>,
    /// SVI delay tau0 (with --batch-size; default 1).
    #[arg(long, requires = "batch_size")]
    tau0: Option<f64>,
    /// SVI forgetting rate kappa (with --batch-size; default 0.7).
    #[arg(long, requires = "batch_size")]
    kappa: Option<f64>,
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
    /// Ridge `k x 2 sqrt(d) x noise std` on each private release's likelihood precision
    /// (default 0); keeps runs of several private releases from collapsing.
    #[arg(long, requires = "epsilon")]
    noise_ridge: Option<f64>,
    /// Public population size N of the training set (used in q = S / N and the M-step; batch VB
    /// uses S = N). Required for private runs: a public figure, never the count of the rows.
    #[arg(long, value_parser = common::count_usize)]
    population: Option<usize>,
    /// Add the non-private diagnostics (timings, clip counts, realised counts) as a
    /// "diagnostics" object marked "private": false. Do not publish them.
    #[arg(long)]
    diagnostics: bool,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
    /// Write a synthetic stand-in of the stroke data to FILE (LIBSVM, `d = 4,146`, 10,000 sparse
    /// binary rows with about 39 active features each, labels from a sparse logistic model: the
    /// rows of `benches/blr.rs`) and exit. Fit it with `--libsvm FILE --dim 4146 --radius
    /// 8.94427190999916` (`sqrt(80)`, the bench's public radius).
    #[arg(long, conflicts_with_all = ["csv", "libsvm"])]
    synthetic_stroke: Option<String>,
}

/// Writes the bench's synthetic stroke-scale rows (`benches/blr.rs`, `synthetic(10_000, 4146,
/// 40, 1)`) as LIBSVM: ids 1-based, binary values (the public radius `sqrt(80)` is applied when
/// loading).
fn write_synthetic_stroke(path: &str) -> Result<(), CliError> {
    use rand::rngs::ChaCha8Rng;
    use rand::{RngExt, SeedableRng};
    use rand_distr::StandardNormal;
    use std::io::Write;
    let (n, d, k) = (10_000usize, 4146usize, 40usize);
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let w: Vec<f64> = (0..d)
        .map(|j| {
            if j % 50 == 0 {
                rng.sample::<f64, _>(StandardNormal) * 3.0
            } else {
                0.0
            }
        })
        .collect();
    let radius = ((2 * k) as f64).sqrt();
    let failed = |e: std::io::Error| CliError::File {
        path: path.to_string(),
        reason: format!("cannot write: {e}"),
    };
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).map_err(failed)?);
    for _ in 0..n {
        let active = k / 2 + rng.random_range(0..k);
        let mut idx: Vec<u32> = (0..active).map(|_| rng.random_range(0..d as u32)).collect();
        idx.sort_unstable();
        idx.dedup();
        let score: f64 = idx.iter().map(|&i| w[i as usize]).sum::<f64>() / radius;
        let y = rng.random::<f64>() < blr::sigmoid(4.0 * score);
        write!(out, "{}", u8::from(y)).map_err(failed)?;
        for i in idx {
            write!(out, " {}:1", i + 1).map_err(failed)?;
        }
        writeln!(out).map_err(failed)?;
    }
    out.flush().map_err(failed)?;
    eprintln!(
        "wrote {path}: {n} rows, d = {d}; fit with --libsvm {path} --dim {d} --radius {radius}"
    );
    Ok(())
}

fn load(args: &Args) -> Result<(Loaded, String), CliError> {
    if let Some(path) = &args.libsvm {
        let radius = args.radius.unwrap_or(1.0);
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
                radius,
            },
        )?;
        return Ok((loaded, format!("x / {radius} then clip to the unit ball")));
    }
    let path = args
        .csv
        .as_ref()
        .ok_or_else(|| usage("--csv", "give --csv FILE or --libsvm FILE"))?;
    let label = args.label.clone().unwrap_or_else(|| "target".into());
    // The header only (bounded): the rows are read by `load_csv` with its limits.
    let header: Vec<String> = {
        use std::io::{BufRead, Read};
        let file = std::fs::File::open(path).map_err(|e| BlrError::Io {
            path: path.clone(),
            source: e,
        })?;
        let mut first = Vec::new();
        std::io::BufReader::new(file)
            .take(vips_models::limits::MAX_LINE_BYTES as u64)
            .read_until(b'\n', &mut first)
            .map_err(|e| BlrError::Io {
                path: path.clone(),
                source: e,
            })?;
        String::from_utf8_lossy(&first)
            .trim_end_matches(['\r', '\n'])
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| *s != label)
            .collect()
    };
    let (map, described) = if args.no_scaling {
        (
            None,
            "none (rows assumed in the unit ball; clipped if not)".to_string(),
        )
    } else if let Some(r) = &args.ranges {
        let (lo, hi) = vips_models::blr::read_ranges_csv(r, &header)?;
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
        return Err(usage(
            "--ranges",
            "no public scaling for this header: pass --ranges FILE or --no-scaling",
        ));
    };
    let loaded = blr::load_csv(path, &CsvOptions { label, map })?;
    Ok((loaded, described))
}

fn main() -> ExitCode {
    finish(run(&Args::parse()))
}

fn run(args: &Args) -> Result<(), CliError> {
    if let Some(path) = &args.synthetic_stroke {
        return write_synthetic_stroke(path);
    }
    if args.epsilon.is_none() && args.delta.is_some() {
        return Err(usage("--delta", "has no effect without --epsilon"));
    }
    if args.epsilon.is_none() && args.accountant.is_some() {
        return Err(usage(
            "--accountant",
            "has no effect without --epsilon (a non-private run has no accountant)",
        ));
    }
    if args.epsilon.is_none() && args.noise_seed.is_some() && args.batch_size.is_none() {
        return Err(usage(
            "--noise-seed",
            "has no effect in a non-private full-batch run (no noise, every record sampled)",
        ));
    }
    let cancel = common::ctrl_c_token()?;
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
            delta: args.delta.unwrap_or(1e-5),
        },
        None => Privacy::NonPrivate,
    };
    let iterations = args
        .iterations
        .unwrap_or(if args.epsilon.is_some() { 1 } else { 30 });
    let (batch, step) = match args.batch_size {
        None => (population as f64, StepSize::Constant { rho: 1.0 }),
        Some(s) => (
            s,
            StepSize::robbins_monro(args.tau0.unwrap_or(1.0), args.kappa.unwrap_or(0.7))?,
        ),
    };
    common::check_sampling(
        args.sampling,
        args.epsilon.is_some(),
        batch,
        population as f64,
    )?;
    let svi = common::with_batching(SviConfig::builder(), args.sampling, batch)
        .step(step)
        .stop(Stop::Iterations { iterations })
        .privacy(privacy)
        .accountant(args.accountant.unwrap_or_default())
        .noise_seed(args.noise_seed)
        .population(Some(population))
        .progress_bar(true)
        .allow_long_run(args.allow_long_run)
        .cancel(cancel)
        .build()?;
    let model = Blr::new(
        BlrConfig::builder(dim)
            .hyperprior(Hyperprior::Gamma {
                shape: args.a0,
                rate: args.b0,
            })
            .noise_ridge(args.noise_ridge.unwrap_or(0.0))
            .build()?,
    );
    let start = Instant::now();
    let fit = blr::fit(&model, train, &svi)?;
    let seconds = start.elapsed().as_secs_f64();
    let (fitted, diagnostics) = (fit.result, fit.diagnostics);
    let metrics = evaluate(fitted.global.posterior(), &test).ok_or_else(|| {
        usage(
            "--test-fraction",
            "the held-out set cannot be scored (empty or one class only)",
        )
    })?;
    let mut out = serde_json::json!({
        "epsilon": args.epsilon.map_or(serde_json::json!("inf"), |e| serde_json::json!(e)),
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
        "sampling": fitted.sampling.name(),
        "rng": fitted.privacy.rng,
        "split_seed": args.seed,
        "test_fraction": args.test_fraction,
        "feature_map": map_description,
        "alpha_mean": fitted.global.alpha_mean(),
        "eigenvalues_raised_last_release": fitted.global.eigenvalues_raised(),
    });
    match fitted.privacy.delta {
        Some(delta) => {
            out["delta"] = serde_json::json!(delta);
            out["accountant"] = serde_json::json!(fitted.privacy.accountant.name());
        }
        None => out["epsilon_reason"] = serde_json::json!("non-private run: no noise"),
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
            "process_cpu_seconds": process_cpu_seconds(),
            "peak_rss_kib": process_peak_rss_kib(),
        });
    }
    emit(&out, args.json)
}
