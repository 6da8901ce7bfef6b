//! A fitted LDA model on disk: settings, topics (`lambda`), vocabulary and how it was made, in a
//! versioned JSON file with a checksum; and inference of topic proportions for new documents.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use thiserror::Error;

use super::corpus::Document;
use super::text::{TextError, bag_of_words};
use super::vocabulary::VocabularyReport;
use super::{DocScratch, LdaConfig, Topics, Vocabulary, infer_document};
use crate::limits::MAX_INPUT_BYTES;
use crate::saved::{InvalidModel, ModelFault};

/// The `format` field of a saved LDA model.
pub const SAVED_LDA_FORMAT: &str = "vips-models/lda-model";

/// The format version this build writes and the newest it reads.
pub const SAVED_LDA_FORMAT_VERSION: u32 = 1;

/// Why a saved model could not be written, read or used.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum SavedLdaError {
    /// The file could not be read or written.
    #[error("cannot access {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A file over `MAX_INPUT_BYTES` (checked from its size before reading).
    #[error("{}: {size} bytes is larger than {limit} bytes (MAX_INPUT_BYTES)", path.display())]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// Not a saved LDA model at all (not JSON, or no `format` / `format_version`).
    #[error("{}: not a saved LDA model: {reason}", path.display())]
    NotAModel {
        /// The file.
        path: PathBuf,
        /// What was wrong.
        reason: String,
    },
    /// Written by a newer version of this crate.
    #[error("{}: format version {found} is newer than {supported}, the newest this build reads; upgrade vips-models", path.display())]
    NewerVersion {
        /// The file.
        path: PathBuf,
        /// The file's version.
        found: u64,
        /// [`SAVED_LDA_FORMAT_VERSION`].
        supported: u32,
    },
    /// A model file whose content is damaged: malformed JSON for its version, a checksum that
    /// does not match, or values that are not a valid model.
    #[error("{}: corrupt model file: {reason}", path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What was wrong.
        reason: String,
    },
    /// A model file whose fields do not make a valid model (non-positive `lambda`, sizes that
    /// disagree).
    #[error("{}: corrupt model file: {fault}", path.display())]
    CorruptModel {
        /// The file.
        path: PathBuf,
        /// The field at fault and what is wrong with it.
        #[source]
        fault: InvalidModel,
    },
    /// Parts that do not fit together (given in memory).
    #[error("invalid model: {0}")]
    Invalid(#[from] InvalidModel),
    /// A document uses a word id outside the model's vocabulary.
    #[error("document {doc}: word id {word} outside the model's {vocab_size} words")]
    UnknownWord {
        /// Index of the document.
        doc: usize,
        /// The word id.
        word: u32,
        /// The model's `V`.
        vocab_size: usize,
    },
    /// Serialising failed.
    #[error("cannot serialise the model: {0}")]
    Json(#[from] serde_json::Error),
    /// A text conversion failed.
    #[error(transparent)]
    Text(#[from] TextError),
}

/// A fitted LDA model with its vocabulary, ready to save, load and infer with.
///
/// # Example
/// ```
/// use rand::SeedableRng;
/// use vips_models::lda::{LdaConfig, SavedLda, Topics, Vocabulary};
/// let vocab = Vocabulary::from_words(vec!["apple".into(), "pear".into(), "river".into(), "sea".into()])?;
/// // Two topics: fruit (apple, pear) and water (river, sea); lambda is word-major.
/// let lambda = vec![50.0, 0.1, 50.0, 0.1, 0.1, 50.0, 0.1, 50.0];
/// let topics = Topics::from_lambda(2, 4, lambda).unwrap();
/// let model = SavedLda::new(LdaConfig::builder(2, 4).build()?, topics, vocab, Default::default())?;
/// let path = std::env::temp_dir().join(format!("vips-saved-lda-doc-{}.json", std::process::id()));
/// model.save(&path)?;
/// let back = SavedLda::load(&path)?;
/// assert_eq!(back, model);
/// let docs = vec![vec!["river".to_string(), "sea".into(), "moon".into()]];
/// let inferred = back.infer_text(&docs)?;
/// let theta = inferred.proportions[0].as_ref().unwrap();
/// assert!(theta[1] > 0.8);
/// assert_eq!(inferred.unknown_tokens, 1); // "moon"
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SavedLda {
    config: LdaConfig,
    topics: Topics,
    vocabulary: Vocabulary,
    provenance: Provenance,
}

/// How a saved model was made (all public facts about the run).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    /// The private vocabulary selection's report, if the vocabulary was selected privately.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vocabulary: Option<VocabularyReport>,
    /// The total guarantee `(epsilon, delta)` of everything that produced the model (vocabulary
    /// and fit), or `None` for a non-private model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guarantee: Option<(f64, f64)>,
    /// Free-form notes (command, iterations, RNG policy, ...).
    #[serde(default)]
    pub notes: BTreeMap<String, String>,
}

/// The file layout: a header and the model, with a SHA-256 of the model's JSON.
#[derive(Serialize)]
struct FileOut<'a> {
    format: &'static str,
    format_version: u32,
    sha256: String,
    model: &'a SavedLda,
}

#[derive(Deserialize)]
struct Header {
    format: String,
    format_version: u64,
}

#[derive(Deserialize)]
struct FileIn {
    sha256: String,
    model: serde_json::Value,
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Topic proportions inferred for new documents.
#[derive(Clone, Debug, PartialEq)]
pub struct TextInference {
    /// One entry per input document: `E[theta_d]` (sums to 1), or `None` if the document has no
    /// word of the model's vocabulary.
    pub proportions: Vec<Option<Vec<f64>>>,
    /// Tokens dropped because they are not in the model's vocabulary.
    pub unknown_tokens: u64,
    /// Documents with no known word.
    pub empty_documents: usize,
}

impl SavedLda {
    /// A model from its parts.
    ///
    /// # Errors
    /// [`SavedLdaError::Invalid`] if the settings, the topics and the vocabulary disagree on `K`
    /// or `V`.
    pub fn new(
        config: LdaConfig,
        topics: Topics,
        vocabulary: Vocabulary,
        provenance: Provenance,
    ) -> Result<Self, SavedLdaError> {
        let m = Self {
            config,
            topics,
            vocabulary,
            provenance,
        };
        m.check()?;
        Ok(m)
    }

    fn check(&self) -> Result<(), InvalidModel> {
        let (k, v) = (self.config.num_topics(), self.config.vocab_size());
        if self.topics.num_topics() != k || self.topics.vocab_size() != v {
            return Err(InvalidModel::new(
                format!(
                    "topics ({} x {})",
                    self.topics.num_topics(),
                    self.topics.vocab_size()
                ),
                ModelFault::Shape { rows: k, cols: v },
            ));
        }
        let c = &self.config;
        let rebuilt = LdaConfig::builder(k, v)
            .alpha(c.alpha())
            .eta(c.eta())
            .doc_length(c.doc_length())
            .clip_scale(c.clip_scale())
            .max_estep_iters(c.max_estep_iters())
            .estep_tol(c.estep_tol())
            .build()
            .map_err(|e| InvalidModel::new("settings", ModelFault::Lda(Box::new(e))))?;
        if &rebuilt != c {
            return Err(InvalidModel::new("settings", ModelFault::Settings));
        }
        let lambda = self.topics.lambda();
        if lambda.len() != k * v {
            return Err(InvalidModel::new(
                "lambda",
                ModelFault::Length {
                    by: "K x V",
                    expected: k * v,
                    found: lambda.len(),
                },
            ));
        }
        if Topics::from_lambda(k, v, lambda.to_vec()).is_none() {
            return Err(InvalidModel::new(
                "lambda",
                ModelFault::OutOfDomain("all finite and > 0"),
            ));
        }
        if self.vocabulary.len() != v {
            return Err(InvalidModel::new(
                "vocabulary",
                ModelFault::Length {
                    by: "the settings' V",
                    expected: v,
                    found: self.vocabulary.len(),
                },
            ));
        }
        Ok(())
    }

    /// The settings.
    pub fn config(&self) -> &LdaConfig {
        &self.config
    }
    /// The topics `q(beta) = Dir(lambda)`.
    pub fn topics(&self) -> &Topics {
        &self.topics
    }
    /// The vocabulary (word id = position).
    pub fn vocabulary(&self) -> &Vocabulary {
        &self.vocabulary
    }
    /// How the model was made.
    pub fn provenance(&self) -> &Provenance {
        &self.provenance
    }

    /// The `n` most probable words of every topic, with their posterior-mean probabilities.
    pub fn top_words(&self, n: usize) -> Vec<Vec<(String, f64)>> {
        (0..self.config.num_topics())
            .map(|k| {
                self.topics
                    .top_words(k, n)
                    .into_iter()
                    .map(|(w, p)| (self.vocabulary.words()[w as usize].clone(), p))
                    .collect()
            })
            .collect()
    }

    /// The file's bytes: `{"format", "format_version": 1, "sha256", "model"}`, where `sha256`
    /// is the SHA-256 of the model's JSON text as written.
    ///
    /// # Errors
    /// [`SavedLdaError::Json`].
    pub fn to_json(&self) -> Result<String, SavedLdaError> {
        let model = serde_json::to_string(self)?;
        let out = FileOut {
            format: SAVED_LDA_FORMAT,
            format_version: SAVED_LDA_FORMAT_VERSION,
            sha256: sha256_hex(model.as_bytes()),
            model: self,
        };
        Ok(serde_json::to_string(&out)?)
    }

    /// Writes the model to `path` ([`SavedLda::to_json`]).
    ///
    /// # Errors
    /// [`SavedLdaError::Io`], [`SavedLdaError::Json`].
    pub fn save(&self, path: &Path) -> Result<(), SavedLdaError> {
        let json = self.to_json()?;
        std::fs::write(path, json).map_err(|source| SavedLdaError::Io {
            path: path.to_path_buf(),
            source,
        })
    }

    /// Reads a model written by [`SavedLda::save`]; every `f64` comes back bit for bit.
    ///
    /// # Errors
    /// [`SavedLdaError::Io`]; [`SavedLdaError::TooLarge`] (from the size, before reading);
    /// [`SavedLdaError::NotAModel`] for a file without the header;
    /// [`SavedLdaError::NewerVersion`] for a version above [`SAVED_LDA_FORMAT_VERSION`];
    /// [`SavedLdaError::Corrupt`] for malformed content (a duplicate word) or a checksum
    /// mismatch; [`SavedLdaError::CorruptModel`] for an invalid model (non-positive `lambda`,
    /// sizes that disagree).
    pub fn load(path: &Path) -> Result<Self, SavedLdaError> {
        let io = |source| SavedLdaError::Io {
            path: path.to_path_buf(),
            source,
        };
        let size = std::fs::metadata(path).map_err(io)?.len();
        if size > MAX_INPUT_BYTES {
            return Err(SavedLdaError::TooLarge {
                path: path.to_path_buf(),
                size,
                limit: MAX_INPUT_BYTES,
            });
        }
        let mut bytes = Vec::new();
        std::fs::File::open(path)
            .map_err(io)?
            .take(MAX_INPUT_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(io)?;
        Self::from_json_bytes(&bytes, path)
    }

    /// Parses a model file's bytes (`path` only names the source in errors).
    ///
    /// # Errors
    /// As [`SavedLda::load`] (without the I/O errors).
    pub fn from_json_bytes(bytes: &[u8], path: &Path) -> Result<Self, SavedLdaError> {
        let p = || path.to_path_buf();
        let header: Header =
            serde_json::from_slice(bytes).map_err(|e| SavedLdaError::NotAModel {
                path: p(),
                reason: e.to_string(),
            })?;
        if header.format != SAVED_LDA_FORMAT {
            return Err(SavedLdaError::NotAModel {
                path: p(),
                reason: format!(
                    "format `{}`, expected `{SAVED_LDA_FORMAT}`",
                    crate::limits::excerpt(&header.format)
                ),
            });
        }
        if header.format_version > u64::from(SAVED_LDA_FORMAT_VERSION) {
            return Err(SavedLdaError::NewerVersion {
                path: p(),
                found: header.format_version,
                supported: SAVED_LDA_FORMAT_VERSION,
            });
        }
        let corrupt = |reason: String| SavedLdaError::Corrupt { path: p(), reason };
        if header.format_version == 0 {
            return Err(corrupt("format version 0 does not exist".into()));
        }
        let file: FileIn = serde_json::from_slice(bytes).map_err(|e| corrupt(e.to_string()))?;
        let model: SavedLda =
            serde_json::from_value(file.model).map_err(|e| corrupt(e.to_string()))?;
        // The checksum is over the model's JSON as written; re-serialising reproduces it
        // exactly (f64 round trip is exact, maps are ordered), so any change of a value shows.
        let again = serde_json::to_string(&model)?;
        if sha256_hex(again.as_bytes()) != file.sha256 {
            return Err(corrupt(
                "SHA-256 of the model does not match the file's".into(),
            ));
        }
        model
            .check()
            .map_err(|fault| SavedLdaError::CorruptModel { path: p(), fault })?;
        Ok(model)
    }

    /// Topic proportions `E[theta_d] = gamma_d / sum_k gamma_dk` for each document, by the
    /// local E-step against the saved topics (the fit's own [`infer_document`]).
    ///
    /// # Errors
    /// [`SavedLdaError::UnknownWord`] for a word id outside the vocabulary.
    pub fn infer(&self, docs: &[Document]) -> Result<Vec<Vec<f64>>, SavedLdaError> {
        let v = self.config.vocab_size();
        if let Some((doc, d)) = docs
            .iter()
            .enumerate()
            .find(|(_, d)| d.max_word() as usize >= v)
        {
            return Err(SavedLdaError::UnknownWord {
                doc,
                word: d.max_word(),
                vocab_size: v,
            });
        }
        let expected = self.topics.expected();
        let mut scratch = DocScratch::new(self.config.num_topics());
        Ok(docs
            .iter()
            .map(|d| {
                infer_document(&expected, &self.config, d, &mut scratch);
                let sum: f64 = scratch.gamma.iter().sum();
                scratch.gamma.iter().map(|g| g / sum).collect()
            })
            .collect())
    }

    /// Topic proportions for tokenised documents ([`crate::lda::text::Tokenizer`]): tokens
    /// outside the model's vocabulary are dropped and counted.
    ///
    /// # Errors
    /// [`SavedLdaError::Text`] if a word's count in a document exceeds `u32::MAX`.
    pub fn infer_text<S: AsRef<str>>(
        &self,
        docs: &[Vec<S>],
    ) -> Result<TextInference, SavedLdaError> {
        let bow = bag_of_words(docs, &self.vocabulary)?;
        let known: Vec<Document> = bow.docs.iter().flatten().cloned().collect();
        let mut inferred = self.infer(&known)?.into_iter();
        let proportions = bow
            .docs
            .iter()
            .map(|d| d.as_ref().and_then(|_| inferred.next()))
            .collect();
        Ok(TextInference {
            proportions,
            unknown_tokens: bow.unknown_tokens,
            empty_documents: bow.empty_documents,
        })
    }
}
