//! The Beta distribution (the two-category Dirichlet).

use crate::check;
use crate::error::Result;
use crate::families::dirichlet::sample_ln_gamma;
use crate::families::generic;
use crate::special_fn::ln_gamma_pos;
use crate::traits::{Entropy, ExponentialFamily, KlDivergence, SufficientStatistics};
use nalgebra::DVector;
use rand::Rng;
use rand_distr::Distribution;

/// `Beta(a, b)`: density `x^(a-1) (1-x)^(b-1) / B(a, b)` on `(0, 1)`.
///
/// As an exponential family: `T(x) = (ln x, ln(1-x))`, `eta = (a - 1, b - 1)`,
/// `A = ln Gamma(a) + ln Gamma(b) - ln Gamma(a + b)`, mean parameters
/// `(psi(a) - psi(a+b), psi(b) - psi(a+b))`.
///
/// # Example
/// ```
/// use expfam::{Beta, ExponentialFamily};
/// let b = Beta::new(2.0, 3.0).unwrap();
/// assert_eq!(b.mean(), 0.4);
/// let back = Beta::from_mean_parameters(&b.mean_parameters()).unwrap();
/// assert!((back.a() - 2.0).abs() < 1e-10);
/// assert!(Beta::new(f64::NAN, 1.0).is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Beta {
    a: f64,
    b: f64,
}

impl Beta {
    /// `Beta(a, b)`, both finite and `> 0`.
    ///
    /// # Errors
    /// [`ExpFamError::NonFinite`](crate::ExpFamError::NonFinite) /
    /// [`ExpFamError::OutOfDomain`](crate::ExpFamError::OutOfDomain).
    pub fn new(a: f64, b: f64) -> Result<Self> {
        check::positive("a", a)?;
        check::positive("b", b)?;
        check::finite("a + b", a + b)?;
        Ok(Self { a, b })
    }

    /// The first shape `a`.
    pub fn a(&self) -> f64 {
        self.a
    }

    /// The second shape `b`.
    pub fn b(&self) -> f64 {
        self.b
    }

    /// `E[x] = a / (a + b)`.
    pub fn mean(&self) -> f64 {
        self.a / (self.a + self.b)
    }

    /// `E[ln x] = psi(a) - psi(a + b)`.
    pub fn expected_log(&self) -> f64 {
        crate::families::dirichlet::expected_log_slice(&[self.a, self.b], self.a + self.b)[0]
    }

    /// `E[ln(1 - x)] = psi(b) - psi(a + b)`.
    pub fn expected_log1m(&self) -> f64 {
        crate::families::dirichlet::expected_log_slice(&[self.a, self.b], self.a + self.b)[1]
    }
}

impl ExponentialFamily for Beta {
    type Natural = DVector<f64>;
    type Mean = DVector<f64>;

    fn natural(&self) -> DVector<f64> {
        DVector::from_vec(vec![self.a - 1.0, self.b - 1.0])
    }

    fn from_natural(eta: &DVector<f64>) -> Result<Self> {
        check::same_len("Beta natural parameters", 2, eta.len())?;
        check::all_finite("eta", eta.as_slice())?;
        Self::new(eta[0] + 1.0, eta[1] + 1.0)
    }

    fn log_partition(&self) -> f64 {
        ln_gamma_pos(self.a) + ln_gamma_pos(self.b) - ln_gamma_pos(self.a + self.b)
    }

    fn mean_parameters(&self) -> DVector<f64> {
        DVector::from_vec(vec![self.expected_log(), self.expected_log1m()])
    }

    /// As the two-category [`Dirichlet`](crate::Dirichlet) inversion (Minka 2000).
    fn from_mean_parameters(mu: &DVector<f64>) -> Result<Self> {
        check::same_len("Beta mean parameters", 2, mu.len())?;
        let d = crate::Dirichlet::from_mean_parameters(mu)?;
        Self::new(d.alpha()[0], d.alpha()[1])
    }
}

impl SufficientStatistics for Beta {
    type Sample = f64;
    fn sufficient_statistics(x: &f64) -> DVector<f64> {
        DVector::from_vec(vec![x.ln(), (-x).ln_1p()])
    }
}

impl Entropy for Beta {
    fn entropy(&self) -> f64 {
        generic::entropy(
            self.log_partition(),
            &self.natural(),
            &self.mean_parameters(),
        )
    }
}

impl KlDivergence for Beta {
    fn kl_divergence(&self, other: &Self) -> Result<f64> {
        Ok(generic::kl(
            self.log_partition(),
            other.log_partition(),
            &self.natural(),
            &other.natural(),
            &self.mean_parameters(),
        ))
    }
}

impl Distribution<f64> for Beta {
    /// `G_a / (G_a + G_b)` with the Gamma draws in log space (no 0/0 for tiny shapes).
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        let la = sample_ln_gamma(self.a, rng);
        let lb = sample_ln_gamma(self.b, rng);
        // a / (a + b) = 1 / (1 + exp(lb - la))
        1.0 / (1.0 + (lb - la).exp())
    }
}
