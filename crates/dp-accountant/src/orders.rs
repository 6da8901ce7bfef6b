//! Which Rényi orders an `(epsilon, delta)` conversion optimises over.

use serde::{Deserialize, Serialize};

use crate::error::{AccountantError, check_order};

/// The orders over which a conversion to `(epsilon, delta)` is minimised.
///
/// Every choice yields a valid bound (any single order does); they differ in tightness.
/// `Continuous` minimises over all real orders in `(1, 2^20]` so the answer does not depend on
/// where a grid ends.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
#[serde(tag = "kind", content = "orders", rename_all = "snake_case")]
pub enum Orders {
    /// Minimise over all real orders (coarse scan, then Brent's method).
    #[default]
    Continuous,
    /// dp_accounting's default list (156 orders, see [`dp_accounting_default_orders`]).
    DpAccountingDefault,
    /// A caller-supplied list; every order must be finite and `> 1`.
    Custom(Vec<f64>),
}

impl Orders {
    /// A custom order list, checked.
    ///
    /// # Errors
    /// [`AccountantError::Empty`] for an empty list; [`AccountantError::InvalidParameter`] for
    /// an order that is not finite and `> 1`.
    pub fn custom(orders: Vec<f64>) -> Result<Self, AccountantError> {
        let o = Self::Custom(orders);
        o.validate()?;
        Ok(o)
    }

    /// Checks a deserialised value.
    ///
    /// # Errors
    /// As [`Orders::custom`].
    pub fn validate(&self) -> Result<(), AccountantError> {
        if let Self::Custom(list) = self {
            if list.is_empty() {
                return Err(AccountantError::Empty(
                    "an order list needs at least one order",
                ));
            }
            for &a in list {
                check_order(a)?;
            }
        }
        Ok(())
    }

    /// The explicit list for the grid variants, `None` for `Continuous`.
    pub fn grid(&self) -> Option<Vec<f64>> {
        match self {
            Self::Continuous => None,
            Self::DpAccountingDefault => Some(dp_accounting_default_orders()),
            Self::Custom(list) => Some(list.clone()),
        }
    }
}

/// dp_accounting's `DEFAULT_RDP_ORDERS` (version 0.6): `1 + x/10` for `x = 1..=99`, the
/// integers `11..=63`, and `128, 256, 512, 1024` — 156 orders.
///
/// # Example
/// ```
/// let o = dp_accountant::dp_accounting_default_orders();
/// assert_eq!(o.len(), 156);
/// assert_eq!(o[0], 1.1);
/// ```
pub fn dp_accounting_default_orders() -> Vec<f64> {
    let mut v: Vec<f64> = (1..100).map(|x| 1.0 + f64::from(x) / 10.0).collect();
    v.extend((11..64).map(f64::from));
    v.extend([128.0, 256.0, 512.0, 1024.0]);
    v
}
