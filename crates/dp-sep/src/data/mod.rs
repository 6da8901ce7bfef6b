//! Regression data: a row-major [`Dataset`], a folder holding a data set with its standard
//! train/test splits (the UCI regression benchmark's layout, [`split_folder`]), a CSV loader ([`csv_loader`]), caller-declared public ranges ([`PublicRanges`]) and
//! the affine transform ([`Standardizer`]): from public ranges for private runs, fitted on a
//! training split for non-private ones.

pub mod csv_loader;
pub mod ranges;
pub mod split_folder;
mod standardize;

pub use ranges::{PublicRange, PublicRanges};
pub use standardize::{BoxClipCounts, Standardizer};

use crate::error::SepError;

/// A regression data set: `n` rows of `d` features (row-major) and one target per row.
#[derive(Clone, Debug, PartialEq)]
pub struct Dataset {
    x: Vec<f64>,
    y: Vec<f64>,
    d: usize,
}

impl Dataset {
    /// Builds a data set from row-major features `x` (`n * d` values) and targets `y` (`n`).
    ///
    /// # Errors
    /// [`SepError::Empty`] for no rows or no features, [`SepError::DimensionMismatch`] if the
    /// lengths disagree, [`SepError::NonFinite`] for a NaN or infinite value.
    ///
    /// # Example
    /// ```
    /// use dp_sep::data::Dataset;
    /// let data = Dataset::new(vec![1.0, 2.0, 3.0, 4.0], vec![0.5, 1.5], 2)?;
    /// assert_eq!(data.len(), 2);
    /// assert_eq!(data.row(1), &[3.0, 4.0]);
    /// # Ok::<(), dp_sep::SepError>(())
    /// ```
    pub fn new(x: Vec<f64>, y: Vec<f64>, d: usize) -> Result<Self, SepError> {
        if d == 0 {
            return Err(SepError::Empty("a data set needs at least one feature"));
        }
        if y.is_empty() {
            return Err(SepError::Empty("a data set needs at least one row"));
        }
        if x.len() != y.len() * d {
            return Err(SepError::DimensionMismatch {
                what: "Dataset::new (x.len() = n * d)",
                expected: y.len() * d,
                found: x.len(),
            });
        }
        if let Some(i) = x.iter().position(|v| !v.is_finite()) {
            return Err(SepError::NonFinite {
                context: "features".into(),
                row: i / d,
                column: i % d,
            });
        }
        if let Some(i) = y.iter().position(|v| !v.is_finite()) {
            return Err(SepError::NonFinite {
                context: "targets".into(),
                row: i,
                column: 0,
            });
        }
        Ok(Self { x, y, d })
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.y.len()
    }

    /// Always `false`: a data set has at least one row.
    pub fn is_empty(&self) -> bool {
        self.y.is_empty()
    }

    /// Number of features.
    pub fn dim(&self) -> usize {
        self.d
    }

    /// Features of row `i`.
    ///
    /// # Panics
    /// If `i >= len()` (an indexing bug in the caller).
    pub fn row(&self, i: usize) -> &[f64] {
        &self.x[i * self.d..(i + 1) * self.d]
    }

    /// Target of row `i`.
    ///
    /// # Panics
    /// If `i >= len()`.
    pub fn target(&self, i: usize) -> f64 {
        self.y[i]
    }

    /// All targets.
    pub fn targets(&self) -> &[f64] {
        &self.y
    }

    /// The rows listed in `indices`, in that order.
    ///
    /// # Errors
    /// [`SepError::Empty`] for no indices; [`SepError::InvalidParameter`] for an index out of
    /// range.
    pub fn select(&self, indices: &[usize]) -> Result<Self, SepError> {
        let mut x = Vec::with_capacity(indices.len() * self.d);
        let mut y = Vec::with_capacity(indices.len());
        for &i in indices {
            if i >= self.len() {
                return Err(SepError::InvalidParameter {
                    name: "row index",
                    value: i as f64,
                    reason: "must be < number of rows",
                });
            }
            x.extend_from_slice(self.row(i));
            y.push(self.y[i]);
        }
        Self::new(x, y, self.d)
    }
}
