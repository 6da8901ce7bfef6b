//! 000 Fig. 8 on mnist10k at the paper's grid over several seeds (issue 22): its own section
//! (`--only papers_vips_fig8`), not in the default run, because it takes hours.
//!
//! For each seed, K in {50, 100} and S in {200, 100, 50} (cheapest first): a non-private fit and, at eps in
//! {0.5, 1}, a zCDP + amplification fit and an advanced-composition fit, one expected pass each
//! (the fits of `sbn_000`, the same `fit_sbn`, delta and grid). Only on mnist10k: when it is
//! absent the section says so and fits nothing (no synthetic stand-in; `sbn_000` is that).
//!
//! The loop is seed-major; every finished fit is appended to `papers_vips_fig8_fits.jsonl` in the
//! output directory, and `XTASK_FIG8_RESUME=1` reuses the fits found there (same setting) instead
//! of refitting them. `XTASK_FIG8_SEEDS` sets the number of seeds (default 10, the paper's);
//! `XTASK_FIG8_BUDGET_SECONDS` starts no new fit after that many seconds, so a run can stop at a
//! deadline and still write its table (the rest is listed as still to run).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::json;

use super::blr_setting::mean_std;
use super::sbn_000::{ACCOUNTANTS, BATCHES, DELTA, EPSILONS, FULL_SEEDS};
use super::sbn_setting::{SbnNoise, SbnRun, SbnSetting, fit_sbn};
use crate::context::Context;
use crate::plot::{LinePlot, Scale, Series, line_plot};
use crate::report::{Section, markdown_table};

/// 000 Sec. 7.1: K in {50, 100}.
const HIDDEN: [usize; 2] = [50, 100];
const FITS_FILE: &str = "papers_vips_fig8_fits.jsonl";
const NAME: &str = "papers_vips_fig8";
const NONPRIVATE: &str = "non-private";

/// A bad value of one of this section's environment variables.
#[derive(Debug)]
pub struct EnvError {
    var: &'static str,
    value: String,
    reason: String,
}

impl std::fmt::Display for EnvError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}={:?}: {}", self.var, self.value, self.reason)
    }
}

impl std::error::Error for EnvError {}

fn env_number(var: &'static str) -> Result<Option<f64>, EnvError> {
    match std::env::var(var) {
        Ok(value) => {
            let x: f64 = value.trim().parse().map_err(|e| EnvError {
                var,
                value: value.clone(),
                reason: format!("{e}"),
            })?;
            if x.is_finite() && x > 0.0 {
                Ok(Some(x))
            } else {
                Err(EnvError {
                    var,
                    value,
                    reason: "must be positive".into(),
                })
            }
        }
        Err(_) => Ok(None),
    }
}

fn seeds_from_env() -> Result<u64, EnvError> {
    let n = env_number("XTASK_FIG8_SEEDS")?.unwrap_or(FULL_SEEDS as f64);
    if n.fract() != 0.0 {
        return Err(EnvError {
            var: "XTASK_FIG8_SEEDS",
            value: n.to_string(),
            reason: "must be a whole number".into(),
        });
    }
    Ok(n as u64)
}

/// One fit of the grid.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Fit {
    /// Identifies the setting (data, population, delta) the fit was made under.
    setting: String,
    seed: u64,
    hidden: usize,
    batch: f64,
    /// `NONPRIVATE` or the accountant's name in `ACCOUNTANTS`.
    method: String,
    /// The total epsilon the private fit was calibrated to.
    epsilon_target: Option<f64>,
    epsilon: Option<f64>,
    noise_multiplier: Option<f64>,
    iterations: u64,
    accuracy: f64,
    seconds: f64,
}

/// (seed, K, S, method, epsilon in thousandths; 0 for non-private).
type Key = (u64, usize, u64, String, u64);

fn key_of(seed: u64, hidden: usize, batch: f64, method: &str, eps: Option<f64>) -> Key {
    (
        seed,
        hidden,
        batch as u64,
        method.to_string(),
        eps.map_or(0, |e| (e * 1000.0).round() as u64),
    )
}

fn load_fits(path: &std::path::Path, setting: &str) -> BTreeMap<Key, Fit> {
    let mut fits = BTreeMap::new();
    if let Ok(text) = std::fs::read_to_string(path) {
        for line in text.lines() {
            if let Ok(fit) = serde_json::from_str::<Fit>(line)
                && fit.setting == setting
            {
                let key = key_of(
                    fit.seed,
                    fit.hidden,
                    fit.batch,
                    &fit.method,
                    fit.epsilon_target,
                );
                fits.insert(key, fit);
            }
        }
    }
    fits
}

/// Every fit of the grid for `seeds`, in run order: seed, then cheapest first (K = 50 before
/// 100, S = 200 before 100 before 50: a fit costs about its 8,000 / S iterations, each about
/// proportional to K), then non-private and the four private fits.
fn grid(seeds: u64) -> Vec<(u64, usize, f64, &'static str, Option<f64>)> {
    let mut out = Vec::new();
    for seed in 1..=seeds {
        for &hidden in &HIDDEN {
            for &batch in BATCHES.iter().rev() {
                out.push((seed, hidden, batch, NONPRIVATE, None));
                for &eps in &EPSILONS {
                    for &(_, name) in &ACCOUNTANTS {
                        out.push((seed, hidden, batch, name, Some(eps)));
                    }
                }
            }
        }
    }
    out
}

fn spread(v: &[f64]) -> String {
    if v.is_empty() {
        return "not run".into();
    }
    let (m, s) = mean_std(v);
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if v.len() == 1 {
        format!("{m:.4} (1 seed)")
    } else {
        format!("{m:.4} ± {s:.4} [{lo:.4}, {hi:.4}] (n = {})", v.len())
    }
}

fn command(ctx: &Context) -> &'static str {
    if ctx.quick {
        "cargo xtask bench --quick --only papers_vips_fig8 --no-criterion"
    } else {
        "XTASK_FIG8_RESUME=1 nice -n 10 cargo xtask bench --only papers_vips_fig8 --no-criterion"
    }
}

/// Runs 000 Fig. 8 on mnist10k over seeds, or says that mnist10k is absent.
pub fn run(ctx: &Context) -> anyhow::Result<Section> {
    let seeds = seeds_from_env()?;
    let budget = env_number("XTASK_FIG8_BUDGET_SECONDS")?;
    let resume = std::env::var("XTASK_FIG8_RESUME").is_ok_and(|v| v == "1");
    let mut section = Section::new(
        NAME,
        "000 Fig. 8 on mnist10k over seeds (SBN, zCDP + amplification vs advanced composition)",
        command(ctx),
    );
    let Some(dir) = ctx.data_set("mnist10k") else {
        let looked = match &ctx.data_dir {
            Some(d) => format!("{} has no mnist10k", d.display()),
            None if ctx.quick => "quick mode reads no data sets".to_string(),
            None => "no data directory (pass --data-dir DIR)".to_string(),
        };
        eprintln!("{NAME}: mnist10k is absent ({looked}); nothing fitted");
        section.data = format!("none: mnist10k is absent ({looked})");
        section.body = format!(
            "**mnist10k is absent ({looked}): nothing was fitted.** This section runs 000 Fig. 8 \
             only on mnist10k, with no stand-in; the synthetic-image version is 000 Fig. 8 in \
             `papers_vips`.\n"
        );
        section.figures = json!({"000_fig8_seeds": {"absent": "mnist10k"}});
        return Ok(section);
    };
    let setting = SbnSetting::mnist10k(&dir)?;
    let key = format!(
        "mnist10k; N = {}; delta = {DELTA:e}; one pass",
        setting.population
    );
    let path = ctx.output(FITS_FILE);
    let mut fits = if resume {
        load_fits(&path, &key)
    } else {
        let _ = std::fs::remove_file(&path);
        BTreeMap::new()
    };
    let start = Instant::now();
    let reused = grid(seeds)
        .iter()
        .filter(|(s, h, b, m, e)| fits.contains_key(&key_of(*s, *h, *b, m, *e)))
        .count();
    let mut stopped_by_budget = false;
    for (seed, hidden, batch, method, eps) in grid(seeds) {
        let k = key_of(seed, hidden, batch, method, eps);
        if fits.contains_key(&k) {
            continue;
        }
        if budget.is_some_and(|b| start.elapsed().as_secs_f64() >= b) {
            stopped_by_budget = true;
            break;
        }
        let accountant = ACCOUNTANTS
            .iter()
            .find(|a| a.1 == method)
            .map_or(ACCOUNTANTS[0].0, |a| a.0);
        let noise = eps.map_or(SbnNoise::NonPrivate, SbnNoise::Target);
        let t = Instant::now();
        let out = fit_sbn(
            &setting,
            SbnRun {
                hidden,
                batch,
                noise,
                accountant,
                delta: DELTA,
                seed,
            },
        )?;
        let fit = Fit {
            setting: key.clone(),
            seed,
            hidden,
            batch,
            method: method.to_string(),
            epsilon_target: eps,
            epsilon: out.epsilon,
            noise_multiplier: out.noise_multiplier,
            iterations: out.iterations,
            accuracy: out.accuracy,
            seconds: t.elapsed().as_secs_f64(),
        };
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)?;
        writeln!(file, "{}", serde_json::to_string(&fit)?)?;
        eprintln!(
            "{NAME}: seed {seed}, K = {hidden}, S = {batch}, {method}{}: accuracy {:.4} \
             (sigma {:.3}, {} iterations; {:.0} s)",
            eps.map_or(String::new(), |e| format!(" eps {e}")),
            fit.accuracy,
            fit.noise_multiplier.unwrap_or(0.0),
            fit.iterations,
            fit.seconds
        );
        fits.insert(k, fit);
    }
    let grid_now = grid(seeds);
    let missing: Vec<_> = grid_now
        .iter()
        .filter(|(s, h, b, m, e)| !fits.contains_key(&key_of(*s, *h, *b, m, *e)))
        .collect();
    let get = |seed: u64, hidden: usize, batch: f64, method: &str, eps: Option<f64>| {
        fits.get(&key_of(seed, hidden, batch, method, eps))
    };
    let done = grid_now.len() - missing.len();
    let fitted_seconds: f64 = grid_now
        .iter()
        .filter_map(|&(s, h, b, m, e)| get(s, h, b, m, e))
        .map(|f| f.seconds)
        .sum();

    let mut rows = Vec::new();
    let mut diffs = Vec::new();
    let mut curves = Vec::new();
    let mut cells_json = Vec::new();
    for &hidden in &HIDDEN {
        let column = |method: &str, eps: Option<f64>, batch: f64| -> Vec<&Fit> {
            (1..=seeds)
                .filter_map(|seed| get(seed, hidden, batch, method, eps))
                .collect()
        };
        let acc = |v: &[&Fit]| v.iter().map(|f| f.accuracy).collect::<Vec<f64>>();
        for &eps in &EPSILONS {
            for &(_, name) in &ACCOUNTANTS {
                let mut row = vec![hidden.to_string(), format!("{eps}"), name.to_string()];
                let mut curve = Vec::new();
                for &batch in &BATCHES {
                    let of = column(name, Some(eps), batch);
                    let a = acc(&of);
                    row.push(match of.first() {
                        Some(f) => format!(
                            "{} (sigma {:.2})",
                            spread(&a),
                            f.noise_multiplier.unwrap_or(0.0)
                        ),
                        None => "not run".into(),
                    });
                    if !a.is_empty() {
                        curve.push((batch, mean_std(&a).0));
                    }
                    cells_json.push(json!({"hidden": hidden, "epsilon": eps, "method": name,
                        "batch": batch, "seeds": of.iter().map(|f| f.seed).collect::<Vec<_>>(),
                        "accuracy": a,
                        "noise_multiplier": of.first().and_then(|f| f.noise_multiplier),
                        "iterations": of.first().map(|f| f.iterations)}));
                }
                rows.push(row);
                if !curve.is_empty() {
                    curves.push(Series::new(
                        format!("K = {hidden}, {name}, eps = {eps}"),
                        curve,
                    ));
                }
            }
            let mut drow = vec![hidden.to_string(), format!("{eps}")];
            for &batch in &BATCHES {
                let d: Vec<f64> = (1..=seeds)
                    .filter_map(|seed| {
                        let z = get(seed, hidden, batch, ACCOUNTANTS[0].1, Some(eps))?;
                        let a = get(seed, hidden, batch, ACCOUNTANTS[1].1, Some(eps))?;
                        Some(z.accuracy - a.accuracy)
                    })
                    .collect();
                drow.push(if d.is_empty() {
                    "not run".into()
                } else if d.len() == 1 {
                    format!("{:+.4} (1 seed)", d[0])
                } else {
                    let wins = d.iter().filter(|x| **x > 0.0).count();
                    format!(
                        "{:+.4} ± {:.4} (zCDP higher in {wins} of {})",
                        mean_std(&d).0,
                        mean_std(&d).1,
                        d.len()
                    )
                });
            }
            diffs.push(drow);
        }
        let mut np_row = vec![hidden.to_string(), "∞".into(), NONPRIVATE.to_string()];
        let mut curve = Vec::new();
        for &batch in &BATCHES {
            let of = column(NONPRIVATE, None, batch);
            let a = acc(&of);
            np_row.push(spread(&a));
            if !a.is_empty() {
                curve.push((batch, mean_std(&a).0));
            }
            cells_json.push(
                json!({"hidden": hidden, "method": NONPRIVATE, "batch": batch,
                "seeds": of.iter().map(|f| f.seed).collect::<Vec<_>>(), "accuracy": a}),
            );
        }
        rows.push(np_row);
        if !curve.is_empty() {
            curves.push(Series::new(format!("K = {hidden}, non-private"), curve));
        }
    }
    curves.push(Series::new(
        "baseline (pixel means)",
        vec![
            (BATCHES[0], setting.baseline),
            (BATCHES[2], setting.baseline),
        ],
    ));
    let plot = "papers_vips_fig8_seeds.svg";
    line_plot(
        &ctx.output(plot),
        &LinePlot {
            title: "000 Fig. 8 on mnist10k: SBN pixel accuracy against S, mean over seeds",
            x_label: "mini-batch size S (one epoch of 8,000 images)",
            y_label: "test pixel accuracy",
            x_scale: Scale::Log,
            y_scale: Scale::Linear,
        },
        &curves,
    )?;

    section.seed = format!(
        "seeds 1..={seeds} (each seeds the initial parameters, the Poisson batches and, on \
         purpose, the noise of its fits)"
    );
    section.data = setting.description.clone();
    section.plots.push(plot.into());
    let mut body = String::new();
    let _ = writeln!(
        body,
        "Paper: MNIST (60,000 images), K in {{50, 100}}, eps in {{0.5, 1}}, S in {{50, 100, \
         200}}, 10 seeds, box plots of pixel accuracy; no values printed (private accuracy falls \
         as S grows; zCDP above advanced; at eps = 1, S = 50 zCDP about as good as \
         non-private).\n\n\
         Here: mnist10k's {} training images (one expected pass: 8,000 / S iterations), accuracy \
         on all {} test images, delta = {DELTA:e} (000 prints none for the SBN), the fits of \
         `papers_vips`' 000 Fig. 8 (`fit_sbn`); baseline (each pixel's training mean thresholded \
         at 1/2, not private) {:.4}. Spread: mean ± sd [min, max] over the seeds done; the zCDP - \
         advanced difference is paired by seed. {done} of the {} fits of seeds 1..={seeds} are \
         done ({reused} reused from `{FITS_FILE}` with `XTASK_FIG8_RESUME=1`); they took {:.0} s \
         of wall clock in total.\n",
        setting.population,
        setting.test.len(),
        setting.baseline,
        grid_now.len(),
        fitted_seconds,
    );
    let _ = writeln!(
        body,
        "{}",
        markdown_table(
            &["K", "eps", "method", "S = 50", "S = 100", "S = 200"],
            &rows
        )
    );
    let _ = writeln!(
        body,
        "\nzCDP + amplification minus advanced composition, paired by seed:\n\n{}",
        markdown_table(&["K", "eps", "S = 50", "S = 100", "S = 200"], &diffs)
    );
    if missing.is_empty() {
        let _ = writeln!(body, "\nEvery fit of seeds 1..={seeds} is done.");
    } else {
        let mut by_seed: BTreeMap<u64, usize> = BTreeMap::new();
        for m in &missing {
            *by_seed.entry(m.0).or_default() += 1;
        }
        let _ = writeln!(
            body,
            "\n**Still to run: {} of {} fits** ({}){}; first missing: seed {}, K = {}, S = {}, \
             {}. Resume (reuses every fit in `{FITS_FILE}`): `XTASK_FIG8_SEEDS={seeds} \
             XTASK_FIG8_RESUME=1 nice -n 10 cargo xtask bench --only {NAME} --no-criterion \
             --out {}`.",
            missing.len(),
            grid_now.len(),
            by_seed
                .iter()
                .map(|(s, n)| format!("seed {s}: {n}"))
                .collect::<Vec<_>>()
                .join(", "),
            if stopped_by_budget {
                " (stopped by `XTASK_FIG8_BUDGET_SECONDS`)"
            } else {
                ""
            },
            missing[0].0,
            missing[0].1,
            missing[0].2,
            match missing[0].4 {
                Some(e) => format!("{} eps {e}", missing[0].3),
                None => missing[0].3.to_string(),
            },
            ctx.out.display(),
        );
    }
    let per_fit: Vec<Vec<String>> = grid_now
        .iter()
        .filter_map(|&(s, h, b, m, e)| get(s, h, b, m, e))
        .map(|f| {
            vec![
                f.seed.to_string(),
                f.hidden.to_string(),
                format!("{}", f.batch),
                f.method.clone(),
                f.epsilon_target.map_or("∞".into(), |e| format!("{e}")),
                f.noise_multiplier.map_or("-".into(), |s| format!("{s:.3}")),
                f.iterations.to_string(),
                format!("{:.4}", f.accuracy),
                format!("{:.0}", f.seconds),
            ]
        })
        .collect();
    let _ = writeln!(
        body,
        "\nPer fit:\n\n{}",
        markdown_table(
            &[
                "seed",
                "K",
                "S",
                "method",
                "eps",
                "sigma",
                "iterations",
                "accuracy",
                "seconds"
            ],
            &per_fit
        )
    );
    section.body = body;
    section.figures = json!({"000_fig8_seeds": {"cells": cells_json, "seeds": seeds,
        "delta": DELTA, "baseline": setting.baseline, "fits_done": done,
        "fits_missing": missing.len(), "fitted_seconds": fitted_seconds}});
    Ok(section)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grid_is_the_papers_and_cheapest_first() {
        let g = grid(2);
        // 2 K x 3 S x (non-private + 2 eps x 2 accountants), per seed
        assert_eq!(g.len(), 2 * 2 * 3 * 5);
        assert_eq!(g[0], (1, 50, 200.0, NONPRIVATE, None));
        assert_eq!(g[29].0, 1);
        assert_eq!((g[29].1, g[29].2), (100, 50.0));
        assert_eq!(g[30].0, 2);
    }

    #[test]
    fn finished_fits_are_reused_only_for_the_same_setting() {
        let dir = std::env::temp_dir().join(format!("fig8-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(FITS_FILE);
        let fit = |setting: &str, eps| Fit {
            setting: setting.into(),
            seed: 1,
            hidden: 50,
            batch: 200.0,
            method: ACCOUNTANTS[0].1.into(),
            epsilon_target: eps,
            epsilon: eps,
            noise_multiplier: Some(3.0),
            iterations: 40,
            accuracy: 0.9,
            seconds: 1.0,
        };
        let lines = [
            serde_json::to_string(&fit("a", Some(0.5))).unwrap(),
            serde_json::to_string(&fit("b", Some(1.0))).unwrap(),
            "not json".to_string(),
        ];
        std::fs::write(&path, lines.join("\n")).unwrap();
        let fits = load_fits(&path, "a");
        assert_eq!(fits.len(), 1);
        assert!(fits.contains_key(&key_of(1, 50, 200.0, ACCOUNTANTS[0].1, Some(0.5))));
        assert!(!fits.contains_key(&key_of(1, 50, 200.0, ACCOUNTANTS[0].1, Some(1.0))));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
