//! Validated LDA model settings (builder -> checked config, in the manner of linfa).

use serde::{Deserialize, Serialize};

use super::LdaError;

/// Checked LDA settings; build with [`LdaConfig::builder`].
///
/// # Example
/// ```
/// use vips_models::lda::LdaConfig;
/// let cfg = LdaConfig::builder(50, 5000).doc_length(Some(500)).clip_scale(0.1).build()?;
/// assert_eq!(cfg.alpha(), 1.0 / 50.0);
/// assert_eq!(cfg.record_bound(), Some(50.0)); // a * N
/// # Ok::<(), vips_models::lda::LdaError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LdaConfig {
    num_topics: usize,
    vocab_size: usize,
    alpha: f64,
    eta: f64,
    doc_length: Option<usize>,
    clip_scale: f64,
    max_estep_iters: usize,
    estep_tol: f64,
}

/// Unchecked LDA settings; [`LdaConfigBuilder::build`] validates them.
#[derive(Clone, Debug)]
pub struct LdaConfigBuilder {
    cfg: LdaConfig,
}

impl LdaConfig {
    /// Starts a builder for `num_topics` topics over `vocab_size` words, with the defaults
    /// `alpha = eta = 1/K`, no resampling, `a = 1`, at most 50 E-step iterations, tolerance 1e-3
    /// (the settings of gensim and Hoffman et al. 2010).
    pub fn builder(num_topics: usize, vocab_size: usize) -> LdaConfigBuilder {
        let inv_k = 1.0 / num_topics.max(1) as f64;
        LdaConfigBuilder {
            cfg: LdaConfig {
                num_topics,
                vocab_size,
                alpha: inv_k,
                eta: inv_k,
                doc_length: None,
                clip_scale: 1.0,
                max_estep_iters: 50,
                estep_tol: 1e-3,
            },
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
    /// Dirichlet parameter of the topic proportions.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }
    /// Dirichlet parameter of the topics.
    pub fn eta(&self) -> f64 {
        self.eta
    }
    /// Fixed document length `N` (documents are resampled to it), or `None` to keep their tokens.
    pub fn doc_length(&self) -> Option<usize> {
        self.doc_length
    }
    /// Clipping scale `a` of 003 Eq. 24.
    pub fn clip_scale(&self) -> f64 {
        self.clip_scale
    }
    /// Maximum fixed-point iterations of the per-document E-step.
    pub fn max_estep_iters(&self) -> usize {
        self.max_estep_iters
    }
    /// The E-step stops when the mean absolute change of `gamma_d` falls below this.
    pub fn estep_tol(&self) -> f64 {
        self.estep_tol
    }
    /// The per-document Frobenius bound `a * N` of 003 Eq. 24, defined when `N` is fixed.
    pub fn record_bound(&self) -> Option<f64> {
        self.doc_length.map(|n| self.clip_scale * n as f64)
    }
}

/// Bytes per topic-word entry of the LDA state (an estimate on the generous side: `lambda`, the
/// M-step target, the released sum and its noise in `f64`, `exp(E[log beta])` in `f32`).
const BYTES_PER_TOPIC_WORD: f64 = 40.0;

impl LdaConfigBuilder {
    /// Dirichlet parameter of the topic proportions (default `1/K`).
    pub fn alpha(mut self, alpha: f64) -> Self {
        self.cfg.alpha = alpha;
        self
    }
    /// Dirichlet parameter of the topics (default `1/K`).
    pub fn eta(mut self, eta: f64) -> Self {
        self.cfg.eta = eta;
        self
    }
    /// Resample every document to exactly `n` tokens (003: `N = 500`); `None` keeps them.
    pub fn doc_length(mut self, n: Option<usize>) -> Self {
        self.cfg.doc_length = n;
        self
    }
    /// Clipping scale `a` in `(0, 1]` (003 Eq. 24; the paper uses 0.1).
    pub fn clip_scale(mut self, a: f64) -> Self {
        self.cfg.clip_scale = a;
        self
    }
    /// Maximum E-step iterations (default 50).
    pub fn max_estep_iters(mut self, n: usize) -> Self {
        self.cfg.max_estep_iters = n;
        self
    }
    /// E-step tolerance on the mean absolute change of `gamma_d` (default 1e-3).
    pub fn estep_tol(mut self, tol: f64) -> Self {
        self.cfg.estep_tol = tol;
        self
    }

    /// Validates the settings.
    ///
    /// # Errors
    /// [`LdaError::InvalidParameter`] for `K = 0`, `V = 0`, `alpha` / `eta` not finite and
    /// positive, `N = 0`, `a` outside `(0, 1]`, zero E-step iterations, or a tolerance that is not
    /// finite and positive; [`LdaError::Limit`] if the `K x V` state would not fit in memory.
    pub fn build(self) -> Result<LdaConfig, LdaError> {
        let c = self.cfg;
        let bad = |name: &'static str, value: f64, reason: &'static str| {
            Err(LdaError::InvalidParameter {
                name,
                value,
                reason,
            })
        };
        if c.num_topics == 0 {
            return bad("num_topics", 0.0, "must be >= 1");
        }
        if c.vocab_size == 0 || c.vocab_size > u32::MAX as usize {
            return bad("vocab_size", c.vocab_size as f64, "must be in 1..=u32::MAX");
        }
        if !(c.alpha > 0.0 && c.alpha.is_finite()) {
            return bad("alpha", c.alpha, "must be finite and > 0");
        }
        if !(c.eta > 0.0 && c.eta.is_finite()) {
            return bad("eta", c.eta, "must be finite and > 0");
        }
        if c.doc_length == Some(0) {
            return bad("doc_length", 0.0, "must be >= 1");
        }
        if !(c.clip_scale > 0.0 && c.clip_scale <= 1.0) {
            return bad("clip_scale", c.clip_scale, "must be in (0, 1]");
        }
        if c.max_estep_iters == 0 {
            return bad("max_estep_iters", 0.0, "must be >= 1");
        }
        if !(c.estep_tol > 0.0 && c.estep_tol.is_finite()) {
            return bad("estep_tol", c.estep_tol, "must be finite and > 0");
        }
        // lambda, the M-step target, exp(E[log beta]) (f32) and the wall's dense sum: refuse
        // before any K x V array exists.
        let entries = c.num_topics as f64 * c.vocab_size as f64;
        crate::limits::check_memory(
            "num_topics (--topics) and vocab_size",
            format!(
                "K x V = {} x {} = {} entries",
                c.num_topics,
                c.vocab_size,
                crate::limits::count(entries)
            ),
            entries * BYTES_PER_TOPIC_WORD,
        )?;
        Ok(c)
    }
}
