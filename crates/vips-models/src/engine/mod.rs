//! The VIPS engine: private stochastic variational Bayes for conjugate-exponential models
//! (003 Algorithm 2; Algorithm 4 with Pólya-Gamma augmentation).
//!
//! A model implements [`VipsModel`] (E-step per record with declared per-record bounds, M-step
//! from released statistics, SVI blend); [`fit`] drives it: Poisson batches (add/remove-one) or
//! fixed-size batches without replacement (replace-one, 001), chosen with dp-core's [`Batching`], from dp-core's
//! sampler, releases through the privacy wall, `rho_t = (tau0 + t)^-kappa`, a non-private mode
//! through the same path, stopping by iterations, passes or budget, and a serialisable
//! [`FitResult`] with the ledger and a per-iteration trace.

pub(crate) mod config;
mod driver;
mod error;
mod model;
mod pool;
mod result;
mod schedule;

pub use config::{CancelToken, Privacy, Stop, SviConfig, SviConfigBuilder};
/// How each iteration draws its batch: dp-core's one vocabulary, re-exported.
pub use dp_core::Batching;
pub use driver::{fit, fit_source};
pub use error::{EngineError, ModelFailure};
pub use model::{RecordError, VipsModel};
pub use result::{
    Fit, FitDiagnostics, FitResult, IterationDiagnostics, IterationReport, PrivacySummary,
    process_cpu_seconds, process_peak_rss_kib,
};
pub use schedule::StepSize;
