//! Natural <-> moment conversion of a 1000-dimensional Gaussian (Cholesky-based).
//!
//! Run: `CARGO_TARGET_DIR=/work/target-expfam cargo bench -p expfam --bench gaussian_conversion`

use criterion::{Criterion, criterion_group, criterion_main};
use expfam::{ExponentialFamily, MvGaussian};
use nalgebra::{DMatrix, DVector};
use std::hint::black_box;
use std::time::Duration;

fn bench(c: &mut Criterion) {
    let d = 1000;
    let mean = DVector::from_fn(d, |i, _| (i as f64 * 0.37).sin());
    // AR(1)-style covariance: well conditioned, dense.
    let cov = DMatrix::from_fn(d, d, |i, j| 0.6f64.powi((i as i32 - j as i32).abs()));
    let moment = MvGaussian::new(mean, cov).unwrap();
    let natural = moment.natural();
    let mut g = c.benchmark_group("gaussian_1000");
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    g.bench_function("natural_to_moment", |b| {
        b.iter(|| MvGaussian::from_natural(black_box(&natural)).unwrap())
    });
    g.bench_function("moment_to_natural", |b| {
        b.iter(|| {
            MvGaussian::new(
                black_box(moment.mean().clone()),
                black_box(moment.cov().clone()),
            )
            .unwrap()
            .natural()
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
