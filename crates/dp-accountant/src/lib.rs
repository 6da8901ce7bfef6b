//! # dp-accountant
//!
//! An auditable privacy accountant: privacy events, Rényi-DP curves, zCDP, the moments
//! accountant, conversions to `(epsilon, delta)`, calibration, and a replayable ledger.
//!
//! The crate is pure arithmetic: no linear algebra and no random numbers, so that someone who
//! must sign off on a deployment can read it alone. See `docs/accountant.md` in the workspace for
//! every formula with its reference and the direction of every approximation.
//!
//! ```
//! use dp_accountant::{Accountant, PrivacyEvent};
//! let mut ledger = Accountant::new();
//! ledger.record("training", PrivacyEvent::poisson_subsampled_gaussian(1.1, 0.01)?.self_composed(1000)?)?;
//! let report = ledger.epsilon_report(1e-5)?;
//! println!("eps = {:.4} at order {:.2} ({})", report.epsilon, report.order, report.method);
//! # Ok::<(), dp_accountant::AccountantError>(())
//! ```
//!
//! # Privacy
//! Every number this crate returns is an upper bound on the privacy loss of the events it is given
//! (it rounds toward the private side), under the neighbouring relation each event states, for
//! every valid input (noise multipliers down to the smallest positive `f64`, any number of
//! steps). Where the true loss is unbounded or beyond the range of `f64`, epsilon (and RDP,
//! `rho`) is `f64::INFINITY` and delta is 1 — never NaN, never a finite value below the truth
//! (`docs/accountant.md`, section 0). Requests too large to compute are refused with
//! [`AccountantError::ResourceLimit`] before anything is allocated.

mod accounting;
mod answer;
pub mod baselines;
mod budget;
pub mod calibrate;
pub mod cli;
pub mod conversion;
mod error;
mod events;
mod extra;
mod ledger;
mod methods;
pub mod moments;
pub mod normal;
mod numeric;
mod optimize;
mod orders;
pub mod pld;
pub mod rdp;
mod running;
pub mod zcdp;

pub use accounting::{delta_for_event, epsilon_for_event};
pub use answer::{
    AccountantConfig, AccountantConfigBuilder, AccountantKind, DeltaReport, EpsilonReport,
};
pub use budget::Budget;
pub use calibrate::{Calibration, Sampling, StepsReport, calibrate_noise_multiplier, max_steps};
pub use conversion::Conversion;
pub use error::{AccountantError, LedgerFault, SharedError, Unreachable};
pub use events::{Neighbouring, PrivacyEvent};
pub use extra::{EXTRA_DELTA_NOTE, EXTRA_EPSILON_NOTE, ExtraPrivacy};
pub use ledger::{Accountant, LEDGER_FORMAT, LedgerEntry};
pub use orders::{Orders, dp_accounting_default_orders};

/// The README's examples, compiled and run as doctests so the README stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
