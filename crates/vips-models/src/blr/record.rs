//! One labelled record `(x_n, y_n)` with `||x_n||_2 <= 1` enforced at construction.

use dp_core::{ClipOutcome, clip_l2};
use serde::{Deserialize, Serialize};

use super::BlrError;

/// The feature vector of a record: dense, or sparse (sorted unique indices with values).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Features {
    /// Every coordinate stored.
    Dense(Vec<f64>),
    /// Non-zero coordinates only: `indices` strictly increasing, `values` of the same length.
    Sparse {
        /// Strictly increasing coordinate indices.
        indices: Vec<u32>,
        /// The values at those coordinates.
        values: Vec<f64>,
    },
}

impl Features {
    /// The values stored (all coordinates for dense, non-zeros for sparse).
    pub fn values(&self) -> &[f64] {
        match self {
            Self::Dense(v) => v,
            Self::Sparse { values, .. } => values,
        }
    }

    fn values_mut(&mut self) -> &mut [f64] {
        match self {
            Self::Dense(v) => v,
            Self::Sparse { values, .. } => values,
        }
    }

    /// `x^T w` for a dense `w` of the model's dimension.
    pub fn dot(&self, w: &[f64]) -> f64 {
        match self {
            Self::Dense(v) => v.iter().zip(w).map(|(a, b)| a * b).sum(),
            Self::Sparse { indices, values } => indices
                .iter()
                .zip(values)
                .map(|(&i, v)| v * w[i as usize])
                .sum(),
        }
    }

    /// `x^T A x` for a symmetric `A` (column-major `d x d` slice). `O(nnz^2)` for sparse `x`.
    pub fn quadratic_form(&self, a: &[f64], d: usize) -> f64 {
        match self {
            Self::Dense(v) => {
                let mut total = 0.0;
                for (j, &xj) in v.iter().enumerate() {
                    if xj == 0.0 {
                        continue;
                    }
                    let col = &a[j * d..(j + 1) * d];
                    let s: f64 = col.iter().zip(v).map(|(c, x)| c * x).sum();
                    total += xj * s;
                }
                total
            }
            Self::Sparse { indices, values } => {
                let mut total = 0.0;
                for (&j, &xj) in indices.iter().zip(values) {
                    let col = &a[j as usize * d..(j as usize + 1) * d];
                    let s: f64 = indices
                        .iter()
                        .zip(values)
                        .map(|(&i, &xi)| col[i as usize] * xi)
                        .sum();
                    total += xj * s;
                }
                total
            }
        }
    }

    /// The largest coordinate index + 1 (the length for dense).
    pub fn min_dim(&self) -> usize {
        match self {
            Self::Dense(v) => v.len(),
            Self::Sparse { indices, .. } => indices.last().map_or(0, |&i| i as usize + 1),
        }
    }

    /// The L2 norm.
    pub fn norm(&self) -> f64 {
        self.values().iter().map(|v| v * v).sum::<f64>().sqrt()
    }

    /// The dense vector of length `d`.
    pub fn to_dense(&self, d: usize) -> Vec<f64> {
        match self {
            Self::Dense(v) => v.clone(),
            Self::Sparse { indices, values } => {
                let mut out = vec![0.0; d];
                for (&i, &v) in indices.iter().zip(values) {
                    out[i as usize] = v;
                }
                out
            }
        }
    }
}

/// A labelled record with `||x||_2 <= 1` and `y` in `{0, 1}` (the form 000 Eq. 30 assumes).
///
/// # Privacy
/// [`BlrRecord::new`] clips `x` to the unit ball (scaling it by `1/||x||` when the norm is above
/// one) and reports whether it did, so the per-record bounds of both statistics (one half and one
/// quarter, see [`crate::blr::sensitivity`]) hold for every record that exists. The clip depends only on this
/// record.
///
/// # Example
/// ```
/// use vips_models::blr::{BlrRecord, Features};
/// let (r, clip) = BlrRecord::new(Features::Dense(vec![3.0, 4.0]), true)?;
/// assert!(clip.was_clipped());
/// assert!((r.features().norm() - 1.0).abs() < 1e-12);
/// # Ok::<(), vips_models::blr::BlrError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BlrRecord {
    x: Features,
    y: bool,
}

impl BlrRecord {
    /// A record, clipped into the unit ball.
    ///
    /// # Errors
    /// [`BlrError::NonFinite`] for NaN / infinite features; [`BlrError::DimensionMismatch`] for sparse
    /// indices that are not strictly increasing or index / value lists of different lengths.
    pub fn new(mut x: Features, y: bool) -> Result<(Self, ClipOutcome), BlrError> {
        if let Features::Sparse { indices, values } = &x {
            if indices.len() != values.len() {
                return Err(BlrError::DimensionMismatch {
                    what: "sparse values vs indices",
                    expected: indices.len(),
                    found: values.len(),
                });
            }
            if indices.windows(2).any(|w| w[0] >= w[1]) {
                return Err(BlrError::DimensionMismatch {
                    what: "sparse indices (must be strictly increasing)",
                    expected: 0,
                    found: 1,
                });
            }
        }
        if x.values().iter().any(|v| !v.is_finite()) {
            return Err(BlrError::NonFinite("record features"));
        }
        let clip = clip_l2(x.values_mut(), 1.0).map_err(BlrError::Clip)?;
        Ok((Self { x, y }, clip))
    }

    /// The features (`||x|| <= 1`).
    pub fn features(&self) -> &Features {
        &self.x
    }

    /// The label.
    pub fn label(&self) -> bool {
        self.y
    }

    /// `y - 1/2` in `{-1/2, 1/2}`.
    pub fn centred_label(&self) -> f64 {
        if self.y { 0.5 } else { -0.5 }
    }
}
