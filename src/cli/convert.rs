//! `dp-bayes convert`: writes a record store (`vips_models::store`) once from a UCI
//! bag-of-words `docword` file, a LIBSVM file or an IDX image file, streaming (one record in
//! memory), so that `fit lda-store` can read corpora larger than memory.

use std::path::PathBuf;

use serde_json::json;
use vips_models::blr::{BlrError, LibsvmOptions};
use vips_models::lda::LdaError;
use vips_models::sbn::SbnError;
use vips_models::store::{RecordStore, convert_idx, convert_libsvm, convert_uci_bow};

use crate::cli::error::CliError;
use crate::cli::fit::{count, positive, threshold};
use crate::cli::io::emit;

/// The input formats `convert` reads.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum Format {
    /// A UCI bag-of-words `docword` file (plain or gzip): documents for LDA.
    Bow,
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
    let flag_for = |set: bool, flag: &'static str, format: &str| {
        if set {
            Err(crate::cli::error::usage(
                flag,
                format!("has no effect when converting {format}"),
            ))
        } else {
            Ok(())
        }
    };
    let records = match args.format {
        Format::Bow => {
            flag_for(args.dim.is_some(), "--dim", "bag of words")?;
            flag_for(args.radius.is_some(), "--radius", "bag of words")?;
            flag_for(args.threshold.is_some(), "--threshold", "bag of words")?;
            convert_uci_bow(&args.input, &args.out).map_err(LdaError::from)?
        }
        Format::Libsvm => {
            flag_for(args.threshold.is_some(), "--threshold", "LIBSVM")?;
            let dim = args.dim.ok_or_else(|| {
                crate::cli::error::usage(
                    "--dim",
                    "a LIBSVM conversion needs the public feature dimension",
                )
            })?;
            let options = LibsvmOptions {
                dim: Some(dim),
                radius: args.radius.unwrap_or(1.0),
            };
            convert_libsvm(&args.input, &args.out, options)
                .map_err(|e| BlrError::Store(Box::new(e)))?
                .0
        }
        Format::Idx => {
            flag_for(args.dim.is_some(), "--dim", "IDX images")?;
            flag_for(args.radius.is_some(), "--radius", "IDX images")?;
            convert_idx(&args.input, &args.out, args.threshold.unwrap_or(128))
                .map_err(|e| SbnError::Store(Box::new(e)))?
        }
    };
    let store = RecordStore::open(&args.out).map_err(LdaError::from)?;
    let bytes = std::fs::metadata(&args.out)
        .map(|m| m.len())
        .map_err(|source| CliError::Io {
            path: args.out.display().to_string(),
            source,
        })?;
    emit(
        &json!({
            "store": args.out.display().to_string(),
            "kind": format!("{:?}", store.kind()),
            "dimension": store.dim(),
            "format_version": vips_models::store::FORMAT_VERSION,
            "bytes": bytes,
            "data_owner_only": {
                "private": false,
                "records": records,
                "note": "the record count is private under add/remove-one: do not publish it; \
                         fits take the declared --population",
            },
        }),
        args.json,
    )
}
