//! Criterion benchmark of one private LDA release read from a record store on disk against the
//! same release over the same documents held in memory (issue 21, "corpora larger than
//! memory").
//!
//! A synthetic corpus (20,000 documents, V = 10,000, K = 50, 200 tokens, resampled to 200)
//! is written to a store in the system's temporary directory; each iteration is one release
//! of the wall (Poisson sampling, expected batch 2,000, the model's E-step), from the store
//! (read, decode and resample the sampled documents, then the same E-step and release) and
//! from memory (documents prepared once, before timing). The store is in the page cache after
//! the first iterations: this measures the reading and per-record preparation cost, not the
//! disk. The figures with the 10-million-document store are in docs/benchmarks.md.
//!
//! ```text
//! cargo bench -p vips-models --bench lda_store
//! ```

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use dp_core::{ContributionBuffer, PrivacyWall, SamplingScheme};
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;
use vips_models::engine::VipsModel;
use vips_models::lda::corpus::{Document, ResamplingKey, SyntheticConfig};
use vips_models::lda::{Lda, LdaConfig, Topics};
use vips_models::store::{RecordStore, write_synthetic};

const DOCS: usize = 20_000;
const VOCAB: usize = 10_000;
const TOPICS: usize = 50;
const LENGTH: usize = 200;
const BATCH: f64 = 2_000.0;

fn bench(c: &mut Criterion) {
    let cfg = SyntheticConfig::builder()
        .num_docs(DOCS)
        .vocab_size(VOCAB)
        .num_topics(TOPICS)
        .doc_length(LENGTH)
        .build()
        .expect("valid config");
    let dir = std::env::temp_dir().join(format!("lda-store-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temporary directory");
    let path = dir.join("bench.store");
    write_synthetic(&path, &cfg).expect("store written");
    let lda = Lda::new(
        LdaConfig::builder(TOPICS, VOCAB)
            .doc_length(Some(LENGTH))
            .build()
            .expect("valid config"),
    );
    let key = ResamplingKey::public_seed(1);
    let corpus = cfg.generate().expect("valid config").corpus;
    let prepared = lda.prepare(&corpus, &key).expect("prepared");
    drop(corpus);
    let topics = Topics::random_init(TOPICS, VOCAB, 0.1, &mut ChaCha8Rng::seed_from_u64(2));
    let natural = lda.expected_natural(&topics).expect("natural parameters");
    let (spec, blocks) = lda.release_spec().expect("spec");
    let statistic = |doc: &Document, buf: &mut ContributionBuffer| {
        let mut scratch = lda.new_scratch();
        if lda
            .record_statistic(&blocks, &natural, doc, &mut scratch, buf)
            .is_err()
        {
            buf.reject_record("rejected");
        }
    };
    let scheme = SamplingScheme::poisson(BATCH / DOCS as f64).expect("rate");
    let mut memory = PrivacyWall::builder(prepared)
        .sampling(scheme)
        .public_population_size(DOCS)
        .epsilon_delta(1e9, 1e-5)
        .noise_multiplier(1.0)
        .seed(3)
        .build()
        .expect("wall");
    let source = lda
        .store_source(RecordStore::open(&path).expect("store"), key)
        .expect("source");
    let mut stored = PrivacyWall::from_source(source)
        .sampling(scheme)
        .public_population_size(DOCS)
        .epsilon_delta(1e9, 1e-5)
        .noise_multiplier(1.0)
        .seed(3)
        .build()
        .expect("wall");
    let mut group = c.benchmark_group("lda_release_2000_docs_V10000_K50");
    group.sample_size(10);
    group.bench_function("in_memory", |b| {
        b.iter(|| black_box(memory.release(&spec, statistic).expect("release")))
    });
    group.bench_function("from_store", |b| {
        b.iter(|| black_box(stored.release(&spec, statistic).expect("release")))
    });
    group.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, bench);
criterion_main!(benches);
