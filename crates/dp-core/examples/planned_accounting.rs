//! Accounting cost of a long DP-SEP-like run through the wall: 430,000 one-record releases
//! (Naval's run) with planned accounting, made through the cheap path, and a short run with
//! per-release accounting for comparison (a budget check and a ledger entry per release).
//!
//! `cargo run --release -p dp-core --example planned_accounting [releases] [per-release sample]`

use std::time::Instant;

use dp_core::{PrivacyWall, ReleaseSpec, SamplingScheme};

mod common;
use common::{ExampleError, arg};

fn main() -> Result<(), ExampleError> {
    let mut args = std::env::args().skip(1);
    let releases: u64 = arg(args.next(), "RELEASES", "whole number", 430_000)?;
    let sample: u64 = arg(args.next(), "PER-RELEASE SAMPLE", "whole number", 2_000)?;
    let population = 10_000usize;
    let dim = 50;
    let records: Vec<Vec<f64>> = (0..population)
        .map(|i| (0..dim).map(|j| ((i * dim + j) as f64).sin()).collect())
        .collect();
    let mut b = ReleaseSpec::builder("factor");
    let factor = b.vector("factor", dim, 1.0)?;
    let spec = b.build()?;
    let stat =
        |x: &Vec<f64>, buf: &mut dp_core::ContributionBuffer| buf.dense(factor).copy_from_slice(x);
    let mut out = vec![0.0; dim];

    // Planned: calibration and the one ledger entry at build, then releases only.
    let t0 = Instant::now();
    let mut wall = PrivacyWall::builder(records.clone())
        .sampling(SamplingScheme::uniform_single())
        .epsilon_delta(1.0, 1e-5)
        .planned_run(format!("DP-SEP run: {releases} releases"), releases)
        .seed(1)
        .build()?;
    let build = t0.elapsed();
    let t1 = Instant::now();
    for _ in 0..releases {
        wall.release_into(&spec, stat, &mut out)?;
    }
    let run = t1.elapsed();
    let t2 = Instant::now();
    let eps = wall.spent_epsilon()?;
    let report = t2.elapsed();
    println!(
        "planned: {releases} releases, sigma {:.4}, eps {eps:.4}, ledger entries {}",
        wall.noise_multiplier().unwrap_or(f64::NAN),
        wall.ledger().len()
    );
    println!(
        "  build (calibration + one ledger entry) {:.3} s; releases {:.3} s ({:.2} us each, \
         no accounting); spent_epsilon {:.4} s",
        build.as_secs_f64(),
        run.as_secs_f64(),
        run.as_secs_f64() * 1e6 / releases as f64,
        report.as_secs_f64()
    );

    // Per-release: one ledger entry and one budget check per release.
    let mut wall = PrivacyWall::builder(records)
        .sampling(SamplingScheme::uniform_single())
        .epsilon_delta(1.0, 1e-5)
        .calibrate_for_releases(releases)
        .seed(1)
        .build()?;
    let t3 = Instant::now();
    for _ in 0..sample {
        wall.release_into(&spec, stat, &mut out)?;
    }
    let per = t3.elapsed();
    println!(
        "per-release accounting: first {sample} releases {:.3} s ({:.1} us each)",
        per.as_secs_f64(),
        per.as_secs_f64() * 1e6 / sample as f64
    );
    Ok(())
}
