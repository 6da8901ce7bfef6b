//! Private sigmoid belief networks (003 Sec. 7.1, Fig. 7): pixel-wise reconstruction accuracy
//! against the mini-batch size `S` at a fixed noise multiplier (one pass over the training
//! images, so each `S` spends a different epsilon), next to runs calibrated to eps in {1, 2},
//! the non-private model and the per-pixel-mean baseline. Quick mode uses data from a known SBN
//! (the example's `--synthetic`: J = 64, K = 8, 4,000 training images); the full run uses
//! mnist10k with K = 100 when present.
//!
//! Every fit calls `vips_models::engine::fit` on `vips_models::sbn::Sbn` in-process with the
//! settings of the `sbn` example (whose command line for each cell the report lists), and the
//! scores are `vips_models::sbn`'s, so a renamed output key cannot become NaN here.

use std::path::Path;

use serde_json::json;
use vips_models::engine::{Privacy, StepSize, Stop, SviConfig, fit};
use vips_models::sbn::{
    BinaryImage, SYNTHETIC_HIDDEN, SYNTHETIC_TRAIN, Sbn, SbnConfig, SbnNatural, SbnStatistics,
    baseline_pixel_accuracy, heldout_lower_bound, load_mnist_dir, pixel_accuracy, synthetic_images,
};

use crate::context::Context;
use crate::plot::{LinePlot, Scale, Series, line_plot};
use crate::report::{Section, command_list, epsilon_label, markdown_table};

const SEED: u64 = 1;
/// The fixed noise multiplier of 003 Fig. 7.
const FIXED_SIGMA: f64 = 1.0;
const BATCH_SIZES: [f64; 4] = [400.0, 800.0, 1600.0, 3200.0];
/// Declared bound of the large blocks as a fraction of the worst case (the example's default).
const CLIP_FRACTION: f64 = 0.25;
const DELTA: f64 = 1e-5;

/// One setting of the grid: how much noise.
#[derive(Clone, Copy)]
enum Noise {
    Fixed(f64),
    Epsilon(f64),
    None,
}

impl Noise {
    fn label(self) -> String {
        match self {
            Self::Fixed(s) => format!("sigma = {s}"),
            Self::Epsilon(e) => format!("eps = {}", epsilon_label(Some(e))),
            Self::None => epsilon_label(None),
        }
    }

    /// The example's flags. The seed also drives the Poisson sampling, so non-private runs get
    /// it too (reproducible batches).
    fn args(self) -> Vec<String> {
        let mut a = vec!["--noise-seed".into(), SEED.to_string()];
        match self {
            Self::Fixed(s) => a.extend(["--noise-multiplier".into(), s.to_string()]),
            Self::Epsilon(e) => a.extend(["--epsilon".into(), e.to_string()]),
            Self::None => return a,
        }
        a.extend(["--delta".into(), "1e-5".into()]);
        a
    }
}

/// The images and the settings that differ between mnist10k and the synthetic SBN.
struct Data {
    train: Vec<BinaryImage>,
    test: Vec<BinaryImage>,
    hidden: usize,
    /// The public population (the published protocol's, or the generator's configured size).
    population: usize,
}

/// mnist10k binarised at 128 (the example's `--idx DIR --hidden 100 --population 8000`), or the
/// library's embedded synthetic data (the example's `--synthetic`).
fn data(mnist: Option<&Path>) -> anyhow::Result<Data> {
    Ok(match mnist {
        Some(dir) => {
            let (train, test) = load_mnist_dir(dir, 128)?;
            Data {
                train,
                test,
                hidden: 100,
                // The public population: the example's published protocol trains on the first
                // 8,000 of mnist10k's 10,000 images.
                population: 8000,
            }
        }
        None => {
            let (train, test) = synthetic_images();
            Data {
                train,
                test,
                hidden: SYNTHETIC_HIDDEN,
                population: SYNTHETIC_TRAIN,
            }
        }
    })
}

/// What one fit gives the report.
struct Outcome {
    pixel_accuracy: f64,
    heldout_lower_bound: f64,
    /// `None` for a non-private fit.
    epsilon: Option<f64>,
    noise_multiplier: Option<f64>,
    iterations: u64,
    /// Non-private diagnostic.
    fit_seconds: f64,
}

/// Test images of the held-out bound (the example's default `--bound-images`).
const BOUND_IMAGES: usize = 500;

/// One fit as the `sbn` example runs it: residual statistics, large blocks clipped at
/// [`CLIP_FRACTION`], Poisson batches of expected size `batch` (capped at the public
/// population), one expected pass, `tau0 = 1`, `kappa = 0.6`, the default accountant, noise and
/// sampling seeded with [`SEED`] (non-private runs too: reproducible batches), init seed [`SEED`].
fn fit_one(d: &Data, batch: f64, noise: Noise) -> anyhow::Result<Outcome> {
    let visible = d.train.first().map_or(0, |im| im.pixels.len());
    let model = Sbn::new(
        SbnConfig::builder(visible, d.hidden)
            .clip_fraction(CLIP_FRACTION)
            .statistics(SbnStatistics::Residual)
            .build()?,
    )?;
    model.check_images(&d.train)?;
    model.check_images(&d.test)?;
    let privacy = match noise {
        Noise::Epsilon(epsilon) => Privacy::Target {
            epsilon,
            delta: DELTA,
        },
        // A budget no run reaches: the ledger reports what the fixed noise spent.
        Noise::Fixed(noise_multiplier) => Privacy::NoiseMultiplier {
            noise_multiplier,
            epsilon: 1e6,
            delta: DELTA,
        },
        Noise::None => Privacy::NonPrivate,
    };
    let svi = SviConfig::builder()
        .expected_batch_size(batch.min(d.population as f64))
        .population(Some(d.population))
        .step(StepSize::robbins_monro(1.0, 0.6)?)
        .stop(Stop::Passes { passes: 1.0 })
        .privacy(privacy)
        .noise_seed(Some(SEED))
        .init_seed(SEED)
        .build()?;
    let fitted = fit(&model, d.train.clone(), &svi, |_, _| {})?;
    let (result, diagnostics) = (fitted.result, fitted.diagnostics);
    let natural = SbnNatural::from_global(&result.global);
    let bound_set = &d.test[..BOUND_IMAGES.min(d.test.len())];
    Ok(Outcome {
        pixel_accuracy: pixel_accuracy(&model, &natural, &d.test),
        heldout_lower_bound: heldout_lower_bound(&model, &natural, bound_set),
        epsilon: result.privacy.epsilon,
        noise_multiplier: result.privacy.noise_multiplier,
        iterations: result.iterations,
        fit_seconds: diagnostics.seconds,
    })
}

/// Runs the SBN over batch sizes and noise settings.
pub fn run(ctx: &Context) -> anyhow::Result<Section> {
    let mnist = if ctx.quick {
        None
    } else {
        ctx.data_set("mnist10k")
    };
    let (base, data_note): (Vec<String>, String) = match &mnist {
        Some(dir) => (
            vec![
                "--idx".into(),
                dir.display().to_string(),
                "--hidden".into(),
                "100".into(),
                "--population".into(),
                "8000".into(),
            ],
            format!(
                "mnist10k ({}): 8,000 training and 2,000 test images binarised at 128, K = 100",
                dir.display()
            ),
        ),
        None => (
            vec!["--synthetic".into()],
            "data from a known SBN (J = 64, K = 8; 4,000 training and 1,000 test images; \
             `vips_models::sbn::synthetic_images`, seeds 11/1/2)"
                .into(),
        ),
    };
    let d = data(mnist.as_deref())?;
    // The per-pixel training mean, scored on the test images (a non-private diagnostic; the
    // same for every run).
    let baseline_accuracy = baseline_pixel_accuracy(&d.train, &d.test);
    // Quick mode drops eps = 2 (12 fits, each a fraction of a second on the synthetic SBN).
    let noises: Vec<Noise> = if ctx.quick {
        vec![Noise::Fixed(FIXED_SIGMA), Noise::Epsilon(1.0), Noise::None]
    } else {
        vec![
            Noise::Fixed(FIXED_SIGMA),
            Noise::Epsilon(1.0),
            Noise::Epsilon(2.0),
            Noise::None,
        ]
    };
    let mut series: Vec<Vec<(f64, f64)>> = vec![Vec::new(); noises.len()];
    let mut baseline = Vec::new();
    let mut rows = Vec::new();
    let mut runs = Vec::new();
    let mut commands = Vec::new();
    for &s in &BATCH_SIZES {
        for (i, noise) in noises.iter().enumerate() {
            let mut args = base.clone();
            args.extend([
                "--batch-size".into(),
                s.to_string(),
                "--statistics".into(),
                "residual".into(),
                "--clip-fraction".into(),
                CLIP_FRACTION.to_string(),
                "--init-seed".into(),
                SEED.to_string(),
            ]);
            args.extend(noise.args());
            args.push("--diagnostics".into());
            let o = fit_one(&d, s, *noise)?;
            let acc = o.pixel_accuracy;
            series[i].push((s, acc));
            if i == 0 {
                baseline.push((s, baseline_accuracy));
            }
            rows.push(vec![
                format!("{s}"),
                noise.label(),
                o.epsilon
                    .map_or_else(|| "inf".into(), |e| format!("{e:.3}")),
                match o.noise_multiplier {
                    Some(x) if x > 0.0 => format!("{x:.3}"),
                    _ => "none".into(),
                },
                o.iterations.to_string(),
                format!("{acc:.4}"),
                format!("{baseline_accuracy:.4}"),
                format!("{:.1}", o.fit_seconds),
            ]);
            if s == BATCH_SIZES[0] {
                commands.push(format!(
                    "cargo run --release -p vips-models --example sbn -- {} --json",
                    args.join(" ")
                ));
            }
            runs.push(json!({
                "batch_size": s,
                "noise": noise.label(),
                "epsilon": o.epsilon,
                "noise_multiplier": o.noise_multiplier,
                "iterations": o.iterations,
                "pixel_accuracy": acc,
                "heldout_lower_bound_per_image": o.heldout_lower_bound,
                "heldout_bound_images": BOUND_IMAGES.min(d.test.len()),
                "diagnostics": {
                    "private": false,
                    "baseline_pixel_accuracy": baseline_accuracy,
                    "fit_seconds": o.fit_seconds,
                },
            }));
        }
    }
    let plot_file = "sbn_accuracy_vs_batch_size.svg";
    let mut lines: Vec<Series> = noises
        .iter()
        .zip(series)
        .map(|(n, pts)| {
            let label = match n {
                Noise::Fixed(_) => format!("private, fixed {}", n.label()),
                Noise::Epsilon(_) => format!("private, {}", n.label()),
                Noise::None => "non-private".into(),
            };
            Series::new(label, pts)
        })
        .collect();
    lines.push(Series::new("baseline (per-pixel training mean)", baseline));
    line_plot(
        &ctx.output(plot_file),
        &LinePlot {
            title: "SBN accuracy against batch size at fixed noise",
            x_label: "mini-batch size S (one pass over the training images)",
            y_label: "pixel-wise reconstruction accuracy",
            x_scale: Scale::Log,
            y_scale: Scale::Linear,
        },
        &lines,
    )?;
    let mut section = Section::new(
        "sbn",
        "Private sigmoid belief network: accuracy against batch size (003 Sec. 7.1, Fig. 7)",
        if ctx.quick {
            "cargo xtask bench --quick --only sbn --no-criterion"
        } else {
            "cargo xtask bench --only sbn --no-criterion"
        },
    );
    section.seed = format!("noise and sampling seed {SEED}, init seed {SEED}");
    section.data = data_note;
    section.body = format!(
        "One expected pass over the training images per run (Poisson batches of expected size S, \
         `ceil(N/S)` releases), delta = 1e-5. At fixed sigma = {FIXED_SIGMA} the spent epsilon \
         grows with S (003 Fig. 7); the eps rows calibrate sigma to the budget. Residual \
         statistics, large blocks clipped at {CLIP_FRACTION} of their worst-case bounds \
         (docs/vips-models.md, Sigmoid belief networks). Accuracy: test pixels whose \
         reconstruction `sigma(<W> <z_n> + <c>) > 1/2` matches the image (000 Sec. 7.1).\n\n{}\n\n\
         The whole experiment: `cargo xtask bench --only sbn --no-criterion{}`. Each fit calls \
         `vips_models::engine::fit` in-process with the `sbn` example's settings; the \
         equivalent example command lines (S = {}):\n\n{}\n",
        markdown_table(
            &[
                "S",
                "noise",
                "epsilon spent",
                "sigma",
                "iterations",
                "pixel accuracy",
                "baseline",
                "fit seconds"
            ],
            &rows
        ),
        if ctx.quick { " --quick" } else { "" },
        BATCH_SIZES[0],
        command_list(&commands)
    );
    section.figures = json!({"runs": runs});
    section.plots.push(plot_file.into());
    Ok(section)
}
