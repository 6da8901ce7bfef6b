//! The ledger: an [`Accountant`] that records labelled privacy events, answers the spent
//! `epsilon` at any time, refuses events that would exceed a budget, and round-trips through
//! JSON with a content hash so that a run can be audited and replayed bit for bit.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::accounting::{
    AccountantConfig, AccountantKind, DeltaReport, EpsilonReport, delta_for_event, epsilon_checked,
    epsilon_valid,
};
use crate::budget::Budget;
use crate::conversion::Conversion;
use crate::error::{AccountantError, check_delta};
use crate::events::{Neighbouring, PrivacyEvent};
use crate::orders::Orders;

/// The ledger file format identifier.
pub const LEDGER_FORMAT: &str = "dp-accountant-ledger/1";

/// One recorded release.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LedgerEntry {
    /// What the release was (free text chosen by the caller, e.g. `"iteration 17: E-step"`).
    pub label: String,
    /// The privacy event accounted for.
    pub event: PrivacyEvent,
    /// Free-form notes: mechanism, sensitivity, noise std, RNG policy (`"os-chacha20"` or
    /// `"seeded:<seed>"`), clip counts, ...
    #[serde(default)]
    pub notes: BTreeMap<String, String>,
}

/// The privacy ledger.
///
/// # Example
/// ```
/// use dp_accountant::{Accountant, Budget, PrivacyEvent};
/// let mut ledger = Accountant::new();
/// let step = PrivacyEvent::poisson_subsampled_gaussian(1.1, 0.01)?;
/// let budget = Budget::new(2.0, 1e-5)?;
/// for t in 0..100 {
///     ledger.record_within(format!("step {t}"), step.clone(), &budget)?;
/// }
/// let eps = ledger.epsilon(1e-5)?;
/// assert!(eps > 0.0 && eps <= 2.0);
/// let replayed = Accountant::from_json(&ledger.to_json()?)?;
/// assert_eq!(replayed.epsilon(1e-5)?.to_bits(), eps.to_bits());
/// # Ok::<(), dp_accountant::AccountantError>(())
/// ```
///
/// # Privacy
/// The answers are upper bounds on the privacy loss of the *recorded* events composed
/// adaptively, under their common neighbouring relation (mixing relations is refused). The
/// ledger is only as truthful as what is recorded in it: every release must be recorded, with
/// the sampler and sensitivity the mechanism really used.
#[derive(Clone, Debug, Default)]
pub struct Accountant {
    config: AccountantConfig,
    entries: Vec<LedgerEntry>,
    written_by: Option<String>,
    /// The order that was optimal at the last full budget check: a cheap first try for the
    /// next one (any order gives a valid bound). Not part of the ledger's content.
    order_hint: std::cell::Cell<Option<f64>>,
}

/// Equality of the ledger's content (configuration, entries, origin); the order hint is a cache.
impl PartialEq for Accountant {
    fn eq(&self, other: &Self) -> bool {
        self.config == other.config
            && self.entries == other.entries
            && self.written_by == other.written_by
    }
}

/// The serialised form (field order fixed: it is hashed).
#[derive(Serialize, Deserialize)]
struct LedgerBody {
    format: String,
    crate_version: String,
    conversion: Conversion,
    orders: Orders,
    /// Absent (= RDP) unless another accountant is configured, so RDP ledgers keep their form.
    #[serde(default, skip_serializing_if = "AccountantKind::is_rdp")]
    accountant: AccountantKind,
    entries: Vec<LedgerEntry>,
}

#[derive(Serialize, Deserialize)]
struct LedgerFile {
    #[serde(flatten)]
    body: LedgerBody,
    content_hash: String,
}

impl Accountant {
    /// An empty ledger with the default configuration (continuous orders, improved conversion).
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty ledger with the given configuration.
    ///
    /// # Errors
    /// Any error of [`Orders::validate`].
    pub fn with_config(config: AccountantConfig) -> Result<Self, AccountantError> {
        config.orders.validate()?;
        Ok(Self {
            config,
            entries: Vec::new(),
            written_by: None,
            order_hint: std::cell::Cell::new(None),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &AccountantConfig {
        &self.config
    }

    /// The recorded entries, in order.
    pub fn entries(&self) -> &[LedgerEntry] {
        &self.entries
    }

    /// Number of recorded entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether nothing has been recorded.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The crate version that wrote the ledger this was read from (`None` if built in memory).
    pub fn written_by(&self) -> Option<&str> {
        self.written_by.as_deref()
    }

    /// The neighbouring relation of the recorded events (`None` when empty).
    pub fn neighbouring(&self) -> Option<Neighbouring> {
        self.entries
            .first()
            .and_then(|e| e.event.neighbouring().ok())
    }

    /// Records an event.
    ///
    /// # Errors
    /// The event's validation errors; [`AccountantError::MixedNeighbouring`] if its relation
    /// differs from the recorded events'. The ledger is unchanged on error.
    pub fn record(
        &mut self,
        label: impl Into<String>,
        event: PrivacyEvent,
    ) -> Result<(), AccountantError> {
        self.record_entry(LedgerEntry {
            label: label.into(),
            event,
            notes: BTreeMap::new(),
        })
    }

    /// Records an event with notes (mechanism, sensitivity, noise std, RNG policy, ...).
    ///
    /// # Errors
    /// As [`Accountant::record`].
    pub fn record_with_notes(
        &mut self,
        label: impl Into<String>,
        event: PrivacyEvent,
        notes: BTreeMap<String, String>,
    ) -> Result<(), AccountantError> {
        self.record_entry(LedgerEntry {
            label: label.into(),
            event,
            notes,
        })
    }

    /// Records a complete entry.
    ///
    /// # Errors
    /// As [`Accountant::record`].
    pub fn record_entry(&mut self, entry: LedgerEntry) -> Result<(), AccountantError> {
        self.check_compatible(&entry.event)?;
        self.entries.push(entry);
        Ok(())
    }

    /// Records an event only if the composition stays within `budget`.
    ///
    /// # Errors
    /// [`AccountantError::BudgetExceeded`] (ledger unchanged) if the spent epsilon at
    /// `budget.delta()` would exceed `budget.epsilon()`; otherwise as [`Accountant::record`].
    ///
    /// # Privacy
    /// After `Ok`, the recorded events together are `(budget.epsilon, budget.delta)`-DP.
    pub fn record_within(
        &mut self,
        label: impl Into<String>,
        event: PrivacyEvent,
        budget: &Budget,
    ) -> Result<(), AccountantError> {
        self.record_entry_within(
            LedgerEntry {
                label: label.into(),
                event,
                notes: BTreeMap::new(),
            },
            budget,
        )
    }

    /// Records a complete entry only if the composition stays within `budget`.
    ///
    /// # Errors
    /// As [`Accountant::record_within`].
    pub fn record_entry_within(
        &mut self,
        entry: LedgerEntry,
        budget: &Budget,
    ) -> Result<(), AccountantError> {
        let would = self.epsilon_with_for_budget(&entry.event, budget)?;
        if would > budget.epsilon() {
            return Err(AccountantError::BudgetExceeded {
                label: entry.label,
                would_spend: would,
                budget_epsilon: budget.epsilon(),
                delta: budget.delta(),
            });
        }
        self.entries.push(entry);
        Ok(())
    }

    /// Whether recording `event` would take the spent epsilon (at `budget.delta()`) past
    /// `budget.epsilon()`.
    ///
    /// # Errors
    /// The event's validation errors or a relation different from the recorded events'.
    pub fn would_exceed(
        &self,
        event: &PrivacyEvent,
        budget: &Budget,
    ) -> Result<bool, AccountantError> {
        Ok(self.epsilon_with_for_budget(event, budget)? > budget.epsilon())
    }

    /// The spent epsilon at `delta`.
    ///
    /// # Errors
    /// [`AccountantError::Empty`] for an empty ledger; `delta` outside `(0, 1)`.
    ///
    /// # Privacy
    /// The recorded events together are `(epsilon, delta)`-DP for the returned epsilon.
    pub fn epsilon(&self, delta: f64) -> Result<f64, AccountantError> {
        Ok(self.epsilon_report(delta)?.epsilon)
    }

    /// The spent epsilon at `delta` with the optimal order and the method.
    ///
    /// # Errors
    /// As [`Accountant::epsilon`].
    pub fn epsilon_report(&self, delta: f64) -> Result<EpsilonReport, AccountantError> {
        check_delta("delta", delta)?;
        let event = self.composed_event()?;
        epsilon_checked(&event, delta, &self.config)
    }

    /// The delta at `epsilon`.
    ///
    /// # Errors
    /// [`AccountantError::Empty`] for an empty ledger; `epsilon` not finite and `> 0`.
    pub fn delta(&self, epsilon: f64) -> Result<f64, AccountantError> {
        Ok(self.delta_report(epsilon)?.delta)
    }

    /// The delta at `epsilon` with the optimal order and the method.
    ///
    /// # Errors
    /// As [`Accountant::delta`].
    pub fn delta_report(&self, epsilon: f64) -> Result<DeltaReport, AccountantError> {
        delta_for_event(&self.composed_event()?, epsilon, &self.config)
    }

    /// The composition of everything recorded, identical events grouped into self-compositions
    /// in order of first appearance (deterministic, so replay is bit for bit).
    ///
    /// # Errors
    /// [`AccountantError::Empty`] for an empty ledger.
    pub fn composed_event(&self) -> Result<PrivacyEvent, AccountantError> {
        compose_grouped(self.entries.iter().map(|e| &e.event))
    }

    fn check_compatible(&self, event: &PrivacyEvent) -> Result<(), AccountantError> {
        if self.config.accountant == AccountantKind::Pld && contains_fixed_size(event) {
            return Err(AccountantError::Other(
                "the PLD accountant does not cover fixed-size (replace-one) sampling; use RDP"
                    .into(),
            ));
        }
        let relation = event.neighbouring()?;
        if let Some(first) = self.neighbouring()
            && first != relation
        {
            return Err(AccountantError::MixedNeighbouring {
                first,
                second: relation,
            });
        }
        Ok(())
    }

    /// An epsilon (valid upper bound) of the ledger plus `event` at the budget's delta that is
    /// either within the budget, or the fully optimised value. The conversion at the previously
    /// optimal order is tried first: if that single-order bound is already within the budget the
    /// answer is settled (a valid bound at any order suffices), which makes a long run of
    /// `record_within` cost one RDP evaluation per distinct event instead of an optimisation.
    fn epsilon_with_for_budget(
        &self,
        event: &PrivacyEvent,
        budget: &Budget,
    ) -> Result<f64, AccountantError> {
        self.check_compatible(event)?;
        let all = compose_grouped(self.entries.iter().map(|e| &e.event).chain([event]))?;
        if self.config.accountant == AccountantKind::Pld {
            return Ok(epsilon_checked(&all, budget.delta(), &self.config)?.epsilon);
        }
        if let Some(order) = self.order_hint.get() {
            let rdp = crate::rdp::rdp_valid(&all, order);
            let eps = crate::conversion::epsilon_unchecked(
                order,
                rdp,
                budget.delta().ln(),
                self.config.conversion,
            );
            if eps <= budget.epsilon() {
                return Ok(eps);
            }
        }
        let report = epsilon_valid(&all, budget.delta(), &self.config);
        self.order_hint.set(Some(report.order));
        Ok(report.epsilon)
    }

    fn body(&self) -> LedgerBody {
        LedgerBody {
            format: LEDGER_FORMAT.to_string(),
            crate_version: self
                .written_by
                .clone()
                .unwrap_or_else(|| env!("CARGO_PKG_VERSION").to_string()),
            conversion: self.config.conversion,
            orders: self.config.orders.clone(),
            accountant: self.config.accountant,
            entries: self.entries.clone(),
        }
    }

    /// The SHA-256 of the ledger's canonical JSON body, as `"sha256:<hex>"`.
    ///
    /// # Errors
    /// [`AccountantError::Other`] if serialisation fails (non-finite number in a note-free
    /// event cannot occur for validated events).
    pub fn content_hash(&self) -> Result<String, AccountantError> {
        hash_body(&self.body())
    }

    /// Serialises the ledger (format, crate version, conversion, orders, entries, content hash).
    ///
    /// # Errors
    /// [`AccountantError::Other`] if serialisation fails.
    pub fn to_json(&self) -> Result<String, AccountantError> {
        let body = self.body();
        let content_hash = hash_body(&body)?;
        serde_json::to_string_pretty(&LedgerFile { body, content_hash })
            .map_err(|e| AccountantError::Other(format!("cannot serialise ledger: {e}")))
    }

    /// Reads a ledger back, checking the format, the content hash, the configuration and every
    /// event.
    ///
    /// # Errors
    /// [`AccountantError::CorruptLedger`] for bad JSON, an unknown format, a hash mismatch, or
    /// invalid or mixed-relation events.
    pub fn from_json(json: &str) -> Result<Self, AccountantError> {
        let corrupt = |m: String| AccountantError::CorruptLedger(m);
        let file: LedgerFile =
            serde_json::from_str(json).map_err(|e| corrupt(format!("not a ledger: {e}")))?;
        if file.body.format != LEDGER_FORMAT {
            return Err(corrupt(format!("unknown format {:?}", file.body.format)));
        }
        let expected = hash_body(&file.body)?;
        if expected != file.content_hash {
            return Err(corrupt(format!(
                "content hash mismatch: file says {}, content is {expected}",
                file.content_hash
            )));
        }
        file.body
            .orders
            .validate()
            .map_err(|e| corrupt(format!("orders: {e}")))?;
        let mut ledger = Accountant {
            config: AccountantConfig {
                orders: file.body.orders,
                conversion: file.body.conversion,
                accountant: file.body.accountant,
            },
            entries: Vec::with_capacity(file.body.entries.len()),
            written_by: Some(file.body.crate_version),
            order_hint: std::cell::Cell::new(None),
        };
        for (i, entry) in file.body.entries.into_iter().enumerate() {
            ledger
                .record_entry(entry)
                .map_err(|e| corrupt(format!("entry {i}: {e}")))?;
        }
        Ok(ledger)
    }
}

fn contains_fixed_size(event: &PrivacyEvent) -> bool {
    match event {
        PrivacyEvent::FixedSizeSubsampledGaussian { .. } => true,
        PrivacyEvent::SelfComposed { event, .. } => contains_fixed_size(event),
        PrivacyEvent::Composed { events } => events.iter().any(contains_fixed_size),
        _ => false,
    }
}

fn hash_body(body: &LedgerBody) -> Result<String, AccountantError> {
    let canonical = serde_json::to_vec(body)
        .map_err(|e| AccountantError::Other(format!("cannot serialise ledger: {e}")))?;
    let digest = Sha256::digest(&canonical);
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    Ok(format!("sha256:{hex}"))
}

/// Groups identical events (first-appearance order) into a composition of self-compositions.
fn compose_grouped<'a>(
    events: impl Iterator<Item = &'a PrivacyEvent>,
) -> Result<PrivacyEvent, AccountantError> {
    let mut groups: Vec<(&PrivacyEvent, u64)> = Vec::new();
    for e in events {
        match groups.iter_mut().find(|(g, _)| *g == e) {
            Some((_, n)) => *n += 1,
            None => groups.push((e, 1)),
        }
    }
    if groups.is_empty() {
        return Err(AccountantError::Empty(
            "the ledger is empty: nothing has been spent",
        ));
    }
    let parts = groups
        .into_iter()
        .map(|(e, n)| {
            if n == 1 {
                e.clone()
            } else {
                PrivacyEvent::SelfComposed {
                    event: Box::new(e.clone()),
                    count: n,
                }
            }
        })
        .collect();
    PrivacyEvent::compose(parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_event_under_a_correct_hash_is_refused() {
        let body = LedgerBody {
            format: LEDGER_FORMAT.to_string(),
            crate_version: env!("CARGO_PKG_VERSION").to_string(),
            conversion: Conversion::Improved,
            orders: Orders::Continuous,
            accountant: AccountantKind::Rdp,
            entries: vec![LedgerEntry {
                label: "bad".into(),
                event: PrivacyEvent::PoissonSubsampledGaussian {
                    noise_multiplier: -1.0,
                    sampling_rate: 0.1,
                },
                notes: BTreeMap::new(),
            }],
        };
        let content_hash = hash_body(&body).unwrap();
        let json = serde_json::to_string(&LedgerFile { body, content_hash }).unwrap();
        assert!(matches!(
            Accountant::from_json(&json),
            Err(AccountantError::CorruptLedger(_))
        ));
    }

    #[test]
    fn orders_outside_the_domain_under_a_correct_hash_are_refused() {
        let body = LedgerBody {
            format: LEDGER_FORMAT.to_string(),
            crate_version: "0.0.0".to_string(),
            conversion: Conversion::Classic,
            orders: Orders::Custom(vec![0.5]),
            accountant: AccountantKind::Rdp,
            entries: vec![],
        };
        let content_hash = hash_body(&body).unwrap();
        let json = serde_json::to_string(&LedgerFile { body, content_hash }).unwrap();
        assert!(matches!(
            Accountant::from_json(&json),
            Err(AccountantError::CorruptLedger(_))
        ));
    }
}
