//! The Gaussian with diagonal covariance (independent coordinates), in natural and moment form.

use crate::check;
use crate::error::{ExpFamError, Result};
use crate::natural::NaturalParameters;
use crate::traits::{Entropy, ExponentialFamily, KlDivergence, SufficientStatistics};
use nalgebra::DVector;
use rand::Rng;
use rand_distr::{Distribution, StandardNormal};
use std::f64::consts::PI;

/// Natural parameters of a diagonal Gaussian: `eta1_i = m_i / v_i`, `eta2_i = -1 / (2 v_i)`.
///
/// Flattened as `eta1` then `eta2` for [`NaturalParameters`]. Values need not be proper (site
/// factors may have `eta2_i >= 0`); [`DiagGaussianNatural::check_proper`] checks `eta2_i < 0`.
///
/// # Example
/// ```
/// use expfam::{DiagGaussianNatural, NaturalParameters};
/// use nalgebra::DVector;
/// let q = DiagGaussianNatural::from_moments(&DVector::from_vec(vec![1.0]), &DVector::from_vec(vec![0.5])).unwrap();
/// assert_eq!(q.eta1()[0], 2.0);
/// assert_eq!(q.eta2()[0], -1.0);
/// assert!(q.try_sub(&q.scale(1.5)).unwrap().check_proper().is_err());
/// ```
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DiagGaussianNatural {
    eta1: DVector<f64>,
    eta2: DVector<f64>,
}

impl DiagGaussianNatural {
    /// From `eta1 = m / v` and `eta2 = -1 / (2 v)` (element-wise).
    ///
    /// # Errors
    /// [`ExpFamError::DimensionMismatch`], [`ExpFamError::NonFinite`].
    pub fn new(eta1: DVector<f64>, eta2: DVector<f64>) -> Result<Self> {
        check::vector("eta1", &eta1, eta1.len())?;
        check::vector("eta2", &eta2, eta1.len())?;
        Ok(Self { eta1, eta2 })
    }

    /// From `h = m / v` and the precisions `1 / v`.
    ///
    /// # Errors
    /// As [`DiagGaussianNatural::new`].
    pub fn from_precision(h: DVector<f64>, precision: DVector<f64>) -> Result<Self> {
        Self::new(h, precision * -0.5)
    }

    /// Moment matching: the natural parameters of `N(mean, diag(var))`.
    ///
    /// # Errors
    /// As [`DiagGaussian::new`].
    pub fn from_moments(mean: &DVector<f64>, var: &DVector<f64>) -> Result<Self> {
        Ok(DiagGaussian::new(mean.clone(), var.clone())?.natural())
    }

    /// The zero vector (a flat factor).
    pub fn zeros(d: usize) -> Self {
        Self {
            eta1: DVector::zeros(d),
            eta2: DVector::zeros(d),
        }
    }

    /// The dimension.
    pub fn dim(&self) -> usize {
        self.eta1.len()
    }

    /// `eta1 = m / v`.
    pub fn eta1(&self) -> &DVector<f64> {
        &self.eta1
    }

    /// `eta2 = -1 / (2 v)`.
    pub fn eta2(&self) -> &DVector<f64> {
        &self.eta2
    }

    /// The precisions `-2 eta2`.
    pub fn precision(&self) -> DVector<f64> {
        &self.eta2 * -2.0
    }

    /// `Ok` if every precision `-2 eta2_i` is positive.
    ///
    /// # Errors
    /// [`ExpFamError::NotPositiveDefinite`].
    pub fn check_proper(&self) -> Result<()> {
        if self.eta2.iter().all(|&e| e < 0.0) {
            Ok(())
        } else {
            Err(ExpFamError::NotPositiveDefinite {
                name: "diagonal precision",
            })
        }
    }

    /// Whether [`DiagGaussianNatural::check_proper`] succeeds.
    pub fn is_proper(&self) -> bool {
        self.check_proper().is_ok()
    }

    /// Moment form.
    ///
    /// # Errors
    /// [`ExpFamError::NotPositiveDefinite`] if some precision is not positive.
    pub fn to_moments(&self) -> Result<DiagGaussian> {
        DiagGaussian::from_natural(self)
    }
}

impl NaturalParameters for DiagGaussianNatural {
    fn num_values(&self) -> usize {
        2 * self.eta1.len()
    }
    fn for_each_value(&self, f: &mut dyn FnMut(f64)) {
        self.eta1.iter().for_each(|&x| f(x));
        self.eta2.iter().for_each(|&x| f(x));
    }
    fn map_values(&self, f: &dyn Fn(f64) -> f64) -> Self {
        Self {
            eta1: self.eta1.map(f),
            eta2: self.eta2.map(f),
        }
    }
    fn zip_values(&self, other: &Self, f: &dyn Fn(f64, f64) -> f64) -> Result<Self> {
        check::same_len(
            "diagonal Gaussian natural parameters",
            self.dim(),
            other.dim(),
        )?;
        Ok(Self {
            eta1: self.eta1.zip_map(&other.eta1, f),
            eta2: self.eta2.zip_map(&other.eta2, f),
        })
    }
}

/// Mean parameters of a diagonal Gaussian: `E[x_i]` and `E[x_i^2] = v_i + m_i^2`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DiagGaussianMean {
    /// `E[x]`.
    pub first: DVector<f64>,
    /// `E[x_i^2]`, element-wise.
    pub second: DVector<f64>,
}

/// `N(m, diag(v))`.
///
/// # Example
/// ```
/// use expfam::{DiagGaussian, ExponentialFamily, KlDivergence};
/// use nalgebra::DVector;
/// let p = DiagGaussian::new(DVector::from_vec(vec![0.0, 1.0]), DVector::from_vec(vec![1.0, 2.0])).unwrap();
/// let q = DiagGaussian::from_natural(&p.natural()).unwrap();
/// assert!(p.kl_divergence(&q).unwrap() < 1e-15);
/// assert!(DiagGaussian::new(DVector::zeros(1), DVector::from_vec(vec![0.0])).is_err());
/// ```
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DiagGaussian {
    mean: DVector<f64>,
    var: DVector<f64>,
}

impl DiagGaussian {
    /// `N(mean, diag(var))`, every variance finite and `> 0`.
    ///
    /// # Errors
    /// [`ExpFamError::TooShort`], [`ExpFamError::DimensionMismatch`], [`ExpFamError::NonFinite`],
    /// [`ExpFamError::OutOfDomain`].
    pub fn new(mean: DVector<f64>, var: DVector<f64>) -> Result<Self> {
        check::min_len("mean", mean.len(), 1)?;
        check::vector("mean", &mean, mean.len())?;
        check::same_len("variance", mean.len(), var.len())?;
        check::all_positive("variance", var.as_slice())?;
        Ok(Self { mean, var })
    }

    /// The mean.
    pub fn mean(&self) -> &DVector<f64> {
        &self.mean
    }

    /// The variances.
    pub fn var(&self) -> &DVector<f64> {
        &self.var
    }

    /// The dimension.
    pub fn dim(&self) -> usize {
        self.mean.len()
    }
}

impl ExponentialFamily for DiagGaussian {
    type Natural = DiagGaussianNatural;
    type Mean = DiagGaussianMean;

    fn natural(&self) -> DiagGaussianNatural {
        DiagGaussianNatural {
            eta1: self.mean.component_div(&self.var),
            eta2: self.var.map(|v| -0.5 / v),
        }
    }

    fn from_natural(eta: &DiagGaussianNatural) -> Result<Self> {
        check::min_len("eta1", eta.dim(), 1)?;
        eta.check_proper()?;
        let var = eta.eta2.map(|e| -0.5 / e);
        let mean = eta.eta1.component_mul(&var);
        check::all_finite("mean", mean.as_slice())?;
        Self::new(mean, var)
    }

    /// `sum_i (m_i^2 / v_i + ln v_i + ln 2 pi) / 2`.
    fn log_partition(&self) -> f64 {
        self.mean
            .iter()
            .zip(self.var.iter())
            .map(|(m, v)| 0.5 * (m * m / v + v.ln() + (2.0 * PI).ln()))
            .sum()
    }

    fn mean_parameters(&self) -> DiagGaussianMean {
        DiagGaussianMean {
            first: self.mean.clone(),
            second: self.var.zip_map(&self.mean, |v, m| v + m * m),
        }
    }

    fn from_mean_parameters(mu: &DiagGaussianMean) -> Result<Self> {
        check::vector("E[x]", &mu.first, mu.first.len())?;
        check::vector("E[x^2]", &mu.second, mu.first.len())?;
        let var = mu.second.zip_map(&mu.first, |s, m| s - m * m);
        Self::new(mu.first.clone(), var)
    }
}

impl SufficientStatistics for DiagGaussian {
    type Sample = DVector<f64>;
    fn sufficient_statistics(x: &DVector<f64>) -> DiagGaussianMean {
        DiagGaussianMean {
            first: x.clone(),
            second: x.map(|v| v * v),
        }
    }
}

impl Entropy for DiagGaussian {
    fn entropy(&self) -> f64 {
        self.var
            .iter()
            .map(|v| 0.5 * (1.0 + (2.0 * PI * v).ln()))
            .sum()
    }
}

impl KlDivergence for DiagGaussian {
    fn kl_divergence(&self, other: &Self) -> Result<f64> {
        check::same_len("other diagonal Gaussian", self.dim(), other.dim())?;
        let mut kl = 0.0;
        for i in 0..self.dim() {
            let r = self.var[i] / other.var[i];
            let d = other.mean[i] - self.mean[i];
            kl += 0.5 * (r + d * d / other.var[i] - 1.0 - r.ln());
        }
        Ok(kl.max(0.0))
    }
}

impl Distribution<DVector<f64>> for DiagGaussian {
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> DVector<f64> {
        DVector::from_fn(self.dim(), |i, _| {
            let z: f64 = StandardNormal.sample(rng);
            self.mean[i] + self.var[i].sqrt() * z
        })
    }
}
