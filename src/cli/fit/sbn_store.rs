//! `dp-bayes fit sbn-store`: a sigmoid belief network (VIPS, private with `--epsilon`) on a
//! record store of binary images written by `dp-bayes convert idx`: each iteration reads only
//! the images its batch draws, so memory is the batch plus the model. The binarisation
//! threshold the saved model records comes from the store's schema (`STORE.schema.json`). The
//! store holds training images only: there are no held-out scores.

use std::path::PathBuf;
use std::time::Instant;

use serde_json::json;
use vips_models::engine::fit_source;
use vips_models::saved::MAX_MODEL_FILE_BYTES;
use vips_models::sbn::{SavedSbn, SbnError};
use vips_models::store::RecordStore;

use super::sbn::{ModelArgs, sbn_dim};
use super::{Common, Fitted};
use crate::cli::convert::{SchemaModel, StoreSchema};
use crate::cli::error::{CliError, usage};

/// Arguments of `fit sbn-store`.
#[derive(clap::Args, Debug)]
#[command(allow_negative_numbers = true)]
pub struct Args {
    /// The record store of binary images (`dp-bayes convert idx`), with its schema
    /// `STORE.schema.json` next to it.
    #[arg(long)]
    store: PathBuf,
    #[command(flatten)]
    model: ModelArgs,
    #[command(flatten)]
    pub common: Common,
}

/// Fits and returns the saved model and the summary parts.
///
/// # Privacy
/// As `fit sbn`: every iteration is one Poisson-subsampled Gaussian release of the clipped
/// statistics, accounted under add/remove-one neighbouring at the declared `--population`
/// (required for a private fit; the store's image count is private and never used for it). The
/// image size is the store's dimension, the public schema. Counts and timings go to the
/// diagnostics only.
///
/// # Errors
/// Usage errors for a missing `--population` or a flag with no effect; [`CliError::File`] for
/// a missing or stale schema; the store's and the engine's errors.
pub fn fit(args: &Args) -> Result<Fitted, CliError> {
    let c = &args.common;
    let (privacy, population) = c.privacy()?;
    let store = RecordStore::open(&args.store).map_err(|e| SbnError::Store(Box::new(e)))?;
    let schema = StoreSchema::load(&store)?;
    let SchemaModel::Sbn { threshold, input } = schema.model else {
        return Err(usage(
            "--store",
            format!(
                "holds {:?} records, not binary images: `fit sbn-store` reads stores of \
                 `convert idx`",
                store.kind()
            ),
        ));
    };
    let visible = usize::try_from(store.dim())
        .map_err(|_| usage("--store", "an image size past this machine's address space"))?;
    let model = args.model.model(visible, 100)?;
    let start = Instant::now();
    let realised = store.len();
    let svi = args.model.svi(c, privacy, population, realised)?;
    let source = model.store_source(store)?;
    let fitted = fit_source(&model, source, &svi, |_, _| {})?;
    let (result, diag) = (fitted.result, fitted.diagnostics);
    let saved = SavedSbn::from_fit(&model, threshold, &result)?;
    let model_json = saved.to_json()?;
    if model_json.len() as u64 > MAX_MODEL_FILE_BYTES {
        return Err(usage(
            "--hidden",
            "model.json would be over the size a model file is read up to: use fewer hidden \
             units",
        ));
    }
    let mut settings = json!({
        "input": {"store": args.store.display().to_string(), "converted_from": input},
    });
    super::blr::merge(
        &mut settings,
        args.model.settings(&model, threshold, &result.privacy),
    );
    let diagnostics = super::with_timings(
        json!({
            "train_images": realised,
            "realised_population": diag.realised_population,
            "records_clipped": diag.records_clipped,
            "records_replaced": diag.records_replaced,
        }),
        &diag,
        start,
    );
    Ok(Fitted {
        sampling: Some(result.sampling.name()),
        model: "sbn",
        model_json,
        iterations: result.iterations,
        dim: sbn_dim(&model),
        heldout: json!({"note": "no held-out images (a store holds training images only)"}),
        settings,
        diagnostics,
        privacy: result.privacy,
    })
}
