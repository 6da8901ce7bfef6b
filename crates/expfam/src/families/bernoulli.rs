//! The Bernoulli distribution in logit (natural) form.

use crate::check;
use crate::error::{ExpFamError, Result};
use crate::special_fn::{sigmoid, softplus};
use crate::traits::{Entropy, ExponentialFamily, KlDivergence, SufficientStatistics};
use nalgebra::DVector;
use rand::Rng;
use rand::RngExt;
use rand_distr::Distribution;

/// `Bernoulli(pi)`, stored by its logit `eta = ln(pi / (1 - pi))` so that probabilities near 0 or 1
/// keep full relative precision (the SBN's hidden units, 000 Sec. 7).
///
/// As an exponential family: `T(x) = x` in `{0, 1}`, `A(eta) = ln(1 + e^eta)`,
/// mean parameter `pi = sigmoid(eta)`.
///
/// # Example
/// ```
/// use expfam::{Bernoulli, Entropy};
/// let b = Bernoulli::new(0.5).unwrap();
/// assert_eq!(b.logit(), 0.0);
/// assert!((b.entropy() - 2f64.ln()).abs() < 1e-15);
/// assert!(Bernoulli::new(1.0).is_err()); // the boundary is not a regular member
/// assert!(Bernoulli::from_logit(-700.0).unwrap().prob() > 0.0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Bernoulli {
    logit: f64,
}

impl Bernoulli {
    /// `Bernoulli(pi)` with `0 < pi < 1`.
    ///
    /// # Errors
    /// [`ExpFamError::NonFinite`] / [`ExpFamError::OutOfDomain`].
    pub fn new(pi: f64) -> Result<Self> {
        check::finite("pi", pi)?;
        if !(pi > 0.0 && pi < 1.0) {
            return Err(ExpFamError::OutOfDomain {
                name: "pi",
                value: pi,
                requirement: "in (0, 1)",
            });
        }
        Ok(Self {
            logit: pi.ln() - (-pi).ln_1p(),
        })
    }

    /// From the logit `eta` (any finite value).
    ///
    /// # Errors
    /// [`ExpFamError::NonFinite`].
    pub fn from_logit(eta: f64) -> Result<Self> {
        check::finite("logit", eta)?;
        Ok(Self { logit: eta })
    }

    /// `pi = P(x = 1)`.
    pub fn prob(&self) -> f64 {
        sigmoid(self.logit)
    }

    /// The logit `ln(pi / (1 - pi))`.
    pub fn logit(&self) -> f64 {
        self.logit
    }
}

impl ExponentialFamily for Bernoulli {
    type Natural = DVector<f64>;
    type Mean = DVector<f64>;

    fn natural(&self) -> DVector<f64> {
        DVector::from_element(1, self.logit)
    }

    fn from_natural(eta: &DVector<f64>) -> Result<Self> {
        check::same_len("Bernoulli natural parameters", 1, eta.len())?;
        Self::from_logit(eta[0])
    }

    fn log_partition(&self) -> f64 {
        softplus(self.logit)
    }

    fn mean_parameters(&self) -> DVector<f64> {
        DVector::from_element(1, self.prob())
    }

    fn from_mean_parameters(mu: &DVector<f64>) -> Result<Self> {
        check::same_len("Bernoulli mean parameters", 1, mu.len())?;
        Self::new(mu[0])
    }
}

impl SufficientStatistics for Bernoulli {
    type Sample = bool;
    fn sufficient_statistics(x: &bool) -> DVector<f64> {
        DVector::from_element(1, if *x { 1.0 } else { 0.0 })
    }
}

impl Entropy for Bernoulli {
    /// `A(eta) - eta pi`.
    fn entropy(&self) -> f64 {
        softplus(self.logit) - self.logit * self.prob()
    }
}

impl KlDivergence for Bernoulli {
    /// `A(eta_q) - A(eta_p) - (eta_q - eta_p) pi_p`.
    fn kl_divergence(&self, other: &Self) -> Result<f64> {
        let kl =
            softplus(other.logit) - softplus(self.logit) - (other.logit - self.logit) * self.prob();
        Ok(kl.max(0.0))
    }
}

impl Distribution<bool> for Bernoulli {
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> bool {
        rng.random::<f64>() < self.prob()
    }
}
