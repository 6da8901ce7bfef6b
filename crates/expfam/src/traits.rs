//! Capability traits shared by the families (in the style of `statrs`: one capability per trait).

use crate::error::Result;
use crate::natural::NaturalParameters;

/// A regular exponential family `p(x | eta) = h(x) exp(<eta, T(x)> - A(eta))`.
///
/// Conventions used throughout the crate: the base measure is `h(x) = 1` with respect to Lebesgue
/// measure on the support (counting measure for discrete families); constants such as
/// `(d/2) ln(2 pi)` are part of `A`. Then the entropy is `A(eta) - <eta, E[T]>` and
/// `KL(p || q) = A(eta_q) - A(eta_p) - <eta_q - eta_p, E_p[T]>`.
///
/// # Example
/// ```
/// use expfam::{ExponentialFamily, Gamma};
/// let g = Gamma::new(3.0, 2.0).unwrap();
/// let back = Gamma::from_natural(&g.natural()).unwrap();
/// assert!((back.shape() - 3.0).abs() < 1e-15);
/// let again = Gamma::from_mean_parameters(&g.mean_parameters()).unwrap();
/// assert!((again.rate() - 2.0).abs() < 1e-10);
/// ```
pub trait ExponentialFamily: Sized {
    /// The natural-parameter type `eta`.
    type Natural: NaturalParameters;
    /// The mean-parameter type `mu = E[T(x)] = grad A(eta)` (same layout as `Natural`).
    type Mean;

    /// The natural parameters `eta`.
    fn natural(&self) -> Self::Natural;

    /// The member with natural parameters `eta`.
    ///
    /// # Errors
    /// A typed error if `eta` is not finite, has the wrong shape, or lies outside the natural
    /// parameter space.
    fn from_natural(eta: &Self::Natural) -> Result<Self>;

    /// The log-partition function `A(eta)`.
    fn log_partition(&self) -> f64;

    /// The mean parameters `E[T(x)] = grad A(eta)` (the expected sufficient statistics).
    fn mean_parameters(&self) -> Self::Mean;

    /// The member with mean parameters `mu` (the inverse of `grad A`; iterative for some families).
    ///
    /// # Errors
    /// A typed error if `mu` is outside the interior of the mean-parameter space, or if an
    /// iterative inversion does not converge.
    fn from_mean_parameters(mu: &Self::Mean) -> Result<Self>;
}

/// Sufficient statistics `T(x)` of a single observation.
pub trait SufficientStatistics: ExponentialFamily {
    /// What one draw looks like.
    type Sample;
    /// `T(x)`, in the layout of [`ExponentialFamily::Mean`].
    fn sufficient_statistics(x: &Self::Sample) -> Self::Mean;
}

/// Differential (or discrete) entropy `H[p] = -E[ln p(x)]`.
pub trait Entropy {
    /// The entropy in nats.
    fn entropy(&self) -> f64;
}

/// Kullback-Leibler divergence to another member of the same family.
pub trait KlDivergence {
    /// `KL(self || other) = E_self[ln self(x) - ln other(x)] >= 0`, in nats.
    ///
    /// Round-off below zero is clamped to `0`.
    ///
    /// # Errors
    /// [`ExpFamError::DimensionMismatch`](crate::ExpFamError::DimensionMismatch) if the members
    /// have different dimensions.
    fn kl_divergence(&self, other: &Self) -> Result<f64>;
}
