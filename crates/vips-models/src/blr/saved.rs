//! A fitted Bayesian logistic regression as a file: [`SavedBlr`], a versioned JSON model (the
//! released Gaussian posterior, the public feature map and the public settings) that predicts
//! on new raw rows bit for bit as the fitted posterior does.
//!
//! # Privacy
//! Post-processing of the noised releases (`q(m) = N(mu, Sigma)`, `<alpha>`) and public,
//! caller-declared settings (column names, declared ranges, the radius, the hyperprior, the
//! privacy summary). No record count, clip count or timing is written.

use std::path::Path;

use nalgebra::{DMatrix, DVector};
use serde::{Deserialize, Serialize};

use super::predict::probability_from_moments;
use super::{BlrError, BlrGlobal, BlrRecord, FeatureMap, Features, Hyperprior};
use crate::engine::FitResult;
// `model_json` and `parse_model` are `crate::saved`'s, re-exported by `linreg` for the crate.
use crate::linreg::{matrix_from_rows, model_json, parse_model};
use crate::saved::{
    InvalidModel, ModelFault, ModelFileError, NEWEST_MODEL_FORMAT_VERSION, SavedPrivacy,
    SavedSampling, load_model,
};

/// The public map of raw features as saved: enough to rebuild the [`FeatureMap`] exactly.
///
/// # Example
/// ```
/// use vips_models::blr::SavedScaling;
/// let s = SavedScaling::Ranges { lower: vec![0.0], upper: vec![10.0], intercept: true, radius: None };
/// let map = s.feature_map()?;
/// assert_eq!(map.output_dim(), 2);
/// # Ok::<(), vips_models::blr::BlrError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum SavedScaling {
    /// Declared per-feature ranges onto `[-1, 1]` ([`FeatureMap::from_ranges`]), an optional
    /// intercept, and the radius (default `sqrt(output dimension)`).
    Ranges {
        /// Declared lower ends, in feature order.
        lower: Vec<f64>,
        /// Declared upper ends.
        upper: Vec<f64>,
        /// Whether a constant intercept feature is appended.
        intercept: bool,
        /// The public radius (`None`: the default of [`FeatureMap::from_ranges`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        radius: Option<f64>,
    },
    /// No scaling: rows are taken as already in the unit ball ([`FeatureMap::identity`]).
    Identity {
        /// Number of raw features.
        dim: usize,
    },
}

impl SavedScaling {
    /// The feature map.
    ///
    /// # Errors
    /// As [`FeatureMap::from_ranges`] and [`FeatureMap::with_radius`].
    pub fn feature_map(&self) -> Result<FeatureMap, BlrError> {
        match self {
            Self::Ranges {
                lower,
                upper,
                intercept,
                radius,
            } => {
                let map = FeatureMap::from_ranges(lower, upper, *intercept)?;
                match radius {
                    Some(r) => map.with_radius(*r),
                    None => Ok(map),
                }
            }
            Self::Identity { dim } => {
                if *dim == 0 {
                    return Err(BlrError::Empty("no features"));
                }
                Ok(FeatureMap::identity(*dim))
            }
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SavedGaussian {
    mean: Vec<f64>,
    covariance: Vec<Vec<f64>>,
    alpha_mean: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct BlrFile {
    format_version: u32,
    model: String,
    label: String,
    features: Vec<String>,
    scaling: SavedScaling,
    hyperprior: Hyperprior,
    posterior: SavedGaussian,
    /// The batch regime (format version 2; absent in version 1, where `privacy.neighbouring`
    /// says it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sampling: Option<SavedSampling>,
    privacy: SavedPrivacy,
}

/// A fitted Bayesian logistic regression ready to save, load and predict with. JSON with
/// `"format_version": 2` and `"model": "blr"`; version-1 files (without `"sampling"`) still
/// load, their regime read from `privacy.neighbouring`.
///
/// # Privacy
/// Post-processing of the fit's releases and public settings only (see the module documentation).
///
/// # Example
/// ```
/// use vips_models::blr::{self, Blr, BlrConfig, BlrRecord, Features, SavedBlr, SavedScaling};
/// use vips_models::engine::Privacy;
/// let scaling = SavedScaling::Ranges { lower: vec![-1.0], upper: vec![1.0], intercept: true, radius: None };
/// let map = scaling.feature_map()?;
/// let records = (0..200)
///     .map(|i| { let v = (i as f64 * 0.37).sin(); BlrRecord::new(Features::Dense(map.apply(&[v])?), v > 0.1).map(|r| r.0) })
///     .collect::<Result<Vec<_>, _>>()?;
/// let model = Blr::new(BlrConfig::builder(2).build()?);
/// let fitted = blr::fit(&model, records, &blr::batch_config(200, 10, Privacy::NonPrivate, None)?)?.result;
/// let saved = SavedBlr::from_fit("y", vec!["v".into()], scaling, model.config().prior(), &fitted)?;
/// let back = SavedBlr::from_json(&saved.to_json()?, "model.json")?;
/// assert_eq!(back.predict(&[0.5])?.to_bits(), saved.predict(&[0.5])?.to_bits());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct SavedBlr {
    file: BlrFile,
    /// The batch regime (as written, or from a version-1 file's neighbouring relation).
    sampling: SavedSampling,
    map: FeatureMap,
    /// Column-major covariance, as [`expfam::MvGaussian::cov`] stores it.
    cov: Vec<f64>,
}

impl SavedBlr {
    /// The saved model of a fit: `label` and `features` are the CSV's column names (features in
    /// order), `scaling` the public map the training rows went through, `hyperprior` the
    /// model's prior.
    ///
    /// # Errors
    /// As [`SavedScaling::feature_map`]; [`BlrError::DimensionMismatch`] if names, map and
    /// posterior disagree; [`BlrError::Invalid`] for a posterior that is not finite.
    pub fn from_fit(
        label: &str,
        features: Vec<String>,
        scaling: SavedScaling,
        hyperprior: Hyperprior,
        result: &FitResult<BlrGlobal>,
    ) -> Result<Self, BlrError> {
        let post = result.global.posterior();
        let map = scaling.feature_map()?;
        for (what, expected, found) in [
            (
                "feature names vs feature map",
                map.input_dim(),
                features.len(),
            ),
            ("posterior vs feature map", map.output_dim(), post.dim()),
        ] {
            if found != expected {
                return Err(BlrError::DimensionMismatch {
                    what,
                    expected,
                    found,
                });
            }
        }
        let cov = post.cov();
        let file = BlrFile {
            format_version: NEWEST_MODEL_FORMAT_VERSION,
            model: "blr".into(),
            label: label.to_string(),
            features,
            scaling,
            hyperprior,
            posterior: SavedGaussian {
                mean: post.mean().as_slice().to_vec(),
                covariance: (0..cov.nrows())
                    .map(|i| (0..cov.ncols()).map(|j| cov[(i, j)]).collect())
                    .collect(),
                alpha_mean: result.global.alpha_mean(),
            },
            sampling: Some(SavedSampling::from_batching(&result.sampling)),
            privacy: SavedPrivacy::from_summary(&result.privacy, result.iterations),
        };
        Ok(Self::from_file(file)?)
    }

    fn from_file(file: BlrFile) -> Result<Self, InvalidModel> {
        if file.model != "blr" {
            return Err(InvalidModel::new("`model`", ModelFault::WrongKind("blr")));
        }
        let sampling = SavedSampling::of_file(file.format_version, file.sampling, &file.privacy)?;
        let map = file
            .scaling
            .feature_map()
            .map_err(|e| InvalidModel::new("scaling", ModelFault::Blr(Box::new(e))))?;
        if file.features.len() != map.input_dim() {
            return Err(InvalidModel::new(
                "features",
                ModelFault::Length {
                    by: "the scaling",
                    expected: map.input_dim(),
                    found: file.features.len(),
                },
            ));
        }
        if let Some((i, n)) = file
            .features
            .iter()
            .enumerate()
            .find(|(i, n)| file.features[..*i].contains(n) || **n == file.label)
        {
            return Err(InvalidModel::new(
                format!("feature {}", i + 1),
                ModelFault::Duplicate(crate::limits::excerpt(n)),
            ));
        }
        let d = map.output_dim();
        let p = &file.posterior;
        if p.mean.len() != d {
            return Err(InvalidModel::new(
                "posterior.mean",
                ModelFault::Length {
                    by: "the feature map",
                    expected: d,
                    found: p.mean.len(),
                },
            ));
        }
        if p.mean.iter().any(|v| !v.is_finite()) || !p.alpha_mean.is_finite() {
            return Err(InvalidModel::new("posterior", ModelFault::NotFinite));
        }
        let cov: DMatrix<f64> = matrix_from_rows(&p.covariance, d, "posterior.covariance")?;
        // A valid Gaussian (symmetric, positive definite); predictions use the stored values.
        expfam::MvGaussian::new(DVector::from_column_slice(&p.mean), cov.clone())
            .map_err(|e| InvalidModel::new("posterior", ModelFault::Posterior(e)))?;
        Ok(Self {
            cov: cov.as_slice().to_vec(),
            sampling,
            map,
            file,
        })
    }

    /// The model as pretty JSON (`format_version` 2, or 1 for a model read from a version-1
    /// file: the file is written back as it was read).
    ///
    /// # Errors
    /// [`ModelFileError::Invalid`] if a value is not finite.
    pub fn to_json(&self) -> Result<String, ModelFileError> {
        model_json(&self.file)
    }

    /// Reads a model from JSON text; `path` names the file in errors.
    ///
    /// # Errors
    /// [`ModelFileError::NewerVersion`], [`ModelFileError::WrongModel`],
    /// [`ModelFileError::Corrupt`] (malformed), [`ModelFileError::CorruptModel`] (inconsistent
    /// sizes, a covariance that is not symmetric positive definite).
    pub fn from_json(text: &str, path: &str) -> Result<Self, ModelFileError> {
        parse_model(text, path, "blr", Self::from_file)
    }

    /// Reads a model file.
    ///
    /// # Errors
    /// [`ModelFileError::Io`] for a missing or unreadable file; as [`SavedBlr::from_json`].
    pub fn load(path: impl AsRef<Path>) -> Result<Self, ModelFileError> {
        load_model(path.as_ref(), Self::from_json)
    }

    /// The raw feature columns' names, in the order [`SavedBlr::predict`] expects them.
    pub fn feature_names(&self) -> Vec<&str> {
        self.file.features.iter().map(String::as_str).collect()
    }

    /// The label column's name.
    pub fn label(&self) -> &str {
        &self.file.label
    }

    /// The privacy summary of the fit.
    pub fn privacy(&self) -> &SavedPrivacy {
        &self.file.privacy
    }

    /// The fit's batch regime (`sampling` in the file; from `privacy.neighbouring` for a
    /// version-1 file).
    pub fn sampling(&self) -> SavedSampling {
        self.sampling
    }

    /// The public feature map.
    pub fn feature_map(&self) -> &FeatureMap {
        &self.map
    }

    /// The public scaling as saved (what the rows went through before the unit-ball clip).
    pub fn scaling(&self) -> &SavedScaling {
        &self.file.scaling
    }

    /// Posterior mean (mapped units; the intercept last if there is one).
    pub fn mean(&self) -> &[f64] {
        &self.file.posterior.mean
    }

    /// `p(y = 1 | x)` of a mapped record's features, as [`super::predict_probability`] computes
    /// it from the fitted posterior.
    pub fn probability(&self, x: &Features) -> f64 {
        probability_from_moments(
            &self.file.posterior.mean,
            &self.cov,
            self.map.output_dim(),
            x,
        )
    }

    /// `p(y = 1 | x)` of one raw row (feature columns in [`SavedBlr::feature_names`] order):
    /// the public map, the unit-ball clip, then the probit-approximated predictive.
    ///
    /// # Errors
    /// As [`FeatureMap::apply`] (wrong length, a non-finite value).
    pub fn predict(&self, raw: &[f64]) -> Result<f64, BlrError> {
        let x = self.map.apply(raw)?;
        let (record, _) = BlrRecord::new(Features::Dense(x), false)?;
        Ok(self.probability(record.features()))
    }
}

impl Serialize for SavedBlr {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.file.serialize(s)
    }
}

impl<'de> Deserialize<'de> for SavedBlr {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let file = BlrFile::deserialize(d)?;
        if !(1..=NEWEST_MODEL_FORMAT_VERSION).contains(&file.format_version) {
            return Err(serde::de::Error::custom(format!(
                "format_version {} is not 1 to {NEWEST_MODEL_FORMAT_VERSION}",
                file.format_version
            )));
        }
        Self::from_file(file).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blr::{Blr, BlrConfig, batch_config, fit, predict_probability};
    use crate::engine::Privacy;

    fn fitted(private: bool) -> (SavedBlr, FitResult<BlrGlobal>) {
        let scaling = SavedScaling::Ranges {
            lower: vec![0.0, -3.0],
            upper: vec![10.0, 3.0],
            intercept: true,
            radius: None,
        };
        let map = scaling.feature_map().unwrap();
        let records: Vec<_> = (0..400)
            .map(|i| {
                let a = (i as f64 * 0.37).sin() * 5.0 + 5.0;
                let b = (i as f64 * 0.11).cos() * 3.0;
                let y = a - 5.0 + b + (i as f64 * 1.7).sin() > 0.0;
                BlrRecord::new(Features::Dense(map.apply(&[a, b]).unwrap()), y)
                    .unwrap()
                    .0
            })
            .collect();
        let model = Blr::new(BlrConfig::builder(3).build().unwrap());
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
            &batch_config(400, 3, privacy, Some(3)).unwrap(),
        )
        .unwrap()
        .result;
        let saved = SavedBlr::from_fit(
            "y",
            vec!["a".into(), "b".into()],
            scaling,
            model.config().prior(),
            &result,
        )
        .unwrap();
        (saved, result)
    }

    #[test]
    fn reloaded_predictions_are_the_posteriors_bit_for_bit() {
        for private in [false, true] {
            let (saved, result) = fitted(private);
            let back = SavedBlr::from_json(&saved.to_json().unwrap(), "m.json").unwrap();
            assert_eq!(back, saved);
            for raw in [[0.0, 0.0], [3.3, -1.7], [12.0, 9.0], [7.123456789, 2.999]] {
                let x = saved.feature_map().apply(&raw).unwrap();
                let (r, _) = BlrRecord::new(Features::Dense(x), false).unwrap();
                let want = predict_probability(result.global.posterior(), r.features());
                assert_eq!(back.predict(&raw).unwrap().to_bits(), want.to_bits());
            }
        }
    }

    #[test]
    fn corrupt_and_newer_files_are_typed() {
        let (saved, _) = fitted(false);
        let json = saved.to_json().unwrap();
        let newer = json.replacen("\"format_version\": 2", "\"format_version\": 3", 1);
        assert!(matches!(
            SavedBlr::from_json(&newer, "m.json"),
            Err(ModelFileError::NewerVersion { found: 3, .. })
        ));
        let dup = json.replacen("\"b\"", "\"a\"", 1);
        assert!(matches!(
            SavedBlr::from_json(&dup, "m.json"),
            Err(ModelFileError::CorruptModel { .. })
        ));
        let linreg = json
            .replacen("\"model\": \"blr\"", "\"model\": \"linreg\"", 1)
            .replacen("\"format_version\": 2", "\"format_version\": 1", 1);
        assert!(matches!(
            SavedBlr::from_json(&linreg, "m.json"),
            Err(ModelFileError::WrongModel { .. })
        ));
        assert!(saved.predict(&[1.0]).is_err());
        assert!(saved.predict(&[f64::NAN, 1.0]).is_err());
        // A version-2 file needs `sampling`, and it must agree with the neighbouring relation.
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        let mut missing = v.clone();
        missing.as_object_mut().unwrap().remove("sampling");
        let mut fixed = v;
        fixed["sampling"] = serde_json::json!("fixed_size");
        for bad in [missing, fixed] {
            assert!(matches!(
                SavedBlr::from_json(&bad.to_string(), "m.json"),
                Err(ModelFileError::CorruptModel { .. })
            ));
        }
    }

    #[test]
    fn version_2_writes_sampling_and_version_1_files_still_load() {
        let (saved, result) = fitted(true);
        let json = saved.to_json().unwrap();
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v["format_version"], 2);
        assert_eq!(v["sampling"], result.sampling.name());
        assert_eq!(saved.sampling(), SavedSampling::Poisson);
        // The same fit as a version-1 file (no `sampling`): loads, predicts the same bits, the
        // regime read from the neighbouring relation, and is written back unchanged.
        let mut old = v;
        old["format_version"] = serde_json::json!(1);
        old.as_object_mut().unwrap().remove("sampling");
        let old_text = serde_json::to_string_pretty(&old).unwrap();
        let back = SavedBlr::from_json(&old_text, "old.json").unwrap();
        assert_eq!(back.sampling(), SavedSampling::Poisson);
        assert_eq!(
            back.predict(&[3.3, -1.7]).unwrap().to_bits(),
            saved.predict(&[3.3, -1.7]).unwrap().to_bits()
        );
        let again: serde_json::Value = serde_json::from_str(&back.to_json().unwrap()).unwrap();
        assert_eq!(again, old);
        // A version-1 file with `sampling` is not one this crate ever wrote.
        let mut odd = old;
        odd["sampling"] = serde_json::json!("poisson");
        assert!(SavedBlr::from_json(&odd.to_string(), "odd.json").is_err());
    }
}
