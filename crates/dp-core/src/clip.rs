//! Norm clipping (L2 for vectors, Frobenius for matrices) and public unit-ball transforms.
//!
//! Clipping is what turns a *declared* bound into an *enforced* one: a record whose contribution
//! has norm `n > B` is scaled by `B / n` (slightly less, so that the floating-point norm of the
//! result never exceeds `B`); a record with `n <= B` is left bit-identical.

use nalgebra::{Dim, Matrix, StorageMut};
use serde::{Deserialize, Serialize};

use crate::error::{CoreError, check_finite, check_positive};

/// Shrink factor applied on top of `B / n` so that rounding can never leave the clipped norm
/// above `B` (a relative change of `2^-50`, far below any statistical effect).
pub(crate) const CLIP_SHRINK: f64 = 1.0 - 1.0 / (1u64 << 50) as f64;

/// What clipping did to one record.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClipOutcome {
    /// The norm before clipping.
    pub original_norm: f64,
    /// The factor the record was multiplied by (`1.0` if it was within the bound).
    pub scale: f64,
}

impl ClipOutcome {
    /// Whether the record was over the bound and was scaled down.
    pub fn was_clipped(&self) -> bool {
        self.scale < 1.0
    }

    /// By how much the norm exceeded the bound (`0.0` if it did not).
    pub fn excess(&self, bound: f64) -> f64 {
        (self.original_norm - bound).max(0.0)
    }
}

/// The L2 norm of finite values, without overflow or underflow (scaled by the largest entry).
pub(crate) fn l2_norm<I: Iterator<Item = f64>>(values: impl Fn() -> I) -> f64 {
    let max = values().fold(0.0f64, |m, v| m.max(v.abs()));
    if max == 0.0 || !max.is_finite() {
        return max;
    }
    let sum: f64 = values().map(|v| (v / max) * (v / max)).sum();
    max * sum.sqrt()
}

/// The clipping factor for a record of norm `norm` under `bound`.
pub(crate) fn clip_scale(norm: f64, bound: f64) -> f64 {
    if norm > bound {
        (bound / norm) * CLIP_SHRINK
    } else {
        1.0
    }
}

/// Clips `values` in place to L2 norm at most `bound`.
///
/// # Privacy
/// After the call `||values||_2 <= bound` (also in floating point). In-bound input is left
/// bit-identical. The scale depends only on this record and the public bound.
///
/// # Errors
/// [`CoreError::InvalidParameter`] for a non-positive or non-finite bound;
/// [`CoreError::NonFinite`] if `values` holds NaN or an infinity (nothing is changed).
///
/// # Example
/// ```
/// let mut x = [3.0, 4.0];
/// let out = dp_core::clip_l2(&mut x, 1.0)?;
/// assert!(out.was_clipped() && out.original_norm == 5.0);
/// assert!((x[0] - 0.6).abs() < 1e-12 && (x[1] - 0.8).abs() < 1e-12);
/// # Ok::<(), dp_core::CoreError>(())
/// ```
pub fn clip_l2(values: &mut [f64], bound: f64) -> Result<ClipOutcome, CoreError> {
    check_positive("bound", bound)?;
    check_finite("record to clip", values)?;
    let norm = l2_norm(|| values.iter().copied());
    let scale = clip_scale(norm, bound);
    if scale < 1.0 {
        values.iter_mut().for_each(|v| *v *= scale);
    }
    Ok(ClipOutcome {
        original_norm: norm,
        scale,
    })
}

/// Clips a nalgebra vector (L2) or matrix (Frobenius) in place to norm at most `bound`.
///
/// For a matrix the Frobenius norm is the L2 norm of its entries, so this is [`clip_l2`] on the
/// entries; it works for any storage (views included).
///
/// # Errors
/// As [`clip_l2`].
///
/// # Example
/// ```
/// use nalgebra::DMatrix;
/// let mut m = DMatrix::from_element(2, 2, 1.0); // Frobenius norm 2
/// let out = dp_core::clip_norm(&mut m, 1.0)?;
/// assert!(out.was_clipped() && m.norm() <= 1.0);
/// # Ok::<(), dp_core::CoreError>(())
/// ```
pub fn clip_norm<Rows, Cols, S>(
    matrix: &mut Matrix<f64, Rows, Cols, S>,
    bound: f64,
) -> Result<ClipOutcome, CoreError>
where
    Rows: Dim,
    Cols: Dim,
    S: StorageMut<f64, Rows, Cols>,
{
    check_positive("bound", bound)?;
    if !matrix.iter().all(|v| v.is_finite()) {
        return Err(CoreError::NonFinite("record to clip"));
    }
    let norm = l2_norm(|| matrix.iter().copied());
    let scale = clip_scale(norm, bound);
    if scale < 1.0 {
        matrix.iter_mut().for_each(|v| *v *= scale);
    }
    Ok(ClipOutcome {
        original_norm: norm,
        scale,
    })
}

/// A public, data-independent affine map into the unit L2 ball, followed by clipping.
///
/// The papers assume `||x||_2 <= 1`; their code reaches it by dividing by the dataset's largest
/// row norm, which is data-dependent and leaks. This transform is fixed *before* seeing the data
/// (from domain knowledge: a known feature range or a published norm bound): it maps a record
/// `x` to `(x - centre) / scale` and clips the result to the unit ball, counting clipped records.
///
/// # Privacy
/// The output norm is at most 1 for every input, whatever the data. The transform's parameters
/// must not be computed from the private data.
///
/// # Example
/// ```
/// use dp_core::UnitBallTransform;
/// // features known a priori to lie in [0, 255]
/// let t = UnitBallTransform::from_public_box(&[0.0, 0.0], &[255.0, 255.0])?;
/// let mut x = [255.0, 0.0];
/// let out = t.apply(&mut x)?;
/// assert!(!out.was_clipped());
/// assert!(x.iter().map(|v| v * v).sum::<f64>() <= 1.0);
/// # Ok::<(), dp_core::CoreError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UnitBallTransform {
    centre: Option<Vec<f64>>,
    scale: f64,
}

impl UnitBallTransform {
    /// `x -> x / bound`: for records whose norm is known a priori to be at most `bound`
    /// (records above it are clipped and counted).
    ///
    /// # Errors
    /// [`CoreError::InvalidParameter`] unless `bound` is finite and `> 0`.
    pub fn from_public_bound(bound: f64) -> Result<Self, CoreError> {
        Ok(Self {
            centre: None,
            scale: check_positive("bound", bound)?,
        })
    }

    /// For features known a priori to lie in the box `[lower_i, upper_i]`: centre the box at the
    /// origin and divide by its half-diagonal, so the whole box lands in the unit ball (values
    /// outside it are clipped and counted).
    ///
    /// # Errors
    /// [`CoreError::DimensionMismatch`] for different lengths, [`CoreError::Empty`] for empty
    /// bounds, [`CoreError::NonFinite`] for non-finite bounds, [`CoreError::InvalidParameter`]
    /// unless `lower_i <= upper_i` everywhere and the box is not a single point.
    pub fn from_public_box(lower: &[f64], upper: &[f64]) -> Result<Self, CoreError> {
        if lower.len() != upper.len() {
            return Err(CoreError::DimensionMismatch {
                what: "public box bounds",
                expected: lower.len(),
                found: upper.len(),
            });
        }
        if lower.is_empty() {
            return Err(CoreError::Empty("public box bounds"));
        }
        check_finite("public box lower bounds", lower)?;
        check_finite("public box upper bounds", upper)?;
        if let Some((&lo, _)) = lower.iter().zip(upper).find(|(lo, hi)| lo > hi) {
            return Err(CoreError::InvalidParameter {
                name: "lower",
                value: lo,
                reason: "every lower bound must be <= its upper bound",
            });
        }
        let centre: Vec<f64> = lower
            .iter()
            .zip(upper)
            .map(|(l, u)| 0.5 * (l + u))
            .collect();
        let half_diagonal = l2_norm(|| lower.iter().zip(upper).map(|(l, u)| 0.5 * (u - l)));
        Ok(Self {
            centre: Some(centre),
            scale: check_positive("box half-diagonal", half_diagonal)?,
        })
    }

    /// Maps `record` into the unit ball in place.
    ///
    /// # Errors
    /// [`CoreError::DimensionMismatch`] if a box transform gets a record of another length;
    /// [`CoreError::NonFinite`] for NaN / infinite values (nothing is changed).
    pub fn apply(&self, record: &mut [f64]) -> Result<ClipOutcome, CoreError> {
        check_finite("record to transform", record)?;
        if let Some(centre) = &self.centre {
            if centre.len() != record.len() {
                return Err(CoreError::DimensionMismatch {
                    what: "record length for the public box transform",
                    expected: centre.len(),
                    found: record.len(),
                });
            }
            record.iter_mut().zip(centre).for_each(|(x, c)| *x -= c);
        }
        record.iter_mut().for_each(|x| *x /= self.scale);
        clip_l2(record, 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clips_to_bound_and_counts() {
        let mut x = [1e200, 1e200];
        let out = clip_l2(&mut x, 2.0).unwrap();
        assert!(out.was_clipped());
        assert!(l2_norm(|| x.iter().copied()) <= 2.0);
    }

    #[test]
    fn rejects_bad_input() {
        assert!(clip_l2(&mut [1.0], 0.0).is_err());
        assert!(clip_l2(&mut [1.0], f64::NAN).is_err());
        assert!(clip_l2(&mut [f64::INFINITY], 1.0).is_err());
        assert!(UnitBallTransform::from_public_box(&[1.0], &[0.0]).is_err());
        assert!(UnitBallTransform::from_public_box(&[1.0], &[1.0]).is_err());
        assert!(UnitBallTransform::from_public_box(&[], &[]).is_err());
        let t = UnitBallTransform::from_public_box(&[0.0], &[1.0]).unwrap();
        assert!(t.apply(&mut [0.0, 1.0]).is_err());
    }

    #[test]
    fn zero_record_is_untouched() {
        let mut x = [0.0, -0.0];
        let out = clip_l2(&mut x, 1.0).unwrap();
        assert!(!out.was_clipped());
        assert_eq!(x[1].to_bits(), (-0.0f64).to_bits());
    }
}
