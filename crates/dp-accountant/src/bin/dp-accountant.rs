//! `dp-accountant`: the audit command-line tool (built with `--features cli`).
//!
//! ```text
//! dp-accountant epsilon   --noise-multiplier 1.1 --sampling-rate 0.01 --steps 1000 --delta 1e-5 --json
//! dp-accountant epsilon   --noise-multiplier 0.8 --sample-size 6 --population 60000 --steps 100 --delta 1e-5
//! dp-accountant delta     --noise-multiplier 1.1 --sampling-rate 0.01 --steps 1000 --epsilon 2
//! dp-accountant calibrate --epsilon 1 --delta 1e-5 --sampling-rate 0.01 --steps 1000
//! dp-accountant epsilon   --noise-multiplier 1.1 --sampling-rate 0.01 --steps 1000 --delta 1e-5 --accountant pld
//! dp-accountant zcdp      --rho 0.1 --delta 1e-5
//! dp-accountant replay    LEDGER.json --delta 1e-5
//! ```
//! Bad arguments: exit status 2 and a one-line message on stderr.

use clap::{Args, Parser, Subcommand, ValueEnum};
use dp_accountant::cli::{CliCommand, config_from_flags, execute, sampling_from_flags};

/// Audit a differential-privacy budget (RDP accountant, or PLD with --accountant pld).
#[derive(Parser, Debug)]
#[command(name = "dp-accountant", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The accounting method.
#[derive(ValueEnum, Clone, Copy, Debug, Default)]
enum AccountantKind {
    /// Rényi-DP composition with the chosen orders and conversion (the default).
    #[default]
    Rdp,
    /// Privacy-loss distribution (tighter; reports a lower bound too; Poisson or full batch only).
    Pld,
}

impl Common {
    fn config(&self) -> Result<dp_accountant::AccountantConfig, dp_accountant::AccountantError> {
        let kind = match self.accountant {
            AccountantKind::Rdp => dp_accountant::AccountantKind::Rdp,
            AccountantKind::Pld => dp_accountant::AccountantKind::Pld,
        };
        Ok(config_from_flags(&self.orders, self.classic)?.with_accountant(kind))
    }
}

#[derive(Args, Debug)]
struct Common {
    /// Orders: `continuous`, `default` (dp_accounting's 156) or a comma-separated list.
    #[arg(long, default_value = "continuous")]
    orders: String,
    /// Use the classic Mironov conversion instead of the improved (CKS/Balle) one.
    #[arg(long)]
    classic: bool,
    /// The accountant: `rdp` (default) or `pld`.
    #[arg(long, value_enum, default_value_t = AccountantKind::Rdp)]
    accountant: AccountantKind,
    /// Print one JSON object instead of a readable report.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
struct SamplingArgs {
    /// Poisson sampling rate q in (0, 1] (add/remove-one).
    #[arg(long)]
    sampling_rate: Option<f64>,
    /// Fixed batch size m (without replacement, replace-one); needs --population.
    #[arg(long)]
    sample_size: Option<u64>,
    /// Dataset size n for --sample-size.
    #[arg(long)]
    population: Option<u64>,
    /// For a full batch (no sampling flag): state the sensitivity under replace-one.
    #[arg(long)]
    replace_one: bool,
    /// Number of steps.
    #[arg(long)]
    steps: u64,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Spent epsilon at a delta.
    Epsilon {
        /// Noise std / L2 sensitivity.
        #[arg(long)]
        noise_multiplier: f64,
        #[command(flatten)]
        sampling: SamplingArgs,
        /// Target delta in (0, 1).
        #[arg(long)]
        delta: f64,
        #[command(flatten)]
        common: Common,
    },
    /// Delta at an epsilon.
    Delta {
        /// Noise std / L2 sensitivity.
        #[arg(long)]
        noise_multiplier: f64,
        #[command(flatten)]
        sampling: SamplingArgs,
        /// The epsilon (> 0).
        #[arg(long)]
        epsilon: f64,
        #[command(flatten)]
        common: Common,
    },
    /// Smallest noise multiplier for a target (epsilon, delta).
    Calibrate {
        /// Target epsilon.
        #[arg(long)]
        epsilon: f64,
        /// Target delta.
        #[arg(long)]
        delta: f64,
        #[command(flatten)]
        sampling: SamplingArgs,
        #[command(flatten)]
        common: Common,
    },
    /// zCDP rho to (epsilon, delta).
    Zcdp {
        /// zCDP parameter rho (> 0).
        #[arg(long)]
        rho: f64,
        /// Target delta.
        #[arg(long)]
        delta: f64,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Replay a ledger file and report its epsilon.
    Replay {
        /// The ledger JSON file.
        ledger: std::path::PathBuf,
        /// Target delta.
        #[arg(long)]
        delta: f64,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
    },
}

fn fail(message: impl std::fmt::Display) -> ! {
    let text = message.to_string();
    let line: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| {
            !l.is_empty() && !l.starts_with("Usage:") && !l.starts_with("For more information")
        })
        .collect();
    let line = line.join(" ");
    let line = line.trim_start_matches("error: ");
    eprintln!("dp-accountant: error: {line}");
    std::process::exit(2);
}

fn to_command(cli: Cli) -> Result<(CliCommand, bool), dp_accountant::AccountantError> {
    let sampling = |s: &SamplingArgs| {
        sampling_from_flags(s.sampling_rate, s.sample_size, s.population, s.replace_one)
    };
    Ok(match cli.command {
        Command::Epsilon {
            noise_multiplier,
            sampling: s,
            delta,
            common,
        } => (
            CliCommand::Epsilon {
                sampling: sampling(&s)?,
                noise_multiplier,
                steps: s.steps,
                delta,
                config: common.config()?,
            },
            common.json,
        ),
        Command::Delta {
            noise_multiplier,
            sampling: s,
            epsilon,
            common,
        } => (
            CliCommand::Delta {
                sampling: sampling(&s)?,
                noise_multiplier,
                steps: s.steps,
                epsilon,
                config: common.config()?,
            },
            common.json,
        ),
        Command::Calibrate {
            epsilon,
            delta,
            sampling: s,
            common,
        } => (
            CliCommand::Calibrate {
                sampling: sampling(&s)?,
                steps: s.steps,
                epsilon,
                delta,
                config: common.config()?,
            },
            common.json,
        ),
        Command::Zcdp { rho, delta, json } => (CliCommand::Zcdp { rho, delta }, json),
        Command::Replay {
            ledger,
            delta,
            json,
        } => {
            let text = std::fs::read_to_string(&ledger).map_err(|e| {
                dp_accountant::AccountantError::CorruptLedger(format!(
                    "cannot read {}: {e}",
                    ledger.display()
                ))
            })?;
            (
                CliCommand::Replay {
                    ledger_json: text,
                    source: ledger.display().to_string(),
                    delta,
                },
                json,
            )
        }
    })
}

fn main() {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => match e.kind() {
            clap::error::ErrorKind::DisplayHelp
            | clap::error::ErrorKind::DisplayVersion
            | clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => e.exit(),
            _ => fail(e.render()),
        },
    };
    let (command, json) = to_command(cli).unwrap_or_else(|e| fail(e));
    let out = execute(&command).unwrap_or_else(|e| fail(e));
    if json {
        println!("{}", out.json);
    } else {
        println!("{}", out.text);
    }
}
