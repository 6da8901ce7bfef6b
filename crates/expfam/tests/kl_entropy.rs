//! KL >= 0 with equality iff equal; entropy agrees with the generic identity; closed forms agree.

use expfam::{
    Bernoulli, Beta, Categorical, DiagGaussian, Dirichlet, Entropy, ExponentialFamily, Gamma, Gig,
    KlDivergence, MvGaussian,
};
use nalgebra::{DMatrix, DVector};
use proptest::prelude::*;

fn check<F: KlDivergence + PartialEqish>(p: &F, q: &F) -> Result<(), TestCaseError> {
    let kl_pq = p.kl_divergence(q).unwrap();
    let kl_pp = p.kl_divergence(p).unwrap();
    prop_assert!(kl_pq >= 0.0);
    prop_assert!(kl_pp.abs() < 1e-12, "KL(p||p) = {kl_pp}");
    if !p.same(q) {
        prop_assert!(kl_pq > 0.0, "distinct members must have KL > 0");
    }
    Ok(())
}

/// "Equal as distributions" for the iff part.
trait PartialEqish {
    fn same(&self, other: &Self) -> bool;
}
macro_rules! eqish {
    ($($t:ty),*) => { $(impl PartialEqish for $t { fn same(&self, o: &Self) -> bool { self == o } })* };
}
eqish!(
    Dirichlet,
    Gamma,
    Beta,
    Bernoulli,
    Categorical,
    DiagGaussian,
    Gig
);
impl PartialEqish for MvGaussian {
    fn same(&self, o: &Self) -> bool {
        self.mean() == o.mean() && self.cov() == o.cov()
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn dirichlet(a in prop::collection::vec(0.05f64..30.0, 3), b in prop::collection::vec(0.05f64..30.0, 3)) {
        check(&Dirichlet::new(a).unwrap(), &Dirichlet::new(b).unwrap())?;
    }

    #[test]
    fn gamma(a in 0.05f64..50.0, b in 0.05f64..50.0, c in 0.05f64..50.0, d in 0.05f64..50.0) {
        check(&Gamma::new(a, b).unwrap(), &Gamma::new(c, d).unwrap())?;
    }

    #[test]
    fn beta(a in 0.05f64..50.0, b in 0.05f64..50.0, c in 0.05f64..50.0, d in 0.05f64..50.0) {
        check(&Beta::new(a, b).unwrap(), &Beta::new(c, d).unwrap())?;
    }

    #[test]
    fn bernoulli(a in -10.0f64..10.0, b in -10.0f64..10.0) {
        check(&Bernoulli::from_logit(a).unwrap(), &Bernoulli::from_logit(b).unwrap())?;
    }

    #[test]
    fn categorical(a in prop::collection::vec(0.01f64..5.0, 4), b in prop::collection::vec(0.01f64..5.0, 4)) {
        check(&Categorical::new(a).unwrap(), &Categorical::new(b).unwrap())?;
    }

    #[test]
    fn gig(p in -4.0f64..4.0, a in 0.05f64..20.0, b in 0.05f64..20.0, q in -4.0f64..4.0, c in 0.05f64..20.0, d in 0.05f64..20.0) {
        check(&Gig::new(p, a, b).unwrap(), &Gig::new(q, c, d).unwrap())?;
    }

    #[test]
    fn diag_gaussian(m in prop::collection::vec(-5.0f64..5.0, 2), v in prop::collection::vec(0.1f64..5.0, 2), n in prop::collection::vec(-5.0f64..5.0, 2), w in prop::collection::vec(0.1f64..5.0, 2)) {
        let p = DiagGaussian::new(DVector::from_vec(m), DVector::from_vec(v)).unwrap();
        let q = DiagGaussian::new(DVector::from_vec(n), DVector::from_vec(w)).unwrap();
        check(&p, &q)?;
        // The diagonal Gaussian is a full Gaussian: the two KLs agree.
        let pf = MvGaussian::new(p.mean().clone(), DMatrix::from_diagonal(p.var())).unwrap();
        let qf = MvGaussian::new(q.mean().clone(), DMatrix::from_diagonal(q.var())).unwrap();
        let (a, b) = (p.kl_divergence(&q).unwrap(), pf.kl_divergence(&qf).unwrap());
        prop_assert!((a - b).abs() < 1e-10 * (1.0 + a), "{a} vs {b}");
        prop_assert!((p.entropy() - pf.entropy()).abs() < 1e-12 * (1.0 + p.entropy().abs()));
        // Same through the precision-factor representation of q.
        let qn = MvGaussian::from_natural(&qf.natural()).unwrap();
        let c = pf.kl_divergence(&qn).unwrap();
        prop_assert!((c - b).abs() < 1e-9 * (1.0 + b), "{c} vs {b}");
    }
}

#[test]
fn entropy_matches_generic_identity() {
    // H = A(eta) - <eta, E[T]> for the closed-form entropies.
    let g = Gamma::new(2.5, 0.7).unwrap();
    let h = g.log_partition() - g.natural().dot(&g.mean_parameters());
    assert!((g.entropy() - h).abs() < 1e-13);
    let b = Bernoulli::new(0.3).unwrap();
    let h = b.log_partition() - b.natural().dot(&b.mean_parameters());
    assert!((b.entropy() - h).abs() < 1e-15);
    let c = Categorical::new(vec![0.2, 0.3, 0.5]).unwrap();
    let h = c.log_partition() - c.natural().dot(&c.mean_parameters());
    assert!((c.entropy() - h).abs() < 1e-15);
    let m = MvGaussian::new(
        DVector::from_vec(vec![1.0, -1.0]),
        DMatrix::from_row_slice(2, 2, &[2.0, 0.3, 0.3, 1.0]),
    )
    .unwrap();
    let nat = m.natural();
    let mu = m.mean_parameters();
    let h =
        m.log_partition() - nat.eta1().dot(&mu.first) - nat.eta2().component_mul(&mu.second).sum();
    assert!((m.entropy() - h).abs() < 1e-13);
}

#[test]
fn mismatched_dimensions_are_errors() {
    let a = Dirichlet::new(vec![1.0, 2.0]).unwrap();
    let b = Dirichlet::new(vec![1.0, 2.0, 3.0]).unwrap();
    assert!(a.kl_divergence(&b).is_err());
    let p = MvGaussian::new(DVector::zeros(2), DMatrix::identity(2, 2)).unwrap();
    let q = MvGaussian::new(DVector::zeros(3), DMatrix::identity(3, 3)).unwrap();
    assert!(p.kl_divergence(&q).is_err());
}
