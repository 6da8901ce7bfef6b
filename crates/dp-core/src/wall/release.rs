//! What crosses the wall: the noised, normalised blocks of one release, and its diagnostics.

use nalgebra::{DMatrix, DVector};
use serde::{Deserialize, Serialize};

use super::spec::{BlockHandle, MatrixBlock, SymmetricBlock, VectorBlock};
use crate::analyze_gauss::PsdProjection;
use crate::error::CoreError;

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
    /// Declared per-record norm bound of the block's group (the block's own bound when it is
    /// ungrouped; a grouped block shares its group's joint bound).
    pub bound: f64,
    /// Standard deviation of the noise on each free entry of the **released** (normalised)
    /// block: `B_g / a_g x noise multiplier x sensitivity factor x sqrt(sum_g a_g^2) / expected
    /// batch size` (with `k` ungrouped blocks of weight 1: `bound x sigma x f x sqrt(k) /
    /// expected`; see [`crate::wall`]); `0` in non-private mode.
    pub noise_std: f64,
    /// L2 / Frobenius sensitivity of the released (normalised, pre-noise) block under the
    /// scheme's neighbouring relation: `factor x bound / expected batch size` (for a grouped
    /// block, of its whole group).
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

/// The data owner's diagnostics of one release (or of several, summed): **not private**.
///
/// Both counts are computed on the private batch, without noise, and are not covered by the
/// wall's guarantee: each moves by at most one between neighbouring datasets, an unaccounted
/// leak that is fine for monitoring a run and wrong to publish. They serialise with
/// `"private": false` so that a report cannot pass them off as part of the private result.
///
/// # Example
/// ```
/// use dp_core::wall::ReleaseDiagnostics;
/// let d = ReleaseDiagnostics::default();
/// assert_eq!(d.clipped_records, 0);
/// let json = serde_json::to_string(&d)?;
/// assert_eq!(json, r#"{"private":false,"clipped_records":0,"replaced_records":0}"#);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "DiagnosticsJson", try_from = "DiagnosticsJson")]
#[non_exhaustive]
pub struct ReleaseDiagnostics {
    /// Records of the batch whose contribution was clipped in at least one group (an ungrouped
    /// block is a group of one).
    pub clipped_records: u64,
    /// Records of the batch whose statistic was malformed (a write outside its block, runs out
    /// of order, ...) or non-finite, replaced by zero (private releases only; a non-private
    /// release fails instead).
    pub replaced_records: u64,
}

impl ReleaseDiagnostics {
    /// Counts one record's outcome.
    pub(crate) fn count(&mut self, outcome: super::buffer::RecordOutcome) {
        use super::buffer::RecordOutcome;
        match outcome {
            RecordOutcome::Added => {}
            RecordOutcome::Clipped => self.clipped_records += 1,
            RecordOutcome::Replaced => self.replaced_records += 1,
        }
    }
}

impl std::ops::AddAssign for ReleaseDiagnostics {
    fn add_assign(&mut self, other: Self) {
        self.clipped_records += other.clipped_records;
        self.replaced_records += other.replaced_records;
    }
}

/// The JSON form of [`ReleaseDiagnostics`]: the counts behind `"private": false`.
#[derive(Serialize, Deserialize)]
struct DiagnosticsJson {
    private: bool,
    clipped_records: u64,
    replaced_records: u64,
}

impl From<ReleaseDiagnostics> for DiagnosticsJson {
    fn from(d: ReleaseDiagnostics) -> Self {
        Self {
            private: false,
            clipped_records: d.clipped_records,
            replaced_records: d.replaced_records,
        }
    }
}

impl TryFrom<DiagnosticsJson> for ReleaseDiagnostics {
    type Error = &'static str;
    fn try_from(j: DiagnosticsJson) -> Result<Self, Self::Error> {
        if j.private {
            return Err("release diagnostics are never private (`\"private\": false`)");
        }
        Ok(Self {
            clipped_records: j.clipped_records,
            replaced_records: j.replaced_records,
        })
    }
}

/// The result of one release.
///
/// # Privacy
/// The blocks and the public numbers here (index, expected batch size, noise multiplier) are
/// differentially private or public (see [`crate::PrivacyWall`]); so is the serialised form,
/// which holds exactly those. The **diagnostics** ([`Release::diagnostics`]: clip and
/// replacement counts) are computed on the private batch without noise, are **not** covered by
/// the guarantee, are never serialised with the release, and must not be published. The
/// **realised batch size is never exposed**: under Poisson sampling it is `Binomial(N, q)` on one
/// dataset and shifted by one on its neighbour, so publishing it (or normalising by it, or a clip
/// *fraction* relative to it) would leak membership outside the accountant's bound.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Release {
    /// The identity of the spec released (handles of another spec are refused); not
    /// serialised: a release read back from JSON answers no handle, only names and positions.
    #[serde(skip)]
    pub(crate) spec_id: u64,
    pub(crate) index: u64,
    pub(crate) blocks: Vec<ReleasedBlock>,
    /// Non-private; kept out of the serialised (publishable) release on purpose.
    #[serde(skip)]
    pub(crate) diagnostics: ReleaseDiagnostics,
    pub(crate) expected_batch_size: f64,
    pub(crate) noise_multiplier: Option<f64>,
}

/// Equal when the released numbers are (whatever the spec's identity).
impl PartialEq for Release {
    fn eq(&self, other: &Self) -> bool {
        self.index == other.index
            && self.blocks == other.blocks
            && self.diagnostics == other.diagnostics
            && self.expected_batch_size == other.expected_batch_size
            && self.noise_multiplier == other.noise_multiplier
    }
}

impl Release {
    /// The released block a handle names.
    ///
    /// # Errors
    /// [`CoreError::UnknownBlock`] for a handle of another spec.
    pub fn released(&self, block: impl BlockHandle) -> Result<&ReleasedBlock, CoreError> {
        let raw = block.raw();
        let unknown = CoreError::UnknownBlock {
            reason: "a block handle from another spec than the release's",
        };
        if raw.spec != self.spec_id {
            return Err(unknown);
        }
        self.blocks.get(raw.index).ok_or(unknown)
    }

    /// The released value of a vector block.
    ///
    /// # Errors
    /// As [`Self::released`].
    ///
    /// # Example
    /// ```
    /// use dp_core::{PrivacyWall, ReleaseSpec, SamplingScheme};
    /// let mut wall = PrivacyWall::builder(vec![[0.6, 0.8]; 100])
    ///     .sampling(SamplingScheme::poisson(0.5)?)
    ///     .epsilon_delta(1.0, 1e-5)
    ///     .calibrate_for_releases(1)
    ///     .build()?;
    /// let mut b = ReleaseSpec::builder("mean");
    /// let mean = b.vector("mean", 2, 1.0)?;
    /// let spec = b.build()?;
    /// let release = wall.release(&spec, |x: &[f64; 2], buf| buf.dense(mean).copy_from_slice(x))?;
    /// assert_eq!(release.vector(mean)?.len(), 2);
    /// let other = ReleaseSpec::builder("other").vector("mean", 2, 1.0)?;
    /// assert!(release.vector(other).is_err()); // a handle of another spec
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn vector(&self, block: VectorBlock) -> Result<&DVector<f64>, CoreError> {
        match &self.released(block)?.value {
            BlockValue::Vector(v) => Ok(v),
            _ => Err(CoreError::UnknownBlock {
                reason: "the block is not a vector block",
            }),
        }
    }

    /// The released value of a matrix block.
    ///
    /// # Errors
    /// As [`Self::released`].
    pub fn matrix(&self, block: MatrixBlock) -> Result<&DMatrix<f64>, CoreError> {
        match &self.released(block)?.value {
            BlockValue::Matrix(m) => Ok(m),
            _ => Err(CoreError::UnknownBlock {
                reason: "the block is not a matrix block",
            }),
        }
    }

    /// The released value of a symmetric block (exactly symmetric; projected if asked).
    ///
    /// # Errors
    /// As [`Self::released`].
    pub fn symmetric(&self, block: SymmetricBlock) -> Result<&DMatrix<f64>, CoreError> {
        match &self.released(block)?.value {
            BlockValue::Symmetric(m) => Ok(m),
            _ => Err(CoreError::UnknownBlock {
                reason: "the block is not a symmetric block",
            }),
        }
    }

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

    /// The data owner's diagnostics of this release (clip and replacement counts): **not
    /// private**, see [`ReleaseDiagnostics`]. Not part of the serialised release (a release
    /// read back from JSON has zero counts).
    pub fn diagnostics(&self) -> ReleaseDiagnostics {
        self.diagnostics
    }

    /// Number of records of the batch whose contribution was clipped in at least one block
    /// (a non-private diagnostic, the same as `diagnostics().clipped_records`).
    pub fn clipped_records(&self) -> u64 {
        self.diagnostics.clipped_records
    }

    /// [`Self::clipped_records`] divided by the **public expected** batch size (not the realised
    /// one, which must not leak). Under Poisson sampling it can exceed 1 by chance. Non-private.
    pub fn clipped_fraction_of_expected(&self) -> f64 {
        self.diagnostics.clipped_records as f64 / self.expected_batch_size
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
