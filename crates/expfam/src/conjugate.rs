//! The conjugate updates the models use.
//!
//! - Dirichlet-categorical: [`Dirichlet::posterior`](crate::Dirichlet::posterior) for one vector.
//! - Gaussian mean with known noise precision (diagonal; dp-sep's Gibbs sampler), in natural
//!   parameters. (The full-covariance version, which no model used, was removed in issue 18.)
//! - Gamma on a precision: BLR's `q(alpha) = Gamma(a0 + d/2, b0 + (m^T m + tr S)/2)` (000 Eq. 39-40).

use crate::check;
use crate::error::Result;
use crate::families::diag_gaussian::DiagGaussianNatural;
use crate::families::gamma::Gamma;
use crate::families::gaussian::MvGaussian;
use nalgebra::DVector;

/// Posterior of a Gaussian mean `theta ~ prior` (independent coordinates) after `n` observations
/// `x_i ~ N(theta, diag(noise_precision)^-1)` with known precisions `noise_precision_j > 0`, given
/// `sum_x = sum_i x_i`: `eta1 += noise_precision * sum_x`, `eta2 += -n noise_precision / 2`
/// (the conditional of a component mean in dp-sep's mixture-of-Gaussians Gibbs sampler).
///
/// # Errors
/// [`ExpFamError::DimensionMismatch`](crate::ExpFamError::DimensionMismatch), [`ExpFamError::NonFinite`](crate::ExpFamError::NonFinite), [`ExpFamError::OutOfDomain`](crate::ExpFamError::OutOfDomain)
/// (`n < 0` or a noise precision `<= 0`), [`ExpFamError::NotPositiveDefinite`](crate::ExpFamError::NotPositiveDefinite) (a result that
/// is not proper).
///
/// # Example
/// ```
/// use expfam::{DiagGaussianNatural, diag_gaussian_known_precision_posterior};
/// use nalgebra::DVector;
/// let prior = DiagGaussianNatural::from_moments(&DVector::zeros(1), &DVector::from_element(1, 1.0)).unwrap();
/// let post = diag_gaussian_known_precision_posterior(
///     &prior, &DVector::from_element(1, 1.0), 3.0, &DVector::from_element(1, 6.0)).unwrap();
/// assert!((post.to_moments().unwrap().mean()[0] - 1.5).abs() < 1e-15); // 6 / (1 + 3)
/// assert!(diag_gaussian_known_precision_posterior(
///     &prior, &DVector::from_element(1, 0.0), 3.0, &DVector::from_element(1, 6.0)).is_err());
/// ```
pub fn diag_gaussian_known_precision_posterior(
    prior: &DiagGaussianNatural,
    noise_precision: &DVector<f64>,
    n: f64,
    sum_x: &DVector<f64>,
) -> Result<DiagGaussianNatural> {
    let d = prior.dim();
    check::non_negative("n", n)?;
    check::vector("sum_x", sum_x, d)?;
    check::same_len("noise precision", d, noise_precision.len())?;
    check::all_positive("noise precision", noise_precision.as_slice())?;
    let post = DiagGaussianNatural::new(
        prior.eta1() + noise_precision.component_mul(sum_x),
        prior.eta2() - noise_precision * (0.5 * n),
    )?;
    post.check_proper()?;
    Ok(post)
}

/// Gamma posterior of a precision `alpha` shared by `dim` Gaussian coordinates:
/// `Gamma(a0 + dim/2, b0 + expected_sum_sq/2)` where `expected_sum_sq = E[sum_i m_i^2]`.
///
/// This is BLR's `q(alpha) = Gamma(a_N, b_N)`, `a_N = a0 + d/2`, `b_N = b0 + (mu^T mu + tr Sigma)/2`
/// (000 Eq. 39-40); its `E[alpha] = a_N / b_N` feeds back into the prior precision of `q(m)`.
/// `expected_sum_sq` is `E[w^T w]`; [`gamma_precision_posterior_from_gaussian`] takes it from a
/// Gaussian `q(w)`, a caller with a better estimate (e.g. one that removes known noise from the
/// mean) passes its own.
///
/// # Errors
/// [`ExpFamError::NonFinite`](crate::ExpFamError::NonFinite) / [`ExpFamError::OutOfDomain`](crate::ExpFamError::OutOfDomain) for `dim < 0` or
/// `expected_sum_sq < 0`.
///
/// # Example
/// ```
/// use expfam::{Gamma, gamma_precision_posterior};
/// let post = gamma_precision_posterior(&Gamma::new(1.0, 1.0).unwrap(), 2.0, 4.0).unwrap();
/// assert_eq!((post.shape(), post.rate()), (2.0, 3.0)); // 1 + 2/2, 1 + 4/2
/// assert!(gamma_precision_posterior(&Gamma::new(1.0, 1.0).unwrap(), 2.0, -1.0).is_err());
/// ```
pub fn gamma_precision_posterior(prior: &Gamma, dim: f64, expected_sum_sq: f64) -> Result<Gamma> {
    check::non_negative("dim", dim)?;
    check::non_negative("expected_sum_sq", expected_sum_sq)?;
    Gamma::new(
        prior.shape() + 0.5 * dim,
        prior.rate() + 0.5 * expected_sum_sq,
    )
}

/// BLR's `q(alpha) = Gamma(a0 + d/2, b0 + (mu^T mu + tr Sigma)/2)` for `q(m) = N(mu, Sigma)` in
/// dimension `d` (000 Eq. 39-40).
///
/// # Errors
/// [`ExpFamError::NonFinite`](crate::ExpFamError::NonFinite) if the result's rate is not finite.
///
/// # Example
/// ```
/// use expfam::{Gamma, MvGaussian, gamma_precision_posterior_from_gaussian};
/// use nalgebra::{DMatrix, DVector};
/// let q = MvGaussian::new(DVector::from_vec(vec![1.0, 1.0]), DMatrix::identity(2, 2)).unwrap();
/// let post = gamma_precision_posterior_from_gaussian(&Gamma::new(1.0, 1.0).unwrap(), &q).unwrap();
/// assert_eq!((post.shape(), post.rate()), (2.0, 3.0)); // 1 + 2/2, 1 + (2 + 2)/2
/// ```
pub fn gamma_precision_posterior_from_gaussian(prior: &Gamma, q: &MvGaussian) -> Result<Gamma> {
    gamma_precision_posterior(prior, q.dim() as f64, q.expected_squared_norm())
}
