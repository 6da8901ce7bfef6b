//! The Dirichlet distribution `Dir(alpha)` on the probability simplex.

use crate::check;
use crate::error::{ExpFamError, Result};
use crate::families::generic;
use crate::special_fn::{digamma_pos, ln_gamma_pos};
use crate::traits::{Entropy, ExponentialFamily, KlDivergence, SufficientStatistics};
use nalgebra::DVector;
use rand::Rng;
use rand_distr::Distribution;

/// `Dir(alpha)`: density `Gamma(alpha_0) / prod Gamma(alpha_k) * prod theta_k^(alpha_k - 1)`,
/// `alpha_0 = sum alpha_k`, on the simplex of dimension `K - 1` (`K >= 2`).
///
/// As an exponential family: `T(theta) = ln theta`, `eta = alpha - 1`,
/// `A = sum ln Gamma(alpha_k) - ln Gamma(alpha_0)`, and the mean parameters are
/// `E[ln theta_k] = psi(alpha_k) - psi(alpha_0)` (the quantity LDA's E-step exponentiates;
/// Blei, Ng, Jordan 2003; Hoffman, Blei, Bach 2010).
///
/// # Example
/// ```
/// use expfam::{Dirichlet, ExponentialFamily, KlDivergence};
/// let d = Dirichlet::new(vec![1.0, 2.0, 3.0]).unwrap();
/// let elog = d.expected_log();
/// // E[ln theta_1] = psi(1) - psi(6) = -(1 + 1/2 + 1/3 + 1/4 + 1/5)
/// assert!((elog[0] + 137.0 / 60.0).abs() < 1e-13);
/// assert_eq!(d.kl_divergence(&d).unwrap(), 0.0);
/// assert!(Dirichlet::new(vec![1.0, -1.0]).is_err());
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Dirichlet {
    alpha: DVector<f64>,
    alpha0: f64,
}

impl Dirichlet {
    /// `Dir(alpha)` with every `alpha_k > 0` finite and `K >= 2`.
    ///
    /// # Errors
    /// [`ExpFamError::TooShort`] for `K < 2`, [`ExpFamError::NonFinite`] or
    /// [`ExpFamError::OutOfDomain`] for a NaN, infinite or non-positive concentration.
    pub fn new(alpha: impl Into<Vec<f64>>) -> Result<Self> {
        Self::from_dvector(DVector::from_vec(alpha.into()))
    }

    /// As [`Dirichlet::new`], from a `DVector`.
    ///
    /// # Errors
    /// As [`Dirichlet::new`].
    pub fn from_dvector(alpha: DVector<f64>) -> Result<Self> {
        check::min_len("alpha", alpha.len(), 2)?;
        check::all_positive("alpha", alpha.as_slice())?;
        let alpha0 = alpha.sum();
        check::finite("sum of alpha", alpha0)?;
        Ok(Self { alpha, alpha0 })
    }

    /// The concentrations `alpha`.
    pub fn alpha(&self) -> &DVector<f64> {
        &self.alpha
    }

    /// `alpha_0 = sum_k alpha_k`.
    pub fn alpha0(&self) -> f64 {
        self.alpha0
    }

    /// The number of categories `K`.
    pub fn dim(&self) -> usize {
        self.alpha.len()
    }

    /// `E[theta] = alpha / alpha_0`.
    pub fn mean(&self) -> DVector<f64> {
        &self.alpha / self.alpha0
    }

    /// `E[ln theta_k] = psi(alpha_k) - psi(alpha_0)` (same as the mean parameters).
    ///
    /// Accurate to a few ulps of the result even when one `alpha_k` dominates `alpha_0` (the
    /// plain difference would cancel); see [`dirichlet_expectation_into`](crate::dirichlet_expectation_into).
    pub fn expected_log(&self) -> DVector<f64> {
        DVector::from_vec(expected_log_slice(self.alpha.as_slice(), self.alpha0))
    }

    /// The posterior after observing category counts `counts` (Dirichlet-categorical conjugacy):
    /// `Dir(alpha + counts)`. Counts may be fractional (expected counts) but must be `>= 0`.
    ///
    /// # Errors
    /// [`ExpFamError::DimensionMismatch`] if `counts.len() != K`, [`ExpFamError::NonFinite`] /
    /// [`ExpFamError::OutOfDomain`] for NaN or negative counts.
    pub fn posterior(&self, counts: &[f64]) -> Result<Self> {
        check::same_len("counts", self.dim(), counts.len())?;
        for &c in counts {
            check::non_negative("counts", c)?;
        }
        let alpha = DVector::from_iterator(
            self.dim(),
            self.alpha.iter().zip(counts).map(|(a, c)| a + c),
        );
        Self::from_dvector(alpha)
    }
}

/// `psi(alpha_k) - psi(alpha_0)` for every `k`; the entry holding more than half of `alpha_0`
/// (at most one) goes through `-(psi(alpha_k + rest) - psi(alpha_k))` with `rest` summed directly.
pub(crate) fn expected_log_slice(alpha: &[f64], alpha0: f64) -> Vec<f64> {
    let mut out = vec![0.0; alpha.len()];
    crate::dirichlet_rows::expectation_unchecked(alpha, alpha0, &mut out);
    out
}

impl ExponentialFamily for Dirichlet {
    type Natural = DVector<f64>;
    type Mean = DVector<f64>;

    fn natural(&self) -> DVector<f64> {
        self.alpha.add_scalar(-1.0)
    }

    fn from_natural(eta: &DVector<f64>) -> Result<Self> {
        check::all_finite("eta", eta.as_slice())?;
        Self::from_dvector(eta.add_scalar(1.0))
    }

    fn log_partition(&self) -> f64 {
        self.alpha.iter().map(|&a| ln_gamma_pos(a)).sum::<f64>() - ln_gamma_pos(self.alpha0)
    }

    fn mean_parameters(&self) -> DVector<f64> {
        self.expected_log()
    }

    /// Solves `psi(alpha_k) - psi(alpha_0) = mu_k` by Minka's fixed point
    /// `alpha_k <- psi^-1(psi(alpha_0) + mu_k)` followed by Newton steps
    /// (Minka 2000, "Estimating a Dirichlet distribution"). Requires every `mu_k < 0`.
    fn from_mean_parameters(mu: &DVector<f64>) -> Result<Self> {
        check::min_len("mu", mu.len(), 2)?;
        check::all_finite("mu", mu.as_slice())?;
        for &m in mu.iter() {
            if m >= 0.0 {
                return Err(ExpFamError::OutOfDomain {
                    name: "mu (E[ln theta])",
                    value: m,
                    requirement: "< 0",
                });
            }
        }
        // A mean-parameter vector is attainable only if sum exp(mu_k) < 1 (Jensen).
        let s: f64 = mu.iter().map(|m| m.exp()).sum();
        if s >= 1.0 {
            return Err(ExpFamError::OutOfDomain {
                name: "sum exp(mu)",
                value: s,
                requirement: "< 1",
            });
        }
        let alpha = solve_dirichlet_mean(mu.as_slice())?;
        Self::from_dvector(DVector::from_vec(alpha))
    }
}

/// Newton solve of `psi(alpha_k) - psi(sum alpha) = mu_k`, started from the fixed point.
pub(crate) fn solve_dirichlet_mean(mu: &[f64]) -> Result<Vec<f64>> {
    use crate::families::generic::inv_digamma;
    let k = mu.len();
    // Initial guess from the moment-matching heuristic of Minka: a small alpha_0.
    let mut alpha: Vec<f64> = mu.iter().map(|&m| m.exp().max(1e-300)).collect();
    let scale = 1.0 / alpha.iter().sum::<f64>();
    alpha.iter_mut().for_each(|a| *a *= scale);
    let residual = |alpha: &[f64]| -> (Vec<f64>, f64) {
        let a0: f64 = alpha.iter().sum();
        let p0 = digamma_pos(a0);
        let f: Vec<f64> = alpha
            .iter()
            .zip(mu)
            .map(|(&a, &m)| digamma_pos(a) - p0 - m)
            .collect();
        let worst = f
            .iter()
            .zip(mu)
            .fold(0.0_f64, |w, (fi, m)| w.max(fi.abs() / (1.0 + m.abs())));
        (f, worst)
    };
    // Fixed-point iterations (globally convergent), then Newton (quadratic).
    for _ in 0..200 {
        let a0: f64 = alpha.iter().sum();
        let p0 = digamma_pos(a0);
        let next: Vec<f64> = mu.iter().map(|&m| inv_digamma(p0 + m)).collect();
        let change = next
            .iter()
            .zip(&alpha)
            .fold(0.0_f64, |w, (n, a)| w.max((n - a).abs() / a));
        alpha = next;
        if change < 1e-6 {
            break;
        }
    }
    let (mut f, mut worst) = residual(&alpha);
    let mut iterations = 0;
    while worst > 1e-14 && iterations < 100 {
        iterations += 1;
        // Jacobian J = diag(q) - z 1 1^T, q_k = psi'(alpha_k), z = psi'(alpha_0): Sherman-Morrison.
        let a0: f64 = alpha.iter().sum();
        let z = crate::special_fn::trigamma_pos(a0);
        let q: Vec<f64> = alpha
            .iter()
            .map(|&a| crate::special_fn::trigamma_pos(a))
            .collect();
        let sum_fq: f64 = f.iter().zip(&q).map(|(fi, qi)| fi / qi).sum();
        let sum_1q: f64 = q.iter().map(|qi| 1.0 / qi).sum();
        let s = sum_fq / (1.0 - z * sum_1q);
        let delta: Vec<f64> = (0..k).map(|i| (f[i] + z * s) / q[i]).collect();
        let mut t = 1.0;
        loop {
            let trial: Vec<f64> = alpha.iter().zip(&delta).map(|(a, d)| a - t * d).collect();
            if trial.iter().all(|&a| a > 0.0 && a.is_finite()) {
                let (ft, wt) = residual(&trial);
                if wt < worst || t < 1e-6 {
                    alpha = trial;
                    f = ft;
                    worst = wt;
                    break;
                }
            }
            t *= 0.5;
            if t < 1e-12 {
                return Err(ExpFamError::NoConvergence {
                    what: "Dirichlet mean -> natural",
                    iterations,
                    residual: worst,
                });
            }
        }
    }
    if worst > 1e-12 {
        return Err(ExpFamError::NoConvergence {
            what: "Dirichlet mean -> natural",
            iterations,
            residual: worst,
        });
    }
    Ok(alpha)
}

impl SufficientStatistics for Dirichlet {
    type Sample = DVector<f64>;
    fn sufficient_statistics(theta: &DVector<f64>) -> DVector<f64> {
        theta.map(f64::ln)
    }
}

impl Entropy for Dirichlet {
    fn entropy(&self) -> f64 {
        generic::entropy(
            self.log_partition(),
            &self.natural(),
            &self.mean_parameters(),
        )
    }
}

impl KlDivergence for Dirichlet {
    fn kl_divergence(&self, other: &Self) -> Result<f64> {
        check::same_len("other Dirichlet", self.dim(), other.dim())?;
        Ok(generic::kl(
            self.log_partition(),
            other.log_partition(),
            &self.natural(),
            &other.natural(),
            &self.mean_parameters(),
        ))
    }
}

/// Draws `ln G` for `G ~ Gamma(shape, 1)` without underflow for tiny shapes
/// (`G = G' U^(1/shape)`, `G' ~ Gamma(shape + 1, 1)`; Marsaglia & Tsang 2000).
pub(crate) fn sample_ln_gamma<R: Rng + ?Sized>(shape: f64, rng: &mut R) -> f64 {
    use rand::RngExt;
    if shape >= 1.0 {
        let g = rand_distr::Gamma::new(shape, 1.0).expect("shape validated > 0");
        g.sample(rng).ln()
    } else {
        let g = rand_distr::Gamma::new(shape + 1.0, 1.0).expect("shape validated > 0");
        let u: f64 = rng.random::<f64>();
        // u in [0, 1): map 0 to the smallest positive double to keep ln finite.
        let u = if u > 0.0 { u } else { f64::MIN_POSITIVE };
        g.sample(rng).ln() + u.ln() / shape
    }
}

impl Distribution<DVector<f64>> for Dirichlet {
    /// Normalised Gamma draws, computed in log space so that tiny concentrations do not give
    /// all-zero (NaN) vectors.
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> DVector<f64> {
        let logs: Vec<f64> = self
            .alpha
            .iter()
            .map(|&a| sample_ln_gamma(a, rng))
            .collect();
        let m = logs.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let w: Vec<f64> = logs.iter().map(|l| (l - m).exp()).collect();
        let s: f64 = w.iter().sum();
        DVector::from_iterator(w.len(), w.iter().map(|x| x / s))
    }
}
