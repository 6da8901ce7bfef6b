//! From an event to `(epsilon, delta)`: RDP curve, order optimisation and conversion in one
//! call, with a report of how the number was obtained.

use serde::{Deserialize, Serialize};

use crate::conversion::Conversion;
use crate::error::{AccountantError, check_delta, check_positive};
use crate::events::PrivacyEvent;
use crate::optimize::{self, Optimum};
use crate::orders::Orders;
use crate::pld::PldConfig;
use crate::rdp::RdpEvaluator;

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

/// The spent `epsilon` of `event` at `delta`.
///
/// # Example
/// ```
/// use dp_accountant::{AccountantConfig, PrivacyEvent, epsilon_for_event};
/// let run = PrivacyEvent::poisson_subsampled_gaussian(1.1, 0.01)?.self_composed(1000)?;
/// let report = epsilon_for_event(&run, 1e-5, &AccountantConfig::default())?;
/// assert!(report.epsilon > 1.0 && report.epsilon < 2.5);
/// # Ok::<(), dp_accountant::AccountantError>(())
/// ```
///
/// # Errors
/// Validation errors of the event or config; `delta` outside `(0, 1)`; for PLD,
/// [`AccountantError::ResourceLimit`] beyond `2^30` composed mechanism runs.
///
/// # Privacy
/// The event is `(epsilon, delta)`-DP under its neighbouring relation for the returned epsilon,
/// which is `f64::INFINITY` where no finite epsilon is certified (e.g. a noise multiplier whose
/// `1/(2 sigma^2)` overflows); never NaN, never below the truth.
pub fn epsilon_for_event(
    event: &PrivacyEvent,
    delta: f64,
    config: &AccountantConfig,
) -> Result<EpsilonReport, AccountantError> {
    event.validate()?;
    config.orders.validate()?;
    check_delta("delta", delta)?;
    epsilon_checked(event, delta, config)
}

/// The `delta` of `event` at `epsilon`.
///
/// # Example
/// ```
/// use dp_accountant::{AccountantConfig, PrivacyEvent, delta_for_event};
/// let run = PrivacyEvent::poisson_subsampled_gaussian(1e-300, 0.01)?.self_composed(1000)?;
/// // no noise to speak of: the record is exposed whenever it is sampled
/// assert_eq!(delta_for_event(&run, 1.0, &AccountantConfig::default())?.delta, 1.0);
/// # Ok::<(), dp_accountant::AccountantError>(())
/// ```
///
/// # Errors
/// Validation errors of the event or config; `epsilon` not finite and `> 0`; for PLD,
/// [`AccountantError::ResourceLimit`] beyond `2^30` composed mechanism runs.
///
/// # Privacy
/// The event is `(epsilon, delta)`-DP under its neighbouring relation for the returned delta
/// (in `[0, 1]`, never below the truth).
pub fn delta_for_event(
    event: &PrivacyEvent,
    epsilon: f64,
    config: &AccountantConfig,
) -> Result<DeltaReport, AccountantError> {
    event.validate()?;
    config.orders.validate()?;
    check_positive("epsilon", epsilon)?;
    if config.accountant == AccountantKind::Pld {
        let b = crate::pld::delta(event, epsilon, &PldConfig::default())?;
        return Ok(DeltaReport {
            delta: b.upper,
            epsilon,
            order: f64::NAN,
            method: PLD_METHOD.to_string(),
            delta_lower: Some(b.lower),
        });
    }
    Ok(delta_valid(event, epsilon, config))
}

/// `delta` for validated input by RDP (whatever the configured accountant).
pub(crate) fn delta_valid(
    event: &PrivacyEvent,
    epsilon: f64,
    config: &AccountantConfig,
) -> DeltaReport {
    let evaluator = std::cell::RefCell::new(RdpEvaluator::new(event));
    let rdp = |a: f64| evaluator.borrow_mut().eval(a);
    let opt = match config.orders.grid() {
        None => optimize::ln_delta_continuous(&rdp, epsilon, config.conversion),
        Some(grid) => {
            let curve = crate::rdp::curve_valid(event, &grid);
            optimize::ln_delta_grid(&curve, &grid, epsilon, config.conversion)
        }
    };
    DeltaReport {
        // NaN (never expected) answers 1, the trivial bound
        delta: if opt.value.is_nan() {
            1.0
        } else {
            opt.value.exp().min(1.0)
        },
        epsilon,
        order: opt.order,
        method: config.method(),
        delta_lower: None,
    }
}

/// `epsilon` for validated input, by the configured accountant.
///
/// # Errors
/// For PLD, the errors of [`crate::pld::epsilon`] (e.g. a fixed-size subsampled event).
pub(crate) fn epsilon_checked(
    event: &PrivacyEvent,
    delta: f64,
    config: &AccountantConfig,
) -> Result<EpsilonReport, AccountantError> {
    match config.accountant {
        AccountantKind::Rdp => Ok(epsilon_valid(event, delta, config)),
        AccountantKind::Pld => {
            let b = crate::pld::epsilon(event, delta, &PldConfig::default())?;
            Ok(EpsilonReport {
                epsilon: b.upper,
                delta,
                order: f64::NAN,
                rdp: f64::NAN,
                method: PLD_METHOD.to_string(),
                epsilon_lower: Some(b.lower),
            })
        }
    }
}

/// `epsilon` for validated input by RDP (whatever the configured accountant).
pub(crate) fn epsilon_valid(
    event: &PrivacyEvent,
    delta: f64,
    config: &AccountantConfig,
) -> EpsilonReport {
    let evaluator = std::cell::RefCell::new(RdpEvaluator::new(event));
    let rdp = |a: f64| evaluator.borrow_mut().eval(a);
    let ln_delta = delta.ln();
    let Optimum { value, order } = match config.orders.grid() {
        None => optimize::epsilon_continuous(&rdp, ln_delta, config.conversion),
        Some(grid) => {
            let curve = crate::rdp::curve_valid(event, &grid);
            optimize::epsilon_grid(&curve, &grid, ln_delta, config.conversion)
        }
    };
    EpsilonReport {
        epsilon: value,
        delta,
        order,
        rdp: rdp(order),
        method: config.method(),
        epsilon_lower: None,
    }
}
