//! One private release of an LDA-shaped statistic through the privacy wall: a `K x V = 50 x 5000`
//! block (250,000 entries) where each document touches `K x (its distinct words)` entries, written
//! sparsely into the reusable contribution buffer, clipped per document in Frobenius norm, summed
//! in parallel, noised (250,000 Gaussian draws) and normalised. Compared with the same statistic
//! written densely (the whole 250,000-entry block per document) to show what sparsity buys.
//!
//! Run: `CARGO_TARGET_DIR=/work/target-core cargo bench -p dp-core --bench wall_release`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use dp_core::{ContributionBuffer, MatrixBlock, PrivacyWall, ReleaseSpec, SamplingScheme};

const K: usize = 50;
const V: usize = 5000;

/// A document: its distinct word ids with counts.
type Doc = Vec<(usize, f64)>;

fn corpus(docs: usize, distinct: usize) -> Vec<Doc> {
    (0..docs)
        .map(|d| {
            (0..distinct)
                .map(|w| ((d * 7919 + w * 104_729) % V, 1.0 + (w % 3) as f64))
                .collect()
        })
        .collect()
}

/// Stand-in for the E-step: topic responsibilities `phi_k = 1/K` times the word count.
fn sparse_statistic(h: MatrixBlock, doc: &Doc, buf: &mut ContributionBuffer) {
    for &(w, count) in doc {
        for k in 0..K {
            buf.push_matrix(h, k, w, count / K as f64);
        }
    }
}

fn dense_statistic(h: MatrixBlock, doc: &Doc, buf: &mut ContributionBuffer) {
    let block = buf.dense(h);
    for &(w, count) in doc {
        for k in 0..K {
            block[w * K + k] += count / K as f64;
        }
    }
}

fn bench_release(c: &mut Criterion) {
    let mut group = c.benchmark_group("wall_release_lda_50x5000");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(10));
    let mut b = ReleaseSpec::builder("lda e-step");
    let h = b.matrix("topic_word", K, V, 1.0).expect("valid");
    let spec = b.build().expect("valid");
    let wall = || {
        PrivacyWall::builder(corpus(20_000, 100))
            .sampling(SamplingScheme::poisson(0.025).expect("valid")) // ~500 documents
            .epsilon_delta(1e6, 1e-5)
            .noise_multiplier(1.0)
            .seed(1) // seeded on purpose: a benchmark
            .build()
            .expect("valid wall")
    };
    let mut sparse_wall = wall();
    group.bench_function("sparse_writes_500_docs", |b| {
        b.iter(|| {
            black_box(
                sparse_wall
                    .release(&spec, |d: &Doc, buf: &mut ContributionBuffer| {
                        sparse_statistic(h, d, buf)
                    })
                    .expect("release"),
            )
        })
    });
    let mut dense_wall = wall();
    group.bench_function("dense_writes_500_docs", |b| {
        b.iter(|| {
            black_box(
                dense_wall
                    .release(&spec, |d: &Doc, buf: &mut ContributionBuffer| {
                        dense_statistic(h, d, buf)
                    })
                    .expect("release"),
            )
        })
    });
    group.finish();
}

criterion_group!(benches, bench_release);
criterion_main!(benches);
