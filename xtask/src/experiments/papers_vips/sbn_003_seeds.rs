//! 003 Fig. 7 over every batch size and several seeds (issue 22): its own section
//! (`--only papers_vips_fig7`), not in the default run, because on mnist10k it takes hours.
//!
//! For each seed and each S in {400, 800, 1600, 3200}: a non-private fit, a moments-accountant fit
//! at sigma = 1 and a strong-composition fit calibrated to the moments-accountant run's epsilon,
//! one expected pass each (the fits of `sbn_003`, the same `fit_sbn`). The loop is seed-major, so
//! a run stopped early still covers every S for the seeds it finished; each finished (seed, S)
//! cell is appended to `papers_vips_fig7_fits.jsonl` in the output directory, and
//! `XTASK_FIG7_RESUME=1` reuses the cells found there (same setting) instead of refitting them.
//! `XTASK_FIG7_SEEDS` sets the number of seeds (default 10, the paper's).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::time::Instant;

use dp_accountant::AccountantKind;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::blr_setting::mean_std;
use super::sbn_setting::{PAPER_TRAIN, SbnNoise, SbnRun, SbnSetting, fit_sbn};
use crate::context::Context;
use crate::plot::{LinePlot, Scale, Series, line_plot};
use crate::report::{Section, markdown_table};

const SIGMA: f64 = 1.0;
const PAPER_BATCHES: [f64; 4] = [400.0, 800.0, 1600.0, 3200.0];
/// 003 Fig. 7's caption: total epsilon at sigma = 1 for each S (60,000 images, one epoch).
const PAPER_EPSILONS: [f64; 4] = [2.3468, 2.398, 3.2262, 4.8253];
const DELTA: f64 = 1e-4;
/// 003 Sec. 7.1: "each algorithm was tested in 10 independent runs with different seed numbers".
const PAPER_SEEDS: u64 = 10;
const QUICK_SEEDS: u64 = 2;
const FITS_FILE: &str = "papers_vips_fig7_fits.jsonl";

/// One (seed, S) cell: the three fits.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Cell {
    /// Identifies the setting (data, K, population, delta, sigma) the cell was fitted under.
    setting: String,
    seed: u64,
    paper_batch: f64,
    batch: f64,
    iterations: u64,
    epsilon_moments: f64,
    sigma_strong: f64,
    epsilon_strong: f64,
    accuracy_nonprivate: f64,
    accuracy_moments: f64,
    accuracy_strong: f64,
    seconds: f64,
}

fn seeds_from_env(quick: bool) -> anyhow::Result<u64> {
    match std::env::var("XTASK_FIG7_SEEDS") {
        Ok(v) => {
            let n: u64 = v
                .trim()
                .parse()
                .map_err(|e| anyhow::anyhow!("XTASK_FIG7_SEEDS={v:?}: {e}"))?;
            anyhow::ensure!(n >= 1, "XTASK_FIG7_SEEDS must be at least 1");
            Ok(n)
        }
        Err(_) => Ok(if quick { QUICK_SEEDS } else { PAPER_SEEDS }),
    }
}

fn load_cells(path: &std::path::Path, setting: &str) -> BTreeMap<(u64, u64), Cell> {
    let mut cells = BTreeMap::new();
    if let Ok(text) = std::fs::read_to_string(path) {
        for line in text.lines() {
            if let Ok(cell) = serde_json::from_str::<Cell>(line)
                && cell.setting == setting
            {
                cells.insert((cell.seed, cell.paper_batch as u64), cell);
            }
        }
    }
    cells
}

/// Runs the many-seed 003 Fig. 7 grid.
pub fn run(ctx: &Context) -> anyhow::Result<Section> {
    let setting = SbnSetting::for_context(ctx)?;
    let seeds = seeds_from_env(ctx.quick)?;
    let resume = std::env::var("XTASK_FIG7_RESUME").is_ok_and(|v| v == "1");
    let key = format!(
        "{}; K = {}; N = {}; delta = {DELTA:e}; sigma = {SIGMA}",
        if setting.real {
            "mnist10k"
        } else {
            "synthetic"
        },
        setting.hidden_003,
        setting.population
    );
    let path = ctx.output(FITS_FILE);
    let mut cells = if resume {
        load_cells(&path, &key)
    } else {
        let _ = std::fs::remove_file(&path);
        BTreeMap::new()
    };
    let reused = cells.len();
    for seed in 1..=seeds {
        for &paper_batch in &PAPER_BATCHES {
            if cells.contains_key(&(seed, paper_batch as u64)) {
                continue;
            }
            // full: the paper's S on mnist10k's 8,000 images (one epoch = 8000 / S iterations);
            // quick: the paper's q on the synthetic images (as `sbn_003`)
            let batch = if setting.real {
                paper_batch
            } else {
                paper_batch / PAPER_TRAIN * setting.population as f64
            };
            let start = Instant::now();
            let fit = |noise, accountant| {
                fit_sbn(
                    &setting,
                    SbnRun {
                        hidden: setting.hidden_003,
                        batch,
                        noise,
                        accountant,
                        delta: DELTA,
                        seed,
                    },
                )
            };
            let nonprivate = fit(SbnNoise::NonPrivate, AccountantKind::Moments)?;
            let moments = fit(SbnNoise::Multiplier(SIGMA), AccountantKind::Moments)?;
            let epsilon_moments = moments.epsilon.unwrap_or(f64::INFINITY);
            let strong = fit(SbnNoise::Target(epsilon_moments), AccountantKind::Advanced)?;
            let cell = Cell {
                setting: key.clone(),
                seed,
                paper_batch,
                batch,
                iterations: moments.iterations,
                epsilon_moments,
                sigma_strong: strong.noise_multiplier.unwrap_or(f64::NAN),
                epsilon_strong: strong.epsilon.unwrap_or(f64::NAN),
                accuracy_nonprivate: nonprivate.accuracy,
                accuracy_moments: moments.accuracy,
                accuracy_strong: strong.accuracy,
                seconds: start.elapsed().as_secs_f64(),
            };
            let mut file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)?;
            writeln!(file, "{}", serde_json::to_string(&cell)?)?;
            eprintln!(
                "papers_vips_fig7: seed {seed}, S = {paper_batch}: MA {:.4}, SC {:.4}, NP {:.4} \
                 (eps {:.4}, SC sigma {:.3}; {:.0} s)",
                cell.accuracy_moments,
                cell.accuracy_strong,
                cell.accuracy_nonprivate,
                cell.epsilon_moments,
                cell.sigma_strong,
                cell.seconds
            );
            cells.insert((seed, paper_batch as u64), cell);
        }
    }
    let used: Vec<&Cell> = cells.values().filter(|c| c.seed <= seeds).collect();
    let fitted_seconds: f64 = used.iter().map(|c| c.seconds).sum();

    let mut summary = Vec::new();
    let mut per_seed = Vec::new();
    let (mut np_curve, mut ma_curve, mut sc_curve) = (Vec::new(), Vec::new(), Vec::new());
    let mut fits_json = Vec::new();
    for (&paper_batch, &paper_eps) in PAPER_BATCHES.iter().zip(&PAPER_EPSILONS) {
        let of_s: Vec<&Cell> = used
            .iter()
            .copied()
            .filter(|c| c.paper_batch == paper_batch)
            .collect();
        if of_s.is_empty() {
            continue;
        }
        let col = |f: fn(&Cell) -> f64| of_s.iter().map(|c| f(c)).collect::<Vec<f64>>();
        let (np, ma, sc) = (
            col(|c| c.accuracy_nonprivate),
            col(|c| c.accuracy_moments),
            col(|c| c.accuracy_strong),
        );
        let diff: Vec<f64> = ma.iter().zip(&sc).map(|(a, b)| a - b).collect();
        let eps = col(|c| c.epsilon_moments);
        let sig = col(|c| c.sigma_strong);
        let spread = |v: &[f64]| {
            let (m, s) = mean_std(v);
            let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            format!("{m:.4} ± {s:.4} [{lo:.4}, {hi:.4}]")
        };
        let range = |v: &[f64]| {
            let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            if lo == hi {
                format!("{lo:.4} (every seed)")
            } else {
                format!("{lo:.4}-{hi:.4}")
            }
        };
        let wins = diff.iter().filter(|d| **d > 0.0).count();
        summary.push(vec![
            format!("{paper_batch}"),
            format!("{:.1}", of_s[0].batch),
            of_s[0].iterations.to_string(),
            of_s.len().to_string(),
            format!("{paper_eps}"),
            range(&eps),
            range(&sig),
            spread(&ma),
            spread(&sc),
            spread(&np),
            format!(
                "{:+.4} ± {:.4} (MA higher in {wins} of {})",
                mean_std(&diff).0,
                mean_std(&diff).1,
                diff.len()
            ),
        ]);
        np_curve.push((paper_batch, mean_std(&np).0));
        ma_curve.push((paper_batch, mean_std(&ma).0));
        sc_curve.push((paper_batch, mean_std(&sc).0));
        for c in &of_s {
            per_seed.push(vec![
                format!("{paper_batch}"),
                c.seed.to_string(),
                format!("{:.4}", c.epsilon_moments),
                format!("{:.3}", c.sigma_strong),
                format!("{:.4}", c.epsilon_strong),
                format!("{:.4}", c.accuracy_moments),
                format!("{:.4}", c.accuracy_strong),
                format!("{:.4}", c.accuracy_nonprivate),
                format!("{:.0}", c.seconds),
            ]);
        }
        fits_json.push(
            json!({"paper_batch": paper_batch, "paper_epsilon": paper_eps,
            "batch": of_s[0].batch, "iterations": of_s[0].iterations,
            "seeds": of_s.iter().map(|c| c.seed).collect::<Vec<_>>(),
            "epsilon_moments": eps, "strong_noise_multiplier": sig,
            "accuracy_moments": ma, "accuracy_strong": sc, "accuracy_nonprivate": np}),
        );
    }
    let plot = "papers_vips_fig7_seeds.svg";
    line_plot(
        &ctx.output(plot),
        &LinePlot {
            title: "003 Fig. 7: SBN pixel accuracy against S, mean over seeds (one epoch)",
            x_label: "S (paper's)",
            y_label: "test pixel accuracy",
            x_scale: Scale::Log,
            y_scale: Scale::Linear,
        },
        &[
            Series::new("non-private", np_curve),
            Series::new("moments accountant, sigma = 1", ma_curve),
            Series::new("strong composition, same epsilon", sc_curve),
            Series::new(
                "baseline (pixel means)",
                vec![
                    (PAPER_BATCHES[0], setting.baseline),
                    (PAPER_BATCHES[3], setting.baseline),
                ],
            ),
        ],
    )?;
    let mut section = Section::new(
        "papers_vips_fig7",
        "003 Fig. 7 over every batch size and several seeds (SBN, moments accountant vs strong \
         composition)",
        if ctx.quick {
            "cargo xtask bench --quick --only papers_vips_fig7 --no-criterion"
        } else {
            "nice -n 10 cargo xtask bench --only papers_vips_fig7 --no-criterion"
        },
    );
    section.seed = format!(
        "seeds 1..={seeds} (each seeds the initial parameters, the Poisson batches and, on \
         purpose, the noise of its three fits)"
    );
    section.data = setting.description.clone();
    section.plots.push(plot.into());
    let mut body = String::new();
    let _ = writeln!(
        body,
        "Paper: MNIST, 60,000 training images, K = 100, sigma = 1, S in {{400, 800, 1600, 3200}}, \
         one epoch, 10 seeds, pixel accuracy on 100 random test images per seed; it prints the \
         epsilons below and no accuracies (MA above SC at every S, non-private highest).\n\n\
         Here: K = {}, {} training images, {}; one release per iteration (all statistics \
         rescaled to one sensitivity, 003 Eq. 63), delta = {DELTA:e}; strong composition \
         calibrated to the moments-accountant run's epsilon; accuracy on all {} test images; \
         baseline (each pixel's training mean thresholded at 1/2, not private) {:.4}. Spread: \
         mean ± sd [min, max] over seeds; the MA - SC difference is paired by seed. {} of the \
         {} (seed, S) cells were reused from `{FITS_FILE}` (`XTASK_FIG7_RESUME=1`); the fits \
         behind this table took {:.0} s of wall clock in total.\n",
        setting.hidden_003,
        setting.population,
        if setting.real {
            "the paper's S on 8,000 images (q = S / 8,000, 8,000 / S iterations; the \
             epsilons are therefore larger than the paper's)"
        } else {
            "the paper's q and iterations on the synthetic images"
        },
        setting.test.len(),
        setting.baseline,
        reused.min(used.len()),
        used.len(),
        fitted_seconds,
    );
    let _ = writeln!(
        body,
        "{}",
        markdown_table(
            &[
                "S (paper)",
                "S (here)",
                "iterations",
                "seeds",
                "paper's eps (60,000 images)",
                "eps here (MA, sigma 1)",
                "SC sigma at that eps",
                "MA accuracy",
                "SC accuracy",
                "non-private accuracy",
                "MA - SC (paired)"
            ],
            &summary
        )
    );
    let _ = writeln!(
        body,
        "\nPer seed (epsilon of each run's own ledger):\n\n{}",
        markdown_table(
            &[
                "S (paper)",
                "seed",
                "eps (MA run)",
                "SC sigma",
                "eps (SC run)",
                "MA",
                "SC",
                "non-private",
                "seconds (3 fits)"
            ],
            &per_seed
        )
    );
    section.body = body;
    section.figures = json!({"003_fig7_seeds": {"fits": fits_json, "seeds": seeds,
        "delta": DELTA, "sigma": SIGMA, "baseline": setting.baseline,
        "fitted_seconds": fitted_seconds}});
    Ok(section)
}
