//! `dp-bayes fit blr-store`: private Bayesian logistic regression on a record store of labelled
//! rows written by `dp-bayes convert csv` (dense rows, public ranges) or `convert libsvm`
//! (sparse rows, public dimension and radius): each release reads only the rows its batch
//! draws, so memory is the batch's reads plus the model, not the data set. The saved model's
//! feature names and scaling come from the store's schema (`STORE.schema.json`, written by
//! `convert`). The store holds training rows only: there is no held-out split.

use std::path::PathBuf;
use std::time::Instant;

use serde_json::json;
use vips_models::blr::{BlrError, SavedBlr};
use vips_models::engine::fit_source;
use vips_models::store::RecordStore;

use super::blr::{ModelArgs, merge};
use super::{Common, Fitted};
use crate::cli::convert::{SchemaModel, StoreSchema};
use crate::cli::error::{CliError, usage};

/// Arguments of `fit blr-store`.
#[derive(clap::Args, Debug)]
#[command(allow_negative_numbers = true)]
pub struct Args {
    /// The record store of labelled rows (`dp-bayes convert csv` or `convert libsvm`), with its
    /// schema `STORE.schema.json` next to it.
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
/// As `fit blr`: batch VB, one Gaussian release of the clipped statistics per iteration under
/// add/remove-one neighbouring at the declared `--population` (required for a private fit;
/// the store's record count is private and is never used for it). The rows were scaled with
/// the public map and clipped at conversion, per record, so the releases are those of `fit blr`
/// on the same rows with the same seeds. Counts and timings go to the diagnostics only.
///
/// # Errors
/// Usage errors for a missing `--population` or a flag with no effect; [`CliError::File`] for
/// a missing or stale schema; the store's and the engine's errors.
pub fn fit(args: &Args) -> Result<Fitted, CliError> {
    let c = &args.common;
    let (privacy, population) = c.privacy()?;
    let store = RecordStore::open(&args.store).map_err(|e| BlrError::Store(Box::new(e)))?;
    let schema = StoreSchema::load(&store)?;
    let SchemaModel::Blr {
        label,
        features,
        scaling,
        feature_map,
        input,
    } = schema.model
    else {
        return Err(usage(
            "--store",
            format!(
                "holds {:?} records, not labelled rows: `fit blr-store` reads stores of `convert \
                 csv` or `convert libsvm`",
                store.kind()
            ),
        ));
    };
    let map = scaling.feature_map()?;
    let dim = map.output_dim();
    let start = Instant::now();
    let realised = store.len();
    let (model, svi) = args
        .model
        .model_and_config(c, privacy, population, realised, dim)?;
    let source = model.store_source(store)?;
    let fitted = fit_source(&model, source, &svi, |_, _| {})?;
    let (result, diag) = (fitted.result, fitted.diagnostics);
    let intercept = matches!(
        scaling,
        vips_models::blr::SavedScaling::Ranges {
            intercept: true,
            ..
        }
    );
    let saved = SavedBlr::from_fit(&label, features, scaling, model.config().prior(), &result)?;
    let mut settings = json!({
        "input": {"store": args.store.display().to_string(), "converted_from": input},
        "feature_map": feature_map,
        "intercept": intercept,
        "radius": map.radius(),
    });
    merge(&mut settings, args.model.settings(&result.global));
    Ok(Fitted {
        sampling: Some(result.sampling.name()),
        model: "blr",
        model_json: saved.to_json()?,
        iterations: result.iterations,
        dim,
        heldout: json!({"note": "no held-out rows (a store holds training rows only)"}),
        settings,
        diagnostics: super::with_timings(
            json!({
                "n_train": realised,
                "realised_population": diag.realised_population,
                "wall_clipped_records": diag.records_clipped,
                "wall_replaced_records": diag.records_replaced,
            }),
            &diag,
            start,
        ),
        privacy: result.privacy,
    })
}
