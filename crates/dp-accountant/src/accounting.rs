//! From an event to `(epsilon, delta)` by the configured accountant (RDP, PLD, or one of the
//! papers' accountants: moments, zCDP, advanced, linear), with a
//! report of how the number was obtained.

use crate::answer::{AccountantConfig, AccountantKind, DeltaReport, EpsilonReport, PLD_METHOD};
use crate::error::{AccountantError, check_delta, check_positive};
use crate::events::PrivacyEvent;
use crate::pld::PldConfig;
use crate::rdp::convert::{delta_valid, epsilon_valid};

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
    config.orders().validate()?;
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
    config.orders().validate()?;
    check_positive("epsilon", epsilon)?;
    if !config.accountant().uses_rdp_shortcuts() {
        return crate::methods::delta(event, epsilon, config);
    }
    if config.accountant() == AccountantKind::Pld {
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

/// `epsilon` for validated input, by the configured accountant.
///
/// # Errors
/// For PLD, the errors of [`crate::pld::epsilon`] (e.g. a fixed-size subsampled event).
pub(crate) fn epsilon_checked(
    event: &PrivacyEvent,
    delta: f64,
    config: &AccountantConfig,
) -> Result<EpsilonReport, AccountantError> {
    match config.accountant() {
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
        AccountantKind::Moments
        | AccountantKind::Zcdp
        | AccountantKind::Advanced
        | AccountantKind::Linear => crate::methods::epsilon(event, delta, config),
    }
}
