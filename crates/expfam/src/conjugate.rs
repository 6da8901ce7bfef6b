//! The conjugate updates the models use.
//!
//! - Dirichlet-categorical: LDA's topic update `lambda_kv = eta + scale * n_kv` (Hoffman et al. 2010)
//!   and [`Dirichlet::posterior`](crate::Dirichlet::posterior) for one vector.
//! - Gaussian mean with known noise precision (full and diagonal), in natural parameters.
//! - Gamma on a precision: BLR's `q(alpha) = Gamma(a0 + d/2, b0 + (m^T m + tr S)/2)` (000 Eq. 39-40).

use crate::check;
use crate::error::{ExpFamError, Result};
use crate::families::diag_gaussian::DiagGaussianNatural;
use crate::families::gamma::Gamma;
use crate::families::gaussian::{GaussianNatural, MvGaussian};
use nalgebra::{Cholesky, DMatrix, DVector};

/// Posterior of a Gaussian mean `theta ~ prior` after `n` observations `x_i ~ N(theta, Lambda_x^-1)`
/// with known precision `Lambda_x`, given `sum_x = sum_i x_i`:
/// `eta1 += Lambda_x sum_x`, `eta2 += -n Lambda_x / 2`.
///
/// # Errors
/// [`ExpFamError::DimensionMismatch`], [`ExpFamError::NonFinite`], [`ExpFamError::OutOfDomain`]
/// (`n < 0`), [`ExpFamError::NotPositiveDefinite`] (noise precision, or a result that is not
/// proper).
///
/// # Example
/// ```
/// use expfam::{gaussian_known_precision_posterior, GaussianNatural};
/// use nalgebra::{DMatrix, DVector};
/// let prior = GaussianNatural::from_moments(DVector::zeros(1), DMatrix::identity(1, 1)).unwrap();
/// let post = gaussian_known_precision_posterior(&prior, &DMatrix::identity(1, 1), 3.0, &DVector::from_vec(vec![6.0])).unwrap();
/// let q = post.to_moments().unwrap();
/// assert!((q.mean()[0] - 1.5).abs() < 1e-15); // 6 / (1 + 3)
/// ```
pub fn gaussian_known_precision_posterior(
    prior: &GaussianNatural,
    noise_precision: &DMatrix<f64>,
    n: f64,
    sum_x: &DVector<f64>,
) -> Result<GaussianNatural> {
    let d = prior.dim();
    check::non_negative("n", n)?;
    check::vector("sum_x", sum_x, d)?;
    check::symmetric("noise precision", noise_precision, d)?;
    Cholesky::new(noise_precision.clone()).ok_or(ExpFamError::NotPositiveDefinite {
        name: "noise precision",
    })?;
    let post = GaussianNatural::new(
        prior.eta1() + noise_precision * sum_x,
        prior.eta2() - noise_precision * (0.5 * n),
    )?;
    post.check_proper()?;
    Ok(post)
}

/// Diagonal version of [`gaussian_known_precision_posterior`]: independent coordinates with
/// known noise precisions `noise_precision_i > 0`.
///
/// # Errors
/// As [`gaussian_known_precision_posterior`].
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
///
/// # Errors
/// [`ExpFamError::NonFinite`] / [`ExpFamError::OutOfDomain`] for `dim < 0` or
/// `expected_sum_sq < 0`.
///
/// # Example
/// ```
/// use expfam::{gamma_precision_posterior, Gamma};
/// let q = gamma_precision_posterior(&Gamma::new(1.0, 1.0).unwrap(), 4.0, 6.0).unwrap();
/// assert_eq!((q.shape(), q.rate()), (3.0, 4.0));
/// ```
pub fn gamma_precision_posterior(prior: &Gamma, dim: f64, expected_sum_sq: f64) -> Result<Gamma> {
    check::non_negative("dim", dim)?;
    check::non_negative("expected_sum_sq", expected_sum_sq)?;
    Gamma::new(
        prior.shape() + 0.5 * dim,
        prior.rate() + 0.5 * expected_sum_sq,
    )
}

/// [`gamma_precision_posterior`] with `dim = d` and `expected_sum_sq = mu^T mu + tr Sigma` of `q(m)`.
///
/// # Errors
/// As [`gamma_precision_posterior`].
pub fn gamma_precision_posterior_from_gaussian(prior: &Gamma, q: &MvGaussian) -> Result<Gamma> {
    gamma_precision_posterior(prior, q.dim() as f64, q.expected_squared_norm())
}
