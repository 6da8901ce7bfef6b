//! BLR at the stroke data's scale: one batch VIPS iteration at `d = 4,146` with 10,000 sparse
//! binary rows (a synthetic stand-in), and the Analyze-Gauss PSD projection alone.
//!
//! `cargo bench -p vips-models --bench blr` runs criterion at `d` in {256, 512}; with
//! `BLR_BENCH_FULL=1` it instead times one run of each at `d = 4,146` (a sample takes 6-30 s on
//! two shared cores; criterion's minimum of 10 samples each would take several minutes) and
//! prints the peak resident memory. `benches/eigh_numpy.py` times numpy's `eigh` at the same `d`
//! for comparison with the projection; `examples/blr.rs --synthetic-stroke FILE` writes the same
//! rows as a LIBSVM file (figures in `docs/benchmarks.md`).

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group};
use dp_core::project_to_positive_definite;
use nalgebra::DMatrix;
use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};
use rand_distr::StandardNormal;
use vips_models::blr::{self, Blr, BlrConfig, BlrRecord, Features};
use vips_models::engine::Privacy;

/// Sparse binary rows with `k` active features among `d`, divided by a public radius
/// `sqrt(k_max)` (rows with more active features are clipped), labels from a sparse true weight.
fn synthetic(n: usize, d: usize, k: usize, seed: u64) -> Vec<BlrRecord> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let w: Vec<f64> = (0..d)
        .map(|j| {
            if j % 50 == 0 {
                rng.sample::<f64, _>(StandardNormal) * 3.0
            } else {
                0.0
            }
        })
        .collect();
    let radius = ((2 * k) as f64).sqrt();
    (0..n)
        .map(|_| {
            let active = k / 2 + rng.random_range(0..k);
            let mut idx: Vec<u32> = (0..active).map(|_| rng.random_range(0..d as u32)).collect();
            idx.sort_unstable();
            idx.dedup();
            let score: f64 = idx.iter().map(|&i| w[i as usize]).sum::<f64>() / radius;
            let y = rng.random::<f64>() < blr::sigmoid(4.0 * score);
            let values = vec![1.0 / radius; idx.len()];
            BlrRecord::new(
                Features::Sparse {
                    indices: idx,
                    values,
                },
                y,
            )
            .unwrap()
            .0
        })
        .collect()
}

fn run_iteration(records: Vec<BlrRecord>, d: usize) -> f64 {
    let n = records.len();
    let model = Blr::new(BlrConfig::builder(d).build().unwrap());
    let svi = blr::batch_config(
        n,
        1,
        Privacy::Target {
            epsilon: 1.0,
            delta: 1e-5,
        },
        Some(1),
    )
    .unwrap();
    let fit = blr::fit(&model, records, &svi).unwrap().result;
    fit.global.posterior().mean()[0]
}

fn noisy_symmetric(d: usize, seed: u64) -> DMatrix<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut m = DMatrix::zeros(d, d);
    for j in 0..d {
        for i in 0..=j {
            let v: f64 = rng.sample(StandardNormal);
            m[(i, j)] = v;
            m[(j, i)] = v;
        }
    }
    m
}

fn peak_rss_mib() -> Option<f64> {
    vips_models::engine::process_peak_rss_kib().map(|kib| kib as f64 / 1024.0)
}

/// One timed run of each at the stroke scale (criterion's sample minimum would take an hour).
fn full_scale() {
    let d = 4146;
    let records = synthetic(10_000, d, 40, 1);
    let nnz: usize = records.iter().map(|r| r.features().values().len()).sum();
    let t = Instant::now();
    black_box(run_iteration(records, d));
    let iteration = t.elapsed().as_secs_f64();
    let mut m = noisy_symmetric(d, 2);
    let t = Instant::now();
    let p = project_to_positive_definite(&mut m, 1e-9).unwrap();
    let projection = t.elapsed().as_secs_f64();
    println!(
        "blr full scale: d {d}, n 10000, mean nnz/row {:.1}: one private batch iteration {iteration:.1} s; \
         Analyze-Gauss PSD projection alone {projection:.1} s ({} eigenvalues raised); peak RSS {:.0} MiB; {} threads",
        nnz as f64 / 10_000.0,
        p.eigenvalues_raised,
        peak_rss_mib().unwrap_or(f64::NAN),
        rayon::current_num_threads()
    );
}

fn bench(c: &mut Criterion) {
    let dims = [256usize, 512];
    let mut g = c.benchmark_group("blr_batch_iteration");
    g.sample_size(10);
    for &d in &dims {
        g.bench_function(format!("n10000_d{d}_sparse"), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for i in 0..iters {
                    let records = synthetic(10_000, d, 40, i);
                    let t = Instant::now();
                    black_box(run_iteration(records, d));
                    total += t.elapsed();
                }
                total
            })
        });
    }
    g.finish();
    let mut g = c.benchmark_group("blr_psd_projection");
    g.sample_size(10);
    for &d in &dims {
        g.bench_function(format!("d{d}"), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for i in 0..iters {
                    let mut m = noisy_symmetric(d, i);
                    let t = Instant::now();
                    black_box(project_to_positive_definite(&mut m, 1e-9).unwrap());
                    total += t.elapsed();
                }
                total
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);

fn main() {
    if std::env::var("BLR_BENCH_FULL").is_ok() {
        full_scale();
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
