//! The Gamma distribution in shape-rate form.

use crate::check;
use crate::error::{ExpFamError, Result};
use crate::families::generic;
use crate::special_fn::{digamma_pos, ln_gamma_pos};
use crate::traits::{Entropy, ExponentialFamily, KlDivergence, SufficientStatistics};
use nalgebra::DVector;
use rand::Rng;
use rand_distr::Distribution;

/// `Gamma(a, b)` with shape `a > 0` and **rate** `b > 0`: density
/// `b^a / Gamma(a) x^(a-1) e^(-b x)` on `x > 0`.
///
/// As an exponential family: `T(x) = (ln x, x)`, `eta = (a - 1, -b)`,
/// `A = ln Gamma(a) - a ln b`, mean parameters `(E[ln x], E[x]) = (psi(a) - ln b, a / b)`.
/// This is the variational posterior of a precision hyper-parameter in BLR
/// (`q(alpha) = Gamma(a_N, b_N)`, 000 Eq. 39-40) and of the TPBN scale variables (000 Appendix C).
///
/// # Example
/// ```
/// use expfam::{ExponentialFamily, Gamma};
/// let g = Gamma::new(2.0, 4.0).unwrap();
/// assert_eq!(g.mean(), 0.5);
/// // E[ln x] = psi(2) - ln 4 = 1 - gamma - ln 4
/// assert!((g.expected_log() - (1.0 - 0.577_215_664_901_532_9 - 4f64.ln())).abs() < 1e-14);
/// assert!(Gamma::new(0.0, 1.0).is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Gamma {
    shape: f64,
    rate: f64,
}

impl Gamma {
    /// `Gamma(shape, rate)`.
    ///
    /// # Errors
    /// [`ExpFamError::NonFinite`] / [`ExpFamError::OutOfDomain`] unless both are finite and `> 0`.
    pub fn new(shape: f64, rate: f64) -> Result<Self> {
        check::positive("shape", shape)?;
        check::positive("rate", rate)?;
        Ok(Self { shape, rate })
    }

    /// The shape `a`.
    pub fn shape(&self) -> f64 {
        self.shape
    }

    /// The rate `b`.
    pub fn rate(&self) -> f64 {
        self.rate
    }

    /// `E[x] = a / b`.
    pub fn mean(&self) -> f64 {
        self.shape / self.rate
    }

    /// `Var[x] = a / b^2`.
    pub fn variance(&self) -> f64 {
        self.shape / (self.rate * self.rate)
    }

    /// `E[ln x] = psi(a) - ln b`.
    pub fn expected_log(&self) -> f64 {
        digamma_pos(self.shape) - self.rate.ln()
    }

    /// `E[1/x] = b / (a - 1)`, finite only for `a > 1`.
    ///
    /// # Errors
    /// [`ExpFamError::OutOfDomain`] for `a <= 1` (the expectation is infinite).
    pub fn expected_inverse(&self) -> Result<f64> {
        if self.shape > 1.0 {
            Ok(self.rate / (self.shape - 1.0))
        } else {
            Err(ExpFamError::OutOfDomain {
                name: "shape (for E[1/x])",
                value: self.shape,
                requirement: "> 1",
            })
        }
    }
}

impl ExponentialFamily for Gamma {
    type Natural = DVector<f64>;
    type Mean = DVector<f64>;

    /// `(a - 1, -b)`.
    fn natural(&self) -> DVector<f64> {
        DVector::from_vec(vec![self.shape - 1.0, -self.rate])
    }

    fn from_natural(eta: &DVector<f64>) -> Result<Self> {
        check::same_len("Gamma natural parameters", 2, eta.len())?;
        check::all_finite("eta", eta.as_slice())?;
        Self::new(eta[0] + 1.0, -eta[1])
    }

    fn log_partition(&self) -> f64 {
        ln_gamma_pos(self.shape) - self.shape * self.rate.ln()
    }

    /// `(E[ln x], E[x])`.
    fn mean_parameters(&self) -> DVector<f64> {
        DVector::from_vec(vec![self.expected_log(), self.mean()])
    }

    /// Solves `ln a - psi(a) = ln E[x] - E[ln x]` by Newton's method in `1/a`
    /// (Minka 2002, "Estimating a Gamma distribution"), then `b = a / E[x]`.
    fn from_mean_parameters(mu: &DVector<f64>) -> Result<Self> {
        check::same_len("Gamma mean parameters", 2, mu.len())?;
        check::all_finite("mu", mu.as_slice())?;
        let mean = check::positive("E[x]", mu[1])?;
        let s = mean.ln() - mu[0];
        if s.is_nan() || s <= 0.0 {
            return Err(ExpFamError::OutOfDomain {
                name: "ln E[x] - E[ln x]",
                value: s,
                requirement: "> 0 (Jensen)",
            });
        }
        let shape = solve_gamma_shape(s)?;
        Self::new(shape, shape / mean)
    }
}

/// `ln a - psi(a)` without cancellation for large `a` (asymptotic series, DLMF 5.11.2).
fn ln_minus_digamma(a: f64) -> f64 {
    if a < 10.0 {
        return a.ln() - digamma_pos(a);
    }
    let r = 1.0 / a;
    let r2 = r * r;
    // 1/(2a) + sum_k B_2k / (2k a^2k)
    0.5 * r
        + r2 * (1.0 / 12.0
            - r2 * (1.0 / 120.0
                - r2 * (1.0 / 252.0
                    - r2 * (1.0 / 240.0 - r2 * (1.0 / 132.0 - r2 * 691.0 / 32760.0)))))
}

/// The `a > 0` with `ln a - psi(a) = s`, `s > 0` (a decreasing function of `a`).
pub(crate) fn solve_gamma_shape(s: f64) -> Result<f64> {
    // Minka's initial value, accurate to ~1.5 %.
    let mut a = (3.0 - s + ((s - 3.0).powi(2) + 24.0 * s).sqrt()) / (12.0 * s);
    let mut f = ln_minus_digamma(a) - s;
    for _ in 0..100 {
        // d/da (ln a - psi(a)) = 1/a - psi'(a) < 0.
        let df = 1.0 / a - crate::special_fn::trigamma_pos(a);
        let mut next = a - f / df;
        if next.is_nan() || next <= 0.0 || !next.is_finite() {
            next = if f > 0.0 { a * 2.0 } else { a / 2.0 };
        }
        let f_next = ln_minus_digamma(next) - s;
        let stalled = f_next.abs() >= f.abs();
        if !stalled || (next - a).abs() > 1e-3 * a {
            a = next;
            f = f_next;
        }
        if stalled || f == 0.0 {
            break;
        }
    }
    if f.abs() <= 1e-12 * s {
        Ok(a)
    } else {
        Err(ExpFamError::NoConvergence {
            what: "Gamma mean -> natural",
            iterations: 100,
            residual: f.abs() / s,
        })
    }
}

impl SufficientStatistics for Gamma {
    type Sample = f64;
    fn sufficient_statistics(x: &f64) -> DVector<f64> {
        DVector::from_vec(vec![x.ln(), *x])
    }
}

impl Entropy for Gamma {
    /// `a - ln b + ln Gamma(a) + (1 - a) psi(a)`; for `a >= 100` the large cancelling terms are
    /// replaced by their Stirling expansion
    /// `(1 + ln 2 pi + ln a)/2 - 1/(3a) - 1/(12a^2) - 1/(90a^3) + 1/(120a^4) + 1/(210a^5)`.
    fn entropy(&self) -> f64 {
        let a = self.shape;
        if a < 100.0 {
            return a - self.rate.ln() + ln_gamma_pos(a) + (1.0 - a) * digamma_pos(a);
        }
        let r = 1.0 / a;
        let series = r
            * (-1.0 / 3.0 + r * (-1.0 / 12.0 + r * (-1.0 / 90.0 + r * (1.0 / 120.0 + r / 210.0))));
        0.5 * (1.0 + (2.0 * std::f64::consts::PI).ln() + a.ln()) + series - self.rate.ln()
    }
}

impl KlDivergence for Gamma {
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

impl Distribution<f64> for Gamma {
    /// Via `rand_distr::Gamma` (Marsaglia & Tsang 2000); tiny shapes can round to `0.0`.
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        rand_distr::Gamma::new(self.shape, 1.0 / self.rate)
            .expect("validated parameters")
            .sample(rng)
    }
}
