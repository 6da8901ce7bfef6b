//! Run writes (`ContributionBuffer::segment` / `push_segment` through `PrivacyWall::release`)
//! into one vector block: the neighbouring-record bound, agreement with entry writes of the same
//! statistic, typed errors for malformed runs, and thread-count independence. Runs into several
//! blocks, mixed with other writes: `wall_unified.rs`.
//!
//! Neighbours are coupled as in `wall_neighbouring.rs`: same seed, Poisson sampling, the extra
//! record appended at the end (the draws for the others are unchanged); for the private walls the
//! noise is then identical, so the released difference is the clipped sums' difference divided by
//! the public expected batch size.

mod common;
use common::in_pool;

use dp_core::{
    ContributionBuffer, CoreError, PrivacyWall, ReleaseSpec, SamplingScheme, VectorBlock,
};
use proptest::prelude::*;

const LEN: usize = 60;

/// A record: disjoint runs `(start, values)` in increasing order.
type Rec = Vec<(usize, Vec<f64>)>;

/// One vector block `v` of `len` entries, and its handle.
fn spec(len: usize, bound: f64) -> (ReleaseSpec, VectorBlock) {
    let mut b = ReleaseSpec::builder("runs");
    let v = b.vector("v", len, bound).unwrap();
    (b.build().unwrap(), v)
}

/// The record written as runs into `v`.
fn runs(v: VectorBlock) -> impl Fn(&Rec, &mut ContributionBuffer) + Sync {
    move |r: &Rec, buf: &mut ContributionBuffer| {
        for (start, values) in r {
            buf.push_segment(v, *start, values);
        }
    }
}

/// The same statistic written as entries (one `push` per entry) into `v`.
fn pushes(v: VectorBlock) -> impl Fn(&Rec, &mut ContributionBuffer) + Sync {
    move |r: &Rec, buf: &mut ContributionBuffer| {
        for (start, values) in r {
            for (i, &x) in values.iter().enumerate() {
                buf.push(v, start + i, x);
            }
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
        let (spec, v) = spec(LEN, bound);
        let mut neighbour = base.clone();
        neighbour.push(extra);
        let r0 = wall(base, rate, private, public_n).release(&spec, runs(v)).unwrap();
        let r1 = wall(neighbour, rate, private, public_n).release(&spec, runs(v)).unwrap();
        let declared = bound / (rate * public_n as f64);
        let b0 = r0.released(v).unwrap();
        prop_assert!((b0.sensitivity - declared).abs() <= 1e-12 * declared);
        let moved = l2_diff(b0.value.as_slice(), r1.released(v).unwrap().value.as_slice());
        prop_assert!(moved <= declared * (1.0 + 1e-9), "moved {moved} > declared {declared}");
    }

    /// Run writes and entry writes (one `push` per entry) of the same statistic give the same
    /// release on the same data and seed, including the noise and the clip count.
    #[test]
    fn run_writes_and_entry_writes_of_the_same_statistic_agree(
        records in prop::collection::vec(record(), 1..150),
        bound in 0.01f64..10.0,
        private in any::<bool>(),
    ) {
        let (spec, v) = spec(LEN, bound);
        let a = wall(records.clone(), 0.5, private, 150).release(&spec, pushes(v)).unwrap();
        let b = wall(records, 0.5, private, 150).release(&spec, runs(v)).unwrap();
        prop_assert_eq!(a.clipped_records(), b.clipped_records());
        let (ba, bb) = (a.released(v).unwrap(), b.released(v).unwrap());
        let (va, vb) = (ba.value.as_slice(), bb.value.as_slice());
        let scale = va.iter().fold(1e-300f64, |m, x| m.max(x.abs()));
        prop_assert!(l2_diff(va, vb) <= 1e-12 * scale * (LEN as f64).sqrt());
        prop_assert_eq!(ba.noise_std, bb.noise_std);
    }
}

#[test]
fn malformed_runs_are_errors_in_non_private_mode_and_replaced_in_private_mode() {
    let (spec, v) = spec(LEN, 1.0);
    let bad: [&Statistic; 4] = [
        &move |_, b| b.push_segment(v, LEN - 1, &[1.0, 1.0]), // past the end
        &move |_, b| b.push_segment(v, usize::MAX, &[1.0]),   // overflowing start
        &move |_, b| {
            b.push_segment(v, 5, &[1.0, 1.0]);
            b.push_segment(v, 6, &[1.0]); // overlapping
        },
        &move |_, b| b.push_segment(v, 3, &[f64::NAN]), // non-finite
    ];
    for (i, f) in bad.into_iter().enumerate() {
        assert_invalid_write(&spec, f, Some("v"), i);
    }
    // Out of order: a run starting before the previous one.
    let mut w = wall(vec![vec![]; 3], 1.0, false, 3);
    let err = w
        .release(&spec, |_: &Rec, b: &mut ContributionBuffer| {
            b.push_segment(v, 10, &[1.0]);
            b.push_segment(v, 2, &[1.0]);
        })
        .unwrap_err();
    assert!(matches!(err, CoreError::InvalidContribution { .. }));
    // Huge but finite values: the norm does not overflow, the record is clipped to the bound.
    let mut w = wall(vec![vec![]], 1.0, false, 1);
    let r = w
        .release(&spec, |_: &Rec, b: &mut ContributionBuffer| {
            b.push_segment(v, 0, &[1e200, 1e200])
        })
        .unwrap();
    let norm = r
        .vector(v)
        .unwrap()
        .iter()
        .map(|x| x * x)
        .sum::<f64>()
        .sqrt();
    assert!(norm <= 1.0 && norm > 0.99, "{norm}");
    assert_eq!(r.clipped_records(), 1);
}

type Statistic = dyn Fn(&Rec, &mut ContributionBuffer) + Sync;

/// `f` writes an invalid contribution for every record (case `case`): in non-private mode a
/// typed error (naming `block` when given) and nothing released; in private mode every record
/// replaced by zero and the release charged.
fn assert_invalid_write(spec: &ReleaseSpec, f: &Statistic, block: Option<&str>, case: usize) {
    let mut w = wall(vec![vec![]; 10], 1.0, false, 10);
    let err = w.release(spec, f).unwrap_err();
    assert!(
        matches!(err, CoreError::InvalidContribution { block: ref b, .. } if block.is_none_or(|n| n == b)),
        "case {case}: {err:?}"
    );
    assert_eq!(w.releases_made(), 0);
    let mut w = wall(vec![vec![]; 10], 1.0, true, 10);
    let r = w.release(spec, f).unwrap();
    assert_eq!(r.diagnostics().replaced_records, 10, "case {case}");
    assert_eq!(
        w.ledger().len(),
        1,
        "case {case}: the release was not charged"
    );
}

/// Runs go only into a vector or matrix block of the release's own spec: runs into a symmetric
/// block do not compile (`RunHandle`), and runs through the handle of a block of another spec
/// (even one of the same name and shape) are invalid writes: a typed error that charges nothing
/// in non-private mode, every record replaced in private mode.
#[test]
fn runs_into_a_block_of_another_spec_are_refused() {
    let (_, foreign) = spec(3, 1.0);
    let (spec, _) = spec(3, 1.0);
    let recs = vec![vec![(0, vec![1.0, 1.0])]; 3];
    let mut w = wall(recs.clone(), 1.0, false, 3);
    let err = w.release(&spec, runs(foreign)).unwrap_err();
    assert!(
        matches!(err, CoreError::InvalidContribution { .. }),
        "{err:?}"
    );
    assert_eq!(w.releases_made(), 0);
    assert!(w.release_log().is_empty());
    let mut w = wall(recs, 1.0, true, 3);
    let r = w.release(&spec, runs(foreign)).unwrap();
    assert_eq!(r.diagnostics().replaced_records, 3);
    assert_eq!(w.ledger().len(), 1);
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

/// A release of runs is bit-for-bit the same at 1, 2 and 3 threads (seeded), private or not.
#[test]
fn run_writes_do_not_depend_on_the_number_of_threads() {
    let block_len = 100_003;
    let (spec, v) = spec(block_len, 2.0);
    let recs = many_records(block_len);
    for private in [false, true] {
        let go = |threads: usize| {
            in_pool(threads, || {
                let mut w = wall(recs.clone(), 0.9, private, 700);
                // Two releases: the second reuses the wall's scratch.
                let first = w.release(&spec, runs(v)).unwrap();
                let second = w.release(&spec, runs(v)).unwrap();
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
fn run_sum_is_the_sequential_sum_in_record_order() {
    let block_len = 100_003;
    let (spec, v) = spec(block_len, 1e6);
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
        wall(recs, 1.0, false, 700).release(&spec, runs(v)).unwrap()
    });
    assert_eq!(release.clipped_records(), 0);
    let got = release.vector(v).unwrap().as_slice();
    for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
        assert_eq!(g.to_bits(), (e / 700.0).to_bits(), "entry {i}");
    }
}

/// `many_records` with every value rounded to `f32`: the values an `f32` run can hold.
fn many_records_f32(block_len: usize) -> Vec<Rec> {
    many_records(block_len)
        .into_iter()
        .map(|r| {
            r.into_iter()
                .map(|(start, values)| {
                    (start, values.iter().map(|&x| f64::from(x as f32)).collect())
                })
                .collect()
        })
        .collect()
}

/// The record written as `f32` runs (`ContributionBuffer::segment32`) into `v`.
fn runs32(v: VectorBlock) -> impl Fn(&Rec, &mut ContributionBuffer) + Sync {
    move |r: &Rec, buf: &mut ContributionBuffer| {
        for (start, values) in r {
            let run = buf.segment32(v, *start, values.len());
            for (d, &x) in run.iter_mut().zip(values) {
                *d = x as f32;
            }
        }
    }
}

/// An `f32` run counts as the `f64` run of its values widened: the same releases bit for bit
/// (values, clip counts, noise), private or not, at 1, 2 and 3 threads, release after release,
/// both for a block summed record by record (100,003 entries) and for one large enough that
/// chunks of records keep their runs together (600,000 entries, summed span by span).
#[test]
fn f32_runs_release_exactly_what_their_widened_f64_runs_release() {
    for block_len in [100_003, 600_000] {
        let (spec, v) = spec(block_len, 2.0);
        let recs = many_records_f32(block_len);
        for private in [false, true] {
            let go = |threads: usize, narrow: bool| {
                in_pool(threads, || {
                    let mut w = wall(recs.clone(), 0.9, private, 700);
                    let stat = |r: &Rec, b: &mut ContributionBuffer| {
                        if narrow {
                            runs32(v)(r, b)
                        } else {
                            runs(v)(r, b)
                        }
                    };
                    let first = w.release(&spec, stat).unwrap();
                    let second = w.release(&spec, stat).unwrap();
                    (first, second)
                })
            };
            let wide = go(1, false);
            assert!(wide.0.clipped_records() > 0);
            for threads in [1, 2, 3] {
                assert_eq!(
                    wide,
                    go(threads, true),
                    "block {block_len}, {threads} threads, private {private}"
                );
            }
        }
    }
}

/// A record's runs in one block are all `f64` or all `f32`: mixing them is an invalid write (a
/// typed error in non-private mode, the record replaced in private mode), as is an `f32` run
/// outside the block or through another spec's handle.
#[test]
fn mixed_or_misplaced_f32_runs_are_invalid_writes() {
    let (spec, v) = spec(LEN, 1.0);
    let (_, foreign) = self::spec(LEN, 1.0);
    let bad: [&Statistic; 4] = [
        &move |_, b| {
            b.push_segment(v, 0, &[1.0]);
            b.segment32(v, 5, 2).fill(1.0);
        },
        &move |_, b| {
            b.segment32(v, 0, 2).fill(1.0);
            b.push_segment(v, 5, &[1.0]);
        },
        &move |_, b| b.segment32(v, LEN - 1, 2).fill(1.0),
        &move |_, b| b.segment32(foreign, 0, 2).fill(1.0),
    ];
    for (i, f) in bad.into_iter().enumerate() {
        assert_invalid_write(&spec, f, None, i);
    }
}
