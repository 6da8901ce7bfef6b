//! `dp-bayes convert`: writes a record store (`vips_models::store`) once from a UCI
//! bag-of-words `docword` file, raw text with a public vocabulary, a LIBSVM file, a CSV file
//! with a label column and public ranges, or an IDX image file, so that `fit lda-store`,
//! `fit blr-store` and `fit sbn-store` can read data larger than memory. Every form streams
//! (one record in memory).
//!
//! Next to a BLR or SBN store, `convert` writes `STORE.schema.json` ([`StoreSchema`]): the
//! public facts a saved model needs that the store's header does not hold (feature names and
//! public scaling; the binarisation threshold).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::json;
use vips_models::blr::{BlrError, CsvOptions, LibsvmOptions, SavedScaling};
use vips_models::lda::LdaError;
use vips_models::lda::text::{TextLimits, Tokenizer};
use vips_models::sbn::SbnError;
use vips_models::store::{
    RecordKind, RecordStore, StoreError, convert_csv, convert_idx, convert_libsvm, convert_text,
    convert_uci_bow,
};

use crate::cli::error::{CliError, usage};
use crate::cli::fit::{count, positive, threshold};
use crate::cli::io::{emit, write_atomic};

/// The public facts of a BLR or SBN store that its header does not hold, written by `convert`
/// next to the store as `STORE.schema.json` and read by `fit blr-store` / `fit sbn-store`.
///
/// # Privacy
/// Public only: the CSV header's names, the declared ranges or radius, the threshold, the
/// store's kind and dimension (the schema). Never a count of records.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoreSchema {
    /// The store's record kind (`"LabelledDenseRow"`, ...): checked against the store.
    pub kind: String,
    /// The store's dimension: checked against the store.
    pub dimension: u64,
    /// What the model needs.
    pub model: SchemaModel,
}

/// The model-specific part of a [`StoreSchema`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "model", rename_all = "lowercase", deny_unknown_fields)]
pub enum SchemaModel {
    /// Labelled rows: the saved model's label and feature names and the public scaling.
    Blr {
        /// The label's name.
        label: String,
        /// The input's feature names (the CSV's feature columns, `f1..fD` for LIBSVM; the
        /// saved model appends `"intercept"` when the scaling adds one).
        features: Vec<String>,
        /// The public scaling applied at conversion.
        scaling: SavedScaling,
        /// A public description of the scaling (result.json `settings.feature_map`).
        feature_map: String,
        /// The input's public description (result.json `settings.input` of the conversion).
        input: serde_json::Value,
    },
    /// Binary images: the binarisation threshold.
    Sbn {
        /// Pixel >= threshold is 1.
        threshold: u8,
        /// The input's public description.
        input: serde_json::Value,
    },
}

/// The schema file of `store`: `STORE.schema.json` next to it.
pub fn schema_path(store: &Path) -> PathBuf {
    let mut name = store
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(".schema.json");
    store.with_file_name(name)
}

impl StoreSchema {
    /// Reads the schema of `store` and checks it against the store's kind and dimension.
    ///
    /// # Errors
    /// [`CliError::File`] naming the schema file when it is missing, not a schema, or describes
    /// another store (a store rewritten since).
    pub fn load(store: &RecordStore) -> Result<Self, CliError> {
        let path = schema_path(store.path());
        let fail = |reason: String| CliError::File {
            path: path.display().to_string(),
            reason,
        };
        let text = std::fs::read_to_string(&path).map_err(|e| {
            fail(format!(
                "cannot read the store's schema ({e}): convert the input again with `dp-bayes \
                 convert`, which writes it next to the store"
            ))
        })?;
        if text.len() as u64 > vips_models::saved::MAX_MODEL_FILE_BYTES {
            return Err(fail("larger than a schema can be".into()));
        }
        let schema: Self =
            serde_json::from_str(&text).map_err(|e| fail(format!("not a store schema: {e}")))?;
        if schema.kind != format!("{:?}", store.kind()) || schema.dimension != store.dim() {
            return Err(fail(format!(
                "describes a {} store of dimension {}, but the store holds {:?} records of \
                 dimension {}: convert the input again",
                schema.kind,
                schema.dimension,
                store.kind(),
                store.dim()
            )));
        }
        Ok(schema)
    }

    fn write(&self, store: &Path) -> Result<(), CliError> {
        let path = schema_path(store);
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let text = serde_json::to_string_pretty(self).map_err(|e| CliError::Output(e.into()))?;
        write_atomic(&dir, &name, &text).map(|_| ())
    }
}

/// The input formats `convert` reads.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// A UCI bag-of-words `docword` file (plain or gzip): documents for LDA.
    Bow,
    /// Raw text (a file, one document per line, or a directory of `.txt` files), tokenised as
    /// `fit lda --text` does and mapped with the PUBLIC vocabulary --vocab: documents for LDA.
    /// A privately selected vocabulary is `fit lda --text` only.
    Text,
    /// A CSV file with a header, a --label column and public --ranges (as `fit blr --csv`
    /// reads it): labelled dense rows for BLR.
    Csv,
    /// A sparse LIBSVM file of a declared dimension: labelled rows for BLR (scaled by --radius
    /// and clipped into the unit ball as `fit blr` loads them).
    Libsvm,
    /// An IDX image file (plain or gzip), binarised at --threshold: images for SBN.
    Idx,
}

/// Arguments of `convert`.
#[derive(clap::Args, Debug)]
pub struct ConvertArgs {
    /// The input's format.
    #[arg(value_enum)]
    format: Format,
    /// The input file.
    #[arg(long)]
    input: PathBuf,
    /// The store to write (written to a temporary file and renamed when complete).
    #[arg(long)]
    out: PathBuf,
    /// LIBSVM: the public feature dimension (required: the store's header holds it).
    #[arg(long, value_parser = count)]
    dim: Option<usize>,
    /// LIBSVM: the public radius the features are divided by (default 1).
    #[arg(long, value_parser = positive)]
    radius: Option<f64>,
    /// IDX: the binarisation threshold (default 128: a pixel is on at >= 128).
    #[arg(long, value_parser = threshold)]
    threshold: Option<u8>,
    /// Text: the PUBLIC vocabulary (one word per line; word i is the store's word id i), chosen
    /// independently of the private documents (required: a conversion selects no vocabulary).
    #[arg(long)]
    vocab: Option<PathBuf>,
    /// CSV: the label column (values 0/1 or -1/1; default `target`).
    #[arg(long)]
    label: Option<String>,
    /// CSV: public per-feature ranges, lines `name,lower,upper` matched to the header by name
    /// (default: the published WDBC ranges for the WDBC header).
    #[arg(long, conflicts_with = "no_scaling")]
    ranges: Option<PathBuf>,
    /// CSV: rows are already in the unit ball (clipped if not): no scaling, no intercept.
    #[arg(long)]
    no_scaling: bool,
    /// CSV: do not append a constant intercept feature.
    #[arg(long, conflicts_with = "no_scaling")]
    no_intercept: bool,
    /// Print one compact JSON object.
    #[arg(long)]
    json: bool,
}

/// Runs `convert`: writes the store and prints what was written.
///
/// # Privacy
/// The output (the store, and the printed record count and size) is the data owner's own
/// copy of the private data, not a release: the count is private under add/remove-one, and a
/// fit from the store takes the declared `--population`, never it.
pub fn run(args: &ConvertArgs) -> Result<(), CliError> {
    let (name, what) = match args.format {
        Format::Bow => ("bag of words", "a UCI docword file"),
        Format::Text => ("text", "raw text"),
        Format::Libsvm => ("LIBSVM", "a LIBSVM file"),
        Format::Csv => ("CSV", "a CSV file"),
        Format::Idx => ("IDX images", "an IDX file"),
    };
    // Each flag and the formats it has an effect on: refused elsewhere.
    let flags: [(bool, &'static str, &[Format]); 8] = [
        (args.dim.is_some(), "--dim", &[Format::Libsvm]),
        (args.radius.is_some(), "--radius", &[Format::Libsvm]),
        (args.threshold.is_some(), "--threshold", &[Format::Idx]),
        (args.vocab.is_some(), "--vocab", &[Format::Text]),
        (args.label.is_some(), "--label", &[Format::Csv]),
        (args.ranges.is_some(), "--ranges", &[Format::Csv]),
        (args.no_scaling, "--no-scaling", &[Format::Csv]),
        (args.no_intercept, "--no-intercept", &[Format::Csv]),
    ];
    for (set, flag, formats) in flags {
        if set && !formats.contains(&args.format) {
            return Err(usage(
                flag,
                format!("has no effect when converting {name} ({what})"),
            ));
        }
    }
    let mut extra = serde_json::Map::new();
    let records = match args.format {
        Format::Bow => convert_uci_bow(&args.input, &args.out).map_err(LdaError::from)?,
        Format::Text => {
            let vocab_path = args.vocab.as_ref().ok_or_else(|| {
                usage(
                    "--vocab",
                    "converting text needs a PUBLIC vocabulary file (one word per line, chosen \
                     independently of the documents); a privately selected vocabulary is a \
                     release of its own: use `fit lda --text` without --vocab for that",
                )
            })?;
            let vocab = vips_models::lda::Vocabulary::load(vocab_path)?;
            let written = convert_text(
                &args.input,
                &args.out,
                &vocab,
                &Tokenizer::english(),
                // Streaming: only the per-document cap guards memory; the totals' caps exist
                // for in-memory fits.
                &TextLimits {
                    max_documents: usize::MAX,
                    max_tokens: u64::MAX,
                    max_total_bytes: u64::MAX,
                    ..TextLimits::default()
                },
            )
            .map_err(text_error)?;
            extra.insert(
                "documents_without_known_words".into(),
                json!(written.documents_without_known_words),
            );
            extra.insert("unknown_tokens".into(), json!(written.unknown_tokens));
            written.documents
        }
        Format::Libsvm => {
            let dim = args.dim.ok_or_else(|| {
                usage(
                    "--dim",
                    "a LIBSVM conversion needs the public feature dimension",
                )
            })?;
            let radius = args.radius.unwrap_or(1.0);
            let options = LibsvmOptions {
                dim: Some(dim),
                radius,
            };
            let (rows, clipped) = convert_libsvm(&args.input, &args.out, options)
                .map_err(|e| BlrError::Store(Box::new(e)))?;
            extra.insert("rows_clipped_to_unit_ball".into(), json!(clipped));
            StoreSchema {
                kind: format!("{:?}", RecordKind::LabelledSparseRow),
                dimension: dim as u64,
                model: SchemaModel::Blr {
                    label: "label".into(),
                    features: crate::cli::fit::blr_libsvm_names(dim),
                    scaling: crate::cli::fit::blr_libsvm_scaling(dim, radius),
                    feature_map: format!("x / {radius} then clip to the unit ball (public radius)"),
                    input: json!({
                        "libsvm": args.input.display().to_string(),
                        "dim": dim,
                        "dim_declared": true,
                        "radius": radius,
                    }),
                },
            }
            .write(&args.out)?;
            rows
        }
        Format::Csv => {
            let label = args.label.clone().unwrap_or_else(|| "target".into());
            let header = vips_models::blr::read_csv_header(&args.input, &label)?;
            let (scaling, source) = crate::cli::fit::blr_csv_scaling(
                args.ranges.as_deref(),
                args.no_scaling,
                args.no_intercept,
                &header,
            )?;
            let map = scaling.feature_map()?;
            let dim = map.output_dim();
            let read = convert_csv(
                &args.input,
                &args.out,
                &CsvOptions {
                    label: label.clone(),
                    map: Some(map),
                },
            )
            .map_err(|e| BlrError::Store(Box::new(e)))?;
            extra.insert("rows_clipped_to_unit_ball".into(), json!(read.clipped));
            StoreSchema {
                kind: format!("{:?}", RecordKind::LabelledDenseRow),
                dimension: dim as u64,
                model: SchemaModel::Blr {
                    input: json!({ "csv": args.input.display().to_string(), "label": label }),
                    label,
                    // The CSV's feature columns: the saved model adds the intercept's name.
                    features: header,
                    scaling,
                    feature_map: source,
                },
            }
            .write(&args.out)?;
            read.rows as u64
        }
        Format::Idx => {
            let bin = args.threshold.unwrap_or(128);
            let images = convert_idx(&args.input, &args.out, bin)
                .map_err(|e| SbnError::Store(Box::new(e)))?;
            let store = RecordStore::open(&args.out).map_err(LdaError::from)?;
            StoreSchema {
                kind: format!("{:?}", store.kind()),
                dimension: store.dim(),
                model: SchemaModel::Sbn {
                    threshold: bin,
                    input: json!({ "idx": args.input.display().to_string() }),
                },
            }
            .write(&args.out)?;
            images
        }
    };
    let store = RecordStore::open(&args.out).map_err(LdaError::from)?;
    let bytes = std::fs::metadata(&args.out)
        .map(|m| m.len())
        .map_err(|source| CliError::Io {
            path: args.out.display().to_string(),
            source,
        })?;
    let mut owner = serde_json::Map::new();
    owner.insert("private".into(), json!(false));
    owner.insert("records".into(), json!(records));
    owner.extend(extra);
    owner.insert(
        "note".into(),
        json!(
            "the record count is private under add/remove-one: do not publish it; fits take \
             the declared --population"
        ),
    );
    let mut out = json!({
        "store": args.out.display().to_string(),
        "kind": format!("{:?}", store.kind()),
        "dimension": store.dim(),
        "format_version": vips_models::store::FORMAT_VERSION,
        "bytes": bytes,
        "data_owner_only": serde_json::Value::Object(owner),
    });
    if !matches!(args.format, Format::Bow | Format::Text) {
        out["schema"] = json!(schema_path(&args.out).display().to_string());
    }
    emit(&out, args.json)
}

/// A text conversion's error: the text reader's own error as such, others as LDA's.
fn text_error(e: StoreError) -> CliError {
    match e {
        StoreError::Text(t) => t.into(),
        other => LdaError::from(other).into(),
    }
}
