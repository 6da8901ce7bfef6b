//! The global variational parameters of LDA: `q(beta_k) = Dir(lambda_k)`, and their expected
//! natural parameters `E[log beta_kv] = digamma(lambda_kv) - digamma(sum_v lambda_kv)`.

use rand::Rng;
use rand_distr::{Distribution, Gamma};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::aligned::CacheAlignedF32;
use super::special_fns::{digamma, exp32};
use expfam::digamma_f32 as digamma32;
use expfam::digamma_fast;

/// Words per block of [`Topics::topic_sums`] (fixed: it sets the order of the additions).
const TOPIC_SUM_BLOCK: usize = 256;

/// `lambda`, the Dirichlet parameters of the `K` topics, stored word-major: `lambda[v * K + k]`.
///
/// Word-major order makes a document's statistic (its distinct words, `K` values each) a set of
/// contiguous segments of the `V * K` vector the privacy wall releases.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Topics {
    num_topics: usize,
    vocab_size: usize,
    lambda: Vec<f64>,
}

/// Expected natural parameters of the topics as the E-step uses them: `exp(E[log beta_kv])` in
/// `f32`, word-major with each word's row padded with zeros to a multiple of 8 (`stride`), so the
/// E-step's inner loops run on whole 8-lane chunks.
#[derive(Clone, Debug)]
pub struct ExpectedTopics {
    pub(crate) num_topics: usize,
    pub(crate) vocab_size: usize,
    /// Row length: `K` rounded up to a multiple of 8.
    pub(crate) stride: usize,
    /// `exp(E[log beta_kv])` at `v * stride + k` (zero for `k >= K`), from a cache line.
    exp_elog_beta32: CacheAlignedF32,
}

impl Topics {
    /// Topics from a word-major `lambda` (`V * K` entries, all finite and `> 0`).
    ///
    /// Returns `None` if the length is wrong or an entry is not finite and positive.
    pub fn from_lambda(num_topics: usize, vocab_size: usize, lambda: Vec<f64>) -> Option<Self> {
        let ok = num_topics > 0
            && lambda.len() == num_topics.checked_mul(vocab_size)?
            && lambda.par_iter().all(|&x| x > 0.0 && x.is_finite());
        ok.then_some(Self {
            num_topics,
            vocab_size,
            lambda,
        })
    }

    /// The usual random start, as gensim draws it: `lambda_kv = eta + G`, `G ~ Gamma(100, 1/100)`
    /// (Hoffman et al.'s `onlineldavb.py` omits the `eta`). A non-finite or non-positive `eta` is
    /// treated as 0.
    pub fn random_init<R: Rng + ?Sized>(
        num_topics: usize,
        vocab_size: usize,
        eta: f64,
        rng: &mut R,
    ) -> Self {
        let g: Gamma<f64> = Gamma::new(100.0, 0.01).expect("valid");
        let eta = if eta > 0.0 && eta.is_finite() {
            eta
        } else {
            0.0
        };
        let lambda = (0..num_topics * vocab_size)
            .map(|_| eta + g.sample(rng).max(1e-3))
            .collect();
        Self {
            num_topics,
            vocab_size,
            lambda,
        }
    }

    /// Number of topics `K`.
    pub fn num_topics(&self) -> usize {
        self.num_topics
    }

    /// Vocabulary size `V`.
    pub fn vocab_size(&self) -> usize {
        self.vocab_size
    }

    /// `lambda`, word-major (`lambda[v * K + k]`).
    pub fn lambda(&self) -> &[f64] {
        &self.lambda
    }

    pub(crate) fn lambda_mut(&mut self) -> &mut [f64] {
        &mut self.lambda
    }

    /// Per-topic sums `sum_v lambda_kv`: each block of 256 words summed in order, in parallel,
    /// then the blocks' sums added in block order, so the result does not depend on the number
    /// of threads (a rayon `fold`/`reduce` associates by its run-time splits).
    pub fn topic_sums(&self) -> Vec<f64> {
        let k = self.num_topics;
        let blocks: Vec<Vec<f64>> = self
            .lambda
            .par_chunks(k * TOPIC_SUM_BLOCK)
            .map(|block| {
                let mut acc = vec![0.0; k];
                for row in block.chunks_exact(k) {
                    for (a, &x) in acc.iter_mut().zip(row) {
                        *a += x;
                    }
                }
                acc
            })
            .collect();
        let mut sums = vec![0.0; k];
        for b in &blocks {
            for (s, x) in sums.iter_mut().zip(b) {
                *s += x;
            }
        }
        sums
    }

    /// The expected natural parameters in the form the E-step uses, `exp(E[log beta])` (`f32`).
    ///
    /// `digamma(lambda_kv)` runs in `f32` (absolute error ~1e-5, below `f32` rounding of the
    /// result's logarithm for all but the rarest words) for `lambda_kv <= 1e5` and in `f64`
    /// above; the `K` digammas of the topic sums run in `f64`. The rows are computed in parallel,
    /// each block under `pulp`'s run-time SIMD dispatch (AVX2 + FMA when present).
    pub fn expected(&self) -> ExpectedTopics {
        let k = self.num_topics;
        let dig_sums: Vec<f64> = self.topic_sums().into_iter().map(digamma).collect();
        let dig_sums32: Vec<f32> = dig_sums.iter().map(|&d| d as f32).collect();
        let stride = k.div_ceil(8) * 8;
        let mut exp_elog_beta32 = CacheAlignedF32::zeroed(stride * self.vocab_size);
        exp_elog_beta32
            .as_mut_slice()
            .par_chunks_mut(stride * 64)
            .zip(self.lambda.par_chunks(k * 64))
            .for_each(|(x, l)| {
                pulp::Arch::new().dispatch(ExpElogBetaRows {
                    lambda: l,
                    out: x,
                    stride,
                    dig_sums: &dig_sums,
                    dig_sums32: &dig_sums32,
                })
            });
        ExpectedTopics {
            num_topics: k,
            vocab_size: self.vocab_size,
            stride,
            exp_elog_beta32,
        }
    }

    /// Posterior-mean topics `E[beta_kv] = lambda_kv / sum_v lambda_kv`, **topic-major**
    /// (`K` rows of `V` probabilities).
    pub fn mean_topics(&self) -> Vec<f64> {
        let (k, v) = (self.num_topics, self.vocab_size);
        let sums = self.topic_sums();
        let mut out = vec![0.0; k * v];
        for (w, row) in self.lambda.chunks_exact(k).enumerate() {
            for t in 0..k {
                out[t * v + w] = row[t] / sums[t];
            }
        }
        out
    }

    /// The `n` most probable words of topic `k` with their posterior-mean probabilities.
    ///
    /// # Panics
    /// Never for `k < K`; returns an empty list for `k >= K`.
    pub fn top_words(&self, k: usize, n: usize) -> Vec<(u32, f64)> {
        if k >= self.num_topics {
            return Vec::new();
        }
        let sum: f64 = self
            .lambda
            .chunks_exact(self.num_topics)
            .map(|r| r[k])
            .sum();
        let mut words: Vec<(u32, f64)> = self
            .lambda
            .chunks_exact(self.num_topics)
            .enumerate()
            .map(|(w, r)| (w as u32, r[k] / sum))
            .collect();
        let n = n.min(words.len());
        if n == 0 {
            return Vec::new();
        }
        words.select_nth_unstable_by(n - 1, |a, b| b.1.total_cmp(&a.1));
        words.truncate(n);
        words.sort_by(|a, b| b.1.total_cmp(&a.1));
        words
    }
}

impl ExpectedTopics {
    /// Number of topics `K`.
    pub fn num_topics(&self) -> usize {
        self.num_topics
    }
    /// Vocabulary size `V`.
    pub fn vocab_size(&self) -> usize {
        self.vocab_size
    }
    /// Row stride of [`ExpectedTopics::exp_elog_beta`] (`K` rounded up to a multiple of 8).
    pub fn stride(&self) -> usize {
        self.stride
    }
    /// `exp(E[log beta])`, word-major (`v * stride + k`), `f32`, zero-padded rows.
    pub fn exp_elog_beta(&self) -> &[f32] {
        self.exp_elog_beta32.as_slice()
    }
}

/// `exp(digamma(lambda_kv) - digamma(sum_v lambda_kv))` for a block of word rows, as a `pulp` job
/// (the loops vectorise at the dispatched width).
struct ExpElogBetaRows<'a> {
    /// Word-major `lambda` rows (`K` values each).
    lambda: &'a [f64],
    /// Output rows (`stride` values each, the padding left as it is).
    out: &'a mut [f32],
    stride: usize,
    /// `digamma(sum_v lambda_kv)`, `f64` and `f32`.
    dig_sums: &'a [f64],
    dig_sums32: &'a [f32],
}

impl pulp::WithSimd for ExpElogBetaRows<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        let k = self.dig_sums.len();
        for (x, l) in self
            .out
            .chunks_exact_mut(self.stride)
            .zip(self.lambda.chunks_exact(k))
        {
            let x = &mut x[..k];
            let big = l.iter().fold(false, |b, &v| b | (v > 1e5));
            for ((o, &v), &d) in x.iter_mut().zip(l).zip(self.dig_sums32) {
                *o = exp32(digamma32(v as f32) - d);
            }
            if big {
                for ((o, &v), &d) in x.iter_mut().zip(l).zip(self.dig_sums) {
                    if v > 1e5 {
                        *o = exp32((digamma_fast(v) - d) as f32);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The topic sums (and so `exp(E[log beta])`, the mean topics and the evaluation) are the
    /// same bit for bit in pools of 1, 2 and 3 threads; they equal a plain in-order sum to
    /// rounding.
    #[test]
    fn topic_sums_do_not_depend_on_the_number_of_threads() {
        let (k, v) = (7, 5_003);
        let lambda: Vec<f64> = (0..k * v)
            .map(|i| 0.01 + ((i * 2_654_435_761) % 1_000_003) as f64 / 7.0)
            .collect();
        let topics = Topics::from_lambda(k, v, lambda.clone()).unwrap();
        let in_pool = |threads: usize| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| topics.topic_sums())
        };
        let one = in_pool(1);
        assert_eq!(one, in_pool(2));
        assert_eq!(one, in_pool(3));
        for (t, s) in one.iter().enumerate() {
            let plain: f64 = lambda.iter().skip(t).step_by(k).sum();
            assert!((s - plain).abs() <= 1e-9 * plain, "topic {t}");
        }
    }
}
