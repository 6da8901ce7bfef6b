//! What every saved model of this crate shares: the versioned JSON envelope
//! ([`MODEL_FORMAT_VERSION`], [`model_file_kind`]), reading a model file into a typed error that
//! names it ([`read_model_file`], [`ModelFileError`]) and the public privacy facts of a fit
//! ([`SavedPrivacy`]). The models' own files live with them ([`crate::linreg::SavedLinreg`],
//! [`crate::blr::SavedBlr`]).

use std::path::Path;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::engine::PrivacySummary;

/// The version of the model-file format this build writes and the newest it reads.
pub const MODEL_FORMAT_VERSION: u32 = 1;

/// Largest model file read (a model holds a `d x d` matrix; 256 MiB is far above any model of
/// this crate).
const MAX_MODEL_BYTES: u64 = 256 << 20;

/// Largest model file [`read_model_file`] reads (256 MiB): a writer can refuse a model that
/// would be larger, rather than write a file nothing reads.
pub const MAX_MODEL_FILE_BYTES: u64 = MAX_MODEL_BYTES;

/// Why a model file cannot be used. Every variant names the file.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ModelFileError {
    /// The file could not be read.
    #[error("{path}: cannot read: {source}")]
    Io {
        /// The file.
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
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
    /// The file is not a valid model file (malformed JSON, a missing or wrong field, a matrix of
    /// the wrong size, a value that is not finite, a posterior that is not positive definite).
    #[error("{path}: corrupt model file: {reason}")]
    Corrupt {
        /// The file.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// The file holds another kind of model.
    #[error("{path}: holds a `{found}` model, expected `{expected}`")]
    WrongModel {
        /// The file.
        path: String,
        /// The model kind in the file.
        found: String,
        /// The model kind asked for.
        expected: &'static str,
    },
    /// The model could not be serialised (a value that is not finite).
    #[error("cannot serialise the model: {0}")]
    Serialise(String),
}

pub(crate) fn corrupt(path: &str, reason: impl Into<String>) -> ModelFileError {
    ModelFileError::Corrupt {
        path: path.to_string(),
        reason: reason.into(),
    }
}

/// Reads a model file (bounded in size) as text.
///
/// # Errors
/// [`ModelFileError::Io`] for a missing or unreadable file, [`ModelFileError::Corrupt`] for one
/// that is too large or not UTF-8.
pub fn read_model_file(path: impl AsRef<Path>) -> Result<String, ModelFileError> {
    use std::io::Read;
    let path = path.as_ref();
    let name = path.display().to_string();
    let file = std::fs::File::open(path).map_err(|source| ModelFileError::Io {
        path: name.clone(),
        source,
    })?;
    let mut bytes = Vec::new();
    file.take(MAX_MODEL_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|source| ModelFileError::Io {
            path: name.clone(),
            source,
        })?;
    if bytes.len() as u64 > MAX_MODEL_BYTES {
        return Err(corrupt(
            &name,
            format!("larger than {MAX_MODEL_BYTES} bytes"),
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        corrupt(
            &name,
            format!("not UTF-8 text (byte {})", e.utf8_error().valid_up_to()),
        )
    })
}

/// The model kind (`"linreg"`, `"blr"`, ...) of a model file's text, after checking its
/// `format_version`: a program reads the kind first, then the model with its own type.
///
/// # Errors
/// [`ModelFileError::Corrupt`] for text that is not a JSON object with an integer
/// `format_version >= 1` and a string `model`; [`ModelFileError::NewerVersion`] for a version
/// above [`MODEL_FORMAT_VERSION`]. `path` only names the file in the error.
///
/// # Example
/// ```
/// use vips_models::saved::{ModelFileError, model_file_kind};
/// let kind = model_file_kind(r#"{"format_version": 1, "model": "blr"}"#, "m.json")?;
/// assert_eq!(kind, "blr");
/// let newer = model_file_kind(r#"{"format_version": 2, "model": "blr"}"#, "m.json");
/// assert!(matches!(newer, Err(ModelFileError::NewerVersion { found: 2, .. })));
/// # Ok::<(), ModelFileError>(())
/// ```
pub fn model_file_kind(text: &str, path: &str) -> Result<String, ModelFileError> {
    #[derive(Deserialize)]
    struct Head {
        format_version: Option<serde_json::Value>,
        model: Option<serde_json::Value>,
    }
    let head: Head =
        serde_json::from_str(text).map_err(|e| corrupt(path, format!("not a JSON object: {e}")))?;
    let version = head
        .format_version
        .ok_or_else(|| corrupt(path, "no `format_version`"))?;
    let version = version
        .as_u64()
        .filter(|&v| v >= 1)
        .ok_or_else(|| corrupt(path, "`format_version` is not an integer >= 1"))?;
    if version > u64::from(MODEL_FORMAT_VERSION) {
        return Err(ModelFileError::NewerVersion {
            path: path.to_string(),
            found: version,
            supported: MODEL_FORMAT_VERSION,
        });
    }
    match head.model {
        Some(serde_json::Value::String(s)) => Ok(s),
        Some(_) => Err(corrupt(path, "`model` is not a string")),
        None => Err(corrupt(path, "no `model`")),
    }
}

/// Reads a model of kind `expected` from its file's text: checks version and kind, then
/// deserialises the file as `F` and builds (and validates) the model with `build`; `path`
/// names the file in every error.
pub(crate) fn parse_model<F: serde::de::DeserializeOwned, S>(
    text: &str,
    path: &str,
    expected: &'static str,
    build: impl FnOnce(F) -> Result<S, String>,
) -> Result<S, ModelFileError> {
    let kind = model_file_kind(text, path)?;
    if kind != expected {
        return Err(ModelFileError::WrongModel {
            path: path.to_string(),
            found: crate::limits::excerpt(&kind),
            expected,
        });
    }
    let file: F = serde_json::from_str(text).map_err(|e| corrupt(path, e.to_string()))?;
    build(file).map_err(|r| corrupt(path, r))
}

/// Reads a model file (bounded in size) and the model in it with `from_json`, which is given
/// the text and the file's name.
pub(crate) fn load_model<S>(
    path: &Path,
    from_json: impl FnOnce(&str, &str) -> Result<S, ModelFileError>,
) -> Result<S, ModelFileError> {
    from_json(&read_model_file(path)?, &path.display().to_string())
}

/// Pretty JSON of a model; refuses non-finite numbers (they would become `null`).
pub(crate) fn model_json<T: Serialize>(model: &T) -> Result<String, ModelFileError> {
    let value =
        serde_json::to_value(model).map_err(|e| ModelFileError::Serialise(e.to_string()))?;
    if let Some(at) = first_null(&value, "") {
        return Err(ModelFileError::Serialise(format!(
            "`{at}` is not a finite number"
        )));
    }
    // From the typed value, not the `Value`: fields keep their declared order.
    serde_json::to_string_pretty(model).map_err(|e| ModelFileError::Serialise(e.to_string()))
}

fn first_null(v: &serde_json::Value, at: &str) -> Option<String> {
    match v {
        serde_json::Value::Null => Some(at.to_string()),
        serde_json::Value::Array(a) => a
            .iter()
            .enumerate()
            .find_map(|(i, x)| first_null(x, &format!("{at}[{i}]"))),
        serde_json::Value::Object(m) => m.iter().find_map(|(k, x)| {
            first_null(
                x,
                &if at.is_empty() {
                    k.clone()
                } else {
                    format!("{at}.{k}")
                },
            )
        }),
        _ => None,
    }
}

/// The public privacy facts of a fit, as a saved model records them (no `null`: absent values
/// are left out).
///
/// # Privacy
/// Public: the settings and the ledger's totals ([`PrivacySummary`]); the population only when
/// the caller declared it (a non-private run without a declared population used the count of the
/// records, which is not written).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SavedPrivacy {
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
    /// Releases (iterations) of the fit.
    pub iterations: u64,
}

impl SavedPrivacy {
    /// The saved form of a fit's privacy summary.
    pub fn from_summary(p: &PrivacySummary, iterations: u64) -> Self {
        let private = p.epsilon.is_some() && p.delta.is_some();
        Self {
            private,
            epsilon: p.epsilon,
            delta: p.delta,
            noise_multiplier: p.noise_multiplier,
            accountant: private.then(|| p.accountant.name().to_string()),
            population: p.population_declared.then_some(p.public_population),
            neighbouring: p.neighbouring.clone(),
            rng: p.rng.clone(),
            iterations,
        }
    }

    pub(crate) fn validate(&self) -> Result<(), String> {
        for (k, v) in [
            ("epsilon", self.epsilon),
            ("delta", self.delta),
            ("noise_multiplier", self.noise_multiplier),
        ] {
            if v.is_some_and(|x| !(x.is_finite() && x >= 0.0)) {
                return Err(format!("privacy.{k} is not a finite number >= 0"));
            }
        }
        Ok(())
    }
}
