//! What every saved model of this crate shares: the versioned JSON envelope
//! ([`MODEL_FORMAT_VERSION`], [`model_file_kind`]), reading a model file into a typed error that
//! names it ([`read_model_file`], [`ModelFileError`]) and the public privacy facts of a fit
//! ([`SavedPrivacy`]). The models' own files live with them ([`crate::linreg::SavedLinreg`],
//! [`crate::blr::SavedBlr`]).

use std::path::Path;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::engine::PrivacySummary;

/// The model-file format version of the models whose schema has not changed since the first
/// (linreg, LDA, the command line's mog and pbp files). BLR and SBN files are version 2
/// ([`NEWEST_MODEL_FORMAT_VERSION`]: they gained `sampling`, [`SavedSampling`]).
pub const MODEL_FORMAT_VERSION: u32 = 1;

/// The newest model-file format version this build reads (and writes for BLR and SBN, whose
/// version 2 added `sampling`; their version-1 files still load).
pub const NEWEST_MODEL_FORMAT_VERSION: u32 = 2;

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
    /// The file's fields do not make a valid model (a matrix of the wrong size, a value that is
    /// not finite, a posterior that is not positive definite).
    #[error("{path}: corrupt model file: {fault}")]
    CorruptModel {
        /// The file.
        path: String,
        /// The field at fault and what is wrong with it.
        #[source]
        fault: InvalidModel,
    },
    /// The model could not be serialised by `serde_json`.
    #[error("cannot serialise the model: {0}")]
    Serialise(#[from] serde_json::Error),
    /// The model to be written is not valid (a value that is not finite).
    #[error("cannot serialise the model: {0}")]
    Invalid(#[source] InvalidModel),
}

/// A saved model whose fields do not make a valid model: the field (as the file names it, e.g.
/// `posterior.mean` or `posterior.w_mean[3]`) and what is wrong with it.
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

/// What is wrong with one field of a saved model ([`InvalidModel`]).
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
        /// What fixes the length (e.g. `the feature map`).
        by: &'static str,
        /// The length needed.
        expected: usize,
        /// The length found.
        found: usize,
    },
    /// A matrix that is not `rows x cols`.
    #[error("is not {rows} x {cols}")]
    Shape {
        /// Rows needed.
        rows: usize,
        /// Columns needed.
        cols: usize,
    },
    /// A matrix that is not positive definite.
    #[error("is not positive definite")]
    NotPositiveDefinite,
    /// A matrix whose inverse is not finite.
    #[error("is singular")]
    Singular,
    /// A list that must not be empty.
    #[error("is empty")]
    Empty,
    /// The `model` field names another model kind.
    #[error("is not `{0}`")]
    WrongKind(&'static str),
    /// A name that is listed twice or clashes with another.
    #[error("`{0}` is listed twice or is the label")]
    Duplicate(String),
    /// A constraint between values that does not hold (the constraint).
    #[error("needs {0}")]
    Needs(&'static str),
    /// Settings that their validated builder refuses or changes.
    #[error("do not validate")]
    Settings,
    /// LDA settings refused by [`crate::lda::LdaConfig`]'s builder.
    #[error("are refused: {0}")]
    Lda(#[source] Box<crate::lda::LdaError>),
    /// Logistic-regression settings (the scaling) refused.
    #[error("is refused: {0}")]
    Blr(#[source] Box<crate::blr::BlrError>),
    /// Linear-regression settings (the row map) refused.
    #[error("is refused: {0}")]
    Linreg(#[source] Box<crate::linreg::LinregError>),
    /// Sigmoid belief network settings refused.
    #[error("is refused: {0}")]
    Sbn(#[source] Box<crate::sbn::SbnError>),
    /// A posterior that `expfam` refuses (not symmetric positive definite, not finite).
    #[error("is refused: {0}")]
    Posterior(#[source] expfam::ExpFamError),
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
/// above the kind's newest ([`newest_format_version`]). `path` only names the file in the error.
///
/// # Example
/// ```
/// use vips_models::saved::{ModelFileError, model_file_kind};
/// let kind = model_file_kind(r#"{"format_version": 1, "model": "blr"}"#, "m.json")?;
/// assert_eq!(kind, "blr");
/// let newer = model_file_kind(r#"{"format_version": 3, "model": "blr"}"#, "m.json");
/// assert!(matches!(newer, Err(ModelFileError::NewerVersion { found: 3, .. })));
/// let newer = model_file_kind(r#"{"format_version": 2, "model": "linreg"}"#, "m.json");
/// assert!(matches!(newer, Err(ModelFileError::NewerVersion { found: 2, supported: 1, .. })));
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
    let kind = match head.model {
        Some(serde_json::Value::String(s)) => s,
        Some(_) => return Err(corrupt(path, "`model` is not a string")),
        None => return Err(corrupt(path, "no `model`")),
    };
    let supported = newest_format_version(&kind);
    if version > u64::from(supported) {
        return Err(ModelFileError::NewerVersion {
            path: path.to_string(),
            found: version,
            supported,
        });
    }
    Ok(kind)
}

/// The newest format version this build reads for a model kind: 2 for `blr` and `sbn`
/// ([`NEWEST_MODEL_FORMAT_VERSION`]), 1 ([`MODEL_FORMAT_VERSION`]) for `linreg`; for another
/// kind the newest of any kind (its own reader checks its version, or refuses the kind).
pub fn newest_format_version(kind: &str) -> u32 {
    match kind {
        "linreg" => MODEL_FORMAT_VERSION,
        _ => NEWEST_MODEL_FORMAT_VERSION,
    }
}

/// Reads a model of kind `expected` from its file's text: checks version and kind, then
/// deserialises the file as `F` and builds (and validates) the model with `build`; `path`
/// names the file in every error.
pub(crate) fn parse_model<F: serde::de::DeserializeOwned, S>(
    text: &str,
    path: &str,
    expected: &'static str,
    build: impl FnOnce(F) -> Result<S, InvalidModel>,
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
    build(file).map_err(|fault| ModelFileError::CorruptModel {
        path: path.to_string(),
        fault,
    })
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
    let value = serde_json::to_value(model)?;
    if let Some(at) = first_null(&value, "") {
        return Err(ModelFileError::Invalid(InvalidModel::new(
            at,
            ModelFault::NotFinite,
        )));
    }
    // From the typed value, not the `Value`: fields keep their declared order.
    Ok(serde_json::to_string_pretty(model)?)
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

    pub(crate) fn validate(&self) -> Result<(), InvalidModel> {
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
        Ok(())
    }
}

/// The batch-sampling regime of a fit as BLR and SBN model files record it (`"sampling"`,
/// format version 2; the name of [`dp_core::Batching::name`], as in `result.json`). A
/// version-1 file has no `sampling`: its regime is read from `privacy.neighbouring`
/// ([`SavedSampling::from_neighbouring`]), which the engine sets from the regime.
///
/// # Example
/// ```
/// use vips_models::saved::SavedSampling;
/// let b = dp_core::Batching::fixed_size(8)?;
/// let s = SavedSampling::from_batching(&b);
/// assert_eq!((s.name(), s.neighbouring()), ("fixed_size", "replace_one"));
/// assert_eq!(SavedSampling::from_neighbouring("add_remove_one"), Some(SavedSampling::Poisson));
/// # Ok::<(), dp_core::CoreError>(())
/// ```
///
/// # Privacy
/// Public: the regime is a setting of the fit, not a property of the data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SavedSampling {
    /// One record per step (replace-one).
    OneRecord,
    /// Poisson batches (add/remove-one).
    Poisson,
    /// Fixed-size batches without replacement (replace-one).
    FixedSize,
}

impl SavedSampling {
    /// The regime of a fit's batching.
    pub fn from_batching(b: &dp_core::Batching) -> Self {
        match b.neighbouring() {
            dp_accountant::Neighbouring::AddRemoveOne => Self::Poisson,
            dp_accountant::Neighbouring::ReplaceOne if b.name() == "one_record" => Self::OneRecord,
            dp_accountant::Neighbouring::ReplaceOne => Self::FixedSize,
        }
    }

    /// The regime of a version-1 BLR or SBN file from its `privacy.neighbouring` (the engine
    /// fits those models with Poisson or fixed-size batches only): `None` for another name.
    pub fn from_neighbouring(name: &str) -> Option<Self> {
        match name {
            "add_remove_one" => Some(Self::Poisson),
            "replace_one" => Some(Self::FixedSize),
            _ => None,
        }
    }

    /// The name (`one_record`, `poisson`, `fixed_size`).
    pub fn name(self) -> &'static str {
        match self {
            Self::OneRecord => "one_record",
            Self::Poisson => "poisson",
            Self::FixedSize => "fixed_size",
        }
    }

    /// The neighbouring relation of the regime's guarantee (`add_remove_one`, `replace_one`).
    pub fn neighbouring(self) -> &'static str {
        match self {
            Self::Poisson => "add_remove_one",
            Self::OneRecord | Self::FixedSize => "replace_one",
        }
    }

    /// The regime of a BLR or SBN file: `sampling` as written (version 2, where it is
    /// required and must agree with `privacy.neighbouring`) or read from the neighbouring
    /// relation (version 1, where it is absent).
    pub(crate) fn of_file(
        version: u32,
        sampling: Option<Self>,
        privacy: &SavedPrivacy,
    ) -> Result<Self, InvalidModel> {
        match (version, sampling) {
            (1, None) => Self::from_neighbouring(&privacy.neighbouring).ok_or_else(|| {
                InvalidModel::new(
                    "privacy.neighbouring",
                    ModelFault::OutOfDomain("`add_remove_one` or `replace_one`"),
                )
            }),
            (1, Some(_)) => Err(InvalidModel::new(
                "sampling",
                ModelFault::Needs("format_version 2 (version 1 has no `sampling`)"),
            )),
            (_, None) => Err(InvalidModel::new(
                "sampling",
                ModelFault::Needs("a value in format_version 2"),
            )),
            (_, Some(s)) if s.neighbouring() != privacy.neighbouring => Err(InvalidModel::new(
                "sampling",
                ModelFault::Needs("the neighbouring relation of privacy.neighbouring"),
            )),
            (_, Some(s)) => Ok(s),
        }
    }
}
