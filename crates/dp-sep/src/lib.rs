//! # dp-sep
//!
//! Differentially private stochastic expectation propagation (DP-SEP): one shared factor whose
//! natural parameters are clipped to norm `C`, with Gaussian noise of sensitivity `2 gamma C / N`.
