//! What a release contains: named blocks, each with a shape and a declared norm bound.

use serde::{Deserialize, Serialize};

use crate::error::{CoreError, check_positive};

/// The shape of one statistic block.
///
/// Storage inside the wall is flat: a vector as is; a matrix column-major (nalgebra's order,
/// entry `(r, c)` at `c * rows + r`); a symmetric matrix as its packed upper triangle including
/// the diagonal, column-major (entry `(i, j)`, `i <= j`, at `j (j + 1) / 2 + i`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "shape", rename_all = "snake_case")]
pub enum BlockShape {
    /// A vector of `len` entries; bound in L2 norm; iid Gaussian noise.
    Vector {
        /// Number of entries.
        len: usize,
    },
    /// A `rows x cols` matrix; bound in Frobenius norm; iid Gaussian noise on every entry.
    Matrix {
        /// Number of rows.
        rows: usize,
        /// Number of columns.
        cols: usize,
    },
    /// A symmetric `dim x dim` matrix; bound in Frobenius norm; Analyze-Gauss noise (upper
    /// triangle incl. diagonal iid, mirrored), optionally projected onto `lambda_min >= floor`.
    Symmetric {
        /// Side length.
        dim: usize,
    },
}

impl BlockShape {
    /// Number of stored (free) entries.
    pub fn stored_len(&self) -> usize {
        match *self {
            Self::Vector { len } => len,
            Self::Matrix { rows, cols } => rows * cols,
            Self::Symmetric { dim } => dim * (dim + 1) / 2,
        }
    }

    /// Whether the packed entry `index` of a symmetric block lies on the diagonal.
    pub(crate) fn packed_is_diagonal(index: usize) -> bool {
        // index = j (j + 1) / 2 + i with 0 <= i <= j; diagonal iff i == j.
        let mut j = ((((8 * index + 1) as f64).sqrt() - 1.0) / 2.0) as usize;
        while j * (j + 1) / 2 > index {
            j -= 1;
        }
        while (j + 1) * (j + 2) / 2 <= index {
            j += 1;
        }
        index - j * (j + 1) / 2 == j
    }
}

/// Packed index of entry `(i, j)` of a symmetric matrix (either order).
pub(crate) fn packed_index(i: usize, j: usize) -> usize {
    let (i, j) = if i <= j { (i, j) } else { (j, i) };
    j * (j + 1) / 2 + i
}

/// One block of a release: a name, a shape and the declared per-record norm bound.
///
/// # Example
/// ```
/// use dp_core::BlockSpec;
/// let s1 = BlockSpec::vector("s1", 10, 0.5)?;
/// let s2 = BlockSpec::symmetric("s2", 10, 0.25)?.with_eigenvalue_floor(1e-6)?;
/// assert_eq!(s2.stored_len(), 55);
/// # Ok::<(), dp_core::CoreError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BlockSpec {
    name: String,
    shape: BlockShape,
    bound: f64,
    eigenvalue_floor: Option<f64>,
}

impl BlockSpec {
    fn new(name: impl Into<String>, shape: BlockShape, bound: f64) -> Result<Self, CoreError> {
        check_positive("block norm bound", bound)?;
        if shape.stored_len() == 0 {
            return Err(CoreError::Empty("a block needs at least one entry"));
        }
        Ok(Self {
            name: name.into(),
            shape,
            bound,
            eigenvalue_floor: None,
        })
    }

    /// A vector block of `len` entries whose per-record contribution is clipped to L2 norm `bound`.
    ///
    /// # Errors
    /// [`CoreError::InvalidParameter`] unless `bound` is finite and `> 0`; [`CoreError::Empty`]
    /// for `len == 0`.
    pub fn vector(name: impl Into<String>, len: usize, bound: f64) -> Result<Self, CoreError> {
        Self::new(name, BlockShape::Vector { len }, bound)
    }

    /// A `rows x cols` matrix block clipped per record to Frobenius norm `bound`.
    ///
    /// # Errors
    /// As [`BlockSpec::vector`].
    pub fn matrix(
        name: impl Into<String>,
        rows: usize,
        cols: usize,
        bound: f64,
    ) -> Result<Self, CoreError> {
        Self::new(name, BlockShape::Matrix { rows, cols }, bound)
    }

    /// A symmetric `dim x dim` block clipped per record to Frobenius norm `bound`, released with
    /// Analyze-Gauss noise. Add [`BlockSpec::with_eigenvalue_floor`] to project the released
    /// matrix onto the positive-definite cone.
    ///
    /// # Errors
    /// As [`BlockSpec::vector`].
    pub fn symmetric(name: impl Into<String>, dim: usize, bound: f64) -> Result<Self, CoreError> {
        Self::new(name, BlockShape::Symmetric { dim }, bound)
    }

    /// Projects the released (normalised) matrix onto `{A : lambda_min(A) >= floor}`.
    ///
    /// # Errors
    /// [`CoreError::InvalidParameter`] for a non-symmetric block or a floor that is not finite
    /// and `> 0`.
    pub fn with_eigenvalue_floor(mut self, floor: f64) -> Result<Self, CoreError> {
        if !matches!(self.shape, BlockShape::Symmetric { .. }) {
            return Err(CoreError::InvalidParameter {
                name: "eigenvalue floor",
                value: floor,
                reason: "only symmetric blocks can be projected",
            });
        }
        self.eigenvalue_floor = Some(check_positive("eigenvalue floor", floor)?);
        Ok(self)
    }

    /// The block's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The block's shape.
    pub fn shape(&self) -> BlockShape {
        self.shape
    }

    /// The declared per-record norm bound (L2 or Frobenius).
    pub fn bound(&self) -> f64 {
        self.bound
    }

    /// The eigenvalue floor of a projected symmetric block.
    pub fn eigenvalue_floor(&self) -> Option<f64> {
        self.eigenvalue_floor
    }

    /// Number of stored entries.
    pub fn stored_len(&self) -> usize {
        self.shape.stored_len()
    }
}

/// The blocks of one release, noised together by rescale-noise-rescale (003 Eq. 63).
///
/// # Example
/// ```
/// use dp_core::{BlockSpec, ReleaseSpec};
/// let spec = ReleaseSpec::new(vec![
///     BlockSpec::vector("s1", 3, 0.5)?,
///     BlockSpec::symmetric("s2", 3, 0.25)?,
/// ])?;
/// assert_eq!(spec.index_of("s2"), Some(1));
/// # Ok::<(), dp_core::CoreError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReleaseSpec {
    blocks: Vec<BlockSpec>,
}

impl ReleaseSpec {
    /// A release of the given blocks (at least one; names unique).
    ///
    /// # Errors
    /// [`CoreError::Empty`] for no blocks; [`CoreError::InvalidContribution`] for a repeated name.
    pub fn new(blocks: Vec<BlockSpec>) -> Result<Self, CoreError> {
        if blocks.is_empty() {
            return Err(CoreError::Empty("a release needs at least one block"));
        }
        for (i, b) in blocks.iter().enumerate() {
            if blocks[..i].iter().any(|o| o.name == b.name) {
                return Err(CoreError::InvalidContribution {
                    block: b.name.clone(),
                    reason: "block names must be unique within a release".into(),
                });
            }
        }
        Ok(Self { blocks })
    }

    /// The blocks, in release order.
    pub fn blocks(&self) -> &[BlockSpec] {
        &self.blocks
    }

    /// Number of blocks `k`.
    pub fn len(&self) -> usize {
        self.blocks.len()
    }

    /// Always `false` (a spec has at least one block).
    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }

    /// Position of the block called `name`.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.blocks.iter().position(|b| b.name == name)
    }

    /// L2 sensitivity, under add/remove-one, of the concatenation of the blocks each divided by
    /// its bound: `sqrt(k)` (003 Eq. 63). Multiply by the scheme's sensitivity factor for
    /// replace-one.
    pub fn rescaled_sensitivity(&self) -> f64 {
        (self.blocks.len() as f64).sqrt()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_diagonal_detection() {
        for j in 0..200usize {
            for i in 0..=j {
                assert_eq!(BlockShape::packed_is_diagonal(packed_index(i, j)), i == j);
            }
        }
    }

    #[test]
    fn rejects_bad_specs() {
        assert!(BlockSpec::vector("a", 0, 1.0).is_err());
        assert!(BlockSpec::vector("a", 3, 0.0).is_err());
        assert!(BlockSpec::vector("a", 3, f64::INFINITY).is_err());
        assert!(
            BlockSpec::vector("a", 3, 1.0)
                .unwrap()
                .with_eigenvalue_floor(1.0)
                .is_err()
        );
        assert!(
            BlockSpec::symmetric("a", 3, 1.0)
                .unwrap()
                .with_eigenvalue_floor(-1.0)
                .is_err()
        );
        assert!(ReleaseSpec::new(vec![]).is_err());
        let a = BlockSpec::vector("a", 3, 1.0).unwrap();
        assert!(ReleaseSpec::new(vec![a.clone(), a]).is_err());
    }
}
