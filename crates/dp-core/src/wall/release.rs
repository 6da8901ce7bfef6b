//! What crosses the wall: the noised, normalised blocks of one release, and its diagnostics.

use nalgebra::{DMatrix, DVector};
use serde::{Deserialize, Serialize};

use crate::analyze_gauss::PsdProjection;

/// The released value of one block.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
pub enum BlockValue {
    /// A vector block.
    Vector(DVector<f64>),
    /// A general matrix block.
    Matrix(DMatrix<f64>),
    /// A symmetric matrix block (exactly symmetric; projected if the spec asked for a floor).
    Symmetric(DMatrix<f64>),
}

impl BlockValue {
    /// The entries (column-major for matrices; every entry of a symmetric matrix).
    pub fn as_slice(&self) -> &[f64] {
        match self {
            Self::Vector(v) => v.as_slice(),
            Self::Matrix(m) | Self::Symmetric(m) => m.as_slice(),
        }
    }
}

/// One released block.
///
/// # Privacy
/// `value` is `(sum of clipped contributions + noise) / expected batch size`; everything here is
/// post-processing of the noised sum and public numbers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReleasedBlock {
    /// The block's name from the spec.
    pub name: String,
    /// The released value.
    pub value: BlockValue,
    /// Declared per-record norm bound of the block.
    pub bound: f64,
    /// Standard deviation of the noise on each free entry of the **released** (normalised)
    /// block: `bound x noise multiplier x sensitivity factor x sqrt(k) / expected batch size`;
    /// `0` in non-private mode.
    pub noise_std: f64,
    /// L2 / Frobenius sensitivity of the released (normalised, pre-noise) block under the
    /// scheme's neighbouring relation: `factor x bound / expected batch size`.
    pub sensitivity: f64,
    /// What the positive-definite projection did (symmetric blocks with a floor only).
    pub projection: Option<PsdProjection>,
}

impl ReleasedBlock {
    /// The value as a vector (vector blocks only).
    pub fn as_vector(&self) -> Option<&DVector<f64>> {
        match &self.value {
            BlockValue::Vector(v) => Some(v),
            _ => None,
        }
    }

    /// The value as a matrix (matrix and symmetric blocks).
    pub fn as_matrix(&self) -> Option<&DMatrix<f64>> {
        match &self.value {
            BlockValue::Matrix(m) | BlockValue::Symmetric(m) => Some(m),
            BlockValue::Vector(_) => None,
        }
    }

    /// How many eigenvalues the projection raised (`0` when none or not projected).
    pub fn eigenvalues_raised(&self) -> usize {
        self.projection.map_or(0, |p| p.eigenvalues_raised)
    }
}

/// The result of one release.
///
/// # Privacy
/// The blocks are differentially private (see [`crate::PrivacyWall`]). Two numbers here are
/// **not** covered by the guarantee and are reported as diagnostics, on purpose:
/// [`Release::clipped_records`] (and the fraction derived from it) is computed on the private
/// batch and moves by at most one between neighbouring datasets; treat it as a small, unaccounted
/// leak, fine for monitoring a run, not for publication. The **realised batch size is never
/// exposed**: under Poisson sampling it is `Binomial(N, q)` on one dataset and shifted by one on
/// its neighbour, so publishing it (or normalising by it, or a clip *fraction* relative to it)
/// would leak membership outside the accountant's bound.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Release {
    pub(crate) index: u64,
    pub(crate) blocks: Vec<ReleasedBlock>,
    pub(crate) clipped_records: u64,
    pub(crate) expected_batch_size: f64,
    pub(crate) noise_multiplier: Option<f64>,
}

impl Release {
    /// Zero-based number of this release in the wall's life.
    pub fn index(&self) -> u64 {
        self.index
    }

    /// The released blocks, in spec order.
    pub fn blocks(&self) -> &[ReleasedBlock] {
        &self.blocks
    }

    /// The released block called `name`.
    pub fn block(&self, name: &str) -> Option<&ReleasedBlock> {
        self.blocks.iter().find(|b| b.name == name)
    }

    /// Consumes the release, returning its blocks.
    pub fn into_blocks(self) -> Vec<ReleasedBlock> {
        self.blocks
    }

    /// Number of records of the batch whose contribution was clipped in at least one block
    /// (a non-private diagnostic; see the type's `# Privacy`).
    pub fn clipped_records(&self) -> u64 {
        self.clipped_records
    }

    /// [`Self::clipped_records`] divided by the **public expected** batch size (not the realised
    /// one, which must not leak). Under Poisson sampling it can exceed 1 by chance.
    pub fn clipped_fraction_of_expected(&self) -> f64 {
        self.clipped_records as f64 / self.expected_batch_size
    }

    /// The public expected batch size the sums were divided by (`qN`, `m` or `1`).
    pub fn expected_batch_size(&self) -> f64 {
        self.expected_batch_size
    }

    /// The noise multiplier (`None` in non-private mode).
    pub fn noise_multiplier(&self) -> Option<f64> {
        self.noise_multiplier
    }

    /// Whether noise was added (`false` in non-private mode).
    pub fn is_private(&self) -> bool {
        self.noise_multiplier.is_some()
    }
}
