//! What an accounting question is asked with (which accountant, its orders and conversion) and
//! what it answers (the epsilon and delta reports).

use serde::{Deserialize, Serialize};

use crate::conversion::Conversion;
use crate::error::AccountantError;
use crate::orders::Orders;

/// The `method` string of PLD answers.
pub const PLD_METHOD: &str = "pld/connect-the-dots";

/// The `method` string of moments-accountant answers.
pub const MOMENTS_METHOD: &str = "moments/003-integer";
/// The `method` string of 000 (zCDP + amplification) answers.
pub const ZCDP_METHOD: &str = "zcdp/000-table1";
/// The `method` string of advanced-composition answers.
pub const ADVANCED_METHOD: &str = "advanced/dwork-roth-3.20";
/// The `method` string of linear-composition answers.
pub const LINEAR_METHOD: &str = "linear/dwork-roth-3.16";

/// Which accountant answers a question, in calibration and accounting alike
/// (`docs/accountant.md`, sections 9 and 11).
///
/// `#[non_exhaustive]`: a later accountant can be added without breaking a caller's `match`
/// (match with a wildcard arm, or iterate [`AccountantKind::ALL`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum AccountantKind {
    /// Rényi DP with the configured orders and conversion (`docs/accountant.md`).
    #[default]
    Rdp,
    /// The privacy-loss distribution accountant (`docs/pld.md`): tighter, reports a lower
    /// bound too; Gaussian and Poisson-subsampled Gaussian events only.
    Pld,
    /// The moments accountant of 003 (Sec. 2.3.1, Eq. 3-4): log moments at the integer
    /// `lambda = 1..=1024` (RDP orders `2..=1025`), composed by addition and converted by
    /// `eps = min_lambda (alpha(lambda) + ln(1/delta)) / lambda`; any event
    /// ([`crate::moments::moments_epsilon_for_event`]). Never tighter than [`Self::Rdp`] with the
    /// default continuous orders and improved conversion (it is their restriction to integer
    /// orders with the classic conversion).
    Moments,
    /// 000's accounting (Table 1, Eq. 11-14): each step's Gaussian is `(eps_iter, delta_iter)`-DP
    /// by the classic calibration (Eq. 11), amplified by subsampling (Eq. 12), treated as a
    /// Gaussian of the same `(eps', delta')` in zCDP (Eq. 13), composed and converted back
    /// (Prop. 4). That treatment is not a proof, so the answer is the larger of it and the
    /// RDP bound (`docs/accountant.md`, section 11); any event.
    Zcdp,
    /// Advanced composition (Dwork & Roth 2014, Thm 3.20) of the steps, each `(eps', delta')`-DP
    /// by the exact Gaussian profile (Balle & Wang 2018) amplified by subsampling (000 Thm 1);
    /// the delta split between the steps and the slack is optimised. Any event.
    Advanced,
    /// Linear composition (Dwork & Roth 2014, Thm 3.16) of the same amplified `(eps', delta')`
    /// steps as [`Self::Advanced`]. Any event.
    Linear,
}

impl AccountantKind {
    /// Every accountant, RDP first.
    pub const ALL: [AccountantKind; 6] = [
        Self::Rdp,
        Self::Pld,
        Self::Moments,
        Self::Zcdp,
        Self::Advanced,
        Self::Linear,
    ];

    /// Stable name (`"rdp"`, `"pld"`, `"moments"`, `"zcdp"`, `"advanced"`, `"linear"`), as in
    /// the ledger JSON and the `--accountant` flags.
    pub fn name(self) -> &'static str {
        match self {
            Self::Rdp => "rdp",
            Self::Pld => "pld",
            Self::Moments => "moments",
            Self::Zcdp => "zcdp",
            Self::Advanced => "advanced",
            Self::Linear => "linear",
        }
    }

    /// Whether this is the default, RDP (used to keep RDP ledgers' JSON unchanged).
    pub fn is_rdp(&self) -> bool {
        *self == Self::Rdp
    }

    /// Whether the answers come from RDP curves optimised over the configured orders and
    /// conversion (RDP only; PLD uses them as a fast pre-check since it is never looser).
    pub(crate) fn uses_rdp_shortcuts(self) -> bool {
        matches!(self, Self::Rdp | Self::Pld)
    }
}

impl std::fmt::Display for AccountantKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for AccountantKind {
    type Err = AccountantError;

    /// Parses a stable name ([`AccountantKind::name`]).
    ///
    /// # Example
    /// ```
    /// use dp_accountant::AccountantKind;
    /// assert_eq!("zcdp".parse::<AccountantKind>()?, AccountantKind::Zcdp);
    /// assert!("renyi".parse::<AccountantKind>().is_err());
    /// # Ok::<(), dp_accountant::AccountantError>(())
    /// ```
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| AccountantError::UnknownAccountant {
                given: s.chars().take(80).collect(),
            })
    }
}

/// How the accountant turns RDP into `(epsilon, delta)`, and which accountant answers.
///
/// Valid by construction: the fields are private, every constructor checks them (the orders,
/// [`Orders::validate`]), and a deserialised configuration is checked the same way (an invalid
/// one is a deserialisation error). The JSON form is unchanged:
/// `{"orders": ..., "conversion": ..., "accountant": ...}` (`accountant` optional, RDP).
///
/// # Example
/// ```
/// use dp_accountant::{AccountantConfig, AccountantKind, Conversion, Orders};
/// let config = AccountantConfig::builder()
///     .orders(Orders::DpAccountingDefault)
///     .conversion(Conversion::Classic)
///     .accountant(AccountantKind::Zcdp)
///     .build()?;
/// assert_eq!(config.accountant(), AccountantKind::Zcdp);
/// assert!(AccountantConfig::builder().orders(Orders::Custom(vec![0.5])).build().is_err());
/// let bad = r#"{"orders": {"kind": "custom", "orders": []}, "conversion": "improved"}"#;
/// assert!(serde_json::from_str::<AccountantConfig>(bad).is_err());
/// # Ok::<(), dp_accountant::AccountantError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
#[serde(try_from = "AccountantConfigData", into = "AccountantConfigData")]
pub struct AccountantConfig {
    orders: Orders,
    conversion: Conversion,
    accountant: AccountantKind,
}

/// The serialised form of [`AccountantConfig`] (unchecked; checked by `TryFrom`).
#[derive(Clone, Serialize, Deserialize)]
struct AccountantConfigData {
    orders: Orders,
    conversion: Conversion,
    #[serde(default)]
    accountant: AccountantKind,
}

impl TryFrom<AccountantConfigData> for AccountantConfig {
    type Error = AccountantError;

    fn try_from(d: AccountantConfigData) -> Result<Self, AccountantError> {
        AccountantConfig::builder()
            .orders(d.orders)
            .conversion(d.conversion)
            .accountant(d.accountant)
            .build()
    }
}

impl From<AccountantConfig> for AccountantConfigData {
    fn from(c: AccountantConfig) -> Self {
        Self {
            orders: c.orders,
            conversion: c.conversion,
            accountant: c.accountant,
        }
    }
}

/// Builds an [`AccountantConfig`], checked by [`AccountantConfigBuilder::build`]; unset fields
/// keep their defaults (continuous orders, improved conversion, RDP).
#[derive(Clone, Debug, Default)]
#[must_use]
pub struct AccountantConfigBuilder {
    orders: Orders,
    conversion: Conversion,
    accountant: AccountantKind,
}

impl AccountantConfigBuilder {
    /// The orders to optimise over (default: continuous).
    pub fn orders(mut self, orders: Orders) -> Self {
        self.orders = orders;
        self
    }

    /// The RDP to `(epsilon, delta)` conversion (default: improved).
    pub fn conversion(mut self, conversion: Conversion) -> Self {
        self.conversion = conversion;
        self
    }

    /// Which accountant answers (default: RDP).
    pub fn accountant(mut self, accountant: AccountantKind) -> Self {
        self.accountant = accountant;
        self
    }

    /// The checked configuration.
    ///
    /// # Errors
    /// Any error of [`Orders::validate`]: [`AccountantError::Empty`] for an empty custom order
    /// list, [`AccountantError::InvalidParameter`] for an order that is not finite and `> 1`.
    pub fn build(self) -> Result<AccountantConfig, AccountantError> {
        self.orders.validate()?;
        Ok(AccountantConfig {
            orders: self.orders,
            conversion: self.conversion,
            accountant: self.accountant,
        })
    }
}

impl AccountantConfig {
    /// A builder starting from the defaults.
    pub fn builder() -> AccountantConfigBuilder {
        AccountantConfigBuilder::default()
    }

    /// A configuration with the given orders and conversion (RDP).
    ///
    /// # Errors
    /// Any error of [`Orders::validate`].
    pub fn new(orders: Orders, conversion: Conversion) -> Result<Self, AccountantError> {
        Self::builder()
            .orders(orders)
            .conversion(conversion)
            .build()
    }

    /// The orders to optimise over (default: continuous).
    pub fn orders(&self) -> &Orders {
        &self.orders
    }

    /// The RDP to `(epsilon, delta)` conversion (default: improved).
    pub fn conversion(&self) -> Conversion {
        self.conversion
    }

    /// Which accountant answers: RDP (the default; orders and conversion apply), the
    /// privacy-loss distribution ([`AccountantKind::Pld`], default [`crate::pld::PldConfig`];
    /// orders and conversion are then unused), or one of the papers' accountants (moments,
    /// zCDP, advanced, linear; the orders and conversion then only configure the RDP bound the
    /// zCDP answer is capped by).
    pub fn accountant(&self) -> AccountantKind {
        self.accountant
    }

    /// The same configuration answered by `accountant` (any accountant is valid with any
    /// orders and conversion).
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

    /// The same configuration with another conversion (any conversion is valid).
    pub fn with_conversion(mut self, conversion: Conversion) -> Self {
        self.conversion = conversion;
        self
    }

    /// A short name of the method, e.g. `"rdp/improved/continuous"` or `"pld/connect-the-dots"`.
    pub fn method(&self) -> String {
        match self.accountant {
            AccountantKind::Rdp => {}
            AccountantKind::Pld => return PLD_METHOD.to_string(),
            AccountantKind::Moments => return MOMENTS_METHOD.to_string(),
            AccountantKind::Zcdp => return ZCDP_METHOD.to_string(),
            AccountantKind::Advanced => return ADVANCED_METHOD.to_string(),
            AccountantKind::Linear => return LINEAR_METHOD.to_string(),
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
