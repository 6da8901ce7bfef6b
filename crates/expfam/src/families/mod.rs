//! One file per family.

pub(crate) mod bernoulli;
pub(crate) mod beta;
pub(crate) mod categorical;
pub(crate) mod diag_gaussian;
pub(crate) mod dirichlet;
pub(crate) mod gamma;
pub(crate) mod gaussian;
pub(crate) mod generic;
pub(crate) mod gig;
