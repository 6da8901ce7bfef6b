//! # vips-models
//!
//! Variational Bayes in private settings (VIPS): private stochastic variational Bayes for
//! conjugate-exponential models behind a privacy wall, with LDA, Bayesian logistic regression and
//! sigmoid belief networks.

pub mod blr;
pub mod engine;
pub mod lda;
pub mod sbn;
