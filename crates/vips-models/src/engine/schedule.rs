//! Step sizes of stochastic variational inference.

use serde::{Deserialize, Serialize};

use super::EngineError;

/// The SVI step size `rho_t`.
///
/// # Example
/// ```
/// use vips_models::engine::StepSize;
/// let s = StepSize::robbins_monro(1024.0, 0.7)?;
/// assert!((s.rho(0) - 1024f64.powf(-0.7)).abs() < 1e-15);
/// assert_eq!(StepSize::Constant { rho: 1.0 }.rho(5), 1.0);
/// # Ok::<(), vips_models::engine::EngineError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "schedule", rename_all = "snake_case")]
pub enum StepSize {
    /// `rho_t = (tau0 + t)^-kappa`, `t = 0, 1, ...` (003 Algorithm 2; Hoffman et al. 2010 with
    /// `kappa` in `(0.5, 1]` for convergence; gensim's `offset` and `decay`).
    RobbinsMonro {
        /// Delay `tau0 >= 0`.
        tau0: f64,
        /// Forgetting rate `kappa` in `(0.5, 1]`.
        kappa: f64,
    },
    /// A constant step (`rho = 1` is batch VB).
    Constant {
        /// The step in `(0, 1]`.
        rho: f64,
    },
}

impl StepSize {
    /// The Robbins-Monro schedule.
    ///
    /// # Errors
    /// [`EngineError::InvalidParameter`] unless `tau0 >= 0` is finite and `kappa` is in `(0.5, 1]`.
    pub fn robbins_monro(tau0: f64, kappa: f64) -> Result<Self, EngineError> {
        let s = Self::RobbinsMonro { tau0, kappa };
        s.check()?;
        Ok(s)
    }

    /// Checks the parameters.
    ///
    /// # Errors
    /// As [`StepSize::robbins_monro`]; for a constant, unless `rho` is in `(0, 1]`.
    pub fn check(&self) -> Result<(), EngineError> {
        match *self {
            Self::RobbinsMonro { tau0, kappa } => {
                if !(tau0 >= 0.0 && tau0.is_finite()) {
                    return Err(EngineError::invalid(
                        "tau0",
                        tau0,
                        "must be finite and >= 0",
                    ));
                }
                if !(kappa > 0.5 && kappa <= 1.0) {
                    return Err(EngineError::invalid("kappa", kappa, "must be in (0.5, 1]"));
                }
            }
            Self::Constant { rho } => {
                if !(rho > 0.0 && rho <= 1.0) {
                    return Err(EngineError::invalid("rho", rho, "must be in (0, 1]"));
                }
            }
        }
        Ok(())
    }

    /// `rho_t` for iteration `t` (0-based). With `tau0 = 0` the first step is 1.
    pub fn rho(&self, t: u64) -> f64 {
        match *self {
            Self::RobbinsMonro { tau0, kappa } => (tau0 + t as f64).max(1.0).powf(-kappa),
            Self::Constant { rho } => rho,
        }
    }
}
