//! Private sigmoid belief network on binarised MNIST (or data from a known SBN).
//!
//! ```text
//! cargo run --release -p vips-models --example sbn -- \
//!     --idx ../shared/data/mnist10k --hidden 100 --batch-size 400 --epsilon 1 --delta 1e-5 --json
//! cargo run --release -p vips-models --example sbn -- --synthetic --json
//! ```
//! With `--noise-multiplier` instead of `--epsilon` the noise is fixed and the spent epsilon is
//! reported (003 Fig. 7). Without either the run is non-private (same code path, no noise).
//! Without `--idx` (or when the directory is absent) the embedded default is data from a known
//! SBN (`--synthetic`).
//!
//! A private run on `--idx` data needs `--population N`, a public figure for the number of
//! training images (for `--synthetic` the generator's 4000 is public and the default). Numbers that
//! are data-dependent and not noised (timings, clip counts, the training baseline accuracy, the
//! SNR, the realised image count) are printed only with `--diagnostics`, in a
//! `"diagnostics": {"private": false, ...}` object.

use std::path::Path;
use std::time::Instant;

use clap::Parser;
use rand::SeedableRng;
use vips_models::engine::VipsModel;
use vips_models::engine::{Privacy, StepSize, Stop, SviConfig, fit};
use vips_models::sbn::{
    GRelease, Sbn, SbnConfig, SbnNatural, SbnStatistics, SyntheticSbn, baseline_pixel_accuracy,
    block_snr, heldout_lower_bound, load_mnist_dir, pixel_accuracy,
};

#[derive(Parser, Debug)]
#[command(about = "Private sigmoid belief network (VIPS, Pólya-Gamma augmentation)")]
struct Args {
    /// MNIST-style directory with train-/t10k-images-idx3-ubyte[.gz].
    #[arg(long)]
    idx: Option<String>,
    /// Use data from a known SBN (J = 64, K = 8) instead of --idx.
    #[arg(long)]
    synthetic: bool,
    /// Binarisation threshold (pixel >= threshold is 1).
    #[arg(long, default_value_t = 128)]
    threshold: u8,
    /// Hidden units K.
    #[arg(long, default_value_t = 100)]
    hidden: usize,
    /// Expected (Poisson) batch size S.
    #[arg(long, default_value_t = 400.0)]
    batch_size: f64,
    /// Expected passes over the training data.
    #[arg(long, default_value_t = 1.0)]
    passes: f64,
    /// Total epsilon (omit for a non-private run).
    #[arg(long)]
    epsilon: Option<f64>,
    /// Total delta.
    #[arg(long, default_value_t = 1e-5)]
    delta: f64,
    /// A fixed noise multiplier instead of calibrating one to --epsilon (003 Fig. 7 fixes
    /// sigma = 1); the run reports the epsilon it spent at --delta.
    #[arg(long, conflicts_with = "epsilon")]
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
    #[arg(long, default_value_t = 500)]
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
    #[arg(long)]
    population: Option<usize>,
    /// Add the non-private diagnostics as a "diagnostics" object marked "private": false.
    #[arg(long)]
    diagnostics: bool,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    let (train, test, source) = match (&args.idx, args.synthetic) {
        (Some(dir), false) if Path::new(dir).is_dir() => {
            let (tr, te) = load_mnist_dir(Path::new(dir), args.threshold)?;
            (tr, te, format!("idx:{dir}"))
        }
        (Some(dir), false) => {
            eprintln!("{dir} is absent: using data from a known SBN (--synthetic)");
            synthetic()
        }
        _ => synthetic(),
    };
    let visible = train[0].pixels.len();
    let hidden = if source == "synthetic" {
        8
    } else {
        args.hidden
    };
    let mut cfg = SbnConfig::new(visible, hidden)?;
    match args.g_release.as_deref() {
        Some("per-unit") => cfg.g_release = GRelease::PerUnit,
        Some("pooled") => cfg.g_release = GRelease::Pooled,
        Some(other) => {
            return Err(format!("unknown --g-release {other} (per-unit | pooled)").into());
        }
        None => {}
    }
    cfg.clip_fraction = args.clip_fraction;
    cfg.statistics = match args.statistics.as_str() {
        "paper" => SbnStatistics::Paper,
        "residual" => SbnStatistics::Residual,
        other => return Err(format!("unknown --statistics {other} (paper | residual)").into()),
    };
    let model = Sbn::new(cfg)?;
    model.check_images(&train)?;
    model.check_images(&test)?;
    let privacy = match (args.epsilon, args.noise_multiplier) {
        (Some(epsilon), _) => Privacy::Target {
            epsilon,
            delta: args.delta,
        },
        // A budget no run reaches: the ledger reports what the fixed noise spent.
        (None, Some(noise_multiplier)) => Privacy::NoiseMultiplier {
            noise_multiplier,
            epsilon: 1e6,
            delta: args.delta,
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
    let svi = SviConfig::builder()
        .expected_batch_size(args.batch_size.min(cap))
        .population(population)
        .step(StepSize::robbins_monro(args.tau0, args.kappa)?)
        .stop(Stop::Passes {
            passes: args.passes,
        })
        .privacy(privacy)
        .noise_seed(args.noise_seed)
        .init_seed(args.init_seed)
        .progress(args.progress)
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
        let init = SbnNatural::from_global(&model.init_global(&mut rng));
        let sigma = result.privacy.noise_multiplier.unwrap_or(0.0);
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
        "g_release": format!("{:?}", model.config().g_release),
        "clip_fraction": model.config().clip_fraction,
        "statistics": format!("{:?}", model.config().statistics),
        "epsilon": result
            .privacy
            .epsilon
            .map_or(serde_json::json!("inf"), |e| serde_json::json!(e)),
        "delta": result.privacy.delta,
        "noise_multiplier": result.privacy.noise_multiplier.unwrap_or(0.0),
        "sampling_rate": result.privacy.sampling_rate,
        "expected_batch_size": result.privacy.expected_batch_size,
        "neighbouring": result.privacy.neighbouring,
        "rng": result.privacy.rng,
        "pixel_accuracy": accuracy,
        "heldout_lower_bound_per_image": bound,
        "heldout_bound_images": bound_set.len(),
        "iterations": result.iterations,
    });
    if result.privacy.epsilon.is_none() {
        out["epsilon_reason"] = serde_json::json!("non-private run: no noise");
    }
    if args.diagnostics {
        let mut d = serde_json::json!({
            "private": false,
            "train_images": n_train,
            "realised_population": diagnostics.realised_population,
            "baseline_pixel_accuracy": baseline,
            "seconds": seconds,
            "fit_seconds": diagnostics.seconds,
            "records_clipped": diagnostics.records_clipped,
        });
        if let Some(c) = diagnostics.cpu_seconds {
            d["cpu_seconds"] = serde_json::json!(c);
        }
        if let Some(snr) = snr {
            d["snr"] = serde_json::to_value(snr)?;
        }
        out["diagnostics"] = d;
    }
    if args.json {
        println!("{out}");
    } else {
        println!("{}", serde_json::to_string_pretty(&out)?);
    }
    Ok(())
}

/// Training images of the synthetic data set (the generator's configured size: public).
const SYNTHETIC_TRAIN: usize = 4000;

fn synthetic() -> (
    Vec<vips_models::sbn::BinaryImage>,
    Vec<vips_models::sbn::BinaryImage>,
    String,
) {
    let truth = SyntheticSbn::random(64, 8, 11);
    (
        truth.sample(SYNTHETIC_TRAIN, 1),
        truth.sample(1000, 2),
        "synthetic".into(),
    )
}
