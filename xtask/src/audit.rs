//! `cargo xtask audit`: empirical privacy audits of the mechanisms (a statistical lower bound on
//! epsilon that must stay below the accountant's claim), a deliberately broken mechanism that
//! must be caught, and the models' sensitivity checks; prints and writes a pass/fail table.

use dp_core::audit::{AuditConfig, AuditedMechanism, audit_with_noise_scale};
use serde_json::json;

use crate::context::Context;
use crate::report::markdown_table;
use crate::sensitivity;

/// One audit case.
struct Case {
    name: &'static str,
    mechanism: AuditedMechanism,
    noise_scale: f64,
    /// Whether the audit is expected to refute the accountant's claim (a planted bug).
    expect_refuted: bool,
}

/// Runs every audit, writes `audit.md` and `audit.json`; fails if any check fails.
pub fn run(ctx: &Context) -> anyhow::Result<()> {
    let runs = if ctx.quick { 200_000 } else { 1_000_000 };
    let delta = 1e-5;
    let config = AuditConfig {
        runs,
        ..AuditConfig::default()
    };
    let cases = [
        Case {
            name: "Gaussian, sigma = 1",
            mechanism: AuditedMechanism::Gaussian {
                noise_multiplier: 1.0,
            },
            noise_scale: 1.0,
            expect_refuted: false,
        },
        Case {
            name: "Poisson-subsampled Gaussian, sigma = 0.8, q = 0.5",
            mechanism: AuditedMechanism::PoissonSubsampledGaussian {
                noise_multiplier: 0.8,
                sampling_rate: 0.5,
            },
            noise_scale: 1.0,
            expect_refuted: false,
        },
        Case {
            name: "BROKEN Gaussian (noise halved), sigma = 1",
            mechanism: AuditedMechanism::Gaussian {
                noise_multiplier: 1.0,
            },
            noise_scale: 0.5,
            expect_refuted: true,
        },
        Case {
            name: "BROKEN Poisson-subsampled Gaussian (noise halved), sigma = 0.8, q = 0.5",
            mechanism: AuditedMechanism::PoissonSubsampledGaussian {
                noise_multiplier: 0.8,
                sampling_rate: 0.5,
            },
            noise_scale: 0.5,
            expect_refuted: true,
        },
    ];
    let mut rows = Vec::new();
    let mut results = Vec::new();
    let mut all_pass = true;
    for case in &cases {
        eprintln!("xtask audit: {} ({runs} runs per dataset)", case.name);
        let report = audit_with_noise_scale(case.mechanism, case.noise_scale, delta, &config)?;
        let pass = report.refutes_claim() == case.expect_refuted;
        all_pass &= pass;
        rows.push(vec![
            case.name.to_string(),
            format!("{:.4}", report.claimed_epsilon),
            format!("{:.4}", report.epsilon_lower_bound),
            if case.expect_refuted {
                "refuted"
            } else {
                "not refuted"
            }
            .to_string(),
            if pass { "PASS" } else { "FAIL" }.to_string(),
        ]);
        results.push(json!({"case": case.name, "pass": pass, "report": report}));
    }
    let table = markdown_table(
        &[
            "mechanism",
            "accountant eps",
            "audit lower bound (95%)",
            "expected",
            "result",
        ],
        &rows,
    );
    let (sensitivity_md, sensitivity_json, sensitivity_pass) = sensitivity::run(ctx)?;
    let md = format!(
        "# Privacy audit\n\n## Mechanisms\n\nThreshold audit on a worst-case add/remove pair, {runs} \
         runs per dataset, delta = {delta}, Clopper-Pearson at 95% with Bonferroni over thresholds \
         (`dp_core::audit`). Seed {:#x}.\n\n{table}\n{sensitivity_md}",
        config.seed
    );
    std::fs::write(ctx.output("audit.md"), &md)?;
    std::fs::write(
        ctx.output("audit.json"),
        serde_json::to_string_pretty(&json!({
            "runs": runs,
            "delta": delta,
            "cases": results,
            "sensitivity_checks": sensitivity_json,
        }))?,
    )?;
    println!("{md}");
    println!("audit written to {}", ctx.output("audit.md").display());
    anyhow::ensure!(
        all_pass,
        "privacy audit failed: a mechanism audit did not give the expected verdict"
    );
    anyhow::ensure!(
        sensitivity_pass,
        "privacy audit failed: a sensitivity check failed"
    );
    Ok(())
}
