//! Private Bayesian logistic regression (003 Sec. 6): test AUC against epsilon next to the
//! non-private model. Quick mode writes a synthetic logistic data set inside the unit ball; the full
//! run uses breast_cancer (with its published, public feature ranges) when present.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};
use serde_json::json;

use crate::context::Context;
use crate::example_runner::{number, run_example};
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
    let (base, data_note): (Vec<String>, String) = match &real {
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
            let run = run_example(ctx, "vips-models", "blr", &args)?;
            aucs.push(number(&run.output, "auc")?);
            accs.push(number(&run.output, "accuracy")?);
            if split == 0 {
                commands.push(run.command);
            }
            runs.push(json!({"epsilon": eps, "split": split, "output": run.output}));
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
        commands.first().map_or("", String::as_str),
    );
    section.seed = format!("split seeds 0..{splits}, noise seeds {SEED}+split");
    section.data = data_note;
    section.body = format!(
        "Mean over {splits} stratified 80/20 splits. The comparison with scikit-learn and diffprivlib over 100 \
         splits is in docs/benchmarks.md (vips-models: BLR).\n\n{}\n\nCommands (split 0):\n\n{}\n",
        markdown_table(&["epsilon", "mean test AUC", "mean accuracy"], &rows),
        command_list(&commands)
    );
    section.figures = json!({"runs": runs});
    section.plots.push(plot_file.into());
    Ok(section)
}
