//! # expfam
//!
//! Exponential-family algebra shared by the VIPS and DP-SEP models: natural and mean parameters,
//! log-partition functions, expected sufficient statistics, entropy, KL divergence, and damped
//! (SVI) updates of natural parameters.
//!
//! A member of a family is `p(x | eta) = exp(<eta, T(x)> - A(eta))` (base measure 1; see
//! [`ExponentialFamily`]). Each family is a small validated type implementing the capability traits
//! [`ExponentialFamily`], [`SufficientStatistics`], [`Entropy`], [`KlDivergence`] and
//! `rand_distr::Distribution`. Natural parameters are values implementing [`NaturalParameters`]
//! (add, subtract, scale, L2 norm, clipping to a norm bound, damped interpolation).
//!
//! The mathematics, with references, is in `docs/expfam.md` of the workspace.
//!
//! # Example
//! ```
//! use expfam::{Dirichlet, ExponentialFamily, NaturalParameters};
//! let prior = Dirichlet::new(vec![0.1; 4]).unwrap();
//! let lambda = prior.natural();
//! let lambda_hat = prior.posterior(&[3.0, 0.0, 1.0, 0.0]).unwrap().natural();
//! let rho = (1.0f64 + 5.0).powf(-0.7); // a Robbins-Monro step (tau0 = 1, kappa = 0.7, t = 5)
//! let updated = Dirichlet::from_natural(&lambda.damped_toward(&lambda_hat, rho).unwrap()).unwrap();
//! assert!(updated.alpha()[0] > 0.1);
//! ```

mod bessel;
mod check;
mod conjugate;
mod dirichlet_rows;
mod error;
mod families;
mod linalg;
mod natural;
mod special_fn;
mod traits;

pub use conjugate::{
    diag_gaussian_known_precision_posterior, gamma_precision_posterior,
    gamma_precision_posterior_from_gaussian,
};
pub use dirichlet_rows::{dirichlet_expectation_into, dirichlet_kl_rows_to_symmetric};
pub use error::{ExpFamError, Result};
pub use families::bernoulli::Bernoulli;
pub use families::beta::Beta;
pub use families::categorical::Categorical;
pub use families::diag_gaussian::{DiagGaussian, DiagGaussianMean, DiagGaussianNatural};
pub use families::dirichlet::Dirichlet;
pub use families::gamma::Gamma;
pub use families::gaussian::{GaussianMean, GaussianNatural, MvGaussian};
pub use families::gig::{Gig, GigSampler};
pub use natural::{Clipped, NaturalParameters};
pub use special_fn::{
    digamma, digamma_f32, digamma_fast, ln_2cosh, ln_cosh, ln_gamma, sigmoid, softplus, trigamma,
};
pub use traits::{Entropy, ExponentialFamily, KlDivergence, SufficientStatistics};

/// The README's example, compiled and run as a doctest so the README stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
