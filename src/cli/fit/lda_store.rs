//! `dp-bayes fit lda-store`: private LDA (VIPS) on a record store written by
//! `dp-bayes convert bow` (a corpus larger than memory): each iteration reads only the documents
//! its Poisson batch draws, so memory is the batch plus the model. The vocabulary is a public
//! file (one word per line) at least as large as the store's.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use serde_json::json;
use vips_models::engine::fit_source;
use vips_models::lda::{LdaError, Provenance, SavedLda, Vocabulary};
use vips_models::store::RecordStore;

use super::{Common, Fitted};
use crate::cli::error::CliError;
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
    #[command(flatten)]
    lda: super::lda_args::LdaArgs,
    #[command(flatten)]
    pub common: Common,
}

impl std::ops::Deref for Args {
    type Target = super::lda_args::LdaArgs;

    fn deref(&self) -> &Self::Target {
        &self.lda
    }
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
    let preparation = args.lda.preparation(private)?;
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
    let svi = args.svi(c, private, privacy, population, cap, cancel)?;
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
    let diagnostics = super::with_timings(
        json!({
            "realised_population": diag.realised_population,
            "records_processed": diag.records_processed,
            "records_clipped": diag.records_clipped,
            "records_replaced": diag.records_replaced,
        }),
        &diag,
        start,
    );
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
