//! Conjugate updates agree with the textbook closed forms.

use expfam::*;
use nalgebra::{DMatrix, DVector};

#[test]
fn diag_gaussian_known_precision_matches_closed_form() {
    // Per coordinate: posterior precision 1/v0 + n r, mean = v_post (m0 / v0 + r sum_x).
    let m0 = DVector::from_vec(vec![1.0, -1.0]);
    let sum_x = DVector::from_vec(vec![3.0, 0.5]);
    let n = 5.0;
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
    let v1 = 1.0 / (1.0 + 15.0);
    assert!((dpost.var()[1] - v1).abs() < 1e-15);
    assert!((dpost.mean()[1] - v1 * (-1.0 + 3.0 * 0.5)).abs() < 1e-14);
    // Bad input: a negative count, a non-positive noise precision, a wrong length, NaN sums.
    let r = DVector::from_vec(vec![4.0, 3.0]);
    assert!(diag_gaussian_known_precision_posterior(&dprior, &r, -1.0, &sum_x).is_err());
    let zero = DVector::from_vec(vec![4.0, 0.0]);
    assert!(diag_gaussian_known_precision_posterior(&dprior, &zero, n, &sum_x).is_err());
    assert!(diag_gaussian_known_precision_posterior(&dprior, &r, n, &DVector::zeros(3)).is_err());
    let nan = DVector::from_vec(vec![f64::NAN, 0.0]);
    assert!(diag_gaussian_known_precision_posterior(&dprior, &r, n, &nan).is_err());
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
}
