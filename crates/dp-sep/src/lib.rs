//! # dp-sep
//!
//! Differentially private stochastic expectation propagation (DP-SEP, Vinaroz & Park, paper 002):
//! one shared factor whose natural parameters are clipped to norm `C`, Gaussian noise with
//! sensitivity `2 gamma C / N` on the posterior's natural parameters, written back into the
//! factor (002 Algorithm 3, Eq. 4). With EP (one factor per point), ADF and SEP as non-private
//! baselines, and two models: mixture-of-Gaussians clustering (002 Sec. 6.1) and probabilistic
//! backpropagation for Bayesian neural network regression (Hernández-Lobato & Adams 2015;
//! 002 Sec. 6.2).
//!
//! The mathematics, with equation numbers, is in `docs/dp-sep.md` of the workspace.
//!
//! # Example: DP-SEP on a small mixture
//! ```
//! use dp_core::RngPolicy;
//! use dp_sep::mog::{Family, MogModel, generate};
//! use dp_sep::{DpSepConfig, FactorWall, SamplingScheme, SepState, WallPlan, run_dp_sep};
//! use rand::SeedableRng;
//!
//! let mut rng = rand::rngs::ChaCha20Rng::seed_from_u64(0);
//! let data = generate(200, 2, 2, 0.5, &mut rng);
//! let mut model = MogModel::new(2, 2, 0.5, Family::Diagonal)?;
//! let prior = model.prior();
//! // Public, data-independent initial factor that separates the two components.
//! let mut factor = vec![0.0; prior.len()];
//! factor[0] = -1.0 / 200.0;
//! factor[4] = 1.0 / 200.0;
//! let mut state = SepState::new(prior, factor, 200)?;
//! let config = DpSepConfig::builder().gamma(1.0).epochs(2).build()?;
//! // dp-core's wall owns the records; the whole run is accounted before any data is touched.
//! // N = 200 is the generator's configured (public) size, not a count of the records; the
//! // clip norm C = 1 is the wall's and the run's.
//! let plan = WallPlan::builder()
//!     .population(200)
//!     .dim(8)
//!     .budget(1.0, 1e-5)
//!     .clip(1.0)
//!     .steps(400)
//!     .sampling(SamplingScheme::uniform_single())
//!     .rng(RngPolicy::OsEntropy)
//!     .build()?;
//! let mut wall = FactorWall::new(data.points, &plan)?;
//! // The report is publishable; the diagnostics (clip counts, ...) are not.
//! let (report, _diagnostics) = run_dp_sep(&mut model, &mut state, &mut wall, &config)?;
//! assert!(report.epsilon <= 1.0);
//! let posterior = state.posterior(); // carries the privacy noise
//! assert_eq!(posterior.len(), 8);
//! # Ok::<(), dp_sep::SepError>(())
//! ```

pub mod data;
pub mod dpsep;
pub mod ep;
mod error;
pub mod factor;
pub mod kl_bound;
pub mod limits;
pub mod model;
pub mod mog;
pub mod natural;
pub mod pbp;
pub mod recommended;
pub mod sep;

/// The one sampling vocabulary of the workspace: DP-SEP uses
/// [`SamplingScheme::UniformSingle`] and [`SamplingScheme::ShuffledEpoch`].
pub use dp_core::SamplingScheme;
pub use dpsep::{
    Averaging, Batching, Clipping, DpSepConfig, DpSepConfigBuilder, DpSepDiagnostics, DpSepReport,
    planned_steps, run_dp_sep, run_dp_sep_observed, sampling_for,
};
pub use error::SepError;
pub use factor::{FactorWall, WallPlan, WallPlanBuilder};
pub use model::SepModel;
pub use sep::{SepConfig, SepConfigBuilder, SepState, StepCounts};
