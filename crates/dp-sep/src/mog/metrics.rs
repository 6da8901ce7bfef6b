//! Accuracy of an estimated mixture posterior against ground truth (002 Table 1): components
//! paired by mean location, the Frobenius norm of the paired mean differences, and the average
//! KL divergence between paired Gaussians (the "KL proxy").

use expfam::KlDivergence;
use serde::{Deserialize, Serialize};

use super::model::Moments;
use crate::error::SepError;

/// Table-1 style accuracy figures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MogAccuracy {
    /// `||M_est - M_true||_F` over the `J x d` matrix of paired posterior means.
    pub f_norm: f64,
    /// `sqrt(sum_j ||V_est_j - V_true_j||_F^2)` over paired posterior covariances.
    pub f_norm_cov: f64,
    /// Mean over pairs of `KL(N_true_j || N_est_j)`.
    pub kl_proxy: f64,
    /// `pairing[j]` = estimated component paired with true component `j`.
    pub pairing: Vec<usize>,
}

/// `KL(N(m0, S0) || N(m1, S1))`, computed by `expfam`'s [`expfam::MvGaussian`] (clamped at 0 against
/// rounding).
///
/// # Example
/// ```
/// use dp_sep::mog::{Moments, kl_gaussian};
/// use nalgebra::{DMatrix, DVector};
/// let p = Moments { mean: DVector::zeros(2), cov: DMatrix::identity(2, 2) };
/// let q = Moments { mean: DVector::from_vec(vec![1.0, 0.0]), cov: DMatrix::identity(2, 2) };
/// assert!((kl_gaussian(&p, &q)? - 0.5).abs() < 1e-15);
/// assert_eq!(kl_gaussian(&p, &p)?, 0.0);
/// # Ok::<(), dp_sep::SepError>(())
/// ```
///
/// # Errors
/// [`SepError::InvalidNaturalParameters`] if a covariance is not symmetric positive definite or a
/// value is not finite; [`SepError::DimensionMismatch`] if the dimensions differ.
pub fn kl_gaussian(p: &Moments, q: &Moments) -> Result<f64, SepError> {
    if p.mean.len() != q.mean.len() {
        return Err(SepError::DimensionMismatch {
            what: "kl_gaussian dimension",
            expected: p.mean.len(),
            found: q.mean.len(),
        });
    }
    p.to_gaussian()?
        .kl_divergence(&q.to_gaussian()?)
        .map_err(|_| SepError::InvalidNaturalParameters("Gaussians of different dimensions"))
}

fn permutations(n: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return vec![vec![]];
    }
    let mut out = Vec::new();
    for p in permutations(n - 1) {
        for pos in 0..=p.len() {
            let mut q = p.clone();
            q.insert(pos, n - 1);
            out.push(q);
        }
    }
    out
}

/// Pairs components one-to-one by minimum total squared distance between means (exhaustive over
/// permutations; `J <= 8`) and computes the figures.
///
/// # Errors
/// [`SepError::DimensionMismatch`] if the component counts differ or `J > 8`;
/// [`SepError::InvalidNaturalParameters`] if a covariance is not positive definite.
pub fn compare(truth: &[Moments], estimate: &[Moments]) -> Result<MogAccuracy, SepError> {
    let j = truth.len();
    if estimate.len() != j || j > 8 {
        return Err(SepError::DimensionMismatch {
            what: "mog::compare components (and J <= 8)",
            expected: j,
            found: estimate.len(),
        });
    }
    let dist = |a: usize, b: usize| (&truth[a].mean - &estimate[b].mean).norm_squared();
    let pairing = permutations(j)
        .into_iter()
        .min_by(|p, q| {
            let cp: f64 = p.iter().enumerate().map(|(a, &b)| dist(a, b)).sum();
            let cq: f64 = q.iter().enumerate().map(|(a, &b)| dist(a, b)).sum();
            cp.total_cmp(&cq)
        })
        .unwrap_or_default();
    let mut f2 = 0.0;
    let mut c2 = 0.0;
    let mut kl = 0.0;
    for (a, &b) in pairing.iter().enumerate() {
        f2 += dist(a, b);
        c2 += (&truth[a].cov - &estimate[b].cov).norm_squared();
        kl += kl_gaussian(&truth[a], &estimate[b])?;
    }
    Ok(MogAccuracy {
        f_norm: f2.sqrt(),
        f_norm_cov: c2.sqrt(),
        kl_proxy: kl / j as f64,
        pairing,
    })
}
