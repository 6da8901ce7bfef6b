//! Natural-parameter algebra: cavity then inclusion returns the original, clipping, damping.

use expfam::{
    DiagGaussianNatural, Dirichlet, ExpFamError, ExponentialFamily, GaussianNatural, MvGaussian,
    NaturalParameters,
};
use nalgebra::{DMatrix, DVector};
use proptest::prelude::*;

fn gaussian(d: usize, seed: u64) -> MvGaussian {
    use rand::SeedableRng;
    use rand_distr::{Distribution, StandardNormal};
    let mut rng = rand::rngs::ChaCha20Rng::seed_from_u64(seed);
    let b = DMatrix::from_fn(d, d, |_, _| -> f64 { StandardNormal.sample(&mut rng) });
    let m = DVector::from_fn(d, |_, _| -> f64 { StandardNormal.sample(&mut rng) });
    MvGaussian::new(m, &b * b.transpose() + DMatrix::identity(d, d)).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// q / f * f = q, with the cavity a proper Gaussian, for a factor that is a fraction of q
    /// (as in SEP, where the shared factor is q's likelihood part divided by N).
    #[test]
    fn cavity_then_inclusion_full(seed in 0u64..10_000, d in 1usize..6, frac in 0.0f64..0.99) {
        let q = gaussian(d, seed).natural();
        let f = q.scale(frac);
        let cavity = q.try_sub(&f).unwrap();
        prop_assert!(cavity.is_proper());
        let back = cavity.try_add(&f).unwrap();
        let err = back.try_sub(&q).unwrap().l2_norm();
        prop_assert!(err <= 1e-12 * (1.0 + q.l2_norm()), "err={err:e}");
    }

    #[test]
    fn cavity_then_inclusion_diag(m in prop::collection::vec(-5.0f64..5.0, 1..6), frac in 0.0f64..0.99) {
        let d = m.len();
        let var = DVector::from_fn(d, |i, _| 0.5 + i as f64);
        let q = DiagGaussianNatural::from_moments(&DVector::from_vec(m), &var).unwrap();
        let f = q.scale(frac);
        let cavity = q.try_sub(&f).unwrap();
        prop_assert!(cavity.is_proper());
        let back = cavity.try_add(&f).unwrap();
        prop_assert!(back.try_sub(&q).unwrap().l2_norm() <= 1e-12 * (1.0 + q.l2_norm()));
    }

    /// Clipping: never longer than C, unchanged when short enough, direction preserved.
    #[test]
    fn clipping(v in prop::collection::vec(-100.0f64..100.0, 1..20), c in 0.01f64..50.0) {
        let x = DVector::from_vec(v);
        let out = x.clip_to_norm(c).unwrap();
        prop_assert!(out.value.l2_norm() <= c * (1.0 + 1e-14));
        prop_assert_eq!(out.was_clipped, x.l2_norm() > c);
        if !out.was_clipped {
            prop_assert_eq!(&out.value, &x);
        } else {
            // Same direction: x = k * value with k > 0.
            let k = x.l2_norm() / out.value.l2_norm();
            prop_assert!((&out.value * k - &x).amax() <= 1e-12 * x.amax());
        }
    }

    /// The damped step is the convex combination, and stays in a convex natural parameter space.
    #[test]
    fn damped_interpolation(a in prop::collection::vec(0.01f64..10.0, 3), b in prop::collection::vec(0.01f64..10.0, 3), rho in 0.0f64..=1.0) {
        let la = Dirichlet::new(a).unwrap().natural();
        let lb = Dirichlet::new(b).unwrap().natural();
        let mixed = la.damped_toward(&lb, rho).unwrap();
        for i in 0..3 {
            let want = (1.0 - rho) * la[i] + rho * lb[i];
            prop_assert!((mixed[i] - want).abs() <= 1e-14 * (1.0 + want.abs()));
        }
        prop_assert!(Dirichlet::from_natural(&mixed).is_ok());
    }
}

#[test]
fn full_gaussian_clip_uses_frobenius_norm() {
    let q = GaussianNatural::from_precision(
        DVector::from_vec(vec![3.0, 0.0]),
        DMatrix::from_row_slice(2, 2, &[8.0, 0.0, 0.0, 0.0]),
    )
    .unwrap();
    // eta1 = (3, 0), eta2 = diag(-4, 0): norm sqrt(9 + 16) = 5.
    assert!((q.l2_norm() - 5.0).abs() < 1e-15);
    let c = q.clip_to_norm(1.0).unwrap();
    assert!(c.was_clipped);
    assert!((c.value.eta1()[0] - 0.6).abs() < 1e-15);
    assert!((c.value.eta2()[(0, 0)] + 0.8).abs() < 1e-15);
}

#[test]
fn improper_cavity_is_a_typed_error() {
    let q = gaussian(3, 7).natural();
    let err = q
        .try_sub(&q.scale(1.5))
        .unwrap()
        .check_proper()
        .unwrap_err();
    assert_eq!(err, ExpFamError::NotPositiveDefinite { name: "precision" });
    let dq = DiagGaussianNatural::from_moments(&DVector::zeros(2), &DVector::from_element(2, 1.0))
        .unwrap();
    assert!(matches!(
        dq.try_sub(&dq).unwrap().check_proper().unwrap_err(),
        ExpFamError::NotPositiveDefinite { .. }
    ));
    // Dimension mismatch.
    assert!(matches!(
        q.try_add(&GaussianNatural::zeros(2)).unwrap_err(),
        ExpFamError::DimensionMismatch { .. }
    ));
}

#[test]
fn sep_update_round_trip() {
    // theta = theta0 + N theta_f; the refreshed factor (theta - theta0) / N recovers theta_f.
    let theta0 = gaussian(2, 1).natural();
    let theta_f = gaussian(2, 2).natural().scale(0.01);
    let n = 1000.0;
    let theta = theta0.try_add(&theta_f.scale(n)).unwrap();
    let refreshed = theta.try_sub(&theta0).unwrap().scale(1.0 / n);
    assert!(refreshed.try_sub(&theta_f).unwrap().l2_norm() < 1e-13);
    assert!(theta.is_proper());
}
