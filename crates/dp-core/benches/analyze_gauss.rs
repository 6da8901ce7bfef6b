//! Analyze-Gauss cost at the dimensions of the papers' experiments: symmetric noise plus the
//! positive-definite projection (Cholesky test, and the symmetric eigendecomposition when the
//! noised matrix is indefinite), for d in {50, 200, 1000, 4146} (4146: the stroke data, 003
//! Sec. 6.3). The statistic is `0.01 I` and the noise std 1, so the projection always runs.
//!
//! Run: `CARGO_TARGET_DIR=/work/target-core cargo bench -p dp-core --bench analyze_gauss`.
//! `project_only` is the crate's projection (faer from d = 48 on); `project_only_nalgebra` is the
//! previous all-nalgebra implementation, for comparison in the same run.
//! `d = 4146` is opt-in (`DP_CORE_BENCH_LARGE=1`); `examples/analyze_gauss_timing.rs` times it once.
//! `DP_CORE_BENCH_MAX_D=200` stops earlier.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use dp_core::{
    AnalyzeGauss, add_symmetric_noise, project_to_positive_definite,
    project_to_positive_definite_nalgebra,
};
use nalgebra::DMatrix;
use rand::SeedableRng;
use rand::rngs::ChaCha20Rng;

fn max_d() -> usize {
    let large = std::env::var("DP_CORE_BENCH_LARGE").is_ok_and(|v| v == "1");
    std::env::var("DP_CORE_BENCH_MAX_D")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if large { usize::MAX } else { 1000 })
}

fn bench_analyze_gauss(c: &mut Criterion) {
    let mut group = c.benchmark_group("analyze_gauss");
    let ag = AnalyzeGauss::new(1.0, 1e-6).expect("valid parameters");
    for &d in &[50usize, 200, 1000, 4146] {
        if d > max_d() {
            continue;
        }
        match d {
            0..=200 => group
                .sample_size(30)
                .measurement_time(Duration::from_secs(5)),
            201..=1000 => group
                .sample_size(10)
                .measurement_time(Duration::from_secs(20)),
            _ => group
                .sample_size(10)
                .warm_up_time(Duration::from_millis(1))
                .measurement_time(Duration::from_secs(1)),
        };
        let base = DMatrix::<f64>::identity(d, d) * 0.01;
        let mut rng = ChaCha20Rng::seed_from_u64(d as u64);
        group.bench_with_input(BenchmarkId::new("noise+project", d), &d, |b, _| {
            b.iter(|| {
                let mut m = base.clone();
                let report = ag.perturb(&mut m, &mut rng).expect("finite input");
                black_box((m, report))
            })
        });
        if d <= 1000 {
            let mut noised = base.clone();
            add_symmetric_noise(&mut noised, 1.0, &mut rng).expect("finite input");
            group.bench_with_input(BenchmarkId::new("project_only", d), &d, |b, _| {
                b.iter(|| {
                    let mut m = noised.clone();
                    black_box(project_to_positive_definite(&mut m, 1e-6).expect("finite"))
                })
            });
            group.bench_with_input(BenchmarkId::new("project_only_nalgebra", d), &d, |b, _| {
                b.iter(|| {
                    let mut m = noised.clone();
                    black_box(project_to_positive_definite_nalgebra(&mut m, 1e-6).expect("finite"))
                })
            });
            let pd = DMatrix::<f64>::identity(d, d);
            group.bench_with_input(
                BenchmarkId::new("already_pd_cholesky_check", d),
                &d,
                |b, _| {
                    b.iter(|| {
                        let mut m = pd.clone();
                        black_box(project_to_positive_definite(&mut m, 1e-6).expect("finite"))
                    })
                },
            );
        }
    }
    group.finish();
}

criterion_group!(benches, bench_analyze_gauss);
criterion_main!(benches);
