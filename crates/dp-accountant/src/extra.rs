//! Privacy that an entry states outside its event: a mechanism whose guarantee is an event's
//! plus a fixed `(epsilon, delta)` (the Gaussian-thresholding partition selection: its count part
//! is a Gaussian event, its threshold adds `delta_thr` and a factor `1 / (1 - delta_thr)`, see
//! `dp_core::wall::partition`). Such an entry carries the two amounts in its notes
//! ([`EXTRA_EPSILON_NOTE`], [`EXTRA_DELTA_NOTE`]); an answer of the whole ledger at a total
//! `delta` replays the events at `delta - extra.delta` and adds `extra.epsilon` to their
//! epsilon (`cli::CliCommand::Replay` does).

use crate::error::{AccountantError, LedgerFault};
use crate::ledger::Accountant;

/// The note naming a delta outside an entry's event: a number first, then words.
pub const EXTRA_DELTA_NOTE: &str = "extra_delta_not_in_event";
/// The note naming an epsilon outside an entry's event: a number first, then words.
pub const EXTRA_EPSILON_NOTE: &str = "extra_epsilon_not_in_event";

/// The sums over a ledger's entries of the privacy stated outside their events.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ExtraPrivacy {
    /// Sum of the entries' extra epsilons.
    pub epsilon: f64,
    /// Sum of the entries' extra deltas.
    pub delta: f64,
}

impl ExtraPrivacy {
    /// Whether no entry states any.
    pub fn is_none(&self) -> bool {
        self.epsilon == 0.0 && self.delta == 0.0
    }
}

impl Accountant {
    /// The privacy the entries state outside their events (both 0 for a ledger without any).
    ///
    /// # Example
    /// ```
    /// use dp_accountant::{Accountant, EXTRA_DELTA_NOTE, Neighbouring, PrivacyEvent};
    /// let mut ledger = Accountant::new();
    /// let notes = [(EXTRA_DELTA_NOTE.to_string(), "5e-7 (threshold)".to_string())];
    /// let event = PrivacyEvent::gaussian(3.0, Neighbouring::AddRemoveOne)?;
    /// ledger.record_with_notes("selection", event, notes.into_iter().collect())?;
    /// let extra = ledger.extra_privacy()?;
    /// assert_eq!((extra.epsilon, extra.delta), (0.0, 5e-7));
    /// # Ok::<(), dp_accountant::AccountantError>(())
    /// ```
    ///
    /// # Errors
    /// [`AccountantError::CorruptLedger`] ([`LedgerFault::BadExtraNote`]) if a note does not start
    /// with a finite number `>= 0`, or the deltas add up to 1 or more.
    pub fn extra_privacy(&self) -> Result<ExtraPrivacy, AccountantError> {
        let mut extra = ExtraPrivacy::default();
        for (index, e) in self.entries().iter().enumerate() {
            for (note, total) in [
                (EXTRA_EPSILON_NOTE, &mut extra.epsilon),
                (EXTRA_DELTA_NOTE, &mut extra.delta),
            ] {
                let Some(text) = e.notes.get(note) else {
                    continue;
                };
                let bad = || {
                    AccountantError::corrupt(LedgerFault::BadExtraNote {
                        index,
                        note,
                        text: text.as_str().into(),
                    })
                };
                let value: f64 = text
                    .split_whitespace()
                    .next()
                    .and_then(|t| t.parse().ok())
                    .ok_or_else(bad)?;
                if !(value.is_finite() && value >= 0.0) {
                    return Err(bad());
                }
                *total += value;
                if note == EXTRA_DELTA_NOTE && *total >= 1.0 {
                    return Err(bad());
                }
            }
        }
        Ok(extra)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Neighbouring, PrivacyEvent};

    fn with_notes(notes: &[(&str, &str)]) -> Accountant {
        let mut ledger = Accountant::new();
        let event = PrivacyEvent::gaussian(2.0, Neighbouring::AddRemoveOne).unwrap();
        for _ in 0..2 {
            let n = notes
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            ledger.record_with_notes("x", event.clone(), n).unwrap();
        }
        ledger
    }

    #[test]
    fn replay_answers_the_events_at_the_rest_of_delta_and_adds_the_extra_epsilon() {
        use crate::cli::{CliCommand, execute};
        let l = with_notes(&[(EXTRA_EPSILON_NOTE, "1e-3"), (EXTRA_DELTA_NOTE, "2e-6")]);
        let replay = |delta: f64| {
            execute(&CliCommand::Replay {
                ledger_json: l.to_json().unwrap(),
                source: "x".into(),
                delta,
            })
        };
        let out = replay(1e-5).unwrap();
        let events = l.epsilon(1e-5 - 4e-6).unwrap();
        assert_eq!(out.json["events_epsilon"].as_f64(), Some(events));
        assert_eq!(out.json["epsilon"].as_f64(), Some(events + 2e-3));
        assert_eq!(out.json["delta"].as_f64(), Some(1e-5));
        assert!(out.text.contains("outside the events"), "{}", out.text);
        // A delta the extra delta exhausts is refused, never answered.
        assert!(matches!(
            replay(4e-6),
            Err(AccountantError::InvalidParameter { name: "delta", .. })
        ));
        // Without extra notes the answer is the events' at the whole delta.
        let plain = with_notes(&[]);
        let out = execute(&CliCommand::Replay {
            ledger_json: plain.to_json().unwrap(),
            source: "x".into(),
            delta: 1e-5,
        })
        .unwrap();
        assert_eq!(
            out.json["epsilon"].as_f64(),
            Some(plain.epsilon(1e-5).unwrap())
        );
        assert!(out.json.get("extra_delta").is_none());
    }

    #[test]
    fn sums_over_entries_and_refuses_bad_notes() {
        let l = with_notes(&[
            (EXTRA_EPSILON_NOTE, "1e-6 words"),
            (EXTRA_DELTA_NOTE, "2e-7"),
        ]);
        let e = l.extra_privacy().unwrap();
        assert_eq!((e.epsilon, e.delta), (2e-6, 4e-7));
        assert!(with_notes(&[]).extra_privacy().unwrap().is_none());
        for bad in ["", "words", "-1e-6", "NaN", "inf", "0.6"] {
            let l = with_notes(&[(EXTRA_DELTA_NOTE, bad)]);
            assert!(
                matches!(
                    l.extra_privacy(),
                    Err(AccountantError::CorruptLedger {
                        fault: LedgerFault::BadExtraNote { .. },
                        ..
                    })
                ),
                "{bad:?}"
            );
        }
    }
}
