//! One-shot wall-clock timing of Analyze-Gauss (noise + PD projection) at one dimension, for
//! sizes where a criterion run (at least 10 samples) is impractical, e.g. `d = 4146`.
//!
//! `cargo run -p dp-core --release --example analyze_gauss_timing -- 4146 1`
//! (arguments: dimension, repetitions). Statistic `0.01 I`, noise std 1, floor `1e-6`.

use std::time::Instant;

use dp_core::AnalyzeGauss;
use nalgebra::DMatrix;
use rand::SeedableRng;
use rand::rngs::ChaCha20Rng;

mod common;
use common::{ExampleError, arg};

fn main() -> Result<(), ExampleError> {
    let mut args = std::env::args().skip(1);
    let d: usize = arg(args.next(), "DIMENSION", "whole number", 1000)?;
    let reps: usize = arg(args.next(), "REPETITIONS", "whole number", 1)?;
    let ag = AnalyzeGauss::new(1.0, 1e-6)?;
    let mut rng = ChaCha20Rng::seed_from_u64(d as u64); // seeded on purpose: a benchmark
    let base = DMatrix::<f64>::identity(d, d) * 0.01;
    for r in 0..reps {
        let mut m = base.clone();
        let start = Instant::now();
        let report = ag.perturb(&mut m, &mut rng)?;
        let elapsed = start.elapsed();
        println!(
            "d = {d} run {r}: {:.3} s, {} eigenvalues raised",
            elapsed.as_secs_f64(),
            report.eigenvalues_raised
        );
    }
    Ok(())
}
