//! Partition selection in the wall (`dp_core::wall::partition`): the contribution bound is
//! enforced inside dp-core, seeded runs are reproducible and bit-identical to the selection LDA
//! made before it moved here (issue 18), and the release is in the ledger with its label and
//! the threshold delta.

use std::collections::BTreeSet;

use dp_accountant::{Accountant, Neighbouring, PrivacyEvent};
use dp_core::wall::partition::{
    PartitionRelease, PartitionSelection, bounded_keys, contribution_counts, select_partitions,
};
use dp_core::{CoreError, RngPolicy};
use rand::RngExt;
use rand::SeedableRng;
use rand::rngs::ChaCha20Rng;
use rand_distr::StandardNormal;
use sha2::{Digest, Sha256};

/// The domain LDA's vocabulary selection has always used (kept so seeded runs stay identical).
const LDA_DOMAIN: &[u8] = b"vips-models/lda/vocabulary/gaussian-partition-selection/v1";

fn keys(r: &[String]) -> impl Iterator<Item = &str> {
    r.iter().map(String::as_str)
}

fn select(
    records: &[Vec<String>],
    s: &PartitionSelection,
    policy: RngPolicy,
    ledger: &mut Accountant,
) -> Result<Vec<String>, CoreError> {
    let release = PartitionRelease::new("test keys", LDA_DOMAIN);
    let out = select_partitions(records, |r| keys(r), s, policy, ledger, &release)?;
    Ok(out.keys.into_iter().map(str::to_string).collect())
}

#[test]
fn a_record_listing_ten_keys_counts_three_at_k_three() {
    let record: Vec<String> = (0..10).map(|i| format!("k{i}")).collect();
    assert_eq!(bounded_keys(keys(&record), 3), ["k0", "k1", "k2"]);
    let records = vec![record; 1000];
    let c = contribution_counts(&records, |r| keys(r), 3);
    assert_eq!(c.len(), 3);
    assert!(c.values().all(|&n| n == 1000));
    // Through the release itself: the caller lists 10 keys, dp-core counts 3.
    let s = PartitionSelection::calibrate(1.0, 1e-6, 3).unwrap();
    assert!(s.threshold() < 100.0);
    for seed in 0..5 {
        let kept = select(
            &records,
            &s,
            RngPolicy::Seeded { seed },
            &mut Accountant::new(),
        )
        .unwrap();
        assert_eq!(kept, ["k0", "k1", "k2"]);
    }
    // Repeats count once, and the cap counts distinct keys.
    let r = vec![
        "a".to_string(),
        "a".into(),
        "a".into(),
        "b".into(),
        "c".into(),
    ];
    assert_eq!(bounded_keys(keys(&r), 2), ["a", "b"]);
}

/// The corpus the pre-move golden lists were computed on (counts from 1 to 300).
fn golden_corpus() -> Vec<Vec<String>> {
    (0..300usize)
        .map(|d| {
            let mut doc: Vec<String> = (0..60usize)
                .filter(|j| d % (j + 1) == 0 || (d * 7 + j) % 11 == 0)
                .map(|j| format!("w{j}"))
                .collect();
            doc.push(format!("u{d}"));
            doc
        })
        .collect()
}

/// `vips_models::lda::vocabulary::select_vocabulary` at (2, 1e-3), k = 8, before the move.
const GOLDEN: [(u64, &str); 3] = [
    (
        1,
        "w0 w1 w10 w11 w12 w13 w14 w15 w16 w17 w18 w19 w2 w20 w21 w22 w23 w24 w25 w26 w27 w28 \
         w29 w3 w30 w31 w32 w36 w37 w38 w4 w40 w42 w46 w48 w5 w6 w7 w8 w9",
    ),
    (
        2,
        "w0 w1 w10 w11 w12 w13 w14 w15 w16 w18 w19 w2 w20 w21 w22 w24 w25 w26 w27 w28 w29 w3 \
         w30 w31 w32 w33 w35 w36 w37 w4 w40 w41 w45 w46 w5 w53 w57 w6 w7 w8 w9",
    ),
    (
        3,
        "w0 w1 w10 w11 w12 w13 w14 w15 w16 w17 w18 w19 w2 w20 w21 w22 w23 w24 w25 w26 w27 w28 \
         w29 w3 w30 w32 w34 w36 w38 w4 w40 w41 w42 w46 w5 w50 w54 w58 w6 w7 w8 w9",
    ),
];

/// The pre-move noise of one key, written out independently: `SHA-256(domain || "/seed" ||
/// seed)` is the noise key, `SHA-256(domain || noise key || len || key)` seeds the key's
/// ChaCha20 stream, whose first standard normal is the key's noise.
fn reference_noise(seed: u64, key: &str) -> f64 {
    let mut h = Sha256::new();
    h.update(LDA_DOMAIN);
    h.update(b"/seed");
    h.update(seed.to_le_bytes());
    let noise_key: [u8; 32] = h.finalize().into();
    let mut h = Sha256::new();
    h.update(LDA_DOMAIN);
    h.update(noise_key);
    h.update((key.len() as u64).to_le_bytes());
    h.update(key.as_bytes());
    let mut rng = ChaCha20Rng::from_seed(h.finalize().into());
    rng.sample(StandardNormal)
}

#[test]
fn seeded_selections_are_reproducible_and_bit_identical_to_before_the_move() {
    let records = golden_corpus();
    let s = PartitionSelection::calibrate(2.0, 1e-3, 8).unwrap();
    // The calibration is the same to the last bit (since session 10 the Gaussian gets epsilon
    // minus the threshold's share -ln(1 - delta_thr): sigma 4.802708679023223 -> ...3622, the
    // threshold 19.42344584240355 -> ...59; the selections below did not change).
    assert_eq!(s.threshold(), 19.4273940641459);
    assert_eq!(s.sigma(), 4.803737919643622);
    let counts = contribution_counts(&records, |r| keys(r), 8);
    for (seed, golden) in GOLDEN {
        let policy = RngPolicy::Seeded { seed };
        let a = select(&records, &s, policy, &mut Accountant::new()).unwrap();
        let b = select(&records, &s, policy, &mut Accountant::new()).unwrap();
        assert_eq!(a, b, "seed {seed}: not reproducible");
        assert_eq!(
            a.join(" "),
            golden,
            "seed {seed}: differs from before the move"
        );
        // Every key's decision is `c + sigma z > T` with the reference noise, bit for bit.
        let kept: BTreeSet<&str> = a.iter().map(String::as_str).collect();
        for (key, &c) in &counts {
            let noisy = c as f64 + s.sigma() * reference_noise(seed, key);
            assert_eq!(
                kept.contains(key),
                noisy > s.threshold(),
                "seed {seed} {key}"
            );
        }
    }
    // Another seed gives another selection (the seed is used).
    let other = select(
        &records,
        &s,
        RngPolicy::Seeded { seed: 9 },
        &mut Accountant::new(),
    )
    .unwrap()
    .join(" ");
    assert!(GOLDEN.iter().all(|(_, g)| other != *g));
}

#[test]
fn a_keys_outcome_depends_only_on_its_count_and_the_key() {
    let s = PartitionSelection::calibrate(2.0, 1e-3, 8).unwrap();
    let records = golden_corpus();
    // Reordered records, and records with other keys added or removed, leave the decision of
    // every key whose count is unchanged as it was.
    let mut reordered = records.clone();
    reordered.reverse();
    let mut more = records.clone();
    more.extend((0..50).map(|i| vec![format!("extra{i}"); 3]));
    for seed in 0..10 {
        let p = RngPolicy::Seeded { seed };
        let base = select(&records, &s, p, &mut Accountant::new()).unwrap();
        assert_eq!(
            base,
            select(&reordered, &s, p, &mut Accountant::new()).unwrap()
        );
        let with_more = select(&more, &s, p, &mut Accountant::new()).unwrap();
        let without: Vec<String> = with_more
            .into_iter()
            .filter(|k| !k.starts_with("extra"))
            .collect();
        assert_eq!(base, without, "seed {seed}");
    }
}

#[test]
fn the_ledger_entry_is_labelled_and_states_the_threshold_delta() {
    let s = PartitionSelection::calibrate(1.0, 1e-6, 4).unwrap();
    let records = golden_corpus();
    let mut ledger = Accountant::new();
    let release = PartitionRelease::new("categories", b"test/v1").record_name("visit");
    let out = select_partitions(
        &records,
        |r| keys(r),
        &s,
        RngPolicy::OsEntropy,
        &mut ledger,
        &release,
    )
    .unwrap();
    assert!(!out.seeded && out.rng.contains("OS entropy"));
    assert_eq!(out.ledger_label, "categories");
    assert!(out.keys.windows(2).all(|p| p[0] < p[1]));
    assert_eq!(ledger.len(), 1);
    let entry = &ledger.entries()[0];
    assert_eq!(entry.label, "categories");
    assert_eq!(
        entry.event,
        PrivacyEvent::gaussian(s.noise_multiplier(), Neighbouring::AddRemoveOne).unwrap()
    );
    assert!(
        entry.notes["extra_delta_not_in_event"].starts_with(&format!("{}", s.threshold_delta()))
    );
    assert!(
        entry.notes["sensitivity"].contains("sqrt(4)")
            && entry.notes["sensitivity"].contains("visit")
    );
    assert_eq!(entry.notes["threshold"], format!("{}", s.threshold()));
    assert!(entry.notes["rng"].contains("OS entropy"));
    assert!(
        entry.notes["extra_epsilon_not_in_event"]
            .starts_with(&format!("{}", s.threshold_epsilon()))
    );
    // The threshold's share is -ln(1 - delta_thr); the events' answer plus it stays within
    // the selection's epsilon (the accountant rounds up, never down).
    assert_eq!(s.threshold_epsilon(), -(-s.threshold_delta()).ln_1p());
    let eps = ledger.epsilon(s.noise_delta()).unwrap();
    let whole = eps + s.threshold_epsilon();
    assert!(
        whole <= 1.0 + 1e-9 && whole > 0.9,
        "{eps} + {}",
        s.threshold_epsilon()
    );

    // A ledger of replace-one events refuses the entry, and nothing is released.
    let mut other = Accountant::new();
    other
        .record(
            "fixed-size",
            PrivacyEvent::fixed_size_subsampled_gaussian(1.0, 10, 100).unwrap(),
        )
        .unwrap();
    let refused = select_partitions(
        &records,
        |r| keys(r),
        &s,
        RngPolicy::OsEntropy,
        &mut other,
        &release,
    );
    assert!(matches!(refused, Err(CoreError::Accountant(_))));
    assert_eq!(other.len(), 1);
}

#[test]
fn settings_are_checked() {
    for (e, d, k) in [
        (0.0, 1e-6, 1),
        (f64::NAN, 1e-6, 1),
        (f64::INFINITY, 1e-6, 1),
        (1.0, 0.0, 1),
        (1.0, 1.0, 1),
        (1.0, f64::NAN, 1),
        (1.0, 1e-6, 0),
        // -ln(1 - 0.25) = 0.288 of epsilon goes to the threshold: nothing left for the noise.
        (0.2, 0.5, 1),
    ] {
        assert!(
            matches!(
                PartitionSelection::calibrate(e, d, k),
                Err(CoreError::InvalidParameter { .. })
            ),
            "{e} {d} {k}"
        );
    }
}
