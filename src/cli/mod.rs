//! The `dp-bayes` command line: argument parsing and dispatch. One module per command
//! ([`fit`], [`predict`], [`infer`], [`reconstruct`], [`replay`]); `fit` has one module per model.

mod convert;
mod error;
mod fit;
mod infer;
mod io;
mod predict;
mod reconstruct;
mod replay;

use std::io::Write;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(
    name = "dp-bayes",
    version,
    about = "Differentially private Bayesian inference: fit, predict, replay the privacy ledger",
    long_about = "Differentially private Bayesian inference: fit a model with a privacy budget \
                  and save it (model.json, ledger.json, result.json), predict with a saved model, \
                  replay a fit's privacy ledger. See docs/cli.md.\n\nExit codes: 0 success, 2 \
                  usage and input errors, 1 output errors, 130 Ctrl-C."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
#[allow(clippy::large_enum_variant)] // parsed once per run
enum Command {
    /// Fit a model and write model.json, ledger.json (private fits) and result.json to --out.
    #[command(subcommand)]
    Fit(fit::FitCommand),
    /// Predict with a saved model on the rows of a CSV file.
    Predict(predict::PredictArgs),
    /// Topic proportions of new documents under a saved LDA model.
    Infer(infer::InferArgs),
    /// Score new binary images under a saved sigmoid belief network (lower bound, pixel
    /// accuracy of the reconstruction, hidden-unit posterior means).
    Reconstruct(reconstruct::ReconstructArgs),
    /// Replay a fit's ledger.json and report its epsilon (as `dp-accountant replay`).
    Replay(replay::ReplayArgs),
    /// Write a record store (for corpora larger than memory) from a UCI bag-of-words, LIBSVM
    /// or IDX file, streaming.
    Convert(convert::ConvertArgs),
}

/// Parses the arguments, runs the command, prints an error as one line and maps it to the
/// exit code.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Fit(cmd) => fit::run(cmd),
        Command::Predict(args) => predict::run(&args),
        Command::Infer(args) => infer::run(&args),
        Command::Reconstruct(args) => reconstruct::run(&args),
        Command::Replay(args) => replay::run(&args),
        Command::Convert(args) => convert::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // stderr may be closed too; nothing more to do then.
            let _ = writeln!(std::io::stderr(), "dp-bayes: error: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}
