//! The categorical distribution in minimal (softmax) natural form.

use crate::check;
use crate::error::Result;
use crate::traits::{Entropy, ExponentialFamily, KlDivergence};
use nalgebra::DVector;
use rand::Rng;
use rand::RngExt;
use rand_distr::Distribution;

/// `Categorical(pi)` over `K >= 2` categories `0..K`, every `pi_k > 0`.
///
/// Minimal exponential-family form (the last category is the reference):
/// `T(x) = (1[x = 0], ..., 1[x = K-2])`, `eta_k = ln(pi_k / pi_{K-1})`,
/// `A(eta) = ln(1 + sum_k e^eta_k) = -ln pi_{K-1}`, mean parameters `(pi_0, ..., pi_{K-2})`.
/// The full probability vector is kept in log space.
///
/// # Example
/// ```
/// use expfam::{Categorical, ExponentialFamily};
/// let c = Categorical::new(vec![1.0, 1.0, 2.0]).unwrap(); // weights are normalised
/// assert_eq!(c.probs()[2], 0.5);
/// assert!((c.natural()[0] - 0.5f64.ln()).abs() < 1e-15);
/// assert!(Categorical::new(vec![1.0, 0.0]).is_err());
/// ```
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Categorical {
    ln_probs: DVector<f64>,
}

impl Categorical {
    /// From positive finite weights (normalised to probabilities), `K >= 2`.
    ///
    /// # Errors
    /// [`ExpFamError::TooShort`](crate::ExpFamError::TooShort), [`ExpFamError::NonFinite`](crate::ExpFamError::NonFinite),
    /// [`ExpFamError::OutOfDomain`](crate::ExpFamError::OutOfDomain).
    pub fn new(weights: impl Into<Vec<f64>>) -> Result<Self> {
        let w: Vec<f64> = weights.into();
        check::min_len("weights", w.len(), 2)?;
        check::all_positive("weights", &w)?;
        let ln_w: Vec<f64> = w.iter().map(|x| x.ln()).collect();
        Ok(Self::from_log_weights_unchecked(&ln_w))
    }

    /// From log-weights (any finite values; the softmax is taken), `K >= 2`.
    ///
    /// # Errors
    /// [`ExpFamError::TooShort`](crate::ExpFamError::TooShort), [`ExpFamError::NonFinite`](crate::ExpFamError::NonFinite).
    pub fn from_log_weights(ln_w: &[f64]) -> Result<Self> {
        check::min_len("log weights", ln_w.len(), 2)?;
        check::all_finite("log weights", ln_w)?;
        Ok(Self::from_log_weights_unchecked(ln_w))
    }

    fn from_log_weights_unchecked(ln_w: &[f64]) -> Self {
        let m = ln_w.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let lse = m + ln_w.iter().map(|x| (x - m).exp()).sum::<f64>().ln();
        Self {
            ln_probs: DVector::from_iterator(ln_w.len(), ln_w.iter().map(|x| x - lse)),
        }
    }

    /// The number of categories `K`.
    pub fn num_categories(&self) -> usize {
        self.ln_probs.len()
    }

    /// The probabilities `pi`.
    pub fn probs(&self) -> DVector<f64> {
        self.ln_probs.map(f64::exp)
    }

    /// `ln pi`.
    pub fn ln_probs(&self) -> &DVector<f64> {
        &self.ln_probs
    }
}

impl ExponentialFamily for Categorical {
    type Natural = DVector<f64>;
    type Mean = DVector<f64>;

    /// `eta_k = ln pi_k - ln pi_{K-1}`, `k < K - 1`.
    fn natural(&self) -> DVector<f64> {
        let k = self.num_categories();
        let last = self.ln_probs[k - 1];
        DVector::from_iterator(k - 1, self.ln_probs.iter().take(k - 1).map(|l| l - last))
    }

    fn from_natural(eta: &DVector<f64>) -> Result<Self> {
        check::min_len("eta", eta.len(), 1)?;
        check::all_finite("eta", eta.as_slice())?;
        let mut ln_w: Vec<f64> = eta.iter().cloned().collect();
        ln_w.push(0.0);
        Ok(Self::from_log_weights_unchecked(&ln_w))
    }

    /// `-ln pi_{K-1}`.
    fn log_partition(&self) -> f64 {
        -self.ln_probs[self.num_categories() - 1]
    }

    /// `(pi_0, ..., pi_{K-2})`.
    fn mean_parameters(&self) -> DVector<f64> {
        let k = self.num_categories();
        DVector::from_iterator(k - 1, self.ln_probs.iter().take(k - 1).map(|l| l.exp()))
    }

    /// Requires every `mu_k > 0` and `sum mu_k < 1`.
    fn from_mean_parameters(mu: &DVector<f64>) -> Result<Self> {
        check::min_len("mu", mu.len(), 1)?;
        check::all_positive("mu", mu.as_slice())?;
        let rest = 1.0 - mu.sum();
        check::positive("1 - sum mu", rest)?;
        let mut w: Vec<f64> = mu.iter().cloned().collect();
        w.push(rest);
        Self::new(w)
    }
}

impl Categorical {
    /// `T(x)` for this distribution's `K`: one-hot over the first `K - 1` categories.
    pub fn one_hot(&self, x: usize) -> DVector<f64> {
        let k = self.num_categories();
        let mut v = DVector::zeros(k - 1);
        if x < k - 1 {
            v[x] = 1.0;
        }
        v
    }
}

impl Entropy for Categorical {
    /// `-sum pi_k ln pi_k`.
    fn entropy(&self) -> f64 {
        -self.ln_probs.iter().map(|l| l.exp() * l).sum::<f64>()
    }
}

impl KlDivergence for Categorical {
    /// `sum pi_k (ln pi_k - ln rho_k)`.
    fn kl_divergence(&self, other: &Self) -> Result<f64> {
        check::same_len(
            "other categorical",
            self.num_categories(),
            other.num_categories(),
        )?;
        let kl: f64 = self
            .ln_probs
            .iter()
            .zip(other.ln_probs.iter())
            .map(|(a, b)| a.exp() * (a - b))
            .sum();
        Ok(kl.max(0.0))
    }
}

impl Distribution<usize> for Categorical {
    /// Inverse-CDF sampling.
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> usize {
        let u: f64 = rng.random::<f64>();
        let mut acc = 0.0;
        for (k, l) in self.ln_probs.iter().enumerate() {
            acc += l.exp();
            if u < acc {
                return k;
            }
        }
        self.num_categories() - 1
    }
}
