//! A fitted PBP network as a file: [`SavedPbp`], a versioned JSON model (`format_version` 1)
//! holding the architecture, the released posterior natural parameters, the feature / target
//! scaling and the privacy summary, and nothing else. It predicts on new raw rows exactly as
//! [`super::evaluate`] scores the test rows.
//!
//! Scaling: a model fitted with declared public ranges ([`super::Scaling::Declared`]) saves
//! them (`lower`, `upper`, `centre`, `scale` per feature and for the target) marked
//! `"private": true` (the scaling reveals nothing about the training records). A non-private
//! model fitted with the training split's mean and standard deviation
//! ([`super::Scaling::FitOnTraining`]) is saved too: its means and standard deviations are
//! stored as `centre` / `scale` without `lower` / `upper`, and the scaling is marked
//! `"private": false` (those numbers are statistics of the training records, not noised).
//!
//! # Privacy
//! For a private fit the file holds the wall's released posterior (post-processed: repaired if
//! improper), the declared public ranges, the public architecture and settings, and the privacy
//! summary; nothing else computed from the training records (no record count, no clip counts,
//! no timings). A model with `"private": false` scaling comes from a non-private fit and is not
//! private at all.

use std::path::Path;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::model::PbpModel;
use crate::SepError;
use crate::data::{PublicRanges, Standardizer};
use crate::model::SepModel;

/// The version of the PBP model-file format this build writes and the newest it reads.
pub const PBP_FORMAT_VERSION: u32 = 1;

/// Largest PBP model file read (256 MiB; a 50-unit network on 100 features is about 200 KiB).
pub const MAX_PBP_FILE_BYTES: u64 = 256 << 20;

/// Why a PBP model cannot be saved, read or used. Every file error names the file.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum SavedPbpError {
    /// The file could not be read (or is too large).
    #[error("{path}: cannot read: {source}")]
    Io {
        /// The file.
        path: String,
        /// What went wrong (an I/O error or the size limit).
        #[source]
        source: SepError,
    },
    /// The file was written by a newer format than this build reads.
    #[error(
        "{path}: model format_version {found} is newer than this build reads (at most {supported}); \
         use a newer dp-bayes"
    )]
    NewerVersion {
        /// The file.
        path: String,
        /// The version in the file.
        found: u64,
        /// The newest version this build reads.
        supported: u32,
    },
    /// The file is not a PBP model file (malformed JSON, a missing or unknown field).
    #[error("{path}: corrupt PBP model file: {reason}")]
    Corrupt {
        /// The file.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// The file's fields do not make a valid PBP model (sizes that disagree with the
    /// architecture, a value that is not finite, an improper posterior).
    #[error("{path}: corrupt PBP model file: {fault}")]
    CorruptModel {
        /// The file.
        path: String,
        /// The field at fault and what is wrong with it.
        #[source]
        fault: InvalidModel,
    },
    /// The file holds another kind of model.
    #[error("{path}: holds a {found} model, expected \"pbp\"")]
    WrongModel {
        /// The file.
        path: String,
        /// The model kind in the file (quoted, at most 40 characters).
        found: String,
    },
    /// The parts given to [`SavedPbp::new`] disagree or are not finite.
    #[error("cannot save the PBP model: {0}")]
    Invalid(#[from] InvalidModel),
    /// The model could not be serialised by `serde_json` (never for a validated model).
    #[error("cannot save the PBP model: {0}")]
    Serialise(#[from] serde_json::Error),
    /// A row given to [`SavedPbp::predict`] of the wrong width or with a value that is not
    /// finite.
    #[error(transparent)]
    Input(#[from] RowFault),
}

/// A saved PBP model whose fields do not make a valid model: the field (as the file names it,
/// e.g. `scaling.features[2]`) and what is wrong with it. The same shape as
/// `vips_models::saved::InvalidModel`.
#[derive(Debug, Error)]
#[error("{field} {fault}")]
pub struct InvalidModel {
    /// The field at fault.
    pub field: String,
    /// What is wrong with it.
    #[source]
    pub fault: ModelFault,
}

impl InvalidModel {
    /// The field `field` refused for `fault`.
    pub fn new(field: impl Into<String>, fault: ModelFault) -> Self {
        Self {
            field: field.into(),
            fault,
        }
    }
}

/// What is wrong with one field of a saved PBP model ([`InvalidModel`]).
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ModelFault {
    /// The field holds a value that is NaN or infinite.
    #[error("has a value that is not finite")]
    NotFinite,
    /// A value outside its domain (the domain, e.g. `a finite number >= 0`).
    #[error("is not {0}")]
    OutOfDomain(&'static str),
    /// A list of the wrong length.
    #[error("has {found} entries, {by} needs {expected}")]
    Length {
        /// What fixes the length (e.g. `the architecture`).
        by: &'static str,
        /// The length needed.
        expected: usize,
        /// The length found.
        found: usize,
    },
    /// A list that must not be empty.
    #[error("is empty")]
    Empty,
    /// The `model` field names another model kind.
    #[error("is not `{0}`")]
    WrongKind(&'static str),
    /// A constraint between values that does not hold (the constraint).
    #[error("needs {0}")]
    Needs(&'static str),
    /// A posterior that is not a proper distribution.
    #[error("is improper (a weight variance or the noise Gamma is not positive)")]
    Improper,
    /// Settings (the architecture) that the model refuses.
    #[error("is refused: {0}")]
    Refused(#[source] SepError),
}

/// Why a row given to [`SavedPbp::predict`] is refused.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum RowFault {
    /// A row of the wrong width.
    #[error("{found} features, the model has {expected}")]
    DimensionMismatch {
        /// The model's number of features.
        expected: usize,
        /// The row's number of values.
        found: usize,
    },
    /// A feature that is NaN or infinite.
    #[error("feature `{feature}` is not finite")]
    NonFinite {
        /// The feature's name (shortened if long).
        feature: String,
    },
    /// The network refused the scaled row.
    #[error(transparent)]
    Model(#[from] SepError),
}

/// The network's architecture: inputs and hidden ReLU layers (one output).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SavedArchitecture {
    /// Number of input features.
    pub input_dim: usize,
    /// Units of each hidden layer.
    pub hidden: Vec<usize>,
}

/// The map of one column: clip into `[lower, upper]` (declared ranges only), then
/// `(v - centre) / scale`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SavedColumn {
    /// Column name (`x1`, `x2`, ... and `y` when the data named none).
    pub name: String,
    /// Declared lower end; absent for a fitted (non-private) scaling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lower: Option<f64>,
    /// Declared upper end; absent for a fitted (non-private) scaling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upper: Option<f64>,
    /// Centre of the map (the declared centre, or the training mean).
    pub centre: f64,
    /// Scale of the map (the declared scale, or the training standard deviation).
    pub scale: f64,
}

/// The feature and target scaling of a saved model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SavedScaling {
    /// `true`: declared public ranges; `false`: the training split's mean and standard
    /// deviation (a non-private fit; the numbers are statistics of the training records).
    pub private: bool,
    /// Where the ranges were declared (a file path, "flags", "caller"), or
    /// `"training mean and std (non-private)"`.
    pub source: String,
    /// The features, in input order.
    pub features: Vec<SavedColumn>,
    /// The target.
    pub target: SavedColumn,
}

impl SavedScaling {
    /// The saved form of `scaler` with column names. For a declared transform, `ranges` gives
    /// the source; `None` for a fitted one.
    ///
    /// # Errors
    /// [`SavedPbpError::Invalid`] if the names do not match the transform's width.
    pub fn from_standardizer(
        scaler: &Standardizer,
        feature_names: Vec<String>,
        target_name: String,
        ranges: Option<&PublicRanges>,
    ) -> Result<Self, SavedPbpError> {
        if feature_names.len() != scaler.dim() {
            return Err(InvalidModel::new(
                "feature names",
                ModelFault::Length {
                    by: "the scaling",
                    expected: scaler.dim(),
                    found: feature_names.len(),
                },
            )
            .into());
        }
        let (fb, tb) = (scaler.feature_bounds(), scaler.target_bounds());
        let column = |name: String, centre: f64, scale: f64, b: Option<(f64, f64)>| SavedColumn {
            name,
            lower: b.map(|b| b.0),
            upper: b.map(|b| b.1),
            centre,
            scale,
        };
        let features = feature_names
            .into_iter()
            .enumerate()
            .map(|(j, name)| {
                column(
                    name,
                    scaler.feature_centres()[j],
                    scaler.feature_scales()[j],
                    fb.map(|f| f[j]),
                )
            })
            .collect();
        let target = column(target_name, scaler.target_centre(), scaler.target_std(), tb);
        Ok(Self {
            private: tb.is_some(),
            source: match (tb, ranges) {
                (Some(_), Some(r)) => r.source().to_string(),
                (Some(_), None) => "declared public ranges".into(),
                (None, _) => "training mean and std (non-private)".into(),
            },
            features,
            target,
        })
    }

    fn validate(&self, input_dim: usize) -> Result<(), InvalidModel> {
        if self.features.len() != input_dim {
            return Err(InvalidModel::new(
                "scaling.features",
                ModelFault::Length {
                    by: "the architecture's input_dim",
                    expected: input_dim,
                    found: self.features.len(),
                },
            ));
        }
        for (k, c) in self.features.iter().chain([&self.target]).enumerate() {
            let what = if k < input_dim {
                format!("scaling.features[{k}]")
            } else {
                "scaling.target".into()
            };
            if !(c.centre.is_finite() && c.scale > 0.0 && c.scale.is_finite()) {
                return Err(InvalidModel::new(
                    what,
                    ModelFault::Needs("a finite centre and a finite scale > 0"),
                ));
            }
            match (self.private, c.lower, c.upper) {
                (true, Some(lo), Some(hi)) if lo.is_finite() && hi.is_finite() && lo < hi => {}
                (true, _, _) => {
                    return Err(InvalidModel::new(
                        what,
                        ModelFault::Needs(
                            "finite lower < upper (declared ranges, a private scaling)",
                        ),
                    ));
                }
                (false, None, None) => {}
                (false, _, _) => {
                    return Err(InvalidModel::new(
                        what,
                        ModelFault::Needs(
                            "no lower / upper (a fitted, non-private scaling has none)",
                        ),
                    ));
                }
            }
        }
        Ok(())
    }
}

/// The privacy summary of the fit (the same keys as the other saved models of the workspace).
///
/// # Privacy
/// Public: settings and the ledger's totals; the population only when the caller declared it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SavedPbpPrivacy {
    /// Whether the fit was private (noised and accounted).
    pub private: bool,
    /// Epsilon spent (the ledger's, at `delta`); absent when non-private.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epsilon: Option<f64>,
    /// The delta the epsilon is stated at; absent when non-private.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delta: Option<f64>,
    /// Noise std / sensitivity; absent when non-private.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise_multiplier: Option<f64>,
    /// The accountant's name; absent when non-private.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accountant: Option<String>,
    /// The declared public population; absent when none was declared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub population: Option<usize>,
    /// Neighbouring relation of the guarantee.
    pub neighbouring: String,
    /// How the noise RNG was seeded (says so when seeded on purpose).
    pub rng: String,
    /// Epochs of the fit.
    pub iterations: u64,
}

impl SavedPbpPrivacy {
    fn validate(&self) -> Result<(), InvalidModel> {
        for (k, v) in [
            ("privacy.epsilon", self.epsilon),
            ("privacy.delta", self.delta),
            ("privacy.noise_multiplier", self.noise_multiplier),
        ] {
            if v.is_some_and(|x| !(x.is_finite() && x >= 0.0)) {
                return Err(InvalidModel::new(
                    k,
                    ModelFault::OutOfDomain("a finite number >= 0"),
                ));
            }
        }
        if self.private && (self.epsilon.is_none() || self.delta.is_none()) {
            return Err(InvalidModel::new(
                "privacy",
                ModelFault::Needs("epsilon and delta (a private model)"),
            ));
        }
        Ok(())
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct PbpFile {
    format_version: u32,
    model: String,
    architecture: SavedArchitecture,
    scaling: SavedScaling,
    /// Natural parameters: `(m / v, -1 / (2 v))` per weight, then the noise Gamma's
    /// `(alpha - 1, -beta)`.
    posterior: Vec<f64>,
    privacy: SavedPbpPrivacy,
}

/// A fitted PBP network that predicts on new raw rows (see the [module documentation](self)).
///
/// # Example
/// ```
/// use dp_sep::data::{Dataset, PublicRange, PublicRanges};
/// use dp_sep::pbp::saved::{SavedPbp, SavedPbpPrivacy, SavedScaling};
/// use dp_sep::pbp::{PbpConfig, Scaling, prepare, run_pbp};
/// let train = Dataset::new((0..40).map(|i| i as f64 / 40.0).collect(),
///                          (0..40).map(|i| (i as f64 / 10.0).sin()).collect(), 1)?;
/// let ranges = PublicRanges::uniform(1, PublicRange::new(0.0, 1.0)?, PublicRange::new(-1.0, 1.0)?);
/// let config = PbpConfig::builder().hidden(vec![3]).epochs(2)
///     .scaling(Scaling::Declared(ranges.clone())).build()?;
/// let (out, _) = run_pbp(&train, &train, &config)?;
/// let prepared = prepare(&train, &config)?;
/// let scaling = SavedScaling::from_standardizer(&prepared.scaler, vec!["x".into()], "y".into(),
///                                               Some(&ranges))?;
/// let privacy = SavedPbpPrivacy { private: false, epsilon: None, delta: None,
///     noise_multiplier: None, accountant: None, population: None,
///     neighbouring: "none (non-private)".into(), rng: "none (no noise)".into(), iterations: 2 };
/// let saved = SavedPbp::new(&[3], out.posterior.clone(), scaling, privacy)?;
/// let back = SavedPbp::from_json(&saved.to_json()?, "model.json")?;
/// assert_eq!(back.predict(&[0.5])?, saved.predict(&[0.5])?);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct SavedPbp {
    file: PbpFile,
    model: PbpModel,
}

impl PartialEq for SavedPbp {
    fn eq(&self, other: &Self) -> bool {
        self.file == other.file
    }
}

fn corrupt(path: &str, reason: impl Into<String>) -> SavedPbpError {
    SavedPbpError::Corrupt {
        path: path.to_string(),
        reason: reason.into(),
    }
}

impl SavedPbp {
    /// The saved model of a fit: `hidden` layer sizes, the released `posterior` natural
    /// parameters, the scaling used to fit, and the privacy summary. The input dimension is
    /// the scaling's number of features.
    ///
    /// # Errors
    /// [`SavedPbpError::Invalid`] if the sizes disagree, a value is not finite, or the
    /// posterior is improper.
    pub fn new(
        hidden: &[usize],
        posterior: Vec<f64>,
        scaling: SavedScaling,
        privacy: SavedPbpPrivacy,
    ) -> Result<Self, SavedPbpError> {
        let file = PbpFile {
            format_version: PBP_FORMAT_VERSION,
            model: "pbp".into(),
            architecture: SavedArchitecture {
                input_dim: scaling.features.len(),
                hidden: hidden.to_vec(),
            },
            scaling,
            posterior,
            privacy,
        };
        Ok(Self::from_file(file)?)
    }

    fn from_file(file: PbpFile) -> Result<Self, InvalidModel> {
        if file.model != "pbp" {
            return Err(InvalidModel::new("`model`", ModelFault::WrongKind("pbp")));
        }
        let a = &file.architecture;
        if a.hidden.is_empty() {
            return Err(InvalidModel::new("architecture.hidden", ModelFault::Empty));
        }
        let model = PbpModel::try_new(a.input_dim, &a.hidden)
            .map_err(|e| InvalidModel::new("architecture", ModelFault::Refused(e)))?;
        let dim = model.dim();
        if file.posterior.len() != dim {
            return Err(InvalidModel::new(
                "posterior (natural parameters)",
                ModelFault::Length {
                    by: "the architecture",
                    expected: dim,
                    found: file.posterior.len(),
                },
            ));
        }
        if file.posterior.iter().any(|v| !v.is_finite()) {
            return Err(InvalidModel::new("posterior", ModelFault::NotFinite));
        }
        if !model.is_valid(&file.posterior) {
            return Err(InvalidModel::new("posterior", ModelFault::Improper));
        }
        file.scaling.validate(a.input_dim)?;
        file.privacy.validate()?;
        Ok(Self { file, model })
    }

    /// Reads a PBP model file (bounded by [`MAX_PBP_FILE_BYTES`]).
    ///
    /// # Errors
    /// [`SavedPbpError::Io`] for a missing, unreadable or too large file; otherwise as
    /// [`SavedPbp::from_json`].
    pub fn load(path: impl AsRef<Path>) -> Result<Self, SavedPbpError> {
        let path = path.as_ref();
        let name = path.display().to_string();
        let text = crate::limits::open_bounded(path, MAX_PBP_FILE_BYTES)
            .and_then(|r| r.read_all())
            .map_err(|source| SavedPbpError::Io {
                path: name.clone(),
                source,
            })?;
        Self::from_json(&text, &name)
    }

    /// Reads a model from JSON text; `path` names the file in errors.
    ///
    /// # Errors
    /// [`SavedPbpError::NewerVersion`] for a `format_version` above [`PBP_FORMAT_VERSION`],
    /// [`SavedPbpError::WrongModel`] for another model kind, [`SavedPbpError::Corrupt`] for
    /// anything malformed, [`SavedPbpError::CorruptModel`] for fields that are inconsistent.
    pub fn from_json(text: &str, path: &str) -> Result<Self, SavedPbpError> {
        #[derive(Deserialize)]
        struct Head {
            format_version: Option<serde_json::Value>,
            model: Option<serde_json::Value>,
        }
        let head: Head = serde_json::from_str(text)
            .map_err(|e| corrupt(path, format!("not a JSON object: {e}")))?;
        let version = head
            .format_version
            .ok_or_else(|| corrupt(path, "no `format_version`"))?
            .as_u64()
            .filter(|&v| v >= 1)
            .ok_or_else(|| corrupt(path, "`format_version` is not an integer >= 1"))?;
        if version > u64::from(PBP_FORMAT_VERSION) {
            return Err(SavedPbpError::NewerVersion {
                path: path.to_string(),
                found: version,
                supported: PBP_FORMAT_VERSION,
            });
        }
        match head.model {
            Some(serde_json::Value::String(s)) if s == "pbp" => {}
            Some(serde_json::Value::String(s)) => {
                return Err(SavedPbpError::WrongModel {
                    path: path.to_string(),
                    found: crate::limits::excerpt(&s),
                });
            }
            _ => return Err(corrupt(path, "no string `model`")),
        }
        let file: PbpFile = serde_json::from_str(text).map_err(|e| corrupt(path, e.to_string()))?;
        Self::from_file(file).map_err(|fault| SavedPbpError::CorruptModel {
            path: path.to_string(),
            fault,
        })
    }

    /// The model as pretty JSON (`format_version` 1).
    ///
    /// # Errors
    /// [`SavedPbpError::Serialise`] if it cannot be serialised (never for a validated model).
    pub fn to_json(&self) -> Result<String, SavedPbpError> {
        Ok(serde_json::to_string_pretty(&self.file)?)
    }

    /// Predictive mean and variance of the target for one raw row `x` (features in input
    /// order, original units), exactly as [`super::evaluate`] computes them: each feature
    /// clipped into its declared range (declared scaling only) and mapped by
    /// `(v - centre) / scale`; mean = the network's mean mapped back (`m * scale + centre` of
    /// the target) and clamped into the declared target range; variance = `(v + noise) *
    /// scale^2` with the network's variance `v` and the expected noise variance.
    ///
    /// # Errors
    /// [`SavedPbpError::Input`] for a row of the wrong width or with a value that is not finite.
    pub fn predict(&self, x: &[f64]) -> Result<(f64, f64), SavedPbpError> {
        let s = &self.file.scaling;
        if x.len() != s.features.len() {
            return Err(RowFault::DimensionMismatch {
                expected: s.features.len(),
                found: x.len(),
            }
            .into());
        }
        if let Some(j) = x.iter().position(|v| !v.is_finite()) {
            return Err(RowFault::NonFinite {
                feature: crate::limits::excerpt(&s.features[j].name),
            }
            .into());
        }
        // The operations of `Standardizer::transform` (clip, subtract, divide).
        let z: Vec<f64> = x
            .iter()
            .zip(&s.features)
            .map(|(&v, c)| {
                let v = match (c.lower, c.upper) {
                    (Some(lo), Some(hi)) => v.clamp(lo, hi),
                    _ => v,
                };
                (v - c.centre) / c.scale
            })
            .collect();
        let (m, v, noise) = self
            .model
            .predict(&self.file.posterior, &z)
            .map_err(RowFault::Model)?;
        let t = &s.target;
        // `target_to_original`, then `clamp_prediction`.
        let mut mean = m * t.scale + t.centre;
        if let (Some(lo), Some(hi)) = (t.lower, t.upper) {
            mean = mean.clamp(lo, hi);
        }
        let var = (v + noise) * t.scale * t.scale;
        Ok((mean, var))
    }

    /// The architecture.
    pub fn architecture(&self) -> &SavedArchitecture {
        &self.file.architecture
    }

    /// The scaling (names, ranges or fitted means and standard deviations).
    pub fn scaling(&self) -> &SavedScaling {
        &self.file.scaling
    }

    /// The posterior natural parameters.
    pub fn posterior(&self) -> &[f64] {
        &self.file.posterior
    }

    /// The privacy summary.
    pub fn privacy(&self) -> &SavedPbpPrivacy {
        &self.file.privacy
    }

    /// Feature names in input order.
    pub fn feature_names(&self) -> Vec<&str> {
        self.file
            .scaling
            .features
            .iter()
            .map(|c| c.name.as_str())
            .collect()
    }

    /// The target's name.
    pub fn target_name(&self) -> &str {
        &self.file.scaling.target.name
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{Dataset, PublicRange, Standardizer};
    use crate::pbp::{PbpConfig, Scaling, evaluate, prepare, run_pbp};

    fn data(n: usize, shift: f64) -> Dataset {
        let x: Vec<f64> = (0..2 * n)
            .map(|i| ((i * 37 % 101) as f64 / 101.0) * 4.0 - 2.0 + shift)
            .collect();
        let y = (0..n)
            .map(|i| 3.0 * x[2 * i].sin() + x[2 * i + 1] + 10.0)
            .collect();
        Dataset::new(x, y, 2).unwrap()
    }

    fn privacy() -> SavedPbpPrivacy {
        SavedPbpPrivacy {
            private: false,
            epsilon: None,
            delta: None,
            noise_multiplier: None,
            accountant: None,
            population: None,
            neighbouring: "none (non-private)".into(),
            rng: "none (no noise)".into(),
            iterations: 2,
        }
    }

    /// Fits, saves, reloads; the reloaded model's predictions equal, bit for bit, what
    /// `evaluate`'s formula gives with the fitted posterior and the fit's scaler (test rows
    /// include values outside the declared box).
    fn roundtrip(scaling: Scaling, ranges: Option<&PublicRanges>) {
        let (train, test) = (data(60, 0.0), data(20, 1.5));
        let config = PbpConfig::builder()
            .hidden(vec![4])
            .epochs(2)
            .scaling(scaling)
            .build()
            .unwrap();
        let (out, _) = run_pbp(&train, &test, &config).unwrap();
        let scaler: Standardizer = prepare(&train, &config).unwrap().scaler;
        let saved = SavedPbp::new(
            &[4],
            out.posterior.clone(),
            SavedScaling::from_standardizer(
                &scaler,
                vec!["a".into(), "b".into()],
                "y".into(),
                ranges,
            )
            .unwrap(),
            privacy(),
        )
        .unwrap();
        let text = saved.to_json().unwrap();
        assert!(!text.contains("null") && !text.contains("NaN"));
        let back = SavedPbp::from_json(&text, "m.json").unwrap();
        assert_eq!(back, saved);
        let model = PbpModel::new(2, &[4]);
        let z = scaler.transform(&test);
        let s = scaler.target_std();
        let (mut se, mut ll) = (0.0, 0.0);
        for i in 0..test.len() {
            let (m, v, noise) = model.predict(&out.posterior, z.row(i)).unwrap();
            let want = (
                scaler.clamp_prediction(scaler.target_to_original(m)),
                (v + noise) * s * s,
            );
            let got = back.predict(test.row(i)).unwrap();
            assert_eq!(got.0.to_bits(), want.0.to_bits(), "row {i}");
            assert_eq!(got.1.to_bits(), want.1.to_bits(), "row {i}");
            let r = test.target(i) - got.0;
            se += r * r;
            ll += -0.5 * (2.0 * std::f64::consts::PI * got.1).ln() - 0.5 * r * r / got.1;
        }
        // And the metrics of the reloaded model are the fit's, bit for bit.
        let n = test.len() as f64;
        let metrics = evaluate(&model, &out.posterior, &scaler, &test).unwrap();
        assert_eq!((se / n).sqrt().to_bits(), metrics.rmse.to_bits());
        assert_eq!((ll / n).to_bits(), metrics.log_likelihood.to_bits());
        assert_eq!(metrics, out.metrics);
    }

    #[test]
    fn reloaded_declared_model_predicts_bit_for_bit() {
        let ranges = PublicRanges::new(
            vec![
                PublicRange::new(-2.0, 2.0).unwrap(),
                PublicRange {
                    lower: -1.0,
                    upper: 3.0,
                    centre: Some(0.5),
                    scale: Some(3.0),
                },
            ],
            PublicRange::new(5.0, 15.0).unwrap(),
        )
        .unwrap();
        roundtrip(Scaling::Declared(ranges.clone()), Some(&ranges));
    }

    #[test]
    fn reloaded_fitted_scaling_model_predicts_bit_for_bit_and_says_non_private() {
        roundtrip(Scaling::FitOnTraining, None);
        let scaler = Standardizer::fit(&data(10, 0.0));
        let s = SavedScaling::from_standardizer(
            &scaler,
            vec!["a".into(), "b".into()],
            "y".into(),
            None,
        )
        .unwrap();
        assert!(!s.private);
        assert!(s.features.iter().all(|c| c.lower.is_none()));
    }

    fn saved() -> SavedPbp {
        let ranges = PublicRanges::uniform(
            2,
            PublicRange::new(-2.0, 2.0).unwrap(),
            PublicRange::new(0.0, 20.0).unwrap(),
        );
        let model = PbpModel::new(2, &[3]);
        let mut rng = <rand::rngs::ChaCha20Rng as rand::SeedableRng>::seed_from_u64(1);
        let posterior = model.initial_state(10, &mut rng).unwrap().posterior();
        SavedPbp::new(
            &[3],
            posterior,
            SavedScaling::from_standardizer(
                &Standardizer::from_public_ranges(&ranges),
                vec!["a".into(), "b".into()],
                "y".into(),
                Some(&ranges),
            )
            .unwrap(),
            privacy(),
        )
        .unwrap()
    }

    #[test]
    fn load_errors_are_typed_and_name_the_file() {
        let text = saved().to_json().unwrap();
        let newer = text.replacen("\"format_version\": 1", "\"format_version\": 2", 1);
        assert!(matches!(
            SavedPbp::from_json(&newer, "f.json"),
            Err(SavedPbpError::NewerVersion { found: 2, ref path, .. }) if path == "f.json"
        ));
        let other = text.replacen("\"model\": \"pbp\"", "\"model\": \"mog\"", 1);
        assert!(matches!(
            SavedPbp::from_json(&other, "f.json"),
            Err(SavedPbpError::WrongModel { ref found, .. }) if found == "\"mog\""
        ));
        for bad in [
            text[..text.len() / 2].to_string(),
            text.replacen("\"input_dim\": 2", "\"input_dim\": 3", 1),
            text.replacen(
                "\"hidden\": [\n      3\n    ]",
                "\"hidden\": [\n      0\n    ]",
                1,
            ),
            text.replacen("\"private\": true", "\"private\": false", 1),
            text.replacen("\"source\"", "\"extra\": 1, \"source\"", 1),
        ] {
            assert_ne!(bad, text, "the corruption applies");
            let e = SavedPbp::from_json(&bad, "f.json").unwrap_err();
            assert!(
                matches!(
                    e,
                    SavedPbpError::Corrupt { .. } | SavedPbpError::CorruptModel { .. }
                ),
                "{e}"
            );
            assert!(e.to_string().starts_with("f.json: "), "{e}");
        }
        let missing = SavedPbp::load("/nonexistent/model.json").unwrap_err();
        assert!(missing.to_string().contains("/nonexistent/model.json"));
    }

    #[test]
    fn predict_refuses_bad_rows() {
        let m = saved();
        assert!(matches!(m.predict(&[1.0]), Err(SavedPbpError::Input(_))));
        assert!(matches!(
            m.predict(&[1.0, f64::NAN]),
            Err(SavedPbpError::Input(_))
        ));
        let (mean, var) = m.predict(&[1e9, -1e9]).unwrap();
        assert!((0.0..=20.0).contains(&mean) && var > 0.0 && var.is_finite());
    }
}
