//! Mixture-of-Gaussians clustering (002 Sec. 6.1): the model, synthetic data, the Gibbs ground
//! truth, the public starting point and the Table-1 accuracy figures.

mod gibbs;
mod metrics;
mod model;
mod start;
mod synthetic;

pub use gibbs::{GibbsConfig, GibbsConfigBuilder, gibbs_posterior};
pub use metrics::{MogAccuracy, compare, kl_gaussian};
pub use model::{Family, MogModel, Moments};
pub use start::public_start;
pub use synthetic::{MogData, generate, try_generate};
