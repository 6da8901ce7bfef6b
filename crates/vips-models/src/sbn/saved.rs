//! A fitted sigmoid belief network as a file: [`SavedSbn`], a versioned JSON model (the
//! posterior moments of `W`, `b` and `c`, the TPBN prior precisions of `W`, the public settings
//! and the privacy summary) that scores and reconstructs new binary images
//! ([`SavedSbn::reconstruct`], [`SavedSbn::evaluate`]).
//!
//! # Privacy
//! Post-processing of the noised releases (the posterior moments are a deterministic function of
//! the released natural parameters) and public, caller-declared settings (the configuration, the
//! binarisation threshold, the privacy summary). No image count, clip count or timing is written.

use std::path::Path;

use nalgebra::DMatrix;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::{BinaryImage, Sbn, SbnConfig, SbnError, SbnGlobal, SbnNatural};
use crate::blr::expected_xi as pg1_mean;
use crate::engine::FitResult;
use crate::saved::{
    InvalidModel, ModelFault, ModelFileError, NEWEST_MODEL_FORMAT_VERSION, SavedPrivacy,
    SavedSampling, load_model, parse_model,
};
use expfam::sigmoid;

/// The posterior as saved. `w_covariance[j]` is the lower triangle of `Sigma_j` row by row
/// (`Sigma_00, Sigma_10, Sigma_11, Sigma_20, ...`, `K (K + 1) / 2` numbers).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SavedPosterior {
    w_mean: Vec<Vec<f64>>,
    w_covariance: Vec<Vec<f64>>,
    w_prior_precision: Vec<Vec<f64>>,
    b_mean: Vec<f64>,
    b_variance: Vec<f64>,
    c_mean: Vec<f64>,
    c_variance: Vec<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SbnFile {
    format_version: u32,
    model: String,
    config: SbnConfig,
    /// Binarisation threshold of the IDX images (pixel `>= threshold` is 1).
    threshold: u8,
    posterior: SavedPosterior,
    /// The batch regime (format version 2; absent in version 1, where `privacy.neighbouring`
    /// says it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sampling: Option<SavedSampling>,
    privacy: SavedPrivacy,
}

/// One image scored by a saved model ([`SavedSbn::reconstruct`]).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct SbnReconstruction {
    /// The variational lower bound on `log p(y)` (nats), as
    /// [`crate::sbn::heldout_lower_bound`] computes it per image.
    pub lower_bound: f64,
    /// Pixels whose reconstruction `sigma(<W> <z> + <c>) > 1/2` agrees with the image.
    pub correct_pixels: usize,
    /// `q(z_k = 1)`: the hidden units' posterior means from the E-step.
    pub hidden_means: Vec<f64>,
}

/// Held-out summary of a set of images ([`SavedSbn::evaluate`]).
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct SbnEvaluation {
    /// Mean lower bound per image (nats), summed in image order.
    pub mean_lower_bound: f64,
    /// Fraction of all pixels reconstructed correctly (000 Sec. 7.1).
    pub pixel_accuracy: f64,
    /// Number of images scored.
    pub images: usize,
}

/// A fitted sigmoid belief network ready to save, load and score images with. JSON with
/// `"format_version": 2` and `"model": "sbn"`, written on one line (the covariances of `W` are
/// `J K (K + 1) / 2` numbers: about 4 million, 91 MB, for MNIST with 100 hidden units).
/// Version-1 files (without `"sampling"`) still load, their regime read from
/// `privacy.neighbouring`.
///
/// # Privacy
/// Post-processing of the fit's releases and public settings only (see the module
/// documentation). The images scored with a loaded model are the caller's; their scores are not
/// covered by the fit's guarantee.
///
/// # Example
/// ```
/// use vips_models::engine::{fit, Privacy, Stop, StepSize, SviConfig};
/// use vips_models::sbn::{SavedSbn, Sbn, SbnConfig, SyntheticSbn};
/// let truth = SyntheticSbn::random(16, 3, 1);
/// let (train, test) = (truth.sample(200, 2), truth.sample(20, 3));
/// let model = Sbn::new(SbnConfig::builder(16, 3).build()?)?;
/// let svi = SviConfig::builder()
///     .expected_batch_size(100.0)
///     .step(StepSize::robbins_monro(1.0, 0.6)?)
///     .stop(Stop::Iterations { iterations: 2 })
///     .privacy(Privacy::NonPrivate)
///     .build()?;
/// let result = fit(&model, train, &svi, |_, _| {})?.result;
/// let saved = SavedSbn::from_fit(&model, 1, &result)?;
/// let back = SavedSbn::from_json(&saved.to_json()?, "model.json")?;
/// let (a, b) = (saved.evaluate(&test)?, back.evaluate(&test)?);
/// assert_eq!(a.mean_lower_bound.to_bits(), b.mean_lower_bound.to_bits());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct SavedSbn {
    file: SbnFile,
    /// The batch regime (as written, or from a version-1 file's neighbouring relation).
    sampling: SavedSampling,
    model: Sbn,
    natural: SbnNatural,
}

impl PartialEq for SavedSbn {
    fn eq(&self, other: &Self) -> bool {
        self.file == other.file
    }
}

fn lower_triangle(m: &DMatrix<f64>) -> Vec<f64> {
    let k = m.nrows();
    let mut out = Vec::with_capacity(k * (k + 1) / 2);
    for a in 0..k {
        for b in 0..=a {
            out.push(m[(a, b)]);
        }
    }
    out
}

fn all_finite<'a>(mut it: impl Iterator<Item = &'a f64>) -> bool {
    it.all(|v| v.is_finite())
}

impl SavedSbn {
    /// The saved model of a fit of `model` (IDX images binarised at `threshold`; give 1 for
    /// images that are already 0/1).
    ///
    /// # Errors
    /// [`ModelFileError::Invalid`] for a posterior that is not finite or not positive definite,
    /// or a threshold of 0.
    pub fn from_fit(
        model: &Sbn,
        threshold: u8,
        result: &FitResult<SbnGlobal>,
    ) -> Result<Self, ModelFileError> {
        let global = &result.global;
        let nat = SbnNatural::from_global(global);
        let k = nat.hidden;
        let rows =
            |v: &[f64]| -> Vec<Vec<f64>> { v.chunks(k.max(1)).map(<[f64]>::to_vec).collect() };
        let posterior = SavedPosterior {
            w_mean: rows(&nat.mu_w),
            w_covariance: nat.cov.iter().map(lower_triangle).collect(),
            w_prior_precision: rows(&nat.w_prior_precision),
            b_mean: nat.mu_b.clone(),
            b_variance: global.b_precision.iter().map(|l| 1.0 / l).collect(),
            c_mean: nat.mu_c.clone(),
            c_variance: global.c_precision.iter().map(|l| 1.0 / l).collect(),
        };
        let file = SbnFile {
            format_version: NEWEST_MODEL_FORMAT_VERSION,
            model: "sbn".into(),
            config: model.config().clone(),
            threshold,
            posterior,
            sampling: Some(SavedSampling::from_batching(&result.sampling)),
            privacy: SavedPrivacy::from_summary(&result.privacy, result.iterations),
        };
        Self::from_file(file).map_err(ModelFileError::Invalid)
    }

    fn from_file(file: SbnFile) -> Result<Self, InvalidModel> {
        if file.model != "sbn" {
            return Err(InvalidModel::new("`model`", ModelFault::WrongKind("sbn")));
        }
        if file.threshold == 0 {
            return Err(InvalidModel::new(
                "`threshold`",
                ModelFault::OutOfDomain(">= 1"),
            ));
        }
        file.privacy.validate()?;
        let sampling = SavedSampling::of_file(file.format_version, file.sampling, &file.privacy)?;
        let model = Sbn::new(file.config.clone())
            .map_err(|e| InvalidModel::new("config", ModelFault::Sbn(Box::new(e))))?;
        let (j_dim, k_dim) = (model.config().visible(), model.config().hidden());
        let p = &file.posterior;
        let tri = k_dim * (k_dim + 1) / 2;
        for (name, got, want) in [
            ("w_mean", p.w_mean.len(), j_dim),
            ("w_covariance", p.w_covariance.len(), j_dim),
            ("w_prior_precision", p.w_prior_precision.len(), j_dim),
            ("b_mean", p.b_mean.len(), k_dim),
            ("b_variance", p.b_variance.len(), k_dim),
            ("c_mean", p.c_mean.len(), j_dim),
            ("c_variance", p.c_variance.len(), j_dim),
        ] {
            if got != want {
                return Err(InvalidModel::new(
                    format!("posterior.{name} (config J = {j_dim}, K = {k_dim})"),
                    ModelFault::Length {
                        by: "the config",
                        expected: want,
                        found: got,
                    },
                ));
            }
        }
        for (name, rows, want) in [
            ("w_mean", &p.w_mean, k_dim),
            ("w_covariance", &p.w_covariance, tri),
            ("w_prior_precision", &p.w_prior_precision, k_dim),
        ] {
            if let Some((j, r)) = rows.iter().enumerate().find(|(_, r)| r.len() != want) {
                return Err(InvalidModel::new(
                    format!("posterior.{name}[{j}]"),
                    ModelFault::Length {
                        by: "the config",
                        expected: want,
                        found: r.len(),
                    },
                ));
            }
            if let Some(j) = rows.iter().position(|r| !all_finite(r.iter())) {
                return Err(InvalidModel::new(
                    format!("posterior.{name}[{j}]"),
                    ModelFault::NotFinite,
                ));
            }
        }
        for (name, v) in [
            ("b_mean", &p.b_mean),
            ("b_variance", &p.b_variance),
            ("c_mean", &p.c_mean),
            ("c_variance", &p.c_variance),
        ] {
            if !all_finite(v.iter()) {
                return Err(InvalidModel::new(
                    format!("posterior.{name}"),
                    ModelFault::NotFinite,
                ));
            }
        }
        for (name, v) in [("b_variance", &p.b_variance), ("c_variance", &p.c_variance)] {
            if let Some(i) = v.iter().position(|&x| x <= 0.0) {
                return Err(InvalidModel::new(
                    format!("posterior.{name}[{i}]"),
                    ModelFault::OutOfDomain("> 0"),
                ));
            }
        }
        if p.w_prior_precision.iter().flatten().any(|&x| x <= 0.0) {
            return Err(InvalidModel::new(
                "posterior.w_prior_precision",
                ModelFault::OutOfDomain("> 0 everywhere"),
            ));
        }
        let cov: Vec<DMatrix<f64>> = p
            .w_covariance
            .iter()
            .map(|t| {
                let mut m = DMatrix::zeros(k_dim, k_dim);
                let mut i = 0;
                for a in 0..k_dim {
                    for b in 0..=a {
                        m[(a, b)] = t[i];
                        m[(b, a)] = t[i];
                        i += 1;
                    }
                }
                m
            })
            .collect();
        if let Some(j) = cov
            .par_iter()
            .position_first(|m| nalgebra::Cholesky::new(m.clone()).is_none())
        {
            return Err(InvalidModel::new(
                format!("posterior.w_covariance[{j}]"),
                ModelFault::NotPositiveDefinite,
            ));
        }
        let mu_w: Vec<f64> = p.w_mean.iter().flatten().copied().collect();
        let mut w2 = vec![0.0; j_dim * k_dim];
        for j in 0..j_dim {
            for k in 0..k_dim {
                let m = mu_w[j * k_dim + k];
                w2[j * k_dim + k] = m * m + cov[j][(k, k)];
            }
        }
        let transpose = |m: &[f64]| {
            let mut t = vec![0.0; j_dim * k_dim];
            for j in 0..j_dim {
                for k in 0..k_dim {
                    t[k * j_dim + j] = m[j * k_dim + k];
                }
            }
            t
        };
        let second = |mean: &[f64], var: &[f64]| -> Vec<f64> {
            mean.iter().zip(var).map(|(m, v)| m * m + v).collect()
        };
        let b2 = second(&p.b_mean, &p.b_variance);
        let natural = SbnNatural {
            visible: j_dim,
            hidden: k_dim,
            mu_wt: transpose(&mu_w),
            w2t: transpose(&w2),
            mu_w,
            w2,
            cov,
            mu_b: p.b_mean.clone(),
            xi1: b2.iter().map(|&s| pg1_mean(s.sqrt())).collect(),
            b2,
            mu_c: p.c_mean.clone(),
            c2: second(&p.c_mean, &p.c_variance),
            w_prior_precision: p.w_prior_precision.iter().flatten().copied().collect(),
        };
        Ok(Self {
            file,
            sampling,
            model,
            natural,
        })
    }

    /// The model as JSON on one line (`format_version` 2, or 1 for a model read from a
    /// version-1 file: the file is written back as it was read).
    ///
    /// # Errors
    /// [`ModelFileError::Serialise`] if the model cannot be serialised (every number is checked
    /// finite when the model is built, so this does not happen for a model of this type).
    pub fn to_json(&self) -> Result<String, ModelFileError> {
        Ok(serde_json::to_string(&self.file)?)
    }

    /// Reads a model from JSON text; `path` names the file in errors.
    ///
    /// # Errors
    /// [`ModelFileError::NewerVersion`], [`ModelFileError::WrongModel`],
    /// [`ModelFileError::Corrupt`] (malformed), [`ModelFileError::CorruptModel`] (a config the
    /// model refuses, sizes that disagree with the config, a value that is not finite, a
    /// covariance that is not positive definite).
    pub fn from_json(text: &str, path: &str) -> Result<Self, ModelFileError> {
        parse_model(text, path, "sbn", Self::from_file)
    }

    /// Reads a model file.
    ///
    /// # Errors
    /// [`ModelFileError::Io`] for a missing or unreadable file; as [`SavedSbn::from_json`].
    pub fn load(path: impl AsRef<Path>) -> Result<Self, ModelFileError> {
        load_model(path.as_ref(), Self::from_json)
    }

    /// The settings the model was fitted with.
    pub fn config(&self) -> &SbnConfig {
        self.model.config()
    }

    /// The binarisation threshold of the training images (IDX pixel `>= threshold` is 1).
    pub fn threshold(&self) -> u8 {
        self.file.threshold
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

    /// The posterior moments the E-step uses.
    pub fn natural(&self) -> &SbnNatural {
        &self.natural
    }

    fn score(&self, image: &BinaryImage) -> SbnReconstruction {
        let nat = &self.natural;
        let local = self.model.local_posterior(nat, image);
        let k_dim = nat.hidden;
        let correct_pixels = (0..nat.visible)
            .filter(|&j| {
                let psi = nat.mu_c[j]
                    + (0..k_dim)
                        .map(|k| nat.mu_w[j * k_dim + k] * local.p[k])
                        .sum::<f64>();
                u8::from(sigmoid(psi) > 0.5) == image.pixels[j]
            })
            .count();
        SbnReconstruction {
            lower_bound: local.lower_bound(nat, &image.pixels),
            correct_pixels,
            hidden_means: local.p,
        }
    }

    /// Scores every image (in order): the E-step's `q(z)`, the lower bound on `log p(y)` and the
    /// pixels the reconstruction gets right. Deterministic: the same images give the same bits.
    ///
    /// # Errors
    /// [`SbnError::Empty`], [`SbnError::DimensionMismatch`] (an image without the model's `J`
    /// pixels, naming the image), [`SbnError::NotBinary`].
    pub fn reconstruct(&self, images: &[BinaryImage]) -> Result<Vec<SbnReconstruction>, SbnError> {
        self.model.check_images(images)?;
        Ok(images.par_iter().map(|im| self.score(im)).collect())
    }

    /// The mean lower bound per image and the pixel accuracy over `images` (sums in image order,
    /// so the result does not depend on the number of threads).
    ///
    /// # Errors
    /// As [`SavedSbn::reconstruct`].
    pub fn evaluate(&self, images: &[BinaryImage]) -> Result<SbnEvaluation, SbnError> {
        let scores = self.reconstruct(images)?;
        let n = scores.len();
        let bound: f64 = scores.iter().map(|s| s.lower_bound).sum();
        let correct: usize = scores.iter().map(|s| s.correct_pixels).sum();
        Ok(SbnEvaluation {
            mean_lower_bound: bound / n as f64,
            pixel_accuracy: correct as f64 / (n * self.natural.visible) as f64,
            images: n,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Privacy, StepSize, Stop, SviConfig, fit};
    use crate::sbn::{SyntheticSbn, heldout_lower_bound};

    fn fitted() -> (SavedSbn, Vec<BinaryImage>) {
        let truth = SyntheticSbn::random(12, 3, 5);
        let (train, test) = (truth.sample(150, 1), truth.sample(30, 2));
        let model = Sbn::new(SbnConfig::builder(12, 3).build().unwrap()).unwrap();
        let svi = SviConfig::builder()
            .expected_batch_size(50.0)
            .population(Some(150))
            .step(StepSize::robbins_monro(1.0, 0.6).unwrap())
            .stop(Stop::Iterations { iterations: 3 })
            .privacy(Privacy::Target {
                epsilon: 1.0,
                delta: 1e-5,
            })
            .noise_seed(Some(7))
            .build()
            .unwrap();
        let result = fit(&model, train, &svi, |_, _| {}).unwrap().result;
        let saved = SavedSbn::from_fit(&model, 128, &result).unwrap();
        // The saved moments are the fit's: the held-out bound agrees with the library's.
        let direct = heldout_lower_bound(&model, &SbnNatural::from_global(&result.global), &test);
        let via = saved.evaluate(&test).unwrap().mean_lower_bound;
        assert!(
            (direct - via).abs() < 1e-9 * direct.abs().max(1.0),
            "{direct} vs {via}"
        );
        (saved, test)
    }

    #[test]
    fn reloaded_model_scores_bit_for_bit() {
        let (saved, test) = fitted();
        let back = SavedSbn::from_json(&saved.to_json().unwrap(), "m.json").unwrap();
        assert_eq!(back, saved);
        let (a, b) = (
            saved.reconstruct(&test).unwrap(),
            back.reconstruct(&test).unwrap(),
        );
        assert_eq!(a, b);
        assert!(
            a.iter()
                .all(|r| r.lower_bound < 0.0 && r.hidden_means.len() == 3)
        );
        assert!(back.privacy().private);
    }

    #[test]
    fn version_2_writes_sampling_and_version_1_files_still_load() {
        let (saved, test) = fitted();
        let v: serde_json::Value = serde_json::from_str(&saved.to_json().unwrap()).unwrap();
        assert_eq!(
            (v["format_version"].as_u64(), v["sampling"].as_str()),
            (Some(2), Some("poisson"))
        );
        let mut old = v;
        old["format_version"] = serde_json::json!(1);
        old.as_object_mut().unwrap().remove("sampling");
        let back = SavedSbn::from_json(&old.to_string(), "old.json").unwrap();
        assert_eq!(back.sampling(), SavedSampling::Poisson);
        assert_eq!(
            back.reconstruct(&test).unwrap(),
            saved.reconstruct(&test).unwrap()
        );
        let again: serde_json::Value = serde_json::from_str(&back.to_json().unwrap()).unwrap();
        assert_eq!(again, old);
    }

    #[test]
    fn bad_files_and_images_are_typed() {
        let (saved, _) = fitted();
        let json = saved.to_json().unwrap();
        let newer = json.replacen("\"format_version\":2", "\"format_version\":3", 1);
        assert!(matches!(
            SavedSbn::from_json(&newer, "m.json"),
            Err(ModelFileError::NewerVersion { found: 3, .. })
        ));
        // Version 2 needs `sampling`, agreeing with the neighbouring relation.
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        let mut missing = v.clone();
        missing.as_object_mut().unwrap().remove("sampling");
        let mut fixed = v;
        fixed["sampling"] = serde_json::json!("fixed_size");
        for bad in [missing, fixed] {
            assert!(matches!(
                SavedSbn::from_json(&bad.to_string(), "m.json"),
                Err(ModelFileError::CorruptModel { .. })
            ));
        }
        let other = json.replacen("\"model\":\"sbn\"", "\"model\":\"blr\"", 1);
        assert!(matches!(
            SavedSbn::from_json(&other, "m.json"),
            Err(ModelFileError::WrongModel { .. })
        ));
        let cut = &json[..json.len() / 2];
        assert!(matches!(
            SavedSbn::from_json(cut, "m.json"),
            Err(ModelFileError::Corrupt { .. })
        ));
        let short = json.replacen("\"b_mean\":[", "\"b_mean\":[0.5,", 1);
        assert!(matches!(
            SavedSbn::from_json(&short, "m.json"),
            Err(ModelFileError::CorruptModel { .. })
        ));
        let wrong = vec![BinaryImage {
            pixels: vec![0; 11],
        }];
        assert!(matches!(
            saved.reconstruct(&wrong),
            Err(SbnError::DimensionMismatch {
                expected: 12,
                found: 11,
                ..
            })
        ));
    }
}
