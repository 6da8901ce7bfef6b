//! `dp-bayes`: fit, save, reload and audit differentially private Bayesian models from the
//! command line (see `docs/cli.md`).
//!
//! ```text
//! dp-bayes fit linreg --uci ../shared/data/uci/wine-quality-red --split 0 \
//!     --population 1439 --epsilon 1 --delta 1e-5 --out runs/wine
//! dp-bayes predict --model runs/wine/model.json --csv new.csv --json
//! dp-bayes replay runs/wine/ledger.json --delta 1e-5 --json
//! ```
//!
//! Exit codes: 0 success (also when stdout is a closed pipe), 2 usage and input errors, 1 when
//! an output cannot be written or a result is not finite, 130 when interrupted by Ctrl-C.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
