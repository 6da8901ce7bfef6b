//! Small validation helpers shared by the families (crate-private).

use crate::error::{ExpFamError, Result};
use nalgebra::{DMatrix, DVector};

/// `x` must be finite.
pub(crate) fn finite(name: &'static str, x: f64) -> Result<f64> {
    if x.is_finite() {
        Ok(x)
    } else {
        Err(ExpFamError::NonFinite { name, value: x })
    }
}

/// `x` must be finite and `> 0`.
pub(crate) fn positive(name: &'static str, x: f64) -> Result<f64> {
    finite(name, x)?;
    if x > 0.0 {
        Ok(x)
    } else {
        Err(ExpFamError::OutOfDomain {
            name,
            value: x,
            requirement: "> 0",
        })
    }
}

/// `x` must be finite and `>= 0`.
pub(crate) fn non_negative(name: &'static str, x: f64) -> Result<f64> {
    finite(name, x)?;
    if x >= 0.0 {
        Ok(x)
    } else {
        Err(ExpFamError::OutOfDomain {
            name,
            value: x,
            requirement: ">= 0",
        })
    }
}

/// Every entry finite.
pub(crate) fn all_finite(name: &'static str, xs: &[f64]) -> Result<()> {
    for &x in xs {
        finite(name, x)?;
    }
    Ok(())
}

/// Every entry finite and `> 0`.
pub(crate) fn all_positive(name: &'static str, xs: &[f64]) -> Result<()> {
    for &x in xs {
        positive(name, x)?;
    }
    Ok(())
}

/// At least `min` entries.
pub(crate) fn min_len(name: &'static str, got: usize, min: usize) -> Result<()> {
    if got >= min {
        Ok(())
    } else {
        Err(ExpFamError::TooShort { name, got, min })
    }
}

/// Equal lengths.
pub(crate) fn same_len(name: &'static str, expected: usize, got: usize) -> Result<()> {
    if expected == got {
        Ok(())
    } else {
        Err(ExpFamError::DimensionMismatch {
            what: name,
            expected,
            found: got,
        })
    }
}

/// Square `d x d`, finite, symmetric to a relative tolerance of `1e-10`.
pub(crate) fn symmetric(name: &'static str, m: &DMatrix<f64>, d: usize) -> Result<()> {
    same_len(name, d, m.nrows())?;
    same_len(name, d, m.ncols())?;
    all_finite(name, m.as_slice())?;
    let scale = m.iter().fold(0.0_f64, |a, &x| a.max(x.abs()));
    if scale == 0.0 {
        return Ok(());
    }
    let mut worst = 0.0_f64;
    for j in 0..d {
        for i in (j + 1)..d {
            worst = worst.max((m[(i, j)] - m[(j, i)]).abs());
        }
    }
    let asymmetry = worst / scale;
    if asymmetry <= 1e-10 {
        Ok(())
    } else {
        Err(ExpFamError::NotSymmetric { name, asymmetry })
    }
}

/// A finite vector of length `d`.
pub(crate) fn vector(name: &'static str, v: &DVector<f64>, d: usize) -> Result<()> {
    same_len(name, d, v.len())?;
    all_finite(name, v.as_slice())
}
