//! Ground truth for the mixture-of-Gaussians posterior: a long Gibbs sampler over the
//! assignments and the means (the authors used NUTS; Gibbs is exact for this conjugate model).
//!
//! `p(z_n = j | mu, x_n) ∝ exp(-||x_n - mu_j||^2 / (2 s^2))`;
//! `mu_j | z, x ~ N(V_j (m0 + S_j / s^2), V_j)`, `V_j = I / (1 + n_j / s^2)`, where `n_j` and `S_j`
//! are the count and sum of the points assigned to `j`. The conditional of `mu_j` is expfam's
//! conjugate update [`expfam::diag_gaussian_known_precision_posterior`] (prior `N(0, I)`, noise
//! precision `1/s^2` per coordinate), drawn with [`expfam::DiagGaussian`]'s sampler.

use expfam::{DiagGaussianNatural, diag_gaussian_known_precision_posterior};
use nalgebra::{DMatrix, DVector};
use rand::Rng;
use rand::RngExt;
use rand_distr::Distribution;

use super::model::Moments;
use crate::error::SepError;

/// Settings of the Gibbs run; build with [`GibbsConfig::builder`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GibbsConfig {
    burn_in: usize,
    samples: usize,
}

/// Unchecked [`GibbsConfig`].
#[derive(Clone, Copy, Debug)]
pub struct GibbsConfigBuilder {
    cfg: GibbsConfig,
}

impl GibbsConfig {
    /// A builder with 1,000 burn-in sweeps and 10,000 kept sweeps.
    ///
    /// # Example
    /// ```
    /// use dp_sep::mog::GibbsConfig;
    /// let config = GibbsConfig::builder().burn_in(100).samples(500).build()?;
    /// assert_eq!((config.burn_in(), config.samples()), (100, 500));
    /// assert!(GibbsConfig::builder().samples(0).build().is_err());
    /// # Ok::<(), dp_sep::SepError>(())
    /// ```
    pub fn builder() -> GibbsConfigBuilder {
        GibbsConfigBuilder {
            cfg: GibbsConfig {
                burn_in: 1000,
                samples: 10_000,
            },
        }
    }

    /// Sweeps discarded at the start.
    pub fn burn_in(&self) -> usize {
        self.burn_in
    }

    /// Sweeps kept.
    pub fn samples(&self) -> usize {
        self.samples
    }
}

impl GibbsConfigBuilder {
    /// Sweeps discarded at the start (default 1,000).
    pub fn burn_in(mut self, sweeps: usize) -> Self {
        self.cfg.burn_in = sweeps;
        self
    }

    /// Sweeps kept (default 10,000).
    pub fn samples(mut self, sweeps: usize) -> Self {
        self.cfg.samples = sweeps;
        self
    }

    /// Validates the settings.
    ///
    /// # Errors
    /// [`SepError::InvalidParameter`] for zero kept sweeps.
    pub fn build(self) -> Result<GibbsConfig, SepError> {
        if self.cfg.samples == 0 {
            return Err(SepError::InvalidParameter {
                name: "samples",
                value: 0.0,
                reason: "must be >= 1",
            });
        }
        Ok(self.cfg)
    }
}

/// Posterior mean and covariance of every component mean, estimated by Gibbs sampling with the
/// components started at `init` (e.g. well-separated public guesses).
///
/// # Errors
/// [`SepError::Empty`] for no data, no kept samples or dimension 0;
/// [`SepError::DimensionMismatch`] for ragged input; [`SepError::NonFinite`] for a NaN or
/// infinite coordinate; [`SepError::InvalidParameter`] for `s` not finite and `> 0`.
pub fn gibbs_posterior<R: Rng + ?Sized>(
    data: &[Vec<f64>],
    init: &[Vec<f64>],
    s: f64,
    config: GibbsConfig,
    rng: &mut R,
) -> Result<Vec<Moments>, SepError> {
    if data.is_empty() || init.is_empty() || config.samples == 0 {
        return Err(SepError::Empty("Gibbs needs data, components and samples"));
    }
    let d = init[0].len();
    if let Some(bad) = data.iter().chain(init).find(|x| x.len() != d) {
        return Err(SepError::DimensionMismatch {
            what: "gibbs_posterior",
            expected: d,
            found: bad.len(),
        });
    }
    if d == 0 {
        return Err(SepError::Empty("Gibbs needs points of dimension >= 1"));
    }
    for (context, rows) in [
        ("gibbs_posterior data", data),
        ("gibbs_posterior init", init),
    ] {
        for (row, x) in rows.iter().enumerate() {
            if let Some(column) = x.iter().position(|v| !v.is_finite()) {
                return Err(SepError::NonFinite {
                    context: context.to_string(),
                    row,
                    column,
                });
            }
        }
    }
    crate::error::check_positive("s", s)?;
    let j = init.len();
    let s2 = s * s;
    let prior =
        DiagGaussianNatural::from_precision(DVector::zeros(d), DVector::from_element(d, 1.0))
            .map_err(|_| SepError::InvalidNaturalParameters("the N(0, I) prior"))?;
    let noise_precision = DVector::from_element(d, 1.0 / s2);
    let mut mu: Vec<Vec<f64>> = init.to_vec();
    let mut sum_mean = vec![DVector::<f64>::zeros(d); j];
    let mut sum_outer = vec![DMatrix::<f64>::zeros(d, d); j];
    let mut logp = vec![0.0; j];
    for sweep in 0..config.burn_in + config.samples {
        let mut counts = vec![0usize; j];
        let mut sums = vec![vec![0.0; d]; j];
        for x in data {
            for k in 0..j {
                let dist: f64 = x.iter().zip(&mu[k]).map(|(a, b)| (a - b) * (a - b)).sum();
                logp[k] = -dist / (2.0 * s2);
            }
            let mx = logp.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let total: f64 = logp.iter().map(|l| (l - mx).exp()).sum();
            let mut u: f64 = rng.random::<f64>() * total;
            let mut pick = j - 1;
            for (k, l) in logp.iter().enumerate() {
                u -= (l - mx).exp();
                if u <= 0.0 {
                    pick = k;
                    break;
                }
            }
            counts[pick] += 1;
            for (a, b) in sums[pick].iter_mut().zip(x) {
                *a += b;
            }
        }
        for k in 0..j {
            let conditional = diag_gaussian_known_precision_posterior(
                &prior,
                &noise_precision,
                counts[k] as f64,
                &DVector::from_column_slice(&sums[k]),
            )
            .and_then(|natural| natural.to_moments())
            .map_err(|_| {
                SepError::InvalidNaturalParameters("a Gibbs conditional is not a proper Gaussian")
            })?;
            mu[k].copy_from_slice(conditional.sample(rng).as_slice());
        }
        if sweep >= config.burn_in {
            for k in 0..j {
                let v = DVector::from_column_slice(&mu[k]);
                sum_outer[k] += &v * v.transpose();
                sum_mean[k] += v;
            }
        }
    }
    let n = config.samples as f64;
    Ok((0..j)
        .map(|k| {
            let mean = &sum_mean[k] / n;
            let cov = &sum_outer[k] / n - &mean * mean.transpose();
            Moments { mean, cov }
        })
        .collect())
}
