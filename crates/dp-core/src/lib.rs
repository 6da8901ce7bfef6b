//! # dp-core
//!
//! Differential-privacy mechanisms on top of `dp-accountant`'s events: the Gaussian mechanism
//! (classic and analytic calibration), Analyze-Gauss symmetric noise with positive-definite
//! projection, L2 / Frobenius clipping, the samplers the accountant assumes, the privacy wall,
//! and an empirical privacy audit. The mathematics, with references, is in `docs/dp-core.md`.
//!
//! Models never add noise themselves: they hand a per-record statistic to a [`PrivacyWall`],
//! which samples a batch, clips every record's contribution to the declared bounds, sums, adds
//! noise calibrated to the sum's sensitivity (several blocks in one release by the
//! rescale-noise-rescale construction of VIPS 003 Eq. 63), divides by the public expected batch
//! size, records the release in the accountant's ledger and refuses releases past the budget.
//! To learn which keys (words, categories) occur in the records, they hand the records to
//! [`select_partitions`] (the wall's partition selection, [`wall::partition`]).
//!
//! # Example: Bayesian logistic regression's two statistics in one release
//! ```
//! use dp_core::{PrivacyWall, ReleaseSpec, SamplingScheme};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // records (x, y) with ||x|| <= 1 and a fixed <xi> = 1/4 for the sketch
//! let d = 3;
//! let data: Vec<(Vec<f64>, f64)> =
//!     (0..2000).map(|i| (vec![0.5, (i as f64).sin() * 0.5, 0.1], (i % 2) as f64)).collect();
//! let mut wall = PrivacyWall::builder(data)
//!     .sampling(SamplingScheme::poisson(0.05)?)      // add/remove-one
//!     .epsilon_delta(1.0, 1e-5)
//!     .calibrate_for_releases(50)                     // sigma from the accountant
//!     .build()?;
//! let mut spec = ReleaseSpec::builder("blr e-step");
//! let s1 = spec.vector("s1", d, 0.5)?;          // (y - 1/2) x
//! let s2 = spec.symmetric("s2", d, 0.25)?;      // <xi> x x^T
//! spec.eigenvalue_floor(s2, 1e-6)?;
//! let spec = spec.build()?;
//! while wall.can_release()? && wall.releases_made() < 3 {
//!     let release = wall.release(&spec, |(x, y): &(Vec<f64>, f64), buf| {
//!         for (j, xj) in x.iter().enumerate() {
//!             buf.push(s1, j, (y - 0.5) * xj);
//!         }
//!         buf.add_outer_product(s2, 0.25, x);
//!     })?;
//!     assert!(release.symmetric(s2)?.clone().cholesky().is_some());
//!     let _raised = release.released(s2)?.eigenvalues_raised();
//! }
//! assert!(wall.spent_epsilon()? <= 1.0);
//! # Ok(()) }
//! ```
//!
//! # Privacy
//! See [`PrivacyWall`] for the guarantee, the neighbouring relations, and the diagnostics that
//! deliberately cross the wall unprotected (clip counts). Noise comes from ChaCha20 seeded by the
//! OS unless a seed is given on purpose ([`RngPolicy`]).

mod analyze_gauss;
pub mod audit;
mod clip;
mod error;
mod faer_projection;
mod gaussian;
mod normal;
mod rng;
mod sampling;
pub mod wall;

pub use analyze_gauss::{
    AnalyzeGauss, PsdProjection, add_symmetric_noise, project_to_positive_definite,
};
#[doc(hidden)]
pub use analyze_gauss::{project_to_positive_definite_faer, project_to_positive_definite_nalgebra};
pub use clip::{ClipOutcome, UnitBallTransform, clip_l2, clip_norm};
pub use error::CoreError;
pub use gaussian::{
    GaussianMechanism, analytic_gaussian_delta, analytic_gaussian_std, classic_gaussian_std,
};
pub use rng::RngPolicy;
pub use sampling::{Batching, SamplingScheme};
pub use wall::partition::{
    PartitionRelease, PartitionSelection, SelectedPartitions, select_partitions,
};
pub use wall::{
    BlockGroup, BlockHandle, BlockShape, BlockSpec, BlockValue, ContributionBuffer, EntryHandle,
    GroupSpec, MatrixBlock, MatrixHandle, NoiseSetting, PrivacyWall, RecordSource, Release,
    ReleaseRecord, ReleaseSpec, ReleaseSpecBuilder, ReleasedBlock, RunHandle, SourceError,
    SymmetricBlock, SymmetricHandle, VectorBlock, WallBuilder, WeightTarget,
    calibrate_noise_multiplier,
};

/// The README's examples, compiled and run as doctests so the README stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
