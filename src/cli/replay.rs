//! `dp-bayes replay LEDGER --delta D`: the accountant's own replay
//! ([`dp_accountant::cli::execute`]), so the answer is `dp-accountant replay`'s bit for bit for
//! a ledger whose events hold all of its delta.
//!
//! A ledger entry may carry a delta that is not part of its event: the threshold delta of the
//! LDA vocabulary selection (note `extra_delta_not_in_event`). Then the events are replayed at
//! `D - extra` and the answer is stated at the total `D` (`events_delta` and `extra_delta` say
//! how it splits), so the delta reported is never below the truth.

use std::path::PathBuf;

use dp_accountant::Accountant;
use dp_accountant::cli::{CliCommand, execute};
use serde_json::json;

use super::error::{CliError, usage};
use super::io::{emit, emit_text, num, read_text};

/// Arguments of `replay`.
#[derive(clap::Args, Debug)]
#[command(allow_negative_numbers = true)]
pub struct ReplayArgs {
    /// The ledger file (a fit's ledger.json).
    ledger: PathBuf,
    /// The delta to state the epsilon at (the total, including any extra delta of the entries).
    #[arg(long)]
    delta: f64,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

/// The note naming a delta outside an entry's event (the LDA vocabulary selection's threshold).
pub const EXTRA_DELTA_NOTE: &str = "extra_delta_not_in_event";

/// The sum of the entries' extra deltas (0 for a ledger without any).
fn extra_delta(ledger: &Accountant, source: &str) -> Result<f64, CliError> {
    let mut total = 0.0;
    for (i, e) in ledger.entries().iter().enumerate() {
        if let Some(note) = e.notes.get(EXTRA_DELTA_NOTE) {
            let first = note.split_whitespace().next().unwrap_or("");
            match first.parse::<f64>() {
                Ok(v) if v.is_finite() && v >= 0.0 => total += v,
                _ => {
                    return Err(CliError::File {
                        path: source.to_string(),
                        reason: format!(
                            "entry {i}: note `{EXTRA_DELTA_NOTE}` does not start with a delta"
                        ),
                    });
                }
            }
        }
    }
    Ok(total)
}

/// Runs `replay`.
pub fn run(args: &ReplayArgs) -> Result<(), CliError> {
    if !(args.delta > 0.0 && args.delta < 1.0) {
        return Err(usage(
            "--delta",
            format!("must be in (0, 1), got {}", args.delta),
        ));
    }
    let text = read_text(&args.ledger, "LEDGER")?;
    let source = args.ledger.display().to_string();
    // The extra delta is read from a ledger that parses; one that does not is left to the
    // accountant's replay, whose error names what is wrong.
    let extra = match Accountant::from_json(&text) {
        Ok(l) => extra_delta(&l, &source)?,
        Err(_) => 0.0,
    };
    let events_delta = args.delta - extra;
    if extra > 0.0 && events_delta <= 0.0 {
        return Err(usage(
            "--delta",
            format!(
                "must exceed the ledger's extra delta {extra} (the vocabulary selection's \
                 threshold delta, not part of any event)"
            ),
        ));
    }
    let out = execute(&CliCommand::Replay {
        ledger_json: text,
        source,
        delta: events_delta,
    })?;
    if extra == 0.0 {
        return if args.json {
            emit(&out.json, true)
        } else {
            emit_text(&out.text)
        };
    }
    let mut value = out.json;
    let epsilon = value.get("epsilon").cloned().unwrap_or(json!("inf"));
    if let Some(m) = value.as_object_mut() {
        m.insert("delta".into(), num(args.delta));
        m.insert("events_delta".into(), num(events_delta));
        m.insert("extra_delta".into(), num(extra));
        m.insert(
            "note".into(),
            json!(
                "the ledger holds a delta outside its events (the vocabulary selection's \
                 threshold): the events are replayed at delta - extra_delta and the guarantee \
                 is (epsilon, delta)"
            ),
        );
    }
    if args.json {
        emit(&value, true)
    } else {
        emit_text(&format!(
            "{}\nextra delta outside the events: {extra} (vocabulary threshold)\nguarantee: \
             epsilon {epsilon} at total delta {} (events replayed at delta {events_delta})",
            out.text, args.delta
        ))
    }
}
