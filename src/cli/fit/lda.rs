//! `dp-bayes fit lda`: private LDA (VIPS, 003 Algorithm 3) on raw text (one document per line,
//! or one per `.txt` file) with a public or privately selected vocabulary, or on a UCI
//! bag-of-words folder whose vocabulary is declared public.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use dp_core::RngPolicy;
use serde_json::json;
use vips_models::engine::{Privacy, fit as engine_fit};
use vips_models::lda::corpus::{CorpusError, Prepared, load_uci_dir};
use vips_models::lda::text::{TextLimits, Tokenizer, bag_of_words, read_text};
use vips_models::lda::vocabulary::{PartitionSelection, VocabularyReport, select_vocabulary};
use vips_models::lda::{Provenance, SavedLda, Vocabulary, evaluate};

use super::{Common, Fitted, count, positive};
use crate::cli::error::{CliError, usage};
use crate::cli::io::num;
use crate::cli::replay::replay_ledger;

/// Arguments of `fit lda`.
#[derive(clap::Args, Debug)]
#[command(allow_negative_numbers = true)]
pub struct Args {
    /// Raw text: a file (one document per line) or a directory (one document per `.txt` file).
    #[arg(long, conflicts_with = "corpus", required_unless_present = "corpus")]
    text: Option<PathBuf>,
    /// A UCI bag-of-words folder (docword.train.txt[.gz], docword.test.txt[.gz], vocab.txt).
    #[arg(long)]
    corpus: Option<PathBuf>,
    /// Assert that the --corpus vocabulary (vocab.txt) is public: chosen independently of the
    /// private documents. Required for a private fit on --corpus.
    #[arg(long, requires = "corpus")]
    vocab_public: bool,
    /// A public vocabulary for --text (one word per line). Without it a private fit selects the
    /// vocabulary privately (Gaussian partition selection) and a non-private fit uses every word.
    #[arg(long, conflicts_with = "corpus")]
    vocab: Option<PathBuf>,
    /// The part of --epsilon spent on the private vocabulary selection (default: a quarter).
    #[arg(long, value_parser = positive, conflicts_with_all = ["vocab", "corpus"])]
    epsilon_vocab: Option<f64>,
    /// The part of --delta spent on the private vocabulary selection (default: half).
    #[arg(long, value_parser = super::open_unit, conflicts_with_all = ["vocab", "corpus"])]
    delta_vocab: Option<f64>,
    /// Private vocabulary: each document contributes at most k distinct words (default 50); a
    /// document with more contributes a random k of them, drawn from its own stream (keyed by
    /// the selection's secret or --vocab-noise-seed and the document's content).
    #[arg(long, value_parser = count, conflicts_with_all = ["vocab", "corpus"])]
    max_words_per_doc: Option<usize>,
    /// Seed the vocabulary selection's noise on purpose (reproducible; no privacy against whoever
    /// knows the seed). Default: OS entropy.
    #[arg(long, conflicts_with_all = ["vocab", "corpus"])]
    vocab_noise_seed: Option<u64>,
    #[command(flatten)]
    lda: super::lda_args::LdaArgs,
    /// Top words shown per topic in the summary.
    #[arg(long, default_value_t = 8, value_parser = count)]
    top_words: usize,
    #[command(flatten)]
    pub common: Common,
}

impl std::ops::Deref for Args {
    type Target = super::lda_args::LdaArgs;

    fn deref(&self) -> &Self::Target {
        &self.lda
    }
}

/// A preparation setting that has no effect, as the usage error of its flag (`hint` says how to
/// give it one); other corpus errors pass through.
pub(crate) fn no_effect(e: CorpusError, hint: &str) -> CliError {
    match e {
        CorpusError::NoEffect { setting, reason } => usage(
            match setting {
                "resample_seed" => "--resample-seed",
                "clip_scale" => "--clip-scale",
                _ => "--doc-length",
            },
            format!("{reason} {hint}"),
        ),
        other => other.into(),
    }
}

/// Default `--max-words-per-doc`.
const DEFAULT_MAX_WORDS: usize = 50;

/// An `(epsilon, delta)` pair.
type Budget = (f64, f64);

/// How the vocabulary was obtained.
enum VocabSource {
    /// A public file or the corpus's declared-public vocab.txt.
    Public(String),
    /// Private selection (its report).
    Selected(Box<(VocabularyReport, dp_accountant::Accountant)>),
    /// Every word of the training text (non-private fits only).
    AllWords,
}

/// The budget split of a private `--text` fit without `--vocab`: (vocabulary, fit).
fn split_budget(args: &Args, epsilon: f64, delta: f64) -> Result<(Budget, Budget), CliError> {
    let ev = args.epsilon_vocab.unwrap_or(epsilon / 4.0);
    let dv = args.delta_vocab.unwrap_or(delta / 2.0);
    if ev >= epsilon {
        return Err(usage(
            "--epsilon-vocab",
            format!("must be below --epsilon ({epsilon}): the rest is the fit's budget"),
        ));
    }
    if dv >= delta {
        return Err(usage(
            "--delta-vocab",
            format!("must be below --delta ({delta}): the rest is the fit's delta"),
        ));
    }
    Ok(((ev, dv), (epsilon - ev, delta - dv)))
}

/// Fits and returns the saved model and the summary parts.
pub fn fit(args: &Args) -> Result<Fitted, CliError> {
    let c = &args.common;
    let (privacy, population) = c.privacy()?;
    let private = c.epsilon.is_some();
    if !private {
        for (set, flag) in [
            (args.epsilon_vocab.is_some(), "--epsilon-vocab"),
            (args.delta_vocab.is_some(), "--delta-vocab"),
            (args.vocab_noise_seed.is_some(), "--vocab-noise-seed"),
            (args.max_words_per_doc.is_some(), "--max-words-per-doc"),
            (args.vocab_public, "--vocab-public"),
        ] {
            if set {
                return Err(usage(
                    flag,
                    "has no effect without --epsilon (a non-private fit selects no vocabulary \
                     privately)",
                ));
            }
        }
    }
    if args.corpus.is_some() && private && !args.vocab_public {
        return Err(usage(
            "--vocab-public",
            "a private fit on --corpus needs it: the vocabulary (vocab.txt) sets the model's \
             dimension and the words topics show, so it must be public; assert that it was \
             chosen independently of the private documents",
        ));
    }
    // The corpus's preparation (document length, clipping, priors, resampling key) and its
    // privacy-relevant defaults are the library's, shared with the lda example; the flags and
    // their checks are shared with `fit lda-store`.
    let preparation = args.lda.preparation(private)?;
    let doc_length = preparation.doc_length(private);
    // The selection's event is add/remove-one; fixed-size batches are replace-one, and one
    // ledger cannot compose the two: refused before anything is selected or fitted.
    if private
        && args.text.is_some()
        && args.vocab.is_none()
        && matches!(
            args.batching.sampling,
            Some(vips_models::engine::Batching::FixedSize { .. })
        )
    {
        return Err(usage(
            "--sampling",
            "fixed (replace-one neighbouring) cannot share a ledger with the private vocabulary \
             selection (add/remove-one): give a public vocabulary with --vocab FILE, or use \
             poisson",
        ));
    }
    // The fit's (epsilon, delta) and, for a private selection, the vocabulary's.
    let (fit_privacy, vocab_budget) = match (privacy, &args.text, &args.vocab) {
        (Privacy::Target { epsilon, delta }, Some(_), None) => {
            let ((ev, dv), (ef, df)) = split_budget(args, epsilon, delta)?;
            (
                Privacy::Target {
                    epsilon: ef,
                    delta: df,
                },
                Some((ev, dv)),
            )
        }
        (p, _, _) => (p, None),
    };
    let cancel = super::ctrl_c_token()?;
    let start = Instant::now();
    let tokenizer = Tokenizer::english();
    let k = args.topics;
    let mut text_diag = json!({});
    let (train, test, vocab, source, input) = match (&args.text, &args.corpus) {
        (Some(path), _) => {
            let text = read_text(path, &tokenizer, &TextLimits::default())?;
            let docs = text.into_docs();
            let (vocab, source) = match (&args.vocab, vocab_budget) {
                (Some(file), _) => (
                    Vocabulary::load(file)?,
                    VocabSource::Public(file.display().to_string()),
                ),
                (None, Some((ev, dv))) => {
                    let k_words = args.max_words_per_doc.unwrap_or(DEFAULT_MAX_WORDS);
                    let selection = PartitionSelection::calibrate(ev, dv, k_words)?;
                    let mut ledger = dp_accountant::Accountant::new();
                    let policy = args
                        .vocab_noise_seed
                        .map_or(RngPolicy::OsEntropy, |seed| RngPolicy::Seeded { seed });
                    let (vocab, report) =
                        select_vocabulary(&docs, &selection, policy, &mut ledger)?;
                    (vocab, VocabSource::Selected(Box::new((report, ledger))))
                }
                (None, None) => {
                    let mut words: Vec<String> = docs.iter().flatten().cloned().collect();
                    words.sort_unstable();
                    words.dedup();
                    (Vocabulary::from_words(words)?, VocabSource::AllWords)
                }
            };
            if vocab.is_empty() {
                return Err(CliError::File {
                    path: path.display().to_string(),
                    reason: "the vocabulary is empty (the private selection kept no word: the \
                             budget is spent; try more documents, a larger --epsilon-vocab or \
                             --max-words-per-doc)"
                        .into(),
                });
            }
            let bow = bag_of_words(&docs, &vocab)?;
            text_diag = json!({
                "documents_read": docs.len(),
                "unknown_tokens": bow.unknown_tokens,
                "documents_without_known_words": bow.empty_documents,
            });
            let corpus = bow.into_corpus(&vocab)?;
            (
                corpus,
                None,
                vocab,
                source,
                json!({"text": path.display().to_string()}),
            )
        }
        (None, Some(dir)) => {
            let s = load_uci_dir(dir)?;
            let words = s
                .train
                .vocab()
                .map(<[String]>::to_vec)
                .ok_or_else(|| CliError::File {
                    path: dir.display().to_string(),
                    reason: "the corpus has no vocab.txt: a saved model needs its words".into(),
                })?;
            let vocab = Vocabulary::from_words(words)?;
            let source = VocabSource::Public(format!(
                "{} (vocab.txt, declared public{})",
                dir.display(),
                if args.vocab_public {
                    " by --vocab-public"
                } else {
                    ""
                }
            ));
            (
                s.train,
                Some(s.test),
                vocab,
                source,
                json!({"corpus": dir.display().to_string()}),
            )
        }
        (None, None) => return Err(usage("--text", "give --text FILE or --corpus DIR")),
    };
    let Prepared {
        model,
        records,
        key,
    } = preparation.prepare(k, &train, private)?;
    let cfg = model.config().clone();
    let cap = population.unwrap_or(records.len()) as f64;
    let svi = args.svi(c, private, fit_privacy, population, cap, cancel)?;
    let fitted = engine_fit(&model, records, &svi, |_, _| {})?;
    let (result, diag) = (fitted.result, fitted.diagnostics);
    let mut privacy = result.privacy.clone();
    let fit_guarantee = privacy.epsilon.zip(privacy.delta);
    // The vocabulary's selection joins the fit's ledger, and the guarantee stated is the
    // ledger's replay at the total delta (what `dp-bayes replay` prints, bit for bit): the
    // accountant's composition of both Gaussian parts plus the threshold's extra epsilon and
    // delta. Basic composition (the budget split) is kept in the settings for comparison.
    let mut basic = None;
    let (vocab_json, report_saved) = match &source {
        VocabSource::Selected(sel) => {
            let (report, vledger) = &**sel;
            let (ef, df) = fit_guarantee.ok_or_else(|| {
                CliError::NonFinite("epsilon (a private fit without a guarantee)".into())
            })?;
            let (basic_eps, delta) = report.compose_with_fit(ef, df);
            basic = Some(basic_eps);
            let mut ledger = privacy
                .ledger
                .take()
                .unwrap_or_else(dp_accountant::Accountant::new);
            for e in vledger.entries() {
                ledger.record_entry(e.clone())?;
            }
            let text = ledger
                .to_json()
                .map_err(|e| CliError::NonFinite(format!("ledger: {e}")))?;
            let replayed = replay_ledger(&text, "ledger.json", delta)?;
            let eps = replayed.json["epsilon"].as_f64().unwrap_or(f64::INFINITY);
            privacy.ledger = Some(ledger);
            privacy.epsilon = Some(eps);
            privacy.delta = Some(delta);
            let s = &report.selection;
            let vocab_json = json!({
                "source": "private selection (Gaussian partition selection, Gopi et al. 2020)",
                "size": report.size,
                "epsilon": num(s.epsilon()),
                "delta": num(s.delta()),
                "noise_delta": num(s.noise_delta()),
                "threshold_delta": num(s.threshold_delta()),
                "max_words_per_doc": s.max_words_per_doc(),
                "word_sample": "per document: all its distinct words, or a uniform sample of \
                                max_words_per_doc of them from the document's own stream \
                                (keyed by the selection's key and the document's tokens)",
                "noise_multiplier": num(s.noise_multiplier()),
                "sigma": num(s.sigma()),
                "threshold": num(s.threshold()),
                "rng": report.rng,
                "ledger_label": report.ledger_label,
            });
            (vocab_json, Some(report.clone()))
        }
        VocabSource::Public(what) => (
            json!({"source": format!("public: {what}"), "size": vocab.len()}),
            None,
        ),
        VocabSource::AllWords => (
            json!({
                "source": "every word of the training text (non-private)",
                "size": vocab.len(),
            }),
            None,
        ),
    };
    let mut notes = BTreeMap::new();
    notes.insert("command".into(), "dp-bayes fit lda".into());
    notes.insert("tokenizer".into(), "english".into());
    notes.insert("iterations".into(), result.iterations.to_string());
    notes.insert("rng".into(), privacy.rng.clone());
    notes.insert("sampling".into(), result.sampling.name().into());
    let provenance = Provenance {
        vocabulary: report_saved,
        guarantee: privacy.epsilon.zip(privacy.delta),
        notes,
    };
    let saved = SavedLda::new(cfg.clone(), result.global.clone(), vocab, provenance)?;
    let heldout = match &test {
        Some(t) if !t.is_empty() => {
            let h = evaluate(&result.global, &cfg, t.docs(), None)?;
            json!({
                "test_docs": t.len(),
                "perplexity_bound": num(h.perplexity_bound),
                "per_word_bound": num(h.per_word_bound),
                "completion_perplexity": num(h.completion_perplexity),
            })
        }
        _ => json!({"note": "no held-out documents (raw text is fitted whole)"}),
    };
    let top: Vec<Vec<String>> = saved
        .top_words(args.top_words)
        .into_iter()
        .map(|t| t.into_iter().map(|(w, _)| w).collect())
        .collect();
    let mut settings = json!({
        "input": input,
        "vocabulary": vocab_json,
        "topics": k,
        "vocab_size": train.vocab_size(),
        "alpha": num(cfg.alpha()),
        "eta": num(cfg.eta()),
        "batch_size": num(args.batch_size),
        "tau0": num(args.tau0),
        "kappa": num(args.kappa),
        "passes": num(args.passes),
        "seed": args.seed,
        "tokenizer": "english (UAX #29 words, lower-cased, >= 3 letters, no digits, 318 stop words)",
        "top_words": top,
    });
    if let Some((ef, df)) = fit_guarantee
        && matches!(source, VocabSource::Selected(..))
    {
        settings["fit_epsilon"] = num(ef);
        settings["fit_delta"] = num(df);
        if let Some(b) = basic {
            settings["epsilon_basic_composition"] = num(b);
        }
        settings["composition"] = json!(
            "the ledger's replay at delta = delta_vocab + delta_fit (the accountant's composition \
             of the vocabulary's and the fit's events, plus the threshold's extra epsilon and \
             delta); epsilon_basic_composition = epsilon_vocab + epsilon_fit also holds"
        );
    }
    match doc_length {
        Some(n) => {
            settings["doc_length"] = json!(n);
            settings["clip_scale"] = num(cfg.clip_scale());
            settings["resampling"] = json!(key.describe());
        }
        None => settings["doc_length"] = json!("none (no resampling, no clipping)"),
    }
    let mut diagnostics = super::with_timings(
        json!({
            "train_docs": train.len(),
            "train_tokens": train.num_tokens(),
            "realised_population": diag.realised_population,
            "records_clipped": diag.records_clipped,
        }),
        &diag,
        start,
    );
    if let (Some(d), Some(t)) = (diagnostics.as_object_mut(), text_diag.as_object()) {
        d.extend(t.clone());
    }
    Ok(Fitted {
        sampling: Some(result.sampling.name()),
        model: "lda",
        model_json: saved.to_json()?,
        iterations: result.iterations,
        dim: k * train.vocab_size(),
        heldout,
        settings,
        diagnostics,
        privacy,
    })
}
