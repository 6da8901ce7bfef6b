//! Sensitivity property tests for each of the seven SBN statistics (000 Eq. 61-68): on
//! neighbouring datasets (one record removed) the sum of every block moves by at most its
//! declared bound, for arbitrary parameters (including extreme ones) and arbitrary images.

use nalgebra::{DMatrix, DVector};
use proptest::prelude::*;
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;
use vips_models::engine::VipsModel;
use vips_models::sbn::{
    BinaryImage, GRelease, Sbn, SbnConfig, SbnGlobal, SbnNatural, SbnStatistics,
};

fn model(j: usize, k: usize, g: GRelease) -> Sbn {
    let mut cfg = SbnConfig::builder(j, k);
    cfg = cfg.g_release(g);
    Sbn::new(cfg.build().unwrap()).unwrap()
}

/// A global with random (possibly extreme) means and variances.
fn global(model: &Sbn, seed: u64, scale: f64) -> SbnGlobal {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut g = model.init_global(&mut rng).unwrap();
    let (j, k) = (model.config().visible(), model.config().hidden());
    let mut s = seed;
    let mut next = || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((s >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 2.0 * scale
    };
    g.w_shift = DMatrix::from_fn(j, k, |_, _| next());
    g.b_shift = DVector::from_fn(k, |_, _| next());
    g.c_shift = DVector::from_fn(j, |_, _| next());
    g
}

fn norm(v: &[f64]) -> f64 {
    v.iter().map(|x| x * x).sum::<f64>().sqrt()
}

fn bounds_of(model: &Sbn) -> Vec<f64> {
    model.spec().blocks().iter().map(|b| b.bound()).collect()
}

fn check_neighbours(model: &Sbn, nat: &SbnNatural, data: &[BinaryImage], removed: usize) {
    let bounds = bounds_of(model);
    let per: Vec<Vec<Vec<f64>>> = data.iter().map(|im| model.record_blocks(nat, im)).collect();
    for (b, &bound) in bounds.iter().enumerate() {
        let len = per[0][b].len();
        let mut full = vec![0.0; len];
        let mut neighbour = vec![0.0; len];
        for (i, rec) in per.iter().enumerate() {
            for (t, v) in full.iter_mut().zip(&rec[b]) {
                *t += v;
            }
            if i != removed {
                for (t, v) in neighbour.iter_mut().zip(&rec[b]) {
                    *t += v;
                }
            }
        }
        let diff: Vec<f64> = full.iter().zip(&neighbour).map(|(a, c)| a - c).collect();
        assert!(
            norm(&diff) <= bound * (1.0 + 1e-12),
            "block {b}: moved by {} > bound {bound}",
            norm(&diff)
        );
    }
}

fn image(bits: &[bool]) -> BinaryImage {
    BinaryImage {
        pixels: bits.iter().map(|&b| u8::from(b)).collect(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn per_unit_blocks_respect_bounds(
        seed in 0u64..1000,
        scale in prop_oneof![Just(0.1), Just(5.0), Just(500.0)],
        bits in proptest::collection::vec(proptest::collection::vec(any::<bool>(), 12), 2..6),
        removed in 0usize..6,
    ) {
        let m = model(12, 4, GRelease::PerUnit);
        let nat = m.expected_natural(&global(&m, seed, scale)).unwrap();
        let data: Vec<BinaryImage> = bits.iter().map(|b| image(b)).collect();
        check_neighbours(&m, &nat, &data, removed % data.len());
    }

    #[test]
    fn pooled_blocks_respect_bounds(
        seed in 0u64..1000,
        scale in prop_oneof![Just(0.1), Just(5.0), Just(500.0)],
        bits in proptest::collection::vec(proptest::collection::vec(any::<bool>(), 9), 2..6),
        removed in 0usize..6,
    ) {
        let m = model(9, 5, GRelease::Pooled);
        let nat = m.expected_natural(&global(&m, seed, scale)).unwrap();
        let data: Vec<BinaryImage> = bits.iter().map(|b| image(b)).collect();
        check_neighbours(&m, &nat, &data, removed % data.len());
    }
}

/// The bounds are attained (so they are not loose by construction errors): all-ones image with
/// saturated hidden units reaches the s3, s6 and Z bounds.
#[test]
fn bounds_are_tight_where_claimed() {
    let m = model(9, 5, GRelease::Pooled);
    let mut g = global(&m, 1, 0.0);
    g.b_shift = DVector::from_element(5, 1e4 * g.b_precision[0]);
    g.w_shift = DMatrix::zeros(9, 5);
    let nat = m.expected_natural(&g).unwrap();
    let blocks = m.record_blocks(&nat, &image(&[true; 9]));
    let b = m.bounds();
    assert!((norm(&blocks[2]) - b.s3).abs() < 1e-9);
    assert!((norm(&blocks[5]) - b.s6).abs() < 1e-6);
    assert!((norm(&blocks[6]) - b.g_pooled).abs() < 1e-6);
    // The names of the seven statistics in release order.
    let names: Vec<String> = m
        .spec()
        .blocks()
        .iter()
        .map(|b| b.name().to_string())
        .collect();
    assert_eq!(
        names,
        [
            "s1_z", "s2_xi1", "s3_y", "s4_xi0", "s5_xi0_z", "s6_y_z", "s7_Z"
        ]
    );
}

/// The sum of every block *as the wall releases it* (non-private wall, rate 1: every record,
/// clipped to the declared bound, summed) over `data`.
/// Also returns how many records the wall clipped.
fn wall_sums(model: &Sbn, nat: &SbnNatural, data: Vec<BinaryImage>) -> (Vec<Vec<f64>>, u64) {
    let (spec, blocks) = model.release_spec().unwrap();
    let mut wall = dp_core::PrivacyWall::builder(data)
        .sampling(dp_core::SamplingScheme::poisson(1.0).unwrap())
        .non_private()
        .seed(0)
        .build()
        .unwrap();
    let release = wall
        .release(&spec, |record, buffer| {
            let mut scratch = model.new_scratch();
            if model
                .record_statistic(&blocks, nat, record, &mut scratch, buffer)
                .is_err()
            {
                buffer.reject_record("rejected");
            }
        })
        .unwrap();
    let sums = release
        .blocks()
        .iter()
        .map(|b| {
            b.value
                .as_slice()
                .iter()
                .map(|v| v * release.expected_batch_size())
                .collect()
        })
        .collect();
    (sums, release.clipped_records())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    /// With bounds below the worst case (`clip_fraction < 1`), and for the residual statistics
    /// (whose bounds are declared, not worst case), records do exceed the bounds, and the wall's
    /// clipping keeps every released block within its declared bound on neighbouring datasets
    /// (the released sums, not the raw contributions, are what the guarantee is about).
    #[test]
    fn clipped_blocks_respect_bounds_through_the_wall(
        seed in 0u64..1000,
        fraction in prop_oneof![Just(0.05), Just(0.3), Just(0.7), Just(1.0)],
        pooled in any::<bool>(),
        residual in any::<bool>(),
        bits in proptest::collection::vec(proptest::collection::vec(any::<bool>(), 9), 2..6),
        removed in 0usize..6,
    ) {
        let mut cfg = SbnConfig::builder(9, 4);
        cfg = cfg.g_release(if pooled { GRelease::Pooled } else { GRelease::PerUnit });
        cfg = cfg.clip_fraction(fraction);
        if residual {
            cfg = cfg.statistics(SbnStatistics::Residual);
        }
        let m = Sbn::new(cfg.build().unwrap()).unwrap();
        let nat = m.expected_natural(&global(&m, seed, 5.0)).unwrap();
        let data: Vec<BinaryImage> = bits.iter().map(|b| image(b)).collect();
        let removed = removed % data.len();
        let mut neighbour = data.clone();
        neighbour.remove(removed);
        let (full, _) = wall_sums(&m, &nat, data);
        let (less, _) = wall_sums(&m, &nat, neighbour);
        for (b, &bound) in bounds_of(&m).iter().enumerate() {
            let diff: Vec<f64> = full[b].iter().zip(&less[b]).map(|(a, c)| a - c).collect();
            // Symmetric blocks come back as full matrices: the packed (upper) entries carry the
            // record's contribution, so compare the Frobenius norm of the full difference.
            prop_assert!(norm(&diff) <= bound * (1.0 + 1e-9), "block {b}: {} > {bound}", norm(&diff));
        }
    }
}

/// The property test above exercises clipping, not only records already inside their bounds: at
/// clip fraction 0.05, Z's bound is `0.05 K = 0.2`, below `||<z z^T>||_F` for any record with
/// `sum_k p_k^2 > 0.2`, so the wall clips records for most parameter draws. (Not for every draw: with
/// all `p_k` small nothing exceeds the bound, which is why this is checked over fixed seeds rather
/// than inside the randomised property.)
#[test]
fn clipping_happens_at_small_clip_fractions() {
    let bits: Vec<Vec<bool>> = (0..5)
        .map(|r| (0..9).map(|c| (r + c) % 2 == 0).collect())
        .collect();
    let data: Vec<BinaryImage> = bits.iter().map(|b| image(b)).collect();
    for (pooled, residual) in [(false, false), (true, false), (false, true), (true, true)] {
        let mut cfg = SbnConfig::builder(9, 4);
        cfg = cfg.g_release(if pooled {
            GRelease::Pooled
        } else {
            GRelease::PerUnit
        });
        cfg = cfg.clip_fraction(0.05);
        if residual {
            cfg = cfg.statistics(SbnStatistics::Residual);
        }
        let m = Sbn::new(cfg.build().unwrap()).unwrap();
        let clipped_seeds = (0..10u64)
            .filter(|&seed| {
                let nat = m.expected_natural(&global(&m, seed, 5.0)).unwrap();
                wall_sums(&m, &nat, data.clone()).1 > 0
            })
            .count();
        assert!(
            clipped_seeds >= 5,
            "pooled = {pooled}, residual = {residual}: clipping in only {clipped_seeds} of 10 seeds"
        );
    }
}
