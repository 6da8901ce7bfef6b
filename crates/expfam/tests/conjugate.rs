//! Conjugate updates agree with the textbook closed forms.

use expfam::*;
use nalgebra::{DMatrix, DVector};

#[test]
fn gaussian_known_precision_matches_closed_form() {
    // Prior N(m0, S0), n observations with noise covariance R: posterior precision S0^-1 + n R^-1,
    // mean = S_post (S0^-1 m0 + R^-1 sum_x).
    let m0 = DVector::from_vec(vec![1.0, -1.0]);
    let s0 = DMatrix::from_row_slice(2, 2, &[2.0, 0.5, 0.5, 1.0]);
    let r_prec = DMatrix::from_row_slice(2, 2, &[4.0, 1.0, 1.0, 3.0]);
    let sum_x = DVector::from_vec(vec![3.0, 0.5]);
    let n = 5.0;
    let prior = GaussianNatural::from_moments(m0.clone(), s0.clone()).unwrap();
    let post = gaussian_known_precision_posterior(&prior, &r_prec, n, &sum_x).unwrap();
    let q = post.to_moments().unwrap();
    let p0 = s0.clone().try_inverse().unwrap();
    let s_post = (&p0 + &r_prec * n).try_inverse().unwrap();
    let m_post = &s_post * (&p0 * &m0 + &r_prec * &sum_x);
    assert!((q.cov() - &s_post).amax() < 1e-13);
    assert!((q.mean() - &m_post).amax() < 1e-13);

    let dprior =
        DiagGaussianNatural::from_moments(&m0, &DVector::from_vec(vec![2.0, 1.0])).unwrap();
    let dpost = diag_gaussian_known_precision_posterior(
        &dprior,
        &DVector::from_vec(vec![4.0, 3.0]),
        n,
        &sum_x,
    )
    .unwrap()
    .to_moments()
    .unwrap();
    let v0 = 1.0 / (0.5 + 20.0);
    assert!((dpost.var()[0] - v0).abs() < 1e-15);
    assert!((dpost.mean()[0] - v0 * (0.5 * 1.0 + 4.0 * 3.0)).abs() < 1e-14);
}

#[test]
fn blr_precision_update_000_eq_40() {
    // a_N = a0 + d/2, b_N = b0 + (mu^T mu + tr Sigma)/2.
    let q = MvGaussian::new(
        DVector::from_vec(vec![1.0, 2.0, 2.0]),
        DMatrix::from_diagonal(&DVector::from_vec(vec![0.5, 0.25, 0.25])),
    )
    .unwrap();
    let prior = Gamma::new(1e-2, 1e-4).unwrap();
    let post = gamma_precision_posterior_from_gaussian(&prior, &q).unwrap();
    assert!((post.shape() - (1e-2 + 1.5)).abs() < 1e-15);
    assert!((post.rate() - (1e-4 + 0.5 * (9.0 + 1.0))).abs() < 1e-15);
    // E[alpha] and E[ln alpha] as BLR uses them.
    assert!((post.mean() - post.shape() / post.rate()).abs() < 1e-15);
    let want_log = digamma(post.shape()).unwrap() - post.rate().ln();
    assert!((post.expected_log() - want_log).abs() < 1e-15);
    assert!(gamma_precision_posterior(&prior, -1.0, 1.0).is_err());
    assert!(gamma_precision_posterior(&prior, 1.0, f64::NAN).is_err());
}
