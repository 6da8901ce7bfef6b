//! E[ln beta] for a 50 x 5000 topic matrix (the online-LDA M-step hot path).
//!
//! Run: `CARGO_TARGET_DIR=/work/target-expfam cargo bench -p expfam --bench dirichlet_rows`

use criterion::{Criterion, criterion_group, criterion_main};
use nalgebra::DMatrix;
use std::hint::black_box;

/// A topic matrix like online LDA's after a few iterations: most entries near the prior `eta`,
/// a few words per topic with large counts.
fn topic_matrix(k: usize, v: usize) -> DMatrix<f64> {
    DMatrix::from_fn(k, v, |i, j| {
        let h = (i * 2_654_435_761 + j * 40_503) % 1000;
        if h < 20 {
            1.0 + h as f64 * 50.0
        } else {
            0.01 + h as f64 * 1e-4
        }
    })
}

fn bench(c: &mut Criterion) {
    let lambda = topic_matrix(50, 5000);
    let mut out = DMatrix::zeros(50, 5000);
    let mut g = c.benchmark_group("dirichlet_expectation_50x5000");
    g.bench_function("sequential", |b| {
        b.iter(|| expfam::dirichlet_expectation_rows_into(black_box(&lambda), &mut out).unwrap())
    });
    g.finish();
    let gamma: Vec<f64> = (0..50).map(|i| 0.1 + i as f64).collect();
    c.bench_function("dirichlet_expectation_gamma_d_50", |b| {
        b.iter(|| expfam::dirichlet_expectation(black_box(&gamma)).unwrap())
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
