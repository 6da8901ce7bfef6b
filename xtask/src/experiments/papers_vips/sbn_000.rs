//! 000 Fig. 8: SBN pixel accuracy over mini-batch sizes at a fixed total epsilon, zCDP +
//! amplification against advanced composition and the non-private fit, over seeds.

use std::fmt::Write as _;

use dp_accountant::AccountantKind;
use serde_json::json;

use super::Part;
use super::blr_setting::mean_std;
use super::sbn_setting::{SbnNoise, SbnRun, SbnSetting, fit_sbn};
use crate::context::Context;
use crate::plot::{LinePlot, Scale, Series, line_plot};
use crate::report::markdown_table;

/// 000 Sec. 7.1: S in {50, 100, 200}, eps in {0.5, 1}, 10 seeds.
pub(super) const BATCHES: [f64; 3] = [50.0, 100.0, 200.0];
pub(super) const EPSILONS: [f64; 2] = [0.5, 1.0];
pub(super) const FULL_SEEDS: u64 = 10;
const QUICK_SEEDS: u64 = 2;
/// 000 prints no delta for its SBN runs; its LDA and BLR use 1e-4.
pub(super) const DELTA: f64 = 1e-4;

pub(super) const ACCOUNTANTS: [(AccountantKind, &str); 2] = [
    (AccountantKind::Zcdp, "zCDP + amplification"),
    (AccountantKind::Advanced, "advanced composition"),
];

/// Runs 000 Fig. 8 on `setting` (the synthetic SBN images in both modes: see the note).
pub fn run(ctx: &Context, setting: &SbnSetting, quick: bool) -> anyhow::Result<Part> {
    let seeds = if quick { QUICK_SEEDS } else { FULL_SEEDS };
    let hidden = setting.hidden_003;
    let mut rows = Vec::new();
    let mut curves: Vec<Series> = Vec::new();
    let mut acc = vec![vec![vec![Vec::new(); BATCHES.len()]; EPSILONS.len()]; ACCOUNTANTS.len()];
    let mut sigma = vec![vec![vec![0.0; BATCHES.len()]; EPSILONS.len()]; ACCOUNTANTS.len()];
    let mut nonprivate = vec![Vec::new(); BATCHES.len()];
    for (b, &batch) in BATCHES.iter().enumerate() {
        for seed in 1..=seeds {
            let run = |noise, accountant| {
                fit_sbn(
                    setting,
                    SbnRun {
                        hidden,
                        batch,
                        noise,
                        accountant,
                        delta: DELTA,
                        seed,
                    },
                )
            };
            nonprivate[b].push(run(SbnNoise::NonPrivate, AccountantKind::Zcdp)?.accuracy);
            for (a, &(kind, _)) in ACCOUNTANTS.iter().enumerate() {
                for (e, &eps) in EPSILONS.iter().enumerate() {
                    let out = run(SbnNoise::Target(eps), kind)?;
                    acc[a][e][b].push(out.accuracy);
                    sigma[a][e][b] = out.noise_multiplier.unwrap_or(0.0);
                }
            }
        }
    }
    let fmt = |v: &[f64]| {
        let (m, s) = mean_std(v);
        format!("{m:.4} ± {s:.4}")
    };
    for (e, &eps) in EPSILONS.iter().enumerate() {
        for (a, &(_, name)) in ACCOUNTANTS.iter().enumerate() {
            let mut row = vec![format!("{eps}"), name.to_string()];
            for b in 0..BATCHES.len() {
                row.push(format!(
                    "{} (sigma {:.2})",
                    fmt(&acc[a][e][b]),
                    sigma[a][e][b]
                ));
            }
            rows.push(row);
            curves.push(Series::new(
                format!("{name}, eps = {eps}"),
                BATCHES
                    .iter()
                    .zip(&acc[a][e])
                    .map(|(&s, v)| (s, mean_std(v).0))
                    .collect(),
            ));
        }
    }
    let mut np_row = vec!["∞".to_string(), "non-private".to_string()];
    np_row.extend(nonprivate.iter().map(|v| fmt(v)));
    rows.push(np_row);
    curves.push(Series::new(
        "non-private",
        BATCHES
            .iter()
            .zip(&nonprivate)
            .map(|(&s, v)| (s, mean_std(v).0))
            .collect(),
    ));
    let plot = "papers_vips_000_fig8.svg";
    line_plot(
        &ctx.output(plot),
        &LinePlot {
            title: "000 Fig. 8: SBN pixel accuracy against batch size at fixed epsilon",
            x_label: "mini-batch size S (one epoch)",
            y_label: "test pixel accuracy (mean over seeds)",
            x_scale: Scale::Log,
            y_scale: Scale::Linear,
        },
        &curves,
    )?;
    let mut part = Part::default();
    let _ = writeln!(
        part.body,
        "\n### 000 Fig. 8: SBN, zCDP vs advanced composition over batch sizes\n\n\
         Paper: MNIST (60,000 images), K in {{50, 100}}, eps in {{0.5, 1}}, S in {{50, 100, \
         200}}, 10 seeds, box plots of pixel accuracy; no values printed (private accuracy \
         falls as S grows; zCDP above advanced; at eps = 1, S = 50 zCDP about as good as \
         non-private). Here: {}, K = {hidden}, one epoch, delta = {DELTA:e} (000 prints none \
         for the SBN), {seeds} seeds (initial parameters, batches and noise seeded on purpose), \
         mean ± sd over seeds (noise multiplier of the run). Run on the synthetic images in both \
         modes, one K only: on mnist10k one seed of the paper's grid is about 1.5 CPU-hours, \
         far over the full run's budget; the paper's grid on mnist10k is the on-request section \
         `papers_vips_fig8` (`cargo xtask bench --only papers_vips_fig8`, resumable).\n\n{}",
        if setting.real {
            "mnist10k"
        } else {
            "the synthetic SBN images"
        },
        markdown_table(
            &["eps", "accountant", "S = 50", "S = 100", "S = 200"],
            &rows
        ),
    );
    part.plots.push(plot.into());
    part.figures["000_fig8"] = json!({"batches": BATCHES, "epsilons": EPSILONS,
        "accountants": ACCOUNTANTS.iter().map(|a| a.1).collect::<Vec<_>>(),
        "accuracy": acc, "noise_multipliers": sigma, "nonprivate": nonprivate,
        "seeds": seeds, "hidden": hidden, "delta": DELTA});
    Ok(part)
}
