//! E[ln theta_d] for one document's 50-topic Dirichlet (LDA's per-document loop).
//!
//! The 50 x 5000 topic-matrix benchmark of `dirichlet_expectation_rows_into` was removed with that
//! function (issue 18: no model used it; LDA's E-step computes its topic rows in f32 SIMD).
//!
//! Run: `CARGO_TARGET_DIR=/work/target-expfam cargo bench -p expfam --bench dirichlet_rows`

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;

fn bench(c: &mut Criterion) {
    let gamma: Vec<f64> = (0..50).map(|i| 0.1 + i as f64).collect();
    let mut out = vec![0.0; 50];
    c.bench_function("dirichlet_expectation_gamma_d_50", |b| {
        b.iter(|| expfam::dirichlet_expectation_into(black_box(&gamma), &mut out).unwrap())
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
