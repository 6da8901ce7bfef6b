//! What an accounting question is asked with (which accountant, its orders and conversion) and
//! what it answers (the epsilon and delta reports).

use serde::{Deserialize, Serialize};

use crate::conversion::Conversion;
use crate::error::AccountantError;
use crate::orders::Orders;

/// The `method` string of PLD answers.
pub const PLD_METHOD: &str = "pld/connect-the-dots";

/// Which accountant answers a question.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum AccountantKind {
    /// Rényi DP with the configured orders and conversion (`docs/accountant.md`).
    #[default]
    Rdp,
    /// The privacy-loss distribution accountant (`docs/pld.md`): tighter, reports a lower
    /// bound too; Gaussian and Poisson-subsampled Gaussian events only.
    Pld,
}

impl AccountantKind {
    /// Stable name (`"rdp"`, `"pld"`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Rdp => "rdp",
            Self::Pld => "pld",
        }
    }

    /// Whether this is the default, RDP (used to keep RDP ledgers' JSON unchanged).
    pub fn is_rdp(&self) -> bool {
        *self == Self::Rdp
    }
}

/// How the accountant turns RDP into `(epsilon, delta)`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
pub struct AccountantConfig {
    /// The orders to optimise over (default: continuous).
    pub orders: Orders,
    /// The RDP to `(epsilon, delta)` conversion (default: improved).
    pub conversion: Conversion,
    /// Which accountant answers: RDP (the default; orders and conversion apply) or the
    /// privacy-loss distribution ([`AccountantKind::Pld`], default [`crate::pld::PldConfig`];
    /// orders and conversion are then unused).
    #[serde(default)]
    pub accountant: AccountantKind,
}

impl AccountantConfig {
    /// A configuration with the given orders and conversion.
    ///
    /// # Errors
    /// Any error of [`Orders::validate`].
    pub fn new(orders: Orders, conversion: Conversion) -> Result<Self, AccountantError> {
        orders.validate()?;
        Ok(Self {
            orders,
            conversion,
            accountant: AccountantKind::Rdp,
        })
    }

    /// The same configuration answered by `accountant`.
    ///
    /// # Example
    /// ```
    /// use dp_accountant::{AccountantConfig, AccountantKind, PrivacyEvent, epsilon_for_event};
    /// let run = PrivacyEvent::poisson_subsampled_gaussian(1.1, 0.01)?.self_composed(1000)?;
    /// let pld = AccountantConfig::default().with_accountant(AccountantKind::Pld);
    /// let report = epsilon_for_event(&run, 1e-5, &pld)?;
    /// assert!(report.epsilon_lower.unwrap() <= report.epsilon);
    /// # Ok::<(), dp_accountant::AccountantError>(())
    /// ```
    pub fn with_accountant(mut self, accountant: AccountantKind) -> Self {
        self.accountant = accountant;
        self
    }

    /// A short name of the method, e.g. `"rdp/improved/continuous"` or `"pld/connect-the-dots"`.
    pub fn method(&self) -> String {
        if self.accountant == AccountantKind::Pld {
            return PLD_METHOD.to_string();
        }
        let orders = match self.orders {
            Orders::Continuous => "continuous",
            Orders::DpAccountingDefault => "dp_accounting_default",
            Orders::Custom(_) => "custom",
        };
        format!("rdp/{}/{}", self.conversion.name(), orders)
    }
}

/// An `epsilon` answer with the order that achieved it and the method used.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EpsilonReport {
    /// The spent epsilon (an upper bound).
    pub epsilon: f64,
    /// The delta it is stated for.
    pub delta: f64,
    /// The Rényi order at which the conversion was tightest (NaN for PLD: no order).
    pub order: f64,
    /// The RDP of the event at `order` (NaN for PLD).
    pub rdp: f64,
    /// How it was computed, e.g. `"rdp/improved/continuous"` or `"pld/connect-the-dots"`.
    pub method: String,
    /// PLD only: a lower bound on the exact epsilon (not a guarantee; shows the tightness).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epsilon_lower: Option<f64>,
}

/// A `delta` answer with the order that achieved it and the method used.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeltaReport {
    /// The delta (an upper bound) at `epsilon`.
    pub delta: f64,
    /// The epsilon it is stated for.
    pub epsilon: f64,
    /// The Rényi order at which the conversion was tightest (NaN for PLD: no order).
    pub order: f64,
    /// How it was computed.
    pub method: String,
    /// PLD only: a lower bound on the exact value (not a guarantee; shows the tightness).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delta_lower: Option<f64>,
}
