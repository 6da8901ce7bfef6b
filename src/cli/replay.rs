//! `dp-bayes replay LEDGER --delta D`: the accountant's own replay
//! ([`dp_accountant::cli::execute`]), so the answer is `dp-accountant replay`'s bit for bit.

use std::path::PathBuf;

use dp_accountant::cli::{CliCommand, describe_error, execute};

use super::error::{CliError, usage};
use super::io::{emit, emit_text, read_text};

/// Arguments of `replay`.
#[derive(clap::Args, Debug)]
#[command(allow_negative_numbers = true)]
pub struct ReplayArgs {
    /// The ledger file (a fit's ledger.json).
    ledger: PathBuf,
    /// The delta to state the epsilon at.
    #[arg(long)]
    delta: f64,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
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
    let out = execute(&CliCommand::Replay {
        ledger_json: text,
        source: args.ledger.display().to_string(),
        delta: args.delta,
    })
    .map_err(|e| CliError::Accountant(describe_error(&e)))?;
    if args.json {
        emit(&out.json, true)
    } else {
        emit_text(&out.text)
    }
}
