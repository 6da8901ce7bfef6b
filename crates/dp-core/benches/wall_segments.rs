//! One LDA-shaped release written as runs (`ContributionBuffer::segment` through
//! `PrivacyWall::release`) at 1 and 2 rayon threads:
//! a `K x V = 50 x 10000` block (500,000 entries), 256 records per release (Poisson rate 1 over
//! 256 records), each writing 150 runs of 50 entries (one run of `K` topic weights per distinct
//! word, 7,500 entries per record); clip (Frobenius), sum, 500,000 Gaussian draws, normalise,
//! ledger entry. The per-record statistic is deliberately cheap (a few flops per entry), so the
//! bench measures the wall's own work: what the E-step of issue #6 pays on top of its own.
//!
//! Run: `CARGO_TARGET_DIR=/work/target-wall cargo bench -p dp-core --bench wall_segments`.
//!
//! For instruction counts, `WALL_SEGMENTS_ONESHOT=<releases>` makes the binary run that many
//! releases on a 1-thread pool and exit (no criterion), e.g.
//! `WALL_SEGMENTS_ONESHOT=10 valgrind --tool=callgrind <bench binary> --bench`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group};
use dp_core::{ContributionBuffer, MatrixBlock, PrivacyWall, ReleaseSpec, SamplingScheme};

const K: usize = 50;
const V: usize = 10_000;
const RECORDS: usize = 256;
const WORDS_PER_RECORD: usize = 150;

/// A record: its distinct word ids, increasing, with a count each.
type Doc = Vec<(usize, f64)>;

fn corpus() -> Vec<Doc> {
    (0..RECORDS)
        .map(|d| {
            let mut words: Vec<usize> = (0..WORDS_PER_RECORD)
                .map(|w| (d * 7919 + w * 104_729 + w * w * 31) % V)
                .collect();
            words.sort_unstable();
            words.dedup();
            words
                .into_iter()
                .enumerate()
                .map(|(i, w)| (w, 1.0 + (i % 3) as f64))
                .collect()
        })
        .collect()
}

/// Stand-in for the E-step's output: one run of `K` responsibilities times the count per word.
fn statistic(topic_word: MatrixBlock) -> impl Fn(&Doc, &mut ContributionBuffer) + Sync {
    move |doc, buf| statistic_into(topic_word, doc, buf)
}

fn statistic_into(topic_word: MatrixBlock, doc: &Doc, buf: &mut ContributionBuffer) {
    for &(w, count) in doc {
        let run = buf.segment(topic_word, topic_word.stored_index(0, w), K);
        for (k, r) in run.iter_mut().enumerate() {
            *r = count * (1.0 + (k % 7) as f64) / (4.0 * K as f64);
        }
    }
}

fn wall() -> PrivacyWall<Doc> {
    PrivacyWall::builder(corpus())
        .sampling(SamplingScheme::poisson(1.0).expect("valid"))
        .epsilon_delta(1e9, 1e-5)
        .noise_multiplier(1.0)
        .seed(1) // seeded on purpose: a benchmark
        .build()
        .expect("valid wall")
}

fn spec() -> (ReleaseSpec, MatrixBlock) {
    let mut b = ReleaseSpec::builder("lda e-step");
    let topic_word = b.matrix("topic_word", K, V, 1.0).expect("valid");
    (b.build().expect("valid"), topic_word)
}

fn bench_segments(c: &mut Criterion) {
    let (spec, h) = spec();
    let mut group = c.benchmark_group("wall_segments_lda_50x10000_256_records");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(8));
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("thread pool");
        let mut w = wall();
        group.bench_function(format!("threads_{threads}"), |b| {
            b.iter(|| pool.install(|| black_box(w.release(&spec, statistic(h)).expect("release"))))
        });
    }
    group.finish();
}

fn oneshot(releases: usize) {
    let (spec, h) = spec();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("thread pool");
    let mut w = wall();
    pool.install(|| {
        for _ in 0..releases {
            black_box(w.release(&spec, statistic(h)).expect("release"));
        }
    });
}

criterion_group!(benches, bench_segments);

fn main() {
    if let Some(n) = std::env::var("WALL_SEGMENTS_ONESHOT")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        oneshot(n);
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
