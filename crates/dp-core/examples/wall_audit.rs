//! Runs the wall audit (`dp_core::audit::audit_wall`) for one case and prints the report:
//! `cargo run --release -p dp-core --example wall_audit -- RELATION SIGMA [RATE_OR_N] [SCALE] [RUNS]`
//! with RELATION one of `gaussian`, `poisson`, `replace-gaussian`, `single`.

use dp_core::audit::{AuditConfig, AuditedWall, audit_wall};

mod common;
use common::{ExampleError, arg};

fn main() -> Result<(), ExampleError> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let at = |i: usize| args.get(i).cloned();
    let sigma: f64 = arg(at(1), "SIGMA", "number", 1.0)?;
    let relation = at(0).unwrap_or_else(|| "gaussian".into());
    let wall = match relation.as_str() {
        "gaussian" => AuditedWall::add_remove_gaussian(sigma)?,
        "poisson" => {
            AuditedWall::poisson_subsampled(sigma, arg(at(2), "RATE_OR_N", "number", 0.5)?)?
        }
        "replace-gaussian" => AuditedWall::replace_one_gaussian(sigma)?,
        "single" => AuditedWall::replace_one_single_draw(
            sigma,
            arg(at(2), "RATE_OR_N", "whole number", 2)?,
        )?,
        other => {
            return Err(ExampleError::UnknownChoice {
                name: "relation",
                given: other.to_string(),
                expected: "gaussian, poisson, replace-gaussian or single",
            });
        }
    };
    let scale: f64 = arg(at(3), "SCALE", "number", 1.0)?;
    let config = AuditConfig::default()
        .with_runs(arg(at(4), "RUNS", "whole number", 200_000)?)?
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
