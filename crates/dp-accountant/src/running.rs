//! The ledger's running state: the distinct recorded events with their counts, in order of first
//! appearance, updated on every record (docs/accountant.md, section 10).
//!
//! The composed event built from it is the one the recomposition of every entry built (same
//! grouping by `==`, same order, same `SelfComposed`/plain parts), so every answer is
//! bit-for-bit the same; building it costs O(distinct events), not O(entries). The RDP of the
//! state at one order is a sum over the groups of `count * rdp(event)`, with `rdp(event)`
//! remembered per group for the last order asked (the budget check's order hint), so the check
//! of a long run of identical events costs one conversion, not an RDP series evaluation.

use std::cell::Cell;

use crate::error::AccountantError;
use crate::events::PrivacyEvent;

/// One distinct recorded event.
#[derive(Clone, Debug)]
struct Group {
    event: PrivacyEvent,
    count: u64,
    /// `(order bits, rdp_valid(event, order))` for the last [`MEMO_SLOTS`] orders asked (the
    /// budget check's hint and the tracked orders of a few deltas). `rdp_valid` is a pure
    /// function, so a remembered value is the value a fresh evaluation gives.
    rdp_memo: Cell<[Option<(u64, f64)>; MEMO_SLOTS]>,
    /// The slot the next new order replaces (round robin).
    memo_next: Cell<usize>,
}

/// Orders remembered per distinct event.
const MEMO_SLOTS: usize = 4;

impl Group {
    /// `rdp_valid(&self.event, order)`, remembered.
    fn rdp(&self, order: f64) -> f64 {
        let bits = order.to_bits();
        let mut memo = self.rdp_memo.get();
        if let Some((_, r)) = memo.iter().flatten().find(|(b, _)| *b == bits) {
            return *r;
        }
        let r = crate::rdp::rdp_valid(&self.event, order);
        let slot = self.memo_next.get();
        memo[slot] = Some((bits, r));
        self.rdp_memo.set(memo);
        self.memo_next.set((slot + 1) % MEMO_SLOTS);
        r
    }
}

/// The distinct recorded events and their counts (first-appearance order).
#[derive(Clone, Debug, Default)]
pub(crate) struct Grouped {
    groups: Vec<Group>,
    /// The group matched last (checked first: a long run repeats one event). Any group equal to
    /// an event is *the* group of that event (validated events contain no NaN, so `==` is an
    /// equivalence and groups are pairwise distinct), so the hint never changes the answer.
    last: Cell<usize>,
}

/// A composition with extra copies of one event on top of the recorded state.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Extra<'a> {
    /// The added event.
    pub(crate) event: &'a PrivacyEvent,
    /// How many copies (`>= 1`).
    pub(crate) copies: u64,
}

impl Grouped {
    /// Index of the group of `event`, if it was recorded.
    pub(crate) fn find(&self, event: &PrivacyEvent) -> Option<usize> {
        let last = self.last.get();
        if self.groups.get(last).is_some_and(|g| g.event == *event) {
            return Some(last);
        }
        let i = self.groups.iter().position(|g| g.event == *event)?;
        self.last.set(i);
        Some(i)
    }

    /// How many times `event` was recorded.
    pub(crate) fn count(&self, event: &PrivacyEvent) -> u64 {
        self.find(event).map_or(0, |i| self.groups[i].count)
    }

    /// Number of distinct events.
    pub(crate) fn distinct(&self) -> usize {
        self.groups.len()
    }

    /// Adds one occurrence of `event` (cloned only when it starts a new group).
    pub(crate) fn record(&mut self, event: &PrivacyEvent) {
        match self.find(event) {
            Some(i) => self.groups[i].count += 1,
            None => {
                self.groups.push(Group {
                    event: event.clone(),
                    count: 1,
                    rdp_memo: Cell::new([None; MEMO_SLOTS]),
                    memo_next: Cell::new(0),
                });
                self.last.set(self.groups.len() - 1);
            }
        }
    }

    /// The parts of the composition (group events and counts, `extra` joined to its group or
    /// appended last), as the recomposition of the entries followed by the extra copies groups
    /// them.
    fn parts<'a>(
        &'a self,
        extra: Option<Extra<'a>>,
    ) -> impl Iterator<Item = (&'a PrivacyEvent, u64)> {
        let joined = extra.map(|x| (self.find(x.event), x));
        let appended = match joined {
            Some((None, x)) => Some((x.event, x.copies)),
            _ => None,
        };
        let target = match joined {
            Some((Some(i), x)) => Some((i, x.copies)),
            _ => None,
        };
        self.groups
            .iter()
            .enumerate()
            .map(move |(i, g)| {
                let add = match target {
                    Some((t, copies)) if t == i => copies,
                    _ => 0,
                };
                (&g.event, g.count + add)
            })
            .chain(appended)
    }

    /// The composed event of the state plus `extra`: identical events grouped into
    /// self-compositions in order of first appearance.
    ///
    /// # Errors
    /// [`AccountantError::Empty`] if nothing is recorded and there is no extra event; the
    /// validation errors of [`PrivacyEvent::compose`].
    pub(crate) fn composed(
        &self,
        extra: Option<Extra<'_>>,
    ) -> Result<PrivacyEvent, AccountantError> {
        let parts: Vec<PrivacyEvent> = self
            .parts(extra)
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
        if parts.is_empty() {
            return Err(AccountantError::Empty(
                "the ledger is empty: nothing has been spent",
            ));
        }
        PrivacyEvent::compose(parts)
    }

    /// `rdp_valid(&self.composed(extra)?, order)` bit for bit (the same terms, `count as f64 *
    /// rdp` for a self-composition and `rdp` for a single event, summed in the same order), with
    /// each group's `rdp(event)` remembered for the last order. `order` must be valid and the
    /// composition non-empty.
    pub(crate) fn rdp_at(&self, extra: Option<Extra<'_>>, order: f64) -> f64 {
        let term = |n: u64, r: f64| if n == 1 { r } else { n as f64 * r };
        let joined = extra.map(|x| (self.find(x.event), x));
        let appended = match joined {
            Some((None, x)) => Some(term(x.copies, crate::rdp::rdp_valid(x.event, order))),
            _ => None,
        };
        self.groups
            .iter()
            .enumerate()
            .map(|(i, g)| {
                let add = match joined {
                    Some((Some(t), x)) if t == i => x.copies,
                    _ => 0,
                };
                term(g.count + add, g.rdp(order))
            })
            .chain(appended)
            .sum()
    }
}
