//! Predictive probabilities with the probit approximation, and the metrics AUC, accuracy and
//! log loss.

use expfam::MvGaussian;

use super::{BlrRecord, Features};

/// The logistic function: a re-export of [`expfam::sigmoid`], the one implementation.
pub use expfam::sigmoid;

/// `p(y = 1 | x, D) ~ sigmoid(kappa(s^2) mu_a)` with `mu_a = mu^T x`, `s^2 = x^T Sigma x` and
/// `kappa(s^2) = (1 + pi s^2 / 8)^-1/2` (MacKay 1992; Bishop, PRML Eq. 4.153-4.155): the
/// posterior covariance widens the predictive toward 1/2.
///
/// # Example
/// ```
/// use expfam::MvGaussian;
/// use nalgebra::{DMatrix, DVector};
/// use vips_models::blr::{Features, predict_probability};
/// let q = MvGaussian::new(DVector::from_vec(vec![2.0]), DMatrix::from_element(1, 1, 4.0))?;
/// let p = predict_probability(&q, &Features::Dense(vec![1.0]));
/// assert!(p > 0.5 && p < 1.0 / (1.0 + (-2.0f64).exp()));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn predict_probability(posterior: &MvGaussian, x: &Features) -> f64 {
    probability_from_moments(
        posterior.mean().as_slice(),
        posterior.cov().as_slice(),
        posterior.dim(),
        x,
    )
}

/// [`predict_probability`] from the posterior's mean and covariance (column-major `d x d`): the
/// one implementation, shared with the saved model ([`super::SavedBlr`]) so that a reloaded
/// model predicts bit for bit as the fitted one.
pub(crate) fn probability_from_moments(mean: &[f64], cov: &[f64], d: usize, x: &Features) -> f64 {
    let mu_a = x.dot(mean);
    let s2 = x.quadratic_form(cov, d).max(0.0);
    let kappa = (1.0 + std::f64::consts::PI * s2 / 8.0).sqrt().recip();
    sigmoid(kappa * mu_a)
}

/// Predictive probabilities of many records.
pub fn predict_all(posterior: &MvGaussian, records: &[BlrRecord]) -> Vec<f64> {
    records
        .iter()
        .map(|r| predict_probability(posterior, r.features()))
        .collect()
}

/// Area under the ROC curve (Mann-Whitney U with mid-ranks for ties); `None` unless both
/// classes are present or if a score is NaN.
///
/// # Example
/// ```
/// use vips_models::blr::auc;
/// assert_eq!(auc(&[0.1, 0.4, 0.35, 0.8], &[false, false, true, true]), Some(0.75));
/// assert_eq!(auc(&[0.1, 0.2], &[true, true]), None);
/// ```
pub fn auc(scores: &[f64], labels: &[bool]) -> Option<f64> {
    if scores.len() != labels.len() || scores.iter().any(|s| s.is_nan()) {
        return None;
    }
    let pos = labels.iter().filter(|&&l| l).count();
    let neg = labels.len() - pos;
    if pos == 0 || neg == 0 {
        return None;
    }
    let mut order: Vec<usize> = (0..scores.len()).collect();
    order.sort_by(|&a, &b| scores[a].total_cmp(&scores[b]));
    let mut rank_sum_pos = 0.0;
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && scores[order[j + 1]] == scores[order[i]] {
            j += 1;
        }
        let mid_rank = (i + j) as f64 / 2.0 + 1.0;
        for &k in &order[i..=j] {
            if labels[k] {
                rank_sum_pos += mid_rank;
            }
        }
        i = j + 1;
    }
    let u = rank_sum_pos - (pos * (pos + 1)) as f64 / 2.0;
    Some(u / (pos as f64 * neg as f64))
}

/// Fraction of records with `(p >= 1/2) == y`; `None` for no records.
pub fn accuracy(probabilities: &[f64], labels: &[bool]) -> Option<f64> {
    if probabilities.is_empty() || probabilities.len() != labels.len() {
        return None;
    }
    let hits = probabilities
        .iter()
        .zip(labels)
        .filter(|&(&p, &y)| (p >= 0.5) == y)
        .count();
    Some(hits as f64 / labels.len() as f64)
}

/// Mean negative log-likelihood, probabilities clipped to `[1e-15, 1 - 1e-15]` (as
/// scikit-learn's `log_loss`); `None` for no records.
pub fn log_loss(probabilities: &[f64], labels: &[bool]) -> Option<f64> {
    if probabilities.is_empty() || probabilities.len() != labels.len() {
        return None;
    }
    let total: f64 = probabilities
        .iter()
        .zip(labels)
        .map(|(&p, &y)| {
            let p = p.clamp(1e-15, 1.0 - 1e-15);
            if y { -p.ln() } else { -(1.0 - p).ln() }
        })
        .sum();
    Some(total / labels.len() as f64)
}

/// AUC, accuracy and log loss of a posterior on labelled records.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Metrics {
    /// Area under the ROC curve (`NaN` if one class is missing).
    pub auc: f64,
    /// Accuracy at threshold 1/2.
    pub accuracy: f64,
    /// Mean log loss.
    pub log_loss: f64,
}

/// [`Metrics`] of `posterior` on `records`; `None` for no records.
pub fn evaluate(posterior: &MvGaussian, records: &[BlrRecord]) -> Option<Metrics> {
    let p = predict_all(posterior, records);
    let y: Vec<bool> = records.iter().map(BlrRecord::label).collect();
    Some(Metrics {
        auc: auc(&p, &y).unwrap_or(f64::NAN),
        accuracy: accuracy(&p, &y)?,
        log_loss: log_loss(&p, &y)?,
    })
}
