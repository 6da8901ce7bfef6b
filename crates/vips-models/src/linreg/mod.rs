//! Private Bayesian linear regression on the VIPS engine (003 Sec. 6 with Analyze-Gauss; issue
//! 19). See `docs/linreg.md`.
//!
//! - [`RowMap`] / [`TargetMap`]: the public maps of a row (features already in the declared box
//!   `[-1, 1]^d`, plus an intercept, into the unit ball) and of the target (declared range onto
//!   `[-1, 1]`); [`LinregRecord`] enforces `||x|| <= 1`, `|y| <= 1`.
//! - [`Linreg`] / [`LinregConfig`]: the [`crate::engine::VipsModel`]: statistics
//!   `X^T X` (symmetric, Analyze-Gauss, PSD projection and a noise-scaled eigenvalue floor),
//!   `X^T y` and `y^T y` in one release; a Normal-Gamma posterior ([`NormalGamma`]).
//! - [`sensitivity`]: the per-record bounds (1, 1, 1) and why equal bounds are the split.
//! - [`fit`], [`batch_config`]: one full-data release through the engine, calibrated and
//!   accounted by [`DEFAULT_ACCOUNTANT`] (PLD) unless [`batch_config_with`] names another.
//! - [`release_radius`]: the radius from a small private release of the rows' mean squared
//!   norm (the default when no radius is declared), the rest of the budget left to the fit.
//! - [`fit_mapped`]: rows already in the declared box to records, fit and held-out metrics
//!   (what the example, the CLI and xtask share).
//! - [`evaluate`]: test RMSE and Student-t log predictive density in original units.
//! - [`SavedLinreg`]: the fitted model as a versioned JSON file (`format_version` 1) that
//!   predicts on new raw rows; [`ModelFileError`] and [`model_file_kind`] for every saved model.

mod error;
mod mapped;
mod model;
mod predict;
mod radius;
mod record;
mod saved;
pub mod sensitivity;

pub use error::LinregError;
pub use mapped::{LinregOptions, MappedFit, fit_mapped};
pub use model::{
    Linreg, LinregBlocks, LinregConfig, LinregConfigBuilder, LinregGlobal, LinregTarget,
    NormalGamma,
};
pub use predict::{
    DEFAULT_ACCOUNTANT, Metrics, TargetMap, batch_config, batch_config_with, evaluate, fit,
    student_t_ln_pdf,
};
pub use radius::{
    MIN_MEAN_SQUARE, RADIUS_BUDGET_SHARE, RadiusChoice, RadiusRelease, mean_square_of_row,
    radius_for_mean_square, release_radius,
};
pub use record::{LinregRecord, RowMap};
pub use saved::{
    ColumnRange, LinregPrediction, MODEL_FORMAT_VERSION, ModelFileError, SavedLinreg, SavedPrivacy,
    model_file_kind, read_model_file,
};
pub(crate) use saved::{matrix_from_rows, model_json, parse_model};
