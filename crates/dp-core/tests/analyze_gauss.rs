//! Analyze-Gauss: symmetric noise of the declared variance, positive-definite projection with a
//! floor, and the count of raised eigenvalues.

use dp_core::{AnalyzeGauss, add_symmetric_noise, project_to_positive_definite};
use nalgebra::{DMatrix, DVector, SymmetricEigen};
use rand::SeedableRng;
use rand::rngs::ChaCha20Rng;

/// Wilson-Hilferty: a chi-square(k) variate `t` mapped to an approximately standard normal score.
fn chi_square_z(t: f64, k: f64) -> f64 {
    let h = 2.0 / (9.0 * k);
    ((t / k).cbrt() - (1.0 - h)) / h.sqrt()
}

/// Per-entry noise variance: 3000 draws of a 6 x 6 noise matrix with std 0.7. For each of the 21
/// free entries, `sum z^2 / s^2 ~ chi2(3000)`; each is tested two-sided at 1e-7 (|z| < 5.33),
/// 21 tests + the pooled one: family-wise false-alarm rate < 3e-6. The lower triangle must equal
/// the upper exactly (it is a mirror, not fresh noise).
#[test]
fn per_entry_noise_variance_passes_chi_square() {
    let (d, draws, std) = (6usize, 3000usize, 0.7);
    let mut rng = ChaCha20Rng::seed_from_u64(2024);
    let mut sums = DMatrix::<f64>::zeros(d, d);
    for _ in 0..draws {
        let mut m = DMatrix::<f64>::zeros(d, d);
        add_symmetric_noise(&mut m, std, &mut rng).unwrap();
        assert_eq!(m, m.transpose());
        sums += m.map(|v| v * v);
    }
    let mut pooled = 0.0;
    for j in 0..d {
        for i in 0..=j {
            let t = sums[(i, j)] / (std * std);
            pooled += t;
            let z = chi_square_z(t, draws as f64);
            assert!(z.abs() < 5.33, "entry ({i},{j}): chi-square z = {z}");
        }
    }
    let k = (draws * d * (d + 1) / 2) as f64;
    let z = chi_square_z(pooled, k);
    assert!(z.abs() < 5.33, "pooled chi-square z = {z}");
    // power check: the same statistic under a wrong declared std (10% off) is far out
    assert!(chi_square_z(pooled * 1.21, k).abs() > 20.0);
}

/// Analyze-Gauss output is exactly symmetric and positive definite with every eigenvalue at or
/// above the floor (up to rounding of 1e-12 relative), eigenvalues above the floor are kept, and
/// the reported count equals the number of eigenvalues that were below the floor.
#[test]
fn projection_is_symmetric_positive_definite_and_respects_the_floor() {
    let mut rng = ChaCha20Rng::seed_from_u64(7);
    for (trial, &(d, std, floor)) in [
        (5usize, 1.0, 1e-3),
        (20, 0.5, 1e-6),
        (40, 2.0, 0.1),
        (3, 1e-3, 1e-2),
    ]
    .iter()
    .enumerate()
    {
        let base = DMatrix::<f64>::identity(d, d) * 0.05;
        let mut noised = base.clone();
        add_symmetric_noise(&mut noised, std, &mut rng).unwrap();
        let before = SymmetricEigen::new(noised.clone()).eigenvalues;
        let below = before.iter().filter(|&&l| l < floor).count();
        let mut projected = noised.clone();
        let report = project_to_positive_definite(&mut projected, floor).unwrap();
        assert_eq!(report.eigenvalues_raised, below, "trial {trial}");
        assert_eq!(projected, projected.transpose());
        assert!(
            projected.clone().cholesky().is_some(),
            "trial {trial}: not PD"
        );
        let scale = noised.norm().max(floor);
        assert_spectrum_is_floored(&before, &projected, floor, scale, &format!("trial {trial}"));
    }
}

/// The struct API: noise then projection, and refusal of a non-positive floor.
#[test]
fn analyze_gauss_perturb_reports_raised_eigenvalues() {
    let ag = AnalyzeGauss::new(1.0, 1e-4).unwrap();
    assert!(AnalyzeGauss::new(1.0, 0.0).is_err());
    assert!(AnalyzeGauss::new(f64::NAN, 1.0).is_err());
    let mut rng = ChaCha20Rng::seed_from_u64(9);
    let mut m = DMatrix::<f64>::zeros(10, 10);
    let report = ag.perturb(&mut m, &mut rng).unwrap();
    // a 10 x 10 GOE matrix has about half its eigenvalues negative
    assert!(report.eigenvalues_raised >= 1 && report.eigenvalues_raised <= 10);
    assert!(report.smallest_eigenvalue_before.unwrap() < 0.0);
    assert!(m.cholesky().is_some());
}

/// Above the faer threshold (d >= 48; here d = 150 and 300): output exactly symmetric,
/// Cholesky succeeds, every eigenvalue at or above the floor up to `1e-12 ||A||_F`, eigenvalues
/// above the floor kept (to `1e-10 ||A||_F`), and the raised count equals the number of
/// eigenvalues below the floor by an independent eigensolver (nalgebra's).
#[test]
fn projection_above_the_faer_threshold_is_exact_in_count_and_respects_the_floor() {
    let mut rng = ChaCha20Rng::seed_from_u64(4146);
    for &(d, floor) in &[(150usize, 1e-6), (300, 0.5)] {
        let mut noised = DMatrix::<f64>::identity(d, d) * 0.01;
        add_symmetric_noise(&mut noised, 1.0, &mut rng).unwrap();
        let before = SymmetricEigen::new(noised.clone()).eigenvalues;
        let below = before.iter().filter(|&&l| l < floor).count();
        let mut projected = noised.clone();
        let report = project_to_positive_definite(&mut projected, floor).unwrap();
        assert_eq!(report.eigenvalues_raised, below, "d = {d}");
        assert!(
            below > 0 && below < d,
            "d = {d}: both kinds of eigenvalue present"
        );
        assert_eq!(projected, projected.transpose(), "d = {d}");
        assert!(projected.clone().cholesky().is_some(), "d = {d}: not PD");
        let scale = noised.norm();
        assert_spectrum_is_floored(&before, &projected, floor, scale, &format!("d = {d}"));
    }
}

/// The projection's spectrum is `max(lambda, floor)` of the input's `before`: every eigenvalue at
/// or above the floor up to `1e-12 scale`, and equal to the floored input eigenvalue to
/// `1e-10 scale` (sorted, by nalgebra's eigensolver).
fn assert_spectrum_is_floored(
    before: &DVector<f64>,
    projected: &DMatrix<f64>,
    floor: f64,
    scale: f64,
    case: &str,
) {
    let mut after: Vec<f64> = SymmetricEigen::new(projected.clone())
        .eigenvalues
        .iter()
        .copied()
        .collect();
    after.sort_by(f64::total_cmp);
    let mut expected: Vec<f64> = before.iter().map(|&l| l.max(floor)).collect();
    expected.sort_by(f64::total_cmp);
    for (a, e) in after.iter().zip(&expected) {
        assert!(
            *a >= floor - 1e-12 * scale,
            "{case}: eigenvalue {a} below floor {floor}"
        );
        assert!((a - e).abs() <= 1e-10 * scale, "{case}: {a} vs {e}");
    }
}
