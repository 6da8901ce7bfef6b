//! Criterion benchmarks of the LDA E-step and M-step expectations.
//!
//! Uses the news corpus under the data directory when present (K = 50, 256 training documents),
//! otherwise a synthetic corpus of the same shape (V = 5000, ~236 tokens per document). The data
//! directory is `$DP_BAYES_DATA_DIR` when set (set but empty means embedded data only, which is how
//! `cargo xtask bench --quick` runs it), otherwise `../shared/data` next to the workspace.
//!
//! ```text
//! cargo bench -p vips-models --bench lda_estep
//! ```

use std::hint::black_box;
use std::path::{Path, PathBuf};

use criterion::{Criterion, criterion_group, criterion_main};
use dp_core::{ContributionBuffer, PrivacyWall, SamplingScheme};
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;
use vips_models::engine::VipsModel;
use vips_models::lda::corpus::{Document, SyntheticConfig, load_uci_bow};
use vips_models::lda::{DocScratch, Lda, LdaConfig, Topics, infer_document};

/// The news corpus's training file, or `None` when the caller asked for embedded data only.
fn news_path() -> Option<PathBuf> {
    let data = match std::env::var_os("DP_BAYES_DATA_DIR") {
        Some(dir) if dir.is_empty() => return None,
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data"),
    };
    Some(data.join("news/docword.train.txt.gz"))
}

fn documents() -> (Vec<Document>, usize) {
    let loaded = match news_path() {
        None => Err("DP_BAYES_DATA_DIR is empty (embedded data only)".to_string()),
        Some(path) => load_uci_bow(&path).map_err(|e| format!("{}: {e}", path.display())),
    };
    match loaded {
        Ok(c) => {
            let v = c.vocab_size();
            (c.into_docs().into_iter().take(256).collect(), v)
        }
        Err(why) => {
            eprintln!("news corpus not used ({why}); using a synthetic corpus");
            let s = SyntheticConfig::builder()
                .num_docs(256)
                .vocab_size(5000)
                .num_topics(50)
                .doc_length(236)
                .build()
                .expect("valid config")
                .generate()
                .expect("valid config");
            (s.corpus.into_docs(), 5000)
        }
    }
}

fn bench(c: &mut Criterion) {
    let (docs, v) = documents();
    let k = 50;
    let cfg = LdaConfig::builder(k, v).build().expect("valid");
    let topics = Topics::random_init(k, v, 0.1, &mut ChaCha8Rng::seed_from_u64(0));
    let expected = topics.expected();
    let mut scratch = DocScratch::new(k);
    c.bench_function("lda_estep_256_docs_k50", |b| {
        b.iter(|| {
            let mut iters = 0;
            for d in &docs {
                iters += infer_document(&expected, &cfg, d, &mut scratch);
            }
            black_box(iters)
        })
    });
    c.bench_function("lda_expected_k50_v5000", |b| {
        b.iter(|| black_box(topics.expected()))
    });
    // The same 256 documents through dp-core's privacy wall (non-private mode, Poisson rate 1):
    // E-step + contribution (one run of K values per word) + per-record clipping + sum, i.e.
    // one engine iteration's release without the M-step.
    let model = Lda::new(cfg.clone());
    let (spec, blocks) = model.release_spec().expect("valid spec");
    let mut wall = PrivacyWall::builder(docs.clone())
        .sampling(SamplingScheme::poisson(1.0).expect("valid rate"))
        .non_private()
        .seed(0)
        .build()
        .expect("valid wall");
    c.bench_function("lda_wall_segments_256_docs_k50", |b| {
        b.iter(|| {
            let r = wall
                .release(&spec, |d: &Document, buf: &mut ContributionBuffer| {
                    let mut s = DocScratch::new(k);
                    if let Err(e) = model.record_statistic(&blocks, &expected, d, &mut s, buf) {
                        buf.reject_record(e.reason());
                    }
                })
                .expect("release");
            black_box(r.clipped_records())
        })
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = bench
}
criterion_main!(benches);
