//! natural -> mean -> natural round trips to 1e-10 (the bar), for every family.

mod common;

use common::{ROUND_TRIP_TOL, max_rel};
use expfam::{
    Bernoulli, Beta, Categorical, DiagGaussian, Dirichlet, ExponentialFamily, Gamma, Gig,
    MvGaussian, NaturalParameters,
};
use nalgebra::{DMatrix, DVector};
use proptest::prelude::*;

fn flat_round_trip<F>(eta: DVector<f64>) -> Result<(), TestCaseError>
where
    F: ExponentialFamily<Natural = DVector<f64>, Mean = DVector<f64>>,
{
    let member = F::from_natural(&eta).expect("valid");
    let back = F::from_mean_parameters(&member.mean_parameters()).expect("invertible");
    let err = max_rel(&back.natural(), &eta);
    prop_assert!(
        err < ROUND_TRIP_TOL,
        "eta={eta:?} back={:?} err={err:e}",
        back.natural()
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn dirichlet(alpha in prop::collection::vec(0.01f64..200.0, 2..8)) {
        flat_round_trip::<Dirichlet>(DVector::from_vec(alpha).add_scalar(-1.0))?;
    }

    #[test]
    fn gamma(shape in 0.01f64..1e4, rate in 1e-3f64..1e3) {
        flat_round_trip::<Gamma>(DVector::from_vec(vec![shape - 1.0, -rate]))?;
    }

    #[test]
    fn beta(a in 0.01f64..200.0, b in 0.01f64..200.0) {
        flat_round_trip::<Beta>(DVector::from_vec(vec![a - 1.0, b - 1.0]))?;
    }

    #[test]
    fn bernoulli(logit in -12.0f64..12.0) {
        flat_round_trip::<Bernoulli>(DVector::from_element(1, logit))?;
    }

    #[test]
    fn categorical(eta in prop::collection::vec(-10.0f64..10.0, 1..8)) {
        flat_round_trip::<Categorical>(DVector::from_vec(eta))?;
    }

    #[test]
    fn gig(p in -4.0f64..4.0, ln_a in -3.0f64..3.0, ln_b in -3.0f64..3.0) {
        flat_round_trip::<Gig>(DVector::from_vec(vec![p - 1.0, -0.5 * ln_a.exp(), -0.5 * ln_b.exp()]))?;
    }

    #[test]
    fn diag_gaussian(mean in prop::collection::vec(-50.0f64..50.0, 1..6), seed in 0u64..1000) {
        let d = mean.len();
        let var = DVector::from_fn(d, |i, _| 0.01 + ((seed as f64 + 1.0) * (i as f64 + 1.3)).sin().abs() * 10.0);
        let g = DiagGaussian::new(DVector::from_vec(mean), var).unwrap();
        let eta = g.natural();
        let back = DiagGaussian::from_mean_parameters(&DiagGaussian::from_natural(&eta).unwrap().mean_parameters()).unwrap();
        let diff = back.natural().try_sub(&eta).unwrap().l2_norm();
        prop_assert!(diff < ROUND_TRIP_TOL * (1.0 + eta.l2_norm()), "diff={diff:e}");
    }

    #[test]
    fn full_gaussian(seed in 0u64..1000, d in 1usize..7) {
        use rand::SeedableRng;
        use rand_distr::{Distribution, StandardNormal};
        let mut rng = rand::rngs::ChaCha20Rng::seed_from_u64(seed);
        let b = DMatrix::from_fn(d, d, |_, _| -> f64 { StandardNormal.sample(&mut rng) });
        let m = DVector::from_fn(d, |_, _| -> f64 { StandardNormal.sample(&mut rng) });
        let g = MvGaussian::new(m, &b * b.transpose() + DMatrix::identity(d, d) * 0.2).unwrap();
        let eta = g.natural();
        let back = MvGaussian::from_mean_parameters(&MvGaussian::from_natural(&eta).unwrap().mean_parameters()).unwrap();
        let diff = back.natural().try_sub(&eta).unwrap().l2_norm();
        prop_assert!(diff < ROUND_TRIP_TOL * (1.0 + eta.l2_norm()), "diff={diff:e}");
    }
}

#[test]
fn gig_round_trip_at_extremes() {
    for &(p, a, b) in &[
        (0.0, 1e-6, 1e-6),
        (0.0, 1e4, 1e4),
        (0.0, 2.0, 1e-3),
        (0.0, 0.002, 0.5),
        (-3.0, 0.5, 40.0),
        (12.0, 2.0, 50.0),
    ] {
        let g = Gig::new(p, a, b).unwrap();
        let back = Gig::from_mean_parameters(&g.mean_parameters()).unwrap();
        let err = max_rel(&back.natural(), &g.natural());
        assert!(
            err < ROUND_TRIP_TOL,
            "({p},{a},{b}): {:?} err {err:e}",
            back.natural()
        );
    }
}

/// Large |p| with small sqrt(ab): the moments hardly depend on one of a, b (d ln E[x] / d ln a is
/// 3.6e-4 at (-20, 5, 0.1)), so the inversion is ill-conditioned and recovers that parameter only
/// to about 1e-8; this pins the documented behaviour.
#[test]
fn gig_round_trip_ill_conditioned() {
    for &(p, a, b) in &[(-20.0, 5.0, 0.1), (30.0, 0.1, 5.0), (-7.0, 1.0, 0.098)] {
        let g = Gig::new(p, a, b).unwrap();
        let back = Gig::from_mean_parameters(&g.mean_parameters()).unwrap();
        let err = max_rel(&back.natural(), &g.natural());
        assert!(err < 1e-7, "({p},{a},{b}): err {err:e}");
        let moments = max_rel(&back.mean_parameters(), &g.mean_parameters());
        assert!(moments < 1e-13, "moments must still match: {moments:e}");
    }
}

#[test]
fn gaussian_round_trip_1000_dimensional() {
    let d = 60; // debug-mode friendly; the benchmark exercises d = 1000
    let m = DVector::from_fn(d, |i, _| (i as f64).sin());
    let s = DMatrix::from_fn(d, d, |i, j| 0.5f64.powi((i as i32 - j as i32).abs()));
    let g = MvGaussian::new(m, s).unwrap();
    let eta = g.natural();
    let back = MvGaussian::from_natural(&eta).unwrap();
    assert!((back.mean() - g.mean()).amax() < 1e-12);
    assert!((back.cov() - g.cov()).amax() < 1e-12);
}
