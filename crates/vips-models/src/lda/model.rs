//! LDA as a [`VipsModel`] (003 Sec. 4, Algorithm 3).

use rand::Rng;
use rayon::prelude::*;

use super::estep::{DocScratch, infer_document};
use super::{ExpectedTopics, LdaConfig, LdaError, Topics};
use crate::engine::{EngineError, RecordError, VipsModel};
use crate::lda::corpus::{Corpus, Document, ResamplingKey, resample_document};
use crate::store::{LdaStoreSource, RecordKind, RecordStore, StoreError};
use dp_core::{ContributionBuffer, MatrixBlock, Release, ReleaseSpec};

/// Latent Dirichlet allocation for the VIPS engine.
///
/// The released statistic is one block, the `K x V` matrix `s_kv = sum_d c_dv phi_dvk`
/// (column-major, so word-major in memory; [`LdaBlocks`]),
/// each document's contribution clipped in Frobenius norm to `a N` (003 Eq. 24).
///
/// # Privacy
/// Neighbouring relation: add/remove one document. Every token of a document contributes a
/// distribution over topics (`sum_k phi = 1`), so a document of `N` tokens has Frobenius norm at
/// most `N` (all tokens one word and one topic, 003 Eq. 23); clipping to `a N` makes the sum's
/// sensitivity `a N`, and `a N / S` after dividing by the public expected batch size `S`. The
/// bound holds whatever the document's length, because it is enforced by clipping; resampling to
/// a fixed `N` only keeps long documents from being clipped hard and short ones from drowning.
/// Without a fixed length the bound is infinite and only non-private runs are accepted.
#[derive(Clone, Debug)]
pub struct Lda {
    cfg: LdaConfig,
}

impl Lda {
    /// The model for checked settings.
    pub fn new(cfg: LdaConfig) -> Self {
        Self { cfg }
    }

    /// The settings.
    pub fn config(&self) -> &LdaConfig {
        &self.cfg
    }

    /// Prepares training documents: checks the vocabulary and, if a fixed length `N` is set,
    /// resamples every document to exactly `N` tokens with replacement (003 Sec. 4.2), each from
    /// its own stream derived from `key` and the document's own content
    /// ([`crate::lda::corpus::resample_document`]). Documents are resampled in parallel; the result does
    /// not depend on the order or the thread count.
    ///
    /// # Errors
    /// [`LdaError::Empty`] for no documents, [`LdaError::UnknownWord`] for word ids `>= V`.
    ///
    /// # Privacy
    /// Resampling happens before the documents enter the privacy wall, so it is a per-record
    /// transform: the resampled version of a document is a function of that document and the key
    /// only (a keyed SHA-256 hash of its `(word, count)` pairs seeds its ChaCha20 stream), never of
    /// any other document or of its position in the corpus. For every fixed key, corpora that
    /// differ by one document are mapped to prepared corpora that differ by one document, so the
    /// engine's add/remove-one guarantee covers the whole run from the corpus. The key need not be
    /// secret for this ([`ResamplingKey::public_seed`] is fine, and reproducible); the examples
    /// default to a secret key from OS entropy. The vocabulary check is a loading-time error for
    /// the data owner, before any release.
    ///
    /// # Example
    /// ```
    /// use vips_models::lda::corpus::{ResamplingKey, SyntheticConfig};
    /// use vips_models::lda::{Lda, LdaConfig};
    /// let corpus = SyntheticConfig::builder().num_docs(20).vocab_size(30).num_topics(2).doc_length(40).build()?
    ///     .generate()?
    ///     .corpus;
    /// let lda = Lda::new(LdaConfig::builder(2, 30).doc_length(Some(25)).build()?);
    /// let key = ResamplingKey::public_seed(1);
    /// let docs = lda.prepare(&corpus, &key)?;
    /// assert!(docs.iter().all(|d| d.len() == 25));
    /// // Dropping the first document leaves every other resampled document unchanged.
    /// let rest = vips_models::lda::corpus::Corpus::new(corpus.docs()[1..].to_vec(), 30)?;
    /// assert_eq!(lda.prepare(&rest, &key)?, docs[1..].to_vec());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn prepare(&self, corpus: &Corpus, key: &ResamplingKey) -> Result<Vec<Document>, LdaError> {
        if corpus.is_empty() {
            return Err(LdaError::Empty("no training documents"));
        }
        let v = self.cfg.vocab_size();
        if let Some(d) = corpus.docs().iter().find(|d| d.max_word() as usize >= v) {
            return Err(LdaError::UnknownWord {
                word: d.max_word(),
                vocab_size: v,
            });
        }
        match self.cfg.doc_length() {
            None => Ok(corpus.docs().to_vec()),
            Some(n) => corpus
                .docs()
                .par_iter()
                .map(|d| resample_document(d, n, key).map_err(LdaError::from))
                .collect(),
        }
    }

    /// The training documents of a bag-of-words store as a record source for
    /// [`crate::engine::fit_source`]: each document is read when a batch draws it and prepared
    /// exactly as [`Self::prepare`] prepares it in memory (resampled to the fixed length from
    /// its own stream keyed by `key` and its content).
    ///
    /// # Errors
    /// [`LdaError::Store`]: [`StoreError::WrongKind`](crate::store::StoreError::WrongKind) for a
    /// store of another kind, [`StoreError::Dimension`](crate::store::StoreError::Dimension) if
    /// its vocabulary is larger than the model's `V`; [`LdaError::Empty`] for an empty store.
    ///
    /// # Privacy
    /// As [`Self::prepare`]: a per-record transform. A stored record that does not decode is
    /// replaced by zero in a private release (it is not checked up front: that would read the
    /// whole corpus). The store's record count is private under add/remove-one; declare the
    /// public `N` ([`crate::engine::SviConfigBuilder::population`]).
    ///
    /// # Example
    /// ```
    /// use vips_models::engine::{fit, fit_source, Privacy, Stop, SviConfig};
    /// use vips_models::lda::corpus::{ResamplingKey, SyntheticConfig};
    /// use vips_models::lda::{Lda, LdaConfig};
    /// use vips_models::store::{RecordStore, write_documents};
    /// let corpus = SyntheticConfig::builder().num_docs(300).vocab_size(40).num_topics(3).doc_length(30)
    ///     .build()?.generate()?.corpus;
    /// # let dir = std::env::temp_dir().join(format!("lda-store-doc-{}", std::process::id()));
    /// # std::fs::create_dir_all(&dir)?;
    /// let path = dir.join("corpus.store");
    /// write_documents(&path, 40, corpus.docs().iter().cloned().map(Ok))?;
    /// let lda = Lda::new(LdaConfig::builder(3, 40).doc_length(Some(30)).build()?);
    /// let svi = SviConfig::builder()
    ///     .expected_batch_size(50.0)
    ///     .stop(Stop::Iterations { iterations: 3 })
    ///     .privacy(Privacy::Target { epsilon: 1.0, delta: 1e-5 })
    ///     .noise_seed(Some(7))
    ///     .population(Some(300))
    ///     .build()?;
    /// let key = ResamplingKey::public_seed(5);
    /// let source = lda.store_source(RecordStore::open(&path)?, key.clone())?;
    /// let from_disk = fit_source(&lda, source, &svi, |_, _| {})?;
    /// let in_memory = fit(&lda, lda.prepare(&corpus, &key)?, &svi, |_, _| {})?;
    /// assert_eq!(from_disk.result.global, in_memory.result.global); // same seeds: identical
    /// # std::fs::remove_dir_all(&dir)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn store_source(
        &self,
        store: RecordStore,
        key: ResamplingKey,
    ) -> Result<LdaStoreSource, LdaError> {
        if store.kind() != RecordKind::BagOfWords {
            return Err(StoreError::WrongKind {
                path: store.path().to_path_buf(),
                expected: RecordKind::BagOfWords,
                found: store.kind(),
            }
            .into());
        }
        if store.dim() > self.cfg.vocab_size() as u64 {
            return Err(StoreError::Dimension {
                path: store.path().to_path_buf(),
                found: store.dim(),
                model: self.cfg.vocab_size(),
            }
            .into());
        }
        if store.is_empty() {
            return Err(LdaError::Empty("no training documents in the store"));
        }
        Ok(LdaStoreSource::new(store, self.cfg.doc_length(), key))
    }
}

/// LDA's handle to its released block: the `K x V` matrix of expected topic-word counts
/// (column-major, so that one word's `K` topic weights are one contiguous run).
#[derive(Clone, Copy, Debug)]
pub struct LdaBlocks {
    /// `s_kw = sum_d c_dw phi_dwk`.
    pub topics: MatrixBlock,
}

impl VipsModel for Lda {
    type Record = Document;
    type Global = Topics;
    type Target = Topics;
    type Natural = ExpectedTopics;
    type Scratch = DocScratch;
    type Blocks = LdaBlocks;

    fn name(&self) -> &str {
        "lda"
    }

    fn release_spec(&self) -> Result<(ReleaseSpec, LdaBlocks), EngineError> {
        // Without a fixed length there is no bound: f64::MAX means "never clip", which the
        // driver accepts only for non-private runs.
        let bound = self.cfg.record_bound().unwrap_or(f64::MAX);
        let mut b = ReleaseSpec::builder(SPEC_NAME);
        let topics = b.matrix(
            "topic_word",
            self.cfg.num_topics(),
            self.cfg.vocab_size(),
            bound,
        )?;
        Ok((b.build()?, LdaBlocks { topics }))
    }

    fn init_global(&self, rng: &mut dyn Rng) -> Result<Topics, EngineError> {
        Ok(Topics::random_init(
            self.cfg.num_topics(),
            self.cfg.vocab_size(),
            self.cfg.eta(),
            rng,
        ))
    }

    fn expected_natural(&self, global: &Topics) -> Result<ExpectedTopics, EngineError> {
        Ok(global.expected())
    }

    fn new_scratch(&self) -> DocScratch {
        DocScratch::new(self.cfg.num_topics())
    }

    /// One run of `K` values per distinct word (word ids are strictly increasing, so the runs
    /// are disjoint and in order).
    fn record_statistic(
        &self,
        blocks: &LdaBlocks,
        natural: &ExpectedTopics,
        record: &Document,
        scratch: &mut DocScratch,
        out: &mut ContributionBuffer,
    ) -> Result<(), RecordError> {
        for_each_word_run(
            &self.cfg,
            natural,
            record,
            scratch,
            |offset, theta, row, r| {
                let dst = out.segment32(blocks.topics, offset, theta.len());
                for ((d, &t), &b) in dst.iter_mut().zip(theta).zip(row) {
                    *d = t * b * r;
                }
            },
        )
    }

    fn global_target(
        &self,
        blocks: &LdaBlocks,
        release: &Release,
        _natural: &ExpectedTopics,
        population: f64,
    ) -> Result<Topics, EngineError> {
        let eta = self.cfg.eta();
        // 003 Algorithm 3: negative noisy entries -> 0, then lambda = eta + D s~.
        let lambda: Vec<f64> = release
            .matrix(blocks.topics)?
            .as_slice()
            .par_iter()
            .map(|&s| eta + population * s.max(0.0))
            .collect();
        Topics::from_lambda(self.cfg.num_topics(), self.cfg.vocab_size(), lambda).ok_or(
            EngineError::Model {
                model: "lda",
                reason: "the M-step target lambda = eta + D s~ is not finite and positive",
            },
        )
    }

    /// One pass instead of three (target, its check, blend): the target is entrywise.
    fn fuses_m_step(&self) -> bool {
        true
    }

    /// `lambda <- (1 - rho) lambda + rho (eta + D max(s~, 0))` entry by entry: the same
    /// arithmetic as [`Self::global_target`] then [`Self::blend`], so the same topics bit for bit.
    fn blend_release(
        &self,
        global: &mut Topics,
        blocks: &LdaBlocks,
        release: &Release,
        _natural: &ExpectedTopics,
        population: f64,
        rho: f64,
    ) -> Result<(), EngineError> {
        let eta = self.cfg.eta();
        let released = release.matrix(blocks.topics)?.as_slice();
        let lambda = global.lambda_mut();
        if released.len() != lambda.len() {
            return Err(EngineError::Model {
                model: "lda",
                reason: "the release does not have the topics' K x V entries",
            });
        }
        // Stops at an invalid target entry, leaving `lambda` half-updated: the fit then stops.
        let valid = lambda
            .par_iter_mut()
            .zip(released.par_iter())
            .all(|(l, &s)| {
                let t = eta + population * s.max(0.0);
                *l = (1.0 - rho) * *l + rho * t;
                t > 0.0 && t.is_finite()
            });
        if valid {
            Ok(())
        } else {
            Err(EngineError::Model {
                model: "lda",
                reason: "the M-step target lambda = eta + D s~ is not finite and positive",
            })
        }
    }

    fn blend(&self, global: &mut Topics, target: &Topics, rho: f64) {
        global
            .lambda_mut()
            .par_iter_mut()
            .zip(target.lambda().par_iter())
            .for_each(|(l, &t)| *l = (1.0 - rho) * *l + rho * t);
    }
}

/// The name of LDA's release spec (labels its ledger entries `"lda #<release>"`).
const SPEC_NAME: &str = "lda";

/// Runs the E-step on one document and hands each distinct word's statistic to `write` as one run
/// of the column-major `K x V` block: `write(w * K, exp(E[log theta]), exp(E[log beta_.w]), c_w / Z_w)`,
/// the run's values being `s_d[k, w] = c_w phi_dwk = theta~_k beta~_kw c_w / Z_w`.
///
/// # Errors
/// A word id `>= V` would index past the topics: such documents are rejected by `prepare` and by
/// the corpus types; here the record is rejected ([`RecordError`]) rather than panicking.
fn for_each_word_run(
    cfg: &LdaConfig,
    natural: &ExpectedTopics,
    record: &Document,
    scratch: &mut DocScratch,
    mut write: impl FnMut(usize, &[f32], &[f32], f32),
) -> Result<(), RecordError> {
    if record.max_word() as usize >= natural.vocab_size {
        return Err(RecordError::new("a word id outside the vocabulary"));
    }
    infer_document(natural, cfg, record, scratch);
    let k = natural.num_topics;
    let stride = natural.stride;
    let eeb = natural.exp_elog_beta();
    let theta = &scratch.exp_elog_theta[..k];
    for (&w, &r) in record.words().iter().zip(&scratch.ratio) {
        let w = w as usize;
        write(w * k, theta, &eeb[w * stride..w * stride + k], r);
    }
    Ok(())
}
