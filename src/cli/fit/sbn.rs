//! `dp-bayes fit sbn`: a sigmoid belief network (one hidden layer, Pólya-Gamma augmentation)
//! fitted with VIPS, private with `--epsilon`, on binarised IDX images (one file, or an
//! MNIST-style directory) or the embedded synthetic data. Saves the posterior moments
//! ([`SavedSbn`]) and scores the held-out images with them.

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::{Value, json};
use vips_models::engine::{StepSize, Stop, SviConfig, fit as engine_fit};
use vips_models::saved::MAX_MODEL_FILE_BYTES;
use vips_models::sbn::{
    BinaryImage, GRelease, SYNTHETIC_HIDDEN, SYNTHETIC_TEST, SYNTHETIC_TRAIN, SavedSbn, Sbn,
    SbnConfig, SbnError, SbnStatistics, baseline_pixel_accuracy, load_idx_images, load_mnist_dir,
    synthetic_images,
};

use super::{Common, Fitted, count, positive, threshold};
use crate::cli::error::{CliError, usage};
use crate::cli::io::num;

/// Arguments of `fit sbn`.
#[derive(clap::Args, Debug)]
#[command(allow_negative_numbers = true)]
pub struct Args {
    /// Training images: one IDX image file (`0x00000803`, gzip-compressed or not).
    #[arg(long, conflicts_with_all = ["mnist", "synthetic"])]
    idx: Option<PathBuf>,
    /// Held-out images for the held-out bound (an IDX image file; with --idx only).
    #[arg(long, requires = "idx")]
    test_idx: Option<PathBuf>,
    /// An MNIST-style directory: train-images-idx3-ubyte[.gz] for training,
    /// t10k-images-idx3-ubyte[.gz] held out.
    #[arg(long, conflicts_with = "synthetic")]
    mnist: Option<PathBuf>,
    /// The embedded synthetic data: 4000 training and 1000 held-out 8 x 8 images from a known
    /// SBN with 8 hidden units (sizes public: the default population of a private fit).
    #[arg(long)]
    synthetic: bool,
    /// Binarisation threshold: IDX pixel >= threshold is 1 (default 128; not with --synthetic).
    #[arg(long, conflicts_with = "synthetic", value_parser = threshold)]
    threshold: Option<u8>,
    /// Held-out images scored (the first ones; each costs J K^2). Default 500.
    #[arg(long, value_parser = count)]
    heldout_images: Option<usize>,
    #[command(flatten)]
    model: ModelArgs,
    #[command(flatten)]
    pub common: Common,
}

/// The flags of the SBN model and of its SVI run, shared by `fit sbn` and `fit sbn-store`.
#[derive(clap::Args, Debug)]
pub struct ModelArgs {
    /// Hidden units K (default 100; 8 with `fit sbn --synthetic`).
    #[arg(long, value_parser = count)]
    hidden: Option<usize>,
    /// Expected (Poisson) batch size S, capped at the population (the exact size with
    /// --sampling fixed).
    #[arg(long, default_value_t = 400.0, value_parser = positive)]
    batch_size: f64,
    #[command(flatten)]
    batching: super::SamplingArg,
    /// Expected passes over the training data.
    #[arg(long, default_value_t = 1.0, value_parser = positive)]
    passes: f64,
    /// Allow runs of more than 10^7 iterations (refused otherwise).
    #[arg(long)]
    allow_long_run: bool,
    /// SVI delay tau0 of the step size (tau0 + t)^-kappa.
    #[arg(long, default_value_t = 1.0, value_parser = super::non_negative)]
    tau0: f64,
    /// SVI forgetting rate kappa, in (0.5, 1].
    #[arg(long, default_value_t = 0.6, value_parser = positive)]
    kappa: f64,
    /// How G_j is released: per-unit or pooled (default: per-unit when J K^2 <= 200,000).
    #[arg(long)]
    g_release: Option<String>,
    /// Released statistics: residual (six blocks) or paper (the seven of 000 Eq. 61-68).
    #[arg(long, default_value = "residual")]
    statistics: String,
    /// Declared bound of the large blocks as a fraction of the worst case, in (0, 1].
    #[arg(long, default_value_t = 0.25, value_parser = positive)]
    clip_fraction: f64,
    /// Seed of the initial parameters (public randomness).
    #[arg(long, default_value_t = 0)]
    init_seed: u64,
}

impl ModelArgs {
    /// The model of `visible` pixels (hidden units: `--hidden`, else `default_hidden`), its
    /// settings checked, and refused when its model.json would be over the size a reader loads.
    ///
    /// # Errors
    /// Usage errors naming the flag (`--g-release`, `--statistics`, `--clip-fraction`,
    /// `--kappa`, `--hidden`); the model's errors.
    pub(crate) fn model(&self, visible: usize, default_hidden: usize) -> Result<Sbn, CliError> {
        let g_release = match self.g_release.as_deref() {
            Some("per-unit") => Some(GRelease::PerUnit),
            Some("pooled") => Some(GRelease::Pooled),
            Some(other) => {
                return Err(usage(
                    "--g-release",
                    format!(
                        "unknown `{}` (per-unit | pooled)",
                        vips_models::limits::excerpt(other)
                    ),
                ));
            }
            None => None,
        };
        let statistics = match self.statistics.as_str() {
            "residual" => SbnStatistics::Residual,
            "paper" => SbnStatistics::Paper,
            other => {
                return Err(usage(
                    "--statistics",
                    format!(
                        "unknown `{}` (residual | paper)",
                        vips_models::limits::excerpt(other)
                    ),
                ));
            }
        };
        if !(self.clip_fraction > 0.0 && self.clip_fraction <= 1.0) {
            return Err(usage(
                "--clip-fraction",
                format!("must be in (0, 1], got {}", self.clip_fraction),
            ));
        }
        if !(self.kappa > 0.5 && self.kappa <= 1.0) {
            return Err(usage(
                "--kappa",
                format!("must be in (0.5, 1], got {}", self.kappa),
            ));
        }
        let hidden = self.hidden.unwrap_or(default_hidden);
        let mut cfg = SbnConfig::builder(visible, hidden)
            .clip_fraction(self.clip_fraction)
            .statistics(statistics);
        if let Some(g) = g_release {
            cfg = cfg.g_release(g);
        }
        let model = Sbn::new(cfg.build()?)?;
        // model.json holds J (K (K + 1) / 2 + 2 K + 2) + 2 K numbers of about 20 characters
        // each: refuse a model no reader would load before spending the fit on it.
        let (j, k) = (visible as f64, hidden as f64);
        let numbers = j * (k * (k + 1.0) / 2.0 + 2.0 * k + 2.0) + 2.0 * k;
        if numbers * 20.0 > MAX_MODEL_FILE_BYTES as f64 {
            return Err(too_large(numbers * 20.0));
        }
        Ok(model)
    }

    /// The engine's configuration: batches of `--batch-size` capped at the population (the
    /// declared one, else `realised` for a non-private fit without one).
    ///
    /// # Errors
    /// A usage error for `--sampling` with no effect; the engine's errors.
    pub(crate) fn svi(
        &self,
        c: &Common,
        privacy: vips_models::engine::Privacy,
        population: Option<usize>,
        realised: usize,
    ) -> Result<vips_models::engine::SviConfig, CliError> {
        // S is capped at the public N (at the image count only for a non-private fit without
        // one).
        let cap = population.unwrap_or(realised) as f64;
        let batch = self.batch_size.min(cap);
        let private = c.epsilon.is_some();
        Ok(self
            .batching
            .apply(SviConfig::builder(), private, batch, cap, "--batch-size")?
            .population(population)
            .step(StepSize::robbins_monro(self.tau0, self.kappa)?)
            .stop(Stop::Passes {
                passes: self.passes,
            })
            .privacy(privacy)
            .accountant(c.accountant.unwrap_or_default())
            .noise_seed(c.noise_seed)
            .init_seed(self.init_seed)
            .progress_bar(true)
            .allow_long_run(self.allow_long_run)
            .cancel(super::ctrl_c_token()?)
            .build()?)
    }

    /// The settings of result.json these flags, the model and the fit give (the same keys for
    /// `fit sbn` and `fit sbn-store`).
    pub(crate) fn settings(
        &self,
        model: &Sbn,
        threshold: u8,
        privacy: &vips_models::engine::PrivacySummary,
    ) -> Value {
        let cfg = model.config();
        json!({
            "visible": cfg.visible(),
            "hidden": cfg.hidden(),
            "threshold": threshold,
            "g_release": Value::from(match cfg.g_release() {
                GRelease::PerUnit => "per-unit",
                GRelease::Pooled => "pooled",
            }),
            "statistics": self.statistics,
            "clip_fraction": num(self.clip_fraction),
            "expected_batch_size": num(privacy.expected_batch_size),
            "sampling_rate": num(privacy.sampling_rate),
            "passes": num(self.passes),
            "tau0": num(self.tau0),
            "kappa": num(self.kappa),
            "init_seed": self.init_seed,
        })
    }
}

/// The model's dimension in result.json: `J K + J + K`.
pub(crate) fn sbn_dim(model: &Sbn) -> usize {
    let cfg = model.config();
    cfg.visible() * cfg.hidden() + cfg.visible() + cfg.hidden()
}

/// Images checked against the model, the error naming the file.
fn check(model: &Sbn, images: &[BinaryImage], file: &str) -> Result<(), CliError> {
    model.check_images(images).map_err(|e| CliError::File {
        path: file.to_string(),
        reason: e.to_string(),
    })
}

/// An IDX image file; every error names the file (an empty one too).
fn load(path: &Path, bin: u8) -> Result<Vec<BinaryImage>, CliError> {
    load_idx_images(path, bin).map_err(|e| match e {
        SbnError::Empty(what) => CliError::File {
            path: path_text(path),
            reason: what.to_string(),
        },
        e => e.into(),
    })
}

fn too_large(bytes: f64) -> CliError {
    usage(
        "--hidden",
        format!(
            "model.json would be about {:.0} MB, over the {} MB a model file is read up to (its \
             covariances grow as J K^2): use fewer hidden units",
            bytes / 1e6,
            MAX_MODEL_FILE_BYTES / 1_000_000
        ),
    )
}

fn path_text(p: &Path) -> String {
    p.display().to_string()
}

/// Fits and returns the saved model and the summary parts.
///
/// # Privacy
/// With `--epsilon`, every iteration is one Poisson-subsampled Gaussian release of the clipped
/// statistics (see [`Sbn`]), accounted in the ledger under add/remove-one neighbouring at the
/// declared `--population`. The image size `J` is read from the IDX header and treated as the
/// public schema (as a CSV header is). The held-out scores are post-processing of the model and
/// the held-out images; they are not covered by the guarantee for those images. Counts and
/// timings go to the diagnostics only.
pub fn fit(args: &Args) -> Result<Fitted, CliError> {
    let c = &args.common;
    let (privacy, population) = match (args.synthetic, c.epsilon, c.population) {
        // The generator's size is public: the population of a private synthetic fit.
        (true, Some(epsilon), None) => (
            vips_models::engine::Privacy::Target {
                epsilon,
                delta: c.delta.unwrap_or(1e-5),
            },
            Some(SYNTHETIC_TRAIN),
        ),
        _ => c.privacy()?,
    };
    if !args.synthetic && args.idx.is_none() && args.mnist.is_none() {
        return Err(usage(
            "--idx",
            "give the training images: --idx FILE, --mnist DIR or --synthetic",
        ));
    }
    if args.idx.is_some() && args.test_idx.is_none() && args.heldout_images.is_some() {
        return Err(usage(
            "--heldout-images",
            "has no effect without held-out images (give --test-idx FILE)",
        ));
    }
    let start = Instant::now();
    // 1 binarises images that are already 0/1 (the synthetic data) as they are.
    let bin = if args.synthetic {
        1
    } else {
        args.threshold.unwrap_or(128)
    };
    let (train, test, input, train_file, test_file) = if args.synthetic {
        let (tr, te) = synthetic_images();
        (
            tr,
            Some(te),
            json!({"synthetic": {"train": SYNTHETIC_TRAIN, "test": SYNTHETIC_TEST}}),
            "--synthetic".to_string(),
            "--synthetic".to_string(),
        )
    } else if let Some(dir) = &args.mnist {
        if !dir.is_dir() {
            return Err(CliError::File {
                path: path_text(dir),
                reason: "not a directory (--mnist: an MNIST-style directory with \
                         train-/t10k-images-idx3-ubyte[.gz])"
                    .into(),
            });
        }
        let (tr, te) = load_mnist_dir(dir, bin)?;
        (
            tr,
            Some(te),
            json!({"mnist": path_text(dir)}),
            path_text(&dir.join("train-images-idx3-ubyte")),
            path_text(&dir.join("t10k-images-idx3-ubyte")),
        )
    } else {
        let file = args
            .idx
            .as_ref()
            .ok_or_else(|| usage("--idx", "give --idx FILE, --mnist DIR or --synthetic"))?;
        let tr = load(file, bin)?;
        let te = match &args.test_idx {
            Some(t) => Some(load(t, bin)?),
            None => None,
        };
        let mut input = json!({"idx": path_text(file)});
        if let Some(t) = &args.test_idx {
            input["test_idx"] = json!(path_text(t));
        }
        (
            tr,
            te,
            input,
            path_text(file),
            args.test_idx.as_deref().map(path_text).unwrap_or_default(),
        )
    };
    let visible = train.first().map_or(0, |im| im.pixels.len());
    let default_hidden = if args.synthetic {
        SYNTHETIC_HIDDEN
    } else {
        100
    };
    let model = args.model.model(visible, default_hidden)?;
    check(&model, &train, &train_file)?;
    if let Some(te) = &test {
        check(&model, te, &test_file)?;
    }
    let realised = train.len();
    let svi = args.model.svi(c, privacy, population, realised)?;
    let baseline = match (&test, c.diagnostics) {
        (Some(te), true) => num(baseline_pixel_accuracy(&train, te)),
        _ => json!("none"),
    };
    let fitted = engine_fit(&model, train, &svi, |_, _| {})?;
    let (result, diag) = (fitted.result, fitted.diagnostics);
    let saved = SavedSbn::from_fit(&model, bin, &result)?;
    let model_json = saved.to_json()?;
    if model_json.len() as u64 > MAX_MODEL_FILE_BYTES {
        return Err(too_large(model_json.len() as f64));
    }
    let heldout = match &test {
        Some(te) => {
            let scored = &te[..args.heldout_images.unwrap_or(500).min(te.len())];
            let e = saved.evaluate(scored).map_err(|e| CliError::File {
                path: test_file.clone(),
                reason: e.to_string(),
            })?;
            json!({
                "images": e.images,
                "mean_lower_bound": num(e.mean_lower_bound),
                "pixel_accuracy": num(e.pixel_accuracy),
                "note": "the first held-out images scored by the saved model (as `dp-bayes \
                         reconstruct` does); post-processing of the model and those images, \
                         not covered by the guarantee for the held-out images",
            })
        }
        None => json!({"note": "no held-out images (give --test-idx FILE)"}),
    };
    let diagnostics = super::with_timings(
        json!({
            "train_images": realised,
            "realised_population": diag.realised_population,
            "records_clipped": diag.records_clipped,
            "baseline_pixel_accuracy": baseline,
        }),
        &diag,
        start,
    );
    Ok(Fitted {
        sampling: Some(result.sampling.name()),
        model: "sbn",
        model_json,
        iterations: result.iterations,
        dim: sbn_dim(&model),
        heldout,
        settings: {
            let mut settings = json!({ "input": input });
            super::blr::merge(
                &mut settings,
                args.model.settings(&model, bin, &result.privacy),
            );
            settings
        },
        diagnostics,
        privacy: result.privacy,
    })
}
