//! Test metrics of a PBP posterior in the original target units (PBP protocol).

use serde::{Deserialize, Serialize};

use super::model::PbpModel;
use crate::data::{Dataset, Standardizer};
use crate::error::SepError;

/// Test RMSE and mean test log-likelihood in original target units.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    /// Root mean squared error of the predictive mean.
    pub rmse: f64,
    /// Mean log density of the targets under `N(mean, var_weights + beta/(alpha-1))`.
    pub log_likelihood: f64,
}

/// Evaluates `posterior` on `test` (raw units), standardising inputs with `scaler`. With
/// declared public ranges the predictive mean is clamped into the declared target range
/// ([`Standardizer::clamp_prediction`]): a noised posterior can otherwise predict far outside
/// any value a training record could have had.
///
/// # Errors
/// [`SepError::InvalidNaturalParameters`] for an improper posterior, dimension errors for a test
/// set of the wrong width.
pub fn evaluate(
    model: &PbpModel,
    posterior: &[f64],
    scaler: &Standardizer,
    test: &Dataset,
) -> Result<Metrics, SepError> {
    evaluate_predictive(scaler, test, |x| {
        let (m, v, noise) = model.predict(posterior, x)?;
        Ok((m, v + noise))
    })
}

/// Test metrics of any Gaussian predictive on `test` (raw units): `predict` maps a standardised
/// input row to the predictive mean and total variance (model plus noise) in standardised
/// units; the mean is mapped back (and clamped into declared ranges) as in [`evaluate`].
///
/// # Example
/// ```
/// use dp_sep::data::{Dataset, Standardizer};
/// use dp_sep::pbp::evaluate_predictive;
/// let train = Dataset::new(vec![0.0, 1.0, 2.0], vec![1.0, 2.0, 3.0], 1)?;
/// let scaler = Standardizer::fit(&train);
/// // Predicting the standardised target exactly, with unit variance in standardised units.
/// let m = evaluate_predictive(&scaler, &train, |x| Ok((x[0], 1.0)))?;
/// assert!(m.rmse < 1e-12);
/// # Ok::<(), dp_sep::SepError>(())
/// ```
///
/// # Errors
/// Whatever `predict` returns; [`SepError::InvalidParameter`] for a variance that is not
/// finite and positive.
pub fn evaluate_predictive(
    scaler: &Standardizer,
    test: &Dataset,
    mut predict: impl FnMut(&[f64]) -> Result<(f64, f64), SepError>,
) -> Result<Metrics, SepError> {
    let z = scaler.transform(test);
    let s = scaler.target_std();
    let (mut se, mut ll) = (0.0, 0.0);
    for i in 0..test.len() {
        let (m, v) = predict(z.row(i))?;
        if !(v.is_finite() && v > 0.0) {
            return Err(SepError::InvalidParameter {
                name: "predictive variance",
                value: v,
                reason: "must be finite and > 0",
            });
        }
        let mean = scaler.clamp_prediction(scaler.target_to_original(m));
        let var = v * s * s;
        let r = test.target(i) - mean;
        se += r * r;
        ll += -0.5 * (2.0 * std::f64::consts::PI * var).ln() - 0.5 * r * r / var;
    }
    let n = test.len() as f64;
    Ok(Metrics {
        rmse: (se / n).sqrt(),
        log_likelihood: ll / n,
    })
}
