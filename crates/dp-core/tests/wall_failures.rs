//! Failing contributions never leak (DESIGN Sec. 3): inside a private release a record whose
//! statistic is malformed or non-finite is replaced by zero, counted in the non-private
//! diagnostics, and the release goes ahead and is charged; error messages (non-private mode
//! only) carry no record-derived value. Both kinds of writes: entry writes (`push`, `dense`) and
//! run writes (`push_segment`), each through `PrivacyWall::release`.
//!
//! Coupling: the walls have the same seed and declare the same public population, so they
//! divide by the same `qN` and draw the same noise; under Poisson sampling the extra (bad)
//! records are appended at the end, which leaves the draws for the others unchanged. A
//! replaced record adds nothing, so the releases must be **bit-identical** to those of the
//! wall without the bad records (all batches here are below one accumulation chunk, so the
//! additions happen in the same order).

use dp_core::{
    ContributionBuffer, CoreError, PrivacyWall, ReleaseSpec, SamplingScheme, VectorBlock,
};

/// A record: fine, or one of the faults a caller's statistic can have.
#[derive(Clone, Debug)]
enum Rec {
    Good(Vec<f64>),
    /// Writes NaN.
    NotFinite,
    /// Writes outside its block (at an index that must never appear in a message).
    OutOfRange,
    /// Run writes only: runs out of order.
    OutOfOrder,
}

const LEN: usize = 4;
/// An index no message may contain.
const SECRET_INDEX: usize = 987_654_321;

fn good(n: usize) -> Vec<Rec> {
    (0..n)
        .map(|i| {
            let t = i as f64;
            Rec::Good(vec![t.sin(), (0.3 * t).cos() * 2.0, 0.1 * t, -0.5])
        })
        .collect()
}

/// The statistic written as entries (dense and sparse) into block `v`.
fn entries(v: VectorBlock) -> impl Fn(&Rec, &mut ContributionBuffer) + Sync {
    move |r: &Rec, buf: &mut ContributionBuffer| match r {
        Rec::Good(x) => buf.dense(v).copy_from_slice(x),
        Rec::NotFinite => {
            buf.push(v, 1, 0.5);
            buf.push(v, 2, f64::NAN);
        }
        Rec::OutOfRange | Rec::OutOfOrder => {
            buf.push(v, 0, 0.25);
            buf.push(v, SECRET_INDEX, 1.0);
        }
    }
}

/// The statistic written as runs into block `v`.
fn runs(v: VectorBlock) -> impl Fn(&Rec, &mut ContributionBuffer) + Sync {
    move |r: &Rec, buf: &mut ContributionBuffer| match r {
        Rec::Good(x) => buf.push_segment(v, 0, x),
        Rec::NotFinite => buf.push_segment(v, 1, &[0.5, f64::INFINITY]),
        Rec::OutOfRange => buf.push_segment(v, SECRET_INDEX, &[1.0]),
        Rec::OutOfOrder => {
            buf.push_segment(v, 2, &[1.0, 1.0]);
            buf.push_segment(v, 1, &[1.0]);
        }
    }
}

/// One vector block `v` of `LEN` entries, bound 1.
fn spec() -> (ReleaseSpec, VectorBlock) {
    let mut b = ReleaseSpec::builder("failures");
    let v = b.vector("v", LEN, 1.0).unwrap();
    (b.build().unwrap(), v)
}

fn wall(records: Vec<Rec>, rate: f64, private: bool, seed: u64) -> PrivacyWall<Rec> {
    let b = PrivacyWall::builder(records)
        .sampling(SamplingScheme::poisson(rate).unwrap())
        .public_population_size(40)
        .require_public_population()
        .seed(seed);
    let b = if private {
        b.epsilon_delta(1e6, 1e-5).noise_multiplier(1.0)
    } else {
        b.non_private()
    };
    b.build().unwrap()
}

fn with_bad(n: usize, bad: &[Rec]) -> Vec<Rec> {
    let mut r = good(n);
    r.extend_from_slice(bad);
    r
}

/// The batch with one NaN record and one out-of-range record gives the same release as the
/// batch without them, is charged, and counts the replacements. Under `q < 1` a fresh pair of
/// walls per release (the sampler's stream diverges once the extra records consumed draws).
#[test]
fn private_release_replaces_bad_records_by_zero_and_is_charged() {
    let bad = [Rec::NotFinite, Rec::OutOfRange];
    let (spec, v) = spec();
    for rate in [1.0, 0.6] {
        let mut replaced = 0;
        for k in 0..8u64 {
            let mut clean = wall(good(30), rate, true, k);
            let mut dirty = wall(with_bad(30, &bad), rate, true, k);
            let (a, b) = if k % 2 == 0 {
                (
                    clean.release(&spec, entries(v)).unwrap(),
                    dirty.release(&spec, entries(v)).unwrap(),
                )
            } else {
                (
                    clean.release(&spec, runs(v)).unwrap(),
                    dirty.release(&spec, runs(v)).unwrap(),
                )
            };
            assert_eq!(a.blocks(), b.blocks(), "rate {rate}, release {k}");
            assert_eq!(a.diagnostics().replaced_records, 0);
            assert_eq!(a.clipped_records(), b.clipped_records());
            if rate == 1.0 {
                assert_eq!(b.diagnostics().replaced_records, 2);
            }
            replaced += b.diagnostics().replaced_records;
            assert_eq!(dirty.ledger().len(), 1, "the release is charged");
            assert_eq!(dirty.total_diagnostics(), b.diagnostics());
            assert_eq!(
                dirty.ledger().epsilon(1e-5).unwrap(),
                clean.ledger().epsilon(1e-5).unwrap()
            );
        }
        assert!(replaced > 0, "rate {rate}: no bad record was ever sampled");
    }
}

/// Out-of-order runs (run writes only) are replaced the same way.
#[test]
fn private_release_replaces_out_of_order_runs() {
    let (spec, v) = spec();
    let mut clean = wall(good(10), 1.0, true, 17);
    let mut dirty = wall(
        with_bad(10, &[Rec::OutOfOrder, Rec::OutOfRange]),
        1.0,
        true,
        17,
    );
    let a = clean.release(&spec, runs(v)).unwrap();
    let b = dirty.release(&spec, runs(v)).unwrap();
    assert_eq!(a.blocks(), b.blocks());
    assert_eq!(b.diagnostics().replaced_records, 2);
    assert_eq!(dirty.ledger().len(), 1);
}

/// The same holds with several threads (records spread over tasks and groups).
#[test]
fn replacement_is_thread_count_independent() {
    let mut records = good(3000);
    for i in (0..3000).step_by(97) {
        records[i] = if i % 2 == 0 {
            Rec::NotFinite
        } else {
            Rec::OutOfRange
        };
    }
    let (spec, v) = spec();
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let mut w = PrivacyWall::builder(records.clone())
                .sampling(SamplingScheme::poisson(1.0).unwrap())
                .epsilon_delta(1e6, 1e-5)
                .noise_multiplier(1.0)
                .public_population_size(3000)
                .seed(5)
                .build()
                .unwrap();
            (
                w.release(&spec, runs(v)).unwrap(),
                w.release(&spec, entries(v)).unwrap(),
            )
        })
    };
    let (s1, g1) = run(1);
    let (s2, g2) = run(2);
    assert_eq!(s1.blocks(), s2.blocks());
    assert_eq!(s1.diagnostics(), s2.diagnostics());
    assert_eq!(g1.diagnostics(), g2.diagnostics());
    assert_eq!(
        s1.diagnostics().replaced_records,
        3000usize.div_ceil(97) as u64
    );
    assert_eq!(
        g1.diagnostics().replaced_records,
        3000usize.div_ceil(97) as u64
    );
}

/// Non-private mode fails loudly instead (nothing released, nothing logged), and the message
/// names the block and the kind of fault, never the index the record wrote.
#[test]
fn non_private_release_fails_without_record_derived_values() {
    let (spec, v) = spec();
    for bad in [Rec::NotFinite, Rec::OutOfRange, Rec::OutOfOrder] {
        let mut w = wall(with_bad(5, std::slice::from_ref(&bad)), 1.0, false, 17);
        let errors = [
            w.release(&spec, entries(v)).unwrap_err(),
            w.release(&spec, runs(v)).unwrap_err(),
        ];
        for err in errors {
            assert!(
                matches!(err, CoreError::InvalidContribution { ref block, .. } if block == "v"),
                "{bad:?}: {err:?}"
            );
            let text = err.to_string();
            for leak in [
                SECRET_INDEX.to_string(),
                "NaN".into(),
                "inf".into(),
                "5".into(),
            ] {
                assert!(!text.contains(&leak), "{bad:?}: `{text}` contains `{leak}`");
            }
        }
        assert_eq!(w.releases_made(), 0);
        assert!(w.release_log().is_empty());
    }
}

/// Diagnostics are a separate, non-private value: not in the serialised release, and
/// serialised on their own with `"private": false`.
#[test]
fn diagnostics_are_separate_and_marked_non_private() {
    let mut w = wall(with_bad(20, &[Rec::NotFinite]), 1.0, true, 17);
    let (spec, v) = spec();
    let r = w.release(&spec, entries(v)).unwrap();
    let json = serde_json::to_value(&r).unwrap();
    let text = json.to_string();
    assert!(
        !text.contains("clipped") && !text.contains("replaced"),
        "{text}"
    );
    let d = serde_json::to_value(r.diagnostics()).unwrap();
    assert_eq!(d["private"], serde_json::Value::Bool(false));
    assert_eq!(d["replaced_records"], 1);
    assert_eq!(d["clipped_records"], r.clipped_records());
    let back: dp_core::wall::ReleaseDiagnostics = serde_json::from_value(d).unwrap();
    assert_eq!(back, r.diagnostics());
    let forged = serde_json::json!({"private": true, "clipped_records": 0, "replaced_records": 0});
    assert!(serde_json::from_value::<dp_core::wall::ReleaseDiagnostics>(forged).is_err());
}
