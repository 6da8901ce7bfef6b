//! The wall's segment release (`PrivacyWall::release_segments`, now a compatibility shim over
//! run writes in `PrivacyWall::release`): the neighbouring-record bound, agreement with entry
//! writes, typed errors for malformed contributions, and thread-count independence. The same
//! properties through handles and several run blocks: `wall_unified.rs`.
//!
//! Neighbours are coupled as in `wall_neighbouring.rs`: same seed, Poisson sampling, the extra
//! record appended at the end (the draws for the others are unchanged); for the private walls the
//! noise is then identical, so the released difference is the clipped sums' difference divided by
//! the public expected batch size.

mod common;
use common::in_pool;

use dp_core::wall::segments::SegmentBuffer;
use dp_core::{BlockSpec, ContributionBuffer, CoreError, PrivacyWall, ReleaseSpec, SamplingScheme};
use proptest::prelude::*;

const LEN: usize = 60;

/// A record: disjoint runs `(start, values)` in increasing order.
type Rec = Vec<(usize, Vec<f64>)>;

fn segments(r: &Rec, buf: &mut SegmentBuffer) {
    for (start, values) in r {
        buf.push_segment(*start, values);
    }
}

fn pushes(r: &Rec, buf: &mut ContributionBuffer) {
    for (start, values) in r {
        for (i, &v) in values.iter().enumerate() {
            buf.push(0, start + i, v);
        }
    }
}

/// Runs at sorted distinct starts, each cut short of the next start; scaled by `mode` to be far
/// over the bound, at typical size, or tiny.
fn record() -> impl Strategy<Value = Rec> {
    (
        prop::collection::btree_set(0..LEN, 0..8),
        prop::collection::vec(-3.0f64..3.0, 8 * LEN),
        0u8..3,
    )
        .prop_map(|(starts, pool, mode)| {
            let starts: Vec<usize> = starts.into_iter().collect();
            let factor = [1e3, 1.0, 1e-6][mode as usize];
            let mut out = Vec::new();
            let mut taken = 0;
            for (j, &s) in starts.iter().enumerate() {
                let end = starts.get(j + 1).copied().unwrap_or(LEN);
                let len = (end - s).min(5);
                let values = pool[taken..taken + len]
                    .iter()
                    .map(|v| v * factor)
                    .collect();
                taken += len;
                out.push((s, values));
            }
            out
        })
}

fn wall(records: Vec<Rec>, rate: f64, private: bool, public_n: usize) -> PrivacyWall<Rec> {
    let b = PrivacyWall::builder(records)
        .sampling(SamplingScheme::poisson(rate).unwrap())
        .public_population_size(public_n)
        .seed(9);
    let b = if private {
        b.epsilon_delta(50.0, 1e-5).noise_multiplier(1.3)
    } else {
        b.non_private()
    };
    b.build().unwrap()
}

fn l2_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).powi(2))
        .sum::<f64>()
        .sqrt()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// Adding one (possibly adversarial: norm up to ~1e4 against bounds down to 0.01) record
    /// moves every release by at most `bound / S`, private or not, for batches below and above
    /// the 64-record chunk size.
    #[test]
    fn adding_one_record_moves_the_release_by_at_most_the_sensitivity(
        base in prop::collection::vec(record(), 1..150),
        extra in record(),
        bound in 0.01f64..10.0,
        rate in prop_oneof![Just(1.0), 0.2f64..1.0],
        private in any::<bool>(),
    ) {
        let public_n = 200;
        let spec = ReleaseSpec::new(vec![BlockSpec::vector("v", LEN, bound).unwrap()]).unwrap();
        let mut neighbour = base.clone();
        neighbour.push(extra);
        let r0 = wall(base, rate, private, public_n).release_segments(&spec, segments).unwrap();
        let r1 = wall(neighbour, rate, private, public_n).release_segments(&spec, segments).unwrap();
        let declared = bound / (rate * public_n as f64);
        let b0 = &r0.blocks()[0];
        prop_assert!((b0.sensitivity - declared).abs() <= 1e-12 * declared);
        let moved = l2_diff(b0.value.as_slice(), r1.blocks()[0].value.as_slice());
        prop_assert!(moved <= declared * (1.0 + 1e-9), "moved {moved} > declared {declared}");
    }

    /// The segment release equals the general release (per-entry pushes) on the same data and
    /// seed, including the noise and the clip count.
    #[test]
    fn segment_and_general_releases_agree(
        records in prop::collection::vec(record(), 1..150),
        bound in 0.01f64..10.0,
        private in any::<bool>(),
    ) {
        let spec = ReleaseSpec::new(vec![BlockSpec::vector("v", LEN, bound).unwrap()]).unwrap();
        let a = wall(records.clone(), 0.5, private, 150).release(&spec, pushes).unwrap();
        let b = wall(records, 0.5, private, 150).release_segments(&spec, segments).unwrap();
        prop_assert_eq!(a.clipped_records(), b.clipped_records());
        let (va, vb) = (a.blocks()[0].value.as_slice(), b.blocks()[0].value.as_slice());
        let scale = va.iter().fold(1e-300f64, |m, x| m.max(x.abs()));
        prop_assert!(l2_diff(va, vb) <= 1e-12 * scale * (LEN as f64).sqrt());
        prop_assert_eq!(a.blocks()[0].noise_std, b.blocks()[0].noise_std);
    }
}

#[test]
fn malformed_runs_are_errors_in_non_private_mode_and_replaced_in_private_mode() {
    let spec = ReleaseSpec::new(vec![BlockSpec::vector("v", LEN, 1.0).unwrap()]).unwrap();
    let bad: [fn(&Rec, &mut SegmentBuffer); 4] = [
        |_, b| b.push_segment(LEN - 1, &[1.0, 1.0]), // past the end
        |_, b| b.push_segment(usize::MAX, &[1.0]),   // overflowing start
        |_, b| {
            b.push_segment(5, &[1.0, 1.0]);
            b.push_segment(6, &[1.0]); // overlapping
        },
        |_, b| b.push_segment(3, &[f64::NAN]), // non-finite
    ];
    for (i, f) in bad.into_iter().enumerate() {
        // Non-private: a typed error, nothing released.
        let mut w = wall(vec![vec![]; 10], 1.0, false, 10);
        let err = w.release_segments(&spec, f).unwrap_err();
        assert!(
            matches!(err, CoreError::InvalidContribution { ref block, .. } if block == "v"),
            "case {i}: {err:?}"
        );
        assert_eq!(w.releases_made(), 0);
        // Private: every record replaced by zero, the release charged.
        let mut w = wall(vec![vec![]; 10], 1.0, true, 10);
        let r = w.release_segments(&spec, f).unwrap();
        assert_eq!(r.diagnostics().replaced_records, 10, "case {i}");
        assert_eq!(w.ledger().len(), 1, "case {i}: the release was not charged");
    }
    // Out of order: a run starting before the previous one.
    let mut w = wall(vec![vec![]; 3], 1.0, false, 3);
    let err = w
        .release_segments(&spec, |_, b| {
            b.push_segment(10, &[1.0]);
            b.push_segment(2, &[1.0]);
        })
        .unwrap_err();
    assert!(matches!(err, CoreError::InvalidContribution { .. }));
    // Huge but finite values: the norm does not overflow, the record is clipped to the bound.
    let mut w = wall(vec![vec![]], 1.0, false, 1);
    let r = w
        .release_segments(&spec, |_, b| b.push_segment(0, &[1e200, 1e200]))
        .unwrap();
    let norm = r.blocks()[0]
        .value
        .as_slice()
        .iter()
        .map(|x| x * x)
        .sum::<f64>()
        .sqrt();
    assert!(norm <= 1.0 && norm > 0.99, "{norm}");
    assert_eq!(r.clipped_records(), 1);
}

#[test]
fn specs_the_segment_path_cannot_serve_are_refused() {
    let two = ReleaseSpec::new(vec![
        BlockSpec::vector("a", 3, 1.0).unwrap(),
        BlockSpec::vector("b", 3, 1.0).unwrap(),
    ])
    .unwrap();
    let sym = ReleaseSpec::new(vec![BlockSpec::symmetric("s", 3, 1.0).unwrap()]).unwrap();
    for spec in [two, sym] {
        let mut w = wall(vec![vec![]; 3], 1.0, true, 3);
        let err = w.release_segments(&spec, segments).unwrap_err();
        assert!(matches!(err, CoreError::Misconfigured(_)), "{err:?}");
        assert!(w.ledger().is_empty());
    }
}

/// Records for the thread-count tests: 700 records (several tasks of the first pass) writing runs
/// into a block longer than one scatter span (so the second pass runs in parallel and runs cross
/// span boundaries), some far over the bound.
fn many_records(block_len: usize) -> Vec<Rec> {
    (0..700)
        .map(|i: usize| {
            (0..(i % 11))
                .map(|j| {
                    let start = (j * block_len / 11) + (i * 7919) % (block_len / 11 - 40);
                    let values = (0..(1 + (i + j) % 37))
                        .map(|k| ((i * 31 + j * 7 + k) as f64).sin() * [0.1, 5.0][i % 2])
                        .collect();
                    (start, values)
                })
                .collect()
        })
        .collect()
}

/// The segment release is bit-for-bit the same at 1, 2 and 3 threads (seeded), private or not.
#[test]
fn segment_release_does_not_depend_on_the_number_of_threads() {
    let block_len = 100_003;
    let spec = ReleaseSpec::new(vec![BlockSpec::vector("v", block_len, 2.0).unwrap()]).unwrap();
    let recs = many_records(block_len);
    for private in [false, true] {
        let go = |threads: usize| {
            in_pool(threads, || {
                let mut w = wall(recs.clone(), 0.9, private, 700);
                // Two releases: the second reuses the wall's scratch.
                let first = w.release_segments(&spec, segments).unwrap();
                let second = w.release_segments(&spec, segments).unwrap();
                (first, second)
            })
        };
        let one = go(1);
        assert!(one.0.clipped_records() > 0);
        assert_eq!(
            one,
            go(2),
            "2 threads changed the release (private: {private})"
        );
        assert_eq!(
            one,
            go(3),
            "3 threads changed the release (private: {private})"
        );
    }
}

/// Without clipping and without noise, the released sum is exactly the plain sequential sum over
/// the records in index order, divided by the public batch size (the documented summation order).
#[test]
fn segment_sum_is_the_sequential_sum_in_record_order() {
    let block_len = 100_003;
    let spec = ReleaseSpec::new(vec![BlockSpec::vector("v", block_len, 1e6).unwrap()]).unwrap();
    let recs = many_records(block_len);
    let mut expected = vec![0.0f64; block_len];
    for r in &recs {
        for (start, values) in r {
            for (i, v) in values.iter().enumerate() {
                expected[start + i] += v;
            }
        }
    }
    let release = in_pool(2, || {
        wall(recs, 1.0, false, 700)
            .release_segments(&spec, segments)
            .unwrap()
    });
    assert_eq!(release.clipped_records(), 0);
    let got = release.blocks()[0].value.as_slice();
    for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
        assert_eq!(g.to_bits(), (e / 700.0).to_bits(), "entry {i}");
    }
}
