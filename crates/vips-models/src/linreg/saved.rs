//! A fitted linear regression as a file: [`SavedLinreg`], a versioned JSON model that holds the
//! released posterior and the public settings needed to predict on new raw rows, and nothing
//! else. The pieces every saved model shares ([`ModelFileError`], [`SavedPrivacy`],
//! [`MODEL_FORMAT_VERSION`], [`model_file_kind`]) live in [`crate::saved`] and are re-exported
//! here.
//!
//! # Privacy
//! A saved model holds post-processing of the noised release (the Normal-Gamma posterior) and
//! public, caller-declared settings (column names, declared ranges, the radius, the prior, the
//! privacy summary). It never holds data-derived numbers that were not noised: no record count
//! (unless the caller declared it as the public population), no clip counts, no timings.

use std::path::Path;

use nalgebra::{DMatrix, DVector};
use serde::{Deserialize, Serialize};

use super::{LinregConfig, LinregError, LinregGlobal, RowMap};
use crate::engine::FitResult;

use crate::saved::load_model;
pub use crate::saved::{
    InvalidModel, MODEL_FORMAT_VERSION, ModelFault, ModelFileError, SavedPrivacy, model_file_kind,
    read_model_file,
};
pub(crate) use crate::saved::{model_json, parse_model};

/// A declared public range of one column: clip into `[lower, upper]`, then map by
/// `(v - centre) / scale`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ColumnRange {
    /// The column's name (as in the data's header or the ranges file).
    pub name: String,
    /// Declared lower end.
    pub lower: f64,
    /// Declared upper end.
    pub upper: f64,
    /// Public centre of the affine map.
    pub centre: f64,
    /// Public scale of the affine map (`> 0`).
    pub scale: f64,
}

impl ColumnRange {
    /// Clip into the range, then `(v - centre) / scale` (the map of dp-sep's
    /// `Standardizer::from_public_ranges`, the same operations in the same order).
    pub fn map(&self, v: f64) -> f64 {
        (v.clamp(self.lower, self.upper) - self.centre) / self.scale
    }

    fn validate(&self, what: &str) -> Result<(), InvalidModel> {
        let ok = [self.lower, self.upper, self.centre, self.scale]
            .iter()
            .all(|v| v.is_finite())
            && self.lower < self.upper
            && self.scale > 0.0;
        if ok {
            Ok(())
        } else {
            Err(InvalidModel::new(
                format!("{what} `{}`", crate::limits::excerpt(&self.name)),
                ModelFault::Needs("finite lower < upper and scale > 0"),
            ))
        }
    }
}

/// The Normal-Gamma posterior as saved: `tau ~ Gamma(noise_shape, noise_rate)`,
/// `w | tau ~ N(mean, (tau precision)^-1)` (matrix by rows).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SavedNormalGamma {
    mean: Vec<f64>,
    precision: Vec<Vec<f64>>,
    noise_shape: f64,
    noise_rate: f64,
}

/// The public prior of the fit (mapped units).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SavedPrior {
    prior_precision: f64,
    prior_noise_shape: f64,
    prior_noise_rate: f64,
    floor_scale: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct LinregFile {
    format_version: u32,
    model: String,
    features: Vec<ColumnRange>,
    target: ColumnRange,
    radius: f64,
    prior: SavedPrior,
    eigenvalue_floor: f64,
    eigenvalues_raised: usize,
    posterior: SavedNormalGamma,
    privacy: SavedPrivacy,
}

/// One prediction in the target's original units.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct LinregPrediction {
    /// Predictive mean.
    pub mean: f64,
    /// Predictive variance (the Student-t's `scale^2 dof / (dof - 2)`; infinite for `dof <= 2`).
    pub variance: f64,
    /// Degrees of freedom of the Student-t predictive.
    pub dof: f64,
}

/// A fitted linear regression ready to save, load and predict with: the released Normal-Gamma
/// posterior, the declared public ranges of the features and the target, the public radius and
/// prior, and the privacy summary. JSON with `"format_version": 1` and `"model": "linreg"`.
///
/// # Privacy
/// Post-processing of the fit's release and public settings only (see the module documentation); publishing it spends nothing beyond the fit's `(epsilon, delta)`.
///
/// # Example
/// ```
/// use vips_models::engine::Privacy;
/// use vips_models::linreg::{
///     ColumnRange, Linreg, LinregConfig, RowMap, SavedLinreg, batch_config, fit,
/// };
/// let range = |name: &str| ColumnRange { name: name.into(), lower: -1.0, upper: 1.0, centre: 0.0, scale: 1.0 };
/// let rows = RowMap::new(1, None)?;
/// let records = (0..100)
///     .map(|i| { let z = (i as f64 * 0.1).sin(); rows.record(&[z], 0.5 * z).map(|r| r.0) })
///     .collect::<Result<Vec<_>, _>>()?;
/// let model = Linreg::new(LinregConfig::builder(rows.dim()).build()?);
/// let fitted = fit(&model, records, &batch_config(100, Privacy::NonPrivate, None)?)?.result;
/// let saved = SavedLinreg::from_fit(vec![range("x")], range("y"), &rows, model.config(), &fitted)?;
/// let back = SavedLinreg::from_json(&saved.to_json()?, "model.json")?;
/// assert_eq!(back.predict(&[0.3])?, saved.predict(&[0.3])?);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct SavedLinreg {
    file: LinregFile,
    rows: RowMap,
    mean: DVector<f64>,
    covariance: DMatrix<f64>,
}

fn matrix_rows(m: &DMatrix<f64>) -> Vec<Vec<f64>> {
    (0..m.nrows())
        .map(|i| (0..m.ncols()).map(|j| m[(i, j)]).collect())
        .collect()
}

/// A `d x d` matrix from rows, or why not.
pub(crate) fn matrix_from_rows(
    rows: &[Vec<f64>],
    d: usize,
    what: &'static str,
) -> Result<DMatrix<f64>, InvalidModel> {
    if rows.len() != d || rows.iter().any(|r| r.len() != d) {
        return Err(InvalidModel::new(
            what,
            ModelFault::Shape { rows: d, cols: d },
        ));
    }
    if rows.iter().flatten().any(|v| !v.is_finite()) {
        return Err(InvalidModel::new(what, ModelFault::NotFinite));
    }
    Ok(DMatrix::from_fn(d, d, |i, j| rows[i][j]))
}

impl SavedLinreg {
    /// The saved model of a fit: `features` and `target` are the declared public ranges used to
    /// map the training rows (in feature order), `rows` the public row map, `config` the prior.
    ///
    /// # Errors
    /// [`LinregError::DimensionMismatch`] if the ranges, the row map and the posterior disagree;
    /// [`LinregError::Invalid`] if the posterior is not finite or its precision cannot be
    /// factorised.
    pub fn from_fit(
        features: Vec<ColumnRange>,
        target: ColumnRange,
        rows: &RowMap,
        config: &LinregConfig,
        result: &FitResult<LinregGlobal>,
    ) -> Result<Self, LinregError> {
        let post = result.global.posterior();
        let d = rows.dim();
        for (what, found) in [
            ("declared feature ranges vs row map", features.len() + 1),
            ("posterior mean vs row map", post.mean().len()),
        ] {
            if found != d {
                return Err(LinregError::DimensionMismatch {
                    what,
                    expected: d,
                    found,
                });
            }
        }
        for r in features.iter().chain([&target]) {
            if r.validate("range").is_err() {
                return Err(LinregError::invalid(
                    "declared range",
                    r.upper - r.lower,
                    "needs finite lower < upper, centre and scale > 0",
                ));
            }
        }
        let (shape, rate) = post.noise_precision();
        let (a0, b0) = config.noise_prior();
        let file = LinregFile {
            format_version: MODEL_FORMAT_VERSION,
            model: "linreg".into(),
            features,
            target,
            radius: rows.radius(),
            prior: SavedPrior {
                prior_precision: config.prior_precision(),
                prior_noise_shape: a0,
                prior_noise_rate: b0,
                floor_scale: config.floor_scale(),
            },
            eigenvalue_floor: result.global.eigenvalue_floor(),
            eigenvalues_raised: result.global.eigenvalues_raised(),
            posterior: SavedNormalGamma {
                mean: post.mean().as_slice().to_vec(),
                precision: matrix_rows(post.precision()),
                noise_shape: shape,
                noise_rate: rate,
            },
            privacy: SavedPrivacy::from_summary(&result.privacy, result.iterations),
        };
        Ok(Self::from_file(file)?)
    }

    fn from_file(file: LinregFile) -> Result<Self, InvalidModel> {
        if file.model != "linreg" {
            return Err(InvalidModel::new(
                "`model`",
                ModelFault::WrongKind("linreg"),
            ));
        }
        if file.features.is_empty() {
            return Err(InvalidModel::new("features", ModelFault::Empty));
        }
        for f in &file.features {
            f.validate("feature")?;
        }
        file.target.validate("target")?;
        let rows = RowMap::new(file.features.len(), Some(file.radius))
            .map_err(|e| InvalidModel::new("radius", ModelFault::Linreg(Box::new(e))))?;
        let d = rows.dim();
        let p = &file.posterior;
        if p.mean.len() != d {
            return Err(InvalidModel::new(
                "posterior.mean",
                ModelFault::Length {
                    by: "the features and intercept",
                    expected: d,
                    found: p.mean.len(),
                },
            ));
        }
        if p.mean.iter().any(|v| !v.is_finite()) {
            return Err(InvalidModel::new("posterior.mean", ModelFault::NotFinite));
        }
        if !(p.noise_shape > 0.0
            && p.noise_shape.is_finite()
            && p.noise_rate > 0.0
            && p.noise_rate.is_finite())
        {
            return Err(InvalidModel::new(
                "posterior.noise_shape and noise_rate",
                ModelFault::OutOfDomain("finite and > 0"),
            ));
        }
        let precision = matrix_from_rows(&p.precision, d, "posterior.precision")?;
        // The covariance as `NormalGamma` computes it (same operations, same bits).
        let covariance = precision
            .clone()
            .cholesky()
            .ok_or_else(|| {
                InvalidModel::new("posterior.precision", ModelFault::NotPositiveDefinite)
            })?
            .inverse();
        if covariance.iter().any(|v| !v.is_finite()) {
            return Err(InvalidModel::new(
                "posterior.precision",
                ModelFault::Singular,
            ));
        }
        file.privacy.validate()?;
        Ok(Self {
            mean: DVector::from_column_slice(&p.mean),
            file,
            rows,
            covariance,
        })
    }

    /// The model as pretty JSON (`format_version` 1).
    ///
    /// # Errors
    /// [`ModelFileError::Invalid`] if a value is not finite.
    pub fn to_json(&self) -> Result<String, ModelFileError> {
        model_json(&self.file)
    }

    /// Reads a model from JSON text; `path` names the file in errors.
    ///
    /// # Errors
    /// [`ModelFileError::NewerVersion`] for a newer `format_version`,
    /// [`ModelFileError::WrongModel`] for another model kind, [`ModelFileError::Corrupt`] for
    /// malformed JSON, [`ModelFileError::CorruptModel`] for fields that are inconsistent (sizes,
    /// non-finite values, a precision that is not positive definite).
    pub fn from_json(text: &str, path: &str) -> Result<Self, ModelFileError> {
        parse_model(text, path, "linreg", Self::from_file)
    }

    /// Reads a model file.
    ///
    /// # Errors
    /// [`ModelFileError::Io`] for a missing or unreadable file; as [`SavedLinreg::from_json`].
    pub fn load(path: impl AsRef<Path>) -> Result<Self, ModelFileError> {
        load_model(path.as_ref(), Self::from_json)
    }

    /// The feature columns' names, in the order [`SavedLinreg::predict`] expects them.
    pub fn feature_names(&self) -> Vec<&str> {
        self.file.features.iter().map(|f| f.name.as_str()).collect()
    }

    /// The target column's name.
    pub fn target_name(&self) -> &str {
        &self.file.target.name
    }

    /// The privacy summary of the fit.
    pub fn privacy(&self) -> &SavedPrivacy {
        &self.file.privacy
    }

    /// Posterior mean of the weights (mapped units, intercept last).
    pub fn mean(&self) -> &DVector<f64> {
        &self.mean
    }

    /// The predictive Student-t at a mapped feature vector `x` ([`RowMap::features`]):
    /// `(location, scale^2, dof)` in mapped units, computed exactly as
    /// [`super::NormalGamma::predictive_t`].
    pub fn predictive_t(&self, x: &[f64]) -> (f64, f64, f64) {
        let p = &self.file.posterior;
        let xv = DVector::from_column_slice(x);
        let loc = self.mean.dot(&xv);
        let quad = (self.covariance.clone() * &xv).dot(&xv).max(0.0);
        (
            loc,
            p.noise_rate / p.noise_shape * (1.0 + quad),
            2.0 * p.noise_shape,
        )
    }

    /// Maps one raw row (the feature columns in [`SavedLinreg::feature_names`] order, original
    /// units) by the declared ranges and the row map.
    ///
    /// # Errors
    /// [`LinregError::DimensionMismatch`] for a row of the wrong length, [`LinregError::NonFinite`].
    pub fn features(&self, raw: &[f64]) -> Result<Vec<f64>, LinregError> {
        if raw.len() != self.file.features.len() {
            return Err(LinregError::DimensionMismatch {
                what: "row vs model features",
                expected: self.file.features.len(),
                found: raw.len(),
            });
        }
        if raw.iter().any(|v| !v.is_finite()) {
            return Err(LinregError::NonFinite("row features"));
        }
        let z: Vec<f64> = raw
            .iter()
            .zip(&self.file.features)
            .map(|(&v, r)| r.map(v))
            .collect();
        self.rows.features(&z)
    }

    /// The predictive mean and variance of one raw row, in the target's original units.
    ///
    /// # Errors
    /// As [`SavedLinreg::features`].
    pub fn predict(&self, raw: &[f64]) -> Result<LinregPrediction, LinregError> {
        let x = self.features(raw)?;
        let (loc, s2, dof) = self.predictive_t(&x);
        let t = &self.file.target;
        let var = if dof > 2.0 {
            s2 * dof / (dof - 2.0)
        } else {
            f64::INFINITY
        };
        Ok(LinregPrediction {
            mean: loc * t.scale + t.centre,
            variance: var * t.scale * t.scale,
            dof,
        })
    }
}

impl Serialize for SavedLinreg {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.file.serialize(s)
    }
}

impl<'de> Deserialize<'de> for SavedLinreg {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let file = LinregFile::deserialize(d)?;
        if file.format_version != MODEL_FORMAT_VERSION {
            return Err(serde::de::Error::custom(format!(
                "format_version {} is not {MODEL_FORMAT_VERSION}",
                file.format_version
            )));
        }
        Self::from_file(file).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Privacy;
    use crate::linreg::{Linreg, batch_config, fit};

    fn range(name: &str, lower: f64, upper: f64) -> ColumnRange {
        ColumnRange {
            name: name.into(),
            lower,
            upper,
            centre: 0.5 * (lower + upper),
            scale: 0.5 * (upper - lower),
        }
    }

    fn fitted(private: bool) -> (SavedLinreg, Linreg, FitResult<LinregGlobal>, RowMap) {
        let rows = RowMap::new(2, None).unwrap();
        let features = vec![range("a", 0.0, 10.0), range("b", -5.0, 5.0)];
        let target = range("t", 0.0, 20.0);
        let records: Vec<_> = (0..300)
            .map(|i| {
                let a = (i as f64 * 0.37).sin() * 5.0 + 5.0;
                let b = (i as f64 * 0.11).cos() * 4.0;
                let t = 1.0 + a + 0.5 * b;
                let z = [features[0].map(a), features[1].map(b)];
                rows.record(&z, target.map(t)).unwrap().0
            })
            .collect();
        let model = Linreg::new(LinregConfig::builder(rows.dim()).build().unwrap());
        let privacy = if private {
            Privacy::Target {
                epsilon: 1.0,
                delta: 1e-5,
            }
        } else {
            Privacy::NonPrivate
        };
        let result = fit(
            &model,
            records,
            &batch_config(300, privacy, Some(7)).unwrap(),
        )
        .unwrap()
        .result;
        let saved =
            SavedLinreg::from_fit(features, target, &rows, model.config(), &result).unwrap();
        (saved, model, result, rows)
    }

    #[test]
    fn saved_predictions_are_the_posteriors_bit_for_bit() {
        for private in [false, true] {
            let (saved, _, result, _) = fitted(private);
            let back = SavedLinreg::from_json(&saved.to_json().unwrap(), "m.json").unwrap();
            for raw in [[0.0, 0.0], [3.3, -1.7], [12.0, 9.0], [7.123456789, 4.999]] {
                let x = saved.features(&raw).unwrap();
                let want = result.global.posterior().predictive_t(&x);
                let got = back.predictive_t(&back.features(&raw).unwrap());
                assert_eq!(
                    [want.0.to_bits(), want.1.to_bits(), want.2.to_bits()],
                    [got.0.to_bits(), got.1.to_bits(), got.2.to_bits()]
                );
                let (m, v) = result.global.posterior().predict(&x);
                let p = back.predict(&raw).unwrap();
                assert_eq!(p.mean.to_bits(), (m * 10.0 + 10.0).to_bits());
                assert_eq!(p.variance.to_bits(), (v * 10.0 * 10.0).to_bits());
            }
            assert_eq!(back, saved);
            assert_eq!(back.privacy().private, private);
        }
    }

    #[test]
    fn newer_version_wrong_model_and_corruption_are_typed() {
        let (saved, ..) = fitted(false);
        let json = saved.to_json().unwrap();
        let newer = json.replacen("\"format_version\": 1", "\"format_version\": 2", 1);
        assert!(matches!(
            SavedLinreg::from_json(&newer, "m.json"),
            Err(ModelFileError::NewerVersion { found: 2, .. })
        ));
        let blr = json.replacen("\"model\": \"linreg\"", "\"model\": \"blr\"", 1);
        assert!(matches!(
            SavedLinreg::from_json(&blr, "m.json"),
            Err(ModelFileError::WrongModel { .. })
        ));
        let e = SavedLinreg::from_json(&json[..json.len() / 2], "dir/m.json").unwrap_err();
        assert!(e.to_string().starts_with("dir/m.json: corrupt"), "{e}");
        let bad_radius = json.replacen("\"radius\": ", "\"radius\": -", 1);
        assert!(matches!(
            SavedLinreg::from_json(&bad_radius, "m.json"),
            Err(ModelFileError::CorruptModel { .. })
        ));
        assert!(matches!(
            SavedLinreg::load("/nonexistent/m.json"),
            Err(ModelFileError::Io { .. })
        ));
    }
}
