//! grad A(eta) equals the mean parameters E[T(x)], checked by finite differences of A.

mod common;

use common::{FD_TOL, fd_gradient, max_rel};
use expfam::{
    Bernoulli, Beta, Categorical, DiagGaussian, Dirichlet, ExponentialFamily, Gamma,
    GaussianNatural, Gig, MvGaussian,
};
use nalgebra::{DMatrix, DVector};
use proptest::prelude::*;

/// FD check for families whose natural parameters are a flat `DVector`.
fn check_flat<F>(eta: DVector<f64>, rel_step: f64) -> Result<(), TestCaseError>
where
    F: ExponentialFamily<Natural = DVector<f64>, Mean = DVector<f64>>,
{
    let member = F::from_natural(&eta).expect("valid");
    let step = eta.map(|e| rel_step * (1.0 + e.abs()));
    let a = |e: &DVector<f64>| {
        F::from_natural(e)
            .expect("step stays in domain")
            .log_partition()
    };
    let fd = fd_gradient(&eta, &step, &a);
    let mu = member.mean_parameters();
    let err = max_rel(&fd, &mu);
    prop_assert!(err < FD_TOL, "eta={eta:?} fd={fd:?} mu={mu:?} err={err:e}");
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn dirichlet(alpha in prop::collection::vec(0.2f64..40.0, 2..6)) {
        let eta = DVector::from_vec(alpha).add_scalar(-1.0);
        check_flat::<Dirichlet>(eta, 1e-4)?;
    }

    #[test]
    fn gamma(shape in 0.2f64..80.0, rate in 0.05f64..50.0) {
        check_flat::<Gamma>(DVector::from_vec(vec![shape - 1.0, -rate]), 1e-4)?;
    }

    #[test]
    fn beta(a in 0.2f64..40.0, b in 0.2f64..40.0) {
        check_flat::<Beta>(DVector::from_vec(vec![a - 1.0, b - 1.0]), 1e-4)?;
    }

    #[test]
    fn bernoulli(logit in -20.0f64..20.0) {
        check_flat::<Bernoulli>(DVector::from_element(1, logit), 1e-3)?;
    }

    #[test]
    fn categorical(eta in prop::collection::vec(-6.0f64..6.0, 1..6)) {
        check_flat::<Categorical>(DVector::from_vec(eta), 1e-3)?;
    }

    #[test]
    fn gig(p in -6.0f64..6.0, ln_a in -4.0f64..4.0, ln_b in -4.0f64..4.0) {
        let eta = DVector::from_vec(vec![p - 1.0, -0.5 * ln_a.exp(), -0.5 * ln_b.exp()]);
        check_flat::<Gig>(eta, 1e-4)?;
    }

    #[test]
    fn diag_gaussian(mean in prop::collection::vec(-5.0f64..5.0, 3), var in prop::collection::vec(0.1f64..10.0, 3)) {
        let g = DiagGaussian::new(DVector::from_vec(mean), DVector::from_vec(var)).unwrap();
        let eta = g.natural();
        // Flatten (eta1, eta2) and rebuild for the finite differences.
        let flat = DVector::from_iterator(6, eta.eta1().iter().chain(eta.eta2().iter()).cloned());
        let a = |e: &DVector<f64>| {
            let nat = expfam::DiagGaussianNatural::new(e.rows(0, 3).into(), e.rows(3, 3).into()).unwrap();
            DiagGaussian::from_natural(&nat).unwrap().log_partition()
        };
        let step = flat.map(|e| 1e-4 * e.abs().max(1e-2));
        let fd = fd_gradient(&flat, &step, &a);
        let mu = g.mean_parameters();
        let want = DVector::from_iterator(6, mu.first.iter().chain(mu.second.iter()).cloned());
        let err = max_rel(&fd, &want);
        prop_assert!(err < FD_TOL, "err={err:e}");
    }

    #[test]
    fn full_gaussian(seed in 0u64..1000) {
        let d = 3;
        let g = random_gaussian(d, seed);
        let eta = g.natural();
        let mu = g.mean_parameters();
        let a = |e1: &DVector<f64>, e2: &DMatrix<f64>| {
            MvGaussian::from_natural(&GaussianNatural::new(e1.clone(), e2.clone()).unwrap())
                .unwrap()
                .log_partition()
        };
        // d A / d eta1
        let e2 = eta.eta2().clone();
        let step = DVector::from_element(d, 1e-4);
        let fd1 = fd_gradient(eta.eta1(), &step, &|e1| a(e1, &e2));
        prop_assert!(max_rel(&fd1, &mu.first) < FD_TOL);
        // d A / d eta2_ij along the symmetric direction E_ij + E_ji equals 2 E[x_i x_j] (i != j).
        for i in 0..d {
            for j in 0..=i {
                let h = 1e-5;
                let at = |k: f64| {
                    let mut m = eta.eta2().clone();
                    m[(i, j)] += k * h;
                    if i != j { m[(j, i)] += k * h; }
                    a(eta.eta1(), &m)
                };
                let fd = (-at(2.0) + 8.0 * at(1.0) - 8.0 * at(-1.0) + at(-2.0)) / (12.0 * h);
                let want = if i == j { mu.second[(i, i)] } else { 2.0 * mu.second[(i, j)] };
                prop_assert!((fd - want).abs() < FD_TOL * (1.0 + want.abs()) * 10.0, "({i},{j}) fd={fd} want={want}");
            }
        }
    }
}

/// A reproducible, well-conditioned Gaussian: `S = B B^T + 0.5 I`.
fn random_gaussian(d: usize, seed: u64) -> MvGaussian {
    use rand::SeedableRng;
    use rand_distr::{Distribution, StandardNormal};
    let mut rng = rand::rngs::ChaCha20Rng::seed_from_u64(seed);
    let b = DMatrix::from_fn(d, d, |_, _| -> f64 { StandardNormal.sample(&mut rng) });
    let m = DVector::from_fn(d, |_, _| -> f64 { StandardNormal.sample(&mut rng) });
    MvGaussian::new(m, &b * b.transpose() + DMatrix::identity(d, d) * 0.5).unwrap()
}
