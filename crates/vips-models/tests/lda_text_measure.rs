//! Issue 20 measurement (ignored; needs a corpus): a plain-text corpus, one document per line,
//! fitted end to end with a privately selected vocabulary, printing the top words per topic.
//!
//! `LDA_TEXT_CORPUS=/path/docs.txt cargo test -p vips-models --release --test lda_text_measure -- --ignored --nocapture`
//! (`docs/vips-models.md`, "LDA on raw text with a private vocabulary (issue 20)").

use dp_accountant::Accountant;
use dp_core::RngPolicy;
use vips_models::engine::{Privacy, StepSize, Stop, SviConfig, fit};
use vips_models::lda::corpus::ResamplingKey;
use vips_models::lda::text::{TextLimits, Tokenizer, bag_of_words, read_text};
use vips_models::lda::vocabulary::{PartitionSelection, select_vocabulary};
use vips_models::lda::{Lda, LdaConfig, Provenance, SavedLda};

fn env(name: &str, default: f64) -> f64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
#[ignore = "measurement: needs LDA_TEXT_CORPUS (a text file, one document per line)"]
fn fit_raw_text_with_a_private_vocabulary() {
    let Ok(path) = std::env::var("LDA_TEXT_CORPUS") else {
        eprintln!("LDA_TEXT_CORPUS not set");
        return;
    };
    let (eps_vocab, eps_fit, delta) = (env("EPS_VOCAB", 1.0), env("EPS_FIT", 3.0), 1e-6);
    let k_words = env("K_WORDS", 50.0) as usize;
    let topics = env("TOPICS", 10.0) as usize;
    let private_fit = env("PRIVATE_FIT", 1.0) > 0.0;
    let text = read_text(path.as_ref(), &Tokenizer::english(), &TextLimits::default()).unwrap();
    println!("documents {} (non-private count)", text.len());
    let selection = PartitionSelection::calibrate(eps_vocab, delta, k_words).unwrap();
    let mut ledger = Accountant::new();
    let (vocab, report) = select_vocabulary(
        text.docs(),
        &selection,
        RngPolicy::Seeded { seed: 20 },
        &mut ledger,
    )
    .unwrap();
    println!(
        "vocabulary: {} words; eps {} delta {} k {} sigma {:.3} threshold {:.2} ({})",
        report.size,
        eps_vocab,
        delta,
        k_words,
        selection.sigma(),
        selection.threshold(),
        report.rng
    );
    let bow = bag_of_words(text.docs(), &vocab).unwrap();
    println!(
        "non-private diagnostics: {} unknown tokens dropped, {} documents left empty",
        bow.unknown_tokens, bow.empty_documents
    );
    let corpus = bow.into_corpus(&vocab).unwrap();
    let n = corpus.len();
    let cfg = LdaConfig::builder(topics, vocab.len())
        .doc_length(Some(100))
        .clip_scale(0.1)
        .build()
        .unwrap();
    let lda = Lda::new(cfg.clone());
    let docs = lda
        .prepare(&corpus, &ResamplingKey::public_seed(1))
        .unwrap();
    let privacy = if private_fit {
        Privacy::Target {
            epsilon: eps_fit,
            delta,
        }
    } else {
        Privacy::NonPrivate
    };
    let svi = SviConfig::builder()
        .step(StepSize::robbins_monro(1.0, 0.6).unwrap())
        .expected_batch_size(env("BATCH", 500.0))
        .stop(Stop::Passes {
            passes: env("PASSES", 20.0),
        })
        .privacy(privacy)
        .population(Some(n))
        .noise_seed(Some(3))
        .init_seed(4)
        .build()
        .unwrap();
    let fitted = fit(&lda, docs, &svi, |_, _| {}).unwrap();
    let total = report.compose_with_fit(if private_fit { eps_fit } else { f64::INFINITY }, delta);
    println!("fit: private {private_fit}; total guarantee (basic composition) {total:?}");
    let model = SavedLda::new(
        cfg,
        fitted.result.global,
        vocab,
        Provenance {
            vocabulary: Some(report),
            guarantee: private_fit.then_some(total),
            ..Provenance::default()
        },
    )
    .unwrap();
    for (k, words) in model.top_words(10).iter().enumerate() {
        let w: Vec<&str> = words.iter().map(|(w, _)| w.as_str()).collect();
        println!("topic {k:2}: {}", w.join(" "));
    }
}
