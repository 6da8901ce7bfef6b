//! Private (or non-private) LDA with the VIPS engine, on a UCI bag-of-words corpus or a synthetic
//! corpus, printing held-out scores.
//!
//! ```text
//! cargo run --release -p vips-models --example lda -- --corpus ../shared/data/news --population 3441 \
//!     --vocab-public --topics 50 --batch-size 256 --tau0 1024 --kappa 0.7 --epsilon 1 --delta 1e-5 --json
//! cargo run --release -p vips-models --example lda -- --synthetic --json     # embedded default
//! ```
//! Omit `--epsilon` for a non-private run (same code path, no noise). A private run on a corpus
//! needs `--population N`, a public figure for the number of training documents (for
//! `--synthetic` the generator's configured `--synthetic-docs` is public and is the default) and
//! `--vocab-public`, the assertion that the corpus's vocabulary was chosen independently of the
//! private documents (it sets the model's dimension and the words topics show).
//! Non-private, data-dependent numbers (timings, clip counts, the realised document count) are
//! printed only with `--diagnostics`, in a `"diagnostics": {"private": false, ...}` object.
//!
//! Flags that would have no effect are refused (`--delta` without `--epsilon`, `--synthetic-*`
//! with `--corpus`, `--resample-seed` or `--clip-scale` without a fixed document length,
//! `--noise-seed` or `--sampling` in a non-private full-batch run). `--sampling fixed` draws
//! exactly `--batch-size` documents per iteration without replacement (replace-one, paper 001);
//! the JSON's `"sampling"` says which regime ran. Runs planning more than 10^7 iterations need
//! `--allow-long-run`. A progress bar shows on a terminal; Ctrl-C stops before the next
//! iteration. Exit codes: 0 success, 2 usage and input errors, 1 output errors, 130 Ctrl-C.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use serde_json::json;
use vips_models::engine::{Privacy, StepSize, Stop, SviConfig, fit};
use vips_models::lda::corpus::{
    Corpus, CorpusError, Preparation, Prepared, SyntheticConfig, load_uci_dir,
};
use vips_models::lda::{evaluate, match_topics};

mod common;
use common::{CliError, count_usize, emit, finish, open_unit, positive, usage};

#[derive(Parser, Debug)]
#[command(
    about = "VIPS private LDA (003 Algorithm 3)",
    allow_negative_numbers = true
)]
struct Args {
    /// Directory in UCI bag-of-words layout (docword.train.txt[.gz], docword.test.txt[.gz], vocab.txt).
    #[arg(long, conflicts_with = "synthetic")]
    corpus: Option<PathBuf>,
    /// Generate a corpus from the LDA generative model instead (the default when no --corpus).
    #[arg(long)]
    synthetic: bool,
    /// Synthetic: training documents (10% more are drawn as the test set). Default 2000.
    #[arg(long, conflicts_with = "corpus", value_parser = count_usize)]
    synthetic_docs: Option<usize>,
    /// Synthetic: vocabulary size. Default 500.
    #[arg(long, conflicts_with = "corpus", value_parser = count_usize)]
    synthetic_vocab: Option<usize>,
    /// Synthetic: true number of topics (default: --topics).
    #[arg(long, conflicts_with = "corpus", value_parser = count_usize)]
    synthetic_topics: Option<usize>,
    /// Synthetic: tokens per document. Default 100.
    #[arg(long, conflicts_with = "corpus", value_parser = count_usize)]
    synthetic_length: Option<usize>,
    /// Number of topics K.
    #[arg(long, default_value_t = 10, value_parser = count_usize)]
    topics: usize,
    /// Expected batch size S (Poisson rate q = S / N; with --sampling fixed, exactly S).
    #[arg(long, default_value_t = 256.0, value_parser = positive)]
    batch_size: f64,
    /// Step-size delay tau0.
    #[arg(long, default_value_t = 1024.0)]
    tau0: f64,
    /// Step-size forgetting rate kappa in (0.5, 1].
    #[arg(long, default_value_t = 0.7)]
    kappa: f64,
    /// Expected passes over the training data.
    #[arg(long, default_value_t = 1.0, value_parser = positive)]
    passes: f64,
    /// Allow runs of more than 10^7 iterations (refused otherwise).
    #[arg(long)]
    allow_long_run: bool,
    /// The accountant that calibrates the noise and accounts the run: rdp (default), pld (the
    /// least noise for the same epsilon), moments (003), zcdp (000), advanced or linear
    /// composition (docs/accountant.md, section 11). Needs a private run.
    #[arg(long, value_parser = common::accountant)]
    accountant: Option<dp_accountant::AccountantKind>,
    /// Batch sampling: poisson (default; each record with probability S / N, add/remove-one) or
    /// fixed (exactly S records without replacement, replace-one: twice the sensitivity, the
    /// fixed-size subsampled Gaussian event; paper 001; every accountant, PLD included). Refused in a
    /// non-private full-batch run, where it has no effect.
    #[arg(long, value_parser = common::sampling)]
    sampling: Option<vips_models::engine::Batching>,
    /// Total epsilon (omit for a non-private run).
    #[arg(long, value_parser = positive)]
    epsilon: Option<f64>,
    /// Total delta (private runs; default 1e-5).
    #[arg(long, value_parser = open_unit)]
    delta: Option<f64>,
    /// Fixed document length N (default: 500 for private runs, none for non-private; 0 = none).
    #[arg(long)]
    doc_length: Option<usize>,
    /// Clipping scale a of 003 Eq. 24 (bound a*N; needs a fixed document length). Default 0.1.
    #[arg(long)]
    clip_scale: Option<f64>,
    /// Dirichlet parameter of theta (default 1/K).
    #[arg(long)]
    alpha: Option<f64>,
    /// Dirichlet parameter of beta (default 1/K).
    #[arg(long)]
    eta: Option<f64>,
    /// Rayon threads (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Seed of the initial topics and of the synthetic corpus (public randomness).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Public seed of the fixed-length resampling (reproducible; the output says so). Default: a
    /// secret key from OS entropy, never printed. Either way each document is resampled from its
    /// own stream (key + the document's content), a per-record transform.
    #[arg(long)]
    resample_seed: Option<u64>,
    /// Seed the wall's sampling and noise on purpose (reproducible, recorded; default: OS CSPRNG).
    #[arg(long)]
    noise_seed: Option<u64>,
    /// Top words printed per topic.
    #[arg(long, default_value_t = 8, value_parser = count_usize)]
    top_words: usize,
    /// Public population size N used in q = S / N and in the M-step. Must be a public figure
    /// (e.g. a published corpus size), not the count of the private documents. Required for
    /// private runs on --corpus; default for --synthetic: --synthetic-docs (public by
    /// construction); non-private runs default to the document count.
    #[arg(long, value_parser = count_usize)]
    population: Option<usize>,
    /// Assert that the corpus's vocabulary (its vocab.txt and the header's W) is public: chosen
    /// independently of the private documents (a published corpus's word list, a standard
    /// dictionary). The vocabulary sets the model's dimension K x V and the words a topic can
    /// show, so a private run on --corpus requires this assertion. Has no effect on --synthetic
    /// or non-private runs.
    #[arg(long)]
    vocab_public: bool,
    /// Add the non-private diagnostics (timings, clip counts, realised document count) as a
    /// "diagnostics" object marked "private": false. Do not publish them.
    #[arg(long)]
    diagnostics: bool,
    /// Print one JSON object on stdout.
    #[arg(long)]
    json: bool,
    /// Progress lines on stderr (one per iteration; a bar shows on a terminal anyway).
    #[arg(long)]
    progress: bool,
}

/// Default synthetic sizes.
const SYNTHETIC_DOCS: usize = 2000;
const SYNTHETIC_VOCAB: usize = 500;
const SYNTHETIC_LENGTH: usize = 100;

fn run(args: Args) -> Result<(), CliError> {
    let private = args.epsilon.is_some();
    if !private && args.delta.is_some() {
        return Err(usage("--delta", "has no effect without --epsilon"));
    }
    if !private && args.accountant.is_some() {
        return Err(usage(
            "--accountant",
            "has no effect without --epsilon (a non-private run has no accountant)",
        ));
    }
    // The library's preparation: document length (default 500 when private), clipping,
    // priors, resampling key (shared with `dp-bayes fit lda`).
    let preparation = Preparation {
        doc_length: args.doc_length,
        clip_scale: args.clip_scale,
        alpha: args.alpha,
        eta: args.eta,
        resample_seed: args.resample_seed,
    };
    let doc_length = preparation.doc_length(private);
    preparation.check(private).map_err(|e| match e {
        CorpusError::NoEffect {
            setting: "clip_scale",
            reason,
        } => usage("--clip-scale", format!("{reason} (--doc-length N)")),
        CorpusError::NoEffect { reason, .. } => {
            usage("--resample-seed", format!("{reason} (--doc-length N)"))
        }
        other => other.into(),
    })?;
    match (&args.corpus, private, args.vocab_public) {
        (Some(_), true, false) => {
            return Err(usage(
                "--vocab-public",
                "a private run on --corpus needs it: the vocabulary (vocab.txt) sets the model's \
                 dimension and the words topics show, so it must be public; assert that it was \
                 chosen independently of the private documents",
            ));
        }
        (None, _, true) | (_, false, true) => {
            return Err(usage(
                "--vocab-public",
                "has no effect without --corpus and --epsilon",
            ));
        }
        _ => {}
    }
    let cancel = common::ctrl_c_token()?;
    common::threads(args.threads)?;
    let k = args.topics;
    let synthetic_docs = args.synthetic_docs.unwrap_or(SYNTHETIC_DOCS);
    let synthetic_vocab = args.synthetic_vocab.unwrap_or(SYNTHETIC_VOCAB);
    let mut truth = None;
    let (train, test, source) = match &args.corpus {
        Some(dir) => {
            let s = load_uci_dir(dir)?;
            (
                s.train,
                s.test,
                json!({"corpus": dir.display().to_string(), "vocabulary": "declared public (--vocab-public)"}),
            )
        }
        None => {
            // The model's K x V is checked before the corpus is drawn.
            preparation.config(k, synthetic_vocab, private)?;
            let cfg = SyntheticConfig::builder()
                .num_docs(
                    synthetic_docs
                        .checked_add(synthetic_docs.div_ceil(10))
                        .ok_or_else(|| usage("--synthetic-docs", "too large"))?,
                )
                .vocab_size(synthetic_vocab)
                .num_topics(args.synthetic_topics.unwrap_or(k))
                .doc_length(args.synthetic_length.unwrap_or(SYNTHETIC_LENGTH))
                .seed(args.seed.wrapping_add(1))
                .build()?;
            let s = cfg.generate()?;
            let v = s.corpus.vocab_size();
            let mut docs = s.corpus.into_docs();
            let test = docs.split_off(synthetic_docs);
            truth = Some(s.topics);
            (
                Corpus::new(docs, v)?,
                Corpus::new(test, v)?,
                json!({"synthetic": cfg}),
            )
        }
    };
    let Prepared {
        model,
        records,
        key,
    } = preparation.prepare(k, &train, private)?;
    let lda_cfg = model.config().clone();
    let population = match (&args.corpus, args.population) {
        (_, Some(n)) => Some(n),
        (None, None) => Some(synthetic_docs),
        (Some(_), None) => None,
    };
    if !private
        && args.noise_seed.is_some()
        && args.batch_size >= population.unwrap_or(records.len()) as f64
    {
        return Err(usage(
            "--noise-seed",
            "has no effect in a non-private full-batch run (no noise, every record sampled)",
        ));
    }
    common::check_sampling(
        args.sampling,
        private,
        args.batch_size,
        population.unwrap_or(records.len()) as f64,
    )?;
    let privacy = match args.epsilon {
        None => Privacy::NonPrivate,
        Some(epsilon) => Privacy::Target {
            epsilon,
            delta: args.delta.unwrap_or(1e-5),
        },
    };
    let svi = common::with_batching(SviConfig::builder(), args.sampling, args.batch_size)
        .step(StepSize::robbins_monro(args.tau0, args.kappa)?)
        .stop(Stop::Passes {
            passes: args.passes,
        })
        .privacy(privacy)
        .accountant(args.accountant.unwrap_or_default())
        .noise_seed(args.noise_seed)
        .init_seed(args.seed)
        .progress(args.progress)
        .progress_bar(true)
        .allow_long_run(args.allow_long_run)
        .cancel(cancel)
        .population(population)
        .build()?;
    let fitted = fit(&model, records, &svi, |_, _| {})?;
    let (result, diagnostics) = (fitted.result, fitted.diagnostics);
    let held = evaluate(&result.global, &lda_cfg, test.docs(), None)?;
    let hoffman = evaluate(
        &result.global,
        &lda_cfg,
        test.docs(),
        Some(result.privacy.public_population as f64),
    )?;
    let vocab = train.vocab();
    let topics: Vec<Vec<String>> = (0..k)
        .map(|t| {
            result
                .global
                .top_words(t, args.top_words)
                .into_iter()
                .map(|(w, _)| match vocab.and_then(|v| v.get(w as usize)) {
                    Some(word) => word.clone(),
                    None => w.to_string(),
                })
                .collect()
        })
        .collect();
    let recovery = truth.and_then(|t| {
        match_topics(&t, &result.global.mean_topics(), train.vocab_size())
            .map(|m| json!({"mean_tv": m.mean_tv, "max_tv": m.max_tv}))
    });
    let mut out = json!({
        "epsilon": epsilon_json(result.privacy.epsilon),
        "noise_multiplier": result.privacy.noise_multiplier.unwrap_or(0.0),
        "population": result.privacy.public_population,
        "population_declared": result.privacy.population_declared,
        "sampling_rate": result.privacy.sampling_rate,
        "sampling": result.sampling.name(),
        "neighbouring": result.privacy.neighbouring,
        "rng": result.privacy.rng,
        "perplexity_bound": held.perplexity_bound,
        "per_word_bound": held.per_word_bound,
        "perplexity_bound_hoffman": hoffman.perplexity_bound,
        "completion_perplexity": held.completion_perplexity,
        "threads": rayon::current_num_threads(),
        "iterations": result.iterations,
        "expected_records_processed": result.expected_records_processed,
        "num_topics": k,
        "test_docs": test.len(),
        "vocab_size": train.vocab_size(),
        "batch_size": args.batch_size,
        "tau0": args.tau0,
        "kappa": args.kappa,
        "source": source,
        "top_words": topics,
    });
    // Absent values are omitted (never null).
    if let Some(delta) = result.privacy.delta {
        out["delta"] = json!(delta);
        out["accountant"] = json!(result.privacy.accountant.name());
    }
    match doc_length {
        Some(n) => {
            out["doc_length"] = json!(n);
            out["clip_scale"] = json!(lda_cfg.clip_scale());
            out["resampling"] = json!(key.describe());
        }
        None => out["doc_length"] = json!("none (no resampling, no clipping)"),
    }
    if let Some(r) = recovery {
        out["topic_recovery"] = r;
    }
    if result.privacy.epsilon.is_none() {
        out["epsilon_reason"] = json!("non-private run: no noise");
    }
    if args.diagnostics {
        let mut d = json!({
            "private": false,
            "seconds": diagnostics.seconds,
            "records_clipped": diagnostics.records_clipped,
            "records_processed": diagnostics.records_processed,
            "clipped_fraction": diagnostics.clipped_fraction(),
            "train_docs": diagnostics.realised_population,
            "realised_population": diagnostics.realised_population,
        });
        match diagnostics.records_per_second() {
            Some(r) => d["docs_per_second"] = json!(r),
            None => d["docs_per_second_omitted"] = json!("no measurable wall time"),
        }
        if let Some(c) = diagnostics.cpu_seconds {
            d["cpu_seconds"] = json!(c);
        }
        match diagnostics.records_per_cpu_second() {
            Some(r) => d["docs_per_cpu_second"] = json!(r),
            None => d["docs_per_cpu_second_omitted"] = json!("no measurable CPU time"),
        }
        out["diagnostics"] = d;
    }
    emit(&out, args.json)
}

/// The spent epsilon for the JSON: a number, or the string "inf" for a non-private run.
fn epsilon_json(epsilon: Option<f64>) -> serde_json::Value {
    match epsilon {
        Some(e) if e.is_finite() => json!(e),
        _ => json!("inf"),
    }
}

fn main() -> ExitCode {
    finish(run(Args::parse()))
}
