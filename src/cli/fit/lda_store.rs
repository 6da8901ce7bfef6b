//! `dp-bayes fit lda-store`: private LDA (VIPS) on a record store written by
//! `dp-bayes convert bow` (a corpus larger than memory): each iteration reads only the documents
//! its Poisson batch draws, so memory is the batch plus the model. The vocabulary is a public
//! file (one word per line) at least as large as the store's.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use serde_json::json;
use vips_models::engine::{StepSize, Stop, SviConfig, fit_source};
use vips_models::lda::corpus::Preparation;
use vips_models::lda::{LdaError, Provenance, SavedLda, Vocabulary};
use vips_models::store::RecordStore;

use super::{Common, Fitted, count, positive};
use crate::cli::error::{CliError, usage};
use crate::cli::io::num;

/// Arguments of `fit lda-store`.
#[derive(clap::Args, Debug)]
#[command(allow_negative_numbers = true)]
pub struct Args {
    /// The record store of documents (`dp-bayes convert bow`).
    #[arg(long)]
    store: PathBuf,
    /// The public vocabulary (one word per line; word i is the store's word id i): chosen
    /// independently of the private documents.
    #[arg(long)]
    vocab: PathBuf,
    /// Number of topics K.
    #[arg(long, default_value_t = 10, value_parser = count)]
    topics: usize,
    /// Expected batch size S (Poisson rate q = S / N; the exact size with --sampling fixed).
    #[arg(long, default_value_t = 256.0, value_parser = positive)]
    batch_size: f64,
    #[command(flatten)]
    batching: super::SamplingArg,
    /// Step-size delay tau0.
    #[arg(long, default_value_t = 1024.0)]
    tau0: f64,
    /// Step-size forgetting rate kappa in (0.5, 1].
    #[arg(long, default_value_t = 0.7)]
    kappa: f64,
    /// Expected passes over the declared population.
    #[arg(long, default_value_t = 1.0, value_parser = positive)]
    passes: f64,
    /// Fixed document length (default 500 for private fits, none otherwise; 0 = none).
    #[arg(long)]
    doc_length: Option<usize>,
    /// Clipping scale a (bound a N; needs a fixed document length). Default 0.1.
    #[arg(long, value_parser = positive)]
    clip_scale: Option<f64>,
    /// Dirichlet parameter of theta (default 1/K).
    #[arg(long, value_parser = positive)]
    alpha: Option<f64>,
    /// Dirichlet parameter of beta (default 1/K).
    #[arg(long, value_parser = positive)]
    eta: Option<f64>,
    /// Seed of the initial topics (public randomness).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Public seed of the fixed-length resampling (default: a secret key from OS entropy).
    #[arg(long)]
    resample_seed: Option<u64>,
    #[command(flatten)]
    pub common: Common,
}

/// Fits and returns the saved model and the summary parts.
///
/// # Privacy
/// As `fit lda --corpus`: the store's record count is private and is not used (a private fit
/// needs `--population`; a non-private fit without it uses the count, reported only among the
/// diagnostics); documents are resampled when read, exactly as in memory.
pub fn fit(args: &Args) -> Result<Fitted, CliError> {
    let c = &args.common;
    let (privacy, population) = c.privacy()?;
    let private = c.epsilon.is_some();
    if !(args.kappa > 0.5 && args.kappa <= 1.0) {
        return Err(usage(
            "--kappa",
            format!("must be in (0.5, 1], got {}", args.kappa),
        ));
    }
    if !(args.tau0 >= 0.0 && args.tau0.is_finite()) {
        return Err(usage(
            "--tau0",
            format!("must be finite and >= 0, got {}", args.tau0),
        ));
    }
    let preparation = Preparation {
        doc_length: args.doc_length,
        clip_scale: args.clip_scale,
        alpha: args.alpha,
        eta: args.eta,
        resample_seed: args.resample_seed,
    };
    preparation
        .check(private)
        .map_err(|e| super::lda::no_effect(e, "(--doc-length N)"))?;
    let vocab = Vocabulary::load(&args.vocab)?;
    let store = RecordStore::open(&args.store).map_err(LdaError::from)?;
    if (vocab.len() as u64) < store.dim() {
        return Err(CliError::File {
            path: args.vocab.display().to_string(),
            reason: format!(
                "{} words, fewer than the store's vocabulary size {}",
                vocab.len(),
                store.dim()
            ),
        });
    }
    let cancel = super::ctrl_c_token()?;
    let start = Instant::now();
    let model =
        vips_models::lda::Lda::new(preparation.config(args.topics, vocab.len(), private)?);
    let key = preparation.key().map_err(LdaError::from)?;
    let key_text = key.describe();
    let source = model.store_source(store, key)?;
    let cap = population.unwrap_or_else(|| dp_core::RecordSource::len(&source)) as f64;
    let svi = args
        .batching
        .apply(
            SviConfig::builder(),
            private,
            args.batch_size,
            cap,
            "--batch-size",
        )?
        .step(StepSize::robbins_monro(args.tau0, args.kappa)?)
        .stop(Stop::Passes {
            passes: args.passes,
        })
        .privacy(privacy)
        .accountant(c.accountant.unwrap_or_default())
        .noise_seed(c.noise_seed)
        .init_seed(args.seed)
        .progress_bar(true)
        .cancel(cancel)
        .population(population)
        .build()?;
    let fitted = fit_source(&model, source, &svi, |_, _| {})?;
    let (result, diag) = (fitted.result, fitted.diagnostics);
    let cfg = model.config().clone();
    let mut notes = BTreeMap::new();
    notes.insert("command".into(), "dp-bayes fit lda-store".into());
    notes.insert("iterations".into(), result.iterations.to_string());
    notes.insert("rng".into(), result.privacy.rng.clone());
    notes.insert("sampling".into(), result.sampling.name().into());
    let provenance = Provenance {
        vocabulary: None,
        guarantee: result.privacy.epsilon.zip(result.privacy.delta),
        notes,
    };
    let vocab_len = vocab.len();
    let saved = SavedLda::new(cfg.clone(), result.global.clone(), vocab, provenance)?;
    let mut settings = json!({
        "input": {"store": args.store.display().to_string()},
        "vocabulary": {"source": format!("public: {}", args.vocab.display()), "size": vocab_len},
        "topics": args.topics,
        "vocab_size": vocab_len,
        "alpha": num(cfg.alpha()),
        "eta": num(cfg.eta()),
        "batch_size": num(args.batch_size),
        "tau0": num(args.tau0),
        "kappa": num(args.kappa),
        "passes": num(args.passes),
        "seed": args.seed,
    });
    match cfg.doc_length() {
        Some(n) => {
            settings["doc_length"] = json!(n);
            settings["clip_scale"] = num(cfg.clip_scale());
            settings["resampling"] = json!(key_text);
        }
        None => settings["doc_length"] = json!("none (no resampling, no clipping)"),
    }
    let diagnostics = json!({
        "realised_population": diag.realised_population,
        "records_processed": diag.records_processed,
        "records_clipped": diag.records_clipped,
        "records_replaced": diag.records_replaced,
        "fit_seconds": num(diag.seconds),
        "seconds": num(start.elapsed().as_secs_f64()),
    });
    Ok(Fitted {
        sampling: Some(result.sampling.name()),
        model: "lda",
        model_json: saved.to_json()?,
        iterations: result.iterations,
        dim: args.topics * vocab_len,
        heldout: json!({"note": "no held-out documents (a store holds training documents only)"}),
        settings,
        diagnostics,
        privacy: result.privacy,
    })
}
