//! `dp-bayes replay LEDGER --delta D`: the accountant's own replay
//! ([`dp_accountant::cli::execute`]), so the answer is `dp-accountant replay`'s bit for bit.
//!
//! A ledger entry may state privacy outside its event: the LDA vocabulary selection's threshold
//! (notes [`dp_accountant::EXTRA_DELTA_NOTE`] and [`dp_accountant::EXTRA_EPSILON_NOTE`]). The
//! accountant's replay then answers the events at `D - extra_delta` and adds `extra_epsilon`
//! (`events_epsilon`, `events_delta`, `extra_epsilon` and `extra_delta` say how it splits), so
//! the answer is never below the truth. `fit lda` states its epsilon with the same call
//! ([`replay_ledger`]).

use std::path::PathBuf;

use dp_accountant::cli::{CliCommand, CliOutput, execute};

use super::error::{CliError, usage};
use super::io::{emit, emit_text, read_text};

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

/// The accountant's replay of a ledger's JSON at a total `delta` (what `replay` prints).
///
/// # Errors
/// `--delta` outside `(0, 1)` or not above the ledger's extra delta; a corrupt ledger
/// ([`CliError::Accountant`], naming `source`).
pub fn replay_ledger(ledger_json: &str, source: &str, delta: f64) -> Result<CliOutput, CliError> {
    if !(delta > 0.0 && delta < 1.0) {
        return Err(usage("--delta", format!("must be in (0, 1), got {delta}")));
    }
    match execute(&CliCommand::Replay {
        ledger_json: ledger_json.to_string(),
        source: source.to_string(),
        delta,
    }) {
        Err(dp_accountant::AccountantError::InvalidParameter {
            name: "delta",
            reason,
            ..
        }) => Err(usage("--delta", format!("{reason}, got {delta}"))),
        other => Ok(other?),
    }
}

/// Runs `replay`.
pub fn run(args: &ReplayArgs) -> Result<(), CliError> {
    let text = read_text(&args.ledger, "LEDGER")?;
    let out = replay_ledger(&text, &args.ledger.display().to_string(), args.delta)?;
    if args.json {
        emit(&out.json, true)
    } else {
        emit_text(&out.text)
    }
}
