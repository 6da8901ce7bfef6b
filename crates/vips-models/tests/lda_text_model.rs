//! Issue 20: a fitted LDA model saves and loads bit for bit (versioned JSON with a checksum),
//! refuses newer and corrupt files with typed errors, and infers topic proportions for new
//! documents; plus the whole path from raw text with a privately selected vocabulary.

mod common;
use common::TempPath;

use std::path::PathBuf;

use dp_accountant::Accountant;
use dp_core::RngPolicy;
use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};
use vips_models::engine::{Privacy, StepSize, Stop, SviConfig, fit};
use vips_models::lda::corpus::{Document, ResamplingKey};
use vips_models::lda::text::{Tokenizer, bag_of_words};
use vips_models::lda::vocabulary::{PartitionSelection, select_vocabulary};
use vips_models::lda::{
    Lda, LdaConfig, Provenance, SAVED_LDA_FORMAT_VERSION, SavedLda, SavedLdaError, Topics,
    Vocabulary,
};

const K: usize = 4;
const V: usize = 40;

fn tmp(name: &str) -> TempPath {
    TempPath::new("vips-lda-text-model", name)
}

/// Block topics: topic k puts most of its mass on words 10k..10k+10.
fn block_topics() -> Topics {
    let lambda = (0..V * K)
        .map(|i| {
            let (w, k) = (i / K, i % K);
            if w / (V / K) == k {
                100.0 + w as f64
            } else {
                0.5 + 0.01 * w as f64
            }
        })
        .collect();
    Topics::from_lambda(K, V, lambda).unwrap()
}

fn model() -> SavedLda {
    let vocab = Vocabulary::from_words((0..V).map(|w| format!("w{w:02}")).collect()).unwrap();
    let cfg = LdaConfig::builder(K, V)
        .alpha(0.1)
        .eta(0.05)
        .doc_length(Some(50))
        .build()
        .unwrap();
    let prov = Provenance {
        guarantee: Some((1.0 / 3.0, 1e-6)),
        notes: [("command".to_string(), "test".to_string())].into(),
        ..Provenance::default()
    };
    SavedLda::new(cfg, block_topics(), vocab, prov).unwrap()
}

#[test]
fn save_and_load_round_trip_bit_for_bit() {
    let m = model();
    let path = tmp("model.json");
    m.save(&path).unwrap();
    let back = SavedLda::load(&path).unwrap();
    assert_eq!(back, m);
    for (a, b) in back.topics().lambda().iter().zip(m.topics().lambda()) {
        assert_eq!(a.to_bits(), b.to_bits());
    }
    assert_eq!(
        back.provenance().guarantee.unwrap().0.to_bits(),
        (1.0f64 / 3.0).to_bits()
    );
    // Saving again writes the same bytes.
    assert_eq!(
        back.to_json().unwrap(),
        std::fs::read_to_string(&path).unwrap()
    );
    let json: serde_json::Value = serde_json::from_str(&m.to_json().unwrap()).unwrap();
    assert_eq!(json["format_version"], 1);
}

fn edit(f: impl FnOnce(&mut serde_json::Value)) -> Vec<u8> {
    let mut v: serde_json::Value = serde_json::from_str(&model().to_json().unwrap()).unwrap();
    f(&mut v);
    serde_json::to_vec(&v).unwrap()
}

#[test]
fn newer_and_corrupt_files_are_typed_errors() {
    let p = PathBuf::from("m.json");
    let load = |bytes: &[u8]| SavedLda::from_json_bytes(bytes, &p);
    let newer = edit(|v| v["format_version"] = (SAVED_LDA_FORMAT_VERSION + 1).into());
    assert!(matches!(
        load(&newer),
        Err(SavedLdaError::NewerVersion { found: 2, .. })
    ));
    let msg = load(&newer).unwrap_err().to_string();
    assert!(msg.contains("m.json") && msg.contains("newer"), "{msg}");

    // A changed number: the checksum no longer matches.
    let flipped = edit(|v| v["model"]["topics"]["lambda"][3] = 7.5.into());
    assert!(matches!(load(&flipped), Err(SavedLdaError::Corrupt { .. })));
    // A valid checksum over an invalid model (negative lambda) is still refused.
    let mut v: serde_json::Value = serde_json::from_str(&model().to_json().unwrap()).unwrap();
    v["model"]["topics"]["lambda"][0] = (-1.0).into();
    let invalid: SavedLda = serde_json::from_value(v["model"].clone()).unwrap();
    let checksummed = invalid.to_json().unwrap();
    match load(checksummed.as_bytes()) {
        Err(SavedLdaError::CorruptModel { fault, .. }) => {
            assert_eq!(fault.field, "lambda", "{fault}")
        }
        other => panic!("{other:?}"),
    }
    // Missing fields, truncation, wrong types.
    let missing = edit(|v| {
        v["model"].as_object_mut().unwrap().remove("vocabulary");
    });
    assert!(matches!(load(&missing), Err(SavedLdaError::Corrupt { .. })));
    let dup = edit(|v| v["model"]["vocabulary"][1] = "w00".into());
    assert!(matches!(load(&dup), Err(SavedLdaError::Corrupt { .. })));
    let full = model().to_json().unwrap();
    assert!(matches!(
        load(&full.as_bytes()[..full.len() / 2]),
        Err(SavedLdaError::NotAModel { .. })
    ));
    assert!(matches!(
        load(b"\xff\xfe"),
        Err(SavedLdaError::NotAModel { .. })
    ));
    let other = edit(|v| v["format"] = "something-else".into());
    assert!(matches!(load(&other), Err(SavedLdaError::NotAModel { .. })));
    let zero = edit(|v| v["format_version"] = 0.into());
    assert!(matches!(load(&zero), Err(SavedLdaError::Corrupt { .. })));
    assert!(matches!(
        SavedLda::load(&tmp("absent.json")),
        Err(SavedLdaError::Io { .. })
    ));
}

#[test]
fn parts_that_disagree_are_refused() {
    let vocab = Vocabulary::from_words(vec!["a".into(), "b".into()]).unwrap();
    let cfg = LdaConfig::builder(K, V).build().unwrap();
    assert!(matches!(
        SavedLda::new(cfg, block_topics(), vocab, Provenance::default()),
        Err(SavedLdaError::Invalid(_))
    ));
    let doc = Document::new(vec![(V as u32, 1)]).unwrap();
    assert!(matches!(
        model().infer(&[doc]),
        Err(SavedLdaError::UnknownWord { doc: 0, .. })
    ));
}

#[test]
fn infer_recovers_the_generating_topic_of_single_topic_documents() {
    let m = model();
    let mean = m.topics().mean_topics(); // topic-major K x V
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let (n, len) = (400, 30);
    let mut truth = Vec::new();
    let mut docs = Vec::new();
    for d in 0..n {
        let k = d % K;
        let row = &mean[k * V..(k + 1) * V];
        let mut pairs = Vec::new();
        for _ in 0..len {
            let u: f64 = rng.random();
            let mut acc = 0.0;
            let w = row
                .iter()
                .position(|&p| {
                    acc += p;
                    u < acc
                })
                .unwrap_or(V - 1);
            pairs.push((w as u32, 1));
        }
        docs.push(Document::new(pairs).unwrap());
        truth.push(k);
    }
    let theta = m.infer(&docs).unwrap();
    let mut right = 0;
    for (t, &k) in theta.iter().zip(&truth) {
        assert!((t.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        let best = (0..K).max_by(|&a, &b| t[a].total_cmp(&t[b])).unwrap();
        right += usize::from(best == k);
    }
    // Each topic has ~94% of its mass on its own block: nearly all documents are recovered.
    assert!(right >= n * 95 / 100, "{right} of {n}");
}

/// Raw text -> private vocabulary -> fit -> save -> load -> infer on new text.
#[test]
fn raw_text_to_private_vocabulary_to_fit_and_infer() {
    let fruit = ["apple", "pear", "plum", "cherry", "orchard", "harvest"];
    let sea = ["ocean", "wave", "ship", "harbour", "sailor", "tide"];
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let t = Tokenizer::english();
    let texts: Vec<String> = (0..600)
        .map(|d| {
            let words = if d % 2 == 0 { &fruit } else { &sea };
            let body: Vec<&str> = (0..25)
                .map(|_| words[rng.random_range(0..words.len())])
                .collect();
            format!(
                "The {} and the {}.",
                body.join(" "),
                if d == 0 { "Zyzzyva" } else { "" }
            )
        })
        .collect();
    let docs: Vec<Vec<String>> = texts.iter().map(|s| t.tokenize(s)).collect();
    let selection = PartitionSelection::calibrate(1.0, 1e-6, 10).unwrap();
    let mut ledger = Accountant::new();
    let (vocab, report) = select_vocabulary(
        &docs,
        &selection,
        RngPolicy::Seeded { seed: 1 },
        &mut ledger,
    )
    .unwrap();
    assert_eq!(vocab.len(), 12, "{:?}", vocab.words());
    assert!(vocab.id("zyzzyva").is_none());
    let corpus = bag_of_words(&docs, &vocab)
        .unwrap()
        .into_corpus(&vocab)
        .unwrap();
    let cfg = LdaConfig::builder(2, vocab.len())
        .alpha(0.5)
        .eta(0.1)
        .doc_length(Some(20))
        .build()
        .unwrap();
    let lda = Lda::new(cfg.clone());
    let prepared = lda
        .prepare(&corpus, &ResamplingKey::public_seed(1))
        .unwrap();
    let svi = SviConfig::builder()
        .step(StepSize::robbins_monro(1.0, 0.6).unwrap())
        .expected_batch_size(100.0)
        .stop(Stop::Passes { passes: 20.0 })
        .privacy(Privacy::NonPrivate)
        .init_seed(4)
        .noise_seed(Some(2))
        .build()
        .unwrap();
    let topics = fit(&lda, prepared, &svi, |_, _| {}).unwrap().result.global;
    let provenance = Provenance {
        vocabulary: Some(report),
        ..Provenance::default()
    };
    let m = SavedLda::new(cfg, topics, vocab, provenance).unwrap();
    let path = tmp("text_model.json");
    m.save(&path).unwrap();
    let m = SavedLda::load(&path).unwrap();
    let top = m.top_words(6);
    let fruit_topic = top
        .iter()
        .position(|ws| fruit.contains(&ws[0].0.as_str()))
        .unwrap();
    for (k, ws) in top.iter().enumerate() {
        let set = if k == fruit_topic { &fruit } else { &sea };
        assert!(
            ws.iter().all(|(w, _)| set.contains(&w.as_str())),
            "topic {k}: {ws:?}"
        );
    }
    let new_docs = vec![
        t.tokenize("A cherry orchard at harvest, with pears and plums and an unknown wombat."),
        t.tokenize("The ship left the harbour on the tide."),
        t.tokenize("Nothing known here."),
    ];
    let inf = m.infer_text(&new_docs).unwrap();
    assert_eq!(inf.unknown_tokens, 6); // pears plums unknown wombat | left | known
    let theta0 = inf.proportions[0].as_ref().unwrap();
    let theta1 = inf.proportions[1].as_ref().unwrap();
    assert!(
        theta0[fruit_topic] > 0.8 && theta1[fruit_topic] < 0.2,
        "{theta0:?} {theta1:?}"
    );
    assert!(inf.proportions[2].is_none());
}
