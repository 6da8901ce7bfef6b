//! Private sigmoid belief networks (000/003 Sec. 7, 000 Appendices B and C; Gan et al. 2015).
//!
//! One hidden layer of `K` binary units over `J` binary visibles:
//! `p(z_k = 1) = sigma(b_k)`, `p(y_j = 1 | z) = sigma(w_j^T z + c_j)` (000 Eq. 47), made
//! conditionally conjugate by Pólya-Gamma variables for both layers (Eq. 50-54); `q(z_n)` is
//! Bernoulli by coordinate updates (Eq. 55-56); the M-step of Appendix C for `W` (one Gaussian
//! per visible unit), `b`, `c` and the TPBN shrinkage hyper-priors ([`Tpbn`]). [`Sbn`] plugs into
//! [`crate::engine::fit`] (batch VB with rate 1 and step 1, or SVI; private or not through the
//! same path). The seven statistics of Eq. 61-68 (or the six of [`SbnStatistics::Residual`]) are
//! released as sums with the bounds derived in [`SbnBounds`], in one release per iteration;
//! [`block_snr`] measures each block's signal-to-noise. [`SavedSbn`] is the fitted model as a
//! versioned file that scores new images; [`synthetic_images`] the embedded default data.

// Numeric loops below index several arrays (rows of W, visible units, hidden units) by the same
// unit number; iterator chains would hide that correspondence.
#![allow(clippy::needless_range_loop)]

mod config;
mod data;
mod error;
mod estep;
mod evaluate;
mod idx;
mod model;
mod params;
mod saved;
mod sensitivity;
mod snr;
mod synthetic;
mod tpbn;

pub use config::{GRelease, SbnConfig, SbnConfigBuilder, SbnStatistics};
pub use data::{
    SYNTHETIC_HIDDEN, SYNTHETIC_TEST, SYNTHETIC_TRAIN, SYNTHETIC_VISIBLE, synthetic_images,
};
pub use error::SbnError;
pub use estep::LocalPosterior;
pub use evaluate::{baseline_pixel_accuracy, heldout_lower_bound, pixel_accuracy};
pub use idx::{BinaryImage, load_idx_images, load_mnist_dir, parse_idx_images, stream_idx_images};
pub use model::{Sbn, SbnBlocks, SbnShiftBlocks, SbnTarget};
pub use params::{SbnGlobal, SbnNatural};
pub use saved::{SavedSbn, SbnEvaluation, SbnReconstruction};
pub use sensitivity::SbnBounds;
pub use snr::{BlockSnr, block_snr};
pub use synthetic::SyntheticSbn;
pub use tpbn::Tpbn;
