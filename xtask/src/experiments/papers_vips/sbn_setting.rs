//! The images every SBN figure of the papers is redrawn on (mnist10k in full mode, the library's
//! synthetic SBN images in quick mode) and one VIPS SBN fit through `vips_models::engine::fit`.

use dp_accountant::AccountantKind;
use vips_models::engine::{Privacy, StepSize, Stop, SviConfig, fit};
use vips_models::sbn::{
    BinaryImage, SYNTHETIC_HIDDEN, SYNTHETIC_TRAIN, Sbn, SbnConfig, SbnNatural, SbnStatistics,
    baseline_pixel_accuracy, load_mnist_dir, pixel_accuracy, synthetic_images,
};

use crate::context::Context;

/// Training images of mnist10k as published (its README): public.
const MNIST10K_TRAIN: usize = 8000;
/// MNIST's training images (the papers' population).
pub const PAPER_TRAIN: f64 = 60_000.0;
/// The SVI step `(tau0 + t)^-kappa` (the sbn example's defaults; the papers print none).
const TAU0: f64 = 1.0;
const KAPPA: f64 = 0.6;
/// Declared bound of the large blocks as a fraction of their worst case (the example's default).
const CLIP_FRACTION: f64 = 0.25;

/// The images and their public facts.
pub struct SbnSetting {
    pub train: Vec<BinaryImage>,
    pub test: Vec<BinaryImage>,
    pub population: usize,
    /// Side of the square image (28 or 8), for the weight images.
    pub side: usize,
    /// Hidden units of 003's runs (100 in the paper).
    pub hidden_003: usize,
    /// Whether these are the real digits.
    pub real: bool,
    /// The trivial baseline: each pixel's training mean thresholded at 1/2 (not private).
    pub baseline: f64,
    pub description: String,
}

impl SbnSetting {
    /// mnist10k in full mode when present, otherwise the synthetic SBN images.
    pub fn for_context(ctx: &Context) -> anyhow::Result<Self> {
        match ctx.data_set("mnist10k") {
            Some(dir) => Self::mnist10k(&dir),
            None => Ok(Self::synthetic()),
        }
    }

    /// mnist10k from `dir` (binarised at 128), K = 100 for 003's runs.
    pub fn mnist10k(dir: &std::path::Path) -> anyhow::Result<Self> {
        let (train, test) = load_mnist_dir(dir, 128)?;
        let baseline = baseline_pixel_accuracy(&train, &test);
        Ok(Self {
            train,
            test,
            population: MNIST10K_TRAIN,
            side: 28,
            hidden_003: 100,
            real: true,
            baseline,
            description: format!(
                "mnist10k at {} (8,000 training / 2,000 test MNIST digits binarised at \
                 128); the papers used all 60,000 training images, not available here",
                dir.display()
            ),
        })
    }

    /// The library's synthetic SBN images (the quick stand-in; 000 Fig. 8 in both modes).
    pub fn synthetic() -> Self {
        let (train, test) = synthetic_images();
        let baseline = baseline_pixel_accuracy(&train, &test);
        Self {
            train,
            test,
            population: SYNTHETIC_TRAIN,
            side: 8,
            hidden_003: SYNTHETIC_HIDDEN,
            real: false,
            baseline,
            description: format!(
                "the library's synthetic SBN images (`vips_models::sbn::synthetic_images`: \
                 a known SBN with J = 64, K = {SYNTHETIC_HIDDEN}, {SYNTHETIC_TRAIN} \
                 training images)"
            ),
        }
    }
}

/// How much noise a fit adds.
#[derive(Clone, Copy, Debug)]
pub enum SbnNoise {
    NonPrivate,
    /// A fixed noise multiplier (003 Fig. 7: sigma = 1); the run reports its epsilon.
    Multiplier(f64),
    /// Calibrated to a total epsilon.
    Target(f64),
}

/// One SBN run.
#[derive(Clone, Copy, Debug)]
pub struct SbnRun {
    pub hidden: usize,
    pub batch: f64,
    pub noise: SbnNoise,
    pub accountant: AccountantKind,
    pub delta: f64,
    /// Seeds the initial parameters, the batches and (on purpose) the noise.
    pub seed: u64,
}

/// What a run gives the figures.
pub struct SbnOutcome {
    pub accuracy: f64,
    pub epsilon: Option<f64>,
    pub noise_multiplier: Option<f64>,
    pub iterations: u64,
    pub natural: SbnNatural,
    /// The run's ledger, for re-accounting by another accountant.
    pub ledger: Option<dp_accountant::Accountant>,
}

/// A budget no run reaches: with a fixed multiplier the ledger reports what the run spent.
const UNCAPPED_EPSILON: f64 = 1e6;

/// One expected pass over the training images (Poisson batches of expected size `batch`),
/// residual statistics, scored by pixel accuracy on every test image.
pub fn fit_sbn(setting: &SbnSetting, run: SbnRun) -> anyhow::Result<SbnOutcome> {
    let visible = setting.train.first().map_or(0, |im| im.pixels.len());
    let model = Sbn::new(
        SbnConfig::builder(visible, run.hidden)
            .clip_fraction(CLIP_FRACTION)
            .statistics(SbnStatistics::Residual)
            .build()?,
    )?;
    let privacy = match run.noise {
        SbnNoise::NonPrivate => Privacy::NonPrivate,
        SbnNoise::Multiplier(noise_multiplier) => Privacy::NoiseMultiplier {
            noise_multiplier,
            epsilon: UNCAPPED_EPSILON,
            delta: run.delta,
        },
        SbnNoise::Target(epsilon) => Privacy::Target {
            epsilon,
            delta: run.delta,
        },
    };
    let svi = SviConfig::builder()
        .expected_batch_size(run.batch)
        .population(Some(setting.population))
        .step(StepSize::robbins_monro(TAU0, KAPPA)?)
        .stop(Stop::Passes { passes: 1.0 })
        .privacy(privacy)
        .accountant(run.accountant)
        .noise_seed(Some(run.seed))
        .init_seed(run.seed)
        .build()?;
    let fitted = fit(&model, setting.train.clone(), &svi, |_, _| {})?.result;
    let natural = SbnNatural::from_global(&fitted.global);
    let ledger = fitted.privacy.ledger;
    Ok(SbnOutcome {
        ledger,
        accuracy: pixel_accuracy(&model, &natural, &setting.test),
        epsilon: fitted.privacy.epsilon,
        noise_multiplier: fitted.privacy.noise_multiplier,
        iterations: fitted.iterations,
        natural,
    })
}
