//! Fast (debug-mode) checks that the sampler's first two moments are right at a few points.
//! The heavy statistical suite is in `statistical.rs` (ignored, release).

use polya_gamma::{PolyaGamma, PolyaGammaShape};
use rand::SeedableRng;
use rand::distr::Distribution;
use rand::rngs::ChaCha8Rng;

/// Sample mean z-score using the exact variance; |score| < 5 has false-alarm rate 5.7e-7
/// per point (normal approximation with 40k draws).
fn mean_z_score(b: f64, z: f64, n: usize, seed: u64) -> f64 {
    let pg = PolyaGamma::new(b, z).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut s = 0.0;
    for _ in 0..n {
        s += pg.sample(&mut rng);
    }
    let m = s / n as f64;
    (m - pg.mean()) / (pg.variance() / n as f64).sqrt()
}

#[test]
fn means_match_over_methods() {
    let points = [
        (1.0, 0.0),
        (1.0, 2.0),
        (1.0, 300.0),
        (2.0, 1.0),
        (3.0, 0.5),
        (0.01, 0.0),
        (0.5, 1.0),
        (0.999, 3.0),
        (1.5, 0.0),
        (2.5, 5.0),
        (4.5, 1.0),
        (13.0, 10.0),
        (24.0, 0.0),
        (50.0, 177.5),
        (100.0, 0.0),
        (1000.0, 1000.0),
    ];
    for (i, &(b, z)) in points.iter().enumerate() {
        let s = mean_z_score(b, z, 40_000, 100 + i as u64);
        assert!(s.abs() < 5.0, "b={b} z={z}: z-score {s}");
    }
}

#[test]
fn batch_over_tilts_matches_means() {
    let shape = PolyaGammaShape::new(1.0).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let z = vec![2.0; 40_000];
    let mut out = vec![0.0; 40_000];
    shape.fill_for_tilts(&mut rng, &z, &mut out).unwrap();
    let m = out.iter().sum::<f64>() / out.len() as f64;
    let pg = PolyaGamma::new(1.0, 2.0).unwrap();
    let score = (m - pg.mean()) / (pg.variance() / out.len() as f64).sqrt();
    assert!(score.abs() < 5.0, "{score}");
}

#[test]
fn infinite_tilt_gives_zero_and_huge_tilt_is_tiny() {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let pg = PolyaGamma::new(2.0, f64::INFINITY).unwrap();
    assert_eq!(pg.sample(&mut rng), 0.0);
    for &b in &[0.3, 1.0, 2.5, 7.0] {
        let pg = PolyaGamma::new(b, 1e300).unwrap();
        let x = pg.sample(&mut rng);
        assert!(x > 0.0 && x < 1e-290, "b={b}: {x}");
    }
}

#[test]
fn huge_shapes_do_not_hang() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    for &(b, z) in &[
        (1e7, 0.0),
        (1e12, 3.0),
        (1e300, 0.0),
        (1e300, 1e300),
        (5e-324, 1.0),
    ] {
        let pg = PolyaGamma::new(b, z).unwrap();
        let x = pg.sample(&mut rng);
        assert!(x.is_finite() && x >= 0.0, "b={b} z={z}: {x}");
        if b > 1e6 && b < 1e299 {
            assert!(
                (x - pg.mean()).abs() < 10.0 * pg.variance().sqrt(),
                "b={b}: {x}"
            );
        }
    }
    let shape = PolyaGammaShape::new(2000.0).unwrap();
    let x = shape.sample_with_tilt(&mut rng, 3.0).unwrap();
    let pg = PolyaGamma::new(2000.0, 3.0).unwrap();
    assert!((x - pg.mean()).abs() < 10.0 * pg.variance().sqrt());
}
