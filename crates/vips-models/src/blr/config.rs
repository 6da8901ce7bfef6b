//! Validated settings of the BLR model.

use serde::{Deserialize, Serialize};

use super::BlrError;

/// The prior on the weights' precision `alpha` in `p(m | alpha) = N(0, alpha^-1 I)`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Hyperprior {
    /// `alpha ~ Gamma(shape, rate)`, updated each M-step by 000 Eq. 39-40:
    /// `a_N = a0 + d/2`, `b_N = b0 + (mu^T mu + tr Sigma)/2`, feeding back `<alpha> = a_N / b_N`.
    Gamma {
        /// `a0 > 0`.
        shape: f64,
        /// `b0 > 0`.
        rate: f64,
    },
    /// A fixed prior precision (no hyperprior).
    Fixed {
        /// `alpha > 0`.
        alpha: f64,
    },
}

/// Settings of [`crate::blr::Blr`].
///
/// # Example
/// ```
/// use vips_models::blr::{BlrConfig, Hyperprior};
/// let cfg = BlrConfig::new(30)?.hyperprior(Hyperprior::Gamma { shape: 1.0, rate: 1.0 })?;
/// assert_eq!(cfg.dim(), 30);
/// assert!(BlrConfig::new(0).is_err());
/// # Ok::<(), vips_models::blr::BlrError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BlrConfig {
    dim: usize,
    hyperprior: Hyperprior,
    eigenvalue_floor: f64,
}

impl BlrConfig {
    /// Defaults: `alpha ~ Gamma(1, 1)` (prior mean 1: unit prior variance on each weight; with
    /// `d/2` added to the shape after one update the data dominate) and an eigenvalue floor of
    /// `1e-9` on the released normalised `s2`.
    ///
    /// # Errors
    /// [`BlrError::Empty`] for `dim == 0`.
    pub fn new(dim: usize) -> Result<Self, BlrError> {
        if dim == 0 {
            return Err(BlrError::Empty("a model needs at least one feature".into()));
        }
        Ok(Self {
            dim,
            hyperprior: Hyperprior::Gamma {
                shape: 1.0,
                rate: 1.0,
            },
            eigenvalue_floor: 1e-9,
        })
    }

    /// Sets the prior on `alpha`.
    ///
    /// # Errors
    /// [`BlrError::InvalidParameter`] unless every parameter is finite and `> 0`.
    pub fn hyperprior(mut self, h: Hyperprior) -> Result<Self, BlrError> {
        let check = |name, v: f64| {
            if v > 0.0 && v.is_finite() {
                Ok(())
            } else {
                Err(BlrError::invalid(name, v, "must be finite and > 0"))
            }
        };
        match h {
            Hyperprior::Gamma { shape, rate } => {
                check("hyperprior shape", shape)?;
                check("hyperprior rate", rate)?;
            }
            Hyperprior::Fixed { alpha } => check("prior precision", alpha)?,
        }
        self.hyperprior = h;
        Ok(self)
    }

    /// The floor `lambda_min >= floor` the released (normalised) `s2` is projected onto.
    ///
    /// # Errors
    /// [`BlrError::InvalidParameter`] unless finite and `> 0`.
    pub fn eigenvalue_floor(mut self, floor: f64) -> Result<Self, BlrError> {
        if !(floor > 0.0 && floor.is_finite()) {
            return Err(BlrError::invalid(
                "eigenvalue floor",
                floor,
                "must be finite and > 0",
            ));
        }
        self.eigenvalue_floor = floor;
        Ok(self)
    }

    /// Number of features `d`.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The prior on `alpha`.
    pub fn prior(&self) -> Hyperprior {
        self.hyperprior
    }

    /// The eigenvalue floor of the `s2` projection.
    pub fn floor(&self) -> f64 {
        self.eigenvalue_floor
    }
}
