//! # dp-sep
//!
//! Differentially private stochastic expectation propagation (DP-SEP, Vinaroz & Park, paper 002):
//! one shared factor whose natural parameters are clipped to norm `C`, Gaussian noise with
//! sensitivity `2 gamma C / N` on the posterior's natural parameters, written back into the
//! factor (002 Algorithm 3, Eq. 4). With EP (one factor per point), ADF and SEP as non-private
//! baselines, and two models: mixture-of-Gaussians clustering (002 Sec. 6.1) and probabilistic
//! backpropagation for Bayesian neural network regression (Hernández-Lobato & Adams 2015;
//! 002 Sec. 6.2).
//!
//! The mathematics, with equation numbers, is in `docs/dp-sep.md` of the workspace.

pub mod data;
pub mod dpsep;
pub mod ep;
mod error;
pub mod model;
pub mod mog;
pub mod natural;
pub mod pbp;
pub mod sampling;
pub mod sep;
pub mod wall;

pub use dpsep::{DpSepConfig, DpSepReport, run_dp_sep};
pub use error::SepError;
pub use model::SepModel;
pub use sampling::Sampling;
pub use sep::{SepConfig, SepState, StepCounts};
pub use wall::{CoreWall, FactorRelease, SepWall};
