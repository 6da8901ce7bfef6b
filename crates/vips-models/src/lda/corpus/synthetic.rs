//! A corpus drawn from the LDA generative model (003 Sec. 4.1): topics `beta_k ~ Dir(eta)`, topic
//! proportions `theta_d ~ Dir(alpha)`, and `N` tokens per document, each from a topic drawn from
//! `theta_d`. The true topics are kept, so recovery can be measured.

use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};
use rand_distr::weighted::WeightedAliasIndex;
use rand_distr::{Distribution, Gamma};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::{Corpus, CorpusError, Document};

/// Checked settings of a synthetic LDA corpus; build with [`SyntheticConfig::builder`] (whose
/// defaults are the small embedded corpus: 2000 documents of 100 tokens over 500 words and 10
/// topics, `alpha = 0.1`, `eta = 0.05`, seed 1).
///
/// # Example
/// ```
/// use vips_models::lda::corpus::SyntheticConfig;
/// let cfg = SyntheticConfig::builder().num_docs(50).vocab_size(30).num_topics(3).build()?;
/// assert_eq!((cfg.num_docs(), cfg.doc_length()), (50, 100));
/// assert!(SyntheticConfig::builder().alpha(f64::NAN).build().is_err());
/// # Ok::<(), vips_models::lda::corpus::CorpusError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SyntheticConfig {
    num_docs: usize,
    vocab_size: usize,
    num_topics: usize,
    doc_length: usize,
    alpha: f64,
    eta: f64,
    seed: u64,
}

/// Unchecked synthetic-corpus settings; [`SyntheticConfigBuilder::build`] validates them.
#[derive(Clone, Debug)]
pub struct SyntheticConfigBuilder {
    cfg: SyntheticConfig,
}

impl SyntheticConfig {
    /// Starts a builder with the defaults of the small embedded corpus.
    pub fn builder() -> SyntheticConfigBuilder {
        SyntheticConfigBuilder {
            cfg: Self {
                num_docs: 2000,
                vocab_size: 500,
                num_topics: 10,
                doc_length: 100,
                alpha: 0.1,
                eta: 0.05,
                seed: 1,
            },
        }
    }

    /// Number of documents `D`.
    pub fn num_docs(&self) -> usize {
        self.num_docs
    }
    /// Vocabulary size `V`.
    pub fn vocab_size(&self) -> usize {
        self.vocab_size
    }
    /// Number of topics `K`.
    pub fn num_topics(&self) -> usize {
        self.num_topics
    }
    /// Tokens per document `N`.
    pub fn doc_length(&self) -> usize {
        self.doc_length
    }
    /// Dirichlet parameter of the topic proportions.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }
    /// Dirichlet parameter of the topics.
    pub fn eta(&self) -> f64 {
        self.eta
    }
    /// Seed of the generator (the corpus is a deterministic function of the config).
    pub fn seed(&self) -> u64 {
        self.seed
    }
}

impl SyntheticConfigBuilder {
    /// Number of documents `D` (default 2000).
    pub fn num_docs(mut self, d: usize) -> Self {
        self.cfg.num_docs = d;
        self
    }
    /// Vocabulary size `V` (default 500).
    pub fn vocab_size(mut self, v: usize) -> Self {
        self.cfg.vocab_size = v;
        self
    }
    /// Number of topics `K` (default 10).
    pub fn num_topics(mut self, k: usize) -> Self {
        self.cfg.num_topics = k;
        self
    }
    /// Tokens per document `N` (default 100).
    pub fn doc_length(mut self, n: usize) -> Self {
        self.cfg.doc_length = n;
        self
    }
    /// Dirichlet parameter of the topic proportions (default 0.1).
    pub fn alpha(mut self, alpha: f64) -> Self {
        self.cfg.alpha = alpha;
        self
    }
    /// Dirichlet parameter of the topics (default 0.05).
    pub fn eta(mut self, eta: f64) -> Self {
        self.cfg.eta = eta;
        self
    }
    /// Seed of the generator (default 1).
    pub fn seed(mut self, seed: u64) -> Self {
        self.cfg.seed = seed;
        self
    }

    /// Validates the settings.
    ///
    /// # Errors
    /// [`CorpusError::InvalidParameter`] for a zero size or a non-positive / non-finite `alpha`,
    /// `eta`; [`CorpusError::Limit`] if the topics and documents would not fit in memory.
    pub fn build(self) -> Result<SyntheticConfig, CorpusError> {
        self.cfg.check()?;
        Ok(self.cfg)
    }
}

/// A synthetic corpus with the topics it was drawn from.
#[derive(Clone, Debug)]
pub struct SyntheticCorpus {
    /// The documents.
    pub corpus: Corpus,
    /// The true topics, `K` rows of `V` probabilities (row-major, `topics[k * V + v]`).
    pub topics: Vec<f64>,
    /// The config that produced it.
    pub config: SyntheticConfig,
}

/// Draws one Dirichlet(`shape`, ..., `shape`) vector into `out`, in log space so that tiny shapes
/// neither underflow to an all-zero vector nor produce NaN: `G = Gamma(a + 1) * U^(1/a)`.
pub(crate) fn sample_symmetric_dirichlet(rng: &mut ChaCha8Rng, shape: f64, out: &mut [f64]) {
    let gamma = Gamma::new(shape + 1.0, 1.0).expect("shape > 0 checked by the caller");
    for x in out.iter_mut() {
        let u: f64 = rng.random::<f64>().max(f64::MIN_POSITIVE);
        *x = gamma.sample(rng).ln() + u.ln() / shape;
    }
    let max = out.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mut sum = 0.0;
    for x in out.iter_mut() {
        *x = (*x - max).exp();
        sum += *x;
    }
    for x in out.iter_mut() {
        *x /= sum;
    }
}

impl SyntheticConfig {
    fn check(&self) -> Result<(), CorpusError> {
        let positive = |name, v: usize| {
            if v == 0 {
                Err(CorpusError::InvalidParameter {
                    name,
                    value: 0.0,
                    reason: "must be positive",
                })
            } else {
                Ok(())
            }
        };
        positive("num_docs", self.num_docs)?;
        positive("vocab_size", self.vocab_size)?;
        positive("num_topics", self.num_topics)?;
        positive("doc_length", self.doc_length)?;
        if self.vocab_size > u32::MAX as usize || self.doc_length > u32::MAX as usize {
            return Err(CorpusError::InvalidParameter {
                name: "vocab_size",
                value: self.vocab_size as f64,
                reason: "vocabulary and document length must fit in u32",
            });
        }
        let (k, v, d, n) = (
            self.num_topics as f64,
            self.vocab_size as f64,
            self.num_docs as f64,
            self.doc_length as f64,
        );
        crate::limits::check_memory(
            "the synthetic corpus (num_topics, vocab_size, num_docs, doc_length)",
            format!(
                "K x V = {} topic entries and D x min(N, V) = {} document entries",
                crate::limits::count(k * v),
                crate::limits::count(d * n.min(v))
            ),
            k * v * 32.0 + d * (n.min(v) * 8.0 + 72.0),
        )?;
        for (name, v) in [("alpha", self.alpha), ("eta", self.eta)] {
            if !(v > 0.0 && v.is_finite()) {
                return Err(CorpusError::InvalidParameter {
                    name,
                    value: v,
                    reason: "must be finite and > 0",
                });
            }
        }
        Ok(())
    }

    /// Generates the corpus (in parallel; deterministic for a given config).
    ///
    /// # Errors
    /// As [`SyntheticConfigBuilder::build`] (a deserialised config is checked again here); a
    /// corpus error if a drawn document is refused.
    ///
    /// # Example
    /// ```
    /// use vips_models::lda::corpus::SyntheticConfig;
    /// let cfg = SyntheticConfig::builder()
    ///     .num_docs(50)
    ///     .vocab_size(30)
    ///     .num_topics(3)
    ///     .doc_length(20)
    ///     .build()?;
    /// let s = cfg.generate()?;
    /// assert_eq!(s.corpus.len(), 50);
    /// assert!(s.corpus.docs().iter().all(|d| d.len() == 20));
    /// # Ok::<(), vips_models::lda::corpus::CorpusError>(())
    /// ```
    pub fn generate(&self) -> Result<SyntheticCorpus, CorpusError> {
        self.check()?;
        let (topics, word_tables) = self.topics_and_tables();
        let num_chunks = self.num_docs.div_ceil(GENERATION_CHUNK);
        let docs: Vec<Document> = (0..num_chunks)
            .into_par_iter()
            .flat_map_iter(|c| self.chunk(c, &word_tables))
            .collect();
        let corpus = Corpus::new(docs, self.vocab_size)?;
        Ok(SyntheticCorpus {
            corpus,
            topics,
            config: self.clone(),
        })
    }

    /// The documents [`Self::generate`] draws, the same ones in the same order, handed to
    /// `sink` one by one instead of collected: memory is a few thousand documents whatever
    /// `D` (drawn in parallel, a wave of chunks at a time). `sink` returns `false` to stop.
    /// Returns the true topics (`K` rows of `V`). For corpora larger than memory
    /// ([`crate::store::write_synthetic`]).
    ///
    /// # Errors
    /// As [`Self::generate`], except that the number of documents is not limited by memory.
    ///
    /// # Example
    /// ```
    /// use vips_models::lda::corpus::SyntheticConfig;
    /// let cfg = SyntheticConfig::builder().num_docs(3000).vocab_size(30).num_topics(3).doc_length(20).build()?;
    /// let mut streamed = Vec::new();
    /// cfg.stream_documents(|d| { streamed.push(d); true })?;
    /// assert_eq!(streamed, cfg.generate()?.corpus.into_docs());
    /// # Ok::<(), vips_models::lda::corpus::CorpusError>(())
    /// ```
    pub fn stream_documents(
        &self,
        mut sink: impl FnMut(Document) -> bool,
    ) -> Result<Vec<f64>, CorpusError> {
        // The settings' checks with one document: the corpus itself is not held.
        Self {
            num_docs: 1,
            ..self.clone()
        }
        .check()?;
        let (topics, word_tables) = self.topics_and_tables();
        let num_chunks = self.num_docs.div_ceil(GENERATION_CHUNK);
        let wave = 4 * rayon::current_num_threads().max(1);
        let mut first = 0;
        while first < num_chunks {
            let last = (first + wave).min(num_chunks);
            let chunks: Vec<Vec<Document>> = (first..last)
                .into_par_iter()
                .map(|c| self.chunk(c, &word_tables))
                .collect();
            for doc in chunks.into_iter().flatten() {
                if !sink(doc) {
                    return Ok(topics);
                }
            }
            first = last;
        }
        Ok(topics)
    }

    /// The true topics and one alias table per topic.
    fn topics_and_tables(&self) -> (Vec<f64>, Vec<WeightedAliasIndex<f64>>) {
        let (k, v) = (self.num_topics, self.vocab_size);
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        let mut topics = vec![0.0; k * v];
        for row in topics.chunks_mut(v) {
            sample_symmetric_dirichlet(&mut rng, self.eta, row);
        }
        let word_tables: Vec<WeightedAliasIndex<f64>> = topics
            .chunks(v)
            .map(|row| WeightedAliasIndex::new(row.to_vec()).expect("a probability vector"))
            .collect();
        (topics, word_tables)
    }

    /// The documents of chunk `c` (documents `c * GENERATION_CHUNK ..`), from the chunk's own
    /// stream.
    fn chunk(&self, c: usize, word_tables: &[WeightedAliasIndex<f64>]) -> Vec<Document> {
        let k = self.num_topics;
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        rng.set_stream(c as u64 + 1);
        let start = c * GENERATION_CHUNK;
        let end = (start + GENERATION_CHUNK).min(self.num_docs);
        let mut theta = vec![0.0; k];
        let mut cumulative = vec![0.0; k];
        let mut tokens: Vec<u32> = Vec::with_capacity(self.doc_length);
        let mut docs = Vec::with_capacity(end - start);
        for _ in start..end {
            sample_symmetric_dirichlet(&mut rng, self.alpha, &mut theta);
            let mut acc = 0.0;
            for (c, t) in cumulative.iter_mut().zip(&theta) {
                acc += t;
                *c = acc;
            }
            tokens.clear();
            for _ in 0..self.doc_length {
                let u: f64 = rng.random::<f64>() * acc;
                let topic = cumulative.partition_point(|&c| c <= u).min(k - 1);
                tokens.push(word_tables[topic].sample(&mut rng) as u32);
            }
            docs.push(tokens_to_document(&mut tokens));
        }
        docs
    }
}

/// Documents per generation chunk (each chunk has its own random stream).
const GENERATION_CHUNK: usize = 1024;

/// Sorts `tokens` and counts runs into a document (tokens must be non-empty).
pub(crate) fn tokens_to_document(tokens: &mut [u32]) -> Document {
    tokens.sort_unstable();
    let mut words = Vec::new();
    let mut counts: Vec<u32> = Vec::new();
    for &t in tokens.iter() {
        if words.last() == Some(&t) {
            *counts.last_mut().expect("parallel") += 1;
        } else {
            words.push(t);
            counts.push(1);
        }
    }
    Document::from_sorted(words, counts).expect("sorted, positive, non-empty")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_valid() {
        let cfg = SyntheticConfig::builder()
            .num_docs(40)
            .vocab_size(25)
            .num_topics(4)
            .doc_length(15)
            .alpha(0.01)
            .eta(0.001)
            .seed(3)
            .build()
            .unwrap();
        let a = cfg.generate().unwrap();
        let b = cfg.generate().unwrap();
        assert_eq!(a.corpus.docs(), b.corpus.docs());
        for row in a.topics.chunks(25) {
            let s: f64 = row.iter().sum();
            assert!((s - 1.0).abs() < 1e-9 && row.iter().all(|x| x.is_finite()));
        }
        assert!(SyntheticConfig::builder().alpha(f64::NAN).build().is_err());
    }
}
