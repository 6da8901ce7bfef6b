//! # polya-gamma
//!
//! Exact Pólya-Gamma `PG(b, z)` moments, cumulants, density, CDF and sampler for every `b > 0`.
