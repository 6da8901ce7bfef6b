//! Criterion benchmarks of the Pólya-Gamma sampler, matching the workloads timed for
//! polyagamma 2.0.2 by `benches/compare_polyagamma.py` (which runs this file too).
//!
//! `cargo bench -p polya-gamma --bench sampler`

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use polya_gamma::{PolyaGamma, PolyaGammaShape};
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};

/// Draws per benchmark iteration.
const BATCH: usize = 10_000;

fn pg1_fixed_z(c: &mut Criterion) {
    let mut g = c.benchmark_group("pg1");
    g.throughput(Throughput::Elements(BATCH as u64));
    for &z in &[0.0, 0.5, 1.0, 2.0, 5.0, 10.0, 50.0] {
        let pg = PolyaGamma::new(1.0, z).unwrap();
        let mut rng = SmallRng::seed_from_u64(1);
        let mut out = vec![0.0; BATCH];
        g.bench_with_input(BenchmarkId::from_parameter(z), &z, |bench, _| {
            bench.iter(|| {
                pg.fill(&mut rng, &mut out);
                black_box(&out);
            })
        });
    }
    g.finish();
}

fn gibbs_per_draw_z(c: &mut Criterion) {
    let mut g = c.benchmark_group("gibbs_b1_per_draw_z");
    g.throughput(Throughput::Elements(BATCH as u64));
    // z_i uniform on [-10, 10], the spread of linear predictors in a logistic Gibbs sweep.
    let mut zr = SmallRng::seed_from_u64(7);
    let z: Vec<f64> = (0..BATCH)
        .map(|_| 20.0 * zr.random::<f64>() - 10.0)
        .collect();
    let shape = PolyaGammaShape::new(1.0).unwrap();
    let mut rng = SmallRng::seed_from_u64(2);
    let mut out = vec![0.0; BATCH];
    g.bench_function("uniform_z_-10_10", |bench| {
        bench.iter(|| {
            shape.fill_for_tilts(&mut rng, &z, &mut out).unwrap();
            black_box(&out);
        })
    });
    g.finish();
}

fn general_b(c: &mut Criterion) {
    let mut g = c.benchmark_group("pg_b");
    g.throughput(Throughput::Elements(BATCH as u64));
    for &b in &[0.5, 2.5, 10.0, 100.0] {
        for &z in &[0.0, 2.0] {
            let pg = PolyaGamma::new(b, z).unwrap();
            let mut rng = SmallRng::seed_from_u64(3);
            let mut out = vec![0.0; BATCH];
            g.bench_with_input(BenchmarkId::new(format!("b{b}"), z), &z, |bench, _| {
                bench.iter(|| {
                    pg.fill(&mut rng, &mut out);
                    black_box(&out);
                })
            });
        }
    }
    g.finish();
}

criterion_group!(benches, pg1_fixed_z, gibbs_per_draw_z, general_b);
criterion_main!(benches);
