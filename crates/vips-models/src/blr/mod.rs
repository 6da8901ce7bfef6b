//! Private Bayesian logistic regression with Pólya-Gamma augmentation (003 Sec. 5-6, 000 Sec. 6).
//!
//! - [`BlrRecord`] / [`Features`]: a labelled record, clipped into the unit ball on construction.
//! - [`Blr`] / [`BlrConfig`]: the [`crate::engine::VipsModel`]: E-step
//!   `q(xi_n) = PG(1, sqrt(x_n^T <m m^T> x_n))`, statistics `s1 = sum (y_n - 1/2) x_n` and
//!   `s2 = sum <xi_n> x_n x_n^T` released together (003 Eq. 63), M-step to `N(mu, Sigma)`, Gamma
//!   hyperprior on the prior precision (000 Eq. 38-42).
//! - [`sensitivity`]: the per-record bounds 1/2 and 1/4 and their add/remove derivation.
//! - [`fit`], [`batch_config`]: fitting through the engine (batch or SVI, private or not).
//! - [`predict_probability`], [`evaluate`]: probit-approximated predictive, AUC, accuracy,
//!   log loss.
//! - [`load_csv`], [`load_libsvm`], [`FeatureMap`]: data with a public map into the unit ball.
//! - [`read_csv_header`], [`read_ranges_csv`]: a CSV's feature names and a public ranges file
//!   (`name,lower,upper`) matched to them by name.
//! - [`SavedBlr`]: the fitted model as a versioned JSON file (`format_version` 1) that predicts
//!   on new raw rows.
//! - [`stratified_split`]: a seeded stratified held-out split.
//! - [`gibbs`]: a Pólya-Gamma Gibbs sampler (the reference the VB posterior is tested against).

mod config;
mod data;
mod error;
mod fit;
pub mod gibbs;
mod model;
mod predict;
mod record;
mod saved;
pub mod sensitivity;
mod split;
mod wdbc;

pub use config::{BlrConfig, BlrConfigBuilder, Hyperprior};
pub use data::{
    CsvOptions, FeatureMap, LibsvmOptions, LoadReport, Loaded, StreamedCsv, load_csv, load_libsvm,
    parse_csv, parse_libsvm, read_csv_header, read_ranges_csv, stream_csv, stream_libsvm,
};
pub use error::BlrError;
pub use fit::{batch_config, fit};
pub use model::{Blr, BlrBlocks, BlrGlobal, BlrTarget};
pub use predict::{
    Metrics, accuracy, auc, evaluate, log_loss, predict_all, predict_probability, sigmoid,
};
pub use record::{BlrRecord, Features};
pub use saved::{SavedBlr, SavedScaling};
pub use sensitivity::expected_xi;
pub use split::stratified_split;
pub use wdbc::{WDBC_PUBLISHED_RANGES, is_wdbc_header, wdbc_feature_map};
