//! Accountant comparison (003 Sec. 3.2; 000 Sec. 3 and Table 1): epsilon against iterations for one
//! Poisson-subsampled Gaussian mechanism under RDP, the moments accountant, advanced and linear
//! composition of per-step `(eps, delta)` guarantees amplified by subsampling (000 Thm 1).

use dp_accountant::baselines::{advanced_composition, amplify_by_subsampling, linear_composition};
use dp_accountant::moments::{LambdaGrid, moments_accountant_epsilon};
use dp_accountant::{
    AccountantConfig, Conversion, Neighbouring, Orders, PrivacyEvent, epsilon_for_event,
};
use serde_json::json;

use crate::context::Context;
use crate::plot::{LinePlot, Scale, Series, line_plot};
use crate::report::{Section, markdown_table};

/// Noise multiplier and sampling rate of the comparison (the VIPS paper's LDA setting, 003 Sec. 4).
const SIGMA: f64 = 1.24;
const RATE: f64 = 0.05;
const DELTA: f64 = 1e-4;

/// Runs the comparison.
pub fn run(ctx: &Context) -> anyhow::Result<Section> {
    let steps: Vec<u64> = if ctx.quick {
        vec![1, 2, 5, 10, 20, 50, 100, 200, 500, 1000]
    } else {
        vec![1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000]
    };
    let step = PrivacyEvent::poisson_subsampled_gaussian(SIGMA, RATE)?;
    let continuous = AccountantConfig::default();
    let grid_classic = AccountantConfig::new(Orders::DpAccountingDefault, Conversion::Classic)?;

    let mut names = vec![
        "RDP (continuous orders, improved conversion)",
        "RDP (dp_accounting orders, classic conversion)",
        "moments accountant (003, integer lambda)",
        "advanced composition (000 Thm 1 amplification)",
        "linear composition (000 Thm 1 amplification)",
    ];
    let mut curves: Vec<Vec<(f64, f64)>> = vec![Vec::new(); names.len()];
    let mut rows = Vec::new();
    for &t in &steps {
        let run = step.clone().self_composed(t)?;
        let rdp = epsilon_for_event(&run, DELTA, &continuous)?.epsilon;
        let rdp_grid = epsilon_for_event(&run, DELTA, &grid_classic)?.epsilon;
        let moments =
            moments_accountant_epsilon(SIGMA, RATE, t, DELTA, LambdaGrid::PaperCap)?.epsilon;
        // Per-step (eps0, delta0) of the unsubsampled Gaussian, amplified by subsampling; half of
        // delta goes to the per-step deltas, half to advanced composition's slack.
        let delta0 = DELTA / (2.0 * t as f64 * RATE);
        let gaussian = PrivacyEvent::gaussian(SIGMA, Neighbouring::AddRemoveOne)?;
        let eps0 = epsilon_for_event(&gaussian, delta0, &continuous)?.epsilon;
        let amplified = amplify_by_subsampling(eps0, delta0, RATE)?;
        let advanced =
            advanced_composition(amplified.epsilon, amplified.delta, t, DELTA / 2.0)?.epsilon;
        let linear = linear_composition(amplified.epsilon, amplified.delta, t)?.epsilon;
        let values = [rdp, rdp_grid, moments, advanced, linear];
        for (curve, v) in curves.iter_mut().zip(values) {
            curve.push((t as f64, v));
        }
        rows.push(
            std::iter::once(t.to_string())
                .chain(values.iter().map(|v| format!("{v:.4}")))
                .collect(),
        );
    }
    let plot_file = "accountant_comparison.svg";
    let series: Vec<Series> = names
        .iter()
        .zip(&curves)
        .map(|(n, c)| Series::new(*n, c.clone()))
        .collect();
    line_plot(
        &ctx.output(plot_file),
        &LinePlot {
            title: "epsilon vs iterations (sigma = 1.24, q = 0.05, delta = 1e-4)",
            x_label: "iterations",
            y_label: "epsilon",
            x_scale: Scale::Log,
            y_scale: Scale::Log,
        },
        &series,
    )?;
    let paper = moments_accountant_epsilon(SIGMA, RATE, 20, DELTA, LambdaGrid::PaperCap)?;
    let modern = epsilon_for_event(&step.clone().self_composed(20)?, DELTA, &continuous)?;
    let mut section = Section::new(
        "accountant",
        "Accountant comparison: epsilon against iterations (no paper figure; the accountants of 003 Sec. 3.2 and 000 Sec. 3)",
        "cargo xtask bench --quick --only accountant --no-criterion",
    );
    section.data = "none (pure arithmetic)".into();
    let mut header = vec!["iterations"];
    header.append(&mut names);
    section.body = format!(
        "Poisson-subsampled Gaussian, noise multiplier {SIGMA}, sampling rate {RATE}, delta {DELTA}. \
         The VIPS paper's own run (T = 20) gives eps = {:.4} with the integer-order moments accountant \
         (lambda <= {}), and eps = {:.4} with RDP over continuous orders and the improved conversion \
         (order {:.2}).\n\n{}",
        paper.epsilon,
        paper.lambda_max,
        modern.epsilon,
        modern.order,
        markdown_table(&header, &rows)
    );
    section.figures = json!({
        "sigma": SIGMA, "q": RATE, "delta": DELTA, "steps": steps,
        "series": names.iter().zip(&curves).map(|(n, c)| json!({"name": n, "epsilon": c.iter().map(|p| p.1).collect::<Vec<_>>()})).collect::<Vec<_>>(),
        "paper_t20_moments_accountant": paper.epsilon,
        "paper_t20_rdp_continuous": modern.epsilon,
    });
    section.plots.push(plot_file.into());
    Ok(section)
}
