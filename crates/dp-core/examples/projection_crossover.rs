//! Where faer's blocked eigensolver starts to beat nalgebra's unblocked one for the
//! positive-definite projection: times both on the same indefinite matrices (statistic `0.01 I`
//! plus symmetric noise of std 1, so about half the eigenvalues are raised) at a range of `d`,
//! interleaved, median of several runs each; and the same for a matrix already above the floor
//! (`d I` plus the noise), where only the Cholesky test runs. Used to choose `FAER_MIN_DIMENSION`.
//!
//! `cargo run -p dp-core --release --example projection_crossover -- 32 48 64 96 128 160 200`

use std::time::Instant;

use dp_core::{
    add_symmetric_noise, project_to_positive_definite_faer, project_to_positive_definite_nalgebra,
};
use nalgebra::DMatrix;
use rand::SeedableRng;
use rand::rngs::ChaCha20Rng;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

mod common;
use common::{ExampleError, arg};

fn main() -> Result<(), ExampleError> {
    let dims: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| arg(Some(a), "D", "whole number", 0))
        .collect::<Result<_, _>>()?;
    let dims = if dims.is_empty() {
        vec![32, 48, 64, 96, 128, 160, 200]
    } else {
        dims
    };
    println!(
        "d\tfaer_ms\tnalgebra_ms\tnalgebra/faer\tpd_faer_ms\tpd_nalgebra_ms\tpd_nalgebra/faer"
    );
    for d in dims {
        let mut rng = ChaCha20Rng::seed_from_u64(d as u64); // seeded on purpose: a benchmark
        let reps = (4_000_000 / (d * d * d)).clamp(5, 201);
        let (mut faer, mut nalgebra) = (Vec::new(), Vec::new());
        let (mut pd_faer, mut pd_nalgebra) = (Vec::new(), Vec::new());
        for _ in 0..reps {
            let mut m = DMatrix::<f64>::identity(d, d) * 0.01;
            add_symmetric_noise(&mut m, 1.0, &mut rng)?;
            let mut a = m.clone();
            let start = Instant::now();
            project_to_positive_definite_faer(&mut a, 1e-6)?;
            faer.push(start.elapsed().as_secs_f64() * 1e3);
            let start = Instant::now();
            project_to_positive_definite_nalgebra(&mut m, 1e-6)?;
            nalgebra.push(start.elapsed().as_secs_f64() * 1e3);
            // Above the floor: `d I + noise` has eigenvalues in about `d +- 2 sqrt(d)`.
            let mut m = DMatrix::<f64>::identity(d, d) * d as f64;
            add_symmetric_noise(&mut m, 1.0, &mut rng)?;
            let mut a = m.clone();
            let start = Instant::now();
            project_to_positive_definite_faer(&mut a, 1e-6)?;
            pd_faer.push(start.elapsed().as_secs_f64() * 1e3);
            let start = Instant::now();
            project_to_positive_definite_nalgebra(&mut m, 1e-6)?;
            pd_nalgebra.push(start.elapsed().as_secs_f64() * 1e3);
        }
        let (f, n) = (median(faer), median(nalgebra));
        let (pf, pn) = (median(pd_faer), median(pd_nalgebra));
        println!(
            "{d}\t{f:.3}\t{n:.3}\t{:.2}\t{pf:.4}\t{pn:.4}\t{:.2}",
            n / f,
            pn / pf
        );
    }
    Ok(())
}
