//! Sensitivity property tests: adding or removing one record moves the released sums `s1` and
//! `s2` by at most 1/2 (L2) and 1/4 (Frobenius), whatever the records and the current `q(m)`.

use std::sync::Arc;

use dp_core::{PrivacyWall, SamplingScheme};
use expfam::MvGaussian;
use nalgebra::{DMatrix, DVector};
use proptest::prelude::*;
use vips_models::blr::{Blr, BlrConfig, BlrRecord, Features, sensitivity};
use vips_models::engine::VipsModel;

/// The released (non-private, un-normalised) sums over all records, through the wall with
/// Poisson rate 1 and a fixed public population so both neighbours share the normaliser.
fn released_sums(
    model: &Blr,
    natural: &Arc<MvGaussian>,
    records: Vec<BlrRecord>,
    public_n: usize,
) -> (DVector<f64>, DMatrix<f64>) {
    let (spec, blocks) = model.release_spec().unwrap();
    let mut wall = PrivacyWall::builder(records)
        .sampling(SamplingScheme::poisson(1.0).unwrap())
        .non_private()
        .public_population_size(public_n)
        .build()
        .unwrap();
    let release = wall
        .release(&spec, |r, buf| {
            if model
                .record_statistic(&blocks, natural, r, &mut (), buf)
                .is_err()
            {
                buf.reject_record("rejected");
            }
        })
        .unwrap();
    let s1 = release.vector(blocks.s1).unwrap() * public_n as f64;
    let s2 = release.symmetric(blocks.s2).unwrap() * public_n as f64;
    (s1, s2)
}

fn record_strategy(d: usize) -> impl Strategy<Value = BlrRecord> {
    (
        prop::collection::vec(-3.0f64..3.0, d),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(move |(x, y, sparse)| {
            let features = if sparse {
                let (indices, values): (Vec<u32>, Vec<f64>) = x
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| i % 2 == 0)
                    .map(|(i, &v)| (i as u32, v))
                    .unzip();
                Features::Sparse { indices, values }
            } else {
                Features::Dense(x)
            };
            BlrRecord::new(features, y).unwrap().0
        })
}

fn posterior_strategy(d: usize) -> impl Strategy<Value = Arc<MvGaussian>> {
    (
        prop::collection::vec(-5.0f64..5.0, d),
        prop::collection::vec(-1.0f64..1.0, d * d),
        0.0f64..3.0,
    )
        .prop_map(move |(m, a, shrink)| {
            let a = DMatrix::from_vec(d, d, a);
            let cov = &a * a.transpose() * shrink + DMatrix::identity(d, d) * 1e-3;
            Arc::new(MvGaussian::new(DVector::from_vec(m), cov).unwrap())
        })
}

const D: usize = 4;

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn add_remove_one_moves_s1_by_half_and_s2_by_quarter(
        records in prop::collection::vec(record_strategy(D), 1..12),
        extra in record_strategy(D),
        natural in posterior_strategy(D),
    ) {
        let model = Blr::new(BlrConfig::builder(D).build().unwrap());
        let public_n = 50;
        let (a1, a2) = released_sums(&model, &natural, records.clone(), public_n);
        let mut neighbour = records;
        neighbour.push(extra.clone());
        let (b1, b2) = released_sums(&model, &natural, neighbour, public_n);
        let d1 = (&a1 - &b1).norm();
        let d2 = (&a2 - &b2).norm(); // Frobenius
        prop_assert!(d1 <= sensitivity::S1_BOUND * (1.0 + 1e-12), "s1 moved by {d1}");
        prop_assert!(d2 <= sensitivity::S2_BOUND * (1.0 + 1e-9) + 1e-9, "s2 moved by {d2}");
        // The move is exactly the added record's contribution (up to the projection's floor).
        let own = extra.features().norm();
        prop_assert!((d1 - 0.5 * own).abs() < 1e-9);
    }
}

#[test]
fn bounds_are_attained_so_the_test_can_fail() {
    // ||x|| = 1, q(m) concentrated at 0: <xi> = 1/4, so s2's contribution has norm exactly 1/4
    // and s1's exactly 1/2: a looser clip or a wrong <xi> would break the property above.
    let model = Blr::new(BlrConfig::builder(2).build().unwrap());
    let natural =
        Arc::new(MvGaussian::new(DVector::zeros(2), DMatrix::identity(2, 2) * 1e-300).unwrap());
    let (r, _) = BlrRecord::new(Features::Dense(vec![0.6, 0.8]), true).unwrap();
    let (s1, s2) = released_sums(&model, &natural, vec![r], 10);
    assert!((s1.norm() - 0.5).abs() < 1e-12);
    assert!((s2.norm() - 0.25).abs() < 1e-9);
    assert_eq!(sensitivity::expected_xi(0.0), 0.25);
}

#[test]
fn records_outside_the_ball_are_clipped_and_reported() {
    let (r, clip) = BlrRecord::new(Features::Dense(vec![30.0, 40.0]), false).unwrap();
    assert!(clip.was_clipped());
    assert!(r.features().norm() <= 1.0);
    assert!(BlrRecord::new(Features::Dense(vec![f64::NAN, 0.0]), false).is_err());
    assert!(
        BlrRecord::new(
            Features::Sparse {
                indices: vec![3, 1],
                values: vec![1.0, 1.0]
            },
            true
        )
        .is_err()
    );
}
