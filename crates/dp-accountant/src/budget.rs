//! A total privacy budget `(epsilon, delta)`.

use serde::{Deserialize, Serialize};

use crate::error::{AccountantError, check_delta, check_positive};

/// A total `(epsilon, delta)` privacy budget: `epsilon > 0` finite, `delta` in `(0, 1)`.
///
/// # Example
/// ```
/// use dp_accountant::Budget;
/// let b = Budget::new(1.0, 1e-5)?;
/// assert_eq!((b.epsilon(), b.delta()), (1.0, 1e-5));
/// assert!(Budget::new(0.0, 1e-5).is_err());
/// assert!(Budget::new(1.0, 1.0).is_err());
/// # Ok::<(), dp_accountant::AccountantError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawBudget", into = "RawBudget")]
pub struct Budget {
    epsilon: f64,
    delta: f64,
}

#[derive(Serialize, Deserialize)]
struct RawBudget {
    epsilon: f64,
    delta: f64,
}

impl TryFrom<RawBudget> for Budget {
    type Error = AccountantError;
    fn try_from(r: RawBudget) -> Result<Self, Self::Error> {
        Budget::new(r.epsilon, r.delta)
    }
}

impl From<Budget> for RawBudget {
    fn from(b: Budget) -> Self {
        RawBudget {
            epsilon: b.epsilon,
            delta: b.delta,
        }
    }
}

impl Budget {
    /// A checked budget.
    ///
    /// # Errors
    /// [`AccountantError::InvalidParameter`] unless `epsilon` is finite and `> 0` and `delta`
    /// lies in `(0, 1)`.
    pub fn new(epsilon: f64, delta: f64) -> Result<Self, AccountantError> {
        check_positive("epsilon", epsilon)?;
        check_delta("delta", delta)?;
        Ok(Self { epsilon, delta })
    }

    /// The total epsilon.
    pub fn epsilon(&self) -> f64 {
        self.epsilon
    }

    /// The total delta.
    pub fn delta(&self) -> f64 {
        self.delta
    }
}
