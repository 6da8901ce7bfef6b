//! # dp-accountant
//!
//! An auditable privacy accountant: privacy events, Rényi-DP curves, zCDP, the moments
//! accountant, conversions to `(epsilon, delta)`, calibration, and a replayable ledger.
//!
//! The crate is pure arithmetic: no linear algebra and no random numbers, so that someone who
//! must sign off on a deployment can read it alone. See `docs/accountant.md` in the workspace for
//! every formula with its reference and the direction of every approximation.
//!
//! # Privacy
//! Every number this crate returns is an upper bound on the privacy loss of the events it is given
//! (it rounds toward the private side), under the neighbouring relation each event states.

mod error;
mod events;
pub mod pld;

pub use error::AccountantError;
pub use events::{Neighbouring, PrivacyEvent};
