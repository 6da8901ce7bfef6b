//! # expfam
//!
//! Exponential-family algebra shared by the VIPS and DP-SEP models: natural and mean parameters,
//! log-partition functions, expected sufficient statistics, entropy, KL divergence, and damped
//! (SVI) updates of natural parameters.
