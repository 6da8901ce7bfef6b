//! The VIPS engine: private stochastic variational Bayes for conjugate-exponential models (003 Algorithm 2).
