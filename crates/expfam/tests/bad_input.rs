//! Bad input gives typed errors: NaN, non-positive concentrations, non-PD precisions, mismatched
//! dimensions, special-function poles. Never a panic, a hang or a NaN.

use expfam::*;
use nalgebra::{DMatrix, DVector};

#[test]
fn nan_and_infinite_parameters() {
    assert!(matches!(
        Dirichlet::new(vec![1.0, f64::NAN]),
        Err(ExpFamError::NonFinite { .. })
    ));
    assert!(matches!(
        Dirichlet::new(vec![1.0, f64::INFINITY]),
        Err(ExpFamError::NonFinite { .. })
    ));
    assert!(matches!(
        Gamma::new(f64::NAN, 1.0),
        Err(ExpFamError::NonFinite { .. })
    ));
    assert!(matches!(
        Beta::new(1.0, f64::NAN),
        Err(ExpFamError::NonFinite { .. })
    ));
    assert!(matches!(
        Bernoulli::new(f64::NAN),
        Err(ExpFamError::NonFinite { .. })
    ));
    assert!(matches!(
        Categorical::new(vec![1.0, f64::NAN]),
        Err(ExpFamError::NonFinite { .. })
    ));
    assert!(matches!(
        Gig::new(f64::NAN, 1.0, 1.0),
        Err(ExpFamError::NonFinite { .. })
    ));
    assert!(MvGaussian::new(DVector::from_vec(vec![f64::NAN]), DMatrix::identity(1, 1)).is_err());
    assert!(DiagGaussian::new(DVector::zeros(1), DVector::from_vec(vec![f64::NAN])).is_err());
    assert!(
        GaussianNatural::new(DVector::zeros(1), DMatrix::from_element(1, 1, f64::NAN)).is_err()
    );
}

#[test]
fn non_positive_parameters() {
    for bad in [0.0, -1.0, -1e-300] {
        assert!(matches!(
            Dirichlet::new(vec![1.0, bad]),
            Err(ExpFamError::OutOfDomain { .. })
        ));
        assert!(Gamma::new(bad, 1.0).is_err());
        assert!(Gamma::new(1.0, bad).is_err());
        assert!(Beta::new(bad, 1.0).is_err());
        assert!(Gig::new(0.0, bad, 1.0).is_err());
        assert!(Gig::new(0.0, 1.0, bad).is_err());
        assert!(Categorical::new(vec![1.0, bad]).is_err());
        assert!(dirichlet_expectation_into(&[1.0, bad], &mut [0.0; 2]).is_err());
    }
    assert!(Bernoulli::new(0.0).is_err());
    assert!(Bernoulli::new(1.0).is_err());
    assert!(matches!(
        Dirichlet::new(vec![1.0]),
        Err(ExpFamError::TooShort { .. })
    ));
    assert!(matches!(
        Dirichlet::new(Vec::<f64>::new()),
        Err(ExpFamError::TooShort { .. })
    ));
    // Natural parameters outside the natural parameter space.
    assert!(Dirichlet::from_natural(&DVector::from_vec(vec![-1.0, 0.0])).is_err());
    assert!(Gamma::from_natural(&DVector::from_vec(vec![0.0, 1.0])).is_err());
    assert!(Gig::from_natural(&DVector::from_vec(vec![0.0, 0.5, -1.0])).is_err());
}

#[test]
fn unattainable_mean_parameters() {
    // E[ln theta] must satisfy sum exp < 1; Gamma needs ln E[x] > E[ln x]; GIG likewise (Jensen).
    assert!(Dirichlet::from_mean_parameters(&DVector::from_vec(vec![-0.1, -0.1])).is_err());
    assert!(Dirichlet::from_mean_parameters(&DVector::from_vec(vec![0.5, -3.0])).is_err());
    assert!(Gamma::from_mean_parameters(&DVector::from_vec(vec![1.0, 1.0])).is_err());
    assert!(Gig::from_mean_parameters(&DVector::from_vec(vec![0.0, 1.0, 1.0])).is_err());
    assert!(Categorical::from_mean_parameters(&DVector::from_vec(vec![0.6, 0.5])).is_err());
    let not_pd = GaussianMean {
        first: DVector::from_vec(vec![1.0]),
        second: DMatrix::from_element(1, 1, 0.5),
    };
    assert!(matches!(
        MvGaussian::from_mean_parameters(&not_pd),
        Err(ExpFamError::NotPositiveDefinite { .. })
    ));
}

#[test]
fn precision_not_positive_definite() {
    let indefinite = DMatrix::from_row_slice(2, 2, &[1.0, 2.0, 2.0, 1.0]);
    assert!(matches!(
        MvGaussian::new(DVector::zeros(2), indefinite.clone()),
        Err(ExpFamError::NotPositiveDefinite { name: "covariance" })
    ));
    let nat = GaussianNatural::from_precision(DVector::zeros(2), indefinite).unwrap();
    assert!(!nat.is_proper());
    assert!(matches!(
        MvGaussian::from_natural(&nat),
        Err(ExpFamError::NotPositiveDefinite { name: "precision" })
    ));
    let asym = DMatrix::from_row_slice(2, 2, &[1.0, 0.5, 0.0, 1.0]);
    assert!(matches!(
        MvGaussian::new(DVector::zeros(2), asym),
        Err(ExpFamError::NotSymmetric { .. })
    ));
    let dnat =
        DiagGaussianNatural::new(DVector::zeros(2), DVector::from_vec(vec![-1.0, 0.0])).unwrap();
    assert!(DiagGaussian::from_natural(&dnat).is_err());
}

#[test]
fn mismatched_dimensions() {
    assert!(matches!(
        MvGaussian::new(DVector::zeros(3), DMatrix::identity(2, 2)),
        Err(ExpFamError::DimensionMismatch { .. })
    ));
    assert!(DiagGaussian::new(DVector::zeros(3), DVector::from_element(2, 1.0)).is_err());
    assert!(Gamma::from_natural(&DVector::zeros(3)).is_err());
    assert!(Gig::from_mean_parameters(&DVector::zeros(2)).is_err());
    let d = Dirichlet::new(vec![1.0, 1.0]).unwrap();
    assert!(d.posterior(&[1.0, 2.0, 3.0]).is_err());
    assert!(d.posterior(&[1.0, -2.0]).is_err());
    assert!(dirichlet_expectation_into(&[1.0, 1.0, 1.0], &mut [0.0; 2]).is_err());
}

#[test]
fn special_function_domains() {
    assert!(digamma(f64::NEG_INFINITY).is_err());
    assert!(digamma(-1e308).is_err());
    assert!(digamma(-5.0).is_err());
    assert!(digamma(f64::NAN).is_err());
    assert!(ln_gamma(0.0).is_err());
    assert!(ln_gamma(-3.5).is_err());
    assert!(Gig::new(0.5, 1.0, 0.0).is_err());
}

#[test]
fn topic_matrix_bad_entries() {
    let mut lambda = DMatrix::from_element(3, 4, 0.5);
    lambda[(1, 2)] = 0.0;
    assert!(dirichlet_kl_rows_to_symmetric(&lambda, 0.5).is_err());
    lambda[(1, 2)] = f64::NAN;
    assert!(dirichlet_kl_rows_to_symmetric(&lambda, 0.5).is_err());
    lambda[(1, 2)] = f64::MAX;
    lambda[(1, 3)] = f64::MAX;
    assert!(dirichlet_kl_rows_to_symmetric(&lambda, 0.5).is_err());
    assert!(dirichlet_kl_rows_to_symmetric(&DMatrix::zeros(0, 3), 0.5).is_err());
    assert!(dirichlet_kl_rows_to_symmetric(&DMatrix::from_element(2, 2, 1.0), 0.0).is_err());
}
