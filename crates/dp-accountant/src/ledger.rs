//! The ledger: an [`Accountant`] that records labelled privacy events, answers the spent
//! `epsilon` at any time, refuses events that would exceed a budget, and round-trips through
//! JSON with a content hash so that a run can be audited and replayed bit for bit.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::accounting::{delta_for_event, epsilon_checked};
use crate::answer::{AccountantConfig, AccountantKind, DeltaReport, EpsilonReport};
use crate::budget::Budget;
use crate::conversion::Conversion;
use crate::error::{AccountantError, LedgerFault, check_delta};
use crate::events::{Neighbouring, PrivacyEvent};
use crate::orders::Orders;
use crate::rdp::convert::epsilon_valid;
use crate::running::{Extra, Grouped};

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
    /// `"seeded:<seed>"`), clip counts, ... Shared (`Arc`) so that a run of many releases of one
    /// kind stores its notes once, not once per entry; serialised as a plain JSON object.
    #[serde(default)]
    pub notes: Arc<BTreeMap<String, String>>,
}

/// The privacy ledger.
///
/// Besides its entries it keeps the distinct events with their counts, so checks and answers
/// cost O(distinct events), not O(entries) (docs/accountant.md, section 10).
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
    order_hint: Cell<Option<f64>>,
    /// The distinct recorded events with their counts (a function of `entries`, kept up to
    /// date by every record).
    state: Grouped,
    /// Answers remembered for the current state (docs/accountant.md, section 10).
    caches: RefCell<Caches>,
}

/// How many exact answers are remembered per kind (different deltas or epsilons).
const CACHED_ANSWERS: usize = 4;

/// Answers remembered between calls. Every entry names the state it belongs to by the number of
/// entries then recorded (entries are only ever appended, so the count identifies the state).
#[derive(Clone, Debug, Default)]
struct Caches {
    /// Exact `epsilon_report`s: `(delta bits, entries, report)`.
    epsilon: Vec<(u64, usize, EpsilonReport)>,
    /// Exact `delta_report`s: `(epsilon bits, entries, report)`.
    delta: Vec<(u64, usize, DeltaReport)>,
    /// The exact report a budget check computed for the state after recording `event` (handed
    /// to `epsilon` once that record happens).
    pending: Option<(usize, PrivacyEvent, EpsilonReport)>,
    /// RDP orders of [`Accountant::epsilon_tracked`], by delta.
    tracked: Vec<Tracked>,
    /// Bounds (PLD or a papers' accountant) covering further copies of one event, by delta.
    certificates: Vec<Certificate>,
}

/// The order that was optimal for `delta` at the state of `at_len` entries with `distinct`
/// distinct events.
#[derive(Clone, Debug)]
struct Tracked {
    delta_bits: u64,
    order: f64,
    at_len: usize,
    distinct: usize,
}

/// `epsilon` is the configured accountant's upper bound (PLD, moments, zCDP, advanced or linear)
/// at `delta` for the state of `at_len` entries plus `copies` more of `event` (which it then held
/// `count0` times). By monotonicity (dropping mechanisms from a composition is post-processing)
/// it bounds every state reached from there by recording at most `copies` more of `event` and
/// nothing else.
#[derive(Clone, Debug)]
struct Certificate {
    delta_bits: u64,
    at_len: usize,
    event: PrivacyEvent,
    count0: u64,
    copies: u64,
    epsilon: f64,
}

/// Refresh period of [`Accountant::epsilon_tracked`] under RDP: the order is re-optimised once
/// the ledger has grown by more than `1/TRACK_RDP_WINDOW` since the last optimisation.
const TRACK_RDP_WINDOW: usize = 256;
/// Look-ahead of the PLD certificates: `max(1, entries / PLD_LOOKAHEAD)` further copies.
const PLD_LOOKAHEAD: usize = 16;

fn lookahead(entries: usize) -> u64 {
    (entries / PLD_LOOKAHEAD).max(1) as u64
}

/// Inserts `(key, len, value)` into a small cache, dropping stale states and the oldest entry.
fn remember<T>(cache: &mut Vec<(u64, usize, T)>, key: u64, len: usize, value: T) {
    cache.retain(|(k, l, _)| *l == len && *k != key);
    if cache.len() >= CACHED_ANSWERS {
        cache.remove(0);
    }
    cache.push((key, len, value));
}

fn recall<T: Clone>(cache: &[(u64, usize, T)], key: u64, len: usize) -> Option<T> {
    cache
        .iter()
        .find(|(k, l, _)| *k == key && *l == len)
        .map(|(_, _, v)| v.clone())
}

/// Equality of the ledger's content (configuration, entries, origin); the order hint, the
/// running state (a function of the entries) and the remembered answers are caches.
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

/// [`LedgerBody`] by reference, for writing and hashing without copying the entries (the same
/// fields, attributes and order, so the same bytes).
#[derive(Serialize)]
struct LedgerBodyRef<'a> {
    format: &'a str,
    crate_version: &'a str,
    conversion: Conversion,
    orders: &'a Orders,
    #[serde(skip_serializing_if = "AccountantKind::is_rdp")]
    accountant: AccountantKind,
    entries: &'a [LedgerEntry],
}

#[derive(Serialize)]
struct LedgerFileRef<'a> {
    #[serde(flatten)]
    body: LedgerBodyRef<'a>,
    content_hash: &'a str,
}

impl LedgerBody {
    fn as_ref(&self) -> LedgerBodyRef<'_> {
        LedgerBodyRef {
            format: &self.format,
            crate_version: &self.crate_version,
            conversion: self.conversion,
            orders: &self.orders,
            accountant: self.accountant,
            entries: &self.entries,
        }
    }
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
        config.orders().validate()?;
        Ok(Self {
            config,
            entries: Vec::new(),
            written_by: None,
            order_hint: Cell::new(None),
            state: Grouped::default(),
            caches: RefCell::default(),
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
            notes: Arc::default(),
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
            notes: Arc::new(notes),
        })
    }

    /// Records a complete entry.
    ///
    /// # Errors
    /// As [`Accountant::record`].
    pub fn record_entry(&mut self, entry: LedgerEntry) -> Result<(), AccountantError> {
        self.check_compatible(&entry.event)?;
        self.push(entry);
        Ok(())
    }

    /// Appends a checked entry and updates the running state (O(1) for a repeated event).
    fn push(&mut self, entry: LedgerEntry) {
        let caches = self.caches.get_mut();
        if let Some((at, event, report)) = caches.pending.take()
            && at == self.entries.len()
            && event == entry.event
        {
            let len = self.entries.len() + 1;
            remember(&mut caches.epsilon, report.delta.to_bits(), len, report);
        }
        self.state.record(&entry.event);
        self.entries.push(entry);
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
                notes: Arc::default(),
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
        self.push(entry);
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
    /// Fully optimised and bit-identical to composing every entry afresh; remembered per delta
    /// for the current state (asking again before the next record costs nothing). After every
    /// release of a long run, [`Accountant::epsilon_tracked`] is the cheap alternative.
    ///
    /// # Errors
    /// As [`Accountant::epsilon`].
    pub fn epsilon_report(&self, delta: f64) -> Result<EpsilonReport, AccountantError> {
        check_delta("delta", delta)?;
        let len = self.entries.len();
        if let Some(report) = recall(&self.caches.borrow().epsilon, delta.to_bits(), len) {
            return Ok(report);
        }
        let event = self.composed_event()?;
        let report = epsilon_checked(&event, delta, &self.config)?;
        remember(
            &mut self.caches.borrow_mut().epsilon,
            delta.to_bits(),
            len,
            report.clone(),
        );
        Ok(report)
    }

    /// A valid upper bound on the spent epsilon at `delta`, cheap enough to call after every
    /// release of a long run (a progress report); [`Accountant::epsilon`] is the optimised
    /// answer to report at the end.
    ///
    /// It equals [`Accountant::epsilon`] whenever that answer is remembered for the current
    /// state (e.g. right after `epsilon` or a budget check that optimised). Otherwise:
    /// - RDP: the conversion, for the current state, at the order that was optimal for `delta`
    ///   at an earlier state; the order is re-optimised (and the answer is then exactly
    ///   `epsilon(delta)`) when a new distinct event was recorded or the ledger grew by more
    ///   than 1/256 since. Cost: O(distinct events) per call, one optimisation per 1/256 growth.
    /// - PLD: the PLD upper bound of the state plus up to `max(1, entries/16)` further copies of
    ///   the last recorded event, computed once and answered while only that event is recorded
    ///   (at most ~6% more steps than the truth, i.e. looser by about that much).
    /// - Moments, zCDP, advanced, linear: the exact answer ([`Accountant::epsilon`]).
    ///
    /// The value can depend on which calls were made before (not only on the entries), so it is
    /// not the figure to audit or replay: use [`Accountant::epsilon`] for that.
    ///
    /// # Example
    /// ```
    /// use dp_accountant::{Accountant, PrivacyEvent};
    /// let mut ledger = Accountant::new();
    /// let step = PrivacyEvent::poisson_subsampled_gaussian(1.0, 1e-3)?;
    /// for t in 0..2000 {
    ///     ledger.record(format!("step {t}"), step.clone())?;
    ///     let progress = ledger.epsilon_tracked(1e-5)?;
    ///     assert!(progress.is_finite());
    /// }
    /// // essentially the optimised answer, at a fraction of the cost
    /// let (tracked, exact) = (ledger.epsilon_tracked(1e-5)?, ledger.epsilon(1e-5)?);
    /// assert!((tracked - exact).abs() <= 1e-3 * exact);
    /// # Ok::<(), dp_accountant::AccountantError>(())
    /// ```
    ///
    /// # Errors
    /// As [`Accountant::epsilon`].
    ///
    /// # Privacy
    /// The recorded events together are `(epsilon, delta)`-DP for the returned epsilon (an
    /// upper bound, possibly above the optimised [`Accountant::epsilon`]).
    pub fn epsilon_tracked(&self, delta: f64) -> Result<f64, AccountantError> {
        check_delta("delta", delta)?;
        let len = self.entries.len();
        let bits = delta.to_bits();
        if let Some(report) = recall(&self.caches.borrow().epsilon, bits, len) {
            return Ok(report.epsilon);
        }
        let Some(last) = self.entries.last() else {
            return self.epsilon(delta);
        };
        if !self.config.accountant().uses_rdp_shortcuts() {
            // the papers' accountants are closed forms over the distinct events: the exact answer
            return self.epsilon(delta);
        }
        if self.config.accountant() == AccountantKind::Pld {
            if let Some(eps) = self.certified(bits, None) {
                return Ok(eps);
            }
            return match self.certify(&last.event, delta, lookahead(len)) {
                Ok(eps) => Ok(eps),
                Err(_) => self.epsilon(delta),
            };
        }
        let tracked = self
            .caches
            .borrow()
            .tracked
            .iter()
            .find(|t| t.delta_bits == bits)
            .cloned();
        if let Some(t) = tracked
            && t.distinct == self.state.distinct()
            && len - t.at_len <= t.at_len / TRACK_RDP_WINDOW
        {
            let rdp = self.state.rdp_at(None, t.order);
            return Ok(crate::conversion::epsilon_unchecked(
                t.order,
                rdp,
                delta.ln(),
                self.config.conversion(),
            ));
        }
        let report = self.epsilon_report(delta)?;
        let mut caches = self.caches.borrow_mut();
        caches.tracked.retain(|t| t.delta_bits != bits);
        if caches.tracked.len() >= CACHED_ANSWERS {
            caches.tracked.remove(0);
        }
        caches.tracked.push(Tracked {
            delta_bits: bits,
            order: report.order,
            at_len: len,
            distinct: self.state.distinct(),
        });
        Ok(report.epsilon)
    }

    /// A remembered bound at delta (bits) covering the current state plus `candidate`.
    fn certified(&self, delta_bits: u64, candidate: Option<&PrivacyEvent>) -> Option<f64> {
        let len = self.entries.len() + usize::from(candidate.is_some());
        let caches = self.caches.borrow();
        caches
            .certificates
            .iter()
            .filter(|c| c.delta_bits == delta_bits && c.at_len <= len)
            .find(|c| {
                let added = (len - c.at_len) as u64;
                let count = self.state.count(&c.event) + u64::from(candidate == Some(&c.event));
                added <= c.copies && count.checked_sub(c.count0) == Some(added)
            })
            .map(|c| c.epsilon)
    }

    /// Computes and remembers the configured accountant's bound of the state plus `copies` of
    /// `event` at `delta`.
    fn certify(
        &self,
        event: &PrivacyEvent,
        delta: f64,
        copies: u64,
    ) -> Result<f64, AccountantError> {
        let ahead = self.state.composed(Some(Extra { event, copies }))?;
        let epsilon = epsilon_checked(&ahead, delta, &self.config)?.epsilon;
        let mut caches = self.caches.borrow_mut();
        let len = self.entries.len();
        caches
            .certificates
            .retain(|c| c.delta_bits != delta.to_bits());
        if caches.certificates.len() >= CACHED_ANSWERS {
            caches.certificates.remove(0);
        }
        caches.certificates.push(Certificate {
            delta_bits: delta.to_bits(),
            at_len: len,
            event: event.clone(),
            count0: self.state.count(event),
            copies,
            epsilon,
        });
        Ok(epsilon)
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
        let len = self.entries.len();
        if let Some(report) = recall(&self.caches.borrow().delta, epsilon.to_bits(), len) {
            return Ok(report);
        }
        let report = delta_for_event(&self.composed_event()?, epsilon, &self.config)?;
        remember(
            &mut self.caches.borrow_mut().delta,
            epsilon.to_bits(),
            len,
            report.clone(),
        );
        Ok(report)
    }

    /// The composition of everything recorded, identical events grouped into self-compositions
    /// in order of first appearance (deterministic, so replay is bit for bit). Built from the
    /// running state: O(distinct events), whatever the number of entries.
    ///
    /// # Errors
    /// [`AccountantError::Empty`] for an empty ledger.
    pub fn composed_event(&self) -> Result<PrivacyEvent, AccountantError> {
        self.state.composed(None)
    }

    fn check_compatible(&self, event: &PrivacyEvent) -> Result<(), AccountantError> {
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
    /// either within the budget, or the configured accountant's answer. Cost per call in a long
    /// run of one event: O(distinct events), no composition of the entries (amortised: one
    /// accountant evaluation per `entries/16` releases, see below).
    ///
    /// 1. RDP and PLD: the RDP conversion at the previously optimal order (the order hint) is
    ///    tried first, with each distinct event's RDP at that order remembered: if that
    ///    single-order bound is already within the budget the answer is settled (a valid bound at
    ///    any order suffices; PLD is never looser than RDP).
    /// 2. RDP: the fully optimised answer (which also refreshes the hint).
    /// 3. PLD, moments, zCDP, advanced, linear: a remembered bound of the configured accountant
    ///    for the state plus further copies of `event` (see [`Certificate`]); else a new one
    ///    looking `entries/16` copies ahead; if that one does not fit, the exact answer of the
    ///    configured accountant for the state plus `event` decides. The papers' accountants are
    ///    never decided by an RDP bound (they are looser than RDP, and the ledger must refuse
    ///    what its own accountant's answer would put over the budget).
    ///
    /// Steps 1 and 3 may accept where the old recomposition accepted or where another valid bound
    /// fits; they refuse only where the configured accountant's exact answer exceeds the budget.
    fn epsilon_with_for_budget(
        &self,
        event: &PrivacyEvent,
        budget: &Budget,
    ) -> Result<f64, AccountantError> {
        self.check_compatible(event)?;
        let extra = Some(Extra { event, copies: 1 });
        let delta = budget.delta();
        if !self.config.accountant().uses_rdp_shortcuts() {
            return self.certified_or_exact(event, budget);
        }
        if let Some(order) = self.order_hint.get() {
            let rdp = self.state.rdp_at(extra, order);
            let eps = crate::conversion::epsilon_unchecked(
                order,
                rdp,
                delta.ln(),
                self.config.conversion(),
            );
            if eps <= budget.epsilon() {
                return Ok(eps);
            }
        }
        if self.config.accountant() == AccountantKind::Pld {
            if self.order_hint.get().is_none() {
                let all = self.state.composed(extra)?;
                let report = epsilon_valid(&all, delta, &self.config);
                self.order_hint.set(Some(report.order));
                if report.epsilon <= budget.epsilon() {
                    return Ok(report.epsilon);
                }
            }
            return self.certified_or_exact(event, budget);
        }
        let all = self.state.composed(extra)?;
        let report = epsilon_valid(&all, delta, &self.config);
        self.order_hint.set(Some(report.order));
        Ok(self.hold_pending(event, report))
    }

    /// The configured accountant's bound for the state plus `event` at the budget's delta: a
    /// remembered certificate or a new one looking ahead if it fits the budget, else the exact
    /// answer (step 3 of [`Accountant::epsilon_with_for_budget`]).
    fn certified_or_exact(
        &self,
        event: &PrivacyEvent,
        budget: &Budget,
    ) -> Result<f64, AccountantError> {
        let delta = budget.delta();
        if let Some(eps) = self.certified(delta.to_bits(), Some(event))
            && eps <= budget.epsilon()
        {
            return Ok(eps);
        }
        let ahead = lookahead(self.entries.len() + 1);
        if ahead > 1
            && let Ok(eps) = self.certify(event, delta, ahead)
            && eps <= budget.epsilon()
        {
            return Ok(eps);
        }
        let all = self.state.composed(Some(Extra { event, copies: 1 }))?;
        let report = epsilon_checked(&all, delta, &self.config)?;
        Ok(self.hold_pending(event, report))
    }

    /// Remembers the exact report of the state plus `event` until that event is recorded.
    fn hold_pending(&self, event: &PrivacyEvent, report: EpsilonReport) -> f64 {
        let epsilon = report.epsilon;
        self.caches.borrow_mut().pending = Some((self.entries.len(), event.clone(), report));
        epsilon
    }

    /// The body by reference (nothing per entry is copied).
    fn body(&self) -> LedgerBodyRef<'_> {
        LedgerBodyRef {
            format: LEDGER_FORMAT,
            crate_version: self
                .written_by
                .as_deref()
                .unwrap_or(env!("CARGO_PKG_VERSION")),
            conversion: self.config.conversion(),
            orders: self.config.orders(),
            accountant: self.config.accountant(),
            entries: &self.entries,
        }
    }

    /// The SHA-256 of the ledger's canonical JSON body, as `"sha256:<hex>"`.
    ///
    /// # Errors
    /// [`AccountantError::Serialise`] if serialisation fails (non-finite number in a note-free
    /// event cannot occur for validated events).
    pub fn content_hash(&self) -> Result<String, AccountantError> {
        hash_body(&self.body())
    }

    /// Serialises the ledger (format, crate version, conversion, orders, entries, content hash).
    ///
    /// # Errors
    /// [`AccountantError::Serialise`] if serialisation fails.
    pub fn to_json(&self) -> Result<String, AccountantError> {
        let body = self.body();
        let content_hash = hash_body(&body)?;
        serde_json::to_string_pretty(&LedgerFileRef {
            body,
            content_hash: &content_hash,
        })
        .map_err(|e| AccountantError::Serialise(e.into()))
    }

    /// Reads a ledger back, checking the format, the content hash, the configuration and every
    /// event.
    ///
    /// # Errors
    /// [`AccountantError::CorruptLedger`] for bad JSON, an unknown format, a hash mismatch, or
    /// invalid or mixed-relation events.
    pub fn from_json(json: &str) -> Result<Self, AccountantError> {
        let corrupt = AccountantError::corrupt;
        let file: LedgerFile =
            serde_json::from_str(json).map_err(|e| corrupt(LedgerFault::NotJson(e.into())))?;
        if file.body.format != LEDGER_FORMAT {
            return Err(corrupt(LedgerFault::UnknownFormat {
                found: file.body.format.chars().take(80).collect(),
            }));
        }
        let expected = hash_body(&file.body.as_ref())?;
        if expected != file.content_hash {
            return Err(corrupt(LedgerFault::HashMismatch {
                stated: file.content_hash.chars().take(80).collect(),
                computed: expected,
            }));
        }
        let config = AccountantConfig::builder()
            .orders(file.body.orders)
            .conversion(file.body.conversion)
            .accountant(file.body.accountant)
            .build()
            .map_err(|e| corrupt(LedgerFault::InvalidConfig(Box::new(e))))?;
        let mut ledger = Accountant {
            config,
            entries: Vec::with_capacity(file.body.entries.len()),
            written_by: Some(file.body.crate_version),
            order_hint: Cell::new(None),
            state: Grouped::default(),
            caches: RefCell::default(),
        };
        for (i, entry) in file.body.entries.into_iter().enumerate() {
            ledger.record_entry(entry).map_err(|e| {
                corrupt(LedgerFault::InvalidEntry {
                    index: i,
                    error: Box::new(e),
                })
            })?;
        }
        Ok(ledger)
    }
}

fn hash_body(body: &LedgerBodyRef<'_>) -> Result<String, AccountantError> {
    let canonical = serde_json::to_vec(body).map_err(|e| AccountantError::Serialise(e.into()))?;
    let digest = Sha256::digest(&canonical);
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    Ok(format!("sha256:{hex}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The recomposition the running state replaces (kept as the reference it must match).
    /// Groups identical events (first-appearance order) into a composition of self-compositions.
    pub(super) fn compose_grouped<'a>(
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

    /// A small deterministic generator (xorshift64*), enough to interleave records.
    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) % n
        }
    }

    fn poisson(s: f64, q: f64) -> PrivacyEvent {
        PrivacyEvent::poisson_subsampled_gaussian(s, q).unwrap()
    }

    /// Checks the running state against the recomposition of every entry, bit for bit.
    fn assert_matches_recomposition(ledger: &Accountant, extra: &PrivacyEvent, exact: bool) {
        let reference = compose_grouped(ledger.entries().iter().map(|e| &e.event)).unwrap();
        let composed = ledger.composed_event().unwrap();
        assert_eq!(composed, reference);
        assert_eq!(
            serde_json::to_string(&composed).unwrap(),
            serde_json::to_string(&reference).unwrap()
        );
        let with =
            compose_grouped(ledger.entries().iter().map(|e| &e.event).chain([extra])).unwrap();
        let joined = Some(Extra {
            event: extra,
            copies: 1,
        });
        assert_eq!(ledger.state.composed(joined).unwrap(), with);
        for order in [1.5, 2.0, 7.25, 18.092_3, 300.5] {
            assert_eq!(
                ledger.state.rdp_at(None, order).to_bits(),
                crate::rdp::rdp_valid(&reference, order).to_bits()
            );
            assert_eq!(
                ledger.state.rdp_at(joined, order).to_bits(),
                crate::rdp::rdp_valid(&with, order).to_bits()
            );
        }
        if exact {
            for delta in [1e-5, 1e-7] {
                let want = epsilon_checked(&reference, delta, &ledger.config).unwrap();
                let got = ledger.epsilon_report(delta).unwrap();
                assert_eq!(got.epsilon.to_bits(), want.epsilon.to_bits());
                assert_eq!(got.order.to_bits(), want.order.to_bits());
                assert_eq!(
                    got.epsilon_lower.map(f64::to_bits),
                    want.epsilon_lower.map(f64::to_bits)
                );
            }
            let want = delta_for_event(&reference, 1.0, &ledger.config).unwrap();
            assert_eq!(ledger.delta(1.0).unwrap().to_bits(), want.delta.to_bits());
        }
    }

    fn randomised_records_match_recomposition(
        config: AccountantConfig,
        events: &[PrivacyEvent],
        records: usize,
        exact_every: usize,
    ) {
        let budget = Budget::new(50.0, 1e-5).unwrap();
        for seed in [1_u64, 7, 2024] {
            let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
            let mut ledger = Accountant::with_config(config.clone()).unwrap();
            let mut current = 0;
            for t in 0..records {
                // runs of one event, switched at random (several distinct events interleaved)
                if rng.below(4) == 0 {
                    current = rng.below(events.len() as u64) as usize;
                }
                let event = events[current].clone();
                match rng.below(3) {
                    0 => ledger
                        .record_within(format!("{t}"), event, &budget)
                        .unwrap(),
                    1 => {
                        assert!(!ledger.would_exceed(&event, &budget).unwrap());
                        ledger.record(format!("{t}"), event).unwrap();
                    }
                    _ => {
                        ledger.record(format!("{t}"), event).unwrap();
                        // exercise the tracked answer's caches between exact answers
                        assert!(ledger.epsilon_tracked(1e-5).unwrap() > 0.0);
                    }
                }
                let next = &events[rng.below(events.len() as u64) as usize];
                assert_matches_recomposition(&ledger, next, t % exact_every == exact_every - 1);
            }
            let json = ledger.to_json().unwrap();
            let back = Accountant::from_json(&json).unwrap();
            assert_eq!(back.content_hash().unwrap(), ledger.content_hash().unwrap());
            assert_eq!(back.to_json().unwrap(), json);
            assert_matches_recomposition(&back, &events[0], true);
            assert_eq!(
                back.epsilon(1e-5).unwrap().to_bits(),
                ledger.epsilon(1e-5).unwrap().to_bits()
            );
        }
    }

    #[test]
    fn running_state_matches_recomposition_rdp() {
        let events = [
            poisson(1.1, 0.01),
            poisson(0.9, 0.02),
            PrivacyEvent::gaussian(20.0, crate::events::Neighbouring::AddRemoveOne).unwrap(),
            poisson(1.1, 0.01).self_composed(10).unwrap(),
        ];
        randomised_records_match_recomposition(AccountantConfig::default(), &events, 120, 20);
        let grid = AccountantConfig::new(Orders::DpAccountingDefault, Conversion::Classic).unwrap();
        randomised_records_match_recomposition(grid, &events, 60, 20);
    }

    #[test]
    fn running_state_matches_recomposition_pld() {
        let events = [
            poisson(1.0, 0.01),
            poisson(2.0, 0.05),
            PrivacyEvent::gaussian(30.0, crate::events::Neighbouring::AddRemoveOne).unwrap(),
        ];
        let pld = AccountantConfig::default().with_accountant(AccountantKind::Pld);
        randomised_records_match_recomposition(pld, &events, 40, 20);
    }

    #[test]
    fn running_state_matches_recomposition_papers_accountants() {
        let events = [
            poisson(1.0, 0.01),
            poisson(2.0, 0.05),
            PrivacyEvent::gaussian(30.0, crate::events::Neighbouring::AddRemoveOne).unwrap(),
        ];
        for kind in [
            AccountantKind::Moments,
            AccountantKind::Zcdp,
            AccountantKind::Advanced,
            AccountantKind::Linear,
        ] {
            let config = AccountantConfig::default().with_accountant(kind);
            randomised_records_match_recomposition(config, &events, 40, 20);
        }
    }

    #[test]
    fn checks_refuse_only_what_the_exact_answer_refuses() {
        // Every accountant: record_within until refused; the refused state exceeds the budget by the
        // configured accountant's exact answer, and the last admitted state fits by a valid bound.
        let step = poisson(2.0, 0.05);
        for kind in AccountantKind::ALL {
            let config = AccountantConfig::default().with_accountant(kind);
            let mut ledger = Accountant::with_config(config.clone()).unwrap();
            // the papers' accountants are looser: budgets that admit some 40-100 steps
            let budget_epsilon = match kind {
                AccountantKind::Zcdp => 4.0,
                AccountantKind::Advanced => 20.0,
                AccountantKind::Linear => 30.0,
                _ => 1.0,
            };
            let budget = Budget::new(budget_epsilon, 1e-5).unwrap();
            let mut n = 0;
            while ledger.record_within("step", step.clone(), &budget).is_ok() {
                n += 1;
                assert!(n < 10_000, "budget never exhausted");
                if n % 16 != 0 {
                    continue;
                }
                // the tracked answer is a valid bound: never below the exact answer's floor
                let tracked = ledger.epsilon_tracked(1e-5).unwrap();
                let exact = ledger.epsilon_report(1e-5).unwrap();
                let floor = exact.epsilon_lower.unwrap_or(exact.epsilon * (1.0 - 1e-6));
                assert!(tracked >= floor, "{kind:?} {n}: {tracked} < {floor}");
                ledger.caches.borrow_mut().epsilon.clear();
            }
            assert!(
                n > 32,
                "{kind:?}: {n} steps, the look-ahead was not exercised"
            );
            let over =
                PrivacyEvent::compose(vec![step.clone().self_composed(n + 1).unwrap()]).unwrap();
            let fits = PrivacyEvent::compose(vec![step.clone().self_composed(n).unwrap()]).unwrap();
            assert!(epsilon_checked(&over, 1e-5, &config).unwrap().epsilon > budget_epsilon);
            let rdp = epsilon_valid(&fits, 1e-5, &config).epsilon;
            let exact = epsilon_checked(&fits, 1e-5, &config).unwrap().epsilon;
            // the papers' accountants accept only on their own bound (exact or a certificate)
            let admitted = if kind.uses_rdp_shortcuts() {
                rdp.min(exact)
            } else {
                exact
            };
            assert!(
                admitted <= budget_epsilon * (1.0 + 1e-9),
                "{kind:?}: {rdp} {exact}"
            );
        }
    }

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
                notes: Arc::default(),
            }],
        };
        let content_hash = hash_body(&body.as_ref()).unwrap();
        let json = serde_json::to_string(&LedgerFile { body, content_hash }).unwrap();
        let e = Accountant::from_json(&json).unwrap_err();
        match &e {
            AccountantError::CorruptLedger {
                file: None,
                fault: LedgerFault::InvalidEntry { index: 0, error },
            } => assert!(matches!(
                **error,
                AccountantError::InvalidParameter {
                    name: "noise_multiplier",
                    ..
                }
            )),
            other => panic!("{other:?}"),
        }
        assert!(
            e.to_string()
                .starts_with("corrupt ledger: entry 0: invalid parameter `noise_multiplier` = -1"),
            "{e}"
        );
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
        let content_hash = hash_body(&body.as_ref()).unwrap();
        let json = serde_json::to_string(&LedgerFile { body, content_hash }).unwrap();
        let e = Accountant::from_json(&json).unwrap_err();
        match &e {
            AccountantError::CorruptLedger {
                file: None,
                fault: LedgerFault::InvalidConfig(error),
            } => assert!(matches!(
                **error,
                AccountantError::InvalidParameter { name: "order", .. }
            )),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            e.to_string(),
            "corrupt ledger: configuration: invalid parameter `order` = 0.5: a Rényi order must be finite and > 1"
        );
    }
}
