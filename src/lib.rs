//! # dp-bayes
//!
//! Differentially private approximate Bayesian inference: VIPS (private stochastic variational
//! Bayes) and DP-SEP (private stochastic expectation propagation).
//!
//! This umbrella crate re-exports the workspace crates and hosts the workspace-level integration
//! tests (`tests/`); `benches/` holds the cached runs of `cargo xtask bench` (each crate keeps its
//! criterion benchmarks in its own `benches/`). Most users depend on a single crate:
//!
//! | crate | what it gives you |
//! |---|---|
//! | [`dp_accountant`] | RDP / zCDP / PLD accounting, conversions, calibration, ledger, audit CLI |
//! | [`dp_core`] | mechanisms, clipping, samplers, the privacy wall |
//! | [`expfam`] | exponential-family algebra |
//! | [`polya_gamma`] | exact Pólya-Gamma moments and sampler |
//! | [`vips_models`] | private VB: LDA, Bayesian logistic regression, sigmoid belief networks |
//! | [`dp_sep`] | private stochastic EP: mixture of Gaussians, probabilistic backpropagation |

pub use dp_accountant;
pub use dp_core;
pub use dp_sep;
pub use expfam;
pub use polya_gamma;
pub use vips_models;
