//! Private sigmoid belief network on binarised MNIST (or data from a known SBN).
//!
//! ```text
//! cargo run --release -p vips-models --example sbn -- \
//!     --idx ../shared/data/mnist10k --hidden 100 --batch-size 400 --epsilon 1 --delta 1e-5 --json
//! cargo run --release -p vips-models --example sbn -- --synthetic --json
//! ```
//! With `--noise-multiplier` instead of `--epsilon` the noise is fixed and the spent epsilon is
//! reported (003 Fig. 7). Without either the run is non-private (same code path, no noise).
//! Without `--idx` the embedded default is data from a known SBN (`--synthetic`); a missing
//! `--idx` directory is an error, never a switch to other data.
//!
//! A private run on `--idx` data needs `--population N`, a public figure for the number of
//! training images (for `--synthetic` the generator's 4000 is public and the default). Numbers that
//! are data-dependent and not noised (timings, clip counts, the training baseline accuracy, the
//! SNR, the realised image count) are printed only with `--diagnostics`, in a
//! `"diagnostics": {"private": false, ...}` object.
//!
//! Flags that would have no effect are refused (`--delta` without `--epsilon` or
//! `--noise-multiplier`, `--hidden`/`--threshold` with `--synthetic`, `--snr` without
//! `--diagnostics`, `--noise-seed` or `--sampling` in a non-private full-batch run).
//! `--sampling fixed` draws exactly `--batch-size` images per iteration without replacement
//! (replace-one, paper 001); the JSON's `"sampling"` says which regime ran. More than 10^7
//! iterations need `--allow-long-run`. Exit codes: 0 success, 2 usage and input errors, 1 output
//! errors, 130 Ctrl-C.

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use clap::Parser;
use rand::SeedableRng;
use vips_models::engine::VipsModel;
use vips_models::engine::{Privacy, StepSize, Stop, SviConfig, fit};
use vips_models::sbn::{
    GRelease, Sbn, SbnConfig, SbnNatural, SbnStatistics, baseline_pixel_accuracy, block_snr,
    heldout_lower_bound, load_mnist_dir, pixel_accuracy,
};

mod common;
use common::{CliError, count_usize, emit, finish, open_unit, positive, usage};

#[derive(Parser, Debug)]
#[command(
    about = "Private sigmoid belief network (VIPS, Pólya-Gamma augmentation)",
    allow_negative_numbers = true
)]
struct Args {
    /// MNIST-style directory with train-/t10k-images-idx3-ubyte[.gz].
    #[arg(long)]
    idx: Option<String>,
    /// Use data from a known SBN (J = 64, K = 8) instead of --idx.
    #[arg(long, conflicts_with = "idx")]
    synthetic: bool,
    /// Binarisation threshold (pixel >= threshold is 1; --idx only; default 128).
    #[arg(long, conflicts_with = "synthetic")]
    threshold: Option<u8>,
    /// Hidden units K (--idx only; default 100; the synthetic SBN has K = 8).
    #[arg(long, conflicts_with = "synthetic", value_parser = count_usize)]
    hidden: Option<usize>,
    /// Expected (Poisson) batch size S, or exactly S with --sampling fixed (capped at the
    /// population).
    #[arg(long, default_value_t = 400.0, value_parser = positive)]
    batch_size: f64,
    /// Expected passes over the training data.
    #[arg(long, default_value_t = 1.0, value_parser = positive)]
    passes: f64,
    /// Allow runs of more than 10^7 iterations (refused otherwise).
    #[arg(long)]
    allow_long_run: bool,
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
    /// A fixed noise multiplier instead of calibrating one to --epsilon (003 Fig. 7 fixes
    /// sigma = 1); the run reports the epsilon it spent at --delta.
    #[arg(long, conflicts_with = "epsilon", value_parser = positive)]
    noise_multiplier: Option<f64>,
    /// SVI delay tau0.
    #[arg(long, default_value_t = 1.0)]
    tau0: f64,
    /// SVI forgetting rate kappa.
    #[arg(long, default_value_t = 0.6)]
    kappa: f64,
    /// How G_j is released: per-unit (J Analyze-Gauss blocks) or pooled (default for large J K^2).
    #[arg(long)]
    g_release: Option<String>,
    /// Released statistics: `residual` (the shifts of q(c) and q(w_j) formed per record, six
    /// blocks; see `SbnStatistics`) or `paper` (the seven statistics of 000 Eq. 61-68).
    #[arg(long, default_value = "residual")]
    statistics: String,
    /// Declared bound of the large blocks (s5, s6 or r, and G) as a fraction of the worst case;
    /// the wall clips to it (see `SbnConfig::clip_fraction`). 1 = the worst-case sensitivities.
    #[arg(long, default_value_t = 0.25)]
    clip_fraction: f64,
    /// Test images used for the held-out bound (it costs J K^2 per image).
    #[arg(long, default_value_t = 500, value_parser = count_usize)]
    bound_images: usize,
    /// Seed the noise (reproducible; no privacy against whoever holds it).
    #[arg(long)]
    noise_seed: Option<u64>,
    /// Seed of the initial parameters.
    #[arg(long, default_value_t = 0)]
    init_seed: u64,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
    /// Progress to stderr.
    #[arg(long)]
    progress: bool,
    /// Add the signal-to-noise of every released block (`snr`: at the initial parameters, one
    /// batch of `S` training images, the run's noise multiplier). A non-private diagnostic,
    /// printed inside "diagnostics" (needs --diagnostics).
    #[arg(long)]
    snr: bool,
    /// Public population size N of the training images (q = S / N, the M-step). Required for
    /// private runs on --idx; default for --synthetic: the generator's 4000 (public).
    #[arg(long, value_parser = count_usize)]
    population: Option<usize>,
    /// Add the non-private diagnostics as a "diagnostics" object marked "private": false.
    #[arg(long)]
    diagnostics: bool,
}

fn main() -> ExitCode {
    finish(run(Args::parse()))
}

fn run(args: Args) -> Result<(), CliError> {
    let private = args.epsilon.is_some() || args.noise_multiplier.is_some();
    if !private && args.delta.is_some() {
        return Err(usage(
            "--delta",
            "has no effect without --epsilon or --noise-multiplier",
        ));
    }
    if !private && args.accountant.is_some() {
        return Err(usage(
            "--accountant",
            "has no effect without --epsilon or --noise-multiplier (a non-private run has no \
             accountant)",
        ));
    }
    if args.snr && !args.diagnostics {
        return Err(usage("--snr", "has no effect without --diagnostics"));
    }
    let cancel = common::ctrl_c_token()?;
    let (train, test, source) = match &args.idx {
        Some(dir) => {
            if !Path::new(dir).is_dir() {
                return Err(CliError::File {
                    path: dir.clone(),
                    reason: "not a directory (an MNIST-style directory with \
                             train-/t10k-images-idx3-ubyte[.gz])"
                        .into(),
                });
            }
            let (tr, te) = load_mnist_dir(Path::new(dir), args.threshold.unwrap_or(128))?;
            (tr, te, format!("idx:{dir}"))
        }
        None => {
            if args.hidden.is_some() || args.threshold.is_some() {
                return Err(usage(
                    if args.hidden.is_some() {
                        "--hidden"
                    } else {
                        "--threshold"
                    },
                    "has no effect on the synthetic data (J = 64, K = 8): give --idx DIR",
                ));
            }
            synthetic()
        }
    };
    let visible = train.first().map_or(0, |im| im.pixels.len());
    let hidden = if source == "synthetic" {
        8
    } else {
        args.hidden.unwrap_or(100)
    };
    let mut cfg = SbnConfig::builder(visible, hidden);
    match args.g_release.as_deref() {
        Some("per-unit") => cfg = cfg.g_release(GRelease::PerUnit),
        Some("pooled") => cfg = cfg.g_release(GRelease::Pooled),
        Some(other) => {
            return Err(usage(
                "--g-release",
                format!("unknown `{}` (per-unit | pooled)", common::excerpt(other)),
            ));
        }
        None => {}
    }
    cfg = cfg.clip_fraction(args.clip_fraction);
    let statistics = match args.statistics.as_str() {
        "paper" => SbnStatistics::Paper,
        "residual" => SbnStatistics::Residual,
        other => {
            return Err(usage(
                "--statistics",
                format!("unknown `{}` (paper | residual)", common::excerpt(other)),
            ));
        }
    };
    cfg = cfg.statistics(statistics);
    let model = Sbn::new(cfg.build()?)?;
    model.check_images(&train)?;
    model.check_images(&test)?;
    let privacy = match (args.epsilon, args.noise_multiplier) {
        (Some(epsilon), _) => Privacy::Target {
            epsilon,
            delta: args.delta.unwrap_or(1e-5),
        },
        // A budget no run reaches: the ledger reports what the fixed noise spent.
        (None, Some(noise_multiplier)) => Privacy::NoiseMultiplier {
            noise_multiplier,
            epsilon: 1e6,
            delta: args.delta.unwrap_or(1e-5),
        },
        (None, None) => Privacy::NonPrivate,
    };
    let population = match args.population {
        Some(n) => Some(n),
        None if source == "synthetic" => Some(SYNTHETIC_TRAIN),
        None => None,
    };
    // Capping S at the public N (never at the number of images).
    let cap = population.unwrap_or(train.len()) as f64;
    if !private && args.noise_seed.is_some() && args.batch_size >= cap {
        return Err(usage(
            "--noise-seed",
            "has no effect in a non-private full-batch run (no noise, every record sampled)",
        ));
    }
    common::check_sampling(args.sampling, private, args.batch_size.min(cap), cap)?;
    let svi = common::with_batching(
        SviConfig::builder(),
        args.sampling,
        args.batch_size.min(cap),
    )
    .population(population)
    .step(StepSize::robbins_monro(args.tau0, args.kappa)?)
    .stop(Stop::Passes {
        passes: args.passes,
    })
    .privacy(privacy)
    .accountant(args.accountant.unwrap_or_default())
    .noise_seed(args.noise_seed)
    .init_seed(args.init_seed)
    .progress(args.progress)
    .progress_bar(true)
    .allow_long_run(args.allow_long_run)
    .cancel(cancel)
    .build()?;
    let baseline = args
        .diagnostics
        .then(|| baseline_pixel_accuracy(&train, &test));
    let n_train = train.len();
    let snr_batch: Vec<_> = if args.snr && args.diagnostics {
        train[..(svi.expected_batch_size() as usize).min(n_train)].to_vec()
    } else {
        Vec::new()
    };
    let start = Instant::now();
    let fitted = fit(&model, train, &svi, |_, _| {})?;
    let (result, diagnostics) = (fitted.result, fitted.diagnostics);
    let seconds = start.elapsed().as_secs_f64();
    let natural = SbnNatural::from_global(&result.global);
    let accuracy = pixel_accuracy(&model, &natural, &test);
    let bound_set = &test[..args.bound_images.min(test.len())];
    let bound = heldout_lower_bound(&model, &natural, bound_set);
    let snr = if args.snr && args.diagnostics {
        let mut rng = rand::rngs::ChaCha8Rng::seed_from_u64(args.init_seed);
        let init = SbnNatural::from_global(&model.init_global(&mut rng)?);
        // noise std / bound: sigma times the regime's sensitivity factor (2 under replace-one)
        let factor = svi
            .sampling_scheme(result.privacy.public_population)?
            .sensitivity_factor();
        let sigma = result.privacy.noise_multiplier.unwrap_or(0.0) * factor;
        Some(block_snr(&model, &init, &snr_batch, sigma))
    } else {
        None
    };
    let mut out = serde_json::json!({
        "model": "sbn",
        "data": source,
        "population": result.privacy.public_population,
        "population_declared": result.privacy.population_declared,
        "test_images": test.len(),
        "visible": visible,
        "hidden": hidden,
        "g_release": format!("{:?}", model.config().g_release()),
        "clip_fraction": model.config().clip_fraction(),
        "statistics": format!("{:?}", model.config().statistics()),
        "epsilon": result
            .privacy
            .epsilon
            .map_or(serde_json::json!("inf"), |e| serde_json::json!(e)),
        "noise_multiplier": result.privacy.noise_multiplier.unwrap_or(0.0),
        "sampling_rate": result.privacy.sampling_rate,
        "expected_batch_size": result.privacy.expected_batch_size,
        "neighbouring": result.privacy.neighbouring,
        "sampling": result.sampling.name(),
        "rng": result.privacy.rng,
        "pixel_accuracy": accuracy,
        "heldout_lower_bound_per_image": bound,
        "heldout_bound_images": bound_set.len(),
        "iterations": result.iterations,
    });
    match result.privacy.delta {
        Some(delta) => {
            out["delta"] = serde_json::json!(delta);
            out["accountant"] = serde_json::json!(result.privacy.accountant.name());
        }
        None => out["epsilon_reason"] = serde_json::json!("non-private run: no noise"),
    }
    if args.diagnostics {
        let mut d = serde_json::json!({
            "private": false,
            "train_images": n_train,
            "realised_population": diagnostics.realised_population,
            "baseline_pixel_accuracy": baseline.unwrap_or(f64::NAN),
            "seconds": seconds,
            "fit_seconds": diagnostics.seconds,
            "records_clipped": diagnostics.records_clipped,
        });
        if let Some(c) = diagnostics.cpu_seconds {
            d["cpu_seconds"] = serde_json::json!(c);
        }
        if let Some(snr) = snr {
            d["snr"] = serde_json::to_value(snr).map_err(|e| CliError::Output(e.into()))?;
        }
        out["diagnostics"] = d;
    }
    emit(&out, args.json)
}

/// Training images of the synthetic data set (the generator's configured size: public).
const SYNTHETIC_TRAIN: usize = vips_models::sbn::SYNTHETIC_TRAIN;

/// The library's embedded synthetic data (`vips_models::sbn::synthetic_images`).
fn synthetic() -> (
    Vec<vips_models::sbn::BinaryImage>,
    Vec<vips_models::sbn::BinaryImage>,
    String,
) {
    let (train, test) = vips_models::sbn::synthetic_images();
    (train, test, "synthetic".into())
}
