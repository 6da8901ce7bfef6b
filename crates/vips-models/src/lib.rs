//! # vips-models
//!
//! Variational Bayes in private settings (VIPS): private stochastic variational Bayes for
//! conjugate-exponential models behind a privacy wall (Park, Foulds, Chaudhuri & Welling), with
//! LDA, Bayesian logistic regression and sigmoid belief networks.
//!
//! - [`engine`]: the model trait [`engine::VipsModel`] and the SVI driver [`engine::fit`].
//! - [`lda`]: private LDA (003 Sec. 4, Algorithm 3) and its held-out evaluation.
//! - [`lda::corpus`]: LDA's bag-of-words corpora (the UCI bag-of-words loader, synthetic LDA
//!   corpora, fixed-length resampling).
//! - [`blr`], [`sbn`]: Bayesian logistic regression and sigmoid belief networks.
//! - [`store`]: record stores on disk for corpora larger than memory (read per batch by
//!   [`engine::fit_source`]).

pub mod blr;
pub mod engine;
pub mod lda;
pub mod limits;
pub mod linreg;
pub mod saved;
pub mod sbn;
pub mod store;
