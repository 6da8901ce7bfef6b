//! One record `(x_n, y_n)` with `||x_n||_2 <= 1` and `|y_n| <= 1` enforced at construction, and
//! the public map from a row in the declared box to such a record.

use serde::{Deserialize, Serialize};

use super::LinregError;

/// A regression record in the form the statistics' bounds assume: `||x||_2 <= 1`, `|y| <= 1`.
///
/// # Privacy
/// [`LinregRecord::new`] enforces both bounds using this record only: if `||x|| > 1`, `x` and `y`
/// are scaled *together* by `1 / ||x||` (a row-wise rescaling keeps `y = w^T x + e` exactly, with
/// the noise scaled too, instead of biasing the slope as clipping `x` alone would), then `y` is
/// clamped to `[-1, 1]`. So every record that exists contributes at most the bounds of
/// [`super::sensitivity`].
///
/// # Example
/// ```
/// use vips_models::linreg::LinregRecord;
/// let (r, clipped) = LinregRecord::new(vec![3.0, 4.0], 10.0)?;
/// assert!(clipped);
/// assert!((r.features()[0] - 0.6).abs() < 1e-12 && r.target() == 1.0);
/// assert!(r.features().iter().map(|v| v * v).sum::<f64>() <= 1.0);
/// # Ok::<(), vips_models::linreg::LinregError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LinregRecord {
    x: Vec<f64>,
    y: f64,
}

impl LinregRecord {
    /// A record clipped into `||x|| <= 1`, `|y| <= 1` (returns whether anything was changed).
    ///
    /// # Errors
    /// [`LinregError::NonFinite`] for a NaN or infinite feature or target;
    /// [`LinregError::Empty`] for no features.
    pub fn new(mut x: Vec<f64>, mut y: f64) -> Result<(Self, bool), LinregError> {
        if x.is_empty() {
            return Err(LinregError::Empty("a record needs at least one feature"));
        }
        if x.iter().any(|v| !v.is_finite()) {
            return Err(LinregError::NonFinite("record features"));
        }
        if !y.is_finite() {
            return Err(LinregError::NonFinite("record target"));
        }
        // Scale before squaring so that finite values near f64::MAX do not overflow the norm.
        let big = x.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
        let norm = if big > 0.0 {
            big * x.iter().map(|v| (v / big).powi(2)).sum::<f64>().sqrt()
        } else {
            0.0
        };
        let mut clipped = false;
        if norm > 1.0 {
            // A hair above the norm, so that rounding never leaves ||x||^2 above 1.
            let s = norm * (1.0 + 4.0 * f64::EPSILON);
            x.iter_mut().for_each(|v| *v /= s);
            y /= s;
            clipped = true;
        }
        if y.abs() > 1.0 {
            y = y.clamp(-1.0, 1.0);
            clipped = true;
        }
        Ok((Self { x, y }, clipped))
    }

    /// The features (`||x|| <= 1`; the intercept is one of them when the record came from a
    /// [`RowMap`]).
    pub fn features(&self) -> &[f64] {
        &self.x
    }

    /// The target (`|y| <= 1`).
    pub fn target(&self) -> f64 {
        self.y
    }
}

/// The public map from a row already in the declared box `[-1, 1]^d` (features mapped by public
/// ranges, e.g. dp-sep's `Standardizer::from_public_ranges`) to a record: append the intercept
/// `1`, divide by the public `radius`, and enforce `||x|| <= 1` (see [`LinregRecord::new`]).
///
/// `RowMap::new(d, None)` takes `sqrt(1 + d/3)`, the root-mean-square norm of `(z, 1)` for `z`
/// uniform on the box (a data-independent figure); the fits' default instead releases the rows'
/// own root-mean-square norm ([`super::release_radius`]). Training rows of larger norm are
/// rescaled, `x` and `y` together ([`LinregRecord::new`]), which down-weights them without biasing
/// the linear relation; `sqrt(d + 1)` (the largest norm over the box) rescales no row but puts up
/// to `(d + 1) / (1 + d/3)` times less signal into `X^T X` against the same noise.
///
/// # Privacy
/// `d` and `radius` are declared or released (the radius as post-processing of
/// [`super::release_radius`], charged to the fit's budget), never computed from the data without
/// noise in a private fit; each row is mapped using that row only.
///
/// # Example
/// ```
/// use vips_models::linreg::RowMap;
/// let map = RowMap::new(3, None)?;
/// assert_eq!(map.radius(), 2.0_f64.sqrt());
/// // Training: 5 is clamped to 1 and the row, of norm 2 / sqrt(2) > 1, is scaled into the ball
/// // together with its target.
/// let (r, rescaled) = map.record(&[1.0, -1.0, 5.0], 0.5)?;
/// assert!(rescaled && (r.features().iter().map(|v| v * v).sum::<f64>() - 1.0).abs() < 1e-12);
/// // Prediction: the same row unscaled, so that w^T x is the fitted relation.
/// let x = map.features(&[1.0, -1.0, 5.0])?;
/// assert!((x.iter().map(|v| v * v).sum::<f64>() - 2.0).abs() < 1e-12);
/// # Ok::<(), vips_models::linreg::LinregError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct RowMap {
    d: usize,
    radius: f64,
}

impl RowMap {
    /// The map for `d` features (the model's dimension is `d + 1`) with the given public radius
    /// (default `sqrt(1 + d/3)`).
    ///
    /// # Errors
    /// [`LinregError::Empty`] for `d = 0`; [`LinregError::InvalidParameter`] for a radius that
    /// is not finite and `> 0`.
    pub fn new(d: usize, radius: Option<f64>) -> Result<Self, LinregError> {
        if d == 0 {
            return Err(LinregError::Empty("no features"));
        }
        let radius = radius.unwrap_or((1.0 + d as f64 / 3.0).sqrt());
        if !(radius > 0.0 && radius.is_finite()) {
            return Err(LinregError::invalid(
                "radius",
                radius,
                "must be finite and > 0",
            ));
        }
        Ok(Self { d, radius })
    }

    /// Number of features before the intercept.
    pub fn features_in(&self) -> usize {
        self.d
    }

    /// The model's dimension `d + 1`.
    pub fn dim(&self) -> usize {
        self.d + 1
    }

    /// The public radius.
    pub fn radius(&self) -> f64 {
        self.radius
    }

    fn raw(&self, z: &[f64]) -> Result<Vec<f64>, LinregError> {
        if z.len() != self.d {
            return Err(LinregError::DimensionMismatch {
                what: "row vs declared features",
                expected: self.d,
                found: z.len(),
            });
        }
        if z.iter().any(|v| !v.is_finite()) {
            return Err(LinregError::NonFinite("row features"));
        }
        Ok(z.iter()
            .map(|v| v.clamp(-1.0, 1.0))
            .chain([1.0])
            .map(|v| v / self.radius)
            .collect())
    }

    /// The feature vector of a row for prediction: clamp into the box, intercept, divide by the
    /// radius. It is *not* scaled into the unit ball: a training row outside the ball is scaled
    /// together with its target (a weight, [`LinregRecord::new`]), so the fitted `y = w^T x`
    /// holds for the unscaled row, and shrinking a test row would shrink its prediction.
    ///
    /// # Errors
    /// [`LinregError::DimensionMismatch`] for a row of the wrong length; [`LinregError::NonFinite`].
    pub fn features(&self, z: &[f64]) -> Result<Vec<f64>, LinregError> {
        self.raw(z)
    }

    /// The training record of a row with target `t` (already mapped by the target's public range;
    /// clamped to `[-1, 1]`). Returns whether the row was clamped or rescaled.
    ///
    /// # Errors
    /// As [`RowMap::features`]; [`LinregError::NonFinite`] for a non-finite target.
    pub fn record(&self, z: &[f64], t: f64) -> Result<(LinregRecord, bool), LinregError> {
        let boxed = z.iter().any(|v| v.abs() > 1.0);
        let (r, clipped) = LinregRecord::new(self.raw(z)?, t)?;
        Ok((r, clipped || boxed))
    }
}
