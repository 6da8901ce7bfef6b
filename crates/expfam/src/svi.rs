//! The Robbins-Monro step size of stochastic variational inference.

use crate::error::{ExpFamError, Result};

/// Step sizes `rho_t = (tau0 + t)^(-kappa)` (Hoffman, Blei, Bach 2010; Hoffman et al. 2013).
///
/// `kappa` in `(0.5, 1]` makes `sum rho_t = inf` and `sum rho_t^2 < inf` (the Robbins-Monro
/// conditions); `tau0 >= 0` down-weights early iterations. Use with
/// [`NaturalParameters::damped_toward`](crate::NaturalParameters::damped_toward).
///
/// # Example
/// ```
/// use expfam::SviSchedule;
/// let s = SviSchedule::new(1.0, 0.5).unwrap_err(); // kappa must be > 0.5
/// let s = SviSchedule::new(1.0, 0.7).unwrap();
/// assert!((s.rho(0) - 1.0).abs() < 1e-15);
/// assert!(s.rho(10) < s.rho(9));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SviSchedule {
    tau0: f64,
    kappa: f64,
}

impl SviSchedule {
    /// A schedule with delay `tau0 >= 0` and forgetting rate `kappa` in `(0.5, 1]`.
    ///
    /// # Errors
    /// [`ExpFamError::OutOfDomain`] / [`ExpFamError::NonFinite`] outside those ranges.
    pub fn new(tau0: f64, kappa: f64) -> Result<Self> {
        crate::check::non_negative("tau0", tau0)?;
        crate::check::finite("kappa", kappa)?;
        if !(kappa > 0.5 && kappa <= 1.0) {
            return Err(ExpFamError::OutOfDomain {
                name: "kappa",
                value: kappa,
                requirement: "in (0.5, 1]",
            });
        }
        Ok(Self { tau0, kappa })
    }

    /// The delay `tau0`.
    pub fn tau0(&self) -> f64 {
        self.tau0
    }

    /// The forgetting rate `kappa`.
    pub fn kappa(&self) -> f64 {
        self.kappa
    }

    /// `rho_t = (tau0 + t)^(-kappa)`, capped at 1 (so `tau0 + t < 1` gives a full step).
    pub fn rho(&self, t: u64) -> f64 {
        let base = self.tau0 + t as f64;
        if base <= 1.0 {
            1.0
        } else {
            base.powf(-self.kappa)
        }
    }
}
