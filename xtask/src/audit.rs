//! `cargo xtask audit`: empirical privacy audits of the privacy wall through its real release
//! path (lower bounds on `mu` of `mu`-GDP and on `delta(eps)` that must stay below the claims),
//! planted noise bugs (x 0.5 and x 1/sqrt(2), a sqrt(2) sensitivity bug) that must be caught,
//! for both neighbouring relations, and the models' sensitivity checks; prints and writes a
//! pass/fail table.

use dp_core::audit::{AUDIT_EPSILONS, AuditConfig, AuditedWall, audit_wall};
use serde_json::json;
use std::f64::consts::FRAC_1_SQRT_2;

use crate::context::Context;
use crate::report::markdown_table;
use crate::sensitivity;

/// The walls audited: each relation, full batch and subsampled; and a group of 4 blocks
/// sharing one joint bound under each relation.
fn walls() -> anyhow::Result<Vec<AuditedWall>> {
    Ok(vec![
        AuditedWall::add_remove_gaussian(1.0)?,
        AuditedWall::poisson_subsampled(0.8, 0.5)?,
        AuditedWall::replace_one_gaussian(1.0)?,
        AuditedWall::replace_one_single_draw(0.8, 2)?,
        AuditedWall::replace_one_fixed_size(0.8, 2, 8)?,
        AuditedWall::poisson_subsampled(0.8, 0.5)?.grouped(4)?,
        AuditedWall::replace_one_single_draw(0.8, 2)?.grouped(4)?,
    ])
}

/// Runs every audit, writes `audit.md` and `audit.json`; fails if any check fails.
pub fn run(ctx: &Context) -> anyhow::Result<()> {
    let runs = if ctx.quick { 200_000 } else { 1_000_000 };
    let config = AuditConfig::default().with_runs(runs)?.with_alpha(1e-3)?;
    let mut rows = Vec::new();
    let mut results = Vec::new();
    let mut all_pass = true;
    for wall in walls()? {
        for (scale, label) in [
            (1.0, "as implemented"),
            (FRAC_1_SQRT_2, "BUG: noise x 1/sqrt(2)"),
            (0.5, "BUG: noise x 0.5"),
        ] {
            let expect_refuted = scale < 1.0;
            let name = format!("{} ({label})", wall.describe());
            eprintln!("xtask audit: {name} ({runs} releases per dataset)");
            let report = audit_wall(&wall, scale, &config)?;
            let refuted = report.refutes_claim();
            let pass = refuted == expect_refuted;
            all_pass &= pass;
            let worst = report
                .curve
                .iter()
                .max_by(|a, b| {
                    (a.delta_lower_bound - a.claimed_delta)
                        .total_cmp(&(b.delta_lower_bound - b.claimed_delta))
                })
                .copied();
            rows.push(vec![
                name.clone(),
                report
                    .claimed_mu
                    .map_or("-".into(), |mu| format!("{mu:.4}")),
                format!("{:.4}", report.mu_lower_bound),
                worst.map_or("-".into(), |p| {
                    format!(
                        "eps {}: {:.5} vs {:.5}",
                        p.epsilon, p.delta_lower_bound, p.claimed_delta
                    )
                }),
                if expect_refuted {
                    if refuted { "caught" } else { "MISSED" }
                } else if refuted {
                    "FALSE ALARM"
                } else {
                    "passes"
                }
                .to_string(),
                if pass { "PASS" } else { "FAIL" }.to_string(),
            ]);
            results.push(json!({"case": name, "expect_refuted": expect_refuted, "pass": pass, "report": report}));
        }
    }
    let table = markdown_table(
        &[
            "wall (planted bug)",
            "claimed mu",
            "mu lower bound",
            "delta(eps): lower bound vs claim, closest",
            "verdict",
            "result",
        ],
        &rows,
    );
    let (sensitivity_md, sensitivity_json, sensitivity_pass) = sensitivity::run(ctx)?;
    let md = format!(
        "# Privacy audit\n\n## Mechanisms\n\nThe privacy wall's own release path on worst-case \
         neighbouring pairs (`dp_core::audit::audit_wall`), {runs} releases per dataset, seed \
         {:#x}. Threshold tests on a grid fixed in advance; Clopper-Pearson bounds with Bonferroni \
         over every threshold, tail and bound, all valid at once with probability 1 - alpha, \
         alpha = {}: a correct wall is refuted with probability <= alpha (the false-alarm rate). \
         A claim is refuted when the lower bound on mu (full batch: mu-GDP, claimed mu = \
         1/sigma) or on delta(eps) at some eps in {:?} exceeds it (claims: the PLD accountant for \
         every event, the fixed-size/single-draw one through its symmetrised pair, docs/pld.md \
         section 9).\n\n{table}\n\
         {sensitivity_md}",
        config.seed(),
        config.alpha(),
        AUDIT_EPSILONS
    );
    std::fs::write(ctx.output("audit.md"), &md)?;
    std::fs::write(
        ctx.output("audit.json"),
        serde_json::to_string_pretty(&json!({
            "runs": runs,
            "alpha": config.alpha(),
            "epsilons": AUDIT_EPSILONS,
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
