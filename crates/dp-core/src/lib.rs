//! # dp-core
//!
//! Differential-privacy mechanisms on top of `dp-accountant`'s events: the Gaussian mechanism
//! (classic and analytic calibration), Analyze-Gauss symmetric noise with positive-definite
//! projection, L2 / Frobenius clipping, the samplers the accountant assumes, and the privacy wall.

mod analyze_gauss;
pub mod audit;
mod clip;
mod error;
mod gaussian;
mod normal;
mod rng;
mod sampling;
pub mod wall;

pub use analyze_gauss::{
    AnalyzeGauss, PsdProjection, add_symmetric_noise, project_to_positive_definite,
};
pub use clip::{ClipOutcome, UnitBallTransform, clip_l2, clip_norm};
pub use error::CoreError;
pub use gaussian::{
    GaussianMechanism, analytic_gaussian_delta, analytic_gaussian_std, classic_gaussian_std,
};
pub use rng::RngPolicy;
pub use sampling::SamplingScheme;
pub use wall::{
    BlockShape, BlockSpec, BlockValue, ContributionBuffer, NoiseSetting, PrivacyWall, Release,
    ReleaseRecord, ReleaseSpec, ReleasedBlock, WallBuilder, calibrate_noise_multiplier,
};
