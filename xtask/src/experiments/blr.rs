//! Private Bayesian logistic regression (003 Sec. 6): test AUC against epsilon next to the
//! non-private model. Quick mode writes a synthetic logistic data set inside the unit ball; the full
//! run uses breast_cancer (with its published, public feature ranges) when present.
//!
//! Every fit calls `vips_models::blr` in-process with the settings of the `blr` example (whose
//! command line for each cell the report lists as the equivalent rerun), so a renamed output
//! key cannot silently become NaN here.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};
use serde_json::json;

use vips_models::blr::{self, Blr, BlrConfig, CsvOptions, Hyperprior, evaluate, stratified_split};
use vips_models::engine::{Privacy, StepSize, Stop, SviConfig};

use crate::context::Context;
use crate::plot::{LinePlot, Scale, Series, line_plot};
use crate::report::{Section, command_list, epsilon_label, markdown_table};

const SEED: u64 = 5;
const DIM: usize = 10;
/// Rows of breast_cancer as published (UCI WDBC: 569 instances).
const BREAST_CANCER_ROWS: usize = 569;
/// Rows of the synthetic set xtask writes.
const SYNTHETIC_ROWS: usize = 2000;
/// The held-out share of every split.
const TEST_FRACTION: f64 = 0.2;

/// Writes `n` rows `x` uniform in the unit ball of R^DIM with `y ~ Bernoulli(sigmoid(x' beta))`,
/// `||beta|| = 8`, as a CSV with a header and the label column `y`.
fn write_synthetic_csv(path: &Path, n: usize) -> anyhow::Result<()> {
    let mut rng = ChaCha8Rng::seed_from_u64(SEED);
    let gauss =
        |rng: &mut ChaCha8Rng| -> f64 { (0..12).map(|_| rng.random::<f64>()).sum::<f64>() - 6.0 };
    let mut beta: Vec<f64> = (0..DIM).map(|_| gauss(&mut rng)).collect();
    let norm = beta.iter().map(|b| b * b).sum::<f64>().sqrt();
    beta.iter_mut().for_each(|b| *b *= 8.0 / norm);
    let mut csv = (0..DIM).map(|j| format!("x{j},")).collect::<String>() + "y\n";
    for _ in 0..n {
        let mut x: Vec<f64> = (0..DIM).map(|_| gauss(&mut rng)).collect();
        let r = x.iter().map(|v| v * v).sum::<f64>().sqrt();
        let radius = rng.random::<f64>().powf(1.0 / DIM as f64);
        x.iter_mut().for_each(|v| *v *= radius / r);
        let logit: f64 = x.iter().zip(&beta).map(|(a, b)| a * b).sum();
        let y = u8::from(rng.random::<f64>() < 1.0 / (1.0 + (-logit).exp()));
        for v in &x {
            let _ = write!(csv, "{v},");
        }
        let _ = writeln!(csv, "{y}");
    }
    std::fs::write(path, csv)?;
    Ok(())
}

/// Runs BLR over the epsilon grid and several stratified splits.
pub fn run(ctx: &Context) -> anyhow::Result<Section> {
    let real = if ctx.quick {
        None
    } else {
        ctx.data_set("breast_cancer")
    };
    let (base, data_note, options): (Vec<String>, String, CsvOptions) = match &real {
        Some(dir) => {
            let csv: PathBuf = dir.join("breast_cancer.csv");
            (
                vec![
                    "--csv".into(),
                    csv.display().to_string(),
                    "--label".into(),
                    "target".into(),
                ],
                format!(
                    "breast_cancer ({}), published public feature ranges",
                    csv.display()
                ),
                CsvOptions {
                    label: "target".into(),
                    map: Some(blr::wdbc_feature_map()),
                },
            )
        }
        None => {
            let csv = ctx.output("synthetic_blr.csv");
            write_synthetic_csv(&csv, SYNTHETIC_ROWS)?;
            (
                vec![
                    "--csv".into(),
                    csv.display().to_string(),
                    "--label".into(),
                    "y".into(),
                    "--no-scaling".into(),
                ],
                format!(
                    "synthetic logistic data (2,000 rows, d = {DIM}, rows in the unit ball, ||beta|| = 8; written by xtask)"
                ),
                CsvOptions {
                    label: "y".into(),
                    map: None,
                },
            )
        }
    };
    // The public population of a private run: the published size minus the held-out share (a
    // public figure by the split protocol; the realised training count may differ by rounding,
    // which costs nothing in privacy).
    let total = if real.is_some() {
        BREAST_CANCER_ROWS
    } else {
        SYNTHETIC_ROWS
    };
    let population = total - (TEST_FRACTION * total as f64).round() as usize;
    let splits: u64 = if ctx.quick { 3 } else { 10 };
    // The file named by `--csv` in `base`, loaded once (the example loads it per run).
    let loaded = blr::load_csv(&base[1], &options)?;
    let dim = loaded.report.dim;
    let epsilons = [Some(0.5), Some(1.0), Some(2.0), Some(4.0), None];
    let mut rows = Vec::new();
    let mut points = Vec::new();
    let mut nonprivate = f64::NAN;
    let mut runs = Vec::new();
    let mut commands = Vec::new();
    for eps in epsilons {
        let mut aucs = Vec::new();
        let mut accs = Vec::new();
        for split in 0..splits {
            let mut args = base.clone();
            args.extend([
                "--test-fraction".into(),
                TEST_FRACTION.to_string(),
                "--seed".into(),
                split.to_string(),
            ]);
            if let Some(e) = eps {
                args.extend([
                    "--epsilon".into(),
                    e.to_string(),
                    "--delta".into(),
                    "1e-5".into(),
                    "--noise-seed".into(),
                    (SEED + split).to_string(),
                    "--population".into(),
                    population.to_string(),
                ]);
            }
            let out = fit_split(&loaded.records, dim, population, eps, split)?;
            aucs.push(out.auc);
            accs.push(out.accuracy);
            if split == 0 {
                commands.push(format!(
                    "cargo run --release -p vips-models --example blr -- {} --json",
                    args.join(" ")
                ));
            }
            runs.push(json!({
                "epsilon": eps,
                "split": split,
                "auc": out.auc,
                "accuracy": out.accuracy,
                "log_loss": out.log_loss,
                "epsilon_spent": out.epsilon_spent,
                "noise_multiplier": out.noise_multiplier,
            }));
        }
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        let auc = mean(&aucs);
        match eps {
            Some(e) => points.push((e, auc)),
            None => nonprivate = auc,
        }
        rows.push(vec![
            epsilon_label(eps),
            format!("{auc:.4}"),
            format!("{:.4}", mean(&accs)),
        ]);
    }
    let plot_file = "blr_auc_vs_epsilon.svg";
    line_plot(
        &ctx.output(plot_file),
        &LinePlot {
            title: "private Bayesian logistic regression: test AUC against epsilon",
            x_label: "epsilon (delta = 1e-5)",
            y_label: "mean test AUC",
            x_scale: Scale::Log,
            y_scale: Scale::Linear,
        },
        &[
            Series::new("VIPS-BLR (private)", points),
            Series::new(
                "VIPS-BLR (non-private)",
                vec![(0.5, nonprivate), (4.0, nonprivate)],
            ),
        ],
    )?;
    let mut section = Section::new(
        "blr",
        "Private Bayesian logistic regression: AUC against epsilon (003 Sec. 6)",
        if ctx.quick {
            "cargo xtask bench --quick --only blr --no-criterion"
        } else {
            "cargo xtask bench --only blr --no-criterion"
        },
    );
    section.seed = format!("split seeds 0..{splits}, noise seeds {SEED}+split");
    section.data = data_note;
    section.body = format!(
        "Mean over {splits} stratified 80/20 splits. The comparison with scikit-learn and diffprivlib over 100 \
         splits is in docs/benchmarks.md (vips-models: BLR).\n\n{}\n\nEach fit calls \
         `vips_models::blr::fit` in-process with the `blr` example's settings; the equivalent \
         example command lines (split 0):\n\n{}\n",
        markdown_table(&["epsilon", "mean test AUC", "mean accuracy"], &rows),
        command_list(&commands)
    );
    section.figures = json!({"runs": runs});
    section.plots.push(plot_file.into());
    Ok(section)
}

/// What one fit gives the report.
struct Outcome {
    auc: f64,
    accuracy: f64,
    log_loss: f64,
    /// `None` for a non-private fit.
    epsilon_spent: Option<f64>,
    noise_multiplier: Option<f64>,
}

/// One fit on stratified split `split` (held-out fraction [`TEST_FRACTION`]), as the `blr`
/// example runs it: batch VB (S = N, rho = 1), one release when private (30 iterations when
/// not), the Gamma(1, 1) hyperprior, the noise seeded `SEED + split` on purpose, delta 1e-5.
fn fit_split(
    records: &[vips_models::blr::BlrRecord],
    dim: usize,
    population: usize,
    eps: Option<f64>,
    split: u64,
) -> anyhow::Result<Outcome> {
    let (train, test) = stratified_split(records.to_vec(), TEST_FRACTION, split)?;
    // A non-private run of the example uses the realised training count.
    let population = if eps.is_some() {
        population
    } else {
        train.len()
    };
    let privacy = match eps {
        Some(epsilon) => Privacy::Target {
            epsilon,
            delta: 1e-5,
        },
        None => Privacy::NonPrivate,
    };
    let svi = SviConfig::builder()
        .expected_batch_size(population as f64)
        .step(StepSize::Constant { rho: 1.0 })
        .stop(Stop::Iterations {
            iterations: if eps.is_some() { 1 } else { 30 },
        })
        .privacy(privacy)
        .noise_seed(eps.map(|_| SEED + split))
        .population(Some(population))
        .build()?;
    let model = Blr::new(
        BlrConfig::builder(dim)
            .hyperprior(Hyperprior::Gamma {
                shape: 1.0,
                rate: 1.0,
            })
            .build()?,
    );
    let fitted = blr::fit(&model, train, &svi)?.result;
    let m = evaluate(fitted.global.posterior(), &test)
        .ok_or_else(|| anyhow::anyhow!("split {split}: the held-out set cannot be scored"))?;
    Ok(Outcome {
        auc: m.auc,
        accuracy: m.accuracy,
        log_loss: m.log_loss,
        epsilon_spent: fitted.privacy.epsilon,
        noise_multiplier: fitted.privacy.noise_multiplier,
    })
}
