//! Topic recovery on corpora drawn from known topics: learned topics (posterior means), matched to
//! the true ones by total-variation distance, are close. Fixed seeds; the thresholds sit well
//! above the values these seeds give (see the assertion messages) and far below the TV of an
//! unfitted model (~0.9), so a broken E-step, M-step or release path fails.

use vips_models::engine::{Privacy, StepSize, Stop, SviConfig, fit};
use vips_models::lda::corpus::SyntheticConfig;
use vips_models::lda::{Lda, LdaConfig, match_topics};

fn run(
    privacy: Privacy,
    num_docs: usize,
    passes: f64,
    batch: f64,
    doc_length: Option<usize>,
) -> (f64, f64) {
    let (k, v) = (5, 100);
    let data = SyntheticConfig::builder()
        .num_docs(num_docs)
        .vocab_size(v)
        .num_topics(k)
        .doc_length(60)
        .alpha(0.1)
        .eta(0.05)
        .seed(11)
        .build()
        .unwrap()
        .generate()
        .unwrap();
    let cfg = LdaConfig::builder(k, v)
        .alpha(0.1)
        .eta(0.05)
        .doc_length(doc_length)
        .clip_scale(1.0)
        .build()
        .unwrap();
    let model = Lda::new(cfg);
    let svi = SviConfig::builder()
        .step(StepSize::robbins_monro(1.0, 0.6).unwrap())
        .expected_batch_size(batch)
        .stop(Stop::Passes { passes })
        .privacy(privacy)
        .noise_seed(Some(2))
        .init_seed(4)
        .population(Some(data.corpus.len()))
        .build()
        .unwrap();
    let result = fit(&model, data.corpus.into_docs(), &svi, |_, _| {})
        .unwrap()
        .result;
    let m = match_topics(&data.topics, &result.global.mean_topics(), v).unwrap();
    eprintln!(
        "topic recovery: mean TV {:.4}, max TV {:.4}",
        m.mean_tv, m.max_tv
    );
    (m.mean_tv, m.max_tv)
}

#[test]
fn non_private_svi_recovers_known_topics() {
    let (mean_tv, max_tv) = run(Privacy::NonPrivate, 1500, 8.0, 300.0, None);
    // These seeds give mean 0.013, max 0.016.
    assert!(mean_tv < 0.05, "mean TV {mean_tv} (max {max_tv})");
    assert!(max_tv < 0.1, "max TV {max_tv}");
}

#[test]
#[ignore = "release mode: private fit on 20k documents"]
fn private_svi_recovers_known_topics_at_eps_4() {
    let (mean_tv, max_tv) = run(
        Privacy::Target {
            epsilon: 4.0,
            delta: 1e-5,
        },
        20_000,
        2.0,
        2000.0,
        Some(60),
    );
    // These seeds give mean 0.090, max 0.094.
    assert!(mean_tv < 0.15, "mean TV {mean_tv} (max {max_tv})");
}
