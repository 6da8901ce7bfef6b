//! `dp-bayes infer --model FILE --text FILE`: topic proportions `E[theta_d]` of new documents
//! under a saved LDA model (the fit's own E-step against the saved topics).

use std::path::PathBuf;

use serde_json::{Value, json};
use vips_models::lda::SavedLda;
use vips_models::lda::text::{TextLimits, Tokenizer, read_text};

use super::error::CliError;
use super::io::{check_no_null, emit, emit_text, num};

/// Arguments of `infer`.
#[derive(clap::Args, Debug)]
pub struct InferArgs {
    /// The saved LDA model (a `fit lda` model.json).
    #[arg(long)]
    model: PathBuf,
    /// New documents: a file (one document per line) or a directory (one per `.txt` file),
    /// tokenised as at fit time.
    #[arg(long)]
    text: PathBuf,
    /// Print one JSON object (default: CSV `document,topic_0,...`, one line per document with a
    /// known word).
    #[arg(long)]
    json: bool,
}

/// Runs `infer`.
///
/// # Privacy
/// The model is public (post-processing of the private fit); the new documents are the caller's.
/// The counts of unknown words and of documents without a known word are diagnostics about the
/// new documents, not covered by any guarantee (`"private": false`).
pub fn run(args: &InferArgs) -> Result<(), CliError> {
    let model = SavedLda::load(&args.model)?;
    let tokenizer = Tokenizer::english();
    let text = read_text(&args.text, &tokenizer, &TextLimits::default())?;
    let inferred = model.infer_text(text.docs())?;
    let k = model.config().num_topics();
    let origin = |i: usize| -> Value {
        match text.origin(i) {
            Some((path, _)) if args.text.is_dir() => json!(path.display().to_string()),
            Some((_, line)) => json!(line),
            None => json!(i + 1),
        }
    };
    let mut rows = Vec::with_capacity(inferred.proportions.len());
    let mut csv = String::from("document");
    for t in 0..k {
        csv.push_str(&format!(",topic_{t}"));
    }
    for (i, p) in inferred.proportions.iter().enumerate() {
        match p {
            Some(theta) => {
                rows.push(json!({
                    "document": origin(i),
                    "proportions": theta.iter().map(|&v| num(v)).collect::<Vec<_>>(),
                }));
                csv.push('\n');
                csv.push_str(&match origin(i) {
                    Value::String(s) => s,
                    v => v.to_string(),
                });
                for v in theta {
                    csv.push(',');
                    csv.push_str(&v.to_string());
                }
            }
            None => rows.push(json!({
                "document": origin(i),
                "no_known_words": true,
            })),
        }
    }
    let out = json!({
        "command": "infer",
        "model": "lda",
        "model_file": args.model.display().to_string(),
        "text": args.text.display().to_string(),
        "topics": k,
        "documents": rows.len(),
        "results": rows,
        "diagnostics": {
            "private": false,
            "unknown_tokens_dropped": inferred.unknown_tokens,
            "documents_without_known_words": inferred.empty_documents,
        },
    });
    check_no_null(&out)?;
    if args.json {
        return emit(&out, true);
    }
    if inferred.empty_documents > 0 || inferred.unknown_tokens > 0 {
        // A diagnostic about the new documents, on stderr so that stdout stays CSV.
        eprintln!(
            "dp-bayes: note: {} unknown tokens dropped; {} documents without a known word are \
             left out (not private: about the new documents)",
            inferred.unknown_tokens, inferred.empty_documents
        );
    }
    emit_text(&csv)
}
