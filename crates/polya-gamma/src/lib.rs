//! # polya-gamma
//!
//! Exact Pólya-Gamma `PG(b, z)` moments, cumulants, density, CDF and sampler for every `b > 0`
//! (Polson, Scott & Windle 2013).
//!
//! * [`mean`], [`variance`], [`cumulant`]: exact and stable for every `z` (even in `z`).
//! * [`PolyaGamma`]: `rand::distr::Distribution<f64>` with exact draws for every `b > 0`,
//!   plus [`PolyaGamma::fill`] for many draws of one `(b, z)`.
//! * [`PolyaGammaShape`]: one `b`, a different `z` per draw (the Gibbs workload).
//!
//! The mathematics, with references and the correctness arguments of the new methods, is in
//! `docs/polya-gamma.md` of the workspace.
//!
//! ```
//! use polya_gamma::{PolyaGamma, mean};
//! use rand::distr::Distribution;
//! use rand::SeedableRng;
//! let mut rng = rand::rngs::ChaCha8Rng::seed_from_u64(42);
//! let pg = PolyaGamma::new(1.0, 0.5).unwrap();
//! let omega: f64 = pg.sample(&mut rng);
//! assert!(omega > 0.0);
//! assert!((mean(1.0, 0.0).unwrap() - 0.25).abs() < 1e-16);
//! ```

mod complex;
mod density;
mod density_series;
mod error;
mod fourier;
mod hurwitz;
mod jstar;
mod large;
mod moments;
mod polya_gamma;
mod proposals;
mod series;
mod shape;
mod special_fn;

pub use density::{cdf, density};
pub use error::Error;
pub use moments::{MAX_CUMULANT_ORDER, cumulant, mean, variance};
pub use polya_gamma::PolyaGamma;
pub use shape::PolyaGammaShape;
