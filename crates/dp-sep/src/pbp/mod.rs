//! Probabilistic backpropagation (Hernández-Lobato & Adams 2015) for Bayesian neural network
//! regression, fitted by ADF, EP, SEP or DP-SEP (002 Sec. 6.2); [`vi`] fits the same network by
//! mean-field variational inference (the non-private VI baseline of 002 Tables 2-3).

mod evaluate;
mod experiment;
mod model;
mod network;
mod relu;
pub mod saved;
pub mod uci;
pub mod vi;

pub use evaluate::{Metrics, evaluate, evaluate_predictive};
pub use experiment::{
    Method, PbpConfig, PbpConfigBuilder, PbpDiagnostics, PbpOutcome, PbpPrivacy, PbpPrivacyBuilder,
    Prepared, Scaling, prepare, run_pbp, run_pbp_accounted, run_pbp_observed,
};
pub use model::{GAMMA_PRIOR, Labelled, PbpModel, records};
pub use network::Architecture;
