//! Probabilistic backpropagation (Hernández-Lobato & Adams 2015) for Bayesian neural network
//! regression, fitted by ADF, EP, SEP or DP-SEP (002 Sec. 6.2).

mod evaluate;
mod experiment;
mod model;
mod network;
mod relu;
pub mod saved;

pub use evaluate::{Metrics, evaluate};
pub use experiment::{
    Method, PbpConfig, PbpConfigBuilder, PbpDiagnostics, PbpOutcome, PbpPrivacy, PbpPrivacyBuilder,
    Prepared, Scaling, prepare, run_pbp, run_pbp_observed,
};
pub use model::{GAMMA_PRIOR, Labelled, PbpModel, records};
pub use network::Architecture;
