//! From a loaded corpus to LDA's training records, with the settings whose defaults matter for
//! privacy in one place: the fixed document length (500 tokens for a private fit, 003 Sec. 4.2),
//! its clipping scale, the Dirichlet priors and the resampling key. `dp-bayes fit lda` and the
//! `lda` example both prepare their corpora here, so they cannot drift apart.

use super::{Corpus, CorpusError, Document, ResamplingKey};
use crate::lda::{Lda, LdaConfig, LdaError};

/// The fixed document length of a private fit when none is given (003 Sec. 4.2: `N = 500`).
pub const PRIVATE_DOC_LENGTH: usize = 500;

/// The clipping scale `a` when none is given (003 Eq. 24: the bound is `a N`; the paper uses
/// 0.1).
pub const DEFAULT_CLIP_SCALE: f64 = 0.1;

/// The settings that turn a corpus into LDA's records (all public). `None` means the default.
///
/// # Example
/// ```
/// use vips_models::lda::corpus::{Corpus, Document, Preparation, PRIVATE_DOC_LENGTH};
/// let p = Preparation { resample_seed: Some(3), ..Preparation::default() };
/// assert_eq!(p.doc_length(true), Some(PRIVATE_DOC_LENGTH));
/// assert_eq!(p.doc_length(false), None); // non-private: documents kept as they are
/// assert!(p.check(false).is_err()); // a resampling seed without resampling has no effect
/// let corpus = Corpus::new(vec![Document::new(vec![(0, 2), (3, 1)])?; 10], 4)?;
/// let prepared = p.prepare(2, &corpus, true)?;
/// assert_eq!(prepared.records.len(), 10);
/// assert!(prepared.records.iter().all(|d| d.len() == PRIVATE_DOC_LENGTH as u64));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Preparation {
    /// Fixed document length `N`: `Some(0)` for none, `None` for the default
    /// ([`PRIVATE_DOC_LENGTH`] for a private fit, none otherwise).
    pub doc_length: Option<usize>,
    /// Clipping scale `a` (needs a fixed length; default [`DEFAULT_CLIP_SCALE`]).
    pub clip_scale: Option<f64>,
    /// Dirichlet parameter of the topic proportions (default `1/K`).
    pub alpha: Option<f64>,
    /// Dirichlet parameter of the topics (default `1/K`).
    pub eta: Option<f64>,
    /// Public seed of the fixed-length resampling (needs a fixed length; default: a secret key
    /// from OS entropy).
    pub resample_seed: Option<u64>,
}

/// A corpus prepared for a fit ([`Preparation::prepare`]).
#[derive(Debug)]
pub struct Prepared {
    /// The model (its settings hold the resolved document length and clipping).
    pub model: Lda,
    /// The training records: the documents, resampled to the fixed length if there is one.
    pub records: Vec<Document>,
    /// The resampling key (say what it is with [`ResamplingKey::describe`]).
    pub key: ResamplingKey,
}

impl Preparation {
    /// The fixed document length of a fit (`private` or not).
    pub fn doc_length(&self, private: bool) -> Option<usize> {
        match self.doc_length {
            Some(0) => None,
            Some(n) => Some(n),
            None if private => Some(PRIVATE_DOC_LENGTH),
            None => None,
        }
    }

    /// Refuses settings that would have no effect: a resampling seed or a clipping scale
    /// without a fixed document length.
    ///
    /// # Errors
    /// [`CorpusError::NoEffect`] naming the setting (`resample_seed`, `clip_scale`).
    pub fn check(&self, private: bool) -> Result<(), CorpusError> {
        if self.doc_length(private).is_some() {
            return Ok(());
        }
        let reason = "has no effect without a fixed document length";
        if self.resample_seed.is_some() {
            return Err(CorpusError::NoEffect {
                setting: "resample_seed",
                reason,
            });
        }
        if self.clip_scale.is_some() {
            return Err(CorpusError::NoEffect {
                setting: "clip_scale",
                reason,
            });
        }
        Ok(())
    }

    /// The model settings for `topics` topics over `vocab_size` words.
    ///
    /// # Errors
    /// As [`crate::lda::LdaConfigBuilder::build`].
    pub fn config(
        &self,
        topics: usize,
        vocab_size: usize,
        private: bool,
    ) -> Result<LdaConfig, LdaError> {
        let mut b = LdaConfig::builder(topics, vocab_size)
            .doc_length(self.doc_length(private))
            .clip_scale(self.clip_scale.unwrap_or(DEFAULT_CLIP_SCALE));
        if let Some(a) = self.alpha {
            b = b.alpha(a);
        }
        if let Some(e) = self.eta {
            b = b.eta(e);
        }
        b.build()
    }

    /// The resampling key: from the public seed, or a secret key from OS entropy.
    ///
    /// # Errors
    /// [`CorpusError::Entropy`] if the OS cannot provide entropy.
    pub fn key(&self) -> Result<ResamplingKey, CorpusError> {
        match self.resample_seed {
            Some(seed) => Ok(ResamplingKey::public_seed(seed)),
            None => ResamplingKey::from_os_entropy(),
        }
    }

    /// Checks the settings, builds the model for `topics` topics over the corpus's vocabulary
    /// and prepares the records ([`Lda::prepare`]).
    ///
    /// # Errors
    /// As [`Preparation::check`], [`Preparation::config`], [`Preparation::key`] and
    /// [`Lda::prepare`] (an empty corpus, a word outside the vocabulary).
    ///
    /// # Privacy
    /// Resampling is a per-record transform (each document from its own stream, see
    /// [`super::resample_document`]); nothing is released here.
    pub fn prepare(
        &self,
        topics: usize,
        train: &Corpus,
        private: bool,
    ) -> Result<Prepared, LdaError> {
        self.check(private)?;
        let model = Lda::new(self.config(topics, train.vocab_size(), private)?);
        let key = self.key()?;
        let records = model.prepare(train, &key)?;
        Ok(Prepared {
            model,
            records,
            key,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_refusals() {
        let p = Preparation::default();
        assert_eq!(p.doc_length(true), Some(PRIVATE_DOC_LENGTH));
        assert_eq!(p.doc_length(false), None);
        let none = Preparation {
            doc_length: Some(0),
            ..Preparation::default()
        };
        assert_eq!(none.doc_length(true), None);
        let clip = Preparation {
            doc_length: Some(0),
            clip_scale: Some(0.2),
            ..Preparation::default()
        };
        assert!(matches!(
            clip.check(true),
            Err(CorpusError::NoEffect {
                setting: "clip_scale",
                ..
            })
        ));
        let cfg = Preparation {
            doc_length: Some(40),
            clip_scale: Some(0.2),
            alpha: Some(0.3),
            ..Preparation::default()
        }
        .config(3, 7, true)
        .unwrap();
        assert_eq!(
            (cfg.doc_length(), cfg.clip_scale(), cfg.alpha()),
            (Some(40), 0.2, 0.3)
        );
    }
}
