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

/// Settings of a synthetic LDA corpus. `SyntheticConfig::default()` is the small embedded default.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SyntheticConfig {
    /// Number of documents `D`.
    pub num_docs: usize,
    /// Vocabulary size `V`.
    pub vocab_size: usize,
    /// Number of topics `K`.
    pub num_topics: usize,
    /// Tokens per document `N`.
    pub doc_length: usize,
    /// Dirichlet parameter of the topic proportions.
    pub alpha: f64,
    /// Dirichlet parameter of the topics.
    pub eta: f64,
    /// Seed of the generator (the corpus is a deterministic function of the config).
    pub seed: u64,
}

impl Default for SyntheticConfig {
    fn default() -> Self {
        Self {
            num_docs: 2000,
            vocab_size: 500,
            num_topics: 10,
            doc_length: 100,
            alpha: 0.1,
            eta: 0.05,
            seed: 1,
        }
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
    /// [`CorpusError::InvalidParameter`] for a zero size or a non-positive / non-finite `alpha`, `eta`;
    /// [`CorpusError::Limit`] if the topics and documents would not fit in memory.
    ///
    /// # Example
    /// ```
    /// use vips_models::lda::corpus::SyntheticConfig;
    /// let cfg = SyntheticConfig { num_docs: 50, vocab_size: 30, num_topics: 3, doc_length: 20, ..Default::default() };
    /// let s = cfg.generate()?;
    /// assert_eq!(s.corpus.len(), 50);
    /// assert!(s.corpus.docs().iter().all(|d| d.len() == 20));
    /// # Ok::<(), vips_models::lda::corpus::CorpusError>(())
    /// ```
    pub fn generate(&self) -> Result<SyntheticCorpus, CorpusError> {
        self.check()?;
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
        const CHUNK: usize = 1024;
        let num_chunks = self.num_docs.div_ceil(CHUNK);
        let docs: Vec<Document> = (0..num_chunks)
            .into_par_iter()
            .flat_map_iter(|c| {
                let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
                rng.set_stream(c as u64 + 1);
                let start = c * CHUNK;
                let end = (start + CHUNK).min(self.num_docs);
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
            })
            .collect();
        let corpus = Corpus::new(docs, v)?;
        Ok(SyntheticCorpus {
            corpus,
            topics,
            config: self.clone(),
        })
    }
}

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
        let cfg = SyntheticConfig {
            num_docs: 40,
            vocab_size: 25,
            num_topics: 4,
            doc_length: 15,
            alpha: 0.01,
            eta: 0.001,
            seed: 3,
        };
        let a = cfg.generate().unwrap();
        let b = cfg.generate().unwrap();
        assert_eq!(a.corpus.docs(), b.corpus.docs());
        for row in a.topics.chunks(25) {
            let s: f64 = row.iter().sum();
            assert!((s - 1.0).abs() < 1e-9 && row.iter().all(|x| x.is_finite()));
        }
        let bad = SyntheticConfig {
            alpha: f64::NAN,
            ..cfg
        };
        assert!(bad.generate().is_err());
    }
}
