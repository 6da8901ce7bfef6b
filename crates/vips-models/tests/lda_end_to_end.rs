//! End-to-end add/remove-one neighbouring test for LDA, from the public entry points a user calls:
//! a [`Corpus`] -> [`Lda::prepare`] (fixed-length resampling) -> the privacy wall's release of the
//! `K x V` statistic, with the noise switched off (non-private mode, Poisson rate 1 so the batch is
//! every record, the same public population size and the same seeds for both datasets).
//!
//! The released statistic must move by no more than the declared per-record bound `a N / S` when
//! one document is removed, whichever document it is (the first one, so that any state shared
//! across documents in corpus order would shift every later document's resampling) and whatever
//! it looks like (an adversarial document: very long, every word of the vocabulary). The test
//! also goes through [`fit`]: one iteration of batch VB (`rho = 1`) with a declared public
//! population gives `lambda - eta = N_public s~`, i.e. exactly the released sum.

mod common;

use dp_core::{PrivacyWall, SamplingScheme};
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;
use vips_models::engine::{Privacy, StepSize, Stop, SviConfig, VipsModel, fit};
use vips_models::lda::corpus::{Corpus, Document, ResamplingKey, SyntheticConfig};
use vips_models::lda::{Lda, LdaConfig, Topics};

const V: usize = 40;
const K: usize = 4;
const N: usize = 30;
const A: f64 = 0.5;
const PUBLIC_N: usize = 1000;

fn model() -> Lda {
    Lda::new(
        LdaConfig::builder(K, V)
            .doc_length(Some(N))
            .clip_scale(A)
            .build()
            .unwrap(),
    )
}

fn corpus(num_docs: usize, seed: u64) -> Corpus {
    SyntheticConfig::builder()
        .num_docs(num_docs)
        .vocab_size(V)
        .num_topics(K)
        .doc_length(60)
        .alpha(0.2)
        .eta(0.1)
        .seed(seed)
        .build()
        .unwrap()
        .generate()
        .unwrap()
        .corpus
}

/// Long, every word of the vocabulary with its own count.
fn adversarial() -> Document {
    Document::new((0..V as u32).map(|w| (w, 50 + 7 * w)).collect()).unwrap()
}

/// The public entry point: prepare (resample) the corpus with the same key, then one
/// noise-free release of the statistic through the wall, written as the engine writes it (one run
/// per word) at the fixed initial topics.
fn released(model: &Lda, corpus: &Corpus, topics: &Topics) -> Vec<f64> {
    let key = ResamplingKey::public_seed(42);
    let docs = model.prepare(corpus, &key).unwrap();
    let (spec, blocks) = model.release_spec().unwrap();
    let natural = model.expected_natural(topics).unwrap();
    let mut wall = PrivacyWall::builder(docs)
        .sampling(SamplingScheme::poisson(1.0).unwrap())
        .non_private()
        .public_population_size(PUBLIC_N)
        .seed(1)
        .build()
        .unwrap();
    let r = wall
        .release(&spec, common::lda_statistic(model, &blocks, &natural))
        .unwrap();
    r.matrix(blocks.topics).unwrap().as_slice().to_vec()
}

fn l2_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).powi(2))
        .sum::<f64>()
        .sqrt()
}

fn without(corpus: &Corpus, index: usize) -> Corpus {
    let mut docs = corpus.docs().to_vec();
    docs.remove(index);
    Corpus::new(docs, V).unwrap()
}

fn with_first(corpus: &Corpus, doc: Document) -> Corpus {
    let mut docs = vec![doc];
    docs.extend_from_slice(corpus.docs());
    Corpus::new(docs, V).unwrap()
}

/// The declared sensitivity of the normalised release: `a N / S` with `S = q N_public`, `q = 1`.
fn declared() -> f64 {
    A * N as f64 / PUBLIC_N as f64
}

#[test]
fn removing_the_first_document_moves_the_release_by_at_most_a_n_over_s() {
    let m = model();
    let topics = Topics::random_init(K, V, 0.1, &mut ChaCha8Rng::seed_from_u64(3));
    let d = corpus(150, 5);
    let r0 = released(&m, &d, &topics);
    for index in [0, 1, 75, 149] {
        let r1 = released(&m, &without(&d, index), &topics);
        let moved = l2_diff(&r0, &r1);
        assert!(
            moved <= declared() * (1.0 + 1e-9),
            "removing document {index}: moved {moved} > declared {} ({:.2}x)",
            declared(),
            moved / declared()
        );
    }
}

#[test]
fn an_adversarial_first_document_moves_the_release_by_at_most_a_n_over_s() {
    let m = model();
    let topics = Topics::random_init(K, V, 0.1, &mut ChaCha8Rng::seed_from_u64(4));
    let d = corpus(150, 6);
    let with_adv = with_first(&d, adversarial());
    let r0 = released(&m, &d, &topics);
    let r1 = released(&m, &with_adv, &topics);
    let moved = l2_diff(&r0, &r1);
    assert!(
        moved <= declared() * (1.0 + 1e-9),
        "adding an adversarial first document: moved {moved} > declared {} ({:.2}x)",
        declared(),
        moved / declared()
    );
}
/// Through the engine's `fit` (batch VB, one iteration, `rho = 1`, non-private, declared public
/// population): `lambda - eta = N_public * (sum / S) = sum`, the released sum itself.
#[test]
fn through_fit_one_batch_step_moves_lambda_by_at_most_a_n() {
    let m = model();
    let d = corpus(120, 7);
    let svi = SviConfig::builder()
        .expected_batch_size(PUBLIC_N as f64)
        .population(Some(PUBLIC_N))
        .step(StepSize::Constant { rho: 1.0 })
        .stop(Stop::Iterations { iterations: 1 })
        .privacy(Privacy::NonPrivate)
        .noise_seed(Some(1))
        .init_seed(9)
        .build()
        .unwrap();
    let key = ResamplingKey::public_seed(42);
    let lambda = |c: &Corpus| {
        let docs = m.prepare(c, &key).unwrap();
        fit(&m, docs, &svi, |_, _| {})
            .unwrap()
            .result
            .global
            .lambda()
            .to_vec()
    };
    let l0 = lambda(&d);
    // The released sum's bound is a N; lambda = eta + N_public * sum / S with S = N_public.
    let bound = A * N as f64;
    for neighbour in [without(&d, 0), with_first(&d, adversarial())] {
        let moved = l2_diff(&l0, &lambda(&neighbour));
        assert!(
            moved <= bound * (1.0 + 1e-9),
            "moved {moved} > declared {bound}"
        );
    }
}
