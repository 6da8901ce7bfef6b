//! Runs the wall audit (`dp_core::audit::audit_wall`) for one case and prints the report:
//! `cargo run --release -p dp-core --example wall_audit -- RELATION SIGMA [RATE_OR_N] [SCALE] [RUNS]`
//! with RELATION one of `gaussian`, `poisson`, `replace-gaussian`, `single`.

use dp_core::audit::{AuditConfig, AuditedWall, audit_wall};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, default: &str| args.get(i).cloned().unwrap_or_else(|| default.into());
    let sigma: f64 = arg(1, "1.0").parse()?;
    let wall = match arg(0, "gaussian").as_str() {
        "gaussian" => AuditedWall::add_remove_gaussian(sigma)?,
        "poisson" => AuditedWall::poisson_subsampled(sigma, arg(2, "0.5").parse()?)?,
        "replace-gaussian" => AuditedWall::replace_one_gaussian(sigma)?,
        "single" => AuditedWall::replace_one_single_draw(sigma, arg(2, "2").parse()?)?,
        other => return Err(format!("unknown relation `{other}`").into()),
    };
    let scale: f64 = arg(3, "1.0").parse()?;
    let config = AuditConfig::default()
        .with_runs(arg(4, "200000").parse()?)?
        .with_alpha(1e-3)?;
    let start = std::time::Instant::now();
    let report = audit_wall(&wall, scale, &config)?;
    println!(
        "{} (noise x {scale}): {:.1} s",
        wall.describe(),
        start.elapsed().as_secs_f64()
    );
    println!(
        "  mu: claimed {:?}, lower bound {:.4}",
        report.claimed_mu, report.mu_lower_bound
    );
    for p in &report.curve {
        println!(
            "  eps {:5.2}: claimed delta {:.5}, lower bound {:.5}",
            p.epsilon, p.claimed_delta, p.delta_lower_bound
        );
    }
    println!(
        "  refuted: {} ({})",
        report.refutes_claim(),
        report.accountant
    );
    Ok(())
}
