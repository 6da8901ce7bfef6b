//! The released LDA statistic moves by at most its declared sensitivity `a N / S` when one
//! document is added or removed (add/remove-one neighbours), including adversarial documents whose
//! tokens are all the same word (003 Eq. 23: the worst case before clipping).
//!
//! Both datasets go through dp-core's privacy wall in non-private mode (so the difference is the
//! clipped sums' difference, not noise) with Poisson rate 1 (every record sampled) and the same
//! public population size, i.e. the same normaliser `S`. Both ways of writing the statistic are
//! checked: the model's own (`record_statistic`, one run of `K` values per distinct word) and a
//! reference written entry by entry (`push_matrix`) from `lda::document_statistic`.

mod common;

use dp_core::{ContributionBuffer, PrivacyWall, SamplingScheme};
use proptest::prelude::*;
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;
use vips_models::engine::VipsModel;
use vips_models::lda::corpus::{Document, SyntheticConfig};
use vips_models::lda::{Lda, LdaConfig, Topics, document_statistic, infer_document};

fn release(
    model: &Lda,
    topics: &Topics,
    docs: Vec<Document>,
    public_n: usize,
    segments: bool,
) -> (Vec<f64>, f64) {
    let (spec, blocks) = model.release_spec().unwrap();
    let natural = model.expected_natural(topics).unwrap();
    let mut wall = PrivacyWall::builder(docs)
        .sampling(SamplingScheme::poisson(1.0).unwrap())
        .non_private()
        .public_population_size(public_n)
        .seed(1)
        .build()
        .unwrap();
    let r = if segments {
        wall.release(&spec, common::lda_statistic(model, &blocks, &natural))
            .unwrap()
    } else {
        wall.release(&spec, |doc: &Document, buf: &mut ContributionBuffer| {
            let mut scratch = model.new_scratch();
            infer_document(&natural, model.config(), doc, &mut scratch);
            let k = natural.num_topics();
            let mut rows = vec![0.0; doc.words().len() * k];
            document_statistic(&natural, doc, &scratch, &mut rows);
            for (row, &w) in rows.chunks(k).zip(doc.words()) {
                for (topic, &x) in row.iter().enumerate() {
                    buf.push_matrix(blocks.topics, topic, w as usize, x);
                }
            }
        })
        .unwrap()
    };
    let block = r.released(blocks.topics).unwrap();
    (block.value.as_slice().to_vec(), block.sensitivity)
}

fn l2_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).powi(2))
        .sum::<f64>()
        .sqrt()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn adding_or_removing_one_document_moves_the_release_by_at_most_a_n_over_s(
        num_docs in 1usize..12,
        k in 2usize..6,
        n in 5usize..80,
        a in 0.05f64..1.0,
        word in 0u32..30,
        seed in 0u64..1000,
        remove_existing in any::<bool>(),
    ) {
        let v = 30;
        let data = SyntheticConfig::builder().num_docs(num_docs).vocab_size(v).num_topics(k).doc_length(n).alpha(0.2).eta(0.1).seed(seed).build().unwrap().generate().unwrap();
        let cfg = LdaConfig::builder(k, v).doc_length(Some(n)).clip_scale(a).build().unwrap();
        let model = Lda::new(cfg);
        let topics = Topics::random_init(k, v, 0.1, &mut ChaCha8Rng::seed_from_u64(seed));
        let base = data.corpus.into_docs();
        // The extra document: adversarial (all N tokens one word) or, for removal, a real one.
        let extra = if remove_existing {
            base[0].clone()
        } else {
            Document::new(vec![(word, n as u32)]).unwrap()
        };
        let mut neighbour = base.clone();
        neighbour.push(extra);
        let public_n = 100;
        let declared = a * n as f64 / public_n as f64; // a N / S with S = q N_public, q = 1
        for segments in [false, true] {
            let (r0, sens) = release(&model, &topics, base.clone(), public_n, segments);
            let (r1, _) = release(&model, &topics, neighbour.clone(), public_n, segments);
            prop_assert!((sens - declared).abs() <= 1e-12 * declared);
            let moved = l2_diff(&r0, &r1);
            prop_assert!(
                moved <= declared * (1.0 + 1e-9),
                "segments {segments}: moved {moved} > declared {declared}"
            );
        }
    }
}

#[test]
fn an_adversarial_document_is_clipped_to_exactly_the_bound() {
    // K = 2 topics: an all-one-word document of N tokens has Frobenius norm >= N / sqrt(2) > a N.
    let (k, v, n, a) = (2, 10, 50, 0.1);
    let cfg = LdaConfig::builder(k, v)
        .doc_length(Some(n))
        .clip_scale(a)
        .build()
        .unwrap();
    let model = Lda::new(cfg);
    let topics = Topics::random_init(k, v, 0.1, &mut ChaCha8Rng::seed_from_u64(3));
    let adversarial = Document::new(vec![(4, n as u32)]).unwrap();
    for segments in [false, true] {
        let (r, _) = release(&model, &topics, vec![adversarial.clone()], 10, segments);
        let norm = r.iter().map(|x| x * x).sum::<f64>().sqrt();
        let bound = a * n as f64 / 10.0;
        assert!((norm - bound).abs() < 1e-9 * bound, "{norm} vs {bound}");
        // Only the adversarial word's row is non-zero.
        assert!(r.iter().enumerate().all(|(i, &x)| i / k == 4 || x == 0.0));
    }
}

#[test]
fn the_run_writes_equal_the_entry_writes() {
    // 300 documents: several chunks of 64 and waves of workers, clipped and unclipped ones.
    let (k, v, n) = (7, 60, 40);
    let data = SyntheticConfig::builder()
        .num_docs(300)
        .vocab_size(v)
        .num_topics(k)
        .doc_length(n)
        .alpha(0.1)
        .eta(0.05)
        .seed(11)
        .build()
        .unwrap()
        .generate()
        .unwrap();
    let cfg = LdaConfig::builder(k, v)
        .doc_length(Some(n))
        .clip_scale(0.3)
        .build()
        .unwrap();
    let model = Lda::new(cfg);
    let topics = Topics::random_init(k, v, 0.1, &mut ChaCha8Rng::seed_from_u64(5));
    let docs = data.corpus.into_docs();
    let (general, _) = release(&model, &topics, docs.clone(), 300, false);
    let (segments, _) = release(&model, &topics, docs, 300, true);
    let scale = general.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    assert!(scale > 0.0);
    let diff = l2_diff(&general, &segments);
    assert!(
        diff <= 1e-12 * scale * (general.len() as f64).sqrt(),
        "diff {diff}"
    );
}
