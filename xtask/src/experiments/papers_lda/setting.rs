//! The corpus every LDA figure of the papers is redrawn on, and the one fit they are all made
//! of: private (or non-private) LDA through `vips_models::engine::fit`, called in-process.

use dp_accountant::{Accountant, AccountantKind};
use vips_models::engine::{Batching, Privacy, StepSize, Stop, SviConfig, fit};
use vips_models::lda::corpus::{Corpus, Document, ResamplingKey, SyntheticConfig, load_uci_dir};
use vips_models::lda::{Lda, LdaConfig, Topics, perplexity_bound};

use crate::context::Context;

/// The one seed of every run: synthetic corpus, initial topics, resampling, noise and batches
/// (the noise is seeded on purpose so that a rerun redraws the same figures).
pub const SEED: u64 = 1;
/// The total delta of every private run of 000, 003 and 004's LDA experiments.
pub const DELTA: f64 = 1e-4;
/// Documents in the papers' Wikipedia corpus (003 Sec. 4.3, 000 Sec. 4.3) and its vocabulary
/// ("approximately 8000 terms").
pub const PAPER_DOCS: f64 = 400_000.0;
pub const PAPER_VOCAB: usize = 8000;
/// The step size `rho_t = (tau0 + t)^-kappa`: Hoffman et al.'s defaults (the papers do not
/// print theirs).
pub const TAU0: f64 = 1024.0;
pub const KAPPA: f64 = 0.7;
/// Training documents of the news corpus as published (header of `docword.train.txt.gz`).
const NEWS_TRAIN_DOCS: usize = 3441;
/// 003's fixed document length (Sec. 4.1).
const PAPER_DOC_LENGTH: usize = 500;
/// 003's (and 001's) clipping scale `a` (003 Eq. 24, 001 Eq. 4).
pub const CLIP_SCALE: f64 = 0.1;
/// `a = 1`: 001's "no clipping" baseline (Sec. 4.1: "when a = 1, no clipping is applied"). A
/// document's expected statistic sums to `N` with non-negative entries, so its Frobenius norm is
/// at most `N = a N` and the clip never binds; the sensitivity is the worst case `N`.
pub const NO_CLIPPING: f64 = 1.0;
/// Quick mode's synthetic corpus: training documents, test documents, vocabulary, topics, length.
const QUICK_DOCS: usize = 16_000;
const QUICK_TEST_DOCS: usize = 800;
const QUICK_VOCAB: usize = 500;
const QUICK_TOPICS: usize = 10;
const QUICK_LENGTH: usize = 100;

/// The corpus and its public facts.
pub struct Setting {
    /// Training documents, resampled to the fixed length per fit by the model.
    pub train: Corpus,
    /// Held-out documents.
    pub test: Vec<Document>,
    /// The public population `D` (the published size, or the generator's configured size).
    pub population: usize,
    /// Fixed document length `N`.
    pub doc_length: usize,
    /// Topics for 003's experiments (50 in the paper) and for 000's (100 in the paper).
    pub topics_003: usize,
    pub topics_000: usize,
    /// What the corpus is, for the report.
    pub description: String,
}

impl Setting {
    /// The news corpus in full mode when present, otherwise the synthetic stand-in.
    pub fn for_context(ctx: &Context) -> anyhow::Result<Self> {
        match ctx.data_set("news") {
            Some(dir) => {
                let s = load_uci_dir(&dir)?;
                Ok(Self {
                    train: s.train,
                    test: s.test.into_docs(),
                    population: NEWS_TRAIN_DOCS,
                    doc_length: PAPER_DOC_LENGTH,
                    topics_003: 50,
                    topics_000: 100,
                    description: format!(
                        "news bag-of-words at {} ({NEWS_TRAIN_DOCS} training documents declared \
                         as the public population, its published vocabulary; N = \
                         {PAPER_DOC_LENGTH}, a = {CLIP_SCALE}); the papers' 400,000-document \
                         Wikipedia corpus is not available",
                        dir.display()
                    ),
                })
            }
            None => Self::synthetic(),
        }
    }

    fn synthetic() -> anyhow::Result<Self> {
        let cfg = SyntheticConfig::builder()
            .num_docs(QUICK_DOCS + QUICK_TEST_DOCS)
            .vocab_size(QUICK_VOCAB)
            .num_topics(QUICK_TOPICS)
            .doc_length(QUICK_LENGTH)
            .seed(SEED)
            .build()?;
        let generated = cfg.generate()?;
        let mut docs = generated.corpus.into_docs();
        let test = docs.split_off(QUICK_DOCS);
        Ok(Self {
            train: Corpus::new(docs, QUICK_VOCAB)?,
            test,
            population: QUICK_DOCS,
            doc_length: QUICK_LENGTH,
            topics_003: QUICK_TOPICS,
            topics_000: QUICK_TOPICS,
            description: format!(
                "synthetic stand-in drawn from the LDA generative model (seed {SEED}): \
                 {QUICK_DOCS} training and {QUICK_TEST_DOCS} test documents, V = {QUICK_VOCAB}, \
                 {QUICK_TOPICS} true topics, {QUICK_LENGTH} tokens each (N = {QUICK_LENGTH}, \
                 a = {CLIP_SCALE}); the papers' Wikipedia corpus is not available and quick \
                 mode reads no data files"
            ),
        })
    }

    /// The LDA settings for `topics` topics (default priors `1/K`) and clipping scale `a`.
    pub fn lda_config(&self, topics: usize, clip_scale: f64) -> anyhow::Result<LdaConfig> {
        Ok(LdaConfig::builder(topics, self.train.vocab_size())
            .doc_length(Some(self.doc_length))
            .clip_scale(clip_scale)
            .build()?)
    }

    /// Noise over signal in one entry of the released statistic: the noise std `sigma a N / S`
    /// over the mean entry `N / (K V)`, i.e. `sigma a K V / S` (the topics' words carry more
    /// than the mean entry, so this is a scale, not a bound).
    pub fn noise_to_signal(&self, sigma: f64, topics: usize, batch: f64) -> f64 {
        noise_to_signal(sigma, topics, self.train.vocab_size(), batch)
    }

    /// The word of id `w` (its id for a corpus without a vocabulary).
    pub fn word(&self, w: u32) -> String {
        self.train
            .vocab()
            .and_then(|v| v.get(w as usize).cloned())
            .unwrap_or_else(|| format!("w{w}"))
    }
}

/// `sigma a K V / S`: see [`Setting::noise_to_signal`].
pub fn noise_to_signal(sigma: f64, topics: usize, vocab: usize, batch: f64) -> f64 {
    sigma * CLIP_SCALE * (topics * vocab) as f64 / batch
}

/// How much noise a fit adds.
#[derive(Clone, Copy, Debug)]
pub enum Noise {
    /// None (the same code path).
    NonPrivate,
    /// A given noise multiplier; the accountant only reports what it costs.
    Multiplier(f64),
    /// The least noise for which the accountant certifies `(epsilon, DELTA)`.
    Target(f64),
}

/// How a fit draws its batches (the engine's two regimes, issue 22).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sampling {
    /// Poisson batches of expected size `S` (add/remove-one; 003, 000): the figures' default.
    Poisson,
    /// Exactly `S` documents drawn without replacement (replace-one, noise std `sigma 2 a N`
    /// on the sum, one fixed-size subsampled Gaussian event per iteration; 001). `S` must be a
    /// whole number.
    FixedSize,
}

/// One fit's settings.
#[derive(Clone, Copy, Debug)]
pub struct FitSpec {
    pub topics: usize,
    pub batch_size: f64,
    pub iterations: u64,
    pub noise: Noise,
    pub accountant: AccountantKind,
    /// Held-out perplexity is computed at about this many evenly spaced iterations (0: at the end only).
    pub checkpoints: u64,
    /// Clipping scale `a` ([`CLIP_SCALE`], or [`NO_CLIPPING`] for 001's baseline).
    pub clip_scale: f64,
    /// Seeds the batches and the noise ([`SEED`] for the figures; other seeds for spreads).
    pub noise_seed: u64,
    /// The batching regime ([`Sampling::Poisson`] unless 001's fixed-size batches are asked for).
    pub sampling: Sampling,
}

impl FitSpec {
    /// The figures' usual fit: clipping at [`CLIP_SCALE`], noise seed [`SEED`].
    pub fn new(
        topics: usize,
        batch_size: f64,
        iterations: u64,
        noise: Noise,
        accountant: AccountantKind,
        checkpoints: u64,
    ) -> Self {
        Self {
            topics,
            batch_size,
            iterations,
            noise,
            accountant,
            checkpoints,
            clip_scale: CLIP_SCALE,
            noise_seed: SEED,
            sampling: Sampling::Poisson,
        }
    }
}

/// What one fit gives the figures.
pub struct FitOutcome {
    /// Held-out per-word perplexity bound at the end (Hoffman et al.'s, the papers' metric:
    /// the topics' prior term shared with the `D` training documents).
    pub perplexity: f64,
    /// `(expected documents seen, perplexity)` at the checkpoints.
    pub trace: Vec<(f64, f64)>,
    /// The noise multiplier used (`None` when non-private).
    pub noise_multiplier: Option<f64>,
    /// Epsilon spent at `DELTA` by the run's accountant (`None` when non-private).
    pub epsilon: Option<f64>,
    /// Final topics.
    pub topics: Topics,
    /// The run's ledger (`None` when non-private), for re-accounting by another accountant.
    pub ledger: Option<Accountant>,
}

/// Large enough never to stop a run given a noise multiplier: the epsilon is what the
/// accountant reports, not a target.
const UNCAPPED_EPSILON: f64 = 1e6;

/// Fits LDA on the setting's training documents and scores it on the test documents.
pub fn fit_lda(setting: &Setting, spec: FitSpec) -> anyhow::Result<FitOutcome> {
    let cfg = setting.lda_config(spec.topics, spec.clip_scale)?;
    let model = Lda::new(cfg.clone());
    let records = model.prepare(&setting.train, &ResamplingKey::public_seed(SEED))?;
    let privacy = match spec.noise {
        Noise::NonPrivate => Privacy::NonPrivate,
        Noise::Multiplier(noise_multiplier) => Privacy::NoiseMultiplier {
            noise_multiplier,
            epsilon: UNCAPPED_EPSILON,
            delta: DELTA,
        },
        Noise::Target(epsilon) => Privacy::Target {
            epsilon,
            delta: DELTA,
        },
    };
    let mut svi = SviConfig::builder()
        .step(StepSize::robbins_monro(TAU0, KAPPA)?)
        .expected_batch_size(spec.batch_size);
    if spec.sampling == Sampling::FixedSize {
        if spec.batch_size.fract() != 0.0 || spec.batch_size < 1.0 {
            anyhow::bail!(
                "a fixed-size batch must be a whole number of documents, got {}",
                spec.batch_size
            );
        }
        svi = svi.batching(Batching::fixed_size(spec.batch_size as usize)?);
    }
    let svi = svi
        .stop(Stop::Iterations {
            iterations: spec.iterations,
        })
        .privacy(privacy)
        .accountant(spec.accountant)
        .noise_seed(Some(spec.noise_seed))
        .init_seed(SEED)
        .population(Some(setting.population))
        .build()?;
    let total_docs = Some(setting.population as f64);
    let every = match spec.checkpoints {
        0 => u64::MAX,
        n => spec.iterations.div_ceil(n).max(1),
    };
    let mut trace = Vec::new();
    let mut trace_error = None;
    let fitted = fit(&model, records, &svi, |report, topics| {
        let done = report.iteration + 1;
        if done % every == 0 && done < spec.iterations && trace_error.is_none() {
            match perplexity_bound(topics, &cfg, &setting.test, total_docs) {
                Ok((bound, _)) => trace.push((done as f64 * spec.batch_size, (-bound).exp())),
                Err(e) => trace_error = Some(e),
            }
        }
    })?;
    if let Some(e) = trace_error {
        return Err(e.into());
    }
    let result = fitted.result;
    let (bound, _) = perplexity_bound(&result.global, &cfg, &setting.test, total_docs)?;
    let perplexity = (-bound).exp();
    trace.push((spec.iterations as f64 * spec.batch_size, perplexity));
    Ok(FitOutcome {
        perplexity,
        trace,
        noise_multiplier: result.privacy.noise_multiplier,
        epsilon: result.privacy.epsilon,
        topics: result.global,
        ledger: result.privacy.ledger,
    })
}
